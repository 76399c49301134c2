"""`tf.keras.estimator.model_to_estimator`: an `Estimator` that trains a compiled Keras
model.

Its ``model_fn`` rebuilds the model in each Estimator graph with `clone_model` (same
layer names, hence the same variable names, ``dense/kernel``...), on the features:

* ``features`` is a dict keyed by the model's input names (``model.input_names``: the
  `Input` layer names, ``<first layer>_input`` for a `Sequential` model), or, for a
  single-input model, one tensor; a list/tuple is taken in input order. Other keys are a
  KeyError listing the expected ones. Features are cast to the input dtype.
* ``labels`` likewise keyed by ``model.output_names`` (or one tensor).
* The learning phase is fixed per mode (1 in TRAIN, 0 otherwise), so dropout and batch
  normalization choose their branch while the graph is built.
* TRAIN: the compiled loss (the batch mean of each output's loss, weighted, plus
  regularization losses) minimized by the compiled optimizer (a new `tf.train`
  optimizer per graph), together with the layers' updates; EVAL: the loss and each
  compiled metric as a streaming ``tf.metrics.mean`` (named as in
  `Model.metrics_names`: ``acc``, or ``<output>_acc`` with several outputs);
  PREDICT: ``{output name: output}``.

The Estimator starts from the Keras model's weights at conversion time (as TF, only
when a Keras session has initialized them: fit, predict, get_weights, ... ran; else from
its clone's own initial values, drawn under ``RunConfig(tf_random_seed=)``). With
``checkpoint_format='saver'`` (TF 1.x's default) a first checkpoint
``keras_model.ckpt`` holding them is written to `model_dir` (unless it already has a
checkpoint), so evaluate and predict work before any training; with ``'checkpoint'``
they are written to ``model_dir/keras/keras_model.ckpt`` and warm-start the first
training.

Example
-------
>>> import numpy as np, tempfile, flowgraph as tf
>>> from flowgraph import keras
>>> with tf.Graph().as_default():
...     model = keras.Sequential([keras.layers.Dense(1, input_shape=(2,),
...                                                  kernel_initializer="ones")])
...     model.compile("sgd", loss="mse")
...     est = keras.estimator.model_to_estimator(model, model_dir=tempfile.mkdtemp())
>>> input_fn = tf.estimator.inputs.numpy_input_fn({"dense_input": np.ones((3, 2))},
...                                               shuffle=False)
>>> [p["dense"].tolist() for p in est.predict(input_fn)]
[[2.0], [2.0], [2.0]]
"""

from __future__ import annotations

import logging
import os
import re
import tempfile

from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import Graph, set_random_seed
from flowgraph.keras import backend
from flowgraph.keras.models import Model, clone_model
from flowgraph.keras.training import target_placeholder, training_loss, training_metrics
from flowgraph.ops import array_ops, math_ops
from flowgraph.ops.control_flow_ops import group

__all__ = ["model_to_estimator"]

logger = logging.getLogger("tensorflow")

_KERAS_CKPT = "keras_model.ckpt"


def _ordered(obj, names: list[str], what: str, role: str) -> list:
    """`obj` (dict keyed by `names`, list, or one tensor) as one entry per name."""
    if isinstance(obj, dict):
        diff = set(obj) ^ set(names)
        if diff:
            raise KeyError(
                f"The dictionary passed into {what} does not have the expected {role} keys "
                f"defined in the keras model.\n\tExpected keys: {sorted(names)}\n\t{what} "
                f"keys: {sorted(obj)}\n\tDifference: {sorted(diff)}")
        return [obj[n] for n in names]
    values = list(obj) if isinstance(obj, list | tuple) else [obj]
    if len(values) != len(names):
        raise ValueError(f"The model has {len(names)} {role} ({names}) but {what} has "
                         f"{len(values)} tensor(s); pass a dict keyed by {role} name.")
    return values


