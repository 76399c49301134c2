"""``tf.quantization``: fake quantization for quantization-aware training (re-exports of
`flowgraph.ops.fake_quant_ops`).

Example
-------
>>> import flowgraph as tf
>>> tf.quantization.fake_quant_with_min_max_args is tf.fake_quant_with_min_max_args
True
"""

from flowgraph.ops.fake_quant_ops import *  # noqa: F403
from flowgraph.ops.fake_quant_ops import __all__  # noqa: F401
