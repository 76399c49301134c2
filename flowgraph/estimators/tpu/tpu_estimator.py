"""`tf.estimator.tpu.TPUEstimator` and `TPUEstimatorSpec`, run on the CPU.

flowgraph has no TPU, so a `TPUEstimator` does what TensorFlow's does with
``use_tpu=False``: it is an `Estimator` whose `model_fn` and `input_fn` are wrapped.

- ``input_fn(params)`` must take `params`; ``params['batch_size']`` is the mode's
  global batch size (train/eval/predict), when one was given.
- ``model_fn(..., params)`` must take `params`; it gets ``batch_size`` (not when
  exporting) and ``use_tpu=False``.
- A `TPUEstimatorSpec` becomes an `EstimatorSpec`: ``eval_metrics``' metric_fn is called
  on its tensors, ``scaffold_fn`` is called, ``host_call``'s function is called and its
  tensors are fetched on every step by a hook.
- Logging: no ``loss = ...`` lines; ``global_step/sec`` and ``examples/sec`` every
  ``ceil(log_step_count_steps / iterations_per_loop)`` steps.
- Export: the CPU meta graph (tag ``serve``); TensorFlow's ``serve, tpu`` graph needs a
  TPU and is not written.

A plain `EstimatorSpec` is accepted too, as on TensorFlow's CPU path.

Example
-------
>>> import flowgraph as tf
>>> def model_fn(features, labels, mode, params):
...     w = tf.get_variable("w", [], initializer=tf.zeros_initializer())
...     loss = tf.reduce_mean(tf.square(features * w - labels))
...     train_op = tf.train.GradientDescentOptimizer(0.1).minimize(
...         loss, tf.train.get_global_step())
...     return tf.estimator.tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)
>>> def input_fn(params):
...     ones = tf.ones([params["batch_size"]])
...     return tf.data.Dataset.from_tensors((ones, 2.0 * ones)).repeat()
>>> est = tf.estimator.tpu.TPUEstimator(
...     model_fn, config=tf.estimator.tpu.RunConfig(), use_tpu=False, train_batch_size=4)
>>> round(float(est.train(input_fn, steps=30).get_variable_value("w")), 3)
1.998
"""

from __future__ import annotations

import collections
import copy
import enum
import logging
import math

from flowgraph.estimators import estimator_util as util
from flowgraph.estimators import model_fn as model_fn_lib
from flowgraph.estimators.estimator import Estimator
from flowgraph.estimators.model_fn import EstimatorSpec, ModeKeys, calling_model_fn
from flowgraph.estimators.tpu import tpu_config
from flowgraph.framework.graph import get_default_graph

__all__ = ["ExamplesPerSecondHook", "ExportSavedModelApiVersion", "TPUEstimator",
           "TPUEstimatorSpec"]

logger = logging.getLogger("tensorflow")

_BATCH_SIZE_KEY = "batch_size"
_CTX_KEY = "context"
_USE_TPU_KEY = "use_tpu"
_RESERVED_PARAMS_KEYS = [_BATCH_SIZE_KEY, _CTX_KEY]
_LOOP_NAMES = {ModeKeys.TRAIN: "training_loop", ModeKeys.EVAL: "evaluation_loop",
               ModeKeys.PREDICT: "prediction_loop"}


class ExportSavedModelApiVersion(enum.Enum):
    V1 = 1
    V2 = 2


# -- host calls: eval_metrics and host_call ------------------------------------------------
def _validate_host_calls(host_calls: dict) -> None:
    for name, host_call in host_calls.items():
        if not isinstance(host_call, (tuple, list)):
            raise ValueError(f"{name} should be tuple or list")
        if len(host_call) != 2:
            raise ValueError(f"{name} should have two elements.")
        fn, tensors = host_call
        if not callable(fn):
            raise TypeError(f"{name}[0] should be callable.")
        if not isinstance(tensors, (tuple, list, dict)):
            raise ValueError(f"{name}[1] should be tuple or list, or dict.")
        if isinstance(tensors, (tuple, list)) and not _takes_varargs(fn):
            n_args = len(util.fn_args(fn))
            if len(tensors) != n_args:
                raise RuntimeError(
                    f"In TPUEstimatorSpec.{name}, length of tensors {len(tensors)} does not "
                    f"match method args of the function, which takes {n_args}.")


