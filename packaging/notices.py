"""Writes THIRD-PARTY-NOTICES.txt: every distribution in the frozen bundle with its version, its
licence and the licence texts it ships, plus the GNU LGPL / GPL texts for Qt and PySide6.

    python packaging/notices.py                 write packaging/THIRD-PARTY-NOTICES.txt
    python packaging/notices.py -o FILE         write it elsewhere
    python packaging/notices.py --list          print name, version and licence, one a line

Run it with the Python whose site-packages the bundle is built from (the project's venv): the
versions and licence files are read from the installed distributions' metadata
(``importlib.metadata``). ``keplerlab.spec`` calls :func:`write_notices` with the distributions
the build actually collected and ships the file at the top of ``dist/keplerlab/``; build.py then
copies it to ``packaging/THIRD-PARTY-NOTICES.txt``. The output has no dates and is sorted, so the
same environment always gives the same file.
"""

from __future__ import annotations

import argparse
import importlib.metadata as metadata
import re
import sys
import sysconfig
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import speclib  # noqa: E402  (beside this file)

LICENSES = HERE / "licenses"
DEFAULT_OUTPUT = HERE / "THIRD-PARTY-NOTICES.txt"
_LICENSE_NAME = re.compile(r"(LICEN[CS]E|COPYING|NOTICE|COPYRIGHT|AUTHORS)", re.IGNORECASE)
#: Distributions of Qt's Python binding: LGPL-3.0-only OR GPL-2.0-only OR GPL-3.0-only. We use
#: them under the LGPL-3.0; their wheels carry no licence files, so the texts come from
#: packaging/licenses/ (the FSF's verbatim texts).
QT_DISTS = {"pyside6", "pyside6-essentials", "pyside6-addons", "shiboken6"}
_RULE = "=" * 78


@dataclass
class DistInfo:
    name: str
    version: str
    licence: str
    homepage: str = ""
    licence_files: list[tuple[str, str]] = field(default_factory=list)  # (relative name, text)


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def licence_of(md) -> str:
    """The licence a distribution declares: the SPDX expression, else a short ``License``
    field, else its trove classifiers; ``"not stated"`` when it says nothing."""
    expression = (md.get("License-Expression") or "").strip()
    if expression:
        return expression
    text = (md.get("License") or "").strip()
    if text and "\n" not in text and len(text) <= 120:
        return text
    classifiers = [c.split("::")[-1].strip() for c in (md.get_all("Classifier") or []) if c.startswith("License ::")]
    if classifiers:
        return "; ".join(dict.fromkeys(classifiers))
    if text:
        return text.splitlines()[0][:120] + " (see the licence text below)"
    return "not stated"


def homepage_of(md) -> str:
    if md.get("Home-page"):
        return md["Home-page"].strip()
    for url in md.get_all("Project-URL") or []:
        label, _, address = url.partition(",")
        if label.strip().lower() in ("homepage", "home", "source", "source code", "repository"):
            return address.strip()
    return ""


def licence_files(dist: metadata.Distribution) -> list[tuple[str, str]]:
    """Licence, copying and notice files inside the distribution's metadata folder."""
    base = Path(dist._path)
    out = []
    for path in sorted(base.rglob("*")):
        if path.is_file() and _LICENSE_NAME.search(path.name):
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            out.append((str(path.relative_to(base)), text.strip()))
    return out


def describe(name: str) -> DistInfo | None:
    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return None
    md = dist.metadata
    return DistInfo(md["Name"], dist.version, licence_of(md), homepage_of(md), licence_files(dist))


def python_licence() -> tuple[str, str]:
    """CPython's own licence (the bundle carries libpython and the standard library)."""
    for folder in (sysconfig.get_paths()["stdlib"], str(Path(sys.base_prefix) / "lib")):
        path = Path(folder) / "LICENSE.txt"
        if path.is_file():
            return "Python-2.0 (PSF License)", path.read_text(encoding="utf-8", errors="replace").strip()
    return "Python-2.0 (PSF License)", "The licence text was not found in this Python installation; see https://docs.python.org/3/license.html"


def _project_version() -> str:
    import tomllib

    with open(speclib.ROOT / "pyproject.toml", "rb") as fh:
        return tomllib.load(fh)["project"]["version"]


QT_NOTE = """\
Qt and Qt for Python (PySide6, shiboken6) — GNU LGPL version 3
---------------------------------------------------------------
Kepler Lab's window is built with Qt for Python (PySide6) and the Qt libraries it ships. They are
offered under LGPL-3.0-only OR GPL-2.0-only OR GPL-3.0-only; this bundle uses them under the
GNU Lesser General Public License version 3 (its text and that of the GNU GPL version 3, which it
refers to, are at the end of this file). Copyright (C) The Qt Company Ltd. and other contributors.

What this means for you:
* Qt's libraries stay separate, unmodified shared libraries in this folder bundle:
  _internal/PySide6/Qt/lib/libQt6*.so.6 (Qt itself), _internal/PySide6/Qt/plugins/ (its
  plugins), and the binding's modules _internal/PySide6/*.abi3.so and
  _internal/shiboken6/ (libshiboken6 / libpyside6). You may replace any of them with your own
  build of the same Qt / PySide6 version (binary compatible) and the app will load yours.
* The source code of Qt is at https://download.qt.io/official_releases/qt/ and that of Qt for
  Python at https://code.qt.io/cgit/pyside/pyside-setup.git/ (the versions are listed below).
* Kepler Lab's own source code (MIT licence) is public, so you can also rebuild this bundle
  against a modified Qt with packaging/build.py.
"""

