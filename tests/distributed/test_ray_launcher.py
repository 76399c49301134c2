"""`flowgraph.distributed.ray`: a TF_CONFIG cluster as Ray actors, with resources per
role, node addresses in TF_CONFIG, prefixed output, progress lines and restarts of a
failed task (Ray's max_restarts), on a local ``ray.init(num_cpus=2)``."""

import io
import json
import sys

import pytest

from flowgraph.cli import main as cli_main
from flowgraph.distributed.ray import _actor_options, parse_resources, run_on_ray

# One program for every case: prints its role; `mode` says what the task then does.
#   ok:    the ps serves (sleeps) until stopped, the others exit 0
#   flaky: worker 0 fails with code 3 on its first run (a marker file says which run)
#   fail:  worker 0 always fails with code 3 while the chief waits
TASK = r"""
import json, os, sys, time
mode, marker = sys.argv[1], sys.argv[2]
config = json.loads(os.environ["TF_CONFIG"])
role = config["task"]["type"]
print("task", json.dumps(config), flush=True)
if role == "ps":
    time.sleep(600)
if role == "worker":
    if mode == "fail" or (mode == "flaky" and not os.path.exists(marker)):
        open(marker, "w").close()
        sys.exit(3)
if role == "chief" and mode == "fail":
    time.sleep(600)
"""

SMALL = {role: {"num_cpus": 0.25} for role in ("chief", "worker", "ps", "evaluator")}


def test_parse_resources_per_role_and_workers_means_chief_and_workers():
    assert parse_resources(["workers:num_gpus=1", "ps:num_cpus=2,memory=1e9"]) == {
        "chief": {"num_gpus": 1.0}, "worker": {"num_gpus": 1.0},
        "ps": {"num_cpus": 2.0, "memory": 1e9}}
    with pytest.raises(ValueError, match="ROLE one of"):
        parse_resources(["trainer:num_cpus=1"])
    with pytest.raises(ValueError, match="is not KEY=NUMBER"):
        parse_resources(["ps:num_cpus"])


def test_actor_options_split_ray_options_from_custom_resources():
    options = _actor_options("worker", {"worker": {"num_gpus": 1, "tpu_host": 1}}, 3,
                             {"env_vars": {"A": "1"}})
    assert options == {"max_restarts": 3, "max_task_retries": 0, "num_cpus": 1,
                       "num_gpus": 1, "resources": {"tpu_host": 1},
                       "runtime_env": {"env_vars": {"A": "1"}}}
    assert _actor_options("ps", None, 0, None) == {"max_restarts": 0,
                                                   "max_task_retries": 0, "num_cpus": 1}


def test_launch_ray_without_a_program_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as e:
        cli_main(["launch", "--ray", "--ps", "1"])
    assert e.value.code == 2
    assert "give the program after '--'" in capsys.readouterr().err


def test_without_ray_the_launcher_says_what_to_install(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now fails
    with pytest.raises(ImportError, match=r"pip install 'flowgraph\[ray\]'"):
        run_on_ray(["python", "train.py"])
    assert cli_main(["launch", "--ray", "--", "python", "train.py"]) == 1
    assert "needs Ray: pip install 'flowgraph[ray]'" in capsys.readouterr().err


def test_the_local_launcher_refers_ray_runs_to_the_ray_module(capsys):
    from flowgraph.distributed.launch import main as local_main

    with pytest.raises(SystemExit):
        local_main(["--ray", "--", "python", "train.py"])
    assert "python -m flowgraph.distributed.ray" in capsys.readouterr().err


@pytest.fixture(scope="module")
def local_ray():
    ray = pytest.importorskip(
        "ray", reason="the Ray launcher needs ray: pip install 'flowgraph[ray]'")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def _run(mode, tmp_path, **kwargs):
    out = io.BytesIO()
    code = run_on_ray([sys.executable, "-c", TASK, mode, str(tmp_path / "marker")],
                      resources=SMALL, out=out, **kwargs)
    return code, out.getvalue().decode()


def _configs(text):
    found = {}
    for line in text.splitlines():
        if "] task {" in line:
            config = json.loads(line.split("] task ", 1)[1])
            found[line[1:line.index("]")]] = config
    return found


@pytest.mark.slow
def test_every_task_gets_its_tf_config_with_node_addresses(local_ray, tmp_path):
    code, text = _run("ok", tmp_path, ps=1, workers=2, evaluator=True, progress_s=0)
    assert code == 0, text
    configs = _configs(text)
    assert set(configs) == {"chief:0", "worker:0", "ps:0", "evaluator:0"}, text
    cluster = json.loads(text.split("[ray] cluster ", 1)[1].splitlines()[0])
    node = local_ray.util.get_node_ip_address()
    assert {k: len(v) for k, v in cluster.items()} == {"chief": 1, "worker": 1, "ps": 1}
    assert all(a.startswith(f"{node}:") for v in cluster.values() for a in v)
    for name, config in configs.items():
        job, index = name.split(":")
        assert config == {"cluster": cluster, "task": {"type": job, "index": int(index)}}
    assert "[ray] the chief finished" in text


@pytest.mark.slow
def test_a_failed_task_is_restarted_with_the_same_tf_config(local_ray, tmp_path):
    code, text = _run("flaky", tmp_path, ps=1, workers=2, max_restarts=1, progress_s=0.2)
    assert code == 0, text
    assert "[ray] progress: chief:0 " in text and "worker:0 running on" in text
    assert "[ray] task worker:0 exited with code 3: restarting it (1/1)" in text
    runs = [line for line in text.splitlines() if line.startswith("[worker:0] task {")]
    assert len(runs) == 2 and runs[0] == runs[1], text


@pytest.mark.slow
def test_out_of_restarts_the_cluster_stops_with_the_task_code(local_ray, tmp_path):
    code, text = _run("fail", tmp_path, ps=1, workers=2, max_restarts=1)
    assert code == 3, text
    assert "restarting it (1/1)" in text
    assert ("[ray] task worker:0 exited with code 3 and has no restarts left: stopping "
            "the cluster") in text
