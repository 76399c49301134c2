"""Writes the fixtures of tests/ops/test_raw_train.py with real TensorFlow 2.15 in TF1
graph mode (run once: ``/tmp/tf-oracle-venv/bin/python make_fixture.py OUT_DIR``):

* ``updates.pb``: a GraphDef training reference and resource variables with the update
  ops TF's public optimizers emit (``tf.train.ProximalGradientDescentOptimizer``,
  ``ProximalAdagradOptimizer``, ``AdagradDAOptimizer``, dense and sparse gradients, and
  Keras's SGD(momentum), Adam(amsgrad), Adamax and Adagrad) and the ones no public
  optimizer emits in TF 2.15 (``ApplyAddSign``, ``ApplyPowerSign``,
  ``ApplyAdagradV2``, ``ApplyAdaMax`` on reference variables) through ``tf.raw_ops``.
  Node ``init`` initializes, ``train`` takes one step, ``value_<k>`` reads variable k;
* ``keras_sgd.meta`` + ``model.ckpt-2.*``: a graph trained with
  ``tf.keras.optimizers.legacy.SGD(momentum=0.9, nesterov=True)`` on resource variables
  (its ``train_op`` collection), its non-sharded ``tf.train.Saver`` and the checkpoint
  after 2 steps;
* ``model_v1.ckpt``: a checkpoint in TF's V1 format (``Saver(write_version=V1)``: a
  ``SaveSlices`` op) of a variable ``w``, a variable ``p`` in two partitions and a
  string variable ``names``;
* ``expected.npz``: TensorFlow's values: ``update_<k>`` of ``value_<k>`` after 3 steps,
  ``keras_<name>`` of each variable after restoring the checkpoint and 3 more steps,
  ``keras_loss`` the loss after them, ``v1_w``/``v1_p`` the V1 checkpoint's (no pickle).
"""

import os
import sys

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
expected = {}
X = np.array([[1.0, 2.0, -1.0], [0.5, -0.5, 3.0], [-2.0, 0.25, 1.5]], np.float32)
W0 = np.array([[0.5, -1.0, 2.0], [0.1, 0.2, -0.3], [1.5, -0.5, 0.25]], np.float32)


def loss_of(w, sparse):
    """A loss whose gradient changes with w; sparse: rows 0, 2 and 0 again of w."""
    used = tf.gather(w, [0, 2, 0]) if sparse else w
    return tf.reduce_sum(used * used * X)


