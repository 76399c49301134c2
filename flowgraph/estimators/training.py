"""`TrainSpec`, `EvalSpec` and `train_and_evaluate` (locally, or as a cluster role).

With ``TF_CONFIG`` naming a cluster, `train_and_evaluate` runs this process's role
instead (ps, chief, worker or evaluator; see `_run_cluster_role` and
docs/distributed.md).

Locally, `train_and_evaluate` is one `Estimator.train` call to `train_spec.max_steps`
with a checkpoint listener: after each checkpoint save (but the first) it evaluates,
if at least `throttle_secs` passed since the last evaluation, and runs the exporters;
when training ends it evaluates the final checkpoint unless that one was just
evaluated. `start_delay_secs` only matters to a distributed evaluator task.

Beyond TF, `eval_spec` may be a list of EvalSpecs (distinct names): each is evaluated
at the same moments and summarized under its own ``eval_<name>`` directory; the
returned metrics are then a dict ``{name: metrics}``, and the export results a dict
``{name: [...]}``.

Example
-------
>>> spec = EvalSpec(input_fn=lambda: None, steps=None, throttle_secs=0)
>>> spec.steps, spec.start_delay_secs, spec.throttle_secs
(None, 120, 0)
"""

from __future__ import annotations

import collections
import logging
import os
import time

_POLL_S = 0.1  # how often a worker looks for the chief's first checkpoint
_CHIEF_POLL_S = 0.5  # how often a ps checks that the chief is still there
_CHIEF_GONE_S = 3.0  # how long the chief must stay unreachable before a ps exits

__all__ = ["EvalSpec", "TrainSpec", "train_and_evaluate"]

logger = logging.getLogger("tensorflow")


def _check_hooks(hooks, what):
    from flowgraph.estimators.estimator_util import check_hooks

    return tuple(check_hooks(hooks, what))


class TrainSpec(collections.namedtuple("TrainSpec", ["input_fn", "max_steps", "hooks",
                                                     "saving_listeners"])):
    """How to train in `train_and_evaluate`: input_fn, `max_steps` (None: until the input
    ends), extra `hooks` and checkpoint `saving_listeners`."""

    __slots__ = ()

    def __new__(cls, input_fn, max_steps=None, hooks=None, saving_listeners=None):
        if not callable(input_fn):
            raise TypeError(f"`input_fn` must be callable, given: {input_fn!r}")
        if max_steps is not None and max_steps <= 0:
            raise ValueError(f"Must specify max_steps > 0, given: {max_steps}")
        from flowgraph.estimators.estimator_util import check_listeners

        return super().__new__(cls, input_fn, max_steps, _check_hooks(hooks, "Hooks"),
                               tuple(check_listeners(saving_listeners)))


class EvalSpec(collections.namedtuple("EvalSpec", [
        "input_fn", "steps", "name", "hooks", "exporters", "start_delay_secs",
        "throttle_secs"])):
    """How to evaluate (and export) in `train_and_evaluate`.

    Parameters
    ----------
    input_fn : callable
    steps : int or None, default 100
        Batches per evaluation; None runs until the input ends.
    name : str, optional
        Evaluations go to ``model_dir/eval_<name>``.
    hooks : list of SessionRunHook, optional
    exporters : Exporter or list of Exporter, optional
        Anything with ``name`` and ``export(estimator, export_path, checkpoint_path,
        eval_result, is_the_final_export)``.
    start_delay_secs : int, default 120
    throttle_secs : int, default 600
        Minimum seconds between two evaluations.
    """

    __slots__ = ()

    def __new__(cls, input_fn, steps=100, name=None, hooks=None, exporters=None,
                start_delay_secs=120, throttle_secs=600):
        if not callable(input_fn):
            raise TypeError(f"`input_fn` must be callable, given: {input_fn!r}")
        if steps is not None and steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        if start_delay_secs < 0:
            raise ValueError(f"Must specify start_delay_secs >= 0, given: {start_delay_secs}")
        if throttle_secs < 0:
            raise ValueError(f"Must specify throttle_secs >= 0, given: {throttle_secs}")
        if name is not None and not isinstance(name, str):
            raise TypeError(f"`name` must be string, given: {name!r}")
        return super().__new__(cls, input_fn, steps, name, _check_hooks(hooks, "Hooks"),
                               _validate_exporters(exporters), start_delay_secs,
                               throttle_secs)


