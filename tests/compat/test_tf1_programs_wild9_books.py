"""TF1 programs "from the wild", round 9, area ``books``: the programs of the well-known
books and courses of 2016-2019, rewritten on small synthetic data. Géron's "Hands-On
Machine Learning" (1st edition) TensorFlow chapters (normal equation, gradient descent
by hand, autodiff and optimizers, mini-batches with placeholders, Saver and
``import_meta_graph``, FileWriter summaries, name scopes and shared variables, DNNs with
``tf.layers``, batch norm with UPDATE_OPS, gradient clipping, reusing and freezing
layers, ``tf.stop_gradient``, learning-rate schedules, l1/l2 penalties, dropout,
max-norm, CNNs, RNNs, tied-weight and variational autoencoders, policy gradients with
``tf.multinomial``); Stanford CS20si (huber loss with ``tf.cond``, word2vec with NCE and
a checkpointing ``global_step``, histogram summaries, style transfer training the input
image); the Udacity notMNIST course (explicit ``tf.Graph()`` and ``tf.Session(graph=)``,
dropout, ``exponential_decay``, the hand-written LSTM with saved state and
``clip_by_global_norm``); aymericdamien's TensorFlow-Examples (linear and logistic
regression, nearest neighbour, k-means by hand, static and bidirectional LSTMs, GAN and
DCGAN, TensorBoard advanced with gradient histograms read back with
``tf.train.summary_iterator``, save/restore, multi-GPU towers on ``/cpu:0``).

Each program was first run under TensorFlow 2.15's ``tf.compat.v1`` with the tf-oracle;
the values asserted here are the ones TensorFlow printed. Classes of discrepancy found:

* a ``tf.cond`` branch's ``Switch`` for an outside tensor comes right after the op that
  consumes it, as TensorFlow makes it (the huber loss's ``cond/Square``,
  ``cond/Square/Switch``), so ``get_operations()``, GraphDefs and the order gradients
  are built in are TensorFlow's;
* in nested conds an outside tensor passes the enclosing branch's switch first
  (``cond/cond/x/Switch``) and then the inner one's (``Switch_1``), and a tensor the
  enclosing branch already switched is reused (it was ``.../Switch/Switch``);
* a device *function* returning a string sets that string as written (``'/cpu:0'``,
  aymericdamien's ``assign_to_device``), only string scopes canonicalize.
"""

from __future__ import annotations

import pytest

import flowgraph as tf


@pytest.fixture(autouse=True)
def _fresh_graph():
    with tf.Graph().as_default() as g:
        yield g


# -- CS20si's huber loss: switches right after their consumers ----------------------------
def test_huber_loss_cond_orders_switches_after_their_consumers(_fresh_graph):
    x = tf.placeholder(tf.float32, name="X")
    y = tf.placeholder(tf.float32, name="Y")
    w = tf.get_variable("weights", initializer=tf.constant(0.0))
    b = tf.get_variable("bias", initializer=tf.constant(0.0))
    residual = tf.abs(y - (w * x + b))
    delta = 14.0
    loss = tf.cond(residual < delta, lambda: 0.5 * tf.square(residual),
                   lambda: delta * residual - 0.5 * tf.square(delta))
    got = [(o.name, o.type) for o in _fresh_graph.get_operations()
           if o.name.startswith("cond/")]
    assert got == [  # TF 2.15
        ("cond/Switch", "Switch"), ("cond/switch_t", "Identity"),
        ("cond/switch_f", "Identity"), ("cond/pred_id", "Identity"),
        ("cond/Square", "Square"), ("cond/Square/Switch", "Switch"),
        ("cond/mul/x", "Const"), ("cond/mul", "Mul"), ("cond/mul_1/x", "Const"),
        ("cond/mul_1", "Mul"), ("cond/mul_1/Switch", "Switch"), ("cond/Square_1/x", "Const"),
        ("cond/Square_1", "Square"), ("cond/mul_2/x", "Const"), ("cond/mul_2", "Mul"),
        ("cond/sub", "Sub"), ("cond/Merge", "Merge")]
    # the op ids follow the list (gradients walk ops in id order)
    ids = [o._id for o in _fresh_graph.get_operations()]
    assert ids == sorted(ids)
    opt = tf.train.GradientDescentOptimizer(0.001).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out = []
        for xv, yv in [(1.0, 70.0), (2.0, 10.0), (6.0, 45.0), (3.0, 62.0)]:
            _, lv = sess.run([opt, loss], {x: xv, y: yv})
            out.append(round(float(lv), 4))
        wb = [round(float(v), 5) for v in sess.run([w, b])]
    assert out == [882.0, 49.5809, 528.8156, 764.5161]
    assert wb == [0.15992, 0.05196]


