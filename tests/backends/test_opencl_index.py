"""The OpenCL index kernels in a model: an embedding lookup summed into segments, its
gradients, determinism of the segment sum, and bad indices or labels as errors naming the
op (the device checks them; the host reads one flag back)."""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf
from tests.backends.opencl_support import opencl_devices

opencl_devices()
_rng = np.random.default_rng(99)
TRACE = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)


def _gpu_op_types(graph, md) -> set[str]:
    return {graph.get_operation_by_name(n.node_name).type
            for d in md.step_stats.dev_stats if "GPU:0" in d.device
            for n in d.node_stats if not n.node_name.startswith("_")}


def _embedding_model(device, table, ids, segments, num_segments):
    """Loss and dense gradients of a sum of embedding rows per segment, run on `device`."""
    graph = tf.Graph()
    with graph.as_default():
        ids_ph = tf.placeholder(tf.int64, ids.shape)
        seg_ph = tf.placeholder(tf.int32, segments.shape)
        with tf.device(device):
            params = tf.constant(table)
            rows = tf.nn.embedding_lookup(params, ids_ph)
            # an unsorted segment sum: rows scattered-and-added into their segments
            sums = tf.scatter_nd(tf.expand_dims(seg_ph, -1), rows,
                                 [num_segments, table.shape[1]])
            loss = tf.reduce_sum(tf.square(sums)) + tf.reduce_sum(rows)
            (grad,) = tf.gradients(loss, [params])
            grad = tf.convert_to_tensor(grad)  # IndexedSlices to dense: ScatterNd
        md = tf.RunMetadata()
        with tf.Session(graph=graph,
                        config=tf.ConfigProto(allow_soft_placement=True)) as sess:
            out = sess.run([sums, loss, grad], {ids_ph: ids, seg_ph: segments},
                           options=TRACE, run_metadata=md)
    return out, _gpu_op_types(graph, md)


def test_embedding_lookup_segment_sum_and_gradients_match_the_cpu():
    table = _rng.uniform(-1, 1, (37, 5)).astype(np.float32)
    ids = _rng.integers(0, 37, 203).astype(np.int64)  # duplicates: gradient rows add up
    segments = _rng.integers(0, 11, 203).astype(np.int32)
    gpu, ran = _embedding_model("/gpu:0", table, ids, segments, 13)  # segments 11, 12 empty
    cpu, _ = _embedding_model("/cpu:0", table, ids, segments, 13)
    assert {"GatherV2", "ScatterNd"} <= ran, ran
    for g, c in zip(gpu, cpu, strict=True):
        np.testing.assert_allclose(g, c, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(gpu[0][11:], 0)


def test_segment_sum_is_deterministic_and_adds_in_index_order():
    """Many updates into few rows: the same bits on every run, equal to ``np.add.at``."""
    ids = _rng.integers(0, 3, (5000, 1)).astype(np.int32)
    updates = _rng.uniform(-1, 1, (5000, 7)).astype(np.float32)
    want = np.zeros((3, 7), np.float32)
    np.add.at(want, ids[:, 0], updates)
    with tf.Graph().as_default(), tf.device("/gpu:0"):
        out = tf.scatter_nd(ids, updates, [3, 7])
        with tf.Session() as sess:
            runs = [sess.run(out) for _ in range(3)]
    for got in runs:
        np.testing.assert_array_equal(got, want)


def _run_gpu(build, feeds_of):
    graph = tf.Graph()
    with graph.as_default():
        with tf.device("/gpu:0"):
            out, feeds = build()
        with tf.Session(graph=graph) as sess:
            return sess.run(out, feeds_of(feeds))


@pytest.mark.parametrize("bad", [37, -1])
def test_bad_embedding_index_raises_invalid_argument_naming_the_op(bad):
    table = _rng.uniform(-1, 1, (37, 5)).astype(np.float32)
    ids = np.array([[0, 4], [bad, 2]], np.int32)

    def build():
        ph = tf.placeholder(tf.int32, ids.shape)
        return tf.nn.embedding_lookup(tf.constant(table), ph, name="lookup"), ph

    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=rf"indices\[1,0\] = {bad} is not in \[0, 37\)") as info:
        _run_gpu(build, lambda ph: {ph: ids})
    assert info.value.op is not None and info.value.op.type == "GatherV2"
    assert info.value.op.name in str(info.value)


