"""OpenCL kernels for MatMul, BatchMatMul and BatchMatMulV2 (softmax and the
cross-entropies: `kernels_softmax`).

MatMul has two forms, chosen per device (`_cpu_shaped`):

* CPU-type devices (PoCL), float32: the shape of a CPU BLAS. Two cheap packing kernels
  copy A into row panels (``ap[ib][k][r]``: `PANEL_R` rows of A, K-major) and B into column
  panels (``bp[jb][k][c]``: `PANEL_W` = 16·`PANEL_V` columns), padding the last panel of
  each with zeros and resolving ``transpose_a``/``transpose_b`` while copying. Then each
  work-item (work-groups of one item, which PoCL runs as one task each) owns an
  R x 16V block of C held in ``float16`` registers and walks K once: per step V vector loads
  of B, R scalar loads of A and R·V vector multiply-adds written as plain ``*``/``+``
  (PoCL does not inline ``vload16``/``fma``, which costs 20x). Consecutive work-items share a
  B panel, which stays in L2. On the 2-core PoCL CPU device this runs at OpenBLAS's speed.
* Other devices (GPUs), and float64 everywhere: a tiled, register-blocked product. Each
  8x8 work-group computes a 32x32 block of the output, loading a 32x16 tile of A and a
  16x32 tile of B into local memory per step along K; each work-item accumulates a 4x4
  block (rows ``lr + 8p``, columns ``lc + 8q``) in registers. Tiles overhanging the
  matrices are padded with zeros, so any M, N, K works. The four transpose combinations
  are four kernels of one program (`_tiled_kernel`; BatchMatMul adds batch offsets).
"""

from __future__ import annotations

import numpy as np

from flowgraph.backends.opencl import gemm, opencl_kernel
from flowgraph.backends.opencl.kernels_elementwise import (
    CTYPES,
    FLOATS,
    check_dtype,
    check_size,
    contiguous,
    fill,
    get_kernel,
    header,
    launch,
    on_device,
    operand,
)

TILE = 32  # a work-group computes a TILE x TILE block of the product
TILE_K = 16  # the K-extent of the tiles held in local memory
WG = 8  # WG x WG work-items, each accumulating (TILE / WG)^2 outputs in registers
PANEL_R = 8  # CPU form: rows of C per work-item (scalars of A per K step)
PANEL_V = 2  # CPU form: float16 vectors of C per row (loads of B per K step)
PANEL_W = 16 * PANEL_V  # CPU form: columns of C per work-item
_MATMUL: dict[np.dtype, str] = {}
_PANEL_SOURCE: list[str] = []


def _tiled_kernel(name: str, params: str, prologue: str, ta: int, tb: int) -> str:
    """One tiled product kernel (see the module docstring): `params` after the operands,
    `prologue` setting ``long ao, bo`` (where A and B start) and moving ``c``."""
    a = "a[ao + (long)(k) * M + (i)]" if ta else "a[ao + (long)(i) * K + (k)]"
    b = "b[bo + (long)(j) * K + (k)]" if tb else "b[bo + (long)(k) * N + (j)]"
    return f"""
__kernel __attribute__((reqd_work_group_size(WG, WG, 1)))
void {name}(__global T* c, __global const T* a, int aoff, __global const T* b, int boff,
            {params}) {{
  __local T As[BK][BM + 1];
  __local T Bs[BK][BN + 1];
  {prologue}
  int lc = get_local_id(0), lr = get_local_id(1), tid = lr * WG + lc;
  int row0 = get_group_id(1) * BM, col0 = get_group_id(0) * BN;
  T acc[RB][RB];
  for (int p = 0; p < RB; ++p)
    for (int q = 0; q < RB; ++q) acc[p][q] = 0;
  for (int t = 0; t < K; t += BK) {{
    for (int e = tid; e < BM * BK; e += WG * WG) {{
      int i = row0 + e / BK, k = t + e % BK;
      As[e % BK][e / BK] = (i < M && k < K) ? {a} : (T)0;
    }}
    for (int e = tid; e < BK * BN; e += WG * WG) {{
      int k = t + e / BN, j = col0 + e % BN;
      Bs[e / BN][e % BN] = (k < K && j < N) ? {b} : (T)0;
    }}
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int kk = 0; kk < BK; ++kk) {{
      T av[RB], bv[RB];
      for (int p = 0; p < RB; ++p) av[p] = As[kk][lr + WG * p];
      for (int q = 0; q < RB; ++q) bv[q] = Bs[kk][lc + WG * q];
      for (int p = 0; p < RB; ++p)
        for (int q = 0; q < RB; ++q) acc[p][q] += av[p] * bv[q];
    }}
    barrier(CLK_LOCAL_MEM_FENCE);
  }}
  for (int p = 0; p < RB; ++p) {{
    int r = row0 + lr + WG * p;
    for (int q = 0; q < RB; ++q) {{
      int col = col0 + lc + WG * q;
      if (r < M && col < N) c[(long)r * N + col] = acc[p][q];
    }}
  }}
}}"""


