"""`flowgraph.saved_model.load(export_dir)`: a SavedModel as Python callables.

The model is loaded once into its own graph and one long-lived session; each signature
becomes a `SignatureFunction` that takes NumPy values (or lists) by input key and
returns a dict of NumPy arrays by output key. Calls may come from many threads at once
(the session runs them concurrently); `close` waits for calls in flight.

Example
-------
>>> import os, tempfile, flowgraph as tf
>>> from flowgraph import saved_model
>>> d = os.path.join(tempfile.mkdtemp(), "1")
>>> with tf.Graph().as_default():
...     x = tf.placeholder(tf.float32, [None, 2], name="x")
...     y = tf.reduce_sum(x, axis=1, name="y")
...     with tf.Session() as sess:
...         saved_model.simple_save(sess, d, {"x": x}, {"y": y})
>>> model = saved_model.load(d)
>>> model.signatures["serving_default"](x=[[1.0, 2.0], [3.0, 4.0]])["y"]
array([3., 7.], dtype=float32)
>>> model({"x": [[0.5, 0.5]]})["y"]
array([1.], dtype=float32)
>>> model.close()
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.framework.tf_formats.meta_graph_messages import SignatureDefProto
from flowgraph.saved_model import constants

__all__ = ["LoadedModel", "SignatureFunction", "load", "shape_of"]


def shape_of(info) -> TensorShape:
    """The `TensorShape` that TensorInfo `info` declares (TensorFlow's message, or
    flowgraph's `format.TensorInfo`): ``tf.TensorShape(info.tensor_shape)`` in TensorFlow.

    Example
    -------
    >>> from flowgraph.saved_model.format import TensorInfo, TensorShapeProto
    >>> shape_of(TensorInfo("x:0", 1, TensorShapeProto.from_shape([None, 3]))).as_list()
    [None, 3]
    """
    proto = info.tensor_shape
    if proto.unknown_rank:
        return TensorShape(None)
    return TensorShape([None if d.size < 0 else int(d.size) for d in proto.dim])


def convert_input(value, info, what: str) -> np.ndarray:
    """`value` as an array of the dtype and a shape compatible with TensorInfo `info`."""
    dtype = _dtypes.as_dtype(info.dtype)
    shape = shape_of(info)
    if dtype == _dtypes.string:
        arr = np.asarray(value, dtype=object)
        flat = arr.reshape(-1)
        for i, item in enumerate(flat):
            if isinstance(item, str):
                flat[i] = item.encode("utf-8")
            elif not isinstance(item, bytes | np.bytes_):
                raise ValueError(f"{what} expects strings; found {type(item).__name__} "
                                 f"{item!r:.40}")
    else:
        try:
            arr = np.asarray(value)
        except (ValueError, TypeError) as e:
            raise ValueError(f"{what}: cannot convert the value to an array ({e}); nested "
                             "lists must be rectangular") from None
        want = np.dtype(dtype.as_numpy_dtype)
        if arr.dtype.kind in "OUSV":
            raise ValueError(f"{what} expects {dtype.name} values; found "
                             f"{'strings' if arr.dtype.kind in 'US' else 'mixed values'} "
                             "(nested lists must be rectangular)")
        if arr.size == 0 and arr.dtype == np.float64:
            arr = arr.astype(want)
        if not np.can_cast(arr.dtype, want, casting="same_kind"):
            raise ValueError(f"{what} expects {dtype.name} values; found {arr.dtype} values "
                             "that would lose information when converted")
        arr = arr.astype(want, copy=False)
    if not shape.is_compatible_with(arr.shape):
        raise ValueError(f"{what} has shape {list(arr.shape)}, but the signature expects "
                         f"{shape.as_list() if shape.ndims is not None else 'any shape'} "
                         "(None: any size)")
    return arr


class SignatureFunction:
    """One signature of a loaded model, callable with inputs by key.

    ``fn(x=array)``, ``fn({"x": array})``, or ``fn(array)`` when there is one input;
    returns ``{output_key: np.ndarray}``.
    """

    def __init__(self, model: LoadedModel, key: str, signature_def: SignatureDefProto) -> None:
        graph = model.graph
        self.name = key
        self.signature_def = signature_def
        self._model = model
        self._feeds = {k: graph.get_tensor_by_name(v.name)
                       for k, v in signature_def.inputs.items()}
        self._fetches = {k: graph.get_tensor_by_name(v.name)
                         for k, v in signature_def.outputs.items()}

    @property
    def method_name(self) -> str:
        return self.signature_def.method_name

    @property
    def inputs(self) -> dict:
        return self.signature_def.inputs

    @property
    def outputs(self) -> dict:
        return self.signature_def.outputs

    def bind(self, args: tuple, kwargs: dict) -> dict:
        """The inputs of one call as ``{input_key: value}`` (TypeError if they do not fit
        the signature)."""
        values = dict(kwargs)
        if len(args) > 1:
            raise TypeError(f"Signature '{self.name}' takes its inputs by key (or one dict); "
                            f"got {len(args)} positional arguments")
        if args:
            (arg,) = args
            if isinstance(arg, Mapping):
                clash = sorted(set(arg) & set(values))
                if clash:
                    raise TypeError(f"Signature '{self.name}': inputs {clash} given twice")
                values.update(arg)
            elif len(self.inputs) == 1:
                (only,) = self.inputs
                if only in values:
                    raise TypeError(f"Signature '{self.name}': input '{only}' given twice")
                values[only] = arg
            else:
                raise TypeError(f"Signature '{self.name}' has inputs {sorted(self.inputs)}; "
                                "pass them by key")
        unknown = sorted(k for k in values if k not in self.inputs)
        if unknown:
            raise TypeError(f"Signature '{self.name}' got unknown input(s) {unknown}; its "
                            f"inputs are {sorted(self.inputs)}")
        missing = sorted(k for k in self.inputs if k not in values)
        if missing:
            raise TypeError(f"Signature '{self.name}' is missing input(s) {missing}; its "
                            f"inputs are {sorted(self.inputs)}")
        return values

    def __call__(self, *args, **kwargs) -> dict[str, np.ndarray]:
        values = self.bind(args, kwargs)
        feed = {self._feeds[k]: convert_input(v, self.inputs[k],
                                              f"Input '{k}' of signature '{self.name}'")
                for k, v in values.items()}
        out = self._model._run(self._fetches, feed)
        return {k: np.asarray(v) for k, v in out.items()}

    def __repr__(self) -> str:
        return (f"<SignatureFunction '{self.name}' {self.method_name}: "
                f"inputs={sorted(self.inputs)} outputs={sorted(self.outputs)}>")


class _Signatures(Mapping):
    def __init__(self, functions: dict[str, SignatureFunction], export_dir: str) -> None:
        self._functions = functions
        self._export_dir = export_dir

    def __getitem__(self, key: str) -> SignatureFunction:
        try:
            return self._functions[key]
        except KeyError:
            raise KeyError(f"SavedModel {self._export_dir} has no signature {key!r}; it has "
                           f"{sorted(self._functions)}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._functions)

    def __len__(self) -> int:
        return len(self._functions)

    def __repr__(self) -> str:
        return f"_SignatureMap({sorted(self._functions)})"


class LoadedModel:
    """A SavedModel loaded into its own graph and session (see `load`)."""

    def __init__(self, export_dir, tags=(constants.SERVING,), config=None) -> None:
        from flowgraph.framework.graph import Graph
        from flowgraph.runtime.session import Session
        from flowgraph.saved_model import loader

        self.export_dir = loader._as_str(export_dir)
        self.graph = Graph()
        self.session = Session(graph=self.graph, config=config)
        try:
            self.meta_graph_def = loader.load(self.session, tags, self.export_dir)
        except BaseException:
            self.session.close()
            raise
        self.tags = list(self.meta_graph_def.meta_info_def.tags)
        self.signatures = _Signatures(
            {k: SignatureFunction(self, k, s)
             for k, s in self.meta_graph_def.signature_def.items()}, self.export_dir)
        self.graph.finalize()
        self._cond = threading.Condition()
        self._inflight = 0
        self._closed = False

    def _run(self, fetches, feed):
        with self._cond:
            if self._closed:
                raise RuntimeError(f"The model loaded from {self.export_dir} is closed.")
            self._inflight += 1
        try:
            return self.session.run(fetches, feed)
        finally:
            with self._cond:
                self._inflight -= 1
                self._cond.notify_all()

    def __call__(self, *args, **kwargs) -> dict[str, np.ndarray]:
        """Call the default signature (``serving_default``)."""
        return self.signatures[constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY](*args, **kwargs)

    def close(self, timeout: float | None = None) -> None:
        """Close the session once the calls in flight have finished."""
        with self._cond:
            if self._closed:
                return
            self._closed = True
            self._cond.wait_for(lambda: self._inflight == 0, timeout=timeout)
        self.session.close()

    def __enter__(self) -> LoadedModel:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"<LoadedModel {self.export_dir} tags={self.tags} "
                f"signatures={sorted(self.signatures)}>")


def load(export_dir, tags=(constants.SERVING,), config=None) -> LoadedModel:
    """Load the SavedModel at `export_dir` for calling from Python.

    Returns a `LoadedModel`: ``model.signatures[key](**inputs)`` returns a dict of
    NumPy outputs; ``model(...)`` calls ``serving_default``. `tags` selects the meta
    graph (default ``("serve",)``); `config` is the session's ``tf.ConfigProto``.
    """
    return LoadedModel(export_dir, tags=tags, config=config)
