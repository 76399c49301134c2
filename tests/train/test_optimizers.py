"""tf.train optimizers: each update rule step by step against NumPy re-implementations of
TF1's formulas (dense and sparse with duplicate indices, float32 and float64), slot and
variable names (as TensorFlow names them), global_step, errors, and training a model."""

import doctest

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.backends.cpu import kernels_training
from flowgraph.framework import errors
from flowgraph.framework.indexed_slices import IndexedSlices
from flowgraph.framework.resources import VariableState
from flowgraph.ops import training_ops
from flowgraph.train import (
    adadelta,
    adagrad,
    adam,
    ftrl,
    gradient_descent,
    momentum,
    optimizer,
    rmsprop,
    slot_creator,
)
from flowgraph.train.adadelta import AdadeltaOptimizer
from flowgraph.train.adagrad import AdagradOptimizer
from flowgraph.train.adam import AdamOptimizer
from flowgraph.train.ftrl import FtrlOptimizer
from flowgraph.train.gradient_descent import GradientDescentOptimizer
from flowgraph.train.momentum import MomentumOptimizer
from flowgraph.train.optimizer import Optimizer
from flowgraph.train.rmsprop import RMSPropOptimizer

SHAPE = (4, 3)
INDICES = np.array([2, 0, 2])  # a duplicate, unsorted


# -- NumPy references (one step; `s` holds the slots, updated in place) ------------------
# Hyperparameters are float32 tensors cast to the variable's dtype (as in TF1), so the
# float64 references use float32-rounded constants.
def h(x):
    return float(np.float32(x))


def ref_sgd(var, s, g, t):
    return var - h(0.1) * g


def ref_momentum(nesterov):
    def step(var, s, g, t):
        s["momentum"] = s["momentum"] * h(0.9) + g
        if nesterov:
            return var - h(0.1) * (g + h(0.9) * s["momentum"])
        return var - h(0.1) * s["momentum"]

    return step


def ref_adagrad(var, s, g, t):
    s["accumulator"] = s["accumulator"] + g * g
    return var - h(0.1) * g / np.sqrt(s["accumulator"])


def ref_adam(var, s, g, t):
    b1p = np.float32(1.0)  # TF1 keeps beta1_power/beta2_power as float32 variables
    b2p = np.float32(1.0)
    for _ in range(t):
        b1p, b2p = b1p * np.float32(0.9), b2p * np.float32(0.999)
    lr_t = h(0.1) * np.sqrt(1 - float(b2p)) / (1 - float(b1p))
    s["m"] = h(0.9) * s["m"] + (1 - h(0.9)) * g
    s["v"] = h(0.999) * s["v"] + (1 - h(0.999)) * g * g
    return var - lr_t * s["m"] / (np.sqrt(s["v"]) + h(1e-8))


def ref_rmsprop(centered):
    def step(var, s, g, t):
        s["rms"] = h(0.9) * s["rms"] + (1 - h(0.9)) * g * g
        denom = s["rms"] + h(1e-10)
        if centered:
            s["mg"] = h(0.9) * s["mg"] + (1 - h(0.9)) * g
            denom = denom - s["mg"] ** 2
        s["momentum"] = h(0.5) * s["momentum"] + h(0.1) * g / np.sqrt(denom)
        return var - s["momentum"]

    return step


def ref_ftrl(lr_power, l1, l2, shrink):
    def step(var, s, g, t):
        p, lr = -h(lr_power), h(0.5)
        g_s = g + 2 * h(shrink) * var
        new_accum = s["accum"] + g * g
        s["linear"] = s["linear"] + g_s - (new_accum ** p - s["accum"] ** p) / lr * var
        s["accum"] = new_accum
        quad = new_accum ** p / lr + 2 * h(l2)
        lin = s["linear"]
        return np.where(np.abs(lin) > h(l1), (np.sign(lin) * h(l1) - lin) / quad, 0.0)

    return step


