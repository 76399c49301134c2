"""``tensorflow.python.debug`` (tfdbg) without a terminal: the file-dumping session
wrapper and hook, and the reader of their dumps.

>>> from flowgraph.python import debug as tf_debug
>>> sorted(n for n in tf_debug.__all__ if n.startswith("Dump"))
['DumpingDebugHook', 'DumpingDebugWrapperSession']
"""

from flowgraph.python.debug.debug_data import DebugDumpDir, DebugTensorDatum, has_inf_or_nan
from flowgraph.python.debug.dumping import DumpingDebugHook, DumpingDebugWrapperSession

__all__ = ["DebugDumpDir", "DebugTensorDatum", "DumpingDebugHook",
           "DumpingDebugWrapperSession", "has_inf_or_nan"]
