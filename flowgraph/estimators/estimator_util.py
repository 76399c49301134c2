"""Helpers of `Estimator`: calling input_fn and model_fn, checkpoints, eval summaries.

`call_input_fn` accepts what TF accepts from an input_fn: ``(features, labels)``, a
features Tensor or dict, or a `tf.data.Dataset` whose elements are either. Arguments
of input_fn and model_fn are passed only when their signature names them.
"""

from __future__ import annotations

import functools
import inspect
import logging
import os

import numpy as np

from flowgraph.estimators.model_fn import EstimatorSpec, ModeKeys, calling_model_fn

logger = logging.getLogger("tensorflow")

VALID_MODEL_FN_ARGS = frozenset({"features", "labels", "mode", "params", "self", "config"})


def fn_args(fn) -> tuple[str, ...]:
    """The named parameters of `fn` (partials and callables included, bound self not)."""
    if isinstance(fn, functools.partial):
        args = fn_args(fn.func)
        bound = set(fn.keywords or {})
        return tuple(a for a in args[len(fn.args):] if a not in bound)
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return ()
    return tuple(name for name, p in sig.parameters.items()
                 if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))


def taken_kwargs(fn, **candidates) -> dict:
    """The `candidates` whose names `fn`'s signature takes (how input_fn, model_fn and
    logit_fn get ``mode``, ``params`` and ``config``)."""
    args = fn_args(fn)
    return {name: value for name, value in candidates.items() if name in args}


def fn_name(fn) -> str:
    if isinstance(fn, functools.partial):
        return fn_name(fn.func)
    return getattr(fn, "__name__", type(fn).__name__)


def verify_model_fn_args(model_fn, params) -> None:
    args = set(fn_args(model_fn))
    name = fn_name(model_fn)
    if "features" not in args:
        raise ValueError(f"model_fn ({name}) must include features argument.")
    if params is not None and "params" not in args:
        raise ValueError(f"model_fn ({name}) does not include params argument, but params "
                         f"({params!r}) is passed to Estimator.")
    if params is None and "params" in args:
        logger.warning("Estimator's model_fn (%s) includes params argument, but params are "
                       "not passed to Estimator.", name)
    unexpected = sorted(args - VALID_MODEL_FN_ARGS)
    if unexpected:
        raise ValueError(f"model_fn ({name}) has following not expected args: {unexpected}. "
                         f"Allowed: {sorted(VALID_MODEL_FN_ARGS - {'self'})}.")


def _is_dataset(value) -> bool:
    return hasattr(value, "make_one_shot_iterator") or type(value).__name__.endswith("Dataset")


def _next_element(dataset):
    from flowgraph.data import Dataset
    from flowgraph.data.iterator import make_one_shot_iterator

    if not isinstance(dataset, Dataset) and hasattr(dataset, "make_one_shot_iterator"):
        return dataset.make_one_shot_iterator().get_next()
    # TensorFlow's Estimator reads its input through an initializable iterator, which
    # draws no op seed: the model's seedless initializers get TensorFlow's seeds.
    return make_one_shot_iterator(dataset, _draw_seed=False).get_next()


def call_input_fn(input_fn, mode: str, params, config):
    """Call `input_fn` (with `mode`/`params`/`config` if it takes them) and split its
    result into ``(features, labels)``; labels is None when it returns features only."""
    if not callable(input_fn):
        raise TypeError(f"input_fn must be callable; got {type(input_fn).__name__}: "
                        f"{input_fn!r}")
    result = input_fn(**taken_kwargs(input_fn, mode=mode, params=params, config=config))
    if _is_dataset(result):
        result = _next_element(result)
    if isinstance(result, (list, tuple)) and not _is_namedtuple(result):
        if len(result) == 2:
            return result[0], result[1]
        raise ValueError(
            f"input_fn should return (features, labels) as a len 2 tuple (or features, or "
            f"a Dataset of either); it returned a {type(result).__name__} of "
            f"{len(result)} items.")
    return result, None


def _is_namedtuple(value) -> bool:
    return isinstance(value, tuple) and hasattr(value, "_fields")


