"""Initializers build TensorFlow's ops and, seeded, give TensorFlow's numbers.

Every expected value and op list below was produced by TensorFlow 2.15
(`tensorflow.compat.v1`, v2 behaviour disabled) running the same program.
"""

import numpy as np
import pytest

import flowgraph as tf

ORTH_A = [[-0.838282, 0.117637, 0.05763], [0.062113, 0.915942, -0.391506],
          [0.182687, 0.379827, 0.90052], [0.509953, -0.054256, -0.180183]]
ORTH_A_RERUN = [[-0.068825, -0.358401, -0.915628], [-0.208307, -0.037229, -0.147703],
                [-0.946309, -0.194628, 0.181171], [-0.237423, 0.912295, -0.327087]]
ORTH_B = [[-0.285811, 0.857574, 0.335133, -0.16828, -0.205541],
          [-0.557984, 0.083346, -0.736836, 0.246344, -0.279456],
          [-0.0144, -0.091016, -0.293646, -0.949496, -0.061135]]
ORTH_KERAS = [[0.212501, 0.144749, -0.86577, 0.429341],
              [-0.122871, -0.47993, -0.472024, -0.729221],
              [0.906628, -0.391129, 0.15824, 0.002226],
              [-0.34318, -0.771838, 0.050952, 0.532821]]
LSTM_RECURRENT = [
    [0.121935, 0.357896, -0.072549, -0.302697, -0.196919, -0.050908, -0.07639, 0.15737,
     0.193029, 0.176373, 0.120968, 0.777935],
    [0.120816, 0.032373, -0.036212, 0.127892, -0.544339, 0.426341, 0.155624, 0.25888,
     -0.264593, -0.569056, 0.008793, 0.058881],
    [-0.369981, -0.259486, 0.519401, -0.087933, 0.239199, -0.134933, 0.305429, -0.060654,
     0.0353, -0.398694, 0.285419, 0.322824]]

WIDE_OPS = [
    ("random_normal/shape", "Const"), ("random_normal/mean", "Const"),
    ("random_normal/stddev", "Const"),
    ("random_normal/RandomStandardNormal", "RandomStandardNormal"),
    ("random_normal/mul", "Mul"), ("random_normal", "AddV2"), ("Qr", "Qr"),
    ("DiagPart", "DiagPart"), ("Sign", "Sign"), ("mul", "Mul"),
    ("matrix_transpose/transpose/perm", "Const"), ("matrix_transpose/transpose", "Transpose"),
    ("Reshape/shape", "Const"), ("Reshape", "Reshape"), ("mul_1/x", "Const"), ("mul_1", "Mul")]


