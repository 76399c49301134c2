"""CPU kernels of the 3-D convolution and pooling ops (`flowgraph/ops/nn_ops3d.py`).

Everything works on NDHWC arrays (NCDHW inputs are transposed in and out). A window
op reads a strided *view* of the padded input, ``[N, oD, oH, oW, kd, kh, kw, C]``
(`_windows`; no copy), so:

- ``Conv3D`` is one ``tensordot`` of that view with the filter over ``(kd, kh, kw, C)``;
- ``Conv3DBackpropFilterV2`` is one ``tensordot`` of the view with ``dy`` over
  ``(N, oD, oH, oW)``;
- ``Conv3DBackpropInputV2`` adds, per filter tap ``(i, j, l)``, ``dy @ filter[i, j, l].T``
  into the strided slice of the padded input that the tap read, then crops the padding;
- the pools reduce the view over its window axes (padding: ``-inf`` for the max; for
  the mean, TensorFlow's divisor, the count of real elements, from the same view of a
  padded array of ones); their gradients add per window tap, like the backward
  convolution.

Padding is TensorFlow's: 'SAME' gives ``ceil(n / s)`` outputs with the odd padding
element at the end; 'VALID' none.
"""

from __future__ import annotations

import itertools

import numpy as np
from numpy.lib.stride_tricks import as_strided

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import errors
from flowgraph.ops.nn_ops import same_padding

FLOATS = ("float16", "float32", "float64")


def _invalid(message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, message)


def _spatial(values, data_format) -> list[int]:
    """The depth, height and width entries of a 5-list attribute."""
    return [int(v) for v in (values[2:] if data_format == "NCDHW" else values[1:4])]


def _ndhwc(x, data_format):
    return np.transpose(x, (0, 2, 3, 4, 1)) if data_format == "NCDHW" else x


def _back(x, data_format, dtype):
    out = np.transpose(x, (0, 4, 1, 2, 3)) if data_format == "NCDHW" else x
    return np.ascontiguousarray(out, dtype=dtype)


def _sizes(sizes, data_format, what: str) -> list[int]:
    shape = [int(v) for v in np.reshape(sizes, -1)]
    if len(shape) != 5 or min(shape) < 0:
        raise _invalid(f"{what}: sizes must be a 5-vector of sizes >= 0, got {shape}")
    return [shape[0], *shape[2:], shape[1]] if data_format == "NCDHW" else shape


