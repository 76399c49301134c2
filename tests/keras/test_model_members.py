"""Keras `Layer` / `Model` members and `tf.layers` members TF1 graph-mode programs use
(flowgraph/keras/layer_members.py, flowgraph/keras/model_members.py,
flowgraph/layers/layer_api.py), and `fit_generator(class_weight=...)`. Expected values are
TF 2.15's (tf.compat.v1, v2 behaviour disabled), printed by the oracle."""

import warnings

import numpy as np
import pytest

import flowgraph as tf
from flowgraph import keras


def _functional():
    inp = keras.layers.Input(shape=(3,))
    bn = keras.layers.BatchNormalization()
    d = keras.layers.Dense(2, name="dd")
    out = d(bn(inp))
    return keras.Model(inp, out, name="mm"), bn, d


def test_model_plain_members():
    with tf.Graph().as_default():
        m, _, _ = _functional()
        assert (m.name, m.trainable, m.stateful, m.run_eagerly, m.dynamic) == \
            ("mm", True, False, False, False)
        assert m.dtype_policy.name == "_infer" and m.compute_dtype is None
        assert m.variable_dtype is None and m.activity_regularizer is None
        assert m.inbound_nodes == [] and m.outbound_nodes == []
        assert m.input_mask is None and m.output_mask is None
        assert [v.name for v in m.non_trainable_variables] == \
            ["batch_normalization/moving_mean:0", "batch_normalization/moving_variance:0"]
        assert [s.name for s in m.submodules] == ["input_1", "dd", "batch_normalization"]
        assert {k: v.name for k, v in m.get_weight_paths().items()} == {
            "batch_normalization.gamma": "batch_normalization/gamma:0",
            "batch_normalization.beta": "batch_normalization/beta:0",
            "batch_normalization.moving_mean": "batch_normalization/moving_mean:0",
            "batch_normalization.moving_variance": "batch_normalization/moving_variance:0",
            "dd.kernel": "dd/kernel:0", "dd.bias": "dd/bias:0"}
        with pytest.warns(UserWarning, match="state_updates"):
            assert m.state_updates == []
        assert m.distribute_strategy is tf.distribute.get_strategy()
        assert m.reset_states() is None and m.reset_metrics() is None


def test_name_is_read_only_trainable_is_not():
    with tf.Graph().as_default():
        m, _, d = _functional()
        with pytest.raises(AttributeError, match="name"):
            m.name = "x"
        with pytest.raises(AttributeError, match="name"):
            d.name = "x"
        d.trainable = False
        assert len(m.trainable_weights) == 2  # batch norm's gamma and beta
        for attr in ("name", "trainable", "activity_regularizer", "stateful"):
            assert isinstance(getattr(keras.Model, attr), property)
            assert isinstance(getattr(tf.layers.Dense, attr if attr != "stateful"
                                      else "name"), property)


def test_node_accessors():
    with tf.Graph().as_default():
        m, bn, d = _functional()
        assert d.get_input_at(0) is bn.output
        assert d.get_output_shape_at(0) == (None, 2)
        assert d.get_input_shape_at(0) == (None, 3)
        assert len(d.inbound_nodes) == 1 and len(d.outbound_nodes) == 0
        assert len(bn.outbound_nodes) == 1
        assert d.input_mask is None and d.output_mask is None
        for call, what in ((lambda: d.get_input_shape_at(1), "input shape at node 1"),
                           (lambda: d.get_input_at(2), "input at node 2"),
                           (lambda: d.get_output_at(3), "output at node 3"),
                           (lambda: d.get_output_shape_at(3), "output shape at node 3"),
                           (lambda: d.get_input_mask_at(3), "input at node 3")):
            with pytest.raises(ValueError, match=f"Asked to get {what}, but the layer has "
                                                 f"only 1 inbound nodes"):
                call()
        # the model itself was never called as a layer
        with pytest.raises(RuntimeError, match="never been called and thus has no defined "
                                               "input shape"):
            m.get_input_shape_at(0)
        with pytest.raises(RuntimeError, match="no defined output"):
            m.get_output_at(0)
        fresh = keras.layers.Dense(2)
        assert fresh.inbound_nodes == []
        with pytest.raises(AttributeError, match="Layer dense is not connected, no input"):
            _ = fresh.input_mask


