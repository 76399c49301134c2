"""TF1 programs that bend autodiff, sweep 13 (area ``grads``), run under TensorFlow 2.15
and flowgraph with the tf-oracle; TensorFlow's printed values are inline.

The programs (2016-2019 style): MAML on sinusoid regression (an inner SGD step built as
a graph, the outer Adam step through three inner steps, and the first-order variant with
``tf.stop_gradient`` on the inner gradients); ``tf.hessians`` of a quadratic form and of a
variable, Hessian-vector products by double ``tf.gradients`` with ``grad_ys`` and by the
``stop_gradient`` dot-product trick; ``tf.custom_gradient`` (a stable log1p(exp),
gradient clipping, a dense layer whose ``grad_fn(dy, variables=None)`` scales the weight
gradient) trained by SGD; ``@tf.RegisterGradient`` with ``gradient_override_map``
(gradient reversal in a domain-adaptation net, guided-backprop ReLU, straight-through
round/sign); the subgradients of ``clip_by_value``/``maximum``/``minimum``/``where``/
``abs``/``norm``/``relu*``/reductions/top_k/sort at ties and at zero; gradients through
``while_loop``/``cond``/``map_fn``/``scan``/``foldl``, a hand-written RNN over a
``TensorArray``, ``dynamic_rnn`` and nested loops, third-order derivatives through a
``cond`` and an inner SGD loop with ``tf.gradients`` in its body; ``stop_gradients=``,
``unconnected_gradients``, integer and unconnected xs, ``name=``, gating and tree
aggregation; ``py_func`` with a gradient registered through ``PyFunc`` overrides; FGSM,
saliency maps, integrated gradients and Jacobians by rows and by ``tf.unstack`` on a
small CNN; and ``tf.test.compute_gradient(_error)``.

Left as is: ``tf.hessians`` of a function with a ``map_fn`` raises in both, TensorFlow a
``ValueError`` ("None values not supported", from its inner loop) and flowgraph the
``TypeError`` of a second-order loop gradient; error messages of ``RegisterGradient``
twice, of a tensor from another graph and of a ``grad_ys`` of the wrong shape carry the
same type with flowgraph's own words.

Classes of discrepancy found and fixed (one focused test each below):

* Ops TensorFlow registers no gradient for were declared non-differentiable, so
  ``tf.gradients`` gave ``None`` where TensorFlow raises ``LookupError`` "No gradient
  defined": weighted ``bincount`` (``Bincount``/``DenseBincount``/``SparseBincount``/
  ``RaggedBincount`` and the ``*CountSparseOutput`` ops), ``unique_with_counts``,
  ``setdiff1d``, ``random_poisson``, ``scatter_update``/``scatter_min``/``scatter_max``/
  ``scatter_nd_max``/``scatter_nd_min``, ``RandomGammaGrad``, ``CudnnRNNBackpropV2`` and
  the ``FakeQuant...Gradient`` ops (a second derivative of ``fake_quant`` was silently
  partial). They are now undeclared, as in TensorFlow: an op reached without an incoming
  gradient still passes none.
* A second-order gradient through a ``while_loop`` (and so ``map_fn``/``scan``/
  ``foldl``) silently returned a wrong value (6 for d2(x^3)/dx2 at 2); TensorFlow raises
  ``TypeError`` "Second-order gradient for while loops not supported", as flowgraph now
  does.
* The gradients a backward loop returns were named ``gradients/while_grad/Exit_<i>``;
  TensorFlow names a loop variable's ``gradients/while/Enter_<i>_grad/Exit`` and a loop
  invariant's (a captured weight, ``dynamic_rnn``'s kernel) its accumulator's Exit
  ``gradients/while/<op>/Enter_grad/b_acc_3``.
* ``tf.test.compute_gradient_error`` returned a Python ``float``; TensorFlow returns a
  NumPy ``float64`` whatever x's dtype.
* Second derivatives of fused ops: ``SparseSoftmaxCrossEntropyWithLogits`` ignored the
  gradient of its backprop output (``tf.hessians`` of a sparse cross entropy was all
  zeros); it now adds the softmax Jacobian term as TensorFlow does (``.../add``). The
  gradient of ``FusedBatchNormGrad*`` differentiated its rebuilt formula with
  ``tf.gradients`` back into the forward graph (dy depends on x), counting the dy path
  twice (|HVP| 202 for TensorFlow's and the finite differences' 0.214); it now
  differentiates fresh copies of its inputs, as TensorFlow's GradientTape does.
* A sparse gradient (``IndexedSlices``, from ``tf.gather``/``embedding_lookup`` of a
  computed tensor) reaching a gradient function that builds a fused op (``TanhGrad``,
  ``SigmoidGrad``, ``ReluGrad``, ``EluGrad``, ``SqrtGrad``, ...) raised ``TypeError``
  "Input 1 of op TanhGrad must be a Tensor, got IndexedSlices"; TensorFlow densifies it
  while creating the op, inside the op's scope and named after the input argument
  (``gradients/Tanh_grad/TanhGrad/dy``, an ``UnsortedSegmentSum``), as flowgraph now does.
* ``tf.custom_gradient`` and variables: a function creating a reference variable was
  accepted, where TensorFlow raises ``TypeError`` "All variables used by a function
  wrapped with @custom_gradient must be `ResourceVariable`s"; and a resource variable
  read inside the function (``ReadVariableOp``) was not found, so ``grad_fn`` got no
  ``variables`` and its variable gradients failed. Both now follow TensorFlow.
"""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf


@pytest.fixture(autouse=True)
def _fresh_graph():
    tf.reset_default_graph()
    yield
    tf.reset_default_graph()


def _close(a, b, atol=1e-4):
    np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64),
                               atol=atol, rtol=1e-4)


# -- programs ------------------------------------------------------------------------------

