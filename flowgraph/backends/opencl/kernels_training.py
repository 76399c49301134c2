"""OpenCL kernels for the optimizer update ops (`flowgraph/ops/training_ops.py`).

Each ``Apply*`` kernel updates the variable and its slots *in place* on the device, one
work-item per element, and returns the variable's storage (the op's ref output); the
rules are those of the CPU kernels (`flowgraph/backends/cpu/_training_loops.h`), written
once as C statements per rule (`_RULES`) and turned into one program per rule, dtype and
form by `_source`. The scalar hyperparameters (lr, beta1, ...) are passed as device
buffers and read inside the kernel, so a step never waits for the device to learn them.

On CPU-type devices (PoCL) a dense update whose arrays are whole, aligned runs of 16
elements takes the ``dense16`` form: the same statements on ``float16`` vectors, one
vector per work-item (`_dense16`). PoCL vectorizes the one-element form across
work-items only when it can prove that no item's stores change another's loads, which
it gives up on with this many buffers: Adam on 401,408 elements ran at 12 GB/s, and
as ``dense16`` at memory speed.

A dense update keeps its launch under a signature over all its arrays
(`flowgraph.backends.opencl.launches`) and also remembers it per variable, holding the
arrays weakly: while the variable, its slots and the constant hyperparameters are the
same arrays, the next step tests them by identity and only the fresh ones (gradient, beta
powers) by layout.

Sparse forms (``SparseApply*``): the indices are read back to the host (one small copy,
which waits for the queue), checked against the variable's rows, and grouped with a
stable sort; the kernel runs one work-item per (distinct row, column), summing that row's
gradient entries in index order (duplicates add up deterministically, no atomics) before
applying the rule once, as TensorFlow does::

    indices [3, 0, 3]  ->  order [1, 0, 2], starts [0, 1, 3], rows [0, 3]
    row 0 <- g[1];  row 3 <- g[0] + g[2]

``SparseApplyAdam`` follows TF1's AdamOptimizer and decays the moments of every row: it
runs over all rows, each looking up its group (or none).

Example
-------
>>> import flowgraph as tf                                         # doctest: +SKIP
>>> with tf.device("/gpu:0"):                                      # doctest: +SKIP
...     v = tf.Variable([1.0, 2.0])
...     step = tf.train.GradientDescentOptimizer(0.5).minimize(tf.reduce_sum(v * v))
"""

from __future__ import annotations

import weakref

import numpy as np

from flowgraph.backends import kernel_util
from flowgraph.backends.opencl import opencl_kernel
from flowgraph.backends.opencl._runtime import runtime_of
from flowgraph.backends.opencl.kernels_elementwise import (
    CTYPES,
    FLOATS,
    check_dtype,
    check_size,
    contiguous,
    copy,
    get_kernel,
    grid,
    header,
    is_plain,
    launch,
    on_device,
    operand,
    vector_aligned,
)
from flowgraph.backends.opencl.kernels_state import device_value
from flowgraph.backends.opencl.launches import keep, make
from flowgraph.framework import errors

# rule -> C statements for element i. They read `gi` (the gradient), the scalars by their
# input names, `flag` (`_FLAG_ATTR`: use_nesterov or update_slots) and the refs by their
# input names, which they update.
_ADAM = """
  const T one_b1 = (T)1 - beta1, one_b2 = (T)1 - beta2;
  const T alpha = lr * sqrt((T)1 - beta2_power) / ((T)1 - beta1_power);
  const T mi = m[i] + (gi - m[i]) * one_b1;
  const T vi = v[i] + (gi * gi - v[i]) * one_b2;
  m[i] = mi;
  v[i] = vi;
  var[i] = var[i] - (flag ? gi * one_b1 + beta1 * mi : mi) * alpha / (sqrt(vi) + epsilon);"""
# Adam on a row without a gradient (sparse TF1 Adam decays every row).
_ADAM_DECAY = """
  const T alpha = lr * sqrt((T)1 - beta2_power) / ((T)1 - beta1_power);
  const T mi = m[i] * beta1, vi = v[i] * beta2;
  m[i] = mi;
  v[i] = vi;
  var[i] = var[i] - (flag ? beta1 * mi : mi) * alpha / (sqrt(vi) + epsilon);"""