def _takes_varargs(fn) -> bool:
    import inspect

    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.kind is p.VAR_POSITIONAL for p in params)


def _call_host_fn(name: str, host_call):
    fn, tensors = host_call
    if isinstance(tensors, dict):
        try:
            return fn(**tensors)
        except TypeError as e:
            logger.warning("Exception while calling %s: %s. It is likely the tensors (%s[1]) "
                           "do not match the function's arguments", name, e, name)
            raise
    return fn(*tensors)


def _host_call_hook(tensors):
    """A hook fetching `tensors` (what host_call's function returned) on every step."""
    train_lib = util.train_api()

    class _OutfeedHostCallHook(train_lib.SessionRunHook):
        def before_run(self, run_context):
            return train_lib.SessionRunArgs(tensors)

    return _OutfeedHostCallHook()


class TPUEstimatorSpec(collections.namedtuple("TPUEstimatorSpec", [
        "mode", "predictions", "loss", "train_op", "eval_metrics", "export_outputs",
        "scaffold_fn", "host_call", "training_hooks", "evaluation_hooks",
        "prediction_hooks"])):
    """What a `TPUEstimator`'s `model_fn` returns.

    Like `EstimatorSpec`, with TPU-friendly replacements: ``eval_metrics`` is a
    ``(metric_fn, tensors)`` pair (tensors a list, passed positionally, or a dict,
    passed by keyword; metric_fn returns a dict of ``tf.metrics`` results),
    ``scaffold_fn`` a function returning a `tf.train.Scaffold`, and ``host_call`` a
    ``(fn, tensors)`` pair whose returned tensors run on every training step.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     labels, logits = tf.constant([1.0, 0.0]), tf.constant([2.0, 1.0])
    ...     spec = TPUEstimatorSpec("eval", loss=tf.constant(0.5), eval_metrics=(
    ...         lambda y, z: {"mse": tf.metrics.mean_squared_error(y, z)}, [labels, logits]))
    ...     sorted(spec.as_estimator_spec().eval_metric_ops)
    ['mse']
    """

    __slots__ = ()

    def __new__(cls, mode, predictions=None, loss=None, train_op=None, eval_metrics=None,
                export_outputs=None, scaffold_fn=None, host_call=None, training_hooks=None,
                evaluation_hooks=None, prediction_hooks=None):
        host_calls = {}
        if eval_metrics is not None:
            host_calls["eval_metrics"] = eval_metrics
        if host_call is not None:
            host_calls["host_call"] = host_call
        _validate_host_calls(host_calls)
        training_hooks = model_fn_lib.validate_hooks(training_hooks)
        evaluation_hooks = model_fn_lib.validate_hooks(evaluation_hooks)
        prediction_hooks = model_fn_lib.validate_hooks(prediction_hooks)
        graph = get_default_graph()
        train_op = model_fn_lib._validate_train_op(train_op, mode, graph)
        loss = model_fn_lib._validate_loss(loss, mode, graph)
        predictions = model_fn_lib._validate_predictions(predictions, mode, graph)
        model_fn_lib._validate_export_outputs(export_outputs)
        return super().__new__(
            cls, mode=mode, predictions=predictions, loss=loss, train_op=train_op,
            eval_metrics=eval_metrics, export_outputs=export_outputs, scaffold_fn=scaffold_fn,
            host_call=host_call, training_hooks=training_hooks,
            evaluation_hooks=evaluation_hooks, prediction_hooks=prediction_hooks)

    def as_estimator_spec(self) -> EstimatorSpec:
        """The equivalent `EstimatorSpec` of the CPU path (see the module's table)."""
        eval_metric_ops = None
        if self.eval_metrics is not None:
            eval_metric_ops = _call_host_fn("eval_metrics", self.eval_metrics)
        hooks = ()
        if self.host_call is not None:
            hooks = (_host_call_hook(_call_host_fn("host_call", self.host_call)),)
        scaffold = self.scaffold_fn() if self.scaffold_fn else None
        return EstimatorSpec(
            mode=self.mode, predictions=self.predictions, loss=self.loss,
            train_op=self.train_op, eval_metric_ops=eval_metric_ops,
            export_outputs=self.export_outputs, scaffold=scaffold,
            training_hooks=self.training_hooks + hooks,
            evaluation_hooks=self.evaluation_hooks + hooks,
            prediction_hooks=self.prediction_hooks + hooks)


