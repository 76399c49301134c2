"""Control-flow benchmarks; prints one JSON object per workload, one per line.

Usage::

    python benchmarks/bench_control_flow.py

* ``while_loop_trivial``: ``tf.while_loop(lambda i: i < n, lambda i: i + 1, [0])`` with
  n = 10,000, µs per iteration (one ``sess.run``), next to the same loop in plain Python
  (``while i < n: i += 1``) and the same loop on 0-d NumPy arrays (``np.add``/``np.less``,
  what flowgraph's kernels compute).
* ``while_loop_gather_overlap``: a loop of 8 iterations, each gathering 1M random int64
  indices from a 4M float32 table (``tf.gather``, latency-bound) and adding the sum to
  an accumulator. The iterations are independent but for the cheap accumulation, so with
  ``parallel_iterations=10`` their gathers can run at once. Reported: the speedup of
  ``parallel_iterations=10`` over ``=1``, next to the speedup of a 2-thread
  ``ThreadPoolExecutor`` over a serial loop doing the same ``np.take`` + sum calls.

* ``dynamic_rnn_dropout``: a 32-step ``dynamic_rnn`` of ``BasicLSTMCell(32)`` with a seeded
  ``DropoutWrapper`` (a random op per step, which the executor orders as TensorFlow does),
  ms per run, next to the same loop without the dropout.

Timing: best of several repeats, warm-up first, the garbage collector off while timing.
"""

from __future__ import annotations

import concurrent.futures
import gc
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import flowgraph as tf
from flowgraph.ops.control_flow_loops import while_loop


def best_time(fn, repeat: int, warmup: int = 1) -> float:
    for _ in range(warmup):
        fn()
    gc_was = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
    finally:
        if gc_was:
            gc.enable()
    return min(times)


def emit(**line) -> None:
    print(json.dumps({k: (float(f"{v:.4g}") if isinstance(v, float) else v)
                      for k, v in line.items()}), flush=True)


def bench_trivial(n: int = 10_000, repeat: int = 7) -> None:
    g = tf.Graph()
    with g.as_default():
        limit = tf.placeholder(tf.int32, [])
        out = while_loop(lambda i: i < limit, lambda i: i + 1, [tf.constant(0)])
        with tf.Session(graph=g) as sess:
            assert sess.run(out, {limit: n}) == n
            fg = best_time(lambda: sess.run(out, {limit: n}), repeat)

    def plain():
        i = 0
        while i < n:
            i += 1
        return i

    def numpy_0d():
        i = np.asarray(0, np.int32)
        one = np.asarray(1, np.int32)
        stop = np.asarray(n, np.int32)
        while np.less(i, stop, out=np.empty((), bool)):
            i = np.add(i, one, out=np.empty((), np.int32))
        return i

    py = best_time(plain, repeat)
    nd = best_time(numpy_0d, repeat)
    emit(name="while_loop_trivial", unit="us/iteration", flowgraph=fg / n * 1e6,
         reference=py / n * 1e6, reference_numpy_0d=nd / n * 1e6,
         ratio=fg / py, ratio_vs_numpy_0d=fg / nd,
         notes=f"{n} iterations of i + 1 in one sess.run; reference: the same loop in plain "
               "Python (ints) and on 0-d NumPy arrays; best of " f"{repeat}")


def bench_gather(iters: int = 8, table_size: int = 4 << 20, n_idx: int = 1 << 20,
                 repeat: int = 5) -> None:
    rng = np.random.default_rng(0)
    table_v = rng.standard_normal(table_size).astype(np.float32)
    idx_v = rng.integers(0, table_size, n_idx).astype(np.int64)
    g = tf.Graph()
    with g.as_default():
        table = tf.placeholder(tf.float32, [table_size])
        idx = tf.placeholder(tf.int64, [n_idx])

        def loop(par):
            def body(i, acc):
                return i + 1, acc + tf.reduce_sum(tf.gather(table, idx))

            return while_loop(lambda i, acc: i < iters, body, [tf.constant(0),
                                                               tf.constant(0.0)],
                              parallel_iterations=par)[1]

        out10, out1 = loop(10), loop(1)
        feed = {table: table_v, idx: idx_v}
        with tf.Session(graph=g) as sess:
            a, b = sess.run([out10, out1], feed)
            np.testing.assert_allclose(a, b, rtol=1e-4)
            t10 = best_time(lambda: sess.run(out10, feed), repeat)
            t1 = best_time(lambda: sess.run(out1, feed), repeat)

    def one():
        return np.take(table_v, idx_v).sum()

    def serial():
        return sum(one() for _ in range(iters))

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        def pooled():
            return sum(f.result() for f in [pool.submit(one) for _ in range(iters)])

        ts = best_time(serial, repeat)
        tp = best_time(pooled, repeat)
    fg_speedup, ref_speedup = t1 / t10, ts / tp
    emit(name="while_loop_gather_overlap", unit="speedup (x)", flowgraph=fg_speedup,
         reference=ref_speedup, ratio=fg_speedup / ref_speedup,
         seconds={"parallel_iterations=10": round(t10, 4), "parallel_iterations=1": round(t1, 4),
                  "numpy_serial": round(ts, 4), "numpy_pool2": round(tp, 4)},
         cpus=os.cpu_count(),
         notes=f"{iters} iterations, each tf.gather of {n_idx} random int64 indices from a "
               f"{table_size} float32 table, summed; flowgraph: parallel_iterations=10 vs 1 "
               "(default session: one pool thread per extra core); reference: "
               "ThreadPoolExecutor(2) vs serial np.take + sum; best of " f"{repeat}")


def bench_rnn_dropout(steps: int = 32, batch: int = 8, repeat: int = 200) -> None:
    rng = np.random.RandomState(0)
    x_v = rng.rand(batch, steps, 16).astype(np.float32)
    times = {}
    for dropout in (True, False):
        g = tf.Graph()
        with g.as_default():
            tf.set_random_seed(1)
            x = tf.placeholder(tf.float32, [None, steps, 16])
            cell = tf.nn.rnn_cell.BasicLSTMCell(32)
            if dropout:  # a seeded random op per step: ordered as TF's (FLAG_IN_ORDER)
                cell = tf.nn.rnn_cell.DropoutWrapper(cell, output_keep_prob=0.8, seed=3)
            out, _ = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
            with tf.Session(graph=g) as sess:
                sess.run(tf.global_variables_initializer())
                feed = {x: x_v}
                times[dropout] = best_time(lambda s=sess, o=out, f=feed: s.run(o, f), repeat,
                                           warmup=20)
    emit(name="dynamic_rnn_dropout", unit="ms/run", flowgraph=times[True] * 1e3,
         reference=times[False] * 1e3, ratio=times[True] / times[False],
         notes=f"dynamic_rnn of BasicLSTMCell(32) over {steps} steps, batch {batch}, with a "
               "seeded DropoutWrapper(output_keep_prob=0.8); reference: the same loop without "
               f"the dropout; best of {repeat}")


def main() -> int:
    bench_trivial()
    bench_gather()
    bench_rnn_dropout()
    return 0


if __name__ == "__main__":
    sys.exit(main())
