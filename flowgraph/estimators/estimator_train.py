"""`Estimator.train`: build the training graph and run it in a monitored session.

Everything around the bare ``run([train_op, loss])`` loop is a hook, chosen here:

| behaviour | hook | who runs it |
| --- | --- | --- |
| stop after `steps` / at `max_steps` | `StopAtStepHook` | every worker |
| fail on a NaN loss | `NanTensorHook` | every worker |
| ``loss = ..., step = ...`` every `log_step_count_steps` | `LoggingTensorHook` | every worker |
| global_step/sec, summaries | `StepCounterHook`, `SummarySaverHook` (by the session) | chief |
| checkpoints + `saving_listeners` | `CheckpointSaverHook` | chief |
| progress bar (stderr is a terminal and tqdm importable) | `_ProgressBarHook` | every worker |

The loop itself does nothing else per step, the built-in hooks above are skipped on the
steps where they have nothing to do (`flowgraph.train.hook_schedule`), and those steps
go straight to the raw session (`flowgraph.train.flat_run`), so a step costs little
more than a bare `Session.run` (docs/performance.md, "The training harness").

A KeyboardInterrupt saves a checkpoint of the current step before it propagates (TF
does not), so an interrupted run resumes where it stopped.
"""

from __future__ import annotations

import logging
import os
import sys

from flowgraph.estimators import estimator_util as util
from flowgraph.estimators.model_fn import ModeKeys
from flowgraph.estimators.run_config import session_config_for
from flowgraph.framework.graph_release import release_graph

logger = logging.getLogger("tensorflow")


def _tqdm_or_none():
    if os.environ.get("CI") or not getattr(sys.stderr, "isatty", lambda: False)():
        return None
    try:
        import tqdm
    except ImportError:
        return None
    return tqdm.tqdm


def _progress_hook(total):
    """A hook drawing a tqdm bar of training steps, or None when not on a terminal."""
    bar_cls = _tqdm_or_none()
    if bar_cls is None:
        return None
    SessionRunHook = util.train_api().SessionRunHook

    class _ProgressBarHook(SessionRunHook):
        def begin(self):
            self._bar = None

        def after_create_session(self, session, coord):
            self._bar = bar_cls(total=total, unit="step", leave=False, dynamic_ncols=True)

        def after_run(self, run_context, run_values):
            self._bar.update(1)

        def end(self, session):
            if self._bar is not None:
                self._bar.close()

    return _ProgressBarHook()


def _default_saver(config):
    from flowgraph.framework.graph import GraphKeys, add_to_collection, get_collection
    Saver = util.train_api().Saver

    if not get_collection(GraphKeys.SAVERS):
        add_to_collection(GraphKeys.SAVERS, Saver(
            sharded=True, max_to_keep=config.keep_checkpoint_max,
            keep_checkpoint_every_n_hours=config.keep_checkpoint_every_n_hours,
            defer_build=True, save_relative_paths=True))


def _ensure_loss_summary(loss) -> None:
    from flowgraph import summary
    from flowgraph.framework.graph import GraphKeys, add_to_collection, get_collection

    if not any(getattr(x, "op", None) is not None and x.op.name == "loss"
               for x in get_collection(GraphKeys.SUMMARIES)):
        summary.scalar("loss", loss)
    add_to_collection(GraphKeys.LOSSES, loss)


def _stop_hook(steps, max_steps):
    StopAtStepHook = util.train_api().StopAtStepHook

    if steps is None and max_steps is None:
        return None
    return StopAtStepHook(num_steps=steps, last_step=max_steps)


def _save_on_interrupt(mon_sess, saver, model_dir: str, global_step) -> None:
    """Save a checkpoint after a KeyboardInterrupt, using the monitored session's raw
    session (the graph is finalized, so the saver's ops already exist)."""
    def save(step_context):
        session = step_context.session
        step = int(session.run(global_step))
        path = saver.save(session, os.path.join(model_dir, "model.ckpt"), global_step=step)
        logger.info("Training interrupted: saved checkpoint for step %d into %s.", step, path)

    try:
        mon_sess.run_step_fn(save)
    except Exception as e:  # the interrupt may have left the session unusable
        logger.warning("Training interrupted; could not save a checkpoint: %s", e)


def _device_scope(graph, config):
    """The training graph's device scope, as TF's Estimator: the config's `device_fn`,
    else with ps tasks in the cluster (TF_CONFIG) a `replica_device_setter` putting the
    variables on them and the rest on this task."""
    import contextlib

    device_fn = config.device_fn
    if device_fn is None and config.num_ps_replicas > 0:
        from flowgraph.distributed.device_setter import STANDARD_PS_OPS, replica_device_setter

        worker = (f"/job:{config.task_type}/task:{config.task_id}" if config.task_type
                  else "/job:worker")
        device_fn = replica_device_setter(
            ps_tasks=config.num_ps_replicas, worker_device=worker, merge_devices=True,
            ps_ops=list(STANDARD_PS_OPS), cluster=config.cluster_spec)
    return graph.device(device_fn) if device_fn is not None else contextlib.nullcontext()


