"""Fused elementwise kernels on the OpenCL backend (`backends/opencl/kernels_fused.py`).

Each test runs a graph under ``/gpu:0`` with fusion on and off
(``RewriterConfig.remapping``) and compares the results with each other and with the
CPU backend. A fused kernel evaluates its members' own C expressions in their order, one
statement each, in a program built, like the unfused ones, with multiply-add contraction
off (NVIDIA's compiler contracted one member's multiply into the next one's add, an ulp
apart from the unfused kernels on an H100), so it is bitwise the unfused kernels on any
device; the CPU backend agrees to float tolerance (exp, tanh, division... are the
device's own). A comparison with NumPy is exact only where every member is a correctly
rounded operation (+, -, *, max) of an IEEE device. Without an OpenCL device the module
is skipped, except in CI.
"""

from __future__ import annotations

import doctest

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import flowgraph as tf
from flowgraph.runtime.config import RewriterConfig
from tests.backends.opencl_support import opencl_devices

opencl_devices()  # skips the module without a device (and without pyopencl)

import pyopencl  # noqa: E402

from flowgraph.backends.opencl import backend  # noqa: E402
from flowgraph.backends.opencl import kernels_fused as ocl_fused  # noqa: E402
from flowgraph.backends.opencl._runtime import discover  # noqa: E402

backend.ensure_loaded()


def _config(fusion: bool, gpu: bool = True, soft: bool = False):
    rw = RewriterConfig(arithmetic_optimization=RewriterConfig.OFF)
    if not fusion:
        rw.remapping = RewriterConfig.OFF
    return tf.ConfigProto(graph_options=tf.GraphOptions(rewrite_options=rw),
                          allow_soft_placement=soft or not gpu,
                          device_count=None if gpu else {"GPU": 0})


def _run(fetches, feeds, fusion=True, gpu=True, soft=False):
    with tf.Session(config=_config(fusion, gpu, soft)) as sess:
        values = sess.run(fetches, feeds)
        plans = {id(cp): cp for cp in sess._plans.values()}.values()
        fused = [n for cp in plans for n in cp.nodes if n.fused]
    return values, fused


def _close(got, want, ulps=0):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    eps = np.finfo(want.dtype).eps if want.dtype.kind == "f" else 0
    np.testing.assert_allclose(got, want, rtol=ulps * eps, atol=ulps * eps)


def _rt():
    return discover()[0]


def _fresh_launches(monkeypatch) -> None:
    """Empty every device's prepared launches for this test (restored after it): a test
    that forces a kernel form must not repeat a launch prepared in another form."""
    from flowgraph.backends.opencl._runtime import discover

    for r in discover():
        monkeypatch.setattr(r, "launches", {})


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64])
def test_a_dense_layers_tail_and_gradient_match_unfused_and_the_cpu(dtype):
    if dtype == tf.float64 and not _rt().has_fp64:
        pytest.skip("the OpenCL device has no cl_khr_fp64")
    rng = np.random.default_rng(0)
    x = tf.placeholder(dtype, [None, 8])
    with tf.device("/gpu:0"):
        w = tf.constant(rng.standard_normal((8, 6)), dtype=dtype)
        b = tf.constant(rng.standard_normal(6), dtype=dtype)
        h = tf.nn.relu(tf.nn.bias_add(tf.matmul(x, w), b))
        y = tf.sigmoid(h) * tf.math.rsqrt(tf.square(h) + 1.0) - tf.exp(-h)
        loss = tf.reduce_sum(tf.math.squared_difference(y, 0.5))
        grads = tf.gradients(loss, [x, w, b])
    feed = {x: rng.standard_normal((5, 8)).astype(dtype.as_numpy_dtype)}
    fetches = [loss, y, *grads]
    want, none = _run(fetches, feed, fusion=False, soft=True)
    got, fused = _run(fetches, feed, soft=True)
    cpu, _ = _run(fetches, feed, gpu=False)
    assert not none and fused
    assert all(n.device.endswith("GPU:0") for n in fused)
    assert any({"BiasAdd", "Relu"} <= {op.type for op in n.fused} for n in fused)
    assert any(len(n.fused) >= 3 for n in fused)  # e.g. [RsqrtGrad, Mul, Mul]
    assert any("RsqrtGrad" in {op.type for op in n.fused} for n in fused)
    for g, w_, c in zip(got, want, cpu):
        _close(g, w_)
        tol = 1e-5 if dtype == tf.float32 else 1e-12
        np.testing.assert_allclose(g, c, rtol=tol, atol=tol)


