"""Vocabulary *files* in a SavedModel for TensorFlow: flowgraph's ``VocabLookup`` over
an asset written as TensorFlow's hash table over that asset.

flowgraph's ``VocabLookup`` (``categorical_column_with_vocabulary_file``, ...) reads its
file when a session first runs it; TensorFlow has no such op, but reads vocabulary files
through a table that the SavedModel's main op fills from the asset. For a node ``ids =
VocabLookup(keys, vocabulary_file=asset, vocab_size=n, num_oov_buckets=k)`` the export
writes, under the node's name (the ids keep their tensor name)::

    ids/vocabulary_file  Const(asset)           a saved_model_assets entry: TensorFlow's
                                                 loader feeds it the file's path
    ids/table            HashTableV2(key_dtype, int64)
    ids/table_init       InitializeTableFromTextFileV2(table, vocabulary_file,
                             key_index=-2 (the line), value_index=-1 (its number), n)
    ids                  LookupTableFindV2(table, keys, default_value)           k = 0
                         Select(NotEqual(found, -1), found,                      k > 0
                                n + StringToHashBucketFast(AsString?(keys), k))

and the table initializers become control inputs of the main op (a new ``NoOp`` when
the export has none), which TensorFlow's loader runs after restoring the variables.

Example
-------
>>> gd = {"node": [{"name": "k", "op": "Placeholder", "input": [], "attr": {},
...                 "output_dtypes": ["string"]},
...                {"name": "ids", "op": "VocabLookup", "input": ["k:0"],
...                 "attr": {"vocabulary_file": "vocab.txt", "vocab_size": 3},
...                 "output_dtypes": ["int64"]}]}
>>> new, main_op, assets = vocabulary_files_as_tables(gd, None)
>>> main_op, assets, [n["op"] for n in new["node"]][-2:]
('saved_model_tables_init', [('ids/vocabulary_file:0', 'vocab.txt')], ['LookupTableFindV2', 'NoOp'])
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework.serialization import decode_attr
from flowgraph.framework.tf_formats.rewrite_nodes import NodeMaker, source_dtype

__all__ = ["vocabulary_files_as_tables"]

_MAIN_OP = "saved_model_tables_init"
_AS_STRING = {"precision": -1, "scientific": False, "shortest": False, "width": -1,
              "fill": ""}


def _string_scalar(text: str) -> np.ndarray:
    out = np.empty((), dtype=object)
    out[()] = text.encode("utf-8")
    return out


def _as_table(node: dict, by_name: dict) -> list[dict] | None:
    attrs = {k: decode_attr(v) for k, v in node.get("attr", {}).items()}
    filename = attrs.get("vocabulary_file")
    keys = node["input"][0]
    key_dtype = source_dtype(keys, by_name)
    size = int(attrs.get("vocab_size", -1))
    oov = int(attrs.get("num_oov_buckets") or 0)
    if not filename or key_dtype not in ("string", "int64", "int32") or (oov and size < 0):
        return None  # without the vocabulary's size the OOV ids are unknown here
    m = NodeMaker(node["name"], node.get("device", ""))
    control = [r for r in node["input"][1:] if r.startswith("^")]
    table_keys = "string" if key_dtype == "string" else "int64"
    out = [
        m.const("vocabulary_file", _string_scalar(str(filename))),
        m.make("table", "HashTableV2", [], "string", {
            "key_dtype": {"dtype": table_keys}, "value_dtype": {"dtype": "int64"},
            "container": "", "shared_name": "", "use_node_name_sharing": False}),
        {**m.make("table_init", "InitializeTableFromTextFileV2",
                  [m.ref("table"), m.ref("vocabulary_file")], "string",
                  {"key_index": -2, "value_index": -1, "vocab_size": size,
                   "delimiter": "\t"}), "output_dtypes": [], "output_shapes": []},
    ]
    if key_dtype == "int32":
        out.append(m.make("keys", "Cast", [keys], "int64", {
            "SrcT": {"dtype": "int32"}, "DstT": {"dtype": "int64"}, "Truncate": False}))
        keys = m.ref("keys")
    default = -1 if oov else int(attrs.get("default_value", -1))
    out.append(m.const("default_value", np.asarray(default, np.int64)))
    find = [m.ref("table"), keys, m.ref("default_value")]
    if not oov:
        out.append({**m.make("", "LookupTableFindV2", [*find, *control], "int64",
                             {"value_dtype": {"dtype": "int64"}}),
                    "output_shapes": node.get("output_shapes", [])})
        return out
    strings = keys
    if key_dtype != "string":
        out.append(m.make("as_string", "AsString", [keys], "string", _AS_STRING))
        strings = m.ref("as_string")
    out += [
        m.make("found", "LookupTableFindV2", find, "int64",
               {"value_dtype": {"dtype": "int64"}}),
        m.make("known", "NotEqual", [m.ref("found"), m.ref("default_value")], "bool"),
        m.make("bucket", "StringToHashBucketFast", [strings], "int64", {"num_buckets": oov}),
        m.const("vocab_size", np.asarray(size, np.int64)),
        m.make("oov_id", "AddV2", [m.ref("bucket"), m.ref("vocab_size")], "int64"),
        {**m.make("", "Select", [m.ref("known"), m.ref("found"), m.ref("oov_id"), *control],
                  "int64"), "output_shapes": node.get("output_shapes", [])},
    ]
    return out


def vocabulary_files_as_tables(graph_def: dict, main_op: str | None
                               ) -> tuple[dict, str | None, list[tuple[str, str]]]:
    """`graph_def` with every vocabulary-file ``VocabLookup`` written as a table (see the
    module essay), the main op that initializes those tables, and the new assets as
    ``(tensor name, file name)`` pairs. The same dict and main op when there is none."""
    nodes = graph_def.get("node", [])
    by_name = {n["name"]: n for n in nodes}
    out, inits, assets = [], [], []
    for node in nodes:
        new = _as_table(node, by_name) if node["op"] == "VocabLookup" else None
        if new is None:
            out.append(node)
            continue
        out.extend(new)
        inits.append(f"^{node['name']}/table_init")
        assets.append((f"{node['name']}/vocabulary_file:0",
                       str(decode_attr(node["attr"]["vocabulary_file"]))))
    if not inits:
        return graph_def, main_op, []
    if main_op is None:
        name, i = _MAIN_OP, 0
        while name in by_name:
            i += 1
            name = f"{_MAIN_OP}_{i}"
        out.append({"name": name, "op": "NoOp", "input": inits, "device": "", "attr": {},
                    "output_shapes": [], "output_dtypes": []})
        main_op = name
    else:
        out = [{**n, "input": [*n.get("input", []), *inits]} if n["name"] == main_op else n
               for n in out]
    return {**graph_def, "node": out}, main_op, assets
