"""Writes the TensorList / Case fixtures of tests/ops/test_raw_tlist.py with real
TensorFlow 2.15 in TF1 graph mode (run once:
``/tmp/tf-oracle-venv/bin/python make_fixture.py OUT_DIR``):

* ``lists.pb``: ``tf.function`` bodies holding a ``tf.TensorArray`` filled in a
  ``tf.while_loop`` and in an AutoGraph ``for`` over ``tf.range`` (TensorListReserve /
  SetItem / Stack / GetItem / FromTensor inside While bodies), a ``tf.switch_case``
  (Case) and the gradient of the loop by ``tf.gradients`` through the function call
  (the forward While accumulates into TensorLists with TensorListPushBack, the backward
  one pops them with TensorListPopBack);
* ``saved_model/``: a Keras-free SavedModel (``tf.Module``) of the same functions,
  exported by TF 2 and loaded back through ``tf.compat.v1.saved_model.loader``;
* ``stateful_case.pb``: a ``Case`` whose branches update a resource variable;
* ``for.pb``: a ``For`` op (``functional_ops.For``, which TF 2.15 still writes) over a
  ``Defun`` body;
* ``expected.npz``: TensorFlow's values for the feeds below (no pickle).
"""

import os
import sys

import numpy as np
import tensorflow as tf2
import tensorflow.compat.v1 as tf

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
FEED_X = np.array([[1.0, -2.0, 0.5], [0.25, 3.0, -1.0]], np.float32)
expected = {}


def squares(x):
    """Row k of the result: x[k] ** 2 + k, written through a TensorArray in a while loop."""
    n = tf.shape(x)[0]
    ta = tf.TensorArray(tf.float32, size=n, element_shape=[3])

    def body(i, acc):
        return i + 1, acc.write(i, x[i] * x[i] + tf.cast(i, tf.float32))

    _, ta = tf.while_loop(lambda i, _: i < n, body, [0, ta])
    return ta.stack()


def running(x):
    """Cumulative sums of the rows, by AutoGraph's for over tf.range."""
    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
    total = tf.zeros([3])
    for i in tf.range(tf.shape(x)[0]):
        total += tf.sin(x[i])
        ta = ta.write(i, total)
    return ta.stack(), ta.read(0)


def unstacked(x):
    """A TensorArray built from a tensor (TensorListFromTensor) and read back."""
    ta = tf.TensorArray(tf.float32, size=2).unstack(x)
    return ta.read(1) * 2.0 + ta.gather([0, 1])


def switch(index, x):
    return tf.switch_case(index, [lambda: x * 2.0, lambda: x - 1.0, lambda: tf.exp(x)])


tf.disable_v2_behavior()
g = tf.Graph()
with g.as_default():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    index = tf.placeholder(tf.int32, [], name="index")
    sq = tf.function(squares)(x)
    tf.identity(sq, name="squares")
    stacked, first = tf.function(running)(x)
    tf.identity(stacked, name="running")
    tf.identity(first, name="running_first")
    tf.identity(tf.function(unstacked)(x), name="unstacked")
    tf.identity(tf.function(switch)(index, x), name="switch")
    tf.identity(switch(index, x), name="switch_graph")
    (grad,) = tf.gradients(tf.reduce_sum(tf.sin(sq)) + tf.reduce_sum(stacked * stacked), [x])
    tf.identity(grad, name="grad")
    names = ["squares", "running", "running_first", "unstacked", "switch", "switch_graph",
             "grad"]
    with tf.Session() as sess:
        for k in (0, 1, 2, 7, -1):
            values = sess.run([n + ":0" for n in names], {x: FEED_X, index: k})
            for n, v in zip(names, values):
                if n.startswith("switch") or k == 0:
                    expected[f"{n}_{k}" if n.startswith("switch") else n] = v
    tf.io.write_graph(g.as_graph_def(), out, "lists.pb", as_text=False)
    ops = {n.op for n in g.as_graph_def().node}
    for fn in g.as_graph_def().library.function:
        ops |= {n.op for n in fn.node_def}
    print(sorted(o for o in ops if "List" in o or "Case" in o or "While" in o))

