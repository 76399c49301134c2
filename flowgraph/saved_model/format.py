"""The SavedModel on disk, and the message classes that describe it in memory.

An export directory holds::

    saved_model.json        the document below (JSON; never pickle)
    variables/variables     the variables' values: one checkpoint file of
                            `tf.train.Saver` (a NumPy .npz read with allow_pickle=False)
    assets/                 files the graph reads at run time (vocabularies, ...)
    assets.extra/           files for the serving system, never read by the loader

``saved_model.json`` is ``{"saved_model_schema_version": 1, "format":
"flowgraph.saved_model", "flowgraph_version": ..., "meta_graphs": [...]}``; each meta
graph has its ``tags``, the ``graph_def`` (`Graph.as_graph_def()`), the
``signature_def`` map, the ``saver`` (restore op and the placeholder fed per
checkpoint key), the ``variables`` (to rebuild `tf.Variable` objects and their
collections), ``main_op``/``train_op`` names and the ``asset_file_def`` list.

Reading validates the whole document against an explicit schema before anything is
built: every field's type, no unknown keys at any level, op types that are registered
(and not ones that call back into Python), dtype names, tensor names that refer to
nodes of the graph, asset file names that stay inside ``assets/``. Anything else is
rejected with `SavedModelFormatError` naming the file. Loading therefore never runs
code from the export directory; it only builds registered ops.

Example
-------
>>> from flowgraph.framework.tensor_shape import TensorShape
>>> info = TensorInfo(name="x:0", dtype=1,
...                   tensor_shape=TensorShapeProto.from_shape(TensorShape([None, 3])))
>>> [d.size for d in info.tensor_shape.dim], info.tensor_shape.unknown_rank
([-1, 3], False)
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass, field
from typing import Any

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.registry import has_op_def
from flowgraph.framework.serialization import decode_attr
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.framework.tf_formats.bundle_slices import parse_slice_spec
from flowgraph.ops import load_all
from flowgraph.saved_model import constants

__all__ = [
    "AssetFileDef",
    "Dim",
    "MetaGraphDef",
    "MetaInfoDef",
    "RestoreDef",
    "RestoreEntry",
    "SaveSliceInfoDef",
    "SavedModel",
    "SavedModelFormatError",
    "SignatureDef",
    "TensorInfo",
    "TensorShapeProto",
    "VariableDef",
    "read_saved_model",
    "write_saved_model",
]

FORMAT_NAME = "flowgraph.saved_model"

# Ops that call back into Python functions registered at run time: a SavedModel that
# names one could not be served without the code that built it, so it is refused.
DENIED_OPS = frozenset({"PyFunc", "PyFuncStateless", "EagerPyFunc"})


class SavedModelFormatError(ValueError):
    """A SavedModel file is malformed, or holds something loading must not accept."""


# -- message classes (the fields and names of TensorFlow's protos) -----------------------------
@dataclass
class Dim:
    size: int = -1
    name: str = ""


@dataclass
class TensorShapeProto:
    """``dim`` (sizes, -1 when unknown) and ``unknown_rank``, as TF's TensorShapeProto."""

    dim: list[Dim] = field(default_factory=list)
    unknown_rank: bool = False

    @classmethod
    def from_shape(cls, shape) -> TensorShapeProto:
        shape = TensorShape(shape)
        if shape.ndims is None:
            return cls(dim=[], unknown_rank=True)
        return cls(dim=[Dim(-1 if d.value is None else int(d.value)) for d in shape.dims])

    def as_shape(self) -> TensorShape:
        """The `TensorShape` this describes (``tf.TensorShape(proto)`` in TensorFlow)."""
        if self.unknown_rank:
            return TensorShape(None)
        return TensorShape([None if d.size < 0 else d.size for d in self.dim])

    def __str__(self) -> str:  # protobuf's text format, as printing TensorFlow's shows
        from flowgraph.saved_model.tf_export import tensor_info_message

        return str(tensor_info_message(TensorInfo(tensor_shape=self)).tensor_shape)