def test_maml_sinusoid_second_and_first_order():
    rng = np.random.RandomState(0)

    def task(n):
        a = rng.uniform(0.1, 5.0)
        p = rng.uniform(0, np.pi)
        x = rng.uniform(-5, 5, size=(n, 1)).astype(np.float32)
        return x, (a * np.sin(x + p)).astype(np.float32)

    tf.set_random_seed(1)
    xa, ya, xb, yb = (tf.placeholder(tf.float32, [None, 1], name=n)
                      for n in ("xa", "ya", "xb", "yb"))

    def forward(x, w):
        h = tf.nn.relu(tf.matmul(x, w["w1"]) + w["b1"])
        h = tf.nn.relu(tf.matmul(h, w["w2"]) + w["b2"])
        return tf.matmul(h, w["w3"]) + w["b3"]

    with tf.variable_scope("model"):
        tn = tf.truncated_normal_initializer(stddev=0.1)
        weights = {
            "w1": tf.get_variable("w1", [1, 16], initializer=tn),
            "b1": tf.get_variable("b1", [16], initializer=tf.zeros_initializer()),
            "w2": tf.get_variable("w2", [16, 16], initializer=tn),
            "b2": tf.get_variable("b2", [16], initializer=tf.zeros_initializer()),
            "w3": tf.get_variable("w3", [16, 1], initializer=tf.glorot_uniform_initializer()),
            "b3": tf.get_variable("b3", [1], initializer=tf.zeros_initializer()),
        }

    def meta(first_order):
        loss_a = tf.reduce_mean(tf.square(forward(xa, weights) - ya))
        keys = sorted(weights)
        grads = tf.gradients(loss_a, [weights[k] for k in keys])
        if first_order:
            grads = [tf.stop_gradient(g) for g in grads]
        fast = {k: weights[k] - 0.01 * g for k, g in zip(keys, grads)}
        for _ in range(2):
            inner = tf.reduce_mean(tf.square(forward(xa, fast) - ya))
            gs = tf.gradients(inner, [fast[k] for k in keys])
            if first_order:
                gs = [tf.stop_gradient(g) for g in gs]
            fast = {k: fast[k] - 0.01 * g for k, g in zip(keys, gs)}
        return loss_a, tf.reduce_mean(tf.square(forward(xb, fast) - yb)), grads

    la, lb, g0 = meta(False)
    assert [g.name for g in g0] == [
        "gradients/add_grad/Reshape:0", "gradients/add_1_grad/Reshape:0",
        "gradients/add_2_grad/Reshape:0", "gradients/MatMul_grad/MatMul_1:0",
        "gradients/MatMul_1_grad/MatMul_1:0", "gradients/MatMul_2_grad/MatMul_1:0"]
    opt = tf.train.AdamOptimizer(1e-3)
    gv = opt.compute_gradients(lb)
    assert [(g.name, v.name) for g, v in gv] == [
        ("gradients_3/AddN_32:0", "model/w1:0"), ("gradients_3/AddN_31:0", "model/b1:0"),
        ("gradients_3/AddN_30:0", "model/w2:0"), ("gradients_3/AddN_28:0", "model/b2:0"),
        ("gradients_3/AddN_27:0", "model/w3:0"), ("gradients_3/AddN_25:0", "model/b3:0")]
    train = opt.apply_gradients(gv)
    la2, lb2, _ = meta(True)
    mg = tf.gradients(lb2, list(weights.values()))
    assert mg[0].name == "gradients_7/MatMul_21_grad/MatMul_1:0"
    expected = [[3.67874, 4.21744], [0.22648, 4.29814], [1.48491, 0.28664]]
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        for want in expected:
            x1, y1 = task(10)
            x2, y2 = task(10)
            fd = {xa: x1, ya: y1, xb: x2, yb: y2}
            r = s.run([la, lb, la2, lb2, train], fd)
            _close(r[:4], want + want)


def test_hessians_and_hessian_vector_products():
    x = tf.placeholder(tf.float32, [3], name="x")
    a = tf.constant([[2., 1., 0.], [1., 3., 1.], [0., 1., 4.]])
    f = 0.5 * tf.reduce_sum(x * tf.linalg.matvec(a, x)) + tf.reduce_sum(tf.sin(x))
    h = tf.hessians(f, x)
    assert (len(h), h[0].name, h[0].shape.as_list(), h[0].op.type) == (
        1, "Reshape_1:0", [3, 3], "Reshape")
    w = tf.Variable(tf.ones([2, 2]), name="W")
    hw = tf.hessians(tf.reduce_sum(tf.pow(w, 3)), w, name="myhess")
    assert (hw[0].name, hw[0].shape.as_list()) == ("Reshape_3:0", [2, 2, 2, 2])
    v = tf.placeholder(tf.float32, [3], name="v")
    gr = tf.gradients(f, x)[0]
    hvp = tf.gradients(gr, x, grad_ys=v)[0]
    hvp2 = tf.gradients(tf.reduce_sum(gr * tf.stop_gradient(v)), x)[0]
    assert (gr.name, hvp.name, hvp2.name) == (
        "gradients_2/AddN:0", "gradients_3/AddN:0", "gradients_4/AddN:0")
    y = tf.placeholder(tf.float32, [2], name="y")
    with pytest.raises(ValueError, match="None values not supported"):
        tf.hessians(tf.reduce_sum(x) * tf.reduce_sum(y ** 2), [x, y])
    h3 = tf.hessians(tf.reduce_sum(x ** 2) * 2. + tf.reduce_sum(y ** 3), [x, y])
    assert [t.name for t in h3] == ["Reshape_6:0", "Reshape_8:0"]
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        fd = {x: [0.5, -1., 2.], v: [1., 0., -1.]}
        _close(s.run(h[0], fd), [[1.52057, 1., 0.], [1., 3.84147, 1.], [0., 1., 3.0907]])
        _close(s.run(hw[0]).reshape(4, 4), 6 * np.eye(4))
        _close(s.run([hvp, hvp2], fd), [[1.52057, 0., -3.0907]] * 2)
        hx, hy = s.run(h3, {x: [1, 2, 3], y: [1, -1]})
        _close(hx, 4 * np.eye(3))
        _close(hy, [[6., 0.], [0., -6.]])


