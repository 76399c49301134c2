"""Random ops: distributions, TF1 seeding rules, shapes, dtypes and errors."""

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework.errors import InvalidArgumentError
from flowgraph.framework.registry import get_op_def

N = 100_000


def _run(t, graph=None):
    with tf.Session(graph=graph or t.graph) as s:
        return s.run(t)


# -- distributions ------------------------------------------------------------------------
def test_uniform_float_statistics(sess):
    u, v = sess.run([tf.random_uniform([N], seed=1),
                     tf.random_uniform([N // 10, 10], minval=-2.0, maxval=3.0, seed=2)])
    assert u.dtype == np.float32 and u.shape == (N,)
    assert u.min() >= 0 and u.max() < 1
    assert abs(u.mean() - 0.5) < 0.01 and abs(u.std() - np.sqrt(1 / 12)) < 0.01
    assert v.shape == (N // 10, 10) and v.min() >= -2 and v.max() < 3
    assert abs(v.mean() - 0.5) < 0.05 and abs(v.std() - 5 / np.sqrt(12)) < 0.05


@pytest.mark.parametrize("dtype", [tf.int32, tf.int64])
def test_uniform_int(sess, dtype):
    t = tf.random_uniform([N], minval=-3, maxval=4, dtype=dtype, seed=5)
    assert t.op.type == "RandomUniformInt" and t.dtype == dtype
    v = sess.run(t)
    assert v.dtype == dtype.as_numpy_dtype
    assert set(np.unique(v).tolist()) == set(range(-3, 4))
    assert abs(v.mean()) < 0.05


def test_normal_statistics(sess):
    v = sess.run(tf.random_normal([N], mean=2.0, stddev=3.0, seed=3))
    assert v.dtype == np.float32
    assert abs(v.mean() - 2.0) < 0.05 and abs(v.std() - 3.0) < 0.05


def test_truncated_normal_bounds_and_statistics(sess):
    v = sess.run(tf.truncated_normal([N], mean=-1.0, stddev=0.5, seed=4))
    assert v.min() >= -2.0 and v.max() <= 0.0  # mean -1 +- 2 * 0.5
    # Std of a standard normal truncated to [-2, 2] is 0.8796.
    assert abs(v.mean() + 1.0) < 0.01 and abs(v.std() - 0.5 * 0.8796) < 0.01
    assert (np.abs(v + 1.0) > 0.9).mean() > 0.01  # the tails near the bounds are populated


@pytest.mark.parametrize("fn", [tf.random_uniform, tf.random_normal, tf.truncated_normal])
@pytest.mark.parametrize("dtype", [tf.float16, tf.float64])
def test_float_dtypes(sess, fn, dtype):
    t = fn([4000, 3], dtype=dtype, seed=9)
    v = sess.run(t)
    assert t.dtype == dtype and v.dtype == dtype.as_numpy_dtype and v.shape == (4000, 3)
    if fn is tf.random_uniform:
        assert v.min() >= 0 and v.max() < 1
    assert len(np.unique(v)) > 100


def test_multinomial_frequencies(sess):
    probs = np.array([[0.1, 0.2, 0.7, 0.0], [0.5, 0.0, 0.25, 0.25]])
    with np.errstate(divide="ignore"):
        logits = np.log(probs).astype(np.float32)
    t = tf.multinomial(logits, N, seed=11)
    v = sess.run(t)
    assert t.dtype == tf.int64 and v.dtype == np.int64 and v.shape == (2, N)
    for row, p in zip(v, probs):
        freq = np.bincount(row, minlength=4) / N
        np.testing.assert_allclose(freq, p, atol=0.01)
        assert freq[p == 0].sum() == 0


def test_categorical_int32_and_shift_invariance(sess):
    t = tf.random.categorical([[1000.0, 1001.0, 998.0]], 20_000, dtype=tf.int32, seed=1)
    v = sess.run(t)
    assert v.dtype == np.int32
    p = np.exp([0.0, 1.0, -2.0])
    np.testing.assert_allclose(np.bincount(v[0], minlength=3) / 20_000, p / p.sum(), atol=0.02)


def test_shuffle(sess):
    x = np.arange(30).reshape(10, 3)
    t = tf.random_shuffle(x, seed=2)
    assert t.op.type == "RandomShuffle" and t.shape.as_list() == [10, 3]
    runs = [sess.run(t) for _ in range(4)]
    for r in runs:
        np.testing.assert_array_equal(r[np.argsort(r[:, 0])], x)  # rows move intact
    assert len({r[:, 0].tobytes() for r in runs}) > 1
    assert sess.run(tf.random_shuffle(3)) == 3
    assert sess.run(tf.random_shuffle(np.zeros((0, 2)))).shape == (0, 2)


# -- seeding ------------------------------------------------------------------------------
def _build(graph_seed=None, op_seed=None, fn=tf.random_uniform):
    g = tf.Graph()
    with g.as_default():
        if graph_seed is not None:
            tf.set_random_seed(graph_seed)
        a = fn([5], seed=op_seed)
        b = fn([5], seed=op_seed)
    return g, a, b


@pytest.mark.parametrize("graph_seed,op_seed", [(7, None), (None, 7), (7, 3), (0, 0)])
@pytest.mark.parametrize("fn", [tf.random_uniform, tf.random_normal, tf.truncated_normal,
                                lambda s, seed: tf.multinomial([[0.0, 1.0, 2.0]], 8, seed=seed),
                                lambda s, seed: tf.random_shuffle(np.arange(12), seed=seed)])
def test_seeded_sessions_repeat_and_runs_differ(graph_seed, op_seed, fn):
    g, a, _ = _build(graph_seed, op_seed, fn)
    with tf.Session(graph=g) as s1:
        first = [s1.run(a) for _ in range(3)]
    with tf.Session(graph=g) as s2:
        again = [s2.run(a) for _ in range(3)]
    for x, y in zip(first, again):
        np.testing.assert_array_equal(x, y)
    assert len({x.tobytes() for x in first}) > 1  # successive runs draw new values


def test_same_graph_seed_in_new_graph_repeats():
    _g1, a1, b1 = _build(graph_seed=42)
    _g2, a2, b2 = _build(graph_seed=42)
    np.testing.assert_array_equal(_run(a1), _run(a2))
    np.testing.assert_array_equal(_run(b1), _run(b2))
    assert not np.array_equal(_run(a1), _run(b1))  # op seeds come from a counter


def test_equal_op_seeds_give_equal_first_values():
    g, a, b = _build(op_seed=123)
    with tf.Session(graph=g) as s:
        va, vb = s.run([a, b])
        np.testing.assert_array_equal(va, vb)
    assert a.op.get_attr("seed") == b.op.get_attr("seed") == 87654321
    assert a.op.get_attr("seed2") == 123


def test_different_seeds_differ():
    _g1, a1, _ = _build(graph_seed=1, op_seed=5)
    _g2, a2, _ = _build(graph_seed=2, op_seed=5)
    _g3, a3, _ = _build(graph_seed=1, op_seed=6)
    assert not np.array_equal(_run(a1), _run(a2))
    assert not np.array_equal(_run(a1), _run(a3))


def test_unseeded_sessions_differ():
    g, a, b = _build()
    assert a.op.get_attr("seed") == 0 and a.op.get_attr("seed2") == 0
    assert not np.array_equal(_run(a), _run(a))
    with tf.Session(graph=g) as s:
        va, vb = s.run([a, b])
        assert not np.array_equal(va, vb)


def test_zero_seeds_are_not_unseeded():
    _g, a, _ = _build(graph_seed=0, op_seed=0)
    assert a.op.type == "RandomUniform"
    assert (a.op.get_attr("seed"), a.op.get_attr("seed2")) == (0, 2**31 - 1)


def test_random_ops_are_stateful_and_not_differentiable():
    for op_type in ("RandomUniform", "RandomUniformInt", "RandomStandardNormal",
                    "TruncatedNormal", "RandomShuffle", "Multinomial"):
        d = get_op_def(op_type)
        assert d.stateful and d.differentiable is False


def test_random_values_not_folded_or_merged(sess):
    a = tf.random_uniform([3])
    b = tf.random_uniform([3])
    # Both have all-constant inputs and equal attributes: folding or CSE would break this.
    va, vb = sess.run([tf.identity(a), tf.identity(b)])
    assert not np.array_equal(va, vb)
    assert not np.array_equal(sess.run(a), sess.run(a))


# -- graph structure, shapes, errors ------------------------------------------------------
def test_op_structure_matches_tf():
    u = tf.random_uniform([2])
    assert u.op.type == "RandomUniform" and u.name == "random_uniform/RandomUniform:0"
    scaled = tf.random_uniform([2], 1.0, 3.0)
    assert scaled.op.name == "random_uniform_1"
    n = tf.random_normal([2])
    assert n.name == "random_normal:0" and n.op.inputs[0].op.inputs[0].op.type == \
        "RandomStandardNormal"
    t = tf.truncated_normal([2], name="init")
    assert t.name == "init:0"
    m = tf.multinomial([[0.0, 1.0]], 2)
    assert m.op.type == "Multinomial" and m.op.name == "multinomial/Multinomial"


def test_shape_inference():
    x = tf.placeholder(tf.float32, [None, 4])
    assert tf.random_uniform(tf.shape(x)).shape.as_list() == [None, 4]
    assert tf.random_normal(tf.placeholder(tf.int32, [3])).shape.as_list() == [None] * 3
    assert tf.random_normal(tf.placeholder(tf.int32)).shape.ndims is None
    assert tf.random_uniform(tf.TensorShape([2, 3])).shape.as_list() == [2, 3]
    assert tf.random_uniform(tf.constant([2, 3], tf.int64)).shape.as_list() == [2, 3]
    assert tf.random_uniform([]).shape.as_list() == []
    assert tf.random_shuffle(x).shape.as_list() == [None, 4]
    ns = tf.placeholder(tf.int32, [])
    assert tf.multinomial(tf.placeholder(tf.float32, [None, 5]), ns).shape.as_list() == \
        [None, None]
    assert tf.multinomial(tf.zeros([2, 3]), 4).shape.as_list() == [2, 4]
    assert tf.multinomial(tf.placeholder(tf.float32), 4).shape.as_list() == [None, 4]


def test_dynamic_shape_runs(sess):
    x = tf.placeholder(tf.float32, [None, 4])
    v = sess.run(tf.random_normal(tf.shape(x), seed=1), {x: np.zeros((3, 4))})
    assert v.shape == (3, 4)


def test_construction_errors():
    with pytest.raises(ValueError, match="Must specify maxval for integer dtype"):
        tf.random_uniform([2], dtype=tf.int32)
    for bad in (tf.bool, tf.string, tf.int16):
        with pytest.raises(ValueError, match="dtype"):
            tf.random_uniform([2], maxval=3, dtype=bad)
    with pytest.raises(TypeError):
        tf.random_normal([2], dtype=tf.int32)
    with pytest.raises(TypeError):
        tf.random_uniform([2.5])
    with pytest.raises(TypeError, match="fully"):
        tf.random_uniform([None, 2])
    with pytest.raises(TypeError, match="int32 or int64"):
        tf.random_uniform(tf.constant([2.0]))
    with pytest.raises(ValueError, match="1-D"):
        tf.random_uniform([[2, 3]])
    with pytest.raises(ValueError, match="rank 1"):
        tf.multinomial(tf.zeros([3]), 2)
    with pytest.raises(ValueError, match="non-negative"):
        tf.multinomial(tf.zeros([2, 3]), -1)
    with pytest.raises(ValueError, match="int16"):
        tf.multinomial(tf.zeros([2, 3]), 2, output_dtype=tf.int16)
    with pytest.raises(ValueError, match="scalar"):
        tf.random_uniform([2], minval=[0, 1], maxval=5, dtype=tf.int32)


def test_runtime_errors(sess):
    with pytest.raises(InvalidArgumentError, match="Need minval < maxval, got 5 >= 5"):
        sess.run(tf.random_uniform([2], minval=5, maxval=5, dtype=tf.int32))
    with pytest.raises(InvalidArgumentError, match="Dimension -1 must be >= 0"):
        sess.run(tf.random_uniform([-1, 2]))
    with pytest.raises(InvalidArgumentError, match="num_classes should be positive"):
        sess.run(tf.multinomial(tf.zeros([2, 0]), 2))
    n = tf.placeholder(tf.int32, [])
    with pytest.raises(InvalidArgumentError, match="non-negative"):
        sess.run(tf.multinomial(tf.zeros([2, 3]), n), {n: -2})


def test_random_namespace():
    assert tf.random.uniform is tf.random_uniform
    assert tf.random.normal is tf.random_normal
    assert tf.random.truncated_normal is tf.truncated_normal
    assert tf.random.shuffle is tf.random_shuffle
    assert tf.random.multinomial is tf.multinomial
    tf.random.set_random_seed(3)
    assert tf.get_default_graph().seed == 3
    assert tf.random.get_seed(None)[0] == 3