def ref_adadelta(var, s, g, t):
    rho, eps = h(0.95), h(1e-6)
    s["accum"] = rho * s["accum"] + (1 - rho) * g * g
    upd = np.sqrt(s["accum_update"] + eps) / np.sqrt(s["accum"] + eps) * g
    s["accum_update"] = rho * s["accum_update"] + (1 - rho) * upd * upd
    return var - 1.0 * upd


# name -> (factory, reference, initial slots, sparse Adam-style dense decay)
RULES = {
    "sgd": (lambda: GradientDescentOptimizer(0.1), ref_sgd, {}),
    "momentum": (lambda: MomentumOptimizer(0.1, 0.9), ref_momentum(False),
                 {"momentum": 0.0}),
    "nesterov": (lambda: MomentumOptimizer(0.1, 0.9, use_nesterov=True), ref_momentum(True),
                 {"momentum": 0.0}),
    "adagrad": (lambda: AdagradOptimizer(0.1), ref_adagrad, {"accumulator": 0.1}),
    "adam": (lambda: AdamOptimizer(0.1), ref_adam, {"m": 0.0, "v": 0.0}),
    "rmsprop": (lambda: RMSPropOptimizer(0.1, momentum=0.5), ref_rmsprop(False),
                {"rms": 1.0, "momentum": 0.0}),
    "centered_rmsprop": (lambda: RMSPropOptimizer(0.1, momentum=0.5, centered=True),
                         ref_rmsprop(True), {"rms": 1.0, "mg": 0.0, "momentum": 0.0}),
    "ftrl": (lambda: FtrlOptimizer(0.5, l1_regularization_strength=0.05,
                                   l2_regularization_strength=0.2),
             ref_ftrl(-0.5, 0.05, 0.2, 0.0), {"accum": 0.1, "linear": 0.0}),
    "ftrl_v2": (lambda: FtrlOptimizer(0.5, learning_rate_power=-0.7,
                                      l1_regularization_strength=0.05,
                                      l2_shrinkage_regularization_strength=0.3),
                ref_ftrl(-0.7, 0.05, 0.0, 0.3), {"accum": 0.1, "linear": 0.0}),
    "adadelta": (lambda: AdadeltaOptimizer(1.0, epsilon=1e-6), ref_adadelta,
                 {"accum": 0.0, "accum_update": 0.0}),
}


def _dense_from_sparse(values, indices):
    g = np.zeros(SHAPE)
    np.add.at(g, indices, values)
    return g


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("rule", list(RULES))
def test_update_rule_matches_numpy(rule, dtype, sparse, sess):
    factory, ref, slot_init = RULES[rule]
    rng = np.random.default_rng(7)
    init = rng.uniform(-1, 1, SHAPE)
    var = tf.Variable(init.astype(dtype), name="var")
    opt = factory()
    if sparse:
        values = tf.placeholder(dtype, [None, SHAPE[1]])
        grad = IndexedSlices(values, tf.constant(INDICES), tf.constant(SHAPE))
        feed_of = values
    else:
        grad = feed_of = tf.placeholder(dtype, SHAPE)
    train = opt.apply_gradients([(grad, var)])
    sess.run(tf.global_variables_initializer())
    expect = init.astype(dtype).astype(np.float64)
    slots = {k: np.full(SHAPE, v) for k, v in slot_init.items()}
    rtol, atol = (1e-12, 1e-12) if dtype == np.float64 else (2e-5, 2e-6)
    for t in range(1, 6):
        if sparse:
            vals = rng.uniform(-1, 1, (len(INDICES), SHAPE[1])).astype(dtype)
            g = _dense_from_sparse(vals.astype(np.float64), INDICES)
            rows = np.unique(INDICES) if rule != "adam" else np.arange(SHAPE[0])
        else:
            vals = rng.uniform(-1, 1, SHAPE).astype(dtype)
            g = vals.astype(np.float64)
            rows = np.arange(SHAPE[0])
        before = {k: v.copy() for k, v in slots.items()}
        new = ref(expect.copy(), slots, g, t)
        # Rows without a gradient in a sparse update keep var and slots (not Adam: TF1).
        untouched = np.setdiff1d(np.arange(SHAPE[0]), rows)
        new[untouched] = expect[untouched]
        for k in slots:
            slots[k][untouched] = before[k][untouched]
        expect = new
        sess.run(train, {feed_of: vals})
        got = sess.run(var)
        assert got.dtype == dtype
        np.testing.assert_allclose(got, expect, rtol=rtol, atol=atol, err_msg=f"step {t}")
        for name, value in slots.items():
            np.testing.assert_allclose(sess.run(opt.get_slot(var, name)), value, rtol=rtol,
                                       atol=atol, err_msg=f"slot {name} at step {t}")


