"""The ``optimizer_weights`` group of a Keras HDF5 model file, as TF 2.15's graph-mode
tf.keras writes it: the iteration count, then each slot kind for every trainable
weight in `model.trainable_weights` order::

    weight_names = ["training/Adam/iter:0",
                    "training/Adam/dense/kernel/m:0", "training/Adam/dense/bias/m:0",
                    "training/Adam/dense/kernel/v:0", "training/Adam/dense/bias/v:0"]
    training/Adam/iter:0            int64 scalar
    training/Adam/dense/kernel/m:0  one dataset per name

flowgraph trains with the `tf.train` optimizer a Keras optimizer stands for
(`flowgraph.keras.optimizers`); `_SLOTS` pairs each Keras slot with that optimizer's
slot, and a conversion where the two keep different quantities (Keras's SGD momentum
holds ``-lr * accumulation``). flowgraph counts no iterations: Adam's comes from its
``beta2_power`` (``beta_2 ** (iter + 1)``), the others are written as 0 (their updates do
not read it). Loading is all or nothing: a file whose list does not fit the model's
optimizer is skipped with a warning, as Keras does, and the optimizer starts fresh.

Example
-------
>>> _keras_slots("Adam", {})
[('m', 'm', None), ('v', 'v', None)]
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from flowgraph.keras import hdf5_format

__all__ = ["load_optimizer_weights", "save_optimizer_weights"]


def _keras_slots(kind: str, config: dict) -> list[tuple[str, str, str | None]] | None:
    """``[(Keras slot, tf.train slot, conversion)]`` in Keras's order, None when unknown."""
    if kind == "Adam":
        return [("m", "m", None), ("v", "v", None)]
    if kind == "SGD":
        return [("momentum", "momentum", "neg_lr")] if config.get("momentum") else []
    if kind == "RMSprop":
        slots = [("rms", "rms", None)]
        if config.get("momentum"):
            slots.append(("momentum", "momentum", None))
        if config.get("centered"):
            slots.append(("mg", "mg", None))
        return slots
    if kind == "Adagrad":
        return [("accumulator", "accumulator", None)]
    if kind == "Adadelta":
        return [("accum_grad", "accum", None), ("accum_var", "accum_update", None)]
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
    kind = type(keras_opt).__name__
    slots = _keras_slots(kind, keras_opt._config)
    return None if slots is None else (keras_opt, graph["optimizer"], kind, slots)


def save_optimizer_weights(root, model) -> None:
    """Write ``optimizer_weights`` into the model file `root` (nothing when the model was
    never trained: its optimizer has no variables yet, as in Keras)."""
    from flowgraph.keras import backend

    state = _state(model)
    if state is None:
        return
    keras_opt, tf_opt, kind, slots = state
    variables = model.trainable_weights
    prefix = f"training/{kind}"
    lr = float(backend.get_value(keras_opt._lr_variable()))
    names, tensors, convert = [f"{prefix}/iter:0"], [], []
    for keras_slot, tf_slot, conversion in slots:
        for var in variables:
            slot = tf_opt.get_slot(var, tf_slot)
            if slot is None:
                return  # the optimizer does not train this weight: no consistent state
            names.append(f"{prefix}/{var.op.name}/{keras_slot}:0")
            tensors.append(slot)
            convert.append(conversion)
    extra = list(tf_opt._get_beta_accumulators()) if kind == "Adam" else []
    values = backend.batch_get_value(tensors + extra)
    iterations = 0
    if kind == "Adam":
        beta_2 = float(keras_opt._config["beta_2"])
        power = float(values[-1])
        if 0.0 < power < 1.0 and 0.0 < beta_2 < 1.0:
            iterations = max(round(math.log(power) / math.log(beta_2)) - 1, 0)
        values = values[:len(tensors)]
    values = [-lr * v if c == "neg_lr" else v for v, c in zip(values, convert, strict=True)]
    group = root.create_group("optimizer_weights")
    hdf5_format.write_names(group, "weight_names", names)
    group.create_dataset(names[0], data=np.int64(iterations))
    for name, value in zip(names[1:], values, strict=True):
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
    keras_opt, tf_opt, kind, slots = state
    variables = model.trainable_weights
    if len(names) != 1 + len(slots) * len(variables):
        warnings.warn(f"Error in loading the saved optimizer state from {where}: "
                      f"{len(names)} values saved, the model's {kind} optimizer has "
                      f"{1 + len(slots) * len(variables)} (the iteration count and "
                      f"{len(slots)} slot(s) for {len(variables)} weights); it starts "
                      f"fresh.", stacklevel=3)
        return False
    datasets = [hdf5_format.member(group, n, where) for n in names]
    targets = [(tf_opt.get_slot(var, tf_slot), conversion)
               for _, tf_slot, conversion in slots for var in variables]
    for (slot, _), name, ds in zip(targets, names[1:], datasets[1:], strict=True):
        problem = None if slot is None else hdf5_format.check_dataset(
            slot, name, ds, where)
        if problem is not None or slot is None:
            warnings.warn(f"Error in loading the saved optimizer state from {where}: "
                          f"{problem or 'a weight the optimizer does not train'}; it "
                          f"starts fresh.", stacklevel=3)
            return False
    lr = float(backend.get_value(keras_opt._lr_variable()))
    pairs = []
    for (slot, conversion), name, ds in zip(targets, names[1:], datasets[1:], strict=True):
        value = hdf5_format.read_dataset(ds, slot, name, where)
        if conversion == "neg_lr":
            value = value / -lr if lr else np.zeros_like(value)
        pairs.append((slot, value))
    if kind == "Adam":
        iterations = int(hdf5_format.read_scalar(datasets[0], names[0], where))
        c = keras_opt._config
        for var, beta in zip(tf_opt._get_beta_accumulators(), (c["beta_1"], c["beta_2"]),
                             strict=True):
            pairs.append((var, np.float32(float(beta) ** (max(iterations, 0) + 1))))
    backend.batch_set_value(pairs)
    return True
