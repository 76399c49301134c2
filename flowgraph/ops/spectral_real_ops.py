"""The real-signal FFT ops ``RFFT``, ``IRFFT``, ``RFFT2D`` and ``IRFFT2D``, which
`tf.signal.rfft`, `irfft`, `rfft2d` and `irfft2d` emit: over the 1 or 2 innermost
dimensions, each cropped (or zero-padded) to its entry of ``fft_length``; ``RFFT*`` keeps the
``fft_length[-1] // 2 + 1`` non-negative frequencies of the last, ``IRFFT*`` reads as many.
``Treal``/``Tcomplex`` pick the precisions (float32/complex64 by default).

Gradients as TensorFlow's: an ``RFFT``'s is the real part of the adjoint transform (the
inverse FFT of the zero-padded half spectrum, times the size), cropped back to the input;
an ``IRFFT``'s the ``RFFT`` of the incoming gradient with the mirrored frequencies counted
twice, over the size. Kernels: `flowgraph/backends/cpu/kernels_spectral_3d.py`.

Example
-------
>>> import flowgraph as tf
>>> x = tf.raw_ops.RFFT(input=[1.0, 2.0, 3.0, 4.0], fft_length=[4])
>>> tf.Session().run(x).tolist()
[(10+0j), (-2+2j), (-2+0j)]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant_value, convert_to_tensor
from flowgraph.framework.registry import register_gradient, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops import array_ops as _a
from flowgraph.ops import math_ops as _m
from flowgraph.ops.op_util import make_tensor
from flowgraph.ops.spectral_ops import complex as _complex
from flowgraph.ops.spectral_ops import ifft, ifft2d, real

__all__: list[str] = []

RANKS = {"RFFT": 1, "IRFFT": 1, "RFFT2D": 2, "IRFFT2D": 2}


def _shape(rank: int, real_input: bool):
    def shape_fn(op, x, fft_length):
        if fft_length.ndims is not None and (
                fft_length.ndims != 1 or not fft_length.dims[0].is_compatible_with(rank)):
            raise op.shape_error(f"fft_length must be a vector of {rank} lengths, got shape "
                                 f"{fft_length}")
        if x.ndims is None:
            return [TensorShape(None)]
        if x.ndims < rank:
            raise op.shape_error(f"the input must have rank at least {rank}, got {x.ndims}")
        dims = x.as_list()
        value = constant_value(op.inputs[1])
        lengths = None if value is None else [int(v) for v in value.ravel()]
        if lengths is None or len(lengths) != rank:
            return [TensorShape(dims[:-rank] + [None] * rank)]
        last = lengths[-1] // 2 + 1 if real_input else lengths[-1]
        return [TensorShape([*dims[:-rank], *lengths[:-1], last])]

    return shape_fn


for _t, _rank in RANKS.items():
    _real_in = not _t.startswith("I")
    register_op(_t, attrs={"Treal": _dtypes.float32, "Tcomplex": _dtypes.complex64},
                dtype_fn=(lambda op: [_dtypes.as_dtype(op.attrs["Tcomplex"])]) if _real_in
                else (lambda op: [_dtypes.as_dtype(op.attrs["Treal"])]),
                cost="expensive")(_shape(_rank, _real_in))


def real_fft(op_type: str, x, fft_length, name=None):
    """One ``RFFT*``/``IRFFT*`` op on `x` with the precisions its dtype implies."""
    dt = x.dtype.base_dtype
    if op_type.startswith("I"):
        attrs = {"Tcomplex": dt, "Treal": dt.real_dtype}
    else:
        attrs = {"Treal": dt, "Tcomplex": _dtypes.complex128 if dt == _dtypes.float64
                 else _dtypes.complex64}
    lengths = convert_to_tensor(fft_length, dtype=_dtypes.int32, name="fft_length")
    return make_tensor(op_type, [x, lengths], attrs, name=name or op_type)


# -- gradients -------------------------------------------------------------------------------

def _fit_inner(x, rank: int, lengths):
    """`x` cropped or zero-padded at the end of its `rank` innermost dimensions to
    `lengths` (an int vector tensor)."""
    shape = _a.shape(x)
    extra = _m.maximum(lengths - shape[-rank:], 0)
    lead = _a.zeros_like(shape[:-rank])
    paddings = _a.stack([_a.concat([lead, _a.zeros_like(extra)], 0),
                         _a.concat([lead, extra], 0)], axis=1)
    size = _a.concat([lead - 1, lengths], 0)
    return _a.slice(_a.pad(x, paddings), _a.zeros_like(size), size)


def _size(lengths, dtype):
    from flowgraph.ops.math_reduce import reduce_prod

    return _m.cast(reduce_prod(lengths), dtype)


def _rfft_grad(rank: int):
    def grad_fn(op, grad):
        x, lengths = op.inputs
        # The adjoint of "crop to fft_length, DFT, keep the half spectrum": zero-pad the
        # half spectrum to fft_length, run the unnormalized inverse DFT, take the real part
        # and zero-pad back to the input's size.
        full = _fit_inner(grad, rank, lengths)
        inverse = (ifft if rank == 1 else ifft2d)(full) * _size(lengths, grad.dtype.base_dtype)
        out = _fit_inner(real(inverse), rank, _a.shape(x)[-rank:])
        return [out, None]

    return grad_fn


def _irfft_grad(rank: int, rfft_type: str):
    def grad_fn(op, grad):
        x, lengths = op.inputs
        n = lengths[-1]
        half = n // 2 + 1
        spectrum = real_fft(rfft_type, grad, lengths)
        # Frequencies 1 .. ceil(n / 2) - 1 stand for themselves and their mirror images.
        k = _m.cast(_a.range(half), grad.dtype.base_dtype)
        last = _m.cast(half - 1, grad.dtype.base_dtype)
        even = _m.cast(_m.equal(n % 2, 0), grad.dtype.base_dtype)
        twice = 2.0 - _m.cast(_m.equal(k, 0.0), k.dtype) - even * _m.cast(_m.equal(k, last),
                                                                           k.dtype)
        scale = twice / _size(lengths, grad.dtype.base_dtype)
        out = spectrum * _complex(scale, _a.zeros_like(scale))
        return [_fit_inner(out, rank, _a.shape(x)[-rank:]), None]

    return grad_fn


register_gradient("RFFT")(_rfft_grad(1))
register_gradient("RFFT2D")(_rfft_grad(2))
register_gradient("IRFFT")(_irfft_grad(1, "RFFT"))
register_gradient("IRFFT2D")(_irfft_grad(2, "RFFT2D"))
