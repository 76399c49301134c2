"""Behaviour of TensorFlow's further optimizer updates (`flowgraph/ops/training_ops.py`,
kernels in `flowgraph/backends/cpu/kernels_training_raw.py`) and of the optimizers that
emit them, checked against TensorFlow 2.15's values (inline, from the oracle) and against
graphs TensorFlow wrote (tests/data/tf_formats/raw_train/, written by its make_fixture.py).
The saver and remapping ops: test_raw_train_io.py."""

from __future__ import annotations

import os

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework import errors
from flowgraph.ops import training_ops

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "tf_formats", "raw_train")
V = np.array([[0.5, -1.0, 2.0], [0.1, 0.2, -0.3]], np.float32)
G = np.array([[1.0, -2.0, 0.5], [0.25, 3.0, -1.0]], np.float32)
GS = np.array([[1.0, -2.0, 0.5], [0.25, 3.0, -1.0], [-0.5, 0.75, 2.0]], np.float32)
IDX = np.array([1, 0, 1], np.int32)  # row 1 twice: TF applies it twice, in order

# TensorFlow's variable and slots after two runs of each op (slots start at 0.5).
TF_TWO_STEPS = {"ApplyAdaMax": [[[0.3855000436306, -1.0137500762939453, 1.8000001907348633],
                  [-0.08577626943588257, 0.14250001311302185, -0.3564999997615814]],
                 [[0.5950000286102295, 0.024999886751174927, 0.5],
                  [0.45249998569488525, 0.9750001430511475, 0.2149999439716339]],
                 [[1.0, 2.0, 0.5], [0.49900051951408386, 3.0, 1.0]]],
 "ApplyAdagradDA": [[[-0.15562595427036285, 0.11877558380365372, -0.1461232602596283],
                     [-0.12177219241857529, -0.15021489560604095, 0.09261949360370636]],
                    [[2.5, -3.5, 1.5], [1.0, 6.5, -1.5]],
                    [[2.5, 8.5, 1.0], [0.625, 18.5, 2.5]]],
 "ApplyAdagradV2": [[[0.35510480403900146, -0.8371196389198303, 1.8922650814056396],
                     [0.035043906420469284, 0.03291855752468109, -0.15510481595993042]],
                    [[2.5, 8.5, 1.0], [0.625, 18.5, 2.5]]],
 "ApplyAddSign": [[[0.12000000476837158, -0.9600000381469727, 1.809999942779541],
                   [0.005000002682209015, -0.9399999976158142, -0.2800000309944153]],
                  [[0.5950000286102295, 0.024999886751174927, 0.5],
                   [0.45249998569488525, 0.9750000834465027, 0.2149999439716339]]],
 "ApplyPowerSign": [[[-1.809464454650879, -0.9653599262237549, 0.8452677726745605],
                     [-0.4773661196231842, -6.7283935546875, -0.2826799750328064]],
                    [[0.5950000286102295, 0.024999886751174927, 0.5],
                     [0.45249998569488525, 0.9750000834465027, 0.2149999439716339]]],
 "ApplyProximalAdagrad": [[[0.3525291383266449, -0.8348797559738159, 1.8818742036819458],
                           [0.032190438359975815, 0.03228025883436203, -0.15310752391815186]],
                          [[2.5, 8.5, 1.0], [0.625, 18.5, 2.5]]],
 "ApplyProximalGradientDescent": [[[0.288634330034256, -0.5872387886047363,
                                    1.8823533058166504],
                                   [0.03978072106838226, -0.38903236389160156,
                                    -0.08943194150924683]]],
 "ResourceApplyAdamWithAmsgrad": [[[0.49488332867622375, -1.0012251138687134,
                                    1.995527982711792],
                                   [0.09585212171077728, 0.19238603115081787,
                                    -0.30252498388290405]],
                                  [[0.5950000286102295, 0.024999886751174927, 0.5],
                                   [0.45249998569488525, 0.9750001430511475,
                                    0.2149999439716339]],
                                  [[0.5009994506835938, 0.5069964528083801,
                                    0.4995002746582031],
                                   [0.4991254508495331, 0.5169912576675415,
                                    0.5009994506835938]],
                                  [[0.5009994506835938, 0.5069964528083801, 0.5],
                                   [0.5, 0.5169912576675415, 0.5009994506835938]]],
 "ResourceApplyKerasMomentum": [[[0.8085000514984131, 0.6914998888969421, 2.5389997959136963],
                                 [0.7542499303817749, -0.4135000705718994,
                                  0.9305000305175781]],
                                [[0.2150000035762787, 0.7849999666213989, 0.309999942779541],
                                 [0.35749995708465576, -0.1650000363588333,
                                  0.5950000286102295]]],
 "ResourceSparseApplyKerasMomentum": [[[1.28249990940094, -1.0150001049041748,
                                        3.1449999809265137],
                                       [1.299149990081787, 2.537099838256836,
                                        0.23859983682632446]],
                                      [[0.35749995708465576, -0.1650000363588333,
                                        0.5950000286102295],
                                       [0.25565001368522644, 0.5180999636650085,
                                        -0.1154000461101532]]],
 "SparseApplyAdagradDA": [[[-0.12177219986915588, -0.15021489560604095, 0.09261950105428696],
                           [-0.08457750827074051, 0.063376285135746, -0.18196938931941986]],
                          [[1.0, 6.5, -1.5], [1.5, -2.0, 5.5]],
                          [[0.625, 18.5, 2.5], [3.0, 9.625, 9.0]]],
 "SparseApplyAdagradV2": [[[0.43504390120506287, -1.1670814752578735, 2.144895076751709],
                           [0.02471204847097397, 0.3032092750072479, -0.5385286808013916]],
                          [[0.625, 18.5, 2.5], [3.0, 9.625, 9.0]]],
 "SparseApplyProximalAdagrad": [[[0.43011993169784546, -1.165271282196045, 2.137349843978882],
                                 [0.023034071549773216, 0.3007214069366455,
                                  -0.5341283679008484]],
                                [[0.625, 18.5, 2.5], [3.0, 9.625, 9.0]]],
 "SparseApplyProximalGradientDescent": [[[0.43818551301956177, -1.5842466354370117,
                                          2.181455135345459],
                                         [0.0, 0.4267159104347229, -0.7755197882652283]]]}


