"""Assets of a SavedModel: copied in at export, confined to the directory at load.

Export (`collect_assets`, called by the builder): every file the graph reads at run
time is copied into ``assets/`` and the graph def records only its name there:

    what reads a file                       where the path is          recorded as
    --------------------------------------  -------------------------  ----------------
    tables (``InitializeTableFromTextFileV2``,  its string ``Const`` input   the asset name, and an
    ``tf.lookup.TextFileInitializer``, ...)                             ``asset_file_def`` entry
    vocabulary columns (``VocabLookup``,    its ``vocabulary_file``    the asset name
    ``categorical_column_with_vocabulary_file``)  attribute

Load (`confine_graph_files`, called by the loader before the graph is imported): every
such name must be a plain file name (no absolute path, no ``..``, no separator) of a
regular file inside the export directory (a symlink may not lead out of it; a FIFO, a
device or a directory is refused) of at most
`flowgraph.framework.asset_file.MAX_ASSET_BYTES`; the import then sees
absolute paths of those files only. A table reading a file that is not an asset, a
``RestoreV2`` op (it reads checkpoints from any path) and a ``PrintV2`` writing to a
``file://`` stream are refused, as are the ops that write or delete checkpoints
(``SaveV2``, ``MergeV2Checkpoints``) or read checkpoints or vocabularies from any path
(``LoadAndRemapMatrix``, ``GenerateVocabRemapping``). Each refusal is a
`SavedModelFormatError` naming the file and the rule.

Example
-------
>>> import os, tempfile
>>> d = tempfile.mkdtemp(); os.makedirs(os.path.join(d, "assets"))
>>> _ = open(os.path.join(d, "assets", "vocab.txt"), "w").write("a\\n")
>>> os.path.basename(resolve_asset(d, "vocab.txt"))
'vocab.txt'
>>> resolve_asset(d, "../secret")
Traceback (most recent call last):
...
flowgraph.saved_model.format.SavedModelFormatError: ...must be a plain file name...
"""

from __future__ import annotations

import os
import shutil
import stat

import numpy as np

from flowgraph.framework import asset_file, errors
from flowgraph.framework.asset_file import file_kind
from flowgraph.framework.serialization import encode_attr
from flowgraph.saved_model import constants
from flowgraph.saved_model.format import SavedModelFormatError

__all__ = ["confine_graph_files", "resolve_asset"]

TABLE_FROM_FILE_OPS = {"InitializeTableFromTextFileV2": 1}  # op type -> filename input
VOCAB_FILE_ATTRS = {"VocabLookup": "vocabulary_file"}  # op type -> attribute
REFUSED_FILE_OPS = {"RestoreV2": "it reads a checkpoint from any path; a SavedModel's "
                                 "variables are restored from variables/ by the loader",
                    "LoadAndRemapMatrix": "it reads a checkpoint from any path",
                    "GenerateVocabRemapping": "it reads vocabulary files from any path",
                    "SaveV2": "it writes a checkpoint to any path",
                    "MergeV2Checkpoints": "it writes a checkpoint to any path and deletes "
                                          "the checkpoints it merges"}


def _refuse(export_dir: str, name: str, rule: str) -> SavedModelFormatError:
    return SavedModelFormatError(
        f"Invalid SavedModel {export_dir}: asset {name!r}: {rule}. Assets are read only "
        "from regular files inside the SavedModel's assets/ directory; re-export the model "
        "(the builder copies every asset there).")


def resolve_asset(export_dir: str, name, limit: int | None = None) -> str:
    """The absolute path of asset `name` of `export_dir`, after every rule above."""
    limit = asset_file.MAX_ASSET_BYTES if limit is None else limit
    if not isinstance(name, str) or not name:
        raise _refuse(export_dir, str(name), "the name must be a non-empty string")
    if (os.path.isabs(name) or name in (".", "..") or "/" in name or "\\" in name
            or "\x00" in name or os.path.basename(name) != name):
        raise _refuse(export_dir, name, "it must be a plain file name inside assets/ "
                                        "(no absolute path, no '..', no directory)")
    root = os.path.realpath(export_dir)
    path = os.path.join(export_dir, constants.ASSETS_DIRECTORY, name)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise errors.NotFoundError(None, None, f"Asset file {path} of SavedModel "
                                   f"{export_dir} is missing.") from None
    real = os.path.realpath(path)
    if os.path.commonpath([root, real]) != root:
        raise _refuse(export_dir, name, f"it resolves to {real}, outside the export "
                                        "directory (a symlink leaving it)")
    if stat.S_ISLNK(st.st_mode):
        st = os.stat(real)
    if not stat.S_ISREG(st.st_mode):
        raise _refuse(export_dir, name, f"it is {file_kind(st.st_mode)}, not a regular file")
    if st.st_size > limit:
        raise _refuse(export_dir, name, f"it holds {st.st_size} bytes, more than the limit "
                                        f"of {limit} (flowgraph.framework.asset_file."
                                        "MAX_ASSET_BYTES)")
    return real


def _string_const(path: str) -> dict:
    return encode_attr(np.array(path.encode("utf-8"), dtype=object))


def _tensor_ref(ref: str) -> str:
    return ref if ":" in ref else f"{ref}:0"


