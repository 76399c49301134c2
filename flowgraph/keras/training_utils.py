"""Pieces `fit` shares with its `tf.data` loop: the `History` callback `fit` returns,
per-example sample weights from ``sample_weight`` / ``class_weight``, and the Keras
optimizer's state in a model's graph (`optimizer_state`).

Example
-------
>>> import numpy as np
>>> sample_weights_for([np.array([0, 1, 1])], None, {1: 2.0}, ["out"])[0].tolist()
[1.0, 2.0, 2.0]
"""

from __future__ import annotations

import time

import numpy as np

from flowgraph.keras.callbacks import Callback

__all__ = ["EpochPrinter", "History", "optimizer_state",
           "sample_weights_for", "to_list"]


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


def optimizer_state(model):
    """The Keras optimizer's state in the model's graph (None before training)."""
    from flowgraph.keras import optimizers

    opt = getattr(model, "optimizer", None)
    if not isinstance(opt, optimizers.Optimizer) or not model.outputs:
        return None
    return opt._graph_state(model.outputs[0].graph)


def _format_value(value: float) -> str:
    return f"{value:.4f}" if value > 1e-3 else f"{value:.4e}"  # Keras's Progbar rule


def _format_time(seconds: float, unit: str) -> str:
    if seconds >= 1:
        return f"{seconds:.0f}s/{unit}"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.0f}ms/{unit}"
    return f"{seconds * 1e6:.0f}us/{unit}"


class EpochPrinter:
    """`fit`'s output, as TF 2.15's graph-mode Keras prints it: ``Train on 80 samples,
    validate on 20 samples``, then per epoch ``Epoch 1/3`` and the epoch's line, with
    verbose=2 ``80/80 - 0s - loss: 0.6337 - acc: 0.6125 - 12ms/epoch - 150us/sample``
    (verbose=1: the finished progress bar ``80/80 [======...] - 0s 150us/sample - ...``).

    Example
    -------
    >>> p = EpochPrinter(2, 3, 8, "samples", 0)
    Train on 8 samples
    >>> p.begin(0)
    Epoch 1/3
    >>> p.line({"loss": 0.5, "acc": 0.0}, elapsed=0.004).split(" - ")[2:4]
    ['loss: 0.5000', 'acc: 0.0000e+00']
    """

    def __init__(self, verbose: int, epochs: int, count: int | None, unit: str,
                 validation_count: int | None) -> None:
        self.verbose, self.epochs, self.count, self.unit = verbose, epochs, count, unit
        self._start = 0.0
        if verbose and count is not None:  # a dataset without steps: no header
            text = f"Train on {count} {unit}"
            if validation_count:
                text += f", validate on {validation_count} {unit}"
            print(text)

    def begin(self, epoch: int) -> None:
        if self.verbose and self.epochs > 1:  # TF says nothing for a single epoch
            print(f"Epoch {epoch + 1}/{self.epochs}")
        self._start = time.monotonic()

    def line(self, logs: dict, elapsed: float | None = None) -> str:
        elapsed = time.monotonic() - self._start if elapsed is None else elapsed
        digits = len(str(self.count))
        count = f"{self.count:>{digits}}/{self.count}"
        values = "".join(f" - {k}: {_format_value(float(v))}" for k, v in logs.items())
        per_unit = _format_time(elapsed / max(self.count, 1), self.unit.rstrip("s"))
        if self.verbose == 1:
            return f"{count} [{'=' * 30}] - {elapsed:.0f}s {per_unit}{values}"
        return (f"{count} - {elapsed:.0f}s{values} - {_format_time(elapsed, 'epoch')} - "
                f"{per_unit}")

    def end(self, logs: dict) -> None:
        if self.verbose:
            print(self.line(logs))