def test_sparse_gradient_uses_sparse_kernel_without_densifying():
    emb = tf.Variable(np.ones((5, 3), np.float32), name="emb")
    loss = tf.reduce_sum(tf.gather(emb, [1, 1, 3]))
    MomentumOptimizer(0.1, 0.9).minimize(loss)
    types = {op.type for op in tf.get_default_graph().get_operations()}
    assert "SparseApplyMomentum" in types and "ApplyMomentum" not in types
    assert "ScatterNd" not in types


def test_sparse_update_through_gather_matches_dense(sess):
    init = np.arange(15, dtype=np.float64).reshape(5, 3) / 10
    a = tf.Variable(init, name="a")
    b = tf.Variable(init, name="b")
    idx = [3, 1, 3, 0]
    loss_a = tf.reduce_sum(tf.square(tf.gather(a, idx)))
    loss_b = tf.reduce_sum(tf.square(tf.matmul(tf.one_hot(idx, 5, dtype=tf.float64), b)))
    ta = AdagradOptimizer(0.3).minimize(loss_a)
    tb = AdagradOptimizer(0.3).minimize(loss_b)
    assert any(op.type == "SparseApplyAdagrad" for op in tf.get_default_graph().get_operations())
    sess.run(tf.global_variables_initializer())
    for _ in range(5):
        sess.run([ta, tb])
    np.testing.assert_allclose(*sess.run([a, b]), rtol=1e-12)


# -- names, slots, collections -----------------------------------------------------------
# Settled with the tf-oracle (TensorFlow 2.15 compat.v1).
SLOT_NAMES = [
    (lambda: AdamOptimizer(), {"m": "v/Adam", "v": "v/Adam_1"}),
    (lambda: MomentumOptimizer(0.1, 0.9), {"momentum": "v/Momentum"}),
    (lambda: RMSPropOptimizer(0.1, centered=True),
     {"rms": "v/RMSProp", "mg": "v/RMSProp_1", "momentum": "v/RMSProp_2"}),
    (lambda: RMSPropOptimizer(0.1), {"rms": "v/RMSProp", "momentum": "v/RMSProp_1"}),
    (lambda: FtrlOptimizer(0.1), {"accum": "v/Ftrl", "linear": "v/Ftrl_1"}),
    (lambda: AdadeltaOptimizer(), {"accum": "v/Adadelta", "accum_update": "v/Adadelta_1"}),
    (lambda: AdagradOptimizer(0.1), {"accumulator": "v/Adagrad"}),
    (lambda: GradientDescentOptimizer(0.1), {}),
]


@pytest.mark.parametrize("factory, names", SLOT_NAMES)
def test_slot_names_and_collections(factory, names):
    v = tf.Variable([[1.0, 2.0, 3.0]], name="v")
    opt = factory()
    opt.minimize(tf.reduce_sum(v * v))
    assert opt.get_slot_names() == sorted(names)
    for slot, full in names.items():
        s = opt.get_slot(v, slot)
        assert s.op.name == full
        assert s.shape.as_list() == [1, 3] and s.dtype.base_dtype == tf.float32
        assert s in tf.global_variables() and s not in tf.trainable_variables()
        assert s.op.colocation_groups() == v.op.colocation_groups()
    assert opt.get_slot(v, "no_such_slot") is None
    assert tf.trainable_variables() == [v]


