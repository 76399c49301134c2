"""CPU kernels for tf.data iterators and parsing (``DecodeCSV``, ``ParseExample``).

State it keeps
--------------
An iterator is an `IteratorResource` in the session's resource container (so each
session on the default target has its own position). It holds the current *pipeline*:
an object with ``next() -> tuple of arrays`` (raising `OutOfRangeError` at the end)
and ``close()``, made by the dataset the iterator was initialized with. Datasets are
Python objects that cannot live in op attributes (graphs serialize to JSON), so
`flowgraph.ops.iterator_ops.register_dataset` keeps them per graph and the ops carry a
``dataset_id``::

    MakeIterator(handle, *captured values) ──> resource.reset(dataset.make_pipeline(values))
    IteratorGetNext(handle)                ──> resource.get_next() ──> one array per component

Invariants: one get_next at a time per iterator (a lock); re-initializing or closing
the session closes the previous pipeline (stopping its threads and private sessions).
The op types and the dataset table are declared in `flowgraph/ops/iterator_ops.py`; the
dataset side lives in `flowgraph.data`, and this module only calls its pipeline
protocol, so the backend never imports the library layer.
"""

from __future__ import annotations

import threading

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors
from flowgraph.framework.event_format import iter_fields, read_varint
from flowgraph.ops.iterator_ops import lookup_dataset

# -- the iterator resource --------------------------------------------------------------------
_HANDLE_PREFIX = "flowgraph-iterator:"


