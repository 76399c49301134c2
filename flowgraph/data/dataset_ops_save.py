"""``Dataset.save`` and ``Dataset.load``: a dataset's elements in TensorFlow 2's saved-dataset
directory (the snapshot format, version 2), which TensorFlow's ``tf.data.Dataset.load``
reads, and which flowgraph reads when TensorFlow wrote it.

Layout
------
::

    path/dataset_spec.pb       StructuredValue proto of the element spec (written when
                               `save` builds its op, as TensorFlow does)
    path/snapshot.metadata     SnapshotMetadataRecord proto: run id, creation time (µs),
                               version 2, the component dtypes, the element count,
                               finalized (written last)
    path/<run id>/00000000.shard/00000000.snapshot
                               a TFRecord file (GZIP or ZLIB when asked): one TensorProto
                               record per component, in the element's flattening order

Without a `shard_func` every element goes to shard 0; with one, shard
``shard_func(element)`` (a scalar int64). `load` reads the shards of the recorded run in
name order and interleaves them one element at a time over as many shards as the process
has cores at once (TensorFlow's default ``reader_func`` in deterministic order).

Example
-------
>>> import os, tempfile
>>> import flowgraph as tf
>>> import flowgraph.data
>>> path = os.path.join(tempfile.mkdtemp(), "ds")
>>> with tf.Graph().as_default(), tf.Session() as sess:
...     sess.run(tf.data.Dataset.range(3).map(lambda x: {"x": x * 2}).save(path))
>>> sorted(os.listdir(path))[-2:]
['dataset_spec.pb', 'snapshot.metadata']
>>> with tf.Graph().as_default(), tf.Session() as sess:
...     ds = tf.data.Dataset.load(path)
...     x = tf.data.make_one_shot_iterator(ds).get_next()["x"]
...     print([int(sess.run(x)) for _ in range(3)])
[0, 2, 4]
"""

from __future__ import annotations

import os
import random
import time

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.event_messages import TensorProto, TensorShapeProto, make_tensor_proto
from flowgraph.framework.graph import get_default_graph
from flowgraph.framework.proto_codec import (
    iter_fields,
    read_varint,
    write_length_delimited,
    write_varint,
)
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.framework.tf_formats.graph_def import tensor_value
from flowgraph.io.tf_record import TFRecordWriter as _RecordFileWriter
from flowgraph.io.tf_record import tf_record_iterator
from flowgraph.ops.iterator_ops import register_dataset
from flowgraph.ops.op_util import make_op

from .dataset import Dataset
from .dataset_ops_function import TracedFunction
from .dataset_ops_optional import structure_from_element_spec
from .dataset_ops_structure import ComponentSpec, describe, flatten, pack_as
from .iterator import _check_graph

__all__ = ["load", "save"]

_SPEC_FILE, _METADATA_FILE = "dataset_spec.pb", "snapshot.metadata"
_COMPRESSIONS = {None: "", "": "", "GZIP": "GZIP", "ZLIB": "ZLIB"}

# Field numbers: StructuredValue (struct.proto), TensorSpecProto, SnapshotMetadataRecord.
_SV_TUPLE, _SV_DICT, _SV_LIST, _SV_TENSOR_SPEC, _SV_NONE = 52, 53, 51, 33, 1
_MD_RUN_ID, _MD_TIME, _MD_VERSION, _MD_DTYPE, _MD_COUNT, _MD_FINALIZED = 2, 3, 4, 5, 6, 1000


# -- the element spec as a StructuredValue ---------------------------------------------
def _encode_spec(structure) -> bytes:
    if isinstance(structure, dict):
        entries = b"".join(
            write_length_delimited(1, write_length_delimited(1, str(k).encode())
                                   + write_length_delimited(2, _encode_spec(structure[k])))
            for k in sorted(structure))
        return write_length_delimited(_SV_DICT, entries)
    if isinstance(structure, tuple):
        items = b"".join(write_length_delimited(1, _encode_spec(s)) for s in structure)
        return write_length_delimited(_SV_TUPLE, items)
    if not isinstance(structure, ComponentSpec) or structure.sparse:
        raise TypeError(f"Dataset.save: only dense tensor components can be saved, got "
                        f"{describe(structure)}")
    dims = structure.shape.as_list() if structure.shape.ndims is not None else None
    shape = (TensorShapeProto(unknown_rank=True) if dims is None else TensorShapeProto(
        dim=[TensorShapeProto.Dim(size=-1 if d is None else d) for d in dims]))
    spec = (write_length_delimited(2, shape.SerializeToString())
            + write_varint(3 << 3) + write_varint(structure.dtype.as_datatype_enum))
    return write_length_delimited(_SV_TENSOR_SPEC, spec)


