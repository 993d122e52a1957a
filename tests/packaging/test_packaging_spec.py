"""What the PyInstaller spec collects (packaging/speclib.py), the hooks, and the launcher."""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SPEC = REPO / "packaging" / "keplerlab.spec"


def test_spec_is_valid_python_and_uses_the_helpers():
    tree = ast.parse(SPEC.read_text(), filename=str(SPEC))
    calls = {ast.unparse(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    for name in ("speclib.datas", "speclib.hiddenimports", "speclib.trim_toc", "speclib.bundled_distributions",
                 "speclib.metadata_toc", "speclib.strip_debug_info", "notices.write_notices", "Analysis", "PYZ", "EXE", "COLLECT"):
        assert name in calls, name
    text = SPEC.read_text()
    assert "upx=False" in text and "console=True" in text and "exclude_binaries=True" in text  # one-folder
    assert "strip=True" not in text  # a blanket strip breaks patchelf-ed wheel libraries


def test_assets_tree_is_collected_where_engine_paths_looks(speclib):
    pairs = speclib.assets_datas()
    dests = {(Path(src).relative_to(REPO).as_posix(), dest) for src, dest in pairs}
    assert ("assets/catalogs/lsr_synth.json", "assets/catalogs") in dests
    for size in (16, 32, 48, 64, 128, 256, 512):
        assert (f"assets/icons/keplerlab-{size}.png", "assets/icons") in dests
    # every data file of assets/ is there, and no Python file
    on_disk = {p.relative_to(REPO).as_posix() for p in (REPO / "assets").rglob("*")
               if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts}
    assert {src for src, _ in dests} == on_disk
    # engine.paths.assets_dir() is <folder of engine>/../assets: the same relative place
    from engine import paths

    assert paths.assets_dir() == Path(paths.__file__).resolve().parent.parent / "assets"


def test_pyqtgraph_templates_colormaps_and_icons_are_collected(speclib):
    hidden = speclib.hiddenimports()
    for template in ("pyqtgraph.graphicsItems.ViewBox.axisCtrlTemplate_generic",
                     "pyqtgraph.graphicsItems.PlotItem.plotConfigTemplate_generic",
                     "pyqtgraph.GraphicsScene.exportDialogTemplate_generic"):
        assert template in hidden
    datas = speclib.datas()
    dests = {dest for _, dest in datas}
    assert "pyqtgraph/colors/maps" in dests and "pyqtgraph/icons" in dests
    assert any(src.endswith("viridis.csv") or src.endswith("CET-L1.csv") for src, _ in datas)
    assert not any("examples" in dest for dest in dests)
    assert datas == sorted(datas, key=lambda p: (p[1], p[0])), "inputs are sorted"


def test_every_module_loaded_by_name_is_a_hidden_import(speclib):
    hidden = set(speclib.hiddenimports())
    # the task registry, method registry and lab load these by name at run time
    registry_names = set()
    for path in ("engine/tasks/registry.py", "engine/methods/__init__.py", "engine/lab/__init__.py"):
        registry_names |= set(re.findall(r'"((?:engine|app)\.[a-z_.]+)"', (REPO / path).read_text()))
    assert registry_names, "the registries name their modules"
    missing = sorted(n for n in registry_names if n not in hidden and not n.endswith("."))
    assert not missing, missing
    for name in ("app.self_test", "app.__main__", "engine.tasks.lsr_synth", "engine.sandbox._worker",
                 "pyboolnet", "pyvistaqt", "vtkmodules.vtkRenderingOpenGL2", "distributed.nanny"):
        assert name in hidden, name


def test_sandbox_worker_script_ships_as_a_file(speclib):
    assert (str(REPO / "engine" / "sandbox" / "_worker.py"), "engine/sandbox") in speclib.datas()


def test_metadata_toc_includes_our_metadata_without_the_build_machine_path(speclib):
    toc = speclib.metadata_toc(["keplerlab", "pysindy"])
    names = [dest for dest, _, kind in toc]
    assert all(kind == "DATA" for _, _, kind in toc)
    assert any(re.fullmatch(r"keplerlab-0\.1\.0\.dist-info/METADATA", n) for n in names)
    assert any(n.startswith("pysindy-") and n.endswith(".dist-info/METADATA") for n in names)
    assert not any(n.endswith(("direct_url.json", "/RECORD")) for n in names)
    assert toc == sorted(toc)


def test_trim_toc_keeps_the_platform_plugins_and_drops_the_rest(speclib):
    toc = [
        ("PySide6/Qt/plugins/platforms/libqoffscreen.so", "/x/libqoffscreen.so", "BINARY"),
        ("PySide6/Qt/plugins/platforms/libqxcb.so", "/x/libqxcb.so", "BINARY"),
        ("PySide6/Qt/plugins/imageformats/libqsvg.so", "/x/libqsvg.so", "BINARY"),
        ("PySide6/Qt/plugins/sqldrivers/libqsqlite.so", "/x/libqsqlite.so", "BINARY"),
        ("PySide6/Qt/plugins/qmltooling/libqmldbg_debugger.so", "/x/l.so", "BINARY"),
        ("pyvista/examples/nut.ply", "/x/nut.ply", "DATA"),
        ("somelib/tests/data/big.bin", "/x/big.bin", "DATA"),
        ("numpy/_core/include/numpy/ndarraytypes.h", "/x/n.h", "DATA"),
        ("PySide6/Qt/lib/libQt6Core.so.6", "/x/libQt6Core.so.6", "BINARY"),
    ]
    kept = [e[0] for e in speclib.trim_toc(toc)]
    assert kept == ["PySide6/Qt/plugins/platforms/libqoffscreen.so", "PySide6/Qt/plugins/platforms/libqxcb.so",
                    "PySide6/Qt/plugins/imageformats/libqsvg.so", "PySide6/Qt/lib/libQt6Core.so.6"]


def test_bundled_distributions_from_module_names(speclib):
    names = speclib.bundled_distributions(["numpy.linalg", "PySide6.QtCore", "vtkmodules.vtkCommonCore", "engine.paths"])
    assert names == sorted(names, key=str.lower)
    assert {"numpy", "PySide6_Essentials", "vtk", "keplerlab"} <= set(names)
    assert "pyinstaller" not in {n.lower() for n in names}
    closure = speclib.runtime_closure()
    assert {"PySide6_Essentials", "pyoperon", "pyqtgraph", "vtk", "distributed"} <= set(closure)


def test_system_libraries_are_those_outside_python_and_the_wheels(speclib):
    import sys

    toc = [("libz.so.1", "/lib/x86_64-linux-gnu/libz.so.1", "BINARY"),
           ("libpython3.11.so.1.0", os.path.join(sys.base_prefix, "lib", "libpython3.11.so.1.0"), "BINARY")]
    assert speclib.system_libraries(toc) == ["libz.so.1  (from /lib/x86_64-linux-gnu/libz.so.1)"]


def test_pyboolnet_hook_takes_the_repository_and_leaves_the_solvers(tmp_path):
    hook = (REPO / "packaging" / "hooks" / "hook-pyboolnet.py").read_text()
    includes = ast.literal_eval(re.search(r"includes=(\[.*?\])", hook, re.S).group(1))
    from engine.tasks.symbolbench_bn import network_files, repository_dir

    folder = repository_dir()
    files = network_files()
    assert files, "pyboolnet's repository is installed"
    matched = {p for pattern in includes for p in folder.parent.glob(pattern)}
    assert set(files.values()) <= matched
    assert not any("binaries" in p.parts and p.name != "settings.cfg" for p in matched)


def test_launcher_runs_only_bundled_scripts_with_the_sandbox_flags(launcher, tmp_path):
    bundle = tmp_path / "_internal"
    (bundle / "engine" / "sandbox").mkdir(parents=True)
    worker = bundle / "engine" / "sandbox" / "_worker.py"
    worker.write_text("")
    outside = tmp_path / "evil.py"
    outside.write_text("")
    exe = str(tmp_path / "keplerlab")
    assert launcher.bundled_script([exe, "-I", "-S", "-B", str(worker), "{}"], str(bundle)) == str(worker.resolve())
    assert launcher.bundled_script([exe, "-I", "-S", "-B", str(outside), "{}"], str(bundle)) is None
    assert launcher.bundled_script([exe, "-I", "-S", "-B", str(bundle / "nope.py"), "{}"], str(bundle)) is None
    assert launcher.bundled_script([exe, "--self-test"], str(bundle)) is None
    assert launcher.bundled_script([exe, "-I", "-S", "-B", str(worker), "{}"], None) is None  # not frozen


def test_launcher_matches_the_sandbox_command_line():
    # engine/sandbox/pool.py starts its worker as `sys.executable -I -S -B _worker.py CONFIG`;
    # the launcher must recognise exactly that.
    pool = (REPO / "engine" / "sandbox" / "pool.py").read_text()
    assert '[sys.executable, "-I", "-S", "-B", str(WORKER_SCRIPT), json.dumps(cfg)]' in pool


def _tiny_library(folder: Path) -> Path:
    import shutil as sh
    import subprocess

    import pytest

    if sh.which("gcc") is None or sh.which("objcopy") is None:
        pytest.skip("needs gcc and objcopy")
    src = folder / "tiny.c"
    src.write_text("int kepler(int x) { return 3 * x; }\n")
    lib = folder / "libtiny.so"
    subprocess.run(["gcc", "-g", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    return lib


def test_debug_information_is_stripped_only_where_it_is_and_never_in_vendored_libs(speclib, tmp_path):
    import ctypes

    lib = _tiny_library(tmp_path)
    assert speclib.has_debug_info(lib)
    assert not speclib.has_debug_info(REPO / "pyproject.toml")
    toc = [("pkg/libtiny.so", str(lib), "BINARY"),
           ("pkg.libs/libtiny.so", str(lib), "BINARY"),  # a wheel's patched, vendored copy
           ("assets/x.json", str(REPO / "pyproject.toml"), "DATA")]
    out, saved = speclib.strip_debug_info(toc, tmp_path / "work")
    assert saved > 0
    stripped = Path(out[0][1])
    assert stripped.parent == tmp_path / "work" / "stripped" / "pkg"
    assert not speclib.has_debug_info(stripped)
    assert ctypes.CDLL(str(stripped)).kepler(14) == 42  # still a working library
    assert out[1:] == toc[1:]
