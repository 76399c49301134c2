"""tf.keras.mixed_precision (LossScaleOptimizer), tf.keras.experimental (cosine schedules)
and tf.keras.export in TF1 mode, against TF 2.15's tf.compat.v1.keras (expected values
recorded with the tf-oracle)."""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf

K = tf.keras
X = np.arange(12, dtype=np.float32).reshape(4, 3) / 10
Y = np.ones((4, 2), np.float32)


def _train(make_opt, x=X, epochs=3):
    with tf.Graph().as_default():
        model = K.Sequential([K.layers.Dense(2, input_shape=(3,),
                                             kernel_initializer=K.initializers.Constant(0.5))])
        opt = make_opt()
        model.compile(opt, "mse")
        model.fit(x, Y, epochs=epochs, batch_size=4, verbose=0, shuffle=False)
        scale = K.backend.get_value(opt.loss_scale) if hasattr(opt, "loss_scale") else None
        return model.get_weights(), scale


def test_loss_scaling_leaves_the_update_unchanged():
    plain, _ = _train(lambda: K.optimizers.SGD(0.1))
    scaled, scale = _train(lambda: K.mixed_precision.LossScaleOptimizer(K.optimizers.SGD(0.1)))
    np.testing.assert_allclose(scaled[0], [[0.473, 0.473], [0.4781, 0.4781],
                                           [0.4831, 0.4831]], atol=1e-4)
    np.testing.assert_allclose(scaled[1], [0.0508, 0.0508], atol=1e-4)
    for a, b in zip(plain, scaled, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    assert scale == 32768.0 and scale.dtype == np.float32


def test_dynamic_scale_grows_and_fixed_scale_stays():
    weights, scale = _train(lambda: K.mixed_precision.LossScaleOptimizer(
        K.optimizers.SGD(0.1), dynamic_growth_steps=2), epochs=5)
    assert scale == 131072.0  # doubled after steps 2 and 4
    np.testing.assert_allclose(weights[1], [0.0823, 0.0823], atol=1e-4)
    fixed, scale = _train(lambda: K.mixed_precision.LossScaleOptimizer(
        K.optimizers.Adam(0.1), dynamic=False, initial_scale=8))
    adam, _ = _train(lambda: K.optimizers.Adam(0.1))
    assert scale == 8.0
    np.testing.assert_allclose(fixed[0][:, 0], [0.2449, 0.2938, 0.3792], atol=1e-4)
    for a, b in zip(fixed, adam, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5)


def test_overflow_skips_the_step_and_halves_the_scale():
    x = X.copy()
    x[0, 0] = 1e30
    weights, scale = _train(lambda: K.mixed_precision.LossScaleOptimizer(
        K.optimizers.SGD(0.1), initial_scale=1e10), x=x, epochs=2)
    np.testing.assert_array_equal(weights[0], np.full((3, 2), 0.5, np.float32))
    np.testing.assert_array_equal(weights[1], [0.0, 0.0])
    assert scale == 2.5e9


def test_loss_scale_optimizer_arguments():
    opt = K.mixed_precision.LossScaleOptimizer(K.optimizers.SGD())
    assert (opt.dynamic, opt.initial_scale, opt.dynamic_growth_steps,
            type(opt.inner_optimizer).__name__) == (True, 32768.0, 2000, "SGD")
    with pytest.raises(ValueError, match='"initial_scale" must be specified'):
        K.mixed_precision.LossScaleOptimizer(K.optimizers.SGD(), dynamic=False)
    with pytest.raises(ValueError, match='"dynamic_growth_steps" must be None'):
        K.mixed_precision.LossScaleOptimizer(K.optimizers.SGD(), dynamic=False,
                                             initial_scale=2, dynamic_growth_steps=3)
    with pytest.raises(TypeError, match="inner_optimizer"):
        K.mixed_precision.LossScaleOptimizer(tf.train.GradientDescentOptimizer(0.1))
    with tf.Graph().as_default():
        loss = tf.constant(3.0)
        scaled = opt.get_scaled_loss(loss)
        (unscaled,) = opt.get_unscaled_gradients([tf.constant(65536.0)])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run([scaled, unscaled]) == [98304.0, 2.0]


def _values(schedule, steps):
    with tf.Graph().as_default(), tf.Session() as sess:
        return sess.run([schedule(s) for s in steps])


def test_cosine_schedules_as_tf():
    E = K.experimental
    np.testing.assert_allclose(_values(E.CosineDecay(0.1, 10), [0, 3, 10, 15]),
                               [0.1, 0.0794, 0.0, 0.0], atol=1e-4)
    np.testing.assert_allclose(_values(E.CosineDecay(0.1, 10, alpha=0.2), [0, 3, 10, 15]),
                               [0.1, 0.0835, 0.02, 0.02], atol=1e-4)
    restarts = E.CosineDecayRestarts(0.1, 4, t_mul=2.0, m_mul=0.5, alpha=0.1)
    np.testing.assert_allclose(_values(restarts, [0, 2, 4, 5, 11, 13, 30]),
                               [0.1, 0.055, 0.055, 0.0533, 0.0117, 0.0323, 0.0211], atol=1e-4)
    np.testing.assert_allclose(_values(E.CosineDecayRestarts(0.1, 4, t_mul=1.0), [0, 2, 4, 5]),
                               [0.1, 0.05, 0.1, 0.0854], atol=1e-4)
    assert sorted(E.CosineDecay(0.1, 10).get_config().items()) == [
        ("alpha", 0.0), ("decay_steps", 10), ("initial_learning_rate", 0.1), ("name", None),
        ("warmup_steps", 0), ("warmup_target", None)]
    assert sorted(restarts.get_config().items()) == [
        ("alpha", 0.1), ("first_decay_steps", 4), ("initial_learning_rate", 0.1),
        ("m_mul", 0.5), ("name", None), ("t_mul", 2.0)]
    with tf.Graph().as_default():
        assert E.CosineDecayRestarts(0.1, 4)(tf.constant(3)).dtype == tf.float32


def test_cosine_decay_warmup():
    schedule = K.experimental.CosineDecay(0.0, 10, warmup_target=0.1, warmup_steps=5)
    np.testing.assert_allclose(_values(schedule, [0, 1, 5, 10, 15]),
                               [0.0, 0.02, 0.1, 0.05, 0.0], atol=1e-6)


def test_export_archive_says_what_to_use():
    with pytest.raises(NotImplementedError, match="model_to_estimator"):
        K.export.ExportArchive()


def test_loss_scale_optimizer_round_trips_through_hdf5(tmp_path):
    path = str(tmp_path / "m.h5")
    with tf.Graph().as_default():
        model = K.Sequential([K.layers.Dense(1, input_shape=(2,))])
        model.compile(K.mixed_precision.LossScaleOptimizer(K.optimizers.Adam(0.01),
                                                           dynamic_growth_steps=7), "mse")
        model.save(path)
    with tf.Graph().as_default():
        restored = K.models.load_model(path)
        opt = restored.optimizer
        assert type(opt).__name__ == "LossScaleOptimizer"
        assert (opt.dynamic_growth_steps, type(opt.inner_optimizer).__name__) == (7, "Adam")
        restored.fit(np.ones((4, 2)), np.ones((4, 1)), epochs=1, verbose=0)