# -- nested conds: the enclosing branch's switch first, reused when it exists -------------
def test_nested_cond_switches_outside_tensors_through_the_enclosing_branch(_fresh_graph):
    x = tf.placeholder(tf.float32, shape=(), name="X")
    w = tf.Variable(2.0, name="w")
    c = tf.cond(x > 0, lambda: tf.cond(x > 1, lambda: x * 2.0, lambda: tf.identity(w)),
                lambda: x)
    got = [(o.name, [i.name for i in o.inputs]) for o in _fresh_graph.get_operations()
           if o.name.startswith("cond/")]
    assert got == [  # TF 2.15
        ("cond/Switch", ["Greater:0", "Greater:0"]), ("cond/switch_t", ["cond/Switch:1"]),
        ("cond/switch_f", ["cond/Switch:0"]), ("cond/pred_id", ["Greater:0"]),
        ("cond/Greater/y", []),
        ("cond/Greater", ["cond/Greater/Switch:1", "cond/Greater/y:0"]),
        ("cond/Greater/Switch", ["X:0", "cond/pred_id:0"]),
        ("cond/cond/Switch", ["cond/Greater:0", "cond/Greater:0"]),
        ("cond/cond/switch_t", ["cond/cond/Switch:1"]),
        ("cond/cond/switch_f", ["cond/cond/Switch:0"]),
        ("cond/cond/pred_id", ["cond/Greater:0"]), ("cond/cond/mul/y", []),
        ("cond/cond/mul", ["cond/cond/mul/Switch:1", "cond/cond/mul/y:0"]),
        ("cond/cond/mul/Switch", ["cond/Greater/Switch:1", "cond/cond/pred_id:0"]),
        ("cond/cond/Identity", ["cond/cond/Identity/Switch_1:0"]),
        ("cond/cond/Identity/Switch", ["w/read:0", "cond/pred_id:0"]),
        ("cond/cond/Identity/Switch_1", ["cond/cond/Identity/Switch:1",
                                         "cond/cond/pred_id:0"]),
        ("cond/cond/Merge", ["cond/cond/Identity:0", "cond/cond/mul:0"]),
        ("cond/Switch_1", ["X:0", "cond/pred_id:0"]),
        ("cond/Merge", ["cond/Switch_1:0", "cond/cond/Merge:0"])]
    g = tf.gradients(c, [x, w])
    assert [t.name for t in g] == ["gradients/AddN:0",
                                   "gradients/cond/cond/Identity/Switch_grad/cond_grad:0"]
    with tf.Session() as sess:
        sess.run(w.initializer)
        vals = [[float(v) for v in sess.run([c, *g], {x: xv})] for xv in (3.0, 0.5, -1.0)]
    assert vals == [[6.0, 2.0, 0.0], [2.0, 0.0, 1.0], [-1.0, 1.0, 0.0]]


