"""Exporters: when `train_and_evaluate` exports a SavedModel, and which ones it keeps.

After each evaluation, every exporter of the `EvalSpec` is called with the checkpoint
that was evaluated and the evaluation results:

- `LatestExporter` exports after every evaluation and keeps the newest
  `exports_to_keep`.
- `BestExporter` exports when ``compare_fn(best, current)`` says the model improved
  (default: smaller ``loss``; the best so far is first read from the eval event files),
  and keeps the newest `exports_to_keep`.
- `FinalExporter` exports once, after the final evaluation, and keeps all.

Exports go to ``model_dir/export/<exporter name>/<timestamp>``. Garbage collection only
ever deletes version directories whose names are 10-digit timestamps.

Example
-------
>>> exporter = LatestExporter("latest", serving_input_receiver_fn=lambda: None,
...                           exports_to_keep=2)
>>> exporter.name
'latest'
"""

from __future__ import annotations

import abc
import glob
import logging
import os
import shutil

from flowgraph.estimators import estimator_util as util
from flowgraph.framework import errors

__all__ = ["BestExporter", "Exporter", "FinalExporter", "LatestExporter"]

logger = logging.getLogger("tensorflow")


class Exporter(abc.ABC):
    """Base class: `name` (the export subdirectory) and `export`."""

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """Directory name under ``model_dir/export``; also used in logs."""

    @abc.abstractmethod
    def export(self, estimator, export_path, checkpoint_path, eval_result,
               is_the_final_export):
        """Export `checkpoint_path` of `estimator` under `export_path` (or not); returns
        the export directory, or None when nothing was exported."""


class _SavedModelExporter(Exporter):
    def __init__(self, name, serving_input_receiver_fn, assets_extra=None,
                 as_text=False) -> None:
        self._name = name
        self._serving_input_receiver_fn = serving_input_receiver_fn
        self._assets_extra = assets_extra
        self._as_text = as_text

    @property
    def name(self) -> str:
        return self._name

    def export(self, estimator, export_path, checkpoint_path, eval_result,
               is_the_final_export):
        del eval_result, is_the_final_export
        return estimator.export_saved_model(
            export_path, self._serving_input_receiver_fn, assets_extra=self._assets_extra,
            as_text=self._as_text, checkpoint_path=checkpoint_path)


def _check_exports_to_keep(exports_to_keep) -> None:
    if exports_to_keep is not None and exports_to_keep <= 0:
        raise ValueError(f"`exports_to_keep`, if provided, must be a positive number; got "
                         f"{exports_to_keep}")


def _export_versions(export_dir_base: str) -> list[tuple[int, str]]:
    """(version, path) of the timestamped export directories, oldest first."""
    try:
        names = os.listdir(export_dir_base)
    except OSError:
        return []
    out = [(int(n), os.path.join(export_dir_base, n)) for n in names
           if len(n) == 10 and n.isdigit()]
    return sorted(out)


def garbage_collect_exports(export_dir_base, exports_to_keep) -> None:
    """Delete all but the `exports_to_keep` newest timestamped exports."""
    if exports_to_keep is None:
        return
    base = os.fsdecode(os.fspath(export_dir_base))
    versions = _export_versions(base)
    for _, path in versions[:max(0, len(versions) - exports_to_keep)]:
        try:
            shutil.rmtree(path)
        except OSError as e:
            logger.warning("Can not delete %s recursively: %s", path, e)


class LatestExporter(Exporter):
    """Exports after every evaluation and keeps the `exports_to_keep` newest (None: all)."""

    def __init__(self, name, serving_input_receiver_fn, assets_extra=None, as_text=False,
                 exports_to_keep=5) -> None:
        self._saved_model_exporter = _SavedModelExporter(name, serving_input_receiver_fn,
                                                         assets_extra, as_text)
        _check_exports_to_keep(exports_to_keep)
        self._exports_to_keep = exports_to_keep

    @property
    def name(self) -> str:
        return self._saved_model_exporter.name

    def export(self, estimator, export_path, checkpoint_path, eval_result,
               is_the_final_export):
        result = self._saved_model_exporter.export(estimator, export_path, checkpoint_path,
                                                   eval_result, is_the_final_export)
        garbage_collect_exports(export_path, self._exports_to_keep)
        return result


