"""The flowgraph version, at the bottom of the package so that any layer may record it
(a SavedModel writes it); ``tf.__version__`` re-exports it.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.framework.versions import __version__
>>> tf.__version__ == __version__
True
"""

__version__ = "0.1.0"
