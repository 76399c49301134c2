"""Writes the function-library GraphDefs of tests/framework/test_function_inline.py with
real TensorFlow 2.15 in TF1 graph mode (run once:
``/tmp/tf-oracle-venv/bin/python make_fixture.py OUT_DIR``): ``tf.function`` calls
(PartitionedCall), TF 2 control flow inside them (StatelessIf / If, StatelessWhile /
While), nested calls, list outputs and a resource variable updated inside a function
(StatefulPartitionedCall); ``expected.json`` holds TensorFlow's fetched values."""

import json
import os
import sys

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
feed_x = [[1.0, -3.0, 0.5], [2.0, 0.25, -1.0]]
expected = {}

g = tf.Graph()
with g.as_default():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    flag = tf.placeholder(tf.bool, [], name="flag")

    @tf.function
    def affine(a):
        return tf.nn.relu(a * 2.0 + 1.0)

    @tf.function
    def pieces(a):
        first, rest = tf.split(a, [1, 2], axis=1)
        return tf.reduce_sum(rest, axis=1), tf.squeeze(first, 1)

    @tf.function
    def branch(a, f):
        if f:
            return a * 10.0
        return a - 1.0

    @tf.function
    def loop(a):
        i = tf.constant(0)
        total = tf.zeros_like(a)
        while i < 4:
            total += affine(a) + tf.cast(i, tf.float32)
            i += 1
        return total

    @tf.function
    def outer(a):
        s, first = pieces(a)
        return affine(s[:, None]) + first[:, None]

    tf.identity(affine(x), name="affine")
    s, first = pieces(x)
    tf.identity(s, name="sums")
    tf.identity(first, name="firsts")
    tf.identity(branch(x, flag), name="branch")
    tf.identity(loop(x), name="loop")
    tf.identity(outer(x), name="outer")
    tf.identity(affine(affine(x)), name="twice")
    with tf.Session() as sess:
        for f in (True, False):
            names = ["affine", "sums", "firsts", "branch", "loop", "outer", "twice"]
            values = sess.run([n + ":0" for n in names], {x: feed_x, flag: f})
            expected[f"pure_{f}"] = {n: np.asarray(v).tolist() for n, v in zip(names, values)}
    tf.io.write_graph(g.as_graph_def(), out, "pure.pb", as_text=False)

g = tf.Graph()
with g.as_default():
    v = tf.Variable([1.0, 2.0], name="v", use_resource=True)
    delta = tf.placeholder(tf.float32, [2], name="delta")

    @tf.function
    def bump(d):
        v.assign_add(d)
        return v.read_value() * 2.0

    @tf.function
    def maybe_bump(d):
        if tf.reduce_sum(d) > 0:
            v.assign_add(d)
        return tf.constant(0)

    tf.identity(bump(delta), name="bumped")
    maybe = maybe_bump(delta)
    tf.identity(maybe, name="maybe")
    init = tf.global_variables_initializer()
    with tf.Session() as sess:
        sess.run(init)
        runs = [sess.run("bumped:0", {delta: [0.5, -1.0]}).tolist(),
                sess.run("bumped:0", {delta: [1.0, 1.0]}).tolist()]
        sess.run("maybe:0", {delta: [1.0, 1.0]})
        after_positive = sess.run(v).tolist()
        sess.run("maybe:0", {delta: [-5.0, -5.0]})
        after_negative = sess.run(v).tolist()
        expected["stateful"] = {"bumped": runs, "after_positive": after_positive,
                                "after_negative": after_negative,
                                "init": init.name}
    tf.io.write_graph(g.as_graph_def(), out, "stateful.pb", as_text=False)

with open(os.path.join(out, "expected.json"), "w") as f:
    json.dump(expected, f, indent=1, sort_keys=True)
    f.write("\n")
print(json.dumps(expected)[:400])
