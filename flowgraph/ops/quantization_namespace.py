"""``tf.quantization``: fake quantization for quantization-aware training and the
quantize/dequantize ops (re-exports of `flowgraph.ops.fake_quant_ops` and
`flowgraph.ops.quantize_ops`).

Example
-------
>>> import flowgraph as tf
>>> tf.quantization.fake_quant_with_min_max_args is tf.fake_quant_with_min_max_args
True
>>> tf.quantization.quantize is tf.quantize
True
"""

from flowgraph.ops.fake_quant_ops import *  # noqa: F403
from flowgraph.ops.fake_quant_ops import __all__ as _fake_quant_names
from flowgraph.ops.quantize_ops import dequantize, quantize, quantized_concat

__all__ = [*_fake_quant_names, "dequantize", "quantize", "quantized_concat"]
