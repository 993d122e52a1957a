"""What goes into the frozen Kepler Lab bundle, as plain functions.

``keplerlab.spec`` calls these; ``tests/packaging`` calls them too, so what the bundle collects
can be checked without running PyInstaller. Every list is sorted, so the order of the inputs
PyInstaller sees does not depend on the file system (one part of a reproducible build).

Only the standard library is imported at module level: the functions that need PyInstaller's
helpers import them when called.
"""

from __future__ import annotations

import importlib.metadata as metadata
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGING = ROOT / "packaging"
ASSETS = ROOT / "assets"

APP_NAME = "keplerlab"
APP_ID = "io.github.keplerlab.KeplerLab"
#: The distribution of Kepler Lab itself (pyproject's [project] name).
SELF_DIST = "keplerlab"
#: Our own top-level packages (pyproject's [tool.setuptools] packages).
OWN_PACKAGES = ("app", "engine", "viewers", "widgets", "assets")

#: Modules imported only by name at run time (importlib.import_module / find_spec), which
#: PyInstaller's import analysis cannot see. Our own registries (task suites, methods, lab
#: domains) are covered by collecting every submodule of our packages; these are third-party.
THIRD_PARTY_HIDDEN = (
    # engine/tasks/symbolbench_bn.py finds pyboolnet's folder with importlib.util.find_spec and
    # never imports it; the frozen importer only knows packages that are in the archive.
    "pyboolnet",
    # Imported inside functions (lazily) by engine/methods and engine/metrics; listed so a
    # refactoring that hides the import from the analysis cannot drop them silently.
    "ot",
    "pysindy",
    "tigramite.data_processing",
    "tigramite.pcmci",
    "tigramite.independence_tests.parcorr",
    "tigramite.independence_tests.robust_parcorr",
    "zss",
    "pyoperon",
    "pyoperon.sklearn",
    "openai",
    "h5py",
    # pyvistaqt's QtInteractor and the two VTK modules viewers/ imports directly.
    "pyvistaqt",
    "vtkmodules.util.numpy_support",
    "vtkmodules.vtkCommonDataModel",
    "vtkmodules.vtkFiltersCore",
    # VTK's OpenGL back end and its interaction styles: pyvista imports them inside functions
    # (the render window factory); without them the 3-D panel fails with "no override found
    # for vtkRenderWindow" only when it is first shown.
    "vtkmodules.vtkRenderingOpenGL2",
    "vtkmodules.vtkRenderingFreeType",
    "vtkmodules.vtkRenderingAnnotation",
    "vtkmodules.vtkRenderingUI",
    "vtkmodules.vtkInteractionStyle",
    "vtkmodules.vtkInteractionWidgets",
    "vtkmodules.vtkRenderingVolumeOpenGL2",
    "vtkmodules.vtkRenderingContextOpenGL2",
    "vtkmodules.vtkIOImage",
    "vtkmodules.vtkImagingCore",
    "vtkmodules.qt.QVTKRenderWindowInteractor",
    # distributed's worker processes import these by name from their command line.
    "distributed.nanny",
    "distributed.worker",
    "distributed.cli.dask_worker",
    "distributed.cli.dask_scheduler",
)

