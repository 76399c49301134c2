"""OpenCL kernels for MatMul, BatchMatMul and BatchMatMulV2 (softmax and the
cross-entropies: `kernels_softmax`).

MatMul has two forms, chosen per device (`_cpu_shaped`):

* CPU-type devices (PoCL), float32: the shape of a CPU BLAS. Each work-item (work-groups
  of one item, which PoCL runs as one task each) owns an R x 16V block of C (`PANEL_R` x
  `PANEL_W`; 8 x 16 for N <= `SKINNY_N`) held in ``float16`` registers and walks K once:
  per step V vector loads of B, R scalar loads of A and R·V vector multiply-adds written
  as plain ``*``/``+`` (PoCL does not inline ``vload16``/``fma``, which costs 20x). A is
  read where it is, in either layout (rows past M read as row M - 1 and are never
  stored); B is read where it is when its rows are whole column blocks of an aligned
  pool buffer (`_b_in_place`), else a packing kernel first copies it into column panels
  (``bp[jb][k][c]``, zero padded, ``transpose_b`` resolved; a transposed B of aligned
  rows is read a 16-vector at a time). Consecutive work-items
  share a B panel, which stays in L2. Packing A as well cost a launch and a pass over A
  for nothing: the 256-row products of an MLP step ran 10-20% faster without it.
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
from flowgraph.backends.opencl._runtime import runtime_of
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
    vector_aligned,
)
from flowgraph.backends.opencl.launches import Recorder, keep

TILE = 32  # a work-group computes a TILE x TILE block of the product
TILE_K = 16  # the K-extent of the tiles held in local memory
WG = 8  # WG x WG work-items, each accumulating (TILE / WG)^2 outputs in registers
PANEL_R = 8  # CPU form: rows of C per work-item (scalars of A per K step)
PANEL_V = 2  # CPU form: float16 vectors of C per row (loads of B per K step)
PANEL_W = 16 * PANEL_V  # CPU form: columns of C per work-item
SKINNY_N = 16  # CPU form: products this narrow take one float16 vector per row
_MATMUL: dict[np.dtype, str] = {}
_PANEL_SOURCE: dict[int, str] = {}  # vectors per row -> program


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
            parts.append(_tiled_kernel(f"matmul_{ta}{tb}", "int M, int N, int K, int coff",
                                       "long ao = aoff, bo = boff;\n  c += coff;", ta, tb))
    code = _MATMUL[dtype] = "\n".join(parts)
    return code


def _panel_source(V: int = PANEL_V) -> str:
    """The CPU form's program (float32) for blocks of `V` float16 vectors per row: packing
    kernels ``pack_b_<t>`` for both layouts of B, and the product kernels ``gemm_a<t>``
    reading A in either layout in place."""
    code = _PANEL_SOURCE.get(V)
    if code is not None:
        return code
    R, W = PANEL_R, 16 * V
    acc = [f"c{r}_{v}" for r in range(R) for v in range(V)]
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
    for t, b_at in ((0, "b[boff + (long)k * N + j]"), (1, "b[boff + (long)j * K + k]")):
        parts.append(f"""
__kernel void pack_b_{t}(__global float* bp, __global const float* b, int boff, int N, int K) {{
  int k = get_global_id(0), jb = get_global_id(1);
  __global float* d = bp + ((long)jb * K + k) * W;
  for (int e = 0; e < W; ++e) {{
    int j = jb * W + e;
    d[e] = j < N ? {b_at} : 0.0f;
  }}
}}""")
    # B transposed (N x K) with K a multiple of 16, aligned: one 16-vector of a row of B
    # per work-item, stored down a panel column (3-4x faster than `pack_b_1` on PoCL).
    spread = " ".join(f"d[{kk} * W] = v.s{kk:x};" for kk in range(16))
    parts.append(f"""