def test_slot_dtype_follows_variable_and_initial_values(sess):
    v = tf.Variable(np.zeros((2, 3)), name="v")
    opt = RMSPropOptimizer(0.1)
    ada = AdagradOptimizer(0.1, initial_accumulator_value=0.25)
    fl = FtrlOptimizer(0.1, initial_accumulator_value=0.5)
    for o in (opt, ada, fl):
        o.minimize(tf.reduce_sum(v))
    sess.run(tf.global_variables_initializer())
    assert opt.get_slot(v, "rms").dtype.base_dtype == tf.float64
    np.testing.assert_array_equal(sess.run(opt.get_slot(v, "rms")), np.ones((2, 3)))
    np.testing.assert_array_equal(sess.run(ada.get_slot(v, "accumulator")),
                                  np.full((2, 3), 0.25))
    np.testing.assert_array_equal(sess.run(fl.get_slot(v, "accum")), np.full((2, 3), 0.5))


def test_adam_beta_powers_and_variables(sess):
    with tf.name_scope("model"):
        w = tf.Variable([1.0, 2.0], name="w")
    b = tf.Variable([3.0], name="b")
    opt = AdamOptimizer(0.1, beta1=0.8, beta2=0.9)
    train = opt.minimize(tf.reduce_sum(w) + tf.reduce_sum(b))
    names = [v.op.name for v in opt.variables()]
    assert names == ["b/Adam", "b/Adam_1", "beta1_power", "beta2_power", "model/w/Adam",
                     "model/w/Adam_1"]
    b1p = tf.get_default_graph().get_tensor_by_name("beta1_power:0")
    assert b1p.dtype.base_dtype == tf.float32
    assert b1p.op.colocation_groups() == b.op.colocation_groups()  # first var by name
    sess.run(tf.global_variables_initializer())
    for t in range(1, 4):
        sess.run(train)
        b1, b2 = sess.run(["beta1_power:0", "beta2_power:0"])
        np.testing.assert_allclose([b1, b2], [0.8 ** (t + 1), 0.9 ** (t + 1)], rtol=1e-6)


def test_second_optimizer_gets_unique_slot_names():
    v = tf.Variable([1.0], name="v")
    a, b = AdamOptimizer(), AdamOptimizer()
    a.minimize(tf.reduce_sum(v))
    b.minimize(tf.reduce_sum(v))
    assert [s.op.name for s in b.variables()] == ["beta1_power_1", "beta2_power_1",
                                                  "v/Adam_2", "v/Adam_3"]


def test_slot_creator_directly():
    v = tf.Variable(np.zeros((2, 3), np.float32), name="p")
    s = slot_creator.create_slot(v, tf.ones([2, 3]), "S")
    z = slot_creator.create_zeros_slot(v, "Z", dtype=tf.float64)
    assert s.op.name == "p/S" and z.op.name == "p/Z"
    assert z.dtype.base_dtype == tf.float64 and not s.trainable


# -- apply_gradients / minimize structure -------------------------------------------------
def test_global_step_incremented_after_updates(sess):
    v = tf.Variable([1.0, 2.0], name="v")
    step = tf.train.get_or_create_global_step()
    train = AdamOptimizer(0.1).minimize(tf.reduce_sum(v * v), global_step=step)
    assert train.name == "Adam" and train.type == "AssignAdd"
    update = tf.get_default_graph().get_operation_by_name("Adam/update")
    assert update in train.control_inputs + [c for t in train.inputs
                                             for c in t.op.control_inputs]
    assert tf.get_collection(tf.GraphKeys.TRAIN_OP) == [train]
    sess.run(tf.global_variables_initializer())
    for t in range(1, 4):
        sess.run(train)
        assert sess.run(step) == t


