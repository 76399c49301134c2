"""Parity of the OpenCL backend with the CPU backend, registry-wide.

Every op type the OpenCL backend registers has cases in `CASES` (gathered from the
``opencl_cases*.py`` modules beside this file); each case builds the op
(by type, with `make_op`) once under ``/gpu:0`` and once under ``/cpu:0`` on the same fed
inputs, checks in the step stats that the GPU copy really ran on the GPU device, and
compares the results (float32: rtol 1e-5). Cases whose op takes variables create them in
`build`; the test initializes every global variable (with the feeds) before the compared
run. `test_every_registered_kernel_has_cases` fails when a kernel is registered without
cases.

Without an OpenCL device the tests are skipped, except under ``CI`` (CI installs PoCL),
where a missing device is a failure.
"""

from __future__ import annotations

import importlib
import os
import pkgutil

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.runtime.config import RewriterConfig
from tests.backends.opencl_cases import F64, _labels, _pos, _rand


def _devices():
    try:
        from flowgraph.backends.opencl._runtime import discover
    except ImportError:
        return ()
    return discover()


@pytest.fixture(autouse=True)
def _need_device():
    if not _devices():
        if os.environ.get("CI"):
            pytest.fail("CI: no usable OpenCL device (is pocl-opencl-icd installed?)")
        pytest.skip("no OpenCL device (install pyopencl and an OpenCL driver such as PoCL)")


@pytest.fixture
def _launches_locked(monkeypatch):
    """Fail any kernel launched through pyopencl's ``Kernel.__call__`` (pyopencl's own
    array methods, e.g. ``Array.__setitem__``'s copy kernel): such a launch sets a shared
    kernel object's arguments outside `kernels_elementwise.launch`'s lock, and two
    executor threads can then swap arguments (BatchMatMulV2 once wrote one product into
    the other's output that way)."""
    import pyopencl as cl

    _devices()  # the discovery probe launches its kernel that way, once

    def refuse(knl, *args, **kwargs):
        raise AssertionError(f"kernel '{knl.function_name}' was launched by pyopencl's "
                             "Kernel.__call__, outside kernels_elementwise.launch's lock")

    monkeypatch.setattr(cl.Kernel, "__call__", refuse)


def _gather_cases() -> dict:
    cases: dict = {}
    here = os.path.dirname(__file__)
    for info in sorted(pkgutil.iter_modules([here]), key=lambda i: i.name):
        if info.name.startswith("opencl_cases"):
            module = importlib.import_module(f"tests.backends.{info.name}")
            for op_type, op_cases in module.CASES.items():
                assert op_type not in cases, f"{op_type} has cases in two modules"
                cases[op_type] = op_cases
    return cases


CASES = _gather_cases()


def _host(value):
    return np.asarray(value.get() if hasattr(value, "get") else value)


def _fresh_launches(monkeypatch) -> None:
    """Empty every device's prepared launches for this test (restored after it): a test
    that forces a kernel form must not repeat a launch prepared in another form."""
    from flowgraph.backends.opencl._runtime import discover

    for r in discover():
        monkeypatch.setattr(r, "launches", {})


def test_every_registered_kernel_has_cases():
    from flowgraph.backends.opencl import backend

    missing = sorted(set(backend.kernels()) - set(CASES))
    assert not missing, f"OpenCL kernels without a parity case in CASES: {missing}"


@pytest.mark.parametrize("op_type", sorted(CASES))
@pytest.mark.usefixtures("_launches_locked")
def test_parity(op_type):
    _compare_with_cpu(op_type, CASES[op_type])