class IteratorResource:
    """One iterator's state in a session: the current pipeline, or None."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.lock = threading.Lock()
        self.pipeline = None
        self.started = False  # a one-shot iterator was initialized
        self.produced = 0  # elements handed out since the pipeline started (its state)

    def reset(self, pipeline) -> None:
        with self.lock:
            old, self.pipeline = self.pipeline, pipeline
            self.started = True
            self.produced = 0
        if old is not None:
            old.close()

    def get_next(self) -> tuple:
        with self.lock:
            p = self.pipeline
            if p is None:
                raise errors.FailedPreconditionError(
                    None, None, "GetNext() failed because the iterator has not been "
                    "initialized. Ensure that you have run the initializer operation for this "
                    "iterator before getting the next element.")
            element = p.next()
            self.produced += 1
            return element

    def close_resource(self) -> None:
        p, self.pipeline = self.pipeline, None
        if p is not None:
            p.close()

    def string_handle(self) -> str:
        return _HANDLE_PREFIX + self.name


def _resource_name(op, shared_name: str) -> str:
    return shared_name or f"{op.name}@{id(op.graph):x}"


@cpu_kernel("IteratorV2")
class IteratorOp:
    def __init__(self, ctx, *, shared_name="", container="") -> None:
        self.resources = ctx.resources
        self.container = container or ""
        self.name = _resource_name(ctx.op, shared_name)

    def __call__(self):
        return self.resources.lookup_or_create(self.container, self.name, IteratorResource)


@cpu_kernel("OneShotIterator")
class OneShotIteratorOp:
    def __init__(self, ctx, *, dataset_id, shared_name="", container="") -> None:
        self.op = ctx.op
        self.resources = ctx.resources
        self.container = container or ""
        self.name = _resource_name(ctx.op, shared_name)
        self.dataset_id = dataset_id

    def __call__(self, *captured):
        res = self.resources.lookup_or_create(self.container, self.name, IteratorResource)
        if not res.started:
            dataset = lookup_dataset(self.op, self.dataset_id)
            with res.lock:
                if res.started:
                    return res
                res.pipeline = dataset._make_pipeline(list(captured))
                res.started = True
        return res


@cpu_kernel("MakeIterator")
class MakeIteratorOp:
    def __init__(self, ctx, *, dataset_id) -> None:
        self.op = ctx.op
        self.dataset_id = dataset_id

    def __call__(self, resource, *captured):
        dataset = lookup_dataset(self.op, self.dataset_id)
        resource.reset(dataset._make_pipeline(list(captured)))


@cpu_kernel("ReduceDataset")
class ReduceDatasetOp:
    """``Dataset.reduce``: the last element of its dataset (the initial state followed by
    the running states), read to the end in one run."""

    def __init__(self, ctx, *, dataset_id, output_types, output_shapes) -> None:
        self.op = ctx.op
        self.dataset_id = dataset_id

    def __call__(self, *captured):
        pipeline = lookup_dataset(self.op, self.dataset_id)._make_pipeline(list(captured))
        last = None
        try:
            for element in pipeline.elements():
                last = element
        finally:
            pipeline.close()
        out = [np.array(x, copy=True) for x in last]
        return out[0] if len(out) == 1 else out


@cpu_kernel("DatasetToSingleElement")
class DatasetToSingleElementOp:
    """``get_single_element``: the one element of its dataset, read in one run."""

    def __init__(self, ctx, *, dataset_id, output_types, output_shapes) -> None:
        self.op = ctx.op
        self.dataset_id = dataset_id

    def __call__(self, *captured):
        pipeline = lookup_dataset(self.op, self.dataset_id)._make_pipeline(list(captured))
        try:
            elements = pipeline.elements()
            first = next(elements, None)
            if first is None:
                raise errors.InvalidArgumentError(None, None, "Dataset was empty.")
            if next(elements, None) is not None:
                raise errors.InvalidArgumentError(
                    None, None, "Dataset had more than one element.")
        finally:
            pipeline.close()
        out = [np.array(x, copy=True) for x in first]
        return out[0] if len(out) == 1 else out


@cpu_kernel("DatasetCardinality")
class DatasetCardinalityOp:
    """``cardinality``: the element count of its dataset (-1 infinite, -2 unknown)."""

    def __init__(self, ctx, *, dataset_id) -> None:
        self.op = ctx.op
        self.dataset_id = dataset_id

    def __call__(self, *captured):
        dataset = lookup_dataset(self.op, self.dataset_id)
        pipeline = dataset._make_pipeline(list(captured))
        try:
            return np.asarray(dataset._count_elements(pipeline.rc), np.int64)
        finally:
            pipeline.close()


@cpu_kernel("IteratorToStringHandle")
def iterator_to_string_handle(resource):
    out = np.empty((), dtype=object)
    out[()] = resource.string_handle().encode("utf-8")
    return out


@cpu_kernel("IteratorFromStringHandleV2")
class IteratorFromStringHandleOp:
    def __init__(self, ctx) -> None:
        self.resources = ctx.resources

    def __call__(self, handle):
        text = handle.item() if isinstance(handle, np.ndarray) else handle
        text = text.decode("utf-8") if isinstance(text, bytes) else str(text)
        res = None
        if not text.startswith(_HANDLE_PREFIX):  # TF: not a serialized ResourceHandle
            raise errors.InvalidArgumentError(
                None, None, f"Could not parse string_handle as a valid ResourceHandle: "
                f"{text!r} was not made by iterator.string_handle()")
        name = text[len(_HANDLE_PREFIX):]
        for container, n in self.resources.names():
            if n == name:
                res = self.resources.lookup(container, n)
                break
        if not isinstance(res, IteratorResource):
            raise errors.NotFoundError(
                None, None, f"No iterator for string handle {text!r} in this session; run "
                "iterator.string_handle() in the same session that reads from it.")
        return res


@cpu_kernel("IteratorGetNext")
class IteratorGetNextOp:
    def __init__(self, ctx, *, output_types, output_shapes) -> None:
        self.dtypes = [_dtypes.as_dtype(d).base_dtype for d in output_types]
        self.np_dtypes = [object if d == _dtypes.string else d.as_numpy_dtype
                          for d in self.dtypes]
        self.dims = [None if s.ndims is None else s.as_list() for s in output_shapes]

    def __call__(self, resource):
        element = resource.get_next()
        if len(element) != len(self.dtypes):
            raise errors.InvalidArgumentError(
                None, None, f"the iterator produced {len(element)} components, expected "
                f"{len(self.dtypes)}")
        out = []
        for i, (x, npd, dims) in enumerate(zip(element, self.np_dtypes, self.dims)):
            a = x if isinstance(x, np.ndarray) else np.asarray(x, dtype=npd)
            if a.base is not None:  # a view into the dataset's source: hand out a copy
                a = a.copy()
            if a.dtype != npd:
                raise errors.InvalidArgumentError(
                    None, None, f"component {i} of the element has dtype {a.dtype}, but the "
                    f"iterator expects {self.dtypes[i].name}")
            if dims is not None and (len(dims) != a.ndim or any(
                    d is not None and d != n for d, n in zip(dims, a.shape))):
                raise errors.InvalidArgumentError(
                    None, None, f"component {i} of the element has shape {list(a.shape)}, "
                    f"incompatible with the iterator's expected shape {dims}")
            out.append(a)
        return out[0] if len(out) == 1 else tuple(out)


# -- DecodeCSV ------------------------------------------------------------------------------------
def _as_text(x) -> str:
    return x.decode("utf-8", "surrogateescape") if isinstance(x, bytes) else str(x)


def _split_quoted(rec: str, delim: str, index: int) -> list[str]:
    """Split one record honouring double-quote quoting (``""`` is a literal quote)."""
    fields, i, n = [], 0, len(rec)
    while True:
        if i < n and rec[i] == '"':
            i += 1
            buf = []
            while True:
                j = rec.find('"', i)
                if j < 0:
                    raise errors.InvalidArgumentError(
                        None, None, f"Quoted field has to end with quote followed by delim or "
                        f"end in record {index}: {rec!r}")
                buf.append(rec[i:j])
                if j + 1 < n and rec[j + 1] == '"':
                    buf.append('"')
                    i = j + 2
                    continue
                i = j + 1
                break
            if i < n and rec[i] != delim:
                raise errors.InvalidArgumentError(
                    None, None, f"Quote inside a string has to be escaped by another quote "
                    f"in record {index}: {rec!r}")
            fields.append("".join(buf))
        else:
            j = rec.find(delim, i)
            field = rec[i:] if j < 0 else rec[i:j]
            if '"' in field:
                raise errors.InvalidArgumentError(
                    None, None, f"Unquoted fields cannot have quotes inside in record {index}: "
                    f"{rec!r}")
            fields.append(field)
            i = n if j < 0 else j
        if i >= n:
            return fields
        i += 1  # the delimiter
        if i == n:
            fields.append("")
            return fields


def _csv_columns(records, n_out, delim, quote, select):
    flat = records.reshape(-1)
    need = (max(select) + 1) if select else n_out
    cols: list[list[str]] = [[] for _ in range(n_out)]
    for r, raw in enumerate(flat):
        rec = _as_text(raw)
        if not rec:
            fields = []  # as TensorFlow: an empty record has no fields
        elif quote and '"' in rec:
            fields = _split_quoted(rec, delim, r)
        else:
            fields = rec.split(delim)
        if select:
            if len(fields) < need:
                raise errors.InvalidArgumentError(
                    None, None, f"Expect {need} fields but have {len(fields)} in record {r}")
            fields = [fields[c] for c in select]
        elif len(fields) != n_out:
            raise errors.InvalidArgumentError(
                None, None, f"Expect {n_out} fields but have {len(fields)} in record {r}")
        for c, f in enumerate(fields):
            cols[c].append(f)
    return cols


def _convert_column(c, values, dtype, default, na_value, shape, col_index):
    empty = [k for k, v in enumerate(values) if v == "" or v == na_value]
    if empty and default is None:
        raise errors.InvalidArgumentError(
            None, None, f"Field {col_index} is required but missing in record {empty[0]}! "
            "(decode_csv: its record_defaults entry is empty)")
    if dtype == _dtypes.string:
        out = np.empty(len(values), dtype=object)
        for k, v in enumerate(values):
            out[k] = v.encode("utf-8", "surrogateescape")
        if empty:
            d = default.reshape(-1)[0]
            for k in empty:
                out[k] = d
        return out.reshape(shape)
    npd = dtype.as_numpy_dtype
    filled = list(values)
    for k in empty:
        filled[k] = "0"
    try:
        if dtype.is_integer:
            ints = [int(v) for v in filled]
            info = np.iinfo(npd)
            bad = next((k for k, v in enumerate(ints) if not info.min <= v <= info.max), None)
            if bad is not None:
                raise ValueError(bad)
            out = np.array(ints, dtype=npd)
        else:
            out = np.array([float(v) for v in filled], dtype=npd)
    except ValueError:
        for k, v in enumerate(filled):
            try:
                x = int(v) if dtype.is_integer else float(v)
                if dtype.is_integer and not info.min <= x <= info.max:
                    raise ValueError
            except ValueError:
                raise errors.InvalidArgumentError(
                    None, None, f"Field {col_index} in record {k} is not a valid "
                    f"{dtype.name}: {v}") from None
        raise
    if empty:
        out[empty] = default.reshape(-1)[0]
    return out.reshape(shape)


@cpu_kernel("DecodeCSV")
def decode_csv(records, *defaults, OUT_TYPE, field_delim, use_quote_delim,
               na_value, select_cols):
    dtypes = [_dtypes.as_dtype(d).base_dtype for d in OUT_TYPE]
    cols = _csv_columns(np.asarray(records, dtype=object), len(dtypes), field_delim,
                        use_quote_delim, list(select_cols or []))
    outs = []
    for c, (dtype, d) in enumerate(zip(dtypes, defaults)):
        d = np.asarray(d)
        if d.size > 1:
            raise errors.InvalidArgumentError(
                None, None, f"record_defaults[{c}] must have at most one element, got shape "
                f"{list(d.shape)}")
        col_index = select_cols[c] if select_cols else c
        outs.append(_convert_column(c, cols[c], dtype, d if d.size else None, na_value,
                                    np.shape(records), col_index))
    return outs[0] if len(outs) == 1 else tuple(outs)


# -- ParseExample: a hand-written reader of the tf.train.Example wire format ------------------
#   Example{features=1: Features{feature=1: map<string, Feature>}}
#   Feature{bytes_list=1: {value=1 bytes*}, float_list=2: {value=1 float*},
#           int64_list=3: {value=1 int64*}}
_KINDS = {1: _dtypes.string, 2: _dtypes.float32, 3: _dtypes.int64}


def _signed64(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def _feature_values(buf: bytes):
    kind, values = None, []
    for number, wire, value in iter_fields(buf):
        if number not in _KINDS or wire != 2:
            continue
        kind, values = _KINDS[number], []
        for n2, w2, v in iter_fields(value):
            if n2 != 1:
                continue
            if kind == _dtypes.string:
                values.append(bytes(v))
            elif kind == _dtypes.float32:
                if w2 == 2:
                    values.extend(np.frombuffer(v, dtype="<f4").tolist())
                elif w2 == 5:
                    values.append(float(np.frombuffer(v, dtype="<f4")[0]))
            elif w2 == 2:
                pos = 0
                while pos < len(v):
                    x, pos = read_varint(v, pos)
                    values.append(_signed64(x))
            elif w2 == 0:
                values.append(_signed64(v))
    return kind, values


def _parse_one(buf: bytes) -> dict:
    features: dict = {}
    for number, wire, value in iter_fields(buf):
        if number != 1 or wire != 2:
            continue
        for n2, w2, entry in iter_fields(value):
            if n2 != 1 or w2 != 2:
                continue
            key, feature = "", b""
            for n3, w3, v in iter_fields(entry):
                if n3 == 1 and w3 == 2:
                    key = bytes(v).decode("utf-8", "surrogateescape")
                elif n3 == 2 and w3 == 2:
                    feature = v
            features[key] = _feature_values(feature)
    return features


def _np_type(dtype):
    return object if dtype == _dtypes.string else dtype.as_numpy_dtype


def _tf_name(dtype) -> str:
    """TensorFlow's name of an Example value type in its messages ("float")."""
    return "float" if dtype == _dtypes.float32 else dtype.name