@dataclass
class TensorInfo:
    """A tensor of a signature: its ``name`` in the graph, ``dtype`` (TensorFlow's
    DataType number, e.g. 1 for float32: ``tf.as_dtype(info.dtype)``) and
    ``tensor_shape``."""

    name: str = ""
    dtype: int = 0
    tensor_shape: TensorShapeProto = field(default_factory=TensorShapeProto)

    def __str__(self) -> str:  # protobuf's text format, as printing TensorFlow's shows
        from flowgraph.saved_model.tf_export import tensor_info_message

        return str(tensor_info_message(self))


@dataclass
class SignatureDef:
    """``inputs`` and ``outputs`` (key -> `TensorInfo`) and the ``method_name``."""

    inputs: dict[str, TensorInfo] = field(default_factory=dict)
    outputs: dict[str, TensorInfo] = field(default_factory=dict)
    method_name: str = ""

    def __str__(self) -> str:  # protobuf's text format, as printing TensorFlow's shows
        from flowgraph.saved_model.tf_export import signature_message

        return str(signature_message(self))


@dataclass
class MetaInfoDef:
    tags: list[str] = field(default_factory=list)
    meta_graph_version: str = ""
    flowgraph_version: str = ""


@dataclass
class RestoreEntry:
    key: str  # the name in variables/variables
    variable: str  # the variable's ref tensor, "dense/kernel:0"
    placeholder: str  # the tensor fed with the value, "save/RestoreV2:0"
    # A part of a partitioned variable stored whole under `key`: TensorFlow's slice spec
    # of the part ("200 3 67,67:0,3"); empty for a variable stored under its own key.
    slice: str = ""


@dataclass
class RestoreDef:
    """How to restore the variables: feed each entry's placeholder, run the op."""

    restore_op_name: str = ""
    filename_tensor_name: str = ""
    save_tensor_name: str = ""
    entries: list[RestoreEntry] = field(default_factory=list)


@dataclass
class SaveSliceInfoDef:
    """Where a part of a partitioned variable sits in the whole (TensorFlow's message of
    that name): the full variable's name and shape, the part's offset and shape."""

    full_name: str
    full_shape: list[int]
    var_offset: list[int]
    var_shape: list[int]

    @property
    def spec(self) -> str:
        """TensorFlow's slice spec of the part: ``"200 3 67,67:0,3"``."""
        extents = ":".join(f"{o},{n}" for o, n in zip(self.var_offset, self.var_shape))
        return " ".join(str(d) for d in self.full_shape) + " " + extents


@dataclass
class VariableDef:
    variable_name: str
    initializer_name: str
    snapshot_name: str
    initial_value_name: str = ""
    trainable: bool = True
    collections: list[str] = field(default_factory=list)
    save_slice_info_def: SaveSliceInfoDef | None = None  # a part of a partitioned variable
    is_resource: bool = False  # a resource variable: variable_name is its VarHandleOp's


@dataclass
class AssetFileDef:
    tensor_info: TensorInfo
    filename: str


@dataclass
class MetaGraphDef:
    meta_info_def: MetaInfoDef = field(default_factory=MetaInfoDef)
    graph_def: dict = field(default_factory=dict)
    signature_def: dict[str, SignatureDef] = field(default_factory=dict)
    saver_def: RestoreDef | None = None
    variables: list[VariableDef] = field(default_factory=list)
    main_op: str | None = None
    train_op: str | None = None
    asset_file_def: list[AssetFileDef] = field(default_factory=list)
    # TensorFlow's MetaGraphDef message as read from saved_model.pb, unmodified: what
    # `loader.load` returns (None for saved_model.json, whose message is built on load).
    message: Any = field(default=None, compare=False, repr=False)


@dataclass
class SavedModel:
    saved_model_schema_version: int = constants.SAVED_MODEL_SCHEMA_VERSION
    meta_graphs: list[MetaGraphDef] = field(default_factory=list)
    flowgraph_version: str = ""


# -- to JSON ------------------------------------------------------------------------------------
def _dtype_name(enum: int) -> str:
    return _dtypes.as_dtype(enum).base_dtype.name


def _tensor_info_json(info: TensorInfo) -> dict:
    shape = info.tensor_shape
    return {"name": info.name, "dtype": _dtype_name(info.dtype),
            "tensor_shape": {"dim": [{"size": d.size, "name": d.name} for d in shape.dim],
                             "unknown_rank": shape.unknown_rank}}