def _ftrl(shrinkage: bool) -> str:
    gs = "gi + (T)2 * l2_shrinkage * wi" if shrinkage else "gi"
    return f"""
  const T wi = var[i], a = accum[i];
  const T gs = {gs};
  const T na = a + gi * gi;
  const int root = lr_power == (T)-0.5;
  const T sig_new = root ? sqrt(na) : pow(na, -lr_power);
  const T sig_old = root ? sqrt(a) : pow(a, -lr_power);
  const T lin = linear[i] + gs - (sig_new - sig_old) / lr * wi;
  linear[i] = lin;
  accum[i] = na;
  const T x = (lin > 0 ? l1 : -l1) - lin;
  const T y = sig_new / lr + (T)2 * l2;
  var[i] = fabs(lin) > l1 ? x / y : (T)0;"""


_RULES = {
    "GradientDescent": "\n  var[i] = var[i] - alpha * gi;",
    "Momentum": """
  const T a = accum[i] * momentum + gi;
  accum[i] = a;
  var[i] = var[i] - (flag ? gi * lr + a * momentum * lr : a * lr);""",
    "Adagrad": """
  T a = accum[i];
  if (flag) { a = a + gi * gi; accum[i] = a; }
  var[i] = var[i] - lr * gi / sqrt(a);""",
    "Adam": _ADAM,
    "RMSProp": """
  const T one_rho = (T)1 - rho;
  const T si = ms[i] + (gi * gi - ms[i]) * one_rho;
  ms[i] = si;
  const T mi = mom[i] * momentum + lr * gi / sqrt(si + epsilon);
  mom[i] = mi;
  var[i] = var[i] - mi;""",
    "CenteredRMSProp": """
  const T one_rho = (T)1 - rho;
  const T si = ms[i] + (gi * gi - ms[i]) * one_rho;
  const T mgi = mg[i] + (gi - mg[i]) * one_rho;
  ms[i] = si;
  mg[i] = mgi;
  const T mi = mom[i] * momentum + lr * gi / sqrt(si - mgi * mgi + epsilon);
  mom[i] = mi;
  var[i] = var[i] - mi;""",
    "Ftrl": _ftrl(False),
    "FtrlV2": _ftrl(True),
    "Adadelta": """
  const T ui = accum_update[i];
  const T a = accum[i] * rho + gi * gi * ((T)1 - rho);
  accum[i] = a;
  const T d = sqrt(ui + epsilon) / sqrt(a + epsilon) * gi;
  accum_update[i] = ui * rho + d * d * ((T)1 - rho);
  var[i] = var[i] - d * lr;""",
}

_OPS = {
    "ApplyGradientDescent": "GradientDescent", "ApplyMomentum": "Momentum",
    "ApplyAdagrad": "Adagrad", "ApplyAdam": "Adam", "ApplyRMSProp": "RMSProp",
    "ApplyCenteredRMSProp": "CenteredRMSProp", "ApplyFtrl": "Ftrl", "ApplyFtrlV2": "FtrlV2",
    "ApplyAdadelta": "Adadelta",
}
# The attribute each rule reads as `flag`.
_FLAG_ATTR = {"Momentum": "use_nesterov", "Adam": "use_nesterov", "Adagrad": "update_slots"}


def _input_names(op_type: str) -> tuple[str, ...]:
    from flowgraph.ops.training_ops import _SIGNATURES

    return tuple(_SIGNATURES[op_type][0])


def _signature(op_type: str):
    """(ref names, scalar names, grad position, indices position or None, defaults)."""
    from flowgraph.ops.training_ops import _SIGNATURES

    names, num_refs, defaults = _SIGNATURES[op_type]
    grad_at = names.index("grad") if "grad" in names else names.index("delta")
    idx_at = names.index("indices") if "indices" in names else None
    scalars = tuple(n for k, n in enumerate(names)
                    if k >= num_refs and k not in (grad_at, idx_at))
    return names[:num_refs], scalars, grad_at, idx_at, defaults


_SOURCES: dict[tuple[str, str, np.dtype], str] = {}


# Rules whose statements hold for vectors as they are (conditions on `flag` only).
VECTOR_RULES = {"GradientDescent", "Momentum", "Adagrad", "Adam", "RMSProp",
                "CenteredRMSProp", "Adadelta"}