def _ulps(a, b) -> int:
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    return int(np.abs(a.view(np.int32).astype(np.int64) - b.view(np.int32)).max(initial=0))


def _build(op_type: str, refs):
    raw = tf.raw_ops
    step = tf.constant(3, tf.int64)
    h = [getattr(r, "handle", r) for r in refs]
    return {
        "ApplyAdaMax": lambda: raw.ApplyAdaMax(
            var=refs[0], m=refs[1], v=refs[2], beta1_power=0.9, lr=0.01, beta1=0.9,
            beta2=0.999, epsilon=1e-7, grad=G),
        "ApplyAdagradV2": lambda: raw.ApplyAdagradV2(var=refs[0], accum=refs[1], lr=0.1,
                                                     epsilon=1e-7, grad=G),
        "ApplyAdagradDA": lambda: raw.ApplyAdagradDA(
            var=refs[0], gradient_accumulator=refs[1], gradient_squared_accumulator=refs[2],
            grad=G, lr=0.1, l1=0.01, l2=0.02, global_step=step),
        "ApplyAddSign": lambda: raw.ApplyAddSign(var=refs[0], m=refs[1], lr=0.1, alpha=1.0,
                                                 sign_decay=0.9, beta=0.9, grad=G),
        "ApplyPowerSign": lambda: raw.ApplyPowerSign(
            var=refs[0], m=refs[1], lr=0.1, logbase=float(np.e), sign_decay=0.9, beta=0.9,
            grad=G),
        "ApplyProximalAdagrad": lambda: raw.ApplyProximalAdagrad(
            var=refs[0], accum=refs[1], lr=0.1, l1=0.01, l2=0.02, grad=G),
        "ApplyProximalGradientDescent": lambda: raw.ApplyProximalGradientDescent(
            var=refs[0], alpha=0.1, l1=0.05, l2=0.02, delta=G),
        "ResourceApplyKerasMomentum": lambda: raw.ResourceApplyKerasMomentum(
            var=h[0], accum=h[1], lr=0.1, grad=G, momentum=0.9, use_nesterov=True),
        "ResourceApplyAdamWithAmsgrad": lambda: raw.ResourceApplyAdamWithAmsgrad(
            var=h[0], m=h[1], v=h[2], vhat=h[3], beta1_power=0.9, beta2_power=0.999, lr=0.01,
            beta1=0.9, beta2=0.999, epsilon=1e-7, grad=G),
        "SparseApplyAdagradV2": lambda: raw.SparseApplyAdagradV2(
            var=refs[0], accum=refs[1], lr=0.1, epsilon=1e-7, grad=GS, indices=IDX),
        "SparseApplyAdagradDA": lambda: raw.SparseApplyAdagradDA(
            var=refs[0], gradient_accumulator=refs[1], gradient_squared_accumulator=refs[2],
            grad=GS, indices=IDX, lr=0.1, l1=0.01, l2=0.02, global_step=step),
        "SparseApplyProximalAdagrad": lambda: raw.SparseApplyProximalAdagrad(
            var=refs[0], accum=refs[1], lr=0.1, l1=0.01, l2=0.02, grad=GS, indices=IDX),
        "SparseApplyProximalGradientDescent": lambda: raw.SparseApplyProximalGradientDescent(
            var=refs[0], alpha=0.1, l1=0.05, l2=0.02, grad=GS, indices=IDX),
        "ResourceSparseApplyKerasMomentum": lambda: raw.ResourceSparseApplyKerasMomentum(
            var=h[0], accum=h[1], lr=0.1, grad=GS, indices=IDX, momentum=0.9),
    }[op_type]()


