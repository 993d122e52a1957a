"""PyInstaller hook for pysindy (pyinstaller-hooks-contrib has none).

``pysindy/__init__.py`` sets ``__version__`` from ``importlib.metadata.version("pysindy")``; the
metadata must be in the bundle (without it the version silently becomes ``None``).
"""

from PyInstaller.utils.hooks import copy_metadata

datas = copy_metadata("pysindy")