def _decode_spec(buf: bytes, where: str):
    for number, _, value in iter_fields(buf):
        if number == _SV_TENSOR_SPEC:
            shape, dtype = TensorShape(None), None
            for n, _, v in iter_fields(value):
                if n == 2:
                    proto = TensorShapeProto.FromString(v)
                    shape = TensorShape(None) if proto.unknown_rank else TensorShape(
                        [None if d.size < 0 else d.size for d in proto.dim])
                elif n == 3:
                    dtype = _dtypes.as_dtype(v)
            return ComponentSpec(dtype, shape)
        if number in (_SV_TUPLE, _SV_LIST):
            return tuple(_decode_spec(v, where) for n, _, v in iter_fields(value) if n == 1)
        if number == _SV_DICT:
            out = {}
            for _, _, entry in iter_fields(value):
                fields = {n: v for n, _, v in iter_fields(entry)}
                out[fields.get(1, b"").decode()] = _decode_spec(fields.get(2, b""), where)
            return out
    raise errors.UnimplementedError(None, None, f"{where}: only element specs of tensors in "
                                                f"tuples and dicts can be read")


# -- save -------------------------------------------------------------------------------
class _SaveJob:
    """What the ``SaveDataset`` kernel runs: read the dataset, write the snapshot."""

    def __init__(self, dataset, shard_func: TracedFunction | None) -> None:
        self.dataset, self.shard_func = dataset, shard_func

    def run(self, captured, path: str, compression: str) -> None:
        run_id = str(random.getrandbits(64))
        writers: dict[int, _RecordFileWriter] = {}
        count = 0
        pipeline = self.dataset._make_pipeline(captured)
        try:
            for element in pipeline.elements():
                shard = 0
                if self.shard_func is not None:
                    shard = int(np.asarray(self.shard_func.run(pipeline.rc, element)[0]))
                    if shard < 0:
                        raise errors.InvalidArgumentError(
                            None, None, f"Dataset.save: shard_func returned {shard}; a "
                            "shard index must be non-negative")
                writer = writers.get(shard)
                if writer is None:
                    folder = os.path.join(path, run_id, f"{shard:08d}.shard")
                    os.makedirs(folder, exist_ok=True)
                    writer = writers[shard] = _RecordFileWriter(
                        os.path.join(folder, "00000000.snapshot"), options=compression or None)
                for component in element:
                    writer.write(_component_record(component))
                count += 1
        finally:
            for writer in writers.values():
                writer.close()
            pipeline.close()
        dtypes = b"".join(write_varint(s.dtype.as_datatype_enum)
                          for s in flatten(self.dataset._structure))
        record = (write_length_delimited(_MD_RUN_ID, run_id.encode())
                  + write_varint(_MD_TIME << 3) + write_varint(int(time.time() * 1e6))
                  + write_varint(_MD_VERSION << 3) + write_varint(2)
                  + write_length_delimited(_MD_DTYPE, dtypes)
                  + write_varint(_MD_COUNT << 3) + write_varint(count)
                  + write_varint(_MD_FINALIZED << 3) + write_varint(1))
        with open(os.path.join(path, _METADATA_FILE), "wb") as f:
            f.write(record)


def _component_record(value) -> bytes:
    """One component as TensorFlow's snapshot writer lays it out: a TensorProto whose
    ``tensor_content`` holds the raw values, or for strings every length as a varint
    followed by the bytes."""
    arr = np.asarray(value)
    if arr.dtype != object and arr.dtype.kind not in "SU":
        return make_tensor_proto(arr).SerializeToString()
    items = [x if isinstance(x, bytes) else str(x).encode("utf-8") for x in arr.reshape(-1)]
    proto = TensorProto(dtype=_dtypes.string.as_datatype_enum,
                        tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=d)
                                                           for d in arr.shape]),
                        tensor_content=b"".join(write_varint(len(x)) for x in items)
                        + b"".join(items))
    return proto.SerializeToString()


def _component_value(record: bytes) -> np.ndarray:
    proto = TensorProto.FromString(record)
    if int(proto.dtype) != _dtypes.string.as_datatype_enum or not proto.tensor_content:
        return tensor_value(proto)
    shape = [int(d.size) for d in proto.tensor_shape.dim]
    buf, pos, lengths = proto.tensor_content, 0, []
    for _ in range(int(np.prod(shape, dtype=np.int64))):
        n, pos = read_varint(buf, pos)
        lengths.append(n)
    out = np.empty(len(lengths), dtype=object)
    for i, n in enumerate(lengths):
        out[i], pos = buf[pos:pos + n], pos + n
    return out.reshape(shape)


def _path(path, what: str) -> str:
    if isinstance(path, bytes):
        path = path.decode("utf-8")
    if not isinstance(path, str | os.PathLike):
        raise TypeError(f"{what}: path must be a Python string, got {type(path).__name__}")
    return os.fspath(path)


def _compression(compression, what: str) -> str:
    if compression not in _COMPRESSIONS:
        raise ValueError(f"{what}: compression must be None, 'GZIP' or 'ZLIB' in flowgraph, "
                         f"got {compression!r}")
    return _COMPRESSIONS[compression]


