"""Building and checking signatures (``tf.saved_model.signature_def_utils`` and ``utils``).

A signature names the tensors a serving client feeds (``inputs``) and fetches
(``outputs``) under string keys, and a ``method_name`` telling TensorFlow Serving which
API it implements: predict (any tensors), classify (serialized ``tf.train.Example``
strings in; ``classes`` strings and/or ``scores`` floats out) or regress (examples in,
one float ``outputs`` out).

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     x = tf.placeholder(tf.float32, [None, 3], name="x")
...     y = tf.identity(x, name="y")
...     sig = predict_signature_def({"x": x}, {"y": y})
>>> sig.method_name, sig.inputs["x"].name, is_valid_signature(sig)
('tensorflow/serving/predict', 'x:0', True)
"""

from __future__ import annotations

import types

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.operation import Tensor
from flowgraph.saved_model import constants as c
from flowgraph.saved_model.format import SignatureDef, TensorInfo, TensorShapeProto

__all__ = [
    "MethodNameUpdater",
    "build_signature_def",
    "build_tensor_info",
    "classification_signature_def",
    "get_tensor_from_tensor_info",
    "is_valid_signature",
    "predict_signature_def",
    "regression_signature_def",
]

_STRING = _dtypes.string.as_datatype_enum
_FLOAT = _dtypes.float32.as_datatype_enum


def build_tensor_info(tensor) -> TensorInfo:
    """The `TensorInfo` (name, dtype number, shape) of `tensor` for a signature.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     info = build_tensor_info(tf.placeholder(tf.int64, [None], name="ids"))
    >>> info.name, tf.as_dtype(info.dtype).name, info.tensor_shape.dim[0].size
    ('ids:0', 'int64', -1)
    """
    if hasattr(tensor, "_as_graph_element") and not isinstance(tensor, Tensor):
        tensor = tensor._as_graph_element()
    if not isinstance(tensor, Tensor):
        raise TypeError(f"build_tensor_info expects a Tensor; got {type(tensor).__name__}: "
                        f"{tensor!r}")
    return TensorInfo(name=tensor.name, dtype=tensor.dtype.base_dtype.as_datatype_enum,
                      tensor_shape=TensorShapeProto.from_shape(tensor.shape))


def get_tensor_from_tensor_info(tensor_info: TensorInfo, graph=None, import_scope=None):
    """The tensor of `graph` (default graph) that `tensor_info` names."""
    from flowgraph.framework.graph import get_default_graph

    graph = graph or get_default_graph()
    # Any TensorInfo message: this module's, or the one a loaded MetaGraphDef holds.
    name = getattr(tensor_info, "name", None)
    if not isinstance(name, str) or not name:
        raise ValueError(f"Invalid TensorInfo: {tensor_info!r}; it needs a tensor name.")
    if import_scope:
        name = f"{import_scope.rstrip('/')}/{name}"
    return graph.get_tensor_by_name(name)


def build_signature_def(inputs=None, outputs=None, method_name=None,
                        defaults=None) -> SignatureDef:
    """A `SignatureDef` from dicts of key -> `TensorInfo` and a method name.

    `defaults` (TF 2.15: default values of optional inputs) is refused when given:
    flowgraph's signatures hold no default values.

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.placeholder(tf.float32, [None], name="x")
    >>> sig = tf.saved_model.build_signature_def(
    ...     {"x": tf.saved_model.build_tensor_info(x)}, {}, "tensorflow/serving/predict")
    >>> sorted(sig.inputs)
    ['x']
    """
    if defaults:
        raise NotImplementedError(
            "build_signature_def: `defaults` (default values of signature inputs) is not "
            "supported by flowgraph's SignatureDef; feed every input instead.")
    sig = SignatureDef(method_name=method_name or "")
    for part, given in (("inputs", inputs), ("outputs", outputs)):
        for key, info in (given or {}).items():
            if not isinstance(info, TensorInfo):
                raise TypeError(f"build_signature_def: {part}[{key!r}] must be a TensorInfo "
                                f"(from build_tensor_info); got {type(info).__name__}")
            getattr(sig, part)[key] = info
    return sig


def _infos(tensors: dict, what: str) -> dict[str, TensorInfo]:
    if not isinstance(tensors, dict):
        raise TypeError(f"{what} must be a dict of key -> Tensor; got {type(tensors).__name__}")
    return {key: build_tensor_info(t) for key, t in tensors.items()}