__kernel void pack_b_1v(__global float* bp, __global const float* b, int boff, int N, int K) {{
  int j = get_global_id(0), kb = get_global_id(1);
  int jb = j / W, e = j % W, k0 = kb * 16;
  __global float* d = bp + ((long)jb * K + k0) * W + e;
  if (j < N) {{
    float16 v = *(__global const float16*)(b + boff + (long)j * K + k0);
    {spread}
  }} else {{
    for (int kk = 0; kk < 16; ++kk) d[kk * W] = 0.0f;
  }}
}}""")
    # A's rows past M are read as row M - 1 (clamped) and never stored.
    for t in (0, 1):
        if t == 0:  # A is M x K: one pointer per row, element k
            rows = "\n".join(f"  __global const float* a{r} = a + aoff + "
                             f"(long)min(i0 + {r}, M - 1) * K;" for r in range(R))
            load, advance = (lambda r: f"a{r}[k]"), ""
        else:  # A is K x M: row k of A holds column k of op(A)
            rows = "  __global const float* ak = a + aoff;\n" + "\n".join(
                f"  int q{r} = min(i0 + {r}, M - 1);" for r in range(R))
            load, advance = (lambda r: f"ak[q{r}]"), "ak += M;"
        step = "\n".join(
            f"    {{ float s = {load(r)}; "
            + " ".join(f"c{r}_{v} = c{r}_{v} + s * b{v};" for v in range(V)) + " }"
            for r in range(R))
        parts.append(f"""
__kernel void gemm_a{t}(__global float* c, int coff, __global const float* a, int aoff,
                      __global const float16* b, int b0, int bjb, int bstep,
                      int M, int N, int K) {{
  int ib = get_global_id(0), jb = get_global_id(1);
  c += coff;
  int i0 = ib * R, j0 = jb * W;
{rows}
  __global const float16* pb = b + b0 + (long)jb * bjb;
  float16 {" = (float16)(0.0f), ".join(acc)} = (float16)(0.0f);
  for (int k = 0; k < K; ++k) {{
    {" ".join(f"float16 b{v} = pb[{v}];" for v in range(V))}
{step}
    {advance}
    pb += bstep;
  }}
{chr(10).join(store)}
}}""")
    code = _PANEL_SOURCE[V] = "\n".join(parts)
    return code


def _cpu_shaped(rt, dtype) -> bool:
    """Whether MatMul takes the packed-panel form: float32 on a CPU-type OpenCL device."""
    return dtype == np.float32 and rt.is_cpu  # (a driver query per call cost ~1 µs)


def _out_at(rt, out, dtype, M, N):
    """(output array, its buffer, the element offset of the M x N result in it): a fresh
    array when `out` is None, else the contiguous view `out` (a batch matrix)."""
    if out is None:
        out = rt.empty((M, N), dtype)
    cb, co, _ = operand(out)
    return out, cb, np.int32(co)


def _panel_vectors(N: int) -> int:
    """float16 vectors per row of a work-item's block: one for a skinny product (a 10-class
    output layer computed 32 columns for 10 with two)."""
    return 1 if N <= SKINNY_N else PANEL_V


def _b_in_place(b, N: int, transpose_b: bool) -> bool:
    """Whether the product reads B's rows as they are (no packing): B is K x N with N a
    multiple of its blocks' width, aligned for ``float16`` loads (`vector_aligned`)."""
    return not transpose_b and N % (16 * _panel_vectors(N)) == 0 and vector_aligned(b)