#: Modules left out on purpose (see packaging/README.md, "What is left out").
EXCLUDES = (
    # Tk: matplotlib's hook pulls it in for the TkAgg back end; we draw with Agg / Qt only.
    "tkinter", "_tkinter", "matplotlib.backends._backend_tk", "matplotlib.backends.backend_tkagg",
    "matplotlib.backends.backend_tkcairo",
    # Other Qt bindings: qtpy and pyqtgraph would happily bundle any that is installed.
    "PyQt5", "PyQt6", "PySide2",
    # PySide6 modules nothing of ours (nor pyqtgraph / pyvistaqt on our paths) uses.
    "PySide6.QtQml", "PySide6.QtQuick", "PySide6.QtQuickWidgets", "PySide6.QtQuick3D",
    "PySide6.QtQuickControls2", "PySide6.QtMultimedia", "PySide6.QtMultimediaWidgets",
    "PySide6.QtNetworkAuth", "PySide6.QtPdf", "PySide6.QtPdfWidgets", "PySide6.QtWebEngineCore",
    "PySide6.QtWebEngineWidgets", "PySide6.QtWebChannel", "PySide6.QtWebSockets",
    "PySide6.QtDesigner", "PySide6.QtHelp", "PySide6.QtUiTools", "PySide6.QtSql",
    "PySide6.QtCharts", "PySide6.QtDataVisualization", "PySide6.QtGraphs",
    "PySide6.QtBluetooth", "PySide6.QtNfc", "PySide6.QtPositioning", "PySide6.QtLocation",
    "PySide6.QtSensors", "PySide6.QtSerialPort", "PySide6.QtSerialBus", "PySide6.QtRemoteObjects",
    "PySide6.QtScxml", "PySide6.QtStateMachine", "PySide6.QtHttpServer", "PySide6.QtSpatialAudio",
    "PySide6.QtTextToSpeech", "PySide6.Qt3DCore", "PySide6.Qt3DRender", "PySide6.Qt3DInput",
    "PySide6.Qt3DLogic", "PySide6.Qt3DAnimation", "PySide6.Qt3DExtras", "PySide6.QtAxContainer",
    "PySide6.QtConcurrent",
    # Test suites and developer tools that ship inside libraries.
    "pytest", "pytestqt", "_pytest", "py", "numpy.tests", "scipy._lib.tests", "sympy.testing.tests",
    "mpmath.tests",  # its runtests imports pytest's `py` shim, which would list pytest as bundled
    "IPython", "jupyter_client", "ipykernel", "notebook", "trame", "trame_vtk",
    "PyInstaller", "setuptools", "pip", "distutils",
    # Accelerator back ends of POT / scikit-learn / dask that are not installed here anyway.
    "torch", "jax", "jaxlib", "cupy", "tensorflow",
) + tuple(f"vtkmodules.{name}" for name in (
    # VTK modules that pyvista imports only inside its file readers / writers for formats and
    # features Kepler Lab never touches (we build meshes from arrays and render them). Without
    # them the bundle is ~150 MB smaller. None of them is loaded by `import pyvista`, pyvistaqt's
    # QtInteractor or our 3-D views (checked: tests/packaging and packaging/README.md).
    "vtkAcceleratorsVTKmCore", "vtkAcceleratorsVTKmDataModel", "vtkAcceleratorsVTKmFilters",
    "vtkDomainsChemistry", "vtkDomainsChemistryOpenGL2", "vtkGeovisCore",
    "vtkIOAMR", "vtkIOAsynchronous", "vtkIOAvmesh", "vtkIOCGNSReader", "vtkIOCONVERGECFD",
    "vtkIOCesium3DTiles", "vtkIOChemistry", "vtkIOCityGML", "vtkIOERF", "vtkIOEnSight",
    "vtkIOEngys", "vtkIOExodus", "vtkIOFDS", "vtkIOFLUENTCFF", "vtkIOGeoJSON", "vtkIOH5Rage",
    "vtkIOH5part", "vtkIOHDF", "vtkIOIOSS", "vtkIOInfovis", "vtkIOLANLX3D", "vtkIOLSDyna",
    "vtkIOMINC", "vtkIOMotionFX", "vtkIOMovie", "vtkIONetCDF", "vtkIOOMF", "vtkIOOggTheora",
    "vtkIOPIO", "vtkIOParallel", "vtkIOParallelExodus", "vtkIOParallelLSDyna", "vtkIOSQL",
    "vtkIOSegY", "vtkIOTRUCHAS", "vtkIOTecplotTable", "vtkIOVPIC", "vtkIOVeraOut", "vtkIOVideo",
    "vtkIOXdmf2", "vtkRenderingVR", "vtkRenderingVRModels", "vtkRenderingWebXR",
    "vtkRenderingVtkJS", "vtkSerializationManager", "vtkTestingRendering",
    "vtkTestingSerialization", "vtkWebCore", "vtkWebGLExporter",
))

#: PySide6 / Qt plugin folders the bundle keeps. Both the window (xcb, Wayland) and the
#: self-test / CI (offscreen, minimal) need platforms; image formats for PNG/SVG export;
#: iconengines for the SVG window icon; platformthemes for native dialogs.
QT_PLUGIN_DIRS = ("platforms", "platformthemes", "platforminputcontexts", "imageformats",
                  "iconengines", "xcbglintegrations", "egldeviceintegrations",
                  "wayland-decoration-client", "wayland-graphics-integration-client",
                  "wayland-shell-integration", "generic")

