"""Four known fidelity gaps, each settled against TensorFlow 2.15 (tf.compat.v1, graph
mode) with the tf-oracle; TF's values are inline.

1. Seeded random ops in ``tf.while_loop`` / ``map_fn`` / ``scan`` / ``foldl`` bodies: each
   execution of the op takes the next counter block of its stream, so iteration ``i`` of
   a loop that runs its iterations in order (``parallel_iterations=1``) draws the
   ``i``-th values, the next ``Session.run`` continues, a new session restarts. With more
   parallel iterations TensorFlow's assignment of draws to iterations changes from run to
   run (the oracle showed ``[0.589, 0.566, 0.023]`` and ``[0.023, 0.566, 0.589]`` for the
   same program), so there only the values drawn are compared. In ``dynamic_rnn`` (session
   22) TF's order is steady: the iterations one ``parallel_iterations`` window starts
   together take their draws newest first, window after window; the executor runs such
   ops in that order (``FLAG_IN_ORDER``).
2. ``tf.get_static_value`` folds only the op types TensorFlow's Python folds (not
   ``Mul``/``Add``/``Sub``/``Neg``/``StridedSlice``/...), makes what it folded unfeedable,
   passes non-tensors through; ``Dimension``/``TensorShape`` take no floats or strings.
3. ``tf.contrib.legacy_seq2seq``'s embedding and attention models and
   ``model_with_buckets``. TF 2.15 has no ``tf.contrib``: the variable names and shapes
   are TF 1.x's (its translation checkpoints'); the output values are TF 2.15's for the
   same computation written out with ``tf.compat.v1`` cells and ops (seeded
   initializers), which the library reproduces with ``feed_previous`` a bool or a tensor.
4. Keras wrappers: ``Bidirectional``, ``TimeDistributed``, a user's ``Wrapper`` subclass,
   nested ``Sequential``: weight names and order, ``get_weight_paths``, HDF5 layout,
   TensorFlow checkpoint keys (``forward_layer/cell/...``, ``layer/...``), files TF wrote
   (tests/data/keras_wrappers) read here.
"""

import importlib.util
import os

import h5py
import numpy as np
import pytest

import flowgraph as tf

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "data", "keras_wrappers")


# -- 1. seeded random ops in loop bodies -------------------------------------------------------
def _loop_program():
    tf.set_random_seed(42)
    one = {"parallel_iterations": 1}

    def body(i, acc):
        a = tf.random_uniform([2])  # graph seed only
        b = tf.truncated_normal([1], seed=4)
        c = tf.random_uniform([], 0, 10, dtype=tf.int32, seed=8)
        d = tf.nn.dropout(tf.ones([3]), keep_prob=0.5, seed=9)
        e = tf.random_normal(tf.reshape(i + 1, [1]), seed=2)  # shape from the loop
        v = tf.concat([a, b, tf.cast(tf.reshape(c, [1]), tf.float32), d,
                       tf.reduce_sum(e, keepdims=True)], 0)
        return i + 1, acc.write(i, v)

    out = tf.while_loop(lambda i, a: i < 3, body, [0, tf.TensorArray(tf.float32, size=3)],
                        **one)[1].stack()

    def outer(j, acc):
        def inner(k, s):
            return k + 1, s + tf.random_uniform([], seed=21)
        _, s = tf.while_loop(lambda k, s: k < 2, inner, [0, 0.0], **one)
        return j + 1, acc.write(j, s)

    nest = tf.while_loop(lambda j, a: j < 3, outer,
                         [0, tf.TensorArray(tf.float32, size=3)], **one)[1].stack()
    shuffle = tf.map_fn(lambda x: tf.random_shuffle(tf.range(4)) + tf.cast(x, tf.int32),
                        tf.zeros([2]), dtype=tf.int32, **one)
    multi = tf.map_fn(lambda x: tf.squeeze(tf.multinomial(tf.log([[0.2, 0.3, 0.5]]), 4,
                                                          seed=6)),
                      tf.zeros([2]), dtype=tf.int64, **one)
    scan = tf.scan(lambda a, x: a + tf.random_normal([], seed=13), tf.zeros([3]),
                   initializer=0.0, **one)
    fold = tf.foldl(lambda a, x: a * 2 + tf.random_uniform([], seed=14), tf.zeros([3]),
                    initializer=0.0, **one)
    return out, nest, shuffle, multi, scan, fold


TF_LOOP = [[0.835459, 0.916297, -0.56449, 8, 2, 0, 2, 0.119354],
           [0.952703, 0.231379, -0.699042, 4, 0, 2, 2, -2.107662],
           [0.117243, 0.461172, 0.055456, 7, 2, 0, 2, -3.909698]]
