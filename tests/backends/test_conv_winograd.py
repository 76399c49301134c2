"""Winograd F(2x2, 3x3) convolutions (`flowgraph/backends/cpu/_conv_winograd.pyx`, driven
by `kernels_conv._winograd` and `_winograd_filter_grad`): 3x3, stride-1, undilated
windows with 8 or more channels in and out.

Conv2D, Conv2DBackpropInput and Conv2DBackpropFilter on that path are checked against
the per-tap einsum references of `test_conv_kernels.py` (which share nothing with the
tile transforms) over VALID, SAME and explicit padding, odd and even sizes, NHWC and
NCHW, both dtypes and batch 1; the chunks give the same bits on one or two kernel
threads; what the path does not cover (strides, dilations, other windows, few channels,
an input gradient with more than 2 rows of padding) stays on im2col; and the public
API's gradients agree with finite differences.
"""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.backends.cpu import _conv_winograd, kernel_pool
from flowgraph.backends.cpu import kernels_conv as kc
from flowgraph.backends.cpu.blas_threads import intra_op_limited
from tests.backends.test_conv_kernels import _attrs, _back, _to, _tol, ref_conv, ref_conv_grads


def _case(seed):
    rng = np.random.default_rng(100 + seed)
    padding = ("VALID", "SAME", "EXPLICIT")[seed % 3]
    return {"seed": seed, "k": (3, 3), "strides": (1, 1), "dilations": (1, 1),
            "padding": padding,
            "explicit": tuple(int(v) for v in rng.integers(0, 3, size=4)),
            "shape": (1 + seed % 3, 3 + int(rng.integers(0, 8)), 3 + int(rng.integers(0, 8)),
                      8 + int(rng.integers(0, 9))),
            "cout": 8 + int(rng.integers(0, 9)),
            "format": "NCHW" if seed % 4 == 3 else "NHWC",
            "dtype": np.float32 if seed % 2 else np.float64, "rng": rng}


def _three(case, x, f, dy):
    fmt, dt = case["format"], case["dtype"]
    attrs = _attrs(case)
    y = kc.conv2d(_to(fmt, x).astype(dt), f.astype(dt), **attrs)
    dx = kc.conv2d_backprop_input(np.array(_to(fmt, x).shape), f.astype(dt),
                                  _to(fmt, dy).astype(dt), **attrs)
    df = kc.conv2d_backprop_filter(_to(fmt, x).astype(dt), np.array(f.shape),
                                   _to(fmt, dy).astype(dt), **attrs)
    return y, dx, df


def _spy(monkeypatch):
    """Count the calls of each tile transform."""
    calls = {"input_tiles": 0, "output_tiles": 0, "gradient_tiles": 0}
    for name in calls:
        real = getattr(_conv_winograd, name)

        def spy(*args, _real=real, _name=name):
            calls[_name] += 1
            return _real(*args)

        monkeypatch.setattr(_conv_winograd, name, spy)
    return calls


@pytest.mark.parametrize("seed", range(24))
def test_winograd_kernels_match_reference(seed, monkeypatch):
    case = _case(seed)
    if seed % 4 == 1:  # tiny chunks: many chunks, a chunk boundary inside a tile row
        monkeypatch.setattr(kc, "_WINOGRAD_BYTES", 16 * 3 * 40 * 8)
    calls = _spy(monkeypatch)
    rng = case["rng"]
    x = rng.standard_normal(case["shape"])
    f = rng.standard_normal((3, 3, case["shape"][3], case["cout"]))
    _, _, want = ref_conv(x, f, case)
    dy = rng.standard_normal(want.shape)
    want_dx, want_df = ref_conv_grads(x, f, dy, case)
    y, dx, df = _three(case, x, f, dy)
    fmt, dt = case["format"], case["dtype"]
    assert y.dtype == dx.dtype == df.dtype == dt
    np.testing.assert_allclose(_back(fmt, y), want, **_tol(dt))
    np.testing.assert_allclose(_back(fmt, dx), want_dx, **_tol(dt))
    np.testing.assert_allclose(df, want_df, **_tol(dt))
    pads = case["explicit"] if case["padding"] == "EXPLICIT" else (0, 0, 0, 0)
    assert calls["gradient_tiles"] > 0 and calls["output_tiles"] > 0
    assert calls["input_tiles"] == calls["output_tiles"] + calls["gradient_tiles"]
    assert max(pads[0], pads[2]) <= 2  # so the input gradient took the tiles too


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 5])
def test_winograd_chunks_give_the_same_bits_on_one_or_two_threads(seed, monkeypatch):
    case = _case(seed)
    case["shape"] = (2, 7, 6, case["shape"][3])
    monkeypatch.setattr(kc, "_WINOGRAD_BYTES", 1)  # one tile per chunk
    rng = case["rng"]
    x = rng.standard_normal(case["shape"])
    f = rng.standard_normal((3, 3, case["shape"][3], case["cout"]))
    dy = rng.standard_normal(ref_conv(x, f, case)[2].shape)
    with intra_op_limited(1):
        one = _three(case, x, f, dy)
    monkeypatch.setattr(kernel_pool, "threads", lambda: 2)
    used = []
    on_threads = kc._on_threads
    monkeypatch.setattr(kc, "_on_threads", lambda n, p: used.append(on_threads(n, p)) or
                        used[-1])
    for _ in range(3):
        for a, b in zip(one, _three(case, x, f, dy)):
            assert a.tobytes() == b.tobytes()
    assert used and all(used)


