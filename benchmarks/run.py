"""Run flowgraph's benchmarks; print one JSON object per workload, one per line.

Usage::

    python benchmarks/run.py            # the engine workloads (about a minute)
    python benchmarks/run.py chain_1000 parallel
    python benchmarks/run.py all        # engine + every bench_*.py suite (about 15 min)
    python benchmarks/run.py mlp canned # suites by name (see SUITES)

Every line has ``name``, ``unit``, ``flowgraph`` (flowgraph's figure), ``reference``
(the same work without flowgraph, measured in the same process, interleaved with
flowgraph's repeats so that drift hits both alike), ``ratio`` (flowgraph / reference),
``target``, ``met``, ``notes`` and ``blas``. What each workload measures is in
docs/benchmarks.md.
"""

from __future__ import annotations

import concurrent.futures
import gc
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# flowgraph before NumPy: it picks OpenBLAS's kernel set (flowgraph/framework/openblas_env.py)
import flowgraph  # noqa: F401

# isort: split
import numpy as np
import workloads

perf_counter = time.perf_counter


# -- timing helpers ----------------------------------------------------------------------
def _per_call(fn, number: int) -> float:
    t0 = perf_counter()
    for _ in range(number):
        fn()
    return (perf_counter() - t0) / number


def compare(fns: dict, number: int, repeat: int, warmup: int = 2) -> dict:
    """Best per-call time of each callable; repeats interleaved across the callables."""
    for fn in fns.values():
        for _ in range(warmup):
            fn()
    times: dict = {k: [] for k in fns}
    gc_was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeat):
            for k, fn in fns.items():
                times[k].append(_per_call(fn, number))
    finally:
        if gc_was_enabled:
            gc.enable()
    return {k: min(v) for k, v in times.items()}