TF_LOOP_AGAIN = [[0.77225, 0.450619, -0.730149, 9, 0, 2, 2, -1.201031],
                 [0.741759, 0.148024, -0.593932, 9, 0, 0, 0, 0.990578],
                 [0.141901, 0.308705, 0.233828, 6, 0, 0, 0, -1.883366]]


def test_seeded_random_ops_in_sequential_loops_draw_tf_values():
    with tf.Graph().as_default():
        out, nest, shuffle, multi, scan, fold = _loop_program()
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(out), TF_LOOP, atol=2e-6)
            np.testing.assert_allclose(sess.run(out), TF_LOOP_AGAIN, atol=2e-6)
            np.testing.assert_allclose(sess.run(nest), [0.415785, 1.215937, 0.311847],
                                       atol=2e-6)
            assert sess.run(shuffle).tolist() == [[1, 3, 2, 0], [1, 2, 0, 3]]
            assert sess.run(multi).tolist() == [[2, 2, 1, 1], [2, 2, 0, 0]]
            np.testing.assert_allclose(sess.run(scan), [1.169842, 0.879323, 1.520314],
                                       atol=2e-6)
            np.testing.assert_allclose(sess.run(fold), 3.2619421, atol=2e-6)
        with tf.Session() as sess:  # a new session restarts every stream
            np.testing.assert_allclose(sess.run(out)[0], TF_LOOP[0], atol=2e-6)


def test_parallel_loop_iterations_draw_tf_values_in_some_order():
    with tf.Graph().as_default():
        tf.set_random_seed(7)

        def body(i, acc):
            return i + 1, acc.write(i, tf.random_uniform([], seed=11))

        w = tf.while_loop(lambda i, a: i < 5, body,
                          [0, tf.TensorArray(tf.float32, size=5)])[1].stack()
        m = tf.map_fn(lambda x: x + tf.random_uniform([], seed=11), tf.zeros([3]))
        with tf.Session() as sess:
            np.testing.assert_allclose(
                np.sort(sess.run(w)), [0.023186, 0.393028, 0.565522, 0.589026, 0.779155],
                atol=2e-6)
        with tf.Session() as sess:
            np.testing.assert_allclose(np.sort(sess.run(m)), [0.023186, 0.565522, 0.589026],
                                       atol=2e-6)
            np.testing.assert_allclose(np.sort(sess.run(m)), [0.393028, 0.779155, 0.85488],
                                       atol=2e-6)


def _first_draws(n):
    """The first `n` values of ``random_uniform([1, 1], seed=5)`` under graph seed 3."""
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        r = tf.random_uniform([1, 1], seed=5)
        with tf.Session() as sess:
            return [round(float(sess.run(r).ravel()[0]), 4) for _ in range(n)]


@pytest.mark.parametrize("steps, window, draw_of_step", [
    # TF 2.15 (oracle, two runs each): the iterations one parallel_iterations window lets
    # start together take their draws newest first, window after window.
    (8, 32, [7, 6, 5, 4, 3, 2, 1, 0]),
    (12, 4, [3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8]),
    (40, 32, list(range(31, -1, -1)) + list(range(39, 31, -1))),
    (5, 1, [0, 1, 2, 3, 4]),
])
def test_dynamic_rnn_random_op_per_step_takes_tf_draw_order(steps, window, draw_of_step):
    class Draw(tf.nn.rnn_cell.RNNCell):
        state_size = 1
        output_size = 1

        def call(self, x, s):
            return tf.random_uniform([1, 1], seed=5) + 0 * s, s

    stream = _first_draws(2 * steps)
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        out, _ = tf.nn.dynamic_rnn(Draw(), tf.ones([1, steps, 3]), dtype=tf.float32,
                                   parallel_iterations=window)
        with tf.Session() as sess:
            first, second = sess.run(out).ravel(), sess.run(out).ravel()
    np.testing.assert_allclose(first, [stream[k] for k in draw_of_step], atol=1e-4)
    np.testing.assert_allclose(second, [stream[steps + k] for k in draw_of_step], atol=1e-4)
    if steps == 8:  # TF 2.15's printed values
        np.testing.assert_allclose(
            first, [0.0543, 0.6128, 0.1366, 0.7355, 0.3152, 0.9487, 0.9253, 0.3977], atol=1e-4)


