"""`tf.train.ClusterSpec`: the jobs of a cluster and the address of each task.

A cluster maps job names (``"ps"``, ``"worker"``, ``"chief"``...) to tasks; a job is a
list of ``"host:port"`` addresses (task i at position i) or, for a job with gaps, a dict
``{task_index: address}``. Device names refer to tasks as ``/job:ps/task:0``.

Example
-------
>>> spec = ClusterSpec({"ps": ["localhost:2222"], "worker": {1: "localhost:2224"}})
>>> spec.jobs, spec.num_tasks("worker"), spec.job_tasks("worker")
(['ps', 'worker'], 1, [None, 'localhost:2224'])
>>> spec.as_dict()
{'ps': ['localhost:2222'], 'worker': {1: 'localhost:2224'}}
"""

from __future__ import annotations

from flowgraph.distributed.cluster_protos import ClusterDef, cluster_def_from_spec
from flowgraph.framework.device_spec import DeviceSpec

__all__ = ["ClusterSpec", "filtered_cluster"]

_NOT_A_CLUSTER = ("`cluster` must be a dictionary mapping one or more job names to lists "
                  "of network addresses, or a `ClusterDef` protocol buffer")


def _job_table(job: str, tasks) -> dict[int, str]:
    if isinstance(tasks, list | tuple):
        table = dict(enumerate(tasks))
    elif isinstance(tasks, dict):
        try:
            table = {int(i): a for i, a in tasks.items()}
        except (TypeError, ValueError):
            raise ValueError(f"ClusterSpec job {job!r}: task indices must be integers; got "
                             f"{list(tasks)!r}") from None
    else:  # (TensorFlow's words, then what was found)
        raise TypeError(f"The tasks for job {job!r} must be a list or a dictionary from "
                        f"integers to strings; got {type(tasks).__name__}: {tasks!r}")
    for index, address in table.items():
        if not isinstance(address, str):  # TensorFlow: TypeError
            raise TypeError(f"ClusterSpec job {job!r} task {index}: the address must be a "
                            f"string ('host:port'); got {address!r}")
        if ":" not in address:
            raise ValueError(f"ClusterSpec job {job!r} task {index}: the address must be a "
                             f"'host:port' string; got {address!r}")
    return table


