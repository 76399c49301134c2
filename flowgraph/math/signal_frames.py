"""``tf.signal`` framing: `frame`, `overlap_and_add`, `stft`, `inverse_stft` and
`fftshift`/`ifftshift`, composed from gather, pad/reshape/sum and the Fourier transforms
(so they have gradients).

`frame` cuts overlapping windows out of a signal axis::

    signal  0 1 2 3 4 5 6 7 8 9      frame_length 4, frame_step 3
    frames  [0 1 2 3] [3 4 5 6] [6 7 8 9]    (pad_end adds [9 p p p])

Example
-------
>>> import flowgraph as tf
>>> tf.Session().run(tf.signal.frame(tf.range(6), 3, 2)).tolist()
[[0, 1, 2], [2, 3, 4]]
"""

from __future__ import annotations

import math

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant_value, convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.math.signal_fft import hann_window, irfft, rfft
from flowgraph.ops import array_ops as _a
from flowgraph.ops import math_ops as _m
from flowgraph.ops.array_extra_ops import roll
from flowgraph.ops.math_reduce import reduce_sum

__all__ = ["fftshift", "frame", "ifftshift", "inverse_stft", "overlap_and_add", "stft"]


def _static_positive(value, what: str, fn: str) -> int:
    v = constant_value(convert_to_tensor(value))
    if v is None or v.size != 1 or int(v.reshape(())) <= 0:
        raise ValueError(f"tf.signal.{fn}: {what} must be a positive integer known when the "
                         f"graph is built, got {value!r}")
    return int(v.reshape(()))


