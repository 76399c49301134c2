"""Build and version constants of the `tf` namespace (``tf.VERSION``, ``tf.GIT_VERSION``,
``tf.GRAPH_DEF_VERSION``, ...; also ``tf.version``) and the TF1 feature queries
(``tf.resource_variables_enabled()``, ...), describing flowgraph itself.

``GRAPH_DEF_VERSION`` is the GraphDef producer version flowgraph writes (TensorFlow
2.15's, whose op semantics it follows); the compiler constants describe the Python that
runs flowgraph, which compiled its Cython extensions.

Example
-------
>>> import flowgraph as tf
>>> tf.VERSION == tf.__version__ == tf.version.VERSION
True
>>> tf.resource_variables_enabled(), tf.control_flow_v2_enabled()
(False, False)
"""

from __future__ import annotations

import platform

from flowgraph.framework.tf_formats.graph_def import TF_PRODUCER
from flowgraph.framework.versions import __version__

__all__ = ["COMPILER_VERSION", "CXX11_ABI_FLAG", "CXX_VERSION", "GIT_VERSION",
           "GRAPH_DEF_VERSION", "GRAPH_DEF_VERSION_MIN_CONSUMER",
           "GRAPH_DEF_VERSION_MIN_PRODUCER", "MONOLITHIC_BUILD", "VERSION",
           "control_flow_v2_enabled", "executing_eagerly_outside_functions",
           "resource_variables_enabled"]

VERSION = __version__
GIT_VERSION = f"v{__version__}"
COMPILER_VERSION = platform.python_compiler()
CXX_VERSION = 201703  # C++17, as TensorFlow reports for its own build
CXX11_ABI_FLAG = 1
MONOLITHIC_BUILD = 0
GRAPH_DEF_VERSION = TF_PRODUCER
GRAPH_DEF_VERSION_MIN_CONSUMER = 0
GRAPH_DEF_VERSION_MIN_PRODUCER = 0


# Set by `tf.enable_resource_variables()` / `tf.disable_resource_variables()`
# (flowgraph/compat/switches.py); read when a variable is created.
RESOURCE_VARIABLES = [False]


def resource_variables_enabled() -> bool:
    """Whether a variable created without ``use_resource`` is a resource variable
    (``VarHandleOp``) rather than a TF1 reference variable (``VariableV2``): False until
    `tf.enable_resource_variables()`."""
    return RESOURCE_VARIABLES[0]


def control_flow_v2_enabled() -> bool:
    """False: `tf.cond` and `tf.while_loop` build TF1 control flow (Switch/Merge, frames)."""
    return False


def executing_eagerly_outside_functions() -> bool:
    """False: flowgraph always builds graphs."""
    return False
