"""TF1 graph-function programs, sweep 16 (area ``defun``), run under TensorFlow 2.15 and
flowgraph with the tf-oracle; TensorFlow's printed values are inline.

The programs (2016-2019 style, ``from tensorflow.python.framework import function``): a
binarized network whose weights pass a straight-through-estimator ``Defun``
(``python_grad_func`` reading ``op.inputs``, ``shape_func``) trained by SGD; a DANN
gradient-reversal layer (``func_name``, two inputs, the call under a variable scope,
``tf.layers`` around it, Momentum, summaries, a Saver); a stable softplus with a
``Defun`` gradient (``grad_func``), nested Defuns, multiple outputs with ``out_names``,
a Defun capturing an outer variable, Adam; overloaded (untyped) Defuns with ``noinline``,
``func_name`` per dtype, calls in scopes and with ``name=``, the error cases; a
gradient-clipping identity called inside ``tf.while_loop`` and ``tf.cond`` and a Defun
creating its variable with ``get_variable`` (RMSProp); a Defun on a bound method, one
taking ``*args``, NumPy arguments, a ``python_grad_func`` returning ``None``, an embedding
lookup in a Defun, and the graph frozen and imported back; an LSTM cell's math in a
Defun with a ``shape_func`` unrolled over time (Adagrad), a ``tf.while_loop`` inside a
Defun and a string Defun; and ``tf.function`` called in
a TF1 graph (values, shapes, gradients, ``input_signature``).

How flowgraph differs (documented in `flowgraph/ops/defun.py`): TensorFlow adds a
``FunctionDef`` to the graph's library and calls it with one op whose type is the
function's name; flowgraph builds the body inline under the call's name scope and ends
in an ``IdentityN`` named as TensorFlow names the call, so values, gradients, static
shapes and output names match but the op type is ``IdentityN``, ``as_graph_def()`` has
no library and the 11-character hash suffix of a function's name is flowgraph's own
(TensorFlow fingerprints the serialized body: ``MyFunc_NPgpLzIw7BM``).

Left as is: a ``tf.function`` call's body ops are built inline too (TensorFlow keeps
them in the library as ``__inference_f_12``), and its ``IdentityN`` has no ``f`` attr.

Classes of discrepancy found and fixed (one focused test each below):

* ``tensorflow.python.framework.function`` did not exist: ``Defun`` (typed and
  overloaded), ``get_extra_args/inputs/vars`` and the defined function's ``name``,
  ``definition.signature``, ``grad_func_name``, ``declared_input_types``... are new
  (`flowgraph/ops/defun.py`).
* Call naming as TensorFlow's: ``<name>_<hash>`` (``Class.method`` for a bound method,
  ``func_name`` as is, ``<func_name>_f32``
  per dtype for overloaded functions, ``<name>_<gradname>_<hash>`` with a ``grad_func``),
  uniquified per call, in the current name scope, ``name=`` at the call.
* Static shapes: call outputs have unknown shapes unless ``shape_func`` sets them, the
  arguments seen in the body have unknown shapes, and the gradients of the inputs have
  the inputs' shapes (TensorFlow's gradients set them).
* Gradients: ``python_grad_func(op, *grads)`` sees the call's inputs and outputs, unused
  outputs get zero gradients; ``grad_func`` is called on the inputs and the output
  gradients; errors as TensorFlow's (argument count, dtypes, defaults, non-callables,
  returns that are not tensors).
* ``tf.function`` called in a graph returned its body's own tensors (``add:0``, the
  argument itself, a Python ``3``); TensorFlow's results are the outputs of one
  ``PartitionedCall`` (``StatefulPartitionedCall`` when the body has stateful ops) in
  ``nest.flatten`` order, numbers among them int32/float32 tensors
  (`flowgraph/compat/function_call.py`).
* ``str(tensor)`` of an unknown rank left the shape in (``shape=<unknown>``);
  TensorFlow prints ``Tensor("x:0", dtype=float32)``.
"""

from __future__ import annotations

import importlib
import os
import re

import numpy as np
import pytest

import flowgraph as tf

function = importlib.import_module("flowgraph.python.framework.function")

_HASHED = re.compile(r"^[A-Za-z]+_[A-Za-z0-9]{11}$")


