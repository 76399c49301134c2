"""Fused elementwise kernels of the OpenCL backend: which ops fuse, and the fused kernel.

The planner's fusion pass (`flowgraph/runtime/fusion.py`) finds groups of elementwise ops
on one device and asks the device's backend for one kernel per group. Here a group
becomes one generated OpenCL C kernel: each member op is one statement, the C expression
of its unfused kernel (`kernels_elementwise._UNARY`/`_BINARY`; BiasAdd is an add) with
its operands renamed, so a fused result is the unfused one (both programs are built
without multiply-add contraction, `kernels_elementwise.NO_CONTRACT`, which would otherwise
fuse one member's multiply into the next member's add on NVIDIA's compiler), and one launch
replaces one per member. Intermediate values live in registers and never reach device
memory::

    x ─> BiasAdd ─> Relu      one kernel; for each element i of the result:
    b ──┘                       T a0 = in0[off0 + i];  T a1 = in1[o1];  (b broadcast)
                                v0 = (T)(a0 + a1);  v1 = (T)(v0 < 0 ? (T)0 : v0);
                                out[i] = v1;

Each input is broadcast against the result's shape; after merging dimensions
(`kernels_elementwise.collapse`) an input is read in one of three modes: ``f`` (as
contiguous as the result: element ``i``), ``s`` (one element for all) or ``n`` (strides
per dimension, computed from the result's index). The modes pick the kernel source,
built once per (group, modes, device) through the device's program cache, and a launch
of known input layouts reuses everything but the buffers and offsets. On GPUs a
contiguous result of 4,096 elements or more takes the four-per-item form (``fused_vec``),
like the unfused kernels. One-element constants that the fusion pass hands over as such
(``("const", value)`` operands, also those that reach the device through a `_ToDevice`
node) are folded into the source as exact literals.

A fusible op here: float32 (float64 where every device has ``cl_khr_fp64``), every
input and the output of one dtype, and a float op of the elementwise tables, BiasAdd
(NHWC) where the static shapes prove that the bias matches the channels, or AddN of
inputs whose static shapes are known and equal (`flowgraph.backends.fusion_rules`). A group of one
op keeps its own kernel (fusing would save no launch). Inputs the kernel cannot take
(shapes that do not broadcast, other dtypes, too many dimensions) go to `fallback`,
which runs the members one by one, so the failing member raises its own error.

>>> import flowgraph as tf
>>> from flowgraph.backends.opencl.kernels_fused import fusible
>>> with tf.Graph().as_default():
...     y = tf.nn.relu(tf.placeholder(tf.float32, [4]) + 1.0)
...     z = tf.cast(y, tf.int32)
>>> fusible(y.op), fusible(y.op.inputs[0].op), fusible(z.op)
(True, True, False)
"""

from __future__ import annotations

import math
import re

import numpy as np

from flowgraph.backends.fusion_rules import add_n_fusible, bias_add_fusible
from flowgraph.backends.opencl import backend
from flowgraph.backends.opencl import kernels_elementwise as ew
from flowgraph.backends.opencl._runtime import runtime_of
from flowgraph.backends.opencl.launches import keep, make

# A fused kernel's array arguments: OpenCL guarantees only 1,024 bytes of parameters, and
# a strided input takes 36 (buffer, offset, 6 strides).
MAX_INPUTS = 24
VEC_MIN_ELEMENTS = 4096  # the four-per-item form's threshold, as `ew._use_vec`


# -- which ops fuse -------------------------------------------------------------------------
def _table_entry(op_type: str):
    """(C expression of x [, y], arity, dtypes) of an elementwise table op, or None."""
    if op_type in ew._UNARY:
        expr, dtypes = ew._UNARY[op_type]
        return expr, 1, dtypes
    if op_type in ew._BINARY:
        expr, dtypes = ew._BINARY[op_type]
        return expr, 2, dtypes
    if op_type == "BiasAdd":  # the unfused kernel adds x + b, broadcast over channels
        return "x + y", 2, ew.FLOATS
    if op_type == "AddN":  # any arity: `_statements` writes the sum out
        return None, None, ew.FLOATS
    return None


