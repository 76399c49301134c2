"""``tf.quantization``: fake quantization for quantization-aware training, the
quantize/dequantize ops and simulated quantization (re-exports of
`flowgraph.ops.fake_quant_ops`, `flowgraph.ops.quantize_ops` and
`flowgraph.ops.quantize_dequantize_ops`).

Example
-------
>>> import flowgraph as tf
>>> tf.quantization.fake_quant_with_min_max_args is tf.fake_quant_with_min_max_args
True
>>> tf.quantization.quantize is tf.quantize
True
>>> tf.Session().run(tf.quantization.quantize_and_dequantize_v2(
...     [0.2, -1.0], -1.0, 1.0, num_bits=2, range_given=True)).tolist()
[0.0, -1.0]
"""

from flowgraph.ops.fake_quant_ops import *  # noqa: F403
from flowgraph.ops.fake_quant_ops import __all__ as _fake_quant_names
from flowgraph.ops.quantize_dequantize_ops import (
    quantize_and_dequantize,
    quantize_and_dequantize_v2,
)
from flowgraph.ops.quantize_ops import dequantize, quantize, quantized_concat

__all__ = [*_fake_quant_names, "dequantize", "quantize", "quantize_and_dequantize",
           "quantize_and_dequantize_v2", "quantized_concat"]