def test_apply_without_global_step_is_named_group(sess):
    v = tf.Variable([1.0, 2.0], name="v")
    train = MomentumOptimizer(0.1, 0.9).apply_gradients([(tf.constant([1.0, 1.0]), v)],
                                                        name="train")
    assert train.type == "NoOp" and train.name == "train"
    apply = tf.get_default_graph().get_operation_by_name("train/update_v/ApplyMomentum")
    assert apply.type == "ApplyMomentum"


def test_none_gradients_skipped(sess):
    v = tf.Variable([1.0, 2.0], name="v")
    w = tf.Variable(5.0, name="w")
    grads = GradientDescentOptimizer(0.5).compute_gradients(tf.reduce_sum(v))
    assert [x for _, x in grads] == [v, w] and grads[1][0] is None
    train = GradientDescentOptimizer(0.5).apply_gradients(grads)
    sess.run(tf.global_variables_initializer())
    sess.run(train)
    np.testing.assert_allclose(sess.run(v), [0.5, 1.5])
    assert sess.run(w) == 5.0


def test_compute_gradients_default_var_list_includes_resource_collection():
    v = tf.Variable(1.0, name="v")
    u = tf.Variable(2.0, name="u", trainable=False)
    tf.add_to_collection(tf.GraphKeys.TRAINABLE_RESOURCE_VARIABLES, u)
    gv = GradientDescentOptimizer(0.1).compute_gradients(v * u)
    assert [x for _, x in gv] == [v, u]
    gv = GradientDescentOptimizer(0.1).compute_gradients(v * u, var_list=[[u]])
    assert [x for _, x in gv] == [u]


@pytest.mark.parametrize("gate", [Optimizer.GATE_OP, Optimizer.GATE_GRAPH])
def test_gated_gradients_read_weights_before_in_place_updates(gate, sess):
    """With GATE_OP (the default) an op's input gradients are produced together, so the
    in-place update of w2 cannot run before the gradient of w1 has read w2. (With any
    gating `apply_gradients` also waits for all gradients: see the test below.)"""
    x = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3) / 10)
    w1 = tf.Variable(np.ones((3, 4), np.float32) * 0.3, name="w1")
    w2 = tf.Variable(np.ones((4, 1), np.float32) * 0.2, name="w2")
    loss = tf.reduce_sum(tf.square(tf.matmul(tf.matmul(x, w1), w2) - 1.0))
    train = GradientDescentOptimizer(0.05).minimize(loss, gate_gradients=gate)
    sess.run(tf.global_variables_initializer())
    sess.run(train)
    # One hand-computed step: both gradients use the weights before the update.
    xv, a, b = x.eval(session=sess), np.ones((3, 4)) * 0.3, np.ones((4, 1)) * 0.2
    r = 2 * (xv @ a @ b - 1.0)
    np.testing.assert_allclose(sess.run(w1), a - 0.05 * xv.T @ r @ b.T, rtol=1e-5)
    np.testing.assert_allclose(sess.run(w2), b - 0.05 * (xv @ a).T @ r, rtol=1e-5)


@pytest.mark.parametrize("source", ["tf.gradients", "GATE_NONE", "GATE_OP"])
@pytest.mark.parametrize("factory", [lambda: GradientDescentOptimizer(0.1),
                                     lambda: MomentumOptimizer(0.1, 0.9)],
                         ids=["sgd", "momentum"])
