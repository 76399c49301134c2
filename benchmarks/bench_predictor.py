"""Single-example prediction latency: `Estimator.cached_predictor` vs `Estimator.predict`.

Trains the digits DNN of bench_estimator.py (64-128-64-10, custom model_fn), then times
one prediction of one example both ways, interleaved round by round in one process:

- reference: ``next(est.predict(numpy_input_fn(x[i:i+1])))``, which builds the graph,
  calls model_fn and restores the checkpoint on every call, as TF does;
- flowgraph: ``predictor.predict_one({"x": x[i]})`` on one cached predictor (which
  also checks model_dir for a newer checkpoint on every call).

Prints one JSON line (run.py's format). ``ratio`` is flowgraph / reference, so the
target "100x faster" is ``ratio <= 0.01``.

    python benchmarks/bench_predictor.py [--rounds R]
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np
from bench_estimator import BATCH, model_fn
from run import blas_info, emit

import flowgraph as tf
from flowgraph import estimators
from flowgraph.datasets import load_digits, train_test_split

perf_counter = time.perf_counter


def _trained_estimator(x, y, steps: int):
    config = estimators.RunConfig(model_dir=tempfile.mkdtemp(), tf_random_seed=1,
                                  log_step_count_steps=None)
    est = estimators.Estimator(model_fn, config=config)
    est.train(estimators.inputs.numpy_input_fn(x, y, batch_size=BATCH, num_epochs=None,
                                               shuffle=True), steps=steps)
    return est


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15,
                        help="interleaved rounds; the best round of each counts")
    parser.add_argument("--predict-calls", type=int, default=3,
                        help="Estimator.predict calls per round")
    parser.add_argument("--cached-calls", type=int, default=300,
                        help="cached predictor calls per round")
    parser.add_argument("--train-steps", type=int, default=500)
    args = parser.parse_args()
    logging.getLogger("tensorflow").setLevel(logging.WARNING)
    np.matmul(np.ones((64, 64)), np.ones((64, 64)))  # load BLAS before blas_info
    blas = blas_info()

    x, y = load_digits()
    x, xt, y, _ = train_test_split((x / 16.0).astype(np.float32), y)
    est = _trained_estimator(x, y, args.train_steps)
    predictor = est.cached_predictor(tf.io.FixedLenFeature([64], tf.float32))

    def reference(i):
        fn = estimators.inputs.numpy_input_fn(xt[i:i + 1], batch_size=1, shuffle=False)
        return next(est.predict(fn))["class"]

    def cached(i):
        return predictor.predict_one(xt[i])["class"]

    # the same answers, before timing anything
    for i in range(20):
        assert reference(i) == cached(i), i
    batch = estimators.inputs.numpy_input_fn(xt, batch_size=len(xt), shuffle=False)
    want = next(est.predict(batch, yield_single_examples=False))["class"]
    np.testing.assert_array_equal(predictor.predict(xt)["class"], want)

    n = len(xt)
    ref_rounds, fg_rounds, fg_calls = [], [], []
    gc.collect()
    for r in range(args.rounds):  # interleaved: machine load hits both alike
        t0 = perf_counter()
        for k in range(args.predict_calls):
            reference((r * args.predict_calls + k) % n)
        ref_rounds.append((perf_counter() - t0) / args.predict_calls)
        gc.disable()
        try:
            t0 = perf_counter()
            for k in range(args.cached_calls):
                t = perf_counter()
                cached(k % n)
                fg_calls.append(perf_counter() - t)
            fg_rounds.append((perf_counter() - t0) / args.cached_calls)
        finally:
            gc.enable()
    predictor.close()

    ref_us, fg_us = min(ref_rounds) * 1e6, min(fg_rounds) * 1e6
    speedup = ref_us / fg_us
    fg_calls.sort()
    emit("cached_predictor_latency", "us/call", fg_us, ref_us,
         "ratio <= 0.01 (>= 100x faster)", speedup >= 100,
         ["one digits example through a 64-128-64-10 DNN (custom model_fn): "
          "predictor.predict_one vs next(Estimator.predict(numpy_input_fn(1 row))); "
          f"best round of {args.rounds} interleaved rounds of {args.cached_calls} cached "
          f"and {args.predict_calls} predict calls; the cached call includes the "
          "stat of model_dir/checkpoint"], blas,
         speedup=round(speedup, 1),
         cached_p50_us=round(statistics.median(fg_calls) * 1e6, 1),
         cached_p99_us=round(fg_calls[int(0.99 * (len(fg_calls) - 1))] * 1e6, 1),
         predict_median_ms=round(statistics.median(ref_rounds) * 1e3, 2))


if __name__ == "__main__":
    main()
