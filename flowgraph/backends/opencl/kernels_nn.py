"""OpenCL kernels for MatMul, Softmax (last axis) and SoftmaxCrossEntropyWithLogits.

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
  are four kernels of one program (`_A`/`_B` index macros).

Softmax and the cross-entropy give each row one work-group of `GROUP` items: a max, a
sum of ``exp(x - max)`` (both reduced in local memory), then the outputs.
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
GROUP = 64
PANEL_R = 8  # CPU form: rows of C per work-item (scalars of A per K step)
PANEL_V = 2  # CPU form: float16 vectors of C per row (loads of B per K step)
PANEL_W = 16 * PANEL_V  # CPU form: columns of C per work-item
_MATMUL: dict[np.dtype, str] = {}
_PANEL_SOURCE: list[str] = []
_SOFTMAX: dict[np.dtype, str] = {}


def _matmul_source(dtype: np.dtype) -> str:
    code = _MATMUL.get(dtype)
    if code is not None:
        return code
    parts = [header(dtype), f"#define T {CTYPES[dtype]}",
             f"#define BM {TILE}\n#define BN {TILE}\n#define BK {TILE_K}\n#define WG {WG}\n"
             f"#define RB {TILE // WG}"]
    for ta in (0, 1):
        for tb in (0, 1):
            a = "a[aoff + (k) * M + (i)]" if ta else "a[aoff + (i) * K + (k)]"
            b = "b[boff + (j) * K + (k)]" if tb else "b[boff + (k) * N + (j)]"
            parts.append(f"""
__kernel __attribute__((reqd_work_group_size(WG, WG, 1)))
void matmul_{ta}{tb}(__global T* c, __global const T* a, int aoff, __global const T* b,
                     int boff, int M, int N, int K) {{
  __local T As[BK][BM + 1];
  __local T Bs[BK][BN + 1];
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
      if (r < M && col < N) c[r * N + col] = acc[p][q];
    }}
  }}
}}""")
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


def _softmax_source(dtype: np.dtype) -> str:
    code = _SOFTMAX.get(dtype)
    if code is not None:
        return code
    code = _SOFTMAX[dtype] = header(dtype) + f"""
#define T {CTYPES[dtype]}
#define G {GROUP}
inline T group_max(__local T* part, T v) {{
  int l = get_local_id(0);
  part[l] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = G / 2; s > 0; s >>= 1) {{
    if (l < s) part[l] = (part[l] >= part[l + s] || ISNAN(part[l])) ? part[l]
                                                                           : part[l + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }}
  T r = part[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return r;
}}
inline T group_sum(__local T* part, T v) {{
  int l = get_local_id(0);
  part[l] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = G / 2; s > 0; s >>= 1) {{
    if (l < s) part[l] += part[l + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }}
  T r = part[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return r;
}}
/* A row's maximum (NaN wins, as in NumPy) and the sum of exp(x - max) over it. */
inline T row_max_expsum(__local T* part, __global const T* src, int C, T* sum) {{
  int l = get_local_id(0);
  T m = -INFINITY;
  for (int j = l; j < C; j += G) m = (m >= src[j] || ISNAN(m)) ? m : src[j];
  m = group_max(part, m);
  T s = 0;
  for (int j = l; j < C; j += G) s += exp(src[j] - m);
  *sum = group_sum(part, s);
  return m;
}}

__kernel __attribute__((reqd_work_group_size(G, 1, 1)))
void softmax(__global T* out, __global const T* x, int xoff, int C) {{
  __local T part[G];
  int row = get_group_id(0), l = get_local_id(0);
  __global const T* src = x + xoff + (long)row * C;
  __global T* dst = out + (long)row * C;
  T s;
  T m = row_max_expsum(part, src, C, &s);
  for (int j = l; j < C; j += G) dst[j] = exp(src[j] - m) / s;
}}

__kernel __attribute__((reqd_work_group_size(G, 1, 1)))
void xent(__global T* loss, __global T* backprop, __global const T* x, int xoff,
          __global const T* y, int yoff, int C) {{
  __local T part[G];
  int row = get_group_id(0), l = get_local_id(0);
  __global const T* src = x + xoff + (long)row * C;
  __global const T* lab = y + yoff + (long)row * C;
  __global T* dst = backprop + (long)row * C;
  T s;
  T m = row_max_expsum(part, src, C, &s);
  T lse = log(s);
  T acc = 0;
  for (int j = l; j < C; j += G) {{
    T z = src[j] - m;
    if (lab[j] != 0) acc += lab[j] * (lse - z);
    dst[j] = exp(z - lse) - lab[j];
  }}
  acc = group_sum(part, acc);
  if (l == 0) loss[row] = acc;
}}"""
    return code


@opencl_kernel("Softmax", dtypes=FLOATS, fresh=True)
def softmax(x, *, axis=-1):
    """Softmax over the last axis (other axes raise NotImplementedError)."""
    if x.ndim < 1:
        raise ValueError(f"logits must have rank at least 1, got shape {x.shape}")
    if axis not in (-1, x.ndim - 1):
        raise NotImplementedError(f"Softmax on the OpenCL backend supports the last axis "
                                  f"only, not axis {axis} of shape {list(x.shape)}")
    rt, (x,) = on_device(x)
    check_dtype(rt, x.dtype, "Softmax")
    check_size(x.size, "Softmax")
    out = rt.empty(x.shape, x.dtype)
    if x.size == 0:
        return out
    x = contiguous(rt, x)
    C = x.shape[-1]
    rows = x.size // C
    xb, xo, _ = operand(x)
    knl = get_kernel(rt, _softmax_source(x.dtype), "softmax")
    launch(rt, knl, (rows * GROUP,), (GROUP,), out.data, xb, np.int32(xo), np.int32(C))
    return out


@opencl_kernel("SoftmaxCrossEntropyWithLogits", dtypes=FLOATS, fresh=True)
def softmax_cross_entropy_with_logits(features, labels):
    if features.ndim != 2 or labels.shape != features.shape:
        raise NotImplementedError(
            "SoftmaxCrossEntropyWithLogits on the OpenCL backend needs 2-D logits and "
            f"labels of the same shape, got {list(features.shape)} and "
            f"{list(labels.shape)}")
    rt, (features, labels) = on_device(features, labels)
    check_dtype(rt, features.dtype, "SoftmaxCrossEntropyWithLogits")
    check_size(features.size, "SoftmaxCrossEntropyWithLogits")
    rows, C = features.shape
    if C == 0 or rows == 0:
        return fill(rt, (rows,), features.dtype, 0), rt.empty((rows, C), features.dtype)
    features, labels = contiguous(rt, features), contiguous(rt, labels)
    loss = rt.empty((rows,), features.dtype)
    backprop = rt.empty((rows, C), features.dtype)
    xb, xo, _ = operand(features)
    yb, yo, _ = operand(labels)
    knl = get_kernel(rt, _softmax_source(features.dtype), "xent")
    launch(rt, knl, (rows * GROUP,), (GROUP,), loss.data, backprop.data, xb, np.int32(xo),
           yb, np.int32(yo), np.int32(C))
    return loss, backprop
