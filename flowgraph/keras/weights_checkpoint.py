"""`Model.save_weights` in TensorFlow's format: an object-based checkpoint, as TF 2.15's
tf.keras writes one, that TensorFlow's `load_weights` reads.

The keys follow the path from the model to each variable (`checkpoint_keys`)::

    model ── layer_with_weights-0 ── kernel   layer_with_weights-0/kernel/.ATTRIBUTES/...
          │                       └─ (Adam's m of the kernel)
          │                 layer_with_weights-0/kernel/.OPTIMIZER_SLOT/optimizer/m/...
          ├─ layer-0 (the same layer object; every layer, weights or not)
          └─ optimizer ── iter, beta_1, ...   optimizer/iter/.ATTRIBUTES/VARIABLE_VALUE

A nested model is a node like any layer, with children of its own (`keras_children`): a
Sequential or functional one its ``layer_with_weights-N`` / ``layer-N``
(``layer_with_weights-0/layer_with_weights-1/kernel/...``), a subclassed one its
attributes (``layer_with_weights-0/bn/gamma/...``). The walk is breadth first, so a
variable reachable along two paths keeps the shorter, as in TensorFlow; the same paths,
joined by dots, are `get_weight_paths`' keys (`weight_paths`).

The file holds that object graph under ``_CHECKPOINTABLE_OBJECT_GRAPH`` (TensorFlow
restores an object-based checkpoint by walking it), plus the ``checkpoint`` state file
naming the prefix, as TF's `save_weights` writes.

Example
-------
>>> import os, tempfile, numpy as np, flowgraph as tf
>>> with tf.Graph().as_default():
...     m = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
...     prefix = os.path.join(tempfile.mkdtemp(), "w")
...     m.save_weights(prefix)
...     print([k for k, _ in tf.train.list_variables(prefix)][0])
_CHECKPOINTABLE_OBJECT_GRAPH
"""

from __future__ import annotations

import collections
import os
import re

import numpy as np

from flowgraph.keras import backend
from flowgraph.keras.training_utils import optimizer_state

__all__ = ["CheckpointLoadStatus", "WeightsFilesMixin", "checkpoint_keys", "keras_children",
           "object_graph", "weight_paths", "write_weights"]


def _attr(weight) -> str:
    """A weight's local name in its layer (``kernel``, ``moving_mean``)."""
    return re.sub(r"_\d+$", "", weight.op.name.rsplit("/", 1)[-1])


class _Items:
    """A list attribute of a subclassed model holding layers: one node whose children are
    named by position (TF's list wrapper)."""

    def __init__(self, items) -> None:
        self.items = items


def _is_layer(obj) -> bool:
    return hasattr(obj, "add_weight") and hasattr(obj, "weights")


def keras_children(obj) -> list[tuple[str, object]]:
    """The named children of `obj` in the object graph TF's tf.keras checkpoints follow:
    a Sequential or functional model has ``layer_with_weights-N`` (its layers that have
    weights) then ``layer-N`` (all its layers); a subclassed model its own weights, then
    its public attributes holding layers (a list of them: a node with children ``0``,
    ``1``, ...); any other layer its weights by their local names. Variables are leaves."""
    if isinstance(obj, _Items):
        return [(str(i), v) for i, v in enumerate(obj.items)]
    if not _is_layer(obj):
        return []
    kind = getattr(obj, "_subclassed", None)  # False: a network, True: subclassed
    if kind is False:
        layers = obj.layers
        with_weights = [la for la in layers if la.weights]
        return [*((f"layer_with_weights-{i}", la) for i, la in enumerate(with_weights)),
                *((f"layer-{i}", la) for i, la in enumerate(layers))]
    inner = [] if kind else _inner_layers(obj)
    own = obj._trainable_weights + obj._non_trainable_weights if kind or inner \
        else obj.weights
    out, used = [], set()
    for w in own:
        attr, n = _attr(w), 1
        local = attr
        while local in used:
            local, n = f"{attr}_{n}", n + 1
        used.add(local)
        out.append((local, w))
    out.extend(inner)
    if kind:
        for name, value in vars(obj).items():
            if name.startswith("_"):
                continue
            if _is_layer(value) and value is not obj:
                out.append((name, value))
            elif isinstance(value, list | tuple) and value and \
                    all(_is_layer(v) for v in value):
                out.append((name, _Items(list(value))))
    return out