def train_model(est, input_fn, hooks, steps, max_steps, saving_listeners):
    """Build the training graph and run it; returns the loss of the final step."""
    from flowgraph.framework.graph import Graph

    graph = Graph()
    try:
        return _train_in(graph, est, input_fn, hooks, steps, max_steps, saving_listeners)
    finally:
        release_graph(graph)  # freed by reference counting, not by a full collection


def _train_in(graph, est, input_fn, hooks, steps, max_steps, saving_listeners):
    train_lib = util.train_api()
    import contextlib

    from flowgraph.framework.graph import GraphKeys, get_collection, set_random_seed

    config = est.config
    strategy = config.train_distribute
    with contextlib.ExitStack() as scopes:
        scopes.enter_context(graph.as_default())
        scopes.enter_context(_device_scope(graph, config))
        if strategy is not None:
            scopes.enter_context(strategy.scope())
            if hasattr(strategy, "_scale_loss_for_estimator_enabled"):
                scopes.enter_context(strategy._scale_loss_for_estimator_enabled())
        set_random_seed(config.tf_random_seed)
        global_step = train_lib.get_or_create_global_step(graph)
        if strategy is None:
            features, labels = util.call_input_fn(input_fn, ModeKeys.TRAIN, est.params,
                                                  config)
            spec = util.call_model_fn(est._model_fn, features, labels, ModeKeys.TRAIN,
                                      est.params, config)
        else:
            from flowgraph.estimators.estimator_distribute import distributed_spec

            spec = distributed_spec(est, input_fn, strategy, ModeKeys.TRAIN)
        if est._warm_start_settings is not None and not est.latest_checkpoint():
            from flowgraph.estimators import warm_starting

            logger.info("Warm-starting with WarmStartSettings: %s", est._warm_start_settings)
            warm_starting.warm_start(*est._warm_start_settings)
        _ensure_loss_summary(spec.loss)
        scaffold = spec.scaffold or train_lib.Scaffold()
        if scaffold.saver is None:
            _default_saver(config)

        worker_hooks = list(hooks)
        stop_hook = _stop_hook(steps, max_steps)
        if stop_hook is not None:
            worker_hooks.append(stop_hook)
        worker_hooks.append(train_lib.NanTensorHook(spec.loss))
        if config.log_step_count_steps is not None:
            worker_hooks.append(train_lib.LoggingTensorHook(
                {"loss": spec.loss, "step": global_step},
                every_n_iter=config.log_step_count_steps))
        worker_hooks.extend(spec.training_hooks)
        progress = _progress_hook(steps or max_steps)
        if progress is not None:
            worker_hooks.append(progress)

        chief_hooks = []
        saver_hooks = [h for h in worker_hooks + list(spec.training_chief_hooks)
                       if isinstance(h, train_lib.CheckpointSaverHook)]
        if (config.save_checkpoints_secs or config.save_checkpoints_steps) and not saver_hooks:
            chief_hooks = [train_lib.CheckpointSaverHook(
                est.model_dir, save_secs=config.save_checkpoints_secs,
                save_steps=config.save_checkpoints_steps, scaffold=scaffold,
                save_graph_def=config.checkpoint_save_graph_def)]
            saver_hooks = chief_hooks[:1]
        if saving_listeners:
            if not saver_hooks:
                raise ValueError(
                    "There should be a CheckpointSaverHook to use saving_listeners. Please set "
                    "one of the RunConfig.save_checkpoints_steps or "
                    "RunConfig.save_checkpoints_secs.")
            for listener in saving_listeners:
                if listener not in saver_hooks[0]._listeners:
                    saver_hooks[0]._listeners.append(listener)

        mon_sess = train_lib.MonitoredTrainingSession(
            master=config.master, is_chief=config.is_chief, checkpoint_dir=est.model_dir,
            scaffold=scaffold, hooks=worker_hooks,
            chief_only_hooks=tuple(chief_hooks) + tuple(spec.training_chief_hooks),
            save_checkpoint_secs=0, save_summaries_steps=config.save_summary_steps,
            config=session_config_for(config), max_wait_secs=config.session_creation_timeout_secs,
            log_step_count_steps=config.log_step_count_steps)
        saver = scaffold.saver or (get_collection(GraphKeys.SAVERS) or [None])[0]

        # One tuple, passed on every step: the monitored session's flat path repeats it.
        fetches = (spec.train_op, spec.loss)
        loss = None  # None until a step has run (a loss value never is)
        no_steps = False
        with mon_sess:
            try:
                run = mon_sess.run
                should_stop = mon_sess.should_stop
                # As TF, warn only when the session stops before a first step (input
                # that ends at once stops the loop silently).
                no_steps = should_stop()
                while not should_stop():
                    loss = run(fetches)[1]
            except KeyboardInterrupt:
                if config.is_chief and saver is not None and loss is not None:
                    _save_on_interrupt(mon_sess, saver, est.model_dir, global_step)
                raise
    if no_steps:
        logger.warning("Training with estimator made no steps. Perhaps input is empty or "
                       "misspecified.")
    return loss
