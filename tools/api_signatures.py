"""Compare the call signatures of flowgraph's public callables with TensorFlow 1.x's.

`tools/tf1_signatures.json` holds, for every public callable of ``tensorflow.compat.v1``
and of the submodules `tools/coverage.py` counts, its parameters (name, kind, and the
default when it is a plain literal), recorded once from TensorFlow 2.15 (``--record``,
run under TensorFlow). `compare()` looks each one up on ``import flowgraph as tf`` and
reports what a TF1 program would trip on:

- ``missing``: a parameter TF accepts that flowgraph does not (a keyword call fails);
- ``order``: the positional parameters differ in order (a positional call misbinds);
- ``default``: a literal default that differs (an omitted argument behaves otherwise);
- ``required``: a parameter flowgraph requires where TF has a default.

Classes are compared by their ``__init__``. A flowgraph callable taking ``**kwargs``
accepts every name; one taking ``*args`` is not checked for order.

Members: `tools/tf1_members.json` holds the public attributes (``dir()``) of every public
class; `missing_members()` lists those flowgraph's same-named classes lack. Many are
TF 2 only (eager, DTensor, Keras 3, protobuf internals), so the gaps known when the file
was last accepted are kept in `tools/tf1_member_gaps.json` (``--accept``), and
tests/compat/test_api_signatures.py fails on a gap that is not there (a member removed or
a new class that lacks one).

Usage::

    python tools/api_signatures.py                 # print the differences
    python tools/api_signatures.py --members       # print the missing class members
    python tools/api_signatures.py --accept        # record today's member gaps
    /tmp/tf-oracle-venv/bin/python tools/api_signatures.py --record   # under TensorFlow
"""

from __future__ import annotations

import argparse
import inspect
import json
import pathlib
import types

ROOT = pathlib.Path(__file__).resolve().parent.parent
NAMES = ROOT / "tools" / "tf1_names.json"
SIGNATURES = ROOT / "tools" / "tf1_signatures.json"
MEMBERS = ROOT / "tools" / "tf1_members.json"
MEMBER_GAPS = ROOT / "tools" / "tf1_member_gaps.json"
# Parameter kinds as stored: positional-only, positional-or-keyword, keyword-only, *, **.
_KINDS = {"POSITIONAL_ONLY": "o", "POSITIONAL_OR_KEYWORD": "p", "KEYWORD_ONLY": "k",
          "VAR_POSITIONAL": "*", "VAR_KEYWORD": "**"}
POSITIONAL = ("o", "p")


def _literal(value) -> list:
    """``[]`` (no default), ``["v", literal]``, or ``["<object>", type name]``."""
    if value is inspect.Parameter.empty:
        return []
    plain = (bool, int, float, str, type(None))
    if isinstance(value, plain):
        return ["v", value]
    if isinstance(value, tuple | list) and all(isinstance(x, plain) for x in value):
        return ["v", list(value)]
    return ["<object>", type(value).__name__]


def _parameters(obj):
    target = obj.__init__ if inspect.isclass(obj) else obj
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return None
    return [[p.name, _KINDS[p.kind.name], *_literal(p.default)]
            for p in sig.parameters.values()
            if not (p.name == "self" and inspect.isclass(obj))]


def _public_objects(tf1):
    """``(module.name, object)`` for every public name of tools/tf1_names.json."""
    names = json.loads(NAMES.read_text())["modules"]
    for module, members in names.items():
        owner = tf1 if module == "tf" else getattr(tf1, module)
        for name in members:
            try:
                yield f"{module}.{name}", getattr(owner, name)
            except Exception:
                continue


def record() -> None:
    """Write tools/tf1_signatures.json and tools/tf1_members.json from the installed
    TensorFlow."""
    import tensorflow as tf2
    import tensorflow.compat.v1 as tf1

    signatures, members = {}, {}
    for key, obj in _public_objects(tf1):
        if inspect.isclass(obj):
            members[key] = sorted(a for a in dir(obj) if a[:1] != "_")
        if isinstance(obj, types.ModuleType) or not callable(obj):
            continue
        params = _parameters(obj)
        if params is not None:
            signatures[key] = params
    source = f"tensorflow {tf2.__version__}, tf.compat.v1"
    _write_table(SIGNATURES, source + " (inspect.signature)", "signatures", signatures)
    _write_table(MEMBERS, source + " (dir() of the classes)", "members", members)


