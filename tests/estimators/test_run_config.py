"""RunConfig defaults, replace(), validation and TF_CONFIG parsing (cluster.py)."""

import json
import pathlib

import pytest

import flowgraph as tf
from flowgraph.estimators import RunConfig
from flowgraph.estimators.cluster import ClusterSpec, parse_tf_config

CLUSTER = {"chief": ["host0:2222"], "ps": ["host1:2222", "host2:2222"],
           "worker": ["host3:2222", "host4:2222", "host5:2222"]}


@pytest.fixture
def tf_config(monkeypatch):
    def set_config(value):
        monkeypatch.setenv("TF_CONFIG", value if isinstance(value, str) else json.dumps(value))
    monkeypatch.delenv("TF_CONFIG", raising=False)
    return set_config


def test_defaults(tf_config):
    c = RunConfig()
    assert (c.model_dir, c.tf_random_seed, c.save_summary_steps) == (None, None, 100)
    assert (c.save_checkpoints_steps, c.save_checkpoints_secs) == (None, 600)
    assert (c.keep_checkpoint_max, c.keep_checkpoint_every_n_hours) == (5, 10000)
    assert c.log_step_count_steps == 100 and c.session_creation_timeout_secs == 7200
    assert (c.task_type, c.task_id, c.is_chief, c.master) == ("worker", 0, True, "")
    assert (c.num_ps_replicas, c.num_worker_replicas, c.global_id_in_cluster) == (0, 1, 0)
    assert c.cluster_spec == {} and not c.cluster_spec


def test_checkpoint_steps_and_secs_are_exclusive(tf_config):
    assert RunConfig(save_checkpoints_steps=7).save_checkpoints_secs is None
    assert RunConfig(save_checkpoints_secs=7).save_checkpoints_steps is None
    off = RunConfig(save_checkpoints_steps=None, save_checkpoints_secs=None)
    assert (off.save_checkpoints_steps, off.save_checkpoints_secs) == (None, None)
    with pytest.raises(ValueError, match="cannot be both set"):
        RunConfig(save_checkpoints_steps=5, save_checkpoints_secs=5)


def test_replace(tf_config, tmp_path):
    c = RunConfig(model_dir=str(tmp_path), save_checkpoints_steps=10)
    d = c.replace(save_checkpoints_secs=30, tf_random_seed=3)
    assert (d.save_checkpoints_secs, d.save_checkpoints_steps, d.tf_random_seed) == (30, None, 3)
    assert c.save_checkpoints_steps == 10 and c.tf_random_seed is None
    with pytest.raises(ValueError, match="cannot be both set"):
        c.replace(save_checkpoints_secs=1, save_checkpoints_steps=1)
    with pytest.raises(ValueError, match="Replacing task_type is not supported"):
        c.replace(task_type="ps")
    assert RunConfig(model_dir=pathlib.Path(tmp_path)).model_dir == str(tmp_path)


@pytest.mark.parametrize("kwargs, message", [
    ({"tf_random_seed": 1.5}, "tf_random_seed must be integer"),
    ({"save_summary_steps": -1}, "save_summary_steps should be >= 0"),
    ({"keep_checkpoint_max": -1}, "keep_checkpoint_max should be >= 0"),
    ({"keep_checkpoint_every_n_hours": 0}, "keep_checkpoint_every_n_hours should be > 0"),
    ({"log_step_count_steps": 0}, "log_step_count_steps should be > 0"),
    ({"session_config": {"a": 1}}, "session_config must be instance of ConfigProto"),
    ({"protocol": "http"}, "protocol should be grpc"),
    ({"device_fn": lambda x, y: ""}, "device_fn must be callable"),
    ({"model_dir": ""}, "model_dir should be non-empty"),
])
def test_validation(tf_config, kwargs, message):
    with pytest.raises(ValueError, match=message):
        RunConfig(**kwargs)


def test_session_config_accepted(tf_config):
    cp = tf.ConfigProto()
    assert RunConfig(session_config=cp).session_config is cp


def test_worker_from_tf_config(tf_config):
    tf_config({"cluster": CLUSTER, "task": {"type": "worker", "index": 1}})
    c = RunConfig()
    assert c.master == "grpc://host4:2222" and c.task_id == 1 and c.task_type == "worker"
    assert (c.num_ps_replicas, c.num_worker_replicas) == (2, 4)
    assert c.cluster_spec == CLUSTER and c.cluster_spec == ClusterSpec(CLUSTER)
    assert not c.is_chief and c.global_id_in_cluster == 2 and c.evaluation_master == ""


