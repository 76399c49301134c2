"""``.meta`` files: one `MetaGraphDefProto` (TensorFlow's ``MetaGraphDef``), binary or
protobuf text, read and written without TensorFlow.

Reading trusts nothing in the file. The wire decoder checks every length against the
bytes that are there (`event_format`); then `check_graph_def_sizes` bounds what the
graph's constants would expand to: a constant may list fewer values than its shape
holds (TensorFlow repeats the last one), so a few bytes can declare gigabytes. Such a
constant is refused unless its expanded size stays under `expanded_constant_limit` of
the file (at least 16 MiB), with an error naming the node. Nothing is built or run
here; `flowgraph.train.meta_graph` imports the graph, op by op, registered ops only.

Example
-------
>>> import os, tempfile
>>> from flowgraph.framework.event_format import GraphDef, NodeDef
>>> path = os.path.join(tempfile.mkdtemp(), "m.meta")
>>> write_meta_graph_file(MetaGraphDefProto(graph_def=GraphDef(node=[
...     NodeDef(name="x", op="NoOp")])), path)
>>> read_meta_graph_file(path).graph_def.node[0].name
'x'
"""

from __future__ import annotations

import os

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors
from flowgraph.framework.event_format import DecodeError
from flowgraph.framework.tf_formats.meta_graph_messages import MetaGraphDefProto
from flowgraph.framework.tf_formats.resource_variables import meta_graph_as_refs
from flowgraph.framework.tf_formats.text_format import message_to_text
from flowgraph.framework.tf_formats.text_parse import TextParseError, parse_text

__all__ = ["check_graph_def_sizes", "expanded_constant_limit", "parse_meta_graph",
           "read_meta_graph_file", "write_meta_graph_file"]

_MIN_LIMIT = 16 << 20


def expanded_constant_limit(file_size: int) -> int:
    """Bytes the constants of a graph read from a file of `file_size` bytes may expand
    to, all together: 64 times the file, and at least 16 MiB."""
    return max(_MIN_LIMIT, 64 * int(file_size))


def _tensor_bytes(proto) -> int:
    dims = [int(d.size) for d in proto.tensor_shape.dim]
    if any(d < 0 for d in dims):
        return 0  # tensor_value refuses it with its own message
    size = int(np.prod(dims, dtype=object)) if dims else 1
    try:
        itemsize = np.dtype(_dtypes.as_dtype(int(proto.dtype)).as_numpy_dtype).itemsize
    except (TypeError, ValueError, KeyError):
        itemsize = 8
    return size * max(itemsize, 8 if int(proto.dtype) == 7 else 1)


def check_graph_def_sizes(graph_def, file_size: int = 0, source: str = "the graph") -> None:
    """Raise DataLossError when the constants of `graph_def` (a GraphDef message) would
    expand to more than `expanded_constant_limit(file_size)` bytes."""
    limit, total = expanded_constant_limit(file_size), 0
    for node in graph_def.node:
        for key, attr in node.attr.items():
            tensors = [attr.tensor] if "tensor" in attr.__dict__ else []
            if "list" in attr.__dict__:
                tensors.extend(attr.list.tensor)
            for t in tensors:
                total += _tensor_bytes(t)
                if total > limit:
                    raise errors.DataLossError(
                        None, None,
                        f"{source}: node '{node.name}' ({node.op}) attribute '{key}' declares "
                        f"a tensor of shape {[int(d.size) for d in t.tensor_shape.dim]}, "
                        f"which brings the graph's constants to {total} bytes, over the "
                        f"limit of {limit} bytes for a file of {file_size} bytes. The file "
                        "is corrupted, or holds constants far larger than its size; write "
                        "large constants as variables restored from a checkpoint.")


def parse_meta_graph(data: bytes, source: str = "<bytes>") -> MetaGraphDefProto:
    """A MetaGraphDef from serialized bytes, binary or protobuf text (as TensorFlow's
    ``import_meta_graph`` accepts both), its resource variables read as reference
    variables (`tf_formats.resource_variables`); DataLossError naming `source` when the
    bytes are neither."""
    data = bytes(data)
    try:
        mg = MetaGraphDefProto.FromString(data)
    except (DecodeError, ValueError, UnicodeDecodeError, TypeError, RecursionError) as binary:
        try:
            mg = parse_text(data.decode("utf-8"), MetaGraphDefProto)
        except (TextParseError, UnicodeDecodeError, RecursionError) as text:
            raise errors.DataLossError(
                None, None,
                f"Cannot parse {source} as a MetaGraphDef: not the binary form ({binary}) "
                f"nor the text form ({text}). The file is truncated or corrupted, or not a "
                ".meta file.") from None
    check_graph_def_sizes(mg.graph_def, len(data), source)
    meta_graph_as_refs(mg)
    return mg


def read_meta_graph_file(filename) -> MetaGraphDefProto:
    """The MetaGraphDef in `filename`; NotFoundError (also an OSError) when there is
    no such file, DataLossError when it is not a MetaGraphDef."""
    filename = os.fspath(filename)
    if not os.path.isfile(filename):
        raise _MissingFile(None, None, f"File {filename} does not exist.")
    with open(filename, "rb") as f:
        return parse_meta_graph(f.read(), filename)


class _MissingFile(errors.NotFoundError, OSError):
    """TensorFlow raises IOError here; this is both."""


def write_meta_graph_file(meta_graph_def: MetaGraphDefProto | bytes, filename,
                          as_text: bool = False) -> None:
    """Write `meta_graph_def` to `filename` (binary, or protobuf text), atomically; bytes
    are written as they are (an already serialized message)."""
    filename = os.fspath(filename)
    if isinstance(meta_graph_def, bytes):
        data = meta_graph_def
    else:
        data = (message_to_text(meta_graph_def).encode("utf-8") if as_text
                else meta_graph_def.SerializeToString())
    tmp = f"{filename}.tmp{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, filename)
