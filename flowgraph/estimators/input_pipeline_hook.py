"""``tf.data.experimental.CheckpointInputPipelineHook``: an Estimator training hook that
checkpoints the position of the graph's tf.data iterators beside the model's own
checkpoints, so that training resumed in a new process continues the input pipeline
where it stopped instead of restarting its first epoch.

It saves, on the Estimator's checkpoint schedule (``save_checkpoints_steps`` /
``save_checkpoints_secs``), to ``<model_dir>/input.ckpt-<step>`` with its own state file
``checkpoint_input``; on the first step of a session it restores the latest one (or
saves the initial state when there is none). Iterator states are
`flowgraph.data.dataset_ops_optional.make_saveable_from_iterator`'s.

Example
-------
>>> import flowgraph as tf
>>> est = tf.estimator.Estimator(lambda features, labels, mode: None, model_dir="/tmp/x")
>>> hook = tf.data.experimental.CheckpointInputPipelineHook(est)
>>> hook._latest_filename
'checkpoint_input'
"""

from __future__ import annotations

from flowgraph.data import dataset_ops_experimental as _experimental
from flowgraph.data.dataset_ops_optional import make_saveable_from_iterator
from flowgraph.data.iterator import GLOBAL_ITERATORS
from flowgraph.framework.graph import get_default_graph
from flowgraph.train.basic_hooks_checkpoint import CheckpointSaverHook
from flowgraph.train.checkpoint_state import latest_checkpoint
from flowgraph.train.saver import Saver
from flowgraph.train.session_run_hook import SessionRunHook

__all__ = ["CheckpointInputPipelineHook"]


class _InputSaver(Saver):
    """A Saver of iterator states that keeps its own state file (``checkpoint_input``)
    and writes no meta graph."""

    def __init__(self, var_list, latest_filename: str) -> None:
        super().__init__(var_list, sharded=True)
        self._latest_filename = latest_filename

    def save(self, sess, save_path, global_step=None, latest_filename=None,
             meta_graph_suffix="meta", write_meta_graph=True, write_state=True,
             strip_default_attrs=False, save_debug_info=False):
        return super().save(sess, save_path, global_step=global_step,
                            latest_filename=latest_filename or self._latest_filename,
                            meta_graph_suffix=meta_graph_suffix, write_meta_graph=False,
                            write_state=write_state, strip_default_attrs=strip_default_attrs)


class CheckpointInputPipelineHook(SessionRunHook):
    """Checkpoints the input pipeline's iterators with the Estimator's checkpoints and
    restores them when training starts again (pass it in ``train(hooks=[...])``).

    Restoring replays the dataset from its start and skips the elements already read:
    the pipeline must produce the same order on each run (seeded shuffles).
    """

    def __init__(self, estimator, external_state_policy=None) -> None:
        config = estimator.config
        prefix = "input"
        if getattr(config, "num_worker_replicas", 1) > 1:
            prefix += f"_{config.task_type}_{config.task_id}"
        self._policy = external_state_policy
        self._saver_hook = CheckpointSaverHook(
            estimator.model_dir, save_secs=config.save_checkpoints_secs,
            save_steps=config.save_checkpoints_steps, checkpoint_basename=prefix + ".ckpt",
            save_graph_def=False)
        self._checkpoint_dir = estimator.model_dir
        self._latest_filename = "checkpoint_" + prefix
        self._first_run = True

    def begin(self) -> None:
        if self._saver_hook._saver is None:
            graph = get_default_graph()
            saveables = [make_saveable_from_iterator(_IteratorView(h), self._policy)
                         for h in graph.get_collection(GLOBAL_ITERATORS)]
            if not saveables:
                raise ValueError(
                    "CheckpointInputPipelineHook: the graph has no tf.data iterator to "
                    "checkpoint (the input_fn must return a Dataset or read one)")
            self._saver_hook._saver = _InputSaver(saveables, self._latest_filename)
        self._saver_hook.begin()

    def after_create_session(self, session, coord) -> None:
        self._first_run = True

    def _restore_or_save_initial(self, session) -> None:
        path = latest_checkpoint(self._checkpoint_dir, latest_filename=self._latest_filename)
        if path:
            self._saver_hook._get_saver().restore(session, path)
        else:
            self._saver_hook.after_create_session(session, coord=None)

    def before_run(self, run_context):
        if self._first_run:
            self._restore_or_save_initial(run_context.session)
            self._first_run = False
        return self._saver_hook.before_run(run_context)

    def after_run(self, run_context, run_values) -> None:
        self._saver_hook.after_run(run_context, run_values)

    def end(self, session) -> None:
        self._saver_hook.end(session)


class _IteratorView:
    """An iterator handle from the ``iterators`` collection, as an Iterator."""

    def __init__(self, handle) -> None:
        self._handle = handle



# tf.data.experimental names the hook, though it lives a layer above tf.data.
_experimental.CheckpointInputPipelineHook = CheckpointInputPipelineHook
_experimental.__all__ = sorted({*_experimental.__all__, "CheckpointInputPipelineHook"})