def test_nested_model_nodes_and_submodules():
    with tf.Graph().as_default():
        s = keras.Sequential([keras.layers.Dense(4, input_shape=(3,), name="a"),
                              keras.layers.Dropout(0.5, name="b"),
                              keras.layers.Dense(1, name="c")], name="seq")
        assert [x.name for x in s.submodules] == ["a_input", "c", "a", "b"]
        assert list(s.get_weight_paths()) == ["a.kernel", "a.bias", "c.kernel", "c.bias"]
        inner = keras.Sequential([keras.layers.Dense(2, name="i1")], name="inner")
        x = keras.layers.Input((3,), name="xin")
        o = inner(keras.layers.Dense(5, name="h")(x))
        keras.Model(x, o)
        assert inner.get_input_at(0).op.name == "h/BiasAdd"
        assert inner.get_output_shape_at(0) == (None, 2)
        assert len(inner.inbound_nodes) == 1
        assert keras.layers.Dense(2).submodules == ()
        s.get_layer("a").trainable = False
        assert [v.name for v in s.non_trainable_variables] == ["a/kernel:0", "a/bias:0"]


def test_dtype_policy():
    with tf.Graph().as_default():
        d = keras.layers.Dense(2)
        assert repr(d.dtype_policy) == '<Policy "_infer">' and d.compute_dtype is None
        d(tf.ones([2, 3]))
        assert (d.dtype_policy.name, d.compute_dtype, d.variable_dtype) == \
            ("float32", "float32", "float32")
        d64 = keras.layers.Dense(2, dtype="float64")
        assert (d64.dtype_policy.name, d64.compute_dtype) == ("float64", "float64")


def test_compute_output_shape_adds_nothing_to_the_graph():
    with tf.Graph().as_default() as g:
        s = keras.Sequential([keras.layers.Dense(4, input_shape=(3,)),
                              keras.layers.Dense(1)])
        before = len(g.get_operations())
        assert s.compute_output_shape((7, 3)).as_list() == [7, 1]
        assert s.compute_output_shape([None, 3]).as_list() == [None, 1]
        assert keras.layers.Dense(2).compute_output_shape((None, 5)).as_list() == [None, 2]
        assert len(g.get_operations()) == before
        with pytest.raises(NotImplementedError):
            keras.layers.Layer().compute_output_shape((5, 2))


def test_name_scope_members_raise_as_in_tf():
    class M(keras.Model):
        @keras.Model.with_name_scope
        def f(self):
            return 1

    with tf.Graph().as_default():
        with pytest.raises(AttributeError, match="'Dense' object has no attribute "
                                                 "'_scope_name'"):
            _ = keras.layers.Dense(2).name_scope
        with pytest.raises(AttributeError, match="'M' object has no attribute '_scope_name'"):
            M().f()
        with pytest.raises(AttributeError, match="'Dense' object has no attribute "
                                                 "'_scope_name'"):
            _ = tf.layers.Dense(2).name_scope


def test_step_members_in_graph_mode():
    with tf.Graph().as_default():
        s = keras.Sequential([keras.layers.Dense(1, input_shape=(3,), name="a")], name="seq")
        with pytest.raises(TypeError, match="train_step"):
            s.train_step((tf.ones([2, 3]), tf.ones([2, 1])))  # TF: even before compile
        s.compile("sgd", "mse")
        with pytest.raises(TypeError, match="test_step"):
            s.test_step((tf.ones([2, 3]), tf.ones([2, 1])))
        out = s.predict_step((tf.ones([2, 3]), tf.ones([2, 1])))
        assert out.op.name == "seq/a/BiasAdd" and out.shape.as_list() == [2, 1]
        assert s.predict_step(np.ones((2, 3), np.float32)).op.name == "seq_1/a/BiasAdd"
        for kind in ("train", "test", "predict"):
            fn = getattr(s, f"make_{kind}_function")()
            assert getattr(s, f"{kind}_function") is fn
            with pytest.raises(TypeError, match=f"{kind}_step"):
                fn(iter([np.ones((2, 3), np.float32)]))
        s.run_eagerly = True  # accepted; reading it back fails, as in TF
        with pytest.raises(ValueError, match="only set `run_eagerly=True` if eager"):
            _ = s.run_eagerly


def test_tf_layers_members():
    with tf.Graph().as_default():
        layer = tf.layers.Dense(2, name="ld")
        assert layer.name == "ld" and layer.trainable and layer.submodules == ()
        assert repr(layer.dtype_policy) == '<Policy "_infer">'
        layer(tf.ones([2, 3]))
        assert layer.dtype_policy.name == "float32"
        with pytest.raises(AttributeError, match="no setter"):
            layer.name = "q"
        layer.trainable = False
        assert layer.trainable_weights == []


_X = np.array([[0.5, -1.0], [1.5, 0.2], [-0.3, 0.8], [1.0, 1.0], [0.1, -0.4], [-1.2, 0.3]],
              np.float32)
_Y = np.array([[1], [0], [1], [0], [0], [1]], np.float32)


