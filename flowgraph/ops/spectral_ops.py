"""Complex numbers and Fourier transforms with TensorFlow 1.x's op types and gradients:
``Complex``, ``Real``, ``Imag``, ``Angle`` and ``FFT``/``IFFT``, ``FFT2D``/``IFFT2D``,
``FFT3D``/``IFFT3D`` (over the innermost 1, 2 or 3 dimensions, complex64/complex128);
`rfft` and the window functions are built from them.

Gradients: an FFT's is the inverse FFT of the output gradient times the transform size
(and an inverse FFT's the FFT divided by it), as in TensorFlow.

Example
-------
>>> import flowgraph as tf
>>> x = tf.complex([1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0])
>>> tf.Session().run(tf.real(tf.fft(x))).tolist()
[1.0, 1.0, 1.0, 1.0]
"""

from __future__ import annotations

import math

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant_value, convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.registry import not_differentiable, register_gradient, register_op
from flowgraph.framework.tensor_shape import TensorShape, broadcast_shape
from flowgraph.ops.array_shape_ops import ones_like, shape, zeros_like
from flowgraph.ops.math_ops import cast, less, reciprocal
from flowgraph.ops.op_util import make_tensor

__all__ = ["angle", "complex", "fft", "fft2d", "fft3d", "fftnd", "ifft", "ifft2d", "ifft3d",
           "ifftnd", "imag", "irfftnd", "real", "rfftnd"]

_COMPLEX = (_dtypes.complex64, _dtypes.complex128)
_PAIRS = {_dtypes.float32: _dtypes.complex64, _dtypes.float64: _dtypes.complex128}


@register_op("Complex", attrs={"Tout": _dtypes.complex64},
             dtype_fn=lambda op: [_dtypes.as_dtype(op.attrs["Tout"])])
def _complex_shape(op, re, im):
    try:
        return [broadcast_shape(re, im)]
    except ValueError:
        raise op.shape_error(f"real {re} and imag {im} cannot be broadcast") from None


def _part_shape(op, x):
    return [x]


for _t in ("Real", "Imag", "Angle"):
    register_op(_t, attrs={"Tout": _dtypes.float32},
                dtype_fn=lambda op: [_dtypes.as_dtype(op.attrs["Tout"])])(_part_shape)


def _fft_shape(rank):
    def shape_fn(op, x):
        if x.ndims is not None and x.ndims < rank:
            raise op.shape_error(f"input must have rank of at least {rank}, got shape {x}")
        return [x]

    return shape_fn


_FFTS = {"FFT": 1, "IFFT": 1, "FFT2D": 2, "IFFT2D": 2, "FFT3D": 3, "IFFT3D": 3}
for _t, _rank in _FFTS.items():
    register_op(_t, cost="expensive")(_fft_shape(_rank))


def complex(real, imag, name=None):
    """``real + imag * 1j`` element-wise: float32 parts give complex64, float64 parts
    complex128.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.complex([1.0], [2.0]).dtype.name
    'complex64'
    """
    re = convert_to_tensor(real, name="real")
    im = convert_to_tensor(imag, name="imag")
    if re.dtype.base_dtype != im.dtype.base_dtype or re.dtype.base_dtype not in _PAIRS:
        raise TypeError(f"tf.complex: real and imag must both be float32 or both float64, "
                        f"got {re.dtype.base_dtype.name} and {im.dtype.base_dtype.name}")
    return make_tensor("Complex", [re, im], {"Tout": _PAIRS[re.dtype.base_dtype]},
                       name=name or "Complex")


def _part(op_type, x, name):
    return make_tensor(op_type, [x], {"Tout": x.dtype.base_dtype.real_dtype},
                       name=name or op_type)


def real(input, name=None):
    """The real part of each element (a real input is returned as it is).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.real(tf.complex([1.5], [2.0]))).tolist()
    [1.5]
    """
    x = convert_to_tensor(input, name="input")
    if x.dtype.base_dtype in _COMPLEX:
        return _part("Real", x, name)
    if not (x.dtype.is_floating or x.dtype.is_integer):
        raise TypeError(f"tf.real: input must be a numeric tensor, but got tensor with dtype "
                        f"{x.dtype.name}")
    return x


def imag(input, name=None):
    """The imaginary part of each element (zeros for a real input).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.imag(tf.complex([1.5], [2.0]))).tolist()
    [2.0]
    """
    x = convert_to_tensor(input, name="input")
    if x.dtype.base_dtype in _COMPLEX:
        return _part("Imag", x, name)
    with name_scope(name, "Imag", [x]):
        return zeros_like(x)  # (TensorFlow's name: <scope>/zeros_like)


