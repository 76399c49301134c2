"""The `Model` members TF 2.15's graph-mode (v1) Keras has beyond compile / fit / evaluate /
predict: `submodules`, `get_weight_paths`, `stateful` / `reset_states` / `state_updates`,
`reset_metrics`, `run_eagerly`, `distribute_strategy`, the TF 2 step members, and the
metrics `add_metric` adds (the model's and its layers'), which `fit` and `evaluate` fetch
after the compiled ones: the training graph's tensor for `fit`, the inference graph's for
`evaluate`, told apart by the numbers `flowgraph.keras.layer_members.metric_mark` gives.

The v1 training loop (`fit`, `evaluate`, `predict` in graph mode) builds one graph and
runs it batch by batch; it never calls `train_step`, `test_step` or the functions
`make_train_function` makes, as in TF 2.15. So an override of `train_step` is not used by
`fit`, `predict_step` builds the model's outputs on its input, and the default
`train_step` / `test_step` (which need TF 2's compiled loss) raise TypeError.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph import keras
>>> with tf.Graph().as_default():
...     model = keras.Sequential([keras.layers.Dense(2, input_shape=(3,), name="d")])
...     print(sorted(model.get_weight_paths()), model.stateful, model.run_eagerly)
['d.bias', 'd.kernel'] False False
"""

from __future__ import annotations

import warnings

__all__ = ["ModelMembersMixin"]


def _model_children(layer) -> list:
    from flowgraph.keras.layer_members import _children_by_attribute

    own = []
    if hasattr(layer, "_output_layers"):  # a model: its inputs', its outputs', its layers
        own = [*layer.__dict__.get("_input_layers", []),
               *layer.__dict__.get("_output_layers", []), *layer.layers]
    return own + _children_by_attribute(layer)


class ModelMembersMixin:
    """Mixed into `flowgraph.keras.models.Model` (see the module docstring)."""

    @property
    def submodules(self) -> list:
        """Every layer of the model, each once: its input layers, its output layers, its
        other layers, then the layers of those (a nested model's)."""
        from flowgraph.keras.layer_members import _walk_submodules

        return _walk_submodules(self, _model_children)

    def get_weight_paths(self) -> dict:
        """``{'<path>': variable}`` for every weight: a Sequential or functional model
        names each by its layer's name then the path inside that layer
        (``'dense.kernel'``; a nested model's ``'inner.layer_with_weights-0.kernel'``), a
        subclassed model by the attributes leading to it (``'d1.kernel'``), as TF does."""
        from flowgraph.keras.weights_checkpoint import weight_paths

        if self.__dict__.get("_subclassed"):
            return weight_paths(self)
        paths: dict = {}
        for layer in self.layers:
            paths.update(weight_paths(layer, f"{layer.name}."))
        return paths

    # -- add_metric ---------------------------------------------------------------------------
    def add_metric(self, value, name=None, aggregation=None, **kwargs) -> None:
        super().add_metric(value, name=name, aggregation=aggregation, **kwargs)
        self._train_graph = None  # the next fit / evaluate fetches it too

    def _added_metric_entries(self) -> list:
        """``(number, name, batch mean, by size)`` of every `add_metric` call of the model
        and of its layers (the model's own first)."""
        from flowgraph.keras.layer_members import ADDED_METRICS

        if not ADDED_METRICS[0]:
            return []
        return [entry for layer in [self, *self.submodules]
                for entry in layer.__dict__.get("_added_metrics", [])]

    def added_metric_names(self) -> list[str]:
        """The names `add_metric` gave, each once, in the order of the first calls."""
        names: list[str] = []
        for _, name, _, _ in self._added_metric_entries():
            if name not in names:
                names.append(name)
        return names

    def added_metric_fetches(self, since: int) -> list[tuple]:
        """``(batch mean, by size)`` per `added_metric_names` entry: the tensor of the
        model call that began at mark `since` (the training or inference graph's) where
        that call made one, else the first."""
        entries = self._added_metric_entries()
        out = []
        for name in self.added_metric_names():
            mine = [e for e in entries if e[1] == name]
            later = [e for e in mine if e[0] > since]
            chosen = later[0] if later else mine[0]
            out.append((chosen[2], chosen[3]))
        return out

    # -- state ------------------------------------------------------------------------------
    @property
    def stateful(self) -> bool:
        """Whether a layer keeps state between batches (a stateful RNN)."""
        return self.__dict__.get("_stateful", False) or \
            any(getattr(layer, "stateful", False) for layer in self.layers)

    @stateful.setter
    def stateful(self, value) -> None:
        self._stateful = bool(value)

    def reset_states(self) -> None:
        """Reset the state of the stateful layers (those with a ``reset_states``)."""
        for layer in self.layers:
            if getattr(layer, "stateful", False) and hasattr(layer, "reset_states"):
                layer.reset_states()

    @property
    def state_updates(self) -> list:
        """The updates of the stateful layers (deprecated in TF 2.15, with a warning)."""
        warnings.warn("`Model.state_updates` will be removed in a future version. This "
                      "property should not be used in TensorFlow 2.0, as `updates` are "
                      "applied automatically.", UserWarning, stacklevel=2)
        return [u for layer in self.layers if getattr(layer, "stateful", False)
                for u in layer.updates]

    def reset_metrics(self) -> None:
        """Reset the compiled metrics' running state (nothing before `compile`)."""
        if getattr(self, "_compiled", False):
            self._reset_metric_states()

    # -- execution --------------------------------------------------------------------------
    @property
    def run_eagerly(self) -> bool:
        if self.__dict__.get("_run_eagerly"):
            raise ValueError("You can only set `run_eagerly=True` if eager execution is "
                             "enabled.")
        return False

    @run_eagerly.setter
    def run_eagerly(self, value) -> None:
        self._run_eagerly = value

    @property
    def distribute_strategy(self):
        """The current `tf.distribute` strategy (the default one outside any scope)."""
        from flowgraph.strategies.base import get_strategy

        return get_strategy()

    # -- the TF 2 step members ------------------------------------------------------------------
    def _eager_only(self, what: str):
        raise TypeError(f"Model.{what} needs TF 2's eager training loop; in graph mode "
                        f"the compiled loss it calls does not exist (TF 2.15's graph-mode "
                        f"Keras fails here too). Train with `fit` / `train_on_batch`.")

    def train_step(self, data):
        self._eager_only("train_step")

    def test_step(self, data):
        self._eager_only("test_step")

    def predict_step(self, data):
        """The model applied (``training=False``) to the inputs of `data`: ``x``, or the
        first item of an ``(x,)`` / ``(x, y)`` / ``(x, y, sample_weight)`` tuple."""
        x = data[0] if isinstance(data, tuple) and 1 <= len(data) <= 3 else data
        return self(x, training=False)

    def _step_function(self, kind: str):
        def step_function(iterator):
            raise TypeError(f"The {kind} function of `make_{kind}_function` runs TF 2's "
                            f"`{kind}_step` on an iterator, which graph mode cannot do "
                            f"(TF 2.15 fails in it too); use `fit`, `evaluate` or `predict`, "
                            f"which run the graph-mode loop.")

        step_function.__name__ = f"{kind}_function"
        return step_function

    def make_train_function(self, force: bool = False):
        self.train_function = self._step_function("train")
        return self.train_function

    def make_test_function(self, force: bool = False):
        self.test_function = self._step_function("test")
        return self.test_function

    def make_predict_function(self, force: bool = False):
        self.predict_function = self._step_function("predict")
        return self.predict_function