# -- the programs --------------------------------------------------------------------------
def _ste_grad(op, grad):
    x = op.inputs[0]
    return grad * tf.cast(tf.less_equal(tf.abs(x), 1.0), tf.float32)


def test_binarized_net_with_straight_through_estimator():
    @function.Defun(tf.float32, python_grad_func=_ste_grad,
                    shape_func=lambda op: [op.inputs[0].get_shape()])
    def BinarizeSTE(x):
        return tf.sign(x)

    with tf.Graph().as_default():
        tf.set_random_seed(42)
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        y = tf.placeholder(tf.float32, [None, 1], name="y")
        with tf.variable_scope("bin_dense"):
            w = tf.get_variable("w", [4, 3], initializer=tf.random_uniform_initializer(-1, 1))
            wb = BinarizeSTE(w)
            h = tf.matmul(x, wb)
        assert wb.name.startswith("bin_dense/BinarizeSTE_") and wb.shape == (4, 3)
        assert h.name == "bin_dense/MatMul:0" and h.shape.as_list() == [None, 3]
        with tf.variable_scope("out"):
            v = tf.get_variable("v", [3, 1],
                                initializer=tf.random_normal_initializer(stddev=0.1))
            logits = tf.matmul(tf.nn.relu(h), v)
        loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y,
                                                                      logits=logits))
        opt = tf.train.GradientDescentOptimizer(0.1)
        gvs = opt.compute_gradients(loss)
        assert gvs[0][0].name == f"gradients/{wb.op.name}_grad/mul:0"
        assert gvs[1][0].name == "gradients/out/MatMul_grad/tuple/control_dependency_1:0"
        assert [g.shape.as_list() for g, _ in gvs] == [[4, 3], [3, 1]]
        train = opt.apply_gradients(gvs)
        rng = np.random.RandomState(0)
        xs = rng.randn(16, 4).astype(np.float32)
        ys = (xs.sum(1, keepdims=True) > 0).astype(np.float32)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            losses = [sess.run([loss, train], {x: xs, y: ys})[0] for _ in range(5)]
            np.testing.assert_allclose(losses, [0.818, 0.75793, 0.70726, 0.6647, 0.62888],
                                       atol=1e-5)
            np.testing.assert_allclose(sess.run(w), [[0.65396, 0.8311, -0.0113],
                                                     [0.04132, 0.42338, -0.0873],
                                                     [-0.76472, 0.21876, 0.68743],
                                                     [-0.88658, 0.20904, -0.84938]],
                                       atol=1e-5)
            assert sess.run(wb).tolist() == [[1, 1, -1], [1, 1, -1], [-1, 1, 1], [-1, 1, -1]]