def test_step_stats_list_the_members_on_the_device():
    x = tf.placeholder(tf.float32, [2, 3])
    with tf.device("/gpu:0"):
        y = tf.nn.relu(tf.maximum(x * x, x) - x, name="y")
    with tf.Session(config=_config(True)) as sess:
        md = tf.RunMetadata()
        out = sess.run(y, {x: np.arange(6, dtype=np.float32).reshape(2, 3) - 2},
                       options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                       run_metadata=md)
    labels = {n.timeline_label: d.device for d in md.step_stats.dev_stats
              for n in d.node_stats}
    fused = "y = Fused(mul:Mul, Maximum:Maximum, sub:Sub, y:Relu)"
    assert labels[fused].endswith("GPU:0")
    assert labels["mul = Mul() (fused into y)"].endswith("GPU:0")
    v = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
    np.testing.assert_array_equal(out, np.maximum(np.maximum(v * v, v) - v, 0))


def _count_launches(monkeypatch):
    calls = []
    original = pyopencl.enqueue_nd_range_kernel
    monkeypatch.setattr(pyopencl, "enqueue_nd_range_kernel",
                        lambda *a, **kw: (calls.append(a[1]), original(*a, **kw))[1])
    return calls


def test_an_mlp_training_step_launches_fewer_kernels(monkeypatch):
    """A small MLP (bias + ReLU layers, sparse cross-entropy, an L2 term, momentum):
    device launches in the third step, with fusion off and on, and the losses."""
    rng = np.random.default_rng(4)
    x = tf.placeholder(tf.float32, [None, 20])
    labels = tf.placeholder(tf.int32, [None])
    with tf.device("/gpu:0"):
        h = x
        for i, width in enumerate((16, 12)):
            w = tf.Variable(rng.standard_normal((h.shape[-1], width)).astype(np.float32)
                            * 0.3, name=f"w{i}")
            b = tf.Variable(np.zeros(width, np.float32), name=f"b{i}")
            h = tf.nn.relu(tf.nn.bias_add(tf.matmul(h, w), b))
        w = tf.Variable(rng.standard_normal((12, 5)).astype(np.float32) * 0.3, name="w2")
        logits = tf.matmul(h, w)
        xent = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        loss = tf.reduce_mean(xent) + 1e-3 * tf.reduce_sum(tf.square(w) * 0.5)
        train = tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss)
    feed = {x: rng.standard_normal((32, 20)).astype(np.float32),
            labels: rng.integers(0, 5, 32).astype(np.int32)}
    counts, losses, n_fused = {}, {}, {}
    for fusion in (False, True):
        with tf.Session(config=_config(fusion, soft=True)) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                calls = _count_launches(monkeypatch)
                losses.setdefault(fusion, []).append(sess.run([loss, train], feed)[0])
                monkeypatch.undo()
            counts[fusion] = len(calls)
            plans = {id(cp): cp for cp in sess._plans.values()}.values()
            n_fused[fusion] = [len(n.fused) for cp in plans for n in cp.nodes if n.fused]
    assert n_fused[False] == [] and sum(n_fused[True]) >= 4
    # each fused group of k ops launches once instead of k times
    assert counts[False] - counts[True] == sum(k - 1 for k in n_fused[True]), counts
    np.testing.assert_array_equal(losses[True], losses[False])


def test_a_fused_node_writes_in_place_only_into_a_value_nobody_else_holds():
    rng = np.random.default_rng(3)
    x = tf.placeholder(tf.float32, [None, 6])
    with tf.device("/gpu:0"):
        mm = tf.matmul(x, tf.constant(rng.standard_normal((6, 5)), dtype=tf.float32))
        bias = rng.standard_normal(5).astype(np.float32)
        y = tf.nn.relu(tf.nn.bias_add(mm, tf.constant(bias)) * 0.5)
    feed = {x: rng.standard_normal((4, 6)).astype(np.float32)}
    with tf.Session(config=_config(True)) as sess:
        alone = sess.run(y, feed)
        both = sess.run([y, mm], feed)
        marks = {len(cp.fetch_slots): [n.in_place for n in cp.nodes if n.fused]
                 for cp in sess._plans.values()}
    assert marks == {1: [True], 2: [False]}
    _close(alone, both[0])
    _close(both[0], np.maximum((both[1] + bias) * np.float32(0.5), 0))


