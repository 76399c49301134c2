"""`tf.keras.callbacks` for `Model.fit`: hooks called at the start and end of training,
of each epoch and of each batch, with the epoch's logs (``loss``, metrics, ``val_*``).

`fit` calls, in order: ``set_model``, ``set_params``, ``on_train_begin``; per epoch
``on_epoch_begin``, per batch ``on_batch_begin``/``on_batch_end`` (``logs['loss']`` is
the batch's loss), ``on_epoch_end`` (the epoch's averaged logs); ``on_train_end``. A
callback stops training by setting ``self.model.stop_training = True``.

Example
-------
>>> import numpy as np
>>> import flowgraph as tf
>>> from flowgraph import keras
>>> with tf.Graph().as_default():
...     m = keras.Sequential([keras.layers.Dense(1, input_shape=(2,))])
...     m.compile("sgd", "mse")
...     seen = []
...     cb = keras.callbacks.LambdaCallback(on_epoch_end=lambda e, logs: seen.append(e))
...     _ = m.fit(np.ones((4, 2)), np.ones((4, 1)), epochs=3, verbose=0, callbacks=[cb])
>>> seen
[0, 1, 2]
"""

from __future__ import annotations

import csv
import os

import numpy as np

__all__ = ["BaseLogger", "CSVLogger", "Callback", "EarlyStopping", "LambdaCallback",
           "LearningRateScheduler", "ModelCheckpoint", "ProgbarLogger", "ReduceLROnPlateau",
           "RemoteMonitor", "TensorBoard", "TerminateOnNaN"]


class Callback:
    """The base class: every hook does nothing."""

    def __init__(self) -> None:
        self.model = None
        self.params: dict = {}
        self.validation_data = None

    def set_params(self, params: dict) -> None:
        self.params = params

    def set_model(self, model) -> None:
        self.model = model

    def on_train_begin(self, logs=None) -> None:
        pass

    def on_train_end(self, logs=None) -> None:
        pass

    def on_epoch_begin(self, epoch, logs=None) -> None:
        pass

    def on_epoch_end(self, epoch, logs=None) -> None:
        pass

    def on_batch_begin(self, batch, logs=None) -> None:
        pass

    def on_batch_end(self, batch, logs=None) -> None:
        pass

    def on_train_batch_begin(self, batch, logs=None) -> None:
        self.on_batch_begin(batch, logs=logs)  # Keras: the train hooks call the old names

    def on_train_batch_end(self, batch, logs=None) -> None:
        self.on_batch_end(batch, logs=logs)

    def on_test_begin(self, logs=None) -> None:
        pass

    def on_test_end(self, logs=None) -> None:
        pass

    def on_test_batch_begin(self, batch, logs=None) -> None:
        pass

    def on_test_batch_end(self, batch, logs=None) -> None:
        pass

    def on_predict_begin(self, logs=None) -> None:
        pass

    def on_predict_end(self, logs=None) -> None:
        pass

    def on_predict_batch_begin(self, batch, logs=None) -> None:
        pass

    def on_predict_batch_end(self, batch, logs=None) -> None:
        pass


class CallbackList:
    """The callbacks of one `fit` call, called in order."""

    def __init__(self, callbacks, model, params: dict) -> None:
        self.callbacks = list(callbacks or [])
        for cb in self.callbacks:
            if not isinstance(cb, Callback):
                raise TypeError(f"callbacks must be tf.keras.callbacks.Callback instances, got "
                                f"{cb!r}")
            cb.set_model(model)
            cb.set_params(params)

    def call(self, hook: str, *args) -> None:
        """Call `hook` on each callback with `args` by position, as Keras does (a
        LambdaCallback's function may name its parameters as it likes)."""
        for cb in self.callbacks:
            getattr(cb, hook)(*args)


class LambdaCallback(Callback):
    """A callback from functions: ``on_epoch_begin(epoch, logs)``, ``on_epoch_end(epoch,
    logs)``, ``on_batch_begin(batch, logs)``, ``on_batch_end(batch, logs)``,
    ``on_train_begin(logs)``, ``on_train_end(logs)``; any other hook by keyword, as in
    Keras (``on_test_batch_end=``, ``on_predict_end=``, ...)."""

    def __init__(self, on_epoch_begin=None, on_epoch_end=None, on_batch_begin=None,
                 on_batch_end=None, on_train_begin=None, on_train_end=None, **kwargs) -> None:
        super().__init__()
        for name, fn in kwargs.items():
            setattr(self, name, fn)
        for name, fn in (("on_epoch_begin", on_epoch_begin), ("on_epoch_end", on_epoch_end),
                         ("on_batch_begin", on_batch_begin), ("on_batch_end", on_batch_end),
                         ("on_train_begin", on_train_begin), ("on_train_end", on_train_end)):
            if fn is not None:
                setattr(self, name, fn)


