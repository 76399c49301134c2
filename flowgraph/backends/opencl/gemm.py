"""Single-precision GEMM for GPU-type OpenCL devices, and the tuner that picks its tiles.

``C = op(A) op(B)`` runs in three launches. Two packing kernels copy A into ``At[Kp][Mp]``
(K-major, so that a tile's rows are contiguous along M) and B into ``Bp[Kp][Np]``,
resolving the transpose flags and padding M, N, K with zeros up to multiples of the tile;
the product kernel then needs no bounds checks on its loads and reads ``float4`` vectors
only. Each work-group of `Tile.threads` items computes a ``bm x bn`` block of C: per step
along K it stages a ``bk x bm`` slice of At and a ``bk x bn`` slice of Bp in local
memory, while the next slices already travel into registers, and each work-item
accumulates a ``tm x tn`` block in ``float4`` registers. A work-item's rows and columns
are interleaved in chunks of four (chunk ``c`` of the columns starts at
``4 * (c * threads_x + tx)``), so that neighbouring items read neighbouring ``float4`` of
local memory, which keeps the reads free of bank conflicts.

No one tile suits every device and size: a 128x128 block with 8x8 per item feeds an H200
best on large products but leaves most of its 132 multiprocessors idle on a 256x512 one,
and small products are cheapest with no packing at all (the direct tiled kernel of
`kernels_nn`, candidate ``"direct"``). `choose` measures every candidate once per device
and size class (`SIZE_CLASSES`) and keeps the winners in a JSON file (`CACHE_FILE`,
see `flowgraph.backends.tuning_cache`; ``FLOWGRAPH_OPENCL_TUNE=0`` skips the measuring
and takes `DEFAULT`). CPU-type devices use the packed-panel form of `kernels_nn` instead.

Example
-------
>>> Tile(128, 128, 8, 8, 8).threads
256
"""

from __future__ import annotations

import hashlib
import os
import threading
from dataclasses import dataclass

import numpy as np

from flowgraph.backends import tuning_cache