def _two_steps(op_type: str, resource: bool, dtype=np.float32):
    n = len(TF_TWO_STEPS[op_type])
    with tf.Graph().as_default():
        refs = [tf.Variable(V.astype(dtype), use_resource=resource)] + [
            tf.Variable(np.full((2, 3), 0.5, dtype), use_resource=resource)
            for _ in range(n - 1)]
        op = _build(op_type, refs)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(op)
            sess.run(op)
            return op, sess.run(refs)


@pytest.mark.parametrize("op_type", sorted(TF_TWO_STEPS))
def test_update_matches_tensorflow(op_type):
    """Variable and slots after two steps: TF's bits (ProximalAdagrad: TF's float32
    rsqrt is a hardware estimate, within one ulp)."""
    op, values = _two_steps(op_type, op_type.startswith("Resource"))
    assert getattr(op, "op", op).type == op_type
    for got, want in zip(values, TF_TWO_STEPS[op_type]):
        assert got.dtype == np.float32
        assert _ulps(got, want) <= (1 if op_type == "ApplyProximalAdagrad" else 0), op_type


@pytest.mark.parametrize("op_type", ["ApplyAdagradDA", "ApplyProximalAdagrad",
                                     "SparseApplyAdagradV2", "ApplyPowerSign"])
def test_resource_form_updates_the_same(op_type):
    _, ref_values = _two_steps(op_type, False)
    with tf.Graph().as_default():
        refs = [tf.Variable(V, use_resource=True)] + [
            tf.Variable(np.full((2, 3), 0.5, np.float32), use_resource=True)
            for _ in range(len(ref_values) - 1)]
        names = training_ops._SIGNATURES[op_type][0]
        args = dict(zip(names, refs))
        hyper = {"lr": 0.1, "l1": 0.01, "l2": 0.02, "epsilon": 1e-7, "logbase": float(np.e),
                 "sign_decay": 0.9, "beta": 0.9, "global_step": np.int64(3)}
        args.update({n: hyper[n] for n in names if n in hyper})
        args["grad"] = GS if "Sparse" in op_type else G
        if "indices" in names:
            args["indices"] = IDX
        op = training_ops.apply_op(op_type, args)
        assert op.type == "Resource" + op_type
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(op)
            sess.run(op)
            for got, want in zip(sess.run(refs), ref_values):
                np.testing.assert_array_equal(got, want)