def test_dropout_wrapper_in_dynamic_rnn_and_loop_draws_match_tf():
    tf.set_random_seed(7)
    x = tf.constant(np.linspace(-1, 1, 36).reshape(2, 6, 3).astype(np.float32))
    cell = tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.BasicRNNCell(4), output_keep_prob=0.5,
                                         seed=11)
    out, _ = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
    cell2 = tf.nn.rnn_cell.DropoutWrapper(
        tf.nn.rnn_cell.GRUCell(3), input_keep_prob=0.7, state_keep_prob=0.6,
        variational_recurrent=True, input_size=4, dtype=tf.float32, seed=5)
    out2, _ = tf.nn.dynamic_rnn(cell2, out, dtype=tf.float32, scope="second")

    def body(i, acc):
        return i + 1, acc + tf.random_normal([2], seed=3) * tf.cast(i + 1, tf.float32)

    _, acc = tf.while_loop(lambda i, a: i < 5, body, [0, tf.zeros([2])])
    tf_values = [  # TF 2.15, two runs of one session
        ([[0.0, 0.0, 0.0, 0.1433, 0.2772, 0.0], [0.0, -0.3774, 0.0, 0.0, -0.6977, -0.8423]],
         [[0.1898, 0.376, 0.6491, 0.3599, 0.1042, 0.0587],
          [0.0119, 0.051, -0.2669, -0.2536, -0.4991, -0.7365]], [6.5325, -13.8975]),
        ([[0.0, 0.2325, 0.0643, 0.1433, 0.0, 0.0], [0.0, 0.0, -0.4809, 0.0, -0.6977, 0.0]],
         [[-0.1798, -0.059, 0.2176, 0.1608, 0.106, -0.0506],
          [0.0, 0.0343, 0.0635, -0.3986, 0.1259, 0.0725]], [-0.8007, 5.1723])]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for want in tf_values:
            a, b, c = sess.run([out, out2, acc])
            np.testing.assert_allclose(a[:, :, 0], want[0], atol=2e-4)
            np.testing.assert_allclose(b[:, :, 0], want[1], atol=2e-4)
            np.testing.assert_allclose(c, want[2], atol=2e-3)


# -- 2. get_static_value, Dimension, TensorShape -----------------------------------------------
def test_get_static_value_folds_what_tf_folds():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32, [None, 3, 4])
        q = tf.placeholder(tf.float32, [2, 3])
        i = tf.placeholder(tf.int32, [])
        s, sq = tf.shape(p), tf.shape(q)
        folded = {  # TF's values
            "shape": (sq, [2, 3]), "size": (tf.size(q), 6), "rank": (tf.rank(p), 3),
            "concat": (tf.concat([sq, [7]], 0), [2, 3, 7]),
            "cast": (tf.cast(sq, tf.float32), [2.0, 3.0]),
            "fill": (tf.fill([2], 3), [3, 3]), "fill_shape": (tf.fill(sq, 1.0), np.ones((2, 3))),
            "range": (tf.range(3), [0, 1, 2]), "range_f": (tf.range(0.0, 1.0, 0.5), [0.0, 0.5]),
            "identity": (tf.identity(sq), [2, 3]), "zeros": (tf.zeros([2]), [0.0, 0.0]),
            "ones_like": (tf.ones_like(sq), [1, 1]), "unpack": (tf.unstack(sq)[0], 2),
            "equal": (tf.equal(sq, 2), [True, False]),
            "not_equal": (tf.not_equal(tf.constant(1), 2), True),
            "cast_bool": (tf.cast(sq, tf.bool), [True, True]),
            "stop_gradient": (tf.stop_gradient(tf.constant(2)), 2),
            "pack": (tf.stack([tf.constant(1), tf.constant(2)]), [1, 2]),
            "concat_axis1": (tf.concat([tf.constant([[1]]), tf.constant([[2]])], 1), [[1, 2]]),
        }
        for name, (t, want) in folded.items():
            got = tf.get_static_value(t)
            assert got is not None and np.asarray(got).tolist() == np.asarray(want).tolist(), \
                name
        assert tf.get_static_value(tf.cast(sq, tf.float32)).dtype == np.float32
        assert tf.get_static_value(tf.size(q)).dtype == np.int32
        not_folded = {
            "shape_partial": s, "mul": sq * 2, "mul_elems": sq[0] * sq[1], "sub": sq - 1,
            "neg": -sq, "add": sq + 1, "pack_slices": tf.stack([sq[0], 5]),
            "pack_placeholder": tf.stack([i, 2]), "concat_partial": tf.concat([s, [7]], 0),
            "strided_slice": sq[1:], "slice_index": s[1], "slice_reverse": sq[::-1],
            "cast_partial": tf.cast(s, tf.int64), "fill_placeholder": tf.fill([2], i),
            "reshape": tf.reshape(tf.constant([1, 2, 3, 4]), [2, 2]), "floordiv": sq // 2,
            "realdiv": tf.constant(4.0) / 2.0, "expand_dims": tf.expand_dims(sq, 0),
            "squeeze": tf.squeeze(tf.constant([[1, 2]])), "maximum": tf.maximum(sq, 3),
            "prod": tf.reduce_prod(sq), "gather": tf.gather(sq, [1, 0]),
            "shape_n": tf.shape_n([q, q])[1], "tile": tf.tile(sq, [2]), "mod": sq % 2,
            "with_default": tf.placeholder_with_default(tf.constant([1, 2]), [2]),
            "pack_axis1": tf.stack([tf.constant([1, 2]), tf.constant([3, 4])], axis=1),
            "unpack_axis1": tf.unstack(tf.constant([[1, 2], [3, 4]]), axis=1)[0],
            "variable": tf.Variable(1.0), "sparse": tf.SparseTensor([[0]], [1.0], [2]),
        }
        for name, t in not_folded.items():
            assert tf.get_static_value(t) is None, name
        partial = tf.get_static_value(tf.stack([s[0], s[1]]), partial=True)
        assert partial.tolist() == [None, None]
        # Not a tensor: returned as it is.
        assert tf.get_static_value(3) == 3 and type(tf.get_static_value(3)) is int
        assert tf.get_static_value([1, 2]) == [1, 2]
        arr = np.array([1.0])
        assert tf.get_static_value(arr) is arr
        assert tf.contrib.util.constant_value(sq).tolist() == [2, 3]