#: Files of a distribution's ``.dist-info`` that nothing reads at run time and that name the
#: build machine (``direct_url.json`` of an editable install holds the checkout's path).
_METADATA_SKIP = {"RECORD", "direct_url.json", "INSTALLER", "REQUESTED"}


def sorted_pairs(pairs) -> list[tuple[str, str]]:
    """``(source, destination folder)`` pairs without duplicates, sorted by destination."""
    return sorted({(str(src), str(dest)) for src, dest in pairs}, key=lambda p: (p[1], p[0]))


def assets_datas(root: Path = ROOT) -> list[tuple[str, str]]:
    """Every data file of the ``assets`` tree (task catalogs, published tables, icons, styles),
    placed at ``assets/...`` beside ``engine/`` in the bundle, where ``engine.paths.assets_dir()``
    looks (``Path(engine.paths.__file__).parent.parent / "assets"``)."""
    assets = root / "assets"
    pairs = []
    for path in sorted(assets.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts or path.suffix in (".py", ".pyc"):
            continue
        pairs.append((path, Path("assets") / path.parent.relative_to(assets)))
    return sorted_pairs(pairs)


def sandbox_worker_datas(root: Path = ROOT) -> list[tuple[str, str]]:
    """The sandbox worker script (``engine/sandbox/_worker.py``), which is run as a script and
    so must exist as a file, not only as a module in the archive."""
    return [(str(root / "engine" / "sandbox" / "_worker.py"), "engine/sandbox")]


def _package_dir(name: str) -> Path:
    """The folder of an installed package, found without importing it."""
    import importlib.util

    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(f"{name} is not installed in this environment")
    return Path(list(spec.submodule_search_locations)[0])


def _modules_under(folder: Path, package: str, skip=()) -> list[str]:
    """Dotted names of the modules and packages in a source folder (read from the file tree,
    nothing is imported)."""
    names = []
    for path in sorted(folder.rglob("*.py")):
        rel = path.relative_to(folder)
        if "__pycache__" in rel.parts or any(part in skip for part in rel.parts):
            continue
        parts = [package, *rel.with_suffix("").parts]
        if parts[-1] == "__init__":
            parts = parts[:-1]
            if not (path.parent / "__init__.py").is_file():
                continue
        elif not (path.parent / "__init__.py").is_file():
            continue  # a script in a plain folder (e.g. a data folder), not a module
        names.append(".".join(parts))
    return sorted(set(names))


def pyqtgraph_datas() -> list[tuple[str, str]]:
    """pyqtgraph's data files: colour maps (``colors/maps/*.csv``), icons (``icons/``) and
    its Qt shim stubs, without the examples.

    pyinstaller-hooks-contrib's hook collects the same; we list them here as well so the bundle
    does not depend on that hook's version, and the tests can check them."""
    folder = _package_dir("pyqtgraph")
    pairs = []
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if (not path.is_file() or path.suffix in (".py", ".pyc") or "__pycache__" in rel.parts
                or "examples" in rel.parts):
            continue
        pairs.append((path, Path("pyqtgraph") / rel.parent))
    return sorted_pairs(pairs)


def pyqtgraph_hiddenimports() -> list[str]:
    """pyqtgraph's ``*Template_generic`` UI modules (the plot's context menus and export
    dialog), which pyqtgraph imports by a name it builds at run time."""
    names = _modules_under(_package_dir("pyqtgraph"), "pyqtgraph", skip=("examples",))
    return [n for n in names if "Template" in n.rsplit(".", 1)[-1]]


def own_hiddenimports(root: Path = ROOT) -> list[str]:
    """Every module of our packages: the task registry, the method registry and the lab load
    modules by name (``importlib.import_module``), which the import analysis cannot follow."""
    names: list[str] = []
    for package in OWN_PACKAGES:
        names += _modules_under(root / package, package)
    return sorted(set(names))


def hiddenimports() -> list[str]:
    return sorted(set(own_hiddenimports()) | set(pyqtgraph_hiddenimports()) | set(THIRD_PARTY_HIDDEN))


def datas(root: Path = ROOT) -> list[tuple[str, str]]:
    return sorted_pairs(assets_datas(root) + sandbox_worker_datas(root) + pyqtgraph_datas())


# ----------------------------------------------------------------------------- distributions

def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def distribution(name: str) -> metadata.Distribution:
    return metadata.distribution(name)


def runtime_closure(root_dist: str = SELF_DIST) -> list[str]:
    """The distributions ``root_dist`` needs at run time (its requirements, recursively, with
    environment markers evaluated and only the extras that are asked for), sorted by name."""
    from packaging.requirements import Requirement  # the PyPA library, not this folder

    seen: dict[str, str] = {}
    todo: list[tuple[str, frozenset[str]]] = [(root_dist, frozenset())]
    while todo:
        name, extras = todo.pop()
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue  # an optional requirement that is not installed: nothing to bundle
        key = _canonical(dist.metadata["Name"])
        first_time = key not in seen
        seen[key] = dist.metadata["Name"]
        for text in dist.requires or []:
            req = Requirement(text)
            if req.marker is not None:
                envs = [{"extra": e} for e in extras] or [{"extra": ""}]
                if not any(req.marker.evaluate(env) for env in envs):
                    continue
            if first_time or req.extras:
                todo.append((req.name, frozenset(req.extras)))
    return sorted(seen.values(), key=_canonical)


def distributions_of_modules(module_names) -> list[str]:
    """The installed distributions that provide the given (dotted) module names."""
    owners = metadata.packages_distributions()
    found: set[str] = set()
    for name in module_names:
        top = name.split(".", 1)[0]
        for dist in owners.get(top, ()):
            found.add(dist)
    out = {}
    for dist in found:
        try:
            real = metadata.distribution(dist).metadata["Name"]
        except metadata.PackageNotFoundError:
            continue
        out[_canonical(real)] = real
    return sorted(out.values(), key=_canonical)


def bundled_distributions(module_names=None) -> list[str]:
    """Distributions whose code is in the bundle.

    Given the module names a PyInstaller analysis collected, the owners of those modules
    (plus Kepler Lab itself); without them (no build at hand), Kepler Lab's runtime
    requirements, which is close but may list a package the bundle leaves out (e.g. a test
    tool another package declares as a requirement)."""
    if module_names is None:
        found = runtime_closure()
    else:
        found = distributions_of_modules(module_names) + [SELF_DIST]
    names = {_canonical(n): n for n in found}
    # PyInstaller's own packages are build tools; only its bootloader ends up in the bundle,
    # and the notices name it separately.
    for tool in ("pyinstaller", "pyinstaller-hooks-contrib", "altgraph", "setuptools", "pip"):
        names.pop(tool, None)
    return sorted(names.values(), key=_canonical)


def metadata_toc(dist_names) -> list[tuple[str, str, str]]:
    """TOC entries ``(destination, source, 'DATA')`` with the ``.dist-info`` folder of each
    distribution, so ``importlib.metadata.version()`` / ``entry_points()`` work when frozen
    (pysindy, pyvistaqt, dask, distributed and engine.tasks.lsr_synth call them; our own
    ``keplerlab`` metadata is among them)."""
    toc = []
    for name in dist_names:
        dist = _installed(name)
        if dist is None:
            continue
        base = Path(dist._path).resolve()  # its .dist-info (or .egg-info) folder
        folder = base.name
        renames = {}
        if folder.endswith(".egg-info"):
            # A source tree's egg-info (e.g. keplerlab.egg-info of `pip install -e`): give the
            # bundle a .dist-info of the same content, which importlib.metadata reads alike.
            folder = f"{dist.metadata['Name'].replace('-', '_')}-{dist.version}.dist-info"
            renames = {"PKG-INFO": "METADATA", "SOURCES.txt": None}
        for path in sorted(base.rglob("*")):
            if not path.is_file() or path.name in _METADATA_SKIP or "__pycache__" in path.parts:
                continue
            target = renames.get(path.name, path.name)
            if target is None:
                continue
            rel = path.relative_to(base).with_name(target)
            toc.append((str(Path(folder) / rel), str(path), "DATA"))
    return sorted(set(toc))


def _installed(name: str) -> metadata.Distribution | None:
    """The installed distribution of that name, preferring a ``.dist-info`` (what pip installs)
    over an ``.egg-info`` a source checkout on ``sys.path`` may also hold."""
    found = [d for d in metadata.distributions(name=name)]
    if not found:
        try:
            found = [metadata.distribution(name)]
        except metadata.PackageNotFoundError:
            return None
    found.sort(key=lambda d: not str(getattr(d, "_path", "")).endswith(".dist-info"))
    return found[0]


def keep_qt_plugin(dest: str) -> bool:
    """Whether a collected file under PySide6's ``Qt/plugins`` folder stays in the bundle."""
    parts = Path(dest).parts
    if "plugins" not in parts:
        return True
    i = parts.index("plugins")
    if i + 1 >= len(parts) or parts[i - 1] != "Qt":
        return True
    return parts[i + 1] in QT_PLUGIN_DIRS


def trim_toc(toc):
    """Drop entries of the TOC the bundle does not need: Qt plugins outside QT_PLUGIN_DIRS,
    pyvista's example data, test folders of libraries, and C headers / static libraries."""
    out = []
    for entry in toc:
        dest = entry[0].replace("\\", "/")
        parts = dest.split("/")
        if not keep_qt_plugin(dest):
            continue
        if dest.startswith("pyvista/examples/") and not dest.endswith((".py", ".pyc")):
            continue
        if "tests" in parts[:-1]:  # data of libraries' test suites (their modules are excluded)
            continue
        if dest.endswith((".h", ".hpp", ".pxd", ".pyx", ".a", ".lib", ".cmake")):
            continue
        out.append(entry)
    return out


def system_libraries(binaries) -> list[str]:
    """Shared libraries the analysis took from the build machine's system folders (not from
    Python or a wheel): they are named in the third-party notices."""
    own = [Path(p).resolve() for p in {sys.prefix, sys.base_prefix, sys.exec_prefix, str(ROOT)}]
    out = set()
    for entry in binaries:
        src = Path(entry[1]).resolve()
        if any(src.is_relative_to(base) for base in own):
            continue
        out.add(f"{Path(entry[0]).name}  (from {entry[1]})")
    return sorted(out)


def has_debug_info(path) -> bool:
    """Whether an ELF file has a ``.debug_info`` section (read from its section headers)."""
    import struct

    try:
        with open(path, "rb") as fh:
            ident = fh.read(16)
            if ident[:4] != b"\x7fELF" or ident[4] != 2:  # 64-bit ELF only
                return False
            endian = "<" if ident[5] == 1 else ">"
            fh.seek(0x28)
            shoff = struct.unpack(endian + "Q", fh.read(8))[0]
            fh.seek(0x3A)
            shentsize, shnum, shstrndx = struct.unpack(endian + "HHH", fh.read(6))
            if not shoff or not shnum or shstrndx >= shnum:
                return False
            fh.seek(shoff + shstrndx * shentsize + 0x18)
            str_off, str_size = struct.unpack(endian + "QQ", fh.read(16))
            fh.seek(str_off)
            names = fh.read(min(str_size, 1 << 20))
    except (OSError, struct.error, IndexError):
        return False
    return b"\0.debug_info\0" in names


def strip_debug_info(toc, workdir) -> tuple[list, int]:
    """Copies of the TOC's shared libraries without their debug information, for those that
    carry it (``objcopy --strip-debug``); returns the new TOC and the bytes saved.

    PyInstaller's own ``strip=True`` runs ``strip`` on every library, which breaks the ones
    auditwheel rewrote with patchelf (NumPy's OpenBLAS: "ELF load command address/offset not
    page-aligned"); so only libraries with debug sections are touched, and never those in a
    wheel's ``*.libs`` folder (the vendored, patched ones)."""
    import shutil
    import subprocess

    objcopy = shutil.which("objcopy")
    if objcopy is None:
        print("speclib: objcopy not found (binutils); libraries keep their debug information")
        return list(toc), 0
    out, saved = [], 0
    for entry in toc:
        dest, src, kind = entry[0], entry[1], entry[2]
        parent = Path(dest).parent.name
        if kind not in ("BINARY", "EXTENSION") or parent.endswith(".libs") or not has_debug_info(src):
            out.append(entry)
            continue
        target = Path(workdir) / "stripped" / dest
        target.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([objcopy, "--strip-debug", src, str(target)], check=True)
        saved += Path(src).stat().st_size - target.stat().st_size
        out.append((dest, str(target), kind))
    return out, saved