def predict_signature_def(inputs, outputs) -> SignatureDef:
    """A predict signature: any tensors in, any tensors out (both dicts, non-empty)."""
    if not inputs:
        raise ValueError("Prediction `inputs` cannot be None or empty. Pass a dict of "
                         "input key -> Tensor.")
    if not outputs:
        raise ValueError("Prediction `outputs` cannot be None or empty. Pass a dict of "
                         "output key -> Tensor.")
    return build_signature_def(_infos(inputs, "inputs"), _infos(outputs, "outputs"),
                               c.PREDICT_METHOD_NAME)


def _examples_info(examples, api: str) -> TensorInfo:
    if examples is None:
        raise ValueError(f"{api} `examples` cannot be None.")
    if not isinstance(examples, Tensor):
        raise ValueError(f"{api} input tensors must be of type string. Found "
                         f"{type(examples).__name__}: pass the string Tensor of serialized "
                         "tf.Examples.")
    info = build_tensor_info(examples)
    if info.dtype != _STRING:
        raise ValueError(f"{api} input tensors must be of type string. Found tensors of "
                         f"type {info.dtype} ('{examples.name}' is "
                         f"{examples.dtype.base_dtype.name}; serialized tf.Examples expected).")
    return info


def classification_signature_def(examples, classes, scores) -> SignatureDef:
    """A classify signature: serialized Examples in; string `classes` and/or float32
    `scores` out (at least one)."""
    inputs = {c.CLASSIFY_INPUTS: _examples_info(examples, "Classification")}
    if classes is None and scores is None:
        raise ValueError("Classification `classes` and `scores` cannot both be None.")
    outputs = {}
    if classes is not None:
        info = build_tensor_info(classes)
        if info.dtype != _STRING:
            raise ValueError(f"Classification classes must be a string Tensor. Found tensors "
                             f"of type {info.dtype} ('{info.name}' is "
                             f"{_dtypes.as_dtype(info.dtype).name}).")
        outputs[c.CLASSIFY_OUTPUT_CLASSES] = info
    if scores is not None:
        info = build_tensor_info(scores)
        if info.dtype != _FLOAT:
            raise ValueError(f"Classification scores must be a float32 Tensor. Found tensors "
                             f"of type {info.dtype} ('{info.name}' is "
                             f"{_dtypes.as_dtype(info.dtype).name}).")
        outputs[c.CLASSIFY_OUTPUT_SCORES] = info
    return build_signature_def(inputs, outputs, c.CLASSIFY_METHOD_NAME)


def regression_signature_def(examples, predictions) -> SignatureDef:
    """A regress signature: serialized Examples in, one float32 tensor out."""
    inputs = {c.REGRESS_INPUTS: _examples_info(examples, "Regression")}
    if predictions is None:
        raise ValueError("Regression `predictions` cannot be None.")
    info = build_tensor_info(predictions)
    if info.dtype != _FLOAT:
        raise ValueError(f"Regression output tensors must be of type float. Found tensors "
                         f"with type {info.dtype}. (Regression predictions must be a float32 "
                         f"Tensor; '{info.name}' is {_dtypes.as_dtype(info.dtype).name}.)")
    return build_signature_def(inputs, {c.REGRESS_OUTPUTS: info}, c.REGRESS_METHOD_NAME)


def is_valid_signature(signature_def) -> bool:
    """Whether `signature_def` is usable by TensorFlow Serving's API of its method."""
    if not isinstance(signature_def, SignatureDef):
        return False
    inputs, outputs = signature_def.inputs, signature_def.outputs
    method = signature_def.method_name
    if method == c.PREDICT_METHOD_NAME:
        return bool(inputs) and bool(outputs)
    if method == c.CLASSIFY_METHOD_NAME:
        if set(inputs) != {c.CLASSIFY_INPUTS} or inputs[c.CLASSIFY_INPUTS].dtype != _STRING:
            return False
        if not outputs or not set(outputs) <= {c.CLASSIFY_OUTPUT_CLASSES,
                                               c.CLASSIFY_OUTPUT_SCORES}:
            return False
        classes = outputs.get(c.CLASSIFY_OUTPUT_CLASSES)
        scores = outputs.get(c.CLASSIFY_OUTPUT_SCORES)
        return ((classes is None or classes.dtype == _STRING)
                and (scores is None or scores.dtype == _FLOAT))
    if method == c.REGRESS_METHOD_NAME:
        if set(inputs) != {c.REGRESS_INPUTS} or inputs[c.REGRESS_INPUTS].dtype != _STRING:
            return False
        return set(outputs) == {c.REGRESS_OUTPUTS} and \
            outputs[c.REGRESS_OUTPUTS].dtype == _FLOAT
    return False