def test_what_get_static_value_folds_may_not_be_fed():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32, [2, 3])
        c = tf.cast(tf.shape(p), tf.float32)
        d = tf.shape(p) * 2  # not folded: stays feedable
        graph = tf.get_default_graph()
        assert graph.is_feedable(c)
        tf.get_static_value(c)
        tf.get_static_value(d)
        assert not graph.is_feedable(c) and not graph.is_feedable(c.op.inputs[0])
        assert graph.is_feedable(d)
        with tf.Session() as sess:
            with pytest.raises(ValueError, match=r"Tensor Cast:0 may not be fed\."):
                sess.run(c * 1, {c: [1.0, 1.0]})
            assert sess.run(d, {d: [5, 5]}).tolist() == [5, 5]


_DIM_MSG = "Dimension value must be integer or None or have an __index__ method"


def test_dimension_and_tensorshape_values_as_tf():
    D = tf.Dimension
    assert D(np.int64(3)).value == 3 and type(D(np.int64(3)).value) is int
    assert D(np.int32(3)).value == 3 and D(np.array(3)).value == 3
    assert D(None).value is None and D(D(5)).value == 5 and D(2 ** 40).value == 2 ** 40
    assert D(True).value is True  # TF keeps a bool as it is
    for bad, shown in ((2.0, "'2.0' with type '<class 'float'>'"),
                       (2.5, "'2.5' with type '<class 'float'>'"),
                       ("3", "''3'' with type '<class 'str'>'"),
                       ([3], "'[3]' with type '<class 'list'>'"),
                       (float("nan"), "'nan' with type '<class 'float'>'")):
        with pytest.raises(TypeError) as e:
            D(bad)
        assert str(e.value) == f"{_DIM_MSG}, got value {shown}"
    with pytest.raises(TypeError, match=_DIM_MSG):
        D(np.float32(4.0))
    with pytest.raises(ValueError, match="Dimension -1 must be >= 0"):
        tf.TensorShape([-1, 2])
    with pytest.raises(TypeError, match=_DIM_MSG):
        tf.TensorShape([2.0, 3.0])
    with pytest.raises(TypeError, match=r"^Failed to convert 'array\(\[2\., 3\.\]\)' to a "
                                        r"shape: .*could not be converted to a dimension\. A "
                                        r"shape should either be single dimension"):
        tf.TensorShape(np.array([2.0, 3.0]))
    with pytest.raises(TypeError, match=f"^Error converting shape to a TensorShape: "
                                        f"{_DIM_MSG}"):
        tf.placeholder(tf.float32, [2.0, None])
    assert tf.TensorShape(np.array([2, 3])).as_list() == [2, 3]
    assert tf.TensorShape([True]).as_list() == [True]
    assert tf.TensorShape(np.int64(4)).as_list() == [4]
    assert tf.zeros([2.0, 3]).shape.as_list() == [2, 3]  # a tensor, cast: fine in TF too
    # Arithmetic and comparison with floats: not Dimensions, so TF's Python fallbacks.
    assert (D(3) == 3.0) is False
    with pytest.raises(TypeError, match="unsupported operand type"):
        D(3) * 2.0
    with pytest.raises(TypeError, match=r"^unsupported operand type\(s\) for /: 'Dimension' "
                                        r"and 'int', please use // instead$"):
        D(7) / 2
    assert (D(7) // 2).value == 3
    with pytest.raises(TypeError):
        int(D(None))


# -- 3. legacy_seq2seq --------------------------------------------------------------------------
_EAS = "embedding_attention_seq2seq/"
_DEC = _EAS + "embedding_attention_decoder/attention_decoder/"
_GRU = [("gru_cell/gates/kernel", None), ("gru_cell/gates/bias", [8]),
        ("gru_cell/candidate/kernel", None), ("gru_cell/candidate/bias", [4])]
TF1_EAS_VARIABLES = [  # TF 1.x's, GRUCell(4), 5 -> 6 symbols, embeddings of 3
    (_EAS + "rnn/embedding_wrapper/embedding", [5, 3]),
    (_EAS + "rnn/embedding_wrapper/gru_cell/gates/kernel", [7, 8]),
    (_EAS + "rnn/embedding_wrapper/gru_cell/gates/bias", [8]),
    (_EAS + "rnn/embedding_wrapper/gru_cell/candidate/kernel", [7, 4]),
    (_EAS + "rnn/embedding_wrapper/gru_cell/candidate/bias", [4]),
    (_EAS + "embedding_attention_decoder/embedding", [6, 3]),
    (_DEC + "AttnW_0", [1, 1, 4, 4]), (_DEC + "AttnV_0", [4]),
    (_DEC + "kernel", [7, 3]), (_DEC + "bias", [3]),
    (_DEC + "output_projection_wrapper/gru_cell/gates/kernel", [7, 8]),
    (_DEC + "output_projection_wrapper/gru_cell/gates/bias", [8]),
    (_DEC + "output_projection_wrapper/gru_cell/candidate/kernel", [7, 4]),
    (_DEC + "output_projection_wrapper/gru_cell/candidate/bias", [4]),
    (_DEC + "output_projection_wrapper/kernel", [4, 6]),
    (_DEC + "output_projection_wrapper/bias", [6]),
    (_DEC + "Attention_0/kernel", [4, 4]), (_DEC + "Attention_0/bias", [4]),
    (_DEC + "AttnOutputProjection/kernel", [10, 6]), (_DEC + "AttnOutputProjection/bias", [6]),
]

# TF 2.15: outputs[0], outputs[1] (2 x 6 each) and the state (2 x 4), flattened.
TF_EAS = {
    False: [0.01718, -0.00158, 0.00606, -0.00376, -0.01122, 0.00723, 0.01723, 0.02570,
            -0.03721, 0.00665, -0.02728, 0.01030, 0.00735, -0.00982, 0.00647, -0.00868,
            -0.00128, 0.00810, 0.00573, 0.00989, -0.03597, 0.00313, -0.01329, 0.01014,
            0.01663, -0.01174, 0.01071, 0.02322, -0.00576, 0.06593, 0.01961, -0.04980],
    True: [0.01718, -0.00158, 0.00606, -0.00376, -0.01122, 0.00723, 0.01723, 0.02570,
           -0.03721, 0.00665, -0.02728, 0.01030, 0.00851, -0.00260, 0.00586, -0.01111,
           -0.00406, 0.00858, 0.00573, 0.00989, -0.03597, 0.00313, -0.01329, 0.01014,
           0.03353, -0.00514, 0.00592, 0.03815, -0.00576, 0.06593, 0.01961, -0.04980],
}


def test_embedding_attention_seq2seq_variables_as_tf1():
    with tf.Graph().as_default():
        enc = [tf.placeholder(tf.int32, [None]) for _ in range(3)]
        dec = [tf.placeholder(tf.int32, [None]) for _ in range(2)]
        fp = tf.placeholder(tf.bool, [])
        outs, state = tf.contrib.legacy_seq2seq.embedding_attention_seq2seq(
            enc, dec, tf.nn.rnn_cell.GRUCell(4), 5, 6, 3, feed_previous=fp)
        got = [(v.op.name, v.shape.as_list()) for v in tf.global_variables()]
        assert got == TF1_EAS_VARIABLES  # one set for both decoders
        assert len(outs) == 2 and outs[0].shape.as_list() == [None, 6]
        assert state.shape.as_list() == [None, 4]


@pytest.mark.parametrize("feed_previous", [False, True])
@pytest.mark.parametrize("as_tensor", [False, True])
def test_embedding_attention_seq2seq_values_as_tf(feed_previous, as_tensor):
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        enc = [tf.constant(v, tf.int32) for v in ([1, 4], [2, 0], [3, 3])]
        dec = [tf.constant(v, tf.int32) for v in ([0, 5], [2, 1])]
        fp = tf.constant(feed_previous) if as_tensor else feed_previous
        init = tf.random_uniform_initializer(-0.5, 0.5, seed=3)
        with tf.variable_scope("m", initializer=init):
            outs, state = tf.contrib.legacy_seq2seq.embedding_attention_seq2seq(
                enc, dec, tf.nn.rnn_cell.GRUCell(4), 5, 6, 3, feed_previous=fp,
                scope=tf.get_variable_scope())
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            o, s = sess.run([outs, state])
        got = np.concatenate([x.ravel() for x in o] + [s.ravel()])
        np.testing.assert_allclose(got, TF_EAS[feed_previous], atol=2e-5)


def test_embedding_rnn_seq2seq_and_decoders_variables_as_tf1():
    S = tf.contrib.legacy_seq2seq
    with tf.Graph().as_default():
        enc = [tf.placeholder(tf.int32, [None]) for _ in range(3)]
        dec = [tf.placeholder(tf.int32, [None]) for _ in range(2)]
        cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicLSTMCell(4) for _ in range(2)])
        outs, state = S.embedding_rnn_seq2seq(enc, dec, cell, 5, 6, 3, feed_previous=True)
        e, d = "embedding_rnn_seq2seq/rnn/embedding_wrapper/", \
            "embedding_rnn_seq2seq/embedding_rnn_decoder/"
        assert [(v.op.name, v.shape.as_list()) for v in tf.global_variables()] == [
            (e + "embedding", [5, 3]),
            (e + "multi_rnn_cell/cell_0/basic_lstm_cell/kernel", [7, 16]),
            (e + "multi_rnn_cell/cell_0/basic_lstm_cell/bias", [16]),
            (e + "multi_rnn_cell/cell_1/basic_lstm_cell/kernel", [8, 16]),
            (e + "multi_rnn_cell/cell_1/basic_lstm_cell/bias", [16]),
            (d + "embedding", [6, 3]),
            (d + "rnn_decoder/output_projection_wrapper/multi_rnn_cell/cell_0/basic_lstm_cell/"
                 "kernel", [7, 16]),
            (d + "rnn_decoder/output_projection_wrapper/multi_rnn_cell/cell_0/basic_lstm_cell/"
                 "bias", [16]),
            (d + "rnn_decoder/output_projection_wrapper/multi_rnn_cell/cell_1/basic_lstm_cell/"
                 "kernel", [8, 16]),
            (d + "rnn_decoder/output_projection_wrapper/multi_rnn_cell/cell_1/basic_lstm_cell/"
                 "bias", [16]),
            (d + "rnn_decoder/output_projection_wrapper/kernel", [4, 6]),
            (d + "rnn_decoder/output_projection_wrapper/bias", [6])]
        assert len(outs) == 2 and outs[1].shape.as_list() == [None, 6]
        assert len(state) == 2 and state[0].c.shape.as_list() == [None, 4]
    with tf.Graph().as_default():  # an output projection of one's own: no wrapper
        att = tf.zeros([2, 5, 4])
        w = tf.get_variable("proj_w", [4, 7])
        b = tf.get_variable("proj_b", [7])
        dec = [tf.zeros([2], tf.int32)] * 3
        outs, _ = S.embedding_attention_decoder(
            dec, tf.zeros([2, 4]), att, tf.nn.rnn_cell.GRUCell(4), 7, 3, num_heads=2,
            output_projection=(w, b), feed_previous=True)
        names = {v.op.name: v.shape.as_list() for v in tf.global_variables()}
        a = "embedding_attention_decoder/attention_decoder/"
        assert names[a + "AttnW_1"] == [1, 1, 4, 4] and names[a + "kernel"] == [11, 3]
        assert names[a + "AttnOutputProjection/kernel"] == [12, 4]
        assert names["embedding_attention_decoder/embedding"] == [7, 3]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(outs)[2].shape == (2, 4)


