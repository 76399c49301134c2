"""`tf.estimator.tpu.RunConfig`, `TPUConfig` and `InputPipelineConfig`.

`TPUConfig` is an immutable record of TPU settings, validated when it is built exactly
where TensorFlow validates it (`iterations_per_loop` a positive count or ``"<N>s|m|h"``,
`num_cores_per_replica` a power of two up to 128, ...). `RunConfig` is the Estimator's
`RunConfig` plus a `tpu_config`, a `cluster` resolver and explicit masters. flowgraph
has no TPU, so a `TPUEstimator` with these settings runs its CPU path; the values are
kept and reported, as TensorFlow does with ``use_tpu=False``.

Example
-------
>>> import flowgraph as tf
>>> cfg = tf.estimator.tpu.RunConfig(
...     tpu_config=tf.estimator.tpu.TPUConfig(iterations_per_loop=100))
>>> cfg.tpu_config.iterations_per_loop, cfg.tpu_config.per_host_input_for_training
(100, 2)
"""

from __future__ import annotations

import collections
import json
import logging
import os
import re

import numpy as np

from flowgraph.estimators.run_config import RunConfig as _BaseRunConfig
from flowgraph.estimators.run_config import TaskType

__all__ = ["InputPipelineConfig", "RunConfig", "TPUConfig"]

logger = logging.getLogger("tensorflow")

_ITERATIONS_ERR = (
    "Invalid TPUConfig `iterations_per_loop` value. Value must be positive integer value or "
    "time-based value `<N><s|m|h>` where <N> is anypositive integer and `s`, `m`, `h` are "
    "unit of time in seconds, minutes, hours respectively. Examples of valid values: "
    "`3600s`, `60m`, `1h`.")

IterationsPerLoop = collections.namedtuple("IterationsPerLoop", ["value", "unit"])


def parse_iterations_per_loop(value) -> IterationsPerLoop:
    """``(value, unit)`` of a `TPUConfig.iterations_per_loop`: ``(N, 'count')`` for an
    integer, ``(seconds, 'seconds')`` for ``'<N>s'``, ``'<N>m'`` or ``'<N>h'``."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value > 0:
            return IterationsPerLoop(value, "count")
        raise ValueError(_ITERATIONS_ERR)
    match = re.fullmatch(r"([1-9]\d*)([smh])", value) if isinstance(value, str) else None
    if match is None:
        raise ValueError(_ITERATIONS_ERR)
    scale = {"s": 1, "m": 60, "h": 3600}[match.group(2)]
    return IterationsPerLoop(int(match.group(1)) * scale, "seconds")


def check_positive_integer(value, name: str) -> None:
    """TF's check of a count argument: a positive int, else ``ValueError``/``TypeError``."""
    if not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be int, got {type(value)}")
    if value <= 0:
        raise ValueError(f"{name} must be positive, got {value}")


class InputPipelineConfig:
    """How `input_fn` feeds the TPU cores (TF's constants; recorded, not used on CPU).

    Example
    -------
    >>> InputPipelineConfig.PER_HOST_V2
    3
    """

    PER_SHARD_V1 = 1
    PER_HOST_V1 = 2
    PER_HOST_V2 = 3
    BROADCAST = 4
    SLICED = 5


_CORES = (1, 2, 4, 8, 16, 32, 64, 128)