def _signature_json(sig: SignatureDef) -> dict:
    return {"method_name": sig.method_name,
            "inputs": {k: _tensor_info_json(v) for k, v in sig.inputs.items()},
            "outputs": {k: _tensor_info_json(v) for k, v in sig.outputs.items()}}


def _restore_entry_json(entry: RestoreEntry) -> dict:
    out = dataclasses.asdict(entry)
    if not entry.slice:
        del out["slice"]  # the files of flowgraph releases before slices stay the same
    return out


def _variable_json(var: VariableDef) -> dict:
    out = dataclasses.asdict(var)
    if var.save_slice_info_def is None:
        del out["save_slice_info_def"]  # a whole variable's entry stays as it was
    if not var.is_resource:
        del out["is_resource"]  # so does a reference variable's
    return out


def _meta_graph_json(mg: MetaGraphDef) -> dict:
    saver = None
    if mg.saver_def is not None:
        saver = {"restore_op_name": mg.saver_def.restore_op_name,
                 "filename_tensor_name": mg.saver_def.filename_tensor_name,
                 "save_tensor_name": mg.saver_def.save_tensor_name,
                 "entries": [_restore_entry_json(e) for e in mg.saver_def.entries]}
    return {
        "tags": list(mg.meta_info_def.tags),
        "meta_graph_version": mg.meta_info_def.meta_graph_version,
        "graph_def": mg.graph_def,
        "signature_def": {k: _signature_json(v) for k, v in mg.signature_def.items()},
        "saver": saver,
        "variables": [_variable_json(v) for v in mg.variables],
        "main_op": mg.main_op,
        "train_op": mg.train_op,
        "asset_file_def": [{"tensor_info": _tensor_info_json(a.tensor_info),
                            "filename": a.filename} for a in mg.asset_file_def],
    }


def saved_model_to_json(model: SavedModel) -> dict:
    return {"saved_model_schema_version": model.saved_model_schema_version,
            "format": FORMAT_NAME,
            "flowgraph_version": model.flowgraph_version,
            "meta_graphs": [_meta_graph_json(mg) for mg in model.meta_graphs]}


