"""The ``optimizer_weights`` group of a Keras HDF5 model file, as TF 2.15's graph-mode
tf.keras writes it: the iteration count, then each slot kind for every trainable
weight in `model.trainable_weights` order::

    weight_names = ["training/Adam/iter:0",
                    "training/Adam/dense/kernel/m:0", "training/Adam/dense/bias/m:0",
                    "training/Adam/dense/kernel/v:0", "training/Adam/dense/bias/v:0"]
    training/Adam/iter:0            int64 scalar
    training/Adam/dense/kernel/m:0  one dataset per name

The values are those of the optimizer's own variables (`flowgraph.keras.optimizer_state`,
named and updated as TF's graph-mode Keras does), so they are written and read as they
are. Loading is all or nothing: a file whose list does not fit the model's optimizer is
skipped with a warning, as Keras does, and the optimizer starts fresh.

Example
-------
>>> _keras_slots("Adam", {})
[('m', 'm'), ('v', 'v')]
"""

from __future__ import annotations

import warnings

import numpy as np

from flowgraph.keras import hdf5_format

__all__ = ["load_optimizer_weights", "save_optimizer_weights"]


def _keras_slots(kind: str, config: dict) -> list[tuple[str, str]] | None:
    """``[(Keras slot, tf.train slot)]`` in Keras's order, None when unknown."""
    from flowgraph.keras import optimizer_state

    try:
        return optimizer_state.slots_of(kind, config)
    except ValueError:
        return None


def _state(model):
    """``(keras optimizer, tf.train optimizer, kind, slots)`` or None when the model has
    no Keras optimizer with a training graph."""
    from flowgraph.keras import optimizers

    keras_opt = getattr(model, "optimizer", None)
    graph = getattr(model, "_train_graph", None)
    if not isinstance(keras_opt, optimizers.Optimizer) or not graph or \
            "optimizer" not in graph:
        return None
    kind = keras_opt._kind
    slots = _keras_slots(kind, keras_opt._config)
    return None if slots is None else (keras_opt, graph["optimizer"], kind, slots)


def _ordered(tf_opt, slots, variables):
    """``[(label, state variable)]`` after ``iter``, in Keras's ``optimizer.weights``
    order (Ftrl interleaves each weight's slots; Nadam's ``momentum_cache`` comes
    first); None when some weight has no slot (an inconsistent state)."""
    labels = getattr(tf_opt, "_keras_labels", None)
    if labels is None:
        pairs = [(f"{var.op.name}/{keras_slot}", tf_opt.get_slot(var, tf_slot))
                 for keras_slot, tf_slot in slots for var in variables]
        return None if any(slot is None for _, slot in pairs) else pairs
    wanted = {id(v) for v in variables}
    if any(tf_opt.get_slot(var, tf_slot) is None for _, tf_slot in slots for var in variables):
        return None
    pairs = []
    for slot in tf_opt._keras_slots:
        owner, label = labels[id(slot)]
        if owner is None or id(owner) in wanted:
            pairs.append((label, slot))
    return pairs


def save_optimizer_weights(root, model) -> None:
    """Write ``optimizer_weights`` into the model file `root` (nothing when the model was
    never trained: its optimizer has no variables yet, as in Keras)."""
    from flowgraph.keras import backend

    state = _state(model)
    if state is None:
        return
    _, tf_opt, _, slots = state
    variables = model.trainable_weights
    prefix = tf_opt._prefix.rstrip("/")  # training/Adam, or the optimizer's own name
    ordered = _ordered(tf_opt, slots, variables)
    if ordered is None:
        return  # the optimizer does not train some weight: no consistent state
    names = [f"{prefix}/iter:0", *(f"{prefix}/{label}:0" for label, _ in ordered)]
    tensors = [tf_opt._iterations, *(slot for _, slot in ordered)]
    values = backend.batch_get_value(tensors)
    group = root.create_group("optimizer_weights")
    hdf5_format.write_names(group, "weight_names", names)
    for name, value in zip(names, values, strict=True):
        group.create_dataset(name, data=np.asarray(value))


def load_optimizer_weights(root, model, source: str) -> bool:
    """Restore the optimizer state of a compiled `model` from ``optimizer_weights``;
    False (with a warning) when the file's list does not fit."""
    from flowgraph.keras import backend

    if not hdf5_format.has_member(root, "optimizer_weights", source):
        return False
    where = f"{source}: optimizer_weights"
    try:
        model._evaluation()  # the training graph, where the optimizer's variables live
    except (ValueError, TypeError) as e:
        raise ValueError(f"{where}: cannot build the training graph the optimizer's state "
                         f"belongs to ({e}); pass compile=False to load the model "
                         f"uncompiled.") from e
    state = _state(model)
    group = hdf5_format.member(root, "optimizer_weights", source)
    names = hdf5_format.read_names(group, "weight_names", where)
    if state is None:
        warnings.warn(f"{where}: the model's optimizer is not a Keras optimizer flowgraph "
                      f"can restore; it starts fresh.", stacklevel=3)
        return False
    _, tf_opt, kind, slots = state
    variables = model.trainable_weights
    ordered = _ordered(tf_opt, slots, variables)
    if ordered is None or len(names) != 1 + len(ordered):
        warnings.warn(f"Error in loading the saved optimizer state from {where}: "
                      f"{len(names)} values saved, the model's {kind} optimizer has "
                      f"{1 + len(slots) * len(variables)} (the iteration count and "
                      f"{len(slots)} slot(s) for {len(variables)} weights); it starts "
                      f"fresh.", stacklevel=3)
        return False
    datasets = [hdf5_format.member(group, n, where) for n in names]
    targets = [slot for _, slot in ordered]
    for slot, name, ds in zip(targets, names[1:], datasets[1:], strict=True):
        problem = None if slot is None else hdf5_format.check_dataset(
            slot, name, ds, where)
        if problem is not None or slot is None:
            warnings.warn(f"Error in loading the saved optimizer state from {where}: "
                          f"{problem or 'a weight the optimizer does not train'}; it "
                          f"starts fresh.", stacklevel=3)
            return False
    pairs = [(tf_opt._iterations,
              np.int64(hdf5_format.read_scalar(datasets[0], names[0], where)))]
    for slot, name, ds in zip(targets, names[1:], datasets[1:], strict=True):
        pairs.append((slot, hdf5_format.read_dataset(ds, slot, name, where)))
    backend.batch_set_value(pairs)
    return True