class TerminateOnNaN(Callback):
    """Stop training when a batch's loss is NaN or infinite."""

    def on_batch_end(self, batch, logs=None) -> None:
        loss = (logs or {}).get("loss")
        if loss is not None and not np.isfinite(loss):
            print(f"Batch {batch}: Invalid loss, terminating training")
            self.model.stop_training = True


def _better(mode: str, monitor: str):
    if mode == "min" or (mode == "auto" and "acc" not in monitor):
        return np.less, np.inf
    return np.greater, -np.inf


class EarlyStopping(Callback):
    """Stop when `monitor` has not improved by more than `min_delta` for `patience`
    epochs (counted from `start_from_epoch`; never after the first epoch); optionally
    put back the best epoch's weights. An epoch resets the wait only when it beats both
    the best value and `baseline`."""

    def __init__(self, monitor="val_loss", min_delta=0, patience=0, verbose=0, mode="auto",
                 baseline=None, restore_best_weights=False, start_from_epoch=0) -> None:
        super().__init__()
        if mode not in ("auto", "min", "max"):
            raise ValueError(f"EarlyStopping mode {mode!r} is unknown; use 'auto', 'min' or "
                             "'max'")
        self.monitor, self.patience, self.verbose = monitor, int(patience), verbose
        self.baseline, self.restore_best_weights = baseline, restore_best_weights
        self.start_from_epoch = start_from_epoch
        self.monitor_op, self._start = _better(mode, monitor)
        self.min_delta = abs(min_delta) if self.monitor_op is np.greater else -abs(min_delta)
        self.wait, self.stopped_epoch, self.best_weights, self.best_epoch = 0, 0, None, 0
        self.best = self._start

    def _is_improvement(self, current, reference) -> bool:
        return bool(self.monitor_op(current - self.min_delta, reference))

    def on_train_begin(self, logs=None) -> None:
        self.wait, self.stopped_epoch, self.best_epoch = 0, 0, 0
        self.best, self.best_weights = self._start, None

    def on_epoch_end(self, epoch, logs=None) -> None:
        current = (logs or {}).get(self.monitor)
        if current is None:
            import logging

            logging.getLogger("tensorflow").warning(
                "Early stopping conditioned on metric `%s` which is not available. "
                "Available metrics are: %s", self.monitor, ",".join(logs or {}))
            return
        if epoch < self.start_from_epoch:
            return
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights = self.model.get_weights()  # no progress ever: epoch 1's
        self.wait += 1
        if self._is_improvement(current, self.best):
            self.best, self.best_epoch = current, epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            if self.baseline is None or self._is_improvement(current, self.baseline):
                self.wait = 0
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True
            if self.restore_best_weights and self.best_weights is not None:
                if self.verbose > 0:
                    print(f"Restoring model weights from the end of the best epoch: "
                          f"{self.best_epoch + 1}.")
                self.model.set_weights(self.best_weights)

    def on_train_end(self, logs=None) -> None:
        if self.stopped_epoch > 0 and self.verbose > 0:
            print(f"Epoch {self.stopped_epoch + 1}: early stopping")


class ModelCheckpoint(Callback):
    """Save the model (`Model.save`; `Model.save_weights` with `save_weights_only`) after
    every `period` epochs to `filepath`, formatted with ``epoch`` (1-based) and the logs
    (``"w-{epoch:02d}-{val_loss:.2f}.h5"``); with `save_best_only`, only when `monitor`
    improved on `best` (`initial_value_threshold` to start from)."""

    def __init__(self, filepath, monitor="val_loss", verbose=0, save_best_only=False,
                 save_weights_only=False, mode="auto", save_freq="epoch", options=None,
                 initial_value_threshold=None, period=None, **kwargs) -> None:
        super().__init__()
        if kwargs:
            raise TypeError(f"ModelCheckpoint: unexpected keyword argument(s) "
                            f"{sorted(kwargs)}")
        if save_freq != "epoch":
            raise NotImplementedError("ModelCheckpoint(save_freq=<batches>) is not supported "
                                      "by flowgraph; save per epoch (save_freq='epoch').")
        self.filepath, self.monitor, self.verbose = os.fspath(filepath), monitor, verbose
        self.save_best_only, self.save_weights_only = save_best_only, save_weights_only
        self.period = int(period or 1)
        self.save_freq = save_freq
        self.monitor_op, self.best = _better(mode, monitor)
        if initial_value_threshold is not None:
            self.best = initial_value_threshold
        self.epochs_since_last_save = 0

    def on_epoch_end(self, epoch, logs=None) -> None:
        logs = logs or {}
        self.epochs_since_last_save += 1
        if self.epochs_since_last_save < self.period:
            return
        self.epochs_since_last_save = 0
        path = self.filepath.format(epoch=epoch + 1, **logs)
        if self.save_best_only:
            current = logs.get(self.monitor)
            if current is None:
                import logging

                logging.getLogger("tensorflow").warning(
                    "Can save best model only with %s available, skipping.", self.monitor)
                return
            if not self.monitor_op(current, self.best):
                if self.verbose > 0:
                    print(f"\nEpoch {epoch + 1}: {self.monitor} did not improve from "
                          f"{self.best:.5f}")
                return
            if self.verbose > 0:
                print(f"\nEpoch {epoch + 1}: {self.monitor} improved from {self.best:.5f} "
                      f"to {current:.5f}, saving model to {path}")
            self.best = current
        elif self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: saving model to {path}")
        if self.save_weights_only:
            self.model.save_weights(path, overwrite=True)
        else:
            self.model.save(path, overwrite=True)


