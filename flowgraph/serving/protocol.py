"""TensorFlow Serving's REST protocol: request bodies to signature calls and back.

`Protocol` answers one model's ``status``, ``metadata``, ``predict``, ``classify`` and
``regress`` requests given a loaded servable (see `flowgraph.serving.models`) and a
decoded body (see `flowgraph.serving.body`); transport, limits and metrics live in
`flowgraph.serving.wsgi`. Errors are `HTTPError` with TensorFlow Serving's status codes
and messages naming the problem.

Example
-------
>>> encode_example({"a": 1}).hex()
'0a0c0a0a0a016112051a030a0101'
"""

from __future__ import annotations

import base64
import binascii
import struct
from collections.abc import Callable
from http import HTTPStatus

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors
from flowgraph.framework.event_format import write_length_delimited, write_varint
from flowgraph.saved_model import constants as sc
from flowgraph.serving.body import NumericText, leading_dim, materialize

__all__ = ["HTTPError", "Protocol", "bad_request", "encode_example"]


class HTTPError(Exception):
    """An error answered as ``{"error": message}`` with an HTTP status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def bad_request(message: str) -> HTTPError:
    return HTTPError(HTTPStatus.BAD_REQUEST, message)


# -- tf.train.Example encoding (protobuf wire format) ---------------------------------------------
def _feature(name: str, value) -> bytes:
    items = value if isinstance(value, list) else [value]
    items = [base64.b64decode(_b64(v, name)) if isinstance(v, dict) else v for v in items]
    if all(isinstance(v, bytes | str) for v in items):
        data = b"".join(write_length_delimited(1, v.encode("utf-8") if isinstance(v, str)
                                               else v) for v in items)
        return write_length_delimited(1, data)  # bytes_list
    if any(isinstance(v, bool) or not isinstance(v, int | float) for v in items):
        raise bad_request(f"Feature '{name}' mixes types or holds values that are not "
                          "numbers or strings; each feature needs a list of all numbers or "
                          "all strings")
    if all(isinstance(v, int) for v in items):
        packed = b"".join(write_varint(v) for v in items)
        return write_length_delimited(3, write_length_delimited(1, packed))  # int64_list
    packed = struct.pack(f"<{len(items)}f", *items)
    return write_length_delimited(2, write_length_delimited(1, packed))  # float_list


def encode_example(features: dict) -> bytes:
    """Serialize ``{feature_name: value or list}`` as a ``tf.train.Example``: ints become
    an int64 list, numbers with any float a float list, strings (or ``{"b64": ...}``) a
    bytes list."""
    if not isinstance(features, dict):
        raise bad_request(f"Each example must be a JSON object of feature name -> value; "
                          f"got {type(features).__name__}")
    body = b"".join(  # map<string, Feature> entries {key = 1, value = 2}
        write_length_delimited(1, write_length_delimited(1, k.encode("utf-8"))
                               + write_length_delimited(2, _feature(k, v)))
        for k, v in sorted(features.items()))
    return write_length_delimited(1, body)


# -- JSON <-> arrays ------------------------------------------------------------------------------
def _b64(value: dict, what: str) -> str:
    if set(value) != {"b64"} or not isinstance(value["b64"], str):
        raise bad_request(f"{what}: a JSON object inside a value must be {{\"b64\": "
                          f"\"<base64>\"}}; got keys {sorted(value)}")
    return value["b64"]


def _decode_b64(value, what: str):
    """Replace ``{"b64": ...}`` objects by bytes, recursively."""
    if isinstance(value, dict):
        try:
            return base64.b64decode(_b64(value, what), validate=True)
        except (binascii.Error, ValueError):
            raise bad_request(f"{what}: invalid base64 data") from None
    if isinstance(value, list):
        return [_decode_b64(v, what) for v in value]
    return value


def _is_b64(value) -> bool:
    return isinstance(value, dict) and set(value) == {"b64"}


def _jsonable(value, key: str):
    if isinstance(value, np.ndarray):
        if value.dtype != object and value.dtype.kind not in "SU":
            return value.tolist()
        return _jsonable(value.tolist(), key)
    if isinstance(value, list):
        return [_jsonable(v, key) for v in value]
    if isinstance(value, bytes):
        if key.endswith("_bytes"):
            return {"b64": base64.b64encode(value).decode("ascii")}
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return {"b64": base64.b64encode(value).decode("ascii")}
    if isinstance(value, np.generic):
        return value.item()
    return value


def _dt_name(enum: int) -> str:
    name = _dtypes.as_dtype(enum).base_dtype.name
    return {"float32": "DT_FLOAT", "float64": "DT_DOUBLE",
            "float16": "DT_HALF"}.get(name, "DT_" + name.upper())


def _signature_json(sig) -> dict:
    def info(t):
        return {"dtype": _dt_name(t.dtype), "name": t.name, "tensor_shape": {
            "dim": [{"size": str(d.size), "name": d.name} for d in t.tensor_shape.dim],
            "unknown_rank": t.tensor_shape.unknown_rank}}

    return {"inputs": {k: info(v) for k, v in sig.inputs.items()},
            "outputs": {k: info(v) for k, v in sig.outputs.items()},
            "method_name": sig.method_name}


class Protocol:
    """One model's REST protocol: turns request bodies into signature calls and answers.

    `run(fn, columns)` calls signature `fn` on arrays (directly, or through a
    `flowgraph.serving.batching.Batcher`); requests with more than `max_instances` rows
    are refused with 400.
    """

    def __init__(self, model_name: str, run: Callable | None = None,
                 max_instances: int | None = None) -> None:
        self.model_name = model_name
        self.runner = run or (lambda fn, columns: fn(**columns))
        self.max_instances = max_instances

    def status(self, s) -> dict:
        return {"model_version_status": [{"version": str(s.version), "state": "AVAILABLE",
                                          "status": {"error_code": "OK",
                                                     "error_message": ""}}]}

    def metadata(self, s) -> dict:
        sigs = s.model.meta_graph_def.signature_def
        return {"model_spec": {"name": self.model_name, "signature_name": "",
                               "version": str(s.version)},
                "metadata": {"signature_def": {"signature_def": {
                    k: _signature_json(v) for k, v in sigs.items()}}}}

    @staticmethod
    def _signature(s, body: dict):
        name = body.get("signature_name", sc.DEFAULT_SERVING_SIGNATURE_DEF_KEY)
        if not isinstance(name, str):
            raise bad_request("'signature_name' must be a string")
        if name not in s.model.signatures:
            raise bad_request(f"Serving signature name: \"{name}\" not found in signature def "
                              f"(the model has {sorted(s.model.signatures)})")
        return s.model.signatures[name]

    def _run(self, fn, columns: dict) -> dict:
        try:
            return self.runner(fn, columns)
        except (TypeError, ValueError) as e:
            raise bad_request(str(e)) from None
        except (errors.InvalidArgumentError, errors.OutOfRangeError) as e:
            raise bad_request(f"{type(e).__name__}: {e}") from None

    def _check_rows(self, n: int | None, what: str) -> None:
        if n is not None and self.max_instances is not None and n > self.max_instances:
            raise bad_request(f"The request has {n} instances in {what}; this server accepts "
                              f"at most {self.max_instances} per request "
                              "(--max_instances_per_request)")

    def _arrays(self, fn, columns: dict) -> dict:
        """Check row counts, parse numeric text straight into each input's dtype, decode
        b64 strings."""
        out = {}
        for k, v in columns.items():
            self._check_rows(leading_dim(v), f"input '{k}'")
            info = fn.inputs.get(k)
            dtype = None
            if info is not None and _dtypes.as_dtype(info.dtype) != _dtypes.string:
                dtype = np.dtype(_dtypes.as_dtype(info.dtype).as_numpy_dtype)
            try:
                v = materialize(v, dtype)
            except ValueError as e:
                raise bad_request(str(e)) from None
            out[k] = _decode_b64(v, f"input '{k}'")
        return out

    @staticmethod
    def _named(fn, named: dict, where: str) -> dict:
        unknown = sorted(k for k in named if k not in fn.inputs)
        if unknown:
            raise bad_request(f"{where}: unknown input name(s) {unknown}; signature "
                              f"'{fn.name}' takes {sorted(fn.inputs)}")
        missing = sorted(k for k in fn.inputs if k not in named)
        if missing:
            raise bad_request(f"{where}: missing input(s) {missing} of signature '{fn.name}'")
        return named

    def predict(self, s, body: dict) -> dict:
        fn = self._signature(s, body)
        if ("instances" in body) == ("inputs" in body):
            raise bad_request("The request must have exactly one of 'instances' (row format) "
                              "or 'inputs' (columnar format)")
        if "inputs" in body:
            inputs = body["inputs"]
            if isinstance(inputs, dict) and not _is_b64(inputs):
                columns = self._named(fn, inputs, "'inputs'")
            elif len(fn.inputs) == 1:
                columns = {next(iter(fn.inputs)): inputs}
            else:
                raise bad_request(f"Signature '{fn.name}' has inputs {sorted(fn.inputs)}: "
                                  "'inputs' must be an object naming each")
            out = self._run(fn, self._arrays(fn, columns))
            if len(out) == 1:
                ((key, value),) = out.items()
                return {"outputs": _jsonable(value, key)}
            return {"outputs": {k: _jsonable(v, k) for k, v in out.items()}}
        instances = body["instances"]
        if not isinstance(instances, list | NumericText) or not len(instances):
            raise bad_request("'instances' must be a non-empty list")
        self._check_rows(len(instances), "'instances'")
        named = ([False] if isinstance(instances, NumericText) else
                 [isinstance(i, dict) and not _is_b64(i) for i in instances])
        if len(fn.inputs) == 1 and not any(named):
            columns = {next(iter(fn.inputs)): instances}
        elif all(named):
            for i, inst in enumerate(instances):
                self._named(fn, inst, f"instance {i}")
            columns = {k: [inst[k] for inst in instances] for k in fn.inputs}
        else:
            raise bad_request(f"Signature '{fn.name}' has inputs {sorted(fn.inputs)}: every "
                              "instance must be an object naming each input")
        out = self._run(fn, self._arrays(fn, columns))
        n = len(instances)
        for key, value in out.items():
            if value.ndim == 0 or value.shape[0] != n:
                raise bad_request(
                    f"Output '{key}' has shape {list(value.shape)}, not one row per instance "
                    f"({n}); use the columnar 'inputs' format for this signature")
        if len(out) == 1:
            ((key, value),) = out.items()
            return {"predictions": [_jsonable(value[i], key) for i in range(n)]}
        return {"predictions": [{k: _jsonable(v[i], k) for k, v in out.items()}
                                for i in range(n)]}

    def classify_or_regress(self, s, body: dict, verb: str) -> dict:
        fn = self._signature(s, body)
        method = sc.CLASSIFY_METHOD_NAME if verb == "classify" else sc.REGRESS_METHOD_NAME
        if fn.method_name != method:
            raise bad_request(f"Expected {verb} signature method_name to be {method}. Was: "
                              f"{fn.method_name}")
        examples = body.get("examples")
        if not isinstance(examples, list) or not examples:
            raise bad_request("'examples' must be a non-empty list of JSON objects")
        self._check_rows(len(examples), "'examples'")
        context = body.get("context", {})
        if not isinstance(context, dict):
            raise bad_request("'context' must be a JSON object")
        serialized = []
        for i, ex in enumerate(examples):
            if not isinstance(ex, dict):
                raise bad_request(f"example {i} must be a JSON object")
            clash = sorted(set(ex) & set(context))
            if clash:
                raise bad_request(f"example {i}: features {clash} also appear in 'context'")
            serialized.append(encode_example({**context, **ex}))
        arr = np.empty(len(serialized), dtype=object)
        arr[:] = serialized
        out = self._run(fn, {next(iter(fn.inputs)): arr})
        n = len(examples)
        if verb == "regress":
            values = np.asarray(out[sc.REGRESS_OUTPUTS]).reshape(n, -1)
            if values.shape[1] != 1:
                raise bad_request(f"Regression output has shape {list(values.shape)}; expected "
                                  "one value per example")
            return {"result": [float(v) for v in values[:, 0]]}
        classes = out.get(sc.CLASSIFY_OUTPUT_CLASSES)
        scores = out.get(sc.CLASSIFY_OUTPUT_SCORES)
        ref = scores if scores is not None else classes
        width = int(np.asarray(ref).size // n) if n else 0
        classes = None if classes is None else np.asarray(classes).reshape(n, width)
        scores = None if scores is None else np.asarray(scores).reshape(n, width)
        result = []
        for i in range(n):
            row = []
            for j in range(width):
                label = "" if classes is None else _jsonable(classes[i, j], "classes")
                row.append([label, 0.0 if scores is None else float(scores[i, j])])
            result.append(row)
        return {"result": result}