def test_apply_gradients_updates_after_all_gradient_reads(source, factory):
    """Issue 15: `apply_gradients(zip(tf.gradients(loss, vs), vs))` run in one step must
    compute every gradient from the weights before the step's updates (as `minimize`
    does), even though `tf.gradients` does not gate: the lower layer's gradient reads the
    upper weights, which an update running early would already have changed in place."""
    rng = np.random.RandomState(0)
    xv, yv = rng.randn(64, 32), rng.randn(64, 16)
    a, b = rng.randn(32, 64) * 0.3, rng.randn(64, 16) * 0.3
    with tf.Graph().as_default():
        w1, w2 = tf.Variable(a, name="w1"), tf.Variable(b, name="w2")
        hid = tf.tanh(tf.matmul(tf.constant(xv), w1))
        loss = tf.reduce_sum(tf.square(tf.matmul(hid, w2) - yv))
        opt = factory()
        if source == "tf.gradients":
            grads_and_vars = list(zip(tf.gradients(loss, [w1, w2]), [w1, w2]))
        else:
            grads_and_vars = opt.compute_gradients(
                loss, [w1, w2], gate_gradients=getattr(Optimizer, source))
        train = opt.apply_gradients(grads_and_vars)
        init = tf.global_variables_initializer()
        # NumPy: one step from the pre-update weights (zero momentum: same as SGD).
        h_ = np.tanh(xv @ a)
        r = 2 * (h_ @ b - yv)
        want1 = a - 0.1 * xv.T @ ((r @ b.T) * (1 - h_ ** 2))
        want2 = b - 0.1 * h_.T @ r
        config = tf.ConfigProto(inter_op_parallelism_threads=2)
        with tf.Session(config=config) as sess:
            for _ in range(50):
                sess.run(init)
                sess.run(train)
                got1, got2 = sess.run([w1, w2])
                np.testing.assert_allclose(got1, want1, rtol=1e-6, atol=1e-6)
                np.testing.assert_allclose(got2, want2, rtol=1e-6, atol=1e-6)


def test_float64_variable_with_python_hyperparameters(sess):
    v = tf.Variable(np.array([1.0, 2.0]), name="v")
    train = AdamOptimizer(0.1).minimize(tf.reduce_sum(v * v))
    sess.run(tf.global_variables_initializer())
    sess.run(train)
    assert sess.run(v).dtype == np.float64
    np.testing.assert_allclose(sess.run(v), [0.9, 1.9], rtol=1e-6)


def test_learning_rate_callable_and_tensor(sess):
    v = tf.Variable(1.0, name="v")
    lr = tf.placeholder(tf.float32, [])
    t1 = GradientDescentOptimizer(lr).minimize(v * 1.0)
    t2 = GradientDescentOptimizer(lambda: tf.constant(0.25)).minimize(v * 1.0)
    sess.run(tf.global_variables_initializer())
    sess.run(t1, {lr: 0.5})
    assert sess.run(v) == pytest.approx(0.5)
    sess.run(t2)
    assert sess.run(v) == pytest.approx(0.25)


def test_use_locking_and_constraint(sess):
    v = tf.Variable([1.0, -2.0], name="v", constraint=lambda x: tf.maximum(x, 0.0))
    train = MomentumOptimizer(0.5, 0.9, use_locking=True).minimize(tf.reduce_sum(v))
    ops = {op.type: op for op in tf.get_default_graph().get_operations()}
    assert ops["ApplyMomentum"].attrs["use_locking"] is True
    sess.run(tf.global_variables_initializer())
    sess.run(train)
    np.testing.assert_allclose(sess.run(v), [0.5, 0.0])


def test_minimize_converges_on_linear_regression(sess):
    rng = np.random.default_rng(0)
    xs = rng.normal(size=(64, 3)).astype(np.float32)
    true_w = np.array([[1.5], [-2.0], [0.5]], np.float32)
    ys = xs @ true_w + 0.3
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.placeholder(tf.float32, [None, 1])
    trains = []
    for k, make in enumerate([lambda: GradientDescentOptimizer(0.1),
                              lambda: AdamOptimizer(0.05),
                              lambda: MomentumOptimizer(0.05, 0.9)]):
        w = tf.Variable(tf.zeros([3, 1]), name=f"w{k}")
        b = tf.Variable(0.0, name=f"b{k}")
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
        trains.append((make().minimize(loss), loss, w, b))
    sess.run(tf.global_variables_initializer())
    for _ in range(300):
        sess.run([t for t, *_ in trains], {x: xs, y: ys})
    for _, loss, w, b in trains:
        assert sess.run(loss, {x: xs, y: ys}) < 1e-3
        np.testing.assert_allclose(sess.run(w), true_w, atol=0.02)
        assert sess.run(b) == pytest.approx(0.3, abs=0.02)


