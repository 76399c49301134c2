"""Generate flowgraph/ops/raw_op_signatures.py: TensorFlow's input and attribute names of
every op type flowgraph registers, which `tf.raw_ops` uses to map keyword arguments.

Run in two steps, the second under TensorFlow (e.g. the tf-oracle's virtual environment)::

    python tools/raw_op_signatures.py --list > /tmp/ops.json
    /tmp/tf-oracle-venv/bin/python tools/raw_op_signatures.py --record /tmp/ops.json
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

OUT = pathlib.Path(__file__).resolve().parent.parent / "flowgraph" / "ops" / \
    "raw_op_signatures.py"
HEADER = '''"""TensorFlow's argument names of the op types flowgraph registers, for `tf.raw_ops`:
``{op_type: (inputs, attrs)}``: inputs as ``name:type_attr`` (``*`` before one that
takes a list), attributes as ``name`` or ``python_name=attr_name``; inferred attributes
(types, list lengths) are left out, as TF's wrappers leave them. Generated
once from TensorFlow 2.15's op registry (`tools/raw_op_signatures.py`); data only."""

SIGNATURES: dict[str, tuple[str, str]] = {
'''


def _chunks(text: str, width: int) -> list[str]:
    parts, line = [], ""
    for item in text.split(","):
        piece = item if not line else "," + item
        if len(line) + len(piece) > width:
            parts.append(line + ",")
            line = item
        else:
            line += piece
    return [*parts, line]


def _entry(name: str, ins: str, attrs: str) -> str:
    one = f'    "{name}": ("{ins}", "{attrs}"),'
    if len(one) <= 100:
        return one
    lines = [f'    "{name}": (']
    for text in (ins, attrs):
        chunks = _chunks(text, 80)
        lines += [f'        "{c}"' for c in chunks[:-1]] + [f'        "{chunks[-1]}",']
    return "\n".join([*lines, "    ),"])


def record(names: list[str]) -> str:
    import inspect

    import tensorflow as tf
    from tensorflow.python.framework import op_def_registry

    rows = []
    for name in sorted(names):
        op_def = op_def_registry.get(name)
        wrapper = getattr(tf.raw_ops, name, None)
        if op_def is None or wrapper is None:
            continue
        params = [p for p in inspect.signature(wrapper).parameters if p != "name"]
        n_in = len(op_def.input_arg)
        ins = ",".join(("*" if a.number_attr or a.type_list_attr else "") + py + ":"
                       + (a.type_attr or a.type_list_attr)
                       for py, a in zip(params[:n_in], op_def.input_arg))
        inferred = {x for a in op_def.input_arg
                    for x in (a.type_attr, a.number_attr, a.type_list_attr) if x}
        # The wrapper takes the attributes without a default first (each group in the
        # OpDef's order): HashTableV2(key_dtype, value_dtype, container, ...).
        explicit = [a.name for a in op_def.attr if a.name not in inferred
                    and not a.HasField("default_value")] + \
                   [a.name for a in op_def.attr if a.name not in inferred
                    and a.HasField("default_value")]
        attrs = ",".join(py if py == op else f"{py}={op}"
                         for py, op in zip(params[n_in:], explicit))
        rows.append(_entry(name, ins, attrs))
    return HEADER + "\n".join(rows) + "\n}\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="print flowgraph's op types")
    parser.add_argument("--record", metavar="OPS_JSON", help="write the module (under TF)")
    args = parser.parse_args()
    if args.list:
        from flowgraph.framework.registry import registered_ops
        from flowgraph.ops import load_all
        load_all()
        json.dump(sorted(n for n in registered_ops() if "Test" not in n), sys.stdout)
    elif args.record:
        OUT.write_text(record(json.loads(pathlib.Path(args.record).read_text())))
    else:
        parser.print_help()


if __name__ == "__main__":
    main()