def test_dann_gradient_reversal_layer(tmp_path):
    @function.Defun(tf.float32, tf.float32, func_name="FlipGradient",
                    python_grad_func=lambda op, grad: [tf.negative(grad) * op.inputs[1],
                                                       tf.zeros_like(op.inputs[1])])
    def flip_gradient(x, lam):
        return tf.identity(x)

    with tf.Graph().as_default():
        tf.set_random_seed(7)
        x = tf.placeholder(tf.float32, [None, 5], name="x")
        y_cls = tf.placeholder(tf.int32, [None], name="y_cls")
        y_dom = tf.placeholder(tf.float32, [None, 1], name="y_dom")
        lam = tf.placeholder_with_default(0.5, [], name="lambda")
        with tf.variable_scope("feature_extractor"):
            feat = tf.layers.dense(x, 8, activation=tf.nn.relu, name="fc1")
        with tf.variable_scope("label_predictor"):
            cls_logits = tf.layers.dense(feat, 3, name="fc")
        with tf.variable_scope("domain_predictor"):
            rev = flip_gradient(feat, lam)
            assert str(rev) == 'Tensor("domain_predictor/FlipGradient:0", dtype=float32)'
            rev.set_shape(feat.get_shape())
            dom_logits = tf.layers.dense(rev, 1, name="fc")
        cls_loss = tf.losses.sparse_softmax_cross_entropy(y_cls, cls_logits)
        dom_loss = tf.losses.sigmoid_cross_entropy(y_dom, dom_logits)
        tf.summary.scalar("cls_loss", cls_loss)
        merged = tf.summary.merge_all()
        train = tf.train.MomentumOptimizer(0.05, 0.9).minimize(
            cls_loss + dom_loss, global_step=tf.train.get_or_create_global_step())
        grads_feat = tf.gradients(dom_loss, feat)[0]
        grads_lam = tf.gradients(dom_loss, lam)[0]
        assert grads_feat.shape.as_list() == [None, 8]
        assert grads_lam.name == "gradients_2/domain_predictor/FlipGradient_grad/zeros_like:0"
        assert flip_gradient(feat * 2.0, tf.constant(1.0)).op.name == "FlipGradient"
        saver = tf.train.Saver()
        rng = np.random.RandomState(1)
        xs = rng.randn(12, 5).astype(np.float32)
        yc = rng.randint(0, 3, 12).astype(np.int32)
        yd = (rng.rand(12, 1) > 0.5).astype(np.float32)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got = [sess.run([cls_loss, dom_loss, merged, train],
                            {x: xs, y_cls: yc, y_dom: yd})[:2] for _ in range(4)]
            np.testing.assert_allclose(got, [[1.10284, 0.66894], [1.07242, 0.66765],
                                             [1.01833, 0.66536], [0.94909, 0.66241]],
                                       atol=1e-5)
            gf = sess.run(grads_feat, {x: xs, y_dom: yd, lam: 2.0})
            np.testing.assert_allclose(
                gf[:2], [[-0.02147, 0.01724, 0.01293, 0.03802, -0.03299, 0.03169, 0.01567,
                          -0.01465],
                         [-0.03679, 0.02954, 0.02215, 0.06514, -0.05652, 0.05429, 0.02684,
                          -0.0251]], atol=1e-5)
            assert sess.run(grads_lam, {x: xs, y_dom: yd}) == 0.0
            path = saver.save(sess, str(tmp_path / "dann"), global_step=4)
            assert os.path.basename(path) == "dann-4"


@function.Defun(tf.float32, tf.float32)
def SoftplusGrad(x, dy):
    return dy * tf.sigmoid(x)


@function.Defun(tf.float32, grad_func=SoftplusGrad)
def StableSoftplus(x):
    return tf.maximum(x, 0.0) + tf.log1p(tf.exp(-tf.abs(x)))


@function.Defun(tf.float32, tf.float32, out_names=["mean", "var"])
def Moments(x, axis_dummy):
    m = tf.reduce_mean(x, axis=0)
    v = tf.reduce_mean(tf.square(x - m), axis=0)
    return m, v + 0.0 * axis_dummy


@function.Defun(tf.float32)
def Block(x):
    h = StableSoftplus(x)
    m, v = Moments(h, tf.constant(0.0))
    return (h - m) * tf.rsqrt(v + 1e-3)


def test_grad_func_nested_defuns_multiple_outputs_and_captures():
    assert StableSoftplus.name.split("_")[:2] == ["StableSoftplus", "SoftplusGrad"]
    assert StableSoftplus.grad_func_name == SoftplusGrad.name
    sig = Moments.definition.signature
    assert [(a.name, a.type) for a in sig.input_arg] == [("x", 1), ("axis_dummy", 1)]
    assert [(a.name, a.type) for a in sig.output_arg] == [("mean", 1), ("var", 1)]
    assert StableSoftplus.declared_input_types == (tf.float32,)
    assert StableSoftplus.python_grad_func is None
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w = tf.Variable(tf.truncated_normal([3, 3], stddev=0.5), name="w")

        @function.Defun(tf.float32)
        def Proj(inp):
            return tf.matmul(inp, w)

        z = Proj(x)
        assert re.match(r'Tensor\("Proj_[A-Za-z0-9]{11}:0", dtype=float32\)$', str(z))
        out = Block(z)
        assert out.name.startswith("Block_") and out.shape.rank is None
        m, v = Moments(out, tf.constant(1.0))
        assert isinstance(Moments(out, tf.constant(2.0)), tuple) and m.dtype == tf.float32
        loss = tf.reduce_sum(tf.square(out - 1.0)) + tf.reduce_sum(v)
        gx, gw = tf.gradients(loss, [x, w])
        assert gx.shape.as_list() == [None, 3] and gw.shape == (3, 3)
        sp = StableSoftplus(tf.constant([-30.0, 0.0, 30.0]))
        train = tf.train.AdamOptimizer(0.01).minimize(loss)
        xs = np.random.RandomState(2).randn(6, 3).astype(np.float32)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_allclose(sess.run(w), [[-0.93236, 0.40132, -0.22161],
                                                     [0.06908, -0.21149, 0.17843],
                                                     [-0.27808, 0.29156, -0.20615]],
                                       atol=1e-5)
            np.testing.assert_allclose(sess.run(sp), [0.0, 0.69315, 30.0], atol=1e-5)
            losses = [sess.run([loss, train], {x: xs})[0] for _ in range(3)]
            np.testing.assert_allclose(losses, [38.557, 38.5193, 38.4763], atol=1e-4)
            np.testing.assert_allclose(sess.run(gx, {x: xs})[:2],
                                       [[-0.3295, 0.1785, -0.2372], [0.1824, -0.098, 0.133]],
                                       atol=1e-4)
            np.testing.assert_allclose(sess.run([m, v], {x: xs}),
                                       [[0, 0, 0], [0.9896, 0.978, 0.9504]], atol=1e-4)


