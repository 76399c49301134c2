"""What the `tf.keras.applications` constructors share: input-shape rules, weights
(``None``, ``'imagenet'`` from Keras' local cache, or a file), preprocessing and
ImageNet label decoding.

flowgraph does not download: ``weights='imagenet'`` loads the HDF5 file Keras caches in
``$KERAS_HOME/models/`` (default ``~/.keras/models/``) when it is there, and otherwise
raises `FileNotFoundError` naming the file, its URL and where to put it.
"""

from __future__ import annotations

import json
import os
import warnings

import numpy as np

from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.operation import Tensor
from flowgraph.keras import backend
from flowgraph.keras import layers as L
from flowgraph.keras.models import Model
from flowgraph.ops import array_ops, math_ops

WEIGHTS_URL = "https://storage.googleapis.com/tensorflow/keras-applications/"
CLASS_INDEX_URL = ("https://storage.googleapis.com/download.tensorflow.org/data/"
                   "imagenet_class_index.json")


def models_dir() -> str:
    base = os.path.expanduser(os.environ.get("KERAS_HOME") or os.path.join("~", ".keras"))
    return os.path.join(base, "models")


def check_weights(weights, include_top: bool, classes: int) -> None:
    if not (weights in ("imagenet", None) or os.path.exists(str(weights))):
        raise ValueError(f"The `weights` argument should be either `None` (random "
                         f"initialization), `imagenet` (pre-training on ImageNet), or the path "
                         f"to the weights file to be loaded.  Received: weights={weights}")
    if weights == "imagenet" and include_top and classes != 1000:
        raise ValueError(f'If using `weights` as `"imagenet"` with `include_top` as true, '
                         f"`classes` should be 1000.  Received `classes={classes}`")


def validate_activation(classifier_activation, weights) -> None:
    """Pretrained weights allow only ``None`` or ``'softmax'`` as the classifier's
    activation."""
    if weights is None:
        return
    if classifier_activation not in (None, "softmax") and not (
            callable(classifier_activation)
            and getattr(classifier_activation, "__name__", None) == "softmax"):
        raise ValueError(f"Only `None` and `softmax` activations are allowed for the "
                         f"`classifier_activation` argument when using pretrained weights, "
                         f"with `include_top=True`; Received: "
                         f"classifier_activation={classifier_activation}")


def obtain_input_shape(input_shape, default_size: int, min_size: int, require_flatten: bool,
                       weights=None):
    """Keras' input-shape rule (channels last): the default ``(size, size, 3)``, or the
    given shape after checking its rank, channels and minimum size."""
    if weights != "imagenet" and input_shape and len(input_shape) == 3:
        default_shape = (default_size, default_size, input_shape[-1])
    else:
        default_shape = (default_size, default_size, 3)
    if weights == "imagenet" and require_flatten:
        if input_shape is not None and tuple(input_shape) != default_shape:
            raise ValueError(f"When setting `include_top=True` and loading `imagenet` "
                             f"weights, `input_shape` should be {default_shape}.  Received: "
                             f"input_shape={input_shape}")
        return default_shape
    if input_shape:
        if len(input_shape) != 3:
            raise ValueError("`input_shape` must be a tuple of three integers.")
        if input_shape[-1] != 3 and weights == "imagenet":
            raise ValueError(f"The input must have 3 channels; Received "
                             f"`input_shape={input_shape}`")
        if any(d is not None and d < min_size for d in input_shape[:2]):
            raise ValueError(f"Input size must be at least {min_size}x{min_size}; Received: "
                             f"input_shape={input_shape}")
    else:
        input_shape = default_shape if require_flatten else (None, None, 3)
    if require_flatten and None in input_shape:
        raise ValueError(f"If `include_top` is True, you should specify a static "
                         f"`input_shape`. Received: input_shape={input_shape}")
    return tuple(input_shape)


def model_input(input_tensor, input_shape):
    """``(the model's input, the tensor the network starts from)``."""
    if input_tensor is None:
        x = L.Input(shape=input_shape)
        return x, x
    if getattr(input_tensor, "_keras_history", None) is not None:
        return input_tensor, input_tensor
    x = L.Input(tensor=input_tensor, shape=input_shape)
    return x, x


def pool(x, pooling, avg_name=None, max_name=None):
    """The ``include_top=False`` pooling: ``'avg'``, ``'max'`` or none (anything else)."""
    if pooling == "avg":
        return L.GlobalAveragePooling2D(name=avg_name)(x)
    if pooling == "max":
        return L.GlobalMaxPooling2D(name=max_name)(x)
    return x


def top(x, include_top, pooling, classes, classifier_activation, avg_name="avg_pool",
        max_name="max_pool", dropout=None, named_pooling=True):
    """The usual classifier head: global average pooling (``avg_name``), optional
    dropout and a ``predictions`` Dense layer; or, without the top, ``pooling``
    (named ``avg_name``/``max_name``, or automatically unless ``named_pooling``)."""
    if not include_top:
        if not named_pooling:
            avg_name = max_name = None
        return pool(x, pooling, avg_name=avg_name, max_name=max_name)
    x = L.GlobalAveragePooling2D(name=avg_name)(x)
    if dropout:
        x = L.Dropout(dropout, name="top_dropout")(x)
    return L.Dense(classes, activation=classifier_activation, name="predictions")(x)


def build_model(inputs, outputs, name: str):
    """``Model(inputs, outputs, name=name)``: the functional model of an application."""
    return Model(inputs, outputs, name=name)


