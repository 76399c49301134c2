"""Datasets that read or write outside the process, for ``tf.data.experimental``:
`SqlDataset` (rows of a SQLite query, through the standard library's ``sqlite3``),
`TFRecordWriter` (a dataset of strings written to a TFRecord file by an op) and
`snapshot` (the elements of the first complete pass written under a directory and read
back on every later pass, also by later processes).

A snapshot lives in ``path/<fingerprint>/``, the fingerprint naming the dataset's
element structure and transformation chain: ``elements.tfrecord`` (one record per
element: each component as a length-prefixed ``.npy`` blob, no pickle) and
``snapshot.json``, written last, which marks the snapshot complete.

Example
-------
>>> import os, sqlite3, tempfile
>>> import flowgraph as tf
>>> db = os.path.join(tempfile.mkdtemp(), "t.db")
>>> with sqlite3.connect(db) as c:
...     _ = c.execute("create table t (name text, n integer)")
...     _ = c.execute("insert into t values ('a', 1)")
>>> ds = tf.data.experimental.SqlDataset("sqlite", db, "select name, n from t",
...                                      (tf.string, tf.int32))
>>> x = ds.make_one_shot_iterator().get_next()
>>> name, n = tf.Session().run(x)
>>> name, int(n)
(b'a', 1)
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import sqlite3
import struct

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import get_default_graph
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.io.tf_record import TFRecordWriter as _RecordFileWriter
from flowgraph.io.tf_record import compression_name, tf_record_iterator
from flowgraph.ops.iterator_ops import register_dataset
from flowgraph.ops.op_util import make_op

from .dataset import Dataset
from .dataset_ops_structure import ComponentSpec, flatten, map_structure
from .iterator import _check_graph

__all__ = ["SqlDataset", "TFRecordWriter", "snapshot"]


def _scalar_string(value, name: str):
    return convert_to_tensor(value, dtype=_dtypes.string, name=name)


def _text(v) -> str:
    v = v.item() if isinstance(v, np.ndarray) else v
    return v.decode("utf-8") if isinstance(v, bytes) else str(v)


# -- SqlDataset --------------------------------------------------------------------------------
class SqlDataset(Dataset):
    """The rows of `query` run on the database `data_source_name`, each a tuple with one
    scalar per column, converted to `output_types` (only ``driver_name="sqlite"``)."""

    def __init__(self, driver_name, data_source_name, query, output_types) -> None:
        self._driver = _scalar_string(driver_name, "driver_name")
        self._source = _scalar_string(data_source_name, "data_source_name")
        self._query = _scalar_string(query, "query")
        self._structure = map_structure(
            lambda t: ComponentSpec(_dtypes.as_dtype(t), TensorShape([])), output_types)

    def _tensors(self):
        return [self._driver, self._source, self._query]

    def _iter(self, rc):
        driver = _text(rc.resolve(self._driver))
        if driver != "sqlite":
            raise errors.InvalidArgumentError(
                None, None, f"The database type, {driver}, is not supported by SqlDataset. "
                "The set of supported databases is: {'sqlite'}.")
        source, query = _text(rc.resolve(self._source)), _text(rc.resolve(self._query))
        specs = flatten(self._structure)
        if any(s.dtype not in _SQL_TYPES for s in specs):
            raise errors.InvalidArgumentError(
                None, None, "Each element of `output_types_` must be one of: DT_STRING, "
                "DT_INT8, DT_INT16, DT_INT32, DT_INT64, DT_UINT8, DT_UINT16, DT_BOOL, "
                "DT_DOUBLE ")
        try:
            conn = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
        except sqlite3.Error as e:
            raise errors.UnknownError(None, None, f"Open() failed: {e}: {source}") from None
        try:
            try:
                cursor = conn.execute(query)
            except sqlite3.Error as e:
                raise errors.UnknownError(None, None,
                                          f"Prepare() failed: [1] {e}: {query}") from None
            ncols = len(cursor.description or ())
            if ncols != len(specs):
                raise errors.InvalidArgumentError(
                    None, None, f"The number of columns in query ({ncols}) must match the "
                    f"number of elements in output_types ({len(specs)}).")
            for row in cursor:
                yield tuple(_sql_value(v, s.dtype) for v, s in zip(row, specs))
        finally:
            conn.close()


_SQL_TYPES = (_dtypes.string, _dtypes.int8, _dtypes.int16, _dtypes.int32, _dtypes.int64,
              _dtypes.uint8, _dtypes.uint16, _dtypes.bool, _dtypes.float64)


def _sql_value(v, dtype) -> np.ndarray:
    if dtype == _dtypes.string:
        out = np.empty((), dtype=object)
        out[()] = v if isinstance(v, bytes) else ("" if v is None else str(v)).encode("utf-8")
        return out
    if dtype == _dtypes.bool:
        return np.asarray(bool(v))
    return np.asarray(0 if v is None else v).astype(dtype.as_numpy_dtype)


# -- TFRecordWriter ----------------------------------------------------------------------------
class _WriteJob:
    """What the ``DatasetToTFRecord`` kernel runs: read `dataset`, write its records."""

    def __init__(self, dataset) -> None:
        self.dataset = dataset

    def run(self, captured, filename: str, compression: str) -> None:
        pipeline = self.dataset._make_pipeline(captured)
        try:
            writer = _RecordFileWriter(filename, options=compression or None)
            try:
                for (record,) in pipeline.elements():
                    writer.write(record.item() if isinstance(record, np.ndarray) else record)
            finally:
                writer.close()
        finally:
            pipeline.close()


class TFRecordWriter:
    """Writes a dataset of scalar strings to a TFRecord file: ``write(dataset)`` is the
    op that does it when run."""

    def __init__(self, filename, compression_type=None) -> None:
        self._filename = _scalar_string(filename, "filename")
        self._compression = _scalar_string(
            compression_name(compression_type, "TFRecordWriter"), "compression_type")

    def write(self, dataset):
        """The op writing every element of `dataset` (scalar ``tf.string``) to the file."""
        spec = dataset._structure
        if not isinstance(spec, ComponentSpec) or spec.dtype != _dtypes.string or \
                spec.shape.ndims != 0 or spec.sparse:
            types = spec.dtype if isinstance(spec, ComponentSpec) else dataset.output_types
            shapes = spec.shape if isinstance(spec, ComponentSpec) else dataset.output_shapes
            raise TypeError(
                "Invalid `dataset`. Expected a`dataset` that produces scalar `tf.string` "
                f"elements, but got a dataset which produces elements with shapes "
                f"{shapes} and types {types!r}.")
        graph = get_default_graph()
        captured = _check_graph(dataset, graph, "TFRecordWriter.write")
        key = register_dataset(graph, _WriteJob(dataset))
        return make_op("DatasetToTFRecord", [*captured, self._filename, self._compression],
                       {"dataset_id": key}, name="DatasetToTFRecord")


# -- snapshot ----------------------------------------------------------------------------------
def _chain(dataset) -> str:
    parts, stack, seen = [], [dataset], set()
    while stack:
        ds = stack.pop()
        if id(ds) in seen:
            continue
        seen.add(id(ds))
        parts.append(type(ds).__name__)
        stack.extend(ds._inputs())
    return "/".join(parts)


def _encode(element) -> bytes:
    out = io.BytesIO()
    for c in element:
        a = np.asarray(c)
        if a.dtype == object:  # strings: fixed-width bytes (no pickle)
            a = a.astype(np.bytes_) if a.size else np.zeros(a.shape, "S1")
            tag = b"s"
        else:
            tag = b"n"
        buf = io.BytesIO()
        np.save(buf, a, allow_pickle=False)
        blob = buf.getvalue()
        out.write(tag + struct.pack("<Q", len(blob)) + blob)
    return out.getvalue()


def _decode(record: bytes) -> tuple:
    out, pos = [], 0
    while pos < len(record):
        tag, (n,) = record[pos:pos + 1], struct.unpack("<Q", record[pos + 1:pos + 9])
        a = np.load(io.BytesIO(record[pos + 9:pos + 9 + n]), allow_pickle=False)
        pos += 9 + n
        if tag == b"s":
            obj = np.empty(a.shape, dtype=object)
            obj.ravel()[:] = [bytes(x) for x in a.ravel()]
            a = obj
        out.append(a)
    return tuple(out)


class SnapshotDataset(Dataset):
    """The input's elements, written to `path` on the first complete pass and read from
    there afterwards (in this process or a later one)."""

    def __init__(self, input_dataset, path, compression) -> None:
        self._input = input_dataset
        self._structure = input_dataset._structure
        self._path = _scalar_string(path, "path")
        self._compression = "GZIP" if compression in ("AUTO", "GZIP") else \
            compression_name(compression or None, "snapshot")
        self._fingerprint = hashlib.sha256(
            (repr(self._structure) + _chain(input_dataset)).encode()).hexdigest()[:16]

    def _inputs(self):
        return [self._input]

    def _tensors(self):
        return [self._path]

    def _iter(self, rc):
        folder = os.path.join(_text(rc.resolve(self._path)), self._fingerprint)
        data = os.path.join(folder, "elements.tfrecord")
        marker = os.path.join(folder, "snapshot.json")
        if os.path.exists(marker):
            for record in tf_record_iterator(data, options=self._compression or None):
                yield _decode(record)
            return
        os.makedirs(folder, exist_ok=True)
        tmp = data + f".tmp-{os.getpid()}"
        writer = _RecordFileWriter(tmp, options=self._compression or None)
        count, done = 0, False
        try:
            for element in self._input._iter(rc):
                writer.write(_encode(element))
                count += 1
                yield element
            done = True
        finally:
            writer.close()
            if done:
                os.replace(tmp, data)
                with open(marker, "w") as f:
                    json.dump({"elements": count, "compression": self._compression,
                               "structure": repr(self._structure)}, f)
            elif os.path.exists(tmp):
                os.remove(tmp)


def snapshot(path, compression="AUTO", reader_func=None, shard_func=None):
    """Persist the dataset's elements under `path` on its first complete pass and read
    them from there on later passes and runs. For `Dataset.apply`. (`reader_func` and
    `shard_func` are accepted; one shard is written and read in order.)"""
    del reader_func, shard_func

    def apply(dataset):
        return SnapshotDataset(dataset, path, compression)

    return apply
