"""`Model.compile`, `fit`, `evaluate` and `predict` on NumPy arrays.

`compile` only records the optimizer, the loss (and loss weight) of each output and the
metrics; graph pieces are built when first needed, in the model's graph:

* for training, the model is applied once more to its own inputs with ``training=True``
  (a Python bool: dropout and batch statistics are chosen while the graph is built, no
  `tf.cond`), with target placeholders, the total loss (the batch mean of each output's
  per-example loss, weighted, plus the layers' regularization losses), the metrics, and
  a train op that also runs the layers' state updates (batch-norm moving averages);
* for evaluation and prediction, the model applied with ``training=False``.

`training_loss` and `training_metrics` are the same recipe for other callers
(`model_to_estimator`). Values are fed batch by batch to `backend.get_session()`.

Example
-------
>>> import numpy as np, flowgraph as tf
>>> from flowgraph import keras
>>> with tf.Graph().as_default():
...     model = keras.Sequential([keras.layers.Dense(1, input_shape=(2,))])
...     model.compile(keras.optimizers.SGD(0.1), loss="mse")
...     x = np.random.RandomState(0).rand(64, 2)
...     y = x @ np.array([[1.0], [-2.0]]) + 0.5
...     history = model.fit(x, y, epochs=60, batch_size=16, verbose=0)
...     print(round(float(history.history["loss"][-1]), 3) < 0.01)
True
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.graph import name_scope
from flowgraph.keras import backend, losses, optimizers, training_data
from flowgraph.keras.callbacks import CallbackList
from flowgraph.keras.compiled_metrics import (
    _metric_entries,
    combine_runs,
    reset_metric_states,
    running_means,
    running_positions,
    stateful_positions,
    training_metrics,
)
from flowgraph.keras.layer_members import metric_mark
from flowgraph.keras.training_data import DatasetLoopsMixin
from flowgraph.keras.training_utils import (
    EpochPrinter,
    History,
    sample_weights_for,
    to_list,
)
from flowgraph.keras.weights_checkpoint import WeightsFilesMixin
from flowgraph.ops import array_ops, array_shape_ops, math_ops, math_reduce
from flowgraph.ops.control_flow_ops import group
from flowgraph.train.optimizer import Optimizer as _TFOptimizer

__all__ = ["History", "TrainingMixin", "target_placeholder", "training_loss",
           "training_metrics"]


def _per_output(spec, names: list[str], what: str, convert) -> list:
    """A compile() argument (one value, a list or a dict keyed by output name) as one
    value per output."""
    if isinstance(spec, dict):
        unknown = sorted(set(spec) - set(names))
        if unknown:
            raise ValueError(f"Unknown entries in {what} dictionary: {unknown}. Only expected "
                             f"following keys: {names}")
        return [convert(spec.get(n)) for n in names]
    if isinstance(spec, list | tuple) and what == "loss":
        if len(spec) != len(names):
            raise ValueError(f"When passing a list as {what}, it should have one entry per "
                             f"model output. The model has {len(names)} outputs ({names}), "
                             f"but you passed {what}={spec!r}")
        return [convert(s) for s in spec]
    return [convert(spec) for _ in names]


def _metric_specs(metrics, names: list[str], what: str) -> list[list]:
    """compile()'s `metrics` / `weighted_metrics` as one list of metrics per output."""
    if isinstance(metrics, dict):
        return _per_output(metrics, names, what, lambda m: [] if m is None else
                           list(m) if isinstance(m, list | tuple) else [m])
    return [list(metrics or []) for _ in names]


def target_placeholder(loss_fn, output, name: str):
    """A placeholder for the targets of `output`: integer class ids of shape
    ``output.shape[:-1]`` for the sparse loss, else the output's shape and dtype."""
    if losses.base_function(loss_fn) is losses.sparse_categorical_crossentropy:
        return array_ops.placeholder(_dtypes.int64, shape=output.shape[:-1], name=name)
    return array_ops.placeholder(output.dtype.base_dtype, shape=output.shape, name=name)