def test_custom_gradient_with_and_without_variables():
    @tf.custom_gradient
    def log1pexp(x):
        e = tf.exp(x)

        def grad(dy):
            return dy * (1 - 1 / (1 + e))
        return tf.log(1 + e), grad

    @tf.custom_gradient
    def clip_grad_layer(x):
        def grad(dy):
            return tf.clip_by_norm(dy, 0.5)
        return tf.identity(x), grad

    x = tf.placeholder(tf.float32, [None], name="x")
    y = log1pexp(x)
    assert (y.name, y.op.type, y.shape.as_list()) == ("IdentityN:0", "IdentityN", [None])
    gy = tf.gradients(y, x)[0]
    assert gy.name == "gradients/IdentityN_grad/mul:0"
    z = clip_grad_layer(x * 3.0)
    gz = tf.gradients(tf.reduce_sum(z), x)[0]
    assert (z.name, gz.name) == ("IdentityN_1:0", "gradients_1/mul_grad/Mul:0")
    with tf.variable_scope("dense"):
        w = tf.get_variable("w", [3, 2], initializer=tf.constant_initializer(0.5))

    @tf.custom_gradient
    def dense_fn(inp):
        with tf.variable_scope("dense", reuse=True):
            ww = tf.get_variable("w")
        out = tf.matmul(inp, ww)

        def grad(dy, variables=None):
            gin = tf.matmul(dy, ww, transpose_b=True)
            return gin, [tf.matmul(inp, dy, transpose_a=True) * 2.0 for _ in variables]
        return out, grad

    inp = tf.placeholder(tf.float32, [2, 3], name="inp")
    out = dense_fn(inp)
    assert out.name == "IdentityN_2:0"
    loss = tf.reduce_sum(out ** 2)
    gi, gw = tf.gradients(loss, [inp, w])
    assert (gi.name, gw.name) == ("gradients_2/IdentityN_2_grad/MatMul:0",
                                  "gradients_2/IdentityN_2_grad/mul:0")
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        _close(s.run([y, gy], {x: [-100., 0., 1., 50.]}),
               [[0., 0.69315, 1.31326, 50.], [0., 0.5, 0.73106, 1.]])
        _close(s.run(gz, {x: [1., 2.]}), [1.06066, 1.06066])
        fd = {inp: [[1., 2., 3.], [0., -1., 1.]]}
        _close(s.run(gi, fd), [[6., 6., 6.], [0., 0., 0.]])
        _close(s.run(gw, fd), [[12., 12.], [24., 24.], [36., 36.]])
        losses = [s.run([train, loss], fd)[1] for _ in range(3)]
        _close(losses, [18.0, 383.76, 8237.52], atol=1e-2)
        _close(s.run(w), [[-20.764, -20.764], [-40.396, -40.396], [-64.924, -64.924]],
               atol=1e-3)


@tf.RegisterGradient("FlipGradientW13")
def _flip(op, grad):
    return [tf.negative(grad) * 0.5]


@tf.RegisterGradient("GuidedReluW13")
def _guided(op, grad):
    return tf.where(0. < grad, tf.raw_ops.ReluGrad(gradients=grad, features=op.outputs[0]),
                    tf.zeros_like(grad))


@tf.RegisterGradient("STRoundW13")
def _straight_through(op, grad):
    return grad


def test_gradient_override_map_reversal_guided_relu_straight_through():
    g = tf.get_default_graph()
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    with g.gradient_override_map({"Identity": "FlipGradientW13"}):
        rev = tf.identity(x, name="flip")
    assert rev.op.get_attr("_gradient_op_type") == b"FlipGradientW13"
    with g.gradient_override_map({"Relu": "GuidedReluW13"}):
        r = tf.nn.relu(x - 0.5)
    with g.gradient_override_map({"Round": "STRoundW13", "Sign": "STRoundW13"}):
        q = tf.round(x * 3.) / 3.
        sg = tf.sign(x)
    assert r.op.get_attr("_gradient_op_type") == b"GuidedReluW13"
    loss = (tf.reduce_sum(rev * tf.constant([1., -2., 3., 0.])) + tf.reduce_sum(r * -1.)
            + tf.reduce_sum(q * q) + tf.reduce_sum(sg))
    gx = tf.gradients(loss, x)[0]
    assert gx.name == "gradients/AddN_1:0"
    with pytest.raises(KeyError, match="Registering two gradient with name 'FlipGradientW13'"):
        tf.RegisterGradient("FlipGradientW13")(_flip)
    with tf.Session() as s:
        _close(s.run(gx, {x: [[0.2, 0.5, 0.6, -1.], [1.0, 0.0, 0.51, 2.]]}),
               [[1.16667, 3.33333, 0.83333, -1.], [2.5, 2., 0.83333, 5.]])

    # domain adaptation: the domain classifier's gradient reverses into the features
    tf.reset_default_graph()
    tf.set_random_seed(3)
    x = tf.placeholder(tf.float32, [None, 2])
    d = tf.placeholder(tf.float32, [None, 1])
    feat = tf.layers.dense(x, 4, activation=tf.nn.tanh, name="feat")
    with tf.get_default_graph().gradient_override_map({"Identity": "FlipGradientW13"}):
        fr = tf.identity(feat)
    logit = tf.layers.dense(fr, 1, name="dom")
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=d, logits=logit))
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        xs = np.random.RandomState(0).randn(8, 2).astype(np.float32)
        ds = (xs[:, :1] > 0).astype(np.float32)
        _close([s.run([loss, train], {x: xs, d: ds})[0] for _ in range(4)],
               [0.89037, 0.68652, 0.5522, 0.46933])
        _close(s.run(tf.trainable_variables()[0]),
               [[-0.816, 0.596, 0.7021, 0.7212], [-0.3458, -0.2459, 0.7905, -0.6482]])


