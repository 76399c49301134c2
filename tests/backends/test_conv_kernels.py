"""The CPU convolution and pooling kernels (`flowgraph/backends/cpu/kernels_conv.py`)
against straightforward NumPy references, over random geometries.

The references pad explicitly (`np.pad`) and sum one einsum per filter tap (convolutions)
or loop over windows (pooling), so they share nothing with the kernels' im2col/col2im
layout, their chunking, or their padding-free window bounds. Each case draws its shape,
strides, dilations, padding (VALID, SAME or explicit), data format and dtype from a
seed; the public API (`tf.nn.conv2d` + `tf.gradients`) is checked the same way, and its
gradients against central finite differences.
"""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.backends.cpu import kernels_conv as kc
from flowgraph.framework.errors import InvalidArgumentError


# -- references ---------------------------------------------------------------------------
def _same(n, k, s, d):
    out = -(-n // s)
    total = max((out - 1) * s + (k - 1) * d + 1 - n, 0)
    return total // 2, total - total // 2


def _pads(case, kh, kw):
    _, h, w = case["shape"][:3]
    (sh, sw), (dh, dw) = case["strides"], case["dilations"]
    if case["padding"] == "SAME":
        return (*_same(h, kh, sh, dh), *_same(w, kw, sw, dw))
    if case["padding"] == "EXPLICIT":
        return case["explicit"]
    return (0, 0, 0, 0)


def _taps(xp, i, j, case, oh, ow):
    (sh, sw), (dh, dw) = case["strides"], case["dilations"]
    return xp[:, i * dh:i * dh + sh * (oh - 1) + 1:sh, j * dw:j * dw + sw * (ow - 1) + 1:sw]


def _out_size(case, kh, kw, pads):
    _, h, w, _ = case["shape"]
    (sh, sw), (dh, dw) = case["strides"], case["dilations"]
    return ((h + pads[0] + pads[1] - (kh - 1) * dh - 1) // sh + 1,
            (w + pads[2] + pads[3] - (kw - 1) * dw - 1) // sw + 1)


def ref_conv(x, f, case):
    """Forward, input gradient and filter gradient of an NHWC float64 convolution."""
    kh, kw = f.shape[:2]
    pt, pb, pl, pr = _pads(case, kh, kw)
    xp = np.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)))
    oh, ow = _out_size(case, kh, kw, (pt, pb, pl, pr))
    y = sum(np.einsum("nhwc,co->nhwo", _taps(xp, i, j, case, oh, ow), f[i, j])
            for i in range(kh) for j in range(kw))
    return xp, (pt, pb, pl, pr), y


def ref_conv_grads(x, f, dy, case):
    kh, kw = f.shape[:2]
    xp, (pt, _, pl, _), _ = ref_conv(x, f, case)
    oh, ow = dy.shape[1:3]
    dxp = np.zeros_like(xp)
    df = np.zeros_like(f)
    for i in range(kh):
        for j in range(kw):
            _taps(dxp, i, j, case, oh, ow)[...] += np.einsum("nhwo,co->nhwc", dy, f[i, j])
            df[i, j] = np.einsum("nhwc,nhwo->co", _taps(xp, i, j, case, oh, ow), dy)
    h, w = x.shape[1:3]
    return dxp[:, pt:pt + h, pl:pl + w], df