def _tiled_prelude(dtype: np.dtype) -> list[str]:
    return [header(dtype), f"#define T {CTYPES[dtype]}",
            f"#define BM {TILE}\n#define BN {TILE}\n#define BK {TILE_K}\n#define WG {WG}\n"
            f"#define RB {TILE // WG}"]


def _matmul_source(dtype: np.dtype) -> str:
    code = _MATMUL.get(dtype)
    if code is not None:
        return code
    parts = _tiled_prelude(dtype)
    for ta in (0, 1):
        for tb in (0, 1):
            parts.append(_tiled_kernel(f"matmul_{ta}{tb}", "int M, int N, int K",
                                       "long ao = aoff, bo = boff;", ta, tb))
    code = _MATMUL[dtype] = "\n".join(parts)
    return code


def _panel_source() -> str:
    """The CPU form's program (float32): packing kernels ``pack_a_<t>``/``pack_b_<t>`` for
    both layouts of each operand and the ``gemm`` kernel on the packed panels."""
    if _PANEL_SOURCE:
        return _PANEL_SOURCE[0]
    R, V, W = PANEL_R, PANEL_V, PANEL_W
    acc = [f"c{r}_{v}" for r in range(R) for v in range(V)]
    step = "\n".join(
        f"    {{ float a = pa[{r}]; "
        + " ".join(f"c{r}_{v} = c{r}_{v} + a * b{v};" for v in range(V)) + " }"
        for r in range(R))
    store = []
    for r in range(R):
        store.append(f"  if (i0 + {r} < M) {{\n"
                     f"    __global float* cr = c + (long)(i0 + {r}) * N + j0;")
        for v in range(V):
            tail = " ".join(f"if (j0 + {16 * v + e} < N) cr[{16 * v + e}] = c{r}_{v}.s{e:X};"
                            for e in range(16))
            store.append(f"    if (j0 + {16 * (v + 1)} <= N) vstore16(c{r}_{v}, {v}, cr);\n"
                         f"    else {{ {tail} }}")
        store.append("  }")
    parts = [f"#define R {R}\n#define V {V}\n#define W {W}"]
    for t, a_at, b_at in ((0, "a[aoff + (long)i * K + k]", "b[boff + (long)k * N + j]"),
                          (1, "a[aoff + (long)k * M + i]", "b[boff + (long)j * K + k]")):
        parts.append(f"""
__kernel void pack_a_{t}(__global float* ap, __global const float* a, int aoff, int M, int K) {{
  int k = get_global_id(0), ib = get_global_id(1);
  __global float* d = ap + ((long)ib * K + k) * R;
  for (int r = 0; r < R; ++r) {{
    int i = ib * R + r;
    d[r] = i < M ? {a_at} : 0.0f;
  }}
}}
__kernel void pack_b_{t}(__global float* bp, __global const float* b, int boff, int N, int K) {{
  int k = get_global_id(0), jb = get_global_id(1);
  __global float* d = bp + ((long)jb * K + k) * W;
  for (int e = 0; e < W; ++e) {{
    int j = jb * W + e;
    d[e] = j < N ? {b_at} : 0.0f;
  }}
}}""")
    parts.append(f"""
__kernel void gemm(__global float* c, __global const float* ap, __global const float16* bp,
                   int M, int N, int K) {{
  int ib = get_global_id(0), jb = get_global_id(1);
  int i0 = ib * R, j0 = jb * W;
  __global const float* pa = ap + (long)ib * K * R;
  __global const float16* pb = bp + (long)jb * K * V;
  float16 {" = (float16)(0.0f), ".join(acc)} = (float16)(0.0f);
  for (int k = 0; k < K; ++k) {{
    {" ".join(f"float16 b{v} = pb[{v}];" for v in range(V))}
{step}
    pa += R;
    pb += V;
  }}
{chr(10).join(store)}
}}""")
    _PANEL_SOURCE.append("\n".join(parts))
    return _PANEL_SOURCE[0]