def test_overloaded_defuns_scopes_and_errors():
    @function.Defun(noinline=True)
    def AddSquare(a, b):
        return a * a + b

    @function.Defun(func_name="Poly")
    def poly(x):
        return 3 * x * x + 2 * x + 1

    @function.Defun(tf.float32, tf.int32)
    def Repeat(x, n):
        return tf.tile(x, tf.reshape(n, [1]))

    with tf.Graph().as_default():
        a = tf.constant([1.0, 2.0])
        b = tf.constant([3, 4])
        r1, r2 = AddSquare(a, a), AddSquare(b, b)
        r3 = AddSquare(a, tf.constant([0.5, 0.5]))
        assert (r1.dtype, r2.dtype) == (tf.float32, tf.int32)
        assert r1.op.name != r3.op.name and r1.op.name.startswith("AddSquare_")
        p1, p2 = poly(a), poly(tf.constant(2, dtype=tf.int64))
        assert (p1.op.name, p2.op.name, p2.dtype) == ("Poly_f32", "Poly_i64", tf.int64)
        with tf.name_scope("layer"), tf.variable_scope("inner"):
            rp = Repeat(a, tf.constant(3))
        assert rp.op.name.startswith("layer/inner/Repeat_") and rp.shape.rank is None
        rn = Repeat(a, tf.constant(2), name="my_repeat")
        assert rn.name == "my_repeat:0"
        assert (function.get_extra_args(), function.get_extra_inputs(),
                function.get_extra_vars()) == ([], [], [])
        with pytest.raises(ValueError, match=r"Expected 2 arguments, got 1\."):
            Repeat(a)
        with pytest.raises(ValueError, match=r"Expected 2 arguments, got 3\."):
            Repeat(a, tf.constant(2), a)
        with pytest.raises(ValueError, match="Input 'x' passed int32 expected float"):
            Repeat(tf.constant([1, 2]), tf.constant(2))
        with pytest.raises(ValueError, match="Input 'n' passed float expected int32"):
            Repeat(a, tf.constant(2.0))
        with pytest.raises(ValueError, match=r"<lambda>_.* is not a valid"):
            function.Defun(tf.float32)(lambda x: x)(a)  # as TensorFlow: a lambda's name

        @function.Defun(tf.float32)
        def ConstOut(x):
            return 3.0, x

        c3, cx = ConstOut(a)
        with tf.Session() as sess:
            got = sess.run([r1, r2, r3, p1, p2, rp, rn, c3, cx])
        expected = [[2, 6], [12, 20], [1.5, 4.5], [6, 17], 17, [1, 2, 1, 2, 1, 2],
                    [1, 2, 1, 2], 3.0, [1, 2]]
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e)


