"""PyInstaller hook for pyvistaqt (pyinstaller-hooks-contrib has none).

``pyvistaqt/__init__.py`` reads its own version with ``importlib.metadata.version("pyvistaqt")``
at import time, so its ``.dist-info`` must be in the bundle; its ``data/`` folder holds the logo
its BackgroundPlotter windows use as icon.
"""

from PyInstaller.utils.hooks import collect_data_files, copy_metadata

datas = collect_data_files("pyvistaqt") + copy_metadata("pyvistaqt")
