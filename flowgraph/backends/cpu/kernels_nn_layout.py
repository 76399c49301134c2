"""CPU kernels of `flowgraph/ops/nn_layout_ops.py`: LRN and its gradient, the
space/depth/batch rearrangements, TF1's batch normalization with global statistics,
``MaxPoolV2`` (TensorFlow's tensor-argument spelling of ``MaxPool``, run by the same
pooling code), the data-format index maps and grayscale dilation.

LRN sums squares over a window of ``2 * depth_radius + 1`` channels, zero beyond the
edges: ``norm = bias + alpha * sum``, ``y = x * norm ** -beta``. Its gradient is
``dx_i = g_i * norm_i ** -beta - 2 * alpha * beta * x_i * sum_j g_j * y_j / norm_j``
over the channels ``j`` whose window holds ``i`` (the same window: it is symmetric).

Dilation (``Dilation2D``) takes, for each output pixel and channel, the maximum over the
filter's taps of ``input + filter`` (taps outside the image do not count); the backprop
ops send each output gradient to the tap that won (the first one, row-major, among
equal maxima), as TensorFlow's kernels do.
"""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.backends.cpu import kernels_conv as _conv
from flowgraph.backends.cpu.kernels_array_extra import batch_to_space_nd, space_to_batch_nd
from flowgraph.framework import errors


def _invalid(op, msg: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, f"{op.type} '{op.name}': {msg}")


def _need_rank(op, x: np.ndarray, rank: int, what: str) -> None:
    if x.ndim != rank:
        raise _invalid(op, f"{what} must be {rank}-D, got shape {list(x.shape)}")


# -- LRN ---------------------------------------------------------------------------------
def _window_sums(a: np.ndarray, r: int) -> np.ndarray:
    """Sums over the last axis of ``a`` in windows ``[i - r, i + r]`` (zeros outside)."""
    c = a.shape[-1]
    if r <= 8:
        padded = np.pad(a, [(0, 0)] * (a.ndim - 1) + [(r, r)])
        out = padded[..., :c].copy()
        for k in range(1, 2 * r + 1):
            out += padded[..., k:k + c]
        return out
    cs = np.concatenate([np.zeros((*a.shape[:-1], 1), a.dtype), np.cumsum(a, axis=-1)], -1)
    idx = np.arange(c)
    return cs[..., np.minimum(idx + r + 1, c)] - cs[..., np.maximum(idx - r, 0)]


def _lrn_norm(x, depth_radius, bias, alpha, op):
    _need_rank(op, x, 4, "input")
    if depth_radius < 0:
        raise _invalid(op, f"depth_radius must be non-negative, got {depth_radius}")
    x64 = x.astype(np.float64)
    return x64, bias + alpha * _window_sums(x64 * x64, int(depth_radius))


@cpu_kernel("LRN", dtypes=["float16", "float32", "float64"], fresh=True)
def lrn(x, *, depth_radius, bias, alpha, beta, op):
    x64, norm = _lrn_norm(x, depth_radius, bias, alpha, op)
    return (x64 * norm ** -beta).astype(x.dtype)


@cpu_kernel("LRNGrad", dtypes=["float16", "float32", "float64"], fresh=True)
def lrn_grad(dy, x, y, *, depth_radius, bias, alpha, beta, op):
    if not dy.shape == x.shape == y.shape:
        raise _invalid(op, f"input_grads {list(dy.shape)}, input_image {list(x.shape)} and "
                       f"output_image {list(y.shape)} must have one shape")
    x64, norm = _lrn_norm(x, depth_radius, bias, alpha, op)
    g = dy.astype(np.float64)
    back = _window_sums(g * y.astype(np.float64) / norm, int(depth_radius))
    return (g * norm ** -beta - 2.0 * alpha * beta * x64 * back).astype(dy.dtype)


# -- SpaceToDepth / DepthToSpace -----------------------------------------------------------
def _to_nhwc(op, x, block_size):
    _need_rank(op, x, 4, "input")
    if block_size < 2:
        raise _invalid(op, f"block_size must be at least 2, got {block_size}")
    fmt = op.attrs["data_format"]
    if fmt not in ("NHWC", "NCHW"):
        raise _invalid(op, f"data_format {fmt!r} is not supported on the CPU (NHWC or NCHW)")
    return x if fmt == "NHWC" else x.transpose(0, 2, 3, 1)


