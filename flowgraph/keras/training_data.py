"""`tf.data` inputs for `Model.fit` / `evaluate` / `predict` (graph mode).

A dataset's elements are ``x``, ``(x, y)`` or ``(x, y, sample_weight)`` batches. They are
read in the Keras session, one batch per step, and fed to the model's placeholders like
NumPy batches. With `steps` (``steps_per_epoch``, ``steps``, ``validation_steps``) the
same one-shot iterator continues from epoch to epoch, as TF's does, so a dataset used that
way is usually ``.repeat()``-ed; without `steps`, each pass re-initializes an iterator
and runs until the dataset is exhausted.

Example
-------
>>> import numpy as np, flowgraph as tf
>>> with tf.Graph().as_default():
...     m = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
...     m.compile("sgd", "mse")
...     ds = tf.data.Dataset.from_tensor_slices((np.ones((8, 2)), np.ones((8, 1)))).batch(4)
...     print(len(m.fit(ds, epochs=2, verbose=0).history["loss"]))
2
"""

from __future__ import annotations

from flowgraph.keras.callbacks import CallbackList
from flowgraph.keras.training_utils import EpochPrinter, History, sample_weights_for, to_list

__all__ = ["DatasetLoopsMixin", "check_steps", "dataset_batches", "is_dataset",
           "metric_params", "repeats_forever"]


def is_dataset(x) -> bool:
    """Whether `x` is a `tf.data.Dataset` or a Python generator / iterator of batches
    (fed batch by batch) rather than arrays."""
    from flowgraph.data.dataset import Dataset

    return isinstance(x, Dataset) or _is_generator(x)


def _is_generator(x) -> bool:
    return hasattr(x, "__next__") and hasattr(x, "__iter__") and not hasattr(x, "shape")


def repeats_forever(dataset) -> bool:
    """Whether `dataset` is known to never end (a ``repeat()`` without a later ``take``
    or ``filter``): fit / evaluate / predict then need their `steps`."""
    while dataset is not None:
        kind = type(dataset).__name__
        if kind in ("TakeDataset", "FilterDataset", "TakeWhileDataset"):
            return False
        if kind == "RepeatDataset":
            count = getattr(dataset, "_count", None)
            return isinstance(count, int) and count < 0
        dataset = getattr(dataset, "_input", None)
    return False


def check_steps(dataset, steps, steps_name: str) -> None:
    """TF's error for an endless dataset given without its number of steps."""
    if steps is None and repeats_forever(dataset):
        raise ValueError(f"When passing an infinitely repeating dataset, you must specify "
                         f"the `{steps_name}` argument.")


def _iterator(model, dataset, steps):
    """``(next_element, initializer or None)``, cached per model and dataset: with steps,
    a one-shot iterator that continues across epochs; else an initializable one."""
    from flowgraph.framework.graph import name_scope

    cache = model.__dict__.setdefault("_dataset_iterators", {})
    key = (id(dataset), steps is not None)
    if key not in cache:
        with name_scope(None):
            if steps is not None:
                it = dataset.make_one_shot_iterator()
                cache[key] = (dataset, it.get_next(), None)
            else:
                it = dataset.make_initializable_iterator()
                cache[key] = (dataset, it.get_next(), it.initializer)
    return cache[key][1], cache[key][2]


def _split(element):
    if isinstance(element, tuple) and 2 <= len(element) <= 3:
        x, y = element[0], element[1]
        sw = element[2] if len(element) == 3 else None
        return x, y, sw
    return element, None, None


def dataset_batches(model, dataset, steps):
    """Yield ``(x, y, sample_weight)`` NumPy batches: `steps` of them, or until the
    dataset ends."""
    from flowgraph.framework import errors
    from flowgraph.keras import backend

    if _is_generator(dataset):  # a Python generator: `steps` batches, or to its end
        count = 0
        while steps is None or count < steps:
            try:
                element = next(dataset)
            except StopIteration:
                if steps is not None:
                    raise ValueError(f"The generator ran out of data after {count} of the "
                                     f"{steps} steps asked for.") from None
                return
            count += 1
            yield _split(tuple(element) if isinstance(element, list) else element)
        return
    next_element, initializer = _iterator(model, dataset, steps)
    sess = backend.get_session()
    if initializer is not None:
        sess.run(initializer)
    count = 0
    while steps is None or count < steps:
        try:
            element = sess.run(next_element)
        except errors.OutOfRangeError:
            if steps is not None:
                raise ValueError(f"The dataset ran out of data after {count} of the {steps} "
                                 f"steps asked for: repeat it (dataset.repeat()) or ask for "
                                 f"fewer steps.") from None
            return
        count += 1
        yield _split(element)


def metric_params(names: list[str], validating: bool) -> list[str]:
    """``params['metrics']`` of a fit: the metrics names, then their ``val_`` names when
    the fit validates (TF's callbacks see both)."""
    return [*names, *(f"val_{n}" for n in names)] if validating else list(names)