class ClusterSpec:
    """The tasks of a cluster by job (TensorFlow 1.x `tf.train.ClusterSpec`).

    Parameters
    ----------
    cluster : dict, ClusterSpec, ClusterDef or None
        Job name -> list of addresses, or -> dict ``{task_index: address}``; or the
        `tf.train.ClusterDef` message (`as_cluster_def`).
    """

    def __init__(self, cluster=None) -> None:
        # As TF's: `jobs` and `as_dict` keep the order the jobs came in, a dict's or a
        # ClusterDef's; `as_cluster_def` sorts a dict's jobs by name and keeps a
        # ClusterDef's order; a ClusterSpec is copied through its ClusterDef.
        self._def_order = False
        if cluster is None:
            cluster = {}
        elif isinstance(cluster, ClusterSpec):
            cluster, self._def_order = cluster._def_jobs(), True
        elif isinstance(cluster, ClusterDef):
            cluster = {job.name: dict(job.tasks) for job in cluster.job}
            self._def_order = True
        elif not isinstance(cluster, dict) and hasattr(cluster, "as_dict"):
            cluster = cluster.as_dict()
        if not isinstance(cluster, dict):
            raise TypeError(f"{_NOT_A_CLUSTER}; got {type(cluster).__name__}: {cluster!r}")
        self._jobs: dict[str, dict[int, str]] = {}
        for job, tasks in cluster.items():
            if not isinstance(job, str):
                raise TypeError(f"ClusterSpec job names must be strings; got {job!r}")
            self._jobs[job] = _job_table(job, tasks)

    @property
    def jobs(self) -> list[str]:
        """The job names, in the order they were given (see the constructor)."""
        return list(self._jobs)

    def num_tasks(self, job_name: str) -> int:
        """How many tasks `job_name` has."""
        return len(self._table(job_name))

    def task_indices(self, job_name: str) -> list[int]:
        """The task indices of `job_name`, sorted."""
        return sorted(self._table(job_name))

    def task_address(self, job_name: str, task_index: int) -> str:
        """The ``host:port`` of one task (ValueError if the cluster has no such task)."""
        table = self._table(job_name)
        if task_index not in table:
            raise ValueError(f"No task with index {task_index} in job {job_name!r}; its "
                             f"tasks are {sorted(table)}")
        return table[task_index]

    def job_tasks(self, job_name: str) -> list:
        """The addresses of `job_name` by task index (None where a sparse job has gaps)."""
        table = self._table(job_name)
        return [table.get(i) for i in range(max(table) + 1)] if table else []

    def as_dict(self) -> dict:
        """Job -> list of addresses (dense jobs) or dict (sparse jobs)."""
        out = {}
        for job, table in self._jobs.items():
            dense = sorted(table) == list(range(len(table)))
            out[job] = [table[i] for i in sorted(table)] if dense else dict(sorted(table.items()))
        return out

    def as_cluster_def(self) -> ClusterDef:
        """The cluster as TensorFlow's ``ClusterDef`` message (what ``ServerDef`` holds).

        >>> d = ClusterSpec({"ps": ["a:1"], "worker": {2: "b:2"}}).as_cluster_def()
        >>> [(job.name, dict(job.tasks)) for job in d.job]
        [('ps', {0: 'a:1'}), ('worker', {2: 'b:2'})]
        >>> ClusterSpec(d).as_dict()
        {'ps': ['a:1'], 'worker': {2: 'b:2'}}
        """
        return cluster_def_from_spec(self._def_jobs(), sort=False)

    def _def_jobs(self) -> dict:
        """`as_dict` in the job order of `as_cluster_def`."""
        jobs = self.as_dict()
        return jobs if self._def_order else dict(sorted(jobs.items()))

    def _table(self, job_name: str) -> dict[int, str]:
        if job_name not in self._jobs:
            raise ValueError(f"No such job in cluster: {job_name!r} (jobs: {self.jobs})")
        return self._jobs[job_name]

    def __bool__(self) -> bool:
        return bool(self._jobs)

    def __eq__(self, other) -> bool:
        if isinstance(other, ClusterSpec):
            return self._jobs == other._jobs
        if isinstance(other, dict):
            try:
                return self._jobs == ClusterSpec(other)._jobs
            except (TypeError, ValueError):
                return False
        return NotImplemented

    __hash__ = None

    def __repr__(self) -> str:
        return f"ClusterSpec({dict(sorted(self.as_dict().items()))!r})"


def filtered_cluster(cluster: dict, device_filters) -> dict:
    """The tasks of `cluster` (job -> list or ``{index: address}``) that a session with
    ``ConfigProto(device_filters=...)`` may use: those matching one filter at least
    (``/job:ps`` keeps every ps task, ``/job:worker/task:1`` one worker); all of them
    without filters. A job keeps its list form while its tasks stay ``0..n-1``.

    >>> filtered_cluster({"ps": ["a:1"], "worker": ["b:1", "c:1"]},
    ...                  ["/job:ps", "/job:worker/task:1"])
    {'ps': ['a:1'], 'worker': {1: 'c:1'}}
    """
    if not device_filters:
        return cluster
    specs = [DeviceSpec.from_string(f) for f in device_filters]
    kept: dict = {}
    for job, tasks in cluster.items():
        table = _job_table(job, tasks)
        mine = {i: a for i, a in sorted(table.items())
                if any(s.job in (None, job) and s.task in (None, i) for s in specs)}
        if mine:
            kept[job] = list(mine.values()) if list(mine) == list(range(len(mine))) else mine
    return kept