def test_subgradients_at_ties_and_zero():
    x = tf.placeholder(tf.float32, [6], name="x")
    y = tf.placeholder(tf.float32, [6], name="y")
    nan = np.nan
    cases = {  # TensorFlow's [dx, dy] (None: no gradient)
        "abs": (tf.abs(x), [[0, 1, -1, 1, 1, -1], None]),
        "atan2": (tf.atan2(x, y), [[nan, .5, .3, .25, -.25, -1], [nan, -.5, .1, -.25, -.25, 1]]),
        "clip": (tf.clip_by_value(x, -1., 1.), [[1, 1, 1, 0, 0, 1], None]),
        "segmax": (tf.math.segment_max(x, [0, 0, 0, 1, 1, 1]), [[0, 1, 0, .5, .5, 0], None]),
        "div_no_nan": (tf.div_no_nan(y, x), [[0, -1, -3, -.5, .5, 2], [0, 1, -1, .5, .5, -2]]),
        "elu": (tf.nn.elu(x), [[1, 1, .3679, 1, 1, .6065], None]),
        "floor": (tf.floor(x), [None, None]),
        "huber": (tf.losses.huber_loss(y, x, delta=1.0),
                  [[0, 0, -.1667, 0, .1667, 0], [0, 0, .1667, 0, -.1667, 0]]),
        "leaky": (tf.nn.leaky_relu(x, 0.2), [[.2, 1, .2, 1, 1, .2], None]),
        "max": (tf.maximum(x, y), [[1, 1, 0, 1, 1, 1], [0, 0, 1, 0, 0, 0]]),
        "min": (tf.minimum(x, y), [[1, 1, 1, 1, 0, 1], [0, 0, 0, 0, 1, 0]]),
        "mod": (tf.floormod(x, 1.5), [[1] * 6, None]),
        "norm": (tf.norm(x), [[0, .3123, -.3123, .6247, .6247, -.1562], None]),
        "norm1": (tf.norm(x, ord=1), [[0, 1, -1, 1, 1, -1], None]),
        "norminf": (tf.norm(x, ord=np.inf), [[0, 0, 0, .5, .5, 0], None]),
        "pow": (tf.pow(x, 2.), [[0, 2, -2, 4, 4, -1], None]),
        "powxy": (tf.pow(tf.abs(x), y),
                  [[nan, 1, -3, 4, -.25, 1.4142], [0, 0, 0, 2.7726, .1733, -.9803]]),
        "relu": (tf.nn.relu(x), [[0, 1, 0, 1, 1, 0], None]),
        "relu6": (tf.nn.relu6(x), [[0, 1, 0, 1, 1, 0], None]),
        "rmax": (tf.reduce_max(x), [[0, 0, 0, .5, .5, 0], None]),
        "rmin": (tf.reduce_min(x), [[0, 0, 1, 0, 0, 0], None]),
        "round": (tf.round(x), [None, None]),
        "selu": (tf.nn.selu(x), [[1.0507, 1.0507, .6468, 1.0507, 1.0507, 1.0663], None]),
        "sign": (tf.sign(x), [[0] * 6, None]),
        "softplus": (tf.nn.softplus(x), [[.5, .7311, .2689, .8808, .8808, .3775], None]),
        "sort": (tf.sort(x), [[1] * 6, None]),
        "sqdiff": (tf.squared_difference(x, y), [[0, 0, -8, 0, 8, 0], [0, 0, 8, 0, -8, 0]]),
        "sqrt": (tf.sqrt(tf.abs(x)), [[nan, .5, -.5, .3536, .3536, -.7071], None]),
        "top_k": (tf.nn.top_k(x, 2).values, [[0, 0, 0, 1, 1, 0], None]),
        "where": (tf.where(x > 0, x, y), [[0, 1, 0, 1, 1, 0], [1, 0, 1, 0, 0, 1]]),
        "where_ge": (tf.where(x >= y, x * 2., y * 3.), [[2, 2, 0, 2, 2, 2], [0, 0, 3, 0, 0, 0]]),
        "xlogy": (tf.math.xlogy(x, tf.abs(y)),
                  [[0, 0, 1.0986, .6931, .6931, -.6931], [0, 1, -.3333, 1, -1, 1]]),
    }
    fd = {x: [0., 1., -1., 2., 2., -0.5], y: [0., 1., 3., 2., -2., -0.5]}
    grads = {k: tf.gradients(t, [x, y]) for k, (t, _) in cases.items()}
    z = tf.zeros([3])
    gn = tf.gradients(tf.norm(z), z)[0]
    with tf.Session() as s:
        for k, (_, want) in cases.items():
            for g, w in zip(grads[k], want):
                if w is None:
                    assert g is None, k
                else:
                    np.testing.assert_allclose(s.run(g, fd), w, atol=1e-4, err_msg=k)
        assert np.isnan(s.run(gn)).all()  # TF: d||z|| at z = 0 is nan
        _close(s.run(tf.gradients(tf.norm(z + 1e-12), z)[0]), [0.57735] * 3)


def test_control_flow_gradients_while_cond_map_scan():
    x = tf.placeholder(tf.float32, [], name="x")

    def body(i, acc):
        return i + 1, acc * x + tf.sin(acc)
    _, r = tf.while_loop(lambda i, a: i < 3, body, [tf.constant(0), tf.constant(1.0)])
    g = tf.gradients(r, x)[0]
    c = tf.cond(x > 1.0, lambda: tf.square(x) * 3., lambda: tf.exp(x))
    gc = tf.gradients(c, x)[0]
    gc2 = tf.gradients(gc, x)[0]
    assert (r.name, g.name) == ("while/Exit_1:0", "gradients/while/mul/Enter_grad/b_acc_3:0")
    assert (c.name, gc.name, gc2.name) == ("cond/Merge:0", "gradients_1/AddN:0",
                                           "gradients_2/AddN:0")
    v = tf.placeholder(tf.float32, [4], name="v")
    m = tf.map_fn(lambda e: e * e * x, v)
    gm = tf.gradients(tf.reduce_sum(m), [v, x])
    assert gm[1].name == "gradients_3/map/while/mul_1/Enter_grad/b_acc_3:0"
    sc = tf.scan(lambda a, e: a * 0.5 + e * x, v, initializer=tf.constant(0.0))
    gs = tf.gradients(tf.reduce_sum(sc), [v, x])
    assert [t.name for t in gs] == [
        "gradients_4/scan/TensorArrayUnstack/TensorArrayScatter/TensorArrayScatterV3_grad/"
        "TensorArrayGatherV3:0", "gradients_4/scan/while/mul_1/Enter_grad/b_acc_3:0"]
    gf = tf.gradients(tf.foldl(lambda a, e: a + e * e, v), v)[0]
    with tf.Session() as s:
        _close(s.run([r, g, c, gc, gc2], {x: 0.5}), [1.81956, 2.5265, 1.64872, 1.64872,
                                                     1.64872])
        _close(s.run([r, g, c, gc, gc2], {x: 2.0}), [11.65724, 17.45819, 12., 12., 6.])
        fd = {x: 1.5, v: [1., -2., 0.5, 3.]}
        dv, dx = s.run(gm, fd)
        _close(dv, [3.0, -6.0, 1.5, 9.0])
        _close(dx, 14.25)
        dv, dx = s.run(gs, fd)
        _close(dv, [2.8125, 2.625, 2.25, 1.5])
        _close(dx, 2.125)
        _close(s.run(gf, fd), [1., -4., 1., 6.])


