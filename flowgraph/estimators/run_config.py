"""`RunConfig`: where and how an Estimator runs (model_dir, checkpoints, cluster).

The distributed properties (`task_type`, `task_id`, `cluster_spec`, `is_chief`,
`master`, ...) come from the ``TF_CONFIG`` environment variable, read when the config is
built; the parsing and the role rules live in `flowgraph.estimators.cluster`.

Example
-------
>>> config = RunConfig(model_dir="/tmp/m", save_checkpoints_steps=50)
>>> config.save_checkpoints_steps, config.save_checkpoints_secs, config.is_chief
(50, None, True)
>>> config.replace(save_checkpoints_secs=30).save_checkpoints_steps is None
True
"""

from __future__ import annotations

import copy
import inspect
import logging
import os

from flowgraph.estimators import cluster as _cluster

__all__ = ["RunConfig", "TaskType"]

TaskType = _cluster.TaskType

logger = logging.getLogger("tensorflow")

def session_config_for(config):
    """The `ConfigProto` an Estimator's sessions use: `config.session_config`, or, when
    that is None, one with soft placement on, as TensorFlow's Estimator does (so a
    ``tf.device('/gpu:0')`` in a model_fn keeps ops without a GPU kernel on the CPU).

    >>> session_config_for(RunConfig()).allow_soft_placement
    True
    """
    from flowgraph.runtime.config import ConfigProto

    given = getattr(config, "session_config", None)
    return given if given is not None else ConfigProto(allow_soft_placement=True)


def default_session_config():
    """The `session_config` TensorFlow's Estimator puts in a config that has none: soft
    placement on and Grappler's meta optimizer run once.

    >>> cfg = default_session_config()
    >>> cfg.allow_soft_placement, cfg.graph_options.rewrite_options.meta_optimizer_iterations
    (True, 1)
    """
    from flowgraph.runtime.config import ConfigProto, GraphOptions, RewriterConfig

    rewrite = RewriterConfig(meta_optimizer_iterations=RewriterConfig.ONE)
    return ConfigProto(allow_soft_placement=True,
                       graph_options=GraphOptions(rewrite_options=rewrite))


def config_log_text(config) -> str:
    """The text of TensorFlow's ``Using config: ...`` log line: the config's attributes
    as a dict, messages (the session config) in protobuf's text format as TensorFlow's
    messages print.

    >>> config_log_text(RunConfig(model_dir="/m"))[:45]
    "{'_model_dir': '/m', '_tf_random_seed': None,"
    """
    from flowgraph.framework.message_api import RecordMessage

    items = (f"{k!r}: {v if isinstance(v, RecordMessage) else repr(v)}"
             for k, v in vars(config).items())
    return "{" + ", ".join(items) + "}"


def _distributed_session_config(task_type, task_id):
    """TensorFlow's default `session_config` for a task of a ``TF_CONFIG`` cluster: soft
    placement, one meta-optimizer pass, and device filters that let a trainer see the
    ps tasks and itself (a ps task: the ps and every trainer); None for an evaluator or
    any other task type.

    >>> _distributed_session_config("worker", 1).device_filters
    ['/job:ps', '/job:worker/task:1']
    >>> _distributed_session_config("evaluator", 0) is None
    True
    """
    from flowgraph.runtime.config import ConfigProto, GraphOptions, RewriterConfig

    filters = {
        TaskType.MASTER: ["/job:ps", "/job:master"],
        TaskType.CHIEF: ["/job:ps", "/job:chief"],
        TaskType.WORKER: ["/job:ps", f"/job:worker/task:{task_id}"],
        TaskType.PS: ["/job:ps", "/job:worker", "/job:chief", "/job:master"],
    }.get(task_type)
    if filters is None:
        return None
    rewrites = RewriterConfig(meta_optimizer_iterations=RewriterConfig.ONE)
    return ConfigProto(allow_soft_placement=True, device_filters=filters,
                       graph_options=GraphOptions(rewrite_options=rewrites))


