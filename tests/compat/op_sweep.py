"""Differential op sweep: run generated op cases under a TF-like module and record results.

Test support for ``test_op_sweep_tf215.py``. The cases (``op_sweep_cases.py``) are small
builders ``fn(tf) -> outputs`` or ``fn(tf) -> (outputs, xs)``; this module runs each one in
a graph of its own under whatever module it is handed (TensorFlow's ``compat.v1`` or
flowgraph) and records, per case:

* ``err``: where it failed (``build``/``run``/``grad``) and the exception's class name,
  plus the first words of the message (``msg``, informative only);
* ``out``: one entry per output: dtype name, static shape (``None`` for unknown rank,
  ``None`` entries for unknown dimensions), the dynamic shape and the flat values
  (floats as ``%.7g`` numbers or ``"nan"``/``"inf"``/``"-inf"``, complex as ``[re, im]``,
  bytes decoded);
* ``grad``: ``tf.gradients(outputs, xs)`` for the float outputs, in the same format
  (``None`` where TF returns ``None``).

Recording TF's side (TensorFlow 2.15 in the oracle's environment)::

    /tmp/tf-oracle-venv/bin/python tests/compat/op_sweep.py --tf > tests/data/op_sweep_tf215.json

and flowgraph's side with ``--flowgraph``; ``--diff FILE`` compares flowgraph against a
recorded file and prints one line per differing case.
"""

from __future__ import annotations

import json
import math
import sys

import numpy as np

_FLOAT_TOL = {"float16": 1e-2, "bfloat16": 2e-2, "float32": 1e-4, "float64": 1e-6,
              "complex64": 1e-4, "complex128": 1e-6}


def _num(x):
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return float(f"{x:.7g}")


def fmt_value(a) -> list:
    """Flat JSON-able values of one fetched array."""
    a = np.asarray(a)
    flat = a.reshape(-1)
    if a.dtype.kind == "f":
        return [_num(x) for x in flat]
    if a.dtype.kind == "c":
        return [[_num(x.real), _num(x.imag)] for x in flat]
    if a.dtype.kind in "SO":
        return [x.decode("utf-8", "backslashreplace") if isinstance(x, bytes) else str(x)
                for x in flat]
    if a.dtype.kind == "b":
        return [bool(x) for x in flat]
    if a.dtype.kind in "iu":
        return [int(x) for x in flat]
    return [str(x) for x in flat]


def _static(t):
    shape = t.get_shape()
    if shape.ndims is None:
        return None
    return [None if d is None else int(d) for d in shape.as_list()]


def _flatten(outs):
    if isinstance(outs, (list, tuple)):
        flat = []
        for o in outs:
            flat.extend(_flatten(o))
        return flat
    if hasattr(outs, "indices") and hasattr(outs, "dense_shape"):
        return [outs.indices, outs.values, outs.dense_shape]
    return [outs]


def _error(stage, e):
    text = str(e)
    if "Graph execution error" in text:  # TensorFlow's: skip the creation traceback
        lines = [ln for ln in text.splitlines() if ln.strip() and not ln[0].isspace()
                 and not ln.startswith(("Graph execution", "Detected at", "Node:", "Registered",
                                        "Original stack", "File ", "<"))]
        text = lines[-1] if lines else text
    msg = " ".join(text.split())[:120]
    return {"stage": stage, "type": type(e).__name__, "msg": msg}


def run_case(tf, fn) -> dict:
    """Build, run and differentiate one case in a fresh graph under module ``tf``."""
    rec: dict = {}
    with tf.Graph().as_default():
        try:
            res = fn(tf)
            xs = []
            if isinstance(res, dict):
                outs, xs = res["out"], res.get("xs", [])
            else:
                outs = res
            outs = _flatten(outs)
            outs = [tf.convert_to_tensor(o) for o in outs]
            rec["out"] = [{"dtype": o.dtype.name, "static": _static(o)} for o in outs]
        except Exception as e:  # the class is what we record
            rec["err"] = _error("build", e)
            return rec
        grads = None
        float_outs = [o for o in outs if o.dtype.is_floating]
        if xs and float_outs:
            try:
                grads = tf.gradients(float_outs, xs)
            except Exception as e:
                rec["err"] = _error("grad", e)
        with tf.Session() as sess:
            try:
                vals = sess.run(outs)
            except Exception as e:
                rec["err"] = _error("run", e)
                return rec
            for entry, v in zip(rec["out"], vals):
                entry["shape"] = list(np.shape(v))
                entry["v"] = fmt_value(v)
            if grads is not None:
                live = [g for g in grads if g is not None]
                try:
                    gvals = iter(sess.run(live))
                    rec["grad"] = [None if g is None else fmt_value(_dense(next(gvals)))
                                   for g in grads]
                except Exception as e:
                    rec["err"] = _error("grad", e)
    return rec


