"""One session, many Python threads: correct results, isolated errors, no deadlock."""

from __future__ import annotations

import threading

import numpy as np

import flowgraph as tf

THREADS = 8
RUNS = 500


def test_stress_mixed_graphs_on_one_session(testops):
    """8 threads x 500 runs over four graphs on one session; every 7th run fails.

        x ─> sin ─> * 2 ─────────────────> a
        x ─> matmul(w) ─> + x·1 ───────────> b        (expensive: may use pool threads)
        x ─> fail ─> count ────────────────> c        (fails for negative x)
        v ─> assign_add(1) (variable, locked) ─> counter
    """
    x = tf.placeholder(tf.float64, [2, 3], name="x")
    w = tf.constant(np.arange(12.0).reshape(3, 4))
    a = tf.sin(x) * 2.0
    b = tf.matmul(x, w) + 1.0
    c = testops.count(testops.fail(x))
    v = tf.Variable(0.0, dtype=tf.float64, name="counter")
    inc = tf.assign_add(v, 1.0)
    failures = [0] * THREADS
    bad = [None] * THREADS

    with tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=4)) as sess:
        sess.run(v.initializer)

        def worker(k: int) -> None:
            rng = np.random.default_rng(k)
            try:
                for i in range(RUNS):
                    val = rng.random((2, 3)) + 0.1
                    kind = (i + k) % 4
                    if i % 7 == 3:
                        try:
                            sess.run(c, {x: -val})
                        except tf.errors.InvalidArgumentError as e:
                            assert "negative" in str(e)
                            failures[k] += 1
                            continue
                        raise AssertionError("a failing run succeeded")
                    if kind == 0:
                        np.testing.assert_allclose(sess.run(a, {x: val}), np.sin(val) * 2)
                    elif kind == 1:
                        np.testing.assert_allclose(sess.run(b, {x: val}),
                                                   val @ np.arange(12.0).reshape(3, 4) + 1)
                    elif kind == 2:
                        out = sess.run({"a": a, "c": [c]}, {x: val})
                        np.testing.assert_allclose(out["c"][0], val + 1)
                        np.testing.assert_allclose(out["a"], np.sin(val) * 2)
                    else:
                        sess.run(inc)
            except BaseException as e:  # reported by the main thread
                bad[k] = e

        threads = [threading.Thread(target=worker, args=(k,), daemon=True)
                   for k in range(THREADS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert not any(t.is_alive() for t in threads), "deadlock: threads still running"
        errors = [e for e in bad if e is not None]
        assert not errors, errors[0]
        expected_incs = sum(
            1 for k in range(THREADS) for i in range(RUNS) if i % 7 != 3 and (i + k) % 4 == 3)
        assert sess.run(v) == expected_incs
    assert failures == [sum(1 for i in range(RUNS) if i % 7 == 3)] * THREADS


def test_concurrent_first_runs_compile_safely():
    x = tf.placeholder(tf.float32, [3])
    ys = [tf.sin(x) * float(i) for i in range(20)]
    out = [None] * 8
    with tf.Session() as sess:
        barrier = threading.Barrier(8)

        def worker(k):
            barrier.wait()
            out[k] = [float(sess.run(y, {x: [1.0, 1.0, 1.0]})[0]) for y in ys]

        threads = [threading.Thread(target=worker, args=(k,), daemon=True) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=30)
        assert not any(t.is_alive() for t in threads)
    expected = [float(np.float32(np.sin(np.float32(1.0))) * np.float32(i)) for i in range(20)]
    for row in out:
        np.testing.assert_allclose(row, expected, rtol=1e-6)