# ``tf.saved_model.utils``
utils = types.SimpleNamespace(build_tensor_info=build_tensor_info,
                              get_tensor_from_tensor_info=get_tensor_from_tensor_info)


class MethodNameUpdater:
    """Change the ``method_name`` of signatures in a SavedModel already on disk, without
    loading its graph: ``replace_method_name`` for each change, then ``save``.

    Works on TensorFlow's ``saved_model.pb`` / ``saved_model.pbtxt`` and on flowgraph's
    ``saved_model.json``; ``save()`` writes the same kind of file, to `export_dir` or to
    a new directory.

    Example
    -------
    >>> import os, tempfile, flowgraph as tf
    >>> d = os.path.join(tempfile.mkdtemp(), "m")
    >>> with tf.Graph().as_default(), tf.Session() as s:
    ...     x = tf.placeholder(tf.float32, [None], name="x")
    ...     tf.saved_model.simple_save(s, d, {"x": x}, {"y": x * 2.0})
    >>> u = MethodNameUpdater(d)
    >>> u.replace_method_name("serving_default", "tensorflow/serving/regress")
    >>> u.save()
    """

    def __init__(self, export_dir) -> None:
        import os

        from flowgraph.framework.tf_formats.meta_graph_messages import SavedModelProto
        from flowgraph.framework.tf_formats.text_parse import parse_text
        from flowgraph.saved_model import format as fmt

        self._export_dir = os.fspath(export_dir)
        self._kind = None
        for kind in (c.SAVED_MODEL_FILENAME_PB, c.SAVED_MODEL_FILENAME_PBTXT,
                     c.SAVED_MODEL_FILENAME_JSON):
            if os.path.isfile(os.path.join(self._export_dir, kind)):
                self._kind = kind
                break
        if self._kind is None:
            raise OSError(f"SavedModel file does not exist at: {self._export_dir}/"
                          f"{{{c.SAVED_MODEL_FILENAME_PBTXT}|{c.SAVED_MODEL_FILENAME_PB}}}")
        path = os.path.join(self._export_dir, self._kind)
        if self._kind == c.SAVED_MODEL_FILENAME_JSON:
            self._model = fmt.read_saved_model(self._export_dir)
        else:
            with open(path, "rb") as f:
                data = f.read()
            self._model = (SavedModelProto.FromString(data)
                           if self._kind == c.SAVED_MODEL_FILENAME_PB
                           else parse_text(data.decode("utf-8"), SavedModelProto))

    def replace_method_name(self, signature_key: str, method_name: str, tags=None) -> None:
        """Set `method_name` on signature `signature_key` of every meta graph (or of the
        one whose tag set equals `tags`)."""
        if not signature_key:
            raise ValueError("`signature_key` must be defined.")
        if not method_name:
            raise ValueError("`method_name` must be defined.")
        if tags is not None and not isinstance(tags, list):
            tags = [tags]
        found = False
        for mg in self._model.meta_graphs:
            if tags is None or set(tags) == set(mg.meta_info_def.tags):
                if signature_key not in mg.signature_def:
                    raise ValueError(
                        f"MetaGraphDef associated with tags {tags} does not have a "
                        f"signature_def with key: '{signature_key}'. This means either you "
                        "specified the wrong signature key or forgot to put the "
                        "signature_def with the corresponding key in your SavedModel.")
                mg.signature_def[signature_key].method_name = method_name
                found = True
        if not found:
            raise ValueError(
                f"MetaGraphDef associated with tags {tags} could not be found in SavedModel. "
                "This means either you specified invalid tags or your SavedModel does not "
                "have a MetaGraphDef with the specified tags.")

    def save(self, new_export_dir=None) -> None:
        """Write the SavedModel file to `new_export_dir` (default: where it was read)."""
        import os

        from flowgraph.framework.tf_formats.text_format import message_to_text
        from flowgraph.saved_model import format as fmt

        directory = os.fspath(new_export_dir) if new_export_dir else self._export_dir
        os.makedirs(directory, exist_ok=True)
        if self._kind == c.SAVED_MODEL_FILENAME_JSON:
            fmt.write_saved_model(directory, self._model)
            return
        data = (self._model.SerializeToString() if self._kind == c.SAVED_MODEL_FILENAME_PB
                else message_to_text(self._model).encode("utf-8"))
        with open(os.path.join(directory, self._kind), "wb") as f:
            f.write(data)