def test_hand_written_rnn_dynamic_rnn_and_nested_loop_gradients():
    tf.set_random_seed(7)
    xs = tf.placeholder(tf.float32, [5, 2, 3], name="xs")
    w = tf.get_variable("W", [3, 4])
    u = tf.get_variable("U", [4, 4])
    ta = tf.TensorArray(tf.float32, size=5).unstack(xs)

    def step(t, h, o):
        h = tf.tanh(tf.matmul(ta.read(t), w) + tf.matmul(h, u))
        return t + 1, h, o.write(t, h)
    _, _, o = tf.while_loop(lambda t, *a: t < 5, step,
                            [0, tf.zeros([2, 4]), tf.TensorArray(tf.float32, size=5)])
    gw, gu, gx = tf.gradients(tf.reduce_sum(o.stack() ** 2), [w, u, xs])
    assert (gw.name, gu.name) == ("gradients/while/MatMul/Enter_grad/b_acc_3:0",
                                  "gradients/while/MatMul_1/Enter_grad/b_acc_3:0")
    assert gx.shape.as_list() == [5, 2, 3]
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        data = np.random.RandomState(0).randn(5, 2, 3).astype(np.float32)
        a, b, c = s.run([gw, gu, gx], {xs: data})
        _close(a, [[2.7642, -0.8356, 1.8437, 4.4305], [-0.5486, -1.23, 4.0157, -1.6045],
                   [-2.4333, -1.4489, 3.5973, -2.1358]])
        _close(b.sum(), 2.0403)
        _close(c[0], [[0.7108, 0.085, 0.1096], [0.57115, 0.3596, -0.3424]], atol=2e-4)

    tf.reset_default_graph()
    tf.set_random_seed(5)
    x = tf.placeholder(tf.float32, [2, 4, 3], name="x")
    out, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicLSTMCell(5), x, dtype=tf.float32)
    gv = tf.train.GradientDescentOptimizer(0.1).compute_gradients(tf.reduce_mean(out ** 2))
    assert [(g.name, v.name) for g, v in gv] == [
        ("gradients/rnn/while/basic_lstm_cell/MatMul/Enter_grad/b_acc_3:0",
         "rnn/basic_lstm_cell/kernel:0"),
        ("gradients/rnn/while/basic_lstm_cell/BiasAdd/Enter_grad/b_acc_3:0",
         "rnn/basic_lstm_cell/bias:0")]
    y = tf.placeholder(tf.float32, [], name="y")

    def outer(i, a):
        _, b = tf.while_loop(lambda j, b: j < 2, lambda j, b: (j + 1, b * y), [0, a])
        return i + 1, b + y
    _, r = tf.while_loop(lambda i, a: i < 2, outer, [0, tf.constant(1.0)])
    gy = tf.gradients(r, y)[0]
    assert gy.name == "gradients_1/while/while/mul/Enter_grad/b_acc_3:0"
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        gs = s.run([g for g, _ in gv], {x: np.random.RandomState(1).randn(2, 4, 3)})
        _close([np.abs(g).sum() for g in gs], [0.139, 0.0462])
        _close(s.run([r, gy], {y: 1.5}), [9.9375, 21.25])


def test_cond_third_order_and_sgd_loop_with_inner_gradients():
    x = tf.placeholder(tf.float32, [], name="x")
    c = tf.cond(x > 0., lambda: x ** 3, lambda: -x ** 2)
    gc = tf.gradients(c, x)[0]
    gc2 = tf.gradients(gc, x)[0]
    gc3 = tf.gradients(gc2, x)[0]
    assert (gc2.name, gc3.name) == ("gradients_1/AddN:0", "gradients_2/AddN:0")
    w0 = tf.Variable(0.5, name="w0")

    def body(i, w):
        gw = tf.gradients(tf.square(w * x - 1.0), w)[0]
        return i + 1, w - 0.1 * gw
    _, wt = tf.while_loop(lambda i, w: i < 4, body, [0, w0.read_value()])
    meta = tf.square(wt * 2.0 - 1.0)
    gmeta = tf.gradients(meta, w0)[0]
    assert (wt.name, gmeta.name) == ("while/Exit_1:0", "gradients_3/while/Enter_1_grad/Exit:0")
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        _close(s.run([gc, gc2, gc3], {x: 1.5}), [6.75, 9., 6.])
        _close(s.run([gc, gc2, gc3], {x: -1.5}), [3., -2., 0.])
        _close(s.run([wt, meta, gmeta], {x: 1.2}), [0.74767, 0.24536, 0.50919])


def test_stop_gradients_unconnected_integer_and_names():
    a = tf.constant(2.0, name="a")
    b = tf.constant(3.0, name="b")
    c = a * b
    d = c + a
    assert tf.gradients(d, [a, b], stop_gradients=[c])[1] is None
    gs = tf.gradients(d, [a, b], stop_gradients=[c])
    assert gs[0].name == "gradients_1/grad_ys_0:0" and gs[1] is None
    full = tf.gradients(d, [a, b])
    u = tf.constant(1.0, name="u")
    g_none = tf.gradients(d, [a, u])
    assert g_none[0].name == "gradients_3/AddN:0" and g_none[1] is None
    gz = tf.gradients(d, [a, u], unconnected_gradients="zero")
    assert [t.name for t in gz] == ["gradients_4/AddN:0", "zeros_like:0"]
    gz2 = tf.gradients(d, [a, u], unconnected_gradients=tf.UnconnectedGradients.ZERO)
    assert [t.name for t in gz2] == ["gradients_5/AddN:0", "zeros_like_1:0"]
    with pytest.raises(ValueError, match="Unknown value for unconnected_gradients: 'bogus'"):
        tf.gradients(d, [a, u], unconnected_gradients="bogus")
    n = tf.constant([1, 2, 3], name="ints")
    assert tf.gradients(tf.cast(n, tf.float32) * 2.0, n) == [None]
    assert tf.gradients(n * 3, n) == [None]
    assert tf.gradients(tf.argmax(tf.constant([1., 3., 2.]) * a), a) == [None]
    gn = tf.gradients(d, [a, b], name="mygrads")
    assert [t.name for t in gn] == ["mygrads/AddN:0", "mygrads/mul_grad/Mul_1:0"]
    gn2 = tf.gradients(d, [a, b], colocate_gradients_with_ops=True, gate_gradients=True,
                       aggregation_method=tf.AggregationMethod.EXPERIMENTAL_TREE)
    assert [t.name for t in gn2] == ["gradients_9/a_gradient_sum/AddN:0",
                                     "gradients_9/mul_grad/tuple/control_dependency_1:0"]
    gy = tf.gradients([d, c], [a], grad_ys=[tf.constant(2.0), None])
    assert [t.name for t in gy] == ["gradients_10/AddN_1:0"]
    with tf.Session() as s:
        assert s.run(gs[0]) == 1.0
        assert s.run(full) == [4.0, 2.0]
        assert s.run(gz) == [4.0, 0.0] and s.run(gy) == [11.0]
    with tf.Graph().as_default():
        q = tf.constant(1.0)
    with pytest.raises(ValueError, match="graph"):
        tf.gradients(d, q)
    x = tf.placeholder(tf.float32, [3])
    assert tf.gradients(tf.py_func(lambda t: t * 2, [x], tf.float32), x) == [None]
    assert tf.gradients(tf.random.shuffle(x), x) == [None]
    assert tf.gradients(tf.strings.length(tf.strings.as_string(a)), a) == [None]
    with pytest.raises(ValueError):
        tf.gradients(d, [a], grad_ys=[tf.constant([1.0, 2.0])])
    with pytest.raises(TypeError):
        tf.gradients(d, [a], grad_ys=[tf.constant(1, tf.int32)])