class CSVLogger(Callback):
    """Write one row per epoch (``epoch`` and the logs) to a CSV file."""

    def __init__(self, filename, separator=",", append=False) -> None:
        super().__init__()
        self.filename, self.sep, self.append = filename, separator, append
        self._keys = None

    def on_train_begin(self, logs=None) -> None:
        self._file = open(self.filename, "a" if self.append else "w", newline="")
        self._writer = None

    def on_epoch_end(self, epoch, logs=None) -> None:
        logs = logs or {}
        if self._writer is None:
            self._keys = sorted(logs)
            if not any(k.startswith("val_") for k in self._keys):  # as Keras: always val_*
                self._keys += [f"val_{k}" for k in self._keys]
            self._writer = csv.DictWriter(self._file, ["epoch", *self._keys],
                                          delimiter=self.sep)
            if not self.append or self._file.tell() == 0:
                self._writer.writeheader()
        self._writer.writerow({"epoch": epoch, **{k: logs.get(k, "NA") for k in self._keys}})
        self._file.flush()

    def on_train_end(self, logs=None) -> None:
        self._file.close()


class TensorBoard(Callback):
    """Write the epoch logs as scalar summaries (``epoch_loss``, ``epoch_val_loss``, ...),
    the graph and, every `histogram_freq` epochs, a histogram of each weight
    (``dense/kernel_0``) to `log_dir`, as TF's graph-mode callback does."""

    def __init__(self, log_dir="./logs", histogram_freq=0, write_graph=True, **kwargs) -> None:
        super().__init__()
        self.log_dir, self.write_graph = os.fspath(log_dir), write_graph
        self.histogram_freq = int(histogram_freq or 0)
        self.writer = None

    def set_model(self, model) -> None:
        from flowgraph.summary.writer import FileWriter

        super().set_model(model)
        os.makedirs(self.log_dir, exist_ok=True)
        graph = model.outputs[0].graph if self.write_graph and model.outputs else None
        self.writer = FileWriter(self.log_dir, graph)

    def on_epoch_end(self, epoch, logs=None) -> None:
        from flowgraph.framework.event_messages import Summary

        values = [Summary.Value(tag=f"epoch_{k}", simple_value=float(v))
                  for k, v in (logs or {}).items()]
        self.writer.add_summary(Summary(value=values), epoch)
        if self.histogram_freq and epoch % self.histogram_freq == 0:
            from flowgraph.keras import backend

            for summary in backend.get_session().run(self._histograms()):
                self.writer.add_summary(summary, epoch)
        self.writer.flush()

    def _histograms(self) -> list:
        """One histogram summary op per model weight, made once."""
        if getattr(self, "_histogram_ops", None) is None:
            from flowgraph.framework.graph import name_scope
            from flowgraph.summary import summary_ops

            graph = self.model.outputs[0].graph
            with graph.as_default(), name_scope(None):
                self._histogram_ops = [
                    summary_ops.histogram(w.name.replace(":", "_"), w, collections=[])
                    for w in self.model.weights]
        return self._histogram_ops

    def on_train_end(self, logs=None) -> None:
        self.writer.close()


# -- learning-rate callbacks -------------------------------------------------------------------
def _lr_of(model):
    optimizer = getattr(model, "optimizer", None)
    if optimizer is None or not hasattr(optimizer, "lr"):
        raise ValueError('Optimizer must have a "lr" attribute.')
    return optimizer.lr


class LearningRateScheduler(Callback):
    """Set the learning rate at the start of each epoch to ``schedule(epoch, lr)`` (or
    ``schedule(epoch)``); the epoch's logs get ``lr``."""

    def __init__(self, schedule, verbose=0) -> None:
        super().__init__()
        self.schedule = schedule
        self.verbose = verbose

    def on_epoch_begin(self, epoch, logs=None) -> None:
        from flowgraph.keras import backend

        var = _lr_of(self.model)
        try:
            lr = self.schedule(epoch, float(backend.get_value(var)))
        except TypeError:  # a schedule of the epoch only (old Keras API)
            lr = self.schedule(epoch)
        if not isinstance(lr, float | int | np.floating | np.integer):
            raise ValueError(f'The output of the "schedule" function should be float. Got: '
                             f"{lr}")
        backend.set_value(var, float(lr))
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: LearningRateScheduler setting learning rate to "
                  f"{lr}.")

    def on_epoch_end(self, epoch, logs=None) -> None:
        from flowgraph.keras import backend

        if logs is not None:
            logs["lr"] = backend.get_value(_lr_of(self.model))