def save(self: Dataset, path, compression=None, shard_func=None, checkpoint_args=None):
    """The op that writes this dataset's elements to the directory `path` in TensorFlow's
    saved-dataset format (see the module docstring) when run; `Dataset.load` reads it.

    `compression` is None, ``"GZIP"`` or ``"ZLIB"``; `shard_func` maps an element to
    its shard (a scalar int64). ``checkpoint_args`` (resumable saving) is not supported.
    """
    if checkpoint_args is not None:
        raise NotImplementedError("Dataset.save: checkpoint_args is not supported")
    path = _path(path, "Dataset.save")
    compression = _compression(compression, "Dataset.save")
    fn = None
    if shard_func is not None:
        fn = TracedFunction(shard_func, self._structure, "save")
        out = fn.output_structure
        if (not isinstance(out, ComponentSpec) or out.dtype != _dtypes.int64
                or out.shape.ndims not in (None, 0)):
            raise ValueError(f"Dataset.save: shard_func must return a scalar int64 tensor, "
                             f"but it returns {describe(out)}")
    spec = _encode_spec(self._structure)
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, _SPEC_FILE), "wb") as f:
        f.write(spec)
    graph = get_default_graph()
    captured = _check_graph(self, graph, "Dataset.save")
    key = register_dataset(graph, _SaveJob(self, fn))
    inputs = [convert_to_tensor(v, dtype=_dtypes.string, name=n)
              for v, n in ((path, "path"), (compression, "compression"))]
    return make_op("SaveDataset", [*captured, *inputs], {"dataset_id": key},
                   name="SaveDataset")


# -- load -------------------------------------------------------------------------------
class _LoadDataset(Dataset):
    """The elements of a saved dataset directory (`load`)."""

    def __init__(self, path: str, structure, run_id: str, compression: str,
                 count: int | None) -> None:
        self._path, self._run_id, self._compression = path, run_id, compression
        self._structure, self._count = structure, count

    def _cardinality(self, rc, count_elements) -> int:
        """The element count the metadata records (TensorFlow's cardinality)."""
        return -2 if self._count is None else self._count

    def _iter(self, rc):
        from .dataset_ops_transform import _schedulable_cores

        run = os.path.join(self._path, self._run_id)
        if not os.path.isdir(run):
            raise errors.NotFoundError(None, None, f"{run}: the saved dataset's run folder "
                                                   "is missing")
        files = [os.path.join(run, shard, name)
                 for shard in sorted(os.listdir(run)) if shard.endswith(".shard")
                 for name in sorted(os.listdir(os.path.join(run, shard)))
                 if name.endswith(".snapshot")]
        ncomp = len(flatten(self._structure))
        pending = [self._elements(f, ncomp) for f in files]
        width = _schedulable_cores()
        active, pending = pending[:width], pending[width:]
        while active:  # round robin, one element at a time; a finished shard's slot
            for i, shard in enumerate(active):  # takes the next shard
                element = next(shard, None)
                while element is None and pending:
                    shard = active[i] = pending.pop(0)
                    element = next(shard, None)
                if element is None:
                    active[i] = None
                    continue
                rc.check_stopped()
                yield element
            active = [s for s in active if s is not None]

    def _elements(self, filename: str, ncomp: int):
        records = tf_record_iterator(filename, options=self._compression or None)
        while True:
            parts = []
            for record in records:
                parts.append(_component_value(record))
                if len(parts) == ncomp:
                    break
            if not parts:
                return
            if len(parts) != ncomp:
                raise errors.DataLossError(None, None, f"{filename}: the last element has "
                                                       f"{len(parts)} of {ncomp} components")
            yield tuple(parts)


def load(path, element_spec=None, compression=None, reader_func=None) -> Dataset:
    """The dataset saved under `path` by `Dataset.save` (flowgraph's or TensorFlow's),
    with `element_spec` (nested `tf.TensorSpec`) or the one recorded there.
    ``reader_func`` is not supported (the shards are read as TensorFlow's default one
    reads them)."""
    if reader_func is not None:
        raise NotImplementedError("Dataset.load: reader_func is not supported")
    path = _path(path, "Dataset.load")
    compression = _compression(compression, "Dataset.load")
    metadata = os.path.join(path, _METADATA_FILE)
    if not os.path.exists(metadata):
        raise errors.NotFoundError(None, None, f"{metadata}; No such file or directory")
    with open(metadata, "rb") as f:
        fields = {n: v for n, _, v in iter_fields(f.read())}
    run_id = fields.get(_MD_RUN_ID, b"").decode()
    if element_spec is None:
        spec_file = os.path.join(path, _SPEC_FILE)
        if not os.path.exists(spec_file):
            raise errors.NotFoundError(None, None, f"{spec_file}; No such file or directory")
        with open(spec_file, "rb") as f:
            structure = _decode_spec(f.read(), spec_file)
    else:
        structure = structure_from_element_spec(element_spec)
    count = fields.get(_MD_COUNT)
    return _LoadDataset(path, pack_as(structure, flatten(structure)), run_id, compression,
                        None if count is None else int(count))