def test_py_func_with_registered_gradient():
    counter = [0]

    def py_func(func, inp, tout, name=None, grad=None):
        counter[0] += 1
        rnd_name = f"PyFuncGradW13_{counter[0]}"
        tf.RegisterGradient(rnd_name)(grad)
        with tf.get_default_graph().gradient_override_map({"PyFunc": rnd_name,
                                                           "PyFuncStateless": rnd_name}):
            return tf.py_func(func, inp, tout, stateful=True, name=name)

    def _my_square_grad(op, grad):
        return grad * 20 * op.inputs[0]

    def mysquare(x, name=None):
        with tf.name_scope(name, "MySquare", [x]) as name:
            return py_func(np.square, [x], [tf.float32], name=name, grad=_my_square_grad)[0]

    x = tf.constant([1., 2.])
    y = mysquare(x)
    assert (y.name, y.op.type, y.shape.ndims) == ("MySquare:0", "PyFunc", None)
    gr = tf.gradients(y, x)[0]
    assert gr.name == "gradients/MySquare_grad/mul_1:0"
    z = tf.py_func(lambda t: (t * 3).astype(np.float32), [x], tf.float32, stateful=False,
                   name="triple")
    assert (z.name, z.op.type) == ("triple:0", "PyFuncStateless")
    w = tf.Variable([0.5, -0.5], name="w")
    train = tf.train.GradientDescentOptimizer(0.01).minimize(tf.reduce_sum(mysquare(w * x)))
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        _close(s.run([y, gr]), [[1., 4.], [20., 40.]])
        for _ in range(3):
            s.run(train)
        _close(s.run(w), [0.256, -0.004])
    names = [op.name for op in tf.get_default_graph().get_operations() if "MySquare" in op.name]
    assert names[:6] == ["MySquare", "gradients/MySquare_grad/mul/y",
                         "gradients/MySquare_grad/mul", "gradients/MySquare_grad/mul_1",
                         "MySquare_1", "gradients_1/MySquare_1_grad/mul/y"]


def test_fgsm_saliency_integrated_gradients_and_jacobians():
    tf.set_random_seed(42)
    x = tf.placeholder(tf.float32, [None, 8, 8, 1], name="images")
    labels = tf.placeholder(tf.int64, [None], name="labels")

    def model(inp, reuse=None):
        with tf.variable_scope("cnn", reuse=reuse):
            h = tf.layers.conv2d(inp, 4, 3, padding="same", activation=tf.nn.relu, name="conv")
            h = tf.layers.flatten(tf.layers.max_pooling2d(h, 2, 2))
            return tf.layers.dense(h, 3, name="logits")
    logits = model(x)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels,
                                                                         logits=logits))
    train = tf.train.AdamOptimizer(0.01).minimize(loss)
    grad_x, = tf.gradients(loss, x)
    assert grad_x.name == "gradients_1/cnn/conv/Conv2D_grad/Conv2DBackpropInput:0"
    assert grad_x.shape.as_list() == [None, 8, 8, 1]
    x_adv = tf.stop_gradient(tf.clip_by_value(x + 0.1 * tf.sign(grad_x), 0., 1.))
    adv_logits = model(x_adv, reuse=True)
    sal = tf.reduce_max(tf.abs(tf.gradients(tf.reduce_max(logits, axis=1), x)[0]), axis=-1)
    assert (sal.name, sal.shape.as_list()) == ("Max_1:0", [None, 8, 8])
    alphas = tf.linspace(0.0, 1.0, 11)
    base = tf.zeros_like(x[:1])
    path = base + alphas[:, None, None, None] * (x[:1] - base)
    plog = model(path, reuse=True)
    pg = tf.gradients(tf.gather(plog, labels[0], axis=1), path)[0]
    assert pg.name == "gradients_3/cnn_2/conv/Conv2D_grad/Conv2DBackpropInput:0"
    ig = (x[:1] - base) * tf.reduce_mean((pg[:-1] + pg[1:]) / 2.0, axis=0, keepdims=True)
    jac_rows = tf.stack([tf.gradients(logits[0, k], x)[0][0] for k in range(3)])
    assert jac_rows.shape.as_list() == [3, 8, 8, 1]
    jac2 = tf.stack([tf.gradients(t, x)[0] for t in tf.unstack(logits, axis=1)], axis=1)
    assert (jac2.name, jac2.shape.as_list()) == ("stack_1:0", [None, 3, 8, 8, 1])
    rng = np.random.RandomState(0)
    fd = {x: rng.rand(6, 8, 8, 1).astype(np.float32), labels: [0, 1, 2, 0, 1, 2]}
    acc = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(adv_logits, 1), labels), tf.float32))
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        for _ in range(5):
            last = s.run([loss, train], fd)[0]
        _close(last, 1.03714)
        _close(s.run([tf.reduce_sum(tf.abs(x_adv - x)), acc], fd), [36.65193, 0.])
        _close(s.run(sal, fd)[0, :2], [
            [0.00764, 0.05687, 0.09218, 0.03217, 0.02567, 0.07365, 0.23316, 0.00897],
            [0.02805, 0.0309, 0.17412, 0.03344, 0.02522, 0.03956, 0.08638, 0.06541]])
        igv, lg = s.run([ig, plog], fd)
        _close([igv.sum(), lg[-1, 0] - lg[0, 0]], [0.1184, 0.11374])
        _close(s.run(jac_rows, fd).sum(axis=(1, 2, 3)), [0.06192, -0.00804, -0.06423])
        _close(s.run(jac2, fd)[1].sum(axis=(1, 2, 3)), [0.1382, -0.07265, 0.01995])