class FinalExporter(Exporter):
    """Exports once, at the end of training (``is_the_final_export``)."""

    def __init__(self, name, serving_input_receiver_fn, assets_extra=None,
                 as_text=False) -> None:
        self._saved_model_exporter = _SavedModelExporter(name, serving_input_receiver_fn,
                                                         assets_extra, as_text)

    @property
    def name(self) -> str:
        return self._saved_model_exporter.name

    def export(self, estimator, export_path, checkpoint_path, eval_result,
               is_the_final_export):
        if not is_the_final_export:
            return None
        logger.info("Performing the final export in the end of training.")
        return self._saved_model_exporter.export(estimator, export_path, checkpoint_path,
                                                 eval_result, is_the_final_export)


def _loss_smaller(best_eval_result, current_eval_result) -> bool:
    """True when the current ``loss`` is smaller than the best one."""
    key = "loss"
    if not best_eval_result or key not in best_eval_result:
        raise ValueError("best_eval_result cannot be empty or no loss is found in it.")
    if not current_eval_result or key not in current_eval_result:
        raise ValueError("current_eval_result cannot be empty or no loss is found in it.")
    return best_eval_result[key] > current_eval_result[key]


def _verify_compare_fn_args(compare_fn) -> None:
    args = set(util.fn_args(compare_fn))
    name = util.fn_name(compare_fn)
    for required in ("best_eval_result", "current_eval_result"):
        if required not in args:
            raise ValueError(f"compare_fn ({name}) must include {required} argument.")
    extra = sorted(args - {"best_eval_result", "current_eval_result"})
    if extra:
        raise ValueError(f"compare_fn ({name}) has following not expected args: {extra}")


class BestExporter(Exporter):
    """Exports when the model beats the best evaluation so far.

    On the first call (per model_dir) the best result is read from the evaluation event
    files matching `event_file_pattern` under ``model_dir``; the first call always
    exports (as TF 2.15's does: the event files already hold the evaluation that
    triggered it), later calls compare the new `eval_result` with the best using
    ``compare_fn(best_eval_result=..., current_eval_result=...)`` (default: smaller
    ``loss``).
    """

    def __init__(self, name="best_exporter", serving_input_receiver_fn=None,
                 event_file_pattern="eval/*.tfevents.*", compare_fn=_loss_smaller,
                 assets_extra=None, as_text=False, exports_to_keep=5) -> None:
        if compare_fn is None:
            raise ValueError("`compare_fn` must not be None.")
        if not callable(compare_fn):
            raise ValueError("`compare_fn` must be callable.")
        _verify_compare_fn_args(compare_fn)
        self._compare_fn = compare_fn
        self._saved_model_exporter = _SavedModelExporter(name, serving_input_receiver_fn,
                                                         assets_extra, as_text)
        self._event_file_pattern = event_file_pattern
        self._model_dir = None
        self._best_eval_result = None
        self._has_exported = False
        _check_exports_to_keep(exports_to_keep)
        self._exports_to_keep = exports_to_keep

    @property
    def name(self) -> str:
        return self._saved_model_exporter.name

    def export(self, estimator, export_path, checkpoint_path, eval_result,
               is_the_final_export):
        if self._model_dir != estimator.model_dir and self._event_file_pattern:
            logger.info("Loading best metric from event files.")
            self._model_dir = estimator.model_dir
            pattern = os.path.join(self._model_dir, self._event_file_pattern)
            self._best_eval_result = self._get_best_eval_result(pattern)
        if self._best_eval_result is None or not self._has_exported or self._compare_fn(
                best_eval_result=self._best_eval_result, current_eval_result=eval_result):
            logger.info("Performing best model export.")
            self._best_eval_result = eval_result
            result = self._saved_model_exporter.export(
                estimator, export_path, checkpoint_path, eval_result, is_the_final_export)
            garbage_collect_exports(export_path, self._exports_to_keep)
            self._has_exported = True
            return result
        return None

    def _get_best_eval_result(self, event_files: str):
        from flowgraph.summary.event_format import summary_iterator

        best = None
        for path in sorted(glob.glob(event_files)):
            try:
                events = list(summary_iterator(path))
            except (OSError, ValueError, errors.OpError) as e:
                logger.warning("Skipping unreadable event file %s: %s", path, e)
                continue
            for event in events:
                if not event.HasField("summary"):
                    continue
                result = {v.tag: v.simple_value for v in event.summary.value
                          if v.HasField("simple_value")}
                if result and (best is None or self._compare_fn(
                        best_eval_result=best, current_eval_result=result)):
                    best = result
        return best