def test_three_nested_conds_chain_their_switches_as_tensorflow(_fresh_graph):
    x = tf.placeholder(tf.float32, shape=(), name="x")
    y = tf.placeholder(tf.float32, shape=(), name="y")

    def inner():
        return tf.cond(x > 2, lambda: tf.cond(x > 3, lambda: y * 3.0, lambda: y + 1.0),
                       lambda: y - 1.0)

    r = tf.cond(x > 1, inner, lambda: tf.constant(0.0))
    got = [(o.name, [i.name for i in o.inputs]) for o in _fresh_graph.get_operations()
           if o.type == "Switch" and "pred_id" not in o.name]
    assert got == [  # TF 2.15
        ("cond/Switch", ["Greater:0", "Greater:0"]),
        ("cond/Greater/Switch", ["x:0", "cond/pred_id:0"]),
        ("cond/cond/Switch", ["cond/Greater:0", "cond/Greater:0"]),
        ("cond/cond/Greater/Switch", ["cond/Greater/Switch:1", "cond/cond/pred_id:0"]),
        ("cond/cond/cond/Switch", ["cond/cond/Greater:0", "cond/cond/Greater:0"]),
        ("cond/cond/cond/mul/Switch", ["y:0", "cond/pred_id:0"]),
        ("cond/cond/cond/mul/Switch_1", ["cond/cond/cond/mul/Switch:1",
                                         "cond/cond/pred_id:0"]),
        ("cond/cond/cond/mul/Switch_2", ["cond/cond/cond/mul/Switch_1:1",
                                         "cond/cond/cond/pred_id:0"]),
        ("cond/cond/cond/add/Switch", ["cond/cond/cond/mul/Switch_1:1",
                                       "cond/cond/cond/pred_id:0"]),
        ("cond/cond/sub/Switch", ["cond/cond/cond/mul/Switch:1", "cond/cond/pred_id:0"])]
    with tf.Session() as sess:
        assert [float(sess.run(r, {x: v, y: 5.0})) for v in (0.0, 1.5, 2.5, 4.0)] == \
            [0.0, 4.0, 6.0, 15.0]
        assert float(sess.run(tf.gradients(r, [y])[0], {x: 4.0, y: 5.0})) == 3.0


# -- aymericdamien's multi-GPU towers: a device function's string as written --------------
def test_device_function_strings_are_kept_as_written(_fresh_graph):
    def f(d):
        return lambda op: d

    with tf.device(f("/cpu:0")):
        a = tf.constant(1.0, name="a")
        with tf.device("/job:w"):
            b = tf.constant(1.0, name="b")
    with tf.device("/job:ps"):
        with tf.device(f("cpu:0")):
            c = tf.constant(1.0, name="c")
    with tf.device(f("")):
        e = tf.constant(1.0, name="e")
    with tf.device(f(tf.DeviceSpec(job="w", device_type="CPU", device_index=0))):
        g = tf.constant(1.0, name="g")
    with tf.device(f("/CPU:0")):
        v = tf.Variable(1.0, name="v")
    with tf.device(lambda op: "/gpu:0" if op.type == "MatMul" else "/cpu:0"):
        m = tf.matmul([[1.0]], [[2.0]])
    # TF 2.15: the function's result is the device; an outer string scope merges it
    assert [t.device for t in (a, b, c, e, g, v, m)] == [
        "/cpu:0", "/cpu:0", "/job:ps/device:CPU:0", "", "/job:w/device:CPU:0", "/CPU:0",
        "/gpu:0"]
    assert v.initializer.device == "/CPU:0"
    nodes = {n.name: n.device for n in _fresh_graph.as_graph_def().node}
    assert [nodes["a"], nodes["c"], nodes["v"]] == ["/cpu:0", "/job:ps/device:CPU:0",
                                                    "/CPU:0"]
    with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
        sess.run(v.initializer)
        assert [float(t) for t in sess.run([a, v])] == [1.0, 1.0]
        assert sess.run(m).tolist() == [[2.0]]
        # TF 2.15: a session of this process has no /job:ps, soft placement or not
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="explicitly assigned to /job:ps/device:CPU:0"):
            sess.run(c)
