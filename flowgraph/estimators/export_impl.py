"""`Estimator.export_saved_model`: write the model of a checkpoint as a SavedModel.

The export builds a fresh graph, creates the global step, calls the serving input
receiver function, calls the model_fn in PREDICT mode with the receiver's features,
turns ``EstimatorSpec.export_outputs`` into signatures (default: one ``PredictOutput``
of the predictions under ``serving_default``), restores the checkpoint (the latest one
by default) into a session and saves it with `SavedModelBuilder` into
``export_dir_base/temp-<timestamp>``, which is renamed to ``export_dir_base/<timestamp>``
once complete. Version directories therefore appear whole and in increasing order,
which is what a serving process polling `export_dir_base` relies on.

Example
-------
>>> import tempfile, numpy as np, flowgraph as tf       # doctest: +SKIP
>>> path = est.export_saved_model(tempfile.mkdtemp(), receiver_fn)   # doctest: +SKIP
>>> path                                                 # doctest: +SKIP
b'/tmp/tmpabc/1767225600'
"""

from __future__ import annotations

import logging
import os
import shutil
import time
from typing import Any, NamedTuple

from flowgraph.estimators import estimator_util as util
from flowgraph.estimators.export import ExportOutput, PredictOutput, build_all_signature_defs
from flowgraph.estimators.model_fn import ModeKeys
from flowgraph.estimators.run_config import session_config_for
from flowgraph.saved_model import constants as sc

__all__ = [
    "PredictGraph",
    "build_mode_graph",
    "build_predict_graph",
    "export_all_saved_models",
    "export_outputs_for_mode",
    "export_saved_model",
    "get_export_outputs",
    "get_timestamped_export_dir",
    "restore_checkpoint",
]

logger = logging.getLogger("tensorflow")

MAX_DIRECTORY_CREATION_ATTEMPTS = 10


def get_timestamped_export_dir(export_dir_base) -> bytes:
    """``export_dir_base/<seconds since the epoch>`` that does not exist yet.

    When the name is taken (two exports within a second), waits for the next second,
    up to ten times, as TensorFlow does.
    """
    base = os.fsdecode(os.fspath(export_dir_base))
    for _ in range(MAX_DIRECTORY_CREATION_ATTEMPTS):
        timestamp = int(time.time())
        result = os.path.join(base, str(timestamp))
        if not os.path.exists(result) and not os.path.exists(
                os.path.join(base, f"temp-{timestamp}")):
            return os.fsencode(result)
        time.sleep(max(0.0, timestamp + 1 - time.time()) + 0.01)
    raise RuntimeError(f"Failed to obtain a unique export directory name under {base} after "
                       f"{MAX_DIRECTORY_CREATION_ATTEMPTS} attempts.")


def get_temp_export_dir(timestamped_export_dir) -> bytes:
    """``<base>/temp-<timestamp>``: where an export is written before it is renamed."""
    path = os.fsdecode(timestamped_export_dir)
    head, tail = os.path.split(path)
    return os.fsencode(os.path.join(head, f"temp-{tail}"))


def get_export_outputs(export_outputs, predictions) -> dict:
    """The spec's export outputs, defaulting to a PredictOutput of `predictions` under
    ``serving_default``; a single output is also made the default one."""
    if export_outputs is None:
        export_outputs = {sc.DEFAULT_SERVING_SIGNATURE_DEF_KEY: PredictOutput(predictions)}
    if not isinstance(export_outputs, dict):
        raise TypeError(f"export_outputs must be dict, given: {export_outputs!r}")
    for value in export_outputs.values():
        if not isinstance(value, ExportOutput):
            raise TypeError(f"Values in export_outputs must be ExportOutput objects (e.g. "
                            f"tf.estimator.export.PredictOutput). Given: {export_outputs!r}")
    export_outputs = dict(export_outputs)
    if len(export_outputs) == 1:
        ((key, value),) = export_outputs.items()
        if key != sc.DEFAULT_SERVING_SIGNATURE_DEF_KEY:
            export_outputs[sc.DEFAULT_SERVING_SIGNATURE_DEF_KEY] = value
    elif sc.DEFAULT_SERVING_SIGNATURE_DEF_KEY not in export_outputs:
        raise ValueError(
            "Multiple export_outputs were provided, but none of them is the default. Name "
            f"one of them '{sc.DEFAULT_SERVING_SIGNATURE_DEF_KEY}' "
            "(tf.saved_model.signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY).")
    return export_outputs


def _checkpoint_to_export(estimator, checkpoint_path) -> str:
    if checkpoint_path:
        return os.fsdecode(os.fspath(checkpoint_path))
    path = estimator.latest_checkpoint()
    if path:
        return path
    warm = getattr(estimator, "_warm_start_settings", None)
    if warm is not None and getattr(warm, "ckpt_to_initialize_from", None):
        from flowgraph.train import checkpoint_state

        path = warm.ckpt_to_initialize_from
        if os.path.isdir(path):
            path = checkpoint_state.latest_checkpoint(path)
        if path:
            return path
    raise ValueError(f"Couldn't find trained model at {estimator.model_dir}.")