def training_loss(model, outputs: list, targets: list, sample_weights: list | None = None,
                  activity_losses: list | None = None):
    """``(total_loss, per_output_losses)`` of a compiled `model` for `outputs` (the model
    applied to some inputs) against `targets` (None entries: outputs without a loss).

    `sample_weights` (one ``(batch,)`` tensor or None per output) weight each example's
    loss; the batch loss stays the mean over the examples (Keras's
    ``SUM_OVER_BATCH_SIZE``), so weights of 1 change nothing."""
    sample_weights = sample_weights or [None] * len(outputs)
    total, per_output = None, []
    for fn, weight, y_pred, y_true, sw, name in zip(
            model._loss_fns, model._loss_weights, outputs, targets, sample_weights,
            model.output_names, strict=True):
        if fn is None:
            continue
        if y_true is None:
            raise ValueError(f"Output {name!r} has a loss but no target was given for it.")
        per_example = losses.per_example(fn)(y_true, y_pred)
        if sw is not None:
            per_example = math_ops.multiply(per_example, _broadcastable(sw, per_example))
        value = math_reduce.reduce_mean(per_example, name=f"{name}_loss")
        per_output.append(value)
        term = value if weight == 1 else math_ops.multiply(value, float(weight))
        total = term if total is None else math_ops.add(total, term)
    if total is None:
        raise ValueError("The model has no loss to optimize: pass `loss` to compile().")
    regularization = model.losses
    if activity_losses is not None:  # the activity penalties of the call made `outputs`
        regularization = [loss for loss in regularization
                          if not getattr(loss, "_keras_activity", False)] + activity_losses
    for reg in regularization:
        total = math_ops.add(total, math_ops.cast(reg, total.dtype.base_dtype))
    return total, per_output


def _broadcastable(weights, values):
    """`weights` ``(batch,)`` with trailing unit axes to multiply `values`."""
    weights = math_ops.cast(weights, values.dtype.base_dtype)
    for _ in range(max((values.shape.ndims or 1) - 1, 0)):
        weights = array_shape_ops.expand_dims(weights, -1)
    return weights


def _check_target_shapes(model, ys: list) -> None:
    """TF's check before a step: with the losses that compare elementwise (mean squared
    error, binary or categorical crossentropy) a target must have its output's shape."""
    strict = {losses.mean_squared_error: "mean_squared_error",
              losses.binary_crossentropy: "binary_crossentropy",
              losses.categorical_crossentropy: "categorical_crossentropy"}
    for fn, y, out in zip(model._loss_fns, ys, model.outputs, strict=True):
        name = strict.get(losses.base_function(fn)) if fn is not None else None
        if name is None or out.shape.ndims is None:
            continue
        want = out.shape.as_list()
        if y.ndim == len(want) and any(a is not None and a != b
                                       for a, b in zip(want[1:], y.shape[1:], strict=True)):
            shown = tuple(want)
            raise ValueError(f"A target array with shape {y.shape} was passed for an output "
                             f"of shape {shown} while using as loss `{name}`. This loss "
                             f"expects targets to have the same shape as the output.")


def _as_arrays(data, names: list[str], what: str) -> list[np.ndarray]:
    if isinstance(data, dict):
        missing = [n for n in names if n not in data]
        extra = sorted(set(data) - set(names))
        if missing or extra:
            raise ValueError(f"The {what} dictionary must have the keys {names}; missing "
                             f"{missing}, unexpected {extra}.")
        return [np.asarray(data[n]) for n in names]
    arrays = [np.asarray(a) for a in data] if isinstance(data, list | tuple) else \
        [np.asarray(data)]
    if len(arrays) != len(names):
        raise ValueError(f"Error when checking model {what}: the list of NumPy arrays should "
                         f"have {len(names)} entries ({names}), but got {len(arrays)}.")
    return arrays