def _write_table(path: pathlib.Path, source: str, key: str, table: dict) -> None:
    lines = [f"{json.dumps(k)}: {json.dumps(table[k], separators=(',', ':'))}"
             for k in sorted(table)]
    path.write_text('{"_source": ' + json.dumps(source) + f',\n"{key}": {{\n'
                    + ",\n".join(lines) + "\n}}\n")


def missing_members() -> dict[str, list[str]]:
    """``{class: [member TF has and flowgraph's class lacks, ...]}`` as imported now."""
    import flowgraph as tf

    recorded = json.loads(MEMBERS.read_text())["members"]
    gaps = {}
    for key, members in sorted(recorded.items()):
        module, name = key.split(".", 1)
        try:
            obj = getattr(tf if module == "tf" else getattr(tf, module), name)
        except Exception:
            continue
        if not inspect.isclass(obj):
            continue
        missing = [m for m in members if not hasattr(obj, m)]
        if missing:
            gaps[key] = missing
    return gaps


def _same_default(tf_default, ours) -> bool:
    if ours is inspect.Parameter.empty:
        return False
    if isinstance(ours, tuple | list):
        ours = list(ours)
    # An int and a list of that int (a layer's strides: 1 and (1, 1)) mean the same.
    if isinstance(tf_default, list) and isinstance(ours, int) and not isinstance(ours, bool):
        ours = [ours] * len(tf_default)
    return (type(ours) is type(tf_default) and ours == tf_default) or \
        (isinstance(ours, int | float) and not isinstance(ours, bool) and
         isinstance(tf_default, int | float) and not isinstance(tf_default, bool) and
         ours == tf_default)


def compare() -> dict[str, list[str]]:
    """``{kind: [difference, ...]}`` for flowgraph as imported now (kinds as above)."""
    import flowgraph as tf

    recorded = json.loads(SIGNATURES.read_text())["signatures"]
    found: dict[str, list[str]] = {"missing": [], "order": [], "default": [], "required": []}
    for key, tf_params in sorted(recorded.items()):
        module, name = key.split(".", 1)
        try:
            obj = getattr(tf if module == "tf" else getattr(tf, module), name)
        except Exception:
            continue  # an absent name is tools/coverage.py's business
        ours = _parameters(obj)
        if ours is None:
            continue
        target = obj.__init__ if inspect.isclass(obj) else obj
        by_name = {p.name: p for p in inspect.signature(target).parameters.values()}
        kinds = {p[1] for p in ours}
        named = [p for p in tf_params if p[1] not in ("*", "**")]
        if "**" not in kinds:
            missing = [p[0] for p in named if p[0] not in by_name]
            if missing:
                found["missing"].append(f"{key}: {', '.join(missing)}")
        tf_order = [p[0] for p in named if p[1] in POSITIONAL]
        our_order = [p[0] for p in ours if p[1] in POSITIONAL]
        if "*" not in kinds and our_order[:len(tf_order)] != tf_order:
            found["order"].append(f"{key}: TF ({', '.join(tf_order)}), flowgraph "
                                  f"({', '.join(our_order)})")
        for pname, _, *default in named:
            param = by_name.get(pname)
            if param is None or not default or default[0] == "<object>":
                continue
            if param.default is inspect.Parameter.empty:
                found["required"].append(f"{key}({pname}): TF's default {default[1]!r}")
            elif not _same_default(default[1], param.default) and \
                    isinstance(param.default, bool | int | float | str | tuple | list):
                found["default"].append(f"{key}({pname}): TF {default[1]!r}, flowgraph "
                                        f"{param.default!r}")
    return found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--record", action="store_true",
                        help="write tools/tf1_signatures.json and tools/tf1_members.json "
                             "(run under TensorFlow)")
    parser.add_argument("--members", action="store_true",
                        help="print the class members flowgraph lacks")
    parser.add_argument("--accept", action="store_true",
                        help="write today's member gaps to tools/tf1_member_gaps.json")
    args = parser.parse_args(argv)
    if args.record:
        record()
        return 0
    if args.members or args.accept:
        gaps = missing_members()
        if args.accept:
            _write_table(MEMBER_GAPS, "tools/api_signatures.py --accept", "gaps", gaps)
        for key, missing in gaps.items():
            print(f"{key}: {', '.join(missing)}")
        print(f"== {sum(map(len, gaps.values()))} members missing in {len(gaps)} classes")
        return 0
    for kind, lines in compare().items():
        print(f"== {kind}: {len(lines)}")
        for line in lines:
            print("  ", line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