_USE_DEFAULT = object()
_SAVE_CKPT_ERR = "`save_checkpoints_steps` and `save_checkpoints_secs` cannot be both set."

_REPLACEABLE = (
    "model_dir", "tf_random_seed", "save_summary_steps", "save_checkpoints_steps",
    "save_checkpoints_secs", "session_config", "keep_checkpoint_max",
    "keep_checkpoint_every_n_hours", "log_step_count_steps", "train_distribute", "device_fn",
    "protocol", "eval_distribute", "experimental_distribute",
    "experimental_max_worker_delay_secs", "session_creation_timeout_secs",
    "checkpoint_save_graph_def",
)


def _path_str(path):
    return os.fspath(path) if hasattr(path, "__fspath__") else path


def _model_dir(tf_config: dict, model_dir):
    if model_dir == "":
        raise ValueError("model_dir should be non-empty.")
    from_env = tf_config.get("model_dir")
    if from_env == "":
        raise ValueError("model_dir in TF_CONFIG should be non-empty.")
    if from_env:
        if model_dir and from_env != model_dir:
            raise ValueError(
                f"`model_dir` provided in RunConfig construct, if set, must have the same "
                f"value as the model_dir in TF_CONFIG. model_dir: {model_dir}\n"
                f'TF_CONFIG["model_dir"]: {from_env}.\n')
        logger.info("Using model_dir in TF_CONFIG: %s", from_env)
    return model_dir or from_env


def _check(config, name: str, ok, message: str) -> None:
    value = getattr(config, "_" + name)
    if value is not None and not ok(value):
        raise ValueError(f"{message}; got {value!r}")


def _validate(config) -> None:
    _check(config, "model_dir", bool, "model_dir should be non-empty")
    _check(config, "save_summary_steps", lambda v: v >= 0, "save_summary_steps should be >= 0")
    _check(config, "save_checkpoints_steps", lambda v: v >= 0,
           "save_checkpoints_steps should be >= 0")
    _check(config, "save_checkpoints_secs", lambda v: v >= 0,
           "save_checkpoints_secs should be >= 0")
    _check(config, "keep_checkpoint_max", lambda v: v >= 0, "keep_checkpoint_max should be >= 0")
    _check(config, "keep_checkpoint_every_n_hours", lambda v: v > 0,
           "keep_checkpoint_every_n_hours should be > 0")
    _check(config, "log_step_count_steps", lambda v: v > 0, "log_step_count_steps should be > 0")
    _check(config, "tf_random_seed", lambda v: isinstance(v, int) and not isinstance(v, bool),
           "tf_random_seed must be integer")
    _check(config, "experimental_max_worker_delay_secs", lambda v: isinstance(v, int),
           "experimental_max_worker_delay_secs must be an integer if set")
    _check(config, "session_creation_timeout_secs", lambda v: v > 0,
           "session_creation_timeout_secs should be > 0")
    _check(config, "protocol", lambda v: v in ("grpc", "grpc+verbs"),
           "protocol should be grpc or grpc+verbs")
    _check(config, "device_fn", _is_device_fn,
           'device_fn must be callable with exactly one argument "op"')
    session_config = config._session_config
    if session_config is not None:
        from flowgraph.runtime.config import ConfigProto

        if not isinstance(session_config, ConfigProto):
            raise ValueError(f"session_config must be instance of ConfigProto; got "
                             f"{type(session_config).__name__}")


def _is_device_fn(fn) -> bool:
    if not callable(fn):
        return False
    try:
        return list(inspect.signature(fn).parameters) == ["op"]
    except (TypeError, ValueError):
        return False


