"""The version of sdpembed (also ``sdpembed.__version__``), importable without the package's
__init__ (which imports every layer)."""

__version__ = "0.1.0"
