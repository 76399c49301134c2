"""Prepared launches (`flowgraph/backends/opencl/launches.py`): a repeated elementwise
call sets only its buffers, and must still compute the right thing when shapes, strides,
offsets or dtypes change between calls, from several threads, and through a Session."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.runtime.config import GraphOptions, RewriterConfig
from tests.backends.opencl_support import opencl_devices

opencl_devices()


@pytest.fixture
def rt():
    from flowgraph.backends.opencl import backend
    from flowgraph.backends.opencl._runtime import discover

    backend.ensure_loaded()
    return discover()[0]


def _call(op_type, *args, **attrs):
    """The OpenCL kernel of `op_type` called as the executor calls it."""
    from flowgraph.backends.opencl import backend

    return backend.find_kernel(op_type, tf.as_dtype(args[0].dtype)).fn(*args, **attrs)


def test_repeated_binary_call_reuses_its_launch_with_new_buffers(rt):
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((5, 7)).astype(np.float32) for _ in range(2))
    first = _call("Add", rt.to_device(a), rt.to_device(b))
    sig = ("Add", (5, 7), (28, 4), 0, np.dtype(np.float32), (5, 7), (28, 4), 0,
           np.dtype(np.float32))
    entry = rt.launches[sig]
    c, d = (rng.standard_normal((5, 7)).astype(np.float32) for _ in range(2))
    second = _call("Add", rt.to_device(c), rt.to_device(d))
    assert rt.launches[sig] is entry  # the fast path, not a new preparation
    np.testing.assert_array_equal(rt.read(first), a + b)
    np.testing.assert_array_equal(rt.read(second), c + d)


def test_alternating_shapes_views_and_dtypes_keep_their_own_scalars(rt):
    """Each signature owns its kernel object, so a launch never sees another shape's
    scalar arguments (sizes, strides, offsets)."""
    rng = np.random.default_rng(1)
    big = rng.standard_normal((6, 9)).astype(np.float32)
    row = rng.standard_normal(9).astype(np.float32)
    small = rng.standard_normal(3).astype(np.float32)
    wide = rng.standard_normal(40).astype(np.float64) if rt.has_fp64 else None
    dbig, drow, dsmall = rt.to_device(big), rt.to_device(row), rt.to_device(small)
    for _ in range(3):
        np.testing.assert_allclose(rt.read(_call("Mul", dbig, drow)), big * row, rtol=1e-6)
        np.testing.assert_allclose(rt.read(_call("Mul", dsmall, dsmall)), small * small,
                                   rtol=1e-6)
        view = dbig[2:5]  # an offset into the buffer
        np.testing.assert_allclose(rt.read(_call("Mul", view, drow)), big[2:5] * row,
                                   rtol=1e-6)
        np.testing.assert_allclose(rt.read(_call("Tanh", dbig)), np.tanh(big), rtol=1e-5)
        np.testing.assert_allclose(rt.read(_call("Tanh", dbig[1:])), np.tanh(big[1:]),
                                   rtol=1e-5)
        if wide is not None:
            dw = rt.to_device(wide)
            np.testing.assert_allclose(rt.read(_call("Mul", dw, dw)), wide * wide)


def test_cast_and_bias_add_fast_paths(rt):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 6)).astype(np.float32)
    b = rng.standard_normal(6).astype(np.float32)
    for _ in range(2):
        got = _call("Cast", rt.to_device(x), DstT=tf.int32)
        np.testing.assert_array_equal(rt.read(got), x.astype(np.int32))
        got = _call("BiasAdd", rt.to_device(x), rt.to_device(b))
        np.testing.assert_allclose(rt.read(got), x + b, rtol=1e-6)
    # a transposed (non-contiguous) value is copied first and never kept as a launch
    xt = rt.to_device(np.ascontiguousarray(x.T))
    view = xt.transpose()
    for _ in range(2):
        got = _call("BiasAdd", view, rt.to_device(b))
        np.testing.assert_allclose(rt.read(got), x + b, rtol=1e-6)


def test_threads_share_a_launch(rt):
    rng = np.random.default_rng(3)
    xs = [rng.standard_normal((33,)).astype(np.float32) for _ in range(8)]
    wrong = []

    def work(x):
        dx = rt.to_device(x)
        outs = [_call("Add", dx, dx) for _ in range(50)]
        for o in outs:
            if not np.array_equal(rt.read(o), x + x):
                wrong.append(1)

    threads = [threading.Thread(target=work, args=(x,)) for x in xs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not wrong


def test_unfused_chain_on_the_device_matches_numpy_every_step():
    """Through the public API: a chain of 40 binary ops on /gpu:0 with fusion off, run
    repeatedly with different feeds and batch sizes (each launch prepared once)."""
    rw = RewriterConfig(remapping=RewriterConfig.OFF,
                        arithmetic_optimization=RewriterConfig.OFF)
    config = tf.ConfigProto(graph_options=GraphOptions(rewrite_options=rw))
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 5])
        with tf.device("/gpu:0"):
            a = tf.identity(x) * 0.5
            y = a
            for i in range(40):
                y = (y + a) if i % 2 == 0 else (y * 0.25)
    rng = np.random.default_rng(4)
    with tf.Session(graph=graph, config=config) as sess:
        for rows in (3, 3, 7, 3):
            xs = rng.standard_normal((rows, 5)).astype(np.float32)
            want = a_np = xs * 0.5
            for i in range(40):
                want = (want + a_np) if i % 2 == 0 else (want * 0.25)
            np.testing.assert_allclose(sess.run(y, {x: xs}), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("form", ["panels", "direct", "tiled"])
def test_matmul_replays_its_launches_for_new_operands(monkeypatch, rt, form):
    """Each form of the product (CPU-type panels, GPU direct, GPU tiled with packing
    temporaries), forced, with transposes: a second call with new operands of the same
    layout repeats the kept launches (`launches.Replay`) and still matches NumPy."""
    from flowgraph.backends.opencl import gemm, kernels_nn
    from flowgraph.backends.opencl.launches import Replay

    monkeypatch.setattr(rt, "launches", {})
    monkeypatch.setattr(kernels_nn, "_cpu_shaped", lambda rt, dtype: form == "panels")
    tiled = next(iter(gemm.CANDIDATES))
    choice = {c: (tiled if form == "tiled" else gemm.DIRECT) for c, _, _ in gemm.SIZE_CLASSES}
    monkeypatch.setattr(rt, "gemm_choice", choice)
    rng = np.random.default_rng(5)
    for ta, tb in [(False, False), (True, False), (False, True), (True, True)]:
        for step in range(3):
            a = rng.standard_normal((19, 37) if ta else (37, 19)).astype(np.float32)
            b = rng.standard_normal((48, 19) if tb else (19, 48)).astype(np.float32)
            got = _call("MatMul", rt.to_device(a), rt.to_device(b), transpose_a=ta,
                        transpose_b=tb)
            want = (a.T if ta else a) @ (b.T if tb else b)
            np.testing.assert_allclose(rt.read(got), want, rtol=1e-4, atol=1e-4)
            kept = [v for k, v in rt.launches.items() if k[:3] == ("MatMul", ta, tb)]
            assert len(kept) == 1 and isinstance(kept[0], Replay), (form, ta, tb, step)


def test_matmul_of_one_array_with_itself_is_not_kept(rt):
    """Operands sharing a buffer have ambiguous roles: such a call is never kept."""
    x = rt.to_device(np.arange(12, dtype=np.float32).reshape(3, 4))
    for _ in range(2):
        got = _call("MatMul", x, x, transpose_b=True)
        host = np.arange(12, dtype=np.float32).reshape(3, 4)
        np.testing.assert_allclose(rt.read(got), host @ host.T)
    y = rt.to_device(np.ones((3, 4), np.float32))
    np.testing.assert_allclose(rt.read(_call("MatMul", x, y, transpose_b=True)),
                               host @ np.ones((4, 3), np.float32))


@pytest.mark.parametrize("op_type,axes,keep", [("Sum", (0,), False), ("Mean", (1,), True),
                                                ("Max", (0, 1), False), ("Sum", (0, 2), False)])
def test_reductions_replay_their_passes(rt, op_type, axes, keep):
    """One- and two-pass reductions (a long reduced run is split into chunks) repeated
    with new values; a view at an offset is its own signature."""
    rng = np.random.default_rng(6)
    shape = (3000, 5) if len(axes) == 1 else (40, 30) if axes == (0, 1) else (6, 5, 32)
    reference = {"Sum": np.sum, "Mean": np.mean, "Max": np.max}[op_type]
    for _ in range(3):
        x = rng.standard_normal(shape).astype(np.float32)
        for dx, hx in [(rt.to_device(x), x), (rt.to_device(x)[1:], x[1:])]:
            got = _call(op_type, dx, np.array(axes, np.int32), keep_dims=keep)
            np.testing.assert_allclose(rt.read(got), reference(hx, axis=axes, keepdims=keep),
                                       rtol=1e-4, atol=1e-4)


def test_adam_steps_on_the_device_match_the_cpu():
    """Dense Adam updates repeated from kept launches: five steps of a small model on
    /gpu:0 and on the CPU backend end with the same weights."""
    rng = np.random.default_rng(7)
    xs = rng.standard_normal((16, 8)).astype(np.float32)
    ys = rng.standard_normal((16, 3)).astype(np.float32)
    w0 = rng.standard_normal((8, 3)).astype(np.float32)
    result = {}
    for device in ("/gpu:0", "/cpu:0"):
        graph = tf.Graph()
        with graph.as_default():
            with tf.device(device):
                x = tf.constant(xs)
                w = tf.Variable(w0)
                loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - ys))
                train = tf.train.AdamOptimizer(0.05).minimize(loss)
            init = tf.global_variables_initializer()
        config = tf.ConfigProto(allow_soft_placement=True)
        with tf.Session(graph=graph, config=config) as sess:
            sess.run(init)
            for _ in range(5):
                sess.run(train)
            result[device] = sess.run(w)
    from flowgraph.backends.opencl._runtime import discover

    assert any(k[0] == "ApplyAdam" for k in discover()[0].launches)  # the kept path ran
    np.testing.assert_allclose(result["/gpu:0"], result["/cpu:0"], rtol=1e-5, atol=1e-6)


def test_fused_groups_repeat_their_launch_also_in_place(rt):
    """A fused group's kernel (and its in-place variant, which writes into input 0)
    called again with new inputs of the same layout repeats the kept launch."""
    from flowgraph.backends.opencl import kernels_fused
    from flowgraph.ops.op_util import make_op

    with tf.Graph().as_default():
        a, b = (tf.placeholder(tf.float32, [None]) for _ in range(2))
        mul = make_op("Mul", [a, b], {})
        relu = make_op("Relu", [mul.outputs[0]], {})
    kernel = kernels_fused.fused_kernel([mul, relu], [[("in", 0), ("in", 1)], [("op", 0)]],
                                        2, fallback=None)
    rng = np.random.default_rng(8)
    for step in range(3):
        x, y = (rng.standard_normal(50).astype(np.float32) for _ in range(2))
        dx, dy = rt.to_device(x), rt.to_device(y)
        np.testing.assert_array_equal(rt.read(kernel(dx, dy)), np.maximum(x * y, 0))
        dz = rt.empty((50,), np.float32)
        rt.queue.finish()
        dz.set(x)
        got = kernel.in_place(dz, dy)
        assert got is dz
        np.testing.assert_array_equal(rt.read(got), np.maximum(x * y, 0))
        if step:
            assert sum(isinstance(k[0], type(kernel)) for k in rt.launches) >= 2


def test_large_elementwise_keeps_the_vectorizable_form(rt):
    """At a million elements the kept launch is the form the device streams fastest: on a
    CPU-type device (PoCL) one element per work-item with no local size, which PoCL
    vectorizes across work-items; on a GPU four per work-item (``_vec``). The repeated
    call computes the same as the first."""
    n = 1 << 20
    rng = np.random.default_rng(5)
    x, y = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    dx, dy = rt.to_device(x), rt.to_device(y)
    first = _call("Add", dx, dy).get()
    again = _call("Add", dx, dy).get()
    np.testing.assert_array_equal(first, x + y)
    np.testing.assert_array_equal(again, x + y)
    entry = rt.launches[("Add", (n,), (4,), 0, np.dtype(np.float32), (n,), (4,), 0,
                         np.dtype(np.float32))]
    if rt.is_gpu:
        assert entry.knl.function_name == "Add_vec", entry.knl.function_name
    else:
        assert entry.knl.function_name == "Add_flat", entry.knl.function_name
        assert entry.global_size == (n,) and entry.local_size is None