def _call_model_fn(estimator, features, labels, mode, config):
    helper = getattr(estimator, "_call_model_fn", None)
    if helper is not None:
        return helper(features, labels, mode, config)
    return util.call_model_fn(estimator._model_fn, features, labels, mode, estimator.params,
                              config)


class PredictGraph(NamedTuple):
    """The PREDICT graph of an estimator, built by `build_predict_graph`."""

    graph: Any
    receiver: Any            # the ServingInputReceiver
    spec: Any                # the model_fn's EstimatorSpec
    saver: Any               # restores the checkpoint into a session of `graph`
    local_init_op: Any       # run after restoring (local variables, tables)
    global_step: Any


def build_predict_graph(estimator, serving_input_receiver_fn) -> PredictGraph:
    """Build `estimator`'s model in PREDICT mode in a fresh graph fed by the receiver.

    The graph seed comes from the estimator's config, the global step is created, the
    receiver's features go to the model_fn, and the saver and local init op come from
    the spec's scaffold (defaults otherwise). Shared by `export_saved_model` and the
    cached predictor, so both serve exactly the same graph.
    """
    return build_mode_graph(estimator, serving_input_receiver_fn, ModeKeys.PREDICT)


def build_mode_graph(estimator, input_receiver_fn, mode: str) -> PredictGraph:
    """`build_predict_graph` for any mode: TRAIN and EVAL take a receiver with labels
    (`tf.estimator.experimental.build_raw_supervised_input_receiver_fn`)."""
    from flowgraph.framework.graph import Graph, set_random_seed
    from flowgraph.train.saver import Saver
    from flowgraph.train.scaffold import Scaffold
    from flowgraph.train.training_util import get_or_create_global_step

    config = estimator.config
    with Graph().as_default() as graph:
        set_random_seed(config.tf_random_seed)
        global_step = get_or_create_global_step(graph)
        receiver = input_receiver_fn()
        if not (hasattr(receiver, "features") and hasattr(receiver, "receiver_tensors")):
            raise TypeError(
                "serving_input_receiver_fn must return a tf.estimator.export."
                f"ServingInputReceiver (or TensorServingInputReceiver); got {receiver!r}")
        labels = getattr(receiver, "labels", None)
        if mode != ModeKeys.PREDICT and labels is None:
            raise ValueError(
                f"Exporting mode `{mode}` needs labels: its input receiver fn must return a "
                "SupervisedInputReceiver (tf.estimator.experimental."
                f"build_raw_supervised_input_receiver_fn); got {type(receiver).__name__}.")
        spec = _call_model_fn(estimator, receiver.features, labels, mode, config)
        scaffold = spec.scaffold or Scaffold()
        local_init_op = scaffold.local_init_op
        if local_init_op is None:
            local_init_op = Scaffold.default_local_init_op()
        saver = scaffold.saver or Saver(sharded=True)
    return PredictGraph(graph, receiver, spec, saver, local_init_op, global_step)


def restore_checkpoint(session, saver, checkpoint_path: str, what: str) -> None:
    """``saver.restore``; a variable missing from the checkpoint becomes a ValueError
    saying which model_fn graph (`what`) needed it."""
    from flowgraph.framework import errors

    try:
        saver.restore(session, checkpoint_path)
    except errors.NotFoundError as e:
        raise ValueError(
            "Could not load all requested variables from checkpoint. Make sure your "
            "model_fn does not expect variables that were not saved in the "
            f"checkpoint.\n\nWhile {what} from checkpoint `{checkpoint_path}`: {e}") from None


_EXPORT_TAGS = {ModeKeys.TRAIN: [sc.TRAINING], ModeKeys.EVAL: [sc.EVAL],
                ModeKeys.PREDICT: [sc.SERVING]}


def export_outputs_for_mode(mode: str, spec) -> dict:
    """The signatures' export outputs of a model_fn's `spec` in `mode`: the serving ones
    (`get_export_outputs`) for PREDICT, one `TrainOutput` under ``train`` or
    `EvalOutput` under ``eval`` (loss, predictions, metrics) otherwise."""
    from flowgraph.estimators.export_supervised import EvalOutput, TrainOutput

    if mode == ModeKeys.PREDICT:
        return get_export_outputs(spec.export_outputs, spec.predictions)
    kind = TrainOutput if mode == ModeKeys.TRAIN else EvalOutput
    return {mode: kind(loss=spec.loss, predictions=spec.predictions,
                       metrics=spec.eval_metric_ops)}


