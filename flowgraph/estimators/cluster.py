"""The cluster an Estimator runs in: ``TF_CONFIG`` parsing, `ClusterSpec`, task roles.

Everything about roles lives here so that distributed execution plugs in at one place.
``TF_CONFIG`` is read exactly as TensorFlow reads it::

    {"cluster": {"chief": ["host0:2222"], "worker": ["host1:2222", "host2:2222"],
                 "ps": ["host3:2222"]},
     "task": {"type": "worker", "index": 1},
     "session_master": "...", "eval_session_master": "...", "model_dir": "...",
     "service": {...}}

Roles: the *chief* (or the legacy *master*) initializes, checkpoints and writes
summaries; *workers* train; *ps* tasks hold variables; the *evaluator* is not part of the
training cluster and evaluates each new checkpoint. Without a ``cluster`` the process is
the single local worker (and chief). Global ids number the training tasks: chief first,
then the other job names in sorted order, ps last.

Example
-------
>>> info = resolve({"cluster": {"chief": ["h0:1"], "worker": ["h1:1", "h2:1"]},
...                 "task": {"type": "worker", "index": 1}})
>>> info.master, info.is_chief, info.num_worker_replicas, info.global_id_in_cluster
('grpc://h2:1', False, 3, 2)
"""

from __future__ import annotations

import dataclasses
import json
import os

from flowgraph.distributed.cluster_spec import ClusterSpec

__all__ = ["ClusterInfo", "ClusterSpec", "TaskType", "parse_tf_config", "resolve"]

TF_CONFIG_ENV = "TF_CONFIG"
_LOCAL_MASTER = ""
_GRPC = "grpc://"


class TaskType:
    """Task type names used in ``TF_CONFIG`` (TF's values)."""

    MASTER = "master"
    PS = "ps"
    WORKER = "worker"
    CHIEF = "chief"
    EVALUATOR = "evaluator"


TRAINER_TYPES = (TaskType.CHIEF, TaskType.MASTER, TaskType.WORKER)


def is_chief_type(task_type: str | None) -> bool:
    """Whether a task of this type initializes, checkpoints and writes summaries."""
    return task_type in (TaskType.CHIEF, TaskType.MASTER)


def is_trainer_type(task_type: str | None) -> bool:
    return task_type in TRAINER_TYPES


def is_evaluator_type(task_type: str | None) -> bool:
    return task_type == TaskType.EVALUATOR


def is_ps_type(task_type: str | None) -> bool:
    return task_type == TaskType.PS


@dataclasses.dataclass(frozen=True)
class ClusterInfo:
    """The distributed properties of one process, as `RunConfig` exposes them."""

    cluster_spec: ClusterSpec
    task_type: str | None
    task_id: int | None
    master: str
    evaluation_master: str
    is_chief: bool
    num_ps_replicas: int
    num_worker_replicas: int
    global_id_in_cluster: int | None
    service: dict | None


def _quote(text: str, pos: int, width: int = 30) -> str:
    start, end = max(0, pos - width), min(len(text), pos + width)
    return (("..." if start else "") + text[start:pos] + ">>>" + text[pos:end]
            + ("..." if end < len(text) else ""))


def parse_tf_config(raw: str | None = None) -> dict:
    """The ``TF_CONFIG`` JSON (from the environment when `raw` is None) as a dict.

    Malformed JSON, or JSON that is not an object, is a ValueError that quotes the
    offending part.

    Example
    -------
    >>> parse_tf_config('{"task": {"type": "worker", "index": 0}}')
    {'task': {'type': 'worker', 'index': 0}}
    >>> parse_tf_config('{"task": {"type": worker}}')
    Traceback (most recent call last):
    ...
    ValueError: TF_CONFIG is not valid JSON (Expecting value at line 1 column 19): ...
    """
    if raw is None:
        raw = os.environ.get(TF_CONFIG_ENV, "")
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as e:
        raise ValueError(
            f"TF_CONFIG is not valid JSON ({e.msg} at line {e.lineno} column {e.colno}): "
            f"{_quote(raw, e.pos)!r}") from None
    if not isinstance(value, dict):
        raise ValueError(f"TF_CONFIG must be a JSON object; got {raw.strip()[:80]!r}")
    for key in ("cluster", "task"):
        if key in value and not isinstance(value[key], dict):
            raise ValueError(
                f"TF_CONFIG[{key!r}] must be a JSON object; got {json.dumps(value[key])[:80]}")
    return value


def _task_id(task_env: dict) -> int | None:
    raw = task_env.get("index")
    if raw is None:
        return None
    try:
        return int(raw)
    except (TypeError, ValueError):
        raise ValueError(
            f"TF_CONFIG task index must be an integer; got {json.dumps(raw)}") from None