def confine_graph_files(mg, export_dir: str) -> dict:
    """A copy of `mg`'s graph def whose file paths are checked assets of `export_dir`."""
    nodes = [dict(n) for n in mg.graph_def["node"]]
    by_name = {n["name"]: n for n in nodes}
    assets: dict[str, str] = {}
    for a in mg.asset_file_def:
        path = resolve_asset(export_dir, a.filename)
        ref = _tensor_ref(a.tensor_info.name)
        node = by_name.get(ref.rpartition(":")[0])
        if node is None or node.get("op") != "Const":
            raise _refuse(export_dir, a.filename, f"its tensor {ref} must be a string Const "
                                                  "of the graph")
        node["attr"] = {**node.get("attr", {}), "value": _string_const(path)}
        assets[ref] = path
    for node in nodes:
        op, name = node.get("op"), node.get("name")
        if op in REFUSED_FILE_OPS:
            raise SavedModelFormatError(f"Invalid SavedModel {export_dir}: node '{name}' "
                                        f"({op}) cannot be loaded: {REFUSED_FILE_OPS[op]}.")
        if op == "PrintV2" and str(node.get("attr", {}).get("output_stream", "")).startswith(
                "file://"):
            raise SavedModelFormatError(f"Invalid SavedModel {export_dir}: node '{name}' "
                                        "(PrintV2) writes to a file; a SavedModel may print "
                                        "only to stderr, stdout or the log.")
        if op in TABLE_FROM_FILE_OPS:
            data = [r for r in node.get("input", []) if not r.startswith("^")]
            index = TABLE_FROM_FILE_OPS[op]
            if len(data) > index and _tensor_ref(data[index]) not in assets:
                raise SavedModelFormatError(
                    f"Invalid SavedModel {export_dir}: node '{name}' ({op}) reads the file "
                    f"named by {data[index]}, which is not an asset of the SavedModel "
                    "(asset_file_def); a SavedModel reads files only from its assets/.")
        if op in VOCAB_FILE_ATTRS:
            key = VOCAB_FILE_ATTRS[op]
            value = node.get("attr", {}).get(key, "")
            if value:
                node["attr"] = {**node["attr"], key: resolve_asset(export_dir, value)}
    return {**mg.graph_def, "node": nodes}


# -- export ---------------------------------------------------------------------------------
class AssetCopier:
    """Copies source files into a staging ``assets/`` under unique plain names."""

    def __init__(self, staging: str) -> None:
        self._dir = os.path.join(staging, constants.ASSETS_DIRECTORY)
        self._sources: dict[str, str] = {}  # name in assets/ -> source path

    def add(self, source: str, what: str) -> str:
        """Copy `source` (once) and return its name in ``assets/``."""
        if not os.path.isfile(source):
            raise ValueError(f"Asset file {source} ({what}) does not exist or is not a "
                             "regular file.")
        base = os.path.basename(source) or "asset"
        name, i = base, 0
        while name in self._sources and not os.path.samefile(self._sources[name], source):
            i += 1
            name = f"{base}_{i}"
        if name not in self._sources:
            self._sources[name] = source
            os.makedirs(self._dir, exist_ok=True)
            shutil.copyfile(source, os.path.join(self._dir, name))
        return name


def _const_path(tensor) -> str | None:
    from flowgraph.framework.constant_op import constant_value

    value = constant_value(tensor)
    if value is None or getattr(value, "shape", None) != ():
        return None
    value = value.item() if hasattr(value, "item") else value
    return os.fsdecode(value) if isinstance(value, bytes) else str(value)


def collect_assets(graph, graph_def: dict, assets_collection, copier: AssetCopier) -> list:
    """Copy every file `graph` reads into ``assets/``, record relative names in
    `graph_def` (rewritten in place) and return the `AssetFileDef` list."""
    from flowgraph.framework.operation import Tensor
    from flowgraph.saved_model.format import AssetFileDef
    from flowgraph.saved_model.signature_def_utils import build_tensor_info

    tensors = []
    for tensor in assets_collection or []:
        if not isinstance(tensor, Tensor):
            raise TypeError(f"assets_collection must hold string constant Tensors of "
                            f"file paths; got {tensor!r}")
        tensors.append(tensor)
    for op in graph.get_operations():
        index = TABLE_FROM_FILE_OPS.get(op.type)
        if index is not None and len(op.inputs) > index and op.inputs[index].op.type == \
                "Const" and all(op.inputs[index] is not t for t in tensors):
            tensors.append(op.inputs[index])
    by_name = {n["name"]: n for n in graph_def["node"]}
    defs = []
    for tensor in tensors:
        source = _const_path(tensor)
        if source is None or tensor.op.type != "Const":
            raise ValueError(f"Asset tensor '{tensor.name}' must be a scalar string "
                             "constant holding a file path.")
        name = copier.add(source, f"tensor '{tensor.name}'")
        node = by_name.get(tensor.op.name)
        if node is not None:
            node.setdefault("attr", {})["value"] = _string_const(name)
        defs.append(AssetFileDef(build_tensor_info(tensor), name))
    for node in graph_def["node"]:
        key = VOCAB_FILE_ATTRS.get(node["op"])
        source = node.get("attr", {}).get(key) if key else None
        if source:
            node["attr"][key] = copier.add(source, f"node '{node['name']}'")
    return defs
