"""Every GEMM form of the OpenCL backend at several sizes, on the first OpenCL device.

Usage::

    python benchmarks/opencl_gemm_sweep.py [sizes...]     # default 256 512 1024 2048 4096

One JSON line per (form, size): float32 n x n @ n x n, the best of 5 batches of calls
between two ``queue.finish()`` calls, in TFLOP/s; forms are ``direct`` (the unpacked
tiled kernel), each tile of `flowgraph.backends.opencl.gemm.CANDIDATES` (packing
included), ``matmul`` (what the MatMul kernel chose) and, where PyTorch and CUDA are
there, ``cublas_fp32`` (``torch.matmul`` with TF32 off) as the reference measured in the
same run. This is the measuring behind the tuner; `bench_opencl.py` holds the targets.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np


def _best(run, finish, number: int, repeat: int = 5) -> float:
    run()
    finish()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            run()
        finish()
        best = min(best, (time.perf_counter() - start) / number)
    return best


def _cublas(n: int):
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    torch.backends.cuda.matmul.allow_tf32 = False
    a = torch.randn(n, n, device="cuda")
    b = torch.randn(n, n, device="cuda")
    number = max(1, int(2e11 / (2 * n ** 3)))
    return _best(lambda: torch.matmul(a, b), torch.cuda.synchronize, number)


def _sweep(rt, n: int, rng) -> None:
    from flowgraph.backends.opencl import gemm, kernels_nn
    from flowgraph.backends.opencl.kernels_elementwise import launch, operand

    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    want = a @ b
    da, db = rt.to_device(a), rt.to_device(b)
    forms = {"direct": lambda: kernels_nn._matmul_direct(rt, da, db, n, n, n, 0, 0),
             "matmul": lambda: kernels_nn.matmul(da, db)}
    for name, tile in gemm.CANDIDATES.items():
        forms[name] = (lambda tile=tile: gemm.run_tiled(rt, tile, da, db, n, n, n, False,
                                                        False, launch, operand))
    flops = 2.0 * n ** 3
    for name, run in forms.items():
        try:
            got = run().get()
        except Exception as e:
            print(json.dumps({"name": f"gemm_{n}", "form": name, "error": str(e)[:200]}),
                  flush=True)
            continue
        err = float(np.max(np.abs(got - want)) / np.max(np.abs(want)))
        number = max(1, int(2e10 / flops)) if rt.is_gpu else 1
        secs = _best(run, rt.queue.finish, number)
        print(json.dumps({"name": f"gemm_{n}", "form": name, "tflops": round(
            flops / secs / 1e12, 3), "ms": round(secs * 1e3, 4), "rel_err": float(
            f"{err:.1e}"), "device": rt.name}), flush=True)
    ref = _cublas(n)
    if ref is not None:
        print(json.dumps({"name": f"gemm_{n}", "form": "cublas_fp32", "tflops": round(
            flops / ref / 1e12, 3), "ms": round(ref * 1e3, 4)}), flush=True)


def main(argv: list[str]) -> int:
    from flowgraph.backends.opencl import gemm
    from flowgraph.backends.opencl._runtime import discover

    found = discover()
    if not found:
        print(json.dumps({"name": "opencl_gemm_sweep", "skipped": "no OpenCL device"}))
        return 0
    rt = found[0]
    sizes = [int(s) for s in argv] or [256, 512, 1024, 2048, 4096]
    rng = np.random.default_rng(0)
    for n in sizes:
        _sweep(rt, n, rng)
    print(json.dumps({"name": "gemm_tuner_choice", "choice": gemm._choices}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