def _inner_layers(layer) -> list[tuple[str, object]]:
    """The layers a built-in layer holds, under the attribute names TF's tf.keras tracks:
    a `Bidirectional`'s ``forward_layer`` and ``backward_layer``, a recurrent layer's
    ``cell``, a `Wrapper`'s (`TimeDistributed`, a user's subclass) ``layer``, the
    ``cells`` of `StackedRNNCells` (children ``0``, ``1``, ...)."""
    if hasattr(layer, "forward_layer") and hasattr(layer, "backward_layer"):
        return [("forward_layer", layer.forward_layer), ("backward_layer", layer.backward_layer)]
    cells = layer.__dict__.get("cells")
    if isinstance(cells, list | tuple) and cells and all(_is_layer(c) for c in cells):
        return [("cells", _Items(list(cells)))]
    for attr in ("cell", "layer"):
        child = layer.__dict__.get(attr)
        if _is_layer(child) and child is not layer:
            return [(attr, child)]
    return []


def _walk(root):
    """Breadth first from `root`: ``(nodes, paths, edges)``; an object reached along
    several paths keeps the first (shortest), as TensorFlow's walk does."""
    nodes, paths, edges, ids = [root], [[]], [[]], {id(root): 0}
    queue = collections.deque([0])
    while queue:
        node = queue.popleft()
        for name, child in keras_children(nodes[node]):
            known = ids.get(id(child))
            if known is None:
                known = ids[id(child)] = len(nodes)
                nodes.append(child)
                paths.append([*paths[node], name])
                edges.append([])
                queue.append(known)
            edges[node].append((name, known))
    return nodes, paths, edges


def weight_paths(layer, prefix: str = "") -> dict:
    """``{'<path>': variable}``: the dotted object-graph path of each variable of `layer`
    (what `get_weight_paths` returns for a subclassed model; a network prefixes each of
    its layers' paths with the layer's name)."""
    nodes, paths, _ = _walk(layer)
    return {prefix + ".".join(p): n for n, p in zip(nodes, paths, strict=True)
            if not _is_layer(n) and not isinstance(n, _Items) and p}


def object_graph(model, state):
    """The `ObjectGraph` of `model`'s weights (nested models' included, see
    `keras_children`) and, when the optimizer has `state` (``(tf.train optimizer,
    (iterations, hyperparameters))``), its variables and slots."""
    from flowgraph.train.checkpoint_object_graph import ObjectGraph

    graph = ObjectGraph()
    graph.nodes, graph.paths, graph.edges = _walk(model)
    var_nodes = {id(n): i for i, n in enumerate(graph.nodes)
                 if not _is_layer(n) and not isinstance(n, _Items) and i}

    def add(obj, path, parent=None, name=None):
        graph.nodes.append(obj)
        graph.paths.append(path)
        graph.edges.append([])
        node = len(graph.nodes) - 1
        if parent is not None:
            graph.edges[parent].append((name, node))
        return node

    if state is not None:
        tf_opt, (iterations, hypers) = state
        opt = add(tf_opt, ["optimizer"], 0, "optimizer")
        for name, var in {"iter": iterations, **hypers}.items():
            add(var, ["optimizer", name], opt, name)
        refs = []
        for keras_slot, tf_slot in tf_opt._slot_names:
            for w in model.weights:
                slot = tf_opt.get_slot(w, tf_slot)
                if slot is not None and id(w) in var_nodes:
                    refs.append((var_nodes[id(w)], keras_slot, add(slot, None)))
        if refs:
            graph.slots[opt] = refs
    return graph


