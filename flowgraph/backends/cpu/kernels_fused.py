"""Fused elementwise kernels of the CPU backend: which ops fuse, and the fused kernel.

The planner's fusion pass (`flowgraph/runtime/fusion.py`) finds groups of elementwise ops
and asks the backend for one kernel per group. Here each fusible op becomes one or more
instructions of a `_fused.Program` — the NumPy inner loops its unfused kernel calls, in
the same order, so a fused result is bitwise the unfused one — and the kernel runs the
program over cache-sized blocks without the GIL; a large result is split over the
kernel thread pool (`run_program`). The backend learns of both when its kernel modules
load (`Backend.register_fusion`).

A fusible op here: float32/float64, every input and the output of one dtype, and one of
the types in `_RULES` (the unary and binary arithmetic ufuncs, Relu, ReluGrad, Sigmoid,
Rsqrt, SquaredDifference, BiasAdd in NHWC, AddN, and the backward ops TanhGrad,
SigmoidGrad, SqrtGrad, RsqrtGrad, ReciprocalGrad).

>>> import numpy as np, flowgraph as tf
>>> from flowgraph.backends.cpu.kernels_fused import fusible
>>> with tf.Graph().as_default():
...     y = tf.nn.relu(tf.placeholder(tf.float32, [4]) + 1.0)
>>> fusible(y.op), fusible(y.op.inputs[0].op)
(True, True)
"""

from __future__ import annotations

import functools

import numpy as np

from flowgraph.backends.cpu import _fused, backend, kernel_pool
from flowgraph.backends.cpu._buffers import empty as _empty
from flowgraph.backends.cpu.kernels_grad import OUTPUT_GRAD_SEQUENCES
from flowgraph.backends.fusion_rules import bias_add_fusible

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))

_UNARY = {
    "Neg": "negative", "Abs": "absolute", "Square": "square", "Sqrt": "sqrt", "Exp": "exp",
    "Expm1": "expm1", "Log": "log", "Log1p": "log1p", "Tanh": "tanh", "Sin": "sin",
    "Cos": "cos", "Tan": "tan", "Reciprocal": "reciprocal", "Floor": "floor",
    "Ceil": "ceil", "Sign": "sign",
}
_BINARY = {
    "Add": "add", "AddV2": "add", "Sub": "subtract", "Mul": "multiply",
    "RealDiv": "true_divide", "Maximum": "maximum", "Minimum": "minimum", "Pow": "power",
    "BiasAdd": "add",
}
# Op type -> its unfused kernel's calls, as (loop name, operands); an operand is an
# input position, "t" (the previous call's result) or a float constant. The last call
# writes the output.
_SEQUENCES = {
    **OUTPUT_GRAD_SEQUENCES,
    "Rsqrt": [("sqrt", (0,)), ("reciprocal", ("t",))],
    "SquaredDifference": [("subtract", (0, 1)), ("square", ("t",))],
    "Relu": [("relu", (0,))],
    "ReluGrad": [("relu_grad", (0, 1))],
    "Sigmoid": [("expit", (0,))],
}


def fusible(op) -> bool:
    """Whether `op` can join a fused group on the CPU (see the module docstring)."""
    t = op.type
    if t not in _UNARY and t not in _BINARY and t not in _SEQUENCES and t != "AddN":
        return False
    if len(op._outputs) != 1:
        return False
    dtype = op._outputs[0].dtype
    if dtype.is_ref_dtype or not dtype.is_floating or \
            np.dtype(dtype.as_numpy_dtype) not in _FLOATS:  # (AddN of TensorLists: variant)
        return False
    if any(x.dtype != dtype for x in op._inputs):
        return False
    if t == "BiasAdd":
        return bias_add_fusible(op)
    if t == "AddN":
        shapes = [x.shape for x in op._inputs]
        return len(shapes) >= 2 and all(s.is_fully_defined() and s == shapes[0]
                                        for s in shapes)
    return True


@functools.cache
def _loop(name: str, char: str):
    if name in ("relu", "relu_grad"):
        return _fused.own_loop(name, np.dtype(char))
    if name == "expit":
        import scipy.special

        uf = scipy.special.expit
    else:
        uf = getattr(np, name)
    return _fused.ufunc_loop(uf, char * (uf.nin) + "->" + char)


def _calls(op):
    """The (loop name, operands) sequence of one op (see `_SEQUENCES`)."""
    t = op.type
    if t in _UNARY:
        return [(_UNARY[t], (0,))]
    if t in _BINARY:
        return [(_BINARY[t], (0, 1))]
    if t == "AddN":
        n = len(op._inputs)
        return [("add", (0, 1))] + [("add", ("t", k)) for k in range(2, n)]
    return _SEQUENCES[t]