def test_clip_gradient_defun_in_while_loop_and_cond_with_get_variable():
    @function.Defun(tf.float32, func_name="ClipGradNorm",
                    python_grad_func=lambda op, g: tf.clip_by_norm(g, 0.5))
    def clip_grad(x):
        return x

    with tf.Graph().as_default():
        tf.set_random_seed(11)
        x = tf.placeholder(tf.float32, [4, 3], name="x")
        W = tf.get_variable("rnn/W", [3, 3], initializer=tf.orthogonal_initializer(seed=1))

        def body(i, h):
            h_new = tf.tanh(tf.matmul(clip_grad(h), W) + x)
            h_new.set_shape([4, 3])
            return i + 1, h_new

        _, h_final = tf.while_loop(lambda i, h: i < 3, body,
                                   [tf.constant(0), tf.zeros([4, 3])])
        assert (h_final.name, h_final.shape) == ("while/Exit_1:0", (4, 3))
        use = tf.placeholder_with_default(True, [], name="use_clip")
        out = tf.cond(use, lambda: clip_grad(h_final * 3.0), lambda: h_final * 3.0)
        assert out.name == "cond/Merge:0" and out.shape.rank is None

        @function.Defun(tf.float32)
        def ScaleVar(t):
            s = tf.get_variable("scale", [], initializer=tf.constant_initializer(2.0))
            return t * s

        with tf.variable_scope("head"):
            y = ScaleVar(out)
        assert [v.op.name for v in tf.global_variables()] == ["rnn/W", "head/scale"]
        loss = tf.reduce_sum(tf.square(y))
        gW, gx = tf.gradients(loss, W)[0], tf.gradients(loss, x)[0]
        train = tf.train.RMSPropOptimizer(0.01).minimize(loss)
        xs = np.linspace(-1, 1, 12).reshape(4, 3).astype(np.float32)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_allclose(sess.run(gW, {x: xs}),
                                       [[0.90892, -0.24434, 0.13709],
                                        [-0.06644, 0.31196, -0.17798],
                                        [0.53677, -0.04241, 0.62664]], atol=1e-5)
            np.testing.assert_allclose(sess.run(gx, {x: xs, use: False}),
                                       [[-23.34044, 15.70832, -11.65263],
                                        [-28.02834, 19.36023, 11.56762],
                                        [-24.2285, 3.75723, 15.91428],
                                        [18.79973, -1.67329, 27.06712]], atol=2e-5)
            losses = [sess.run([loss, train], {x: xs})[0] for _ in range(3)]
            np.testing.assert_allclose(losses, [59.66336, 56.63706, 54.21836], atol=1e-4)


def test_tf_function_called_in_a_tf1_graph():
    @tf.function
    def scaled_sum(x, y):
        return tf.reduce_sum(x * 2.0 + y, axis=1)

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def normalize(x):
        return x / tf.norm(x, axis=1, keepdims=True)

    with tf.Graph().as_default():
        tf.set_random_seed(5)
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        s = scaled_sum(x, tf.ones([3]))
        n = normalize(x)
        w = tf.get_variable("w", [3, 2], initializer=tf.glorot_uniform_initializer())

        @tf.function
        def project(inp):
            return tf.nn.tanh(tf.matmul(inp, w))

        pr = project(n)
        assert [t.shape.as_list() for t in (s, n, pr)] == [[None], [None, 3], [None, 2]]
        loss = tf.reduce_mean(tf.square(pr)) + tf.reduce_mean(s) * 0.0
        gw = tf.gradients(loss, w)[0]
        assert gw.shape == (3, 2)
        train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
        xs = np.arange(12, dtype=np.float32).reshape(4, 3) - 5
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_allclose(sess.run(s, {x: xs}), [-21, -3, 15, 33])
            np.testing.assert_allclose(sess.run(n, {x: xs})[:2],
                                       [[-0.7071, -0.5657, -0.4243], [-0.8944, -0.4472, 0]],
                                       atol=1e-4)
            losses = [sess.run([loss, train], {x: xs})[0] for _ in range(3)]
            np.testing.assert_allclose(losses, [0.23183, 0.17233, 0.12112], atol=1e-5)
            np.testing.assert_allclose(sess.run(gw, {x: xs}),
                                       [[-0.04792, 0.09074], [0.01849, 0.11712],
                                        [0.08491, 0.14351]], atol=1e-5)
        with pytest.raises(TypeError):
            normalize(tf.zeros([2, 4]))