tf.enable_v2_behavior()


class Lists(tf2.Module):
    @tf2.function(input_signature=[tf2.TensorSpec([None, 3], tf2.float32)])
    def squares(self, x):
        return {"squares": squares(x), "running": running(x)[0]}

    @tf2.function(input_signature=[tf2.TensorSpec([], tf2.int32),
                                   tf2.TensorSpec([None, 3], tf2.float32)])
    def switch(self, index, x):
        return {"switch": switch(index, x)}


module = Lists()
tf2.saved_model.save(module, os.path.join(out, "saved_model"),
                     signatures={"serving_default": module.squares,
                                 "switch": module.switch})
# fingerprint.pb is not needed to load the model (and is not a GraphDef, which the
# protobuf engine test assumes of every committed .pb but saved_model.pb)
os.remove(os.path.join(out, "saved_model", "fingerprint.pb"))
got = module.squares(tf2.constant(FEED_X))
expected["sm_squares"] = got["squares"].numpy()
expected["sm_running"] = got["running"].numpy()
expected["sm_switch_2"] = module.switch(tf2.constant(2), tf2.constant(FEED_X))["switch"].numpy()
expected["feed_x"] = FEED_X

# A Case whose branches update a resource variable (a stateful Case: only the taken
# branch's update may run) and return nothing but a constant
g = tf.Graph()
with g.as_default():
    counter = tf.Variable(0.0, use_resource=True, name="counter")
    which = tf.placeholder(tf.int32, [], name="which")

    @tf.function
    def bump(k):
        def add(amount):
            def branch():
                counter.assign_add(amount)
                return tf.constant(amount)
            return branch
        return tf.switch_case(k, [add(1.0), add(10.0), add(100.0)])

    tf.identity(bump(which), name="bumped")
    init = tf.global_variables_initializer()
    with tf.Session() as sess:
        sess.run(init)
        steps = []
        for k in (1, 0, 5, 1):
            steps.append([sess.run("bumped:0", {which: k}), sess.run(counter.read_value())])
        expected["stateful_case"] = np.array(steps, np.float32)
        expected["stateful_init"] = np.array(init.name)
    tf.io.write_graph(g.as_graph_def(), out, "stateful_case.pb", as_text=False)
    print("stateful case ops:", sorted({n.op for fn in g.as_graph_def().library.function
                                        for n in fn.node_def} & {"Case", "StatelessCase"}))

# ``For`` (functional_ops.For, still written by TF 2.15's internal API) over a Defun body
from tensorflow.python.framework import function  # noqa: E402
from tensorflow.python.ops import functional_ops  # noqa: E402

tf.disable_v2_behavior()
g = tf.Graph()
with g.as_default():

    @function.Defun(tf.int32, tf.float32, tf.float32)
    def for_body(i, a, b):
        return a * 2.0 + tf.cast(i, tf.float32), b - a

    bounds = [tf.placeholder(tf.int32, [], name=n) for n in ("start", "limit", "delta")]
    outs = functional_ops.For(*bounds, [tf.constant(1.0), tf.constant([0.5, 1.0])], for_body)
    tf.identity(outs[0], name="for_a")
    tf.identity(outs[1], name="for_b")
    with tf.Session() as sess:
        for s, lim, d in [(0, 4, 1), (5, 0, -2), (3, 3, 1), (0, 5, 2)]:
            a, b = sess.run(["for_a:0", "for_b:0"], dict(zip(bounds, (s, lim, d))))
            expected[f"for_a_{s}_{lim}_{d}"], expected[f"for_b_{s}_{lim}_{d}"] = a, b
    tf.io.write_graph(g.as_graph_def(), out, "for.pb", as_text=False)
np.savez(os.path.join(out, "expected.npz"), **expected)