def fusible(op) -> bool:
    """Whether `op` can join a fused group on an OpenCL device (see the module docstring)."""
    entry = _table_entry(op.type)
    if entry is None or len(op._outputs) != 1:
        return False
    dtype = op._outputs[0].dtype
    if dtype.is_ref_dtype:
        return False
    np_dtype = np.dtype(dtype.as_numpy_dtype)
    if np_dtype not in ew.FLOATS or np_dtype not in entry[2]:
        return False
    if entry[1] is not None and len(op._inputs) != entry[1]:
        return False
    if any(x.dtype != dtype for x in op._inputs):
        return False
    if op.type == "AddN":
        return add_n_fusible(op)
    return op.type != "BiasAdd" or bias_add_fusible(op)


# -- the generated source -------------------------------------------------------------------
_OPERAND = re.compile(r"\b[xy]\b")


def _literal(value, dtype: np.dtype) -> str:
    """An exact C literal of one-element constant `value` in `dtype`."""
    v = float(np.asarray(value, dtype).reshape(()))
    if math.isnan(v):
        text = "NAN"
    elif math.isinf(v):
        text = "INFINITY" if v > 0 else "-INFINITY"
    else:
        text = v.hex() + ("f" if dtype == ew.F32 else "")
    return text


def _statements(ops, operands, dtype: np.dtype, const_names, t: str) -> list[str]:
    """One C statement per member op: ``v{i} = (t)(its expression)``, `t` ``T`` or
    ``T4`` (declarations apart)."""
    out = []
    const_k = 0
    for i, op in enumerate(ops):
        names = []
        for kind, j in operands[i]:
            if kind == "in":
                names.append(f"a{j}")
            elif kind == "op":
                names.append(f"v{j}")
            else:
                names.append(const_names[const_k])
                const_k += 1
        if op.type == "AddN":  # left to right, as the unfused kernel adds
            text = names[0]
            for name in names[1:]:
                text = f"({text} + {name})"
        else:
            bound = dict(zip("xy", names))
            expr = ew._expr(_table_entry(op.type)[0], dtype)
            text = _OPERAND.sub(lambda m, bound=bound: bound[m.group()], expr)
        out.append(f"v{i} = ({t})({text});")
    return out


def _consts(operands, dtype: np.dtype) -> list[str]:
    """The literals of the group's constants, in operand order."""
    return [_literal(j, dtype) for ops_in in operands for kind, j in ops_in if kind == "const"]