def angle(input, name=None):
    """The argument of each element, ``atan2(imag, real)`` (for a real input: pi where
    it is negative, else 0).

    Example
    -------
    >>> import flowgraph as tf
    >>> round(float(tf.Session().run(tf.angle(tf.complex(0.0, 1.0)))), 4)
    1.5708
    """
    from flowgraph.ops.array_index_ops import where

    x = convert_to_tensor(input, name="input")
    if x.dtype.base_dtype in _COMPLEX:
        return _part("Angle", x, name)
    with name_scope(name, "Angle", [x]):
        # TensorFlow's graph: Select(x < 0, pi * ones_like(x), zeros_like(x))
        return where(less(x, 0), math.pi * ones_like(x), zeros_like(x))


def _fft(op_type):
    def fn(input, name=None):
        x = convert_to_tensor(input, name="input")
        if x.dtype.base_dtype not in _COMPLEX:
            raise TypeError(f"tf.{op_type.lower()}: input must be complex64 or complex128, "
                            f"got {x.dtype.base_dtype.name}; build it with tf.complex or "
                            "tf.cast")
        return make_tensor(op_type, [x], name=name or op_type)

    fn.__name__ = fn.__qualname__ = op_type.lower()
    inner = {1: "innermost dimension", 2: "innermost 2 dimensions",
             3: "innermost 3 dimensions"}[_FFTS[op_type]]
    kind = "inverse discrete Fourier transform" if op_type.startswith("I") else \
        "discrete Fourier transform"
    fn.__doc__ = (f"The {kind} over the {inner} of a complex tensor.\n\nExample\n"
                  f"-------\n>>> import flowgraph as tf\n>>> x = tf.cast(tf.ones([2, 2, 2]), "
                  f"tf.complex64)\n>>> tf.{fn.__name__}(x).shape.as_list()\n[2, 2, 2]\n")
    return fn


fft, ifft, fft2d, ifft2d, fft3d, ifft3d = (_fft(t) for t in _FFTS)
_BY_TYPE = {"FFT": fft, "IFFT": ifft, "FFT2D": fft2d, "IFFT2D": ifft2d, "FFT3D": fft3d,
            "IFFT3D": ifft3d}


# -- gradients ------------------------------------------------------------------------------

@register_gradient("Complex")
def _complex_grad(op, grad):
    from flowgraph.ops.math_grad import unbroadcast

    return list(unbroadcast(op, real(grad), imag(grad)))


@register_gradient("Real")
def _real_grad(op, grad):
    return [complex(grad, zeros_like(grad))]


@register_gradient("Imag")
def _imag_grad(op, grad):
    return [complex(zeros_like(grad), grad)]


@register_gradient("Angle")
def _angle_grad(op, grad):
    x = op.inputs[0]
    z = reciprocal(complex(imag(x), real(x)))
    return [-complex(grad, zeros_like(grad)) * z]


def _transform_size(x, rank):
    from flowgraph.ops.math_reduce import reduce_prod

    return cast(reduce_prod(shape(x)[-rank:]), x.dtype.base_dtype)


def _fft_grad(op_type, inverse_type, scale_up):
    def grad_fn(op, grad):
        size = _transform_size(grad, _FFTS[op_type])
        out = _BY_TYPE[inverse_type](grad)
        return [out * size if scale_up else out / size]

    register_gradient(op_type)(grad_fn)


for _t in ("FFT", "FFT2D", "FFT3D"):
    _fft_grad(_t, "I" + _t, True)
    _fft_grad("I" + _t, _t, False)


# -- N-dimensional transforms (FFTND, IFFTND, RFFTND, IRFFTND) -----------------------------
# TF 1.x's raw-op signatures: `fft_length` and `axes` are int32 tensors, one length per
# axis. TensorFlow 2.15's CPU build registers no kernel for them; flowgraph runs NumPy's.

def _nd_shape(real_out: bool, real_in: bool):
    def shape_fn(op, x, fft_length, axes):
        lengths = constant_value(op.inputs[1])
        axes_v = constant_value(op.inputs[2])
        if x.ndims is None:
            return [TensorShape(None)]
        if lengths is None or axes_v is None:
            return [TensorShape([None] * x.ndims)]
        lengths = [int(n) for n in lengths.ravel()]
        axes_v = [int(a) for a in axes_v.ravel()]
        dims = x.as_list()
        if len(lengths) != len(axes_v) or any(not -len(dims) <= a < len(dims)
                                              for a in axes_v):
            # as TensorFlow, which builds the op; its kernel reports the error
            return [TensorShape([None] * x.ndims)]
        for k, (n, a) in enumerate(zip(lengths, axes_v)):
            last = k == len(axes_v) - 1
            dims[a] = n // 2 + 1 if (last and real_in and not real_out) else n
        return [TensorShape(dims)]

    return shape_fn


