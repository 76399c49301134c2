"""Gradients of resource variables read inside a `tf.while_loop`: the handle enters the
loop as an invariant and its reads' gradients accumulate on it, as TensorFlow does
(before, `tf.gradients` returned None for such a variable, so Keras RNNs and
`dynamic_rnn` with resource variables never trained them). TensorFlow 2.15's values
(tf-oracle) inline; a nested loop, where TensorFlow 2.15 itself fails, against the
closed form."""

from __future__ import annotations

import numpy as np

import flowgraph as tf


def test_reads_of_resource_and_reference_variables_in_a_loop():
    with tf.Graph().as_default():
        v = tf.get_variable("v", initializer=2.0, use_resource=True)
        r = tf.get_variable("r", initializer=2.0, use_resource=False)
        _, out = tf.while_loop(lambda i, a: i < 3,
                               lambda i, a: (i + 1, a * v.read_value() + r),
                               [tf.constant(0), tf.constant(1.0)])
        w = tf.get_variable("w", initializer=3.0, use_resource=True)
        _, out2 = tf.while_loop(lambda i, a: i < 2, lambda i, a: (i + 1, a * w),
                                [tf.constant(0), tf.constant(1.0)])
        grads = tf.gradients(out, [v, r]) + tf.gradients(out2, w)
        assert all(g is not None for g in grads)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert [float(x) for x in sess.run(grads)] == [22.0, 7.0, 6.0]


def test_gathered_rows_and_adam_steps_as_tensorflow():
    with tf.Graph().as_default():
        v = tf.get_variable("v", initializer=[1.5, 0.5], use_resource=True)
        emb = tf.get_variable("emb", initializer=[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]],
                              use_resource=True)
        _, out = tf.while_loop(lambda j, a: j < 3,
                               lambda j, a: (j + 1, a * v + tf.gather(emb, j)),
                               [tf.constant(0), tf.constant([1.0, 1.0])])
        loss = tf.reduce_sum(out)
        g_v, g_emb = tf.gradients(loss, [v, emb])
        train = tf.train.AdamOptimizer(0.1).minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got_v, got_emb = sess.run([g_v, g_emb])
            assert got_v.tolist() == [12.75, 6.75]
            # (TensorFlow returns these rows as IndexedSlices with the same sums)
            np.testing.assert_array_equal(got_emb, [[2.25, 0.25], [1.5, 0.5], [1.0, 1.0]])
            sess.run(train)
            sess.run(train)
            new_v, new_emb = sess.run([v, emb])
    np.testing.assert_allclose(new_v, [1.3004952669143677, 0.3005748391151428], rtol=1e-6)
    np.testing.assert_allclose(new_emb, [[0.8005949854850769, 1.8034443855285645],
                                         [2.8002395629882812, 3.8011879920959473],
                                         [4.8000006675720215, 5.8000006675720215]], rtol=1e-6)


def test_nested_loops_reading_a_variable_and_gathering_rows():
    with tf.Graph().as_default():
        v = tf.get_variable("v", initializer=[1.5, 0.5], use_resource=True)
        emb = tf.get_variable("emb", initializer=[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]],
                              use_resource=True)

        def outer(i, acc):
            _, a2 = tf.while_loop(lambda j, a: j < 2,
                                  lambda j, a: (j + 1, a * v + tf.gather(emb, j)),
                                  [tf.constant(0), acc])
            return i + 1, a2

        _, out = tf.while_loop(lambda i, a: i < 2, outer,
                               [tf.constant(0), tf.constant([1.0, 1.0])])
        g_v, g_emb = tf.gradients(tf.reduce_sum(out), [v, emb])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got_v, got_emb = sess.run([g_v, tf.convert_to_tensor(g_emb)])
    # out = ((((1 v + e0) v + e1) v + e0) v + e1) per column
    vv, e = np.array([1.5, 0.5]), np.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_allclose(got_v, 4 * vv**3 + 3 * e[0] * vv**2 + 2 * e[1] * vv + e[0])
    np.testing.assert_allclose(got_emb, [vv**3 + vv, vv**2 + 1, [0.0, 0.0]])
