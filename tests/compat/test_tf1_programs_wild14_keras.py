"""TF1 programs "from the wild", sweep 14 (area ``keras``): ``tf.keras`` inside TF1 graph
programs, run under TensorFlow 2.15's ``tf.compat.v1`` and flowgraph with the tf-oracle;
TensorFlow's printed values are inline.

The programs (2017-2019 style): a siamese functional model (one Dense shared by two
inputs, a concatenate and a subtract head, two outputs with loss weights and accuracy,
``compile(optimizer=tf.train.AdamOptimizer)``, ``fit`` with ``validation_split``, the
return types of evaluate / predict / *_on_batch, ``summary()``); a ``Sequential`` with a
custom ``Layer`` (``add_weight`` with a regularizer and a frozen weight,
``compute_output_shape``, ``get_config`` / ``from_config``); ``tf.keras.backend`` in graph
mode (``set_session`` / ``get_session``, ``function`` with the learning phase,
``gradients``, values, uids, ``clear_session``); Keras layers mixed with ``tf.layers``
and a hand-written session loop (BatchNormalization under a ``training`` placeholder,
its updates as control dependencies); a callback-heavy ``fit`` (``ModelCheckpoint`` with
a format string and ``save_weights_only``, ``EarlyStopping(restore_best_weights)``,
``LearningRateScheduler``, ``ReduceLROnPlateau``, ``CSVLogger``, ``TerminateOnNaN``,
``LambdaCallback``, ``initial_epoch``, TF-format ``save_weights`` / ``load_weights``); an
``Embedding(mask_zero=True)`` -> ``Bidirectional(LSTM)`` -> ``TimeDistributed`` ->
``Lambda`` tagger; a subclassed ``Model`` with ``class_weight`` and ``sample_weight``; and
``model_to_estimator`` on a freshly compiled model.

Classes of discrepancy found and fixed (one focused test each below):

* Callback hooks were called with ``logs=`` as a keyword; Keras passes the logs by
  position, so ``LambdaCallback(on_epoch_end=lambda epoch, l: ...)`` (and callbacks whose
  hook names the parameter differently) failed with a TypeError.
* ``summary()`` listed only the first call of a shared layer under "Connected to"; Keras
  lists the inputs of each of its calls in the model (``['left[0][0]', 'right[0][0]']``).
* A layer called several times raised AttributeError for ``output`` / ``input`` /
  ``output_shape`` / ``input_shape`` / the masks; TF 2.15's Keras answers for the first
  call (the shapes when all calls agree, else AttributeError naming
  ``get_output_shape_at``).
* ``Bidirectional`` over a masked input gave, at masked steps of a returned sequence, the
  last unmasked output; Keras makes both directions give zeros there
  (``zero_output_for_mask`` forced to ``return_sequences``, not shown in the config).
* ``tf.keras.backend.zeros / ones / eye`` returned tensors; Keras returns variables
  holding them (``K.zeros((2, 2), name='z')`` is the variable ``z_1``, its initial value
  the ``z`` op) whenever the shape is fully known.
* The Keras regularizers built ``Square``/``Sum``/``Mul``/``Add`` ops; Keras builds
  ``l1 * Sum(Abs(x))`` and ``2 * l2 * L2Loss(x)`` (``mul``, and ``Const`` + ``add``,
  ``add_1`` for ``l1_l2``); an activity penalty is computed before the batch size it is
  divided by; a layer lists its call's losses (activity penalties) before its weights'.
* ``fit`` validated on its validation samples in order; TF 1.x Keras shuffles them each
  epoch with NumPy's global generator (even with ``shuffle=False``): the per-output
  validation losses (means of batch values) depend on that order, and a program seeding
  NumPy saw other training batches from the second epoch on (the generator advanced).
* ``model_to_estimator`` always started from the Keras model's weights; TF does so only
  when a Keras session has initialized them, else the Estimator's clone keeps its own
  initial values, drawn under ``RunConfig(tf_random_seed=)``.

Found and left (TensorFlow's evidence in the oracle runs):

* TF builds a regularizer's ops again on each ``layer.losses`` access
  (``kernel/Regularizer_1/mul``); flowgraph builds them once, in ``add_weight``. A
  variable is read inside ``L2Loss`` / ``Abs`` in TF, before them in flowgraph.
* flowgraph applies a model once per mode for fit / evaluate / predict (scopes
  ``model_1``, ``model_2``), so a later ``model(x)`` is named ``model_2/...``
  (``mlp_3/...`` for a subclassed model) where TF's is ``model/...`` (``mlp_1/...``).
  BatchNormalization's updates are ``AssignMovingAvg/AssignSubVariableOp`` ops, not TF's
  ``cond_2/Merge``.
* ``model_to_estimator`` writes ``keras_model.ckpt`` into ``model_dir`` (TF: under
  ``model_dir/keras/``) and its checkpoints hold ``TFOptimizer/iterations``.
* ``Model.from_config`` of a model with a ``Lambda(lambda ...)`` layer: TF 2.15 rebuilds
  the marshalled lambda; flowgraph refuses it unless ``safe_mode=False`` or
  ``custom_objects`` (its deliberate safe-mode policy).
* NaN inputs: TF's fused MatMul+Relu kernel turns NaN into 0, so ``TerminateOnNaN`` never
  fires on a NaN feature; flowgraph propagates the NaN.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import flowgraph as tf

K = tf.keras.backend
L = tf.keras.layers


@pytest.fixture(autouse=True)
def _fresh_graph():
    with tf.Graph().as_default() as g:
        yield g


def _hist(history) -> dict:
    return {k: np.round(v, 4).tolist() for k, v in history.history.items()}


# -- program 1: siamese functional model --------------------------------------------------
def _siamese():
    tf.set_random_seed(42)
    a = L.Input(shape=(6,), name="left")
    b = L.Input(shape=(6,), name="right")
    shared = L.Dense(8, activation="relu", name="shared_dense")
    ha, hb = shared(a), shared(b)
    merged = L.concatenate([ha, hb])
    out1 = L.Dense(1, activation="sigmoid", name="same")(merged)
    out2 = L.Dense(3, activation="softmax", name="cls")(L.subtract([ha, hb]))
    return tf.keras.Model(inputs=[a, b], outputs=[out1, out2]), (ha, hb, merged)


def test_siamese_functional_model_two_outputs():
    model, (ha, hb, merged) = _siamese()
    assert (ha.name, hb.name, merged.name, K.int_shape(hb)) == \
        ("shared_dense/Relu:0", "shared_dense_1/Relu:0", "concatenate/concat:0", (None, 8))
    model.compile(optimizer=tf.train.AdamOptimizer(0.01),
                  loss={"same": "binary_crossentropy",
                        "cls": "sparse_categorical_crossentropy"},
                  loss_weights={"same": 1.0, "cls": 0.5}, metrics=["accuracy"])
    assert model.metrics_names == ["loss", "same_loss", "cls_loss", "same_acc", "cls_acc"]
    rng = np.random.RandomState(0)
    xa, xb = rng.randn(40, 6).astype("float32"), rng.randn(40, 6).astype("float32")
    y1 = (xa.sum(1) > xb.sum(1)).astype("float32")[:, None]
    y2 = rng.randint(0, 3, size=(40,))
    h = model.fit([xa, xb], [y1, y2], batch_size=8, epochs=3, validation_split=0.25,
                  shuffle=False, verbose=0)
    hist = _hist(h)
    assert sorted(hist) == ["cls_acc", "cls_loss", "loss", "same_acc", "same_loss",
                            "val_cls_acc", "val_cls_loss", "val_loss", "val_same_acc",
                            "val_same_loss"]
    want = {"cls_acc": [0.4333, 0.5, 0.5333], "cls_loss": [1.3261, 1.2093, 1.1201],
            "loss": [1.3363, 1.1936, 1.0848], "same_acc": [0.5, 0.7, 0.7667],
            "same_loss": [0.6736, 0.591, 0.5273], "val_cls_acc": [0.5, 0.4, 0.4],
            "val_loss": [1.1715, 1.1365, 1.1088], "val_same_acc": [0.8, 0.8, 0.8]}
    for key, values in want.items():
        np.testing.assert_allclose(hist[key], values, atol=1e-4, err_msg=key)
    assert h.epoch == [0, 1, 2]
    assert h.params == {"batch_size": 8, "epochs": 3, "steps": None, "samples": 30,
                        "verbose": 0, "do_validation": True,
                        "metrics": ["loss", "same_loss", "cls_loss", "same_acc", "cls_acc",
                                    "val_loss", "val_same_loss", "val_cls_loss",
                                    "val_same_acc", "val_cls_acc"]}
    assert [w.name for w in model.weights] == [
        "shared_dense/kernel:0", "shared_dense/bias:0", "same/kernel:0", "same/bias:0",
        "cls/kernel:0", "cls/bias:0"]
    np.testing.assert_allclose(model.get_layer("shared_dense").get_weights()[0][:2], [
        [0.3434, 0.4771, 0.0897, -0.0618, 0.3582, 0.0441, -0.583, 0.1947],
        [0.3935, -0.5352, 0.1857, -0.5063, 0.1206, -0.1156, -0.3073, -0.3942]], atol=1e-4)
    ev = model.evaluate([xa, xb], [y1, y2], batch_size=16, verbose=0)
    assert type(ev) is list
    np.testing.assert_allclose(ev, [1.0413, 0.5051, 1.1287, 0.8, 0.5], atol=1e-4)
    p = model.predict([xa[:3], xb[:3]])
    assert type(p) is list and [q.shape for q in p] == [(3, 1), (3, 3)]
    np.testing.assert_allclose(p[1], [[0.7544, 0.1898, 0.0558], [0.3788, 0.4342, 0.187],
                                      [0.2497, 0.198, 0.5523]], atol=1e-4)
    r = model.train_on_batch([xa[:8], xb[:8]], [y1[:8], y2[:8]])
    np.testing.assert_allclose(r, [0.9878, 0.4694, 1.1593, 0.8333, 0.5], atol=1e-4)
    r = model.test_on_batch([xa[:8], xb[:8]], [y1[:8], y2[:8]])
    assert type(r) is list
    np.testing.assert_allclose(r, [0.9569, 0.3476, 1.2185, 1.0, 0.5], atol=1e-4)
    r = model.predict_on_batch([xa[:2], xb[:2]])
    assert [type(x).__name__ for x in r] == ["ndarray", "ndarray"]
    assert (model.output_names, model.input_names) == (["same", "cls"], ["left", "right"])


def test_fit_shuffles_validation_samples_with_numpy():
    np.random.seed(0)
    tf.set_random_seed(42)
    a = L.Input(shape=(6,))
    h = L.Dense(8, activation="relu")(a)
    model = tf.keras.Model(a, [L.Dense(1, activation="sigmoid", name="same")(h),
                               L.Dense(3, activation="softmax", name="cls")(h)])
    model.compile(optimizer=tf.train.AdamOptimizer(0.01),
                  loss=["binary_crossentropy", "sparse_categorical_crossentropy"])
    rng = np.random.RandomState(0)
    xa = rng.randn(40, 6).astype("float32")
    y1 = (xa.sum(1) > 0).astype("float32")[:, None]
    y2 = rng.randint(0, 3, size=(40,))
    h = model.fit(xa, [y1, y2], batch_size=8, epochs=3, validation_split=0.25, verbose=0)
    want = {"cls_loss": [1.2354, 1.1357, 1.0908], "loss": [1.9367, 1.8009, 1.7091],
            "same_loss": [0.7196, 0.651, 0.6127], "val_cls_loss": [1.3281, 1.3324, 1.351],
            "val_loss": [2.2535, 2.2279, 2.2293], "val_same_loss": [0.7716, 0.7568, 0.7425]}
    hist = _hist(h)
    for key, values in want.items():
        np.testing.assert_allclose(hist[key], values, atol=1e-4, err_msg=key)
    assert round(np.random.rand(), 6) == 0.451159   # the generator where TF leaves it


def test_summary_lists_every_call_of_a_shared_layer():
    model, _ = _siamese()
    lines = []
    model.summary(print_fn=lines.append)
    # TF 2.15's rows (98 columns)
    row = lines.index(next(x for x in lines if x.startswith(" shared_dense (Dense)")))
    assert [x.rstrip() for x in lines[row:row + 2]] == [
        " shared_dense (Dense)        (None, 8)                    56        ['left[0][0]',",
        "                                                                     'right[0][0]']"]
    row = lines.index(next(x for x in lines if x.startswith(" subtract (Subtract)")))
    assert [x.rstrip() for x in lines[row:row + 2]] == [
        " subtract (Subtract)         (None, 8)                    0         "
        "['shared_dense[0][0]',",
        "                                                                     "
        "'shared_dense[1][0]']"]
    assert "Total params: 100 (400.00 Byte)" in lines


def test_shared_layer_answers_for_its_first_call():
    a, b = L.Input(shape=(6,), name="left"), L.Input(shape=(6,), name="right")
    shared = L.Dense(8, name="sd")
    shared(a)
    shared(b)
    # TF 2.15's values
    assert (shared.output.name, shared.input.name, shared.output_shape, shared.input_shape,
            shared.output_mask, shared.input_mask) == \
        ("sd/BiasAdd:0", "left:0", (None, 8), (None, 6), None, None)
    flat = L.Flatten(name="fl")
    flat(L.Input((2, 3)))
    flat(L.Input((4,)))
    assert flat.output.name == "fl/Reshape:0"
    with pytest.raises(AttributeError, match=r'"fl" has multiple inbound nodes, with '
                                             r"different output shapes.*get_output_shape_at"):
        _ = flat.output_shape
    with pytest.raises(AttributeError, match="different input shapes"):
        _ = flat.input_shape
    fresh = L.Dense(2, name="fresh")
    with pytest.raises(AttributeError, match="never been called"):
        _ = fresh.output_shape
    with pytest.raises(AttributeError, match="Layer fresh has no inbound nodes"):
        _ = fresh.output
    with pytest.raises(AttributeError, match="is not connected, no input to return"):
        _ = fresh.input
    s = tf.keras.Sequential([L.Dense(3, input_shape=(4,)), L.Dense(2)])
    assert (s.output_shape, s.input_shape, s.layers[1].input_shape) == \
        ((None, 2), (None, 4), (None, 3))


# -- program 2: a custom layer in a Sequential ---------------------------------------------
class Scale(L.Layer):
    def __init__(self, units, l2=0.01, **kwargs):
        super().__init__(**kwargs)
        self.units, self.l2 = units, l2

    def build(self, input_shape):
        self.kernel = self.add_weight(
            name="kernel", shape=(int(input_shape[-1]), self.units),
            initializer="glorot_uniform", regularizer=tf.keras.regularizers.l2(self.l2),
            trainable=True)
        self.offset = self.add_weight(name="offset", shape=(self.units,),
                                      initializer=tf.keras.initializers.Constant(0.5),
                                      trainable=False)
        super().build(input_shape)

    def call(self, x):
        return tf.matmul(x, self.kernel) + self.offset

    def compute_output_shape(self, input_shape):
        return (input_shape[0], self.units)

    def get_config(self):
        return {**super().get_config(), "units": self.units, "l2": self.l2}


def test_custom_layer_with_regularized_and_frozen_weights():
    tf.set_random_seed(1)
    model = tf.keras.Sequential([L.Dense(5, input_shape=(4,), activation="tanh"),
                                 Scale(3, name="scale"), L.Activation("softmax")])
    model.compile("adam", "categorical_crossentropy", metrics=["accuracy"])
    assert model.metrics_names == ["loss", "acc"]
    lines = []
    model.summary(print_fn=lines.append)
    assert lines[-4:-1] == ["Total params: 43 (172.00 Byte)",
                            "Trainable params: 40 (160.00 Byte)",
                            "Non-trainable params: 3 (12.00 Byte)"]
    s = model.get_layer("scale")
    assert ([w.name for w in s.weights], [w.name for w in s.trainable_weights],
            [w.name for w in s.non_trainable_weights]) == \
        (["scale/kernel:0", "scale/offset:0"], ["scale/kernel:0"], ["scale/offset:0"])
    assert len(model.losses) == 1
    assert s.compute_output_shape((None, 5)) == (None, 3)
    cfg = s.get_config()
    assert sorted(cfg.items()) == [("dtype", "float32"), ("l2", 0.01), ("name", "scale"),
                                   ("trainable", True), ("units", 3)]
    s2 = Scale.from_config(cfg)
    assert (s2.name, s2.units, s2.built) == ("scale", 3, False)
    rng = np.random.RandomState(3)
    x = rng.rand(30, 4).astype("float32")
    y = np.eye(3)[rng.randint(0, 3, 30)]
    h = model.fit(x, y, batch_size=10, epochs=2, verbose=0, shuffle=False,
                  validation_data=(x[:10], y[:10]))
    hist = _hist(h)
    np.testing.assert_allclose(hist["acc"], [0.4333, 0.4333], atol=1e-4)
    np.testing.assert_allclose(hist["loss"], [1.1318, 1.1302], atol=1e-4)
    np.testing.assert_allclose(hist["val_acc"], [0.3, 0.3], atol=1e-4)
    np.testing.assert_allclose(hist["val_loss"], [1.2161, 1.2129], atol=1e-4)
    kernel, offset = s.get_weights()
    np.testing.assert_allclose(kernel, [[-0.768, -0.8284, -0.7425], [-0.3977, 0.2679, 0.1364],
                                        [0.7465, -0.1189, -0.1572],
                                        [-0.1014, -0.3729, -0.1765],
                                        [0.7683, 0.43, 0.1438]], atol=1e-4)
    np.testing.assert_allclose(offset, [0.5, 0.5, 0.5])
    assert type(model.evaluate(x, y, verbose=0)).__name__ == "list"
    np.testing.assert_allclose(model.train_on_batch(x[:5], y[:5]), [1.0904, 0.4286],
                               atol=1e-4)
    np.testing.assert_allclose(model.predict_on_batch(x[:2]),
                               [[0.5492, 0.2374, 0.2134], [0.5861, 0.2073, 0.2066]], atol=1e-4)
    m2 = tf.keras.Sequential.from_config(model.get_config(), custom_objects={"Scale": Scale})
    assert [(layer.name, type(layer).__name__) for layer in m2.layers] == \
        [("dense", "Dense"), ("scale", "Scale"), ("activation", "Activation")]
    assert [c["class_name"] for c in model.get_config()["layers"]] == \
        ["InputLayer", "Dense", "Scale", "Activation"]
    model2 = tf.keras.Sequential()
    model2.add(L.Dense(2, input_dim=3))
    assert (model2.layers[0].name, model2.inputs[0].name, model2.outputs[0].name) == \
        ("dense_1", "dense_1_input:0", "dense_1_1/BiasAdd:0")


def test_regularizers_build_keras_ops():
    inp = L.Input((4,))
    d = L.Dense(3, kernel_initializer="ones", bias_initializer="ones",
                kernel_regularizer=tf.keras.regularizers.l2(0.01),
                bias_regularizer=tf.keras.regularizers.l1(0.1), name="d")
    e = L.Dense(3, kernel_initializer="ones",
                kernel_regularizer=tf.keras.regularizers.l1_l2(0.01, 0.02),
                activity_regularizer="l2", name="e")
    out = e(d(inp))
    ops = [(o.name, o.type) for o in tf.get_default_graph().get_operations()
           if "Regularizer" in o.name and o.type != "ReadVariableOp"]

    def scope(prefix):
        return [(n[len(prefix):], t) for n, t in ops if n.startswith(prefix)]

    # TF 2.15's ops (it reads a variable inside L2Loss / Abs)
    assert scope("d/kernel/Regularizer/") == [("L2Loss", "L2Loss"), ("mul/x", "Const"),
                                              ("mul", "Mul")]
    assert scope("d/bias/Regularizer/") == [("Abs", "Abs"), ("Const", "Const"),
                                            ("Sum", "Sum"), ("mul/x", "Const"),
                                            ("mul", "Mul")]
    assert scope("e/kernel/Regularizer/") == [
        ("Const", "Const"), ("Abs", "Abs"), ("Const_1", "Const"), ("Sum", "Sum"),
        ("mul/x", "Const"), ("mul", "Mul"), ("add", "AddV2"), ("L2Loss", "L2Loss"),
        ("mul_1/x", "Const"), ("mul_1", "Mul"), ("add_1", "AddV2")]
    assert [n for n, _ in scope("e/ActivityRegularizer/")] == [
        "L2Loss", "mul/x", "mul", "Shape", "strided_slice/stack", "strided_slice/stack_1",
        "strided_slice/stack_2", "strided_slice", "Cast", "truediv"]
    model = tf.keras.Model(inp, out)
    # a layer's activity penalty comes before its weights' (TF: d/kernel/Regularizer_2/mul,
    # d/bias/Regularizer_2/mul, e/ActivityRegularizer/truediv, e/kernel/Regularizer/add_1)
    assert [t.name for t in model.losses] == [
        "d/kernel/Regularizer/mul:0", "d/bias/Regularizer/mul:0",
        "e/ActivityRegularizer/truediv:0", "e/kernel/Regularizer/add_1:0"]
    values = K.get_session().run(model.losses, {inp: np.ones((2, 4), "float32")})
    # kernel 4x3 of ones: 0.01 * 12; bias: 0.1 * 3; e: 0.01 * 9 + 0.02 * 9;
    # activity: 0.01 * sum(15 ** 2 over 2 x 3) / 2
    np.testing.assert_allclose(values, [0.12, 0.3, 6.75, 0.27], rtol=1e-6)
    for reg, want in ((tf.keras.regularizers.l2(0.1), 1.0),
                      (tf.keras.regularizers.L1L2(l1=0.5, l2=0.25), 2.0 + 2.5)):
        assert float(K.eval(reg(tf.constant([1.0, -3.0])))) == pytest.approx(want)


# -- program 3: the backend in graph mode --------------------------------------------------
def test_backend_in_graph_mode():
    assert (K.learning_phase().name, K.learning_phase().dtype, K.floatx(), K.epsilon(),
            K.image_data_format()) == ("keras_learning_phase:0", tf.bool, "float32", 1e-07,
                                       "channels_last")
    sess = tf.Session()
    K.set_session(sess)
    assert K.get_session() is sess
    tf.set_random_seed(7)
    x = L.Input((3,), name="x")
    d = L.Dropout(0.5)(L.Dense(4, name="h")(x))
    o = L.Dense(2, name="o")(d)
    m = tf.keras.Model(x, o)
    assert (d.name, o.name, K.int_shape(o), K.ndim(o), K.dtype(o)) == \
        ("dropout/cond/Merge:0", "o/BiasAdd:0", (None, 2), 2, "float32")
    f = K.function([x, K.learning_phase()], [o])
    np.testing.assert_allclose(f([np.ones((2, 3), "float32"), 0])[0],
                               [[-0.7425, -1.2312]] * 2, atol=1e-4)
    g = K.gradients(K.sum(o), m.trainable_weights)
    assert [t.name for t in g] == [
        "gradients/h/MatMul_grad/MatMul_1:0", "gradients/h/BiasAdd_grad/BiasAddGrad:0",
        "gradients/o/MatMul_grad/MatMul_1:0", "gradients/o/BiasAdd_grad/BiasAddGrad:0"]
    assert [v.tolist() for v in K.batch_get_value([m.weights[1], m.weights[3]])] == \
        [[0.0] * 4, [0.0] * 2]
    v = K.variable(np.array([1.0, 2.0]), name="myvar")
    assert (v.name, K.get_value(v).tolist(), type(K.get_value(v)).__name__) == \
        ("myvar:0", [1.0, 2.0], "ndarray")
    K.set_value(v, [3.0, 4.0])
    assert K.get_value(v).tolist() == [3.0, 4.0]
    K.batch_set_value([(v, np.array([5.0, 6.0]))])
    assert K.eval(v).tolist() == [5.0, 6.0]
    c = K.constant([[1, 2]], name="c")
    assert (c.name, c.dtype, K.eval(c).tolist()) == ("c:0", tf.float32, [[1.0, 2.0]])
    p = K.placeholder(shape=(None, 5), name="pp")
    assert (p.name, K.int_shape(p)) == ("pp:0", (None, 5))
    assert (K.get_uid("dense"), K.get_uid("dense")) == (1, 2)
    K.set_learning_phase(1)
    assert K.learning_phase() == 1
    K.clear_session()   # (in the test's graph context the graph stays; the names reset)
    x2 = L.Input((3,))
    d2 = L.Dense(2)(x2)
    assert (x2.name, d2.name) == ("input_1:0", "dense/BiasAdd:0")
    assert K.get_session() is not sess
    with K.name_scope("blk"):
        q = K.constant([1.0]) * 2
    assert q.name == "blk/mul:0"
    t = K.concatenate([K.ones((2, 1)), K.zeros((2, 2))], axis=-1)
    r = K.mean(t, axis=1, keepdims=True)
    assert (t.name, K.int_shape(t), r.name, K.int_shape(r)) == \
        ("concat:0", (2, 3), "Mean:0", (2, 1))


def test_backend_zeros_ones_eye_are_variables():
    made = [K.zeros((2, 2)), K.zeros((2, 3), name="zz"), K.ones((3,), dtype="int32", name="oo"),
            K.eye(2, name="ee"), K.eye(3), K.zeros_like(K.ones((1,))),
            K.ones_like(K.zeros((2,)), name="ol")]
    # TF 2.15's names and types
    assert [(t.name, t.dtype.name, type(t).__name__ == "ResourceVariable") for t in made] == [
        ("Variable:0", "float32", True), ("zz_1:0", "float32", True),
        ("oo_1:0", "int32", True), ("ee:0", "float32", True),
        ("Variable_1:0", "float32", True), ("zeros_like:0", "float32", False),
        ("ol:0", "float32", False)]
    assert len(tf.global_variables()) == 7   # with the ones / zeros inside the *_like
    assert [o.name for o in tf.get_default_graph().get_operations() if "/" not in o.name] \
        == ["zeros", "Variable", "zz", "zz_1", "oo", "oo_1", "ee", "Variable_1", "ones",
            "Variable_2", "zeros_like", "zeros_1", "Variable_3", "ol"]
    assert K.eval(K.eye(2, dtype="int32")).tolist() == [[1, 0], [0, 1]]
    assert K.eval(made[2]).tolist() == [1, 1, 1]
    unknown = K.zeros(tf.placeholder(tf.int32, [2]))   # a shape not known: a tensor
    assert type(unknown).__name__ == "Tensor"


# -- program 4: Keras layers in a hand-written session loop --------------------------------
def test_keras_layers_in_a_session_training_loop():
    tf.set_random_seed(3)
    x = tf.placeholder(tf.float32, [None, 6], name="x")
    y = tf.placeholder(tf.int64, [None], name="y")
    training = tf.placeholder_with_default(False, [], name="training")
    with tf.variable_scope("encoder"):
        h = L.Dense(8, activation="relu")(x)
        bn = L.BatchNormalization(momentum=0.9)
        h = bn(h, training=training)
        h = tf.layers.dense(h, 5, name="proj")
    logits = L.Dense(3, name="logits")(h)
    assert (h.name, logits.name) == ("encoder/proj/BiasAdd:0", "logits/BiasAdd:0")
    assert [v.name for v in tf.global_variables()] == [
        "encoder/dense/kernel:0", "encoder/dense/bias:0",
        "encoder/batch_normalization/gamma:0", "encoder/batch_normalization/beta:0",
        "encoder/batch_normalization/moving_mean:0",
        "encoder/batch_normalization/moving_variance:0", "encoder/proj/kernel:0",
        "encoder/proj/bias:0", "logits/kernel:0", "logits/bias:0"]
    assert len(tf.trainable_variables()) == 8
    assert (len(bn.updates), len(tf.get_collection(tf.GraphKeys.UPDATE_OPS))) == (2, 0)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y,
                                                                         logits=logits))
    with tf.control_dependencies(bn.updates):
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    rng = np.random.RandomState(0)
    X, Y = rng.randn(16, 6).astype("float32"), rng.randint(0, 3, 16)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        losses = [s.run([loss, train], {x: X, y: Y, training: True})[0] for _ in range(4)]
        np.testing.assert_allclose(losses, [1.71645, 1.34872, 1.0996, 0.93053], atol=1e-5)
        np.testing.assert_allclose(s.run(bn.moving_mean), [
            0.09251, 0.10264, 0.17935, 0.15822, 0.12895, 0.19415, 0.10401, 0.11329],
            atol=2e-5)
        np.testing.assert_allclose(s.run(bn.moving_variance), [
            0.71771, 0.70531, 0.91168, 0.73161, 0.73126, 0.8178, 0.74391, 0.79921],
            atol=2e-5)
        assert round(float(s.run(loss, {x: X, y: Y})), 3) == 0.936
    m = tf.keras.Sequential([L.Dense(4, input_shape=(6,)), L.BatchNormalization(),
                             L.Dense(2)])
    assert len(m.updates) == 2
    assert [w.name for w in m.non_trainable_weights] == [
        "batch_normalization_1/moving_mean:0", "batch_normalization_1/moving_variance:0"]


# -- program 5: callbacks -------------------------------------------------------------------
def test_callbacks_fit_from_initial_epoch(tmp_path):
    d = str(tmp_path)
    tf.set_random_seed(11)
    m = tf.keras.Sequential([L.Dense(6, activation="relu", input_shape=(4,)), L.Dense(1)])
    m.compile(optimizer=tf.keras.optimizers.SGD(0.05), loss="mse", metrics=["mae"])
    rng = np.random.RandomState(1)
    X = rng.randn(32, 4).astype("float32")
    Y = (X[:, :1] * 2 - X[:, 1:2]).astype("float32")
    logs = []
    cbs = [
        tf.keras.callbacks.ModelCheckpoint(os.path.join(d, "w-{epoch:02d}-{val_loss:.2f}"),
                                           save_weights_only=True, save_best_only=True,
                                           monitor="val_loss"),
        tf.keras.callbacks.EarlyStopping(monitor="val_loss", patience=1,
                                         restore_best_weights=True, min_delta=0.5),
        tf.keras.callbacks.LearningRateScheduler(lambda e: 0.05 * (0.5 ** e)),
        tf.keras.callbacks.ReduceLROnPlateau(monitor="loss", factor=0.5, patience=1,
                                             min_lr=1e-4),
        tf.keras.callbacks.CSVLogger(os.path.join(d, "log.csv")),
        tf.keras.callbacks.TerminateOnNaN(),
        tf.keras.callbacks.LambdaCallback(
            on_epoch_end=lambda e, lg: logs.append((e, sorted(lg)))),
    ]
    h = m.fit(X, Y, batch_size=8, epochs=6, validation_data=(X[:8], Y[:8]), callbacks=cbs,
              verbose=0, initial_epoch=1, shuffle=False)
    assert h.epoch == [1, 2, 3]
    want = {"loss": [5.6514, 4.1177, 3.6642], "lr": [0.025, 0.0125, 0.0062],
            "mean_absolute_error": [1.7979, 1.5397, 1.4526],
            "val_loss": [4.6812, 3.9033, 3.6033],
            "val_mean_absolute_error": [1.7445, 1.5898, 1.5403]}
    hist = _hist(h)
    assert sorted(hist) == sorted(want)
    for key, values in want.items():
        np.testing.assert_allclose(hist[key], values, atol=1e-4, err_msg=key)
    keys = ["loss", "lr", "mean_absolute_error", "val_loss", "val_mean_absolute_error"]
    assert logs == [(1, keys), (2, keys), (3, keys)]
    assert sorted(os.listdir(d)) == [
        "checkpoint", "log.csv", "w-02-4.68.data-00000-of-00001", "w-02-4.68.index",
        "w-03-3.90.data-00000-of-00001", "w-03-3.90.index",
        "w-04-3.60.data-00000-of-00001", "w-04-3.60.index"]
    csv = open(os.path.join(d, "log.csv")).read().splitlines()
    assert (csv[0], len(csv)) == ("epoch," + ",".join(keys), 4)
    assert (cbs[1].stopped_epoch, round(float(cbs[1].best), 4), cbs[1].wait) == (3, 3.9033, 1)
    assert round(float(K.get_value(m.optimizer.lr)), 6) == 0.00625
    np.testing.assert_allclose(m.get_weights()[3], [-0.1354], atol=1e-4)  # restored best
    m.save_weights(os.path.join(d, "final"))
    assert open(os.path.join(d, "checkpoint")).read().splitlines()[0] == \
        'model_checkpoint_path: "final"'
    names = sorted(tf.train.load_checkpoint(os.path.join(d, "final"))
                   .get_variable_to_shape_map())
    assert names[:5] == ["_CHECKPOINTABLE_OBJECT_GRAPH",
                         "layer_with_weights-0/bias/.ATTRIBUTES/VARIABLE_VALUE",
                         "layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE",
                         "layer_with_weights-1/bias/.ATTRIBUTES/VARIABLE_VALUE",
                         "layer_with_weights-1/kernel/.ATTRIBUTES/VARIABLE_VALUE"]
    m2 = tf.keras.Sequential([L.Dense(6, activation="relu", input_shape=(4,)), L.Dense(1)])
    status = m2.load_weights(os.path.join(d, "final"))
    assert type(status).__name__ == "CheckpointLoadStatus"
    np.testing.assert_allclose(m2.get_weights()[3], m.get_weights()[3])
    m.compile(optimizer="sgd", loss="mse")
    h2 = m.fit(X, Y, batch_size=8, epochs=3, callbacks=[tf.keras.callbacks.TerminateOnNaN()],
               verbose=0, shuffle=False)
    np.testing.assert_allclose(h2.history["loss"], [3.6322, 3.3045, 3.0434], atol=1e-4)


def test_callback_hooks_get_their_arguments_by_position():
    seen = []

    class Recorder(tf.keras.callbacks.Callback):
        def on_epoch_end(self, epoch, log_dict=None):   # not named `logs`
            seen.append(("epoch", epoch, sorted(log_dict)))

        def on_train_batch_end(self, batch, batch_logs=None):
            seen.append(("batch", batch, round(float(batch_logs["loss"]), 4)))

    m = tf.keras.Sequential([L.Dense(1, input_shape=(2,), kernel_initializer="ones")])
    m.compile("sgd", "mse")
    cb = tf.keras.callbacks.LambdaCallback(
        on_train_begin=lambda lg: seen.append(("begin", lg)),
        on_epoch_begin=lambda e, lg: seen.append(("epoch_begin", e)),
        on_batch_end=lambda b, lg: seen.append(("lambda_batch", b)))
    # as TF 2.15: the epoch / train hooks get their arguments by position, while the
    # default on_train_batch_end hands `logs=` by keyword to on_batch_end
    with pytest.raises(TypeError, match="unexpected keyword argument 'logs'"):
        m.fit(np.ones((4, 2), "float32"), np.zeros((4, 1), "float32"), batch_size=4,
              epochs=1, verbose=0, callbacks=[Recorder(), cb])
    assert seen == [("begin", {}), ("epoch_begin", 0), ("batch", 0, 4.0)]
    seen.clear()
    cb = tf.keras.callbacks.LambdaCallback(on_epoch_end=lambda e, lg: seen.append(e))
    m.fit(np.ones((4, 2), "float32"), np.zeros((4, 1), "float32"), batch_size=4, epochs=2,
          verbose=0, callbacks=[Recorder(), cb])
    assert seen == [("batch", 0, 3.5344), ("epoch", 0, ["loss"]), 0, ("batch", 0, 3.123),
                    ("epoch", 1, ["loss"]), 1]


# -- program 6: a masked bidirectional tagger -----------------------------------------------
def test_masked_bidirectional_lstm_tagger():
    tf.set_random_seed(5)
    inp = L.Input(shape=(5,), dtype="int32", name="tokens")
    emb = L.Embedding(20, 4, mask_zero=True, name="emb")(inp)
    bi = L.Bidirectional(L.LSTM(3, return_sequences=True), name="bilstm")(emb)
    td = L.TimeDistributed(L.Dense(2), name="td")(bi)
    pooled = L.Lambda(lambda t: K.max(t, axis=1), name="maxpool")(td)
    out = L.Dense(1, activation="sigmoid", name="out")(pooled)
    assert [(t.name, K.int_shape(t)) for t in (emb, bi, td, pooled)] == [
        ("emb/embedding_lookup/Identity:0", (None, 5, 4)), ("bilstm/concat:0", (None, 5, 6)),
        ("td/Reshape_1:0", (None, 5, 2)), ("maxpool/Max:0", (None, 2))]
    m = tf.keras.Model(inp, out)
    assert [w.name for w in m.weights] == [
        "emb/embeddings:0", "bilstm/forward_lstm/lstm_cell/kernel:0",
        "bilstm/forward_lstm/lstm_cell/recurrent_kernel:0",
        "bilstm/forward_lstm/lstm_cell/bias:0", "bilstm/backward_lstm/lstm_cell/kernel:0",
        "bilstm/backward_lstm/lstm_cell/recurrent_kernel:0",
        "bilstm/backward_lstm/lstm_cell/bias:0", "td/kernel:0", "td/bias:0", "out/kernel:0",
        "out/bias:0"]
    f = K.function([inp], [td])
    # before training: the masked steps of the sequence are zeros (so is td's output)
    np.testing.assert_allclose(f([np.array([[3, 4, 5, 0, 0]])])[0], [[
        [0.0018, -0.0091], [0.0043, 0.0028], [0.0005, -0.0078], [0.0, 0.0], [0.0, 0.0]]],
        atol=1e-4)
    m.compile(tf.keras.optimizers.SGD(0.5), "binary_crossentropy", metrics=["accuracy"])
    rng = np.random.RandomState(2)
    X = rng.randint(1, 20, size=(12, 5))
    X[:, 3:] = 0
    X[::3, 2:] = 0
    Y = (X[:, 0] > 10).astype("float32")
    h = m.fit(X, Y, epochs=2, batch_size=4, shuffle=False, verbose=0)
    hist = _hist(h)
    np.testing.assert_allclose(hist["acc"], [0.5, 0.5], atol=1e-4)
    np.testing.assert_allclose(hist["loss"], [0.6934, 0.6922], atol=1e-4)
    np.testing.assert_allclose(m.predict(X[:3]).ravel(), [0.5023, 0.5034, 0.5036], atol=1e-4)
    np.testing.assert_allclose(f([X[:1]])[0], [[[0.0224, -0.0208], [0.0285, -0.0231],
                                                [-0.0038, 0.0029], [-0.0038, 0.0029],
                                                [-0.0038, 0.0029]]], atol=1e-4)
    np.testing.assert_allclose(m.get_layer("bilstm").get_weights()[1][0], [
        0.6667, -0.3519, 0.181, -0.3478, 0.1559, -0.2687, 0.2763, 0.2602, 0.0192, -0.0693,
        0.1737, -0.0451], atol=1e-4)
    assert m.get_layer("bilstm").get_config()["merge_mode"] == "concat"
    assert m.get_layer("td").get_config()["layer"]["class_name"] == "Dense"


def test_bidirectional_gives_zeros_at_masked_steps():
    b = L.Bidirectional(L.GRU(3, return_sequences=True))
    assert b.get_config()["layer"]["config"].get("zero_output_for_mask") is None
    assert L.Bidirectional.from_config(b.get_config()).get_config()["layer"]["config"] \
        .get("zero_output_for_mask") is None
    tf.set_random_seed(1)
    summed = L.Bidirectional(L.SimpleRNN(2, return_sequences=True), merge_mode="sum")
    x = L.Input((4, 1))
    y = summed(L.Masking()(x))
    last = L.Bidirectional(L.SimpleRNN(2))(L.Masking()(x))
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        seq, fin = s.run([y, last], {x: np.array([[[1.0], [2.0], [0.0], [0.0]]])})
    assert seq.shape == (1, 4, 2) and fin.shape == (1, 4)
    assert seq[0, 2:].tolist() == [[0.0, 0.0], [0.0, 0.0]]   # TF 2.15
    assert np.abs(seq[0, :2]).min() > 0


# -- program 7: a subclassed model with class and sample weights ---------------------------
def test_subclassed_model_class_and_sample_weights():
    class MLP(tf.keras.Model):
        def __init__(self, n_classes=3):
            super().__init__(name="mlp")
            self.d1 = L.Dense(16, activation="relu")
            self.drop = L.Dropout(0.0)
            self.d2 = L.Dense(n_classes, activation="softmax")

        def call(self, x, training=None):
            return self.d2(self.drop(self.d1(x), training=training))

    tf.set_random_seed(9)
    m = MLP()
    m.compile(optimizer=tf.train.GradientDescentOptimizer(0.1),
              loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    rng = np.random.RandomState(4)
    X, Y = rng.randn(24, 5).astype("float32"), rng.randint(0, 3, 24)
    h = m.fit(X, Y, batch_size=6, epochs=2, shuffle=False, verbose=0,
              class_weight={0: 1.0, 1: 2.0, 2: 0.5})
    np.testing.assert_allclose(h.history["acc"], [0.2917, 0.4583], atol=1e-4)
    np.testing.assert_allclose(h.history["loss"], [1.4539, 1.2121], atol=1e-4)
    assert m.metrics_names == ["loss", "acc"]
    assert [w.name for w in m.weights] == ["mlp/dense/kernel:0", "mlp/dense/bias:0",
                                           "mlp/dense_1/kernel:0", "mlp/dense_1/bias:0"]
    lines = []
    m.summary(print_fn=lines.append)
    assert lines[4:9] == [" dense (Dense)               multiple                  96        ",
                          " " * 65,
                          " dropout (Dropout)           multiple                  0         ",
                          " " * 65,
                          " dense_1 (Dense)             multiple                  51        "]
    sw = np.linspace(0.1, 1.0, 24)
    h = m.fit(X, Y, batch_size=6, epochs=2, shuffle=False, verbose=0, sample_weight=sw)
    np.testing.assert_allclose(h.history["acc"], [0.4583, 0.4583], atol=1e-4)
    np.testing.assert_allclose(h.history["loss"], [0.6024, 0.5786], atol=1e-4)
    np.testing.assert_allclose(m.evaluate(X, Y, sample_weight=sw, verbose=0),
                               [0.5533, 0.5417], atol=1e-4)
    assert ([t.name for t in m.inputs], m.outputs[0].name) == \
        (["input_1:0"], "mlp/dense_1/Softmax:0")
    np.testing.assert_allclose(m.predict(X[:2]), [[0.3353, 0.4214, 0.2433],
                                                  [0.2248, 0.2965, 0.4786]], atol=1e-4)
    assert (len(m.trainable_weights), len(m.variables)) == (4, 4)


# -- program 8: model_to_estimator on a fresh model ----------------------------------------
def test_model_to_estimator_uses_its_own_initial_values(tmp_path):
    d = str(tmp_path)
    tf.set_random_seed(0)
    inp = L.Input((4,), name="feats")
    out = L.Dense(3, activation="softmax", name="probs")(
        L.Dense(8, activation="relu", name="hidden")(inp))
    m = tf.keras.Model(inp, out)
    m.compile(tf.train.GradientDescentOptimizer(0.2), "sparse_categorical_crossentropy",
              metrics=["accuracy"])
    # no Keras session has initialized the weights: TF's Estimator starts from its clone's
    # initial values under tf_random_seed=3
    est = tf.keras.estimator.model_to_estimator(
        keras_model=m, model_dir=d, config=tf.estimator.RunConfig(tf_random_seed=3))
    rng = np.random.RandomState(0)
    X, Y = rng.randn(40, 4).astype("float32"), rng.randint(0, 3, 40).astype("int32")

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"feats": X}, Y)).batch(10)

    est.train(input_fn, steps=4)
    r = est.evaluate(input_fn)
    assert sorted(r) == ["acc", "global_step", "loss"]
    assert (round(float(r["acc"]), 4), round(float(r["loss"]), 4), int(r["global_step"])) == \
        (0.45, 1.0412, 4)
    preds = list(est.predict(lambda: tf.data.Dataset.from_tensor_slices(
        {"feats": X[:2]}).batch(2)))
    assert (len(preds), sorted(preds[0])) == (2, ["probs"])
    np.testing.assert_allclose(preds[0]["probs"], [0.4216, 0.2937, 0.2847], atol=1e-4)
