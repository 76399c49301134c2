"""Time to accuracy: flowgraph's canned models (through the scikit-learn facade) against
scikit-learn's own estimators on the same data, in the same run.

    python benchmarks/bench_canned.py [--max-epochs N]

Workloads (fixed splits and seeds; inputs standardized on the training split):

| workload | target | flowgraph | scikit-learn |
| --- | --- | --- | --- |
| digits | accuracy 0.96 | DNNClassifier (128, 64), Adam 0.003 | MLPClassifier, same |
| breast_cancer | accuracy 0.96 | LinearClassifier (FTRL 0.2) | LogisticRegression, SGDClassifier |
| diabetes | R² 0.40 | DNNRegressor (16), LinearRegressor | MLPRegressor (16), Adam 0.01 |

Iterative models train one epoch at a time (`partial_fit`, batch 64 unless noted) and are
scored after each epoch; the clock counts training only. flowgraph's `partial_fit` keeps
its training graph and session between calls and writes its checkpoint when the model is
next read, so that write falls in `predict` (outside the clock); the first epoch includes
building the graph and the session. `LogisticRegression` is fitted once (its solver runs
to convergence). One JSON line per model: time and epochs to reach the target (null if
never reached within `--max-epochs`), the best and final metric, and the total training
time; with `--repeat N` each model is run N times (fresh, same seed) and the fastest run
is kept, which filters out other jobs' load on a shared machine.

Then one line per workload in benchmarks/run.py's schema: ``canned_<workload>``, seconds
to target, flowgraph's model against the fastest scikit-learn model that reached it.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
import warnings

import numpy as np
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits
from sklearn.linear_model import LogisticRegression, SGDClassifier
from sklearn.metrics import accuracy_score, r2_score
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier, MLPRegressor
from sklearn.preprocessing import StandardScaler

from flowgraph.estimators import sklearn as fs


def _best(run, repeat):
    """The run (a dict) reaching the target fastest of `repeat` runs of `run()`."""
    rows = [run() for _ in range(repeat)]
    return min(rows, key=lambda r: (r["time_to_target_s"] is None,
                                    r["time_to_target_s"] or 0.0, r["train_time_s"]))


def _split(X, y, test_size, seed, stratify=None, scale=True):
    x_tr, x_te, y_tr, y_te = train_test_split(X, y, test_size=test_size, random_state=seed,
                                              stratify=stratify)
    if scale:
        scaler = StandardScaler().fit(x_tr)
        x_tr, x_te = scaler.transform(x_tr), scaler.transform(x_te)
    return x_tr, x_te, y_tr, y_te


def _epochs(workload, library, name, model, data, metric, target, max_epochs, fit_kwargs):
    x_tr, x_te, y_tr, y_te = data
    train_time, reached, best, value = 0.0, None, -np.inf, None
    for epoch in range(1, max_epochs + 1):
        t0 = time.perf_counter()
        model.partial_fit(x_tr, y_tr, **(fit_kwargs if epoch == 1 else {}))
        train_time += time.perf_counter() - t0
        value = float(metric(y_te, model.predict(x_te)))
        best = max(best, value)
        if reached is None and value >= target:
            reached = (train_time, epoch)
    return {"workload": workload, "library": library, "model": name, "target": target,
            "time_to_target_s": None if reached is None else round(reached[0], 3),
            "epochs_to_target": None if reached is None else reached[1],
            "best": round(best, 4), "final": round(value, 4), "epochs": max_epochs,
            "train_time_s": round(train_time, 3)}


def _one_fit(workload, library, name, model, data, metric, target):
    x_tr, x_te, y_tr, y_te = data
    t0 = time.perf_counter()
    model.fit(x_tr, y_tr)
    elapsed = time.perf_counter() - t0
    value = float(metric(y_te, model.predict(x_te)))
    return {"workload": workload, "library": library, "model": name, "target": target,
            "time_to_target_s": round(elapsed, 3) if value >= target else None,
            "epochs_to_target": None, "best": round(value, 4), "final": round(value, 4),
            "epochs": None, "train_time_s": round(elapsed, 3)}


class _ScaledTarget:
    """Fit on standardized targets, predict in the original units (both libraries)."""

    def __init__(self, model, mean, std):
        self.model, self.mean, self.std = model, mean, std

    def partial_fit(self, X, y, **kw):
        self.model.partial_fit(X, (y - self.mean) / self.std, **kw)

    def predict(self, X):
        return self.model.predict(X) * self.std + self.mean


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-epochs", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs per model; the fastest to the target is reported")
    args = parser.parse_args(argv)
    logging.getLogger("tensorflow").setLevel(logging.WARNING)
    warnings.filterwarnings("ignore")
    n = args.max_epochs
    rows = _Rows(args.repeat)

    X, y = load_digits(return_X_y=True)
    digits = _split(X / 16.0, y, 0.25, 0, scale=False)
    classes = {"classes": np.arange(10)}
    rows.append(lambda: _epochs("digits", "flowgraph", "DNNClassifier", fs.DNNClassifier(
        hidden_units=(128, 64), optimizer="Adam", learning_rate=0.003, batch_size=64,
        random_state=0), digits, accuracy_score, 0.96, n, classes))
    rows.append(lambda: _epochs("digits", "sklearn", "MLPClassifier", MLPClassifier(
        hidden_layer_sizes=(128, 64), learning_rate_init=0.003, batch_size=64,
        random_state=0), digits, accuracy_score, 0.96, n, classes))

    X, y = load_breast_cancer(return_X_y=True)
    cancer = _split(X, y, 0.25, 0, stratify=y)
    classes = {"classes": np.array([0, 1])}
    rows.append(lambda: _epochs("breast_cancer", "flowgraph", "LinearClassifier",
                                fs.LinearClassifier(batch_size=64, random_state=0), cancer,
                                accuracy_score, 0.96, n, classes))
    rows.append(lambda: _epochs("breast_cancer", "sklearn", "SGDClassifier", SGDClassifier(
        loss="log_loss", random_state=0), cancer, accuracy_score, 0.96, n, classes))
    rows.append(lambda: _one_fit("breast_cancer", "sklearn", "LogisticRegression",
                                 LogisticRegression(), cancer, accuracy_score, 0.96))

    X, y = load_diabetes(return_X_y=True)
    diabetes = _split(X, y, 0.2, 42)
    mean, std = diabetes[2].mean(), diabetes[2].std()
    for library, name, model in [
            ("flowgraph", "DNNRegressor", fs.DNNRegressor(hidden_units=(16,), batch_size=64,
                                                          random_state=0)),
            ("flowgraph", "LinearRegressor", fs.LinearRegressor(batch_size=64,
                                                                random_state=0)),
            ("sklearn", "MLPRegressor", MLPRegressor(
                hidden_layer_sizes=(16,), learning_rate_init=0.01, batch_size=64,
                random_state=0))]:
        rows.append(lambda library=library, name=name, model=model: _epochs(
            "diabetes", library, name, _ScaledTarget(clone(model), mean, std), diabetes,
            r2_score, 0.40, n, {}))

    for row in rows:
        print(json.dumps(row))
    _emit_summary(rows)


class _Rows(list):
    """Collects results; `append(thunk)` runs the thunk `repeat` times (at once, so the
    thunk may read loop variables) and keeps the best run."""

    def __init__(self, repeat):
        super().__init__()
        self.repeat = max(1, repeat)

    def append(self, thunk):
        super().append(_best(thunk, self.repeat))


def _emit_summary(rows) -> None:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from run import blas_info, emit

    blas = blas_info()
    for workload in dict.fromkeys(r["workload"] for r in rows):
        mine = [r for r in rows if r["workload"] == workload]
        ref = [r for r in mine if r["library"] == "sklearn" and r["time_to_target_s"]]
        best_ref = min(ref, key=lambda r: r["time_to_target_s"]) if ref else None
        for r in (r for r in mine if r["library"] == "flowgraph"):
            fg = r["time_to_target_s"]
            emit(f"canned_{workload}_{r['model']}", "s to target", fg,
                 best_ref["time_to_target_s"] if best_ref else None, r["target"],
                 fg is not None, [
                     f"flowgraph {r['model']}: {r['epochs_to_target']} epochs, best "
                     f"{r['best']}",
                     "reference = " + (f"sklearn {best_ref['model']}: "
                                       f"{best_ref['epochs_to_target']} epochs, best "
                                       f"{best_ref['best']}" if best_ref else
                                       "no sklearn model reached the target")], blas)


if __name__ == "__main__":
    main()