class RunConfig:
    """Run-time settings of an `Estimator` (TF's `tf.estimator.RunConfig`).

    Parameters
    ----------
    model_dir : str or PathLike, optional
        Where checkpoints and summaries go (the Estimator's `model_dir` wins if given).
    tf_random_seed : int, optional
        Graph-level seed set on every graph the Estimator builds.
    save_summary_steps : int, default 100
    save_checkpoints_steps, save_checkpoints_secs : int, optional
        At most one; when neither is given, a checkpoint every 600 s. Both None
        disables periodic checkpoints (one is still written at the end of `train`).
    session_config : tf.ConfigProto, optional
    keep_checkpoint_max : int, default 5
    keep_checkpoint_every_n_hours : float, default 10000
    log_step_count_steps : int, default 100
        How often loss and global_step/sec are logged.
    train_distribute, eval_distribute, experimental_distribute, device_fn, protocol,
    experimental_max_worker_delay_secs, session_creation_timeout_secs,
    checkpoint_save_graph_def :
        Stored for distributed execution (TF's meaning).

    Example
    -------
    >>> RunConfig(save_checkpoints_steps=10, save_checkpoints_secs=10)
    Traceback (most recent call last):
    ...
    ValueError: `save_checkpoints_steps` and `save_checkpoints_secs` cannot be both set.
    """

    def __init__(self, model_dir=None, tf_random_seed=None, save_summary_steps=100,
                 save_checkpoints_steps=_USE_DEFAULT, save_checkpoints_secs=_USE_DEFAULT,
                 session_config=None, keep_checkpoint_max=5, keep_checkpoint_every_n_hours=10000,
                 log_step_count_steps=100, train_distribute=None, device_fn=None, protocol=None,
                 eval_distribute=None, experimental_distribute=None,
                 experimental_max_worker_delay_secs=None, session_creation_timeout_secs=7200,
                 checkpoint_save_graph_def=True) -> None:
        if save_checkpoints_steps is _USE_DEFAULT and save_checkpoints_secs is _USE_DEFAULT:
            save_checkpoints_steps, save_checkpoints_secs = None, 600
        elif save_checkpoints_secs is _USE_DEFAULT:
            save_checkpoints_secs = None
        elif save_checkpoints_steps is _USE_DEFAULT:
            save_checkpoints_steps = None
        elif save_checkpoints_steps is not None and save_checkpoints_secs is not None:
            raise ValueError(_SAVE_CKPT_ERR)
        tf_config = _cluster.parse_tf_config()
        if tf_config:
            logger.info("TF_CONFIG environment variable: %s", tf_config)
        if train_distribute is not None or eval_distribute is not None:
            logger.info("Initializing RunConfig with distribution strategies.")
            logger.info("Not using Distribute Coordinator.")
        self._set(
            model_dir=_model_dir(tf_config, _path_str(model_dir)),
            tf_random_seed=tf_random_seed, save_summary_steps=save_summary_steps,
            save_checkpoints_steps=save_checkpoints_steps,
            save_checkpoints_secs=save_checkpoints_secs, session_config=session_config,
            keep_checkpoint_max=keep_checkpoint_max,
            keep_checkpoint_every_n_hours=keep_checkpoint_every_n_hours,
            log_step_count_steps=log_step_count_steps, train_distribute=train_distribute,
            device_fn=device_fn, protocol=protocol, eval_distribute=eval_distribute,
            experimental_distribute=experimental_distribute,
            experimental_max_worker_delay_secs=experimental_max_worker_delay_secs,
            session_creation_timeout_secs=session_creation_timeout_secs,
            checkpoint_save_graph_def=checkpoint_save_graph_def)
        info = _cluster.resolve(tf_config)
        # TensorFlow's attribute order (``vars(config)`` shows in the Estimator's log)
        self._service = info.service
        self._cluster_spec = info.cluster_spec
        self._task_type = info.task_type
        self._task_id = info.task_id
        self._global_id_in_cluster = info.global_id_in_cluster
        self._master = info.master
        self._evaluation_master = info.evaluation_master
        self._is_chief = info.is_chief
        self._num_ps_replicas = info.num_ps_replicas
        self._num_worker_replicas = info.num_worker_replicas
        if (session_config is None and self._cluster_spec and train_distribute is None
                and eval_distribute is None and experimental_distribute is None):
            # Between-graph replication: each task's sessions see the ps and itself only.
            self._session_config = _distributed_session_config(self._task_type, self._task_id)

    def _set(self, **kwargs) -> RunConfig:
        for key, value in kwargs.items():
            if key not in _REPLACEABLE:
                raise ValueError(f"Replacing {key} is not supported. Allowed properties are "
                                 f"{list(_REPLACEABLE)}.")
            setattr(self, "_" + key, value)
        steps, secs = self._save_checkpoints_steps, self._save_checkpoints_secs
        if "save_checkpoints_steps" in kwargs and "save_checkpoints_secs" in kwargs:
            if steps is not None and secs is not None:
                raise ValueError(_SAVE_CKPT_ERR)
        elif "save_checkpoints_steps" in kwargs and steps is not None:
            self._save_checkpoints_secs = None
        elif "save_checkpoints_secs" in kwargs and secs is not None:
            self._save_checkpoints_steps = None
        _validate(self)
        return self

    def replace(self, **kwargs) -> RunConfig:
        """A copy with some properties replaced.

        Setting one of `save_checkpoints_steps` / `save_checkpoints_secs` clears the other;
        setting both (non-None) is a ValueError, as is an unknown property.
        """
        return copy.deepcopy(self)._set(**kwargs)

    def __deepcopy__(self, memo):
        new = object.__new__(type(self))
        memo[id(self)] = new
        for key, value in self.__dict__.items():
            # Strategies, device functions and session configs are shared, not copied.
            shallow = key in ("_train_distribute", "_eval_distribute", "_device_fn",
                              "_experimental_distribute", "_session_config", "_cluster_spec")
            new.__dict__[key] = value if shallow else copy.deepcopy(value, memo)
        return new

    def __repr__(self) -> str:
        fields = ", ".join(f"{k[1:]}={v!r}" for k, v in sorted(self.__dict__.items()))
        return f"RunConfig({fields})"

    # -- properties --------------------------------------------------------------------------
    cluster_spec = property(lambda self: self._cluster_spec)
    task_type = property(lambda self: self._task_type)
    task_id = property(lambda self: self._task_id)
    master = property(lambda self: self._master)
    evaluation_master = property(lambda self: self._evaluation_master)
    is_chief = property(lambda self: self._is_chief)
    num_ps_replicas = property(lambda self: self._num_ps_replicas)
    num_worker_replicas = property(lambda self: self._num_worker_replicas)
    global_id_in_cluster = property(lambda self: self._global_id_in_cluster)
    service = property(lambda self: self._service)
    model_dir = property(lambda self: self._model_dir)
    tf_random_seed = property(lambda self: self._tf_random_seed)
    save_summary_steps = property(lambda self: self._save_summary_steps)
    save_checkpoints_steps = property(lambda self: self._save_checkpoints_steps)
    save_checkpoints_secs = property(lambda self: self._save_checkpoints_secs)
    session_config = property(lambda self: self._session_config)
    keep_checkpoint_max = property(lambda self: self._keep_checkpoint_max)
    keep_checkpoint_every_n_hours = property(lambda self: self._keep_checkpoint_every_n_hours)
    log_step_count_steps = property(lambda self: self._log_step_count_steps)
    train_distribute = property(lambda self: self._train_distribute)
    eval_distribute = property(lambda self: self._eval_distribute)
    experimental_distribute = property(lambda self: self._experimental_distribute)
    device_fn = property(lambda self: self._device_fn)
    protocol = property(lambda self: self._protocol)
    experimental_max_worker_delay_secs = property(
        lambda self: self._experimental_max_worker_delay_secs)
    session_creation_timeout_secs = property(lambda self: self._session_creation_timeout_secs)
    checkpoint_save_graph_def = property(lambda self: self._checkpoint_save_graph_def)