def _dense16(rt, rule: str, arrays) -> bool:
    """Whether a dense update takes the ``dense16`` form (see the module docstring):
    a CPU-type device, a rule of `VECTOR_RULES`, and `arrays` (variable, slots, gradient)
    of a multiple of 16 elements, each aligned for 16-vectors (`vector_aligned`)."""
    return (not rt.is_gpu and rule in VECTOR_RULES and arrays[0].size % 16 == 0
            and all(vector_aligned(x) for x in arrays))


def _source(op_type: str, form: str, dtype: np.dtype) -> str:
    """The program of `op_type` for `dtype`; `form` is "dense", "dense16" (the dense
    statements on 16-vectors: ``T`` is the vector type, ``S`` the scalar one), "sparse"
    (a work-item per distinct row and column) or "all_rows" (sparse Adam: every row,
    decayed if it has no gradient)."""
    key = (op_type, form, dtype)
    src = _SOURCES.get(key)
    if src is not None:
        return src
    rule = _OPS[op_type.removeprefix("Sparse")]
    refs, scalars, *_ = _signature(op_type)
    params = [f"__global T* {r}" for r in refs] + ["__global const S* g", "int goff"]
    params += [f"__global const S* {s}_p, int {s}_o" for s in scalars]
    load = "".join(f"\n  const S {s} = {s}_p[{s}_o];" for s in scalars)
    body = _RULES[rule]
    vector = f"\n#define T {CTYPES[dtype]}16"
    if form == "dense16":  # `n` counts vectors; `goff` is a multiple of 16
        params += ["int n", "int flag"]
        code = f"""
  int i = get_global_id(0);
  if (i >= n) return;{load}
  const T gi = ((__global const T*)(g + goff))[i];{body}"""
    elif form == "dense":
        vector = ""
        params += ["int n", "int flag"]
        code = f"""
  int i = get_global_id(0);
  if (i >= n) return;{load}
  const T gi = g[goff + i];{body}"""
    else:
        vector = ""
        params += ["__global const int* order", "__global const int* starts",
                   "__global const int* groups", "int n", "int width", "int flag"]
        find = ("int i = u; int s = groups[u / width];\n  if (s < 0) {"
                + _ADAM_DECAY + "\n    return;\n  }" if form == "all_rows"
                else "int s = u / width; int i = groups[s] * width + c;")
        code = f"""
  int u = get_global_id(0);
  if (u >= n) return;
  int c = u % width;{load}
  {find}
  T gi = 0;
  for (int p = starts[s]; p < starts[s + 1]; p++)
    gi += g[goff + order[p] * width + c];{body}"""
    joined = ",\n    ".join(params)
    # No contraction into fused multiply-adds: the CPU rules round every operation.
    src = (header(dtype) + "#pragma OPENCL FP_CONTRACT OFF\n"
           f"#define S {CTYPES[dtype]}{vector or chr(10) + '#define T S'}\n"
           f"__kernel void update(\n    {joined}) {{{code}\n}}\n")
    _SOURCES[key] = src
    return src


def _invalid(msg: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, msg)


def _storage(state, rt, op_name: str):
    """The variable's device array, made plain (contiguous, offset 0) once if it is not."""
    value = device_value(state, rt, op_name)
    if not is_plain(value):
        value = state.value = copy(rt, value)
    return value


def _groups(op_type: str, indices, rows: int, all_rows: bool):
    """(order, starts, groups, number of groups) of the indices, on the host."""
    idx = np.asarray(indices.get() if hasattr(indices, "get") else indices)
    if idx.ndim != 1:
        raise _invalid(f"{op_type}: indices must be one-dimensional, got shape "
                       f"{list(idx.shape)}")
    bad = np.flatnonzero((idx < 0) | (idx >= rows))
    if bad.size:
        raise _invalid(f"{op_type}: indices[{bad[0]}] = {int(idx[bad[0]])} is not in "
                       f"[0, {rows})")
    order = np.argsort(idx, kind="stable")
    ordered = idx[order]
    first = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]]) if idx.size else \
        np.zeros(0, np.int64)
    starts = np.r_[first, idx.size].astype(np.int32)
    distinct = ordered[first].astype(np.int32)
    if all_rows:
        groups = np.full(rows, -1, np.int32)
        groups[distinct] = np.arange(distinct.size, dtype=np.int32)
    else:
        groups = distinct
    return order.astype(np.int32), starts, groups, distinct.size


