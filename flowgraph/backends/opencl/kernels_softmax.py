"""OpenCL kernels for Softmax, LogSoftmax and the two cross-entropies.

Each row gets one work-group of `GROUP` items: a max, a sum of ``exp(x - max)`` (both
reduced in local memory), then the outputs. On CPU-type devices (PoCL) a row of at most
`ROW_ALONE` classes gets one work-item instead (`_group`): PoCL runs every barrier of a
work-group as a loop over its items, and the sparse cross-entropy of 256 rows of 10
logits took 0.4 ms in groups of 64. LogSoftmax reads rows of any axis with a
stride; the sparse cross-entropy checks each row's label (on the host when the labels
are host arrays; on the device otherwise, with a flag read at the end of the step).

Example
-------
>>> GROUP
64
"""

from __future__ import annotations

import numpy as np

from flowgraph.backends.opencl import opencl_kernel
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
)
from flowgraph.backends.opencl.launches import prepare

GROUP = 64
ROW_ALONE = 64  # CPU-type devices: rows of at most this many classes take one work-item
_SOFTMAX: dict[tuple[np.dtype, int], str] = {}


def _group(rt, C: int) -> int:
    """Work-items per row (see the module docstring)."""
    return 1 if not rt.is_gpu and C <= ROW_ALONE else GROUP