def _shuffled(order, *data):
    """`data` (arrays, or lists / dicts of them, or None) in `order`: TF 1.x Keras's fit
    shuffles its validation samples each epoch (with NumPy's global generator, whatever
    `shuffle` says), which orders the batches the per-output losses are means of."""
    def take(d):
        if d is None:
            return None
        if isinstance(d, dict):
            return {k: take(v) for k, v in d.items()}
        if isinstance(d, list | tuple):
            return [take(v) for v in d]
        return np.asarray(d)[order]
    return tuple(take(d) for d in data)


class TrainingMixin(DatasetLoopsMixin, WeightsFilesMixin):
    """compile / fit / evaluate / predict for `Model` (see the module docstring)."""

    def _init_training(self) -> None:
        self.optimizer = None
        self.loss = None
        self._compiled = False
        self._train_graph: dict | None = None
        self._infer_graph = None

    def compile(self, optimizer="rmsprop", loss=None, metrics=None, loss_weights=None,
                sample_weight_mode=None, weighted_metrics=None, target_tensors=None,
                **kwargs) -> None:
        """Record the optimizer, the loss of each output (a name or function, or a list /
        dict keyed by output name), optional loss weights and the metrics."""
        if kwargs:
            raise TypeError(f"compile: unexpected keyword argument(s) {sorted(kwargs)}")
        if sample_weight_mode or target_tensors is not None:
            raise NotImplementedError("compile: sample_weight_mode and target_tensors are "
                                      "not supported by flowgraph.")
        if not self.outputs and getattr(self, "_subclassed", False):
            # built on the first data fit / evaluate / predict see, then compiled
            self._pending_compile = {"optimizer": optimizer, "loss": loss, "metrics": metrics,
                                     "loss_weights": loss_weights,
                                     "weighted_metrics": weighted_metrics}
            self.optimizer = optimizers.get(optimizer)
            return
        if not self.outputs:
            raise ValueError(f"Model {self.name} is not built: give its first layer an "
                             f"`input_shape` before compile().")
        names = self.output_names
        self.optimizer = optimizers.get(optimizer)
        self.loss = loss
        self._loss_fns = _per_output(loss, names, "loss", losses.get)
        weights = loss_weights if loss_weights is not None else 1.0
        if isinstance(weights, list | tuple):
            if len(weights) != len(names):
                raise ValueError(f"When passing a list as loss_weights, it should have one "
                                 f"entry per model output. The model has {len(names)} "
                                 f"outputs, but you passed loss_weights={weights}")
            weights = dict(zip(names, weights, strict=True))
        self._loss_weights = _per_output(weights, names, "loss_weights",
                                         lambda w: 1.0 if w is None else float(w))
        self._metric_specs = _metric_specs(metrics, names, "metrics")
        # weighted by the sample weights (and class weights), named 'weighted_<metric>'
        self._weighted_metric_specs = _metric_specs(weighted_metrics, names,
                                                    "weighted_metrics")
        self.__dict__.pop("_weighted_metric_objects", None)
        self._compile_args = {"optimizer": optimizer, "loss": loss, "metrics": metrics,
                              "loss_weights": loss_weights}
        if weighted_metrics:
            self._compile_args["weighted_metrics"] = weighted_metrics
        self._compiled = True
        self._train_graph = None
        if isinstance(self.optimizer, _TFOptimizer):  # a tf.train optimizer
            optimizers.tf_optimizer_iterations(self.optimizer)
        # the weights `fit` trains are those trainable now (Keras's collected trainable
        # weights): `layer.trainable = False` after compile changes nothing until the
        # next compile, the GAN idiom's assumption
        self._collected_trainable = list(self.trainable_weights)

    @property
    def metrics_names(self) -> list[str]:
        names = ["loss"]
        if len(self.outputs) > 1:
            names += [f"{n}_loss" for n, fn in zip(self.output_names, self._loss_fns,
                                                  strict=True) if fn is not None]
        if self._compiled:
            names += [name for name, _, _ in _metric_entries(self)]
        return names + self.added_metric_names()

    @property
    def metrics(self) -> list:
        """The compiled metrics as metric objects named as in `metrics_names` (the loss
        excluded), as TF's graph-mode Model lists them."""
        if not self._compiled:
            return []
        from flowgraph.keras.metrics_classes import MeanMetricWrapper

        key = tuple(name for name, _, _ in _metric_entries(self))
        cached = self.__dict__.get("_metric_objects")
        if cached is None or cached[0] != key:
            cached = (key, [fn if getattr(fn, "_stateful", False) else
                            MeanMetricWrapper(fn, name=name)
                            for name, _, fn in _metric_entries(self)])
            self._metric_objects = cached
        return list(cached[1])

    def _combine_runs(self, runs: list, weights: list | None = None) -> list:
        return combine_runs(self, runs, weights)

    def _reset_metric_states(self) -> None:
        reset_metric_states(self)

    # -- graph pieces ----------------------------------------------------------------------
    def _require_compiled(self, what: str) -> None:
        if not self._compiled:
            raise RuntimeError(f"You must compile your model before {what}. Use "
                               f"`model.compile(optimizer, loss)`.")

    def _inference(self) -> list:
        if self._infer_graph is None:
            self._infer_graph, self._infer_activity = self._call_with_activity(False)
        return self._infer_graph

    def _call_with_activity(self, training: bool) -> tuple[list, list]:
        """The model's outputs on its inputs, and the activity penalties that call made
        (TF invokes a model once; flowgraph once per mode, each with its own)."""
        before = {id(loss) for loss in self.losses}
        # add_metric entries made from here on are this call's
        self.__dict__.setdefault("_metric_marks", {})[training] = metric_mark()
        outputs = to_list(self._invoke(list(self.inputs), {"training": training}))
        return outputs, [loss for loss in self.losses if id(loss) not in before and
                         getattr(loss, "_keras_activity", False)]

    def _evaluation(self) -> dict:
        if self._train_graph is None:
            before = {id(u) for u in self.updates}
            train_outputs, train_activity = self._call_with_activity(True)
            updates = [u for u in self.updates if id(u) not in before]
            outputs = self._inference()
            targets = [None if fn is None else target_placeholder(fn, o, f"{n}_target")
                       for fn, o, n in zip(self._loss_fns, self.outputs, self.output_names,
                                           strict=True)]
            weights = [None if fn is None else array_ops.placeholder(
                _dtypes.float32, shape=[None], name=f"{n}_sample_weights")
                for fn, n in zip(self._loss_fns, self.output_names, strict=True)]
            loss, per_output = training_loss(self, train_outputs, targets, weights,
                                             train_activity)
            train_metrics = training_metrics(self, train_outputs, targets, weights)
            opt = optimizers.to_tf_optimizer(self.optimizer)
            trainable = getattr(self, "_collected_trainable", None)
            trainable = self.trainable_weights if trainable is None else trainable
            # no trainable weight (a frozen model): the step computes the loss only
            if not trainable:
                minimize = group()
            elif isinstance(self.optimizer, _TFOptimizer):
                # as TF's TFOptimizer wrapper: under `training/` (Adam's
                # training/beta1_power), counting steps in TFOptimizer/iterations
                with name_scope("training"):
                    minimize = opt.minimize(
                        loss, var_list=trainable,
                        global_step=optimizers.tf_optimizer_iterations(self.optimizer))
            else:
                minimize = opt.minimize(loss, var_list=trainable)
            test_loss, test_per_output = training_loss(
                self, outputs, targets, weights, self.__dict__.get("_infer_activity"))
            marks = self.__dict__["_metric_marks"]
            added_train = [t for t, _ in self.added_metric_fetches(marks[True])]
            added_test = [t for t, _ in self.added_metric_fetches(marks[False])]
            multi = len(self.outputs) > 1
            self._train_graph = {
                "optimizer": opt,  # its slots: the HDF5 file's optimizer_weights
                "targets": targets,
                "sample_weights": weights,
                "train_op": group(minimize, *updates),
                # one value per `metrics_names` entry: the per-output losses only with
                # several outputs (with one, 'loss' is the total, regularization included)
                "train_fetches": [loss, *(per_output if multi else []),
                                  *map(math_reduce.reduce_mean, train_metrics.values()),
                                  *added_train],
                "test_fetches": [test_loss, *(test_per_output if multi else []),
                                 *map(math_reduce.reduce_mean,
                                      training_metrics(self, outputs, targets,
                                                       weights).values()),
                                 *added_test],
            }
            deferred = self.__dict__.pop("_deferred_restore", None)
            if deferred is not None:
                self._weights_saver(deferred[1]).restore(backend.get_session(), deferred[0])
        return self._train_graph

    def _feed(self, xs, ys=None, sws=None) -> dict:
        feed = dict(zip(self.inputs, xs, strict=True))
        if ys is not None:
            graph = self._evaluation()
            sws = sws or [None] * len(ys)
            for t, w, y, sw in zip(graph["targets"], graph["sample_weights"], ys, sws,
                                   strict=True):
                if t is not None:
                    feed[t] = _match_rank(y, t.shape.ndims)
                    feed[w] = np.ones(len(y), np.float32) if sw is None else sw
        return feed

    def _data(self, x, y):
        xs = _as_arrays(x, self.input_names, "input")
        ys = None if y is None else _as_arrays(y, self.output_names, "target")
        counts = {len(a) for a in xs}
        if len(counts) > 1:
            raise ValueError(f"All input arrays (x) should have the same number of samples. "
                             f"Got array shapes: {[a.shape for a in xs]}")
        if ys is not None and {len(a) for a in ys} != counts:
            raise ValueError(f"Input arrays should have the same number of samples as target "
                             f"arrays. Found {counts.pop()} input samples and "
                             f"{len(ys[0])} target samples.")
        if ys is not None and getattr(self, "_compiled", False):
            _check_target_shapes(self, ys)
        return xs, ys

    def _maybe_build(self, x) -> None:
        if not self.inputs:
            if getattr(self, "_subclassed", False) and isinstance(x, list | tuple):
                self.build([(None, *np.asarray(a).shape[1:]) for a in x])
                return
            xs = _as_arrays(x, ["input"], "input")
            self.build((None, *xs[0].shape[1:]))

    # -- loops ------------------------------------------------------------------------------
    def _run_batches(self, fetches, xs, ys, batch_size, order=None,
                     callbacks=None, sws=None, mode: str = "train") -> list[float]:
        sess = backend.get_session()
        n = len(xs[0])
        order = np.arange(n) if order is None else order
        totals = None
        count = len(self.metrics_names)
        positions = running_positions(self)
        for batch, start in enumerate(range(0, n, batch_size)):
            idx = order[start:start + batch_size]
            if callbacks is not None:
                callbacks.call(f"on_{mode}_batch_begin", batch, {"batch": batch,
                                                                 "size": len(idx)})
            batch_sws = None if sws is None else [None if w is None else w[idx]
                                                  for w in sws]
            values = sess.run(fetches, feed_dict=self._feed([a[idx] for a in xs],
                                                            [a[idx] for a in ys], batch_sws))
            self._running = running_means(self, [float(v) for v in values[-count:]],
                                          len(idx), positions)
            if callbacks is not None:
                logs = dict(zip(self.metrics_names, self._running, strict=True))
                callbacks.call(f"on_{mode}_batch_end", batch, {"batch": batch,
                                                               "size": len(idx), **logs})
                if mode == "train" and getattr(self, "stop_training", False):
                    last = [float(v) for v in values[-count:]]
                    values = [v * len(idx) for v in last]
                    totals = values if totals is None else [
                        a + b for a, b in zip(totals, values, strict=True)]
                    return self._stateful_last([t / (start + len(idx)) for t in totals], last)
            last = [float(v) for v in values[-count:]]
            values = [v * len(idx) for v in last]
            totals = values if totals is None else [a + b for a, b in zip(totals, values,
                                                                        strict=True)]
        return self._stateful_last([t / n for t in totals], last)

    def _stateful_last(self, averaged: list, last: list) -> list:
        """`averaged`, with the stateful metrics' running results taken from `last` and
        the per-output losses' running means (of the batches' values) from the host."""
        for i in stateful_positions(self):
            averaged[i] = last[i]
        for i in running_positions(self):
            averaged[i] = self._running[i]
        return averaged

    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose=1, callbacks=None,
            validation_split=0.0, validation_data=None, shuffle=True, class_weight=None,
            sample_weight=None, initial_epoch=0, steps_per_epoch=None, **kwargs) -> History:
        """Train on NumPy arrays for `epochs` epochs of mini-batches (default 32).

        `x` / `y`: an array, a list of arrays (one per input / output) or a dict keyed by
        input / output name. Returns a `History`.
        """
        validation_steps = kwargs.pop("validation_steps", None)
        if kwargs:
            raise TypeError(f"fit: unexpected keyword argument(s) {sorted(kwargs)}")
        if training_data.is_dataset(x):
            return self._fit_dataset(x, y, epochs, verbose, callbacks, validation_data,
                                     initial_epoch, steps_per_epoch, validation_steps,
                                     class_weight)
        if getattr(self, "_pending_compile", None) is None:
            self._require_compiled("training/testing")
        self._maybe_build(x)
        self._require_compiled("training/testing")
        xs, ys = self._data(x, y)
        if ys is None:
            raise ValueError("fit needs targets `y`.")
        sws = sample_weights_for(ys, sample_weight, class_weight, self.output_names)
        if steps_per_epoch is not None:  # TF1: each step is one batch of all the data
            batch_size = len(xs[0])
        if validation_data is None and validation_split:
            split = int(len(xs[0]) * (1.0 - validation_split))
            validation_data = ([a[split:] for a in xs], [a[split:] for a in ys],
                               [None if w is None else w[split:] for w in sws])
            xs, ys = [a[:split] for a in xs], [a[:split] for a in ys]
            sws = [None if w is None else w[:split] for w in sws]
        batch_size = batch_size or 32
        graph = self._evaluation()
        names = self.metrics_names
        history = History(self, {"batch_size": batch_size, "epochs": epochs, "steps": None,
                                 "samples": len(xs[0]), "verbose": verbose,
                                 "do_validation": validation_data is not None,
                                 "metrics": training_data.metric_params(
                                     names, validation_data is not None)})
        fetches = [graph["train_op"], *graph["train_fetches"]]
        cbs = CallbackList(callbacks, self, history.params)
        hooks = cbs if cbs.callbacks else None
        self.stop_training = False
        self.history = history
        printer = EpochPrinter(verbose, epochs, len(xs[0]), "samples", None if
                               validation_data is None else len(_as_arrays(
                                   validation_data[0], self.input_names, "input")[0]))
        cbs.call("on_train_begin", {})
        for epoch in range(initial_epoch, epochs):
            printer.begin(epoch)
            cbs.call("on_epoch_begin", epoch, {})
            order = np.random.permutation(len(xs[0])) if shuffle else None
            self._reset_metric_states()
            runs = [self._run_batches(fetches, xs, ys, batch_size, order, hooks, sws)
                    for _ in range(steps_per_epoch or 1)]
            logs = dict(zip(names, self._combine_runs(runs), strict=True))
            if validation_data is not None:
                vx, vy = validation_data[0], validation_data[1]
                vsw = validation_data[2] if len(validation_data) > 2 else None
                if not training_data.is_dataset(vx):
                    vx, vy, vsw = _shuffled(np.random.permutation(len(_as_arrays(
                        vx, self.input_names, "input")[0])), vx, vy, vsw)
                values = to_list(self.evaluate(vx, vy, batch_size=batch_size, verbose=0,
                                                sample_weight=vsw, callbacks=cbs))
                logs.update({f"val_{k}": float(v) for k, v in zip(names, values, strict=True)})
            printer.end(logs)
            cbs.call("on_epoch_end", epoch, logs)
            history._append(epoch, logs)  # last, as TF's History: sees e.g. 'lr' added
            if self.stop_training:
                break
        cbs.call("on_train_end", {})
        return history

    def evaluate(self, x=None, y=None, batch_size=None, verbose=1, sample_weight=None,
                 steps=None, callbacks=None, **kwargs):
        """The loss (and metrics: a list in `metrics_names` order) on NumPy data.
        `callbacks` get ``on_test_begin``, ``on_test_batch_begin`` / ``_end`` (the
        batch's loss and metrics) and ``on_test_end``."""
        if kwargs:
            raise TypeError(f"evaluate: unexpected keyword argument(s) {sorted(kwargs)}")
        cbs = callbacks if isinstance(callbacks, CallbackList) else \
            CallbackList(callbacks, self, {"verbose": verbose, "steps": steps,
                                           "batch_size": batch_size})
        cbs.call("on_test_begin", None)
        result = self._evaluate(x, y, batch_size, verbose, sample_weight, steps,
                                cbs if cbs.callbacks else None)
        cbs.call("on_test_end", None)
        # TF's types: the loss a float64 average, the metrics float32 results
        if isinstance(result, list):
            return [np.float64(result[0]), *(np.float32(v) for v in result[1:])]
        return np.float64(result)

    def _evaluate(self, x, y, batch_size, verbose, sample_weight, steps, hooks):
        kept = self.__dict__.pop("_keep_metric_states", False)
        if not kept:
            self._reset_metric_states()  # TF: evaluate starts its stateful metrics afresh
        if training_data.is_dataset(x):
            if getattr(self, "_pending_compile", None) is None:
                self._require_compiled("training/testing")

            def run(xs, ys, sw):
                self._require_compiled("training/testing")
                sws = sample_weights_for(ys, sw, None, self.output_names)
                return self._run_batches(self._evaluation()["test_fetches"], xs, ys,
                                         len(xs[0]), sws=sws, callbacks=hooks, mode="test")

            parts = self._dataset_loop(x, steps, run, "evaluate")  # averaged per step
            # ... the loss; the metrics are running results over the examples, as TF's
            values = self._stateful_last(self._combine_runs([v for _, v in parts]),
                                         parts[-1][1])
            return values[0] if len(values) == 1 else values
        if getattr(self, "_pending_compile", None) is None:
            self._require_compiled("training/testing")
        self._maybe_build(x)
        self._require_compiled("training/testing")
        xs, ys = self._data(x, y)
        if ys is None:
            raise ValueError("evaluate needs targets `y`.")
        if isinstance(sample_weight, list) and all(w is None for w in sample_weight):
            sample_weight = None
        sws = sample_weights_for(ys, sample_weight, None, self.output_names)
        values = self._run_batches(self._evaluation()["test_fetches"], xs, ys,
                                   batch_size or 32, sws=sws, callbacks=hooks, mode="test")
        if kept:  # test_on_batch: the running results, earlier batches included
            values = self._running
        # verbose: TF 2.15's graph-mode evaluate on arrays prints nothing either
        return values[0] if len(values) == 1 else values

    def predict(self, x, batch_size=None, verbose=0, steps=None, callbacks=None, **kwargs):
        """The outputs on NumPy inputs (an array, or a list for several outputs).
        `callbacks` get ``on_predict_begin``, ``on_predict_batch_begin`` / ``_end`` and
        ``on_predict_end``."""
        if kwargs:
            raise TypeError(f"predict: unexpected keyword argument(s) {sorted(kwargs)}")
        cbs = CallbackList(callbacks, self, {"verbose": verbose, "steps": steps,
                                              "batch_size": batch_size})
        cbs.call("on_predict_begin", None)
        result = self._predict(x, batch_size, steps, cbs if cbs.callbacks else None)
        cbs.call("on_predict_end", None)
        return result

    def _predict(self, x, batch_size, steps, hooks):
        if training_data.is_dataset(x):
            parts = self._dataset_loop(
                x, steps, lambda xs, ys, sw: to_list(self._predict(xs, len(xs[0]), None,
                                                                   hooks)),
                "predict")
            result = [np.concatenate([p[k] for _, p in parts]) for k in range(len(parts[0][1]))]
            return result[0] if len(result) == 1 else result
        self._maybe_build(x)
        xs, _ = self._data(x, None)
        outputs = self._inference()
        sess = backend.get_session()
        batch_size = batch_size or 32
        chunks = []
        for batch, i in enumerate(range(0, len(xs[0]), batch_size)):
            part = [a[i:i + batch_size] for a in xs]
            if hooks is not None:
                hooks.call("on_predict_batch_begin", batch, {"batch": batch,
                                                             "size": len(part[0])})
            chunks.append(sess.run(outputs, feed_dict=self._feed(part)))
            if hooks is not None:
                hooks.call("on_predict_batch_end", batch, {
                    "batch": batch, "size": len(part[0]),
                    "outputs": chunks[-1][0] if len(outputs) == 1 else chunks[-1]})
        result = [np.concatenate([c[k] for c in chunks]) for k in range(len(outputs))]
        return result[0] if len(result) == 1 else result

    def train_on_batch(self, x, y, sample_weight=None, class_weight=None):
        """One training step on one batch; returns the loss (and metrics)."""
        if getattr(self, "_pending_compile", None) is None:
            self._require_compiled("training/testing")
        self._maybe_build(x)
        self._require_compiled("training/testing")
        xs, ys = self._data(x, y)
        graph = self._evaluation()
        sws = sample_weights_for(ys, sample_weight, class_weight, self.output_names)
        self._run_batches([graph["train_op"], *graph["train_fetches"]], xs, ys, len(xs[0]),
                          sws=sws)
        # the metrics' running results, which may include batches since the last reset
        # (an `evaluate` before this call); TF's reset_metrics=True resets after the batch
        values = [np.float32(v) for v in self._running]
        self._reset_metric_states()
        return values[0] if len(values) == 1 else values

    def test_on_batch(self, x, y, sample_weight=None):
        """The loss (and metrics) on one batch, as float32 values like TF's."""
        self._keep_metric_states = True  # TF adds this batch to the running state ...
        values = self.evaluate(x, y, batch_size=len(_as_arrays(x, self.input_names,
                                                               "input")[0]), verbose=0,
                               sample_weight=sample_weight)
        self._reset_metric_states()  # ... and starts afresh after it (reset_metrics=True)
        if isinstance(values, list):
            return [np.float32(v) for v in values]
        return np.float32(values)

    def predict_on_batch(self, x):
        return self.predict(x, batch_size=len(_as_arrays(x, self.input_names, "input")[0]))


def _match_rank(y: np.ndarray, ndims: int | None) -> np.ndarray:
    """Targets ``(n,)`` for a ``(n, 1)`` placeholder and vice versa, as Keras allows."""
    if ndims is not None and y.ndim == ndims - 1:
        return y[..., None]
    if ndims is not None and y.ndim == ndims + 1 and y.shape[-1] == 1:
        return y[..., 0]
    return y