@dataclass(frozen=True)
class Tile:
    """A ``bm x bn`` block of C per work-group, ``bk`` along K per step, a ``tm x tn``
    block per work-item (multiples of four)."""

    bm: int
    bn: int
    bk: int
    tm: int
    tn: int

    @property
    def name(self) -> str:
        return f"{self.bm}x{self.bn}x{self.bk}/{self.tm}x{self.tn}"

    @property
    def threads(self) -> int:
        return (self.bm // self.tm) * (self.bn // self.tn)

    def valid(self) -> bool:
        t = self.threads
        return (self.tm % 4 == 0 and self.tn % 4 == 0 and self.bm % self.tm == 0
                and self.bn % self.tn == 0 and t <= 256
                and (self.bk * self.bm // 4) % t == 0 and (self.bk * self.bn // 4) % t == 0)


CANDIDATES = {t.name: t for t in (
    Tile(128, 128, 8, 8, 8), Tile(128, 128, 16, 8, 8), Tile(128, 64, 16, 8, 4),
    Tile(64, 128, 16, 4, 8), Tile(64, 64, 16, 4, 4), Tile(64, 64, 32, 4, 4),
)}
DIRECT = "direct"
DEFAULT = {"small": DIRECT, "medium": DIRECT, "large": "128x64x16/8x4",
           "huge": "128x128x8/8x8"}  # what an H200 chose (docs/devices.md)
# (name, largest M*N*K of the class, the shape measured for it)
SIZE_CLASSES = (("small", 2 ** 21, (128, 128, 128)), ("medium", 2 ** 28, (512, 512, 512)),
                ("large", 2 ** 34, (2048, 2048, 2048)), ("huge", None, (4096, 4096, 4096)))


def size_class(m: int, n: int, k: int) -> str:
    work = m * n * k
    for name, limit, _ in SIZE_CLASSES:
        if limit is None or work <= limit:
            return name
    raise AssertionError("unreachable")


def product_source(tile: Tile) -> str:
    """The OpenCL source of the product kernel ``gemm`` for `tile` (see the module
    docstring)."""
    tx, ty = tile.bn // tile.tn, tile.bm // tile.tm
    cm, cn = tile.tm // 4, tile.tn // 4
    la, lb = tile.bk * tile.bm // 4 // tile.threads, tile.bk * tile.bn // 4 // tile.threads
    acc = [f"c{i}_{d}" for i in range(tile.tm) for d in range(cn)]
    step = []
    for c in range(cm):
        for r in range(4):
            i = 4 * c + r
            step.append(" ".join(f"c{i}_{d} = mad((float4)(a{c}.s{r}), b{d}, c{i}_{d});"
                                 for d in range(cn)))
    store = []
    for c in range(cm):
        for r in range(4):
            i = 4 * c + r
            store.append(f"  row = m0 + 4 * ({c} * TY + ty) + {r};\n  if (row < M) {{")
            for d in range(cn):
                store.append(
                    f"    col = n0 + 4 * ({d} * TX + tx);\n"
                    f"    if (col + 4 <= N) vstore4(c{i}_{d}, 0, C + (long)row * N + col);\n"
                    f"    else {{ float v[4] = {{c{i}_{d}.s0, c{i}_{d}.s1, c{i}_{d}.s2, "
                    f"c{i}_{d}.s3}}; for (int e = 0; e < 4 && col + e < N; ++e) "
                    f"C[(long)row * N + col + e] = v[e]; }}")
            store.append("  }")
    loads = "\n".join(
        [f"    ra{j} = At[(long)(k0 + ({j} * NT + tid) / (BM / 4)) * (Mp / 4) + m0 / 4 "
         f"+ ({j} * NT + tid) % (BM / 4)];" for j in range(la)]
        + [f"    rb{j} = Bp[(long)(k0 + ({j} * NT + tid) / (BN / 4)) * (Np / 4) + n0 / 4 "
           f"+ ({j} * NT + tid) % (BN / 4)];" for j in range(lb)])
    stage = "\n".join(
        [f"    As[({j} * NT + tid) / (BM / 4)][({j} * NT + tid) % (BM / 4)] = ra{j};"
         for j in range(la)]
        + [f"    Bs[({j} * NT + tid) / (BN / 4)][({j} * NT + tid) % (BN / 4)] = rb{j};"
           for j in range(lb)])
    return f"""
#define BM {tile.bm}
#define BN {tile.bn}
#define BK {tile.bk}
#define TX {tx}
#define TY {ty}
#define NT {tile.threads}
__kernel __attribute__((reqd_work_group_size(NT, 1, 1)))
void gemm(__global float* C, __global const float4* At, __global const float4* Bp,
          int M, int N, int Mp, int Np, int Kp) {{
  __local float4 As[BK][BM / 4];
  __local float4 Bs[BK][BN / 4];
  int tid = get_local_id(0), tx = tid % TX, ty = tid / TX;
  int m0 = get_group_id(1) * BM, n0 = get_group_id(0) * BN;
  float4 {" = (float4)(0.0f), ".join(acc)} = (float4)(0.0f);
  float4 {", ".join([f"ra{j}" for j in range(la)] + [f"rb{j}" for j in range(lb)])};
  int k0 = 0;
{loads}
  for (; k0 < Kp;) {{
{stage}
    barrier(CLK_LOCAL_MEM_FENCE);
    k0 += BK;
    if (k0 < Kp) {{
{loads}
    }}
    for (int kk = 0; kk < BK; ++kk) {{
      {" ".join(f"float4 a{c} = As[kk][{c} * TY + ty];" for c in range(cm))}
      {" ".join(f"float4 b{d} = Bs[kk][{d} * TX + tx];" for d in range(cn))}
      {chr(10).join("      " + s for s in step).strip()}
    }}
    barrier(CLK_LOCAL_MEM_FENCE);
  }}
  int row, col;
{chr(10).join(store)}
}}
"""


PACK_SOURCE = """
/* dst[k][i] (K-major, padded to Kp x Ip with zeros) from a row-major source holding
   either rows x K (tr = 0: element (i, k) at src[i * K + k]) or K x rows (tr = 1). */
__kernel void pack(__global float* dst, __global const float* src, int off, int rows,
                   int K, int Ip, int tr) {
  int i = get_global_id(0), k = get_global_id(1);
  float v = 0.0f;
  if (i < rows && k < K) v = tr ? src[off + (long)k * rows + i] : src[off + (long)i * K + k];
  dst[(long)k * Ip + i] = v;
}
"""


def _pad(n: int, to: int) -> int:
    return max(to, -(-n // to) * to)


def run_tiled(rt, tile: Tile, a, b, M, N, K, transpose_a, transpose_b, launch, operand):
    """C = op(A) op(B) with `tile` (float32 device arrays; `launch`/`operand` are the
    kernel modules' helpers)."""
    Mp, Np, Kp = _pad(M, tile.bm), _pad(N, tile.bn), _pad(K, tile.bk)
    at = rt.empty((Kp * Mp,), np.float32)
    bp = rt.empty((Kp * Np,), np.float32)
    out = rt.empty((M, N), np.float32)
    pack = rt.kernel(PACK_SOURCE, "pack")
    ab, ao, _ = operand(a)
    bb, bo, _ = operand(b)
    # A is M x K (or K x M when transposed); B's columns are the packed rows: B is K x N,
    # i.e. "transposed" relative to a rows x K source, unless transpose_b.
    launch(rt, pack, (Mp, Kp), None, at.data, ab, np.int32(ao), np.int32(M), np.int32(K),
           np.int32(Mp), np.int32(1 if transpose_a else 0))
    launch(rt, pack, (Np, Kp), None, bp.data, bb, np.int32(bo), np.int32(N), np.int32(K),
           np.int32(Np), np.int32(0 if transpose_b else 1))
    knl = rt.kernel(product_source(tile), "gemm", "-cl-mad-enable")
    launch(rt, knl, (Np // tile.bn * tile.threads, Mp // tile.bm), (tile.threads, 1),
           out.data, at.data, bp.data, np.int32(M), np.int32(N), np.int32(Mp), np.int32(Np),
           np.int32(Kp))
    return out


# -- the tuner -----------------------------------------------------------------------------
_choices: dict[str, dict[str, str]] = {}  # device_key -> choice, across runtimes
_tune_lock = threading.Lock()


CACHE_FILE = "opencl_gemm.json"  # under `tuning_cache.cache_dir()`


_SOURCES_HASH: list[str] = []


def device_key(rt) -> str:
    """Names the device, its driver and this module's kernels: a new driver or a changed
    kernel source measures again. (Hashing the sources costs 0.2 ms: done once.)"""
    if not _SOURCES_HASH:
        _SOURCES_HASH.append(hashlib.sha1(
            "".join(product_source(t) for t in CANDIDATES.values()).encode()
            + PACK_SOURCE.encode()).hexdigest()[:12])
    return f"{rt.platform}|{rt.name}|{rt.device.driver_version}|{_SOURCES_HASH[0]}"


def _valid_choice(choice) -> bool:
    return (isinstance(choice, dict) and set(choice) == {c for c, _, _ in SIZE_CLASSES}
            and all(v == DIRECT or v in CANDIDATES for v in choice.values()))


def choose(rt, klass: str, run_direct) -> str:
    """The candidate name for size class `klass` on device `rt` (tuned once per device:
    see the module docstring). `run_direct(a, b, M, N, K)` runs the direct kernel."""
    # Kept on the runtime itself (an id() of a collected runtime could name a new one).
    choice = rt.gemm_choice
    if choice is not None:
        return choice[klass]
    key = device_key(rt)
    choice = _choices.get(key)
    if choice is None:
        with _tune_lock:
            choice = _choices.get(key)
            if choice is None:
                choice = _load_or_tune(rt, key, run_direct)
                _choices[key] = choice
    rt.gemm_choice = choice
    return choice[klass]


def _tunable(rt) -> bool:
    """Only GPUs are measured: a CPU-type device runs this form only when a test forces
    it, where the large class alone would take minutes."""
    return rt.is_gpu


def _load_or_tune(rt, key: str, run_direct) -> dict[str, str]:
    if os.environ.get("FLOWGRAPH_OPENCL_TUNE", "1") == "0" or not _tunable(rt):
        return dict(DEFAULT)
    cached = tuning_cache.load(CACHE_FILE, key)
    if _valid_choice(cached):
        return cached
    choice = tune(rt, run_direct)
    tuning_cache.store(CACHE_FILE, key, choice)
    return choice


def tune(rt, run_direct, repeats: int = 3) -> dict[str, str]:
    """Measure every candidate on each size class's shape; the fastest per class."""
    from flowgraph.backends.opencl.kernels_elementwise import launch, operand

    rng = np.random.default_rng(0)
    choice = {}
    for klass, _, (m, n, k) in SIZE_CLASSES:
        a = rt.to_device(rng.standard_normal((m, k), dtype=np.float32))
        b = rt.to_device(rng.standard_normal((k, n), dtype=np.float32))
        runs = {DIRECT: lambda a=a, b=b, m=m, n=n, k=k: run_direct(a, b, m, n, k)}
        for name, tile in CANDIDATES.items():
            runs[name] = (lambda tile=tile, a=a, b=b, m=m, n=n, k=k:
                          run_tiled(rt, tile, a, b, m, n, k, False, False, launch, operand))
        best, best_time = DEFAULT[klass], float("inf")
        for name, run in runs.items():
            try:
                elapsed = tuning_cache.best_time(run, repeats, rt.queue.finish, repeat=1)
            except Exception:  # a tile the device cannot build or run is not a candidate
                continue
            if elapsed < best_time:
                best, best_time = name, elapsed
        choice[klass] = best
    return choice
