"""Input-pipeline benchmark: a `tf.data` pipeline with a slow `map` feeding a training-like
step; prints one JSON object per configuration, one per line.

Usage::

    python benchmarks/bench_pipeline.py [--steps N] [--map-ms MS]

The pipeline decodes one record per element with a `map` that takes ``--map-ms`` of
latency (a `tf.py_func` that sleeps, as a file read or a remote decode would: the GIL
is released while it waits) and then does real NumPy work on the record; the consumer
step is real compute (``tanh`` of a 64x16384 matmul, about the same time).
Configurations, each timed over ``--steps`` steps after a warm-up:

* ``serial``: ``map`` with no parallel calls, no ``prefetch``: input and compute
  alternate, so a step costs input + compute.
* ``prefetch``: the same ``map`` plus ``prefetch(2)``: a background thread produces the
  next element while the step computes; a step costs max(input, compute).
* ``parallel_prefetch``: ``map(num_parallel_calls=4)`` + ``prefetch(2)``: several
  records are decoded at once.

Reported: steps/s for each, next to the same loop in plain Python (decode then compute,
serially: the reference for ``serial``), and the ideal rate with prefetch (one over the
slower of input and compute). ``ratio`` is flowgraph's steps/s over the plain serial loop.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np

import flowgraph as tf

RECORD = 4096


def _decode(seed: np.ndarray, map_ms: float) -> np.ndarray:
    """The slow part of the map: latency (GIL released), then a little real work."""
    time.sleep(map_ms / 1000.0)
    rng = np.random.default_rng(int(seed))
    return rng.standard_normal(RECORD).astype(np.float32)


def _pipeline(config: str, map_ms: float):
    ds = tf.data.Dataset.range(1 << 30)
    parallel = 4 if config == "parallel_prefetch" else None

    def decode(i):
        x = tf.py_func(lambda s: _decode(s, map_ms), [i], tf.float32, stateful=False)
        x.set_shape([RECORD])
        return x

    ds = ds.map(decode, num_parallel_calls=parallel)
    if config != "serial":
        ds = ds.prefetch(2)
    return ds.make_one_shot_iterator().get_next()


def _step(x, w):
    return tf.reduce_sum(tf.tanh(tf.matmul(tf.reshape(x, [64, 64]), w)))


def measure(config: str, steps: int, map_ms: float) -> float:
    """flowgraph steps/s for one configuration."""
    with tf.Graph().as_default():
        x = _pipeline(config, map_ms)
        w = tf.constant(np.random.default_rng(0).standard_normal((64, 16384)).astype(
            np.float32))
        y = _step(x, w)
        with tf.Session() as sess:
            for _ in range(5):
                sess.run(y)
            t0 = time.perf_counter()
            for _ in range(steps):
                sess.run(y)
            return steps / (time.perf_counter() - t0)


def plain_python(steps: int, map_ms: float) -> tuple[float, float, float]:
    """Steps/s of decode-then-compute in plain Python, and the time of each part (s)."""
    w = np.random.default_rng(0).standard_normal((64, 16384)).astype(np.float32)
    t_in = t_comp = 0.0
    for i in range(steps):
        t0 = time.perf_counter()
        x = _decode(np.int64(i), map_ms)
        t1 = time.perf_counter()
        float(np.tanh(x.reshape(64, 64) @ w).sum())
        t2 = time.perf_counter()
        t_in += t1 - t0
        t_comp += t2 - t1
    return steps / (t_in + t_comp), t_in / steps, t_comp / steps


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--map-ms", type=float, default=2.0)
    args = parser.parse_args(argv)
    ref, t_in, t_comp = plain_python(args.steps, args.map_ms)
    ideal = 1.0 / max(t_in, t_comp)
    for config in ("serial", "prefetch", "parallel_prefetch"):
        fg = measure(config, args.steps, args.map_ms)
        print(json.dumps({
            "name": f"pipeline_{config}", "unit": "steps/s", "flowgraph": round(fg, 1),
            "reference": round(ref, 1), "ratio": round(fg / ref, 3),
            "ideal_prefetch": round(ideal, 1),
            "target": "prefetch and parallel map beat serial" if config != "serial"
            else None,
            "notes": f"map: {args.map_ms} ms latency (py_func sleep) + decode of "
                     f"{RECORD} floats; step: tanh(64x64 @ 64x16384) summed; plain Python "
                     f"input {t_in * 1e3:.2f} ms + compute {t_comp * 1e3:.2f} ms per step; "
                     f"{args.steps} steps",
        }), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
