"""Stateless random ops (flowgraph/ops/random_stateless_ops.py): TensorFlow 2.15's values
for uniform, normal, truncated-normal, integer and categorical draws (the Philox stream,
recorded with the tf-oracle), and shapes, dtypes, ranges and determinism for the rest."""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf

S = [1, 2]


def run(t):
    with tf.Session() as sess:
        return sess.run(t)


def test_uniform_matches_tensorflow():
    np.testing.assert_allclose(run(tf.random.stateless_uniform([2, 5], seed=S)),
                               [[0.8441, 0.192, 0.9962, 0.1604, 0.272],
                                [0.6493, 0.1069, 0.0652, 0.4394, 0.0848]], atol=5e-5)
    np.testing.assert_allclose(
        run(tf.random.stateless_uniform([7], seed=[-3, 123456789012], minval=-2., maxval=3.)),
        [0.5954, 2.1398, -1.7206, 1.2721, 2.0167, 1.8449, 1.2477], atol=5e-5)
    u64 = tf.random.stateless_uniform([5], seed=S, dtype=tf.float64)
    np.testing.assert_allclose(run(u64), [0.7525, 0.9698, 0.1759, 0.8556, 0.5148], atol=5e-5)
    assert run(tf.random.stateless_uniform([6], seed=S, minval=-5, maxval=7,
                                           dtype=tf.int32)).tolist() == [-1, 0, 1, -2, 2, -4]
    assert run(tf.random.stateless_uniform([6], seed=S, minval=-5, maxval=7,
                                           dtype=tf.int64)).tolist() == [-5, 1, 6, -2, -2, 1]
    full = tf.random.stateless_uniform([3], seed=S, minval=None, maxval=None, dtype=tf.int64)
    assert run(full).tolist() == [7464880146280614444, 1591045637757961278,
                                  -1057468755545501549]


def test_normal_and_truncated_normal_match_tensorflow():
    np.testing.assert_allclose(run(tf.random.stateless_normal([7], seed=S)),
                               [0.5441, 0.2074, 0.0736, 0.0464, -1.3016, -0.9539, 0.8417],
                               atol=5e-5)
    n64 = tf.random.stateless_normal([5], seed=S, mean=1., stddev=2., dtype=tf.float64)
    np.testing.assert_allclose(run(n64), [0.7154, 2.4812, -1.9381, 3.2955, -0.4438], atol=5e-5)
    t32 = run(tf.random.stateless_truncated_normal([9], seed=S))
    np.testing.assert_allclose(t32, [0.5441, 0.2074, 0.0736, 0.0464, 0.1682, -1.685, 0.242,
                                     1.7035, 1.1061], atol=5e-5)
    t64 = tf.random.stateless_truncated_normal([5], seed=S, dtype=tf.float64)
    np.testing.assert_allclose(run(t64), [-0.1423, 0.7406, -0.5524, -0.7345, -0.3984],
                               atol=5e-5)
    big = run(tf.random.stateless_truncated_normal([3000], seed=[9, -4]))
    np.testing.assert_allclose(big[[0, 777, 2999]], [1.0487041, 0.86729836, -0.24401648],
                               rtol=1e-6)
    np.testing.assert_allclose(big.sum(), 80.26783752, rtol=1e-6)


def test_categorical_matches_tensorflow():
    c = tf.random.stateless_categorical([[0., 1., 2.], [3., 0., -1.]], 6, seed=S)
    assert c.dtype == tf.int64 and c.shape.as_list() == [2, 6]
    assert run(c).tolist() == [[2, 2, 1, 2, 2, 2], [0, 0, 0, 0, 0, 0]]
    logits = np.log([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25], [0.3, 0.3, 0.4]])
    assert run(tf.random.stateless_categorical(logits, 9, seed=[5, 6])).tolist() == [
        [0, 2, 1, 2, 1, 1, 0, 2, 2], [1, 0, 0, 2, 0, 1, 0, 2, 0], [0, 2, 2, 1, 2, 1, 2, 1, 1]]
    assert run(tf.random.stateless_multinomial([[0., 1., 2.]], 4, seed=S)).tolist() == [
        [2, 2, 1, 2]]


def test_split_and_fold_in_match_tensorflow():
    assert run(tf.random.split(S, 3)).tolist() == [[1105988140, 1738052849],
                                                    [-335576002, 370444179],
                                                    [10670227, -246211131]]
    assert run(tf.random.fold_in(S, 7)).tolist() == [1105988140, 7]
    assert tf.random.split(tf.constant(S, tf.int64)).dtype == tf.int64
    assert tf.random.fold_in(tf.constant(S, tf.int64), 3).dtype == tf.int32


def test_deterministic_per_seed_and_distinct_across_seeds():
    for make in (lambda s: tf.random.stateless_gamma([50], seed=s, alpha=2.0),
                 lambda s: tf.random.stateless_poisson([50], seed=s, lam=3.0),
                 lambda s: tf.random.stateless_binomial([50], seed=s, counts=10.0, probs=0.3),
                 lambda s: tf.random.stateless_parameterized_truncated_normal([50], s)):
        a, b, c = run([make(S), make(S), make([2, 1])])
        np.testing.assert_array_equal(a, b)
        assert not np.array_equal(a, c)
        # a new session gives the same values
        np.testing.assert_array_equal(run(make(S)), a)


def test_shapes_dtypes_and_ranges():
    g = tf.random.stateless_gamma([300, 2], seed=S, alpha=[1., 2.], beta=[1., 4.])
    assert g.dtype == tf.float32 and g.shape.as_list() == [300, 2]
    v = run(g)
    assert (v > 0).all() and abs(v[:, 0].mean() - 1.0) < 0.2 and abs(v[:, 1].mean() - 0.5) < 0.1
    p = tf.random.stateless_poisson([400, 2], seed=S, lam=[1., 5.])
    assert p.dtype == tf.int32
    pv = run(p)
    assert abs(pv[:, 0].mean() - 1.0) < 0.2 and abs(pv[:, 1].mean() - 5.0) < 0.5
    b = tf.random.stateless_binomial([4], seed=S, counts=[10, 3, 4, 5], probs=0.5,
                                     output_dtype=tf.int64)
    assert b.dtype == tf.int64 and (run(b) <= [10, 3, 4, 5]).all()
    t = run(tf.random.stateless_parameterized_truncated_normal([200], S, means=1.0,
                                                               minvals=0.5, maxvals=1.5))
    assert (t >= 0.5).all() and (t <= 1.5).all()
    assert tf.random.poisson([1., 2.], [3]).shape.as_list() == [3, 2]


def test_seed_must_be_a_pair():
    with pytest.raises(ValueError, match="Dimension must be 2 but is 3"):
        tf.random.stateless_uniform([2], seed=[1, 2, 3])
    with pytest.raises(ValueError, match="minval and maxval"):
        tf.random.stateless_uniform([2], seed=S, maxval=5, minval=None, dtype=tf.int32)


def test_candidate_samplers_are_reexported():
    for name in ("uniform_candidate_sampler", "log_uniform_candidate_sampler",
                 "all_candidate_sampler", "fixed_unigram_candidate_sampler",
                 "learned_unigram_candidate_sampler"):
        assert getattr(tf.random, name) is getattr(tf.nn, name)


def test_module_examples():
    from module_examples import assert_examples_pass

    assert_examples_pass("flowgraph.ops.random_stateless_ops")
