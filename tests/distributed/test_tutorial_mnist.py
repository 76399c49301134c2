"""The distributed-MNIST tutorial program (`flowgraph.examples.distributed_mnist`) runs
unchanged in one process, as chief + worker + ps + evaluator through ``flowgraph
launch``, and through the Ray launcher, reaching the same accuracy each way."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

from flowgraph.examples import distributed_mnist

ROOT = pathlib.Path(__file__).parents[2]
# The tutorial's network made ten times cheaper (same accuracy on 8x8 digits).
ARGS = ["--steps", "400", "--filters", "8,16", "--kernel_size", "3", "--dense_units", "64"]
CLUSTER = ["--ps", "1", "--workers", "2", "--evaluator"]
SMALL_RAY = [f"--ray-resources={role}:num_cpus=0.25"
             for role in ("workers", "ps", "evaluator")]


@pytest.fixture(scope="module")
def single_process_accuracy(tmp_path_factory):
    model_dir = str(tmp_path_factory.mktemp("single"))
    result = distributed_mnist.main(["--model_dir", model_dir, *ARGS])
    assert result["metrics"]["global_step"] == 400
    return result["metrics"]["accuracy"]


def _cluster_run(launcher: list, model_dir) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    proc = subprocess.run(
        [sys.executable, *launcher, *CLUSTER, "--", sys.executable, "-m",
         "flowgraph.examples.distributed_mnist", "--model_dir", str(model_dir),
         "--throttle_secs", "1", *ARGS],
        env=env, capture_output=True, timeout=400)
    out = proc.stdout.decode()
    assert proc.returncode == 0, out[-4000:]
    results = {}
    for line in out.splitlines():
        if line.startswith("[") and '] {"role"' in line:
            results[line[1:line.index("]")]] = json.loads(line.split("] ", 1)[1])
    # The ps exits by itself once the chief is gone, unless the launcher stopped it first.
    assert set(results) - {"ps:0"} == {"chief:0", "worker:0", "evaluator:0"}, out[-4000:]
    assert "[ps:0]" in out
    return results["evaluator:0"]["metrics"]


def _check_same_accuracy(metrics: dict, single: float) -> None:
    assert metrics["global_step"] >= 400
    assert single >= 0.9
    # Two asynchronous trainers see other batches in another order: close, not equal.
    assert abs(metrics["accuracy"] - single) <= 0.03, (metrics, single)


@pytest.mark.slow
def test_tutorial_runs_through_flowgraph_launch(tmp_path, single_process_accuracy):
    metrics = _cluster_run(["-m", "flowgraph", "launch"], tmp_path)
    _check_same_accuracy(metrics, single_process_accuracy)


@pytest.mark.slow
def test_tutorial_runs_through_the_ray_launcher(tmp_path, single_process_accuracy):
    pytest.importorskip("ray", reason="the Ray launcher needs ray: pip install "
                                      "'flowgraph[ray]'")
    metrics = _cluster_run(["-m", "flowgraph.distributed.ray", *SMALL_RAY, "--progress",
                            "0"], tmp_path)
    _check_same_accuracy(metrics, single_process_accuracy)


@pytest.mark.slow
def test_tutorial_keras_route_in_one_process(tmp_path):
    result = distributed_mnist.main(["--model_dir", str(tmp_path), "--model", "keras",
                                     *ARGS])
    assert result["metrics"]["global_step"] == 400
    assert result["metrics"]["acc"] >= 0.9