def checkpoint_keys(model) -> dict:
    """``{checkpoint key: variable}`` for `save_weights`: keys by position, as TF's
    object-based checkpoints name them (``layer_with_weights-0/kernel/.ATTRIBUTES/
    VARIABLE_VALUE``; a nested model's ``layer_with_weights-0/layer_with_weights-1/
    kernel/...``), so that a rebuilt copy of the model (other variable names, e.g.
    ``dense_1/kernel``) reads the file too."""
    from flowgraph.train.checkpoint_object_graph import variable_keys

    graph = object_graph(model, optimizer_state(model))
    keys = dict(variable_keys(graph))
    listed = {id(v) for v in keys.values()}
    for w in model.weights:  # weights of no layer (none expected): by name
        if id(w) not in listed:
            keys[w.op.name] = w
    return keys


def write_weights(model, file_prefix: str, state, sess) -> None:
    """Write `model`'s weights (and the optimizer's `state`) to checkpoint
    `file_prefix`, with the object graph and the ``checkpoint`` state file."""
    from flowgraph.framework.tf_formats.bundle import bundle_files
    from flowgraph.train import checkpoint_state
    from flowgraph.train.checkpoint_object import OBJECT_GRAPH_KEY
    from flowgraph.train.checkpoint_object_graph import serialize_object_graph, variable_keys

    graph = object_graph(model, state)
    keys = variable_keys(graph)
    values = sess.run([var.value() for _, var in keys]) if keys else []
    tensors = {key: np.asarray(value) for (key, _), value in zip(keys, values, strict=True)}
    tensors[OBJECT_GRAPH_KEY] = np.array(serialize_object_graph(graph), dtype=object)
    parent = os.path.dirname(file_prefix) or "."
    os.makedirs(parent, exist_ok=True)
    checkpoint_state.remove_stale_temps(parent)
    state_file = checkpoint_state.checkpoint_state_file(
        parent, file_prefix, all_model_checkpoint_paths=[file_prefix],
        save_relative_paths=True)
    checkpoint_state.write_durably(bundle_files(file_prefix, tensors), then=[state_file])


class CheckpointLoadStatus:
    """What `load_weights` returns for a TensorFlow checkpoint (TF's status object):
    `expect_partial` and the `assert_*` checks, comparing the checkpoint's keys with the
    model's (its optimizer's entries count once it has variables)."""

    def __init__(self, model, path: str, present: set) -> None:
        self._model, self._path = model, path
        self._present = {k for k in present if not k.startswith("_CHECKPOINTABLE")}

    def _match(self):
        keys = set(checkpoint_keys(self._model))
        return keys & self._present, keys - self._present, self._present - keys

    def expect_partial(self):
        return self

    def assert_consumed(self):
        """AssertionError unless every value of the checkpoint and every weight of the
        model found each other; returns the status."""
        unused = self._match()[2]
        if unused:
            raise AssertionError(f"Unresolved object in checkpoint {self._path}: "
                                 f"{sorted(unused)[:10]} have no weight of the model "
                                 f"{self._model.name!r} (or of its optimizer) to go to.")
        return self.assert_existing_objects_matched()

    def assert_existing_objects_matched(self):
        missing = self._match()[1]
        if missing:
            raise AssertionError(f"Checkpoint {self._path} has no value for "
                                 f"{sorted(missing)[:10]} of the model "
                                 f"{self._model.name!r}.")
        return self

    def assert_nontrivial_match(self):
        if not self._match()[0]:
            raise AssertionError(f"Nothing of the model {self._model.name!r} matches "
                                 f"checkpoint {self._path}.")
        return self

    def run_restore_ops(self, session=None) -> None:
        """Nothing to run: `load_weights` restored the values already."""

    def initialize_or_restore(self, session=None) -> None:
        """Nothing to run: `load_weights` restored the values already."""


