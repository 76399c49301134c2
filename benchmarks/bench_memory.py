"""Memory budgets (issue 13): peak memory and run time, bounded vs unbounded, one process.

Usage::

    python benchmarks/bench_memory.py                    # both graphs at the issue's sizes
    python benchmarks/bench_memory.py late_consumer      # one of them
    python benchmarks/bench_memory.py --scale 0.125      # smaller temporaries

Graphs (`docs/memory.md` explains the budget):

* ``late_consumer``: 32 producers of a 32 MiB temporary whose consumers also need the
  end of a chain of 300 small ops. Target: at most two temporaries alive (<= 80 MiB of
  RSS above the baseline) at <= 1.1x the unbounded run time.
* ``branches64``: 64 independent branches, each making a 64 MiB temporary. Targets: with
  a budget of two temporaries, <= 1.1x the sequential bound (one temporary) in peak; with
  a budget of eight, >= 0.9x the unbounded throughput.

Each JSON line is one (graph, budget) pair: ``rss_peak_mb`` (VmHWM above the RSS before
the runs, VmHWM reset through ``/proc/self/clear_refs``; ``ru_maxrss`` where that is not
possible, then only the first, unbounded, figure is meaningful), ``allocator_peak_mb``
(the step stats' replayed peak of live tensor bytes), ``pool_mb`` (bytes the CPU
buffer pool held, which a budget also counts), ``largest_at_peak`` (the three largest
live tensors at the peak, from the step stats' memory report), ``seconds`` (median run
time) and, for bounded runs, ``time_ratio`` against the unbounded run of the same graph.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import rss

import flowgraph as tf

MiB = 1 << 20


def late_consumer(scale: float):
    n = max(16, int(8 * MiB * scale) // 16)  # x: float32[n]; each temporary 16 * n * 4
    x = tf.placeholder(tf.float32, [n])
    y = tf.reduce_sum(x[:16])
    for _ in range(300):
        y = tf.sin(y) + 1.0
    outs = [tf.reduce_sum(tf.tile(x + float(i), [16]) * y) for i in range(32)]
    temp = 16 * n * 4
    budgets = {"unbounded": 0, "two_temporaries": 2 * temp + 2 * n * 4 + MiB}
    return tf.add_n(outs), {x: np.random.RandomState(0).rand(n).astype(np.float32)}, \
        temp, budgets


def branches64(scale: float):
    n = max(16, int(16 * MiB * scale) // 64)  # each temporary 64 * n * 4
    x = tf.placeholder(tf.float32, [n])
    outs = [tf.reduce_sum(tf.tile(x * float(i), [64])) for i in range(64)]
    temp = 64 * n * 4
    extra = 2 * n * 4 + MiB
    budgets = {"unbounded": 0, "two_temporaries": 2 * temp + extra,
               "eight_temporaries": 8 * temp + extra}
    return tf.add_n(outs), {x: np.linspace(0, 1, n, dtype=np.float32)}, temp, budgets


GRAPHS = {"late_consumer": late_consumer, "branches64": branches64}


def measure(name: str, scale: float, repeat: int) -> None:
    with tf.Graph().as_default():
        fetch, feed, temp, budgets = GRAPHS[name](scale)
        base_time = None
        reference = None
        for label, budget in budgets.items():
            with tf.Session() as sess:
                opts = tf.RunOptions(memory_budget_bytes=budget)
                value = sess.run(fetch, feed, options=opts)  # compile, warm up
                if reference is None:
                    reference = value
                rss0 = rss.status_kb("VmRSS") or 0
                reset = rss.reset_peak_rss()
                times = []
                for _ in range(repeat):
                    t0 = time.perf_counter()
                    sess.run(fetch, feed, options=opts)
                    times.append(time.perf_counter() - t0)
                hwm = rss.status_kb("VmHWM") if reset else \
                    resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                md = tf.RunMetadata()
                traced = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE,
                                       memory_budget_bytes=budget)
                sess.run(fetch, feed, options=traced, run_metadata=md)
            seconds = statistics.median(times)
            base_time = base_time or seconds
            dev = max(md.step_stats.dev_stats, key=lambda d: d.peak_bytes)
            print(json.dumps({
                "name": f"memory_{name}", "budget": label, "budget_mb": budget / MiB,
                "temporary_mb": temp / MiB, "rss_peak_mb": round((hwm - rss0) / 1024, 1),
                "rss_reset": reset,
                "allocator_peak_mb": round(md.step_stats.peak_bytes() / MiB, 1),
                "pool_mb": round(dev.pool_bytes / MiB, 1),
                "largest_at_peak": [[t.name, round(t.bytes / MiB, 1)]
                                    for t in dev.peak_live_tensors[:3]],
                "seconds": round(seconds, 4), "time_ratio": round(seconds / base_time, 3),
                "same_result": bool(value == reference),
            }), flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("graphs", nargs="*", help=f"any of {', '.join(GRAPHS)} (default: all)")
    parser.add_argument("--scale", type=float, default=1.0,
                        help="temporaries' size relative to the issue's (32/64 MiB)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    unknown = [g for g in args.graphs if g not in GRAPHS]
    if unknown:
        parser.error(f"unknown graph(s) {unknown}; choose from {list(GRAPHS)}")
    for name in args.graphs or list(GRAPHS):
        measure(name, args.scale, args.repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
