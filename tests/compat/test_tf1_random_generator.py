"""`tf.random.Generator` and its ops, against TensorFlow 2.15 (tf.compat.v1, v2 behaviour
disabled; every value below was printed by the tf-oracle)."""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.backends.cpu import kernels_random_stateful as kernels


@pytest.fixture(autouse=True)
def _fresh_graph():
    with tf.Graph().as_default():
        yield


def _run(*fetches):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return [sess.run(f) for f in fetches]


def test_from_seed_streams_match_tensorflow():
    # TF: Generator.from_seed(1): state [1, 0, 0]; each draw of n values advances the
    # counter by 256 * n (RngReadAndSkip), then a *V2 stateless sampler draws.
    g = tf.random.Generator.from_seed(1)
    n = g.normal([4])
    u = g.uniform([3])
    ui = g.uniform([5], minval=0, maxval=10, dtype=tf.int32)
    uf = g.uniform_full_int([3], dtype=tf.int64)
    tn = g.truncated_normal([4])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(g.state).tolist() == [1, 0, 0]
        np.testing.assert_allclose(sess.run(n), [0.4384227, -0.5343984, -0.0771026, 1.5658046],
                                   rtol=1e-6)
        assert sess.run(g.state).tolist() == [1025, 0, 0]
        np.testing.assert_allclose(sess.run(n), [-0.7925308, 0.3764686, 0.4844326, -1.0214226],
                                   rtol=1e-6)
        np.testing.assert_allclose(sess.run(u), [0.5771974, 0.1827056, 0.9144391], rtol=1e-6)
        assert sess.run(ui).tolist() == [4, 1, 6, 1, 3]
        assert sess.run(uf).tolist() == [8645169672042352723, 1057656798894713629,
                                         2163174483472255437]
        np.testing.assert_allclose(sess.run(tn), [0.332611, 1.0658413, -1.8445038, 1.7577099],
                                   rtol=1e-6)
        assert sess.run(g.state).tolist() == [5889, 0, 0]


def test_graph_layout_matches_tensorflow():
    g = tf.random.Generator.from_seed(1)
    assert g.algorithm == 1
    assert g.state.name == "random_generator/StateVar:0"
    assert g.state.shape.as_list() == [3]
    # TF: a resource variable (VarHandleOp, dtype int64), read by RngReadAndSkip's handle
    assert (g.state.dtype, g.state.op.type) == (tf.int64, "VarHandleOp")
    assert repr(g.state) == ("<tf.Variable 'random_generator/StateVar:0' shape=(3,) "
                             "dtype=int64>")
    n = g.normal([4])
    assert (n.op.type, n.name, n.dtype, n.shape.as_list()) == (
        "AddV2", "stateful_normal:0", tf.float32, [4])
    types = [op.type for op in tf.get_default_graph().get_operations()]
    assert "RngReadAndSkip" in types and "StatelessRandomNormalV2" in types
    skip = tf.get_default_graph().get_operation_by_name("stateful_normal/RngReadAndSkip")
    assert (skip.outputs[0].dtype, skip.outputs[0].shape.as_list()) == (tf.int64, [3])
    sampler = tf.get_default_graph().get_operation_by_name(
        "stateful_normal/StatelessRandomNormalV2")
    assert sampler.get_attr("dtype") == tf.float32
    # TF: names and op types of the other samplers
    xs = [g.uniform([3], name="u"), g.truncated_normal([2]), g.uniform_full_int([2]),
          g.uniform([2], 3, 9, dtype=tf.int64), g.make_seeds(2),
          g.uniform([2, 2], dtype=tf.float64), g.normal([3], dtype=tf.float16)]
    assert [(x.name, x.op.type, x.dtype) for x in xs] == [
        ("u:0", "AddV2", tf.float32), ("truncated_normal:0", "AddV2", tf.float32),
        ("stateful_uniform_full_int:0", "StatelessRandomUniformFullIntV2", tf.uint64),
        ("stateful_uniform:0", "StatelessRandomUniformIntV2", tf.int64),
        ("stack:0", "Pack", tf.int64), ("stateful_uniform_1:0", "AddV2", tf.float64),
        ("stateful_normal_1:0", "AddV2", tf.float16)]
    b = g.binomial([4], counts=10.0, probs=0.3)
    assert (b.op.type, b.dtype, b.name) == ("StatefulRandomBinomial", tf.int32, "binomial:0")
    assert g.state in tf.global_variables()
    assert g.state not in tf.trainable_variables()


