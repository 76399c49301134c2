"""``tf.signal`` windows (Kaiser, Kaiser-Bessel-derived, Vorbis), the modified DCT
(`mdct`, `inverse_mdct`) and `inverse_stft_window_fn`, built from graph ops as
TensorFlow builds them (so their gradients come from those ops).

The MDCT frames the signal with hop ``frame_length / 2``, windows each frame (Vorbis by
default), folds it to half its length and takes a type-4 DCT; `inverse_mdct` unfolds,
windows and overlap-adds, reconstructing the signal exactly where two frames overlap
when the window satisfies the Princen-Bradley condition (the Vorbis and KBD windows).

Example
-------
>>> import numpy as np
>>> import flowgraph as tf
>>> sig = np.sin(np.arange(32, dtype=np.float32) / 3)
>>> rec = tf.signal.inverse_mdct(tf.signal.mdct(sig, 8, norm="ortho"), norm="ortho")
>>> bool(np.allclose(tf.Session().run(rec)[4:28], sig[4:28], atol=1e-5))
True
"""

from __future__ import annotations

import math

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant_value, convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.math.signal_dct import dct
from flowgraph.math.signal_fft import hann_window
from flowgraph.math.signal_frames import frame, overlap_and_add
from flowgraph.ops import array_ops as _a
from flowgraph.ops import math_ops as _m
from flowgraph.ops.math_reduce import cumsum, reduce_sum

__all__ = ["inverse_mdct", "inverse_stft_window_fn", "kaiser_bessel_derived_window",
           "kaiser_window", "mdct", "vorbis_window"]


def _length(window_length, what: str) -> int:
    value = constant_value(convert_to_tensor(window_length))
    if value is None:
        raise ValueError(f"tf.signal.{what}: window_length must be known when the graph is "
                         "built")
    n = int(value)
    if n < 0:
        raise ValueError(f"tf.signal.{what}: window_length must be >= 0, got {n}")
    return n


def _float_dtype(dtype, what: str):
    dtype = _dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"tf.signal.{what}: dtype must be a floating point type, got "
                         f"{dtype.name}")
    return dtype


def kaiser_window(window_length, beta=12.0, dtype=_dtypes.float32, name=None):
    """The Kaiser window ``I0(beta sqrt(1 - (2k/(N-1) - 1)^2)) / I0(beta)`` (as
    ``numpy.kaiser``), computed with ``bessel_i0e`` for range.

    Example
    -------
    >>> import flowgraph as tf
    >>> w = tf.Session().run(tf.signal.kaiser_window(5, beta=3.0))
    >>> [round(float(v), 4) for v in w]
    [0.2049, 0.7269, 1.0, 0.7269, 0.2049]
    """
    from flowgraph.ops.math_special import bessel_i0e

    with name_scope(name, "kaiser_window"):
        n = _length(window_length, "kaiser_window")
        dtype = _float_dtype(dtype, "kaiser_window")
        if n == 1:
            return _a.ones([1], dtype=dtype)
        half = (n - 1) / 2.0
        arg = _m.cast(_a.range(n), dtype) - half if n else _a.zeros([0], dtype)
        beta_t = _m.cast(beta, dtype)
        num = beta_t * _m.sqrt(_m.maximum(1.0 - _m.square(arg / half), 0.0)) if n else arg
        return _m.exp(num - beta_t) * (bessel_i0e(num) / bessel_i0e(beta_t))


def kaiser_bessel_derived_window(window_length, beta=12.0, dtype=_dtypes.float32,
                                 name=None):
    """The Kaiser-Bessel-derived window (for the MDCT): the square root of the running
    sum of a Kaiser window of ``window_length // 2 + 1`` points, mirrored. As in
    TensorFlow an odd length gives ``window_length - 1`` points.

    Example
    -------
    >>> import flowgraph as tf
    >>> w = tf.Session().run(tf.signal.kaiser_bessel_derived_window(6))
    >>> [round(float(v), 4) for v in w]
    [0.0071, 0.7071, 1.0, 1.0, 0.7071, 0.0071]
    """
    with name_scope(name, "kaiser_bessel_derived_window"):
        half = _length(window_length, "kaiser_bessel_derived_window") // 2
        kaiser = kaiser_window(half + 1, beta, dtype)
        csum = cumsum(kaiser)
        halfw = _m.sqrt(csum[:-1] / csum[-1])
        return _a.concat([halfw, _a.reverse_v2(halfw, [0])], 0)