def test_compute_gradient_checker():
    np.random.seed(0)
    with tf.Session():
        x = tf.constant(np.array([[1., 2.], [3., 4.]]), dtype=tf.float64)
        y = tf.matmul(x, x) + tf.sin(x)
        err = tf.test.compute_gradient_error(x, [2, 2], y, [2, 2])
        assert err > 1e-8 and type(err).__name__ == "float64"
        th, nu = tf.test.compute_gradient(x, [2, 2], y, [2, 2])
        _close(th, [[1.7589, 0.6459, 0.4376, 0.], [0.4376, 2.114, 0., 0.4376],
                    [0.6459, 0., 2.2212, 0.6459], [0., 0.6459, 0.4376, 2.4116]])
        assert np.abs(th - nu).max() < 1e-6
        x32 = tf.constant([[0.5, -1.0, 2.0]], dtype=tf.float32)
        y32 = tf.nn.softmax(x32)
        assert tf.test.compute_gradient_error(x32, [1, 3], y32, [1, 3]) < 1e-3
        th, nu = tf.test.compute_gradient(x32, [1, 3], y32, [1, 3], delta=1e-2)
        assert (th.dtype, nu.dtype) == (np.float32, np.float32)
        _close(th, [[0.2031, -0.0836, -0.1195], [-0.0836, 0.2079, -0.1243],
                    [-0.1195, -0.1243, 0.2439]])
        v = tf.placeholder(tf.float64, [3])
        th, nu = tf.test.compute_gradient(v, [3], tf.reduce_prod(v), [],
                                          x_init_value=np.array([1., 2., 3.]))
        _close([th, nu], [[[6.], [3.], [2.]]] * 2)
        a = tf.constant([1., 2.], tf.float64)
        b = tf.constant([3., 4.], tf.float64)
        res = tf.test.compute_gradient([a, b], [[2], [2]], a * b, [2])
        assert isinstance(res, list) and len(res) == 2
        _close([t[0] for t in res], [[[3., 0.], [0., 4.]], [[1., 0.], [0., 2.]]])


# -- focused tests, one per fixed class ---------------------------------------------------

def test_ops_without_tensorflow_gradient_raise_lookup_error():
    x = tf.placeholder(tf.float32, [4], name="x")
    v = tf.Variable([1., 2., 3., 4.], name="v")
    raising = {  # TensorFlow: LookupError "No gradient defined for operation '<name>'"
        "bincount/DenseBincount": lambda: tf.math.bincount(tf.constant([0, 1, 1, 3]),
                                                           weights=x),
        "bincount_1/DenseBincount": lambda: tf.bincount(tf.constant([0, 1, 1, 3]), weights=x,
                                                        minlength=5),
        "UniqueWithCounts": lambda: tf.unique_with_counts(x)[0],
        "ListDiff": lambda: tf.setdiff1d(x, tf.constant([1.2]))[0],
        "random_poisson/RandomPoissonV2": lambda: tf.random.poisson(x, [2], seed=1),
        "ScatterUpdate": lambda: tf.scatter_update(v, [0], [x[0]]),
        "gradients_6/FakeQuantWithMinMaxArgs_grad/FakeQuantWithMinMaxArgsGradient": lambda:
            tf.gradients(tf.quantization.fake_quant_with_min_max_args(x * x), x)[0],
    }
    for name, fn in raising.items():
        y = fn()
        # (TensorFlow's message lacks the space before the quote)
        with pytest.raises(LookupError, match=f"No gradient defined for operation ?'{name}'"):
            tf.gradients(y, [x, v])
    # without an incoming gradient the op passes none, as in TensorFlow
    y = tf.cast(tf.math.bincount(tf.cast(x, tf.int32)), tf.float32) * x[0]
    gx, gv = tf.gradients(y, [x, v])
    assert gv is None
    assert tf.gradients(tf.cast(tf.is_nan(x), tf.float32), x) == [None]
    gamma = tf.random.gamma([2], x, seed=1)
    with tf.Session() as s:
        _close(s.run(gx, {x: [0.3, 1.2, 0.7, 2.5]}), [4., 0., 0., 0.])
        _close(s.run(tf.gradients(gamma, x)[0], {x: [0.3, 1.2, 0.7, 2.5]}),
               [2.4233, 1.2651, 0.7154, 1.0295])


def test_second_order_gradient_through_while_loop_raises_type_error():
    x = tf.placeholder(tf.float32, [], name="x")
    v = tf.placeholder(tf.float32, [3], name="v")
    _, r = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * x),
                         [0, tf.constant(1.0)])
    g = tf.gradients(r, x)[0]
    msg = "Second-order gradient for while loops not supported"
    with pytest.raises(TypeError, match=msg):
        tf.gradients(g, x)
    gm = tf.gradients(tf.reduce_sum(tf.map_fn(lambda e: tf.sin(e * x), v)), x)[0]
    with pytest.raises(TypeError, match=msg):
        tf.gradients(gm, x)
    sc = tf.scan(lambda a, e: a * x + e, v, initializer=tf.constant(1.0))
    gs = tf.gradients(sc[-1], x)[0]
    with pytest.raises(TypeError, match=msg):
        tf.gradients(gs, v)
    with tf.Session() as s:  # the first-order gradient still works
        _close(s.run([r, g], {x: 2.0}), [8.0, 12.0])


def test_while_loop_gradient_names_follow_tensorflow():
    x = tf.placeholder(tf.float32, [], name="x")
    w = tf.placeholder(tf.float32, [], name="w")
    _, a, b = tf.while_loop(lambda i, a, b: i < 2, lambda i, a, b: (i + 1, a * x, b + a),
                            [0, w, tf.constant(0.0)])
    ga = tf.gradients(a + b, [w, x])
    # a loop variable's gradient is its Enter's Exit, an invariant's its accumulator's
    assert [t.name for t in ga] == ["gradients/while/Enter_1_grad/Exit:0",
                                    "gradients/while/mul/Enter_grad/b_acc_3:0"]
    assert [t.op.type for t in ga] == ["Exit", "Exit"]
    gb = tf.gradients(b, x, name="second")
    assert gb[0].name == "second/while/mul/Enter_grad/b_acc_3:0"
    with tf.Session() as s:
        _close(s.run(ga + gb, {x: 3.0, w: 2.0}), [13.0, 14.0, 2.0])


