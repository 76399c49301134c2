"""TF1 ``tf.losses`` programs, sweep 16 (area ``losses``), run under TensorFlow 2.15 and
flowgraph with the tf-oracle; TensorFlow's printed values are inline.

The programs (2016-2019 style): every ``tf.losses`` function with scalar, zero,
per-example, full and broadcast (row) weights under every reduction; a weighted
sparse-softmax MLP with label-smoothed softmax and hinge losses, regularizers,
``get_total_loss`` with and without regularization, gradients, a Saver and summaries; a
multi-task model with Huber/absolute-difference/sigmoid/cosine/log losses in name scopes,
custom loss collections, ``add_loss``, scoped ``get_losses`` and
``get_regularization_loss``, Adam; a custom Estimator whose ``model_fn`` uses a weighted
``sparse_softmax_cross_entropy`` (default and MEAN reductions) with ``tf.metrics``; a
sequence-tagging loss (``compute_weighted_loss`` over ``[B, T]`` with a sequence mask,
``mean_pairwise_squared_error`` on 2-D and 3-D inputs, hinge on integer labels, unknown
shapes, float64 inputs, an unreduced loss breaking ``get_total_loss``); the errors of
shape mismatches, bad weights, ``None`` arguments, ``axis``/``dim`` and invalid
reductions; and the ``tf.keras.losses`` functions and loss objects in graph mode.

Left as is: TensorFlow wraps every weighting in an ``assert_broadcastable`` subgraph
(static checks as ``Const``/``NoOp`` ops, dynamic ones as a ``cond`` with
``DenseToDenseSetOperation`` and ``Assert``); flowgraph checks static shapes at build
time and lets the ``Mul`` fail at run time (InvalidArgumentError both ways) and builds no
such ops. A zero gradient through Huber where the weight is 0 is ``-0.0`` in
TensorFlow and ``0.0`` in flowgraph. ``tf.layers`` with a Keras regularizer in a
``variable_scope`` feeds ``get_total_loss`` TensorFlow's re-created ``Regularizer/mul_2``
tensors (same values).

Classes of discrepancy found and fixed (one focused test each below):

* The default reduction (``SUM_BY_NONZERO_WEIGHTS``) of a Python-float weight divided by
  ``num_elements``; TensorFlow casts the weight to a tensor first (``Cast/x``), so it
  always builds the ``num_present`` subgraph (``Equal``, ``Select``,
  ``broadcast_weights`` Mul, ``Sum`` named ``num_present``), and every mean is a
  ``Sum_1`` (``Rank``/``range``) of the summed loss divided in ``value``
  (``Sum_2`` for MEAN). ``sparse_softmax_cross_entropy`` converts its weights to a
  ``Const`` and squeezes labels in a ``remove_squeezable_dimensions`` scope; a Python
  list of losses is converted to ``Const`` (not ``losses``).
* ``mean_pairwise_squared_error``: TensorFlow names both terms and the result
  ``value`` (the loss is ``value_2``), reduces over ``range(1, rank)``, names the
  ``n * (n - 1)`` product ``Mul_1``, and rejects rank-1 ``[batch]`` weights for rank-2
  labels (flowgraph reshaped them).
* Op order of ``softmax_cross_entropy`` label smoothing (the division first) and of
  ``hinge_loss`` (one shared ``ones_like``).
* Error messages: ``Argument `labels` must not be None.``, ``Shapes (8, 4) and (8, 3)
  are incompatible``, ``Cannot specify both 'dim' and 'axis'.``, ``Invalid Reduction
  Key mean. Key should be one of (...)``.
* Keras loss objects in graph mode ran without scopes (``div_no_nan``); Keras names them
  ``<loss name>/weighted_loss/value`` (``Sum`` for SUM, ``Mul`` for NONE, a ``Const``
  weight of 1 when no ``sample_weight``), and squeezes/expands ``sample_weight`` to the
  losses' rank. ``mean_squared_error`` is a ``SquaredDifference``; MAPE's scaling is the
  ``mul`` operator.
* Keras ``sparse_categorical_crossentropy`` of probabilities took ``-log(p_y)``; Keras
  takes the log of the clipped probabilities as logits (unnormalized probabilities are
  normalized); ``binary_crossentropy`` of probabilities adds epsilon inside the logs.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import flowgraph as tf

R = tf.losses.Reduction


def _ops(graph, start, skip=()):
    return [f"{o.name.split('/', 1)[-1]}:{o.type}" for o in graph.get_operations()[start:]
            if not any(s in o.name for s in skip)]


# -- focused: the default reduction's num_present subgraph ----------------------------------
def test_default_reduction_builds_num_present_like_tf():
    g = tf.Graph()
    with g.as_default():
        lab = tf.placeholder(tf.float32, [None, 3])
        pred = tf.placeholder(tf.float32, [None, 3])
        n = len(g.get_operations())
        loss = tf.losses.absolute_difference(lab, pred, weights=2.0)
        assert loss.name == "absolute_difference/value:0"
        assert _ops(g, n) == [
            "Sub:Sub", "Abs:Abs", "Cast/x:Const", "Mul:Mul", "Const:Const", "Sum:Sum",
            "num_present/Equal/y:Const", "num_present/Equal:Equal",
            "num_present/zeros_like:Const", "num_present/ones_like/Shape/shape_as_tensor:Const",
            "num_present/ones_like/Const:Const", "num_present/ones_like:Fill",
            "num_present/Select:Select", "num_present/broadcast_weights/ones_like/Shape:Shape",
            "num_present/broadcast_weights/ones_like/Const:Const",
            "num_present/broadcast_weights/ones_like:Fill", "num_present/broadcast_weights:Mul",
            "num_present/Const:Const", "num_present:Sum", "Rank:Const", "range/start:Const",
            "range/delta:Const", "range:Range", "Sum_1:Sum", "value:DivNoNan"]
        w = tf.placeholder(tf.float32, [None, 1])
        n = len(g.get_operations())
        tf.losses.absolute_difference(lab, pred, weights=w, reduction=R.MEAN)
        assert _ops(g, n) == [
            "Sub:Sub", "Abs:Abs", "Mul:Mul", "Const:Const", "Sum:Sum", "ones_like/Shape:Shape",
            "ones_like/Const:Const", "ones_like:Fill", "mul_1:Mul", "Const_1:Const",
            "Sum_1:Sum", "Rank:Const", "range/start:Const", "range/delta:Const",
            "range:Range", "Sum_2:Sum", "value:DivNoNan"]
        n = len(g.get_operations())
        t = tf.losses.mean_squared_error(lab, pred, reduction=R.SUM_OVER_BATCH_SIZE)
        assert _ops(g, n)[-9:] == [
            "Sum:Sum", "num_elements:Size", "num_elements/Cast:Cast", "Rank:Const",
            "range/start:Const", "range/delta:Const", "range:Range", "Sum_1:Sum",
            "value:DivNoNan"]
        assert t.name == "mean_squared_error/value:0"
        n = len(g.get_operations())
        c = tf.losses.compute_weighted_loss([1.0, 2.0], weights=[1, 0])
        assert _ops(g, n)[:4] == ["Const:Const", "Cast/x:Const", "Cast:Cast", "Mul:Mul"]
        with tf.Session() as s:
            feed = {lab: np.zeros([2, 3]), pred: [[1, 2, 3], [0, 0, 6]]}
            assert s.run(loss, feed) == 4.0  # 2 * 12 / 6 present
            assert s.run(c) == 1.0


def test_sparse_softmax_weights_const_and_squeeze_scope():
    g = tf.Graph()
    with g.as_default():
        logits = tf.placeholder(tf.float32, [None, 4])
        ids = tf.placeholder(tf.int32, [None])
        w = tf.placeholder(tf.float32, [None])
        n = len(g.get_operations())
        tf.losses.sparse_softmax_cross_entropy(ids, logits)
        assert _ops(g, n)[:4] == ["Const:Const", "xentropy/Shape:Shape",
                                  "xentropy/xentropy:SparseSoftmaxCrossEntropyWithLogits",
                                  "Mul:Mul"]
        n = len(g.get_operations())
        loss = tf.losses.sparse_softmax_cross_entropy(tf.expand_dims(ids, 1), logits,
                                                      weights=tf.expand_dims(w, 1))
        assert _ops(g, n)[4:6] == ["remove_squeezable_dimensions/Squeeze:Squeeze",
                                   "Squeeze:Squeeze"]
        with tf.Session() as s:
            v = s.run(loss, {logits: np.zeros([3, 4]), ids: [0, 1, 2], w: [1.0, 0.0, 2.0]})
        assert v == pytest.approx(1.5 * np.log(4.0) * 2 / 2, rel=1e-6)


def test_mean_pairwise_squared_error_names_and_weights():
    g = tf.Graph()
    with g.as_default():
        lab = tf.placeholder(tf.float32, [None, 4])
        pred = tf.placeholder(tf.float32, [None, 4])
        n = len(g.get_operations())
        loss = tf.losses.mean_pairwise_squared_error(lab, pred,
                                                     weights=tf.constant([[1.0], [2.0]]))
        ops = _ops(g, n)
        assert loss.name == "mean_pairwise_squared_error/value_2:0"
        for name in ("Rank:Const", "range:Range", "num_present/range:Range",
                     "num_present/broadcast_weights:Mul", "value:DivNoNan", "Mul_1:Mul",
                     "value_1:DivNoNan", "value_2:Select"):
            assert name in ops
        with pytest.raises(ValueError, match="weights can not be broadcast"):
            tf.losses.mean_pairwise_squared_error(lab, pred, weights=tf.ones([8]))
        with tf.Session() as s:
            v = s.run(loss, {lab: np.zeros([2, 4]), pred: [[0, 1, 2, 3], [1, 1, 1, 1]]})
        assert v == pytest.approx(10.0 / 3.0, rel=1e-6)


def test_label_smoothing_and_hinge_op_order():
    g = tf.Graph()
    with g.as_default():
        a = tf.placeholder(tf.float32, [None, 4])
        b = tf.placeholder(tf.float32, [None, 4])
        n = len(g.get_operations())
        tf.losses.softmax_cross_entropy(a, b, label_smoothing=0.1)
        assert _ops(g, n)[5:11] == ["Cast:Cast", "truediv/x:Const", "truediv:RealDiv",
                                    "mul/y:Const", "mul:Mul", "add:AddV2"]
        n = len(g.get_operations())
        tf.losses.hinge_loss(a, b)
        assert _ops(g, n)[:10] == [
            "ones_like/Shape:Shape", "ones_like/Const:Const", "ones_like:Fill",
            "mul/x:Const", "mul:Mul", "Sub:Sub", "Mul_1:Mul", "Sub_1:Sub", "Relu:Relu",
            "Cast/x:Const"]


def test_loss_error_messages_like_tf():
    with tf.Graph().as_default():
        lab = tf.placeholder(tf.float32, [8, 3])
        p4 = tf.placeholder(tf.float32, [8, 4])
        p3 = tf.placeholder(tf.float32, [8, 3])
        with pytest.raises(ValueError, match=r"Shapes \(8, 4\) and \(8, 3\) are incompatible"):
            tf.losses.mean_squared_error(lab, p4)
        with pytest.raises(ValueError, match=r"Shapes \(8, 4\) and \(8, 3\) are incompatible"):
            tf.losses.softmax_cross_entropy(lab, p4)
        with pytest.raises(ValueError, match=r"^Argument `labels` must not be None.$"):
            tf.losses.mean_squared_error(None, p3)
        with pytest.raises(ValueError, match=r"^Argument `predictions` must not be None.$"):
            tf.losses.huber_loss(lab, None)
        with pytest.raises(ValueError, match=r"^Cannot specify both 'dim' and 'axis'.$"):
            tf.losses.cosine_distance(lab, p3, axis=1, dim=0)
        with pytest.raises(ValueError, match=r"^You must specify argument `axis`.$"):
            tf.losses.cosine_distance(lab, p3)
        with pytest.raises(ValueError, match=r"Invalid Reduction Key mean. Key should be one "
                                             r"of \('none', 'weighted_sum'"):
            tf.losses.mean_squared_error(lab, p3, reduction="mean")
        with pytest.raises(ValueError, match=r"weights can not be broadcast to values. "
                                             r"values.rank=2. weights.rank=1"):
            tf.losses.absolute_difference(lab, p3, weights=tf.ones([8]))
        with pytest.raises(ValueError, match=r"Mismatch at dim 1"):
            tf.losses.absolute_difference(lab, p3, weights=tf.ones([8, 2]))
        with pytest.raises(ValueError, match=r"values.rank=1. weights.rank=2"):
            tf.losses.softmax_cross_entropy(lab, p3, weights=tf.ones([8, 3]))
        with pytest.raises(ValueError, match=r"None values not supported"):
            tf.losses.compute_weighted_loss(p3, weights=None)
        with pytest.raises(TypeError):
            tf.losses.sparse_softmax_cross_entropy(tf.zeros([8], tf.float32), p3)
        assert tf.losses.absolute_difference(lab, p3, weights=tf.ones([1, 1])).shape == ()
        u = tf.placeholder(tf.float32, [None, None])
        wu = tf.placeholder(tf.float32, [None, None])
        loss = tf.losses.absolute_difference(u, u * 2, weights=wu)
        with tf.Session() as s:
            with pytest.raises(tf.errors.InvalidArgumentError):
                s.run(loss, {u: np.ones([2, 3]), wu: np.ones([2, 2])})
            assert s.run(loss, {u: np.ones([2, 3]), wu: np.ones([2, 1])}) == 1.0


# -- focused: Keras losses in graph mode -----------------------------------------------------
def test_keras_loss_objects_scopes_like_tf():
    K = tf.keras.losses
    g = tf.Graph()
    with g.as_default():
        yt = tf.placeholder(tf.float32, [None, 4])
        yp = tf.placeholder(tf.float32, [None, 4])
        sw = tf.placeholder(tf.float32, [None])
        n = len(g.get_operations())
        out = K.MeanSquaredError()(yt, yp)
        assert out.name == "mean_squared_error/weighted_loss/value:0"
        assert _ops(g, n) == [
            "SquaredDifference:SquaredDifference", "Mean/reduction_indices:Const",
            "Mean:Mean", "weighted_loss/Const:Const", "weighted_loss/Mul:Mul",
            "weighted_loss/Const_1:Const", "weighted_loss/Sum:Sum",
            "weighted_loss/num_elements:Size", "weighted_loss/num_elements/Cast:Cast",
            "weighted_loss/Rank:Const", "weighted_loss/range/start:Const",
            "weighted_loss/range/delta:Const", "weighted_loss/range:Range",
            "weighted_loss/Sum_1:Sum", "weighted_loss/value:DivNoNan"]
        s1 = K.MeanSquaredError(reduction="sum")(yt, yp, sample_weight=sw)
        s2 = K.MeanSquaredError(reduction="none")(yt, yp, sample_weight=2.0)
        s3 = K.MeanSquaredError()(yt, yp, sample_weight=tf.expand_dims(sw, 1))
        assert (s1.name, s2.name, s2.shape.as_list()) == (
            "mean_squared_error_1/weighted_loss/Sum:0",
            "mean_squared_error_2/weighted_loss/Mul:0", [None])
        assert s3.shape == () and K.Huber()(yt, yp).name == "huber_loss/weighted_loss/value:0"
        mape = K.mean_absolute_percentage_error(yt, yp)
        assert mape.op.type == "Mul" and mape.op.name == "mul"
        with tf.Session() as s:
            f = {yt: np.ones([2, 4]), yp: np.zeros([2, 4]), sw: [1.0, 3.0]}
            assert s.run([s1, s3], f) == [4.0, 2.0]


def test_keras_crossentropies_of_probabilities_like_tf():
    rng = np.random.RandomState(3)
    yt = rng.rand(5, 4).astype(np.float32)
    yp = rng.rand(5, 4).astype(np.float32)
    sp = np.array([0, 1, 3, 2, 1])
    K = tf.keras.losses
    with tf.Graph().as_default():
        scce = K.sparse_categorical_crossentropy(sp, yp)
        bce = K.binary_crossentropy(yt, yp)
        assert scce.name == ("SparseSoftmaxCrossEntropyWithLogits/"
                             "SparseSoftmaxCrossEntropyWithLogits:0")
        with tf.Session() as s:
            r = s.run([scce, bce])
    # TensorFlow 2.15 (the sums of yp's rows are not 1: the softmax normalizes them)
    np.testing.assert_allclose(np.round(r[0], 5), [1.71406, 0.86502, 1.48641, 1.76984,
                                                   1.17028], atol=1e-5)
    np.testing.assert_allclose(np.round(r[1], 5), [0.78208, 0.49641, 1.62254, 1.1348,
                                                   0.77374], atol=1e-5)


# -- program: every loss x weights x reduction ----------------------------------------------
# TF's values (rounded to 4): per weights kind scalar 2.0, zero, [4, 1] per example,
# full [4, 3] mask * 1.5, [1, 3] row (smx/ssm/cos: the first three, per-example as [4]).
TF_VALUES = {
    ("ad", "SUM"): [6.3683, 0.0, 2.0147, 1.6753, 3.2034],
    ("ad", "MEAN"): [0.2653, 0.0, 0.1919, 0.2234, 0.2669],
    ("ad", "SUM_OVER_BATCH_SIZE"): [0.5307, 0.0, 0.1679, 0.1396, 0.2669],
    ("ad", "SUM_BY_NONZERO_WEIGHTS"): [0.5307, 0.0, 0.2239, 0.3351, 0.4004],
    ("mse", "SUM"): [2.3929, 0.0, 0.7333, 0.6654, 1.261],
    ("mse", "MEAN"): [0.0997, 0.0, 0.0698, 0.0887, 0.1051],
    ("mse", "SUM_OVER_BATCH_SIZE"): [0.1994, 0.0, 0.0611, 0.0554, 0.1051],
    ("mse", "SUM_BY_NONZERO_WEIGHTS"): [0.1994, 0.0, 0.0815, 0.1331, 0.1576],
    ("hub", "SUM"): [13.1896, 0.0, 7.1891, 4.6784, 7.237],
    ("hub", "MEAN"): [0.5496, 0.0, 0.6847, 0.6238, 0.6031],
    ("hub", "SUM_OVER_BATCH_SIZE"): [1.0991, 0.0, 0.5991, 0.3899, 0.6031],
    ("hub", "SUM_BY_NONZERO_WEIGHTS"): [1.0991, 0.0, 0.7988, 0.9357, 0.9046],
    ("log", "SUM"): [28.7072, 0.0, 10.9516, 7.1425, 16.835],
    ("log", "MEAN"): [1.1961, 0.0, 1.043, 0.9523, 1.4029],
    ("log", "SUM_OVER_BATCH_SIZE"): [2.3923, 0.0, 0.9126, 0.5952, 1.4029],
    ("log", "SUM_BY_NONZERO_WEIGHTS"): [2.3923, 0.0, 1.2168, 1.4285, 2.1044],
    ("hinge", "SUM"): [27.8062, 0.0, 12.4488, 5.3802, 10.6993],
    ("hinge", "MEAN"): [1.1586, 0.0, 1.1856, 0.7174, 0.8916],
    ("hinge", "SUM_OVER_BATCH_SIZE"): [2.3172, 0.0, 1.0374, 0.4483, 0.8916],
    ("hinge", "SUM_BY_NONZERO_WEIGHTS"): [2.3172, 0.0, 1.3832, 1.076, 1.3374],
    ("sig", "SUM"): [20.3589, 0.0, 8.9018, 4.2884, 8.3215],
    ("sig", "MEAN"): [0.8483, 0.0, 0.8478, 0.5718, 0.6935],
    ("sig", "SUM_OVER_BATCH_SIZE"): [1.6966, 0.0, 0.7418, 0.3574, 0.6935],
    ("sig", "SUM_BY_NONZERO_WEIGHTS"): [1.6966, 0.0, 0.9891, 0.8577, 1.0402],
    ("smx", "SUM"): [14.2144, 0.0, 8.0425],
    ("smx", "MEAN"): [1.7768, 0.0, 2.2979],
    ("smx", "SUM_OVER_BATCH_SIZE"): [3.5536, 0.0, 2.0106],
    ("smx", "SUM_BY_NONZERO_WEIGHTS"): [3.5536, 0.0, 2.6808],
    ("ssm", "SUM"): [14.5611, 0.0, 8.4171],
    ("ssm", "MEAN"): [1.8201, 0.0, 2.4049],
    ("ssm", "SUM_OVER_BATCH_SIZE"): [3.6403, 0.0, 2.1043],
    ("ssm", "SUM_BY_NONZERO_WEIGHTS"): [3.6403, 0.0, 2.8057],
    ("cos", "SUM"): [1.0747, 0.0, 0.2477],
    ("cos", "MEAN"): [0.1343, 0.0, 0.0708],
    ("cos", "SUM_OVER_BATCH_SIZE"): [0.2687, 0.0, 0.0619],
    ("cos", "SUM_BY_NONZERO_WEIGHTS"): [0.2687, 0.0, 0.0826],
}


def test_program_every_loss_weights_reduction():
    rng = np.random.RandomState(0)
    lab = rng.rand(4, 3).astype(np.float32)
    pred = rng.rand(4, 3).astype(np.float32)
    logits = rng.randn(4, 3).astype(np.float32)
    binary = (rng.rand(4, 3) > 0.5).astype(np.float32)
    onehot = np.eye(3, dtype=np.float32)[[0, 2, 1, 2]]
    ids = np.array([0, 2, 1, 2], np.int32)
    weights = {"scalar": 2.0, "zero": 0.0,
               "vec": np.array([[1.0], [0.0], [2.0], [0.5]], np.float32),
               "full": (rng.rand(4, 3) > 0.3).astype(np.float32) * 1.5,
               "row": np.array([[1.0, 0.0, 2.0]], np.float32)}
    reds = {"SUM": R.SUM, "MEAN": R.MEAN, "SUM_OVER_BATCH_SIZE": R.SUM_OVER_BATCH_SIZE,
            "SUM_BY_NONZERO_WEIGHTS": R.SUM_BY_NONZERO_WEIGHTS}
    with tf.Graph().as_default():
        lt, pt = tf.constant(lab), tf.constant(pred)
        built = {}
        for rk, red in reds.items():
            for wk, w in weights.items():
                vw = w[:, 0] if wk == "vec" else w
                built.setdefault(("ad", rk), []).append(
                    tf.losses.absolute_difference(lt, pt, weights=w, reduction=red))
                built.setdefault(("mse", rk), []).append(
                    tf.losses.mean_squared_error(lt, pt, weights=w, reduction=red))
                built.setdefault(("hub", rk), []).append(
                    tf.losses.huber_loss(lt, pt * 3, weights=w, delta=0.5, reduction=red))
                built.setdefault(("log", rk), []).append(
                    tf.losses.log_loss(binary, pt, weights=w, epsilon=1e-3, reduction=red))
                built.setdefault(("hinge", rk), []).append(
                    tf.losses.hinge_loss(binary, logits, weights=w, reduction=red))
                built.setdefault(("sig", rk), []).append(tf.losses.sigmoid_cross_entropy(
                    binary, logits, weights=w, label_smoothing=0.1, reduction=red))
                if wk in ("full", "row"):
                    continue
                built.setdefault(("smx", rk), []).append(tf.losses.softmax_cross_entropy(
                    onehot, logits, weights=vw, label_smoothing=0.2, reduction=red))
                built.setdefault(("ssm", rk), []).append(tf.losses.sparse_softmax_cross_entropy(
                    ids, logits, weights=vw, reduction=red))
                built.setdefault(("cos", rk), []).append(tf.losses.cosine_distance(
                    tf.nn.l2_normalize(lt, 1), tf.nn.l2_normalize(pt, 1), axis=1, weights=w,
                    reduction=red))
        mpse = [tf.losses.mean_pairwise_squared_error(lt, pt, weights=weights[k])
                for k in ("scalar", "zero", "vec")]
        none = tf.losses.absolute_difference(lt, pt, weights=weights["vec"], reduction=R.NONE)
        assert none.name == "absolute_difference_20/Mul:0" and none.shape == (4, 3)
        assert len(tf.losses.get_losses()) == 4 * (6 * 5 + 3 * 3) + 3 + 1
        with tf.Session() as s:
            got = s.run(built)
            got_mpse, got_none = s.run([mpse, none])
    for key, want in TF_VALUES.items():
        np.testing.assert_allclose(np.round(got[key], 4), want, atol=2e-4, err_msg=str(key))
    np.testing.assert_allclose(got_mpse, [1.8787, 0.0, 0.6097], atol=1e-4)
    assert round(float(got_none[3, 2]), 4) == 0.1258


# -- program: weighted sparse-softmax MLP with regularizers --------------------------------
def test_program_weighted_mlp_total_loss(tmp_path):
    rng = np.random.RandomState(42)
    x_np = rng.randn(32, 10).astype(np.float32)
    y_np = rng.randint(0, 4, size=32).astype(np.int32)
    w_np = (rng.rand(32) > 0.25).astype(np.float32)
    with tf.Graph().as_default():
        tf.set_random_seed(1234)
        x = tf.placeholder(tf.float32, [None, 10], name="x")
        y = tf.placeholder(tf.int32, [None], name="y")
        w = tf.placeholder(tf.float32, [None], name="w")
        with tf.variable_scope("model", regularizer=tf.keras.regularizers.l2(0.005)):
            h = tf.layers.dense(x, 16, activation=tf.nn.relu, name="h1")
            logits = tf.layers.dense(h, 4, name="out")
        with tf.name_scope("losses"):
            xent = tf.losses.sparse_softmax_cross_entropy(y, logits, weights=w, scope="xent")
            onehot = tf.one_hot(y, 4)
            smx = tf.losses.softmax_cross_entropy(onehot, logits, label_smoothing=0.1,
                                                  loss_collection=None)
            hinge = tf.losses.hinge_loss(onehot, logits, weights=0.1)
        assert (xent.name, smx.name, hinge.name) == (
            "losses/xent/value:0", "losses/softmax_cross_entropy_loss/value:0",
            "losses/hinge_loss/value:0")
        assert [t.name for t in tf.losses.get_losses()] == ["losses/xent/value:0",
                                                            "losses/hinge_loss/value:0"]
        assert [t.name for t in tf.losses.get_losses(scope="losses/xent")] == [
            "losses/xent/value:0"]
        assert len(tf.losses.get_regularization_losses()) == 4
        reg = tf.losses.get_regularization_loss()
        total = tf.losses.get_total_loss()
        data = tf.losses.get_total_loss(add_regularization_losses=False, name="data_loss")
        assert (reg.name, total.name, data.name, total.op.type) == (
            "total_regularization_loss:0", "total_loss:0", "data_loss:0", "AddN")
        gs = tf.train.get_or_create_global_step()
        opt = tf.train.GradientDescentOptimizer(0.5)
        train = opt.apply_gradients(opt.compute_gradients(total), global_step=gs)
        g_logits, g_w = tf.gradients(xent, [logits, w])
        assert g_logits.shape.as_list() == [None, 4] and g_w.shape.as_list() == [None]
        saver = tf.train.Saver()
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            f = {x: x_np, y: y_np, w: w_np}
            np.testing.assert_allclose(
                s.run([xent, smx, hinge, reg, total, data], f),
                [1.7909, 1.77901, 0.10358, 0.10416, 1.99864, 1.89448], atol=2e-5)
            gl, gw = s.run([g_logits, g_w], f)
            np.testing.assert_allclose(gl[0], [0.01349, 0.00804, 0.02142, -0.04295], atol=2e-5)
            np.testing.assert_allclose(gl[1], 0.0, atol=1e-7)
            np.testing.assert_allclose(gw[:6], [0.09796, 0.09298, 0.04829, 0.07295, 0.05379,
                                                0.08867], atol=2e-5)
            for _ in range(5):
                s.run(train, f)
            np.testing.assert_allclose(s.run([xent, total], f), [0.82994, 1.00828], atol=5e-5)
            path = saver.save(s, os.path.join(str(tmp_path), "m"), global_step=gs)
            assert os.path.basename(path) == "m-5"
            assert s.run(xent, {x: x_np, y: y_np, w: np.zeros(32, np.float32)}) == 0.0


# -- program: multi-task heads, custom collections ------------------------------------------
def test_program_multitask_collections():
    rng = np.random.RandomState(7)
    x_np = rng.randn(16, 6).astype(np.float32)
    yr_np = rng.randn(16, 2).astype(np.float32)
    yb_np = (rng.rand(16, 3) > 0.5).astype(np.float32)
    m_np = (rng.rand(16, 2) > 0.3).astype(np.float32)
    with tf.Graph().as_default():
        tf.set_random_seed(99)
        x = tf.placeholder(tf.float32, [None, 6], "x")
        yr = tf.placeholder(tf.float32, [None, 2], "yr")
        yb = tf.placeholder(tf.float32, [None, 3], "yb")
        m = tf.placeholder(tf.float32, [None, 2], "mask")
        with tf.variable_scope("shared"):
            w = tf.get_variable("w", [6, 8], initializer=tf.glorot_uniform_initializer(),
                                regularizer=lambda t: tf.multiply(0.001, tf.nn.l2_loss(t),
                                                                  name="l2"))
            h = tf.nn.tanh(tf.matmul(x, w))
        with tf.variable_scope("reg_head"):
            pr = tf.layers.dense(h, 2, kernel_initializer=tf.truncated_normal_initializer(
                stddev=0.1))
        with tf.variable_scope("cls_head"):
            lb = tf.layers.dense(h, 3, kernel_initializer=tf.random_normal_initializer(
                stddev=0.1))
        with tf.name_scope("loss"):
            l_h = tf.losses.huber_loss(yr, pr, weights=m, delta=0.5, scope="huber")
            l_a = tf.losses.absolute_difference(yr, pr, weights=m, reduction=R.MEAN,
                                                loss_collection="aux_losses")
            l_s = tf.losses.sigmoid_cross_entropy(yb, lb, weights=tf.constant([[1.0, 2.0, 0.0]]),
                                                  label_smoothing=0.05)
            l_c = tf.losses.cosine_distance(tf.nn.l2_normalize(yr, 1), tf.nn.l2_normalize(pr, 1),
                                            dim=1, weights=0.5, reduction=R.SUM_OVER_BATCH_SIZE)
            per = tf.losses.log_loss(yb, tf.nn.sigmoid(lb), reduction=R.NONE,
                                     loss_collection=None)
            tf.losses.add_loss(tf.reduce_mean(tf.square(pr), name="act_penalty") * 0.01)
            tf.losses.add_loss(tf.identity(l_a, "aux"), loss_collection="aux_losses")
        assert [(t.name, t.shape.as_list()) for t in (l_h, l_a, l_s, l_c, per)] == [
            ("loss/huber/value:0", []), ("loss/absolute_difference/value:0", []),
            ("loss/sigmoid_cross_entropy_loss/value:0", []),
            ("loss/cosine_distance_loss/value:0", []), ("loss/log_loss/Mul_2:0", [None, 3])]
        assert [t.name for t in tf.losses.get_losses()] == [
            "loss/huber/value:0", "loss/sigmoid_cross_entropy_loss/value:0",
            "loss/cosine_distance_loss/value:0", "loss/mul:0"]
        assert [t.name for t in tf.losses.get_losses(loss_collection="aux_losses")] == [
            "loss/absolute_difference/value:0", "loss/aux:0"]
        assert [t.name for t in tf.losses.get_regularization_losses()] == [
            "shared/w/Regularizer/l2:0"]
        assert tf.losses.get_regularization_losses(scope="reg_head") == []
        total = tf.losses.get_total_loss()
        data = tf.losses.get_total_loss(add_regularization_losses=False, name="data_loss",
                                        scope="loss")
        rl = tf.losses.get_regularization_loss(scope="shared", name="shared_reg")
        assert (total.name, data.name, rl.name) == ("total_loss:0", "data_loss:0",
                                                    "shared_reg:0")
        step = tf.train.AdamOptimizer(0.05).minimize(total)
        g_pr, g_m = tf.gradients(l_h, [pr, m])
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            f = {x: x_np, yr: yr_np, yb: yb_np, m: m_np}
            np.testing.assert_allclose(
                s.run([l_h, l_a, l_s, l_c, total, data, rl], f),
                [0.23803, 0.69015, 1.0172, 0.65128, 1.91064, 1.90673, 0.00391], atol=2e-5)
            np.testing.assert_allclose(s.run(per, f)[:2], [[0.7609, 0.71698, 0.75699],
                                                          [0.59877, 0.59782, 0.66]], atol=2e-5)
            gp, gm = s.run([g_pr, g_m], f)
            np.testing.assert_allclose(gp[:3], [[0.0, -0.02273], [0.01151, 0.02273],
                                                [0.02273, 0.0]], atol=2e-5)
            np.testing.assert_allclose(gm[:3], [[0.04407, 0.01026], [0.00146, 0.00927],
                                                [0.02026, 0.00381]], atol=2e-5)
            for _ in range(6):
                s.run(step, f)
            np.testing.assert_allclose(s.run([l_h, l_s, total], f),
                                       [0.18167, 0.88971, 1.29551], atol=5e-5)
            f[m] = np.zeros_like(m_np)
            assert s.run([l_h, l_a], f) == [0.0, 0.0]


# -- program: custom Estimator with a weighted loss -----------------------------------------
def test_program_estimator_weighted_loss(tmp_path):
    rng = np.random.RandomState(11)
    x_np = rng.randn(40, 5).astype(np.float32)
    y_np = (x_np[:, 0] + x_np[:, 1] > 0).astype(np.int32) + (x_np[:, 2] > 1).astype(np.int32)
    w_np = np.where(y_np == 2, 3.0, 1.0).astype(np.float32)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x_np, "w": w_np}, y_np)).batch(10)

    def model_fn(features, labels, mode, params):
        net = tf.layers.dense(features["x"], 8, activation=tf.nn.relu,
                              kernel_initializer=tf.glorot_uniform_initializer(seed=1))
        logits = tf.layers.dense(net, 3, kernel_initializer=tf.glorot_uniform_initializer(
            seed=2))
        loss = tf.losses.sparse_softmax_cross_entropy(labels, logits, weights=features["w"],
                                                      reduction=params["red"])
        if mode == tf.estimator.ModeKeys.EVAL:
            acc = tf.metrics.accuracy(labels, tf.argmax(logits, 1))
            mloss = tf.metrics.mean(tf.losses.sparse_softmax_cross_entropy(
                labels, logits, reduction=R.NONE, loss_collection=None))
            return tf.estimator.EstimatorSpec(mode, loss=loss,
                                              eval_metric_ops={"acc": acc, "ml": mloss})
        assert loss.name == "sparse_softmax_cross_entropy_loss/value:0"
        op = tf.train.GradientDescentOptimizer(0.3).minimize(
            tf.losses.get_total_loss(), global_step=tf.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=op)

    want = {R.SUM_BY_NONZERO_WEIGHTS: (0.45, 1.1851, 1.0282), R.MEAN: (0.425, 1.0516, 1.0453)}
    for i, (red, (acc, loss, ml)) in enumerate(want.items()):
        cfg = tf.estimator.RunConfig(tf_random_seed=5, save_summary_steps=100,
                                     log_step_count_steps=1000)
        est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path / str(i)), config=cfg,
                                     params={"red": red})
        est.train(input_fn, steps=8)
        ev = est.evaluate(input_fn)
        assert ev["global_step"] == 4
        np.testing.assert_allclose([ev["acc"], ev["loss"], ev["ml"]], [acc, loss, ml],
                                   atol=1e-4)


# -- program: sequence tagging with masks ----------------------------------------------------
def test_program_sequence_masks_and_pairwise():
    rng = np.random.RandomState(5)
    b, t, v = 3, 5, 6
    log_np = rng.randn(b, t, v).astype(np.float32)
    lab_np = rng.randint(0, v, size=(b, t)).astype(np.int64)
    lens_np = np.array([5, 3, 1])
    with tf.Graph().as_default():
        logits = tf.placeholder(tf.float32, [None, None, v])
        labels = tf.placeholder(tf.int64, [None, None])
        lens = tf.placeholder(tf.int32, [None])
        mask = tf.sequence_mask(lens, tf.shape(labels)[1], dtype=tf.float32)
        xent = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        seq = tf.losses.compute_weighted_loss(xent, weights=mask, scope="seq_loss")
        seq_sum = tf.losses.compute_weighted_loss(xent, weights=mask, reduction=R.SUM)
        seq_bs = tf.losses.compute_weighted_loss(
            xent, weights=tf.constant([[1.0], [0.5], [0.0]]), reduction=R.SUM_OVER_BATCH_SIZE)
        ssce3 = tf.losses.sparse_softmax_cross_entropy(labels, logits, weights=mask)
        assert [seq.name, seq_sum.name, seq_bs.name, ssce3.name] == [
            "seq_loss/value:0", "weighted_loss/Sum:0", "weighted_loss_1/value:0",
            "sparse_softmax_cross_entropy_loss/value:0"]
        emb_p = tf.placeholder(tf.float32, [None, 4])
        emb_l = tf.placeholder(tf.float32, [None, 4])
        mp = tf.losses.mean_pairwise_squared_error(emb_l, emb_p,
                                                   weights=tf.constant([[1.0], [2.0], [0.0]]))
        mp3 = tf.losses.mean_pairwise_squared_error(tf.reshape(emb_l, [-1, 2, 2]),
                                                    tf.reshape(emb_p, [-1, 2, 2]))
        hl = tf.losses.hinge_loss(tf.constant([[1], [0], [1]]), emb_p[:, :1], reduction=R.MEAN)
        d64 = tf.losses.mean_squared_error(tf.constant([[1.0, 2.0]], tf.float64),
                                           tf.constant([[1.5, 0.0]], tf.float64))
        assert (mp.name, mp3.name, hl.name, d64.dtype) == (
            "mean_pairwise_squared_error/value_2:0", "mean_pairwise_squared_error_1/value_2:0",
            "hinge_loss/value:0", tf.float32)
        unk = tf.placeholder(tf.float32)
        ul = tf.losses.absolute_difference(unk, unk * 0.5,
                                           weights=tf.placeholder_with_default(1.0, []))
        assert ul.shape == ()
        nl = tf.losses.mean_squared_error(emb_l, emb_p, reduction=R.NONE)
        assert nl.name == "mean_squared_error_1/Mul:0" and nl.shape.as_list() == [None, 4]
        assert len(tf.losses.get_losses()) == 10
        with pytest.raises(ValueError):
            tf.losses.get_total_loss()
        e1 = rng.randn(3, 4).astype(np.float32)
        e2 = rng.randn(3, 4).astype(np.float32)
        g_mp = tf.gradients(mp, [emb_p])[0]
        g_lg, g_mask = tf.gradients(seq, [logits, mask])
        with tf.Session() as s:
            f = {logits: log_np, labels: lab_np, lens: lens_np, emb_p: e1, emb_l: e2,
                 unk: np.arange(6.0).reshape(2, 3)}
            np.testing.assert_allclose(
                s.run([seq, seq_sum, seq_bs, ssce3, mp, mp3, hl, ul], f),
                [1.87958, 16.91618, 0.91563, 1.87958, 12.51682, 8.50093, 1.08113, 1.25],
                atol=5e-5)
            assert s.run(d64) == 2.125
            np.testing.assert_allclose(s.run(g_mp, f), [
                [1.23942, -2.20859, 1.0938, -0.12463], [-2.50124, 1.5579, -4.13138, 5.07472],
                [0.0, 0.0, 0.0, 0.0]], atol=5e-5)
            gl, gm = s.run([g_lg, g_mask], f)
            np.testing.assert_allclose(gl[1, 2], [-0.10108, 0.01295, 0.01188, 0.03302,
                                                  0.02835, 0.01488], atol=2e-5)
            np.testing.assert_allclose(gm[0], [0.06498, 0.28656, 0.21606, 0.32193, 0.1574],
                                       atol=2e-5)
