"""Pieces `fit` shares with its `tf.data` loop: the `History` callback `fit` returns, and
per-example sample weights from ``sample_weight`` / ``class_weight``.

Example
-------
>>> import numpy as np
>>> sample_weights_for([np.array([0, 1, 1])], None, {1: 2.0}, ["out"])[0].tolist()
[1.0, 2.0, 2.0]
"""

from __future__ import annotations

import numpy as np

from flowgraph.keras.callbacks import Callback

__all__ = ["History", "sample_weights_for", "to_list"]


def to_list(x) -> list:
    return list(x) if isinstance(x, list | tuple) else [x]


class History(Callback):
    """What `fit` returns: ``history`` maps each metric name (``loss``, ``acc``,
    ``val_loss``, ...) to its per-epoch values (``tf.keras.callbacks.History``)."""

    def __init__(self, model=None, params: dict | None = None) -> None:
        super().__init__()
        self.model, self.params = model, params or {}
        self.epoch: list[int] = []
        self.history: dict[str, list[float]] = {}

    def on_train_begin(self, logs=None) -> None:
        self.epoch = []

    def on_epoch_end(self, epoch, logs=None) -> None:
        self._append(epoch, logs or {})

    def _append(self, epoch: int, logs: dict) -> None:
        self.epoch.append(epoch)
        for key, value in logs.items():
            self.history.setdefault(key, []).append(value)


def sample_weights_for(ys: list, sample_weight, class_weight, names: list[str]) -> list:
    """One ``(n,)`` float array (or None) per output: `sample_weight` times the weight of
    each example's class in `class_weight` (a dict, or a dict of dicts keyed by output)."""
    n_out = len(names)
    if sample_weight is None:
        sws = [None] * n_out
    elif isinstance(sample_weight, dict):
        sws = [sample_weight.get(n) for n in names]
    elif isinstance(sample_weight, list | tuple):
        sws = list(sample_weight)
    else:
        sws = [sample_weight] * n_out
    sws = [None if w is None else np.asarray(w, np.float32).reshape(-1) for w in sws]
    if class_weight is None:
        return sws
    if all(isinstance(v, dict) for v in class_weight.values()) and class_weight:
        cws = [class_weight.get(n) for n in names]
    else:
        cws = [class_weight] * n_out
    for i, (y, cw) in enumerate(zip(ys, cws, strict=True)):
        if cw is None:
            continue
        y = np.asarray(y)
        classes = np.argmax(y, -1) if y.ndim == 2 and y.shape[1] > 1 else \
            y.reshape(len(y), -1)[:, 0].astype(np.int64)
        weights = np.asarray([cw.get(int(c), 1.0) for c in classes], np.float32)
        sws[i] = weights if sws[i] is None else sws[i] * weights
    return sws