def test_shapes_that_do_not_broadcast_raise_the_members_error():
    x = tf.placeholder(tf.float32, [None])
    z = tf.placeholder(tf.float32, [None])
    with tf.device("/gpu:0"):
        y = tf.exp(tf.add(tf.tanh(x), z, name="bad_add"))
    with tf.Session(config=_config(True)) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="bad_add"):
            sess.run(y, {x: np.ones(3, np.float32), z: np.ones(4, np.float32)})


def test_broadcast_views_zero_d_and_empty_results():
    rng = np.random.default_rng(1)
    a = tf.placeholder(tf.float64 if _rt().has_fp64 else tf.float32, [None, None, None])
    dt = a.dtype
    b = tf.placeholder(dt, [None, 1, None])
    s = tf.placeholder(dt, [])
    with tf.device("/gpu:0"):
        y = tf.maximum(tf.tanh(a) * b, s) - tf.abs(b)
    np_dt = dt.as_numpy_dtype
    cases = [
        {a: rng.standard_normal((2, 5, 4)).astype(np_dt),
         b: rng.standard_normal((2, 1, 4)).astype(np_dt), s: np_dt(0.1)},
        {a: rng.standard_normal((1, 6, 1)).astype(np_dt),
         b: rng.standard_normal((3, 1, 2)).astype(np_dt), s: np_dt(0.0)},
        {a: np.zeros((0, 3, 2), np_dt), b: np.ones((1, 1, 2), np_dt), s: np_dt(1.0)},
    ]
    for feed in cases:
        got, fused = _run(y, feed)
        assert fused
        _close(got, _run(y, feed, fusion=False)[0])
        _close(got, _run(y, feed, gpu=False)[0], ulps=64)
    u = tf.placeholder(tf.float32, [])
    with tf.device("/gpu:0"):
        v = tf.exp(tf.tanh(u)) + 1.0
    got, fused = _run(v, {u: 0.25})
    assert fused and got.shape == ()
    _close(got, np.float32(np.exp(np.tanh(np.float32(0.25))) + 1), ulps=4)


# -- the kernel itself, called directly ---------------------------------------------------------
def _ops(*types, dtype=tf.float32, shape=(3,)):
    """A chain of `types` on placeholders (binary ops take a second placeholder)."""
    with tf.Graph().as_default():
        v = tf.placeholder(dtype, shape)
        ops = []
        for t in types:
            from flowgraph.ops.op_util import make_op

            arity = 2 if t in ocl_fused.ew._BINARY else 1
            extra = [tf.placeholder(dtype, shape)] if arity == 2 else []
            op = make_op(t, [v, *extra], {})
            ops.append(op)
            v = op.outputs[0]
    return ops


def _unfused(op_type, *args):
    return backend.find_kernel(op_type, tf.float32).fn(*args)


def _host(x):
    return x.get() if hasattr(x, "get") else np.asarray(x)


def test_constants_fold_into_the_source_as_exact_literals():
    ops = _ops("Mul", "Add", "Maximum", "Tanh")
    third = np.float32(1) / np.float32(3)
    operands = [[("in", 0), ("const", np.float32(third))], [("op", 0), ("in", 1)],
                [("op", 1), ("const", np.array([[-np.inf]], np.float32))],
                [("op", 2)]]
    kernel = ocl_fused.fused_kernel(ops, operands, 2, fallback=None)
    src = kernel.source("fs", "flat")
    assert third.item().hex() + "f" in src and "-INFINITY" in src
    rt = _rt()
    x = np.linspace(-2, 2, 7, dtype=np.float32)
    got = kernel(rt.to_device(x), rt.to_device(np.float32(0.5)))
    assert got.shape == (1, 7)  # the [[c]] constant widens the result
    cst = rt.to_device
    want = _unfused("Tanh", _unfused("Maximum", _unfused("Add", _unfused(
        "Mul", cst(x), cst(third)), cst(np.float32(0.5))), cst(np.float32(-np.inf))))
    np.testing.assert_array_equal(_host(got)[0], _host(want))


