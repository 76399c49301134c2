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


# -- LogSoftmax, SparseSoftmaxCrossEntropyWithLogits -------------------------------------------
# Both extend the softmax program (its group_max/group_sum/row_max_expsum helpers): one
# work-group of GROUP items per row. LogSoftmax reads rows of any axis with a stride (the
# input viewed as [A, C, K], row (a, k) at a * C * K + k, element j at j * K). The sparse
# cross-entropy checks each row's label on the device; a bad one records its row with an
# integer atomic_min in a flag that the host reads back once.
_LOSS: dict[tuple[np.dtype, str], str] = {}
_LABEL_CTYPES = {np.dtype(np.int32): "int", np.dtype(np.int64): "long"}
_NO_BAD = 2 ** 31 - 1


def _loss_source(dtype: np.dtype, label: str) -> str:
    code = _LOSS.get((dtype, label))
    if code is not None:
        return code
    code = _LOSS[(dtype, label)] = _softmax_source(dtype) + f"""
__kernel __attribute__((reqd_work_group_size(G, 1, 1)))
void log_softmax(__global T* out, __global const T* x, int xoff, int C, int K) {{
  __local T part[G];
  int row = get_group_id(0), l = get_local_id(0);
  long base = (long)(row / K) * C * K + row % K;
  __global const T* src = x + xoff + base;
  __global T* dst = out + base;
  T m = -INFINITY;
  for (int j = l; j < C; j += G) {{
    T v = src[(long)j * K];
    m = (m >= v || ISNAN(m)) ? m : v;
  }}
  m = group_max(part, m);
  T s = 0;
  for (int j = l; j < C; j += G) s += exp(src[(long)j * K] - m);
  T lse = log(group_sum(part, s));
  for (int j = l; j < C; j += G) dst[(long)j * K] = (src[(long)j * K] - m) - lse;
}}

__kernel __attribute__((reqd_work_group_size(G, 1, 1)))
void sparse_xent(__global T* loss, __global T* backprop, __global int* bad,
                 __global const T* x, int xoff, __global const {label}* labels, int loff,
                 int C) {{
  __local T part[G];
  int row = get_group_id(0), l = get_local_id(0);
  {label} lab = labels[loff + row];
  if (lab < 0 || lab >= C) {{  /* the same for the whole group: no barrier skipped */
    if (l == 0) atomic_min(bad, row);
    return;
  }}
  __global const T* src = x + xoff + (long)row * C;
  __global T* dst = backprop + (long)row * C;
  T s;
  T m = row_max_expsum(part, src, C, &s);
  T lse = log(s);
  for (int j = l; j < C; j += G) dst[j] = exp((src[j] - m) - lse) - (j == lab ? (T)1 : (T)0);
  if (l == 0) loss[row] = lse - (src[lab] - m);
}}"""
    return code


