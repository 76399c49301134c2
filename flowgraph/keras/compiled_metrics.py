"""The compiled metrics of a Keras model (`flowgraph.keras.training`): their entries, their
tensors in the training and test graphs, and the host-side running means.

TF's graph-mode Keras keeps every compiled metric in a stateful object: the metric
objects (`Precision`, `AUC`, ...) in their own variables, and the per-example functions
('acc', 'mae', `BinaryAccuracy()`) in a mean of the examples' values, the per-output
losses of a model with several outputs in a mean of the batches' values. A batch's logs
and `train_on_batch` report the result since the last reset (each epoch, each
`evaluate`; `train_on_batch` / `test_on_batch` reset after their batch). flowgraph runs
the metric objects as TF does and keeps the means on the host: `running_means` adds a
batch to ``model._metric_sums``, `reset_metric_states` clears it.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
...     model.compile("sgd", "mse", metrics=["mae"])
...     print(sorted(mean_positions(model)), running_means(model, [1.0, 2.0], 4,
...                                                         running_positions(model)))
[1] [1.0, 2.0]
"""

from __future__ import annotations

from flowgraph.framework.graph import control_dependencies
from flowgraph.keras import metrics
from flowgraph.ops import array_ops

__all__ = ["WeightedMetric", "combine_runs", "mean_positions", "output_loss_positions",
           "reset_metric_states", "running_means", "running_positions", "stateful_positions",
           "training_metrics"]


class WeightedMetric:
    """A compile() `weighted_metrics` entry: `metric` (a metric object, or the mean of a
    per-example function) updated with the batch's sample weights (class weights
    included), reported as a running result like the metric objects."""

    _stateful = True
    _weighted = True

    def __init__(self, metric, name: str) -> None:
        self.metric, self.name = metric, name

    def update_state(self, y_true, y_pred, sample_weight=None):
        return self.metric.update_state(y_true, y_pred, sample_weight=sample_weight)

    def result(self):
        return self.metric.result()

    def reset_states(self) -> None:
        self.metric.reset_states()

    variables = property(lambda self: self.metric.variables)


def _weighted(model, output: int, name: str, fn) -> WeightedMetric:
    """The `WeightedMetric` of `fn` for `output`, made once per compile."""
    made = model.__dict__.setdefault("_weighted_metric_objects", {})
    key = (output, name)
    if key not in made:
        from flowgraph.keras.metrics_classes import MeanMetricWrapper

        metric = fn if getattr(fn, "_stateful", False) else MeanMetricWrapper(fn, name=name)
        made[key] = WeightedMetric(metric, name)
    return made[key]


def _metric_entries(model) -> list[tuple[str, int, object]]:
    """``(metric name, output index, metric fn)`` of the compiled metrics: per output, its
    `metrics`, then its `weighted_metrics` (named ``weighted_<metric>``)."""
    entries = []
    multi = len(model.outputs) > 1
    weighted_specs = model.__dict__.get("_weighted_metric_specs") or \
        [[] for _ in model.outputs]
    for i, (specs, wspecs, fn_loss, output, name) in enumerate(zip(
            model._metric_specs, weighted_specs, model._loss_fns, model.outputs,
            model.output_names, strict=True)):
        seen = set()
        for spec, weighted in [*((s, False) for s in specs), *((s, True) for s in wspecs)]:
            mname, fn = metrics.resolve(spec, fn_loss, output)
            if weighted:
                mname = f"weighted_{mname}"
            if mname in seen:  # TF reports a metric named twice once
                continue
            seen.add(mname)
            if weighted:
                fn = _weighted(model, i, mname, fn)
            entries.append((f"{name}_{mname}" if multi else mname, i, fn))
    return entries


def training_metrics(model, outputs: list, targets: list,
                     sample_weights: list | None = None) -> dict:
    """``{metric name: per-example values}`` of the compiled metrics; a stateful metric
    object's (Precision, AUC, ...): its running result after this batch's update (a
    weighted metric's: updated with the output's `sample_weights`)."""
    out = {}
    for name, i, fn in _metric_entries(model):
        if targets[i] is None:
            continue
        if getattr(fn, "_stateful", False):
            weight = sample_weights[i] if getattr(fn, "_weighted", False) and \
                sample_weights is not None else None
            update = fn.update_state(targets[i], outputs[i], sample_weight=weight) \
                if weight is not None else fn.update_state(targets[i], outputs[i])
            with control_dependencies([update]):
                out[name] = array_ops.identity(fn.result())
        else:
            out[name] = fn(targets[i], outputs[i])
    return out