def _values_of(parsed: dict, key: str, dtype, b: int):
    kind, values = parsed.get(key, (None, []))
    if kind is not None and kind != dtype and values:
        raise errors.InvalidArgumentError(
            None, None, f"Name: <unknown>, Key: {key}, Index: {b}.  Data types don't match. "
            f"Expected type: {_tf_name(dtype)}, Actual type: {_tf_name(kind)}")
    return kind, values


def parse_example(serialized, *, sparse_keys, sparse_types, dense_keys, dense_types,
                  dense_shapes, dense_defaults, dense_is_sequence):
    """flowgraph's attribute-keyed ``ParseExample`` (the op's kernel, which also takes
    TensorFlow's layout, is `kernels_parsing_v2.parse_example_kernel`)."""
    arr = np.asarray(serialized, dtype=object)
    single = arr.ndim == 0
    records = arr.reshape(-1)
    parsed = []
    for b, rec in enumerate(records):
        rec = rec if isinstance(rec, bytes) else _as_text(rec).encode("utf-8")
        try:
            parsed.append(_parse_one(rec))
        except (ValueError, IndexError):  # a malformed message
            raise errors.InvalidArgumentError(
                None, None, f"Could not parse example input, value: {rec[:64]!r} "
                f"(record {b})") from None
    nb = len(records)
    sp_idx, sp_val, sp_shape = [], [], []
    for key, dtype in zip(sparse_keys, sparse_types):
        dtype = _dtypes.as_dtype(dtype).base_dtype
        idx, vals, longest = [], [], 0
        for b, p in enumerate(parsed):
            _, values = _values_of(p, key, dtype, b)
            longest = max(longest, len(values))
            idx.extend([b, i] if not single else [i] for i in range(len(values)))
            vals.extend(values)
        width = 1 if single else 2
        sp_idx.append(np.asarray(idx, dtype=np.int64).reshape(-1, width))
        sp_val.append(np.asarray(vals, dtype=_np_type(dtype)).reshape(-1))
        sp_shape.append(np.asarray([longest] if single else [nb, longest], dtype=np.int64))
    dense = []
    for key, dtype, shape, default, is_seq in zip(dense_keys, dense_types, dense_shapes,
                                                  dense_defaults, dense_is_sequence):
        dtype = _dtypes.as_dtype(dtype).base_dtype
        dense.append(_dense(parsed, key, dtype, shape.as_list(), default, is_seq))
    if single:
        dense = [d[0] for d in dense]
    outs = sp_idx + sp_val + sp_shape + dense
    return outs[0] if len(outs) == 1 else tuple(outs)