def _validate_exporters(exporters) -> tuple:
    if exporters is None:
        return ()
    if not isinstance(exporters, (list, tuple)):
        exporters = [exporters]
    names = set()
    for exporter in exporters:
        if not callable(getattr(exporter, "export", None)):
            raise TypeError(f"`exporters` must be an Exporter, an iterable of Exporter, or "
                            f"`None`, found {exporter!r}.")
        name = getattr(exporter, "name", None)
        if not name or not isinstance(name, str):
            raise ValueError(f"An Exporter must have a non-empty string name; got {name!r}")
        if name in names:
            all_names = [e.name for e in exporters]
            raise ValueError(f"`exporters` must have unique names. Such a name cannot be "
                             f"`None`. All exporter names: {all_names}")
        names.add(name)
    return tuple(exporters)


def _as_eval_specs(eval_spec) -> list[EvalSpec]:
    specs = list(eval_spec) if isinstance(eval_spec, (list, tuple)) and not isinstance(
        eval_spec, EvalSpec) else [eval_spec]
    if not specs:
        raise ValueError("eval_spec must be an EvalSpec or a non-empty list of EvalSpecs.")
    for spec in specs:
        if not isinstance(spec, EvalSpec):
            raise TypeError(f"`eval_spec` must have type `tf.estimator.EvalSpec`. Got: "
                            f"{type(spec)}")
    if len(specs) > 1:
        names = [s.name for s in specs]
        if None in names or len(set(names)) != len(names):
            raise ValueError(f"With several EvalSpecs each needs a distinct name (they are "
                             f"written to eval_<name>); got names {names}.")
    return specs


class _Evaluator:
    """Evaluates the latest checkpoint with one EvalSpec and runs its exporters."""

    def __init__(self, estimator, spec: EvalSpec, max_steps) -> None:
        self._estimator = estimator
        self._spec = spec
        self._max_steps = max_steps
        self._previous = None
        self.metrics = None
        self.export_results: list = []

    def evaluate_and_export(self) -> bool:
        checkpoint = self._estimator.latest_checkpoint()
        if not checkpoint or checkpoint == self._previous:
            return False
        from flowgraph.framework import errors

        spec = self._spec
        try:
            metrics = self._estimator.evaluate(spec.input_fn, steps=spec.steps,
                                               hooks=spec.hooks, checkpoint_path=checkpoint,
                                               name=spec.name)
        except errors.NotFoundError:  # the chief's saver rotated it out meanwhile
            if self._estimator.latest_checkpoint() != checkpoint:
                return False  # the next poll evaluates the newest one
            raise
        final = bool(self._max_steps) and metrics["global_step"] >= self._max_steps
        base = os.path.join(self._estimator.model_dir, "export")
        self.export_results = [
            exporter.export(self._estimator, os.path.join(base, exporter.name), checkpoint,
                            metrics, final)
            for exporter in spec.exporters]
        self.metrics = metrics
        self._previous = checkpoint
        return True


