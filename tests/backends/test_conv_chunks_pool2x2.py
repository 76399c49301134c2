"""How the CPU convolutions spread their chunks over the kernel threads, and the
dedicated 2x2/stride-2 max pool (`flowgraph/backends/cpu/_pool2x2.pyx`).

The chunked kernels must give the same bits on any number of threads and whichever
thread claimed which chunk; the dedicated pool must give the bits of the general
kernels in `_conv.pyx` (ties, NaN, odd sizes, a ``-0.0`` gradient included) and be
chosen only where every window lies inside the input. Values are checked against NumPy
references in `test_conv_kernels.py`; here each result is compared with another path
of flowgraph's own, bit for bit, plus a finite-difference check through the public API.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.backends.cpu import _conv, _pool2x2, kernel_pool
from flowgraph.backends.cpu import kernels_conv as kc
from flowgraph.backends.cpu.blas_threads import blas_threads, intra_op_limited


# -- chunks on the kernel threads ---------------------------------------------------------
def test_on_threads_runs_every_item_once_with_blas_on_one_thread(monkeypatch):
    monkeypatch.setattr(kernel_pool, "threads", lambda: 2)
    seen, blas = [], set()
    lock = threading.Lock()

    def part(a, b):
        with lock:
            seen.extend(range(a, b))
            blas.add(blas_threads())

    assert kc._on_threads(37, part)
    assert sorted(seen) == list(range(37))
    assert blas == {1}


def test_on_threads_declines_one_item_or_one_thread(monkeypatch):
    def fail(a, b):
        pytest.fail("ran on the kernel threads")

    monkeypatch.setattr(kernel_pool, "threads", lambda: 2)
    assert not kc._on_threads(1, fail)
    monkeypatch.setattr(kernel_pool, "threads", lambda: 1)
    assert not kc._on_threads(8, fail)


def test_on_threads_by_default_even_while_blas_is_multi_threaded(monkeypatch):
    """Chunks go to the kernel threads at OpenBLAS's default spin timeout too: the
    products inside run on one BLAS thread, so BLAS's own workers fall asleep."""
    monkeypatch.setattr(kernel_pool, "threads", lambda: 2)
    for name in ("OPENBLAS_THREAD_TIMEOUT", "GOTO_THREAD_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)
    ran = []
    assert kc._on_threads(4, lambda a, b: ran.append(a))
    assert sorted(ran) == [0, 1, 2, 3]


def test_a_slow_thread_claims_fewer_items(monkeypatch):
    """Items are claimed one at a time: while one thread is held up on its first item,
    the other runs the rest (a static half-and-half split would wait for it)."""
    monkeypatch.setattr(kernel_pool, "threads", lambda: 2)
    who: dict[int, list[int]] = {}
    release = threading.Event()
    lock = threading.Lock()

    def part(a, b):
        me = threading.get_ident()
        with lock:
            first = not who
            who.setdefault(me, []).append(a)
        if first:  # the first item waits until every other item is done
            release.wait(5)
        elif a == 11:
            release.set()

    assert kc._on_threads(12, part)
    counts = sorted(len(v) for v in who.values())
    if len(counts) == 2:  # the pool's worker took part (it may be busy elsewhere)
        assert counts == [1, 11]
    assert sum(counts) == 12


def _conv_case(seed):
    rng = np.random.default_rng(seed)
    padding = ("SAME", "VALID", "EXPLICIT")[seed % 3]
    fmt = "NCHW" if seed % 4 == 3 else "NHWC"
    dt = np.float32 if seed % 2 else np.float64
    n, h, w, c, co = 5, 9 + seed % 3, 7, 3, 4
    s = (1 + seed % 2, 1)
    attrs = {"strides": [1, 1, *s] if fmt == "NCHW" else [1, *s, 1], "padding": padding,
             "data_format": fmt,
             "explicit_paddings": [0, 0, 0, 0, 1, 2, 0, 1] if padding == "EXPLICIT" and
             fmt == "NCHW" else [0, 0, 1, 2, 0, 1, 0, 0] if padding == "EXPLICIT" else []}
    x = rng.standard_normal((n, h, w, c)).astype(dt)
    if fmt == "NCHW":
        x = np.ascontiguousarray(x.transpose(0, 3, 1, 2))
    f = rng.standard_normal((3, 2, c, co)).astype(dt)
    return rng, x, f, attrs


def _three(x, f, dy, attrs):
    y = kc.conv2d(x, f, **attrs)
    dx = kc.conv2d_backprop_input(np.array(x.shape), f, dy, **attrs)
    df = kc.conv2d_backprop_filter(x, np.array(f.shape), dy, **attrs)
    return y, dx, df


@pytest.mark.parametrize("seed", range(8))
def test_chunked_kernels_give_the_same_bits_on_one_or_two_threads(seed, monkeypatch):
    """Tiny chunks (a few output rows, chunk boundaries inside images): Conv2D and its
    filter gradient claim row chunks, the input gradient whole images; dF adds one
    partial per chunk in chunk order. One thread (chunks in turn) and two threads
    (chunks claimed as threads come free) agree bit for bit, run after run. (BLAS on
    two threads may round a product differently from BLAS on one, so the one-thread
    run holds BLAS to one thread too, as the kernel threads do.)"""
    rng, x, f, attrs = _conv_case(seed)
    monkeypatch.setattr(kc, "_CHUNK_BYTES", 3 * 3 * 2 * x.shape[-1] * x.itemsize)
    y = kc.conv2d(x, f, **attrs)
    dy = rng.standard_normal(y.shape).astype(x.dtype)
    with intra_op_limited(1):  # the products inside the threads run on one BLAS thread
        one = _three(x, f, dy, attrs)
    monkeypatch.setattr(kernel_pool, "threads", lambda: 2)
    used = []
    on_threads = kc._on_threads
    monkeypatch.setattr(kc, "_on_threads", lambda n, p: used.append(on_threads(n, p)) or
                        used[-1])
    for _ in range(3):
        two = _three(x, f, dy, attrs)
        for a, b in zip(one, two):
            assert a.dtype == b.dtype == x.dtype
            np.testing.assert_array_equal(a, b)
    assert all(used), "every kernel ran its chunks on the two threads"


def test_chunk_claims_are_spread_when_a_core_is_shared(monkeypatch):
    """With a competing busy thread holding the GIL-free core now and then, the
    kernels still return the one-thread bits (no chunk lost or run twice)."""
    rng, x, f, attrs = _conv_case(0)
    monkeypatch.setattr(kc, "_CHUNK_BYTES", 2 * 3 * 2 * x.shape[-1] * x.itemsize)
    dy = rng.standard_normal(kc.conv2d(x, f, **attrs).shape)
    with intra_op_limited(1):
        want = _three(x, f, dy, attrs)
    monkeypatch.setattr(kernel_pool, "threads", lambda: 2)
    stop = threading.Event()

    def busy():
        a = np.ones((200, 200))
        while not stop.is_set():
            a @ a
            time.sleep(0)

    t = threading.Thread(target=busy, daemon=True)
    t.start()
    try:
        for _ in range(5):
            for a, b in zip(want, _three(x, f, dy, attrs)):
                np.testing.assert_array_equal(a, b)
    finally:
        stop.set()
        t.join()


# -- the 2x2, stride-2 max pool -----------------------------------------------------------
def _geo(shape, padding="VALID"):
    return kc.window_geometry("MaxPool", shape[1], shape[2], 2, 2, [1, 2, 2, 1],
                              [1, 1, 1, 1], padding, (), "NHWC")


def _awkward(rng, shape, dt):
    """Random values with ties, NaNs (one window all NaN) and signed zeros."""
    x = rng.standard_normal(shape).astype(dt)
    flat = x.reshape(-1)
    flat[: flat.size // 3] = np.round(flat[: flat.size // 3])  # many ties
    flat[rng.integers(0, flat.size, 5)] = np.nan
    x[0, :2, :2, 0] = np.nan
    if shape[1] >= 4:
        x[0, 2:4, :2, 0] = [[-0.0, 0.0], [0.0, -0.0]]
    return x


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(3, 6, 8, 5), (2, 7, 9, 3), (2, 5, 4, 70), (1, 2, 2, 1),
                                   (2, 4, 6, 130), (1, 3, 3, 2)])
