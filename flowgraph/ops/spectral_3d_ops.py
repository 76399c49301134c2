"""The 3-D real FFT ops ``RFFT3D`` and ``IRFFT3D`` (``tf.signal.rfft3d`` / ``irfft3d``,
also under ``tf.spectral``): over the 3 innermost dimensions, each padded or cropped to
its entry of ``fft_length`` (an int32 vector of 3). Kernels:
`flowgraph/backends/cpu/kernels_spectral_3d.py`. As in TensorFlow, neither op has a
gradient (``tf.gradients`` through one raises LookupError).

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.ops.op_util import make_tensor
>>> x = make_tensor("RFFT3D", [tf.zeros([2, 3, 4, 6]), tf.constant([3, 4, 6])])
>>> x.shape.as_list(), x.dtype
([2, 3, 4, 4], tf.complex64)
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant_value
from flowgraph.framework.registry import register_op
from flowgraph.framework.tensor_shape import TensorShape

__all__: list[str] = []


def _shape(real_input: bool):
    def shape_fn(op, x, fft_length):
        if x.ndims is None:
            return [TensorShape(None)]
        if x.ndims < 3:
            raise op.shape_error(f"the input must have rank at least 3, got {x.ndims}")
        dims = x.as_list()
        lengths = constant_value(op.inputs[1])
        if lengths is None:
            return [TensorShape(dims[:-3] + [None] * 3)]
        n0, n1, n2 = (int(v) for v in lengths.ravel())
        return [TensorShape([*dims[:-3], n0, n1, n2 // 2 + 1 if real_input else n2])]

    return shape_fn


def _complex_of(op):
    return [_dtypes.as_dtype(op.attrs["Tcomplex"])]


def _real_of(op):
    return [_dtypes.as_dtype(op.attrs["Treal"])]


register_op("RFFT3D", attrs={"Treal": _dtypes.float32, "Tcomplex": _dtypes.complex64},
            dtype_fn=_complex_of, cost="expensive")(_shape(True))
register_op("IRFFT3D", attrs={"Treal": _dtypes.float32, "Tcomplex": _dtypes.complex64},
            dtype_fn=_real_of, cost="expensive")(_shape(False))
