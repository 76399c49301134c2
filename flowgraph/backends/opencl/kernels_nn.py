"""OpenCL kernels for MatMul, Softmax (last axis) and SoftmaxCrossEntropyWithLogits.

MatMul is a tiled, register-blocked product: each 8x8 work-group computes a 32x32 block
of the output, loading a 32x16 tile of A and a 16x32 tile of B into local memory per step
along K; each work-item accumulates a 4x4 block (rows ``lr + 8p``, columns ``lc + 8q``) in
registers. Tiles overhanging the matrices are padded with zeros, so any M, N, K works. The four
transpose combinations are four kernels of one program (`_A`/`_B` index macros).

Softmax and the cross-entropy give each row one work-group of `GROUP` items: a max, a
sum of ``exp(x - max)`` (both reduced in local memory), then the outputs.
"""

from __future__ import annotations

import numpy as np

from flowgraph.backends.opencl import opencl_kernel
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
_MATMUL: dict[np.dtype, str] = {}
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

__kernel __attribute__((reqd_work_group_size(G, 1, 1)))
void softmax(__global T* out, __global const T* x, int xoff, int C) {{
  __local T part[G];
  int row = get_group_id(0), l = get_local_id(0);
  __global const T* src = x + xoff + (long)row * C;
  __global T* dst = out + (long)row * C;
  T m = -INFINITY;
  for (int j = l; j < C; j += G) m = (m >= src[j] || ISNAN(m)) ? m : src[j];
  m = group_max(part, m);
  T s = 0;
  for (int j = l; j < C; j += G) s += exp(src[j] - m);
  s = group_sum(part, s);
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
  T m = -INFINITY;
  for (int j = l; j < C; j += G) m = (m >= src[j] || ISNAN(m)) ? m : src[j];
  m = group_max(part, m);
  T s = 0;
  for (int j = l; j < C; j += G) s += exp(src[j] - m);
  T lse = log(group_sum(part, s));
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