def ref_pool(x, k, case, kind, dy=None):
    """Pooled output (or, with `dy`, the input gradient) by a loop over windows; only
    in-bounds taps count; a max routes to the first maximum in row-major order."""
    n, h, w, c = x.shape
    kh, kw = k
    (sh, sw) = case["strides"]
    pads = (*_same(h, kh, sh, 1), *_same(w, kw, sw, 1)) if case["padding"] == "SAME" \
        else (0, 0, 0, 0)
    oh, ow = _out_size({**case, "dilations": (1, 1), "shape": x.shape}, kh, kw, pads)
    out = np.zeros((n, oh, ow, c))
    dx = np.zeros(x.shape)
    for y in range(oh):
        for xo in range(ow):
            r0, c0 = y * sh - pads[0], xo * sw - pads[2]
            rows = slice(max(r0, 0), min(r0 + kh, h))
            cols = slice(max(c0, 0), min(c0 + kw, w))
            win = x[:, rows, cols, :]
            count = win.shape[1] * win.shape[2]
            if kind == "max":
                out[:, y, xo] = win.max(axis=(1, 2))
                flat = win.reshape(n, count, c)
                first = np.argmax(flat, axis=1)  # [n, c]
                if dy is not None:
                    for b in range(n):
                        for ch in range(c):
                            a, bb = divmod(first[b, ch], win.shape[2])
                            dx[b, rows.start + a, cols.start + bb, ch] += dy[b, y, xo, ch]
            else:
                out[:, y, xo] = win.mean(axis=(1, 2))
                if dy is not None:
                    dx[:, rows, cols, :] += dy[:, y, xo][:, None, None, :] / count
    return dx if dy is not None else out


# -- random cases -------------------------------------------------------------------------
def draw_case(seed, pool=False):
    rng = np.random.default_rng(seed)
    kh, kw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    strides = (int(rng.integers(1, 4)), int(rng.integers(1, 3)))
    dilations = (1, 1) if pool or rng.random() < 0.5 else \
        (int(rng.integers(1, 3)), int(rng.integers(1, 4)))
    paddings = ["VALID", "SAME"] if pool else ["VALID", "SAME", "EXPLICIT"]
    padding = paddings[seed % len(paddings)]
    explicit = tuple(int(v) for v in rng.integers(0, 3, size=4))
    eh, ew = (kh - 1) * dilations[0] + 1, (kw - 1) * dilations[1] + 1
    shape = (int(rng.integers(1, 4)), eh + int(rng.integers(0, 7)),
             ew + int(rng.integers(0, 7)), int(rng.integers(1, 6)))
    return {"seed": seed, "k": (kh, kw), "strides": strides, "dilations": dilations,
            "padding": padding, "explicit": explicit, "shape": shape,
            "cout": int(rng.integers(1, 6)),
            "format": "NCHW" if seed % 4 >= 2 else "NHWC",
            "dtype": np.float32 if seed % 3 == 0 else np.float64, "rng": rng}


def _attrs(case, pool=False):
    fmt = case["format"]

    def four(hw):
        return [1, 1, *hw] if fmt == "NCHW" else [1, *hw, 1]

    attrs = {"strides": four(case["strides"]), "padding": case["padding"],
             "data_format": fmt}
    if pool:
        attrs["ksize"] = four(case["k"])
    else:
        attrs["dilations"] = four(case["dilations"])
        pads = [[0, 0], [0, 0], list(case["explicit"][:2]), list(case["explicit"][2:])]
        if fmt == "NHWC":
            pads = [pads[0], pads[2], pads[3], pads[1]]
        attrs["explicit_paddings"] = [v for p in pads for v in p] \
            if case["padding"] == "EXPLICIT" else []
    return attrs


def _to(fmt, a):
    return np.ascontiguousarray(a.transpose(0, 3, 1, 2)) if fmt == "NCHW" else a


def _back(fmt, a):
    return a.transpose(0, 2, 3, 1) if fmt == "NCHW" else a


def _tol(dtype):
    return {"rtol": 2e-4, "atol": 2e-4} if dtype == np.float32 else \
        {"rtol": 1e-10, "atol": 1e-10}