def _add_meta_graph(estimator, builder, input_receiver_fn, checkpoint_path,
                    mode: str = ModeKeys.PREDICT, save_variables: bool = True) -> None:
    """Add `mode`'s graph to `builder` with its variables from the checkpoint (the first
    graph of an export) or without (the later ones share them)."""
    from flowgraph.framework.graph import GraphKeys
    from flowgraph.runtime.session import Session

    pg = build_mode_graph(estimator, input_receiver_fn, mode)
    with pg.graph.as_default():
        signature_def_map = build_all_signature_defs(
            pg.receiver.receiver_tensors, export_outputs_for_mode(mode, pg.spec),
            getattr(pg.receiver, "receiver_tensors_alternatives", None),
            serving_only=mode == ModeKeys.PREDICT)
        with Session(graph=pg.graph,
                     config=session_config_for(estimator.config)) as sess:
            restore_checkpoint(sess, pg.saver, checkpoint_path, f"exporting mode `{mode}`")
            builder._add_train_op(pg.spec.train_op)
            kwargs = dict(tags=_EXPORT_TAGS[mode], signature_def_map=signature_def_map,
                          assets_collection=pg.graph.get_collection(GraphKeys.ASSET_FILEPATHS),
                          main_op=pg.local_init_op, saver=pg.saver, strip_default_attrs=True)
            if save_variables:
                builder.add_meta_graph_and_variables(sess, **kwargs)
            else:
                builder.add_meta_graph(**kwargs)


def export_all_saved_models(estimator, export_dir_base, input_receiver_fn_map,
                            assets_extra=None, as_text: bool = False, checkpoint_path=None,
                            format=None) -> bytes:
    """Export one SavedModel holding a graph per mode of `input_receiver_fn_map`
    (`tf.estimator.ModeKeys` -> input receiver fn): TRAIN tagged ``train``, EVAL
    ``eval``, PREDICT ``serve``, in that order, sharing the checkpoint's variables.
    Returns ``export_dir_base/<timestamp>`` as bytes, written whole or not at all (see
    the module docstring). TRAIN and EVAL receivers carry labels
    (`tf.estimator.experimental.build_raw_supervised_input_receiver_fn`).
    """
    from flowgraph.saved_model.builder import SavedModelBuilder

    if not input_receiver_fn_map:
        raise ValueError("An input_receiver_fn must be defined.")
    unknown = [k for k in input_receiver_fn_map if k not in _EXPORT_TAGS]
    if unknown:
        raise ValueError(f"input_receiver_fn_map keys must be tf.estimator.ModeKeys values "
                         f"(train, eval, infer); got {unknown!r}")
    checkpoint_path = _checkpoint_to_export(estimator, checkpoint_path)
    export_dir = get_timestamped_export_dir(export_dir_base)
    temp_dir = os.fsdecode(get_temp_export_dir(export_dir))
    try:
        builder = SavedModelBuilder(temp_dir, format=format)
        first = True
        for mode in (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT):
            receiver_fn = input_receiver_fn_map.get(mode)
            if receiver_fn is not None:
                _add_meta_graph(estimator, builder, receiver_fn, checkpoint_path, mode,
                                save_variables=first)
                first = False
        builder.save(as_text)
        if assets_extra:
            _copy_assets_extra(temp_dir, assets_extra)
        os.rename(temp_dir, os.fsdecode(export_dir))
    except BaseException:
        shutil.rmtree(temp_dir, ignore_errors=True)
        raise
    logger.info("SavedModel written to: %s", os.fsdecode(export_dir))
    return export_dir


def _copy_assets_extra(export_dir: str, assets_extra: dict) -> None:
    root = os.path.join(export_dir, sc.EXTRA_ASSETS_DIRECTORY)
    for dest_relative, source in assets_extra.items():
        dest_relative = os.fsdecode(os.fspath(dest_relative))
        dest = os.path.normpath(os.path.join(root, dest_relative))
        if os.path.isabs(dest_relative) or os.path.commonpath(
                [os.path.abspath(root), os.path.abspath(dest)]) != os.path.abspath(root):
            raise ValueError(f"assets_extra destination {dest_relative!r} must be a relative "
                             "path inside assets.extra/")
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(os.fsdecode(os.fspath(source)), dest)


def export_saved_model(estimator, export_dir_base, serving_input_receiver_fn,
                       assets_extra=None, as_text: bool = False, checkpoint_path=None,
                       experimental_mode=ModeKeys.PREDICT, format=None) -> bytes:
    """Export `estimator`'s model for serving; returns ``export_dir_base/<timestamp>``
    as bytes (see the module docstring).

    `format` is `SavedModelBuilder`'s: "tensorflow" writes TensorFlow's SavedModel
    (``saved_model.pb``), "flowgraph" flowgraph's ``saved_model.json``; None, the
    process-wide default ("tensorflow" unless set), which
    ``with tf.saved_model.export_format("flowgraph"):`` sets around
    ``estimator.export_saved_model(...)``. `experimental_mode` TRAIN or EVAL exports
    that mode's graph instead (`export_all_saved_models` with one mode).

    Raises ValueError when there is no checkpoint to export, or when the checkpoint lacks
    a variable the graph needs.
    """
    if not serving_input_receiver_fn:
        raise ValueError("An input_receiver_fn must be defined.")
    if experimental_mode not in _EXPORT_TAGS:
        raise ValueError(f"experimental_mode must be a tf.estimator.ModeKeys value; got "
                         f"{experimental_mode!r}")
    return export_all_saved_models(estimator, export_dir_base,
                                   {experimental_mode: serving_input_receiver_fn},
                                   assets_extra=assets_extra, as_text=as_text,
                                   checkpoint_path=checkpoint_path, format=format)
