"""Keras model configuration and whole-model files: ``Model.get_config`` /
``to_json`` / ``from_config``, `model_from_json`, `model_from_config`, ``Model.save``,
`save_model` and `load_model`.

A model's configuration is JSON: each layer as ``{"class_name", "config"}`` (objects in
a layer's config, such as initializers and regularizers, nested the same way; a
`Lambda`'s function as its marshalled code), plus, for a functional model, each layer's
``inbound_nodes`` (``[layer name, node index, tensor index, {}]`` per input) and the
model's ``input_layers`` / ``output_layers``. Rebuilding creates the layers again from
their configs (custom classes through `custom_objects`) and calls them in order.

``model.save(path)`` writes a directory (HDF5 needs h5py, which flowgraph does not use)::

    path/keras_model.json        {"model_config": ..., "training_config": ...}
    path/variables/variables.*   the weights, as `save_weights` writes them

and `load_model` rebuilds the model, restores the weights and, when the model was
compiled, compiles it again with the same optimizer, loss and metrics names.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph import keras
>>> with tf.Graph().as_default():
...     m = keras.Sequential([keras.layers.Dense(2, input_shape=(3,), name="d")])
...     m2 = keras.models.model_from_json(m.to_json())
...     print([type(layer).__name__ for layer in m2.layers], m2.output_shape)
['Dense'] (None, 2)
"""

from __future__ import annotations

import base64
import json
import marshal
import os
import types

__all__ = ["load_model", "model_config", "model_from_config", "model_from_json",
           "model_from_layers_config", "save_model"]

_CONFIG_FILE = "keras_model.json"

# `Model` and `Sequential`, registered by `flowgraph.keras.models` (which imports this
# module, so this one cannot import it back).
MODEL_CLASSES: dict = {}


# -- values inside layer configs --------------------------------------------------------------
def _encode(value):
    if isinstance(value, types.LambdaType) and value.__name__ == "<lambda>":
        code = base64.b64encode(marshal.dumps(value.__code__)).decode("ascii")
        return {"__lambda__": code}
    if isinstance(value, types.FunctionType):
        return value.__name__
    if isinstance(value, tuple | list):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _encode(v) for k, v in value.items()}
    if hasattr(value, "get_config") and not isinstance(value, type):
        return {"class_name": type(value).__name__, "config": _encode(value.get_config())}
    if hasattr(value, "as_numpy_dtype"):  # a DType
        return value.name
    if hasattr(value, "tolist"):  # NumPy scalars and arrays
        return value.tolist()
    return value


def _decode(value, custom_objects: dict, key: str = ""):
    from flowgraph.keras import initializers, regularizers

    if isinstance(value, list):
        items = [_decode(v, custom_objects) for v in value]
        return tuple(items) if key.endswith("shape") or key in ("kernel_size", "strides",
                                                                  "pool_size") else items
    if not isinstance(value, dict):
        return value
    if "__lambda__" in value:
        code = marshal.loads(base64.b64decode(value["__lambda__"]))
        return types.FunctionType(code, _lambda_globals())
    if "class_name" in value and "config" in value:
        name, config = value["class_name"], value["config"]
        if name in custom_objects:
            return custom_objects[name].from_config(_decode(config, custom_objects)) \
                if hasattr(custom_objects[name], "from_config") else custom_objects[name]
        if key.endswith("regularizer"):
            return regularizers.deserialize(value)
        if key.endswith("initializer") and hasattr(initializers, name):
            config = {k: v for k, v in config.items() if k not in ("dtype", "verify_shape")}
            return getattr(initializers, name)(**config)
        if key == "layer" or _layer_class(name, custom_objects) is not None:
            return layer_from_config(value, custom_objects)
    return {k: _decode(v, custom_objects, k) for k, v in value.items()}


def _lambda_globals() -> dict:
    import sys

    import numpy as np

    from flowgraph.keras import backend

    # the `tf` a lambda body usually names: the already imported top-level package
    return {"tf": sys.modules.get("flowgraph"), "K": backend, "np": np,
            "__builtins__": __builtins__}


# -- layers ----------------------------------------------------------------------------------
def _layer_class(name: str, custom_objects: dict):
    from flowgraph.keras import layers

    if name in custom_objects:
        return custom_objects[name]
    if name in ("Functional", "Model"):
        return MODEL_CLASSES["Model"]
    if name == "Sequential":
        return MODEL_CLASSES["Sequential"]
    cls = getattr(layers, name, None)
    return cls if isinstance(cls, type) else None


