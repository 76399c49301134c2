"""Where a small model's one-process step goes on a many-core machine (issues 14 and 17).

    python benchmarks/small_loop_threads.py [--steps N] [--profile]

On the 16-core device machine (session 19) the small MLP of `bench_distributed.py`
(64-128-64-10, batch 64, SGD, fed batches) took 385 µs a step in one process against
112 µs on this 2-core host, which makes every distributed ratio against it look better
than it is and suggests thread hand-offs. This script separates the suspects in one run:
the executor's threads (``ConfigProto.inter_op_parallelism_threads``: 1, 2, 4, or the
default, one per core) crossed with OpenBLAS's threads (1, 2, or its default, one per
core, set with threadpoolctl around the loop). Each combination is timed twice, best
kept, interleaved so that the host's drift hits all alike. One JSON line per
combination (``us_per_step``; ``vs_default``: against the all-defaults line of the same
run), then with ``--profile`` one line of the top functions by own time (cProfile) in
the default configuration. Two-core figures (this host, alone, session 21): the default
104-108 µs, every combination within 103-117 µs except 2 or 4 executor threads with
BLAS on one thread, 165-179 µs: every small product and the loss were handed to a
second executor thread (~50 µs each); `schedule.HAND_OFF_MIN_FLOPS` now keeps them
inline (``OPENBLAS_NUM_THREADS=1``: 151-161 -> 114-115 µs, docs/benchmarks.md "Session 21").
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_distributed import batches, build  # (imports flowgraph before NumPy)
from threadpoolctl import threadpool_limits

import flowgraph as tf


def step_us(inter: int, blas: int | None, steps: int, profile: bool = False):
    """Mean µs per training step of the small MLP with `inter` executor threads (0: the
    default) and `blas` BLAS threads (None: as loaded); with `profile`, also the
    cProfile statistics of the timed loop."""
    feeds = batches("small", 64)
    with tf.Graph().as_default():
        x, y, train, _, _ = build("small")
        config = tf.ConfigProto(inter_op_parallelism_threads=inter)
        with tf.Session(config=config) as sess, threadpool_limits(blas, user_api="blas"):
            sess.run(tf.global_variables_initializer())
            for i in range(max(steps // 10, 20)):
                sess.run(train, {x: feeds[i % 8][0], y: feeds[i % 8][1]})
            profiler = cProfile.Profile() if profile else None
            if profiler:
                profiler.enable()
            start = time.perf_counter()
            for i in range(steps):
                sess.run(train, {x: feeds[i % 8][0], y: feeds[i % 8][1]})
            elapsed = time.perf_counter() - start
            if profiler:
                profiler.disable()
    return elapsed / steps * 1e6, profiler


def top_functions(profiler, count: int = 15) -> list:
    """``[function, own µs per call-site total, calls]`` of the `count` largest own times."""
    stats = pstats.Stats(profiler)
    rows = []
    for (path, line, name), (_, calls, own, _, _) in stats.stats.items():
        rows.append((own, f"{os.path.basename(path)}:{line}:{name}", calls))
    rows.sort(reverse=True)
    return [[where, round(own * 1e6), calls] for own, where, calls in rows[:count]]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--profile", action="store_true",
                        help="also print the default configuration's top functions")
    args = parser.parse_args(argv)
    cores = os.cpu_count() or 1
    combos = [(0, None)] + [(inter, blas) for inter in (1, 2, 4) for blas in (1, 2, None)] \
        + [(0, 1), (0, 2)]
    best: dict = {}
    for _ in range(2):
        for combo in combos:
            us, _ = step_us(*combo, args.steps)
            best[combo] = min(best.get(combo, us), us)
    default = best[(0, None)]
    for (inter, blas), us in best.items():
        print(json.dumps({"name": "small_loop_threads", "inter_op": inter or cores,
                          "blas_threads": blas or "default", "cores": cores,
                          "us_per_step": round(us, 1),
                          "vs_default": round(us / default, 3)}), flush=True)
    if args.profile:
        _, profiler = step_us(0, None, args.steps, profile=True)
        print(json.dumps({"name": "small_loop_profile", "cores": cores,
                          "steps": args.steps, "top_own_us": top_functions(profiler)}),
              flush=True)


if __name__ == "__main__":
    main()
