"""Keras model configuration and whole-model files: ``Model.get_config`` /
``to_json`` / ``from_config``, `model_from_json`, `model_from_config`, ``Model.save``,
`save_model` and `load_model`.

A model's configuration is JSON: each layer as ``{"class_name", "config"}`` (objects in
a layer's config, such as initializers and regularizers, nested the same way; a
`Lambda`'s function as TF 2.15 writes it, see `flowgraph.keras.saving_functions`), plus,
for a functional model, each layer's ``inbound_nodes`` (``[layer name, node index,
tensor index, {}]`` per input) and the model's ``input_layers`` / ``output_layers``.
Rebuilding creates the layers again from their configs (custom classes through
`custom_objects`) and calls them in order. Keys of TF 2.15's configs that only choose
how TensorFlow computes (``implementation``) or that hold the one value flowgraph
supports (``groups=1``, ``time_major=False``) are accepted and dropped (`_TF_ONLY_KEYS`).

Loading never runs code from the configuration: a `Lambda`'s marshalled lambda is
refused unless `custom_objects` gives the function or ``safe_mode=False`` is passed.

``model.save(path)`` writes, for a path ending ``.h5`` / ``.hdf5`` (or
``save_format='h5'``), Keras's HDF5 file (`flowgraph.keras.hdf5_format`, with h5py);
otherwise a directory::

    path/keras_model.json        {"model_config": ..., "training_config": ...}
    path/variables/variables.*   the weights, as `save_weights` writes them

and `load_model` rebuilds the model, restores the weights and, when the model was
compiled, compiles it again with the same optimizer, loss and metrics names (and, from
an HDF5 file, restores the optimizer's state).

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
import inspect
import json
import marshal
import os
import types

from flowgraph.keras import hdf5_format
from flowgraph.keras.saving_functions import (
    LoadContext,
    function_config,
    function_from_config,
    is_lambda,
)
from flowgraph.keras.saving_registry import (
    deserialize_keras_object,
    get_registered_name,
    get_registered_object,
    register_keras_serializable,
    serialize_keras_object,
)
from flowgraph.keras.utils import custom_object_scope, get_custom_objects

__all__ = ["custom_object_scope", "deserialize_keras_object", "get_custom_objects",
           "get_registered_name", "get_registered_object", "load_model", "model_config",
           "model_from_config", "model_from_json", "model_from_layers_config",
           "register_keras_serializable", "save_model", "serialize_keras_object"]

_CONFIG_FILE = "keras_model.json"

# `Model` and `Sequential`, registered by `flowgraph.keras.models` (which imports this
# module, so this one cannot import it back).
MODEL_CLASSES: dict = {}

# Keys of TF 2.15 layer configs that flowgraph's layers do not take, with the value
# flowgraph computes anyway (`_ANY`: every value computes the same).
_ANY = object()
_TF_ONLY_KEYS = {"groups": 1, "time_major": False, "implementation": _ANY, "ragged": False,
                 "sparse": False, "zero_output_for_mask": _ANY,
                 "output_shape_type": _ANY, "output_shape_module": _ANY}


# An initializer a layer holds by name, as TF 2.15's graph-mode layers write it in their
# configs (the v1 classes carry a dtype; the He / LeCun ones are v2 classes without one).
_F32 = {"dtype": "float32"}
_INITIALIZER_CONFIGS = {
    "glorot_uniform": ("GlorotUniform", {"seed": None, **_F32}),
    "glorot_normal": ("GlorotNormal", {"seed": None, **_F32}),
    "zeros": ("Zeros", _F32), "zero": ("Zeros", _F32),
    "ones": ("Ones", _F32), "one": ("Ones", _F32),
    "uniform": ("RandomUniform", {"minval": -0.05, "maxval": 0.05, "seed": None, **_F32}),
    "random_uniform": ("RandomUniform", {"minval": -0.05, "maxval": 0.05, "seed": None,
                                         **_F32}),
    "normal": ("RandomNormal", {"mean": 0.0, "stddev": 0.05, "seed": None, **_F32}),
    "random_normal": ("RandomNormal", {"mean": 0.0, "stddev": 0.05, "seed": None, **_F32}),
    "truncated_normal": ("TruncatedNormal", {"mean": 0.0, "stddev": 0.05, "seed": None,
                                             **_F32}),
    "orthogonal": ("Orthogonal", {"gain": 1.0, "seed": None, **_F32}),
    "identity": ("Identity", {"gain": 1.0, **_F32}),
    "constant": ("Constant", {"value": 0, **_F32}),
    "variance_scaling": ("VarianceScaling", {"scale": 1.0, "mode": "fan_in",
                                             "distribution": "truncated_normal", "seed": None,
                                             **_F32}),
    "he_normal": ("HeNormal", {"seed": None}), "he_uniform": ("HeUniform", {"seed": None}),
    "lecun_normal": ("LecunNormal", {"seed": None}),
    "lecun_uniform": ("LecunUniform", {"seed": None}),
}
# ... and back: the classes flowgraph.keras.initializers has no class of that name for
_INITIALIZER_NAMES = {"HeNormal": "he_normal", "HeUniform": "he_uniform",
                      "LecunNormal": "lecun_normal", "LecunUniform": "lecun_uniform"}


def _encode_layer_config(config: dict) -> dict:
    """`_encode` of a layer's config, with initializers held by name written as TF's
    ``{"class_name": "GlorotUniform", "config": {...}}``."""
    from flowgraph.keras.layers import initializer_name

    encoded = _encode(config)
    for key, value in encoded.items():
        if key.endswith("_regularizer") and isinstance(value, str):  # 'l2': TF's dict
            from flowgraph.keras import regularizers

            encoded[key] = _encode(regularizers.get(value))
        if key.endswith("_initializer") and initializer_name(value) in _INITIALIZER_CONFIGS:
            name, fields = _INITIALIZER_CONFIGS[initializer_name(value)]
            encoded[key] = {"class_name": name, "config": dict(fields)}
    return encoded


# -- values inside layer configs --------------------------------------------------------------
def _encode(value):
    if is_lambda(value):
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


def _decode(value, ctx: LoadContext, key: str = "", layer_name: str = ""):
    from flowgraph.keras import constraints, initializers, regularizers

    custom_objects = ctx.custom_objects
    if isinstance(value, list):
        if key == "axis" and len(value) == 1 and isinstance(value[0], int):
            return value[0]  # TF writes BatchNormalization's axis as a list
        items = [_decode(v, ctx, "", layer_name) for v in value]
        return tuple(items) if key.endswith("shape") or key in ("kernel_size", "strides",
                                                                  "pool_size") else items
    if isinstance(value, str) and value in custom_objects and key.endswith(
            ("activation", "initializer", "regularizer", "constraint")):
        return custom_objects[value]  # a function saved by name (`activation=my_fn`)
    if not isinstance(value, dict):
        return value
    if "__lambda__" in value:
        return function_from_config({key or "function": value}, ctx, layer_name,
                                    key or "function")
    if "class_name" in value and "config" in value:
        name, config = value["class_name"], value["config"]
        if name in custom_objects:
            return custom_objects[name].from_config(_decode(config, ctx, "", layer_name)) \
                if hasattr(custom_objects[name], "from_config") else custom_objects[name]
        if key.endswith("regularizer"):
            return regularizers.deserialize(value)
        if key.endswith("constraint"):
            return constraints.deserialize(value)
        if key.endswith("initializer") and name in _INITIALIZER_NAMES:
            return _INITIALIZER_NAMES[name]  # the layer makes it from its name
        if key.endswith("initializer") and hasattr(initializers, name):
            config = {k: v for k, v in config.items() if k not in ("dtype", "verify_shape")}
            return getattr(initializers, name)(**config)
        if key == "layer" or _layer_class(name, custom_objects) is not None:
            return layer_from_config(value, ctx=ctx)
    return {k: _decode(v, ctx, k, layer_name) for k, v in value.items()}


# -- layers ----------------------------------------------------------------------------------
def _layer_class(name: str, custom_objects: dict):
    from flowgraph.keras import layers

    if name in custom_objects:
        return custom_objects[name]
    if name in ("Functional", "Model"):
        return MODEL_CLASSES["Model"]
    if name == "Sequential":
        return MODEL_CLASSES["Sequential"]
    if name == "TensorFlowOpLayer":  # graph-mode Keras's layer for a raw op (applications)
        from flowgraph.keras.layers_tf_op import TensorFlowOpLayer

        return TensorFlowOpLayer
    cls = getattr(layers, name, None) or \
        getattr(getattr(layers, "experimental", None), name, None)  # RandomFourierFeatures
    return cls if isinstance(cls, type) else None


def layer_config(layer) -> dict:
    """``{"class_name", "config"}`` of `layer`, JSON-ready."""
    if hasattr(layer, "_network_layers") or hasattr(layer, "_layers"):
        return model_config(layer)
    config = layer.get_config()
    omitted = getattr(layer, "_config_omits", ())  # inherited parameters TF leaves out
    for key, value in _constructor_attributes(layer).items():
        if key not in omitted:
            config.setdefault(key, value)
    if _is_lambda_layer(layer):
        fn = config.pop("function")
        shape = config.pop("output_shape", None)
        if config.get("mask") is None:
            config.pop("mask", None)
        encoded = _encode_layer_config(config)
        encoded.update(function_config(fn))
        if callable(shape):
            fields = function_config(shape)
            encoded.update(output_shape=fields["function"],
                           output_shape_type=fields["function_type"],
                           output_shape_module=fields["module"])
        else:
            encoded.update(output_shape=_encode(shape), output_shape_type="raw",
                           output_shape_module=None)
        return {"class_name": _registered(type(layer)), "config": encoded}
    return {"class_name": _registered(type(layer)), "config": _encode_layer_config(config)}


def _registered(cls) -> str:
    from flowgraph.keras.saving_registry import get_registered_name

    return get_registered_name(cls)


def _init_parameters(cls, own: bool = False) -> dict:
    """``{name: default}`` of the named parameters of `cls`'s constructors (its own and
    its bases', down to `Layer`; with `own`, without `Layer`'s)."""
    from flowgraph.keras.layers import Layer

    params = {}
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if own and klass is Layer:
            break
        if init is None:
            continue
        for p in inspect.signature(init).parameters.values():
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != "self":
                params.setdefault(p.name, p.default)
    return params


def _constructor_attributes(layer) -> dict:
    """The config of constructor arguments a layer's `get_config` leaves out (the
    recurrent layers'): the attribute of the same name, else the default, which is
    what the layer computes (TF's default may differ: GRU's ``reset_after``)."""
    out = {}
    for name, default in _init_parameters(type(layer), own=True).items():
        value = layer.__dict__.get(name, _ANY)
        if value is _ANY and (default is None or isinstance(default, bool | int | float | str)):
            value = default
        if value is not _ANY:
            out[name] = value
    return out


def _is_lambda_layer(layer) -> bool:
    from flowgraph.keras.layers import Lambda

    return isinstance(layer, Lambda)


def layer_from_config(entry: dict, custom_objects: dict | None = None, *,
                      ctx: LoadContext | None = None):
    """The layer (or model) an entry of `layer_config` describes."""
    from flowgraph.keras.layers import Lambda

    ctx = ctx or LoadContext(custom_objects)
    name = entry["class_name"]
    cls = _layer_class(name, ctx.custom_objects)
    if cls is None:
        raise ValueError(f"Unknown layer: '{name}'. Please ensure this object is passed to "
                         f"the `custom_objects` argument of model_from_json / load_model.")
    if name in ("Functional", "Model", "Sequential"):
        return _model_from_config(entry, ctx)
    raw = dict(entry["config"])
    layer_name = str(raw.get("name", name))
    if isinstance(cls, type) and issubclass(cls, Lambda):
        raw["function"] = function_from_config(raw, ctx, layer_name)
        if raw.get("output_shape_type") == "lambda":
            raw["output_shape"] = function_from_config(raw, ctx, layer_name, "output_shape")
        for key in ("function_type", "module"):
            raw.pop(key, None)
    config = {k: v if k in ("function", "output_shape") and callable(v) else
              _decode(v, ctx, k, layer_name) for k, v in raw.items()}
    accepted = _init_parameters(cls) if isinstance(cls, type) else {}
    for key in [k for k in config if k not in accepted]:
        neutral = _TF_ONLY_KEYS.get(key, None)
        if config[key] is None or neutral is _ANY or config[key] == neutral:
            del config[key]  # TF's, and the value flowgraph computes anyway
    return cls.from_config(config)


def _is_tensor_ref(value) -> bool:
    return isinstance(value, list) and len(value) == 3 and isinstance(value[0], str) and \
        isinstance(value[1], int) and isinstance(value[2], int)


def _node_kwarg_values(node) -> dict:
    first = node[0] if node else []
    return first[3] if len(first) > 3 and isinstance(first[3], dict) else {}


def _refs_in(value) -> list:
    if _is_tensor_ref(value):
        return [value]
    if isinstance(value, list):
        return [r for v in value for r in _refs_in(v)]
    return []


def _kwarg_refs(node) -> list:
    """The tensors a node's keyword arguments name (TF writes MultiHeadAttention's
    ``value`` as ``{"value": [layer, node, tensor]}``, an RNN's ``initial_state`` as a
    list of them)."""
    return [r for v in _node_kwarg_values(node).values() for r in _refs_in(v)]


def _resolve(value, tensors):
    if _is_tensor_ref(value):
        return tensors[(value[0], value[1])][value[2]]
    if isinstance(value, list) and _refs_in(value):
        return [_resolve(v, tensors) for v in value]
    return value


def _node_kwargs(layer, node, tensors) -> dict:
    """The keyword arguments of a node that the layer's call takes, tensor references
    resolved."""
    accepted = set(inspect.signature(type(layer).call).parameters) | \
        set(inspect.signature(type(layer).__call__).parameters)
    return {k: _resolve(v, tensors) for k, v in _node_kwarg_values(node).items()
            if k in accepted and k != "kwargs"}


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
                "ragged": False, "sparse": False, "name": x._keras_history[0].name}})
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


def model_from_config(config: dict, custom_objects: dict | None = None,
                      safe_mode: bool = True):
    """The model `model_config` (or ``model.get_config()``) describes, with new weights.

    `custom_objects` maps class and function names (and a `Lambda` layer's name) to the
    objects to use; ``safe_mode=False`` accepts a `Lambda`'s marshalled code (only for
    configurations you trust: rebuilding it runs it).

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph import keras
    >>> with tf.Graph().as_default():
    ...     m = keras.Sequential([keras.layers.Dense(1, input_shape=(2,)),
    ...                           keras.layers.Lambda(lambda t: t * 2, name="twice")])
    ...     config = {"class_name": "Sequential", "config": m.get_config()}
    ...     m2 = keras.models.model_from_config(config, {"twice": lambda t: t * 2})
    ...     print([layer.name for layer in m2.layers])
    ['dense', 'twice']
    """
    return _model_from_config(config, LoadContext(custom_objects, safe_mode))


def _model_from_config(config: dict, ctx: LoadContext):
    from flowgraph.keras.layers import Input, InputLayer
    Model, Sequential = MODEL_CLASSES["Model"], MODEL_CLASSES["Sequential"]
    if not isinstance(config, dict) or "class_name" not in config:
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
                model.add(layer_from_config(entry, ctx=ctx))
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
            if not all((r[0], r[1]) in tensors for node in refs for r in node) or \
                    not all((r[0], r[1]) in tensors for node in refs
                            for r in _kwarg_refs(node)):
                continue
            layer = entry.setdefault("_layer", layer_from_config(entry, ctx=ctx))
            for i, node in enumerate(refs):
                inputs = [tensors[(r[0], r[1])][r[2]] for r in node]
                out = layer(inputs[0] if len(inputs) == 1 else inputs,
                            **_node_kwargs(layer, node, tensors))
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


def model_from_layers_config(cls, config: dict, custom_objects=None, safe_mode: bool = True):
    """``Sequential.from_config`` / ``Model.from_config`` on ``get_config()`` output."""
    if "class_name" in config and "config" in config:
        return model_from_config(config, custom_objects, safe_mode)
    name = "Sequential" if cls.__name__ == "Sequential" else "Functional"
    return model_from_config({"class_name": name, "config": config}, custom_objects,
                             safe_mode)


def model_from_json(json_string: str, custom_objects: dict | None = None,
                    safe_mode: bool = True):
    """The model ``model.to_json()`` described (new weights); `custom_objects` and
    `safe_mode` as in `model_from_config`."""
    return model_from_config(json.loads(json_string), custom_objects, safe_mode)


# -- whole-model files -----------------------------------------------------------------------
def _training_config(model) -> dict | None:
    if not getattr(model, "_compiled", False):
        return None
    from flowgraph.keras import optimizers

    args = model._compile_args

    def name_of(value):
        if value is None or isinstance(value, str | int | float):
            return value
        if isinstance(value, list | tuple):
            return [name_of(v) for v in value]
        if isinstance(value, dict):
            return {k: name_of(v) for k, v in value.items()}
        if isinstance(value, optimizers.Optimizer):  # TF's fields: name, decay first
            kind = type(value).__name__
            config = _encode(value.get_config())
            return {"class_name": kind, "config": {
                "name": config.pop("name", kind), **config,
                "decay": config.pop("decay", 0.0)}}
        name = getattr(value, "name", None) or getattr(value, "__name__", None)
        return name if isinstance(name, str) else None

    optimizer = model.optimizer if isinstance(model.optimizer, optimizers.Optimizer) \
        else args["optimizer"]
    return {"loss": name_of(args["loss"]), "metrics": name_of(args["metrics"]),
            "loss_weights": args["loss_weights"], "sample_weight_mode": None,
            "weighted_metrics": name_of(args.get("weighted_metrics")),
            "optimizer_config": name_of(optimizer)}


def save_model(model, filepath, overwrite: bool = True, include_optimizer: bool = True,
               save_format=None, **kwargs) -> None:
    """Write `model` (configuration, weights, compile arguments) to `filepath`: a Keras
    HDF5 file for a path ending ``.h5`` / ``.hdf5`` or ``save_format='h5'`` (with the
    optimizer's state when `include_optimizer`), else a directory.

    Example
    -------
    >>> import os, tempfile, flowgraph as tf
    >>> from flowgraph import keras
    >>> path = os.path.join(tempfile.mkdtemp(), "model")
    >>> with tf.Graph().as_default():
    ...     keras.models.save_model(keras.Sequential([keras.layers.Dense(
    ...         1, input_shape=(2,))]), path)
    ...     print(keras.models.load_model(path).output_shape)
    (None, 1)
    """
    path = os.fspath(filepath)
    h5 = model._weights_format(path, save_format) == "h5"
    if os.path.exists(path) and not overwrite:
        raise FileExistsError(f"{path} exists and overwrite=False.")
    document = {"model_config": model_config(model), "training_config":
                _training_config(model) if include_optimizer else None,
                "keras_version": hdf5_format.KERAS_VERSION, "backend": "tensorflow"}
    if h5:
        _save_h5(model, path, document, include_optimizer)
        return
    os.makedirs(os.path.join(path, "variables"), exist_ok=True)
    with open(os.path.join(path, _CONFIG_FILE), "w", encoding="utf-8") as f:
        json.dump(document, f)
    model.save_weights(os.path.join(path, "variables", "variables"))


def _save_h5(model, path: str, document: dict, include_optimizer: bool) -> None:
    from flowgraph.keras import hdf5_optimizer

    with hdf5_format.atomic_h5_file(path, f"model {model.name!r}") as f:
        f.attrs["backend"] = document["backend"]
        f.attrs["keras_version"] = document["keras_version"]
        f.attrs["model_config"] = json.dumps(document["model_config"])
        if document["training_config"] is not None:
            f.attrs["training_config"] = json.dumps(document["training_config"])
        hdf5_format.save_weights_to_group(f.create_group("model_weights"), model)
        if include_optimizer:
            hdf5_optimizer.save_optimizer_weights(f, model)


def load_model(filepath, custom_objects: dict | None = None, compile: bool = True,
               options=None, safe_mode: bool = True):
    """The model `save_model` wrote (a Keras HDF5 file, TensorFlow's included, or a
    directory), with its weights, and compiled if it was.

    `custom_objects` maps class and function names (and a `Lambda` layer's name) to the
    objects to use; a `Lambda`'s marshalled code is refused unless ``safe_mode=False``
    (for files you trust: loading runs it).
    """
    h5py = None
    if not isinstance(filepath, str | bytes | os.PathLike):
        h5py = hdf5_format.require_h5py("Loading a Keras model from an HDF5 object")
    path = filepath if h5py is not None else os.fspath(filepath)
    if h5py is not None or path.endswith((".h5", ".hdf5")) or \
            (os.path.isfile(path) and hdf5_format.is_hdf5(path)):
        return _load_h5(path, custom_objects, compile, safe_mode)
    if path.endswith(".keras"):
        raise NotImplementedError(f"Loading {path}: the Keras v3 `.keras` format is not "
                                  f"supported by flowgraph; save as .h5 or a directory.")
    config_file = os.path.join(path, _CONFIG_FILE)
    if not os.path.isfile(config_file):
        raise OSError(f"No file or directory found at {path}")
    with open(config_file, encoding="utf-8") as f:
        document = json.load(f)
    model = _model_from_file_config(document.get("model_config"),
                                    LoadContext(custom_objects, safe_mode, config_file))
    model.load_weights(os.path.join(path, "variables", "variables"))
    training = document.get("training_config")
    if compile and training:
        _compile_from(model, training, custom_objects, config_file)
    return model


def _load_h5(path, custom_objects, compile: bool, safe_mode: bool):
    from flowgraph.keras import hdf5_optimizer

    with hdf5_format.open_h5(path, "the Keras model file") as f:
        source = getattr(f, "filename", None) or str(path)
        text = hdf5_format.read_text_attr(f, "model_config", source)
        if text is None:
            raise ValueError(f"No model config found in the file at {source}: it holds "
                             f"weights only; build the model and call load_weights.")
        config = _json(text, source, "model_config")
        model = _model_from_file_config(config, LoadContext(custom_objects, safe_mode,
                                                            source))
        weights = hdf5_format.member(f, "model_weights", source)
        hdf5_format.load_weights_from_group(weights, model, source)
        text = hdf5_format.read_text_attr(f, "training_config", source)
        if compile and text is not None:
            training = _json(text, source, "training_config")
            if training:
                try:
                    _compile_from(model, training, custom_objects, source)
                except (ValueError, TypeError, KeyError, IndexError, AttributeError) as e:
                    raise ValueError(f"Cannot compile the model of {source} as its "
                                     f"training_config says ({type(e).__name__}: {e}); "
                                     f"pass compile=False to load it uncompiled.") from e
                hdf5_optimizer.load_optimizer_weights(f, model, source)
    return model


def _model_from_file_config(config, ctx: LoadContext):
    """`_model_from_config`, its errors naming the file: a damaged configuration fails
    as a ValueError whatever Python error it causes."""
    try:
        return _model_from_config(config, ctx)
    except NotImplementedError as e:
        raise NotImplementedError(f"Loading the model of {ctx.source}: {e}") from e
    except ValueError as e:
        if ctx.source and ctx.source in str(e):
            raise
        raise ValueError(f"Cannot rebuild the model of {ctx.source}: {e}") from e
    except (TypeError, KeyError, IndexError, AttributeError) as e:
        raise ValueError(f"Cannot rebuild the model of {ctx.source}: its model_config is "
                         f"malformed ({type(e).__name__}: {e}).") from e


def _json(text: str, source: str, what: str):
    try:
        return json.loads(text)
    except ValueError as e:
        raise ValueError(f"{source}: the {what} attribute is not valid JSON ({e}).") from e


def _compile_from(model, training: dict, custom_objects, source: str) -> None:
    if not isinstance(training, dict):
        raise ValueError(f"{source}: training_config should be a JSON object; found "
                         f"{type(training).__name__}.")
    opt = training.get("optimizer_config")
    if isinstance(opt, dict):
        from flowgraph.keras import optimizers

        kind = optimizers._BY_NAME.get(str(opt.get("class_name")).lower())
        known = {"lr", "decay", "clipnorm", "clipvalue", *getattr(kind, "_defaults", {})}
        # TF 2.x's optimizers add fields that change nothing at their values off
        # (use_ema=False, weight_decay=None, ...) or only choose how it computes
        config = {k: v for k, v in dict(opt.get("config") or {}).items()
                  if k in known or (v not in (None, False, 0) and k not in (
                      "name", "is_legacy_optimizer", "jit_compile", "ema_momentum"))}
        opt = optimizers.get({"class_name": opt.get("class_name"), "config": config})
    losses_ = training.get("loss")
    metrics_ = training.get("metrics")
    objects = custom_objects or {}

    def resolve(value):
        if isinstance(value, str):
            return objects.get(value, value)
        if isinstance(value, list):
            return [resolve(v) for v in value]
        if isinstance(value, dict):
            return {k: resolve(v) for k, v in value.items()}
        return value

    model.compile(optimizer=opt or "rmsprop", loss=resolve(losses_),
                  metrics=resolve(metrics_), loss_weights=training.get("loss_weights"),
                  weighted_metrics=resolve(training.get("weighted_metrics")))