def blas_info() -> dict:
    """The BLAS libraries loaded in this process (threadpoolctl), and who uses which."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:  # pragma: no cover - threadpoolctl is a test dependency
        return {"error": "threadpoolctl is not installed"}
    infos = [info for info in threadpool_info() if info.get("user_api") == "blas"]
    libs = [
        {k: info.get(k) for k in ("internal_api", "version", "architecture", "num_threads",
                                  "threading_layer")}
        | {"file": os.path.basename(info.get("filepath", ""))}
        for info in infos
    ]

    def loaded_by(package: str) -> list[str]:
        # wheels keep their bundled libraries in <package>.libs/
        return [os.path.basename(i.get("filepath", "")) for i in infos
                if f"{os.sep}{package}.libs{os.sep}" in i.get("filepath", "")]

    numpy_libs = loaded_by("numpy") or [lib["file"] for lib in libs]
    return {
        "libraries": libs,
        # MatMul, convolutions, ufuncs and the references all call NumPy's BLAS.
        "flowgraph": numpy_libs,
        "reference": numpy_libs,
        "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"),
        # the kernel set NumPy's OpenBLAS runs (SkylakeX: AVX-512; Haswell/Zen: AVX2)
        "kernels": sorted({lib["architecture"] for lib in libs
                           if lib["file"] in numpy_libs and lib["architecture"]}),
    }


def emit(name, unit, fg, ref, target, met, notes, blas, **extra) -> dict:
    ratio = fg / ref if ref else None
    line = {
        "name": name, "unit": unit, "flowgraph": _round(fg), "reference": _round(ref),
        "ratio": _round(ratio), "target": target, "met": met, "notes": "; ".join(notes),
        "blas": blas,
    }
    line.update(extra)
    print(json.dumps(line), flush=True)
    return line


def _round(x):
    if x is None:
        return None
    return float(f"{x:.4g}")


# -- workloads ---------------------------------------------------------------------------
def bench_import_time(blas, runs: int = 5) -> dict:
    # Users import from compiled bytecode; this sandbox may set PYTHONDONTWRITEBYTECODE,
    # so write the .pyc files once (a warm-up import) and measure with them.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

    def fresh(module: str) -> float:
        code = (f"import time; t = time.perf_counter(); import {module}; "
                f"print(time.perf_counter() - t)")
        out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                             text=True, env=env).stdout
        return float(out.strip().splitlines()[-1])

    fresh("flowgraph")

    fg, ref = [], []
    for _ in range(runs):  # interleaved, so disk-cache state is shared
        fg.append(fresh("flowgraph"))
        ref.append(fresh("numpy"))
    fg_s, ref_s = statistics.median(fg), statistics.median(ref)
    return emit("import_time", "s", fg_s, ref_s, "flowgraph <= 0.3 s", fg_s <= 0.3,
                [f"median of {runs} fresh interpreters; time of the import statement "
                 "only (interpreter start-up excluded); reference: import numpy"], blas)


def bench_session_overhead(blas) -> dict:
    w = workloads.one_op()
    with w.session() as sess:
        feed = w.feed_dict
        y = w.fetches
        run = sess.run
        t = compare({"fg": lambda: run(y, feed), "ref": w.reference}, number=2000, repeat=7)
    fg_us, ref_us = t["fg"] * 1e6, t["ref"] * 1e6
    return emit("session_overhead", "us/call", fg_us, ref_us, "ratio <= 15",
                fg_us / ref_us <= 15,
                ["sess.run(tf.sin(x), {x: float32[16]}) vs np.sin(v); best of 7 x 2000 calls"],
                blas)


def bench_random_init(blas) -> dict:
    """A weight initializer's cost: ``tf.truncated_normal`` of 1M float32 values (TF's
    Philox stream and rejection layout, so seeded programs get TF's numbers) against
    NumPy's own normal generator. Session 14's NumPy Box-Muller made it 10x slower
    unnoticed: no other workload draws random values in its timed loop."""
    import flowgraph as tf

    rng = np.random.default_rng(1)
    with tf.Graph().as_default():
        t = tf.truncated_normal([1024, 1024], seed=1)
        with tf.Session() as sess:
            run = sess.run
            times = compare({"fg": lambda: run(t),
                             "ref": lambda: rng.standard_normal((1024, 1024), np.float32)},
                            number=3, repeat=7)
    fg_ms, ref_ms = times["fg"] * 1e3, times["ref"] * 1e3
    return emit("random_init", "ms", fg_ms, ref_ms, "ratio <= 6", fg_ms / ref_ms <= 6,
                ["tf.truncated_normal([1024, 1024], seed=1) in a session vs "
                 "np.random.default_rng().standard_normal((1024, 1024), float32); best of "
                 "7 x 3 calls"], blas)


def bench_per_node(w: workloads.Workload, blas, number: int = 10, repeat: int = 9) -> dict:
    with w.session() as sess:
        feed = w.feed_dict
        y = w.fetches
        run = sess.run
        got = run(y, feed)
        np.testing.assert_allclose(got, w.reference(), rtol=1e-6)
        fns = {"fg": lambda: run(y, feed), "ref": w.reference}
        if w.ndarray_reference is not None:
            fns["ref_nd"] = w.ndarray_reference
        t = compare(fns, number=number, repeat=repeat)
    fg_us, ref_us = t["fg"] * 1e6 / w.nodes, t["ref"] * 1e6 / w.nodes
    notes = [f"{w.nodes} nodes; one sess.run per repeat; reference: the same ufunc calls "
             f"as straight-line Python; best of {repeat} x {number} runs", *w.notes]
    extra = {}
    if "ref_nd" in t:
        nd_us = t["ref_nd"] * 1e6 / w.nodes
        extra = {"reference_ndarray": _round(nd_us), "ratio_vs_ndarray": _round(fg_us / nd_us)}
    return emit(w.name, "us/node", fg_us, ref_us, "ratio <= 1.3", fg_us / ref_us <= 1.3,
                notes, blas, **extra)


def bench_parallel(pw: workloads.ParallelWorkload, blas, target: float | None,
                   repeat: int = 7) -> dict:
    w = pw.workload
    # One core (one executor thread, kernels on one thread) against two (both levels).
    with w.session(1, intra_op=1) as s1, w.session(2) as s2, \
            concurrent.futures.ThreadPoolExecutor(2) as pool:
        expect = pw.serial()
        for got, want in zip(s2.run(w.fetches, w.feed_dict), expect):
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)
        t = compare({
            "fg1": lambda: s1.run(w.fetches, w.feed_dict),
            "fg2": lambda: s2.run(w.fetches, w.feed_dict),
            "serial": pw.serial,
            "pool2": lambda: pw.pooled(pool),
        }, number=1, repeat=repeat, warmup=1)
    fg_speedup = t["fg1"] / t["fg2"]
    pool_speedup = t["serial"] / t["pool2"]
    ratio = fg_speedup / pool_speedup
    notes = [f"speedup of 2 threads over 1: flowgraph inter_op_parallelism_threads=2 "
             f"(kernel threads: the default) vs inter_op 1 and intra_op 1, reference "
             f"ThreadPoolExecutor(2) vs serial; best of {repeat}", *pw.notes]
    line = {
        "name": pw.name, "unit": "speedup (x)", "flowgraph": _round(fg_speedup),
        "reference": _round(pool_speedup), "ratio": _round(ratio),
        "target": f"ratio >= {target}" if target is not None else None,
        "met": ratio >= target if target is not None else None,
        "notes": "; ".join(notes),
        "seconds": {k: _round(v) for k, v in t.items()},
        "blas": blas,
    }
    print(json.dumps(line), flush=True)
    return line


# The other benchmark families live in their own scripts (each prints its JSON lines);
# `run.py all` runs them after the engine workloads, each in a fresh interpreter.
SUITES = {
    "control_flow": "bench_control_flow.py",
    "pipeline": "bench_pipeline.py",
    "mlp": "bench_mlp.py",
    "estimator": "bench_estimator.py",
    "predictor": "bench_predictor.py",
    "canned": "bench_canned.py",
    "wide_deep": "bench_wide_deep.py",
    "opencl": "bench_opencl.py",
    "conv": "bench_conv.py",
    "fusion_engines": "bench_fusion_engines.py",
}


def run_suite(script: str) -> bool:
    """Run one benchmark script in a fresh interpreter, passing its output through."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), script)
    done = subprocess.run([sys.executable, path], check=False)
    if done.returncode != 0:
        print(json.dumps({"name": script, "error": f"exit code {done.returncode}"}),
              flush=True)
        return False
    return True