def test_float64_and_float16_follow_the_float32_rule():
    _, v32 = _two_steps("ApplyProximalGradientDescent", False)
    _, v64 = _two_steps("ApplyProximalGradientDescent", False, np.float64)
    _, v16 = _two_steps("ApplyProximalGradientDescent", False, np.float16)
    assert v64[0].dtype == np.float64 and v16[0].dtype == np.float16
    np.testing.assert_allclose(v64[0], v32[0], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(v16[0], v32[0], rtol=2e-3, atol=2e-3)


def test_sparse_duplicate_indices_apply_in_order():
    """Row 1 appears twice: its second gradient sees the first update (TF's kernels),
    unlike a summed gradient."""
    with tf.Graph().as_default():
        v = tf.Variable(np.zeros((2, 1), np.float32))
        a = tf.Variable(np.full((2, 1), 1.0, np.float32))
        op = tf.raw_ops.SparseApplyAdagradV2(var=v, accum=a, lr=1.0, epsilon=0.0,
                                             grad=[[3.0], [4.0]], indices=[1, 1])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out, accum = sess.run([op, a])
    # accum 1 -> 10 -> 26; var -= 3/sqrt(10), then -= 4/sqrt(26)
    np.testing.assert_allclose(accum[:, 0], [1.0, 26.0])
    np.testing.assert_allclose(out[:, 0], [0.0, -3 / np.sqrt(10) - 4 / np.sqrt(26)],
                               rtol=1e-6)


def test_errors_name_the_op():
    with tf.Graph().as_default():
        v = tf.Variable(np.zeros((2, 3), np.float32))
        m = tf.Variable(np.zeros((2, 3), np.float32))
        with pytest.raises(ValueError, match="var and grad do not have the same shape"):
            tf.raw_ops.ApplyAddSign(var=v, m=m, lr=0.1, alpha=1.0, sign_decay=0.9, beta=0.9,
                                    grad=np.zeros((3, 2), np.float32))
        with pytest.raises(ValueError, match="'lr' must be a scalar"):
            tf.raw_ops.ApplyProximalAdagrad(var=v, accum=m, lr=[0.1, 0.2], l1=0.0, l2=0.0,
                                            grad=np.zeros((2, 3), np.float32))
        with pytest.raises(TypeError, match="global_step must be int64"):
            training_ops.apply_op("ApplyAdagradDA", {
                "var": v, "gradient_accumulator": m, "gradient_squared_accumulator": m,
                "grad": np.zeros((2, 3), np.float32), "lr": 0.1, "l1": 0.0, "l2": 0.0,
                "global_step": tf.constant(1, tf.int32)})
        bad = tf.raw_ops.SparseApplyProximalGradientDescent(
            var=v, alpha=0.1, l1=0.0, l2=0.0, grad=np.zeros((2, 3), np.float32),
            indices=[0, 5])
        with tf.Session() as sess:
            sess.run(v.initializer)
            with pytest.raises(errors.InvalidArgumentError,
                               match=r"index 5 at offset 1 in indices is out of range"):
                sess.run(bad)


def test_resource_only_ops_refuse_reference_variables():
    with tf.Graph().as_default():
        v = tf.Variable(np.zeros(2, np.float32))
        with pytest.raises(TypeError, match="must be a resource variable"):
            training_ops.apply_op("ApplyKerasMomentum", {
                "var": v, "accum": v, "lr": 0.1, "grad": [1.0, 1.0], "momentum": 0.9})


# -- optimizers emit TF's op types ---------------------------------------------------------

# TF 2.15's op type and variable (3x3, rows 0 and 2 used) after 3 steps; the same values
# for reference and resource variables.
TF_OPTIMIZERS = {
    ("PGD", False): ("ApplyProximalGradientDescent",
        [0.24231520295143127, -0.0017673532711341977, 1.005725622177124, 0.0710185095667839,
         0.15624366700649261, 0.14052723348140717, 1.4760957956314087, -0.48207181692123413,
         0.2335658222436905]),
    ("PGD", True): ("SparseApplyProximalGradientDescent",
        [0.0, -0.12546411156654358, 0.7626267075538635, 0.10000000149011612,
         0.20000000298023224, -0.30000001192092896, 1.2641704082489014,
         -0.41191908717155457, -0.11508014798164368]),
    ("PA", False): ("ApplyProximalAdagrad",
        [0.2938649654388428, -0.7798081040382385, 1.7736248970031738, 0.05136023834347725,
         0.11456067115068436, -0.10702437907457352, 1.462527871131897, -0.4812639057636261,
         0.2359478920698166]),
    ("PA", True): ("SparseApplyProximalAdagrad",
        [0.2803911566734314, -0.7811295986175537, 1.773105263710022, 0.10000000149011612,
         0.20000000298023224, -0.30000001192092896, 1.27891206741333, -0.34023571014404297,
         0.06625602394342422]),
    ("DA", False): ("ApplyAdagradDA",
        [-0.058563750237226486, 0.07989202439785004, -0.08896083384752274,
         -0.003102863673120737, -0.013787582516670227, 0.04203611612319946, -0.0, -0.0,
         -0.0]),
    ("DA", True): ("SparseApplyAdagradDA",
        [-0.1524282842874527, 0.04858109727501869, -0.1273476779460907, 0.10000000149011612,
         0.20000000298023224, -0.30000001192092896, -0.07696535438299179,
         0.04035449028015137, -0.03392009064555168]),
}
_MAKERS = {
    "PGD": lambda gs: tf.train.ProximalGradientDescentOptimizer(
        0.1, l1_regularization_strength=0.05, l2_regularization_strength=0.02),
    "PA": lambda gs: tf.train.ProximalAdagradOptimizer(
        0.1, l1_regularization_strength=0.01, l2_regularization_strength=0.02),
    "DA": lambda gs: tf.train.AdagradDAOptimizer(
        0.1, gs, l1_regularization_strength=0.01, l2_regularization_strength=0.02),
}


@pytest.mark.parametrize("resource", [False, True])
@pytest.mark.parametrize("key", sorted(TF_OPTIMIZERS))
def test_proximal_optimizers_emit_tf_ops(key, resource):
    name, sparse = key
    op_type, want = TF_OPTIMIZERS[key]
    with tf.Graph().as_default() as g:
        gs = tf.train.get_or_create_global_step()
        w = tf.Variable(np.array([[0.5, -1.0, 2.0], [0.1, 0.2, -0.3], [1.5, -0.5, 0.25]],
                                 np.float32), use_resource=resource)
        x = tf.constant(np.array([[1.0, 2.0, -1.0], [0.5, -0.5, 3.0]], np.float32))
        used = tf.gather(w, [0, 2, 0]) if sparse else w[:2]
        loss = tf.reduce_sum(tf.square(used[:2] * x)) + (
            tf.reduce_sum(used[2]) if sparse else 0.0)
        step = _MAKERS[name](gs).minimize(loss, global_step=gs)
        types = {o.type for o in g.get_operations() if "Apply" in o.type}
        assert types == {("Resource" if resource else "") + op_type}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run(step)
            got = sess.run(w).ravel()
    assert _ulps(got, want) <= (1 if op_type == "ApplyProximalAdagrad" else 0)


# TF 2.15 Keras (legacy optimizers, graph mode) after 3 epochs of one batch: the update
# op and the Dense layer's kernel and bias.
TF_KERAS = {
    "SGDm": ("ResourceApplyKerasMomentum", [1.1065484285354614, 0.4646335542201996],
             [0.24308153986930847]),
    "SGDn": ("ResourceApplyKerasMomentum", [0.9267431497573853, 0.31677672266960144],
             [0.0983152687549591]),
    "Adam_ams": ("ResourceApplyAdamWithAmsgrad", [0.44882798194885254, -0.051358938217163086],
                 [0.14701798558235168]),
    "Adamax": ("ResourceApplyAdaMax", [0.4399806261062622, -0.060998618602752686],
               [0.13270539045333862]),
    "Adagrad": ("ResourceApplyAdagradV2", [0.5016067028045654, -0.002025071531534195],
                [0.16855111718177795]),
}
_KERAS = {
    "SGDm": lambda o: o.SGD(0.1, momentum=0.9),
    "SGDn": lambda o: o.SGD(0.1, momentum=0.9, nesterov=True),
    "Adam_ams": lambda o: o.Adam(0.05, amsgrad=True),
    "Adamax": lambda o: o.Adamax(0.05),
    "Adagrad": lambda o: o.Adagrad(0.1),
}


@pytest.mark.parametrize("name", sorted(TF_KERAS))
def test_keras_optimizers_emit_tf_ops(name):
    keras = tf.keras
    x = np.array([[1.0, 2.0], [0.5, -1.0], [-1.5, 0.25], [2.0, 1.0]], np.float32)
    y = np.array([[1.0], [0.0], [-1.0], [2.0]], np.float32)
    op_type, kernel, bias = TF_KERAS[name]
    with tf.Graph().as_default() as g:
        m = keras.Sequential([keras.layers.Dense(
            1, input_shape=(2,), name="d",
            kernel_initializer=keras.initializers.Constant([[0.3], [-0.2]]))])
        m.compile(_KERAS[name](keras.optimizers), "mse")
        m.fit(x, y, batch_size=4, epochs=3, verbose=0, shuffle=False)
        assert {o.type for o in g.get_operations() if "Apply" in o.type} == {op_type}
        got_kernel, got_bias = m.get_weights()
    np.testing.assert_array_equal(got_kernel.ravel(), np.float32(kernel))
    np.testing.assert_array_equal(got_bias, np.float32(bias))


# -- graphs TensorFlow wrote -------------------------------------------------------------


def test_tf_written_update_graph_trains_with_tf_values():
    expected = np.load(os.path.join(DATA, "expected.npz"))
    graph_def = tf.GraphDef()
    with open(os.path.join(DATA, "updates.pb"), "rb") as f:
        graph_def.ParseFromString(f.read())
    n = sum(1 for k in expected.files if k.startswith("update_"))
    with tf.Graph().as_default() as g:
        tf.import_graph_def(graph_def, name="")
        types = {o.type for o in g.get_operations() if "Apply" in o.type}
        with tf.Session() as sess:
            sess.run("init")
            for _ in range(3):
                sess.run("train")
            values = sess.run([f"value_{k}:0" for k in range(n)])
    assert {"ApplyAdagradDA", "SparseApplyProximalAdagrad", "ResourceApplyAdamWithAmsgrad",
            "ResourceSparseApplyKerasMomentum", "ApplyPowerSign"} <= types
    for k, got in enumerate(values):
        assert _ulps(got, expected[f"update_{k}"]) <= 1, k


_KERAS_FEED = {"x:0": np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]], np.float32),
               "y:0": np.array([[1.0], [-0.5]], np.float32)}


def test_tf_written_keras_sgd_meta_trains_on():
    """A .meta TF wrote for Keras's SGD(momentum, nesterov) on resource variables:
    restored from TF's checkpoint and trained 3 more steps, TF's bits."""
    expected = np.load(os.path.join(DATA, "expected.npz"))
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(os.path.join(DATA, "keras_sgd.meta"))
        (train,) = tf.get_collection("train_op")
        with tf.Session() as sess:
            saver.restore(sess, os.path.join(DATA, "model.ckpt-2"))
            for _ in range(3):
                sess.run(train, _KERAS_FEED)
            for v in tf.global_variables():
                np.testing.assert_array_equal(
                    sess.run(v), expected["keras_" + v.op.name.replace("/", "_")])
            np.testing.assert_array_equal(sess.run("loss:0", _KERAS_FEED),
                                          expected["keras_loss"])