# -- updates.pb --------------------------------------------------------------------------
g = tf.Graph()
with g.as_default():
    gs = tf.train.get_or_create_global_step()
    steps, reads = [], []
    optimizers = [
        lambda: tf.train.ProximalGradientDescentOptimizer(0.1, 0.05, 0.02),
        lambda: tf.train.ProximalAdagradOptimizer(0.1, l1_regularization_strength=0.01,
                                                  l2_regularization_strength=0.02),
        lambda: tf.train.AdagradDAOptimizer(0.1, gs, l1_regularization_strength=0.01,
                                            l2_regularization_strength=0.02),
        lambda: tf.keras.optimizers.legacy.SGD(0.1, momentum=0.9),
        lambda: tf.keras.optimizers.legacy.Adam(0.05, amsgrad=True),
        lambda: tf.keras.optimizers.legacy.Adamax(0.05),
        lambda: tf.keras.optimizers.legacy.Adagrad(0.1),
    ]
    for k, make in enumerate(optimizers):
        keras = k >= 3
        for resource in ((True,) if keras else (False, True)):
            # (Keras's Adam and Adamax apply sparse gradients with scatter ops, no update op)
            for sparse in ((False,) if k in (4, 5) else (False, True)):
                with tf.variable_scope(f"opt{k}_{int(resource)}{int(sparse)}"):
                    w = tf.Variable(W0, use_resource=resource, name="w")
                    loss = loss_of(w, sparse)
                    opt = make()
                    grads = tf.gradients(loss, [w])
                    steps.append(opt.apply_gradients(list(zip(grads, [w]))))
                    reads.append(w)
    raw = [("AddSign", lambda v, m, gr: tf.raw_ops.ApplyAddSign(
                var=v, m=m, lr=0.1, alpha=1.0, sign_decay=0.9, beta=0.9, grad=gr)),
           ("PowerSign", lambda v, m, gr: tf.raw_ops.ApplyPowerSign(
                var=v, m=m, lr=0.1, logbase=float(np.e), sign_decay=0.9, beta=0.9, grad=gr)),
           ("AdagradV2", lambda v, m, gr: tf.raw_ops.ApplyAdagradV2(
                var=v, accum=m, lr=0.1, epsilon=1e-7, grad=gr))]
    for name, make in raw:
        with tf.variable_scope(f"raw_{name}"):
            w = tf.Variable(W0, name="w")
            m = tf.Variable(np.full_like(W0, 0.1), name="m")
            (gr,) = tf.gradients(loss_of(w, False), [w])
            steps.append(make(w, m, gr))
            reads.append(w)
    with tf.control_dependencies(steps):
        tf.assign_add(gs, 1, name="train")
    tf.group(tf.global_variables_initializer(), name="init")
    values = [tf.identity(w, name=f"value_{k}") for k, w in enumerate(reads)]
    with tf.Session() as sess:
        sess.run("init")
        for _ in range(3):
            sess.run("train")
        for k, v in enumerate(sess.run(values)):
            expected[f"update_{k}"] = v
    with open(os.path.join(out, "updates.pb"), "wb") as f:
        f.write(g.as_graph_def().SerializeToString())
    print("update ops:", sorted({o.type for o in g.get_operations() if "Apply" in o.type}))

# -- keras_sgd.meta + model.ckpt-2 -------------------------------------------------------
g = tf.Graph()
with g.as_default():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    w = tf.Variable(np.array([[0.3], [-0.2], [0.1]], np.float32), name="w", use_resource=True)
    b = tf.Variable([0.05], name="b", use_resource=True)
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y), name="loss")
    opt = tf.keras.optimizers.legacy.SGD(0.05, momentum=0.9, nesterov=True)
    train = opt.apply_gradients(list(zip(tf.gradients(loss, [w, b]), [w, b])))
    tf.add_to_collection("train_op", train)
    saver = tf.train.Saver()
    feed = {x: np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]], np.float32),
            y: np.array([[1.0], [-0.5]], np.float32)}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(2):
            sess.run(train, feed)
        saver.save(sess, os.path.join(out, "model.ckpt"), global_step=2,
                   write_meta_graph=False, write_state=False)
        tf.train.export_meta_graph(os.path.join(out, "keras_sgd.meta"),
                                   saver_def=saver.as_saver_def())
        for _ in range(3):
            sess.run(train, feed)
        for v in tf.global_variables():
            expected["keras_" + v.op.name.replace("/", "_")] = sess.run(v)
        expected["keras_loss"] = np.asarray(sess.run(loss, feed))
    print("keras ops:", sorted({o.type for o in g.get_operations() if "Apply" in o.type}))

# -- model_v1.ckpt: TF's V1 checkpoint format ------------------------------------------
g = tf.Graph()
with g.as_default():
    w = tf.Variable(np.array([[1.5, -2.0, 0.25]], np.float32), name="w")
    p = tf.get_variable("p", [4, 2], initializer=tf.random_uniform_initializer(seed=1),
                        partitioner=tf.fixed_size_partitioner(2))
    n = tf.Variable([b"ab", b"c"], name="names")
    saver = tf.train.Saver(write_version=tf.train.SaverDef.V1)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        saver.save(sess, os.path.join(out, "model_v1.ckpt"), write_meta_graph=False,
                   write_state=False)
        expected["v1_w"], expected["v1_p"] = sess.run([w, p.as_tensor()])
    print("v1 saver ops:", sorted({o.type for o in g.get_operations()
                                   if o.name.startswith("save/")}))

np.savez_compressed(os.path.join(out, "expected.npz"), **expected)