def test_chief_ps_and_evaluator_from_tf_config(tf_config):
    tf_config({"cluster": CLUSTER, "task": {"type": "chief", "index": 0}})
    c = RunConfig()
    assert c.is_chief and c.master == "grpc://host0:2222" and c.global_id_in_cluster == 0
    tf_config({"cluster": CLUSTER, "task": {"type": "ps", "index": 1}})
    assert RunConfig().global_id_in_cluster == 5
    tf_config({"cluster": CLUSTER, "task": {"type": "evaluator", "index": 0},
               "eval_session_master": "grpc://e:1"})
    c = RunConfig()
    assert (c.task_type, c.is_chief, c.master, c.evaluation_master) == (
        "evaluator", False, "", "grpc://e:1")
    assert (c.num_ps_replicas, c.num_worker_replicas, c.global_id_in_cluster) == (0, 0, None)
    assert c.cluster_spec == {}


def test_legacy_master_and_single_node(tf_config):
    tf_config({"cluster": {"master": ["m:1"], "worker": ["w:1"]},
               "task": {"type": "master", "index": 0}})
    c = RunConfig()
    assert c.is_chief and c.master == "grpc://m:1" and c.num_worker_replicas == 2
    tf_config({"cluster": {"chief": ["c:1"]}, "task": {"type": "chief", "index": 0}})
    assert RunConfig().master == ""  # one node: local master
    tf_config({"cluster": CLUSTER, "task": {"type": "worker", "index": 0},
               "session_master": "grpc://custom:9"})
    assert RunConfig().master == "grpc://custom:9"


@pytest.mark.parametrize("config, message", [
    ({"cluster": CLUSTER, "task": {"type": "worker", "index": 3}},
     "3 is not a valid task_id for task_type worker"),
    ({"cluster": CLUSTER, "task": {"type": "trainer", "index": 0}},
     "trainer is not a valid task_type"),
    ({"cluster": CLUSTER, "task": {"index": 0}}, "task type must be set"),
    ({"cluster": CLUSTER, "task": {"type": "worker"}}, "task index must be set"),
    ({"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": 0}},
     'must have one "chief" node'),
    ({"cluster": {"chief": ["a:1", "b:1"]}, "task": {"type": "chief", "index": 0}},
     'only one "chief" node'),
    ({"task": {"type": "ps", "index": 0}}, "task type must be WORKER"),
    ({"task": {"type": "worker", "index": 2}}, "task index must be 0"),
    ({"cluster": {"master": ["m:1"], "chief": ["c:1"]}, "task": {"type": "master", "index": 0}},
     "job `chief` is not supported"),
])
def test_invalid_tf_config(tf_config, config, message):
    tf_config(config)
    with pytest.raises(ValueError, match=message):
        RunConfig()


def test_malformed_tf_config_quotes_the_bad_part(tf_config):
    tf_config('{"cluster": {"chief": ["h:1"]}, "task": {"type": chief}}')
    with pytest.raises(ValueError, match="TF_CONFIG is not valid JSON") as e:
        RunConfig()
    assert ">>>chief}" in str(e.value)
    with pytest.raises(ValueError, match="must be a JSON object"):
        parse_tf_config("[1, 2]")
    with pytest.raises(ValueError, match=r"TF_CONFIG\['task'\] must be a JSON object"):
        parse_tf_config('{"task": "worker"}')
    tf_config('{"task": {"type": "worker", "index": "x"}}')
    with pytest.raises(ValueError, match="task index must be an integer"):
        RunConfig()


def test_model_dir_from_tf_config(tf_config):
    tf_config({"model_dir": "/tmp/from_env"})
    assert RunConfig().model_dir == "/tmp/from_env"
    with pytest.raises(ValueError, match="must have the same value as the model_dir"):
        RunConfig(model_dir="/tmp/other")


def test_cluster_spec():
    spec = ClusterSpec({"worker": {0: "a:1", 2: "c:1"}, "ps": ["p:1"]})
    # TF keeps the jobs in the order given (tf-oracle)
    assert spec.jobs == ["worker", "ps"] and spec.num_tasks("worker") == 2
    assert spec.job_tasks("worker") == ["a:1", None, "c:1"]
    assert spec.task_indices("worker") == [0, 2] and spec.task_address("worker", 2) == "c:1"
    assert spec.as_dict() == {"ps": ["p:1"], "worker": {0: "a:1", 2: "c:1"}}
    with pytest.raises(ValueError, match="No such job"):
        spec.num_tasks("chief")
    with pytest.raises(TypeError, match="address must be a string"):
        ClusterSpec({"worker": [1]})