GPL_NOTE = """\
Copyleft components
-------------------
{names} {verb} under the GNU GPL (version 3 or later where stated). Kepler Lab's own code is
MIT-licensed, which the GPL allows to combine with; this bundle as a whole is therefore
distributed under the terms of the GNU GPL version 3, and its complete corresponding source is
Kepler Lab's public repository together with the listed versions of these packages on PyPI.
"""


def render(names, system_libraries=()) -> str:
    """The text of THIRD-PARTY-NOTICES.txt for the given distribution names."""
    infos = [info for info in (describe(n) for n in names) if info is not None]
    infos = [i for i in infos if _canonical(i.name) != speclib.SELF_DIST]
    infos.sort(key=lambda i: _canonical(i.name))
    version = _project_version()
    out = [
        f"Kepler Lab {version} — third-party notices",
        _RULE,
        "",
        "Kepler Lab itself is released under the MIT licence. This bundle also contains the",
        "Python interpreter and the open-source packages listed below, each under its own licence.",
        "Their licence texts follow the list; the texts of the GNU LGPL 3.0 and GNU GPL 3.0 close",
        "the file.",
        "",
        f"{'Package':<28} {'Version':<16} Licence",
        f"{'-' * 28} {'-' * 16} {'-' * 32}",
    ]
    py_licence, py_text = python_licence()
    out.append(f"{'Python':<28} {sys.version.split()[0]:<16} {py_licence}")
    for info in infos:
        out.append(f"{info.name:<28} {info.version:<16} {info.licence}")
    try:
        boot = metadata.distribution("pyinstaller")
        out.append(f"{'PyInstaller bootloader':<28} {boot.version:<16} GPL-2.0-or-later WITH Bootloader-exception")
    except metadata.PackageNotFoundError:
        boot = None
    out.append("")
    out.append(QT_NOTE)
    gpl = [i.name for i in infos if re.search(r"\bGPL|General Public", i.licence) and not re.search(r"LGPL|Lesser|Library", i.licence)
           and _canonical(i.name) not in QT_DISTS]
    if gpl:
        out.append(GPL_NOTE.format(names=", ".join(gpl), verb="is" if len(gpl) == 1 else "are"))
    if system_libraries:
        out.append("System libraries copied from the build machine")
        out.append("-" * 46)
        out.append("These shared libraries come from the Linux distribution the bundle was built on, under")
        out.append("their own (open-source) licences; see that distribution's /usr/share/doc/<package>/copyright.")
        out.extend(f"  {lib}" for lib in sorted(set(system_libraries)))
        out.append("")

    out += [_RULE, "Licence texts", _RULE, "", f"Python {sys.version.split()[0]} — {py_licence}", "-" * 40, py_text, ""]
    if boot is not None:
        out += [f"PyInstaller {boot.version} (its bootloader starts this app)", "-" * 40]
        out += [text for _, text in licence_files(boot)] + [""]
    for info in infos:
        out.append(f"{info.name} {info.version} — {info.licence}")
        out.append("-" * 40)
        if info.homepage:
            out.append(f"Home page: {info.homepage}")
        if info.licence_files:
            for rel, text in info.licence_files:
                out += [f"[{rel}]", text, ""]
        elif _canonical(info.name) in QT_DISTS:
            out += ["The distribution ships no licence file; see the Qt section above and the GNU LGPL 3.0",
                    "and GNU GPL 3.0 texts at the end of this file.", ""]
        elif re.search(r"GPL|General Public", info.licence):
            out += ["The distribution ships no licence file; its licence is the GNU license named above,",
                    "whose text (version 3) is at the end of this file.", ""]
        else:
            out += ["The distribution ships no licence file; its licence is the one named above.", ""]
    for title, path in (("GNU LESSER GENERAL PUBLIC LICENSE, version 3", LICENSES / "LGPL-3.0.txt"),
                        ("GNU GENERAL PUBLIC LICENSE, version 3", LICENSES / "GPL-3.0.txt")):
        out += [_RULE, title, _RULE, path.read_text(encoding="utf-8").strip(), ""]
    return "\n".join(out).rstrip() + "\n"


def write_notices(path: Path, names, system_libraries=()) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(names, system_libraries), encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-o", "--output", type=Path, default=DEFAULT_OUTPUT, help="where to write (default: %(default)s)")
    parser.add_argument("--list", action="store_true", help="print the distributions and their licences instead")
    args = parser.parse_args(argv)
    names = speclib.bundled_distributions()
    if args.list:
        for info in (describe(n) for n in names):
            if info is not None:
                print(f"{info.name}\t{info.version}\t{info.licence}")
        return 0
    path = write_notices(args.output, names)
    print(f"wrote {path} ({len(names)} distributions)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