class Model:
    def __init__(self):
        self.scale = 2.0
        self.apply = function.Defun(tf.float32)(self._apply)

    def _apply(self, x):
        return x * self.scale


def test_method_varargs_numpy_inputs_none_grads_and_frozen_graph():
    @function.Defun(tf.float32, tf.float32, tf.float32)
    def Sum3(*args):
        return tf.add_n(list(args))

    @function.Defun(tf.float32, tf.float32,
                    python_grad_func=lambda op, g: [g * 2.0, None])
    def HalfGrad(x, y):
        return x + y

    @function.Defun(tf.float32, tf.int32)
    def Lookup(table, ids):
        return tf.reduce_sum(tf.nn.embedding_lookup(table, ids), axis=0)

    with tf.Graph().as_default() as g:
        m = Model()
        a = tf.constant([1.0, 2.0], name="a")
        applied = m.apply(a)
        assert applied.op.name.startswith("Model._apply_")
        s = Sum3(a, a, np.array([0.5, 0.5], np.float32))
        assert Sum3.definition.signature.input_arg[2].name == "arg2"
        b = tf.constant([3.0, 4.0], name="b")
        h = HalfGrad(a, b)
        ga, gb = tf.gradients(h, [a, b])
        assert ga.shape == (2,) and gb is None
        emb = tf.get_variable("emb", [5, 2], initializer=tf.constant_initializer(
            np.arange(10).reshape(5, 2)))
        ids = tf.placeholder(tf.int32, [None], name="ids")
        pooled = Lookup(emb, ids)
        tf.identity(pooled * 2.0, name="output")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got = sess.run([applied, s, h, ga])
            for v, e in zip(got, [[2, 4], [2.5, 4.5], [4, 6], [2, 2]]):
                np.testing.assert_allclose(v, e)
            np.testing.assert_allclose(sess.run(pooled, {ids: [1, 3, 3]}), [14, 17])
            frozen = tf.graph_util.convert_variables_to_constants(sess, g.as_graph_def(),
                                                                  ["output"])
    with tf.Graph().as_default():
        tf.import_graph_def(frozen, name="")
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run("output:0", {"ids:0": [0, 4]}), [16, 20])


def _lstm_shapes(op):
    b, n = op.inputs[0].get_shape()[0], op.inputs[1].get_shape()[1]
    return [tf.TensorShape([b, n]), tf.TensorShape([b, n])]


def test_fused_lstm_cell_defun_while_loop_and_string_defuns():
    @function.Defun(tf.float32, tf.float32, tf.float32, tf.float32, shape_func=_lstm_shapes)
    def LSTMCell(x, c, h, w):
        gates = tf.matmul(tf.concat([x, h], axis=1), w)
        i, f, o, j = tf.split(gates, 4, axis=1)
        new_c = tf.sigmoid(f + 1.0) * c + tf.sigmoid(i) * tf.tanh(j)
        return new_c, tf.sigmoid(o) * tf.tanh(new_c)

    @function.Defun(tf.float32, tf.int32)
    def Power(x, n):
        _, r = tf.while_loop(lambda i, r: i < n, lambda i, r: (i + 1, r * x),
                             [0, tf.ones_like(x)])
        return r

    @function.Defun(tf.string)
    def Shout(s):
        return tf.strings.join([tf.strings.upper(s), "!"])

    with tf.Graph().as_default():
        tf.set_random_seed(21)
        inputs = tf.placeholder(tf.float32, [2, 3, 3], name="inputs")
        w = tf.get_variable("lstm/kernel", [7, 16],
                            initializer=tf.glorot_uniform_initializer())
        c, h = tf.zeros([2, 4]), tf.zeros([2, 4])
        for t in range(3):
            c, h = LSTMCell(inputs[:, t, :], c, h, w)
        assert h.shape == (2, 4) and c.shape == (2, 4)
        loss = tf.reduce_mean(tf.square(h - 0.5))
        train = tf.train.AdagradOptimizer(0.5).minimize(loss)
        p = Power(tf.constant([2.0, 3.0]), tf.constant(3))
        sh = Shout(tf.constant(["hi", "tf"]))
        xs = np.linspace(-1, 1, 18).reshape(2, 3, 3).astype(np.float32)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            losses = [sess.run([loss, train], {inputs: xs})[0] for _ in range(3)]
            np.testing.assert_allclose(losses, [0.2958, 0.27239, 0.25364], atol=1e-5)
            np.testing.assert_allclose(sess.run(h, {inputs: xs}),
                                       [[0.0687, -0.1381, -0.0042, 0.23],
                                        [-0.0602, 0.2574, 0.3049, -0.258]], atol=1e-4)
            pv, sv = sess.run([p, sh])
        assert pv.tolist() == [8, 27] and sv.tolist() == [b"HI!", b"TF!"]


