"""TensorFlow's cluster messages, ``tf.train.ClusterDef``, ``JobDef`` and ``ServerDef``,
with TensorFlow's field numbers (``tensorflow/core/protobuf/cluster.proto`` and
``tensorflow_server.proto``), so they serialize byte-compatibly; `cluster_def_from_spec`
converts a `tf.train.ClusterSpec`.

``ServerDef.default_session_config`` (a ConfigProto) is not declared: parsing skips it.

Example
-------
>>> import flowgraph as tf
>>> job = tf.train.JobDef(name="worker", tasks={0: "localhost:2222"})
>>> cluster = tf.train.ClusterDef(job=[job])
>>> tf.train.ClusterDef.FromString(cluster.SerializeToString()).job[0].tasks[0]
'localhost:2222'
"""

from __future__ import annotations

from flowgraph.framework.event_format import Message

__all__ = ["ClusterDef", "JobDef", "ServerDef", "cluster_def_from_spec"]


class JobDef(Message):
    """One job of a cluster: its ``name`` and ``tasks`` (task index -> ``host:port``)."""

    PROTO_NAME = "tensorflow.JobDef"
    FIELDS = ((1, "name", "string", False), (2, "tasks", ("map", "int32", "string"), True))


class ClusterDef(Message):
    """The jobs of a cluster (``job``, repeated `JobDef`)."""

    PROTO_NAME = "tensorflow.ClusterDef"
    FIELDS = ((1, "job", JobDef, True),)


class ServerDef(Message):
    """What one server of a cluster is: the ``cluster``, its ``job_name`` and
    ``task_index``, the ``protocol`` (``"grpc"``) and ``port``."""

    PROTO_NAME = "tensorflow.ServerDef"
    FIELDS = ((1, "cluster", ClusterDef, False), (2, "job_name", "string", False),
              (3, "task_index", "int32", False), (5, "protocol", "string", False),
              (6, "port", "int32", False))


def cluster_def_from_spec(spec, sort: bool = True) -> ClusterDef:
    """The `ClusterDef` of a `tf.train.ClusterSpec` (or of its dict form), its jobs
    sorted by name (else in the order given, with ``sort=False``).

    Example
    -------
    >>> import flowgraph as tf
    >>> spec = tf.train.ClusterSpec({"ps": ["a:1"], "worker": ["b:2", "c:3"]})
    >>> [(j.name, dict(j.tasks)) for j in cluster_def_from_spec(spec).job]
    [('ps', {0: 'a:1'}), ('worker', {0: 'b:2', 1: 'c:3'})]
    """
    jobs = spec.as_dict() if hasattr(spec, "as_dict") else dict(spec)
    out = ClusterDef()
    for name in sorted(jobs) if sort else jobs:
        tasks = jobs[name]
        if isinstance(tasks, dict):
            mapping = {int(k): str(v) for k, v in tasks.items()}
        else:
            mapping = {i: str(v) for i, v in enumerate(tasks)}
        out.job.append(JobDef(name=name, tasks=mapping))
    return out