def _inputs_from_features(keras_model: Model, features) -> list:
    tensors = []
    values = _ordered(features, keras_model.input_names, "features", "inputs")
    for name, orig, value in zip(keras_model.input_names, keras_model.inputs, values,
                                 strict=True):
        t = convert_to_tensor(value)
        if t.dtype.base_dtype != orig.dtype.base_dtype:
            t = math_ops.cast(t, orig.dtype.base_dtype)
        if not t.shape[1:].is_compatible_with(orig.shape[1:]) if t.shape.ndims and \
                orig.shape.ndims else not t.shape.is_compatible_with(orig.shape):
            raise ValueError(f"Feature {name!r} has shape {t.shape}, but the Keras model's "
                             f"input {name!r} expects {orig.shape} (batch first).")
        tensors.append(t)
    return tensors


def _compile_config(keras_model: Model) -> dict:
    if not getattr(keras_model, "_compiled", False):
        raise ValueError("The given keras model has not been compiled yet. Please compile "
                         "the model with `model.compile()` before calling "
                         "`model_to_estimator()`.")
    return dict(keras_model._compile_args)


def _make_model_fn(keras_model: Model, compile_args: dict, built: dict):
    from flowgraph.estimators.export import PredictOutput
    from flowgraph.estimators.model_fn import EstimatorSpec, ModeKeys
    from flowgraph.metrics import metrics_impl
    from flowgraph.train import training_util

    def model_fn(features, labels, mode):
        backend.set_learning_phase(1 if mode == ModeKeys.TRAIN else 0)
        model = clone_model(keras_model, _inputs_from_features(keras_model, features))
        built["model"] = model
        predictions = dict(zip(model.output_names, model.outputs, strict=True))
        if mode == ModeKeys.PREDICT:
            return EstimatorSpec(mode, predictions=predictions,
                                 export_outputs={"serving_default": PredictOutput(predictions)})
        model.compile(**compile_args)
        targets = [None if t is None else convert_to_tensor(t) for t in
                   _ordered(labels, model.output_names, "labels", "outputs")]
        loss, _ = training_loss(model, model.outputs, targets)
        if mode == ModeKeys.TRAIN:
            from flowgraph.keras import optimizers

            keras_opt = optimizers.get(compile_args["optimizer"])
            step = training_util.get_global_step()
            if isinstance(keras_opt, optimizers.Optimizer) and keras_opt._kind != \
                    "Optimizer" and step is not None and keras_opt._graph_state() is None:
                keras_opt.iterations = step  # TF's Keras Estimator: no iter of its own
            opt = optimizers.to_tf_optimizer(keras_opt)
            minimize = opt.minimize(loss, global_step=step, var_list=model.trainable_weights)
            train_op = group(minimize, *model.updates)
            return EstimatorSpec(mode, loss=loss, train_op=train_op, predictions=predictions)
        metric_ops = {name: metrics_impl.mean(values, name=f"metric_{name}") for name, values
                      in training_metrics(model, model.outputs, targets).items()}
        return EstimatorSpec(mode, loss=loss, eval_metric_ops=metric_ops,
                             predictions=predictions)

    return model_fn


def _initial_checkpoint(keras_model, model_fn, built: dict, config, path: str,
                        names_only: bool):
    """Build the TRAIN graph once, give the cloned weights the Keras model's values and
    save them; returns the saved variable names. As TF: weights no Keras session has
    initialized yet are not read; the clone keeps its own initial values (drawn under
    ``config.tf_random_seed``)."""
    from flowgraph.estimators.model_fn import ModeKeys
    from flowgraph.ops.variables import global_variables_initializer
    from flowgraph.runtime.session import Session
    from flowgraph.train import checkpoint_utils, saver, training_util

    initialized = any(getattr(w, "_keras_initialized", False) for w in keras_model.weights)
    weights = keras_model.get_weights() if initialized else None
    compile_fns = keras_model._loss_fns
    with Graph().as_default():
        set_random_seed(config.tf_random_seed)
        training_util.get_or_create_global_step()
        features = {name: array_ops.placeholder(t.dtype.base_dtype, t.shape, name=name)
                    for name, t in zip(keras_model.input_names, keras_model.inputs,
                                       strict=True)}
        labels = [None if fn is None else target_placeholder(fn, out, f"{name}_target")
                  for fn, out, name in zip(compile_fns, keras_model.outputs,
                                           keras_model.output_names, strict=True)]
        model_fn(features, labels, ModeKeys.TRAIN)
        variables = built["model"].weights
        names = [v.op.name for v in variables]
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if names_only and weights is not None:
            checkpoint_utils.write_checkpoint(path, dict(zip(names, weights, strict=True)))
            return names
        with Session() as sess:
            sess.run(global_variables_initializer())
            if names_only:
                checkpoint_utils.write_checkpoint(
                    path, dict(zip(names, sess.run(variables), strict=True)))
                return names
            for var, value in zip(variables, weights or [], strict=weights is not None):
                var.load(value, sess)
            saver.Saver().save(sess, path)
    return names