def ExamplesPerSecondHook(batch_size, every_n_steps=100, every_n_secs=None, output_dir=None,
                          summary_writer=None):
    """A `StepCounterHook` that also logs (and writes) ``examples/sec``.

    Every `every_n_steps` steps (or `every_n_secs` seconds) it logs
    ``global_step/sec: R`` and ``examples/sec: R * batch_size``, as TPUEstimator does.
    """
    train_lib = util.train_api()

    class _ExamplesPerSecondHook(train_lib.StepCounterHook):
        def _log_and_record(self, elapsed_steps, elapsed_time, global_step):
            rate = elapsed_steps / elapsed_time
            examples = batch_size * rate
            if self._summary_writer is not None:
                from flowgraph.summary.event_format import Summary

                for tag, value in (("global_step/sec", rate), ("examples/sec", examples)):
                    self._summary_writer.add_summary(
                        Summary(value=[Summary.Value(tag=tag, simple_value=value)]),
                        global_step)
            logger.info("global_step/sec: %g", rate)
            logger.info("examples/sec: %g", examples)

    return _ExamplesPerSecondHook(every_n_steps=every_n_steps, every_n_secs=every_n_secs,
                                  output_dir=output_dir, summary_writer=summary_writer)


def _add_item_to_params(params, key, value) -> None:
    if hasattr(params, "set_hparam"):  # tf.contrib.training.HParams
        if key in params:
            params.set_hparam(key, value)
        else:
            params.add_hparam(key, value)
    else:
        params[key] = value