def _from_nhwc(op, y):
    y = y if op.attrs["data_format"] == "NHWC" else y.transpose(0, 3, 1, 2)
    return np.ascontiguousarray(y)


@cpu_kernel("SpaceToDepth", fresh=True)
def space_to_depth(x, *, block_size, op):
    xs = _to_nhwc(op, x, block_size)
    n, h, w, c = xs.shape
    b = block_size
    if h % b or w % b:
        raise _invalid(op, f"the height ({h}) and width ({w}) must be divisible by "
                       f"block_size {b}")
    y = xs.reshape(n, h // b, b, w // b, b, c).transpose(0, 1, 3, 2, 4, 5)
    return _from_nhwc(op, y.reshape(n, h // b, w // b, b * b * c))


@cpu_kernel("DepthToSpace", fresh=True)
def depth_to_space(x, *, block_size, op):
    xs = _to_nhwc(op, x, block_size)
    n, h, w, c = xs.shape
    b = block_size
    if c % (b * b):
        raise _invalid(op, f"the depth ({c}) must be divisible by block_size * block_size "
                       f"= {b * b}")
    y = xs.reshape(n, h, w, b, b, c // (b * b)).transpose(0, 1, 3, 2, 4, 5)
    return _from_nhwc(op, y.reshape(n, h * b, w * b, c // (b * b)))


# -- SpaceToBatch / BatchToSpace ---------------------------------------------------------
@cpu_kernel("SpaceToBatch", fresh=True)
def space_to_batch(x, paddings, *, block_size, op):
    _need_rank(op, x, 4, "input")
    if np.shape(paddings) != (2, 2):
        raise _invalid(op, f"paddings must be a 2x2 matrix, got shape "
                       f"{list(np.shape(paddings))}")
    if block_size < 2:
        raise _invalid(op, f"block_size must be at least 2, got {block_size}")
    return space_to_batch_nd(x, np.array([block_size] * 2), paddings, op=op)


@cpu_kernel("BatchToSpace", fresh=True)
def batch_to_space(x, crops, *, block_size, op):
    _need_rank(op, x, 4, "input")
    if np.shape(crops) != (2, 2):
        raise _invalid(op, f"crops must be a 2x2 matrix, got shape {list(np.shape(crops))}")
    if block_size < 2:
        raise _invalid(op, f"block_size must be at least 2, got {block_size}")
    return batch_to_space_nd(x, np.array([block_size] * 2), crops, op=op)


# -- BatchNormWithGlobalNormalization ------------------------------------------------------
def _bn_check(op, t, vectors):
    _need_rank(op, t, 4, "t")
    depth = t.shape[3]
    for name, v in vectors:
        if v.shape != (depth,):
            raise _invalid(op, f"{name} must be a vector of the input's depth ({depth}), got "
                           f"shape {list(v.shape)}")


@cpu_kernel("BatchNormWithGlobalNormalization", dtypes=["float16", "float32", "float64"],
            fresh=True)
def bn_global(t, m, v, beta, gamma, *, variance_epsilon, scale_after_normalization, op):
    _bn_check(op, t, [("m", m), ("v", v), ("beta", beta), ("gamma", gamma)])
    scale = 1.0 / np.sqrt(v + np.asarray(variance_epsilon, v.dtype))
    if scale_after_normalization:
        scale = scale * gamma
    return (t * scale + (beta - m * scale)).astype(t.dtype)


@cpu_kernel("BatchNormWithGlobalNormalizationGrad",
            dtypes=["float16", "float32", "float64"])
def bn_global_grad(t, m, v, gamma, backprop, *, variance_epsilon,
                   scale_after_normalization, op):
    _bn_check(op, t, [("m", m), ("v", v), ("gamma", gamma)])
    if backprop.shape != t.shape:
        raise _invalid(op, f"backprop {list(backprop.shape)} must have the shape of t "
                       f"{list(t.shape)}")
    dtype = t.dtype
    axes = (0, 1, 2)
    inv = 1.0 / np.sqrt(v.astype(np.float64) + variance_epsilon)
    g = backprop.astype(np.float64)
    centered = t.astype(np.float64) - m
    db = g.sum(axis=axes)
    dot = (g * centered).sum(axis=axes)
    gain = gamma.astype(np.float64) if scale_after_normalization else 1.0
    dx = g * (inv * gain)
    dm = -db * inv * gain
    dv = dot * -0.5 * inv ** 3 * gain
    dg = dot * inv if scale_after_normalization else np.zeros_like(db)
    return tuple(a.astype(dtype) for a in (dx, dm, dv, db, dg))


# -- MaxPoolV2 family --------------------------------------------------------------------
def _pool_args(op, ksize, strides):
    k = [int(s) for s in np.reshape(ksize, -1)]
    s = [int(v) for v in np.reshape(strides, -1)]
    if len(k) != 4 or len(s) != 4:
        raise _invalid(op, f"ksize and strides must have 4 elements, got {k} and {s}")
    if min(k) < 1 or min(s) < 1:
        raise _invalid(op, f"ksize and strides must be positive, got {k} and {s}")
    return k, s


@cpu_kernel("MaxPoolV2", fresh=True)
def max_pool_v2(x, ksize, strides, *, padding, data_format="NHWC", op):
    k, s = _pool_args(op, ksize, strides)
    return _conv.max_pool(x, ksize=k, strides=s, padding=padding, data_format=data_format)


@cpu_kernel("MaxPoolGradV2", fresh=True)
def max_pool_grad_v2(x, y, dy, ksize, strides, *, padding, data_format="NHWC", op):
    k, s = _pool_args(op, ksize, strides)
    return _conv.max_pool_grad(x, y, dy, ksize=k, strides=s, padding=padding,
                               data_format=data_format)


@cpu_kernel("MaxPoolGradGradV2", fresh=True)
def max_pool_grad_grad_v2(x, y, ddx, ksize, strides, *, padding, data_format="NHWC", op):
    k, s = _pool_args(op, ksize, strides)
    return _conv.max_pool_grad_grad(x, y, ddx, ksize=k, strides=s, padding=padding,
                                    data_format=data_format)


# -- DataFormatDimMap / DataFormatVecPermute -----------------------------------------------
def _formats(op, src_format, dst_format):
    src = src_format.decode() if isinstance(src_format, bytes) else str(src_format)
    dst = dst_format.decode() if isinstance(dst_format, bytes) else str(dst_format)
    if len(src) not in (4, 5) or sorted(src) != sorted(dst) or len(set(src)) != len(src):
        raise _invalid(op, f"src_format {src!r} and dst_format {dst!r} must be permutations "
                       f"of one 4- or 5-letter layout")
    return src, dst


@cpu_kernel("DataFormatDimMap", dtypes=["int32", "int64"], fresh=True)
def data_format_dim_map(x, *, src_format, dst_format, op):
    src, dst = _formats(op, src_format, dst_format)
    n = len(src)
    if ((x < -n) | (x >= n)).any():
        raise _invalid(op, f"every dimension index must be in [-{n}, {n}), got "
                       f"{x[(x < -n) | (x >= n)].reshape(-1)[:3].tolist()}")
    table = np.array([dst.index(ch) for ch in src], x.dtype)
    return table[np.mod(x, n)]


@cpu_kernel("DataFormatVecPermute", dtypes=["int32", "int64"], fresh=True)
def data_format_vec_permute(x, *, src_format, dst_format, op):
    src, dst = _formats(op, src_format, dst_format)
    if x.ndim not in (1, 2) or (x.ndim == 2 and x.shape[1] != 2):
        raise _invalid(op, f"input must be a vector or a [n, 2] matrix, got shape "
                       f"{list(x.shape)}")
    n = x.shape[0]
    if n == len(src) - 2:  # only the spatial dimensions
        src = "".join(ch for ch in src if ch not in "NC")
        dst = "".join(ch for ch in dst if ch not in "NC")
    elif n != len(src):
        raise _invalid(op, f"the first dimension of the input must be {len(src)} or "
                       f"{len(src) - 2}, got {n}")
    return np.ascontiguousarray(x[[src.index(ch) for ch in dst]])


# -- Dilation2D ----------------------------------------------------------------------------
def _lowest(dtype):
    return np.finfo(dtype).min if dtype.kind == "f" else np.iinfo(dtype).min


def _dilation_taps(op, x, f, strides, rates, padding):
    """Per filter tap: the input rows and columns each output reads, whether they lie in
    the image, and the output shape."""
    _need_rank(op, x, 4, "input")
    _need_rank(op, f, 3, "filter")
    if len(strides) != 4 or len(rates) != 4 or strides[0] != 1 or strides[3] != 1 \
            or rates[0] != 1 or rates[3] != 1:
        raise _invalid(op, f"strides and rates must be [1, h, w, 1], got {list(strides)}, "
                       f"{list(rates)}")
    if f.shape[2] != x.shape[3]:
        raise _invalid(op, f"the filter's depth {f.shape[2]} must equal the input's "
                       f"{x.shape[3]}")
    axes = []
    for size, k, s, r in zip(x.shape[1:3], f.shape[:2], strides[1:3], rates[1:3]):
        eff = (k - 1) * r + 1
        if padding == "SAME":
            out = -(-size // s)
            before = max((out - 1) * s + eff - size, 0) // 2
        else:
            if size < eff:
                raise _invalid(op, f"the dilated filter ({eff}) is larger than the input "
                               f"({size}) with padding VALID")
            out, before = (size - eff) // s + 1, 0
        pos = np.arange(out)[None, :] * s + np.arange(k)[:, None] * r - before  # [k, out]
        axes.append((pos, (pos >= 0) & (pos < size)))
    return axes


def _dilation_values(x, f, axes):
    """``[kh, kw, n, oh, ow, c]``: input + filter at every tap (lowest where outside)."""
    (rows, rok), (cols, cok) = axes
    rr = rows.clip(0, x.shape[1] - 1)
    cc = cols.clip(0, x.shape[2] - 1)
    vals = x[:, rr][:, :, :, cc]  # [n, kh, oh, kw, ow, c]
    vals = vals.transpose(1, 3, 0, 2, 4, 5) + f[:, :, None, None, None, :]
    ok = rok[:, None, None, :, None, None] & cok[None, :, None, None, :, None]
    return np.where(ok, vals, _lowest(x.dtype)).astype(x.dtype)


@cpu_kernel("Dilation2D", fresh=True)
def dilation2d(x, f, *, strides, rates, padding, op):
    axes = _dilation_taps(op, x, f, strides, rates, padding)
    vals = _dilation_values(x, f, axes)
    return vals.reshape(vals.shape[0] * vals.shape[1], *vals.shape[2:]).max(axis=0)


def _dilation_winners(op, x, f, dy, strides, rates, padding):
    axes = _dilation_taps(op, x, f, strides, rates, padding)
    vals = _dilation_values(x, f, axes)
    kh, kw = vals.shape[:2]
    if dy.shape != vals.shape[2:]:
        raise _invalid(op, f"out_backprop has shape {list(dy.shape)}, the output's is "
                       f"{list(vals.shape[2:])}")
    best = vals.reshape(kh * kw, *vals.shape[2:]).argmax(axis=0)  # [n, oh, ow, c]
    return axes, best // kw, best % kw


@cpu_kernel("Dilation2DBackpropInput", fresh=True)
def dilation2d_backprop_input(x, f, dy, *, strides, rates, padding, op):
    ((rows, _), (cols, _)), ti, tj = _dilation_winners(op, x, f, dy, strides, rates, padding)
    n, oh, ow, c = dy.shape
    r = rows[ti, np.arange(oh)[None, :, None, None]]
    q = cols[tj, np.arange(ow)[None, None, :, None]]
    flat = ((np.arange(n)[:, None, None, None] * x.shape[1] + r) * x.shape[2] + q) \
        * c + np.arange(c)
    out = np.zeros(x.size, dy.dtype)
    np.add.at(out, flat.reshape(-1), dy.reshape(-1))
    return out.reshape(x.shape)


@cpu_kernel("Dilation2DBackpropFilter", fresh=True)
def dilation2d_backprop_filter(x, f, dy, *, strides, rates, padding, op):
    _, ti, tj = _dilation_winners(op, x, f, dy, strides, rates, padding)
    c = dy.shape[3]
    flat = (ti * f.shape[1] + tj) * c + np.arange(c)
    out = np.zeros(f.size, dy.dtype)
    np.add.at(out, flat.reshape(-1), dy.reshape(-1))
    return out.reshape(f.shape)