@pytest.mark.parametrize("form", ["flat", "vec", "nd", "rows"])
def test_strided_offset_and_broadcast_inputs(monkeypatch, form):
    """`form` names what the device would otherwise not run: the GPUs' vec (contiguous
    inputs) and nd (strided inputs) forms, the CPU devices' rows form, each forced."""
    if form == "vec":  # the GPU form, forced on whatever device there is
        monkeypatch.setattr(ocl_fused, "_use_vec", lambda rt, n, modes, offsets: "n" not in
                            modes and all(o % 4 == 0 for o, m in zip(offsets, modes)
                                          if m == "f"))
    monkeypatch.setattr(ocl_fused, "_use_rows", lambda rt: form == "rows")
    ops = _ops("Sub", "Relu", "Mul", shape=(None, None))
    operands = [[("in", 0), ("in", 1)], [("op", 0)], [("op", 1), ("in", 2)]]
    calls = []  # the input counts only: the kernel outlives the test in `rt.launches`, and
    # device arrays it held would count against the next test's memory limit on a GPU
    kernel = ocl_fused.fused_kernel(ops, operands, 3,
                                    fallback=lambda *a: calls.append(len(a)) or "fallback")
    rt = _rt()
    rng = np.random.default_rng(5)
    big = rng.standard_normal((4108,)).astype(np.float32)
    a, c = rt.to_device(big)[4:], rt.to_device(big[4:] * 2)  # an offset view, contiguous
    row = rt.to_device(rng.standard_normal((1, 13)).astype(np.float32))
    mat = rt.to_device(rng.standard_normal((13, 7)).astype(np.float32)).transpose()
    col = rt.to_device(rng.standard_normal((7, 1)).astype(np.float32))
    three = rt.to_device(np.float32(3))
    cube = rt.to_device(rng.standard_normal((3, 4, 5)).astype(np.float32))
    cube_t = cube.transpose((2, 0, 1))  # [5, 3, 4], no two dimensions merge
    plane = rt.to_device(rng.standard_normal((3, 1)).astype(np.float32))
    wide = rt.to_device(rng.standard_normal((2, 1, 1, 4)).astype(np.float32))
    cases = [(a, rt.to_device(np.float32(0.25)), c),  # modes f, s, f
             (mat, row, three),  # a transposed view and a broadcast row: n, n, s
             (row, mat, col), (three, three, three),
             (cube_t, plane, three),  # three dimensions
             (cube_t, wide, cube_t),  # four, the view read twice
             (rt.to_device(big)[4::2], three, three)]  # one strided dimension
    if form == "rows":  # the row index is divided by every dimension but two
        assert "r % d4" in kernel.source("nnn", "rows", 3)
        assert "%" not in kernel.source("nnn", "rows", 2)
    for inputs in cases:
        hosts = [rt.read(x) for x in inputs]
        want = np.maximum(hosts[0] - hosts[1], 0) * hosts[2]
        np.testing.assert_array_equal(rt.read(kernel(*inputs)), want)
    assert not calls
    assert kernel(mat, row) == "fallback" and calls == [2]  # wrong input count
    bad = (rt.to_device(np.ones(3, np.float32)), rt.to_device(np.ones(4, np.float32)), c)
    assert kernel(*bad) == "fallback"


def test_elementwise_programs_forbid_multiply_add_contraction():
    """Fused and unfused elementwise programs carry ``FP_CONTRACT OFF`` before their first
    kernel (so ``x * y + z`` rounds twice in both, as NumPy does); the matrix product keeps
    contraction (its multiply-adds are its speed)."""
    from flowgraph.backends.opencl import kernels_elementwise as ew
    from flowgraph.backends.opencl import kernels_nn

    pragma = "#pragma OPENCL FP_CONTRACT OFF"
    kernel = ocl_fused.fused_kernel(_ops("Mul", "Add"), [[("in", 0), ("in", 1)],
                                                         [("op", 0), ("in", 2)]], 3, None)
    sources = [kernel.source("fff", form) for form in ("flat", "vec")]
    sources += [kernel.source("fnf", "nd"), kernel.source("fnf", "rows", 2)]
    sources += [ew._source(arity, dt) for arity in (1, 2) for dt in ew.FLOATS]
    sources.append(ew._bias_source(ew.F32))
    for src in sources:
        assert pragma in src and src.index(pragma) < src.index("__kernel"), src[:300]
    assert pragma not in kernels_nn._matmul_source(ew.F32)
    assert pragma not in ew.header(ew.F32)


