"""Small TF 2.15 (`tf.compat.v1`) behaviours: default op names, partitioner edge cases."""

import flowgraph as tf


def test_like_ops_and_sequence_mask_names():
    x = tf.placeholder(tf.float32, [2, 3], name="x")
    names = [tf.zeros_like(x).name, tf.ones_like(x).name, tf.zeros_like(x).name,
             tf.zeros_like(x, name="zz").name, tf.sequence_mask([1, 2], 3).name,
             tf.sequence_mask([1, 2], 3, name="m").name]
    assert names == ["zeros_like:0", "ones_like:0", "zeros_like_1:0", "zz:0",
                     "SequenceMask/Less:0", "m/Less:0"]
    with tf.Session() as sess:
        assert sess.run(tf.sequence_mask([1, 2], 3, dtype=tf.float32)).tolist() == [
            [1.0, 0.0, 0.0], [1.0, 1.0, 0.0]]


def test_constants_of_composite_ops_are_named_inside_their_scope():
    x = tf.placeholder(tf.float32, [2, 3], name="x")
    outs = [tf.diag([1.0, 2.0]), tf.matrix_transpose(x), tf.nn.crelu(x),
            tf.random.poisson(2.0, [3], seed=1),
            tf.tensor_scatter_nd_update(x, [[0, 0]], [5.0]),
            tf.tensor_scatter_nd_add(x, [[0, 0]], [5.0])]
    got = [(o.name, [i.name for i in o.op.inputs]) for o in outs]
    assert got == [  # TF 2.15's names
        ("Diag:0", ["Diag/diagonal:0"]),
        ("matrix_transpose/transpose:0", ["x:0", "matrix_transpose/transpose/perm:0"]),
        ("CRelu/Relu:0", ["CRelu:0"]),
        ("random_poisson/RandomPoissonV2:0",
         ["random_poisson/shape:0", "random_poisson/RandomPoissonV2/rate:0"]),
        ("TensorScatterUpdate:0",
         ["x:0", "TensorScatterUpdate/indices:0", "TensorScatterUpdate/updates:0"]),
        ("TensorScatterAdd:0",
         ["x:0", "TensorScatterAdd/indices:0", "TensorScatterAdd/updates:0"])]
    with tf.Session() as sess:
        crelu = sess.run(outs[2], {x: [[1.0, -2.0, 0.0], [0.5, 0.0, -1.0]]})
    assert crelu.tolist() == [[1.0, 0.0, 0.0, 0.0, 2.0, 0.0], [0.5, 0.0, 0.0, 0.0, 0.0, 1.0]]


def test_min_max_partitioner_never_gives_zero_parts():
    def parts(max_partitions, shape):
        p = tf.min_max_variable_partitioner(max_partitions=max_partitions, min_slice_size=64)
        return p(shape=tf.TensorShape(shape), dtype=tf.float32)

    # TF 2.15's values
    assert [parts(0, [1000, 2]), parts(1, [0, 2]), parts(3, [1000, 2]), parts(3, [0, 2])] \
        == [[1, 1], [1, 1], [3, 1], [1, 1]]