def vorbis_window(window_length, dtype=_dtypes.float32, name=None):
    """The Vorbis power-complementary window ``sin(pi/2 sin^2(pi (k + 1/2) / N))``.

    Example
    -------
    >>> import flowgraph as tf
    >>> [round(float(v), 4) for v in tf.Session().run(tf.signal.vorbis_window(4))]
    [0.228, 0.9737, 0.9737, 0.228]
    """
    with name_scope(name, "vorbis_window"):
        n = _length(window_length, "vorbis_window")
        dtype = _float_dtype(dtype, "vorbis_window")
        k = _m.cast(_a.range(n), dtype)
        inner = _m.sin(math.pi / max(n, 1) * (k + 0.5))
        return _m.sin(math.pi / 2.0 * _m.pow(inner, 2.0))


def mdct(signals, frame_length, window_fn=vorbis_window, pad_end=False, norm=None,
         name=None):
    """The MDCT of `signals` (``[..., samples]``): frames of `frame_length` (a multiple
    of 4) every ``frame_length / 2`` samples, each giving ``frame_length / 2``
    coefficients: ``[..., frames, frame_length / 2]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.signal.mdct(tf.zeros([32]), 8).shape.as_list()
    [7, 4]
    """
    with name_scope(name, "mdct", [signals]):
        x = convert_to_tensor(signals, name="signals")
        if x.shape.ndims is not None and x.shape.ndims < 1:
            raise ValueError(f"tf.signal.mdct: signals must have rank at least 1, got "
                             f"shape {x.shape}")
        n = _length(frame_length, "mdct")
        if n % 4 != 0:
            raise ValueError("The frame length must be a multiple of 4.")
        frames = frame(x, n, n // 2, pad_end=pad_end)
        if window_fn is not None:
            frames = frames * window_fn(n, dtype=frames.dtype.base_dtype)
        else:
            frames = frames * (1.0 / math.sqrt(2.0))
        q0, q1, q2, q3 = _a.split(frames, 4, axis=-1)
        first = -_a.reverse_v2(q2, [-1]) - q3
        second = q0 - _a.reverse_v2(q1, [-1])
        return dct(_a.concat([first, second], -1), type=4, norm=norm)


def inverse_mdct(mdcts, window_fn=vorbis_window, norm=None, name=None):
    """The inverse of `mdct`: ``[..., frames, half]`` coefficients back to
    ``[..., (frames + 1) * half]`` samples (exact where frames overlap, for a
    Princen-Bradley window)."""
    with name_scope(name, "inverse_mdct", [mdcts]):
        x = convert_to_tensor(mdcts, name="mdcts")
        half = x.shape[-1].value if x.shape.ndims else None
        if half is None:
            raise ValueError(f"tf.signal.inverse_mdct: the innermost dimension must be "
                             f"known, got shape {x.shape}")
        if norm is None:
            y = (0.5 / half) * dct(x, type=4)
        elif norm == "ortho":
            y = dct(x, type=4, norm="ortho")
        else:
            raise ValueError(f"tf.signal.inverse_mdct: norm must be None or 'ortho', got "
                             f"{norm!r}")
        a, b = _a.split(y, 2, axis=-1)
        frames = _a.concat([b, -_a.reverse_v2(b, [-1]), -_a.reverse_v2(a, [-1]), -a], -1)
        if window_fn is not None:
            frames = frames * window_fn(2 * half, dtype=frames.dtype.base_dtype)
        else:
            frames = frames * (1.0 / math.sqrt(2.0))
        return overlap_and_add(frames, half)


def inverse_stft_window_fn(frame_step, forward_window_fn=hann_window, name=None):
    """A `window_fn` for `inverse_stft` that undoes `forward_window_fn` applied by `stft`
    with hop `frame_step`: the forward window divided by the overlap-added squares of
    its shifted copies.

    Example
    -------
    >>> import flowgraph as tf
    >>> fn = tf.signal.inverse_stft_window_fn(2)
    >>> [round(float(v), 4) for v in tf.Session().run(fn(4, tf.float32))]
    [0.0, 1.0, 1.0, 1.0]
    """
    def inverse_stft_window_fn_inner(frame_length, dtype):
        with name_scope(name, "inverse_stft_window_fn", []):
            step = _length(frame_step, "inverse_stft_window_fn")
            n = _length(frame_length, "inverse_stft_window_fn")
            forward = forward_window_fn(n, dtype=dtype)
            overlaps = -(-n // step)
            denom = _a.pad(_m.square(forward), [[0, overlaps * step - n]])
            denom = reduce_sum(_a.reshape(denom, [overlaps, step]), 0, keepdims=True)
            denom = _a.reshape(_a.tile(denom, [overlaps, 1]), [overlaps * step])
            return forward / denom[:n]

    return inverse_stft_window_fn_inner
