"""``flowgraph saved_model_cli show|run``: TensorFlow's ``saved_model_cli``, same flags.

``show --dir D`` lists the tag sets; ``--tag_set serve`` the signature keys of that meta
graph; ``--signature_def KEY`` a signature's inputs and outputs (dtype, shape, tensor
name) and method; ``--all`` every signature of every tag set, and the op types of each
meta graph. Both formats are read: TensorFlow's ``saved_model.pb``/``.pbtxt`` (the default
export) and flowgraph's ``saved_model.json``.

``run --dir D --tag_set serve --signature_def KEY`` runs a signature and prints each
output (or writes ``KEY.npy`` files into ``--outdir``). Inputs come from
``--inputs 'x=file.npy;y=file.npz[name]'`` (read with ``allow_pickle=False``) and from
``--input_exprs 'x=[[1, 2]];y=3.5'``: JSON or Python literals, parsed with `json` or
`ast.literal_eval`, never evaluated as code (TensorFlow's tool calls ``eval``).

Example
-------
>>> import os, tempfile, flowgraph as tf
>>> from flowgraph import saved_model
>>> d = os.path.join(tempfile.mkdtemp(), "1")
>>> with tf.Graph().as_default():
...     x = tf.placeholder(tf.float32, [None, 2], name="x")
...     with tf.Session() as sess:
...         saved_model.simple_save(sess, d, {"x": x}, {"y": tf.reduce_sum(x, 1)})
>>> main(["show", "--dir", d])
The given SavedModel contains the following tag-sets:
'serve'
0
>>> main(["run", "--dir", d, "--tag_set", "serve", "--signature_def", "serving_default",
...       "--input_exprs", "x=[[1, 2], [3, 4]]"])
Result for output key y:
[3. 7.]
0
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import sys

import numpy as np

__all__ = ["add_parser", "main"]

_DT_NAMES = {"float32": "DT_FLOAT", "float64": "DT_DOUBLE", "float16": "DT_HALF",
             "bfloat16": "DT_BFLOAT16", "string": "DT_STRING", "bool": "DT_BOOL"}


def _dt_name(enum: int) -> str:
    from flowgraph.framework import dtypes as _dtypes

    name = _dtypes.as_dtype(enum).base_dtype.name
    return _DT_NAMES.get(name, f"DT_{name.upper()}")


def _shape_text(info) -> str:
    shape = info.tensor_shape
    if shape.unknown_rank:
        return "unknown_rank"
    return "(" + ", ".join(str(d.size) for d in shape.dim) + ")"


def _tensor_lines(part: str, key: str, info, indent: str) -> list[str]:
    return [f"{indent}{part}['{key}'] tensor_info:",
            f"{indent}    dtype: {_dt_name(info.dtype)}",
            f"{indent}    shape: {_shape_text(info)}",
            f"{indent}    name: {info.name}"]


def _signature_lines(sig, indent: str = "") -> list[str]:
    lines = [f"{indent}The given SavedModel SignatureDef contains the following input(s):"]
    for key in sorted(sig.inputs):
        lines += _tensor_lines("inputs", key, sig.inputs[key], indent + "  ")
    lines.append(f"{indent}The given SavedModel SignatureDef contains the following "
                 "output(s):")
    for key in sorted(sig.outputs):
        lines += _tensor_lines("outputs", key, sig.outputs[key], indent + "  ")
    lines.append(f"{indent}Method name is: {sig.method_name}")
    return lines


def _tags(text: str) -> list[str]:
    return [t for t in text.split(",") if t]


def _meta_graph(model, tag_set: str, export_dir: str):
    from flowgraph.saved_model.loader import find_meta_graph

    return find_meta_graph(model, _tags(tag_set), export_dir)


def _signature(mg, key: str, export_dir: str):
    if key not in mg.signature_def:
        raise ValueError(f"Signature '{key}' is not in the MetaGraphDef of {export_dir} "
                         f"with tags {sorted(mg.meta_info_def.tags)}; its signatures are "
                         f"{sorted(mg.signature_def)}")
    return mg.signature_def[key]


def _read(export_dir: str):
    # TensorFlow's format (saved_model.pb/.pbtxt) or flowgraph's (saved_model.json).
    from flowgraph.saved_model.format import read_saved_model
    from flowgraph.saved_model.tf_saved_model import is_tf_saved_model, read_tf_saved_model

    if is_tf_saved_model(export_dir):
        return read_tf_saved_model(export_dir)
    return read_saved_model(export_dir)


def _op_types(export_dir: str, model) -> list[set[str]]:
    # Each meta graph's op types as written: TensorFlow's format is read back with its
    # saver nodes replaced, so its ops come from the file's own GraphDefs.
    from flowgraph.framework.tf_formats.meta_graph_messages import SavedModelProto
    from flowgraph.framework.tf_formats.text_parse import parse_text
    from flowgraph.saved_model.tf_saved_model import (
        SAVED_MODEL_FILENAME_PB,
        SAVED_MODEL_FILENAME_PBTXT,
        is_tf_saved_model,
    )

    if is_tf_saved_model(export_dir):  # already read (and checked) once by `_read`
        path = os.path.join(export_dir, SAVED_MODEL_FILENAME_PB)
        if os.path.isfile(path):
            with open(path, "rb") as f:
                proto = SavedModelProto.FromString(f.read())
        else:
            with open(os.path.join(export_dir, SAVED_MODEL_FILENAME_PBTXT), "rb") as f:
                proto = parse_text(f.read().decode("utf-8"), SavedModelProto)
        return [{n.op for n in mg.graph_def.node} for mg in proto.meta_graphs]
    return [{n["op"] for n in mg.graph_def.get("node", [])} for mg in model.meta_graphs]


def show(args) -> int:
    """The ``show`` command (see the module docstring)."""
    model = _read(args.dir)
    lines: list[str] = []
    if args.all:
        for mg, op_types in zip(model.meta_graphs, _op_types(args.dir, model)):
            tags = ", ".join(sorted(mg.meta_info_def.tags))
            lines.append(f"\nMetaGraphDef with tag-set: '{tags}' contains the following "
                         "SignatureDefs:")
            for key in sorted(mg.signature_def):
                lines += ["", f"signature_def['{key}']:"]
                lines += _signature_lines(mg.signature_def[key], "  ")
            # TensorFlow prints a Python set (unordered); sorted here, so runs agree.
            lines.append(f"The MetaGraph with tag set {sorted(mg.meta_info_def.tags)} "
                         "contains the following ops: {"
                         + ", ".join(map(repr, sorted(op_types))) + "}")
    elif args.tag_set is None:
        lines.append("The given SavedModel contains the following tag-sets:")
        lines += ["'" + ", ".join(sorted(mg.meta_info_def.tags)) + "'"
                  for mg in model.meta_graphs]
    elif args.signature_def is None:
        mg = _meta_graph(model, args.tag_set, args.dir)
        lines.append("The given SavedModel MetaGraphDef contains SignatureDefs with the "
                     "following keys:")
        lines += [f'SignatureDef key: "{key}"' for key in sorted(mg.signature_def)]
    else:
        mg = _meta_graph(model, args.tag_set, args.dir)
        lines += _signature_lines(_signature(mg, args.signature_def, args.dir))
    print("\n".join(lines))
    return 0


def _pairs(text: str | None, flag: str) -> list[tuple[str, str]]:
    out = []
    for item in (text or "").split(";"):
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"{flag} expects 'key=value' items separated by ';', got "
                             f"{item!r}")
        out.append((key.strip(), value.strip()))
    return out


def parse_literal(text: str, key: str):
    """A JSON or Python literal (numbers, strings, nested lists); never evaluated.

    >>> parse_literal("[[1, 2]]", "x"), parse_literal("[true, null]", "y")
    ([[1, 2]], [True, None])
    """
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as e:
        raise ValueError(f"--input_exprs: the value of '{key}' is not a JSON or Python "
                         f"literal ({type(e).__name__}); expressions are not evaluated, "
                         "write the values out or put them in an .npy file for --inputs") \
            from None


def _load_file(spec: str, key: str) -> np.ndarray:
    path, name = spec, None
    if spec.endswith("]") and "[" in spec:
        path, _, name = spec[:-1].partition("[")
    data = np.load(path, allow_pickle=False)
    if isinstance(data, np.ndarray):
        return data
    with data:
        names = list(data.keys())
        if name is None:
            if len(names) != 1:
                raise ValueError(f"--inputs: '{key}={spec}': the .npz file holds {names}; "
                                 "name one as file.npz[name]")
            name = names[0]
        if name not in names:
            raise ValueError(f"--inputs: '{key}={spec}': no array '{name}' in {path} "
                             f"(it holds {names})")
        return data[name]


def run(args) -> int:
    """The ``run`` command (see the module docstring)."""
    from flowgraph.saved_model.predictor import load

    values = {}
    for key, spec in _pairs(args.inputs, "--inputs"):
        values[key] = _load_file(spec, key)
    for key, text in _pairs(args.input_exprs, "--input_exprs"):
        if key in values:
            raise ValueError(f"input '{key}' is given by both --inputs and --input_exprs")
        values[key] = parse_literal(text, key)
    model = load(args.dir, tags=_tags(args.tag_set))
    try:
        if args.signature_def not in model.signatures:
            raise ValueError(f"Signature '{args.signature_def}' is not in {args.dir}; its "
                             f"signatures are {sorted(model.signatures)}")
        outputs = model.signatures[args.signature_def](values)
    finally:
        model.close()
    for key in sorted(outputs):
        if args.outdir:
            os.makedirs(args.outdir, exist_ok=True)
            path = os.path.join(args.outdir, f"{key}.npy")
            if os.path.exists(path) and not args.overwrite:
                raise ValueError(f"Output file {path} already exists. Add --overwrite to "
                                 "replace it, or choose another --outdir.")
            np.save(path, np.asarray(outputs[key]), allow_pickle=False)
            print(f"Output {key} is saved to {path}")
        else:
            print(f"Result for output key {key}:\n{outputs[key]}")
    return 0


def add_parser(sub) -> argparse.ArgumentParser:
    """Add ``saved_model_cli`` to the `flowgraph` command's subparsers."""
    p = sub.add_parser("saved_model_cli", help="show or run the signatures of a SavedModel",
                       description="TensorFlow's saved_model_cli: show a SavedModel's tag "
                                   "sets and signatures, or run a signature.")
    cmds = p.add_subparsers(dest="saved_model_command", metavar="show|run")
    s = cmds.add_parser("show", help="tag sets, signatures, inputs and outputs")
    s.add_argument("--dir", required=True, help="the SavedModel directory")
    s.add_argument("--all", action="store_true", help="every signature of every tag set")
    s.add_argument("--tag_set", help="comma-separated tags of one meta graph, e.g. serve")
    s.add_argument("--signature_def", help="a signature key (needs --tag_set)")
    s.set_defaults(run_command=show)
    r = cmds.add_parser("run", help="run a signature on .npy/.npz or literal inputs")
    r.add_argument("--dir", required=True, help="the SavedModel directory")
    r.add_argument("--tag_set", required=True, help="comma-separated tags, e.g. serve")
    r.add_argument("--signature_def", required=True, help="the signature key")
    r.add_argument("--inputs", help="'key=file.npy;key2=file.npz[name]'")
    r.add_argument("--input_exprs", help="'key=[[1, 2]];key2=3.5' (JSON/Python literals)")
    r.add_argument("--outdir", help="write each output to OUTDIR/<key>.npy")
    r.add_argument("--overwrite", action="store_true", help="replace existing output files")
    r.set_defaults(run_command=run)
    p.set_defaults(run_command=lambda args: _usage(p))
    return p


def _usage(parser) -> int:
    parser.print_help(sys.stderr)
    return 2


def main(argv: list[str]) -> int:
    """``saved_model_cli`` alone: ``main(["show", "--dir", D])``; returns the exit code."""
    parser = argparse.ArgumentParser(prog="flowgraph")
    add_parser(parser.add_subparsers())
    args = parser.parse_args(["saved_model_cli", *argv])
    return args.run_command(args)