def model_to_estimator(keras_model=None, keras_model_path=None, custom_objects=None,
                       model_dir=None, config=None, checkpoint_format="saver"):
    """An `Estimator` training, evaluating and predicting with a compiled Keras model.

    Parameters
    ----------
    keras_model : tf.keras.Model
        A compiled `Sequential` or functional model; its current weights (once a Keras
        session has initialized them) are the Estimator's starting point.
    keras_model_path : str
        Not supported (flowgraph has no Keras model file format); pass `keras_model`.
    custom_objects : dict, optional
        Accepted for compatibility (layers are copied as Python objects).
    model_dir : str, optional
        Default: ``config.model_dir``, else a new temporary directory.
    config : tf.estimator.RunConfig, optional
    checkpoint_format : 'saver' or 'checkpoint'
        How the starting weights are handed over (see the module docstring).

    Returns
    -------
    tf.estimator.Estimator
        Features keyed by ``keras_model.input_names``, predictions by
        ``keras_model.output_names``.
    """
    from flowgraph.estimators.estimator import Estimator
    from flowgraph.estimators.run_config import RunConfig
    from flowgraph.estimators.warm_starting import WarmStartSettings
    from flowgraph.train import checkpoint_state

    if keras_model is None and keras_model_path is None:
        raise ValueError("Either `keras_model` or `keras_model_path` needs to be provided.")
    if keras_model is not None and keras_model_path is not None:
        raise ValueError("Please specity either `keras_model` or `keras_model_path`, but "
                         "not both.")
    if keras_model_path is not None:
        raise NotImplementedError("model_to_estimator(keras_model_path=...): flowgraph cannot "
                                  "load Keras model files; build the model and pass "
                                  "keras_model=.")
    if not isinstance(keras_model, Model) or not keras_model.outputs:
        raise ValueError(f"keras_model must be a built tf.keras Sequential or functional "
                         f"Model; got {keras_model!r}.")
    if checkpoint_format not in ("saver", "checkpoint"):
        raise ValueError(f"Unknown checkpoint format {checkpoint_format!r}: expected "
                         f"'saver' or 'checkpoint'.")
    compile_args = _compile_config(keras_model)
    config = config if config is not None else RunConfig()
    if not isinstance(config, RunConfig):
        raise ValueError(f"config must be an instance of `RunConfig`, but provided {config!r}.")
    if model_dir is not None and config.model_dir is not None and \
            os.fspath(model_dir) != config.model_dir:
        raise ValueError(f"`model_dir` are set both in constructor and `RunConfig`, but with "
                         f"different values. In constructor: '{model_dir}', in `RunConfig`: "
                         f"'{config.model_dir}' ")
    model_dir = model_dir or config.model_dir
    if model_dir is None:
        model_dir = tempfile.mkdtemp()
        logger.warning("Using temporary folder as model directory: %s", model_dir)
    model_dir = os.fspath(model_dir)
    built: dict = {}
    model_fn = _make_model_fn(keras_model, compile_args, built)
    warm_start = None
    if checkpoint_state.latest_checkpoint(model_dir) if os.path.isdir(model_dir) else None:
        logger.warning("model_dir %s already has a checkpoint; the Estimator starts from it, "
                       "not from the Keras model's weights.", model_dir)
    elif checkpoint_format == "saver":
        _initial_checkpoint(keras_model, model_fn, built, config,
                            os.path.join(model_dir, _KERAS_CKPT), names_only=False)
    else:
        path = os.path.join(model_dir, "keras", _KERAS_CKPT)
        names = _initial_checkpoint(keras_model, model_fn, built, config, path,
                                    names_only=True)
        warm_start = WarmStartSettings(path, vars_to_warm_start=[
            f"^{re.escape(n)}$" for n in names])
    return Estimator(model_fn, model_dir=model_dir, config=config, warm_start_from=warm_start)