def _source(ops, operands, dtype: np.dtype, modes: str, form: str, ndim: int = 0) -> str:
    """The program of one group for input `modes` (``f``/``s``/``n`` per input) in `form`
    ``flat`` (one element per work-item), ``nd`` (an ``n`` input), ``rows`` (an ``n``
    input on a CPU-type device: a 2-D grid, the innermost of the `ndim` merged dimensions
    along dimension 0) or ``vec`` (four)."""
    ctype = ew.CTYPES[dtype]
    vec = form == "vec"
    consts = _consts(operands, dtype)
    const_names = [f"k{c}" for c in range(len(consts))]
    params = ["__global T* out"]
    for k, m in enumerate(modes):
        params.append(f"__global const T* in{k}, int off{k}")
        if m == "n":
            params.extend(f"int s{k}_{d}" for d in range(ew.MAX_DIMS))
    params.append("int n")
    if form in ("nd", "rows"):
        params.extend(f"int d{d}" for d in range(1, ew.MAX_DIMS))

    def body(index: str, store: str, t: str) -> list[str]:
        lines = [f"const {t} {name} = ({t})({lit});" for name, lit in zip(const_names, consts)]
        for k, m in enumerate(modes):
            if m == "s":
                lines.append(f"{t} a{k} = ({t})(in{k}[off{k}]);")
            elif m == "n":
                lines.append(f"{t} a{k} = in{k}[o{k}];")
            elif t == "T4":
                lines.append(f"T4 a{k} = ((__global const T4*)(in{k} + off{k}))[{index}];")
            else:
                lines.append(f"T a{k} = in{k}[off{k} + {index}];")
        lines.append(f"{t} " + ", ".join(f"v{i}" for i in range(len(ops))) + ";")
        lines.extend(_statements(ops, operands, dtype, const_names, t))
        lines.append(store.format(v=f"v{len(ops) - 1}"))
        return lines

    # no multiply-add contraction, as in the unfused kernels (`ew.NO_CONTRACT`): NVIDIA's
    # compiler would otherwise fuse one member's multiply into the next one's add
    head = [ew.header(dtype, contract=False), f"#define T {ctype}", f"#define T4 {ctype}4"]
    signature = f"__kernel void fused_{form}({', '.join(params)})"
    if vec:
        code = [signature + " {", "  int i = get_global_id(0);",
                "  if (4 * i + 4 <= n) {",
                *("    " + s for s in body("i", "((__global T4*)out)[i] = {v};", "T4")),
                "  } else {", "    for (int j = 4 * i; j < n; ++j) {",
                *("      " + s for s in body("j", "out[j] = {v};", "T")),
                "    }", "  }", "}"]
    elif form == "rows":
        code = [signature + " {", *("  " + s for s in _rows_index(modes, ndim)),
                *("  " + s for s in body("i", "out[i] = {v};", "T")), "}"]
    else:
        index = []
        if form == "nd":
            nd = [k for k, m in enumerate(modes) if m == "n"]
            index = ["int r = i;"] + [f"int o{k} = off{k};" for k in nd]
            for d in range(ew.MAX_DIMS - 1, 0, -1):
                terms = " ".join(f"o{k} += c * s{k}_{d};" for k in nd)
                index.append(f"{{ int c = r % d{d}; r /= d{d}; {terms} }}")
            index.append(" ".join(f"o{k} += r * s{k}_0;" for k in nd))
        code = [signature + " {", "  int i = get_global_id(0);", "  if (i < n) {",
                *("    " + s for s in index),
                *("    " + s for s in body("i", "out[i] = {v};", "T")), "  }", "}"]
    return "\n".join(head + code) + "\n"


def _rows_index(modes: str, ndim: int) -> list[str]:
    """The ``rows`` form's index statements: work-item (c, r) is element c of the
    innermost dimension in row r of the others, so a 2-D layout (a matrix and a broadcast
    row or column, BiasAdd's) needs no integer division, which PoCL cannot vectorize (the
    ``nd`` form's five divisions and remainders per element made BiasAdd + Relu of a
    256 x 512 matrix 30x slower than a contiguous add); more dimensions divide the row
    index only, `ndim` - 2 times."""
    last = ew.MAX_DIMS - 1
    nd = [k for k, m in enumerate(modes) if m == "n"]
    lines = [f"int c = get_global_id(0), r = get_global_id(1), i = r * d{last} + c;"]
    lines += [f"int o{k} = off{k} + c * s{k}_{last};" for k in nd]
    for d in range(last - 1, last - ndim + 1, -1):
        terms = " ".join(f"o{k} += q * s{k}_{d};" for k in nd)
        lines.append(f"{{ int q = r % d{d}; r /= d{d}; {terms} }}")
    if ndim >= 2:
        lines.append(" ".join(f"o{k} += r * s{k}_{last - ndim + 1};" for k in nd))
    return lines


# -- launching ------------------------------------------------------------------------------
def _use_vec(rt, n: int, modes: str, offsets) -> bool:
    """Whether a launch takes the four-per-item form: on GPUs, for `VEC_MIN_ELEMENTS` or
    more, with no strided input and every contiguous input at a multiple of 4 elements."""
    return rt.is_gpu and n >= VEC_MIN_ELEMENTS and "n" not in modes and all(
        o % 4 == 0 for o, m in zip(offsets, modes) if m == "f")


def _use_rows(rt) -> bool:
    """Whether a launch with an ``n`` input takes the ``rows`` form (CPU-type devices)
    rather than ``nd`` (GPUs: one-dimensional, rounded up to whole work-groups)."""
    return not rt.is_gpu