def _matmul_panels(rt, a, b, M, N, K, transpose_a, transpose_b, out=None, launch=launch):
    """C = op(A) op(B) in the CPU form (see the module docstring), into `out` (a
    contiguous M x N view) when given; `launch`: the launching function (a
    `launches.Recorder` keeps the launches)."""
    V = _panel_vectors(N)
    mb, nb = -(-M // PANEL_R), -(-N // (16 * V))
    check_size(nb * 16 * V * K, "MatMul")
    out, cb, co = _out_at(rt, out, np.float32, M, N)
    src = _panel_source(V)
    ab, ao, _ = operand(a)
    bb, bo, _ = operand(b)
    m_, n_, k_ = np.int32(M), np.int32(N), np.int32(K)
    if _b_in_place(b, N, transpose_b):  # in float16 units: start, per column block, per k
        bargs = (bb, np.int32(bo // 16), np.int32(V), np.int32(N // 16))
    else:
        bp = rt.empty((nb * 16 * V * K,), np.float32)
        if transpose_b and K % 16 == 0 and vector_aligned(b):
            launch(rt, get_kernel(rt, src, "pack_b_1v"), (nb * 16 * V, K // 16), None,
                   bp.data, bb, np.int32(bo), n_, k_)
        else:
            launch(rt, get_kernel(rt, src, f"pack_b_{int(transpose_b)}"), (K, nb), None,
                   bp.data, bb, np.int32(bo), n_, k_)
        bargs = (bp.data, np.int32(0), np.int32(K * V), np.int32(V))
    launch(rt, get_kernel(rt, src, f"gemm_a{int(transpose_a)}"), (mb, nb), (1, 1), cb, co,
           ab, np.int32(ao), *bargs, m_, n_, k_)
    return out


def _matmul_form(rt, a, b, M, N, K):
    """How MatMul computes: ("panels", B aligned) on CPU-type devices, else the tuned
    candidate's name or `gemm.DIRECT`."""
    if _cpu_shaped(rt, a.dtype):
        return "panels", vector_aligned(b)
    if a.dtype == np.float32:
        return gemm.choose(rt, gemm.size_class(M, N, K),
                           lambda a, b, M, N, K: _matmul_direct(rt, a, b, M, N, K, 0, 0))
    return gemm.DIRECT


@opencl_kernel("MatMul", dtypes=FLOATS, fresh=True)
def matmul(a, b, *, transpose_a=False, transpose_b=False):
    """The product, its launches kept per signature (`launches.Recorder`): shapes,
    strides, offsets, dtypes, transposes and the form (`_matmul_form`)."""
    sig = None
    if (hasattr(a, "base_data") and hasattr(b, "base_data") and a.ndim == b.ndim == 2
            and a.size and b.size):
        rt = runtime_of(a)
        M = a.shape[1] if transpose_a else a.shape[0]
        K, N = b.shape if not transpose_b else b.shape[::-1]
        sig = ("MatMul", transpose_a, transpose_b, _matmul_form(rt, a, b, M, N, K),
               a.shape, a.strides, a.offset, a.dtype, b.shape, b.strides, b.offset, b.dtype)
        kept = rt.launches.get(sig)
        if kept is not None:
            return kept(rt, a, b)
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
    given = (a, b)
    a, b = contiguous(rt, a), contiguous(rt, b)
    run = launch
    if sig is not None and a is given[0] and b is given[1]:  # nothing copied: keep it
        recorder = Recorder((a, b))
        run = recorder if recorder.usable() else launch
    form = _matmul_form(rt, a, b, M, N, K)
    if form[0] == "panels":
        out = _matmul_panels(rt, a, b, M, N, K, transpose_a, transpose_b, launch=run)
    elif form != gemm.DIRECT:
        out = gemm.run_tiled(rt, gemm.CANDIDATES[form], a, b, M, N, K, transpose_a,
                             transpose_b, run, operand)
    else:
        out = _matmul_direct(rt, a, b, M, N, K, transpose_a, transpose_b, launch=run)
    if run is not launch:
        keep(rt, sig, run.finish(out))
    return out


def _matmul_direct(rt, a, b, M, N, K, transpose_a, transpose_b, out=None, launch=launch):
    """C = op(A) op(B) with the tiled kernel of the module docstring (no packing), into
    `out` (a contiguous M x N view) when given; `launch` as in `_matmul_panels`."""
    out, cb, co = _out_at(rt, out, a.dtype, M, N)
    ab, ao, _ = operand(a)
    bb, bo, _ = operand(b)
    knl = get_kernel(rt, _matmul_source(a.dtype), f"matmul_{int(transpose_a)}{int(transpose_b)}")
    gsize = (-(-N // TILE) * WG, -(-M // TILE) * WG)
    launch(rt, knl, gsize, (WG, WG), cb, ab, np.int32(ao), bb, np.int32(bo),
           np.int32(M), np.int32(N), np.int32(K), co)
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
    """One product per batch matrix, on views of the operands, each written straight
    into its matrix of `out`.

    Never through ``out3[i] = product``: pyopencl's ``Array.__setitem__`` launches
    pyopencl's own cached copy kernel, whose arguments it sets and enqueues outside
    `launch`'s lock, so two executor threads doing so at once could swap arguments and
    copy one product into the other's output (a PoCL parity run once saw one batch
    matrix of 18 values taken from the wrong rows)."""
    M, N = out.shape[-2:]
    K = a.shape[-2] if adj_x else a.shape[-1]
    # explicit batch sizes: -1 is ambiguous for an operand with K == 0
    a3 = a.reshape((int(np.prod(a.shape[:-2], dtype=np.int64)), *a.shape[-2:]))
    b3 = b.reshape((int(np.prod(b.shape[:-2], dtype=np.int64)), *b.shape[-2:]))
    out3 = out.reshape((int(np.prod(batch, dtype=np.int64)), M, N))
    product = _matmul_panels if _cpu_shaped(rt, a.dtype) else _matmul_direct
    for i, index in enumerate(np.ndindex(*batch)):
        product(rt, a3[_batch_index(index, a.shape[:-2])], b3[_batch_index(index, b.shape[:-2])],
                M, N, K, adj_x, adj_y, out=out3[i])
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