class TPUEstimator(Estimator):
    """An `Estimator` for TPU programs, run on the CPU (TensorFlow's ``use_tpu=False``).

    Parameters
    ----------
    model_fn : callable
        ``model_fn(features, labels, mode, params[, config])`` returning a
        `TPUEstimatorSpec` (or an `EstimatorSpec`); it must take `params`.
    model_dir : str, optional
    config : tf.estimator.tpu.RunConfig
        Required (a plain `tf.estimator.RunConfig` is a ValueError).
    params : dict or HParams, optional
        May not hold the reserved keys ``batch_size`` and ``context``.
    use_tpu : bool, default True
        flowgraph has no TPU: pass False (True fails when a mode runs).
    train_batch_size, eval_batch_size, predict_batch_size : int, optional
        Global batch sizes handed to input_fn and model_fn as ``params['batch_size']``.
    batch_axis, eval_on_tpu, export_to_tpu, export_to_cpu, warm_start_from,
    embedding_config_spec, export_saved_model_api_version
        As in TensorFlow; the TPU-only ones are recorded.
    """

    def __init__(self, model_fn=None, model_dir=None, config=None, params=None, use_tpu=True,
                 train_batch_size=None, eval_batch_size=None, predict_batch_size=None,
                 batch_axis=None, eval_on_tpu=True, export_to_tpu=True, export_to_cpu=True,
                 warm_start_from=None, embedding_config_spec=None,
                 export_saved_model_api_version=ExportSavedModelApiVersion.V1) -> None:
        if config is None or not isinstance(config, tpu_config.RunConfig):
            raise ValueError("`config` must be provided with type `tpu_config.RunConfig`")
        if params is not None and any(k in params for k in _RESERVED_PARAMS_KEYS):
            raise ValueError(f"{_RESERVED_PARAMS_KEYS} are reserved keys but existed in "
                             f"params {params}.")
        if use_tpu:
            if train_batch_size is None:
                raise ValueError("`train_batch_size` cannot be `None`")
            tpu_config.check_positive_integer(train_batch_size, "train_batch_size")
            if (config.tpu_config.per_host_input_for_training
                    is tpu_config.InputPipelineConfig.PER_SHARD_V1
                    and config.tpu_config.num_cores_per_replica):
                raise ValueError("Model parallelism only supports per host input for "
                                 "training. Please adjust "
                                 "TPURunconfig.per_host_input_for_training.")
            if eval_batch_size is not None:
                tpu_config.check_positive_integer(eval_batch_size, "eval_batch_size")
            if predict_batch_size is not None:
                tpu_config.check_positive_integer(predict_batch_size, "predict_batch_size")
        if (not (use_tpu and eval_on_tpu) and embedding_config_spec is not None
                and getattr(embedding_config_spec, "partition_strategy", None) == "mod"):
            raise ValueError("Mod sharding of embedding tables not supported on CPU.")
        util.verify_model_fn_args(model_fn, params)
        if export_saved_model_api_version not in (ExportSavedModelApiVersion.V1,
                                                  ExportSavedModelApiVersion.V2, 1, 2):
            raise ValueError(f"export_saved_model_api_version should be 1 or 2; got "
                             f"{export_saved_model_api_version}.")
        self._user_model_fn = model_fn
        self._log_every_n_steps = config.log_step_count_steps
        config = config.replace(log_step_count_steps=None)
        super().__init__(model_fn=self._augmented_model_fn, model_dir=model_dir,
                         config=config, params=params or {}, warm_start_from=warm_start_from)
        loop = tpu_config.parse_iterations_per_loop(self._config.tpu_config.iterations_per_loop)
        self._iterations_per_training_loop = loop
        self._log_every_n_secs = None
        if loop.unit == "seconds":
            self._log_every_n_secs, self._log_every_n_steps = loop.value, None
        elif self._log_every_n_steps is not None:
            # One TPU session.run covers iterations_per_loop steps; TF divides likewise.
            self._log_every_n_steps = math.ceil(self._log_every_n_steps / loop.value)
        self._use_tpu = use_tpu
        self._eval_on_tpu = eval_on_tpu
        self._batch_sizes = {ModeKeys.TRAIN: train_batch_size,
                             ModeKeys.EVAL: eval_batch_size,
                             ModeKeys.PREDICT: predict_batch_size}
        self._batch_axis = batch_axis
        self._embedding_config_spec = embedding_config_spec
        self._export_to_cpu = export_to_cpu
        self._export_to_tpu = export_to_tpu
        self._export_saved_model_api_version = export_saved_model_api_version
        self._is_input_fn_invoked = None
        logger.info("_TPUContext: eval_on_tpu %s", eval_on_tpu)

    def __repr__(self) -> str:
        return (f"TPUEstimator(model_fn={util.fn_name(self._user_model_fn)}, "
                f"model_dir={self.model_dir!r}, use_tpu={self._use_tpu})")

    # -- where a mode runs -----------------------------------------------------------------
    def _check_runs_on_cpu(self, mode: str) -> None:
        if not self._use_tpu or (mode == ModeKeys.EVAL and not self._eval_on_tpu):
            return
        raise RuntimeError(
            f"Cannot find any TPU cores in the system. Please double check Tensorflow master "
            f"address and TPU worker(s). flowgraph has no TPU (master {self._config.master!r}, "
            f"mode {mode}): construct the TPUEstimator with use_tpu=False to run the same "
            f"model_fn on the CPU.")

    # -- input_fn ----------------------------------------------------------------------------
    def _wrap_input_fn(self, input_fn, mode: str):
        if not callable(input_fn):
            raise TypeError(f"input_fn must be callable; got {type(input_fn).__name__}")
        args = util.fn_args(input_fn)
        if "params" not in args:
            raise ValueError(f"input_fn ({input_fn}) does not include params argument, "
                             f"required by TPUEstimator to pass batch size as "
                             f"params[\"batch_size\"]")
        self._check_runs_on_cpu(mode)
        if (self._config.tpu_config.eval_training_input_configuration
                == tpu_config.InputPipelineConfig.SLICED):
            raise ValueError("Invalid TPUConfig `eval_training_input_configuration` value. "
                             "SLICED mode only works on use_tpu = True.")

        def tpu_input_fn(params, config):
            kwargs = {"params": params}
            if "config" in args:
                kwargs["config"] = config
            if "mode" in args:
                kwargs["mode"] = mode
            self._is_input_fn_invoked = True
            if self._batch_sizes[mode] is not None:
                _add_item_to_params(params, _BATCH_SIZE_KEY, self._batch_sizes[mode])
            from flowgraph.framework.graph import device

            with device("/device:CPU:0"):
                return input_fn(**kwargs)

        tpu_input_fn.__name__ = util.fn_name(input_fn)
        return tpu_input_fn

    # -- model_fn ----------------------------------------------------------------------------
    def _augmented_model_fn(self, features, labels, mode, config, params):
        is_export_mode = not self._is_input_fn_invoked
        self._is_input_fn_invoked = None
        user_fn = self._user_model_fn
        args = util.fn_args(user_fn)
        if "params" not in args:
            raise ValueError(f"model_fn ({user_fn}) does not include params argument, "
                             f"required by TPUEstimator to pass batch size as "
                             f"params['batch_size']")
        logger.info("Running %s on CPU/GPU", mode)
        config, params = copy.deepcopy(config), copy.deepcopy(params)
        kwargs = {"params": params}
        if "labels" in args:
            kwargs["labels"] = labels
        elif labels is not None:
            raise ValueError("model_fn does not take labels, but input_fn returns labels.")
        if "mode" in args:
            kwargs["mode"] = mode
        if "config" in args:
            kwargs["config"] = config
        if not is_export_mode and self._batch_sizes.get(mode) is not None:
            _add_item_to_params(params, _BATCH_SIZE_KEY, self._batch_sizes[mode])
        _add_item_to_params(params, _USE_TPU_KEY, False)
        with calling_model_fn(util.fn_name(user_fn)):
            spec = user_fn(features=features, **kwargs)
            if isinstance(spec, TPUEstimatorSpec):
                spec = spec.as_estimator_spec()
        if isinstance(spec, EstimatorSpec) and (self._log_every_n_steps is not None
                                                or self._log_every_n_secs is not None):
            hook = ExamplesPerSecondHook(
                self._batch_sizes.get(mode),
                output_dir=self.model_dir if not config or config.save_summary_steps else None,
                every_n_steps=self._log_every_n_steps, every_n_secs=self._log_every_n_secs)
            spec = spec._replace(training_hooks=(*spec.training_hooks, hook))
        return spec

    # -- the three modes -----------------------------------------------------------------------
    def train(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None):
        try:
            return super().train(self._wrap_input_fn(input_fn, ModeKeys.TRAIN), hooks=hooks,
                                 steps=steps, max_steps=max_steps,
                                 saving_listeners=saving_listeners)
        finally:
            logger.info("%s marked as finished", _LOOP_NAMES[ModeKeys.TRAIN])

    def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None):
        try:
            return super().evaluate(self._wrap_input_fn(input_fn, ModeKeys.EVAL), steps=steps,
                                    hooks=hooks, checkpoint_path=checkpoint_path, name=name)
        finally:
            logger.info("%s marked as finished", _LOOP_NAMES[ModeKeys.EVAL])

    def predict(self, input_fn, predict_keys=None, hooks=None, checkpoint_path=None,
                yield_single_examples=True):
        try:
            yield from super().predict(
                self._wrap_input_fn(input_fn, ModeKeys.PREDICT), predict_keys=predict_keys,
                hooks=hooks, checkpoint_path=checkpoint_path,
                yield_single_examples=yield_single_examples)
        finally:
            logger.info("%s marked as finished", _LOOP_NAMES[ModeKeys.PREDICT])

    def export_saved_model(self, export_dir_base, serving_input_receiver_fn, assets_extra=None,
                           as_text=False, checkpoint_path=None,
                           experimental_mode=ModeKeys.PREDICT, format=None):
        """Export the CPU serving graph (tag ``serve``), model_fn getting
        ``params['use_tpu'] = False`` and no ``batch_size``.

        TensorFlow also writes a ``serve, tpu`` meta graph when `export_to_tpu`; it holds
        TPU ops flowgraph cannot build, so it is left out (with a log line).
        """
        if not self._export_to_cpu:
            if not self._export_to_tpu:
                raise ValueError("One of export_to_cpu and export_to_tpu must be true.")
            raise ValueError("TPUEstimator(export_to_cpu=False) would export only the TPU "
                             "meta graph, which needs a TPU; flowgraph writes the CPU graph: "
                             "set export_to_cpu=True.")
        if self._export_to_tpu:
            logger.info("TPUEstimator: the 'serve, tpu' meta graph needs TPU ops; only the "
                        "CPU graph (tag 'serve') is exported.")
        self._is_input_fn_invoked = None
        return super().export_saved_model(
            export_dir_base, serving_input_receiver_fn, assets_extra=assets_extra,
            as_text=as_text, checkpoint_path=checkpoint_path,
            experimental_mode=experimental_mode, format=format)
