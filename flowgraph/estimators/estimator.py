"""`tf.estimator.Estimator`: train, evaluate and predict with a `model_fn`.

Each call builds a fresh graph: it sets the graph seed from ``config.tf_random_seed``,
creates the global step, calls ``input_fn`` and then ``model_fn(features, labels, mode,
params, config)`` (the optional arguments only if its signature names them), validates
the returned `EstimatorSpec` for the mode, restores the latest checkpoint of `model_dir`
and runs a monitored session whose built-in behaviour is hooks. The training loop is in
`estimator_train`, evaluation and prediction in `estimator_eval`.

Example
-------
>>> import numpy as np, flowgraph as tf
>>> def model_fn(features, labels, mode):
...     w = tf.get_variable("w", [], initializer=tf.zeros_initializer())
...     loss = tf.reduce_mean(tf.square(features * w - labels))
...     step = tf.train.get_global_step()
...     grad, = tf.gradients(loss, [w])
...     train_op = tf.group(tf.assign_sub(w, 0.1 * grad), tf.assign_add(step, 1))
...     return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
...                                       predictions={"y": features * w})
>>> def input_fn():
...     return tf.constant([1.0, 2.0]), tf.constant([2.0, 4.0])
>>> est = tf.estimator.Estimator(model_fn)
>>> _ = est.train(input_fn, steps=50)
>>> round(float(est.get_variable_value("w")), 2)
2.0
"""

from __future__ import annotations

import copy
import logging
import os
import tempfile

from flowgraph.estimators import estimator_util as util
from flowgraph.estimators.model_fn import ModeKeys
from flowgraph.estimators.run_config import RunConfig, config_log_text, default_session_config
from flowgraph.estimators.warm_starting import settings_from

__all__ = ["Estimator"]

logger = logging.getLogger("tensorflow")


def _resolve_model_dir(config: RunConfig, model_dir) -> RunConfig:
    model_dir = os.fspath(model_dir) if model_dir is not None else None
    if model_dir is not None and config.model_dir is not None and model_dir != config.model_dir:
        raise ValueError(
            f"`model_dir` are set both in constructor and `RunConfig`, but with different "
            f"values. In constructor: '{model_dir}', in `RunConfig`: '{config.model_dir}' ")
    model_dir = model_dir or config.model_dir
    if model_dir is None:
        model_dir = tempfile.mkdtemp()
        logger.warning("Using temporary folder as model directory: %s", model_dir)
    if config.model_dir != model_dir:
        config = config.replace(model_dir=model_dir)
    if config.session_config is None:  # as TensorFlow: the Estimator's default one
        config = config.replace(session_config=default_session_config())
    return config