def _cpu_shaped(rt, dtype) -> bool:
    """Whether MatMul takes the packed-panel form: float32 on a CPU-type OpenCL device."""
    return dtype == np.float32 and bool(rt.device.type & rt.cl.device_type.CPU)


def _matmul_panels(rt, a, b, M, N, K, transpose_a, transpose_b):
    """C = op(A) op(B) through packed panels (the CPU form; see the module docstring)."""
    mb, nb = -(-M // PANEL_R), -(-N // PANEL_W)
    for n in (mb * PANEL_R * K, nb * PANEL_W * K):
        check_size(n, "MatMul")
    ap = rt.empty((mb * PANEL_R * K,), np.float32)
    bp = rt.empty((nb * PANEL_W * K,), np.float32)
    out = rt.empty((M, N), np.float32)
    src = _panel_source()
    ab, ao, _ = operand(a)
    bb, bo, _ = operand(b)
    m_, n_, k_ = np.int32(M), np.int32(N), np.int32(K)
    launch(rt, get_kernel(rt, src, f"pack_a_{int(transpose_a)}"), (K, mb), None,
           ap.data, ab, np.int32(ao), m_, k_)
    launch(rt, get_kernel(rt, src, f"pack_b_{int(transpose_b)}"), (K, nb), None,
           bp.data, bb, np.int32(bo), n_, k_)
    launch(rt, get_kernel(rt, src, "gemm"), (mb, nb), (1, 1), out.data, ap.data, bp.data,
           m_, n_, k_)
    return out


@opencl_kernel("MatMul", dtypes=FLOATS, fresh=True)
def matmul(a, b, *, transpose_a=False, transpose_b=False):
    if a.ndim != 2 or b.ndim != 2:
        raise ValueError(f"In[0] and In[1] must be matrices: In[0]: {list(a.shape)}, "
                         f"In[1]: {list(b.shape)}")
    M, K = (a.shape[1], a.shape[0]) if transpose_a else a.shape
    K2, N = (b.shape[1], b.shape[0]) if transpose_b else b.shape
    if K != K2:
        raise ValueError(f"Matrix size-incompatible: In[0]: {list(a.shape)}, In[1]: "
                         f"{list(b.shape)} (inner dimensions {K} vs {K2})")
    rt, (a, b) = on_device(a, b)
    check_dtype(rt, a.dtype, "MatMul")
    if M * N == 0:
        return rt.empty((M, N), a.dtype)
    if K == 0:
        return fill(rt, (M, N), a.dtype, 0)
    for n in (M * K, K * N, M * N):
        check_size(n, "MatMul")
    a, b = contiguous(rt, a), contiguous(rt, b)
    if _cpu_shaped(rt, a.dtype):
        return _matmul_panels(rt, a, b, M, N, K, transpose_a, transpose_b)
    if a.dtype == np.float32:
        choice = gemm.choose(rt, gemm.size_class(M, N, K),
                             lambda a, b, M, N, K: _matmul_direct(rt, a, b, M, N, K, 0, 0))
        if choice != gemm.DIRECT:
            return gemm.run_tiled(rt, gemm.CANDIDATES[choice], a, b, M, N, K, transpose_a,
                                  transpose_b, launch, operand)
    return _matmul_direct(rt, a, b, M, N, K, transpose_a, transpose_b)


def _matmul_direct(rt, a, b, M, N, K, transpose_a, transpose_b):
    """C = op(A) op(B) with the tiled kernel of the module docstring (no packing)."""
    out = rt.empty((M, N), a.dtype)
    ab, ao, _ = operand(a)
    bb, bo, _ = operand(b)
    knl = get_kernel(rt, _matmul_source(a.dtype), f"matmul_{int(transpose_a)}{int(transpose_b)}")
    gsize = (-(-N // TILE) * WG, -(-M // TILE) * WG)
    launch(rt, knl, gsize, (WG, WG), out.data, ab, np.int32(ao), bb, np.int32(bo),
           np.int32(M), np.int32(N), np.int32(K))
    return out


# -- BatchMatMul, BatchMatMulV2 ----------------------------------------------------------------
# GPUs (and float64): one launch of a batched copy of the direct tiled product, the batch
# index in dimension 2 of the grid; each batch matrix of A and B starts at an offset given by
# up to BATCH_DIMS batch dimensions (after merging, `collapse`) with element strides, 0 on a
# broadcast dimension. CPU-type devices (float32): `matmul`'s packed-panel form once per
# batch matrix, on views of the operands.
BATCH_DIMS = 3
_BATCHED: dict[np.dtype, str] = {}


def _batched_source(dtype: np.dtype) -> str:
    code = _BATCHED.get(dtype)
    if code is not None:
        return code
    parts = _tiled_prelude(dtype)
    params = ("int M, int N, int K, int d1, int d2, int sa0, int sa1, int sa2, int sb0, "
              "int sb1, int sb2")
    prologue = """int z = get_group_id(2);
  int i2 = z % d2, i1 = (z / d2) % d1, i0 = z / d2 / d1;
  long ao = aoff + (long)i0 * sa0 + (long)i1 * sa1 + (long)i2 * sa2;
  long bo = boff + (long)i0 * sb0 + (long)i1 * sb1 + (long)i2 * sb2;
  c += (long)z * M * N;"""
    for ta in (0, 1):
        for tb in (0, 1):
            parts.append(_tiled_kernel(f"bmm_{ta}{tb}", params, prologue, ta, tb))
    code = _BATCHED[dtype] = "\n".join(parts)
    return code


def _batch_strides(x, batch: tuple[int, ...]) -> tuple[int, ...]:
    """Element strides of `x`'s batch dimensions broadcast to `batch` (0 where broadcast)."""
    _, _, st = operand(x)
    dims, st = x.shape[:-2], st[:-2]
    pad = len(batch) - len(dims)
    return (0,) * pad + tuple(0 if d == 1 and full != 1 else s
                              for d, s, full in zip(dims, st, batch[pad:], strict=True))


def _batch_index(index: tuple[int, ...], dims: tuple[int, ...]) -> int:
    """The flat batch position in an operand of batch `dims` of broadcast batch `index`."""
    index = index[len(index) - len(dims):]
    flat = 0
    for i, d in zip(index, dims, strict=True):
        flat = flat * d + (0 if d == 1 else i)
    return flat


def _batched_per_matrix(rt, a, b, out, batch, adj_x, adj_y):
    """`matmul` once per batch matrix, on views of the operands, copied into `out`."""
    M, N = out.shape[-2:]
    # explicit batch sizes: -1 is ambiguous for an operand with K == 0
    a3 = a.reshape((int(np.prod(a.shape[:-2], dtype=np.int64)), *a.shape[-2:]))
    b3 = b.reshape((int(np.prod(b.shape[:-2], dtype=np.int64)), *b.shape[-2:]))
    out3 = out.reshape((int(np.prod(batch, dtype=np.int64)), M, N))
    for i, index in enumerate(np.ndindex(*batch)):
        out3[i] = matmul(a3[_batch_index(index, a.shape[:-2])],
                         b3[_batch_index(index, b.shape[:-2])],
                         transpose_a=adj_x, transpose_b=adj_y)
    return out


def batch_matmul(a, b, adj_x: bool, adj_y: bool, broadcast: bool, op_type: str):
    """``a @ b`` over the leading (batch) dimensions (see the section comment);
    `broadcast` lets batch dimensions broadcast (BatchMatMulV2)."""
    from flowgraph.backends.opencl.kernels_elementwise import collapse

    if a.ndim < 2 or b.ndim < 2:
        raise ValueError(f"In[0] and In[1] must have rank >= 2: In[0]: {list(a.shape)}, "
                         f"In[1]: {list(b.shape)}")
    k1 = a.shape[-2] if adj_x else a.shape[-1]
    k2 = b.shape[-1] if adj_y else b.shape[-2]
    if k1 != k2:
        raise ValueError(f"Matrix size-incompatible: In[0]: {list(a.shape)}, In[1]: "
                         f"{list(b.shape)} (inner dimensions {k1} vs {k2})")
    if not broadcast and a.shape[:-2] != b.shape[:-2]:
        raise ValueError(f"In[0] and In[1] must have the same batch dimensions: "
                         f"{list(a.shape)} vs {list(b.shape)}")
    try:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise ValueError(f"In[0] and In[1] batch dimensions do not broadcast: "
                         f"{list(a.shape)} vs {list(b.shape)}") from None
    rt, (a, b) = on_device(a, b)
    check_dtype(rt, a.dtype, op_type)
    M = a.shape[-1] if adj_x else a.shape[-2]
    N = b.shape[-2] if adj_y else b.shape[-1]
    out = rt.empty((*batch, M, N), a.dtype)
    if out.size == 0:
        return out
    if k1 == 0:
        return fill(rt, out.shape, out.dtype, 0)
    for n in (a.size, b.size, out.size):
        check_size(n, op_type)
    a, b = contiguous(rt, a), contiguous(rt, b)
    dims, strides = collapse(batch, [_batch_strides(a, batch), _batch_strides(b, batch)])
    if _cpu_shaped(rt, a.dtype) or len(dims) > BATCH_DIMS:
        return _batched_per_matrix(rt, a, b, out, batch, adj_x, adj_y)
    pad = BATCH_DIMS - len(dims)
    dims = (1,) * pad + dims
    sa, sb = ((0,) * pad + s for s in strides)
    ab, ao, _ = operand(a)
    bb, bo, _ = operand(b)
    knl = get_kernel(rt, _batched_source(a.dtype), f"bmm_{int(adj_x)}{int(adj_y)}")
    count = int(np.prod(dims, dtype=np.int64))
    gsize = (-(-N // TILE) * WG, -(-M // TILE) * WG, count)
    launch(rt, knl, gsize, (WG, WG, 1), out.data, ab, np.int32(ao), bb, np.int32(bo),
           np.int32(M), np.int32(N), np.int32(k1), np.int32(dims[1]), np.int32(dims[2]),
           *(np.int32(v) for v in (*sa, *sb)))
    return out


@opencl_kernel("BatchMatMul", dtypes=FLOATS, fresh=True)
def batch_matmul_v1(a, b, *, adj_x=False, adj_y=False):
    return batch_matmul(a, b, adj_x, adj_y, False, "BatchMatMul")


@opencl_kernel("BatchMatMulV2", dtypes=FLOATS, fresh=True)
def batch_matmul_v2(a, b, *, adj_x=False, adj_y=False):
    return batch_matmul(a, b, adj_x, adj_y, True, "BatchMatMulV2")