def load_weights(model, weights, fname: str, url_dir: str) -> None:
    """Load ``weights``: a file path, or ``'imagenet'`` from Keras' cache."""
    if weights is None:
        return
    if weights == "imagenet":
        path = os.path.join(models_dir(), fname)
        if not os.path.exists(path):
            raise FileNotFoundError(
                f"{model.name}: weights='imagenet' needs {path}, and flowgraph does not "
                f"download. Download {WEIGHTS_URL}{url_dir}/{fname} and put it at {path}, "
                f"pass the file's path as `weights=`, or use weights=None to train from "
                f"scratch.")
        weights = path
    model.load_weights(weights)


_TORCH_MEAN = [0.485, 0.456, 0.406]
_TORCH_STD = [0.229, 0.224, 0.225]


def _caffe_mean(data_format):
    return [103.939, 116.779, 123.68], data_format == "channels_first"


def preprocess(x, data_format, mode: str):
    """Keras' ``preprocess_input`` modes: ``'tf'`` scales to [-1, 1]; ``'torch'`` scales
    to [0, 1] and standardizes with the ImageNet channel means and deviations; ``'caffe'`` turns
    RGB into BGR and subtracts the ImageNet channel means. NumPy in, NumPy out (a new
    array); a tensor in, a tensor out."""
    data_format = data_format or backend.image_data_format()
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError(f"Unknown data_format {data_format}")
    if isinstance(x, Tensor):
        return _preprocess_tensor(x, data_format, mode)
    x = np.asarray(x)
    if not np.issubdtype(x.dtype, np.floating):
        x = x.astype(backend.floatx())
    if mode == "tf":
        return x / x.dtype.type(127.5) - x.dtype.type(1)
    if mode == "torch":
        mean, std = np.asarray(_TORCH_MEAN, x.dtype), np.asarray(_TORCH_STD, x.dtype)
        shape = ([1, 3, 1, 1] if x.ndim == 4 else [3, 1, 1]) if data_format == \
            "channels_first" else [3]
        return (x / x.dtype.type(255) - mean.reshape(shape)) / std.reshape(shape)
    mean, first = _caffe_mean(data_format)
    if first:
        flipped = x[:, ::-1] if x.ndim == 4 else x[::-1]
        shape = [1, 3, 1, 1] if x.ndim == 4 else [3, 1, 1]
    else:
        flipped, shape = x[..., ::-1], [3]
    return flipped - np.asarray(mean, x.dtype).reshape(shape)


def _preprocess_tensor(x, data_format, mode):
    x = convert_to_tensor(x)
    if not x.dtype.is_floating:
        x = math_ops.cast(x, backend.floatx())
    dtype = x.dtype.base_dtype
    if mode == "tf":
        return math_ops.subtract(math_ops.truediv(x, convert_to_tensor(127.5, dtype=dtype)),
                                 convert_to_tensor(1.0, dtype=dtype))
    if mode == "torch":
        shape = [3] + ([1, 1] if data_format == "channels_first" else [])
        x = math_ops.truediv(x, convert_to_tensor(255.0, dtype=dtype))
        x = math_ops.subtract(x, convert_to_tensor(np.reshape(_TORCH_MEAN, shape), dtype=dtype))
        return math_ops.truediv(x, convert_to_tensor(np.reshape(_TORCH_STD, shape), dtype=dtype))
    mean, first = _caffe_mean(data_format)
    axis = (1 if x.shape.ndims == 4 else 0) if first else x.shape.ndims - 1
    shape = [3] + [1] * (x.shape.ndims - axis - 1)
    flipped = array_ops.reverse(x, [axis])
    return math_ops.subtract(flipped, convert_to_tensor(np.reshape(mean, shape), dtype=dtype))


def decode_predictions(preds, top=5):
    """``[[(class id, name, score), ...] per sample]``, best ``top`` first, from ImageNet
    scores ``(samples, 1000)``; the class list is Keras' ``imagenet_class_index.json``
    from ``$KERAS_HOME/models``."""
    preds = np.asarray(preds)
    if preds.ndim != 2 or preds.shape[1] != 1000:
        raise ValueError(f"`decode_predictions` expects a batch of predictions (i.e. a 2D "
                         f"array of shape (samples, 1000)). Found array with shape: "
                         f"{preds.shape}")
    path = os.path.join(models_dir(), "imagenet_class_index.json")
    if not os.path.exists(path):
        raise FileNotFoundError(f"decode_predictions needs {path}, and flowgraph does not "
                                f"download. Download {CLASS_INDEX_URL} and put it there.")
    with open(path) as f:
        index = json.load(f)
    out = []
    for row in preds:
        best = row.argsort()[-top:][::-1]
        entries = [(*index[str(i)], row[i]) for i in best]
        entries.sort(key=lambda e: e[2], reverse=True)
        out.append(entries)
    return out


def size_for_name(input_shape, sizes) -> int:
    """The default size of the MobileNets: the given square size if it is one of
    ``sizes``, else 224."""
    if input_shape is None:
        return 224
    rows, cols = input_shape[0], input_shape[1]
    return rows if rows == cols and rows in sizes else 224


def warn_size(rows, cols, sizes) -> int:
    if rows != cols or rows not in sizes:
        warnings.warn(f"`input_shape` is undefined or non-square, or `rows` is not in "
                      f"{list(sizes)}. Weights for input shape (224, 224) will be loaded as "
                      f"the default.", stacklevel=3)
        return 224
    return rows