def _layout(shapes_strides, extra):
    """(result shape, modes, the ``n`` inputs' stride arguments, the ``nd`` form's
    dimension arguments, the number of merged dimensions) for inputs of these (shape,
    element strides) broadcast together with the `extra` shapes; None when they do not
    broadcast or need more than `ew.MAX_DIMS` merged dimensions."""
    try:
        shape = np.broadcast_shapes(*[s for s, _ in shapes_strides], *extra)
    except ValueError:
        return None
    strides = []
    for s, st in shapes_strides:
        pad = len(shape) - len(s)
        strides.append((0,) * pad + tuple(0 if d == 1 and full != 1 else v
                                          for d, v, full in zip(s, st, shape[pad:])))
    dims, strides = ew.collapse(shape, strides)
    if len(dims) > ew.MAX_DIMS:
        return None
    dense = []
    step = 1
    for d in reversed(dims):
        dense.append(step)
        step *= d
    dense = tuple(reversed(dense))
    modes = "".join("s" if not any(st) else "f" if st == dense else "n" for st in strides)
    args = []
    if "n" in modes:
        pad = ew.MAX_DIMS - len(dims)
        for st, m in zip(strides, modes):
            if m == "n":
                args.append([np.int32(v) for v in (0,) * pad + st])
    dim_args = [np.int32(d) for d in ((1,) * (ew.MAX_DIMS - len(dims)) + dims)[1:]]
    return shape, modes, args, dim_args, len(dims)


