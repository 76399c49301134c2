"""A warm training session for ``partial_fit``: the graph and session of one canned
model, kept alive between calls.

``Estimator.train`` builds a fresh graph, calls the ``model_fn``, creates a session,
restores the checkpoint and saves one at the end on every call; that is TensorFlow's
contract and ``fit`` keeps it. ``partial_fit`` is called once per epoch, often on small
data, where that fixed cost (tens of milliseconds) outweighs the steps themselves. So the
facade builds the same training graph once -- the canned estimator's own ``model_fn`` in
``TRAIN`` mode, the graph seed of its ``RunConfig``, features and labels fed through
placeholders instead of ``numpy_input_fn`` -- and keeps the session::

    partial_fit #1   build graph, restore or initialize, steps, save checkpoint
    partial_fit #2   (same graph and session)              steps, save checkpoint
    fit / set_params / new schema or dtypes   -> close; the next partial_fit rebuilds

The checkpoint is written lazily: the fitted model's state holds the trainer's ``save``
and runs it before anything reads the model directory (``predict``, ``estimator_``,
pickling, ``fit``), and the session saves before it is closed; so every reader sees
exactly what was trained, and a run of ``partial_fit`` calls writes no checkpoint. A NaN loss raises
`NanLossDuringTrainingError`, as the Estimator's `NanTensorHook` does. Batches are drawn
from a fresh permutation of the rows each epoch, continuing across calls.
"""

from __future__ import annotations

import os
import weakref

import numpy as np

__all__ = ["WarmTrainer", "signature_of"]


def _storable(array: np.ndarray) -> np.ndarray:
    from flowgraph.estimators.inputs import _storable as storable

    return storable(array)


def signature_of(features: dict, labels: np.ndarray) -> tuple:
    """What the graph's placeholders depend on: names, dtypes and per-row shapes."""
    def one(a):
        a = np.asarray(a)
        return ("string" if a.dtype.kind in "OUS" else a.dtype.str, a.shape[1:])

    return (tuple((k, *one(v)) for k, v in sorted(features.items())), one(labels))


class WarmTrainer:
    """The training graph and session of `estimator` (a canned `Estimator`), for feeding
    arrays shaped like `features` / `labels`."""

    def __init__(self, estimator, features: dict, labels: np.ndarray, seed: int) -> None:
        from flowgraph import train
        from flowgraph.estimators import estimator_util as util
        from flowgraph.estimators.model_fn import ModeKeys
        from flowgraph.framework import dtypes
        from flowgraph.framework.graph import Graph, set_random_seed
        from flowgraph.ops.array_ops import placeholder

        config = estimator.config
        self.model_dir = estimator.model_dir
        self.graph = Graph()
        with self.graph.as_default():
            set_random_seed(config.tf_random_seed)
            self._global_step = train.get_or_create_global_step(self.graph)
            self._feeds = {}
            for i, (key, value) in enumerate(sorted(features.items())):
                value = _storable(value)
                dtype = dtypes.string if value.dtype == object else dtypes.as_dtype(value.dtype)
                self._feeds[key] = placeholder(dtype, [None, *value.shape[1:]],
                                               name=f"feature_{i}")
            self._label = placeholder(dtypes.as_dtype(labels.dtype), [None, *labels.shape[1:]],
                                      name="labels")
            spec = util.call_model_fn(estimator._model_fn, dict(self._feeds), self._label,
                                      ModeKeys.TRAIN, estimator.params, config)
            self._fetches = [spec.train_op, spec.loss]
            saver = train.Saver(sharded=True, max_to_keep=config.keep_checkpoint_max,
                                save_relative_paths=True)
            scaffold = train.Scaffold(saver=saver)
            scaffold.finalize()
            self._saver = saver
            self.session = train.ChiefSessionCreator(
                scaffold=scaffold, checkpoint_dir=self.model_dir,
                config=config.session_config).create_session()
        self._close = weakref.finalize(self, self.session.close)
        self._rng = np.random.RandomState(seed)
        self._order = np.empty(0, dtype=np.int64)
        self._n_rows = None
        self._dirty = False

    def save(self) -> None:
        """Write a checkpoint of what was trained since the last save."""
        if self._dirty and self._close.alive:
            step = int(self.session.run(self._global_step))
            self._saver.save(self.session, os.path.join(self.model_dir, "model.ckpt"),
                             global_step=step)
        self._dirty = False

    def close(self, save: bool = True) -> None:
        if save:
            self.save()
        self._close()

    def _next_rows(self, n: int, batch: int) -> np.ndarray:
        """The next `batch` row indices of the running sequence of epoch permutations."""
        if self._n_rows != n:  # new data: start a new epoch
            self._n_rows, self._order = n, np.empty(0, dtype=np.int64)
        while len(self._order) < batch:
            self._order = np.concatenate([self._order, self._rng.permutation(n)])
        rows, self._order = self._order[:batch], self._order[batch:]
        return rows

    def train(self, features: dict, labels: np.ndarray, steps: int, batch: int) -> None:
        """Run `steps` training steps on `batch`-row samples (`save` writes them)."""
        from flowgraph.train import NanLossDuringTrainingError

        arrays = {k: _storable(v) for k, v in features.items()}
        n = len(labels)
        run = self.session.run
        for _ in range(steps):
            rows = np.sort(self._next_rows(n, batch))
            feed = {ph: arrays[k][rows] for k, ph in self._feeds.items()}
            feed[self._label] = labels[rows]
            loss = run(self._fetches, feed_dict=feed)[1]
            self._dirty = True
            if not np.all(np.isfinite(loss)):
                raise NanLossDuringTrainingError
