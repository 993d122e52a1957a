"""PyInstaller hook for POT, the Python Optimal Transport library (``import ot``;
pyinstaller-hooks-contrib has none).

``ot.backend`` tries to import every array library it can drive (PyTorch, JAX, CuPy,
TensorFlow). Kepler Lab uses only the NumPy back end (``ot.emd2`` in engine/metrics/geometry.py);
should one of those libraries be installed in the build environment, the analysis would pull
gigabytes into the bundle, so they are excluded here.
"""

excludedimports = ["torch", "jax", "jaxlib", "cupy", "tensorflow"]