def write_saved_model(directory: str, model: SavedModel, as_text: bool = False) -> str:
    """Write ``saved_model.json`` into `directory` (fsynced); returns its path."""
    path = os.path.join(directory, constants.SAVED_MODEL_FILENAME_JSON)
    text = json.dumps(saved_model_to_json(model), indent=1 if as_text else None,
                      separators=None if as_text else (",", ":"), allow_nan=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    return path


# -- from JSON, validated -----------------------------------------------------------------------
class _Validator:
    """Strict reader of the parsed JSON: every check names the file and the field."""

    def __init__(self, path: str) -> None:
        self.path = path

    def error(self, where: str, msg: str) -> SavedModelFormatError:
        return SavedModelFormatError(
            f"Invalid SavedModel file {self.path}: {where}: {msg}. The file was not loaded; "
            "re-export the model with flowgraph (a SavedModel is never trusted to run code).")

    def obj(self, value: Any, where: str, required=(), optional=()) -> dict:
        if not isinstance(value, dict):
            raise self.error(where, f"expected an object, found {type(value).__name__}")
        allowed = set(required) | set(optional)
        unknown = sorted(k for k in value if k not in allowed)
        if unknown:
            raise self.error(where, f"unknown field(s) {unknown}; allowed: {sorted(allowed)}")
        missing = sorted(k for k in required if k not in value)
        if missing:
            raise self.error(where, f"missing field(s) {missing}")
        return value

    def string(self, value: Any, where: str, nonempty: bool = False) -> str:
        if not isinstance(value, str) or (nonempty and not value):
            raise self.error(where, f"expected a {'non-empty ' if nonempty else ''}string, "
                                    f"found {value!r:.80}")
        return value

    def slice_spec(self, value: Any, where: str) -> str:
        spec = self.string(value, where)
        if spec:
            try:
                parse_slice_spec(spec)
            except ValueError as e:
                raise self.error(where, str(e)) from None
        return spec

    def save_slice_info(self, value: Any, where: str) -> SaveSliceInfoDef | None:
        if value is None:
            return None
        v = self.obj(value, where, required=("full_name", "full_shape", "var_offset",
                                             "var_shape"))
        info = SaveSliceInfoDef(
            full_name=self.string(v["full_name"], f"{where}.full_name", nonempty=True),
            **{k: [self.integer(d, f"{where}.{k}", minimum=0)
                   for d in self.array(v[k], f"{where}.{k}")]
               for k in ("full_shape", "var_offset", "var_shape")})
        self.slice_spec(info.spec, where)  # the part fits the full shape
        return info

    def opt_string(self, value: Any, where: str) -> str | None:
        return None if value is None else self.string(value, where, nonempty=True)

    def integer(self, value: Any, where: str, minimum: int | None = None) -> int:
        if not isinstance(value, int) or isinstance(value, bool) or (
                minimum is not None and value < minimum):
            raise self.error(where, f"expected an integer"
                                    f"{'' if minimum is None else f' >= {minimum}'}, "
                                    f"found {value!r:.80}")
        return value

    def boolean(self, value: Any, where: str) -> bool:
        if not isinstance(value, bool):
            raise self.error(where, f"expected true or false, found {value!r:.80}")
        return value

    def array(self, value: Any, where: str) -> list:
        if not isinstance(value, list):
            raise self.error(where, f"expected a list, found {type(value).__name__}")
        return value

    def dtype(self, value: Any, where: str) -> int:
        name = self.string(value, where, nonempty=True)
        try:
            dtype = _dtypes.as_dtype(name)
        except TypeError:
            raise self.error(where, f"unknown dtype {name!r}") from None
        return dtype.base_dtype.as_datatype_enum

    # -- pieces --------------------------------------------------------------------------------
    def tensor_info(self, value: Any, where: str) -> TensorInfo:
        v = self.obj(value, where, required=("name", "dtype", "tensor_shape"))
        shape = self.obj(v["tensor_shape"], f"{where}.tensor_shape",
                         required=("dim", "unknown_rank"))
        dims = []
        for i, d in enumerate(self.array(shape["dim"], f"{where}.tensor_shape.dim")):
            dw = f"{where}.tensor_shape.dim[{i}]"
            d = self.obj(d, dw, required=("size",), optional=("name",))
            dims.append(Dim(self.integer(d["size"], f"{dw}.size", minimum=-1),
                            self.string(d.get("name", ""), f"{dw}.name")))
        unknown = self.boolean(shape["unknown_rank"], f"{where}.tensor_shape.unknown_rank")
        return TensorInfo(name=self.string(v["name"], f"{where}.name", nonempty=True),
                          dtype=self.dtype(v["dtype"], f"{where}.dtype"),
                          tensor_shape=TensorShapeProto(dims, unknown))

    def signature(self, value: Any, where: str) -> SignatureDef:
        v = self.obj(value, where, required=("method_name", "inputs", "outputs"))
        out = SignatureDef(method_name=self.string(v["method_name"], f"{where}.method_name"))
        for part in ("inputs", "outputs"):
            items = self.obj(v[part], f"{where}.{part}", optional=v[part].keys()
                             if isinstance(v[part], dict) else ())
            for key, info in items.items():
                getattr(out, part)[key] = self.tensor_info(info, f"{where}.{part}[{key!r}]")
        return out

    def attr_value(self, value: Any, where: str, depth: int = 0) -> None:
        """The tagged encodings of `flowgraph.framework.serialization`, and nothing else."""
        if depth > 32:
            raise self.error(where, "attribute value nested too deeply")
        if value is None or isinstance(value, bool | int | float | str):
            return
        if not isinstance(value, dict):
            raise self.error(where, f"malformed attribute value {value!r:.80}")
        keys = set(value)
        if keys == {"dtype"}:
            self.dtype(value["dtype"], where)
        elif keys == {"shape"}:
            if value["shape"] is not None:
                for i, d in enumerate(self.array(value["shape"], where)):
                    if d is not None:
                        self.integer(d, f"{where}[{i}]", minimum=0)
        elif keys == {"array", "dtype", "shape"} or keys == {"fill", "dtype", "shape"}:
            self.string(value["array" if "array" in keys else "fill"], where)
            kind = self.string(value["dtype"], where).lstrip("<>|=")[:1]
            if kind not in ("b", "i", "u", "f", "c", "?"):
                raise self.error(where, f"array dtype {value['dtype']!r} is not numeric")
        elif keys <= {"strings", "shape", "bytes"} and {"strings", "shape"} <= keys:
            for i, s in enumerate(self.array(value["strings"], where)):
                self.string(s, f"{where}.strings[{i}]")
            self.boolean(value.get("bytes", False), where)
        elif keys == {"b64"}:
            self.string(value["b64"], where)
        elif keys == {"list"}:
            for i, item in enumerate(self.array(value["list"], where)):
                self.attr_value(item, f"{where}[{i}]", depth + 1)
        elif keys == {"map"}:
            for k, item in self.obj(value["map"], where, optional=value["map"].keys()
                                    if isinstance(value["map"], dict) else ()).items():
                self.attr_value(item, f"{where}[{k!r}]", depth + 1)
        else:
            raise self.error(where, f"unknown attribute encoding with keys {sorted(keys)}")
        if "shape" in keys and keys != {"shape"}:
            for i, d in enumerate(self.array(value["shape"], where)):
                self.integer(d, f"{where}.shape[{i}]", minimum=0)
        try:
            decode_attr(value)
        except (TypeError, ValueError, KeyError) as e:
            raise self.error(where, f"undecodable attribute value ({e})") from None

    def graph_def(self, value: Any, where: str) -> dict[str, int]:
        """Validate; returns node name -> number of recorded outputs (-1 unknown)."""
        v = self.obj(value, where, required=("node",), optional=("versions",))
        if "versions" in v:
            versions = self.obj(v["versions"], f"{where}.versions", optional=("producer",))
            if "producer" in versions:
                self.integer(versions["producer"], f"{where}.versions.producer", minimum=0)
        nodes: dict[str, int] = {}
        for i, node in enumerate(self.array(v["node"], f"{where}.node")):
            nw = f"{where}.node[{i}]"
            node = self.obj(node, nw, required=("name", "op"), optional=(
                "input", "device", "attr", "colocation", "output_shapes", "output_dtypes"))
            name = self.string(node["name"], f"{nw}.name", nonempty=True)
            nw = f"{where}.node[{i}] ('{name}')"
            op = self.string(node["op"], f"{nw}.op", nonempty=True)
            if op in DENIED_OPS or not has_op_def(op):
                raise self.error(nw, f"op type {op!r} is not a registered flowgraph op"
                                 + (" (ops calling Python functions cannot be loaded)"
                                    if op in DENIED_OPS else ""))
            if name in nodes:
                raise self.error(nw, "two nodes have this name")
            for j, ref in enumerate(self.array(node.get("input", []), f"{nw}.input")):
                self.string(ref, f"{nw}.input[{j}]", nonempty=True)
            self.string(node.get("device", ""), f"{nw}.device")
            for k, item in self.obj(node.get("attr", {}), f"{nw}.attr",
                                    optional=node.get("attr", {}).keys()
                                    if isinstance(node.get("attr", {}), dict) else ()).items():
                self.attr_value(item, f"{nw}.attr[{k!r}]")
            for j, c in enumerate(self.array(node.get("colocation", []), f"{nw}.colocation")):
                self.string(c, f"{nw}.colocation[{j}]")
            shapes = self.array(node.get("output_shapes", []), f"{nw}.output_shapes")
            for j, s in enumerate(shapes):
                self.obj(s, f"{nw}.output_shapes[{j}]", required=("shape",))
                self.attr_value(s, f"{nw}.output_shapes[{j}]")
            out_dtypes = self.array(node.get("output_dtypes", []), f"{nw}.output_dtypes")
            for j, d in enumerate(out_dtypes):
                self.dtype(d, f"{nw}.output_dtypes[{j}]")
            nodes[name] = len(out_dtypes) if "output_dtypes" in node else -1
        return nodes

    def meta_graph(self, value: Any, where: str) -> MetaGraphDef:
        v = self.obj(value, where, required=("tags", "graph_def", "signature_def"), optional=(
            "meta_graph_version", "saver", "variables", "main_op", "train_op",
            "asset_file_def"))
        tags = [self.string(t, f"{where}.tags[{i}]", nonempty=True)
                for i, t in enumerate(self.array(v["tags"], f"{where}.tags"))]
        nodes = self.graph_def(v["graph_def"], f"{where}.graph_def")
        mg = MetaGraphDef(
            meta_info_def=MetaInfoDef(tags=tags, meta_graph_version=self.string(
                v.get("meta_graph_version", ""), f"{where}.meta_graph_version")),
            graph_def=v["graph_def"])
        sigs = self.obj(v["signature_def"], f"{where}.signature_def",
                        optional=v["signature_def"].keys()
                        if isinstance(v["signature_def"], dict) else ())
        for key, sig in sigs.items():
            sw = f"{where}.signature_def[{key!r}]"
            mg.signature_def[key] = s = self.signature(sig, sw)
            for part in ("inputs", "outputs"):
                for k, info in getattr(s, part).items():
                    self.tensor_ref(info.name, nodes, f"{sw}.{part}[{k!r}].name")
        if v.get("saver") is not None:
            sw = f"{where}.saver"
            saver = self.obj(v["saver"], sw, required=("restore_op_name", "entries"),
                             optional=("filename_tensor_name", "save_tensor_name"))
            rd = RestoreDef(restore_op_name=self.op_ref(saver["restore_op_name"], nodes,
                                                        f"{sw}.restore_op_name"),
                            filename_tensor_name=self.string(
                                saver.get("filename_tensor_name", ""), sw),
                            save_tensor_name=self.string(saver.get("save_tensor_name", ""), sw))
            for i, e in enumerate(self.array(saver["entries"], f"{sw}.entries")):
                ew = f"{sw}.entries[{i}]"
                e = self.obj(e, ew, required=("key", "variable", "placeholder"),
                             optional=("slice",))
                rd.entries.append(RestoreEntry(
                    key=self.string(e["key"], f"{ew}.key", nonempty=True),
                    variable=self.tensor_ref(e["variable"], nodes, f"{ew}.variable"),
                    placeholder=self.tensor_ref(e["placeholder"], nodes, f"{ew}.placeholder"),
                    slice=self.slice_spec(e.get("slice", ""), f"{ew}.slice")))
            mg.saver_def = rd
        for i, var in enumerate(self.array(v.get("variables", []), f"{where}.variables")):
            vw = f"{where}.variables[{i}]"
            var = self.obj(var, vw, required=("variable_name", "initializer_name",
                                              "snapshot_name"),
                           optional=("initial_value_name", "trainable", "collections",
                                     "save_slice_info_def", "is_resource"))
            initial = var.get("initial_value_name", "")
            mg.variables.append(VariableDef(
                variable_name=self.tensor_ref(var["variable_name"], nodes, vw),
                initializer_name=self.op_ref(var["initializer_name"], nodes, vw),
                snapshot_name=self.tensor_ref(var["snapshot_name"], nodes, vw),
                initial_value_name=self.tensor_ref(initial, nodes, vw) if initial else "",
                trainable=self.boolean(var.get("trainable", True), f"{vw}.trainable"),
                collections=[self.string(c, f"{vw}.collections", nonempty=True)
                             for c in self.array(var.get("collections", []), vw)],
                save_slice_info_def=self.save_slice_info(var.get("save_slice_info_def"),
                                                         f"{vw}.save_slice_info_def"),
                is_resource=self.boolean(var.get("is_resource", False),
                                         f"{vw}.is_resource")))
        for key in ("main_op", "train_op"):
            name = self.opt_string(v.get(key), f"{where}.{key}")
            setattr(mg, key, None if name is None else self.op_ref(name, nodes,
                                                                   f"{where}.{key}"))
        for i, a in enumerate(self.array(v.get("asset_file_def", []),
                                         f"{where}.asset_file_def")):
            aw = f"{where}.asset_file_def[{i}]"
            a = self.obj(a, aw, required=("tensor_info", "filename"))
            info = self.tensor_info(a["tensor_info"], f"{aw}.tensor_info")
            self.tensor_ref(info.name, nodes, f"{aw}.tensor_info.name")
            mg.asset_file_def.append(AssetFileDef(info, self.asset_name(a["filename"], aw)))
        return mg

    def asset_name(self, value: Any, where: str) -> str:
        name = self.string(value, f"{where}.filename", nonempty=True)
        if (name in (".", "..") or "/" in name or "\\" in name or "\x00" in name
                or os.path.basename(name) != name):
            raise self.error(where, f"asset filename {name!r} must be a plain file name "
                                    "inside assets/")
        return name

    def op_ref(self, name: Any, nodes: dict[str, int], where: str) -> str:
        name = self.string(name, where, nonempty=True).lstrip("^")  # "^op": a control ref
        if name not in nodes:
            raise self.error(where, f"'{name}' is not a node of the graph")
        return name

    def tensor_ref(self, name: Any, nodes: dict[str, int], where: str) -> str:
        name = self.string(name, where, nonempty=True)
        op, sep, idx = name.rpartition(":")
        if not sep or not idx.isdigit() or op not in nodes:
            raise self.error(where, f"'{name}' is not a tensor of the graph")
        if 0 <= nodes[op] <= int(idx):
            raise self.error(where, f"'{name}': node '{op}' has only {nodes[op]} output(s)")
        return name


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict:
    out: dict = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"duplicate key {k!r}")
        out[k] = v
    return out