def call_model_fn(model_fn, features, labels, mode: str, params, config) -> EstimatorSpec:
    """Call `model_fn` with the arguments its signature takes; check it returns a spec."""
    args = fn_args(model_fn)
    kwargs = {}
    if "labels" in args:
        kwargs["labels"] = labels
    elif labels is not None:
        raise ValueError(f"model_fn ({fn_name(model_fn)}) does not take labels, but input_fn "
                         f"returns labels.")
    kwargs.update(taken_kwargs(model_fn, mode=mode, params=params, config=config))
    logger.info("Calling model_fn.")
    with calling_model_fn(fn_name(model_fn)):
        spec = model_fn(features=features, **kwargs)
    logger.info("Done calling model_fn.")
    if not isinstance(spec, EstimatorSpec):
        raise ValueError(f"model_fn ({fn_name(model_fn)}) should return an EstimatorSpec; "
                         f"it returned {type(spec).__name__}: {spec!r}")
    if spec.mode != mode:
        logger.warning("model_fn (%s) was called with mode=%s but returned a spec with "
                       "mode=%s.", fn_name(model_fn), mode, spec.mode)
    return spec


_TRAIN_MODULES = ("flowgraph.train", "flowgraph.train.session_run_hook",
                  "flowgraph.train.basic_session_run_hooks", "flowgraph.train.scaffold",
                  "flowgraph.train.monitored_session", "flowgraph.train.training_util")
_train_api = None


def train_api():
    """The ``tf.train`` names the Estimator uses (hooks, sessions, Scaffold, Saver), taken
    from their defining modules so they are found whatever `flowgraph.train` re-exports."""
    global _train_api
    if _train_api is None:
        import importlib
        import types

        api = types.SimpleNamespace()
        for name in _TRAIN_MODULES:
            module = importlib.import_module(name)
            names = getattr(module, "__all__", None) or [
                n for n in dir(module) if not n.startswith("_")]
            for attr in names:
                setattr(api, attr, getattr(module, attr))
        _train_api = api
    return _train_api


def check_hooks(hooks, what: str = "Hooks") -> list:
    SessionRunHook = train_api().SessionRunHook

    hooks = list(hooks or [])
    for h in hooks:
        if not isinstance(h, SessionRunHook):
            raise TypeError(f"{what} must be a SessionRunHook, given: {h!r}")
    return hooks


def check_listeners(listeners) -> list:
    CheckpointSaverListener = train_api().CheckpointSaverListener

    listeners = list(listeners or [])
    for listener in listeners:
        if not isinstance(listener, CheckpointSaverListener):
            raise TypeError(f"saving_listeners must be a list of CheckpointSaverListener, "
                            f"given: {listener!r}")
    return listeners


def global_step_of_checkpoint(checkpoint_dir_or_path: str | None) -> int:
    """The global step stored in a checkpoint (0 if none or unreadable)."""
    from flowgraph.train import checkpoint_state, checkpoint_utils

    if not checkpoint_dir_or_path:
        return 0
    path = checkpoint_dir_or_path
    if not os.path.exists(path):
        return 0  # a model_dir that training has not created yet
    if os.path.isdir(path):
        path = checkpoint_state.latest_checkpoint(path)
        if path is None:
            return 0
    try:
        return int(checkpoint_utils.load_variable(path, "global_step"))
    except (ValueError, OSError, KeyError):
        return 0