class TPUConfig(collections.namedtuple("TPUConfig", [
        "iterations_per_loop", "num_shards", "num_cores_per_replica",
        "per_host_input_for_training", "tpu_job_name", "initial_infeed_sleep_secs",
        "input_partition_dims", "eval_training_input_configuration",
        "experimental_host_call_every_n_steps",
        "experimental_allow_per_host_v2_parallel_get_next", "experimental_feed_hook"])):
    """TPU settings of a `tf.estimator.tpu.RunConfig` (an immutable namedtuple).

    Parameters
    ----------
    iterations_per_loop : int or str, default 2
        Training steps per host round trip on a TPU; a count or ``"<N>s|m|h"``. On the
        CPU path it only divides the logging interval (`TPUEstimator`).
    num_shards, num_cores_per_replica : int, optional
        Replicas and cores per replica (1, 2, 4, ..., 128).
    per_host_input_for_training : bool or int, default True
        True/False map to ``PER_HOST_V1``/``PER_SHARD_V1`` (`InputPipelineConfig`).
    tpu_job_name : str, optional
        Defaults to ``TF_CONFIG``'s ``service.tpu_worker_job_name``.
    initial_infeed_sleep_secs, input_partition_dims, eval_training_input_configuration,
    experimental_host_call_every_n_steps, experimental_allow_per_host_v2_parallel_get_next,
    experimental_feed_hook
        Kept as given (validated as TensorFlow does).

    Example
    -------
    >>> TPUConfig(iterations_per_loop="1h").iterations_per_loop
    '1h'
    >>> TPUConfig(num_cores_per_replica=3)
    Traceback (most recent call last):
    ...
    ValueError: num_cores_per_replica must be 1, 2, 4, 8, 16, 32, 64, 128; got 3
    """

    __slots__ = ()

    def __new__(cls, iterations_per_loop=2, num_shards=None, num_cores_per_replica=None,
                per_host_input_for_training=True, tpu_job_name=None,
                initial_infeed_sleep_secs=None, input_partition_dims=None,
                eval_training_input_configuration=InputPipelineConfig.PER_HOST_V1,
                experimental_host_call_every_n_steps=1,
                experimental_allow_per_host_v2_parallel_get_next=False,
                experimental_feed_hook=None):
        parse_iterations_per_loop(iterations_per_loop)
        if num_shards is not None:
            check_positive_integer(num_shards, "TPUConfig num_shards")
        if input_partition_dims is not None:
            if len(input_partition_dims) not in (1, 2):
                raise ValueError("input_partition_dims must be a list/tuple with one or two "
                                 "elements.")
            if per_host_input_for_training is not InputPipelineConfig.PER_HOST_V2:
                raise ValueError("input_partition_dims is only supported in PER_HOST_V2 mode.")
            if num_cores_per_replica is None:
                raise ValueError("input_partition_dims requires setting num_cores_per_replica.")
        if num_cores_per_replica is not None and num_cores_per_replica not in _CORES:
            raise ValueError(f"num_cores_per_replica must be 1, 2, 4, 8, 16, 32, 64, 128; "
                             f"got {num_cores_per_replica}")
        if eval_training_input_configuration not in (InputPipelineConfig.PER_HOST_V1,
                                                     InputPipelineConfig.SLICED):
            raise ValueError(f"eval_training_input_configuration must be PER_HOST_V1 or "
                             f"SLICED; got {eval_training_input_configuration}")
        if per_host_input_for_training is False:
            per_host_input_for_training = InputPipelineConfig.PER_SHARD_V1
        elif per_host_input_for_training is True:
            per_host_input_for_training = InputPipelineConfig.PER_HOST_V1
        if initial_infeed_sleep_secs:
            check_positive_integer(initial_infeed_sleep_secs,
                                   "TPUConfig initial_infeed_sleep_secs")
        tpu_job_name = tpu_job_name or _tpu_job_name_from_tf_config()
        return super().__new__(
            cls, iterations_per_loop, num_shards, num_cores_per_replica,
            per_host_input_for_training, tpu_job_name, initial_infeed_sleep_secs,
            input_partition_dims, eval_training_input_configuration,
            experimental_host_call_every_n_steps,
            experimental_allow_per_host_v2_parallel_get_next, experimental_feed_hook)


def _tpu_job_name_from_tf_config():
    tf_config = json.loads(os.environ.get("TF_CONFIG", "{}") or "{}")
    name = tf_config.get("service", {}).get("tpu_worker_job_name")
    if name:
        logger.info("Load TPU job name from TF_CONFIG: %s", name)
    return name


class RunConfig(_BaseRunConfig):
    """`tf.estimator.RunConfig` with TPU settings, as `TPUEstimator` requires.

    Parameters
    ----------
    tpu_config : TPUConfig, optional
        ``TPUConfig()`` when not given.
    evaluation_master : str, optional
        Defaults to `master` (unless TF_CONFIG names this task an evaluator).
    master : str, optional
        The session target; may not be given together with `cluster`.
    cluster : ClusterResolver, optional
        Its ``master()`` and ``cluster_spec()`` set the master and the cluster.
    **kwargs
        `tf.estimator.RunConfig`'s arguments.

    Example
    -------
    >>> cfg = RunConfig(master="", tpu_config=TPUConfig(5))
    >>> cfg.replace(tpu_config=TPUConfig(7)).tpu_config.iterations_per_loop
    7
    """

    def __init__(self, tpu_config=None, evaluation_master=None, master=None, cluster=None,
                 **kwargs) -> None:
        super().__init__(**kwargs)
        self._tpu_config = tpu_config or TPUConfig()
        self._cluster = cluster
        if master is not None:
            if cluster is not None:
                raise ValueError("Both master and cluster are set.")
            self._master = master
        elif cluster:
            self._master = cluster.master()
        if evaluation_master is not None:
            self._evaluation_master = evaluation_master
        elif not self._evaluation_master and self.task_type != TaskType.EVALUATOR:
            self._evaluation_master = self._master
        if cluster:
            self._cluster_spec = cluster.cluster_spec()

    @property
    def tpu_config(self) -> TPUConfig:
        return self._tpu_config

    @property
    def cluster(self):
        return self._cluster

    def replace(self, **kwargs) -> RunConfig:
        """A copy with some properties replaced; `tpu_config` may be one of them."""
        if "tpu_config" not in kwargs:
            return super().replace(**kwargs)
        tpu_config = kwargs.pop("tpu_config")
        new = super().replace(**kwargs)
        new._tpu_config = tpu_config
        return new