def _softmax_source(dtype: np.dtype, group: int = GROUP) -> str:
    code = _SOFTMAX.get((dtype, group))
    if code is not None:
        return code
    code = _SOFTMAX[(dtype, group)] = header(dtype) + f"""
#define T {CTYPES[dtype]}
#define G {group}
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
    g = _group(rt, C)
    knl = get_kernel(rt, _softmax_source(x.dtype, g), "softmax")
    launch(rt, knl, (rows * g,), (g,), out.data, xb, np.int32(xo), np.int32(C))
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
    g = _group(rt, C)
    knl = get_kernel(rt, _softmax_source(features.dtype, g), "xent")
    launch(rt, knl, (rows * g,), (g,), loss.data, backprop.data, xb, np.int32(xo),
           yb, np.int32(yo), np.int32(C))
    return loss, backprop


# -- LogSoftmax, SparseSoftmaxCrossEntropyWithLogits -------------------------------------------
# Both extend the softmax program (its group_max/group_sum/row_max_expsum helpers): one
# work-group of GROUP items per row. LogSoftmax reads rows of any axis with a stride (the
# input viewed as [A, C, K], row (a, k) at a * C * K + k, element j at j * K). The sparse
# cross-entropy checks each row's label on the device; a bad one records its row with an
# integer atomic_min in a flag that the host reads back once.
_LOSS: dict[tuple[np.dtype, str, int], str] = {}
_LABEL_CTYPES = {np.dtype(np.int32): "int", np.dtype(np.int64): "long"}
_NO_BAD = 2 ** 31 - 1


def _loss_source(dtype: np.dtype, label: str, group: int = GROUP) -> str:
    code = _LOSS.get((dtype, label, group))
    if code is not None:
        return code
    code = _LOSS[(dtype, label, group)] = _softmax_source(dtype, group) + f"""
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
    g = _group(rt, C)
    knl = get_kernel(rt, _loss_source(x.dtype, "int", g), "log_softmax")
    launch(rt, knl, (x.size // C * g,), (g,), out.data, xb, np.int32(xo), np.int32(C),
           np.int32(K))
    return out


def _xent_signature(features, labels):
    """The signature under which a sparse cross-entropy keeps its launch (see
    `flowgraph.backends.opencl.launches`), or None: device logits [n, C], and labels that
    are a host array or a contiguous device array (whose offset is a launch argument)."""
    if not hasattr(features, "base_data") or features.ndim != 2:
        return None
    on_host = type(labels) is np.ndarray
    if not on_host and not (hasattr(labels, "base_data") and labels.flags.c_contiguous):
        return None
    return ("SparseSoftmaxCrossEntropyWithLogits", features.shape, features.strides,
            features.offset, features.dtype, labels.shape, labels.dtype, on_host,
            0 if on_host else labels.offset)


def _bad_label(labels, C: int, at: int | None = None):
    from flowgraph.framework.errors import InvalidArgumentError

    values = np.asarray(labels)
    if at is None:
        at = int(np.flatnonzero((values < 0) | (values >= C))[0])
    return InvalidArgumentError(  # TensorFlow's wording; the executor adds the node
        None, None, f"Received a label value of {values[at]} which is outside the valid "
        f"range of [0, {C}).  Label values: {' '.join(str(v) for v in values.tolist())}")


def _deferred_error(op, labels, C: int):
    """The error a bad device label raises at the end of the step: the executor is done
    with the node by then, so the message names it here."""
    from flowgraph.framework.errors import InvalidArgumentError

    def error(first):
        found = _bad_label(labels.get(), C, first)
        if op is None:
            return found
        return InvalidArgumentError(
            None, op, f"{found.message}\n\t [[node {op.name} ({op.type}) on {op.device}]]")

    return error


def _check_host_labels(labels, C: int) -> None:
    """Raise InvalidArgumentError when a host label is outside [0, C): the largest label
    read as unsigned, where a negative one is larger than any class count."""
    unsigned = labels.view(np.uint64 if labels.dtype.itemsize == 8 else np.uint32)
    if unsigned.max() >= C:
        raise _bad_label(labels, C)


def _label_flag(rt, on_host: bool):
    """The kernel's bad-label flag: for host labels (checked before the launch) one
    scratch buffer the kernel never writes and nobody reads; else a fresh one, read at
    the end of the step."""
    if on_host:
        flag = rt.scratch.get("xent_flag")
        if flag is None:
            flag = rt.scratch["xent_flag"] = fill(rt, (1,), np.int32, _NO_BAD)
        return flag
    return fill(rt, (1,), np.int32, _NO_BAD)


@opencl_kernel("SparseSoftmaxCrossEntropyWithLogits", dtypes=FLOATS, fresh=True)
def sparse_softmax_cross_entropy_with_logits(features, labels, *, op=None):
    """Per-row cross-entropy of logits `features` [n, C] against class ids `labels` [n],
    and its gradient ``softmax(features) - one_hot(labels)``.

    Host labels are checked before the launch (on the host: their largest value read as
    unsigned, cheaper than a flag that the end of the step would read back); device labels
    on the device, and a bad one raises at the end of the step
    (`DeviceRuntime.defer_check`): the host never waits for the queue here. A repeated
    call with the same signature (`_xent_signature`) repeats its prepared launch."""
    sig = _xent_signature(features, labels)
    if sig is not None:
        rt = runtime_of(features)
        kept = rt.launches.get(sig)
        if kept is not None:
            return _repeat_xent(rt, kept, features, labels, sig[7], op)
    return _first_xent(features, labels, sig, op)


def _repeat_xent(rt, kept, features, labels, on_host: bool, op):
    rows, C = features.shape
    if on_host:
        _check_host_labels(labels, C)
        lbuf = rt.upload(labels)
    else:
        lbuf = labels.base_data
    loss = rt.empty((rows,), features.dtype)
    backprop = rt.empty((rows, C), features.dtype)
    flag = _label_flag(rt, on_host)
    kept(loss.base_data, backprop.base_data, flag.base_data, features.base_data, lbuf)
    if not on_host:
        rt.defer_check(flag, _NO_BAD, _deferred_error(op, labels, C))
    return loss, backprop


def _first_xent(features, labels, sig, op):
    from flowgraph.framework.errors import InvalidArgumentError

    if features.ndim != 2 or tuple(labels.shape) != tuple(features.shape[:1]):
        raise InvalidArgumentError(
            None, None, "SparseSoftmaxCrossEntropyWithLogits needs logits of shape [n, C] "
            f"and labels of shape [n], got {list(features.shape)} and {list(labels.shape)}")
    given = features
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
        labels = np.require(labels, requirements="C")
        _check_host_labels(labels, C)
        labels = rt.to_device(labels)
    contiguous_features = contiguous(rt, features)
    if contiguous_features is not given:
        sig = None  # a copy was made first: the launch would read its buffer
    features, labels = contiguous_features, contiguous(rt, labels)
    flag = _label_flag(rt, on_host)
    xb, xo, _ = operand(features)
    lb, lo, _ = operand(labels)
    g = _group(rt, C)
    args = (loss.data, backprop.data, flag.data, xb, np.int32(xo), lb, np.int32(lo),
            np.int32(C))
    source = _loss_source(features.dtype, label, g)
    if sig is None:
        launch(rt, get_kernel(rt, source, "sparse_xent"), (rows * g,), (g,), *args)
    else:
        prepare(rt, sig, source, "sparse_xent", (rows * g,), (g,), args)(
            loss.base_data, backprop.base_data, flag.base_data, xb, lb)
    if not on_host:
        rt.defer_check(flag, _NO_BAD, _deferred_error(op, labels, C))
    return loss, backprop
