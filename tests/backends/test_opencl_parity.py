"""Parity of the OpenCL backend with the CPU backend, registry-wide.

Every op type the OpenCL backend registers has cases in `CASES`; each case builds the op
(by type, with `make_op`) once under ``/gpu:0`` and once under ``/cpu:0`` on the same fed
inputs, checks in the step stats that the GPU copy really ran on the GPU device, and
compares the results (float32: rtol 1e-5). `test_every_registered_kernel_has_cases`
fails when a kernel is registered without cases.

Without an OpenCL device the tests are skipped, except under ``CI`` (CI installs PoCL),
where a missing device is a failure.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.ops.op_util import make_op


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


F32, F64, I32 = np.float32, np.float64, np.int32
_rng = np.random.default_rng(1234)


def _rand(shape, dtype=F32, lo=-3.0, hi=3.0):
    if np.dtype(dtype).kind == "b":
        return _rng.integers(0, 2, shape).astype(bool)
    if np.dtype(dtype).kind in "iu":
        return _rng.integers(int(lo) * 3, int(hi) * 3 + 1, shape).astype(dtype)
    return _rng.uniform(lo, hi, shape).astype(dtype)


def _pos(shape, dtype=F32):
    return _rand(shape, dtype, 0.25, 4.0)


def _away_from_zero(shape, dtype=F32):
    x = _rand(shape, dtype, 0.25, 3.0)
    return np.where(_rng.integers(0, 2, shape) == 1, x, -x).astype(dtype)


SHAPES = [(), (7,), (3, 5), (2, 3, 17), (0, 4), (1000,)]
PAIRS = [((3, 5), (3, 5)), ((3, 5), (5,)), ((4, 1, 3), (1, 5, 1)), ((), (3, 4)),
         ((2, 0), (1,)), ((2, 3, 1, 5), (3, 4, 1)), ((2, 3, 1, 4, 1, 5), (3, 2, 4, 1, 5)),
         ((2, 1, 2, 1, 2, 3, 2), (1, 2, 1, 2, 1, 1))]  # 7-D, 6 after merging


class Case:
    """One op built from fed inputs: `inputs` (NumPy arrays), `attrs`, optional constant
    inputs appended (`consts`: e.g. reduction axes) and the number of outputs."""

    def __init__(self, inputs, attrs=None, consts=(), outputs=1, rtol=1e-5):
        self.inputs, self.attrs, self.consts = inputs, attrs or {}, consts
        self.outputs, self.rtol = outputs, rtol

    def build(self, op_type, placeholders):
        inputs = list(placeholders) + [tf.constant(c) for c in self.consts]
        op = make_op(op_type, inputs, dict(self.attrs))
        return op, list(op.outputs[:self.outputs])


def _unary(gen, dtypes=(F32, F64, I32), shapes=SHAPES):
    cases = [Case([gen(s)]) for s in shapes]
    cases += [Case([gen((4, 6), d)]) for d in dtypes if d != F32]
    return cases


def _binary(gen=_rand, gen2=None, dtypes=(F64, I32)):
    gen2 = gen2 or gen
    cases = [Case([gen(a), gen2(b)]) for a, b in PAIRS]
    cases += [Case([gen((4, 6), d), gen2((6,), d)]) for d in dtypes]
    return cases


def _reduce(dtypes=(F64, I32)):
    cases = []
    for shape, axes in [((5, 7), [1]), ((5, 7), [0]), ((3, 4, 5), [0, 2]), ((3, 4, 5), [-2]),
                        ((2, 3, 4, 5), [0, 2]), ((3, 1, 4), [1]), ((10000,), [0]),
                        ((3, 9000), [1]), ((9000, 3), [0]), ((3, 0), [1]), ((3, 0), [0]),
                        ((4, 5), [0, 1]), ((4, 5), [])]:
        for keep in (False, True):
            cases.append(Case([_pos(shape)], {"keep_dims": keep},
                              consts=[np.array(axes, np.int32)]))
    cases += [Case([_rand((6, 5), d)], {"keep_dims": False}, consts=[np.array([1], I32)])
              for d in dtypes]
    return cases


def _grad(gen_y=_rand):
    return [Case([_rand(s), gen_y(s)]) for s in [(3, 5), (0, 2), (2, 3, 17)]] + \
        [Case([_rand((4, 6), F64), gen_y((4, 6), F64)])]


def _relu6_input(shape, dtype=F32):
    return _rand(shape, dtype, -2.0, 8.0)


def _elu_output(shape, dtype=F32):
    return _rand(shape, dtype, -0.99, 3.0)


def _cast(src, dst):
    return Case([_rand((3, 7), src)], {"SrcT": tf.as_dtype(src), "DstT": tf.as_dtype(dst)})


def _matmul():
    cases = []
    # edges of both forms: the CPU form's 8x32 panels (partial, exact, several) and the
    # tiled form's 32x32 tiles; K = 0, and empty outputs
    for m, k, n in [(1, 1, 1), (3, 5, 7), (17, 33, 19), (64, 16, 32), (0, 3, 4), (3, 0, 4),
                    (17, 33, 65), (130, 257, 129), (8, 7, 32), (33, 0, 17), (5, 7, 0)]:
        for ta in (False, True):
            for tb in (False, True):
                a = _rand((k, m) if ta else (m, k))
                b = _rand((n, k) if tb else (k, n))
                cases.append(Case([a, b], {"transpose_a": ta, "transpose_b": tb}, rtol=1e-4))
    cases.append(Case([_rand((5, 6), F64), _rand((6, 3), F64)]))
    return cases


def _labels(shape, dtype=F32):
    x = _rng.uniform(0, 1, shape).astype(dtype)
    x[..., :1] = 0  # a class with zero probability
    return (x / np.maximum(x.sum(-1, keepdims=True), 1e-6)).astype(dtype)


CASES = {
    **{op: _unary(_rand) for op in ("Neg", "Abs", "Square", "Relu", "Sign")},
    **{op: _unary(_rand, dtypes=(F32, F64)) for op in ("Exp", "Tanh", "Sigmoid", "Elu",
                                                       "Floor", "Ceil")},
    "Relu6": _unary(_relu6_input),
    **{op: _unary(_pos, dtypes=(F32, F64)) for op in ("Sqrt", "Rsqrt", "Log")},
    "Reciprocal": _unary(_away_from_zero, dtypes=(F32, F64)),
    **{op: _binary() for op in ("Add", "AddV2", "Sub", "Mul", "Maximum", "Minimum",
                                "SquaredDifference")},
    "RealDiv": _binary(_rand, _away_from_zero, dtypes=(F64,)),
    "Pow": _binary(_pos, lambda s, d=F32: _rand(s, d, -2.0, 2.0), dtypes=(F64,)),
    "ReluGrad": _grad(),
    "Relu6Grad": _grad(_relu6_input),
    "EluGrad": _grad(_elu_output),
    "Cast": [_cast(s, d) for s, d in [(F32, I32), (I32, F32), (F32, F64), (F64, F32),
                                      (F32, bool), (bool, F32), (I32, np.int64),
                                      (np.int64, I32), (F64, I32)]],
    **{op: [Case([_rand(s, d)]) for s, d in [((3, 5), F32), ((0,), F32), ((4,), I32),
                                             ((2, 2), bool)]]
       for op in ("Identity", "ZerosLike", "OnesLike")},
    "BiasAdd": [Case([_rand(v), _rand(b)], {"data_format": f}) for v, b, f in [
        ((3, 5), (5,), "NHWC"), ((2, 3, 4, 7), (7,), "NHWC"), ((0, 5), (5,), "NHWC"),
        ((2, 3, 4, 5), (3,), "NCHW")]] + [Case([_rand((4, 3), F64), _rand((3,), F64)]),
                                          Case([_rand((4, 3), I32), _rand((3,), I32)])],
    "BiasAddGrad": [Case([_rand(s)], {"data_format": f}) for s, f in [
        ((3, 5), "NHWC"), ((2, 3, 4, 7), "NHWC"), ((9000, 3), "NHWC"), ((0, 5), "NHWC"),
        ((2, 3, 4, 5), "NCHW")]] + [Case([_rand((4, 3), F64)])],
    **{op: _reduce() for op in ("Sum", "Mean", "Max", "Min")},
    "MatMul": _matmul(),
    "Softmax": [Case([_rand(s, lo=-20, hi=20)]) for s in [(3, 5), (2, 3, 100), (7,), (0, 3),
                                                          (4, 1)]] + [Case([_rand((3, 4), F64)])],
    "SoftmaxCrossEntropyWithLogits": [
        Case([_rand(s, lo=-10, hi=10), _labels(s)], outputs=2)
        for s in [(3, 5), (4, 100), (1, 1), (0, 3), (2, 0)]] + [
        Case([_rand((3, 4), F64), _labels((3, 4), F64)], outputs=2)],
}


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
        config = tf.ConfigProto(allow_soft_placement=True)
        with tf.Session(graph=graph, config=config) as sess:
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