def _dense(parsed, key, dtype, shape, default, is_seq):
    npd = _np_type(dtype)
    size = int(np.prod(shape)) if shape else 1
    rows = []
    for b, p in enumerate(parsed):
        kind, values = _values_of(p, key, dtype, b)
        if is_seq:
            if len(values) % max(size, 1):
                raise errors.InvalidArgumentError(
                    None, None, f"Name: <unknown>, Key: {key}, Index: {b}.  Number of values "
                    f"{len(values)} is not a multiple of the item size {size} (shape {shape})")
            rows.append(np.asarray(values, dtype=npd).reshape([-1, *shape]))
        elif kind is None or not values:
            if default is None:
                raise errors.InvalidArgumentError(
                    None, None, f"Name: <unknown>, Feature: {key} (data type: "
                    f"{_tf_name(dtype)}) is required but could not be found.")
            rows.append(np.asarray(default, dtype=npd).reshape(shape))
        elif len(values) != size:
            raise errors.InvalidArgumentError(
                None, None, f"Name: <unknown>, Key: {key}, Index: {b}.  Number of "
                f"{_tf_name(dtype)} values != expected.  Values size: {len(values)} but output "
                f"shape: {shape}")
        else:
            rows.append(np.asarray(values, dtype=npd).reshape(shape))
    if not is_seq:
        return np.stack(rows) if rows else np.zeros([0, *shape], dtype=npd)
    longest = max((r.shape[0] for r in rows), default=0)
    pad = default if default is not None else (b"" if dtype == _dtypes.string else 0)
    out = np.full([len(rows), longest, *shape], pad, dtype=npd)
    for b, r in enumerate(rows):
        out[b, :r.shape[0]] = r
    return out
