"""`tf.contrib.kernel_methods` (TF 1.x; TF 2.15 has no contrib, so no oracle run): the
random Fourier feature mapper against a NumPy reference of TF 1.x's documented formula
and draws, `KernelLinearClassifier` on data no linear model separates, and the
Crammer-Singer hinge loss against a NumPy reference."""

import numpy as np
import pytest

import flowgraph as tf

KM = tf.contrib.kernel_methods


def _np_features(x, output_dim, stddev, seed):
    rng = np.random.RandomState(seed)
    omega = rng.normal(scale=1.0 / stddev, size=[x.shape[1], output_dim])
    bias = rng.uniform(low=0.0, high=2 * np.pi, size=[output_dim])
    return np.sqrt(2.0 / output_dim) * np.cos(x @ omega.astype(np.float32)
                                              + bias.astype(np.float32))


def test_mapper_matches_the_formula_and_approximates_the_rbf_kernel():
    rng = np.random.RandomState(5)
    x = rng.randn(6, 3).astype(np.float32)
    mapper = KM.RandomFourierFeatureMapper(3, 3000, stddev=1.5, seed=4, name="rffm")
    with tf.Graph().as_default():
        z = mapper.map(tf.constant(x))
        assert z.shape.as_list() == [6, 3000] and z.dtype == tf.float32
        names = {op.name for op in tf.get_default_graph().get_operations()}
        got = tf.Session().run(z)
    assert {"rffm/omega", "rffm/bias"} <= names
    np.testing.assert_allclose(got, _np_features(x, 3000, 1.5, 4), rtol=1e-4, atol=1e-5)
    gram = got @ got.T
    d2 = ((x[:, None] - x[None]) ** 2).sum(-1)
    np.testing.assert_allclose(gram, np.exp(-d2 / (2 * 1.5 ** 2)), atol=0.06)


def test_mapper_errors():
    mapper = KM.RandomFourierFeatureMapper(3, 8)
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="expected 3 input features, got 2 instead"):
            mapper.map(tf.zeros([4, 2]))
        with pytest.raises(ValueError, match=r"must be a \[batch, 3\] matrix"):
            mapper.map(tf.zeros([4, 3, 1]))
    with pytest.raises(ValueError, match="output_dim must be positive"):
        KM.RandomFourierFeatureMapper(3, 0)


def _rings(n, seed):
    rng = np.random.RandomState(seed)
    radius = np.where(rng.rand(n) < 0.5, 1.0, 3.0)
    angle = rng.rand(n) * 2 * np.pi
    x = np.stack([radius * np.cos(angle), radius * np.sin(angle)], 1)
    x += rng.randn(n, 2) * 0.2
    return x.astype(np.float32), (radius > 2).astype(np.int64)


def _accuracy(estimator, x, y, xt, yt):
    estimator.fit(input_fn=lambda: ({"x": tf.constant(x)}, tf.constant(y)), steps=150)
    metrics = estimator.evaluate(input_fn=lambda: ({"x": tf.constant(xt)}, tf.constant(yt)),
                                 steps=1)
    return metrics["accuracy"]


def test_kernel_linear_classifier_separates_rings_a_linear_model_cannot(tmp_path):
    x, y = _rings(400, 0)
    xt, yt = _rings(200, 1)
    col = tf.contrib.layers.real_valued_column("x", dimension=2)
    mapper = KM.RandomFourierFeatureMapper(2, 200, stddev=1.0, seed=3)
    kernel = KM.KernelLinearClassifier(
        feature_columns=[col], kernel_mappers={col: [mapper]},
        optimizer=tf.train.FtrlOptimizer(0.5), model_dir=str(tmp_path / "k"))
    linear = tf.contrib.learn.LinearClassifier(
        feature_columns=[col], optimizer=tf.train.FtrlOptimizer(0.5),
        model_dir=str(tmp_path / "l"))
    assert _accuracy(kernel, x, y, xt, yt) > 0.95
    assert _accuracy(linear, x, y, xt, yt) < 0.75
    names = kernel.get_variable_names()
    assert any("x_MAPPED" in n for n in names) and not any(n.endswith("/x/weights")
                                                           for n in names)


def test_several_mappers_of_a_column_are_concatenated():
    col = tf.contrib.layers.real_valued_column("x", dimension=2)
    other = tf.contrib.layers.real_valued_column("w")
    a = KM.RandomFourierFeatureMapper(2, 5, seed=1)
    b = KM.RandomFourierFeatureMapper(2, 7, seed=2)
    est = KM.KernelLinearClassifier(feature_columns=[col, other],
                                    kernel_mappers={col: [a, b]})
    assert [(c.key, c.shape) for c in est.feature_columns] == [("x_MAPPED", (12,)),
                                                               ("w", (1,))]
    with pytest.raises(ValueError, match="real-valued columns only"):
        KM.KernelLinearClassifier(kernel_mappers={
            tf.contrib.layers.sparse_column_with_hash_bucket("s", 4): [a]})
    with pytest.raises(ValueError, match="takes 2 features but column 'w' has 1"):
        KM.KernelLinearClassifier(kernel_mappers={other: [a]})
    with pytest.raises(ValueError, match="at least one"):
        KM.KernelLinearClassifier(feature_columns=[col], kernel_mappers={})


def _np_hinge(labels, logits):
    out = []
    for label, row in zip(labels, logits, strict=True):
        others = [1 + row[j] - row[label] for j in range(len(row)) if j != label]
        out.append(max(0.0, max(others)))
    return np.array(out)


def test_sparse_multiclass_hinge_loss():
    rng = np.random.RandomState(2)
    logits = rng.randn(6, 4).astype(np.float32)
    labels = rng.randint(0, 4, size=6)
    weights = np.array([1.0, 0.0, 2.0, 1.0, 0.0, 0.5], np.float32)
    ref = _np_hinge(labels, logits)
    with tf.Graph().as_default():
        none = KM.sparse_multiclass_hinge_loss(tf.constant(labels), tf.constant(logits),
                                               reduction=tf.losses.Reduction.NONE)
        default = KM.sparse_multiclass_hinge_loss(tf.constant(labels[:, None]),
                                                  tf.constant(logits), weights=weights)
        collected = tf.losses.get_losses()
        got_none, got_default = tf.Session().run([none, default])
        with pytest.raises(ValueError, match="labels must be integer"):
            KM.sparse_multiclass_hinge_loss(tf.constant([0.0]), tf.constant([[1.0, 2.0]]))
    np.testing.assert_allclose(got_none, ref, rtol=1e-6)
    # SUM_BY_NONZERO_WEIGHTS: the weighted sum over the 4 examples of nonzero weight
    np.testing.assert_allclose(got_default, (ref * weights).sum() / 4, rtol=1e-6)
    assert len(collected) == 2