def contained_path(export_dir: str, *parts: str) -> str:
    """``export_dir/parts...``, refusing a path that resolves (through symlinks) outside
    `export_dir`."""
    path = os.path.join(export_dir, *parts)
    root = os.path.realpath(export_dir)
    real = os.path.realpath(path)
    if os.path.commonpath([root, real]) != root:
        raise SavedModelFormatError(
            f"Invalid SavedModel {export_dir}: {os.path.join(*parts)} resolves to {real}, "
            "outside the export directory (a symlink?); refusing to read it.")
    return path


def read_saved_model(export_dir: str) -> SavedModel:
    """Read and validate ``export_dir/saved_model.json``.

    Raises OSError when the file does not exist and `SavedModelFormatError` (a
    ValueError) when it is not a valid flowgraph SavedModel.
    """
    export_dir = os.fspath(export_dir)
    if isinstance(export_dir, bytes):
        export_dir = os.fsdecode(export_dir)
    path = os.path.join(export_dir, constants.SAVED_MODEL_FILENAME_JSON)
    if not os.path.isfile(path):
        raise OSError(f"SavedModel file does not exist at: {path} (export_dir={export_dir} "
                      "should hold saved_model.json, as written by SavedModelBuilder.save).")
    contained_path(export_dir, constants.SAVED_MODEL_FILENAME_JSON)
    load_all()  # a fresh process may not have imported every op family yet
    v = _Validator(path)
    try:
        with open(path, "rb") as f:
            raw = f.read()
        doc = json.loads(raw.decode("utf-8"), object_pairs_hook=_no_duplicate_keys)
    except UnicodeDecodeError:
        raise v.error("file", "not UTF-8 JSON text") from None
    except (ValueError, RecursionError) as e:
        raise v.error("file", f"not valid JSON ({e})") from None
    v.obj(doc, "top level", required=("saved_model_schema_version", "format", "meta_graphs"),
          optional=("flowgraph_version",))
    if doc["format"] != FORMAT_NAME:
        raise v.error("format", f"expected {FORMAT_NAME!r}, found {doc['format']!r:.80}")
    version = v.integer(doc["saved_model_schema_version"], "saved_model_schema_version")
    if version != constants.SAVED_MODEL_SCHEMA_VERSION:
        raise v.error("saved_model_schema_version",
                      f"version {version} is not supported (this flowgraph reads version "
                      f"{constants.SAVED_MODEL_SCHEMA_VERSION})")
    model = SavedModel(saved_model_schema_version=version, flowgraph_version=v.string(
        doc.get("flowgraph_version", ""), "flowgraph_version"))
    for i, mg in enumerate(v.array(doc["meta_graphs"], "meta_graphs")):
        model.meta_graphs.append(v.meta_graph(mg, f"meta_graphs[{i}]"))
    return model