class _FusedKernel:
    """The kernel of one group: call it with the group's inputs (device arrays)."""

    def __init__(self, ops, operands, n_inputs: int, fallback) -> None:
        self.ops, self.operands, self.n_inputs = ops, operands, n_inputs
        self.fallback = fallback
        self.dtype = np.dtype(ops[-1]._outputs[0].dtype.as_numpy_dtype)
        # A one-element constant of rank > 0 still widens the result's rank ([n] + [[c]]).
        const_shapes = [np.shape(v) for ops_in in operands for kind, v in ops_in
                        if kind == "const" and np.ndim(v)]
        self.extra = (np.broadcast_shapes(*const_shapes),) if const_shapes else ()
        self._layouts: dict[tuple, tuple | None] = {}
        self._kernels: dict[tuple, object] = {}

    def source(self, modes: str, form: str, ndim: int = 0) -> str:
        """The OpenCL C program for input `modes` in `form` (see `_source`)."""
        return _source(self.ops, self.operands, self.dtype, modes, form, ndim)

    def _kernel(self, rt, modes: str, form: str, ndim: int = 0):
        key = (id(rt), modes, form, ndim)
        knl = self._kernels.get(key)
        if knl is None:
            knl = self._kernels[key] = ew.get_kernel(rt, self.source(modes, form, ndim),
                                                     f"fused_{form}")
        return knl

    def _prepare(self, inputs):
        """(runtime, device inputs, layout) or None when `fallback` must run them."""
        if len(inputs) != self.n_inputs:
            return None
        for x in inputs:
            if getattr(x, "dtype", None) != self.dtype:
                return None
        rt, xs = ew.on_device(*inputs)
        item = self.dtype.itemsize
        key = tuple((x.shape, x.strides) for x in xs)
        layout = self._layouts.get(key, False)
        if layout is False:
            layout = _layout([(x.shape, tuple(s // item for s in x.strides)) for x in xs],
                             self.extra)
            if layout is not None and math.prod(layout[0]) >= 2 ** 31:
                layout = None
            if len(self._layouts) >= 64:
                self._layouts.clear()
            self._layouts[key] = layout
        if layout is None:
            return None
        return rt, xs, layout

    def _signature(self, inputs, in_place: bool):
        """The key of this group's launch for device arrays `inputs` (see
        `flowgraph.backends.opencl.launches`), or None when they are not all device
        arrays of the group's dtype, or are empty."""
        if len(inputs) != self.n_inputs:
            return None
        for x in inputs:
            if getattr(x, "base_data", None) is None or x.dtype != self.dtype:
                return None
        return (self, in_place, *[(x.shape, x.strides, x.offset) for x in inputs])

    def _repeat(self, sig, inputs):
        """The result of the launch kept under `sig`, or None when there is none yet. A
        kept launch whose `shape` is None writes into input 0 (`in_place`)."""
        rt = runtime_of(inputs[0])
        entry = rt.launches.get(sig)
        if entry is None:
            return None
        out = inputs[0] if entry.shape is None else rt.empty(entry.shape, self.dtype)
        entry(out.base_data, *(x.base_data for x in inputs))
        return out

    def run(self, rt, xs, layout, out, sig=None, into_input=False):
        """Enqueue the group's kernel writing `out` (contiguous, offset 0); with `sig`,
        keep the launch under it (`into_input`: `out` is input 0)."""
        _, modes, nd_strides, dim_args, ndim = layout
        n = out.size
        if n == 0:
            return out
        item = self.dtype.itemsize
        args = [out.data]
        offsets = []
        strides = iter(nd_strides)
        for x, m in zip(xs, modes):
            off = x.offset // item
            offsets.append(off)
            args += [x.base_data, np.int32(off)]
            if m == "n":
                args += next(strides)
        args.append(np.int32(n))
        if _use_vec(rt, n, modes, offsets):
            form, ndim_, sizes = "vec", 0, (ew.grid(-(-n // 4)), None)
        elif "n" in modes and _use_rows(rt):
            inner = int(dim_args[-1])
            form, ndim_, sizes = "rows", ndim, ((inner, n // inner), None)
            args += dim_args
        elif "n" in modes:
            form, ndim_, sizes = "nd", 0, (ew.grid(n), None)
            args += dim_args
        else:
            form, ndim_, sizes = "flat", 0, (ew.grid(n), None)
        if sig is None or len({id(x.base_data) for x in xs}) != len(xs):
            ew.launch(rt, self._kernel(rt, modes, form, ndim_), *sizes, *args)
            return out
        # inputs with buffers of their own: later calls of this signature repeat it
        entry = make(rt, self.source(modes, form, ndim_), f"fused_{form}", *sizes, args,
                     None if into_input else out.shape)
        keep(rt, sig, entry)
        entry(out.base_data, *(x.base_data for x in xs))
        return out

    def __call__(self, *inputs):
        return self._call(inputs, False)

    def in_place(self, *inputs):
        """The variant the in-place pass binds when nobody else holds input 0: the result
        goes into input 0 when that has the result's shape and is a plain array (each
        element is read before it is written, by the same work-item)."""
        return self._call(inputs, True)

    def _call(self, inputs, in_place: bool):
        sig = self._signature(inputs, in_place)
        if sig is not None:
            out = self._repeat(sig, inputs)
            if out is not None:
                return out
        ready = self._prepare(inputs)
        if ready is None:
            return self.fallback(*inputs)
        rt, xs, layout = ready
        x0 = xs[0]
        if in_place and x0.shape == tuple(layout[0]) and ew.is_plain(x0) and x0.size:
            return self.run(rt, xs, layout, x0, sig, into_input=True)
        return self.run(rt, xs, layout, rt.empty(layout[0], self.dtype), sig)


def fused_kernel(ops, operands, n_inputs: int, fallback):
    """The kernel of a fused group on an OpenCL device (`_FusedKernel`), or None for a
    group of one op or of more than `MAX_INPUTS` inputs (those keep their own kernels).

    ``operands[i][k]`` says where op i's input k comes from: ``("in", j)``, the kernel's
    input j; ``("op", m)``, the output of ``ops[m]``; ``("const", value)``, a one-element
    constant of the plan. `fallback(*inputs)` runs the ops one by one.

    >>> import flowgraph as tf
    >>> from flowgraph.ops.op_util import make_op
    >>> with tf.Graph().as_default():
    ...     neg = make_op("Neg", [tf.placeholder(tf.float32, [None])], {})
    ...     relu = make_op("Relu", [neg.outputs[0]], {})
    >>> kernel = fused_kernel([neg, relu], [[("in", 0)], [("op", 0)]], 1, fallback=None)
    >>> [s.strip() for s in kernel.source("f", "flat").splitlines() if "= (T)(" in s]
    ['v0 = (T)(-a0);', 'v1 = (T)(v0 < 0 ? (T)0 : v0);']
    """
    if len(ops) < 2 or n_inputs > MAX_INPUTS:
        return None
    return _FusedKernel(ops, operands, n_inputs, fallback)


backend.register_fusion(fusible, fused_kernel)