def _every_expression(dtype):
    """Ops of every float table expression side by side on inputs 0 and 1, summed by a
    chain of adds: (ops, operands) of one group."""
    from flowgraph.ops.op_util import make_op

    tables = [(t, 1) for t, (_, dts) in ocl_fused.ew._UNARY.items() if dtype in dts] + \
             [(t, 2) for t, (_, dts) in ocl_fused.ew._BINARY.items() if dtype in dts]
    with tf.Graph().as_default():
        a, b = (tf.placeholder(tf.as_dtype(dtype), [None]) for _ in range(2))
        ops = [make_op(t, [a, b][:arity], {}) for t, arity in tables]
        operands = [[("in", 0), ("in", 1)][:arity] for _, arity in tables]
        total = ops[0].outputs[0]
        for k in range(1, len(tables)):
            add = make_op("Add", [total, ops[k].outputs[0]], {})
            operands.append([("op", len(ops) - 1 if k > 1 else 0), ("op", k)])
            ops.append(add)
            total = add.outputs[0]
    return ops, operands, tables


# One program build each (about 3 s on PoCL with a cold kernel cache): the float32 flat
# and vec forms run by default, the rest with the slow tests.
@pytest.mark.parametrize("form,dtype", [
    ("flat", np.float32), ("vec", np.float32),
    *(pytest.param(f, d, marks=pytest.mark.slow) for f, d in
      [("nd", np.float32), ("rows", np.float32), ("flat", np.float64), ("vec", np.float64),
       ("nd", np.float64)])])
def test_every_table_expression_fuses_in_every_form(monkeypatch, form, dtype):
    """One group holding every fusible expression, launched in each kernel form, equals
    the unfused kernels (the vec form is the GPUs', forced here)."""
    rt = _rt()
    dtype = np.dtype(dtype)
    if dtype not in ocl_fused.ew.FLOATS:
        pytest.skip("the OpenCL device has no cl_khr_fp64")
    _fresh_launches(monkeypatch)
    monkeypatch.setattr(ocl_fused, "_use_vec", lambda rt, n, modes, offsets: form == "vec")
    monkeypatch.setattr(ocl_fused, "_use_rows", lambda rt: form == "rows")
    # the unfused reference in the same form: float4 math may round apart from scalar
    monkeypatch.setattr(ocl_fused.ew, "_use_vec", lambda rt, n, out, inputs, bufs: form ==
                        "vec" and all(int(o) % 4 == 0 for o in bufs[1::2]))
    ops, operands, tables = _every_expression(dtype)
    kernel = ocl_fused.fused_kernel(ops, operands, 2, fallback=None)
    rng = np.random.default_rng(6)
    shapes = {"flat": [(4103,), (4103,)], "vec": [(4103,), (4103,)],
              "nd": [(7, 13), (1, 13)], "rows": [(7, 13), (7, 1)]}[form]
    hosts = [rng.uniform(0.5, 2.0, s).astype(dtype) for s in shapes]
    hosts[0][::3] *= -1  # negative values for the activations' other branch
    xs = [rt.to_device(h) for h in hosts]
    got = rt.read(kernel(*xs))
    parts = [backend.find_kernel(t, tf.as_dtype(dtype)).fn(*xs[:arity])
             for t, arity in tables]
    want = parts[0]
    for p in parts[1:]:
        want = backend.find_kernel("Add", tf.as_dtype(dtype)).fn(want, p)
    np.testing.assert_array_equal(got, rt.read(want))


def test_the_in_place_variant_writes_into_input_zero_only_when_it_fits():
    ops = _ops("Add", "Square")
    operands = [[("in", 0), ("in", 1)], [("op", 0)]]
    kernel = ocl_fused.fused_kernel(ops, operands, 2, fallback=None)
    rt = _rt()
    x = rt.to_device(np.arange(6, dtype=np.float32).reshape(2, 3))
    x = _unfused("Neg", x)  # a fresh device array
    one = rt.to_device(np.float32(1))
    out = kernel.in_place(x, one)
    assert out is x
    np.testing.assert_array_equal(_host(out), (1 - np.arange(6).reshape(2, 3)) ** 2)
    row = rt.to_device(np.ones(3, np.float32))
    grown = kernel.in_place(row, rt.to_device(np.zeros((2, 3), np.float32)))
    assert grown is not row and grown.shape == (2, 3)