def _history(**fit_kw):
    with tf.Graph().as_default():
        m = keras.Sequential([keras.layers.Dense(1, activation="sigmoid", input_shape=(2,),
                                                 kernel_initializer="ones")])
        m.compile(keras.optimizers.SGD(0.1), "binary_crossentropy", metrics=["accuracy"])

        def batches():
            while True:
                for i in range(0, 6, 3):
                    yield _X[i:i + 3], _Y[i:i + 3]

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            h = m.fit_generator(batches(), steps_per_epoch=2, epochs=2, verbose=0,
                                shuffle=False, **fit_kw)
        return {k: [round(float(v), 5) for v in vs] for k, vs in h.history.items()}


def test_fit_generator_class_weight():
    assert _history() == {"loss": [1.19504, 1.14513], "acc": [0.33333, 0.33333]}
    assert _history(class_weight={0: 1.0, 1: 3.0}) == \
        {"loss": [2.07999, 1.93729], "acc": [0.33333, 0.33333]}


_SW = np.array([1.0, 2.0, 0.5, 1.0, 3.0, 1.0], np.float32)


def _binary_model(**compile_kw):
    m = keras.Sequential([keras.layers.Dense(1, activation="sigmoid", input_shape=(2,),
                                             kernel_initializer="ones")])
    m.compile(keras.optimizers.SGD(0.1), "binary_crossentropy", **compile_kw)
    return m


def _rounded(values):
    return [round(float(v), 5) for v in (values if isinstance(values, list) else [values])]


def test_weighted_metrics_in_fit():
    def history(compile_kw, **fit_kw):
        with tf.Graph().as_default():
            m = _binary_model(**compile_kw)
            h = m.fit(_X, _Y, batch_size=3, epochs=2, verbose=0, shuffle=False, **fit_kw)
            return m.metrics_names, {k: _rounded(v) for k, v in h.history.items()}

    assert history({"metrics": ["accuracy"], "weighted_metrics": ["accuracy"]},
                   sample_weight=_SW) == (
        ["loss", "acc", "weighted_acc"],
        {"loss": [1.63185, 1.50873], "acc": [0.33333, 0.33333],
         "weighted_acc": [0.41176, 0.41176]})
    assert history({"weighted_metrics": ["mae"]}, sample_weight=_SW) == (
        ["loss", "weighted_mean_absolute_error"],
        {"loss": [1.63185, 1.50873], "weighted_mean_absolute_error": [0.62656, 0.609]})
    # no sample weights: the weighted metric is the plain one
    assert history({"weighted_metrics": ["accuracy"]})[1] == \
        {"loss": [1.19504, 1.14513], "weighted_acc": [0.33333, 0.33333]}


def test_weighted_metrics_with_class_weight_evaluate_and_batches():
    with tf.Graph().as_default():
        m = _binary_model(metrics=["mae"], weighted_metrics=["acc", "mae"])
        assert m.metrics_names == ["loss", "mean_absolute_error", "weighted_acc",
                                   "weighted_mean_absolute_error"]
        assert _rounded(m.evaluate(_X, _Y, sample_weight=_SW, batch_size=4, verbose=0)) == \
            [1.66297, 0.64381, 0.41176, 0.63185]
        assert _rounded(m.evaluate(_X, _Y, batch_size=4, verbose=0)) == \
            [1.2064, 0.64381, 0.33333, 0.64381]
        cw = {0: 5.0, 1: 1.0}
        assert _rounded(m.train_on_batch(_X, _Y, class_weight=cw)) == \
            [4.23911, 0.64381, 0.33333, 0.68055]
        assert _rounded(m.train_on_batch(_X, _Y, class_weight=cw)) == \
            [3.60483, 0.62867, 0.33333, 0.65339]
        h = m.fit(_X, _Y, batch_size=4, epochs=2, verbose=0, shuffle=False, class_weight=cw)
        assert {k: _rounded(v) for k, v in h.history.items()} == {
            "loss": [3.02395, 2.36417], "mean_absolute_error": [0.60161, 0.56587],
            "weighted_acc": [0.33333, 0.33333],
            "weighted_mean_absolute_error": [0.59947, 0.52232]}


def test_weighted_metrics_several_outputs():
    with tf.Graph().as_default():
        a = keras.Input((2,), name="in")
        o1 = keras.layers.Dense(1, activation="sigmoid", name="o1",
                                kernel_initializer="ones")(a)
        o2 = keras.layers.Dense(1, name="o2", kernel_initializer="ones")(a)
        m = keras.Model(a, [o1, o2])
        m.compile("sgd", ["binary_crossentropy", "mse"], metrics={"o2": ["mae"]},
                  weighted_metrics={"o1": ["acc"], "o2": ["mae"]})
        assert m.metrics_names == ["loss", "o1_loss", "o2_loss", "o1_weighted_acc",
                                   "o2_mean_absolute_error", "o2_weighted_mean_absolute_error"]
        assert _rounded(m.evaluate(_X, [_Y, _Y], sample_weight=[_SW, _SW], verbose=0)) == \
            [4.33547, 1.66297, 2.6725, 0.41176, 1.31667, 1.17059]