def test_bad_scatter_index_and_bad_label_raise_invalid_argument():
    def scatter():
        ph = tf.placeholder(tf.int32, [3, 1])
        return tf.scatter_nd(ph, tf.ones([3, 2]), [4, 2], name="seg"), ph

    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"indices\[2\] = \[4\] does not index into output shape") as info:
        _run_gpu(scatter, lambda ph: {ph: np.array([[0], [3], [4]], np.int32)})
    assert info.value.op.name == "seg"

    def xent():
        ph = tf.placeholder(tf.int64, [3])
        logits = tf.constant(_rng.uniform(-1, 1, (3, 4)).astype(np.float32))
        return tf.nn.sparse_softmax_cross_entropy_with_logits(labels=ph, logits=logits), ph

    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"label value of 4 which is outside the valid range of \[0, 4\)"):
        _run_gpu(xent, lambda ph: {ph: np.array([1, 4, 0], np.int64)})


@pytest.mark.parametrize("cpu_shaped", [True, False])
def test_batch_matmul_both_forms(monkeypatch, cpu_shaped):
    """The batched kernel (GPUs, float64) and the per-matrix panels (CPU-type devices),
    each forced on whatever device there is, against NumPy: broadcast batch dimensions
    and every adjoint combination."""
    from flowgraph.backends.opencl import kernels_nn

    monkeypatch.setattr(kernels_nn, "_cpu_shaped", lambda rt, dtype: cpu_shaped)
    for sa, sb in [((2, 1, 3, 9, 33), (4, 1, 33, 17)), ((5, 40, 7), (7, 3)),
                   ((1, 1, 70, 65), (2, 3, 65, 38))]:
        for adj_x in (False, True):
            for adj_y in (False, True):
                a = _rng.uniform(-1, 1, (*sa[:-2], sa[-1], sa[-2]) if adj_x else sa)
                b = _rng.uniform(-1, 1, (*sb[:-2], sb[-1], sb[-2]) if adj_y else sb)
                a, b = a.astype(np.float32), b.astype(np.float32)
                got = kernels_nn.batch_matmul_v2(a, b, adj_x=adj_x, adj_y=adj_y).get()
                want = np.matmul(np.swapaxes(a, -1, -2) if adj_x else a,
                                 np.swapaxes(b, -1, -2) if adj_y else b)
                np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def _model_grads(device, values):
    """Outputs and gradients (float64) of a small model using every kernel family of this
    module: gather, batched products, select, log-softmax, sparse cross-entropy, prod."""
    graph = tf.Graph()
    with graph.as_default():
        phs = [tf.placeholder(tf.as_dtype(v.dtype), v.shape) for v in values]
        params, w, ids, labels, cond = phs
        with tf.device(device):
            rows = tf.gather(params, ids)                   # [2, 3, 4]
            h = tf.matmul(rows, w)                          # BatchMatMulV2: [2, 3, 5]
            h = tf.where(cond, h, 0.5 * h)
            logp = tf.nn.log_softmax(h, axis=1)
            xent = tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=labels, logits=tf.reshape(h, [6, 5]))
            prod = tf.reduce_prod(params[:3], axis=0)
            loss = tf.reduce_sum(logp * logp) + tf.reduce_sum(xent) + tf.reduce_sum(prod)
            grads = tf.gradients(loss, [params, w])
            grads = [tf.convert_to_tensor(g) for g in grads]
        md = tf.RunMetadata()
        with tf.Session(graph=graph,
                        config=tf.ConfigProto(allow_soft_placement=True)) as sess:
            out = sess.run([loss, *grads], dict(zip(phs, values, strict=True)),
                           options=TRACE, run_metadata=md)
    return out, _gpu_op_types(graph, md)


def test_gradients_through_every_family_match_the_cpu_in_float64():
    values = [_rng.uniform(-1, 1, (6, 4)), _rng.uniform(-1, 1, (2, 4, 5)),
              np.array([[0, 5, 5], [2, 1, 0]], np.int32), np.array([0, 4, 2, 1, 3, 3]),
              _rng.integers(0, 2, (2, 3, 5)).astype(bool)]
    gpu, ran = _model_grads("/gpu:0", values)
    cpu, _ = _model_grads("/cpu:0", values)
    assert {"GatherV2", "BatchMatMulV2", "Select", "LogSoftmax",
            "SparseSoftmaxCrossEntropyWithLogits", "Prod"} <= ran, ran
    for g, c in zip(gpu, cpu, strict=True):
        np.testing.assert_allclose(g, c, rtol=1e-10, atol=1e-12)