@pytest.mark.parametrize("seed", range(48))
def test_conv_kernels_match_reference(seed, monkeypatch):
    case = draw_case(seed)
    if seed % 2:  # tiny chunks: chunk boundaries inside images and window rows
        monkeypatch.setattr(kc, "_CHUNK_BYTES", 7 * 8 * 9)
    rng, dt, fmt = case["rng"], case["dtype"], case["format"]
    kh, kw = case["k"]
    x = rng.standard_normal(case["shape"])
    f = rng.standard_normal((kh, kw, case["shape"][3], case["cout"]))
    _, _, want = ref_conv(x, f, case)
    attrs = _attrs(case)
    y = kc.conv2d(_to(fmt, x).astype(dt), f.astype(dt), **attrs)
    assert y.dtype == dt and y.flags.c_contiguous
    np.testing.assert_allclose(_back(fmt, y), want, **_tol(dt))

    dy = rng.standard_normal(want.shape)
    want_dx, want_df = ref_conv_grads(x, f, dy, case)
    sizes = np.array(_to(fmt, x).shape, np.int32)
    dx = kc.conv2d_backprop_input(sizes, f.astype(dt), _to(fmt, dy).astype(dt), **attrs)
    np.testing.assert_allclose(_back(fmt, dx), want_dx, **_tol(dt))
    df = kc.conv2d_backprop_filter(_to(fmt, x).astype(dt), np.array(f.shape, np.int32),
                                   _to(fmt, dy).astype(dt), **attrs)
    assert df.dtype == dt
    np.testing.assert_allclose(df, want_df, **_tol(dt))


@pytest.mark.parametrize("seed", range(32))
def test_pool_kernels_match_reference(seed):
    case = draw_case(seed, pool=True)
    rng, dt, fmt = case["rng"], case["dtype"], case["format"]
    x = rng.standard_normal(case["shape"])
    if seed % 5 == 0:  # ties: the gradient goes to the first maximum
        x = np.round(x)
    attrs = _attrs(case, pool=True)
    xf = _to(fmt, x).astype(dt)
    for kind, fwd in (("max", kc.max_pool), ("avg", kc.avg_pool)):
        want = ref_pool(x, case["k"], case, kind)
        y = fwd(xf, **attrs)
        np.testing.assert_allclose(_back(fmt, y), want, **_tol(dt))
        dy = rng.standard_normal(want.shape)
        want_dx = ref_pool(x, case["k"], case, kind, dy)
        if kind == "max":
            dx = kc.max_pool_grad(xf, y, _to(fmt, dy).astype(dt), **attrs)
            # MaxPoolGradGrad reads the x-shaped gradient at each window's maximum.
            ddx = rng.standard_normal(x.shape)
            gg = kc.max_pool_grad_grad(xf, y, _to(fmt, ddx).astype(dt), **attrs)
            np.testing.assert_allclose(np.sum(_back(fmt, gg) * dy),
                                       np.sum(want_dx * ddx), rtol=1e-4)
        else:
            dx = kc.avg_pool_grad(np.array(xf.shape, np.int32), _to(fmt, dy).astype(dt),
                                  **attrs)
        np.testing.assert_allclose(_back(fmt, dx), want_dx, **_tol(dt))