class Estimator:
    """Trains, evaluates and predicts with the model built by `model_fn`.

    Parameters
    ----------
    model_fn : callable
        ``model_fn(features, labels, mode, params, config)`` returning an
        `EstimatorSpec`; `labels`, `mode`, `params` and `config` are optional.
    model_dir : str or PathLike, optional
        Checkpoints and summaries go here; a new temporary directory when neither this
        nor ``config.model_dir`` is set (its path is logged).
    config : RunConfig, optional
    params : dict, optional
        Hyperparameters passed to model_fn (a copy each call).
    warm_start_from : str or WarmStartSettings, optional
        A checkpoint or model_dir to initialize from when `model_dir` has no checkpoint.
    """

    def __init__(self, model_fn, model_dir=None, config=None, params=None,
                 warm_start_from=None) -> None:
        if model_fn is None:
            raise ValueError("model_fn must be provided to Estimator.")
        if not callable(model_fn):
            raise TypeError(f"model_fn must be callable; got {type(model_fn).__name__}")
        if config is None:
            config = RunConfig()
            logger.info("Using default config.")
        elif not isinstance(config, RunConfig):
            raise ValueError(f"config must be an instance of `RunConfig`, but provided "
                             f"{config!r}.")
        util.verify_model_fn_args(model_fn, params)
        self._config = _resolve_model_dir(config, model_dir)
        self._model_dir = self._config.model_dir
        self._model_fn = model_fn
        self._params = copy.deepcopy(params or {})
        self._warm_start_settings = settings_from(warm_start_from)
        logger.info("Using config: %s", config_log_text(self._config))

    # -- properties --------------------------------------------------------------------------
    @property
    def model_dir(self) -> str:
        return self._model_dir

    @property
    def config(self) -> RunConfig:
        return copy.deepcopy(self._config)

    @property
    def params(self) -> dict:
        return copy.deepcopy(self._params)

    @property
    def model_fn(self):
        """The model_fn as ``fn(features, labels, mode, config)`` with params bound."""
        def public_model_fn(features, labels, mode, config):
            return util.call_model_fn(self._model_fn, features, labels, mode, self.params,
                                      config)

        return public_model_fn

    # -- checkpoints ---------------------------------------------------------------------------
    def latest_checkpoint(self) -> str | None:
        """The prefix of the newest checkpoint in `model_dir`, or None."""
        from flowgraph.train import checkpoint_state

        return checkpoint_state.latest_checkpoint(self.model_dir)

    def _require_checkpoint(self) -> str:
        path = self.latest_checkpoint()
        if not path:
            raise ValueError(f"Could not find trained model in model_dir: {self.model_dir}.")
        return path

    def get_variable_names(self) -> list[str]:
        """Names of the variables in the latest checkpoint."""
        from flowgraph.train import checkpoint_utils

        return [name for name, _ in checkpoint_utils.list_variables(self._require_checkpoint())]

    def get_variable_value(self, name: str):
        """The value of variable `name` in the latest checkpoint (a NumPy array)."""
        from flowgraph.train import checkpoint_utils

        return checkpoint_utils.load_variable(self._require_checkpoint(), name)

    def eval_dir(self, name: str | None = None) -> str:
        """Where `evaluate(name=...)` writes its summaries: ``model_dir/eval[_name]``."""
        return os.path.join(self.model_dir, "eval" if not name else "eval_" + name)

    # -- the three modes -----------------------------------------------------------------------
    def train(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None):
        """Train for `steps` more steps, or up to global step `max_steps`, or until the
        input ends.

        With `max_steps`, a model already at or past it returns at once (so repeated
        calls are idempotent). Returns self.
        """
        if steps is not None and max_steps is not None:
            raise ValueError("Can not provide both steps and max_steps.")
        if steps is not None and steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        if max_steps is not None and max_steps <= 0:
            raise ValueError(f"Must specify max_steps > 0, given: {max_steps}")
        if max_steps is not None:
            start_step = util.global_step_of_checkpoint(self.model_dir)
            if max_steps <= start_step:
                logger.info("Skipping training since max_steps has already saved.")
                return self
        hooks = util.check_hooks(hooks)
        listeners = util.check_listeners(saving_listeners)
        from flowgraph.estimators import estimator_train

        loss = estimator_train.train_model(self, input_fn, hooks, steps, max_steps, listeners)
        logger.info("Loss for final step: %s.", loss)
        return self

    def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None):
        """Evaluate the latest (or the given) checkpoint on `input_fn`.

        Runs until the input ends or `steps` batches. Returns a dict with ``loss``, every
        metric of ``eval_metric_ops`` and ``global_step``; also written as summaries under
        `eval_dir(name)`.
        """
        hooks = util.check_hooks(hooks)
        from flowgraph.estimators import estimator_eval

        return estimator_eval.evaluate_model(self, input_fn, steps, hooks, checkpoint_path,
                                             name)

    def predict(self, input_fn, predict_keys=None, hooks=None, checkpoint_path=None,
                yield_single_examples=True):
        """Yield predictions: one dict per example (or the value itself when the model's
        predictions are a single Tensor); whole batches with
        ``yield_single_examples=False``."""
        hooks = util.check_hooks(hooks)
        from flowgraph.estimators import estimator_eval

        return estimator_eval.predict_model(self, input_fn, predict_keys, hooks,
                                            checkpoint_path, yield_single_examples)

    def cached_predictor(self, feature_spec=None, *, serving_input_receiver_fn=None,
                         predict_keys: str | list[str] | None = None, checkpoint_path=None,
                         reload: bool = True):
        """A predictor that keeps the PREDICT graph and a session alive across calls.

        Unlike `predict`, which builds a graph and reads the checkpoint on every call,
        the returned `CachedPredictor` does so once, then answers each
        ``predict(features)`` with one session run; it loads a newer checkpoint of
        `model_dir` when one appears. Thread-safe; close it (or use ``with``) when done.

        Parameters
        ----------
        feature_spec : dict, FixedLenFeature, Tensor or array, optional
            Feature name -> ``tf.io.FixedLenFeature`` (as from
            ``tf.feature_column.make_parse_example_spec``), Tensor, or array of example
            rows; one placeholder ``[None, *shape]`` per feature. A single entry (not a
            dict) gives the model_fn one Tensor.
        serving_input_receiver_fn : callable, optional
            Instead of `feature_spec`, a receiver fn as for `export_saved_model`.
        predict_keys : str or list of str, optional
        checkpoint_path : str, optional
            Serve this checkpoint (no reloading) instead of the latest.
        reload : bool, default True
            Pick up newer checkpoints of `model_dir`.

        Returns
        -------
        CachedPredictor

        Raises
        ------
        ValueError
            There is no checkpoint yet (train first), or neither or both of
            `feature_spec` and `serving_input_receiver_fn` are given.

        Example
        -------
        >>> import flowgraph as tf       # doctest: +SKIP
        >>> with est.cached_predictor({"x": tf.io.FixedLenFeature([4], tf.float32)}) as p:
        ...     p.predict({"x": batch})  # doctest: +SKIP
        """
        from flowgraph.estimators.cached_predictor import CachedPredictor

        return CachedPredictor(self, feature_spec,
                               serving_input_receiver_fn=serving_input_receiver_fn,
                               predict_keys=predict_keys, checkpoint_path=checkpoint_path,
                               reload=reload)

    def export_saved_model(self, export_dir_base, serving_input_receiver_fn, assets_extra=None,
                           as_text=False, checkpoint_path=None,
                           experimental_mode=ModeKeys.PREDICT, format=None):
        """Export the model for serving as a SavedModel under `export_dir_base/<timestamp>`.

        `format` (a flowgraph addition) is "tensorflow" (TensorFlow's ``saved_model.pb``,
        loadable by TensorFlow Serving) or "flowgraph" (``saved_model.json``); None takes
        the process-wide default (`tf.saved_model.get_export_format()`, "tensorflow" at
        start). Implemented in `flowgraph.estimators.export_impl`.

        >>> est.export_saved_model("exports", receiver_fn,
        ...                        format="flowgraph")  # doctest: +SKIP
        """
        from flowgraph.estimators.export_impl import export_saved_model

        return export_saved_model(self, export_dir_base, serving_input_receiver_fn,
                                  assets_extra=assets_extra, as_text=as_text,
                                  checkpoint_path=checkpoint_path,
                                  experimental_mode=experimental_mode, format=format)

    def experimental_export_all_saved_models(self, export_dir_base, input_receiver_fn_map,
                                             assets_extra=None, as_text=False,
                                             checkpoint_path=None, format=None):
        """Export one SavedModel with a graph per mode of `input_receiver_fn_map`
        (`ModeKeys` -> input receiver fn; TRAIN and EVAL receivers carry labels): tags
        ``train``, ``eval`` and ``serve``, signatures ``train``, ``eval`` and the serving
        ones. Implemented in `flowgraph.estimators.export_impl`.

        >>> fn = tf.estimator.experimental.build_raw_supervised_input_receiver_fn(
        ...     {"x": x}, y)                                         # doctest: +SKIP
        >>> est.experimental_export_all_saved_models(
        ...     "exports", {tf.estimator.ModeKeys.TRAIN: fn})       # doctest: +SKIP
        """
        from flowgraph.estimators.export_impl import export_all_saved_models

        return export_all_saved_models(self, export_dir_base, input_receiver_fn_map,
                                       assets_extra=assets_extra, as_text=as_text,
                                       checkpoint_path=checkpoint_path, format=format)

    def export_savedmodel(self, export_dir_base, serving_input_receiver_fn, assets_extra=None,
                          as_text=False, checkpoint_path=None, strip_default_attrs=False):
        """TensorFlow 1.x's older name of `export_saved_model` (PREDICT graph only).

        `strip_default_attrs` is accepted for compatibility: flowgraph writes every
        attribute, which loaders of either format read the same.
        """
        return self.export_saved_model(export_dir_base, serving_input_receiver_fn,
                                       assets_extra=assets_extra, as_text=as_text,
                                       checkpoint_path=checkpoint_path)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(model_fn={util.fn_name(self._model_fn)}, "
                f"model_dir={self.model_dir!r})")