def _compare_with_cpu(op_type, cases):
    """Run `cases` of `op_type` under /gpu:0 and /cpu:0 in one step; compare."""
    graph = tf.Graph()
    with graph.as_default():
        fetches, feeds, gpu_ops = [], {}, []
        for case in cases:
            phs = [tf.placeholder(tf.as_dtype(x.dtype), x.shape) for x in case.inputs]
            feeds.update(zip(phs, case.inputs, strict=True))
            with tf.device("/gpu:0"):
                op, gpu_out = case.build(op_type, phs)
            gpu_ops.append(op)
            with tf.device("/cpu:0"):
                _, cpu_out = case.build(op_type, phs)
            fetches.append((gpu_out, cpu_out))
        md = tf.RunMetadata()
        # No plan rewrites: shape ops of fully known shapes would fold at plan time and
        # never reach the device under test.
        config = tf.ConfigProto(allow_soft_placement=True, graph_options=tf.GraphOptions(
            rewrite_options=RewriterConfig(disable_meta_optimizer=True)))
        with tf.Session(graph=graph, config=config) as sess:
            if tf.global_variables():  # cases on variables (opencl_cases_state.VarCase)
                sess.run(tf.global_variables_initializer(), feeds)
            values = sess.run(fetches, feeds, run_metadata=md,
                              options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE))
    on_gpu = {n.node_name for d in md.step_stats.dev_stats if "GPU:0" in d.device
              for n in d.node_stats}
    for case, op, (gpu, cpu) in zip(cases, gpu_ops, values, strict=True):
        what = (f"{op_type} on inputs {[(x.shape, x.dtype.name) for x in case.inputs]}, "
                f"attrs {case.attrs}, consts {[c.tolist() for c in case.consts]}")
        assert op.name in on_gpu, f"{what} did not run on the GPU device"
        for g, c in zip(gpu, cpu, strict=True):
            g, c = _host(g), _host(c)
            assert g.dtype == c.dtype and g.shape == c.shape, \
                f"{what}: GPU gave {g.dtype}{list(g.shape)}, CPU {c.dtype}{list(c.shape)}"
            if c.dtype.kind == "f":
                scale = float(np.max(np.abs(c[np.isfinite(c)]), initial=1.0))
                rtol = case.rtol if c.dtype == np.float32 else 1e-12
                np.testing.assert_allclose(g, c, rtol=rtol, atol=rtol * scale, equal_nan=True,
                                           err_msg=what)
            else:
                np.testing.assert_array_equal(g, c, err_msg=what)


def test_gradients_on_gpu_match_cpu():
    x = _rand((6, 5))
    w = _rand((5, 4))
    b = _rand((4,))
    labels = _labels((6, 4))

    def loss_and_grads(device):
        graph = tf.Graph()
        with graph.as_default():
            phs = [tf.placeholder(tf.float32, v.shape) for v in (x, w, b, labels)]
            with tf.device(device):
                h = tf.nn.bias_add(tf.matmul(phs[0], phs[1]), phs[2])
                h = tf.nn.elu(tf.nn.relu6(h) + tf.nn.relu(h) * tf.sigmoid(h) + tf.tanh(h))
                loss = tf.reduce_mean(
                    tf.nn.softmax_cross_entropy_with_logits(labels=phs[3], logits=h))
                grads = tf.gradients(loss, phs[:3])
            config = tf.ConfigProto(allow_soft_placement=True)
            md = tf.RunMetadata()
            with tf.Session(graph=graph, config=config) as sess:
                out = sess.run([loss, *grads], dict(zip(phs, (x, w, b, labels), strict=True)),
                               options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                               run_metadata=md)
            ran = {graph.get_operation_by_name(n.node_name).type
                   for d in md.step_stats.dev_stats if "GPU:0" in d.device
                   for n in d.node_stats if not n.node_name.startswith("_")}
            return [_host(v) for v in out], ran

    gpu, ran = loss_and_grads("/gpu:0")
    cpu, _ = loss_and_grads("/cpu:0")
    assert {"MatMul", "BiasAddGrad", "ReluGrad", "Relu6Grad", "EluGrad"} <= ran, ran
    for g, c in zip(gpu, cpu, strict=True):
        np.testing.assert_allclose(g, c, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("cpu_shaped", [True, False])
def test_matmul_both_forms(monkeypatch, cpu_shaped):
    """MatMul's packed-panel form (CPU-type devices) and tiled form (GPUs), each forced
    on whatever device there is, against NumPy, on views and every transpose."""
    from flowgraph.backends.opencl import kernels_nn

    monkeypatch.setattr(kernels_nn, "_cpu_shaped", lambda rt, dtype: cpu_shaped)
    for m, k, n in [(1, 1, 1), (9, 31, 33), (70, 129, 65)]:
        for ta in (False, True):
            for tb in (False, True):
                a = _rand((k, m) if ta else (m, k))
                b = _rand((n, k) if tb else (k, n))
                got = _host(kernels_nn.matmul(a, b, transpose_a=ta, transpose_b=tb))
                want = (a.T if ta else a) @ (b.T if tb else b)
                np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())


