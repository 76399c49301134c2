"""CPU kernels of `flowgraph/ops/sparse_serialize_ops.py`."""

from __future__ import annotations

import base64
import json

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import errors


def _proto_bytes(a: np.ndarray) -> bytes:
    from flowgraph.backends.cpu.kernels_string_extra import content_proto

    return content_proto(a).SerializeToString()


def _parse(raw) -> np.ndarray:
    from flowgraph.framework.event_format import TensorProto
    from flowgraph.framework.tf_formats.graph_def import tensor_value

    raw = raw if isinstance(raw, bytes) else str(raw).encode()
    return np.asarray(tensor_value(TensorProto.FromString(raw)))


@cpu_kernel("SerializeManySparse", fresh=True)
def serialize_many_sparse(indices, values, shape, *, out_type, op):
    if len(shape) < 2:
        raise errors.InvalidArgumentError(
            None, None, f"{op.type} '{op.name}': the SparseTensor must have rank >= 2 (a "
            f"minibatch), got shape {shape.tolist()}")
    n = int(shape[0])
    out = np.empty((n, 3), dtype=object)
    rows = indices[:, 0] if len(indices) else np.zeros(0, np.int64)
    for i in range(n):
        keep = rows == i
        out[i, 0] = _proto_bytes(indices[keep][:, 1:].astype(np.int64))
        out[i, 1] = _proto_bytes(values[keep])
        out[i, 2] = _proto_bytes(shape[1:].astype(np.int64))
    return out


@cpu_kernel("DeserializeManySparse")
def deserialize_many_sparse(serialized, *, dtype, op):
    s = np.asarray(serialized, dtype=object)
    if s.ndim != 2 or s.shape[1] != 3:
        raise errors.InvalidArgumentError(
            None, None, f"{op.type} '{op.name}': serialized_sparse must be [N, 3], got "
            f"{list(s.shape)}")
    want = np.dtype(dtype.as_numpy_dtype) if dtype.name != "string" else np.dtype(object)
    all_idx, all_val, shapes = [], [], []
    for i in range(s.shape[0]):
        idx, val, shp = _parse(s[i, 0]), _parse(s[i, 1]), _parse(s[i, 2])
        if val.dtype != want:
            raise errors.InvalidArgumentError(
                None, None, f"{op.type} '{op.name}': row {i} holds {val.dtype} values, "
                f"expected {dtype.name}")
        idx = idx.reshape(-1, len(shp))
        all_idx.append(np.concatenate([np.full((len(idx), 1), i, np.int64), idx], 1))
        all_val.append(val)
        shapes.append(shp)
    rank = len(shapes[0]) if shapes else 0
    if any(len(x) != rank for x in shapes):
        raise errors.InvalidArgumentError(None, None, f"{op.type} '{op.name}': the rows "
                                          "have different ranks")
    dense = np.max(np.stack(shapes), axis=0) if shapes else np.zeros(0, np.int64)
    indices = np.concatenate(all_idx) if all_idx else np.zeros((0, rank + 1), np.int64)
    values = np.concatenate(all_val) if all_val else np.zeros(0, want)
    return [indices.astype(np.int64), values,
            np.asarray([s.shape[0], *dense.tolist()], np.int64)]


def _example_from_json(text: str) -> bytes:
    from flowgraph.framework.example_proto import (
        BytesList,
        Example,
        Feature,
        Features,
        FloatList,
        Int64List,
    )

    data = json.loads(text)
    features = {}
    for key, feat in data.get("features", {}).get("feature", {}).items():
        if "bytesList" in feat or "bytes_list" in feat:
            vals = (feat.get("bytesList") or feat.get("bytes_list")).get("value", [])
            features[key] = Feature(bytes_list=BytesList(
                value=[base64.b64decode(v) for v in vals]))
        elif "floatList" in feat or "float_list" in feat:
            vals = (feat.get("floatList") or feat.get("float_list")).get("value", [])
            features[key] = Feature(float_list=FloatList(value=[float(v) for v in vals]))
        elif "int64List" in feat or "int64_list" in feat:
            vals = (feat.get("int64List") or feat.get("int64_list")).get("value", [])
            features[key] = Feature(int64_list=Int64List(value=[int(v) for v in vals]))
        else:
            features[key] = Feature()
    return Example(features=Features(feature=features)).SerializeToString()


@cpu_kernel("DecodeJSONExample", fresh=True)
def decode_json_example(x, *, op):
    arr = np.asarray(x, dtype=object)
    out = np.empty(arr.shape, dtype=object)
    flat = out.reshape(-1)
    for i, v in enumerate(arr.reshape(-1).tolist()):
        text = v.decode("utf-8") if isinstance(v, bytes) else str(v)
        try:
            flat[i] = _example_from_json(text)
        except (ValueError, TypeError, AttributeError) as e:
            raise errors.InvalidArgumentError(
                None, None, f"{op.type} '{op.name}': element {i} is not the JSON of a "
                f"tf.train.Example ({e})") from None
    return out