def test_attention_decoder_errors():
    S = tf.contrib.legacy_seq2seq
    cell = tf.nn.rnn_cell.GRUCell(4)
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Must provide at least 1 input"):
            S.attention_decoder([], tf.zeros([2, 4]), tf.zeros([2, 3, 4]), cell)
        with pytest.raises(ValueError, match="With less than 1 heads"):
            S.attention_decoder([tf.zeros([2, 3])], tf.zeros([2, 4]), tf.zeros([2, 3, 4]),
                                cell, num_heads=0)
        with pytest.raises(ValueError, match=r"Shape\[2\] of attention_states must be known"):
            S.attention_decoder([tf.zeros([2, 3])], tf.zeros([2, 4]),
                                tf.placeholder(tf.float32, [2, 3, None]), cell)


def test_model_with_buckets_shares_variables_and_losses_match_numpy():
    S = tf.contrib.legacy_seq2seq
    buckets = [(2, 2), (3, 3)]
    rs = np.random.RandomState(0)
    with tf.Graph().as_default():
        enc = [tf.constant(rs.randint(0, 5, 2), tf.int32) for _ in range(3)]
        dec = [tf.constant(rs.randint(0, 6, 2), tf.int32) for _ in range(3)]
        tgt = [tf.constant(rs.randint(0, 6, 2), tf.int32) for _ in range(3)]
        wts = [tf.constant(rs.rand(2).astype(np.float32)) for _ in range(3)]

        def seq2seq(e, d):
            return S.embedding_attention_seq2seq(e, d, tf.nn.rnn_cell.GRUCell(4), 5, 6, 3)

        outputs, losses = S.model_with_buckets(enc, dec, tgt, wts, buckets, seq2seq)
        assert [len(o) for o in outputs] == [2, 3] and len(tf.global_variables()) == 20
        with tf.variable_scope(tf.get_variable_scope(), reuse=True):
            _, per_example = S.model_with_buckets(enc, dec, tgt, wts, buckets, seq2seq,
                                                  per_example_loss=True, name="again")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            o, loss, pe, t, w = sess.run([outputs, losses, per_example, tgt, wts])
    for k, (_, n) in enumerate(buckets):
        logits = np.stack(o[k][:n])  # [time, batch, symbols]
        logp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
        ce = -np.take_along_axis(logp, np.stack(t[:n])[..., None], -1)[..., 0]
        per = (ce * np.stack(w[:n])).sum(0) / (np.stack(w[:n]).sum(0) + 1e-12)
        np.testing.assert_allclose(pe[k], per, rtol=1e-5)
        np.testing.assert_allclose(loss[k], per.sum() / 2, rtol=1e-5)
    with tf.Graph().as_default(), pytest.raises(
            ValueError, match=r"Length of targets \(2\) must be at least that of last bucket "
                              r"\(3\)"):
        S.model_with_buckets(enc[:3], dec, tgt[:2], wts, buckets, seq2seq)