def layer_config(layer) -> dict:
    """``{"class_name", "config"}`` of `layer`, JSON-ready."""
    if hasattr(layer, "_network_layers") or hasattr(layer, "_layers"):
        return model_config(layer)
    return {"class_name": type(layer).__name__, "config": _encode(layer.get_config())}


def layer_from_config(entry: dict, custom_objects: dict | None = None):
    """The layer (or model) an entry of `layer_config` describes."""
    custom_objects = custom_objects or {}
    name = entry["class_name"]
    cls = _layer_class(name, custom_objects)
    if cls is None:
        raise ValueError(f"Unknown layer: '{name}'. Please ensure this object is passed to "
                         f"the `custom_objects` argument of model_from_json / load_model.")
    if name in ("Functional", "Model", "Sequential"):
        return model_from_config(entry, custom_objects)
    config = {k: _decode(v, custom_objects, k) for k, v in entry["config"].items()}
    return cls.from_config(config)


# -- models ----------------------------------------------------------------------------------
def model_config(model) -> dict:
    """``{"class_name", "config"}`` of a `Sequential` or functional `Model`."""
    from flowgraph.keras.layers import InputLayer
    if isinstance(model, MODEL_CLASSES["Sequential"]):
        layers = []
        if model.inputs:
            x = model.inputs[0]
            layers.append({"class_name": "InputLayer", "config": {
                "batch_input_shape": list(x.shape.as_list()), "dtype": x.dtype.base_dtype.name,
                "sparse": False, "name": x._keras_history[0].name}})
        layers += [layer_config(layer) for layer in model.layers]
        return {"class_name": "Sequential", "config": {"name": model.name, "layers": layers}}
    node_ids = {}
    for node in model._network_nodes:
        node_ids[id(node)] = sum(1 for other in model._network_nodes
                                 if other.layer is node.layer and id(other) in node_ids)
    entries = []
    for layer in model.layers:
        entry = layer_config(layer)
        entry["name"] = layer.name
        inbound = []
        if not isinstance(layer, InputLayer):
            for node in model._network_nodes:
                if node.layer is layer:
                    inbound.append([_tensor_ref(t, model) for t in node.input_tensors])
        entry["inbound_nodes"] = inbound
        entries.append(entry)
    return {"class_name": "Functional", "config": {
        "name": model.name, "trainable": model.trainable, "layers": entries,
        "input_layers": [_tensor_ref(t, model)[:3] for t in model.inputs],
        "output_layers": [_tensor_ref(t, model)[:3] for t in model.outputs]}}


def _tensor_ref(tensor, model) -> list:
    layer, index, tensor_index = tensor._keras_history
    node = layer._inbound_nodes[index]
    local = [n for n in model._network_nodes if n.layer is layer]
    node_index = next((i for i, n in enumerate(local) if n is node), 0)
    return [layer.name, node_index, tensor_index, {}]


def model_from_config(config: dict, custom_objects: dict | None = None):
    """The model `model_config` (or ``model.get_config()``) describes, with new weights."""
    from flowgraph.keras.layers import Input, InputLayer
    Model, Sequential = MODEL_CLASSES["Model"], MODEL_CLASSES["Sequential"]
    custom_objects = custom_objects or {}
    if "class_name" not in config:
        raise ValueError("`model_from_config` expects a dictionary with a `class_name` "
                         "key, as `model.to_json()` writes; for a bare config use "
                         "`Sequential.from_config` or `Model.from_config`.")
    body = config["config"]
    if config["class_name"] == "Sequential":
        model = Sequential(name=body.get("name"))
        for entry in body.get("layers", []):
            if entry["class_name"] == "InputLayer":
                c = entry["config"]
                model.add(InputLayer(batch_input_shape=tuple(c["batch_input_shape"]),
                                     dtype=c.get("dtype"), name=c.get("name")))
            else:
                model.add(layer_from_config(entry, custom_objects))
        return model
    tensors: dict = {}
    pending = list(body["layers"])
    while pending:
        progressed = False
        for entry in list(pending):
            if entry["class_name"] == "InputLayer":
                c = entry["config"]
                x = Input(batch_shape=tuple(c["batch_input_shape"]), dtype=c.get("dtype"),
                          name=c.get("name", entry["name"]))
                tensors[(entry["name"], 0)] = [x]
                pending.remove(entry)
                progressed = True
                continue
            refs = entry["inbound_nodes"]
            if not all((r[0], r[1]) in tensors for node in refs for r in node):
                continue
            layer = entry.setdefault("_layer", layer_from_config(entry, custom_objects))
            for i, node in enumerate(refs):
                inputs = [tensors[(r[0], r[1])][r[2]] for r in node]
                out = layer(inputs[0] if len(inputs) == 1 else inputs)
                tensors[(entry["name"], i)] = out if isinstance(out, list) else [out]
            pending.remove(entry)
            progressed = True
        if not progressed:
            raise ValueError(f"Cannot rebuild the model: layers "
                             f"{[e['name'] for e in pending]} have inputs that no layer makes.")
    inputs = [tensors[(n, i)][t] for n, i, t in body["input_layers"]]
    outputs = [tensors[(n, i)][t] for n, i, t in body["output_layers"]]
    return Model(inputs[0] if len(inputs) == 1 else inputs,
                 outputs[0] if len(outputs) == 1 else outputs, name=body.get("name"),
                 trainable=body.get("trainable", True))