def main(argv: list[str]) -> int:
    blas = None

    def get_blas():
        nonlocal blas
        if blas is None:
            np.matmul(np.ones((64, 64)), np.ones((64, 64)))  # make sure BLAS is loaded

            blas = blas_info()
        return blas

    benches = {
        "import_time": lambda: bench_import_time(get_blas()),
        "session_overhead": lambda: bench_session_overhead(get_blas()),
        "chain_1000": lambda: bench_per_node(workloads.chain(1000), get_blas()),
        "wide_1000": lambda: bench_per_node(workloads.wide(1000), get_blas()),
        "parallel": lambda: bench_parallel(workloads.gathers(), get_blas(), 0.9),
        "parallel_matmul": lambda: bench_parallel(workloads.matmuls(), get_blas(), None),
        "random_init": lambda: bench_random_init(get_blas()),
    }
    for suite, script in SUITES.items():
        benches[suite] = lambda script=script: run_suite(script)
    if argv == ["all"]:
        names = list(benches)
    else:
        names = argv or [n for n in benches if n not in SUITES]
    unknown = [n for n in names if n not in benches]
    if unknown:
        print(f"unknown workload(s) {unknown}; choose from {list(benches)} or 'all'",
              file=sys.stderr)
        return 2
    failed = 0
    for name in names:
        failed += benches[name]() is False
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
