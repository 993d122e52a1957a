"""PyInstaller hook for pyboolnet (pyinstaller-hooks-contrib has none).

Kepler Lab reads the Boolean networks of pyboolnet's model repository
(``pyboolnet/repository/<model>/<model>.bnet``) to build the SymbolBench BN tasks; it finds the
folder with ``importlib.util.find_spec("pyboolnet")`` and never imports the package
(engine/tasks/symbolbench_bn.py). So the repository's text files must be in the bundle, at
``pyboolnet/repository/`` where the frozen importer says the package lives.

Left out: the repository's PDF drawings (nothing reads them) and ``pyboolnet/binaries`` — the
model checkers and ASP solvers (NuSMV, clasp, gringo, …) for all platforms, which Kepler Lab never
runs. ``version.txt`` and the Linux binaries' ``settings.cfg`` are kept because
``import pyboolnet`` reads them, should anything import it.
"""

from PyInstaller.utils.hooks import collect_data_files

datas = collect_data_files(
    "pyboolnet",
    includes=["repository/**/*.bnet", "repository/**/*.json", "repository/**/*.md", "version.txt",
              "binaries/linux64/settings.cfg"],
)
