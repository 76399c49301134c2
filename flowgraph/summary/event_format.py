"""TensorBoard's file formats (`Summary`, `Event`, TFRecord framing, PNG), re-exported.

The code lives in `flowgraph.framework.event_format` so that the CPU summary kernels can
use it without importing the `tf.summary` layer; this module keeps the historical import
path working.

Example
-------
>>> Summary.FromString(Summary(value=[Summary.Value(tag="a")]).SerializeToString()).value[0].tag
'a'
"""

from flowgraph.framework.event_format import *  # noqa: F403
from flowgraph.framework.event_format import __all__  # noqa: F401