register_op("FFTND", attrs={"Tcomplex": _dtypes.complex64})(_nd_shape(False, False))
register_op("IFFTND", attrs={"Tcomplex": _dtypes.complex64})(_nd_shape(False, False))
register_op("RFFTND", attrs={"Treal": _dtypes.float32, "Tcomplex": _dtypes.complex64},
            dtype_fn=lambda op: [_dtypes.as_dtype(op.attrs["Tcomplex"])])(
    _nd_shape(False, True))
register_op("IRFFTND", attrs={"Treal": _dtypes.float32, "Tcomplex": _dtypes.complex64},
            dtype_fn=lambda op: [_dtypes.as_dtype(op.attrs["Treal"])])(_nd_shape(True, False))
not_differentiable("FFTND", "IFFTND", "RFFTND", "IRFFTND")


def _nd_op(op_type: str, input, fft_length, axes, name, allowed, attrs):
    x = convert_to_tensor(input, name="input")
    if x.dtype.base_dtype not in allowed:
        raise TypeError(
            f"Value passed to parameter 'input' of tf.{op_type.lower()} has DataType "
            f"{x.dtype.base_dtype.name} not in list of allowed values: "
            f"{', '.join(d.name for d in allowed)}")
    lengths = convert_to_tensor(fft_length, dtype=_dtypes.int32, name="fft_length")
    axes_t = convert_to_tensor(axes, dtype=_dtypes.int32, name="axes")
    return make_tensor(op_type, [x, lengths, axes_t], attrs, name=name or op_type)


def fftnd(input, fft_length, axes, name=None):
    """The N-dimensional discrete Fourier transform of a complex tensor over `axes`,
    each padded or cropped to its entry of `fft_length` (TF's raw ``FFTND`` op).

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.cast(tf.ones([2, 3, 4]), tf.complex64)
    >>> tf.fftnd(x, [3, 4], [1, 2]).shape.as_list()
    [2, 3, 4]
    """
    return _nd_op("FFTND", input, fft_length, axes, name, _COMPLEX,
                  {"Tcomplex": convert_to_tensor(input).dtype.base_dtype})


def ifftnd(input, fft_length, axes, name=None):
    """The inverse of `fftnd` (TF's raw ``IFFTND`` op).

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.cast(tf.ones([4]), tf.complex64)
    >>> tf.Session().run(tf.real(tf.ifftnd(tf.fftnd(x, [4], [0]), [4], [0]))).tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    return _nd_op("IFFTND", input, fft_length, axes, name, _COMPLEX,
                  {"Tcomplex": convert_to_tensor(input).dtype.base_dtype})


def rfftnd(input, fft_length, axes, Tcomplex=_dtypes.complex64, name=None):
    """The N-dimensional FFT of a real tensor; the last of `axes` keeps
    ``fft_length[-1] // 2 + 1`` entries (TF's raw ``RFFTND`` op).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.rfftnd(tf.ones([3, 4]), [3, 4], [0, 1]).shape.as_list()
    [3, 3]
    """
    x = convert_to_tensor(input)
    return _nd_op("RFFTND", x, fft_length, axes, name, (_dtypes.float32, _dtypes.float64),
                  {"Treal": x.dtype.base_dtype, "Tcomplex": _dtypes.as_dtype(Tcomplex)})


def irfftnd(input, fft_length, axes, Treal=_dtypes.float32, name=None):
    """The inverse of `rfftnd`: a real tensor with `fft_length` entries along `axes`
    (TF's raw ``IRFFTND`` op).

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.rfftnd(tf.ones([3, 4]), [3, 4], [0, 1])
    >>> tf.Session().run(tf.irfftnd(x, [3, 4], [0, 1])).round(6).tolist()[0]
    [1.0, 1.0, 1.0, 1.0]
    """
    x = convert_to_tensor(input)
    return _nd_op("IRFFTND", x, fft_length, axes, name, _COMPLEX,
                  {"Treal": _dtypes.as_dtype(Treal), "Tcomplex": x.dtype.base_dtype})