@opencl_kernel("LogSoftmax", dtypes=FLOATS, fresh=True)
def log_softmax(x, *, axis=-1):
    """``x - log(sum(exp(x)))`` along `axis` (any axis), computed stably."""
    from flowgraph.framework.errors import InvalidArgumentError

    if not -x.ndim <= axis < x.ndim:
        raise InvalidArgumentError(None, None, f"softmax axis {axis} is out of range for "
                                               f"logits of shape {tuple(x.shape)}")
    rt, (x,) = on_device(x)
    check_dtype(rt, x.dtype, "LogSoftmax")
    check_size(x.size, "LogSoftmax")
    out = rt.empty(x.shape, x.dtype)
    if x.size == 0:
        return out
    x = contiguous(rt, x)
    a = axis % x.ndim
    C = x.shape[a]
    K = int(np.prod(x.shape[a + 1:], dtype=np.int64))
    xb, xo, _ = operand(x)
    knl = get_kernel(rt, _loss_source(x.dtype, "int"), "log_softmax")
    launch(rt, knl, (x.size // C * GROUP,), (GROUP,), out.data, xb, np.int32(xo), np.int32(C),
           np.int32(K))
    return out


@opencl_kernel("SparseSoftmaxCrossEntropyWithLogits", dtypes=FLOATS, fresh=True)
def sparse_softmax_cross_entropy_with_logits(features, labels):
    """Per-row cross-entropy of logits `features` [n, C] against class ids `labels` [n],
    and its gradient ``softmax(features) - one_hot(labels)``.

    Host labels are checked before the launch; device labels on the device, and a bad
    one raises at the end of the step (`DeviceRuntime.defer_check`): the host never
    waits for the queue here."""
    from flowgraph.framework.errors import InvalidArgumentError

    if features.ndim != 2 or tuple(labels.shape) != tuple(features.shape[:1]):
        raise InvalidArgumentError(
            None, None, "SparseSoftmaxCrossEntropyWithLogits needs logits of shape [n, C] "
            f"and labels of shape [n], got {list(features.shape)} and {list(labels.shape)}")
    rt, (features,) = on_device(features)
    check_dtype(rt, features.dtype, "SparseSoftmaxCrossEntropyWithLogits")
    check_size(features.size, "SparseSoftmaxCrossEntropyWithLogits")
    label = _LABEL_CTYPES.get(np.dtype(labels.dtype))
    if label is None:
        raise TypeError("SparseSoftmaxCrossEntropyWithLogits: labels must be int32 or int64, "
                        f"got {np.dtype(labels.dtype).name}")
    rows, C = features.shape
    loss = rt.empty((rows,), features.dtype)
    backprop = rt.empty((rows, C), features.dtype)
    if rows == 0:
        return loss, backprop
    on_host = isinstance(labels, np.ndarray)
    if on_host:
        bad = np.flatnonzero((labels < 0) | (labels >= C))
        if bad.size:
            raise InvalidArgumentError(
                None, None, f"Received a label value of {labels[bad[0]]} which is outside "
                f"the valid range of [0, {C}).  Label values: "
                f"{' '.join(str(v) for v in labels.tolist())}")
        labels = rt.to_device(labels)
    features, labels = contiguous(rt, features), contiguous(rt, labels)
    flag = fill(rt, (1,), np.int32, _NO_BAD)
    xb, xo, _ = operand(features)
    lb, lo, _ = operand(labels)
    knl = get_kernel(rt, _loss_source(features.dtype, label), "sparse_xent")
    launch(rt, knl, (rows * GROUP,), (GROUP,), loss.data, backprop.data, flag.data, xb,
           np.int32(xo), lb, np.int32(lo), np.int32(C))
    if not on_host:
        def error(first, labels=labels):
            values = labels.get()
            return InvalidArgumentError(
                None, None, f"SparseSoftmaxCrossEntropyWithLogits: received a label value "
                f"of {values[first]} which is outside the valid range of [0, {C}).  Label "
                f"values: {' '.join(str(v) for v in values.tolist())}")

        rt.defer_check(flag, _NO_BAD, error)
    return loss, backprop


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
    parts = [header(dtype), f"#define T {CTYPES[dtype]}",
             f"#define BM {TILE}\n#define BN {TILE}\n#define BK {TILE_K}\n#define WG {WG}\n"
             f"#define RB {TILE // WG}"]
    for ta in (0, 1):
        for tb in (0, 1):
            a = "a[ao + (long)(k) * M + (i)]" if ta else "a[ao + (long)(i) * K + (k)]"
            b = "b[bo + (long)(j) * K + (k)]" if tb else "b[bo + (long)(k) * N + (j)]"
            parts.append(f"""
__kernel __attribute__((reqd_work_group_size(WG, WG, 1)))
void bmm_{ta}{tb}(__global T* c, __global const T* a, int aoff, __global const T* b, int boff,
                 int M, int N, int K, int d1, int d2, int sa0, int sa1, int sa2, int sb0,
                 int sb1, int sb2) {{
  __local T As[BK][BM + 1];
  __local T Bs[BK][BN + 1];
  int z = get_group_id(2);
  int i2 = z % d2, i1 = (z / d2) % d1, i0 = z / d2 / d1;
  long ao = aoff + (long)i0 * sa0 + (long)i1 * sa1 + (long)i2 * sa2;
  long bo = boff + (long)i0 * sb0 + (long)i1 * sb1 + (long)i2 * sb2;
  c += (long)z * M * N;
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
}}""")
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
