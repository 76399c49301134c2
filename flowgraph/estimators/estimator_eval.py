"""`Estimator.evaluate` and `Estimator.predict`: restore a checkpoint, run, collect.

Evaluation runs the metrics' update ops until the input ends (`OutOfRangeError`) or
`steps` batches, then reads every metric value once (a `FinalOpsHook`), and writes the
results as summaries of the checkpoint's global step under ``model_dir/eval`` (or
``eval_<name>``). ``loss`` is always a metric: the mean of the model's loss over the
batches.

Prediction restores the checkpoint (or initializes, with a warning, when there is none)
and yields one dict per example, sliced from each batch.
"""

from __future__ import annotations

import logging
import time

import numpy as np

from flowgraph.estimators import estimator_util as util
from flowgraph.estimators.model_fn import ModeKeys
from flowgraph.estimators.run_config import session_config_for
from flowgraph.framework.graph_release import release_graph

logger = logging.getLogger("tensorflow")


def _eval_steps_hook(steps):
    SessionRunHook = util.train_api().SessionRunHook

    class _StopAfterNEvalsHook(SessionRunHook):
        """Stops after `steps` evaluation batches; logs progress every tenth."""

        def __init__(self, num_evals):
            self._num_evals = num_evals
            self._log_every = max(1, num_evals // 10) if num_evals else 0

        def after_create_session(self, session, coord):
            self._done = 0

        def after_run(self, run_context, run_values):
            self._done += 1
            if self._num_evals is None:
                return
            if self._done % self._log_every == 0 or self._done == self._num_evals:
                logger.info("Evaluation [%d/%d]", self._done, self._num_evals)
            if self._done >= self._num_evals:
                run_context.request_stop()

    if steps is not None and steps <= 0:
        raise ValueError(f"Must specify steps > 0, given: {steps}")
    return _StopAfterNEvalsHook(steps)


def _metric_ops(spec, global_step):
    eval_dict = dict(spec.eval_metric_ops)
    if "loss" in eval_dict:
        raise ValueError(
            'Metric with name "loss" is not allowed, because Estimator already defines a '
            "default metric with the same name.")
    eval_dict["loss"] = util.mean_metric(spec.loss, name="mean_loss")
    from flowgraph.framework.graph import GraphKeys
    from flowgraph.ops import control_flow_ops

    update_ops, value_ops = [], {}
    for name, (value, update) in sorted(eval_dict.items()):
        value_ops[name] = value
        update_ops.append(update)
    if GraphKeys.GLOBAL_STEP in value_ops:
        raise ValueError(f"Metric with name `{GraphKeys.GLOBAL_STEP}` is not allowed, because "
                         f"Estimator already defines a default metric with the same name.")
    value_ops[GraphKeys.GLOBAL_STEP] = global_step
    return control_flow_ops.group(*update_ops), value_ops


def evaluate_model(est, input_fn, steps, hooks, checkpoint_path, name):
    """Evaluate the model of `checkpoint_path` (default: latest); returns the results."""
    from flowgraph.framework.graph import Graph

    if checkpoint_path is None:
        checkpoint_path = est.latest_checkpoint()
        if not checkpoint_path:  # TF evaluates the freshly initialized model
            logger.info("Could not find trained model in model_dir: %s, running "
                        "initialization to evaluate.", est.model_dir)
    stop_hook = _eval_steps_hook(steps)
    graph = Graph()
    try:
        results = _evaluate_in(graph, est, input_fn, hooks, checkpoint_path, stop_hook)
    finally:
        release_graph(graph)  # freed by reference counting, not by a full collection
    util.write_eval_results(est.eval_dir(name), results, results["global_step"],
                            checkpoint_path)
    return results


def _evaluate_in(graph, est, input_fn, hooks, checkpoint_path, stop_hook):
    train_lib = util.train_api()
    import contextlib

    from flowgraph.framework.graph import set_random_seed

    config = est.config
    strategy = config.eval_distribute
    with graph.as_default(), (strategy.scope() if strategy is not None
                              else contextlib.nullcontext()):
        set_random_seed(config.tf_random_seed)
        global_step = train_lib.get_or_create_global_step(graph)
        if strategy is None:
            features, labels = util.call_input_fn(input_fn, ModeKeys.EVAL, est.params,
                                                  config)
            spec = util.call_model_fn(est._model_fn, features, labels, ModeKeys.EVAL,
                                      est.params, config)
        else:  # one model per replica (flowgraph/estimators/estimator_distribute.py)
            from flowgraph.estimators.estimator_distribute import distributed_spec

            spec = distributed_spec(est, input_fn, strategy, ModeKeys.EVAL)
        update_op, value_ops = _metric_ops(spec, global_step)
        final_hook = train_lib.FinalOpsHook(value_ops)
        all_hooks = [stop_hook, final_hook, *hooks, *spec.evaluation_hooks]
        scaffold = spec.scaffold or train_lib.Scaffold()
        logger.info("Starting evaluation at %s", time.strftime("%Y-%m-%dT%H:%M:%S"))
        start = time.time()
        creator = train_lib.ChiefSessionCreator(
            scaffold=scaffold, checkpoint_filename_with_path=checkpoint_path,
            master=config.evaluation_master, config=session_config_for(config))
        with train_lib.MonitoredSession(session_creator=creator, hooks=all_hooks) as sess:
            while not sess.should_stop():
                sess.run(update_op)
        logger.info("Inference Time : %.5fs", time.time() - start)
        logger.info("Finished evaluation at %s", time.strftime("%Y-%m-%d-%H:%M:%S"))
    results = {k: _plain(v) for k, v in final_hook.final_ops_values.items()}
    results["global_step"] = np.int64(results.get("global_step", 0))  # TF's type
    return results


def _plain(value):
    """0-d arrays become NumPy scalars (what TF's evaluate returns)."""
    shape = getattr(value, "shape", None)
    return value[()] if shape == () else value


def _select_predictions(predictions, predict_keys):
    if not isinstance(predictions, dict):
        if predict_keys:
            raise ValueError(f"predict_keys argument is not valid in case of non-dict "
                             f"predictions ({predictions.name}).")
        return predictions
    if not predict_keys:
        return predictions
    # As TF: keys that name no prediction are skipped; only none at all is an error
    keys = [predict_keys] if isinstance(predict_keys, str) else list(predict_keys)
    chosen = {k: v for k, v in predictions.items() if k in keys}
    if not chosen:
        raise ValueError(f"Expected to run at least one output from {predictions.keys()}, "
                         f"provided {predict_keys}.")
    return chosen


def _batch_length(values: dict) -> int:
    length = None
    for key, value in values.items():
        n = value.shape[0] if getattr(value, "ndim", 0) else None
        if n is None:
            raise ValueError(f"Prediction '{key}' is a scalar; with yield_single_examples=True "
                             f"every prediction needs a batch dimension. Use "
                             f"yield_single_examples=False.")
        if length is None:
            length = n
        elif n != length:
            raise ValueError(f"Batch length of predictions should be same. {key} has "
                             f"different batch length than others ({n} vs {length}).")
    return length or 0


def predict_model(est, input_fn, predict_keys, hooks, checkpoint_path, yield_single_examples):
    """Generator of predictions (one dict per example, or per batch)."""
    train_lib = util.train_api()
    from flowgraph.framework.graph import Graph, set_random_seed

    config = est.config
    if checkpoint_path is None:
        checkpoint_path = est.latest_checkpoint()
        if not checkpoint_path:
            logger.info("Could not find trained model in model_dir: %s, running "
                        "initialization to predict.", est.model_dir)
    graph = Graph()
    with graph.as_default():
        set_random_seed(config.tf_random_seed)
        train_lib.get_or_create_global_step(graph)
        features, _ = util.call_input_fn(input_fn, ModeKeys.PREDICT, est.params, config)
        spec = util.call_model_fn(est._model_fn, features, None, ModeKeys.PREDICT,
                                  est.params, config)
        predictions = _select_predictions(spec.predictions, predict_keys)
        all_hooks = [*hooks, *spec.prediction_hooks]
        creator = train_lib.ChiefSessionCreator(
            scaffold=spec.scaffold or train_lib.Scaffold(),
            checkpoint_filename_with_path=checkpoint_path, master=config.master,
            config=session_config_for(config))
        sess = train_lib.MonitoredSession(session_creator=creator, hooks=all_hooks)
    single = not isinstance(predictions, dict)
    try:
        yield from _predictions(graph, sess, predictions, single, yield_single_examples)
    finally:
        release_graph(graph)


class _closing_in:
    """``with sess:`` whose exit (the hooks' `end`) runs with `graph` as the default."""

    def __init__(self, graph, sess) -> None:
        self._graph, self._sess = graph, sess

    def __enter__(self):
        return self._sess.__enter__()

    def __exit__(self, *exc):
        with self._graph.as_default():
            return self._sess.__exit__(*exc)


def _predictions(graph, sess, predictions, single: bool, yield_single_examples: bool):
    # Each run (and the close) in the predict graph: hooks call get_global_step() & co.
    # there; the graph is not left as the default while the caller holds a prediction.
    with _closing_in(graph, sess):
        while not sess.should_stop():
            with graph.as_default():
                values = sess.run(predictions)
            if not yield_single_examples:
                yield values
                continue
            as_dict = {"_": values} if single else values
            for i in range(_batch_length(as_dict)):
                if single:
                    yield values[i]
                else:
                    yield {k: v[i] for k, v in values.items()}