@pytest.mark.parametrize("seed", [1, 2, 6, 7])
def test_kernels_split_across_threads_match_reference(seed, monkeypatch):
    """Tiny grains, one chunk: im2col, col2im (split at image boundaries), the zero
    fills and the pools run in parts on two kernel threads."""
    from flowgraph.backends.cpu import kernel_pool

    monkeypatch.setattr(kernel_pool, "threads", lambda: 2)
    for family in ("gather", "reduce"):
        monkeypatch.setitem(kernel_pool.GRAIN, family, 8)
    monkeypatch.setattr(kc, "_CHUNK_BYTES", 1 << 20)  # one chunk, split at an image boundary
    case = draw_case(seed)
    case["shape"] = (7, *case["shape"][1:])
    rng, dt, fmt = case["rng"], np.float64, case["format"]
    kh, kw = case["k"]
    x = rng.standard_normal(case["shape"])
    f = rng.standard_normal((kh, kw, case["shape"][3], case["cout"]))
    attrs = _attrs(case)
    y = kc.conv2d(_to(fmt, x), f, **attrs)
    np.testing.assert_allclose(_back(fmt, y), ref_conv(x, f, case)[2], **_tol(dt))
    dy = rng.standard_normal(_back(fmt, y).shape)
    want_dx, want_df = ref_conv_grads(x, f, dy, case)
    dx = kc.conv2d_backprop_input(np.array(_to(fmt, x).shape), f, _to(fmt, dy), **attrs)
    np.testing.assert_allclose(_back(fmt, dx), want_dx, **_tol(dt))
    df = kc.conv2d_backprop_filter(_to(fmt, x), np.array(f.shape), _to(fmt, dy), **attrs)
    np.testing.assert_allclose(df, want_df, **_tol(dt))
    pool_case = {**draw_case(seed, pool=True), "shape": (7, 6, 5, 3), "format": fmt}
    xp = rng.standard_normal(pool_case["shape"])
    pattrs = _attrs(pool_case, pool=True)
    for kind, fwd in (("max", kc.max_pool), ("avg", kc.avg_pool)):
        yp = fwd(_to(fmt, xp), **pattrs)
        want = ref_pool(xp, pool_case["k"], pool_case, kind)
        np.testing.assert_allclose(_back(fmt, yp), want, **_tol(dt))
        g = rng.standard_normal(want.shape)
        got = kc.max_pool_grad(_to(fmt, xp), yp, _to(fmt, g), **pattrs) if kind == "max" \
            else kc.avg_pool_grad(np.array(_to(fmt, xp).shape), _to(fmt, g), **pattrs)
        np.testing.assert_allclose(_back(fmt, got), ref_pool(xp, pool_case["k"], pool_case,
                                                             kind, g), **_tol(dt))


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4, 5, 6, 7])
def test_chunks_on_threads_match_reference(seed, monkeypatch):
    """Many small chunks on two kernel threads, each thread claiming chunks with BLAS on
    one thread (`_on_threads`): Conv2D and Conv2DBackpropFilter chunks of rows,
    Conv2DBackpropInput whole images (one image falls back to one thread); dF's
    per-chunk partials add up in chunk order, so repeated runs agree bitwise."""
    from flowgraph.backends.cpu import kernel_pool
    from flowgraph.backends.cpu.blas_threads import blas_threads

    monkeypatch.setattr(kernel_pool, "threads", lambda: 2)
    used, blas_inside = [], []
    on_threads = kc._on_threads

    def spy(items, part):
        def watched(a, b):
            blas_inside.append(blas_threads())
            part(a, b)
        used.append(on_threads(items, watched))
        return used[-1]

    monkeypatch.setattr(kc, "_on_threads", spy)
    case = draw_case(seed)
    batch = 1 if seed == 7 else 4 + seed % 3
    case["shape"] = (batch, *case["shape"][1:])
    rng, dt, fmt = case["rng"], case["dtype"], case["format"]
    kh, kw = case["k"]
    chunk = 2 * kh * kw * case["shape"][3] * np.dtype(dt).itemsize  # two rows of columns
    monkeypatch.setattr(kc, "_CHUNK_BYTES", chunk)
    x = rng.standard_normal(case["shape"])
    f = rng.standard_normal((kh, kw, case["shape"][3], case["cout"]))
    attrs = _attrs(case)
    y = kc.conv2d(_to(fmt, x).astype(dt), f.astype(dt), **attrs)
    np.testing.assert_allclose(_back(fmt, y), ref_conv(x, f, case)[2], **_tol(dt))
    dy = rng.standard_normal(_back(fmt, y).shape)
    want_dx, want_df = ref_conv_grads(x, f, dy, case)
    dx = kc.conv2d_backprop_input(np.array(_to(fmt, x).shape), f.astype(dt),
                                  _to(fmt, dy).astype(dt), **attrs)
    np.testing.assert_allclose(_back(fmt, dx), want_dx, **_tol(dt))
    args = (_to(fmt, x).astype(dt), np.array(f.shape), _to(fmt, dy).astype(dt))
    df = kc.conv2d_backprop_filter(*args, **attrs)
    np.testing.assert_allclose(df, want_df, **_tol(dt))
    np.testing.assert_array_equal(kc.conv2d_backprop_filter(*args, **attrs), df)
    assert used[0] and used[2], "Conv2D and its filter gradient ran their chunks on threads"
    assert used[1] == (batch > 1)
    assert set(blas_inside) == {1}, "BLAS runs on one thread inside each thread's chunks"