def model_from_layers_config(cls, config: dict, custom_objects=None):
    """``Sequential.from_config`` / ``Model.from_config`` on ``get_config()`` output."""
    if "class_name" in config and "config" in config:
        return model_from_config(config, custom_objects)
    name = "Sequential" if cls.__name__ == "Sequential" else "Functional"
    return model_from_config({"class_name": name, "config": config}, custom_objects)


def model_from_json(json_string: str, custom_objects: dict | None = None):
    """The model ``model.to_json()`` described (new weights)."""
    return model_from_config(json.loads(json_string), custom_objects)


# -- whole-model files -----------------------------------------------------------------------
def _training_config(model) -> dict | None:
    if not getattr(model, "_compiled", False):
        return None
    args = model._compile_args

    def name_of(value):
        if value is None or isinstance(value, str | int | float):
            return value
        if isinstance(value, list | tuple):
            return [name_of(v) for v in value]
        if isinstance(value, dict):
            return {k: name_of(v) for k, v in value.items()}
        if hasattr(value, "get_config") and hasattr(value, "_make"):  # Keras optimizer
            return {"class_name": type(value).__name__, "config": _encode(value.get_config())}
        name = getattr(value, "name", None) or getattr(value, "__name__", None)
        return name if isinstance(name, str) else None

    return {"optimizer_config": name_of(args["optimizer"]), "loss": name_of(args["loss"]),
            "metrics": name_of(args["metrics"]), "loss_weights": args["loss_weights"]}


def save_model(model, filepath, overwrite: bool = True, include_optimizer: bool = True,
               save_format=None, **kwargs) -> None:
    """Write `model` (configuration, weights, compile arguments) to directory `filepath`."""
    path = os.fspath(filepath)
    model._check_weights_path(path, save_format)
    if os.path.exists(path) and not overwrite:
        raise FileExistsError(f"{path} exists and overwrite=False.")
    os.makedirs(os.path.join(path, "variables"), exist_ok=True)
    document = {"model_config": model_config(model), "training_config":
                _training_config(model) if include_optimizer else None,
                "keras_version": "2.15.0", "backend": "tensorflow"}
    with open(os.path.join(path, _CONFIG_FILE), "w", encoding="utf-8") as f:
        json.dump(document, f)
    model.save_weights(os.path.join(path, "variables", "variables"))


def load_model(filepath, custom_objects: dict | None = None, compile: bool = True,
               options=None):
    """The model `save_model` wrote, with its weights (and compiled, if it was)."""
    path = os.fspath(filepath)
    if path.endswith((".h5", ".hdf5", ".keras")):
        raise ImportError(f"Loading a Keras HDF5 file ({path}) needs h5py, which flowgraph "
                          f"does not use; save with model.save(directory) instead.")
    config_file = os.path.join(path, _CONFIG_FILE)
    if not os.path.isfile(config_file):
        raise OSError(f"No file or directory found at {path}")
    with open(config_file, encoding="utf-8") as f:
        document = json.load(f)
    model = model_from_config(document["model_config"], custom_objects)
    model.load_weights(os.path.join(path, "variables", "variables"))
    training = document.get("training_config")
    if compile and training:
        opt = training["optimizer_config"]
        if isinstance(opt, dict):
            from flowgraph.keras import optimizers

            opt = optimizers.get(opt)
        losses_ = training["loss"]
        metrics_ = training["metrics"]
        objects = custom_objects or {}
        model.compile(optimizer=opt or "rmsprop",
                      loss=objects.get(losses_, losses_) if isinstance(losses_, str)
                      else losses_,
                      metrics=[objects.get(m, m) for m in metrics_] if isinstance(metrics_, list)
                      else metrics_,
                      loss_weights=training.get("loss_weights"))
    return model
