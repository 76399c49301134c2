"""Writes the GraphDef of tests/ops/test_raw_sparse.py with real TensorFlow 2.15 in TF1
graph mode (run once: ``/tmp/tf-oracle-venv/bin/python make_fixture.py OUT_DIR``): the
sparse, segment-gradient, scatter and random op types of the raw-op gap fill, built
through TensorFlow's public API where it emits them (`tf.sparse.*`, ``sparse * dense``,
`tf.gradients`, `RaggedTensor.to_tensor`/`to_sparse`, `tf.gather` of a ragged tensor,
`tf.sparse.cross`, `tf.ragged.cross_hashed`, a resource variable's
``gather_nd`` and ``scatter_nd_max``) and through
`tf.raw_ops` otherwise. ``graph.pb`` is the graph; ``expected.npz`` holds the fed value
and TensorFlow's fetched values, keyed by fetch name with ``/`` and ``:`` replaced by
``.``."""

import os
import sys

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
R = tf.raw_ops
feed_x = np.array([1.5, -2.0, 3.0], np.float32)

g = tf.Graph()
with g.as_default():
    x = tf.placeholder(tf.float32, [3], name="x")  # the values of sparse tensor `a`
    a = tf.SparseTensor([[0, 0], [0, 2], [1, 1]], x, [2, 3])
    b = tf.SparseTensor([[0, 2], [1, 0]], tf.constant([10.0, -4.0]), [2, 3])
    dense = tf.constant([[1.0, 2.0, 4.0], [0.5, 0.25, 8.0]])
    fetch = {}
    s = tf.sparse.add(a, b, threshold=0.5)
    fetch["add_idx"], fetch["add_val"] = tf.identity(s.indices), tf.identity(s.values)
    fetch["add_dense"] = tf.sparse.add(a, dense)
    fetch["mul"] = (a * dense).values
    fetch["div"] = (a / tf.constant([2.0, 4.0, 8.0])).values
    c = tf.sparse.concat(1, [a, b])
    fetch["concat_idx"], fetch["concat_val"] = tf.identity(c.indices), tf.identity(c.values)
    sl = tf.sparse.slice(a, [0, 1], [2, 2])
    fetch["slice_idx"], fetch["slice_val"] = tf.identity(sl.indices), tf.identity(sl.values)
    parts = tf.sparse.split(sp_input=a, num_split=2, axis=1)
    fetch["split1_val"], fetch["split1_shape"] = (tf.identity(parts[1].values),
                                                  tf.identity(parts[1].dense_shape))
    fetch["softmax"] = tf.sparse.softmax(a).values
    fetch["rmax"] = tf.sparse.reduce_max(a, 1)
    rs = tf.sparse.reduce_max_sparse(a, 0)
    fetch["rmaxs_idx"], fetch["rmaxs_val"] = tf.identity(rs.indices), tf.identity(rs.values)
    rs = tf.sparse.reduce_sum_sparse(a, 1, keepdims=True)
    fetch["rsums_idx"], fetch["rsums_val"] = tf.identity(rs.indices), tf.identity(rs.values)
    m = tf.sparse.maximum(a, b)
    fetch["max_idx"], fetch["max_val"] = tf.identity(m.indices), tf.identity(m.values)
    fetch["min_val"] = tf.identity(tf.sparse.minimum(a, b).values)
    ser = tf.io.serialize_sparse(a)
    d = R.DeserializeSparse(serialized_sparse=tf.stack([ser, tf.io.serialize_sparse(b)]),
                            dtype=tf.float32)
    fetch["deser_idx"], fetch["deser_val"] = tf.identity(d[0]), tf.identity(d[1])
    cross = tf.sparse.cross([tf.SparseTensor([[0, 0], [1, 0], [1, 1]],
                                             tf.constant(["a", "b", "c"]), [2, 2]),
                             tf.constant([["x"], ["y"]])], separator="+")
    fetch["cross_idx"], fetch["cross_val"] = tf.identity(cross.indices), tf.identity(cross.values)
    # gradients TensorFlow writes: SparseAddGrad, SparseSliceGrad, SparseSegment*Grad
    w = tf.constant([1.0, 2.0, 3.0, 4.0])
    fetch["grad_add"] = tf.gradients(tf.reduce_sum(s.values * w),
                                     x)[0]
    fetch["grad_slice"] = tf.gradients(tf.reduce_sum(sl.values * 5.0), x)[0]
    fetch["grad_softmax"] = tf.gradients(tf.reduce_sum(tf.sparse.softmax(a).values * w[:3]),
                                         x)[0]
    fetch["grad_mul"] = tf.gradients(tf.reduce_sum((a * dense).values), x)[0]
    table = tf.reshape(tf.tile(x, [4]), [4, 3])
    for kind, fn in (("sum", tf.sparse.segment_sum), ("mean", tf.sparse.segment_mean),
                     ("sqrtn", tf.sparse.segment_sqrt_n)):
        red = fn(table, [3, 0, 3, 1], [0, 0, 1, 1])
        fetch[f"seg_{kind}"] = tf.gradients(tf.reduce_sum(red * w[:2, None] * x), table)[0]
    # ops a TF1 program reaches through tf.raw_ops
    fetch["non_alias_add"] = R.ScatterNdNonAliasingAdd(input=dense, indices=[[1], [0], [1]],
                                                       updates=tf.stack([x, x, x]))
    fetch["slice_update"] = R.TensorStridedSliceUpdate(input=dense, begin=[0, 2], end=[2, 0],
                                                       strides=[1, -2], value=[[7.0, 8.0],
                                                                               [9.0, 6.0]],
                                                       end_mask=2)
    fetch["pstitch"] = R.ParallelDynamicStitch(indices=[[0, 2], [1]],
                                               data=[tf.stack([x, x]), [x * 2.0]])
    key, counter, alg = R.StatelessRandomGetKeyCounterAlg(seed=[7, 11])
    fetch["key"], fetch["counter"], fetch["alg"] = (tf.identity(key), tf.identity(counter),
                                                    tf.identity(alg))
    # RandomPoisson left TensorFlow's GraphDefs at version 25 (RandomPoissonV2 replaced
    # it, on the same kernel): written as V2 here, renamed in the GraphDef below.
    fetch["poisson"] = R.RandomPoissonV2(shape=[4], rate=[2.0, 40.0], seed=5, seed2=6,
                                         dtype=tf.float32, name="poisson_v1")
    # ragged conversions: RaggedTensorToTensor, RaggedTensorToSparse (and the gradient)
    rt = tf.RaggedTensor.from_nested_row_splits(
        tf.concat([x, x * 2.0], 0), [tf.constant([0, 2, 3], tf.int64),
                                     tf.constant([0, 1, 1, 6], tf.int64)], validate=False)
    fetch["rt_dense"] = rt.to_tensor(default_value=-1.0)
    fetch["rt_cut"] = rt.to_tensor(shape=[2, 1, 3])
    rs = rt.to_sparse()
    fetch["rt_sp_idx"], fetch["rt_sp_shape"] = tf.identity(rs.indices), tf.identity(rs.dense_shape)
    fetch["grad_rt"] = tf.gradients(tf.reduce_sum(rt.to_tensor() * 3.0)
                                    + tf.reduce_sum(rs.values * w[1]), x)[0]
    words = tf.RaggedTensor.from_row_splits(tf.as_string(x), tf.constant([0, 1, 3], tf.int64))
    rc = tf.ragged.cross_hashed([tf.constant([["x"], ["y"]]), words], num_buckets=50)
    fetch["rcross_val"], fetch["rcross_splits"] = tf.identity(rc.values), tf.identity(
        rc.row_splits)
    picked = tf.gather(rt, [[1, 0], [1, 1]])
    fetch["rt_gather"] = picked.flat_values
    fetch["rt_gather_splits"] = picked.nested_row_splits[1]
    fetch["grad_rt_gather"] = tf.gradients(tf.reduce_sum(picked.flat_values * 2.0), x)[0]
    # a resource variable: tf.gather_nd -> ResourceGatherNd, scatter_nd_max
    v = tf.Variable([[1.0, 5.0], [3.0, 4.0]], use_resource=True, name="v")
    fetch["gather_nd"] = tf.gather_nd(v, [[1, 0], [0, 1]])
    up = v.scatter_nd_max([[0, 0], [1, 1]], [4.0, 2.0])
    with tf.control_dependencies([up.op]):
        fetch["after_max"] = v.read_value()
    names = {k: tf.identity(t, name="out_" + k).name for k, t in fetch.items()}
    init = tf.global_variables_initializer()

with tf.Session(graph=g) as sess:
    sess.run(init)
    values = sess.run(names, {x: feed_x})
graph_def = g.as_graph_def()
for node in graph_def.node:
    if node.name == "poisson_v1":  # the TF 1.0 form: one dtype for rate and output
        node.op = "RandomPoisson"
        del node.attr["R"]
with open(os.path.join(out, "graph.pb"), "wb") as f:
    f.write(graph_def.SerializeToString())
types = sorted({n.op for n in graph_def.node})
np.savez(os.path.join(out, "expected.npz"), x=feed_x, init=np.array(init.name),
         op_types=np.array(types),  # strings as fixed-width bytes: no pickled objects
         **{k: np.asarray(v).astype("S") if np.asarray(v).dtype == object else np.asarray(v)
            for k, v in values.items()})
print(len(graph_def.node), "nodes;", types)