def test_custom_gradient_variables_must_be_resource_variables():
    x = tf.placeholder(tf.float32, [4])

    @tf.custom_gradient
    def scale_with_var(t):
        v = tf.get_variable("scale_v", [], initializer=tf.constant_initializer(3.0))

        def grad(dy, variables=None):
            return dy * v, [tf.reduce_sum(dy * t) * 10.]
        return t * v, grad

    with pytest.raises(TypeError, match="must be `ResourceVariable`s"):
        scale_with_var(x)
    assert [v.name for v in tf.global_variables()] == ["scale_v:0"]  # TF keeps it too
    with tf.variable_scope("res", use_resource=True):
        sv = scale_with_var(x)
    gsv = tf.gradients(tf.reduce_sum(sv), [x, *tf.trainable_variables()[-1:]])
    assert [t.name for t in gsv] == ["gradients/res/IdentityN_grad/mul:0",
                                     "gradients/res/IdentityN_grad/mul_2:0"]
    assert [v.name for v in tf.trainable_variables()] == ["scale_v:0", "res/scale_v:0"]

    @tf.custom_gradient
    def no_variables_kwarg(t):
        v = tf.get_variable("bad_v", [], initializer=tf.constant_initializer(2.0),
                            use_resource=True)
        return t * v, lambda dy: dy * v
    with pytest.raises(TypeError, match="grad_fn must accept keyword argument 'variables'"):
        no_variables_kwarg(x)

    @tf.custom_gradient
    def two_in_two_out(a, b):
        def grad(da, db):
            return da * b + db, da * a - db
        return [a * b, a - b], grad

    a = tf.constant([1., 2.])
    b = tf.constant([3., -1.])
    o1, o2 = two_in_two_out(a, b)
    assert (o1.name, o2.name, len(o1.op.inputs)) == ("IdentityN:0", "IdentityN:1", 4)
    ga, gb = tf.gradients(o1 + 2 * o2, [a, b])
    assert (ga.name, gb.name) == ("gradients_1/IdentityN_grad/add:0",
                                  "gradients_1/IdentityN_grad/sub:0")

    @tf.custom_gradient
    def binarize(t):
        return tf.sign(t), lambda dy: dy * tf.cast(tf.abs(t) <= 1., tf.float32)
    bx = binarize(x)
    gbx = tf.gradients(tf.reduce_sum(bx * [1., 2., 3., 4.]), x)[0]
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        dx, dv = s.run(gsv, {x: [-2., -0.5, 0.5, 3.]})
        _close(dx, [3.] * 4)
        _close(dv, 10.)
        _close(s.run([ga, gb]), [[5., 1.], [-1., 0.]])
        _close(s.run([bx, gbx], {x: [-2., -0.5, 0.5, 3.]}), [[-1., -1., 1., 1.], [0., 2., 3., 0.]])


def test_second_order_through_sparse_cross_entropy_and_fused_batch_norm():
    logits = tf.placeholder(tf.float32, [2, 3], name="logits")
    sp = tf.reduce_sum(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=tf.constant([0, 2]), logits=logits) * [1., 2.])
    g1 = tf.gradients(sp, logits)[0]
    g2 = tf.gradients(g1 * [[1., 0., 2.], [0., 1., 1.]], logits)[0]
    assert g2.name == ("gradients_1/SparseSoftmaxCrossEntropyWithLogits/"
                       "SparseSoftmaxCrossEntropyWithLogits_grad/add:0")
    h = tf.hessians(sp, logits)[0]
    rng = np.random.RandomState(0)
    xv = rng.randn(2, 4, 4, 3)
    v = rng.randn(2, 4, 4, 3).astype(np.float32)
    x = tf.placeholder(tf.float32, [2, 4, 4, 3])
    scale = tf.constant([1., 2., 0.5])
    y = tf.nn.fused_batch_norm(x, scale, tf.constant([0., 1., -1.]), is_training=True)[0]
    g = tf.gradients(tf.reduce_sum(y * y), x)[0]
    hv, hs = tf.gradients(tf.reduce_sum(g * v), [x, scale])
    with tf.Session() as s:
        fd = {logits: [[1., 2., 3.], [0., 0., 0.]]}
        _close(s.run(g2, fd), [[-0.03786, -0.34764, 0.3855], [-0.44444, 0.22222, 0.22222]])
        _close(s.run(h, fd).reshape(6, 6)[:3, :3], [[0.0819, -0.022, -0.0599],
                                                     [-0.022, 0.1848, -0.1628],
                                                     [-0.0599, -0.1628, 0.2227]])
        _close(s.run(h, fd).reshape(6, 6)[3:, 3:], [[0.4444, -0.2222, -0.2222],
                                                     [-0.2222, 0.4444, -0.2222],
                                                     [-0.2222, -0.2222, 0.4444]])
        r, rs = s.run([hv, hs], {x: xv})
        _close(np.abs(r).sum(), 0.305, atol=2e-3)  # finite differences: 0.306
        _close(rs, [-0.01, -0.031, -0.001], atol=2e-3)


def test_sparse_gradient_into_fused_grad_ops_is_densified():
    x = tf.placeholder(tf.float32, [4, 2], name="x")
    y = tf.tanh(x * 2.)
    g = tf.gradients(tf.reduce_sum(tf.gather(y, [1, 3, 1])), x)[0]
    graph = tf.get_default_graph()
    assert g.name == "gradients/mul_grad/Mul:0"
    assert graph.get_operation_by_name("gradients/Tanh_grad/TanhGrad/dy").type == \
        "UnsortedSegmentSum"
    assert graph.get_operation_by_name("gradients/Tanh_grad/TanhGrad").inputs[1].name == \
        "gradients/Tanh_grad/TanhGrad/dy:0"
    w = tf.Variable(np.arange(12, dtype=np.float32).reshape(6, 2) / 10., name="W")
    e = tf.nn.embedding_lookup(tf.nn.relu(w - 0.3), [0, 2, 2])
    gw = tf.gradients(tf.reduce_sum(tf.sigmoid(e)), w)[0]
    assert gw.name == "gradients_1/Relu_grad/ReluGrad:0"
    others = [tf.gradients(tf.gather(f(x), 1), x)[0]
              for f in (tf.sigmoid, tf.sqrt, tf.nn.elu, tf.nn.selu, tf.nn.relu6, tf.math.rsqrt)]
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        _close(s.run(g, {x: np.ones((4, 2)) * 0.3}),
               [[0., 0.], [2.8463, 2.8463], [0., 0.], [1.4232, 1.4232]])
        _close(s.run(gw), [[0., 0.], [0., 0.], [0.4988, 0.495], [0., 0.], [0., 0.], [0., 0.]])
        vals = s.run(others, {x: np.full((4, 2), 0.25)})
        assert [float(v[1].sum()) for v in vals] == pytest.approx(
            [0.49227, 2.0, 2.0, 2.1014, 2.0, -8.0], abs=1e-3)
        assert all(float(np.abs(v[[0, 2, 3]]).sum()) == 0 for v in vals)


def test_compute_gradient_error_returns_numpy_float64():
    with tf.Session():
        for dtype in (tf.float16, tf.float32, tf.float64):
            x = tf.constant([0.5, 1.0], dtype)
            err = tf.test.compute_gradient_error(x, [2], x * x, [2])
            assert type(err) is np.float64, dtype
        a = tf.constant([1., 2.])
        err = tf.test.compute_gradient_error([a], [[2]], a * a, [2])
        assert type(err) is np.float64 and err < 1e-3