class ReduceLROnPlateau(Callback):
    """Multiply the learning rate by `factor` when `monitor` has not improved by
    `min_delta` for `patience` epochs (then wait `cooldown` epochs; never below
    `min_lr`); the epoch's logs get ``lr``."""

    def __init__(self, monitor="val_loss", factor=0.1, patience=10, verbose=0, mode="auto",
                 min_delta=1e-4, cooldown=0, min_lr=0, **kwargs) -> None:
        super().__init__()
        if factor >= 1.0:
            raise ValueError(f"ReduceLROnPlateau does not support a factor >= 1.0. Got "
                             f"{factor}")
        if mode not in ("auto", "min", "max"):
            mode = "auto"
        self.monitor, self.factor, self.patience = monitor, float(factor), patience
        self.verbose, self.mode, self.min_delta = verbose, mode, min_delta
        self.cooldown, self.min_lr = cooldown, min_lr
        self._reset()

    def _reset(self) -> None:
        if self.mode == "min" or (self.mode == "auto" and "acc" not in self.monitor):
            self.monitor_op = lambda a, b: np.less(a, b - self.min_delta)
            self.best = np.inf
        else:
            self.monitor_op = lambda a, b: np.greater(a, b + self.min_delta)
            self.best = -np.inf
        self.cooldown_counter = 0
        self.wait = 0

    def on_train_begin(self, logs=None) -> None:
        self._reset()

    def on_epoch_end(self, epoch, logs=None) -> None:
        from flowgraph.keras import backend

        logs = logs if logs is not None else {}
        var = _lr_of(self.model)
        logs["lr"] = backend.get_value(var)
        current = logs.get(self.monitor)
        if current is None:
            return
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.wait = 0
        if self.monitor_op(current, self.best):
            self.best = current
            self.wait = 0
        elif self.cooldown_counter <= 0:
            self.wait += 1
            if self.wait >= self.patience:
                old = float(backend.get_value(var))
                if old > np.float32(self.min_lr):
                    new = max(old * self.factor, self.min_lr)
                    backend.set_value(var, new)
                    if self.verbose > 0:
                        print(f"\nEpoch {epoch + 1}: ReduceLROnPlateau reducing learning "
                              f"rate to {new}.")
                    self.cooldown_counter = self.cooldown
                    self.wait = 0


class BaseLogger(Callback):
    """Accepted for compatibility: `fit` already averages the metrics over each epoch."""

    def __init__(self, stateful_metrics=None) -> None:
        super().__init__()
        self.stateful_metrics = set(stateful_metrics or [])


class ProgbarLogger(Callback):
    """Accepted for compatibility: `fit(verbose=1)` prints one line per epoch."""

    def __init__(self, count_mode="samples", stateful_metrics=None) -> None:
        super().__init__()
        self.count_mode = count_mode


class RemoteMonitor(Callback):
    """POST each epoch's logs (and ``epoch``) to ``root + path``: a form field `field`
    holding the JSON, or the JSON body with ``send_as_json``. A server that cannot be
    reached is reported as a warning (``tensorflow`` logger) and training goes on."""

    def __init__(self, root="http://localhost:9000", path="/publish/epoch/end/", field="data",
                 headers=None, send_as_json=False) -> None:
        super().__init__()
        self.root, self.path, self.field = root, path, field
        self.headers, self.send_as_json = headers, send_as_json

    def on_epoch_end(self, epoch, logs=None) -> None:
        import json
        import logging
        import urllib.error
        import urllib.parse
        import urllib.request

        send = {"epoch": epoch}
        for key, value in (logs or {}).items():
            send[key] = value.item() if isinstance(value, np.generic | np.ndarray) else value
        headers = dict(self.headers or {})
        if self.send_as_json:
            body = json.dumps(send).encode()
            headers.setdefault("Content-Type", "application/json")
        else:
            body = urllib.parse.urlencode({self.field: json.dumps(send)}).encode()
            headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
        request = urllib.request.Request(self.root + self.path, data=body, headers=headers,
                                         method="POST")
        try:
            urllib.request.urlopen(request, timeout=10).close()
        except (urllib.error.URLError, OSError, ValueError):
            logging.getLogger("tensorflow").warning(
                "Warning: could not reach RemoteMonitor root server at %s", self.root)