def test_single_ops_and_wide_groups_keep_their_own_kernels():
    ops = _ops("Relu")
    assert ocl_fused.fused_kernel(ops, [[("in", 0)]], 1, fallback=None) is None
    many = _ops(*["Add"] * (ocl_fused.MAX_INPUTS + 1))
    operands = [[("in", 0), ("in", 1)]] + [[("op", i), ("in", i + 2)]
                                           for i in range(len(many) - 1)]
    assert ocl_fused.fused_kernel(many, operands, len(many) + 1, fallback=None) is None


def test_the_module_examples_run():
    result = doctest.testmod(ocl_fused)
    assert result.attempted >= 2 and result.failed == 0


def test_what_fuses():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 4])
        i = tf.placeholder(tf.int32, [4])
        ok = [tf.nn.relu(x), x * x, tf.nn.bias_add(x, tf.zeros([4])), tf.math.rsqrt(x),
              tf.math.squared_difference(x, 1.0)]
        x4 = tf.placeholder(tf.float32, [None, 4, 2, 2])
        no = [i + i, tf.cast(x, tf.int32), tf.nn.bias_add(x4, tf.zeros([4]),
                                                          data_format="NCHW"),
              tf.nn.bias_add(tf.placeholder(tf.float32, [None, None]), tf.zeros([4])),
              tf.sin(x), x > 0]
    assert [ocl_fused.fusible(t.op) for t in ok] == [True] * len(ok)
    assert [ocl_fused.fusible(t.op) for t in no] == [False] * len(no)


# -- random graphs on the device -----------------------------------------------------------------
UNARY = [tf.tanh, tf.negative, tf.abs, tf.square, tf.nn.relu, tf.sigmoid,
         lambda v: tf.exp(tf.minimum(v, 3.0))]
BINARY = [tf.add, tf.subtract, tf.multiply, tf.maximum, tf.minimum]
SHAPES = [(4, 3), (3,), (1, 3), (4, 1), ()]
CONST_SHAPES = [(), (1,), (1, 1), (3,)]


@st.composite
def _graphs(draw):
    n_in = draw(st.integers(1, 3))
    shapes = [(4, 3)] + [draw(st.sampled_from(SHAPES)) for _ in range(n_in - 1)]
    steps = []
    for i in range(draw(st.integers(2, 8))):
        kind = draw(st.sampled_from("ubc"))
        if kind == "u":
            steps.append(("u", draw(st.integers(0, len(UNARY) - 1)),
                          draw(st.integers(0, n_in + i - 1))))
        elif kind == "b":
            steps.append(("b", draw(st.integers(0, len(BINARY) - 1)),
                          draw(st.integers(0, n_in + i - 1)),
                          draw(st.integers(0, n_in + i - 1))))
        else:
            steps.append(("c", draw(st.integers(0, len(BINARY) - 1)),
                          draw(st.integers(0, n_in + i - 1)),
                          draw(st.sampled_from(CONST_SHAPES)),
                          draw(st.floats(-2.0, 2.0, width=32))))
    fetched = draw(st.sets(st.integers(0, len(steps) - 1), max_size=2))
    seed = draw(st.integers(0, 2**16))
    static = draw(st.booleans())
    return shapes, steps, sorted(fetched | {len(steps) - 1}), seed, static


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_graphs())
def test_random_elementwise_graphs_on_the_device(case):
    """Random graphs with broadcasting, constants and fetch patterns, and their gradients,
    all under ``/gpu:0`` (ops without an OpenCL kernel fall back to the CPU): fused vs
    unfused on the device, and vs the CPU backend."""
    shapes, steps, fetched, seed, static = case
    rng = np.random.default_rng(seed)
    with tf.Graph().as_default():
        xs = [tf.placeholder(tf.float32, s if static else [None] * len(s)) for s in shapes]
        with tf.device("/gpu:0"):
            values = list(xs)
            for step in steps:
                if step[0] == "u":
                    values.append(UNARY[step[1]](values[step[2]]))
                elif step[0] == "b":
                    values.append(BINARY[step[1]](values[step[2]], values[step[3]]))
                else:
                    const = tf.constant(np.full(step[3], step[4]), dtype=tf.float32)
                    values.append(BINARY[step[1]](values[step[2]], const))
            outs = [values[len(xs) + k] for k in fetched]
            loss = tf.add_n([tf.reduce_sum(o) for o in outs])
            grads = [g for g in tf.gradients(loss, xs) if g is not None]
        feed = {x: rng.standard_normal(s).astype(np.float32) for x, s in zip(xs, shapes)}
        want, _ = _run(outs + grads, feed, fusion=False, soft=True)
        got, _ = _run(outs + grads, feed, soft=True)
        cpu, _ = _run(outs + grads, feed, gpu=False)
    for g, w, c in zip(got, want, cpu):
        _close(g, w)
        np.testing.assert_allclose(g, c, rtol=1e-5, atol=1e-5)