def test_seed_7_values_and_dtypes():
    g = tf.random.Generator.from_seed(7)
    xs = [g.uniform([3]), g.truncated_normal([2]), g.uniform_full_int([2]),
          g.uniform([2], 3, 9, dtype=tf.int64), g.make_seeds(2),
          g.uniform([2, 2], dtype=tf.float64), g.normal([3], dtype=tf.float16)]
    vals = _run(*xs)
    np.testing.assert_allclose(vals[0], [0.39932835, 0.7840713, 0.67880154], rtol=1e-6)
    np.testing.assert_allclose(vals[1], [-1.2344412, 0.09916726], rtol=1e-6)
    assert vals[2].tolist() == [4476353030654630724, 8385031176067967481]
    assert vals[3].tolist() == [3, 7]
    assert vals[4].tolist() == [[-2930755563264428516, 4859832280479223925], [0, 0]]
    np.testing.assert_allclose(vals[5], [[0.70171496, 0.75702513], [0.30103705, 0.50684906]],
                               rtol=1e-7)
    np.testing.assert_allclose(vals[6].astype(np.float32), [0.2347, 0.532, 1.324], rtol=1e-3)


def test_float64_normal_with_mean_and_stddev():
    g = tf.random.Generator.from_seed(5, alg="philox")
    n = g.normal([2, 3], mean=1.0, stddev=2.0, dtype=tf.float64)
    (value,) = _run(n)
    np.testing.assert_allclose(value, [[1.58371112, -1.15553682, 1.54013751],
                                       [1.26044226, 2.53217656, -2.27807934]], rtol=1e-8)


def test_skip_returns_old_state_and_advances():
    g = tf.random.Generator.from_seed(5)
    sk = g.skip(10)
    assert (sk.name, sk.op.type) == ("RngReadAndSkip:0", "RngReadAndSkip")
    with tf.Session() as sess:
        sess.run(g.state.initializer)
        assert sess.run(sk).tolist() == [5, 0, 0]
        assert sess.run(g.state).tolist() == [5 + 2560, 0, 0]


def test_state_constructor_and_key_counter():
    st = tf.random.Generator(state=[3, 4, 5], alg=1)
    kc = tf.random.Generator.from_key_counter(key=7, counter=[1, 2], alg="philox")
    x = st.normal([3])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_allclose(sess.run(x), [-0.5569993, 1.366232, -0.17496277],
                                   rtol=1e-6)
        assert sess.run(st.state).tolist() == [771, 4, 5]
        assert sess.run(kc.state).tolist() == [1, 2, 7]
        assert sess.run(kc.key) == 7


def test_create_rng_state():
    # TF: an int is cut into 64-bit words; a list is zero-padded on the left
    s = [tf.random.create_rng_state(1, "philox"), tf.random.create_rng_state([5], 1),
         tf.random.create_rng_state(-1, 1), tf.random.create_rng_state(2**70 + 3, 1),
         tf.random.create_rng_state(7, "threefry")]
    assert [x.shape.as_list() for x in s] == [[3], [3], [3], [3], [2]]
    assert [x.dtype for x in s] == [tf.int64] * 5
    vals = _run(*s)
    assert [v.tolist() for v in vals] == [[1, 0, 0], [0, 0, 5], [-1, -1, -1], [3, 64, 0],
                                          [7, 0]]


def test_algorithm_enum_and_experimental_aliases():
    assert [a.value for a in tf.random.Algorithm] == [1, 2, 3]
    assert tf.random.Algorithm.PHILOX.name == "PHILOX"
    assert tf.random.experimental.Generator is tf.random.Generator
    assert tf.random.experimental.create_rng_state is tf.random.create_rng_state
    for name in ("Algorithm", "get_global_generator", "set_global_generator",
                 "index_shuffle", "stateless_fold_in", "stateless_split"):
        assert hasattr(tf.random.experimental, name)


def test_global_generator():
    g = tf.random.get_global_generator()
    assert isinstance(g, tf.random.Generator)
    assert tf.random.get_global_generator() is g
    with tf.Graph().as_default():  # a generator of another graph is not reused
        assert tf.random.get_global_generator() is not g
    mine = tf.random.Generator.from_seed(3)
    tf.random.set_global_generator(mine)
    try:
        assert tf.random.get_global_generator() is mine
    finally:
        tf.random.set_global_generator(None)