def _validate_task(spec: ClusterSpec, task_env: dict, chief_type: str) -> tuple[str, int]:
    if chief_type not in spec.jobs:
        raise ValueError(f'If "cluster" is set in TF_CONFIG, it must have one "{chief_type}" '
                         f"node. Cluster: {spec.as_dict()}")
    if spec.num_tasks(chief_type) > 1:
        raise ValueError(f'The "cluster" in TF_CONFIG must have only one "{chief_type}" node; '
                         f"got {spec.job_tasks(chief_type)}")
    task_type = task_env.get("type")
    task_id = _task_id(task_env)
    if not task_type:
        raise ValueError('If "cluster" is set in TF_CONFIG, task type must be set.')
    if task_id is None:
        raise ValueError('If "cluster" is set in TF_CONFIG, task index must be set.')
    if task_id < 0:
        raise ValueError(f"Task index must be non-negative number; got {task_id}.")
    if task_type == TaskType.EVALUATOR:
        return task_type, task_id
    if task_type not in spec.jobs:
        raise ValueError(
            f"{task_type} is not a valid task_type in the cluster_spec:\n{spec}\n\n"
            f"Note that these values may be coming from the TF_CONFIG environment variable.")
    if task_id not in spec.task_indices(task_type):
        raise ValueError(
            f"{task_id} is not a valid task_id for task_type {task_type} in the "
            f"cluster_spec:\n{spec}\n\n"
            f"Note that these values may be coming from the TF_CONFIG environment variable.")
    return task_type, task_id


def _global_id(spec: ClusterSpec, task_type: str, task_id: int, chief_type: str) -> int:
    order = [chief_type] + [t for t in sorted(spec.jobs) if t not in (chief_type, TaskType.PS)]
    if TaskType.PS in spec.jobs:
        order.append(TaskType.PS)
    offset = 0
    for t in order:
        if t == task_type:
            return offset + task_id
        offset += len(spec.job_tasks(t))
    raise RuntimeError(f"task type {task_type!r} is not in the cluster {spec}")


def _session_master(spec: ClusterSpec, task_type: str, task_id: int, tf_config: dict) -> str:
    if "session_master" in tf_config:
        return tf_config["session_master"]
    jobs = spec.jobs
    if len(jobs) == 1 and spec.num_tasks(jobs[0]) == 1:
        return _LOCAL_MASTER
    return _GRPC + spec.task_address(task_type, task_id)


def _count_workers(spec: ClusterSpec, chief_type: str) -> int:
    return sum(spec.num_tasks(j) for j in (TaskType.WORKER, chief_type) if j in spec.jobs)


def resolve(tf_config: dict | None = None) -> ClusterInfo:
    """The distributed properties of this process from a parsed ``TF_CONFIG``.

    Example
    -------
    >>> resolve({}).is_chief, resolve({}).num_worker_replicas
    (True, 1)
    """
    tf_config = parse_tf_config() if tf_config is None else tf_config
    service = tf_config.get("service")
    if service is not None and not isinstance(service, dict):
        raise TypeError(f'If "service" is set in TF_CONFIG, it must be a dict. Given '
                        f"{type(service)}")
    spec = ClusterSpec(tf_config.get("cluster", {}))
    task_env = tf_config.get("task", {}) or {}
    eval_master = tf_config.get("eval_session_master", _LOCAL_MASTER)
    if not spec:
        task_type = task_env.get("type", TaskType.WORKER)
        task_id = _task_id(task_env)
        task_id = 0 if task_id is None else task_id
        if task_type != TaskType.WORKER:
            raise ValueError('If "cluster" is not set in TF_CONFIG, task type must be WORKER; '
                             f"got {task_type!r}.")
        if task_id != 0:
            raise ValueError('If "cluster" is not set in TF_CONFIG, task index must be 0; '
                             f"got {task_id}.")
        return ClusterInfo(spec, task_type, task_id,
                           tf_config.get("session_master", _LOCAL_MASTER), eval_master,
                           True, 0, 1, 0, service)
    chief_type = TaskType.CHIEF
    if TaskType.MASTER in spec.jobs:
        if TaskType.CHIEF in spec.jobs:
            raise ValueError("If `master` node exists in `cluster`, job `chief` is not "
                             "supported.")
        chief_type = TaskType.MASTER
    task_type, task_id = _validate_task(spec, task_env, chief_type)
    if task_type == TaskType.EVALUATOR:
        if chief_type == TaskType.MASTER:
            raise ValueError("If `master` node exists in `cluster`, task_type `evaluator` is "
                             "not supported.")
        return ClusterInfo(ClusterSpec({}), task_type, task_id, _LOCAL_MASTER, eval_master,
                           False, 0, 0, None, service)
    return ClusterInfo(
        spec, task_type, task_id, _session_master(spec, task_type, task_id, tf_config),
        _LOCAL_MASTER, task_type == chief_type,
        spec.num_tasks(TaskType.PS) if TaskType.PS in spec.jobs else 0,
        _count_workers(spec, chief_type), _global_id(spec, task_type, task_id, chief_type),
        service)