# -- 4. Keras wrappers ---------------------------------------------------------------------------
def _fixtures():
    spec = importlib.util.spec_from_file_location(
        "keras_wrappers_fixtures", os.path.join(FIXTURES, "make_fixtures.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_LSTM = ["kernel:0", "recurrent_kernel:0", "bias:0"]
TF_WEIGHT_NAMES = (
    [f"bi/{d}_lstm/lstm_cell/{n}" for d in ("forward", "backward") for n in _LSTM]
    + ["td/kernel:0", "td/bias:0", "tdbn/gamma:0", "tdbn/beta:0", "tdbn/moving_mean:0",
       "tdbn/moving_variance:0"]
    + [f"bi2/{d}_gru/gru_cell/{n}" for d in ("forward", "backward") for n in _LSTM]
    + ["scaled/scale:0", "scaled/kernel:0", "scaled/bias:0", "i1/kernel:0", "i1/bias:0",
       "i2/kernel:0", "i2/bias:0"])
_RNN = ["bias", "kernel", "recurrent_kernel"]
TF_CKPT_KEYS = sorted(
    [f"layer_with_weights-{i}/{d}_layer/cell/{n}" for i in (0, 3)
     for d in ("backward", "forward") for n in _RNN]
    + ["layer_with_weights-1/layer/bias", "layer_with_weights-1/layer/kernel"]
    + [f"layer_with_weights-2/layer/{n}" for n in ("beta", "gamma", "moving_mean",
                                                   "moving_variance")]
    + ["layer_with_weights-4/layer/bias", "layer_with_weights-4/layer/kernel",
       "layer_with_weights-4/scale"]
    + [f"layer_with_weights-5/layer_with_weights-{i}/{n}" for i in (0, 1)
       for n in ("bias", "kernel")])
TF_PATHS = sorted(
    [f"{b}.{d}_layer.cell.{n}" for b in ("bi", "bi2") for d in ("backward", "forward")
     for n in _RNN]
    + ["inner.layer_with_weights-0.bias", "inner.layer_with_weights-0.kernel",
       "inner.layer_with_weights-1.bias", "inner.layer_with_weights-1.kernel",
       "scaled.layer.bias", "scaled.layer.kernel", "scaled.scale", "td.layer.bias",
       "td.layer.kernel", "tdbn.layer.beta", "tdbn.layer.gamma", "tdbn.layer.moving_mean",
       "tdbn.layer.moving_variance"])


def _keys(prefix):
    return sorted(k[:-len("/.ATTRIBUTES/VARIABLE_VALUE")]
                  for k, _ in tf.train.list_variables(prefix) if k.endswith("VARIABLE_VALUE"))


def test_wrapper_weights_names_paths_and_files_as_tf(tmp_path):
    fx = _fixtures()
    expected = np.load(os.path.join(FIXTURES, "expected.npz"))
    with tf.Graph().as_default():
        m = fx.build(tf)
        assert [w.name for w in m.weights] == TF_WEIGHT_NAMES
        assert len(m.trainable_weights) == 23 and len(m.non_trainable_weights) == 2
        assert sorted(m.get_weight_paths()) == TF_PATHS
        m.set_weights(fx.weights_for(m))
        np.testing.assert_allclose(m.predict(expected["x"]), expected["y"], atol=1e-5)
        assert [w.shape for w in m.get_weights()] == [tuple(w.shape.as_list())
                                                      for w in m.weights]
        m.save_weights(str(tmp_path / "w.h5"))
        m.save_weights(str(tmp_path / "ckpt"))
    assert _keys(str(tmp_path / "ckpt")) == TF_CKPT_KEYS
    assert _keys(os.path.join(FIXTURES, "wrappers_ckpt")) == TF_CKPT_KEYS
    with h5py.File(tmp_path / "w.h5", "r") as mine, \
            h5py.File(os.path.join(FIXTURES, "wrappers.h5"), "r") as theirs:
        names = [n.decode() if isinstance(n, bytes) else n for n in theirs.attrs["layer_names"]]
        assert names == ["x", "bi", "td", "tdbn", "bi2", "scaled", "inner"]
        assert [n.decode() if isinstance(n, bytes) else n
                for n in mine.attrs["layer_names"]] == names
        for layer in names:
            assert list(mine[layer].attrs["weight_names"]) == \
                list(theirs[layer].attrs["weight_names"]), layer
    # Files TF wrote, and flowgraph's own, load into a fresh model.
    for path in (os.path.join(FIXTURES, "wrappers.h5"), os.path.join(FIXTURES, "wrappers_ckpt"),
                 str(tmp_path / "w.h5"), str(tmp_path / "ckpt")):
        with tf.Graph().as_default():
            m = fx.build(tf)
            status = m.load_weights(path)
            if not path.endswith(".h5"):
                status.assert_existing_objects_matched()
            np.testing.assert_allclose(m.predict(expected["x"]), expected["y"], atol=1e-5,
                                       err_msg=path)


def test_wrapper_subclass_builds_its_layer_once():
    K = tf.keras
    with tf.Graph().as_default():
        d = K.layers.Dense(2)
        d.build((None, 3))
        assert d.built  # a built-in layer's `build` marks it built, as in TF

        class Custom(K.layers.Layer):
            def build(self, input_shape):
                self.w = self.add_weight("w", shape=(2,))

        c = Custom()
        c.build((None, 2))
        assert not c.built  # a user's `build` that does not set it: TF leaves it False
        rnn = K.Sequential([K.layers.SimpleRNN(2, input_shape=(3, 2), return_sequences=True),
                            K.layers.GRU(2, return_sequences=True), K.layers.LSTM(1)])
        assert {k.split("/", 1)[1] for k in _keys_of(rnn)} == {
            "cell/bias", "cell/kernel", "cell/recurrent_kernel"}
        stacked = K.Sequential([K.layers.RNN([K.layers.LSTMCell(2), K.layers.GRUCell(3)],
                                             input_shape=(3, 2))])
        assert _keys_of(stacked) == [f"layer_with_weights-0/cell/cells/{i}/{n}"  # TF's
                                     for i in (0, 1) for n in _RNN]
        assert sorted(stacked.get_weight_paths()) == [f"rnn.cell.cells.{i}.{n}"
                                                      for i in (0, 1) for n in _RNN]


def _keys_of(model):
    import tempfile

    prefix = os.path.join(tempfile.mkdtemp(), "ckpt")
    model.save_weights(prefix)
    return _keys(prefix)


def test_frozen_wrappers_list_weights_as_tf():
    fx = _fixtures()
    with tf.Graph().as_default():
        m = fx.build(tf)
        for name in ("scaled", "td", "bi"):
            m.get_layer(name).trainable = False
            assert m.get_layer(name).trainable_weights == [], name
        assert [w.name for w in m.get_layer("td").non_trainable_weights] == \
            ["td/kernel:0", "td/bias:0"]
        assert [w.name for w in m.get_layer("bi").non_trainable_weights] == TF_WEIGHT_NAMES[:6]
        assert len(m.trainable_weights) == 12  # TF's count
        assert [w.name for w in m.non_trainable_weights] == [
            *TF_WEIGHT_NAMES[:6], "td/kernel:0", "td/bias:0", "tdbn/moving_mean:0",
            "tdbn/moving_variance:0", "scaled/scale:0", "scaled/kernel:0", "scaled/bias:0"]
        # Setting `trainable` on a wrapper sets it on the wrapped layer, as in Keras.
        scaled = m.get_layer("scaled")
        scaled.layer.trainable = False
        scaled.trainable = True
        assert [w.name for w in scaled.trainable_weights] == \
            ["scaled/scale:0", "scaled/kernel:0", "scaled/bias:0"]
        assert scaled.non_trainable_weights == []