def test_orthogonal_variables_lstm_and_keras_equal_tensorflow():
    with tf.Graph().as_default() as g:
        tf.set_random_seed(3)
        a = tf.get_variable("a", [4, 3], initializer=tf.orthogonal_initializer())
        b = tf.get_variable("b", [3, 5], initializer=tf.orthogonal_initializer(seed=7))
        c = tf.Variable(tf.keras.initializers.Orthogonal(seed=2)([4, 4]))
        lstm = tf.keras.layers.LSTM(3, kernel_initializer="glorot_uniform")
        lstm(tf.zeros([1, 2, 2]))  # recurrent_initializer='orthogonal' on a [3, 12] kernel
        types = [op.type for op in g.get_operations() if op.name.startswith("a/")][:12]
        assert types == ["Const", "Const", "Const", "RandomStandardNormal", "Mul", "AddV2",
                         "Qr", "DiagPart", "Sign", "Mul", "Const", "Reshape"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for var, want in ((a, ORTH_A), (b, ORTH_B), (c, ORTH_KERAS),
                              (lstm.weights[1], LSTM_RECURRENT)):
                np.testing.assert_allclose(sess.run(var), want, atol=2e-6)
            # The matrix is drawn in the graph: running the initializer again draws anew.
            sess.run(a.initializer)
            np.testing.assert_allclose(sess.run(a), ORTH_A_RERUN, atol=2e-6)


def test_orthogonal_graph_of_a_wide_shape_is_tensorflows():
    with tf.Graph().as_default() as g:
        tf.set_random_seed(3)
        q = tf.orthogonal_initializer(gain=2.0, seed=5)([2, 3])
        assert [(op.name, op.type) for op in g.get_operations()] == WIDE_OPS
        value = tf.Session().run(q)
    np.testing.assert_allclose(value @ value.T, 4 * np.eye(2), atol=1e-5)


def test_orthogonal_rank3_gain_and_float64_equal_tensorflow():
    with tf.Graph().as_default() as g:
        x = tf.orthogonal_initializer(gain=0.5, seed=5)([2, 2, 3])
        y = tf.orthogonal_initializer(seed=5)([3, 2], dtype=tf.float64)
        # Four rows, three columns: tall, so no Transpose.
        assert "Transpose" not in {op.type for op in g.get_operations()}
        assert y.dtype == tf.float64
        sess = tf.Session()
        np.testing.assert_allclose(
            sess.run(x),
            [[[-0.255819, -0.327574, -0.221882], [-0.10757, 0.139007, 0.227445]],
             [[-0.144171, -0.233207, 0.381633], [-0.390128, 0.262654, -0.05825]]], atol=2e-6)
        np.testing.assert_allclose(
            sess.run(y), [[-0.339958262, -0.772070299], [-0.547174761, 0.626766595],
                          [-0.764871336, -0.105219246]], atol=1e-8)


@pytest.mark.parametrize("shape", [[], [3]])
def test_orthogonal_needs_two_dimensions(shape):
    # TF: ValueError "The tensor to initialize, specified by argument `shape` must be at
    # least two-dimensional. Received shape=[3]"
    with pytest.raises(ValueError, match=r"at least two-dimensional\. Received shape="):
        tf.orthogonal_initializer()(shape)


# (initializer, shape, TF's first six values, TF's op types); graph seed 11, op seed 4.
SURVEY = {
    "variance_scaling_fan_in_truncated": (
        lambda: tf.initializers.variance_scaling(2.0, "fan_in", "truncated_normal", seed=4),
        [3, 4], [0.793076, 0.214796, -0.563349, -0.347386, 0.753679, -0.33144],
        ["Const", "Const", "Const", "TruncatedNormal", "Mul", "AddV2"]),
    "variance_scaling_fan_out_untruncated": (
        lambda: tf.initializers.variance_scaling(2.0, "fan_out", "untruncated_normal", seed=4),
        [3, 4], [0.604148, 0.163627, -0.429147, -0.264631, 0.849091, -1.941166],
        ["Const", "Const", "Const", "RandomStandardNormal", "Mul", "AddV2"]),
    "variance_scaling_fan_avg_uniform_conv": (
        lambda: tf.initializers.variance_scaling(2.0, "fan_avg", "uniform", seed=4),
        [2, 2, 3, 4], [0.230256, -0.382443, 0.360765, 0.212181, -0.639949, -0.085924],
        ["Const", "Const", "Const", "RandomUniform", "Sub", "Mul", "AddV2"]),
    "uniform_unit_scaling": (
        lambda: tf.initializers.uniform_unit_scaling(1.5, seed=4),
        [3, 4], [0.527582, -0.876287, 0.826617, 0.486168, -1.466307, -0.196877],
        ["Const", "Const", "Const", "RandomUniform", "Sub", "Mul", "AddV2"]),
    "glorot_normal": (
        lambda: tf.initializers.glorot_normal(seed=4),
        [3, 4], [0.51919, 0.140617, -0.368799, -0.227418, 0.493398, -0.216978],
        ["Const", "Const", "Const", "TruncatedNormal", "Mul", "AddV2"]),
    "lecun_uniform": (
        lambda: tf.initializers.lecun_uniform(seed=4),
        [3, 4], [0.351722, -0.584191, 0.551078, 0.324112, -0.977538, -0.131251],
        ["Const", "Const", "Const", "RandomUniform", "Sub", "Mul", "AddV2"]),
    "keras_truncated_normal": (
        lambda: tf.keras.initializers.TruncatedNormal(seed=4),
        [3, 4], [0.04272, 0.01157, -0.030345, -0.018712, 0.040598, -0.017853],
        ["Const", "Const", "Const", "TruncatedNormal", "Mul", "AddV2"]),
}


@pytest.mark.parametrize("case", sorted(SURVEY))
def test_random_initializers_equal_tensorflow(case):
    make, shape, want, types = SURVEY[case]
    with tf.Graph().as_default() as g:
        tf.set_random_seed(11)
        value = tf.Session().run(make()(shape))
        assert [op.type for op in g.get_operations()] == types
    assert value.shape == tuple(shape)
    np.testing.assert_allclose(value.ravel()[:6], want, atol=2e-6)


def test_keras_recurrent_kernels_default_orthogonal_equal_tensorflow():
    with tf.Graph().as_default():
        tf.set_random_seed(5)
        gru = tf.keras.layers.GRU(2)
        gru(tf.zeros([1, 2, 3]))
        rnn = tf.keras.layers.SimpleRNN(2)
        rnn(tf.zeros([1, 2, 3]))
        conv = tf.keras.layers.ConvLSTM2D(2, 2)  # a rank-4 kernel, flattened to [8, 8]
        conv(tf.zeros([1, 2, 3, 3, 1]))
        want = {
            "gru/gru_cell/recurrent_kernel:0": ([2, 6], [
                -0.598384, -0.07367, -0.13552, 0.002892, -0.69453, -0.368459]),
            "simple_rnn/simple_rnn_cell/recurrent_kernel:0": ([2, 2], [
                -0.947589, 0.319493, 0.319493, 0.947589]),
            "conv_lstm2d/recurrent_kernel:0": ([2, 2, 2, 8], [
                -0.588441, 0.186226, -0.446871, -0.475317, -0.197853, 0.238671]),
        }
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for layer in (gru, rnn, conv):
                kernel = layer.weights[1]
                shape, values = want[kernel.name]
                assert kernel.shape.as_list() == shape
                np.testing.assert_allclose(sess.run(kernel).ravel()[:len(values)], values,
                                           atol=3e-6)


def test_partitioned_variables_scale_by_the_full_shape_as_tensorflow():
    seen = []

    def init(shape, dtype=None, partition_info=None):
        p = partition_info
        seen.append((list(shape), p.full_shape, p.var_offset, p.single_offset(shape),
                     p.single_slice_dim(shape)))
        return tf.zeros(shape, dtype)

    with tf.Graph().as_default():
        tf.set_random_seed(2)
        part = tf.fixed_size_partitioner(2)
        tf.get_variable("x", [7, 4], initializer=init, partitioner=tf.fixed_size_partitioner(3))
        tf.get_variable("y", [2, 9], initializer=init,
                        partitioner=tf.fixed_size_partitioner(2, axis=1))
        assert seen == [([3, 4], [7, 4], [0, 0], 0, 0), ([2, 4], [7, 4], [3, 0], 3, 0),
                        ([2, 4], [7, 4], [5, 0], 5, 0), ([2, 5], [2, 9], [0, 0], 0, 1),
                        ([2, 4], [2, 9], [0, 5], 5, 1)]
        u = tf.get_variable("u", [6, 4], partitioner=part,
                            initializer=tf.uniform_unit_scaling_initializer(seed=1))
        v = tf.get_variable("v", [6, 4], partitioner=part, initializer=(
            tf.variance_scaling_initializer(seed=1, distribution="uniform")))
        o = tf.get_variable("o", [6, 4], partitioner=part,
                            initializer=tf.orthogonal_initializer(seed=1))
        g = tf.get_variable("g", [6, 4], partitioner=part)  # glorot_uniform by default
        h = tf.get_variable("h", [3, 4, 6], initializer=tf.initializers.he_normal(seed=3),
                            partitioner=tf.fixed_size_partitioner(3, axis=2))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got = {k: sess.run(tf.convert_to_tensor(w)).ravel()[:8]
                   for k, w in dict(u=u, v=v, o=o, g=g, h=h).items()}
    unit = [-0.369936, -0.175071, 0.094225, -0.696922, 0.524232, -0.104103, 0.464745,
            -0.599839]
    np.testing.assert_allclose(got["u"], unit, atol=2e-6)  # sqrt(3 / 6), not sqrt(3 / 3)
    np.testing.assert_allclose(got["v"], unit, atol=2e-6)
    np.testing.assert_allclose(got["o"], [0.65865, 0.590203, 0.155914, -0.439922, -0.61982,
                                          0.555362, 0.554268, 0.013523], atol=2e-6)
    np.testing.assert_allclose(got["g"], [0.509784, 0.166417, -0.528711, 0.067503, 0.442408,
                                          -0.377142, -0.079368, 0.051108], atol=2e-6)
    np.testing.assert_allclose(got["h"], [-0.660725, 0.287512, -0.660725, 0.287512,
                                          -0.660725, 0.287512, -0.56864, 0.895405], atol=2e-6)


def test_partition_info_rejects_shards_that_do_not_fit():
    from flowgraph.ops.partitioned_variables import PartitionInfo

    info = PartitionInfo([10, 4], [7, 0])
    assert (info.single_slice_dim([3, 4]), info.single_offset([3, 4])) == (0, 7)
    assert PartitionInfo([2, 3], [0, 0]).single_slice_dim([2, 3]) is None
    with pytest.raises(ValueError, match="does not fit in the full shape"):
        info.single_slice_dim([4, 4])
    with pytest.raises(ValueError, match="more than one axis is sliced"):
        PartitionInfo([10, 4], [0, 0]).single_slice_dim([3, 2])
    with pytest.raises(ValueError, match="rank 2"):
        info.single_slice_dim([3])