def _misaligned(rt, x):
    """`x` wrapped on the device from a host copy that starts off a 64-byte boundary."""
    host = np.zeros(x.size + 16, x.dtype)
    shift = 1 if (host.ctypes.data + x.dtype.itemsize) % 64 else 2
    view = host[shift:shift + x.size].reshape(x.shape)
    view[...] = x
    return rt.to_device(view, wrap=True)


def test_the_cpu_form_reads_b_in_place_where_it_can(monkeypatch):
    """The packed-panel form reads B's rows where they are (no packing launch) when they
    are whole, aligned column blocks of a pool buffer; otherwise it packs. Both against
    NumPy, A in both layouts, B at an offset."""
    from flowgraph.backends.opencl import kernels_nn
    from flowgraph.backends.opencl._runtime import discover
    from flowgraph.backends.opencl.kernels_elementwise import copy

    monkeypatch.setattr(kernels_nn, "_cpu_shaped", lambda rt, dtype: dtype == np.float32)
    rt = discover()[0]
    for m, k, n, start, in_place in [(9, 31, 64, 0, True), (70, 129, 32, 0, True),
                                     (13, 7, 96, 2, True), (5, 6, 32, 1, True),
                                     (5, 6, 48, 0, False), (7, 20, 16, 0, True),
                                     (9, 5, 10, 0, False)]:  # skinny: one vector a row
        for ta in (False, True):
            a = _rand((k, m) if ta else (m, k))
            rows = _rand((k + start, n))
            b = copy(rt, rt.to_device(rows))[start:]  # a pool buffer, maybe at an offset
            if start == 1:  # an offset of n / 2 elements: 16 floats, still aligned
                flat = copy(rt, rt.to_device(np.concatenate([np.zeros(16, np.float32),
                                                              rows.reshape(-1)])))
                b = flat[16:].reshape(k + start, n)[start:]
            assert kernels_nn._b_in_place(b, n, False) == in_place
            got = _host(kernels_nn.matmul(rt.to_device(a), b, transpose_a=ta))
            want = (a.T if ta else a) @ rows[start:]
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
    for m, k, n in [(9, 32, 33), (70, 64, 10), (5, 16, 64)]:  # B transposed, K % 16 == 0
        a, bt = _rand((m, k)), _rand((n, k))
        want = a @ bt.T
        for b in (rt.to_device(bt), _misaligned(rt, bt)):  # vector loads, element loads
            got = _host(kernels_nn.matmul(rt.to_device(a), b, transpose_b=True))
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
    host = np.zeros(4 * 32 + 16, np.float32)
    shift = 1 if (host.ctypes.data + 4) % 64 else 2  # a start off a 64-byte boundary
    wrapped = rt.to_device(host[shift:shift + 128].reshape(4, 32), wrap=True)
    # A CPU-type device wraps a fed array where it lies, here off a 16-float boundary:
    # packed. A GPU copies it into a buffer of its own pool, aligned: read in place.
    assert kernels_nn._b_in_place(wrapped, 32, False) == (not rt.shares_host_memory)
    odd = copy(rt, rt.to_device(_rand((65,))))[1:].reshape(2, 32)  # offset 1: packed
    assert not kernels_nn._b_in_place(odd, 32, False)


def test_the_four_per_item_elementwise_form(monkeypatch):
    """The ``_vec`` kernels (GPUs, contiguous operands) forced on whatever device there
    is, for every table op and dtype, on a size with a tail and on an offset view."""
    from flowgraph.backends.opencl import backend
    from flowgraph.backends.opencl import kernels_elementwise as ew

    _fresh_launches(monkeypatch)
    monkeypatch.setattr(ew, "_use_vec", lambda rt, n, out, inputs, bufs: all(
        x.dtype == out.dtype for x in inputs) and all(int(o) % 4 == 0 for o in bufs[1::2]))
    cases = [(op, d, 1) for op, (_, dts) in ew._UNARY.items() for d in dts] + \
            [(op, d, 2) for op, (_, dts) in ew._BINARY.items() for d in dts]
    from flowgraph.backends.opencl._runtime import discover

    rt = discover()[0]
    for op, dtype, arity in cases:
        if dtype == F64 and not rt.has_fp64:
            continue
        gen = _pos if op in ("Sqrt", "Rsqrt", "Log", "Pow", "Reciprocal", "RealDiv",
                             "DivNoNan") else _rand
        host = [gen((4103,), dtype) for _ in range(arity)]
        kernel = backend.find_kernel(op, tf.as_dtype(dtype)).fn
        got = _host(kernel(*[rt.to_device(h) for h in host]))
        view = _host(kernel(*[rt.to_device(np.concatenate([np.zeros(4, dtype), h]))[4:]
                              for h in host]))
        with tf.Graph().as_default(), tf.Session(config=tf.ConfigProto(
                device_count={"GPU": 0})) as sess:
            from flowgraph.ops.op_util import make_op

            want = sess.run(make_op(op, [tf.constant(h) for h in host], {}).outputs[0])
        for g in (got, view):
            if np.dtype(dtype).kind == "f":
                np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-6, err_msg=op)
            else:
                np.testing.assert_array_equal(g, want, err_msg=op)
    # sources without _vec kernels (Cast, the copy behind Assign) never ask for one
    cast = backend.find_kernel("Cast", tf.float32).fn
    x = _rand((5000,))
    np.testing.assert_array_equal(_host(cast(rt.to_device(x), DstT=tf.float32)), x)
    np.testing.assert_array_equal(_host(ew.copy(rt, rt.to_device(x))), x)