# -- focused tests, one per class ------------------------------------------------------------
def test_function_module_import_path():
    from flowgraph.python.framework import function as fn_module

    assert fn_module.Defun is function.Defun
    assert callable(fn_module.get_extra_args)
    with pytest.raises(AttributeError):
        fn_module.NoSuchThing  # noqa: B018


def test_call_names_hash_scope_and_repeats():
    @function.Defun(tf.float32, tf.float32)
    def MyFunc(x, y):
        return x + y, x * y

    @function.Defun(tf.float32, func_name="Exact")
    def exact(x):
        return x

    with tf.Graph().as_default():
        a = tf.constant([1.0, 2.0], name="a")
        s, p = MyFunc(a, a)
        assert _HASHED.match(MyFunc.name) and MyFunc.name.startswith("MyFunc_")
        assert (s.name, p.name) == (f"{MyFunc.name}:0", f"{MyFunc.name}:1")
        assert [t.name for t in s.op.inputs] == [f"{MyFunc.name}/add:0",
                                                 f"{MyFunc.name}/mul:0"]
        assert MyFunc(a, a)[0].op.name == f"{MyFunc.name}_1"
        with tf.name_scope("outer"):
            assert exact(a).op.name == "outer/Exact"
        assert exact(a).op.name == "Exact"
        assert exact(a, name="mine").name == "mine:0"
    # the name is a property of the definition: the same in another graph
    with tf.Graph().as_default():
        assert MyFunc(tf.constant(1.0), tf.constant(2.0))[0].op.name == MyFunc.name


def test_static_shapes_of_calls_bodies_and_shape_func():
    seen = []

    @function.Defun(tf.float32)
    def Look(x):
        seen.append(x.shape.rank)
        return x * 2.0

    @function.Defun(tf.float32, shape_func=lambda op: [op.inputs[0].shape, [2]])
    def Two(x):
        return x, tf.constant([1.0, 2.0])

    @function.Defun(tf.float32, shape_func=lambda op: [])
    def BadShapes(x):
        return x

    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        y = Look(x)
        assert seen == [None] and y.shape.rank is None
        u, v = Two(x)
        assert u.shape.as_list() == [None, 3] and v.shape.as_list() == [2]
        with pytest.raises(ValueError, match="produced 0 shapes, which does not match 1"):
            BadShapes(x)


def test_unknown_rank_tensor_prints_without_shape():
    with tf.Graph().as_default():
        t = tf.placeholder(tf.float32, name="free")
        k = tf.placeholder(tf.int32, [2, None], name="known")
        assert str(t) == 'Tensor("free:0", dtype=float32)'
        assert str(k) == 'Tensor("known:0", shape=(2, ?), dtype=int32)'


def test_input_gradients_have_the_inputs_static_shapes():
    @function.Defun(tf.float32, tf.float32)
    def Plain(x, y):
        return x * y

    @function.Defun(tf.float32, python_grad_func=lambda op, g: g * 3.0)
    def Py(x):
        return x * 5.0

    @function.Defun(tf.float32, tf.float32)
    def Grad(x, dy):
        return dy * 10.0 * x

    @function.Defun(tf.float32, grad_func=Grad)
    def Sq(x):
        return x * x

    with tf.Graph().as_default():
        a = tf.constant([1.0, -2.0])
        b = tf.placeholder(tf.float32, [None, 2])
        ga, gb = tf.gradients(Plain(a, b), [a, b])
        (gp,) = tf.gradients(Py(a), a)
        (gs,) = tf.gradients(Sq(a), a)
        assert [t.shape.as_list() for t in (ga, gb, gp, gs)] == [[2], [None, 2], [2], [2]]
        with tf.Session() as sess:
            got = sess.run([ga, gb, gp, gs], {b: [[1.0, 1.0]]})
        for g, e in zip(got, [[1, 1], [[1, -2]], [3, 3], [10, -20]]):
            np.testing.assert_allclose(g, e)