class _Geometry:
    """Output sizes and (before, after) paddings of a window op on three axes."""

    def __init__(self, what, dims, window, strides, dilations, padding) -> None:
        self.window, self.strides, self.dilations = window, strides, dilations
        self.out, self.pads = [], []
        for n, k, s, d in zip(dims, window, strides, dilations, strict=True):
            eff = (k - 1) * d + 1
            if padding == "SAME":
                self.out.append(-(-n // s))
                self.pads.append(same_padding(n, k, s, d))
            elif padding == "VALID":
                if n < eff:
                    raise _invalid(f"{what}: the window ({k} with dilation {d}) is larger "
                                   f"than the input size {n}; use padding 'SAME'")
                self.out.append((n - eff) // s + 1)
                self.pads.append((0, 0))
            else:
                raise _invalid(f"{what}: padding must be 'SAME' or 'VALID', got {padding!r}")

    def pad(self, x, value=0.0):
        """`x` (NDHWC) padded on its spatial axes."""
        if not any(a or b for a, b in self.pads):
            return x
        return np.pad(x, [(0, 0), *self.pads, (0, 0)], constant_values=value)

    def windows(self, xp):
        """The ``[N, oD, oH, oW, kd, kh, kw, C]`` view of the padded input `xp`."""
        n, c = xp.shape[0], xp.shape[4]
        s0, s1, s2, s3, s4 = xp.strides
        st, dl = self.strides, self.dilations
        return as_strided(xp, (n, *self.out, *self.window, c),
                          (s0, s1 * st[0], s2 * st[1], s3 * st[2],
                           s1 * dl[0], s2 * dl[1], s3 * dl[2], s4), writeable=False)

    def tap(self, i, j, m):
        """The slice of the padded input that window tap ``(i, j, m)`` reads."""
        return tuple(slice(t * d, t * d + s * (o - 1) + 1, s) for t, d, s, o in
                     zip((i, j, m), self.dilations, self.strides, self.out, strict=True))

    def crop(self, xp, dims):
        return xp[:, self.pads[0][0]:self.pads[0][0] + dims[0],
                  self.pads[1][0]:self.pads[1][0] + dims[1],
                  self.pads[2][0]:self.pads[2][0] + dims[2]]


def _work(dtype):
    """The dtype kernels compute in (half types in float32)."""
    return np.float64 if dtype == np.float64 else np.float32


# -- convolution --------------------------------------------------------------------------------
def _conv_geometry(what, dims, fshape, strides, padding, data_format, dilations):
    if len(fshape) != 5:
        raise _invalid(f"{what}: filter must be 5-D [depth, height, width, in, out], got "
                       f"shape {list(fshape)}")
    for name, values in (("strides", strides), ("dilations", dilations)):
        batch, chan = (values[0], values[1]) if data_format == "NCDHW" else \
            (values[0], values[4])
        if len(values) != 5 or int(batch) != 1 or int(chan) != 1:
            raise _invalid(f"{what}: {name} must be 1 in the batch and channel dimensions, "
                           f"got {list(values)}")
    return _Geometry(what, dims, list(fshape[:3]), _spatial(strides, data_format),
                     _spatial(dilations, data_format), padding)


@cpu_kernel("Conv3D", dtypes=FLOATS, fresh=True)
def conv3d(x, f, *, strides, padding, data_format="NDHWC", dilations=(1, 1, 1, 1, 1)):
    what = "Conv3D"
    xs = _ndhwc(x, data_format)
    if xs.ndim != 5:
        raise _invalid(f"{what}: input must be 5-D, got shape {list(x.shape)}")
    geo = _conv_geometry(what, xs.shape[1:4], f.shape, strides, padding, data_format,
                         dilations)
    if xs.shape[4] != f.shape[3]:
        raise _invalid(f"{what}: input depth (channels) {xs.shape[4]} does not match the "
                       f"filter's in_channels {f.shape[3]} (input {list(x.shape)}, filter "
                       f"{list(f.shape)})")
    work = _work(x.dtype)
    view = geo.windows(geo.pad(xs.astype(work, copy=False)))
    out = np.tensordot(view, f.astype(work, copy=False), axes=([4, 5, 6, 7], [0, 1, 2, 3]))
    return _back(out, data_format, x.dtype)


@cpu_kernel("Conv3DBackpropInputV2", dtypes=FLOATS, fresh=True)
def conv3d_backprop_input(sizes, f, dy, *, strides, padding, data_format="NDHWC",
                          dilations=(1, 1, 1, 1, 1)):
    what = "Conv3DBackpropInputV2"
    shape = _sizes(sizes, data_format, what)
    geo = _conv_geometry(what, shape[1:4], f.shape, strides, padding, data_format, dilations)
    work = _work(dy.dtype)
    dyn = _ndhwc(dy, data_format).astype(work, copy=False)
    want = (shape[0], *geo.out, f.shape[4])
    if dyn.shape != want or shape[4] != f.shape[3]:
        raise _invalid(f"{what}: out_backprop {list(dyn.shape)} (NDHWC) does not match "
                       f"input sizes {shape} (NDHWC) and filter {list(f.shape)}: expected "
                       f"{list(want)}")
    padded = [shape[0], *(n + a + b for n, (a, b) in zip(shape[1:4], geo.pads, strict=True)),
              shape[4]]
    dx = np.zeros(padded, work)
    fw = f.astype(work, copy=False)
    for i, j, m in itertools.product(*(range(k) for k in geo.window)):
        dx[(slice(None), *geo.tap(i, j, m))] += np.tensordot(dyn, fw[i, j, m], axes=([4], [1]))
    return _back(geo.crop(dx, shape[1:4]), data_format, dy.dtype)


@cpu_kernel("Conv3DBackpropFilterV2", dtypes=FLOATS, fresh=True)
def conv3d_backprop_filter(x, sizes, dy, *, strides, padding, data_format="NDHWC",
                           dilations=(1, 1, 1, 1, 1)):
    what = "Conv3DBackpropFilterV2"
    fshape = [int(v) for v in np.reshape(sizes, -1)]
    xs = _ndhwc(x, data_format)
    geo = _conv_geometry(what, xs.shape[1:4], fshape, strides, padding, data_format,
                         dilations)
    work = _work(dy.dtype)
    dyn = _ndhwc(dy, data_format).astype(work, copy=False)
    want = (xs.shape[0], *geo.out, fshape[4])
    if dyn.shape != want or xs.shape[4] != fshape[3]:
        raise _invalid(f"{what}: out_backprop {list(dyn.shape)} (NDHWC) does not match "
                       f"input {list(xs.shape)} (NDHWC) and filter sizes {fshape}: expected "
                       f"{list(want)}")
    view = geo.windows(geo.pad(xs.astype(work, copy=False)))
    df = np.tensordot(view, dyn, axes=([0, 1, 2, 3], [0, 1, 2, 3]))
    return np.ascontiguousarray(df, dtype=dy.dtype)


# -- pooling ------------------------------------------------------------------------------------
def _pool_geometry(what, dims, ksize, strides, padding, data_format):
    for name, values in (("ksize", ksize), ("strides", strides)):
        batch, chan = (values[0], values[1]) if data_format == "NCDHW" else \
            (values[0], values[4])
        if len(values) != 5 or int(batch) != 1 or int(chan) != 1:
            raise _invalid(f"{what}: pooling over the batch or channel dimension is not "
                           f"supported ({name}={list(values)}); use 1 for those dimensions")
    return _Geometry(what, dims, _spatial(ksize, data_format), _spatial(strides, data_format),
                     [1, 1, 1], padding)


def _counts(geo, dims, work):
    """TensorFlow's 'SAME' divisor: the real elements under each window."""
    ones = geo.pad(np.ones((1, *dims, 1), work))
    return geo.windows(ones).sum(axis=(4, 5, 6))


@cpu_kernel("MaxPool3D", dtypes=FLOATS, fresh=True)
def max_pool3d(x, *, ksize, strides, padding, data_format="NDHWC"):
    xs = _ndhwc(x, data_format)
    geo = _pool_geometry("MaxPool3D", xs.shape[1:4], ksize, strides, padding, data_format)
    work = _work(x.dtype)
    view = geo.windows(geo.pad(xs.astype(work, copy=False), -np.inf))
    return _back(view.max(axis=(4, 5, 6)), data_format, x.dtype)


@cpu_kernel("AvgPool3D", dtypes=FLOATS, fresh=True)
def avg_pool3d(x, *, ksize, strides, padding, data_format="NDHWC"):
    xs = _ndhwc(x, data_format)
    geo = _pool_geometry("AvgPool3D", xs.shape[1:4], ksize, strides, padding, data_format)
    work = _work(x.dtype)
    view = geo.windows(geo.pad(xs.astype(work, copy=False)))
    out = view.sum(axis=(4, 5, 6)) / _counts(geo, xs.shape[1:4], work)
    return _back(out, data_format, x.dtype)


@cpu_kernel("AvgPool3DGrad", dtypes=FLOATS, fresh=True)
def avg_pool3d_grad(sizes, dy, *, ksize, strides, padding, data_format="NDHWC"):
    what = "AvgPool3DGrad"
    shape = _sizes(sizes, data_format, what)
    geo = _pool_geometry(what, shape[1:4], ksize, strides, padding, data_format)
    work = _work(dy.dtype)
    dyn = _ndhwc(dy, data_format).astype(work, copy=False)
    if dyn.shape != (shape[0], *geo.out, shape[4]):
        raise _invalid(f"{what}: gradient of shape {list(dyn.shape)} (NDHWC) does not match "
                       f"the input sizes {shape} (NDHWC)")
    share = dyn / _counts(geo, shape[1:4], work)
    padded = [shape[0], *(n + a + b for n, (a, b) in zip(shape[1:4], geo.pads, strict=True)),
              shape[4]]
    dx = np.zeros(padded, work)
    for tap in itertools.product(*(range(k) for k in geo.window)):
        dx[(slice(None), *geo.tap(*tap))] += share
    return _back(geo.crop(dx, shape[1:4]), data_format, dy.dtype)


def _max_taps(what, x, y, ksize, strides, padding, data_format):
    """(geometry, NDHWC input shape, padded input, pooled output, the window taps) of a
    max pool's
    backward op, checked."""
    xs, ys = _ndhwc(x, data_format), _ndhwc(y, data_format)
    geo = _pool_geometry(what, xs.shape[1:4], ksize, strides, padding, data_format)
    if ys.shape != (xs.shape[0], *geo.out, xs.shape[4]):
        raise _invalid(f"{what}: orig_output of shape {list(ys.shape)} (NDHWC) is not the "
                       f"pooled shape of orig_input {list(xs.shape)} (NDHWC)")
    xp = geo.pad(xs, -np.inf)
    return geo, xs.shape, xp, ys, list(itertools.product(*(range(k) for k in geo.window)))


@cpu_kernel("MaxPool3DGrad", dtypes=FLOATS, fresh=True)
def max_pool3d_grad(x, y, dy, *, ksize, strides, padding, data_format="NDHWC"):
    what = "MaxPool3DGrad"
    geo, dims, xp, ys, taps = _max_taps(what, x, y, ksize, strides, padding, data_format)
    work = _work(dy.dtype)
    dyn = _ndhwc(dy, data_format).astype(work, copy=False)
    if dyn.shape != ys.shape:
        raise _invalid(f"{what}: gradient of shape {list(dyn.shape)} (NDHWC) does not match "
                       f"orig_output {list(ys.shape)} (NDHWC)")
    dx = np.zeros(xp.shape, work)
    for tap in taps:  # every element equal to its window's max gets the window's gradient
        index = (slice(None), *geo.tap(*tap))
        dx[index] += np.where(xp[index] == ys, dyn, 0)
    return _back(geo.crop(dx, dims[1:4]), data_format, dy.dtype)


@cpu_kernel("MaxPool3DGradGrad", dtypes=FLOATS, fresh=True)
def max_pool3d_grad_grad(x, y, ddx, *, ksize, strides, padding, data_format="NDHWC"):
    what = "MaxPool3DGradGrad"
    geo, dims, xp, ys, taps = _max_taps(what, x, y, ksize, strides, padding, data_format)
    g = _ndhwc(ddx, data_format)
    if g.shape != dims:
        raise _invalid(f"{what}: gradient of shape {list(g.shape)} (NDHWC) does not match "
                       f"orig_input {list(dims)} (NDHWC)")
    gp = geo.pad(g)
    out = np.zeros(ys.shape, g.dtype)
    found = np.zeros(ys.shape, bool)
    for tap in taps:  # the first element (in window order) equal to the max
        index = (slice(None), *geo.tap(*tap))
        hit = (xp[index] == ys) & ~found
        out[hit] = gp[index][hit]
        found |= hit
    return _back(out, data_format, ddx.dtype)