def stateful_positions(model) -> set[int]:
    """Positions in `metrics_names` of the stateful metric objects (their value is the
    last batch's running result, not an average over batches)."""
    if not getattr(model, "_compiled", False):
        return set()
    entries = _metric_entries(model)
    base = _entries_start(model, entries)
    return {base + k for k, (_, _, fn) in enumerate(entries) if getattr(fn, "_stateful", False)}


def mean_positions(model) -> set[int]:
    """Positions in `metrics_names` of the compiled metrics that are per-example
    functions ('acc', 'mae', `BinaryAccuracy()`, ...). TF's graph-mode Keras wraps them in
    stateful means, so a batch's logs and `train_on_batch` report the running mean since
    the last reset; flowgraph keeps that running sum on the host (`running_means`)."""
    if not getattr(model, "_compiled", False):
        return set()
    entries = _metric_entries(model)
    base = _entries_start(model, entries)
    return {base + k for k, (_, _, fn) in enumerate(entries)
            if not getattr(fn, "_stateful", False)}


def _entries_start(model, entries: list) -> int:
    """The position in `metrics_names` of the first compiled metric (after the losses;
    the `add_metric` metrics come after them)."""
    return len(model.metrics_names) - len(entries) - len(model.added_metric_names())


def added_positions(model) -> dict[int, bool]:
    """``{position: weighted by the batch size}`` of the `add_metric` metrics (a Keras
    `Mean` of each batch's value: once per batch for a scalar, per example for a
    per-example tensor)."""
    flags = [by_size for _, by_size in model.added_metric_fetches(0)]
    start = len(model.metrics_names) - len(flags)
    return {start + k: flag for k, flag in enumerate(flags)}


def output_loss_positions(model) -> range:
    """Positions in `metrics_names` of the per-output losses (a model with several
    outputs): TF's graph-mode Keras keeps each in a `Mean` of the batches' values, one
    vote per batch whatever its size."""
    outputs = getattr(model, "outputs", None) or []
    return range(1, 1 + len(outputs)) if len(outputs) > 1 else range(0)


def running_positions(model) -> dict[int, bool]:
    """``{position: weighted by the batch size}`` of the values `running_means` keeps:
    the metrics at `mean_positions` (True) and the per-output losses (False)."""
    return {**dict.fromkeys(mean_positions(model), True),
            **dict.fromkeys(output_loss_positions(model), False), **added_positions(model)}


def running_means(model, values: list, size: int, positions: dict[int, bool]) -> list:
    """`values` (one batch's, in `metrics_names` order) with the metrics at
    `mean_positions` replaced by their running means after adding this batch's `size`
    examples, and the per-output losses by the running mean of the batches' values
    (`positions`: `running_positions`)."""
    sums = model.__dict__.setdefault("_metric_sums", {})
    out = list(values)
    for i, by_size in positions.items():
        weight = size if by_size else 1
        total, count = sums.get(i, (0.0, 0))
        total, count = total + values[i] * weight, count + weight
        sums[i] = (total, count)
        out[i] = total / count
    return out


def reset_metric_states(model) -> None:
    """Start the compiled metrics afresh (each epoch, each evaluate)."""
    model.__dict__.pop("_metric_sums", None)
    if getattr(model, "_compiled", False):
        for _, _, fn in _metric_entries(model):
            if getattr(fn, "_stateful", False):
                fn.reset_states()


def combine_runs(model, runs: list, weights: list | None = None) -> list:
    """The (weighted) average of several runs' values, but the last run's value for
    the stateful metrics."""
    weights = weights or [1.0] * len(runs)
    total = sum(weights)
    out = [sum(r[i] * w for r, w in zip(runs, weights, strict=True)) / total
           for i in range(len(runs[0]))]
    for i in stateful_positions(model):
        if i < len(out):
            out[i] = runs[-1][i]
    return out