def _listener_class():
    from flowgraph.estimators.estimator_util import train_api

    CheckpointSaverListener = train_api().CheckpointSaverListener

    class _EvaluateOnCheckpoint(CheckpointSaverListener):
        """Evaluates after checkpoint saves, at most every `throttle_secs`, and at the end."""

        def __init__(self, evaluators, throttle_secs):
            self._evaluators = evaluators
            self._throttle_secs = throttle_secs

        def begin(self):
            self._first = True
            self._last_time = None
            self._last_step = None

        def after_save(self, session, global_step_value):
            if self._first:  # the checkpoint of the untrained model
                self._first = False
                return
            now = time.time()
            if self._last_time is not None and now - self._last_time < self._throttle_secs:
                logger.info("Skip the current checkpoint eval due to throttle secs (%s secs).",
                            self._throttle_secs)
                return
            self._evaluate(global_step_value)

        def end(self, session, global_step_value):
            if global_step_value != self._last_step:
                self._evaluate(global_step_value)

        def _evaluate(self, step):
            self._last_time = time.time()
            self._last_step = step
            for evaluator in self._evaluators:
                evaluator.evaluate_and_export()

    return _EvaluateOnCheckpoint


def train_and_evaluate(estimator, train_spec: TrainSpec, eval_spec):
    """Train `estimator` per `train_spec`, evaluating per `eval_spec` along the way.

    Returns ``(eval_result, export_results)`` of the last evaluation (TF 2.x); with a
    list of EvalSpecs, both are dicts keyed by spec name.
    """
    from flowgraph.estimators.estimator import Estimator

    if not isinstance(estimator, Estimator):
        raise TypeError(f"`estimator` must have type `tf.estimator.Estimator`. Got: "
                        f"{type(estimator)}")
    if not isinstance(train_spec, TrainSpec):
        raise TypeError(f"`train_spec` must have type `tf.estimator.TrainSpec`. Got: "
                        f"{type(train_spec)}")
    specs = _as_eval_specs(eval_spec)
    config = estimator.config
    logger.info("Not using Distribute Coordinator.")  # TF's first two lines
    if config.task_type is not None and (config.cluster_spec or config.task_type == "evaluator"):
        return _run_cluster_role(estimator, train_spec, specs, eval_spec)
    logger.info("Running training and evaluation locally (non-distributed).")
    logger.info("Start train and evaluate loop. The evaluate will happen after every "
                "checkpoint. Checkpoint frequency is determined based on RunConfig arguments: "
                "save_checkpoints_steps %s or save_checkpoints_secs %s.",
                config.save_checkpoints_steps, config.save_checkpoints_secs)
    evaluators = [_Evaluator(estimator, s, train_spec.max_steps) for s in specs]
    listener = _listener_class()(evaluators, min(s.throttle_secs for s in specs))
    estimator.train(train_spec.input_fn, hooks=list(train_spec.hooks),
                    max_steps=train_spec.max_steps,
                    saving_listeners=[*train_spec.saving_listeners, listener])
    for evaluator in evaluators:  # training was skipped (max_steps already reached)
        if evaluator.metrics is None:
            evaluator.evaluate_and_export()
    if isinstance(eval_spec, EvalSpec):
        return evaluators[0].metrics, evaluators[0].export_results
    return ({s.name: e.metrics for s, e in zip(specs, evaluators)},
            {s.name: e.export_results for s, e in zip(specs, evaluators)})