def test_errors_as_tensorflow():
    g = tf.random.Generator.from_seed(1)
    with pytest.raises(ValueError, match="minval and maxval must be both"):
        g.uniform([2], dtype=tf.int32)
    with pytest.raises(ValueError, match="minval and maxval must be both"):
        g.uniform([2], dtype=tf.uint32)
    with pytest.raises(TypeError):
        g.normal([2], dtype=tf.int32)
    with pytest.raises(ValueError, match="foo"):
        tf.random.Generator.from_seed(1, alg="foo")
    with pytest.raises(ValueError, match=r"Shapes \(2,\) and \[3\] are incompatible"):
        tf.random.Generator(state=[1, 2], alg="philox")
    with pytest.raises(NotImplementedError, match="graph mode"):
        g.split(2)
    assert g.reset_from_seed(3) is None  # TF's graph mode builds an assign, returns None


def test_threefry_is_unimplemented_on_cpu():
    # TF: UnimplementedError "Non-XLA devices don't support the ThreeFry algorithm."
    g = tf.random.Generator.from_seed(1, alg="threefry")
    x = g.normal([2])
    with tf.Session() as sess:
        sess.run(g.state.initializer)
        with pytest.raises(tf.errors.UnimplementedError, match="ThreeFry"):
            sess.run(x)


def test_uninitialized_state_fails_clearly():
    g = tf.random.Generator.from_seed(1)
    x = g.normal([2])
    with tf.Session() as sess, pytest.raises(tf.errors.FailedPreconditionError,
                                             match="StateVar"):
        sess.run(x)


def test_binomial_in_range_and_advances_state():
    # The binomial stream is not TensorFlow's (deterministic per state; see the docs)
    g = tf.random.Generator.from_seed(5)
    b = g.binomial([200], counts=10.0, probs=0.3)
    with tf.Session() as sess:
        sess.run(g.state.initializer)
        first, second = sess.run(b), sess.run(b)
    assert first.dtype == np.int32 and first.min() >= 0 and first.max() <= 10
    assert abs(first.mean() - 3.0) < 0.5
    assert not np.array_equal(first, second)


def test_stateful_raw_ops_share_the_stream():
    # StatefulStandardNormalV2 / StatefulUniform* draw what the *V2 path draws and
    # advance the state the same way; RngSkip only advances it.
    v = tf.Variable(np.array([1, 0, 0], np.int64), name="state")
    alg = tf.constant(1, tf.int64)
    shape = tf.constant([4], tf.int64)
    with tf.control_dependencies([v.initializer]):
        x = tf.raw_ops.StatefulStandardNormalV2(resource=v._ref(), algorithm=alg, shape=shape)
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(x),
                                   [0.4384227, -0.5343984, -0.0771026, 1.5658046], rtol=1e-6)
        assert sess.run(v).tolist() == [1025, 0, 0]
        sess.run(tf.raw_ops.RngSkip(resource=v._ref(), algorithm=alg,
                                    delta=tf.constant(2, tf.int64)))
        assert sess.run(v).tolist() == [1537, 0, 0]
        u = tf.raw_ops.StatefulUniformInt(resource=v._ref(), algorithm=alg, shape=shape,
                                          minval=tf.constant(0, tf.int64),
                                          maxval=tf.constant(10, tf.int64))
        full = tf.raw_ops.StatefulUniformFullInt(resource=v._ref(), algorithm=alg,
                                                 shape=shape, dtype=tf.uint32)
        assert sess.run(u).shape == (4,) and sess.run(full).dtype == np.uint32
        assert sess.run(v).tolist() == [1537 + 4 * 256 * 2, 0, 0]


def test_skip_carries_into_the_high_counter_word():
    state = np.array([-1, 0, 9], np.int64)  # counter low word all ones
    assert kernels.skip_state(state, 1).tolist() == [255, 1, 9]


def test_stateless_v2_kernels_reject_bad_key():
    with pytest.raises(tf.errors.InvalidArgumentError, match="key must have shape"):
        kernels.stateless_normal_v2(np.array([2]), np.array([1, 2], np.uint64),
                                    np.array([0, 0], np.uint64), np.int32(1),
                                    dtype=tf.float32)
