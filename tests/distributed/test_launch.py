"""``flowgraph launch``: a local TF_CONFIG cluster with prefixed output, stopped when the
chief is done or when a task fails."""

import json
import os
import pathlib
import subprocess
import sys
import time

import pytest

from flowgraph.cli import main as cli_main
from flowgraph.distributed.launch import layout

HERE = pathlib.Path(__file__).parent
ROOT = HERE.parents[1]


def _launch(*args, timeout=120):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "flowgraph", "launch", *args], env=env,
                          cwd=HERE, capture_output=True, timeout=timeout)
    return proc.returncode, proc.stdout.decode(), time.monotonic() - start


def test_layout_names_the_chief_workers_ps_and_evaluator():
    cluster, tasks = layout(2, 3, True, "127.0.0.1", iter(range(5000, 5010)))
    assert cluster == {"chief": ["127.0.0.1:5000"],
                       "worker": ["127.0.0.1:5001", "127.0.0.1:5002"],
                       "ps": ["127.0.0.1:5003", "127.0.0.1:5004"]}
    assert tasks == [("chief", 0), ("worker", 0), ("worker", 1), ("ps", 0), ("ps", 1),
                     ("evaluator", 0)]
    with pytest.raises(ValueError, match="--workers must be >= 1"):
        layout(1, 0, False, "localhost", iter(range(9)))


def test_the_cluster_runs_with_prefixed_output_and_stops_the_ps_after_the_chief():
    code, out, took = _launch("--ps", "1", "--workers", "2", "--evaluator", "--",
                              sys.executable, "launch_task.py", "ok")
    assert code == 0, out
    cluster = json.loads(out.split("[launch] cluster ", 1)[1].splitlines()[0])
    assert set(cluster) == {"chief", "worker", "ps"}
    for name, role in [("chief:0", "chief 0"), ("worker:0", "worker 0"), ("ps:0", "ps 0"),
                       ("evaluator:0", "evaluator 0")]:
        assert f"[{name}] hello from {role}; ps at {cluster['ps']}" in out, out
        assert f"[{name}] a line on stderr from {role.split()[0]}" in out, out
    assert took < 60  # the ps (which sleeps 600 s) was stopped


def test_a_failing_task_stops_the_cluster_with_its_exit_code():
    code, out, took = _launch("--ps", "1", "--workers", "2", "--",
                              sys.executable, "launch_task.py", "fail")
    assert code == 3, out
    assert "[launch] task worker:0 exited with code 3: stopping the cluster" in out
    assert took < 60  # the chief and the ps (sleeping 600 s) were stopped


def test_launch_without_a_program_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as e:
        cli_main(["launch", "--ps", "1"])
    assert e.value.code == 2
    assert "give the program after '--'" in capsys.readouterr().err


@pytest.mark.slow
def test_the_estimator_program_runs_unchanged_through_launch(tmp_path):
    code, out, _ = _launch("--ps", "1", "--workers", "2", "--evaluator", "--",
                           sys.executable, "estimator_task.py", str(tmp_path), "200",
                           timeout=300)
    assert code == 0, out[-4000:]
    line = next(x for x in out.splitlines() if x.startswith("[evaluator:0] {"))
    result = json.loads(line.split("] ", 1)[1])
    assert result["metrics"]["global_step"] >= 200 and result["metrics"]["loss"] < 1e-3
    assert result["exports"]


def test_tasks_share_the_cores_for_their_blas_threads():
    """Two trainers, a ps and an evaluator on this machine: the ps and the evaluator get
    one BLAS thread each, each trainer half the cores left (at least one), unless the
    environment chose a count."""
    from flowgraph.distributed.launch import task_thread_env

    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    program = ("import os, json; print('threads', os.environ.get('OPENBLAS_NUM_THREADS'), "
               "json.loads(os.environ['TF_CONFIG'])['task']['type'])")
    proc = subprocess.run([sys.executable, "-m", "flowgraph", "launch", "--ps", "1",
                           "--workers", "2", "--evaluator", "--", sys.executable, "-c",
                           program], env=env, cwd=HERE, capture_output=True, timeout=120)
    out = proc.stdout.decode()
    cores = len(os.sched_getaffinity(0))
    share = str(max(1, (cores - 2) // 2))
    for name in ("chief:0", "worker:0"):
        assert f"[{name}] threads {share} " in out, out
    # (the ps is stopped once the others finish, maybe before it prints: checked below)
    assert "[evaluator:0] threads 1 " in out, out
    assert "ps:0 1" in out, out  # the launcher's own line
    assert task_thread_env([("chief", 0)], {"OPENBLAS_NUM_THREADS": "3"}) == {}
    lone = task_thread_env([("chief", 0), ("ps", 0)], {})
    assert lone[("ps", 0)]["OPENBLAS_NUM_THREADS"] == "1"
    assert lone[("chief", 0)]["OPENBLAS_NUM_THREADS"] == str(max(1, cores - 1))