def _make_kernel(op_type: str):
    refs_names, scalar_names, grad_at, idx_at, defaults = _signature(op_type)
    rule = _OPS[op_type.removeprefix("Sparse")]
    flag_attr = _FLAG_ATTR.get(rule)
    sparse = idx_at is not None
    num_refs = len(refs_names)
    n_inputs = len(_input_names(op_type))
    # the buffer arguments' order: variable and slots, gradient, then the scalars
    order = (*range(num_refs), grad_at, *(k for k in range(num_refs, n_inputs)
                                          if k != grad_at))

    def dense_signature(inputs, attrs):
        """(signature, arrays) of a dense update without locking whose variable, slots
        and inputs are all device arrays, else (None, None). `arrays`: the inputs with
        each variable replaced by its value."""
        if sparse or len(inputs) != n_inputs:
            return None, None
        arrays = [r.value for r in inputs[:num_refs]] + list(inputs[num_refs:])
        if not all(hasattr(a, "base_data") for a in arrays):
            return None, None
        flag = int(bool(attrs.get(flag_attr, defaults.get(flag_attr, False)))) \
            if flag_attr else 0
        return (op_type, flag, *[(a.shape, a.strides, a.offset, a.dtype)
                                 for a in arrays]), arrays

    # (id(variable state), flag) -> (weak references to the arrays but the gradient, the
    # arrays' layouts, launch, vector form). Weak: a closed session's variables must not
    # stay in device memory; the state itself only finds the entry (its id may be reused,
    # but then its arrays differ).
    recent: dict = {}

    def repeat_recent(inputs, flag: int) -> bool:
        """Repeat the launch kept for this variable when the variable and its slots are
        the arrays it was made for and every other input has the layout it had then
        (the gradient and the beta powers are fresh arrays each step, the constant
        hyperparameters the same): identity tests instead of a 10-array signature."""
        hit = recent.get((id(inputs[0]), flag))
        if hit is None:
            return False
        held, layouts, entry, vec = hit
        for k in range(num_refs):
            if inputs[k].value is not held[k]():
                return False
        for k in range(num_refs, n_inputs):
            a = inputs[k]
            if k == grad_at or a is not held[k]():
                shape, strides, offset, dtype = layouts[k]
                if (getattr(a, "base_data", None) is None or a.shape != shape
                        or a.strides != strides or a.offset != offset or a.dtype != dtype):
                    return False
        if vec and not vector_aligned(inputs[grad_at]):
            return False
        entry(*(inputs[k].value.base_data if k < num_refs else inputs[k].base_data
                for k in order))
        return True

    def remember(state, arrays, flag: int, entry, vec: bool) -> None:
        if len(recent) >= 1024:
            recent.clear()
        held = tuple(None if k == grad_at else weakref.ref(a) for k, a in enumerate(arrays))
        layouts = tuple((a.shape, a.strides, a.offset, a.dtype) for a in arrays)
        recent[(id(state), flag)] = (held, layouts, entry, vec)

    def kernel(*inputs, use_locking=False, op=None, **attrs):
        if not use_locking and not sparse and len(inputs) == n_inputs:
            flag = int(bool(attrs.get(flag_attr, defaults.get(flag_attr, False)))) \
                if flag_attr else 0
            if repeat_recent(inputs, flag):
                return inputs[0]
        sig, arrays = (None, None) if use_locking else dense_signature(inputs, attrs)
        if sig is not None:
            kept = runtime_of(arrays[0]).launches.get(sig)
            if kept is not None and (not kept[1] or all(
                    vector_aligned(arrays[k]) for k in order[:num_refs + 1])):
                kept[0](*(arrays[k].base_data for k in order))
                remember(inputs[0], arrays, sig[1], kept[0], kept[1])
                return inputs[0]
        op_name = op.name if op is not None else op_type
        refs = inputs[:num_refs]
        rt, values = on_device(*(inputs[k] for k in range(num_refs, len(inputs))
                                 if k != idx_at))
        values = iter(values)
        given = {k: next(values) for k in range(num_refs, len(inputs)) if k != idx_at}
        flag = int(bool({**defaults, **attrs}.get(flag_attr, False))) if flag_attr else 0
        with kernel_util.locked(refs, use_locking):
            var = _storage(refs[0], rt, op_name)
            dt = var.dtype
            check_dtype(rt, dt, op_type)
            if dt not in FLOATS:
                raise _invalid(f"{op_type} supports float32 and float64 variables, got "
                               f"{dt.name}")
            slots = []
            for k in range(1, num_refs):
                s = _storage(refs[k], rt, op_name)
                if s.shape != var.shape or s.dtype != dt:
                    raise _invalid(f"{op_type}: var and {refs_names[k]} do not have the same "
                                   f"shape and dtype: var {list(var.shape)} {dt.name}, "
                                   f"{refs_names[k]} {list(s.shape)} {s.dtype.name}")
                slots.append(s)
            scalar_args = []
            for name, k in zip(scalar_names, (k for k in given if k != grad_at), strict=True):
                x = given[k]
                if x.ndim != 0 and x.size != 1:
                    raise _invalid(f"{op_type}: {name} is not a scalar: shape {list(x.shape)}")
                if x.dtype != dt:
                    raise _invalid(f"{op_type}: {name} has dtype {x.dtype.name}, the "
                                   f"variable {dt.name}")
                buf, off, _ = operand(x)
                scalar_args += [buf, np.int32(off)]
            g = given[grad_at]
            if g.dtype != dt:
                raise _invalid(f"{op_type}: grad has dtype {g.dtype.name}, the variable "
                               f"{dt.name}")
            g = contiguous(rt, g)
            gbuf, goff, _ = operand(g)
            head = [var.data, *(s.data for s in slots), gbuf, np.int32(goff), *scalar_args]
            check_size(var.size, op_type)
            if not sparse:
                if g.shape != var.shape:
                    raise _invalid(f"{op_type}: var and grad do not have the same shape: var "
                                   f"{list(var.shape)}, grad {list(g.shape)}")
                dense16 = var.size and _dense16(rt, rule, [var, *slots, g])
                form, items = ("dense16", var.size // 16) if dense16 else ("dense", var.size)
                args = (*head, np.int32(items), np.int32(flag))
                if var.size and sig is not None and all(a is b for a, b in zip(
                        [var, *slots, g], [arrays[k] for k in order[:num_refs + 1]],
                        strict=True)):
                    # nothing was copied: a later call with this signature repeats this
                    # launch (the vector form again only while the arrays stay aligned)
                    entry = make(rt, _source(op_type, form, dt), "update", grid(items),
                                 None, args)
                    keep(rt, sig, (entry, bool(dense16)))
                    remember(refs[0], arrays, flag, entry, bool(dense16))
                    entry(*(a.base_data for a in (var, *slots, g)), *scalar_args[::2])
                elif var.size:
                    knl = get_kernel(rt, _source(op_type, form, dt), "update")
                    launch(rt, knl, grid(items), None, *args)
            else:
                _sparse_update(op_type, rt, var, g, inputs[idx_at], head, flag, rule == "Adam")
        return refs[0]

    kernel.__name__ = kernel.__qualname__ = f"opencl_{op_type}"
    kernel.__doc__ = f"In-place `{op_type}` on the device ({rule} rule)."
    return kernel


def _sparse_update(op_type, rt, var, g, indices, head, flag, all_rows: bool) -> None:
    if var.ndim < 1:
        raise _invalid(f"{op_type}: var must be at least 1 dimensional, got a scalar")
    rows = var.shape[0]
    width = var.size // rows if rows else 0
    order, starts, groups, distinct = _groups(op_type, indices, rows, all_rows)
    if g.ndim < 1 or g.shape[0] != order.size or g.shape[1:] != var.shape[1:]:
        raise _invalid(f"{op_type}: grad must have shape [len(indices)] + var.shape[1:] = "
                       f"{[order.size, *var.shape[1:]]}, got {list(g.shape)}")
    check_size(g.size, op_type)
    units = (rows if all_rows else distinct) * width
    if units == 0:
        return
    # Index arrays of one element at least: OpenCL buffers cannot be empty.
    order_d, starts_d, groups_d = (rt.to_device(a if a.size else np.zeros(1, np.int32))
                                   for a in (order, starts, groups))
    knl = get_kernel(rt, _source(op_type, "all_rows" if all_rows else "sparse", var.dtype),
                     "update")
    launch(rt, knl, grid(units), None, *head, order_d.data, starts_d.data, groups_d.data,
           np.int32(units), np.int32(width), np.int32(flag))


for _dense_op in _OPS:
    opencl_kernel(_dense_op, dtypes=FLOATS)(_make_kernel(_dense_op))
    opencl_kernel("Sparse" + _dense_op, dtypes=FLOATS)(_make_kernel("Sparse" + _dense_op))
