"""`tf.estimator.train_and_evaluate` with cluster roles from TF_CONFIG: ps, chief, worker
and evaluator processes on loopback ports, ending with an evaluated, exported model."""

import json
import os
import subprocess
import sys

import pytest
from conftest import free_port
from test_cluster_processes import ROOT, _stop

TASK = "estimator_task.py"


def _start(cluster, task_type, model_dir, steps, index=0):
    env = dict(os.environ, TF_CONFIG=json.dumps(
        {"cluster": cluster, "task": {"type": task_type, "index": index}}))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    script = os.path.join(os.path.dirname(__file__), TASK)
    return subprocess.Popen([sys.executable, script, str(model_dir), str(steps)], env=env,
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


@pytest.mark.slow
def test_ps_chief_worker_and_evaluator_train_evaluate_and_export(tmp_path):
    steps = 200
    cluster = {"chief": [f"localhost:{free_port()}"], "worker": [f"localhost:{free_port()}"],
               "ps": [f"localhost:{free_port()}"]}
    procs = {role: _start(cluster, role, tmp_path, steps)
             for role in ("ps", "chief", "worker", "evaluator")}
    try:
        results = {}
        for role in ("chief", "worker", "evaluator", "ps"):  # the ps exits after the chief
            out, err = procs[role].communicate(timeout=150)
            assert procs[role].returncode == 0, f"{role}: {err[-3000:]}"
            results[role] = json.loads(out.strip().splitlines()[-1])
    finally:
        for proc in procs.values():
            _stop(proc)
    for role in ("chief", "worker", "ps"):
        assert results[role] == {"role": role, "metrics": None, "exports": None}
    metrics = results["evaluator"]["metrics"]
    assert metrics["global_step"] >= steps, metrics
    assert metrics["loss"] < 1e-3, metrics  # the shared variables reached the solution
    (export,) = results["evaluator"]["exports"]
    assert export.startswith(str(tmp_path / "export" / "final")), export
    assert os.path.isfile(os.path.join(export, "saved_model.pb")) or os.listdir(export)


def test_an_evaluator_task_takes_one_eval_spec(tmp_path, monkeypatch):
    from estimator_task import input_fn, model_fn

    import flowgraph as tf

    monkeypatch.setenv("TF_CONFIG", json.dumps({
        "cluster": {"chief": ["localhost:1"]}, "task": {"type": "evaluator", "index": 0}}))
    estimator = tf.estimator.Estimator(model_fn, config=tf.estimator.RunConfig(
        model_dir=str(tmp_path)))
    assert estimator.config.task_type == "evaluator"
    specs = [tf.estimator.EvalSpec(input_fn, name=n) for n in ("a", "b")]
    with pytest.raises(ValueError, match="one EvalSpec"):
        tf.estimator.train_and_evaluate(estimator, tf.estimator.TrainSpec(input_fn, 10),
                                        specs)