@pytest.mark.parametrize("change", ["strides", "dilations", "window", "channels", "padding"])
def test_what_winograd_does_not_cover_stays_on_im2col(change, monkeypatch):
    case = _case(0)
    if change == "strides":
        case["strides"] = (1, 2)
    elif change == "dilations":
        case["dilations"] = (2, 1)
    elif change == "window":
        case["k"] = (3, 2)
    elif change == "channels":
        case["shape"] = (*case["shape"][:3], 7)
    else:  # 3 rows of explicit padding: only the input gradient leaves the tiles
        case["padding"], case["explicit"] = "EXPLICIT", (3, 0, 1, 1)
    case["shape"] = (2, 9, 8, case["shape"][3])
    calls = _spy(monkeypatch)
    rng = case["rng"]
    x = rng.standard_normal(case["shape"])
    f = rng.standard_normal((*case["k"], case["shape"][3], case["cout"]))
    _, _, want = ref_conv(x, f, case)
    dy = rng.standard_normal(want.shape)
    want_dx, want_df = ref_conv_grads(x, f, dy, case)
    y, dx, df = _three(case, x, f, dy)
    for got, ref in ((y, want), (dx, want_dx), (df, want_df)):
        np.testing.assert_allclose(got, ref, **_tol(np.float64))
    if change == "padding":
        assert calls == {"input_tiles": 2, "output_tiles": 1, "gradient_tiles": 1}
    else:
        assert calls == {"input_tiles": 0, "output_tiles": 0, "gradient_tiles": 0}


def test_float32_error_stays_that_of_im2col(monkeypatch):
    """At the benchmark's size the tiles' float32 error, against float64, is within
    a small factor of the im2col products' (both ~1e-6 of the largest value)."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((4, 28, 28, 32))
    f = rng.standard_normal((3, 3, 32, 64)) * 0.05
    dy = rng.standard_normal((4, 28, 28, 64))
    case = {"format": "NHWC", "dtype": np.float32, "padding": "SAME", "strides": (1, 1),
            "dilations": (1, 1), "explicit": (0, 0, 0, 0), "shape": x.shape, "k": (3, 3)}
    want = (ref_conv(x, f, case)[2], *ref_conv_grads(x, f, dy, case))
    tiles = _three(case, x, f, dy)
    monkeypatch.setattr(kc, "_winograd_fits", lambda *a: False)
    im2col = _three(case, x, f, dy)
    for a, b, w in zip(tiles, im2col, want):
        scale = np.abs(w).max()
        assert np.abs(a - w).max() / scale < max(4 * np.abs(b - w).max() / scale, 1e-6)


def test_conv2d_api_gradients_on_tiles_match_finite_differences(monkeypatch):
    """`tf.nn.conv2d` with a 3x3 filter, 8 -> 9 channels, SAME, float64, through a
    session: the analytic gradients along a random direction against central
    differences (the tiles run: the transforms are spied on)."""
    calls = _spy(monkeypatch)
    rng = np.random.default_rng(3)
    x0, f0 = rng.standard_normal((2, 5, 7, 8)), rng.standard_normal((3, 3, 8, 9))
    dx_dir, df_dir = rng.standard_normal(x0.shape), rng.standard_normal(f0.shape)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, x0.shape)
        f = tf.placeholder(tf.float64, f0.shape)
        y = tf.nn.conv2d(x, f, strides=[1, 1, 1, 1], padding="SAME")
        loss = tf.reduce_sum(y * tf.constant(rng.standard_normal((2, 5, 7, 9))))
        gx, gf = tf.gradients(loss, [x, f])
        with tf.Session() as sess:
            grad_x, grad_f = sess.run([gx, gf], {x: x0, f: f0})
            eps = 1e-5
            plus = sess.run(loss, {x: x0 + eps * dx_dir, f: f0 + eps * df_dir})
            minus = sess.run(loss, {x: x0 - eps * dx_dir, f: f0 - eps * df_dir})
    want = np.sum(grad_x * dx_dir) + np.sum(grad_f * df_dir)
    np.testing.assert_allclose((plus - minus) / (2 * eps), want, rtol=1e-7)
    assert calls["output_tiles"] >= 2 and calls["gradient_tiles"] >= 1


def test_tile_transforms_reject_what_they_cannot_read():
    x = np.zeros((1, 4, 4, 8), np.float32)
    with pytest.raises(ValueError, match=r"v must be a \[16, tiles, 8\] stack"):
        _conv_winograd.input_tiles(x, np.zeros((16, 1, 4), np.float32), 0, (0, 0, 1, 1))
    with pytest.raises(ValueError, match="one dtype"):
        _conv_winograd.input_tiles(x, np.zeros((16, 1, 8)), 0, (0, 0, 1, 1))
    with pytest.raises(ValueError, match="packed channels"):
        _conv_winograd.input_tiles(x[:, :, :, ::2], np.zeros((16, 1, 4), np.float32), 0,
                                   (0, 0, 1, 1))
    with pytest.raises(ValueError, match=r"tiles 1\.\.3 of 2"):
        _conv_winograd.input_tiles(x, np.zeros((16, 2, 8), np.float32), 1, (0, 0, 1, 2))
    with pytest.raises(ValueError, match="do not cover"):
        _conv_winograd.output_tiles(np.zeros((16, 1, 8), np.float32), x, 0, (0, 0, 1, 1))
    with pytest.raises(ValueError, match="dy must be C-contiguous NHWC"):
        _conv_winograd.gradient_tiles(x[:, ::2], np.zeros((16, 1, 8), np.float32), 0,
                                      (0, 0, 1, 1))


@pytest.mark.parametrize("module", [_conv_winograd, kc])
def test_module_examples_run(module):
    import doctest

    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