class DatasetLoopsMixin:
    """`fit` / `evaluate` / `predict` loops over a dataset (mixed into `TrainingMixin`)."""

    def _fit_dataset(self, dataset, y, epochs, verbose, callbacks, validation_data,
                     initial_epoch, steps_per_epoch, validation_steps,
                     class_weight=None) -> History:
        """`fit` on a `tf.data.Dataset` of ``(x, y)`` / ``(x, y, sample_weight)`` batches
        (each batch's sample weights times its examples' weights in `class_weight`)."""
        if y is not None:
            raise ValueError(f"You passed a dataset or dataset iterator ({dataset!r}) as input "
                             f"`x` to your model. In that case, you should not specify a "
                             f"target (`y`) argument, since the dataset or dataset iterator "
                             f"generates both input data and target data.")
        if not self._compiled and getattr(self, "_pending_compile", None) is None:
            self._require_compiled("training/testing")
        check_steps(dataset, steps_per_epoch, "steps_per_epoch")
        if is_dataset(validation_data):
            check_steps(validation_data, validation_steps, "validation_steps")
        names = None
        history = None
        cbs = hooks = None
        for epoch in range(initial_epoch, epochs):
            totals, seen, batch = None, 0, 0
            self._reset_metric_states()
            for bx, by, bsw in dataset_batches(self, dataset, steps_per_epoch):
                if history is None:  # built on the first batch
                    self._maybe_build(bx)
                    self._require_compiled("training/testing")
                    names = self.metrics_names
                    history = History(self, {
                        "batch_size": None, "epochs": epochs, "steps": steps_per_epoch,
                        "samples": steps_per_epoch, "verbose": verbose,
                        "do_validation": validation_data is not None,
                        "metrics": metric_params(names, validation_data is not None)})
                    cbs = CallbackList(callbacks, self, history.params)
                    hooks = cbs if cbs.callbacks else None
                    self.stop_training = False
                    self.history = history
                    printer = EpochPrinter(verbose, epochs, steps_per_epoch, "steps",
                                           validation_steps if validation_data is not None
                                           else None)
                    cbs.call("on_train_begin", {})
                    printer.begin(epoch)
                    cbs.call("on_epoch_begin", epoch, {})
                elif batch == 0:
                    printer.begin(epoch)
                    cbs.call("on_epoch_begin", epoch, {})
                xs, ys = self._data(bx, by)
                sws = sample_weights_for(ys, bsw, class_weight, self.output_names)
                graph = self._evaluation()
                if hooks is not None:
                    hooks.call("on_train_batch_begin", batch, {"batch": batch,
                                                               "size": len(xs[0])})
                values = self._run_batches([graph["train_op"], *graph["train_fetches"]], xs,
                                           ys, len(xs[0]), sws=sws)
                if hooks is not None:
                    hooks.call("on_train_batch_end", batch, {
                        "batch": batch, "size": len(xs[0]),
                        **dict(zip(names, self._running, strict=True))})
                # TF averages a dataset's batches per step, whatever their sizes
                totals = list(values) if totals is None else \
                    [t + v for t, v in zip(totals, values, strict=True)]
                last = values
                seen += 1
                batch += 1
                if self.stop_training:
                    break
            if history is None:
                raise ValueError("The dataset gave no batch to train on.")
            logs = dict(zip(names, self._stateful_last([t / seen for t in totals], last),
                            strict=True))
            if validation_data is not None:
                vx = validation_data if is_dataset(validation_data) else \
                    validation_data[0]
                vy = None if is_dataset(validation_data) else validation_data[1]
                values = to_list(self.evaluate(vx, vy, verbose=0, steps=validation_steps,
                                               callbacks=cbs))
                logs.update({f"val_{k}": float(v) for k, v in zip(names, values, strict=True)})
            printer.count = printer.count or seen
            printer.end(logs)
            cbs.call("on_epoch_end", epoch, logs)
            history._append(epoch, logs)
            if self.stop_training:
                break
        cbs.call("on_train_end", {})
        return history

    def _dataset_loop(self, dataset, steps, fetch_of, what: str) -> list:
        """Per-batch results of `fetch_of(xs, ys, sws)` over the dataset's batches."""
        check_steps(dataset, steps, "steps")
        results = []
        for bx, by, bsw in dataset_batches(self, dataset, steps):
            self._maybe_build(bx)
            xs, ys = self._data(bx, by)
            results.append((len(xs[0]), fetch_of(xs, ys, bsw)))
        if not results:
            raise ValueError(f"{what}: the dataset gave no batch.")
        return results

    # -- the TF1 generator methods: fit / evaluate / predict on a generator ---------------
    def fit_generator(self, generator, steps_per_epoch=None, epochs=1, verbose=1,
                      callbacks=None, validation_data=None, validation_steps=None,
                      validation_freq=1, class_weight=None, max_queue_size=10, workers=1,
                      use_multiprocessing=False, shuffle=True, initial_epoch=0):
        """`fit` on a generator (or dataset) of ``(x, y)`` / ``(x, y, sample_weight)``
        batches; deprecated in TF for `fit`, which takes generators too."""
        return self.fit(generator, steps_per_epoch=steps_per_epoch, epochs=epochs,
                        class_weight=class_weight,
                        verbose=verbose, callbacks=callbacks, validation_data=validation_data,
                        validation_steps=validation_steps, initial_epoch=initial_epoch,
                        shuffle=shuffle)  # a Sequence's batch order, per epoch

    def evaluate_generator(self, generator, steps=None, callbacks=None, max_queue_size=10,
                           workers=1, use_multiprocessing=False, verbose=0):
        """`evaluate` on a generator of batches."""
        return self.evaluate(generator, steps=steps, callbacks=callbacks, verbose=verbose)

    def predict_generator(self, generator, steps=None, callbacks=None, max_queue_size=10,
                          workers=1, use_multiprocessing=False, verbose=0):
        """`predict` on a generator of input batches."""
        return self.predict(generator, steps=steps, callbacks=callbacks, verbose=verbose)