def test_python_grad_func_sees_the_call_and_zero_grads_for_unused_outputs():
    calls = []

    def grad(op, g_sum, g_prod):
        calls.append(([t.name for t in op.inputs], len(op.outputs), op.name))
        return g_sum + g_prod, g_sum * 2.0

    @function.Defun(tf.float32, tf.float32, python_grad_func=grad, func_name="SumProd")
    def SumProd(x, y):
        return x + y, x * y

    with tf.Graph().as_default():
        a, b = tf.constant(1.0, name="a"), tf.constant(2.0, name="b")
        s, _ = SumProd(a, b)
        ga, gb = tf.gradients(s, [a, b])
        assert calls == [(["a:0", "b:0"], 2, "SumProd")]
        assert tf.Session().run([ga, gb]) == [1.0, 2.0]


def test_errors_at_definition_and_call():
    with pytest.raises(ValueError, match="Functions with argument defaults"):
        function.Defun(tf.float32)(lambda x, y=2: x)
    with pytest.raises(ValueError, match=r"The tf\.function have 3 input types, while "
                                         r"the python function allows minimum 2"):
        function.Defun(tf.float32, tf.float32, tf.float32)(lambda x, y: x)
    with pytest.raises(ValueError, match="Function 3 must be a callable"):
        function.Defun(tf.float32)(3)

    @function.Defun(tf.float32)
    def Dict(x):
        return {"a": x}

    @function.Defun(tf.float32, python_grad_func=lambda op, g: [g, g])
    def TwoGrads(x):
        return x * 1.0

    with tf.Graph().as_default():
        a = tf.constant([1.0])
        with pytest.raises(TypeError, match="Dict"):
            Dict(a)
        with pytest.raises(ValueError, match="returned 2 gradients; the function has 1"):
            tf.gradients(TwoGrads(a), a)


def test_function_without_outputs_is_an_op_running_its_body():
    seen = []

    @function.Defun(tf.float32)
    def Log(x):
        tf.py_func(lambda v: seen.append(float(v.sum())) or np.float32(0), [x], tf.float32)

    with tf.Graph().as_default():
        op = Log(tf.constant([1.0, 2.0]))
        assert isinstance(op, tf.Operation) and op.name == Log.name and not op.outputs
        with tf.Session() as sess:
            assert sess.run(op) is None
            sess.run(op)
        assert seen == [3.0, 3.0]


def test_tf_function_results_are_partitioned_call_outputs():
    @tf.function
    def affine(x):
        return x * 2.0 + 1.0

    @tf.function
    def noisy(x):
        return x + tf.random.uniform([3], seed=1)

    @tf.function
    def nested(x):
        return {"b": (x + 1, 3), "a": x}

    @tf.function
    def nothing(x):
        return None

    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        v = tf.Variable(tf.ones([3]), name="v", use_resource=True)

        @tf.function
        def scaled(inp):
            return inp * v

        with tf.name_scope("blk"):
            names = [affine(x).name, noisy(x).name, scaled(x).name, affine(x).name]
        assert names == ["blk/PartitionedCall:0", "blk/StatefulPartitionedCall:0",
                         "blk/StatefulPartitionedCall_1:0", "blk/PartitionedCall_1:0"]
        out = nested(x)
        assert (out["a"].name, out["b"][0].name, out["b"][1].name) == (
            "PartitionedCall:0", "PartitionedCall:1", "PartitionedCall:2")
        assert (out["b"][1].dtype, out["b"][1].shape.as_list(), out["a"].shape.as_list()) == (
            tf.int32, [], [None, 3])
        assert nothing(x) is None
        (g,) = tf.gradients(affine(x), x)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got = sess.run([out["a"], out["b"][1], g], {x: [[1.0, 2.0, 3.0]]})
        assert got[0].tolist() == [[1, 2, 3]] and got[1] == 3 and got[2].tolist() == [[2, 2, 2]]