@pytest.mark.parametrize("vector", [True, False])
def test_column_sums_in_both_forms(monkeypatch, vector):
    """Column passes of Sum/Mean (BiasAddGrad's) with 16 columns per work-item (CPU-type
    devices) and one (the other form), each forced, against NumPy: two-pass columns,
    views at an offset, integers, and widths the vector form must refuse."""
    from flowgraph.backends.opencl import kernels_reduce as kr
    from flowgraph.backends.opencl._runtime import discover

    rt = discover()[0]
    _fresh_launches(monkeypatch)
    monkeypatch.setattr(kr, "_cols16", lambda rt, op, K, x: vector and op == "sum" and
                        K % 16 == 0 and x.offset % 64 == 0)
    rng = np.random.default_rng(3)
    for shape, axes, mean in [((256, 512), (0,), False), ((4, 64, 32), (0, 1), True),
                              ((5000, 32), (0,), False), ((3, 7, 48), (1,), True),
                              ((6, 20), (0,), False)]:
        x = rng.standard_normal(shape).astype(np.float32)
        got = _host(kr.reduce(rt, rt.to_device(x), axes, "sum", mean, False, "Sum"))
        want = x.mean(axis=axes) if mean else x.sum(axis=axes)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg=f"{shape} {axes}")
    big = rng.standard_normal((9, 32)).astype(np.float32)
    view = rt.to_device(big)[1:]  # an offset of 32 elements
    np.testing.assert_allclose(_host(kr.reduce(rt, view, (0,), "sum", False, False, "Sum")),
                               big[1:].sum(axis=0), rtol=1e-5, atol=1e-5)
    ints = rng.integers(-50, 50, (40, 16)).astype(np.int32)
    np.testing.assert_array_equal(
        _host(kr.reduce(rt, rt.to_device(ints), (0,), "sum", False, False, "Sum")),
        ints.sum(axis=0))