@pytest.mark.parametrize("padding", ["VALID", "SAME"])
@pytest.mark.parametrize("k,stride,side", [(2, 2, 6), (2, 2, 7), (3, 3, 7), (2, 1, 6),
                                           (3, 2, 7)])
def test_max_pool_route_writes_every_element(k, stride, side, padding):
    """`_conv.max_pool_route` writes all of `dst`, whether the windows tile the input
    (stride = window: each element stored once, nothing zeroed first) or not (zeroed,
    then added into); `dst` starts full of NaN, as a recycled buffer may."""
    from flowgraph.backends.cpu import _conv

    rng = np.random.default_rng(k * 10 + stride + side)
    case = {"k": (k, k), "strides": (stride, stride), "padding": padding,
            "format": "NHWC", "shape": (2, side, side + stride, 3)}
    x = rng.standard_normal(case["shape"])
    geo = kc._pool_geometry("MaxPoolGrad", x, [1, k, k, 1], [1, stride, stride, 1],
                            padding, "NHWC")
    dy = rng.standard_normal((2, geo[8], geo[9], 3))
    dx = np.full_like(x, np.nan)
    _conv.max_pool_route(x, dy, dx, geo, False)
    np.testing.assert_allclose(dx, ref_pool(x, (k, k), case, "max", dy), **_tol(x.dtype))
    ddx = rng.standard_normal(x.shape)
    gg = np.full_like(dy, np.nan)
    _conv.max_pool_route(x, ddx, gg, geo, True)
    want = np.sum(ref_pool(x, (k, k), case, "max", dy) * ddx)
    np.testing.assert_allclose(np.sum(gg * dy), want, rtol=1e-10)


# -- through the public API ---------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 5, 10, 15])
def test_conv2d_api_gradients_match_finite_differences(seed):
    case = draw_case(seed)
    case["dtype"] = np.float64
    rng, fmt = case["rng"], case["format"]
    kh, kw = case["k"]
    x0 = _to(fmt, rng.standard_normal(case["shape"]))
    f0 = rng.standard_normal((kh, kw, case["shape"][3], case["cout"]))
    attrs = _attrs(case)
    pad = case["padding"]
    if pad == "EXPLICIT":
        pad = np.reshape(attrs["explicit_paddings"], (4, 2)).tolist()
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, x0.shape)
        f = tf.placeholder(tf.float64, f0.shape)
        y = tf.nn.conv2d(x, f, strides=attrs["strides"], padding=pad,
                         dilations=attrs["dilations"], data_format=fmt)
        w = rng.standard_normal(y.shape.as_list())
        loss = tf.reduce_sum(y * w)
        gx, gf = tf.gradients(loss, [x, f])
        with tf.Session() as sess:
            yv, gxv, gfv = sess.run([y, gx, gf], {x: x0, f: f0})

            def value(xv, fv):
                return sess.run(loss, {x: xv, f: fv})

            for grad, base, name in ((gxv, x0, "x"), (gfv, f0, "f")):
                d = rng.standard_normal(base.shape)
                eps = 1e-5
                plus = value(base + eps * d, f0) if name == "x" else value(x0, f0 + eps * d)
                minus = value(base - eps * d, f0) if name == "x" else value(x0, f0 - eps * d)
                np.testing.assert_allclose((plus - minus) / (2 * eps), np.sum(grad * d),
                                           rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(_back(fmt, yv), ref_conv(_back(fmt, x0), f0, case)[2],
                               rtol=1e-10, atol=1e-10)


def test_pool_api_gradients_through_session():
    rng = np.random.default_rng(3)
    x0 = rng.standard_normal((2, 7, 6, 3))
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, x0.shape)
        outs = [tf.nn.max_pool(x, [1, 3, 2, 1], [1, 2, 2, 1], "SAME"),
                tf.nn.avg_pool(x, [1, 3, 2, 1], [1, 2, 2, 1], "SAME")]
        dys = [rng.standard_normal(o.shape.as_list()) for o in outs]
        grads = [tf.gradients(o, x, grad_ys=tf.constant(d))[0] for o, d in zip(outs, dys)]
        with tf.Session() as sess:
            got = sess.run(grads, {x: x0})
    case = {"strides": (2, 2), "padding": "SAME", "shape": x0.shape}
    for kind, g, dy in zip(("max", "avg"), got, dys):
        np.testing.assert_allclose(g, ref_pool(x0, (3, 2), case, kind, dy), rtol=1e-12)


