# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""A block interpreter for fused elementwise expressions, without the GIL.

State it keeps
--------------
A `Program` is immutable after construction: a list of instructions, each a NumPy
inner-loop function (the very loop NumPy's ufunc would pick for those dtypes, read from
the ufunc object) or one of this module's own loops, with its data pointer and the
registers it reads and writes. Registers are numbered: first the program's inputs, then
its temporaries; ``OUT`` (-1) is the result array. A `Program` holds a reference to
every ufunc whose loops it calls, so the function pointers stay valid.

`Program.run` writes into an array the caller made (C-contiguous, of the broadcast
shape of all inputs, the program's result dtype); it never writes to its inputs.

How it runs
-----------
The result's index space is cut into blocks of at most ``BLOCK`` elements along its
last (collapsed) dimension. For each block every instruction runs over that block only,
reading inputs in place (broadcast dimensions have stride 0) and temporaries from a small
per-call scratch area, so intermediate values stay in the cache and never become arrays::

    out[i] = relu(x[i] + b[i % C])      block 0: t0 = add(x, b); out = relu(t0)
                                        block 1: ...

Because the loops are NumPy's own, each fused operation gives bitwise the result the
unfused kernel gives. Blocks are independent: `run` may split them over several threads
(`run_range` releases the GIL), each with its own scratch area.

Example
-------
>>> import numpy as np
>>> from flowgraph.backends.cpu._fused import Program, ufunc_loop
>>> add = ufunc_loop(np.add, "dd->d")
>>> p = Program(2, [add], [(0, 1, -1)], [], np.float64)
>>> out = np.empty(3)
>>> p.run((np.ones(3), np.arange(3.0)), out)
array([1., 2., 3.])
"""

cimport numpy as cnp
from cython cimport floating
from libc.stdlib cimport free, malloc

import numpy as np

cnp.import_array()

ctypedef void (*loop_fn)(char **args, cnp.npy_intp *dims, cnp.npy_intp *steps,
                         void *data) noexcept nogil

DEF MAX_ARGS = 4
DEF MAX_DIMS = 32
DEF MAX_OPS = 64

BLOCK = 4096
cdef cnp.npy_intp _BLOCK = 4096


cdef struct Instr:
    loop_fn fn
    void *data
    int nargs
    int reg[MAX_ARGS]


# -- this module's own loops (NumPy has no single ufunc for them) ----------------------------
cdef inline void _relu_loop(const floating *x, floating *o, cnp.npy_intp n,
                            cnp.npy_intp sx, cnp.npy_intp so) noexcept nogil:
    # As `_nn.relu`: 0 where x < 0, else x (NaN stays NaN). The unit-stride loop is
    # the common case and vectorizes; strides are in elements.
    cdef cnp.npy_intp i
    cdef floating zero = 0
    cdef floating v
    if sx == 1 and so == 1:
        for i in range(n):
            v = x[i]
            o[i] = zero if v < zero else v
    else:
        for i in range(n):
            v = x[i * sx]
            o[i * so] = zero if v < zero else v


cdef inline void _relu_grad_loop(const floating *g, const floating *x, floating *o,
                                 cnp.npy_intp n, cnp.npy_intp sg, cnp.npy_intp sx,
                                 cnp.npy_intp so) noexcept nogil:
    # As `_nn.relu_grad`: g * (x > 0), a multiply by the mask (a NaN in g stays NaN).
    cdef cnp.npy_intp i
    cdef floating zero = 0
    cdef floating one = 1
    cdef floating m
    if sg == 1 and sx == 1 and so == 1:
        for i in range(n):
            m = one if x[i] > zero else zero
            o[i] = g[i] * m
    else:
        for i in range(n):
            m = one if x[i * sx] > zero else zero
            o[i * so] = g[i * sg] * m


cdef void _relu_f(char **args, cnp.npy_intp *dims, cnp.npy_intp *steps,
                  void *data) noexcept nogil:
    _relu_loop(<float*>args[0], <float*>args[1], dims[0], steps[0] // 4, steps[1] // 4)


cdef void _relu_d(char **args, cnp.npy_intp *dims, cnp.npy_intp *steps,
                  void *data) noexcept nogil:
    _relu_loop(<double*>args[0], <double*>args[1], dims[0], steps[0] // 8, steps[1] // 8)


cdef void _relu_grad_f(char **args, cnp.npy_intp *dims, cnp.npy_intp *steps,
                       void *data) noexcept nogil:
    _relu_grad_loop(<float*>args[0], <float*>args[1], <float*>args[2], dims[0],
                    steps[0] // 4, steps[1] // 4, steps[2] // 4)


cdef void _relu_grad_d(char **args, cnp.npy_intp *dims, cnp.npy_intp *steps,
                       void *data) noexcept nogil:
    _relu_grad_loop(<double*>args[0], <double*>args[1], <double*>args[2], dims[0],
                    steps[0] // 8, steps[1] // 8, steps[2] // 8)


cdef class Loop:
    """One instruction's loop: a function pointer, its data, its argument count."""

    cdef loop_fn fn
    cdef void *data
    cdef readonly int nargs
    cdef readonly object owner  # keeps the ufunc (and so its loop tables) alive
    cdef readonly str label


def ufunc_loop(cnp.ufunc uf, str types):
    """The inner loop NumPy's `uf` uses for `types` (e.g. ``"ff->f"``).

    >>> import numpy as np
    >>> ufunc_loop(np.multiply, "ff->f").nargs
    3
    """
    want = [np.dtype(c).num for c in types.replace("->", "")]
    # The Python-level list ("ff->f" per loop, in the order of `functions`): NumPy 2.5's
    # Cython declarations no longer give the C `types` table, and the characters are
    # compared as type numbers, since two characters can name one type (l, q).
    listed = (<object>uf).types
    cdef int k
    for k in range(uf.ntypes):
        if [np.dtype(c).num for c in listed[k].replace("->", "")] == want:
            break
    else:
        raise KeyError(f"{uf.__name__} has no {types} loop")
    if uf.functions[k] == NULL:
        raise KeyError(f"{uf.__name__}'s {types} loop is not a plain inner loop")
    cdef Loop loop = Loop.__new__(Loop)
    loop.fn = <loop_fn>uf.functions[k]
    loop.data = uf.data[k]
    loop.nargs = uf.nargs
    loop.owner = uf
    loop.label = f"{uf.__name__}[{types}]"
    return loop


def own_loop(str name, dtype):
    """One of this module's loops: ``relu`` or ``relu_grad`` for float32/float64."""
    cdef Loop loop = Loop.__new__(Loop)
    single = np.dtype(dtype) == np.float32
    if name == "relu":
        loop.fn = _relu_f if single else _relu_d
        loop.nargs = 2
    elif name == "relu_grad":
        loop.fn = _relu_grad_f if single else _relu_grad_d
        loop.nargs = 3
    else:
        raise KeyError(name)
    loop.data = NULL
    loop.label = f"{name}[{np.dtype(dtype).name}]"
    return loop


def result_shape(tuple arrays, tuple extra=()):
    """The broadcast shape of `arrays` (ndarrays) and of the shape `extra`, as NumPy
    broadcasts them; ValueError when they do not broadcast.

    >>> import numpy as np
    >>> result_shape((np.ones((4, 1)), np.ones(3)), (1, 1, 1))
    (1, 4, 3)
    """
    cdef int nd = len(extra), k, off
    cdef cnp.ndarray a
    for a in arrays:
        if cnp.PyArray_NDIM(a) > nd:
            nd = cnp.PyArray_NDIM(a)
    if nd > MAX_DIMS:
        raise ValueError(f"rank {nd} exceeds {MAX_DIMS}")
    cdef cnp.npy_intp dims[MAX_DIMS]
    cdef cnp.npy_intp d
    for k in range(nd):
        dims[k] = 1
    for a in arrays:
        off = nd - cnp.PyArray_NDIM(a)
        for k in range(cnp.PyArray_NDIM(a)):
            d = cnp.PyArray_DIMS(a)[k]
            if d != 1:
                if dims[off + k] == 1:
                    dims[off + k] = d
                elif dims[off + k] != d:
                    raise ValueError(f"shapes {[x.shape for x in arrays]} do not broadcast")
    off = nd - len(extra)
    for k in range(len(extra)):
        d = extra[k]
        if d != 1:
            if dims[off + k] == 1:
                dims[off + k] = d
            elif dims[off + k] != d:
                raise ValueError(f"shape {extra} does not broadcast with the inputs")
    return tuple([dims[k] for k in range(nd)])


cdef struct Call:
    Instr *code
    int n_code, n_inputs, n_ops, ndim  # n_ops: the inputs plus the result (last)
    cnp.npy_intp *temp_offset  # per temporary: its byte offset in a block's scratch
    cnp.npy_intp *temp_size  # per temporary: its item size
    int n_temps
    char **const_ptr  # per constant: its one element
    cnp.npy_intp scratch_bytes  # per block
    cnp.npy_intp blocks_per_row
    cnp.npy_intp shape[MAX_DIMS]
    char *base[MAX_OPS]
    cnp.npy_intp strides[MAX_OPS][MAX_DIMS]


cdef class Program:
    """A fused expression: `n_inputs` inputs, instructions over registers, one result.

    `loops[i]` runs with registers `regs[i]` (its inputs, then its output): an input
    ``k < n_inputs``, a temporary ``n_inputs + t`` (`temp_sizes[t]`: its item size in
    bytes), a constant ``n_inputs + len(temp_sizes) + c`` (`consts[c]`, a one-element
    array read at every index), or -1 for the result array. `dtype` is the result's
    dtype.
    """

    cdef Instr *code
    cdef readonly int n_code, n_inputs, n_temps, n_consts
    cdef cnp.npy_intp *temp_offset
    cdef cnp.npy_intp *temp_size
    cdef char **const_ptr
    cdef cnp.npy_intp scratch_bytes
    cdef readonly object loops, dtype, consts

    def __cinit__(self):
        self.code = NULL
        self.temp_offset = NULL
        self.temp_size = NULL
        self.const_ptr = NULL

    def __init__(self, int n_inputs, list loops, list regs, list temp_sizes, dtype,
                 list consts=None):
        cdef int t
        if len(loops) != len(regs):
            raise ValueError("one register tuple per loop")
        if n_inputs + 1 > MAX_OPS:
            raise ValueError(f"a fused expression takes at most {MAX_OPS - 1} inputs")
        self.n_inputs = n_inputs
        self.n_temps = len(temp_sizes)
        self.n_code = len(loops)
        self.loops = list(loops)
        self.consts = [np.array(c, copy=True).reshape(-1) for c in consts or ()]
        self.n_consts = len(self.consts)
        self.const_ptr = <char**>malloc(max(1, self.n_consts) * sizeof(char*))
        if self.const_ptr == NULL:
            raise MemoryError()
        cdef cnp.ndarray carr
        for t in range(self.n_consts):
            carr = self.consts[t]
            if carr.size != 1:
                raise ValueError(f"constant {t} has {carr.size} elements, not 1")
            self.const_ptr[t] = <char*>cnp.PyArray_DATA(carr)
        self.dtype = np.dtype(dtype)
        self.code = <Instr*>malloc(max(1, self.n_code) * sizeof(Instr))
        self.temp_offset = <cnp.npy_intp*>malloc(max(1, self.n_temps) * sizeof(cnp.npy_intp))
        self.temp_size = <cnp.npy_intp*>malloc(max(1, self.n_temps) * sizeof(cnp.npy_intp))
        if self.code == NULL or self.temp_offset == NULL or self.temp_size == NULL:
            raise MemoryError()
        cdef cnp.npy_intp off = 0
        for t in range(self.n_temps):
            self.temp_offset[t] = off
            self.temp_size[t] = <cnp.npy_intp>temp_sizes[t]
            off += self.temp_size[t] * _BLOCK
        self.scratch_bytes = off
        cdef Loop loop
        cdef int i, k
        for i in range(self.n_code):
            loop = loops[i]
            r = regs[i]
            if len(r) != loop.nargs or loop.nargs > MAX_ARGS:
                raise ValueError(f"{loop.label} takes {loop.nargs} registers, got {r}")
            self.code[i].fn = loop.fn
            self.code[i].data = loop.data
            self.code[i].nargs = loop.nargs
            for k in range(loop.nargs):
                if not -1 <= r[k] < n_inputs + self.n_temps + self.n_consts:
                    raise ValueError(f"register {r[k]} out of range")
                self.code[i].reg[k] = r[k]

    def __dealloc__(self):
        free(self.code)
        free(self.temp_offset)
        free(self.temp_size)
        free(self.const_ptr)

    def prepare(self, tuple inputs, cnp.ndarray out):
        """One call's state over `inputs` and `out` (C-contiguous, the broadcast shape):
        ``(state, n_blocks)``; ``state.run_range(b0, b1)`` evaluates blocks b0..b1-1
        without the GIL, so threads may share the blocks out."""
        cdef Prepared st = Prepared.__new__(Prepared)
        n_blocks = _prepare(self, inputs, out, &st.call)
        st.keep = (self, inputs, out)
        return st, n_blocks

    def run(self, tuple inputs, cnp.ndarray out):
        """Evaluate into `out` (C-contiguous, the broadcast shape); returns `out`."""
        cdef Call call
        cdef cnp.npy_intp n_blocks = _prepare(self, inputs, out, &call)
        _run_locked(&call, 0, n_blocks)
        return out


cdef class Prepared:
    """One call's operands, shared by the threads that evaluate its blocks."""

    cdef Call call
    cdef object keep  # the program, the input arrays and the result, alive meanwhile

    def run_range(self, cnp.npy_intp b0, cnp.npy_intp b1):
        """Evaluate blocks ``b0 <= b < b1`` (GIL released)."""
        _run_locked(&self.call, b0, b1)


cdef int _run_locked(Call *call, cnp.npy_intp b0, cnp.npy_intp b1) except -1:
    cdef char *scratch = NULL
    if call.scratch_bytes:
        scratch = <char*>malloc(call.scratch_bytes)
        if scratch == NULL:
            raise MemoryError()
    with nogil:
        _run_blocks(call, scratch, b0, b1)
    free(scratch)
    return 0


cdef cnp.npy_intp _prepare(Program prog, tuple inputs, cnp.ndarray out,
                           Call *call) except -1:
    cdef int n_in = prog.n_inputs
    if len(inputs) != n_in:
        raise ValueError(f"the fused expression takes {n_in} inputs, got {len(inputs)}")
    call.code = prog.code
    call.n_code = prog.n_code
    call.n_inputs = n_in
    call.n_ops = n_in + 1
    call.temp_offset = prog.temp_offset
    call.temp_size = prog.temp_size
    call.n_temps = prog.n_temps
    call.const_ptr = prog.const_ptr
    call.scratch_bytes = prog.scratch_bytes
    cdef int d = cnp.PyArray_NDIM(out)
    if d > MAX_DIMS:
        raise ValueError(f"rank {d} exceeds {MAX_DIMS}")
    cdef cnp.npy_intp shape[MAX_DIMS]
    cdef cnp.npy_intp strides[MAX_OPS][MAX_DIMS]
    cdef int i, k, j, nd, m = 0
    cdef bint merge
    cdef cnp.ndarray a
    # Dimensions of size 1 contribute nothing: keep the others only.
    for k in range(d):
        if cnp.PyArray_DIMS(out)[k] != 1:
            shape[m] = cnp.PyArray_DIMS(out)[k]
            strides[n_in][m] = cnp.PyArray_STRIDES(out)[k]
            m += 1
    call.base[n_in] = <char*>cnp.PyArray_DATA(out)
    for i in range(n_in):
        a = <cnp.ndarray>inputs[i]
        nd = cnp.PyArray_NDIM(a)
        if nd > d:
            raise ValueError(f"fused input {i} has rank {nd} > the result's {d}")
        call.base[i] = <char*>cnp.PyArray_DATA(a)
        m = 0
        for k in range(d):
            if cnp.PyArray_DIMS(out)[k] == 1:
                continue
            j = k - (d - nd)
            if j < 0 or cnp.PyArray_DIMS(a)[j] == 1:
                strides[i][m] = 0
            elif cnp.PyArray_DIMS(a)[j] == cnp.PyArray_DIMS(out)[k]:
                strides[i][m] = cnp.PyArray_STRIDES(a)[j]
            else:
                raise ValueError(f"fused input {i} of shape {(<object>a).shape} does not "
                                 f"broadcast to {(<object>out).shape}")
            m += 1
    # Merge dimension k into the previous one where every operand walks them as one.
    cdef int nd_out = 1
    if m == 0:
        call.shape[0] = 1
        for i in range(call.n_ops):
            call.strides[i][0] = 0
    else:
        call.shape[0] = shape[0]
        for i in range(call.n_ops):
            call.strides[i][0] = strides[i][0]
        for k in range(1, m):
            merge = True  # a bint: this runs on every call
            for i in range(call.n_ops):
                if call.strides[i][nd_out - 1] != shape[k] * strides[i][k]:
                    merge = False
                    break
            if merge:
                call.shape[nd_out - 1] *= shape[k]
                for i in range(call.n_ops):
                    call.strides[i][nd_out - 1] = strides[i][k]
            else:
                call.shape[nd_out] = shape[k]
                for i in range(call.n_ops):
                    call.strides[i][nd_out] = strides[i][k]
                nd_out += 1
    call.ndim = nd_out
    cdef cnp.npy_intp inner = call.shape[nd_out - 1]
    cdef cnp.npy_intp rows = 1
    for k in range(nd_out - 1):
        rows *= call.shape[k]
    if inner == 0 or rows == 0:
        call.blocks_per_row = 1
        return 0
    call.blocks_per_row = (inner + _BLOCK - 1) // _BLOCK
    return rows * call.blocks_per_row


cdef void _run_blocks(Call *call, char *scratch, cnp.npy_intp b0,
                      cnp.npy_intp b1) noexcept nogil:
    cdef int d = call.ndim, n_in = call.n_inputs, n_ops = call.n_ops
    cdef int i, k, r
    cdef cnp.npy_intp b, row, rest, idx, j0, n, inner = call.shape[d - 1]
    cdef char *ptr[MAX_OPS]
    cdef char *args[MAX_ARGS]
    cdef cnp.npy_intp steps[MAX_ARGS]
    cdef Instr *ins
    for b in range(b0, b1):
        row = b // call.blocks_per_row
        j0 = (b - row * call.blocks_per_row) * _BLOCK
        n = inner - j0
        if n > _BLOCK:
            n = _BLOCK
        for i in range(n_ops):
            ptr[i] = call.base[i] + j0 * call.strides[i][d - 1]
        rest = row
        for k in range(d - 2, -1, -1):
            idx = rest % call.shape[k]
            rest = rest // call.shape[k]
            if idx:
                for i in range(n_ops):
                    ptr[i] += idx * call.strides[i][k]
        for i in range(call.n_code):
            ins = &call.code[i]
            for k in range(ins.nargs):
                r = ins.reg[k]
                if r < 0:
                    args[k] = ptr[n_in]
                    steps[k] = call.strides[n_in][d - 1]
                elif r < n_in:
                    args[k] = ptr[r]
                    steps[k] = call.strides[r][d - 1]
                elif r < n_in + call.n_temps:
                    args[k] = scratch + call.temp_offset[r - n_in]
                    steps[k] = call.temp_size[r - n_in]
                else:
                    args[k] = call.const_ptr[r - n_in - call.n_temps]
                    steps[k] = 0
            ins.fn(args, &n, steps, ins.data)