def _dense(g):
    if hasattr(g, "indices") and hasattr(g, "values") and hasattr(g, "dense_shape"):
        out = np.zeros(g.dense_shape, g.values.dtype)
        np.add.at(out, g.indices, g.values)
        return out
    return g


def _close(a, b, tol) -> bool:
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y, tol) for x, y in zip(a, b))
    if isinstance(a, str) or isinstance(b, str) or isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    return abs(a - b) <= tol * max(1.0, abs(a), abs(b))


def compare(want: dict, got: dict) -> list[str]:
    """The differences between two records, one short string each (empty: they agree)."""
    diffs = []
    we, ge = want.get("err"), got.get("err")
    if we or ge:
        if not (we and ge):
            return [f"error: want {we and (we['stage'], we['type'])} got "
                    f"{ge and (ge['stage'], ge['type'], ge['msg'][:80])}"]
        if (we["stage"], we["type"]) != (ge["stage"], ge["type"]):
            diffs.append(f"error: want {we['stage']}/{we['type']} got {ge['stage']}/"
                         f"{ge['type']} ({ge['msg'][:80]})")
        if we["stage"] != "grad":
            return diffs
    wo, go = want.get("out", []), got.get("out", [])
    if len(wo) != len(go):
        return [*diffs, f"outputs: want {len(wo)} got {len(go)}"]
    for i, (w, g) in enumerate(zip(wo, go)):
        for key in ("dtype", "static", "shape"):
            if key in w and w.get(key) != g.get(key):
                diffs.append(f"out{i} {key}: want {w.get(key)} got {g.get(key)}")
        if "v" in w and w.get("shape") == g.get("shape"):
            tol = _FLOAT_TOL.get(w["dtype"], 0.0)
            if not _close(w["v"], g.get("v"), tol):
                diffs.append(f"out{i} values: want {w['v'][:8]} got {(g.get('v') or [])[:8]}")
    wg, gg = want.get("grad"), got.get("grad")
    if wg is not None or gg is not None:
        if wg is None or gg is None or len(wg) != len(gg):
            diffs.append(f"grad: want {wg} got {gg}")
        else:
            for i, (w, g) in enumerate(zip(wg, gg)):
                if (w is None) != (g is None) or (w is not None and not _close(w, g, 1e-3)):
                    diffs.append(f"grad{i}: want {w and w[:8]} got {g and g[:8]}")
    return diffs


def record_all(tf, cases, out=sys.stdout):
    """One JSON line per case: ``{"id": ..., ...record}``."""
    out.write("{\n")
    first = True
    for cid, fn in cases:
        rec = run_case(tf, fn)
        out.write(("" if first else ",\n") + json.dumps(cid) + ": "
                  + json.dumps(rec, separators=(",", ":")))
        first = False
    out.write("\n}\n")


def _main(argv):
    import importlib
    import os

    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:0] = [here, os.path.dirname(os.path.dirname(here))]  # the cases, flowgraph
    import op_sweep_cases

    if argv[0] == "--tf":
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        tf = importlib.import_module("tensorflow.compat.v1")
        tf.disable_v2_behavior()
        tf.get_logger().setLevel("ERROR")
    else:
        tf = importlib.import_module("flowgraph")
    cases = op_sweep_cases.all_cases()
    if len(argv) > 1 and argv[0] != "--diff":
        cases = [c for c in cases if c[0].startswith(argv[1])]
    if argv[0] == "--diff":
        with open(argv[1]) as f:
            want = json.load(f)
        prefix = argv[2] if len(argv) > 2 else ""
        bad = 0
        for cid, fn in cases:
            if cid not in want or not cid.startswith(prefix):
                continue
            d = compare(want[cid], run_case(tf, fn))
            if d:
                bad += 1
                print(cid, "|", "; ".join(d))
        print(f"{bad} differing cases", file=sys.stderr)
        return
    record_all(tf, cases)


if __name__ == "__main__":
    import warnings

    warnings.filterwarnings("ignore")
    _main(sys.argv[1:] or ["--flowgraph"])