# -- dtypes, layouts, edge cases ----------------------------------------------------------
def test_float16_and_integer_inputs_are_computed_wide():
    rng = np.random.default_rng(1)
    x = rng.integers(-3, 4, (2, 5, 4, 3))
    f = rng.integers(-2, 3, (2, 2, 3, 2))
    case = {"strides": (1, 1), "dilations": (1, 1), "padding": "SAME", "shape": x.shape}
    want = ref_conv(x.astype(np.float64), f.astype(np.float64), case)[2]
    attrs = {"strides": [1, 1, 1, 1], "padding": "SAME"}
    got = kc.conv2d(x.astype(np.int32), f.astype(np.int32), **attrs)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, want)
    half = kc.conv2d(x.astype(np.float16), f.astype(np.float16), **attrs)
    assert half.dtype == np.float16
    np.testing.assert_allclose(half, want, rtol=1e-3)
    pooled = kc.max_pool(x.astype(np.uint8), ksize=[1, 2, 2, 1], strides=[1, 1, 1, 1],
                         padding="VALID")
    assert pooled.dtype == np.uint8
    np.testing.assert_array_equal(pooled, ref_pool(x.astype(np.uint8).astype(float), (2, 2),
                                                   {"strides": (1, 1), "padding": "VALID"},
                                                   "max"))


def test_strided_and_byteswapped_inputs():
    rng = np.random.default_rng(2)
    big = rng.standard_normal((3, 9, 8, 6)).astype(np.float32)
    x = big[::2, 1::2, ::-1, 1:4]  # no unit strides, one negative
    f = rng.standard_normal((3, 2, 3, 4)).astype(np.float32)
    attrs = {"strides": [1, 1, 2, 1], "padding": "SAME"}
    case = {"strides": (1, 2), "dilations": (1, 1), "padding": "SAME", "shape": x.shape}
    want = ref_conv(x.astype(np.float64), f.astype(np.float64), case)[2]
    np.testing.assert_allclose(kc.conv2d(x, f, **attrs), want, rtol=1e-4, atol=1e-4)
    swapped = x.astype(x.dtype.newbyteorder(">"))
    np.testing.assert_allclose(kc.conv2d(swapped, f, **attrs), want, rtol=1e-4, atol=1e-4)
    unaligned = np.zeros(x.nbytes + 1, np.uint8)[1:].view(np.float32).reshape(x.shape)
    unaligned[...] = x
    assert not unaligned.flags.aligned
    np.testing.assert_allclose(kc.conv2d(unaligned, f, **attrs), want, rtol=1e-4, atol=1e-4)
    pool = {"ksize": [1, 2, 2, 1], "strides": [1, 1, 1, 1], "padding": "SAME"}
    y = kc.max_pool(x, **pool)
    np.testing.assert_array_equal(kc.max_pool(unaligned, **pool), y)
    np.testing.assert_array_equal(kc.max_pool_grad(unaligned, y, y, **pool),
                                  kc.max_pool_grad(np.ascontiguousarray(x), y, y, **pool))


def test_nan_propagates_through_max_pool_and_takes_its_gradient():
    x = np.array([[1.0, np.nan], [3.0, 2.0]]).reshape(1, 2, 2, 1)
    attrs = {"ksize": [1, 2, 2, 1], "strides": [1, 1, 1, 1], "padding": "VALID"}
    y = kc.max_pool(x, **attrs)
    assert np.isnan(y).all()
    dx = kc.max_pool_grad(x, y, np.ones_like(y), **attrs)
    np.testing.assert_array_equal(dx.reshape(-1), [0, 1, 0, 0])