def build_program(ops, operands, n_inputs: int):
    """A `_fused.Program` for `ops` (topological order; the last one is the result).

    ``operands[i][k]`` says where op i's input k comes from: ``("in", j)``, the fused
    kernel's input j; ``("op", m)``, the output of ``ops[m]`` (m < i); or
    ``("const", value)``, a one-element constant of the plan.
    """
    dtype = np.dtype(ops[-1]._outputs[0].dtype.as_numpy_dtype)
    char = dtype.char
    loops, regs = [], []
    consts: list = []
    last_use = {}
    for i, ops_in in enumerate(operands):
        for kind, j in ops_in:
            if kind == "op":
                last_use[j] = i
    # Temporaries: one register per live intermediate value, reused once dead.
    # Registers are symbolic here, ("t", n) or ("c", n), numbered once all are known.
    free: list = []
    n_temps = 0
    reg_of: dict = {}

    def new_temp():
        nonlocal n_temps
        if free:
            return free.pop()
        n_temps += 1
        return ("t", n_temps - 1)

    def source(kind, j):
        if kind == "in":
            return j
        if kind == "op":
            return reg_of[j]
        consts.append(np.asarray(j, dtype=dtype))
        return ("c", len(consts) - 1)

    for i, op in enumerate(ops):
        srcs = [source(kind, j) for kind, j in operands[i]]
        calls = _calls(op)
        root = i == len(ops) - 1
        prev = None
        for c, (name, args) in enumerate(calls):
            ins = tuple(prev if a == "t" else source("const", a) if isinstance(a, float)
                        else srcs[a] for a in args)
            if root and c == len(calls) - 1:
                out = -1
            elif isinstance(prev, tuple) and prev[0] == "t":
                out = prev  # the previous call's temporary, overwritten in place
            else:
                out = new_temp()
            loops.append(_loop(name, char))
            regs.append((*ins, out))
            prev = out
        if not root:
            reg_of[i] = prev
        for kind, j in operands[i]:
            if kind == "op" and last_use.get(j) == i and reg_of[j] not in free:
                free.append(reg_of[j])

    def number(r):
        if not isinstance(r, tuple):
            return r
        return n_inputs + r[1] if r[0] == "t" else n_inputs + n_temps + r[1]

    regs = [tuple(number(r) for r in rs) for rs in regs]
    return _fused.Program(n_inputs, loops, regs, [dtype.itemsize] * n_temps, dtype,
                          consts)


MAX_INPUTS = 63  # arrays a `_fused.Program` reads (constants not counted)


# -- running ------------------------------------------------------------------------------
# A result is split over the kernel threads when its elements times its instructions
# reach this: each thread's share must outweigh handing it over (20-40 µs, kernel_pool's
# provisional figure). Measured alone on 2 vCPUs (benchmarks/bench_fusion_engines.py):
# relu(x + b), 2 instructions over 2**17 float32 elements, 29 µs on one thread and 62 µs
# split (below this threshold: not split); a 4-instruction chain over 2**22 elements,
# 6.3 ms on one thread and 3.2 ms split.
PARALLEL_MIN_WORK = 1 << 19


def run_program(program, inputs: tuple, out) -> None:
    """Run `program` into `out`, split over the kernel threads (`kernel_pool`) when the
    work is large enough."""
    work = out.size * program.n_code
    if work < PARALLEL_MIN_WORK or kernel_pool.threads() < 2:
        program.run(inputs, out)
        return
    state, n_blocks = program.prepare(inputs, out)
    per_block = max(1, work // max(n_blocks, 1))
    grain = max(1, (PARALLEL_MIN_WORK // 2) // per_block)
    kernel_pool.parallel_for(n_blocks, state.run_range, grain=grain, align=1)


def fused_kernel(ops, operands, n_inputs: int, fallback):
    """The kernel of a fused group (see `build_program`): takes the group's inputs,
    returns the last op's result; None when the group has more inputs than a program
    takes (`MAX_INPUTS`). On inputs it cannot take (shapes that do not broadcast,
    unexpected dtypes) it calls `fallback(*inputs)`, which runs the ops one by one and
    so raises the error the failing op would raise.

    ``kernel.in_place`` is the variant the in-place pass binds when nobody else holds
    input 0: it writes the result into input 0 when that has the result's shape, dtype
    and layout (each element is read before it is written: same index, same block).
    """
    if n_inputs > MAX_INPUTS:
        return None
    program = build_program(ops, operands, n_inputs)
    dtype = program.dtype
    # A one-element constant of rank > 0 still widens the result's rank ([n] + [[c]]).
    const_shapes = [np.shape(v) for ops_in in operands for kind, v in ops_in
                    if kind == "const" and np.ndim(v)]
    extra = np.broadcast_shapes(*const_shapes) if const_shapes else ()
    result_shape = _fused.result_shape

    def prepare(inputs):
        arrays = []
        for a in inputs:
            if type(a) is not np.ndarray or a.dtype != dtype:
                if not isinstance(a, np.ndarray | np.generic) or a.dtype != dtype:
                    return None, None
                a = np.asarray(a)
            arrays.append(a)
        try:
            arrays = tuple(arrays)
            return arrays, result_shape(arrays, extra)
        except ValueError:
            return None, None

    def kernel(*inputs):
        arrays, shape = prepare(inputs)
        if arrays is None:
            return fallback(*inputs)
        out = _empty(shape, dtype)
        run_program(program, arrays, out)
        return out

    def in_place(*inputs):
        arrays, shape = prepare(inputs)
        if arrays is None:
            return fallback(*inputs)
        out = arrays[0]
        if out.shape != shape or not out.flags.c_contiguous or not out.flags.writeable:
            out = _empty(shape, dtype)
        run_program(program, arrays, out)
        return out

    kernel.program = program
    kernel.in_place = in_place
    return kernel


backend.register_fusion(fusible, fused_kernel)
