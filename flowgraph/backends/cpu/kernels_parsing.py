"""The feature lists of one serialized SequenceExample (for the sequence-parsing kernels
of `kernels_parsing_v2`), decoded with the messages of
`flowgraph.framework.example_proto`."""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors
from flowgraph.framework.example_proto import DecodeError, SequenceExample

_KIND_DTYPE = {"bytes_list": _dtypes.string, "float_list": _dtypes.float32,
               "int64_list": _dtypes.int64}


def _np_type(dtype):
    return object if dtype == _dtypes.string else dtype.as_numpy_dtype


def _steps(seq: SequenceExample, key: str, dtype) -> list[list] | None:
    """The values of each step of feature list `key`, or None when it is absent."""
    lists = seq.feature_lists.feature_list
    if key not in lists:
        return None
    out = []
    for t, feature in enumerate(lists[key].feature):
        kind = feature.WhichOneof("kind")
        if kind is None:
            out.append([])
            continue
        values = list(getattr(feature, kind).value)
        if _KIND_DTYPE[kind] != dtype and values:
            raise errors.InvalidArgumentError(
                None, None, f"ParseSequenceExample: feature list '{key}', step {t}: data "
                f"type {_KIND_DTYPE[kind].name} but expected {dtype.name}")
        out.append(values)
    return out


def parse_sequence_features(serialized, *, sparse_keys, sparse_types, dense_keys,
                            dense_types, dense_shapes, dense_allow_missing):
    raw = np.asarray(serialized, dtype=object).reshape(())[()]
    raw = raw if isinstance(raw, bytes) else str(raw).encode("utf-8")
    try:
        seq = SequenceExample.FromString(raw)
    except DecodeError as e:
        raise errors.InvalidArgumentError(
            None, None, f"ParseSequenceExample: could not parse a SequenceExample from "
            f"{raw[:64]!r}: {e}") from None
    sp_idx, sp_val, sp_shape = [], [], []
    for key, dtype in zip(sparse_keys, sparse_types):
        dtype = _dtypes.as_dtype(dtype).base_dtype
        steps = _steps(seq, key, dtype) or []
        idx = [[t, i] for t, vals in enumerate(steps) for i in range(len(vals))]
        vals = [v for s in steps for v in s]
        sp_idx.append(np.asarray(idx, dtype=np.int64).reshape(-1, 2))
        sp_val.append(np.asarray(vals, dtype=_np_type(dtype)).reshape(-1))
        sp_shape.append(np.asarray([len(steps), max((len(s) for s in steps), default=0)],
                                   dtype=np.int64))
    dense = []
    for key, dtype, shape, allow_missing in zip(dense_keys, dense_types, dense_shapes,
                                                dense_allow_missing):
        dtype = _dtypes.as_dtype(dtype).base_dtype
        shape = shape.as_list()
        size = int(np.prod(shape)) if shape else 1
        steps = _steps(seq, key, dtype)
        if steps is None:
            if not allow_missing:
                raise errors.InvalidArgumentError(
                    None, None, f"Name: <unknown>, Feature list '{key}' is required but "
                    "could not be found.  Did you mean to include it in "
                    "feature_list_dense_missing_assumed_empty or feature_list_dense_defaults?")
            steps = []
        for t, vals in enumerate(steps):
            if len(vals) != size:
                raise errors.InvalidArgumentError(
                    None, None, f"ParseSequenceExample: feature list '{key}', step {t}: "
                    f"{len(vals)} values but shape {shape} needs {size}")
        dense.append(np.asarray([v for s in steps for v in s],
                                dtype=_np_type(dtype)).reshape([len(steps), *shape]))
    outs = sp_idx + sp_val + sp_shape + dense
    return outs[0] if len(outs) == 1 else tuple(outs)
