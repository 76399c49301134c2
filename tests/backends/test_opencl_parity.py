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


def test_every_registered_kernel_has_cases():
    from flowgraph.backends.opencl import backend

    missing = sorted(set(backend.kernels()) - set(CASES))
    assert not missing, f"OpenCL kernels without a parity case in CASES: {missing}"


@pytest.mark.parametrize("op_type", sorted(CASES))
def test_parity(op_type):
    graph = tf.Graph()
    with graph.as_default():
        fetches, feeds, gpu_ops = [], {}, []
        for case in CASES[op_type]:
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
    for case, op, (gpu, cpu) in zip(CASES[op_type], gpu_ops, values, strict=True):
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


def test_the_four_per_item_elementwise_form(monkeypatch):
    """The ``_vec`` kernels (GPUs, contiguous operands) forced on whatever device there
    is, for every table op and dtype, on a size with a tail and on an offset view."""
    from flowgraph.backends.opencl import backend
    from flowgraph.backends.opencl import kernels_elementwise as ew

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