# -- distributed roles (TF_CONFIG) ---------------------------------------------------------
def _run_cluster_role(estimator, train_spec, specs, eval_spec):
    """The role TF_CONFIG gives this process: ps tasks serve the variables, the chief and
    the workers train against them, the evaluator evaluates each new checkpoint.

    Returns ``(None, None)`` for trainers (TF's train_and_evaluate does the same), the
    last evaluation for the evaluator; a ps serves until its process is stopped."""
    from flowgraph.distributed import Server, replica_device_setter

    config = estimator.config
    role = config.task_type
    if role == "evaluator":
        return _run_evaluator(estimator, train_spec, specs, eval_spec)
    if role not in ("ps", "chief", "master", "worker"):
        raise ValueError(f"train_and_evaluate: unknown task type {role!r} in TF_CONFIG; "
                         "expected chief, master, worker, ps or evaluator.")
    if role != "ps" and config.num_worker_replicas <= 1 and config.num_ps_replicas == 0:
        server = None  # a one-trainer cluster trains in-process, as in TensorFlow
    else:
        server = Server(config.cluster_spec, job_name=role, task_index=config.task_id,
                        protocol=config.protocol)
    if role == "ps":
        logger.info("Parameter server %s:%s serving.", role, config.task_id)
        _serve_until_chief_exits(server, config)
        return None, None
    if config.device_fn is None and config.num_ps_replicas > 0:
        estimator._config = config.replace(device_fn=replica_device_setter(
            ps_tasks=config.num_ps_replicas, cluster=config.cluster_spec,
            worker_device=f"/job:{role}/task:{config.task_id}"))
    if not config.is_chief:
        _wait_for_chief(estimator, config)
    try:
        estimator.train(train_spec.input_fn, hooks=list(train_spec.hooks),
                        max_steps=train_spec.max_steps,
                        saving_listeners=list(train_spec.saving_listeners))
    finally:
        estimator._config = config
    return None, None


def _serve_until_chief_exits(server, config) -> None:
    """Serve; once the chief was reachable and then stays unreachable for
    `_CHIEF_GONE_S` (its training ended, or it died), stop (TensorFlow's ps serves
    forever)."""
    from flowgraph.distributed.rpc import TaskClient
    from flowgraph.framework import errors

    spec = config.cluster_spec
    job = next((j for j in ("chief", "master") if j in spec.jobs), "worker")
    chief = TaskClient(spec.task_address(job, 0), f"/job:{job}/task:0")
    seen, gone_since = False, None
    try:
        while True:
            try:
                chief.call("GetStatus", {}, timeout_s=1.0)
                seen, gone_since = True, None
            except errors.OpError:
                if seen:
                    gone_since = gone_since or time.monotonic()
                    if time.monotonic() - gone_since > _CHIEF_GONE_S:
                        logger.info("The chief is gone: parameter server exits.")
                        return
            time.sleep(_CHIEF_POLL_S)
    finally:
        chief.close()
        server.stop(grace_s=1.0)


def _wait_for_chief(estimator, config) -> None:
    """Wait for the chief's first checkpoint: it is written right after the chief
    initialized the variables on the ps (instead of SessionManager's 30 s sleeps)."""
    deadline = time.monotonic() + (config.session_creation_timeout_secs or 7200)
    while estimator.latest_checkpoint() is None:
        if time.monotonic() > deadline:
            from flowgraph.framework import errors

            raise errors.DeadlineExceededError(
                None, None, f"Worker {config.task_id} waited "
                f"{config.session_creation_timeout_secs} s for the chief's first checkpoint "
                f"in {estimator.model_dir}; is the chief running with the same model_dir?")
        time.sleep(_POLL_S)


def _run_evaluator(estimator, train_spec, specs, eval_spec):
    """Evaluate each new checkpoint (at most every `throttle_secs`, after
    `start_delay_secs`) until one at or past `train_spec.max_steps`."""
    if len(specs) > 1:
        raise ValueError("A distributed evaluator takes one EvalSpec; got "
                         f"{len(specs)}. Start one evaluator per EvalSpec.")
    spec = specs[0]
    evaluator = _Evaluator(estimator, spec, train_spec.max_steps)
    time.sleep(spec.start_delay_secs)
    while True:
        started = time.time()
        if evaluator.evaluate_and_export():
            step = evaluator.metrics.get("global_step")
            if train_spec.max_steps and step is not None and step >= train_spec.max_steps:
                logger.info("Exiting evaluation, global step %s >= train max_steps %s.",
                            step, train_spec.max_steps)
                return evaluator.metrics, evaluator.export_results
        elif not estimator.latest_checkpoint():
            logger.info("Waiting for the first checkpoint in %s.", estimator.model_dir)
        time.sleep(max(_POLL_S, spec.throttle_secs - (time.time() - started)))
