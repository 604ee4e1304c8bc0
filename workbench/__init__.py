"""IR judgment and pooling workbench."""
__version__ = "0.1.0"