# -- errors --------------------------------------------------------------------------------
def test_error_messages():
    v = tf.Variable([1.0, 2.0], name="v")
    w = tf.Variable(3.0, name="w")
    sgd = GradientDescentOptimizer(0.1)
    with pytest.raises(ValueError, match=r"^No gradients provided for any variable: \["):
        sgd.apply_gradients([(None, v)])
    with pytest.raises(ValueError, match=r"^No variables provided\.$"):
        sgd.apply_gradients([])
    with pytest.raises(ValueError, match="No gradients provided for any variable, check your "
                                         "graph for ops that do not support gradients"):
        sgd.minimize(w * 0.0 + 1.0, var_list=[v])
    with pytest.raises(ValueError, match=r"^No variables to optimize\.$"):
        sgd.compute_gradients(tf.reduce_sum(v), var_list=[])
    with pytest.raises(NotImplementedError, match="Trying to update a Tensor"):
        sgd.apply_gradients([(tf.constant([1.0, 2.0]), tf.constant([1.0, 2.0]))])
    with pytest.raises(ValueError, match="gate_gradients must be one of"):
        sgd.compute_gradients(tf.reduce_sum(v), gate_gradients=7)
    with pytest.raises(ValueError, match="Invalid type"):
        sgd.compute_gradients(tf.constant(1, tf.int32))
    with pytest.raises(TypeError, match="Gradient must be convertible"):
        sgd.apply_gradients([(object(), v)])
    with pytest.raises(ValueError, match="Must specify the optimizer name"):
        Optimizer(False, "")


def test_constructor_validation():
    with pytest.raises(ValueError, match="initial_accumulator_value must be positive"):
        AdagradOptimizer(0.1, initial_accumulator_value=0.0)
    with pytest.raises(ValueError, match="needs to be positive or zero"):
        FtrlOptimizer(0.1, initial_accumulator_value=-1.0)
    with pytest.raises(ValueError, match="learning_rate_power"):
        FtrlOptimizer(0.1, learning_rate_power=0.5)
    with pytest.raises(ValueError, match="l1_regularization_strength"):
        FtrlOptimizer(0.1, l1_regularization_strength=-1.0)
    with pytest.raises(ValueError, match="l2_shrinkage_regularization_strength"):
        FtrlOptimizer(0.1, l2_shrinkage_regularization_strength=-1.0)


def test_integer_variable_rejected_by_update_op():
    v = tf.Variable([1, 2], name="iv")
    with pytest.raises(TypeError, match="float32 and float64"):
        training_ops.apply_gradient_descent(v, 1, tf.constant([1, 1]))


def test_update_op_shape_errors_at_graph_construction():
    v = tf.Variable(np.zeros((4, 3), np.float32), name="v")
    with pytest.raises(ValueError, match="var and grad do not have the same shape"):
        training_ops.apply_gradient_descent(v, 0.1, tf.zeros([3, 4]))
    with pytest.raises(ValueError, match="all dimensions but the first"):
        training_ops.sparse_apply_gradient_descent(v, 0.1, tf.zeros([2, 4]), [0, 1])
    with pytest.raises(ValueError, match="one row per index"):
        training_ops.sparse_apply_gradient_descent(v, 0.1, tf.zeros([2, 3]), [0, 1, 2])
    with pytest.raises(ValueError, match="must be a scalar"):
        training_ops.apply_gradient_descent(v, tf.constant([0.1, 0.2]), tf.zeros([4, 3]))
    with pytest.raises(TypeError, match=r"cast it with tf\.cast"):
        training_ops.apply_gradient_descent(v, tf.constant(0.1, tf.float64), tf.zeros([4, 3]))
    # Partially known shapes are accepted; the output keeps what is known.
    g = tf.placeholder(tf.float32, [None, 3])
    assert training_ops.apply_gradient_descent(v, 0.1, g).shape.as_list() == [4, 3]
    vals = tf.placeholder(tf.float32)
    out = training_ops.sparse_apply_gradient_descent(v, 0.1, vals, tf.placeholder(tf.int32))
    assert out.shape.as_list() == [4, 3] and out.dtype == v.dtype