@pytest.mark.parametrize("group", [1, 64])
def test_softmax_family_with_either_work_group(monkeypatch, group):
    """Softmax, LogSoftmax (two axes) and both cross-entropies with one work-item per row
    (CPU-type devices, few classes) and a work-group of 64 per row, each forced, against
    NumPy, on 10 and 100 classes."""
    from flowgraph.backends.opencl import kernels_softmax as ks
    from flowgraph.backends.opencl._runtime import discover

    rt = discover()[0]
    monkeypatch.setattr(ks, "_group", lambda rt, C: group)
    rng = np.random.default_rng(4)
    for rows, classes in [(37, 10), (5, 100)]:
        x = rng.standard_normal((rows, classes)).astype(np.float32) * 3
        ex = np.exp(x - x.max(axis=1, keepdims=True))
        soft = ex / ex.sum(axis=1, keepdims=True)
        dx = rt.to_device(x)
        np.testing.assert_allclose(_host(ks.softmax(dx)), soft, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(_host(ks.log_softmax(dx)), np.log(soft), rtol=1e-5,
                                   atol=1e-5)
        e0 = np.exp(x - x.max(axis=0, keepdims=True))
        np.testing.assert_allclose(_host(ks.log_softmax(dx, axis=0)),
                                   np.log(e0 / e0.sum(axis=0, keepdims=True)), rtol=1e-5,
                                   atol=1e-5)
        labels = rng.integers(0, classes, rows)
        onehot = np.eye(classes, dtype=np.float32)[labels]
        for loss, grad in (ks.sparse_softmax_cross_entropy_with_logits(dx, labels),
                           ks.softmax_cross_entropy_with_logits(dx, rt.to_device(onehot))):
            np.testing.assert_allclose(_host(loss), -np.log(soft[np.arange(rows), labels]),
                                       rtol=1e-5, atol=1e-5)
            np.testing.assert_allclose(_host(grad), soft - onehot, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("vector", [True, False])
@pytest.mark.usefixtures("_launches_locked")
def test_dense_updates_in_both_forms(monkeypatch, vector):
    """Every optimizer rule with a 16-vector form (CPU-type devices) on variables of whole
    vectors, that form and the one-element form each forced, against the CPU kernels.
    The gradients are computed on the device (aligned): a fed array is wrapped where it
    lies in host memory, which the vector form must refuse (`vector_aligned`)."""
    from flowgraph.backends.opencl import kernels_training as kt
    from flowgraph.backends.opencl.kernels_elementwise import vector_aligned
    from tests.backends.opencl_cases_state import _HYPER, VarCase, _inputs, _scalars

    taken = []

    def dense16(rt, rule, arrays):
        use = vector and rule in kt.VECTOR_RULES and arrays[0].size % 16 == 0 and \
            all(vector_aligned(x) for x in arrays)
        taken.append(use)
        return use

    class DeviceGradCase(VarCase):
        def build(self, op_type, placeholders):
            grad_at = kt._signature(op_type)[2]
            phs = list(placeholders)
            phs[grad_at] = phs[grad_at] + 0.0  # a fresh device array
            return super().build(op_type, phs)

    _fresh_launches(monkeypatch)
    monkeypatch.setattr(kt, "_dense16", dense16)
    for op_type, rule in kt._OPS.items():
        if rule not in kt.VECTOR_RULES:
            continue
        gens, scalars, variants = _HYPER[op_type]
        cases = []
        for shape in [(48,), (3, 32)]:
            for attrs in variants:
                inputs, refs = _inputs(op_type, _rand(shape), [g(shape) for g in gens],
                                       _rand(shape), _scalars(*scalars))
                cases.append(DeviceGradCase(inputs, refs, attrs))
        _compare_with_cpu(op_type, cases)
    assert taken and all(taken) == vector


def test_vector_forms_refuse_misaligned_host_memory():
    """On a CPU-type device fed arrays are wrapped where they lie in host memory; a
    16-vector load from an address off its boundary crashes PoCL, so the vector forms
    (column sums, optimizer updates, B read in place) take their one-element forms there,
    with the same results. A GPU copies a fed array into a buffer of its own pool (aligned
    wherever the host array lies); there the misaligned operand is a pool buffer's view
    one element in, which the vector forms must refuse all the same."""
    from flowgraph.backends.opencl import kernels_nn
    from flowgraph.backends.opencl import kernels_reduce as kr
    from flowgraph.backends.opencl._runtime import discover
    from flowgraph.backends.opencl.kernels_elementwise import copy, vector_aligned

    rt = discover()[0]
    host = np.zeros(64 * 32 + 16, np.float32)
    shift = 1 if (host.ctypes.data + 4) % 64 else 2
    x = host[shift:shift + 64 * 32].reshape(64, 32)
    x[:] = _rand((64, 32))
    wrapped = rt.to_device(x, wrap=True)
    assert vector_aligned(wrapped) == (not rt.shares_host_memory)
    if not rt.shares_host_memory:
        flat = copy(rt, rt.to_device(np.concatenate([np.zeros(1, np.float32), x.ravel()])))
        wrapped = flat[1:].reshape(64, 32)
        assert not vector_aligned(wrapped)
    np.testing.assert_allclose(_host(kr.reduce(rt, wrapped, (0,), "sum", False, False, "Sum")),
                               x.sum(axis=0), rtol=1e-5, atol=1e-5)
    a = _rand((5, 64))
    np.testing.assert_allclose(_host(kernels_nn.matmul(rt.to_device(a), wrapped)), a @ x,
                               rtol=1e-4, atol=1e-4)
    g = tf.placeholder(tf.float32, [64, 32])
    with tf.device("/gpu:0"):
        var = tf.Variable(tf.ones([64, 32]))
        step = tf.train.GradientDescentOptimizer(0.5).apply_gradients([(g, var)])
    with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
        sess.run(var.initializer)
        sess.run(step, {g: x})
        np.testing.assert_allclose(sess.run(var), 1.0 - 0.5 * x, rtol=1e-6)