def frame(signal, frame_length, frame_step, pad_end=False, pad_value=0, axis=-1, name=None):
    """Frames of `frame_length` samples every `frame_step` samples along `axis`: that
    axis becomes two, ``[num_frames, frame_length]``. Without `pad_end` only whole frames
    are kept; with it the end is padded with `pad_value` so that every sample starts
    frames up to ``ceil(length / frame_step)``.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.signal.frame(tf.zeros([3, 100]), 16, 8).shape.as_list()
    [3, 11, 16]
    """
    with name_scope(name, "frame", [signal, frame_length, frame_step, pad_value]):
        x = convert_to_tensor(signal, name="signal")
        length = _static_positive(frame_length, "frame_length", "frame")
        step = _static_positive(frame_step, "frame_step", "frame")
        rank = x.shape.ndims
        if rank == 0:
            raise ValueError(f"tf.signal.frame: signal must have rank at least 1, got shape "
                             f"{x.shape}")
        if rank is not None and not -rank <= axis < rank:
            raise IndexError(f"tf.signal.frame: axis {axis} is out of range for a signal of "
                             f"rank {rank}")
        result_shape = _frame_shape(x.shape, length, step, pad_end, axis)
        # As TensorFlow: cut the axis into subframes of gcd(length, step) samples and
        # gather whole subframes, so the result is a Reshape (and so are the gradients).
        if x.shape.is_fully_defined():
            dims = x.shape.as_list()
            ax = axis % rank
            outer, n, inner = dims[:ax], dims[ax], dims[ax + 1:]
            num_outer, num_inner = ax, rank - 1 - ax
        else:
            signal_rank = _a.rank(x) if rank is None else rank
            ax = _a.range(signal_rank)[axis] if rank is None else axis % rank
            outer, n, inner = _a.split(_a.shape(x), _a.stack([ax, 1, signal_rank - 1 - ax])
                                       if rank is None else [ax, 1, rank - 1 - ax])
            n = _a.reshape(n, [])
            num_outer, num_inner = _a.size(outer), _a.size(inner)
        if pad_end:
            frames = -(-n // step)
            pad = _m.maximum(0, length + step * (frames - 1) - n)
            widths = _a.concat([_a.zeros(_a.stack([num_outer, 2]), _dtypes.int32),
                                _a.expand_dims(_a.stack([0, pad]), 0),
                                _a.zeros(_a.stack([num_inner, 2]), _dtypes.int32)], 0)
            x = _a.pad(x, widths, constant_values=_m.cast(
                convert_to_tensor(pad_value), x.dtype.base_dtype))
            n = _a.shape(x)[ax]
        elif isinstance(n, int):
            frames = max(0, 1 + (n - length) // step)
        else:
            frames = _m.maximum(0, 1 + (n - length) // step)
        sub = math.gcd(length, step)
        per_frame, per_hop = length // sub, step // sub
        subframes = n // sub
        sliced = _a.strided_slice(x, _a.zeros_like(_a.shape(x)),
                                  _dims(outer, [subframes * sub], inner))
        pieces = _a.reshape(sliced, _dims(outer, [subframes, sub], inner))
        hops = _a.reshape(_a.range(frames) * per_hop, _dims([frames], [1]))
        within = _a.reshape(_a.range(per_frame), [1, per_frame])
        gathered = _a.gather(pieces, hops + within, axis=ax)
        out = _a.reshape(gathered, _dims(outer, [frames, length], inner))
        if result_shape is not None:
            out.set_shape(result_shape)
        return out


def _dims(*parts):
    """A shape from parts that are lists of ints or int32 tensors: a list when all are
    known, else a concatenated int32 vector."""
    if all(isinstance(d, int) for part in parts if isinstance(part, list) for d in part) \
            and all(isinstance(part, list) for part in parts):
        return [d for part in parts for d in part]
    return _a.concat([p if not isinstance(p, list) else _a.stack(p) if p else
                      _a.zeros([0], _dtypes.int32) for p in parts], 0)


def _frame_shape(shape, length: int, step: int, pad_end: bool, axis: int):
    """`frame`'s static result shape, as TensorFlow infers it."""
    if shape.ndims is None:
        return None
    dims = shape.as_list()
    ax = axis % len(dims)
    n = dims[ax]
    frames = None
    if n is not None:
        frames = max(0, -(-n // step)) if pad_end else max(0, (n - length + step) // step)
    return [*dims[:ax], frames, length, *dims[ax + 1:]]


def overlap_and_add(signal, frame_step, name=None):
    """The inverse of `frame` (summing the overlaps): ``[..., frames, frame_length]`` ->
    ``[..., (frames - 1) * frame_step + frame_length]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.signal.overlap_and_add(tf.ones([3, 4]), 2)).tolist()
    [1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 1.0, 1.0]
    """
    with name_scope(name, "overlap_and_add", [signal, frame_step]):
        x = convert_to_tensor(signal, name="signal")
        step = _static_positive(convert_to_tensor(frame_step, name="frame_step"),
                                "frame_step", "overlap_and_add")
        rank = x.shape.ndims
        if rank is None or rank < 2:
            raise ValueError(f"tf.signal.overlap_and_add: signal must have a known rank >= 2, "
                             f"got shape {x.shape}")
        if x.shape.is_fully_defined():  # as TensorFlow: no shape ops for a known shape
            dims = x.shape.as_list()
            outer, outer_rank = dims[:-2], rank - 2
        else:
            dims = _a.shape(x)
            outer = dims[:-2]
            outer_rank = _a.size(outer)
        length, frames = dims[-1], dims[-2]

        def outer_and(*inner):
            if isinstance(outer, list):
                return outer + list(inner)
            return _a.concat([outer, _a.stack(list(inner))], 0)

        total = length + step * (frames - 1)
        static = x.shape.as_list()
        if static[-1] == step:  # frames that do not overlap only need a reshape
            return _a.reshape(x, outer_and(total), name="fast_path")
        # Cut each frame into `pieces` blocks of `step` samples (zero-padded), and add
        # `pieces` zero frames at the end. Laid out [piece, frame + piece, step], block
        # (p, f) of frame f lands at output block f + p; moving the piece axis first and
        # flattening shifts row p by p blocks, so summing over pieces adds the overlaps.
        pieces = -(-length // step)
        pad = _a.concat([_a.zeros(_a.stack([outer_rank, 2]), _dtypes.int32),
                         _a.stack([_a.stack([0, pieces]),
                                   _a.stack([0, pieces * step - length])])], 0)
        x = _a.pad(x, pad)
        x = _a.reshape(x, outer_and(frames + pieces, pieces, step))
        inner = [outer_rank + 1, outer_rank, outer_rank + 2]
        x = _a.transpose(x, _a.concat([_a.range(outer_rank), _a.stack(inner)], 0))
        x = _a.reshape(x, outer_and((frames + pieces) * pieces, step))
        x = x[..., :(frames + pieces - 1) * pieces, :]
        x = _a.reshape(x, outer_and(pieces, frames + pieces - 1, step))
        x = reduce_sum(x, -3)
        x = _a.reshape(x, outer_and((frames + pieces - 1) * step))
        out = x[..., :total]
        if static[-2] is not None and static[-1] is not None:
            out.set_shape([*static[:-2], (static[-2] - 1) * step + static[-1]])
        return out


def _window_of(window_fn, length: int, dtype):
    return window_fn(length, dtype=dtype)


def stft(signals, frame_length, frame_step, fft_length=None, window_fn=hann_window,
         pad_end=False, name=None):
    """The short-time Fourier transform of real `signals` ``[..., samples]``:
    ``[..., frames, fft_length // 2 + 1]`` complex, each frame windowed by
    ``window_fn(frame_length)`` (default: the periodic Hann window; None: no window,
    as in TensorFlow); `fft_length`
    defaults to the smallest power of 2 >= `frame_length`.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.signal.stft(tf.zeros([2, 100]), 16, 8).shape.as_list()
    [2, 11, 9]
    """
    with name_scope(name, "stft", [signals, frame_length, frame_step]):
        x = convert_to_tensor(signals, name="signals")
        length = _static_positive(frame_length, "frame_length", "stft")
        fft_len = (2 ** math.ceil(math.log2(length)) if fft_length is None
                   else _static_positive(fft_length, "fft_length", "stft"))
        framed = frame(x, length, frame_step, pad_end=pad_end)
        if window_fn is not None:
            framed = framed * _window_of(window_fn, length, x.dtype.base_dtype)
        return rfft(framed, [fft_len])


def inverse_stft(stfts, frame_length, frame_step, fft_length=None, window_fn=hann_window,
                 name=None):
    """The inverse of `stft`: each frame's inverse real FFT, cut to `frame_length`,
    windowed by ``window_fn`` (default: Hann; None: no window) and overlap-added.

    Example
    -------
    >>> import flowgraph as tf
    >>> spec = tf.signal.stft(tf.zeros([64]), 16, 8)
    >>> tf.signal.inverse_stft(spec, 16, 8).shape.as_list()
    [64]
    """
    with name_scope(name, "inverse_stft", [stfts]):
        s = convert_to_tensor(stfts, name="stfts")
        length = _static_positive(frame_length, "frame_length", "inverse_stft")
        fft_len = (2 ** math.ceil(math.log2(length)) if fft_length is None
                   else _static_positive(fft_length, "fft_length", "inverse_stft"))
        frames = irfft(s, [fft_len])
        if fft_len < length:
            rank = frames.shape.ndims
            frames = _a.pad(frames, [[0, 0]] * (rank - 1) + [[0, length - fft_len]])
        frames = frames[..., :length]
        if window_fn is not None:
            frames = frames * _window_of(window_fn, length, frames.dtype.base_dtype)
        return overlap_and_add(frames, frame_step)


def _shift(x, axes, sign: int, what: str, scope: str):
    """TensorFlow's graph: the shifts from ``shape(x) // 2`` (gathered at `axes` when a
    list is given, negative axes wrapped), one ``Roll`` named after `scope`."""
    x = convert_to_tensor(x)
    if axes is None:
        if x.shape.ndims is None:
            raise ValueError(f"tf.signal.{what}: the input's rank must be known")
        axes = tuple(range(x.shape.ndims))
        shift = _a.shape(x) // 2
    elif isinstance(axes, int):
        shift = _a.shape(x)[axes] // 2
    else:
        rank = _a.rank(x)
        axes = _a.where(_m.less(axes, 0), axes + rank, axes)
        shift = _a.gather(_a.shape(x), axes) // 2
    return roll(x, shift if sign > 0 else -shift, axes, name=scope)


def fftshift(x, axes=None, name=None):
    """Move the zero frequency to the centre: `x` rolled by ``n // 2`` along `axes`
    (all by default).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.signal.fftshift(tf.range(5))).tolist()
    [3, 4, 0, 1, 2]
    """
    with name_scope(name, "fftshift", [x]) as scope:
        return _shift(x, axes, 1, "fftshift", scope)


def ifftshift(x, axes=None, name=None):
    """The inverse of `fftshift`: rolled by ``-(n // 2)``."""
    with name_scope(name, "ifftshift", [x]) as scope:
        return _shift(x, axes, -1, "ifftshift", scope)