def mean_metric(values, name: str = "mean"):
    """A streaming mean of `values` over evaluation batches: ``(value, update_op)``."""
    from flowgraph.framework import dtypes
    from flowgraph.framework.graph import GraphKeys, control_dependencies, name_scope
    from flowgraph.ops import array_ops, math_ops, math_reduce, state_ops, variables

    with name_scope(name):
        values = math_ops.cast(values, dtypes.float64)
        collections = [GraphKeys.LOCAL_VARIABLES, GraphKeys.METRIC_VARIABLES]
        total = variables.Variable(np.float64(0.0), trainable=False, name="total",
                                   collections=collections)
        count = variables.Variable(np.float64(0.0), trainable=False, name="count",
                                   collections=collections)
        update_total = state_ops.assign_add(total, math_reduce.reduce_sum(values))
        # The count must depend on the batch: a step that fails on end of input
        # (OutOfRangeError) may still run ops that do not.
        n = math_ops.cast(array_ops.size(values, optimize=False), dtypes.float64)
        update_count = state_ops.assign_add(count, n)
        with control_dependencies([update_total, update_count]):
            update = math_ops.cast(update_total / math_ops.maximum(update_count, 1.0),
                                   dtypes.float32)
        value = math_ops.cast(total / math_ops.maximum(count, 1.0), dtypes.float32)
    return value, update


def _add_summary_value(summary, key, value) -> None:
    """Add eval result `key` to `summary` the way TensorFlow's Estimator does: floats
    (NumPy float32/float64, Python float) and ints (NumPy int32/int64, Python int or
    bool) as simple values, arrays as tensor values, bytes as a serialized Summary whose
    values are retagged ``key/<i>``; anything else (float16, NumPy bool, ...) is skipped
    with a warning."""
    if isinstance(value, (np.float32, float)):
        summary.value.add(tag=key, simple_value=float(value))
    elif isinstance(value, (np.int64, np.int32, int)):
        summary.value.add(tag=key, simple_value=int(value))
    elif isinstance(value, bytes):
        from flowgraph.framework.proto_codec import DecodeError
        from flowgraph.summary.event_format import Summary

        try:
            parsed = Summary.FromString(value)
        except DecodeError:
            logger.warning("Skipping summary for %s, cannot parse string to Summary.", key)
            return
        for i, item in enumerate(parsed.value):
            item.tag = f"{key}/{i}"
            summary.value.append(item)
    elif isinstance(value, np.ndarray):
        from flowgraph.framework.event_messages import make_tensor_proto

        summary.value.add(tag=key, node_name=key, tensor=make_tensor_proto(value))
        logger.info("Summary for np.ndarray is not visible in Tensorboard by default. "
                    "Consider using a Tensorboard plugin for visualization.")
    else:
        logger.warning("Skipping summary for %s, must be a float, np.float32, np.int64, "
                       "np.int32 or int or np.ndarray or a serialized string of Summary.",
                       key)


def dict_to_str(dictionary: dict) -> str:
    # "%s" (str), not an f-string: NumPy float32 formats as float32 ("0.16474155").
    return ", ".join("%s = %s" % (k, v) for k, v in sorted(dictionary.items())  # noqa: UP031
                     if not isinstance(v, bytes))


def write_eval_results(output_dir: str, results: dict, global_step: int,
                       checkpoint_path: str | None) -> None:
    """Write eval `results` as summaries of `global_step` into `output_dir` (the event
    file TensorBoard and the early-stopping hooks read), then, as TensorFlow does, the
    evaluated `checkpoint_path` as a string tensor summary tagged ``checkpoint_path``."""
    from flowgraph.framework.event_messages import make_tensor_proto
    from flowgraph.summary.event_format import Summary
    from flowgraph.summary.writer import FileWriterCache

    logger.info("Saving dict for global step %d: %s", global_step, dict_to_str(results))
    os.makedirs(output_dir, exist_ok=True)
    summary = Summary()
    for key, value in results.items():
        if key == "global_step" or value is None:
            continue
        _add_summary_value(summary, key, value)
    writer = FileWriterCache.get(output_dir)
    writer.add_summary(summary, global_step)
    writer.flush()
    if checkpoint_path:
        logger.info("Saving 'checkpoint_path' summary for global step %d: %s", global_step,
                    checkpoint_path)
        path_summary = Summary()
        path_summary.value.add(tag="checkpoint_path",
                               tensor=make_tensor_proto(np.array(checkpoint_path, object)))
        writer.add_summary(path_summary, global_step)
        writer.flush()


def mode_name(mode: str) -> str:
    return {ModeKeys.TRAIN: "train", ModeKeys.EVAL: "eval", ModeKeys.PREDICT: "predict"}[mode]
