"""`benchmarks/bench_conv.py` at a tiny batch: each workload's flowgraph step computes
what its NumPy reference computes (the check the benchmark runs before timing), the
CNN step trains, and a missing TensorFlow environment is reported, not fatal."""

from __future__ import annotations

import json
import pathlib
import sys

import numpy as np
import pytest

import flowgraph as tf

BENCHMARKS = pathlib.Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import bench_conv

        yield bench_conv
    finally:
        sys.path.remove(str(BENCHMARKS))


@pytest.mark.parametrize("name", ["conv_valid", "conv_same", "max_pool", "avg_pool"])
def test_workloads_match_their_numpy_reference(bench, name):
    data = bench.arrays(name, 2)
    _, outputs = bench.session_step(tf, name, data)
    bench.check(name, outputs(), bench.numpy_step(name, data)())


def test_cnn_step_trains(bench):
    step, loss = bench.session_step(tf, "cnn", bench.arrays("cnn", 2))
    first = loss()[0]
    for _ in range(3):
        step()
    assert bench.numpy_step("cnn", {}) is None
    assert np.isfinite(first) and loss()[0] < first


def test_missing_tensorflow_environment_is_a_note(bench, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TF_ORACLE_VENV", str(tmp_path / "none"))
    child = bench.TensorFlowChild(["max_pool"], 2)
    assert child.time("max_pool", 1) is None
    assert "no TensorFlow environment" in child.error
    child.close()
    monkeypatch.syspath_prepend(str(BENCHMARKS))  # `measure` imports benchmarks/run.py
    bench.measure(tf, "max_pool", 2, 1, child, {})
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert line["name"] == "max_pool_step" and line["met"] is None
    assert "no TensorFlow environment" in line["notes"]


def test_each_system_runs_its_steps_as_a_block_after_a_pause(bench, monkeypatch, capsys):
    """flowgraph, TensorFlow and NumPy take turns as blocks of back-to-back steps, each
    after a pause: a flowgraph step timed right after a NumPy step shared a core with
    the OpenBLAS worker NumPy's products left spinning, and found the cache NumPy had
    just filled, where TensorFlow's steps never did."""
    order = []
    real = bench.best_times

    def best_times(fns, repeat, **kw):
        order.append("+".join(fns))
        return real(fns, 1, **kw)

    class Child:
        def time(self, name, repeat):
            order.append("tensorflow")
            return {"seconds": 1.0, "version": "fake"}

    monkeypatch.setattr(bench, "best_times", best_times)
    monkeypatch.setattr(bench, "quiet", lambda: order.append("quiet"))
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    bench.measure(tf, "max_pool", 2, 2, Child(), {})
    assert order == ["quiet", "flowgraph", "quiet", "tensorflow", "quiet", "numpy"] * 2
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert line["tensorflow"] == 1.0 and line["met"] is True


@pytest.mark.parametrize("value,seconds", [(None, 2 ** 28), ("22", 2 ** 22), ("40", 2 ** 30),
                                           ("1", 2 ** 4), ("x", 2 ** 28)])
def test_the_pause_outlasts_openblas_spinning(bench, monkeypatch, value, seconds):
    for name in ("OPENBLAS_THREAD_TIMEOUT", "GOTO_THREAD_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)
    if value is not None:
        monkeypatch.setenv("OPENBLAS_THREAD_TIMEOUT", value)
    assert seconds / 1e9 < bench.quiet_seconds() < seconds / 1e9 + 0.1