def test_one_by_one_and_empty_batches():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 3, 4, 5))
    f = rng.standard_normal((1, 1, 5, 2))
    attrs = {"strides": [1, 1, 1, 1], "padding": "VALID"}
    np.testing.assert_allclose(kc.conv2d(x, f, **attrs), x @ f[0, 0])
    dy = rng.standard_normal((2, 3, 4, 2))
    np.testing.assert_allclose(kc.conv2d_backprop_input(np.array(x.shape), f, dy, **attrs),
                               dy @ f[0, 0].T)
    np.testing.assert_allclose(
        kc.conv2d_backprop_filter(x, np.array(f.shape), dy, **attrs)[0, 0],
        x.reshape(-1, 5).T @ dy.reshape(-1, 2))
    empty = np.zeros((0, 3, 4, 5))
    assert kc.conv2d(empty, f, **attrs).shape == (0, 3, 4, 2)
    df = kc.conv2d_backprop_filter(empty, np.array([2, 2, 5, 2]), np.zeros((0, 2, 3, 2)),
                                   **attrs)
    np.testing.assert_array_equal(df, np.zeros((2, 2, 5, 2)))
    pool = {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "SAME"}
    for shape in ((2, 4, 4, 0), (0, 4, 4, 3)):
        x = np.zeros(shape, np.float32)
        y = kc.max_pool(x, **pool)
        assert y.shape == (shape[0], 2, 2, shape[3])
        assert kc.max_pool_grad(x, y, y, **pool).shape == shape
        assert kc.max_pool_grad_grad(x, y, x, **pool).shape == y.shape
        assert kc.avg_pool_grad(np.array(shape), y, **pool).shape == shape


def test_errors_name_the_op_and_the_shapes():
    x = np.zeros((1, 5, 4, 2), np.float32)
    with pytest.raises(InvalidArgumentError, match=r"Conv2D.*\(1, 5, 4, 2\).*\(3, 2, 3, 2\)"):
        kc.conv2d(x, np.zeros((3, 2, 3, 2), np.float32), strides=[1, 1, 1, 1],
                  padding="VALID")
    with pytest.raises(InvalidArgumentError, match=r"Conv2D: window of 6x1.*does not fit"):
        kc.conv2d(x, np.zeros((6, 1, 2, 2), np.float32), strides=[1, 1, 1, 1],
                  padding="VALID")
    with pytest.raises(InvalidArgumentError,
                       match=r"Conv2DBackpropInput: out_backprop has shape \[1, 4, 4, 2\]"):
        kc.conv2d_backprop_input(np.array([1, 5, 4, 2]), np.zeros((3, 1, 2, 2), np.float32),
                                 np.zeros((1, 4, 4, 2), np.float32), strides=[1, 1, 1, 1],
                                 padding="VALID")
    with pytest.raises(InvalidArgumentError, match=r"Conv2DBackpropFilter.*filter sizes"):
        kc.conv2d_backprop_filter(x, np.array([1, 1, 3, 2]), np.zeros((1, 5, 4, 2)),
                                  strides=[1, 1, 1, 1], padding="VALID")
    with pytest.raises(InvalidArgumentError, match="MaxPool: pooling over the batch or depth"):
        kc.max_pool(x, ksize=[1, 2, 2, 2], strides=[1, 1, 1, 1], padding="VALID")
    with pytest.raises(InvalidArgumentError, match=r"MaxPoolGrad: gradient of shape \[1, 5"):
        kc.max_pool_grad(x, x, x, ksize=[1, 2, 2, 1], strides=[1, 1, 1, 1], padding="VALID")


def test_conv_kernels_are_registered_from_kernels_conv():
    from flowgraph.backends.cpu import backend

    for op in ("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter", "MaxPool",
               "AvgPool", "MaxPoolGrad", "AvgPoolGrad", "MaxPoolGradGrad"):
        defs = backend.kernels()[op]
        assert [k.fn.__module__ for k in defs] == [kc.__name__], op
