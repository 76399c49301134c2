"""Fusion engines side by side: flowgraph's block interpreter vs numexpr vs NumPy.

Prints one JSON line per expression and engine (µs per evaluation, best of 5 repeats),
plus numexpr's and numba's import times, which decided the engine (docs/performance.md):

    python benchmarks/bench_fusion_engines.py

numexpr and numba are optional: an engine that is not installed is reported as such.
"""

from __future__ import annotations

import flowgraph  # noqa: F401  (before NumPy: it picks OpenBLAS's kernel set)

# isort: split
import json
import subprocess
import sys
import time

import numpy as np
from flowgraph.backends.cpu._fused import Program, own_loop, ufunc_loop

from flowgraph.backends.cpu import kernel_pool


def _time(fn, number: int) -> float:
    fn()
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best * 1e6


def _cases():
    rng = np.random.default_rng(0)
    f = np.float32
    x = rng.standard_normal((256, 512)).astype(f)
    b = rng.standard_normal(512).astype(f)
    big = rng.standard_normal(1 << 22).astype(f)
    add, mul = ufunc_loop(np.add, "ff->f"), ufunc_loop(np.multiply, "ff->f")
    relu = own_loop("relu", f)
    sin, exp = ufunc_loop(np.sin, "f->f"), ufunc_loop(np.exp, "f->f")
    half = np.float32(0.5)
    yield ("bias_relu_256x512",
           Program(2, [add, relu], [(0, 1, 2), (2, -1)], [4], f), (x, b),
           lambda: np.maximum(x + b, f(0)),
           ("where(x + b > 0, x + b, 0)", {"x": x, "b": b}), 2000)
    yield ("exp_sin_mul_add_4M",
           Program(1, [mul, sin, exp, add], [(0, 2, 1), (1, 1), (1, 1), (1, 0, -1)], [4], f,
                   [half]),
           (big,), lambda: np.exp(np.sin(big * half)) + big,
           ("exp(sin(x * h)) + x", {"x": big, "h": half}), 5)
    s = np.asarray(0.5)
    dsin = ufunc_loop(np.sin, "d->d")
    yield ("sin_chain_1000_0d",
           Program(1, [dsin] * 1000, [(0, -1)] + [(-1, -1)] * 999, [], np.float64), (s,),
           lambda: _chain(s), ("sin(" * 1000 + "x" + ")" * 1000, {"x": s}), 200)


def _chain(v):
    for _ in range(1000):
        v = np.sin(v)
    return v


def _import_seconds(module: str) -> float | None:
    code = (f"import time, numpy; t = time.perf_counter(); import {module}; "
            "print(time.perf_counter() - t)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    return float(r.stdout) if r.returncode == 0 else None


def _measure(numexpr, name, program, args, numpy_fn, numexpr_case, number) -> None:
    out = np.empty(np.broadcast_shapes(*[a.shape for a in args]), program.dtype)

    def threaded():
        state, n_blocks = program.prepare(args, out)
        kernel_pool.parallel_for(n_blocks, state.run_range, grain=1, align=1)

    rows = {"flowgraph_1_thread": _time(lambda: program.run(args, out), number),
            "flowgraph_pool": _time(threaded, number),
            "numpy_unfused": _time(numpy_fn, number)}
    if numexpr is not None:
        expr, env = numexpr_case
        try:
            numexpr.evaluate(expr, local_dict=env)
            rows["numexpr"] = _time(lambda: numexpr.evaluate(expr, local_dict=env), number)
        except Exception as e:  # numexpr's own limits (e.g. expression depth)
            rows["numexpr"] = f"failed: {type(e).__name__}: {str(e)[:80]}"
    for engine, us in rows.items():
        print(json.dumps({"bench": "fusion_engines", "case": name, "engine": engine,
                          "us": us if isinstance(us, str) else round(us, 2)}))


def main() -> None:
    try:
        import numexpr
    except ImportError:
        numexpr = None
    for case in _cases():
        _measure(numexpr, *case)
    for module in ("numexpr", "numba"):
        print(json.dumps({"bench": "fusion_engines", "import": module,
                          "seconds": _import_seconds(module)}))


if __name__ == "__main__":
    main()