def test_weighted_metrics_survive_an_h5_file(tmp_path):
    path = str(tmp_path / "m.h5")
    with tf.Graph().as_default():
        _binary_model(weighted_metrics=["acc", "mae"]).save(path)
    with tf.Graph().as_default():
        m = keras.models.load_model(path)
        assert m.metrics_names == ["loss", "weighted_acc", "weighted_mean_absolute_error"]
        assert _rounded(m.evaluate(_X, _Y, sample_weight=_SW, verbose=0)) == \
            [1.66297, 0.41176, 0.63185]


def test_add_metric_on_a_model_and_in_a_layer_call():
    with tf.Graph().as_default():
        a = keras.Input((2,))
        h = keras.layers.Dense(3, kernel_initializer="ones", name="h")(a)
        o = keras.layers.Dense(1, activation="sigmoid", kernel_initializer="ones")(h)
        m = keras.Model(a, o)
        with pytest.raises(ValueError, match=r"not the output of a `tf\.keras\.metrics\.Metric`"):
            m.add_metric(tf.reduce_sum(h), name="hs")
        with pytest.raises(ValueError, match=r"only `mean` sample-wise metric aggregation\. "
                                             r"You provided aggregation=`sum`"):
            m.add_metric(tf.reduce_sum(h), name="hs", aggregation="sum")
        with pytest.raises(ValueError, match="Please provide a name for your metric"):
            m.add_metric(tf.reduce_sum(h), aggregation="mean")
        m.add_metric(tf.reduce_mean(h), name="hmean", aggregation="mean")
        m.compile(keras.optimizers.SGD(0.1), "binary_crossentropy", metrics=["acc"])
        assert m.metrics_names == ["loss", "acc", "hmean"]
        h_ = m.fit(_X, _Y, batch_size=4, epochs=2, verbose=0, shuffle=False)
        assert {k: _rounded(v) for k, v in h_.history.items()} == {
            "loss": [2.63951, 2.16997], "acc": [0.33333, 0.33333], "hmean": [0.16595, 0.15932]}
        assert _rounded(m.evaluate(_X, _Y, batch_size=4, verbose=0)) == \
            [1.83694, 0.33333, 0.14775]
        assert _rounded(m.train_on_batch(_X, _Y)) == [1.83694, 0.33333, 0.21857]

    class Probe(keras.layers.Layer):
        def call(self, inputs, training=None):
            # per example: a mean over the examples; a scalar: a mean over the batches
            self.add_metric(inputs[:, 0], name="first", aggregation="mean")
            self.add_metric(tf.reduce_max(inputs), name="mx", aggregation="mean")
            return inputs

    with tf.Graph().as_default():
        a = keras.Input((2,))
        o = keras.layers.Dense(1, activation="sigmoid", kernel_initializer="ones")(Probe()(a))
        m = keras.Model(a, o)
        m.compile(keras.optimizers.SGD(0.1), "binary_crossentropy", metrics=["acc"])
        assert m.metrics_names == ["loss", "acc", "first", "mx"]
        h_ = m.fit(_X, _Y, batch_size=4, epochs=2, verbose=0, shuffle=False,
                   validation_data=(_X[:3], _Y[:3]))
        assert {k: _rounded(v) for k, v in h_.history.items()} == {
            "acc": [0.33333, 0.33333], "first": [0.26667, 0.26667],
            "loss": [1.20219, 1.15597], "mx": [0.9, 0.9], "val_acc": [0.33333, 0.33333],
            "val_first": [0.56667, 0.56667], "val_loss": [1.07034, 1.03731],
            "val_mx": [1.5, 1.5]}
        assert _rounded(m.evaluate(_X, _Y, batch_size=4, verbose=0)) == \
            [1.11579, 0.33333, 0.26667, 0.9]


def test_add_variable_is_add_weight():
    class Proj(keras.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_variable("w", [int(input_shape[-1]), 2])

        def call(self, inputs):
            return tf.matmul(inputs, self.w)

    with tf.Graph().as_default():
        layer = Proj(name="proj")
        assert layer(tf.ones([1, 3])).shape.as_list() == [1, 2]
        assert [w.name for w in layer.trainable_weights] == ["proj/w:0"]