def test_sparse_index_out_of_range_is_invalid_argument(sess):
    v = tf.Variable(np.zeros((4, 3), np.float32), name="v")
    idx = tf.placeholder(tf.int64, [None])
    op = training_ops.sparse_apply_gradient_descent(v, 0.1, tf.ones([2, 3]), idx)
    sess.run(v.initializer)
    with pytest.raises(errors.InvalidArgumentError, match=r"indices\[1\] = 4 is not in \[0, 4\)"):
        sess.run(op, {idx: [0, 4]})
    np.testing.assert_array_equal(sess.run(v), np.zeros((4, 3)))  # nothing written


# -- in-place kernels ----------------------------------------------------------------------
def _state(value):
    s = VariableState("v")
    s.value = value
    return s


def test_kernels_update_storage_in_place():
    var = _state(np.ones((5, 3), np.float32))
    m, v = _state(np.zeros((5, 3), np.float32)), _state(np.zeros((5, 3), np.float32))
    ids = [id(s.value) for s in (var, m, v)]
    from flowgraph.backends.cpu import backend

    adam_k = backend.find_kernel("ApplyAdam", tf.float32).fn
    sc = [np.asarray(x, np.float32) for x in (0.9, 0.999, 0.1, 0.9, 0.999, 1e-8)]
    for _ in range(3):
        out = adam_k(var, m, v, *sc, np.ones((5, 3), np.float32), use_locking=False,
                     use_nesterov=False, op=None)
        assert out is var
    assert [id(s.value) for s in (var, m, v)] == ids
    assert np.all(var.value < 1.0)


def test_kernel_replaces_non_contiguous_storage_once():
    base = np.ones((3, 8))
    var = _state(base[:, ::2])  # a strided view
    kernels_training.apply_gradient_descent(var, np.asarray(0.5), np.ones((3, 4)),
                                            use_locking=True, op=None)
    assert var.value.flags.c_contiguous and var.value.base is None
    np.testing.assert_array_equal(var.value, np.full((3, 4), 0.5))
    np.testing.assert_array_equal(base, np.ones((3, 8)))  # the view's base untouched


def test_kernel_shape_mismatch_is_invalid_argument():
    var = _state(np.ones((3, 4)))
    with pytest.raises(errors.InvalidArgumentError, match="do not have the same shape"):
        kernels_training.apply_gradient_descent(var, np.asarray(0.5), np.ones((4, 3)),
                                                use_locking=False, op=None)


def test_fetched_variable_value_not_changed_by_later_in_place_update(sess):
    v = tf.Variable([1.0, 2.0], name="v")
    train = GradientDescentOptimizer(0.5).apply_gradients([(tf.constant([1.0, 1.0]), v)])
    sess.run(v.initializer)
    before = sess.run(v.value())
    sess.run(train)
    np.testing.assert_array_equal(before, [1.0, 2.0])
    np.testing.assert_array_equal(sess.run(v), [0.5, 1.5])


def test_ref_fetch_is_a_copy(sess):
    v = tf.Variable([1.0, 2.0], name="v")
    train = GradientDescentOptimizer(0.5).apply_gradients([(tf.constant([1.0, 1.0]), v)])
    sess.run(v.initializer)
    before = sess.run(v)  # a ref fetch: the session copies it
    sess.run(train)
    np.testing.assert_array_equal(before, [1.0, 2.0])


@pytest.mark.parametrize("module", [optimizer, slot_creator, gradient_descent, momentum,
                                    adagrad, adam, rmsprop, ftrl, adadelta, training_ops,
                                    kernels_training])
def test_docstring_examples(module):
    if not hasattr(tf.train, "AdamOptimizer") and module not in (slot_creator, training_ops,
                                                                 kernels_training):
        pytest.skip("tf.train exports not applied yet")
    tf.reset_default_graph()
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