class WeightsFilesMixin:
    """`save_weights` / `load_weights` of a Keras model (mixed into `TrainingMixin`)."""

    def _weights_saver(self, present=None):
        """A Saver of `_checkpoint_keys`; with `present` (the keys of a checkpoint to
        read), of those keys only: a file written before the optimizer had state still
        loads into a trained model, as TF's deferred restoration allows."""
        from flowgraph.train.saver import Saver

        keys = checkpoint_keys(self)
        if present is not None:
            keys = {k: v for k, v in keys.items() if k in present}
        key = (tuple(keys), tuple(id(w) for w in keys.values()))
        cached = getattr(self, "_saver_cache", None)
        if cached is None or cached[0] != key:
            cached = (key, Saver(keys, max_to_keep=None))
            self._saver_cache = cached
        return cached[1]

    @staticmethod
    def _weights_format(filepath, save_format=None) -> str:
        """``'h5'`` for a path ending .h5 / .hdf5 or ``save_format='h5'``, else ``'tf'``."""
        path = os.fspath(filepath)
        fmt = (save_format or "").lower()
        if fmt in ("h5", "hdf5", "keras") or path.endswith((".h5", ".hdf5")):
            return "h5"
        if path.endswith(".keras"):
            raise NotImplementedError(f"{path}: the Keras v3 `.keras` format is not supported "
                                      f"by flowgraph; use a path ending .h5 (HDF5) or "
                                      f"without extension (a TensorFlow checkpoint).")
        if fmt not in ("", "tf"):
            raise ValueError(f"Unknown format: save_format={save_format!r}; use 'tf' or "
                             f"'h5'.")
        return "tf"

    def save_weights(self, filepath, overwrite: bool = True, save_format=None,
                     options=None) -> None:
        """Write the weights: Keras's HDF5 layout for a path ending .h5 / .hdf5 (or
        ``save_format='h5'``, needs h5py), else a TensorFlow checkpoint at `filepath`
        (a prefix)."""
        path = os.fspath(filepath)
        if self._weights_format(path, save_format) == "h5":
            from flowgraph.keras import hdf5_format

            if os.path.exists(path) and not overwrite:
                raise FileExistsError(f"{path} exists and overwrite=False.")
            with hdf5_format.atomic_h5_file(path, f"the weights of {self.name!r}") as f:
                hdf5_format.save_weights_to_group(f, self)
            return
        write_weights(self, path, optimizer_state(self), backend.get_session())

    def load_weights(self, filepath, by_name: bool = False, skip_mismatch: bool = False,
                     options=None):
        """Read the weights `save_weights` (or TF's tf.keras) wrote at `filepath`: from an
        HDF5 file in order of the layers with weights, or with `by_name` into the layers
        of the same name (`skip_mismatch`: skip what does not fit, with a warning);
        from a TensorFlow checkpoint by position."""
        from flowgraph.keras import hdf5_format

        path = filepath if not isinstance(filepath, str | bytes | os.PathLike) else \
            os.fspath(filepath)
        if skip_mismatch and not by_name:
            raise ValueError("When calling model.load_weights, skip_mismatch can only be set "
                             "to True when by_name is True.")
        if not isinstance(path, str) or self._weights_format(path) == "h5" or \
                (os.path.isfile(path) and hdf5_format.is_hdf5(path)):
            with hdf5_format.open_h5(path, "the Keras weights file") as f:
                source = getattr(f, "filename", None) or str(path)
                group = f
                if hdf5_format.has_member(f, "model_weights", source) and \
                        not hdf5_format.has_attr(f, "layer_names", source):
                    group = hdf5_format.member(f, "model_weights", source)
                hdf5_format.load_weights_from_group(group, self, source, by_name,
                                                    skip_mismatch)
            return
        if by_name:
            raise NotImplementedError("load_weights(by_name=True) reads HDF5 files only; "
                                      "this is a TensorFlow checkpoint.")
        from flowgraph.train.checkpoint_utils import list_variables

        present = {name for name, _ in list_variables(path)}
        self._weights_saver(present).restore(backend.get_session(), path)
        # the optimizer's entries wait for its variables (TF's deferred restoration)
        self._deferred_restore = (path, present) if any(
            k.startswith("optimizer/") for k in present) and \
            optimizer_state(self) is None else None
        return CheckpointLoadStatus(self, path, present)
