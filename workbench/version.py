"""The package version, in the base layer: ``workbench.__version__`` and the evaluator version read it here.

Kept apart from ``workbench/__init__.py`` (an edge: it exposes the Python API)
so that services can name the version without importing the package's public
surface (which would close an import cycle through ``workbench.api``).
"""

__version__ = "0.1.0"
