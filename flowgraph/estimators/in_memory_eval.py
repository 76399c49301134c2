"""`tf.estimator.experimental.InMemoryEvaluatorHook`: evaluate while training, without a
checkpoint.

At `begin` the hook builds the evaluation graph once (``input_fn`` and the model_fn in
EVAL mode, in a graph of its own), with an assignment from a placeholder for each of
its global variables. When the training session is created, every `every_n_iter`
training steps and at the end it copies the training graph's variable values (matched
by name; variables only one graph has are skipped) into a fresh evaluation session,
runs the metrics over the input (or `steps` batches) and writes the results as
summaries under ``model_dir/eval_<name>`` (``eval`` without a name), as `evaluate` does.

Example
-------
>>> import os, tempfile, numpy as np, flowgraph as tf
>>> def model_fn(features, labels, mode):
...     w = tf.get_variable("w", [1, 1], initializer=tf.zeros_initializer())
...     loss = tf.losses.mean_squared_error(labels, tf.matmul(features["x"], w))
...     opt = tf.train.GradientDescentOptimizer(0.1)
...     return tf.estimator.EstimatorSpec(
...         mode, loss=loss, train_op=opt.minimize(loss, tf.train.get_global_step()))
>>> est = tf.estimator.Estimator(model_fn, model_dir=tempfile.mkdtemp())
>>> x = np.ones((4, 1), np.float32)
>>> fn = tf.estimator.inputs.numpy_input_fn({"x": x}, x, batch_size=4, shuffle=False)
>>> hook = tf.estimator.experimental.InMemoryEvaluatorHook(est, fn, every_n_iter=2)
>>> _ = est.train(tf.estimator.inputs.numpy_input_fn({"x": x}, x, num_epochs=None,
...                                                  shuffle=False),
...               steps=3, hooks=[hook])
>>> sorted(p for p in os.listdir(est.model_dir) if p.startswith("eval"))
['eval']
"""

from __future__ import annotations

from flowgraph.estimators import estimator_eval
from flowgraph.estimators import estimator_util as util
from flowgraph.estimators.model_fn import ModeKeys, validate_hooks
from flowgraph.estimators.run_config import session_config_for

__all__ = ["InMemoryEvaluatorHook"]


def _hook_base():
    return util.train_api().SessionRunHook


class InMemoryEvaluatorHook(_hook_base()):
    """Runs `estimator`'s evaluation on `input_fn` with the variables of the training
    session, every `every_n_iter` steps (and when the session starts and ends).

    Parameters
    ----------
    estimator : tf.estimator.Estimator
        The estimator being trained (its model_fn, params and config build the graph).
    input_fn : callable
        The evaluation input, as for `Estimator.evaluate`.
    steps : int, optional
        Batches per evaluation (default: until the input ends).
    hooks : list of SessionRunHook, optional
        Run in each evaluation session.
    name : str, optional
        Summaries go to ``eval_<name>`` (``eval`` without one).
    every_n_iter : int, default 100
    """

    def __init__(self, estimator, input_fn, steps=None, hooks=None, name=None,
                 every_n_iter=100) -> None:
        if every_n_iter is not None and every_n_iter <= 0:
            raise ValueError(f"invalid every_n_iter={every_n_iter}.")
        config = estimator.config  # an AttributeError for a non-estimator, as in TF
        session_config = getattr(config, "session_config", None)
        if session_config is not None and session_config.HasField("cluster_def"):
            raise ValueError("InMemoryEvaluator does not support custom cluster_def.")
        self._estimator = estimator
        self._input_fn = input_fn
        self._steps = steps
        self._name = name
        self._every_n_iter = every_n_iter
        self._eval_dir = estimator.eval_dir(name)
        self._hooks = list(validate_hooks(hooks))
        self._graph = None
        self._iter_count = 0
        self._timer = util.train_api().SecondOrStepTimer(every_steps=every_n_iter)

    def begin(self) -> None:
        from flowgraph.framework.graph import Graph, GraphKeys, set_random_seed
        from flowgraph.ops import array_ops

        train_lib = util.train_api()
        est = self._estimator
        self._graph = Graph()
        with self._graph.as_default():
            set_random_seed(est.config.tf_random_seed)
            global_step = train_lib.get_or_create_global_step(self._graph)
            features, labels = util.call_input_fn(self._input_fn, ModeKeys.EVAL, est.params,
                                                  est.config)
            spec = util.call_model_fn(est._model_fn, features, labels, ModeKeys.EVAL,
                                      est.params, est.config)
            self._update_op, value_ops = estimator_eval._metric_ops(spec, global_step)
            self._final_hook = train_lib.FinalOpsHook(value_ops)
            self._all_hooks = [estimator_eval._eval_steps_hook(self._steps), self._final_hook,
                               *self._hooks, *spec.evaluation_hooks]
            self._scaffold = spec.scaffold
            self._eval_vars = {v.name: v for v in
                               self._graph.get_collection(GraphKeys.GLOBAL_VARIABLES)}
            self._placeholders = {
                name: array_ops.placeholder(v.dtype.base_dtype, v.shape,
                                            name=f"in_memory_{v.op.name}")
                for name, v in self._eval_vars.items()}
        self._timer.reset()
        self._iter_count = 0

    def after_create_session(self, session, coord) -> None:
        from flowgraph.framework.graph import GraphKeys, get_collection
        from flowgraph.ops.control_flow_ops import group
        from flowgraph.ops.state_ops import assign

        if get_collection(GraphKeys.SAVEABLE_OBJECTS):
            raise ValueError("InMemoryEvaluator does not support saveables other than global "
                             "variables.")
        train_vars = {v.name: v for v in get_collection(GraphKeys.GLOBAL_VARIABLES)}
        shared = sorted(set(train_vars) & set(self._placeholders))
        self._train_vars = {name: train_vars[name] for name in shared}
        with self._graph.as_default():
            self._feed_op = group(*[assign(self._eval_vars[name], self._placeholders[name])
                                    for name in shared])
        self._evaluate(session)

    def _evaluate(self, train_session) -> None:
        train_lib = util.train_api()
        values = train_session.run(self._train_vars)
        feed = {self._placeholders[name]: value for name, value in values.items()}

        def feed_variables(scaffold, session):
            del scaffold
            session.run(self._feed_op, feed_dict=feed)

        with self._graph.as_default():
            scaffold = train_lib.Scaffold(init_fn=feed_variables,
                                          copy_from_scaffold=self._scaffold)
            creator = train_lib.ChiefSessionCreator(
                scaffold=scaffold, master=self._estimator.config.evaluation_master,
                config=session_config_for(self._estimator.config))
            with train_lib.MonitoredSession(session_creator=creator,
                                            hooks=self._all_hooks) as sess:
                while not sess.should_stop():
                    sess.run(self._update_op)
        results = {k: estimator_eval._plain(v)
                   for k, v in self._final_hook.final_ops_values.items()}
        step = int(results.get("global_step", 0))
        results["global_step"] = step
        util.write_eval_results(self._eval_dir, results, step, None)
        self._timer.update_last_triggered_step(self._iter_count)

    def after_run(self, run_context, run_values) -> None:
        self._iter_count += 1
        if self._timer.should_trigger_for_step(self._iter_count):
            self._evaluate(run_context.session)

    def end(self, session) -> None:
        self._evaluate(session)