def test_pool2x2_matches_the_general_kernels_bitwise(shape, dt):
    rng = np.random.default_rng(sum(shape))
    x = _awkward(rng, shape, dt)
    n, h, w, c = shape
    out, want = np.empty((n, h // 2, w // 2, c), dt), np.empty((n, h // 2, w // 2, c), dt)
    _pool2x2.max_pool_2x2(x, out)
    _conv.pool(x, want, _geo(shape), False)
    assert out.tobytes() == want.tobytes()
    dy = rng.standard_normal(out.shape).astype(dt)
    dy.reshape(-1)[:3] = [-0.0, np.nan, 0.0][:dy.size]
    dx, want_dx = np.full(shape, 7, dt), np.full(shape, 7, dt)  # stale buffer contents
    _pool2x2.max_pool_2x2_grad(x, dy, dx)
    _conv.max_pool_route(x, dy, want_dx, _geo(shape), False)
    assert dx.tobytes() == want_dx.tobytes()


def test_pool2x2_rejects_what_it_cannot_read():
    x = np.zeros((1, 4, 4, 2), np.float32)
    with pytest.raises(ValueError, match="out must be C-contiguous"):
        _pool2x2.max_pool_2x2(x, np.zeros((1, 3, 2, 2), np.float32))
    with pytest.raises(ValueError, match="is float32 but out is float64"):
        _pool2x2.max_pool_2x2(x, np.zeros((1, 2, 2, 2), np.float64))
    with pytest.raises(ValueError, match="x must be C-contiguous"):
        _pool2x2.max_pool_2x2(x[:, :, ::2], np.zeros((1, 2, 1, 2), np.float32))
    with pytest.raises(ValueError, match="dy must be"):
        _pool2x2.max_pool_2x2_grad(x, np.zeros((1, 2, 3, 2), np.float32), np.zeros_like(x))


@pytest.mark.parametrize("padding,side,fmt,dedicated", [
    ("VALID", 8, "NHWC", True), ("VALID", 7, "NHWC", True), ("SAME", 8, "NHWC", True),
    ("SAME", 7, "NHWC", False), ("VALID", 8, "NCHW", False)])
def test_max_pool_kernels_take_the_dedicated_loop_where_it_applies(
        padding, side, fmt, dedicated, monkeypatch):
    """SAME on an odd size has partial windows and NCHW is not contiguous NHWC: those
    stay on the general kernels. Either way the results are the general kernels' bits."""
    calls = []
    for name in ("max_pool_2x2", "max_pool_2x2_grad"):
        real = getattr(_pool2x2, name)
        monkeypatch.setattr(_pool2x2, name, lambda *a, _r=real, _n=name: (
            calls.append(_n), _r(*a))[1])
    rng = np.random.default_rng(side)
    x = _awkward(rng, (3, side, side + 2, 4), np.float32)
    if fmt == "NCHW":
        x = np.ascontiguousarray(x.transpose(0, 3, 1, 2))
    win = [1, 1, 2, 2] if fmt == "NCHW" else [1, 2, 2, 1]
    attrs = {"ksize": win, "strides": win, "padding": padding, "data_format": fmt}
    y = kc.max_pool(x, **attrs)
    dy = rng.standard_normal(y.shape).astype(np.float32)
    dx = kc.max_pool_grad(x, y, dy, **attrs)
    assert calls == (["max_pool_2x2", "max_pool_2x2_grad"] if dedicated else [])
    xs = x.transpose(0, 2, 3, 1) if fmt == "NCHW" else x
    geo = kc.window_geometry("MaxPool", xs.shape[1], xs.shape[2], 2, 2, [1, 2, 2, 1],
                             [1, 1, 1, 1], padding, (), "NHWC")
    want = np.empty((xs.shape[0], geo[8], geo[9], xs.shape[3]), np.float32)
    _conv.pool(np.ascontiguousarray(xs), want, geo, False)
    got = y.transpose(0, 2, 3, 1) if fmt == "NCHW" else y
    assert np.ascontiguousarray(got).tobytes() == want.tobytes()
    want_dx = np.empty(xs.shape, np.float32)
    dyn = np.ascontiguousarray(dy.transpose(0, 2, 3, 1) if fmt == "NCHW" else dy)
    _conv.max_pool_route(np.ascontiguousarray(xs), dyn, want_dx, geo, False)
    got_dx = dx.transpose(0, 2, 3, 1) if fmt == "NCHW" else dx
    assert np.ascontiguousarray(got_dx).tobytes() == want_dx.tobytes()


def test_pool2x2_split_across_threads_is_the_one_thread_result(monkeypatch):
    rng = np.random.default_rng(5)
    x = _awkward(rng, (9, 6, 10, 16), np.float32)
    attrs = {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "VALID"}
    dy = rng.standard_normal((9, 3, 5, 16)).astype(np.float32)
    monkeypatch.setattr(kernel_pool, "threads", lambda: 1)
    want = kc.max_pool(x, **attrs), kc.max_pool_grad(x, None, dy, **attrs)
    monkeypatch.setattr(kernel_pool, "threads", lambda: 2)
    monkeypatch.setitem(kernel_pool.GRAIN, "reduce", 64)
    got = kc.max_pool(x, **attrs), kc.max_pool_grad(x, None, dy, **attrs)
    for a, b in zip(want, got):
        assert a.tobytes() == b.tobytes()


def test_max_pool_2x2_gradient_matches_finite_differences():
    """`tf.nn.max_pool` 2x2/2 (odd width: a column in no window) through a session:
    the analytic gradient along a random direction against central differences."""
    rng = np.random.default_rng(11)
    x0 = rng.permutation(2 * 6 * 7 * 3).reshape(2, 6, 7, 3) / 10.0  # distinct: no ties
    d = rng.standard_normal(x0.shape)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, x0.shape)
        y = tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
        w = tf.constant(rng.standard_normal((2, 3, 3, 3)))
        loss = tf.reduce_sum(y * w)
        (g,) = tf.gradients(loss, [x])
        with tf.Session() as sess:
            grad = sess.run(g, {x: x0})
            eps = 1e-4
            plus = sess.run(loss, {x: x0 + eps * d})
            minus = sess.run(loss, {x: x0 - eps * d})
    np.testing.assert_allclose((plus - minus) / (2 * eps), np.sum(grad * d), rtol=1e-8)
    assert np.all(grad[:, :, 6, :] == 0)  # the last column is in no window


def test_overlapping_kernels_restore_blas_threads():
    """Conv kernels on two threads at once, their BLAS limits overlapping: when both are
    done, BLAS has the thread count it had before, not the one-thread limit that one
    kernel set and the other found."""
    before = blas_threads()
    if before < 2:
        pytest.skip("BLAS runs on one thread here")
    rng = np.random.default_rng(2)
    x = rng.standard_normal((16, 12, 12, 8)).astype(np.float32)
    f = rng.standard_normal((3, 3, 8, 8)).astype(np.float32)
    start = threading.Barrier(2)
    errors = []

    def run():
        try:
            start.wait(5)
            for _ in range(10):
                kc.conv2d(x, f, strides=[1, 1, 1, 1], padding="SAME")
        except BaseException as e:  # reported below
            errors.append(e)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(kernel_pool, "threads", lambda: 2)
        mp.setattr(kc, "_CHUNK_BYTES", 8 * 9 * 8 * 4)
        threads = [threading.Thread(target=run) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors
    assert blas_threads() == before