def test_add_n_fuses_and_the_gradient_of_a_shared_weight_matches():
    """A weight used by two layers gets an AddN of two gradients on the device; an AddN
    of known equal shapes fuses with its neighbours, bitwise equal to the unfused kernels
    and close to the CPU backend. Shapes unknown statically keep AddN's own kernel."""
    rng = np.random.default_rng(2)
    x = tf.placeholder(tf.float32, [4, 6])
    u = tf.placeholder(tf.float32, [None, 6])
    with tf.device("/gpu:0"):
        w = tf.constant(rng.standard_normal((6, 6)), dtype=tf.float32)
        h = tf.nn.relu(tf.matmul(tf.nn.relu(tf.matmul(x, w)), w))
        loss = tf.reduce_sum(h * h)
        (gw,) = tf.gradients(loss, [w])
        s = tf.nn.relu(tf.add_n([x * 2.0, -x, tf.sigmoid(x)]))
        unknown = tf.add_n([u, u * u])
    feed = {x: rng.standard_normal((4, 6)).astype(np.float32),
            u: rng.standard_normal((3, 6)).astype(np.float32)}
    fetches = [gw, s, unknown]
    assert any(op.type == "AddN" for op in tf.get_default_graph().get_operations()
               if "gradients" in op.name)
    want, none = _run(fetches, feed, fusion=False, soft=True)
    got, fused = _run(fetches, feed, soft=True)
    cpu, _ = _run(fetches, feed, gpu=False)
    assert not none
    assert any("AddN" in {op.type for op in n.fused} and "Relu" in {op.type for op in n.fused}
               for n in fused)
    assert not any(op.name == unknown.op.name for n in fused for op in n.fused)
    for g, w_, c in zip(got, want, cpu):
        _close(g, w_)
        np.testing.assert_allclose(g, c, rtol=1e-5, atol=1e-5)


def test_one_element_constants_moved_to_the_device_fold_into_the_kernel():
    """Constants created under /gpu:0 reach the device through `_ToDevice` nodes; in a
    fused group a one-element one becomes a literal of the kernel and its `_ToDevice`
    node leaves the plan, while a larger one stays an input."""
    rng = np.random.default_rng(8)
    row_value = rng.standard_normal(4).astype(np.float32)
    x = tf.placeholder(tf.float32, [3, 4])
    with tf.device("/gpu:0"):
        half = tf.constant([0.5], name="half")
        row = tf.constant(row_value, name="row")
        y = tf.nn.relu(x * half - row)
    feed = {x: rng.standard_normal((3, 4)).astype(np.float32)}
    with tf.Session(config=_config(True)) as sess:
        got = sess.run(y, feed)
        (cp,) = {id(cp): cp for cp in sess._plans.values()}.values()
    movers = [n.name for n in cp.nodes if n.op_type == "_ToDevice"]
    assert not any("half" in m for m in movers) and any("row" in m for m in movers)
    (fused,) = [n for n in cp.nodes if n.fused]
    assert len(fused.input_slots) == 2  # x and row; half is inside the kernel
    want, _ = _run(y, feed, fusion=False)
    _close(got, want)
    np.testing.assert_allclose(got, np.maximum(feed[x] * 0.5 - row_value, 0), rtol=1e-6)
