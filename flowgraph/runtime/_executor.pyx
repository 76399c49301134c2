# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The dataflow executor: runs one compiled plan for one `Session.run` step.

State it keeps
--------------
A `Plan` is flat C arrays built once per run signature: per node its kernel (a C array
of owned references), its input slots (CSR ``in_ptr``/``in_slots``), its first output
slot and output count, its successor nodes (CSR ``succ_ptr``/``succ``, one entry per
distinct producer->consumer pair), its initial pending count and flags; per slot (one
slot per tensor) the number of uses; the slots that hold constants from the start.

A `Step` is one run. Its working memory is a `Buffers` block: ``pending`` and ``uses``
(copied from the plan), ``vals`` (one owned ``PyObject*`` per slot, NULL when empty),
the calling thread's ready stack and the lock it waits on. The plan keeps one spare
block and one spare stack, so a step that does not overlap another step of the same
plan allocates nothing but itself.

Invariants
----------
* A node is pushed on a ready stack exactly once: when its pending count reaches 0.
  A stack never holds more than ``n_nodes`` entries.
* A slot's value is dropped the moment its use count reaches 0, so memory follows the
  schedule; fetched slots carry one extra use and survive to the end. When the step
  ends, every slot is NULL again, so the block can be reused as it is.
* While a kernel runs, its inputs stay in ``vals`` (their uses include this node), so
  the kernel is called with borrowed references straight from ``vals``: no tuple, no
  list (``PyObject_Vectorcall``).
* ``active`` counts work outside the calling thread's own stack (nodes handed to the
  shared queue, nodes running on pool threads, async kernels in flight); ``n_async``
  counts the async kernels whose completion has not been called yet. The step ends
  when the caller's stack is empty and ``active`` is 0, or, after an error, when
  ``active - n_async`` is 0: queued work is dropped, work running on other threads is
  waited for, and completions that arrive after the end (``finished``) are ignored.
* All bookkeeping (pending counts, stacks, slot values) happens while holding the GIL,
  and never calls back into Python in between, so it is atomic with respect to other
  threads; threads release the GIL only to block (waiting for work or for the step to
  finish) and inside kernels that release it themselves (NumPy, BLAS, Cython nogil).
  A slot is set to NULL before its old value is released, because releasing may run
  arbitrary Python code.

Scheduling
----------
The calling thread runs the step. When a node finishes, its ready successors are pushed
on the finishing thread's own stack, so a chain never changes thread; cheap nodes
always stay local. A thread keeps one ready expensive node only when its stack is
otherwise empty; every other expensive ready node goes to the step's shared queue and
wakes one pool thread (or the caller, if it is waiting), so independent heavy branches
overlap, also when each sits behind its own chain of cheap nodes::

        feed ─┬─ A (expensive) ── C ─┐
              └─ B (expensive) ── D ─┴─ AddN ── fetch
    caller: feed, A, C, ...     pool thread: B, D      (AddN runs where the last input lands)

Which nodes count as expensive is decided when the plan is built (``plan.py``, through
`Backend.hand_off` and `Backend.blas_is_parallel`): on the CPU, while BLAS is
multi-threaded, no node of a plan with matrix products does (BLAS's threads already use
every core; a second executor thread only competes with them), and optimizer updates of
small variables never do (the hand-off would cost more than the update).

Dead values (the untaken side of a `Switch`) are the `DEAD` sentinel: a node with a dead
input produces dead outputs without running its kernel, except `Merge`, which takes its
first live input.

Frames (plans with control flow)
--------------------------------
A plan whose graph has control-flow ops (`Plan.set_frames`) runs on a second, frame-aware
path; plans without them run on the path above, untouched. Static tables: per node the
frame it runs in (0 is the root; each `tf.while_loop` is one frame, nested loops are
child frames), its index inside that frame, its *kind* (normal, Enter, constant Enter,
Exit, NextIteration, loop Merge) and, for an Enter, the frame it enters; per slot the
frame whose nodes read it and its index there; per frame its parent,
``parallel_iterations``, its initial pending counts and use counts (frame-local), its
Enter count and its Exit nodes; per successor edge whether it is a control-only edge.

Dynamic state: an `IterState` per live iteration of a frame instance holds that
iteration's ``pending``/``uses``/``vals``/``cdead`` arrays (allocated when the iteration
starts, freed when it retires; the root iteration borrows the step's buffers), the
number of its nodes queued or running plus its live child frames (``outstanding``), and
the child frame instances entered from it. A `FrameState` (one loop entered from one
parent iteration) holds its live iterations, the loop invariants received so far, the
values held back by the ``parallel_iterations`` window, and which Exits fired. A ready
task is a (node, iteration) pair; stacks hold both.

Where a node's outputs go depends on its kind: a normal node writes its own iteration;
an Enter writes iteration 0 of the child frame instance (created on first use); a
constant Enter writes every live iteration of it and is replayed into each iteration
started later; a NextIteration writes iteration k+1 (started on the first such value, or
queued while ``parallel_iterations`` iterations are live); an Exit writes the parent
iteration. Deadness also follows control edges (``cdead``): a node with a dead control
predecessor is dead, so a constant inside an untaken branch is dead too. A loop Merge
has pending count 1 (plus control edges): it fires on whichever of its Enter (iteration
0) or NextIteration (later iterations) input arrives.

Invariants of the frame path:

* A dead NextIteration value is dropped: a finished loop's last iteration produces no
  successor, and its dead body keeps nothing alive.
* Iteration k retires when ``outstanding`` is 0, iteration k-1 has retired, and (for k =
  0) every Enter of the frame has delivered. Retiring starts the queued iteration, if any.
* A frame instance is done when its last iteration retires; then every Exit that never
  fired a live value delivers ``DEAD`` to the parent (so a cond around the loop still
  merges), the parent iteration's ``outstanding`` drops by one, and the instance is gone.
* An iteration outlives every task that refers to it (``outstanding``), so stacks hold
  borrowed pointers. After an error, the step drops all frame instances at the end.

A loop ``while i < 3: i += 1`` with ``parallel_iterations=2``::

    root:  Const ─ Enter ──┐                             ┌─ Exit ─ fetch
    frame:          iter 0: Merge ─ Less ─ Switch ─┬─ Identity ─ Add ─ NextIteration ─┐
                    iter 1: Merge ◄─────────────────────────────────────────────────────┘
                    ...     (iter 2 waits in `queued` until iter 0 retires)
                    iter 3: Less false ─ Switch ─ Exit (live) ; Identity dead ─ dropped

What a node costs
-----------------
On the common path (no tracing, not async, at most ``SMALL_ARGS - 1`` inputs) a node is:
read its input pointers into a C array on the C stack, one vectorcall, store the
result pointer, decrement input uses and successor pending counts. No Python object is
created by the executor, so nothing feeds the cyclic garbage collector.

Kernels run with NumPy's floating-point errors ignored (TensorFlow computes inf and nan
without complaint); the error state is set once per thread entry (a step, a shared
node, an async completion), not per kernel.

Values inside a step may be NumPy scalars as well as ndarrays: a ufunc kernel called on
0-d inputs returns a scalar (``np.float64``, ``np.int32``, ...), and scalar arithmetic
costs about half of 0-d array arithmetic (0.11 vs 0.24 µs per ``np.sin`` here), which is
most of the time of a chain of small ops. Every kernel accepts scalars (they have
``dtype``, ``shape`` and ``ndim``); the session hands 0-d fetches back as NumPy scalars,
as TensorFlow does.
"""

cimport numpy as cnp
from cpython.exc cimport PyErr_Fetch, PyErr_NormalizeException
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.pythread cimport (
    PyThread_acquire_lock,
    PyThread_allocate_lock,
    PyThread_free_lock,
    PyThread_get_thread_ident,
    PyThread_release_lock,
    PyThread_type_lock,
    WAIT_LOCK,
)
from cpython.ref cimport Py_DECREF, Py_INCREF, Py_XDECREF, PyObject
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memcpy
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec

import collections
import sys
import threading

import numpy as np

from flowgraph.framework.dead import DEAD

cnp.import_array()


cdef extern from "Python.h":
    PyObject* PyObject_Vectorcall(PyObject* callable, PyObject** args, size_t nargsf,
                                  PyObject* kwnames)
    size_t PY_VECTORCALL_ARGUMENTS_OFFSET
    int PyException_SetTraceback(PyObject* ex, PyObject* tb)
    object PyContextVar_Set(object var, object value)
    int PyContextVar_Reset(object var, object token) except -1


cdef enum:
    F_HAND_OFF = 1
    F_ASYNC = 2
    F_NEEDS_STEP = 4
    F_MERGE = 8
    F_MULTI_OUT = 16
    SMALL_ARGS = 16  # argument arrays up to this size live on the C stack


cdef enum:  # what a node does with its outputs (plans with control flow)
    K_NORMAL = 0  # outputs go to the node's own frame and iteration
    K_ENTER = 1  # outputs go to iteration 0 of the child frame
    K_CONST_ENTER = 2  # outputs go to every iteration of the child frame
    K_EXIT = 3  # a live output goes to the parent frame's iteration
    K_NEXT = 4  # a live output goes to the next iteration of the same frame
    K_LOOP_MERGE = 5  # a Merge fed by an Enter and a NextIteration (fires on one input)


cdef PyObject* DEAD_P = <PyObject*>DEAD  # DEAD lives as long as its module
FLAG_HAND_OFF = F_HAND_OFF
FLAG_ASYNC = F_ASYNC
FLAG_NEEDS_STEP = F_NEEDS_STEP
FLAG_MERGE = F_MERGE
FLAG_MULTI_OUT = F_MULTI_OUT
KIND_NORMAL = K_NORMAL
KIND_ENTER = K_ENTER
KIND_CONST_ENTER = K_CONST_ENTER
KIND_EXIT = K_EXIT
KIND_NEXT = K_NEXT
KIND_LOOP_MERGE = K_LOOP_MERGE


# Kernels run with floating-point errors ignored, as TensorFlow computes inf and nan
# without complaint. The executor sets NumPy's error state once per thread entry (step,
# shared node, async completion), so kernels need no `np.errstate` of their own (which
# costs microseconds per call). NumPy keeps the state in a context variable; if its
# private name moves, fall back to `np.errstate` objects.
cdef object ERR_VAR = None
cdef object ERR_IGNORE = None
try:
    from numpy._core._ufunc_config import _extobj_contextvar, _make_extobj

    ERR_VAR = _extobj_contextvar
    ERR_IGNORE = _make_extobj(all="ignore")
except (ImportError, AttributeError, TypeError):  # pragma: no cover - other NumPy versions
    ERR_VAR = None

cdef object quiet_enter():
    """Ignore floating-point errors on this thread; return what `quiet_exit` needs."""
    if ERR_VAR is not None:
        return PyContextVar_Set(ERR_VAR, ERR_IGNORE)
    state = np.errstate(all="ignore")
    state.__enter__()
    return state


cdef int quiet_exit(object token) except -1:
    if ERR_VAR is not None:
        PyContextVar_Reset(ERR_VAR, token)
    else:
        token.__exit__(None, None, None)
    return 0


cdef inline long long now_ns() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return <long long>ts.tv_sec * 1000000000 + ts.tv_nsec


def monotonic_ns():
    """The executor's clock (CLOCK_MONOTONIC, ns), for aligning traces."""
    return now_ns()


cdef int* int_array(object seq) except NULL:
    cdef Py_ssize_t n = len(seq)
    cdef int* out = <int*>malloc((n if n > 0 else 1) * sizeof(int))
    if out == NULL:
        raise MemoryError()
    cdef Py_ssize_t i
    for i in range(n):
        out[i] = seq[i]
    return out


cdef PyObject** object_array(object seq) except NULL:
    """A C array of owned references to the items of `seq`."""
    cdef Py_ssize_t n = len(seq)
    cdef PyObject** out = <PyObject**>malloc((n if n > 0 else 1) * sizeof(PyObject*))
    if out == NULL:
        raise MemoryError()
    cdef Py_ssize_t i
    cdef object v
    for i in range(n):
        v = seq[i]
        Py_INCREF(v)
        out[i] = <PyObject*>v
    return out


cdef struct Buffers:
    int* pending
    int* uses
    PyObject** vals
    int* stack
    PyThread_type_lock done_lock  # held whenever nobody waits on it


cdef void free_buffers(Buffers* b) noexcept:
    """Free `b`; its ``vals`` must all be NULL already."""
    if b == NULL:
        return
    free(b.pending)
    free(b.uses)
    free(b.vals)
    free(b.stack)
    if b.done_lock != NULL:
        PyThread_release_lock(b.done_lock)
        PyThread_free_lock(b.done_lock)
    free(b)


cdef class Plan:
    """A compiled run plan (see the module docstring for its arrays)."""

    cdef int n_nodes
    cdef int n_slots
    cdef int* in_ptr
    cdef int* in_slots
    cdef int* out_base
    cdef int* n_out
    cdef int* succ_ptr
    cdef int* succ
    cdef int* pending_init
    cdef int* uses_init
    cdef int* flags
    cdef int* initial_ready
    cdef int n_initial_ready
    cdef PyObject** kern
    cdef int* init_slots
    cdef PyObject** init_vals
    cdef int n_init
    cdef Buffers* spare
    cdef int* spare_stack
    cdef readonly list kernels
    cdef readonly list initial_values
    cdef public list node_names
    cdef public object describe_error
    cdef object _succ_sets
    cdef object _pending
    # Control flow (see "Frames" in the module docstring); all NULL without it.
    cdef bint has_cf
    cdef int n_frames
    cdef int* node_frame
    cdef int* node_local
    cdef int* node_kind
    cdef int* enter_child
    cdef int* slot_local
    cdef char* succ_ctl
    cdef int* frame_parallel
    cdef int* frame_nn
    cdef int* frame_ns
    cdef int* frame_n_enters
    cdef int* frame_pending_off
    cdef int* frame_pending
    cdef int* frame_uses_off
    cdef int* frame_uses
    cdef int* exit_ptr
    cdef int* exit_nodes
    cdef object _frames
    cdef object _ctl_pairs

    def __cinit__(self):
        self.in_ptr = NULL
        self.in_slots = NULL
        self.out_base = NULL
        self.n_out = NULL
        self.succ_ptr = NULL
        self.succ = NULL
        self.pending_init = NULL
        self.uses_init = NULL
        self.flags = NULL
        self.initial_ready = NULL
        self.kern = NULL
        self.init_slots = NULL
        self.init_vals = NULL
        self.n_init = 0
        self.n_nodes = 0
        self.spare = NULL
        self.spare_stack = NULL
        self.has_cf = False
        self.n_frames = 0
        self.node_frame = NULL
        self.node_local = NULL
        self.node_kind = NULL
        self.enter_child = NULL
        self.slot_local = NULL
        self.succ_ctl = NULL
        self.frame_parallel = NULL
        self.frame_nn = NULL
        self.frame_ns = NULL
        self.frame_n_enters = NULL
        self.frame_pending_off = NULL
        self.frame_pending = NULL
        self.frame_uses_off = NULL
        self.frame_uses = NULL
        self.exit_ptr = NULL
        self.exit_nodes = NULL

    def __init__(self, int n_slots, list kernels, list inputs, list out_base, list n_out,
                 list flags, list uses, list initial_values, list node_names,
                 object describe_error):
        """Build from per-node Python lists; `inputs[i]` is node i's input slot list.

        `kernels` and `initial_values` are frozen here: later changes to the lists are
        not seen by the executor.
        """
        cdef int n = len(kernels)
        self.n_nodes = n
        self.n_slots = n_slots
        self.kernels = kernels
        self.initial_values = initial_values
        self.node_names = node_names
        self.describe_error = describe_error
        producer = [-1] * n_slots
        for i in range(n):
            for k in range(n_out[i]):
                producer[out_base[i] + k] = i
        in_ptr = [0]
        flat_inputs = []
        succ_sets = [[] for _ in range(n)]
        pending = [0] * n
        for i in range(n):
            seen = set()
            for s in inputs[i]:
                flat_inputs.append(s)
                p = producer[s]
                if p >= 0 and p not in seen:
                    seen.add(p)
                    succ_sets[p].append(i)
                    pending[i] += 1
            in_ptr.append(len(flat_inputs))
        self.in_ptr = int_array(in_ptr)
        self.in_slots = int_array(flat_inputs)
        self.out_base = int_array(out_base)
        self.n_out = int_array(n_out)
        self.flags = int_array(flags)
        self.uses_init = int_array(uses)
        self.kern = object_array(kernels)
        init = [s for s in range(min(n_slots, len(initial_values)))
                if initial_values[s] is not None]
        self.init_slots = int_array(init)
        self.init_vals = object_array([initial_values[s] for s in init])
        self.n_init = len(init)
        self._succ_sets = succ_sets
        self._pending = pending
        self._frames = None
        self._ctl_pairs = set()

    def add_control_edges(self, list edges):
        """Add (before, after) node pairs that order nodes without passing data."""
        for a, b in edges:
            if b not in self._succ_sets[a]:
                self._succ_sets[a].append(b)
                self._pending[b] += 1
                self._ctl_pairs.add((a, b))

    def set_frames(self, list node_frame, list node_kind, list enter_child, list slot_frame,
                   list frame_parent, list frame_parallel):
        """Declare control flow; call before `finish`.

        Per node: the frame it runs in (0 is the root), its kind (``KIND_*``) and, for
        an Enter, the frame it enters; per slot the frame its consumers read it in; per
        frame its parent frame (-1 for the root) and ``parallel_iterations``. A plan with
        control flow runs on the executor's frame-aware path, even with the root frame
        only (a `tf.cond` outside loops), because deadness must also follow control
        edges there.
        """
        self._frames = (node_frame, node_kind, enter_child, slot_frame, frame_parent,
                        frame_parallel)

    def finish(self):
        """Freeze the successor lists; call after the last `add_control_edges`."""
        succ_ptr = [0]
        flat = []
        for lst in self._succ_sets:
            flat.extend(lst)
            succ_ptr.append(len(flat))
        self.succ_ptr = int_array(succ_ptr)
        self.succ = int_array(flat)
        self.pending_init = int_array(self._pending)
        ready = [i for i in range(self.n_nodes) if self._pending[i] == 0]
        if self._frames is not None:
            self._finish_frames(flat, succ_ptr)
            ready = [i for i in ready if self.node_frame[i] == 0]
        self.initial_ready = int_array(ready)
        self.n_initial_ready = len(ready)
        self._succ_sets = None
        self._ctl_pairs = None

    def _finish_frames(self, list flat, list succ_ptr):
        node_frame, node_kind, enter_child, slot_frame, frame_parent, frame_parallel = \
            self._frames
        cdef int n = self.n_nodes
        cdef int nf = len(frame_parent)
        cdef int i, j, f
        self.has_cf = True
        self.n_frames = nf
        nn = [0] * nf
        ns = [0] * nf
        nn[0] = n
        ns[0] = self.n_slots
        local = list(range(n))
        for i in range(n):
            f = node_frame[i]
            if f != 0:
                local[i] = nn[f]
                nn[f] += 1
        slot_local = list(range(self.n_slots))
        for i in range(self.n_slots):
            f = slot_frame[i]
            if f != 0:
                slot_local[i] = ns[f]
                ns[f] += 1
        ctl = bytearray(len(flat))
        ctl_pairs = self._ctl_pairs
        for i in range(n):
            for j in range(succ_ptr[i], succ_ptr[i + 1]):
                if (i, flat[j]) in ctl_pairs:
                    ctl[j] = 1
        n_ctl_preds = [0] * n
        for _, b in ctl_pairs:
            n_ctl_preds[b] += 1
        pending_off = [0] * (nf + 1)
        uses_off = [0] * (nf + 1)
        for f in range(1, nf):
            pending_off[f + 1] = pending_off[f] + nn[f]
            uses_off[f + 1] = uses_off[f] + ns[f]
        pend = [0] * pending_off[nf]
        uses = [0] * uses_off[nf]
        for i in range(n):
            f = node_frame[i]
            if f == 0:
                continue
            p = self._pending[i]
            if node_kind[i] == K_LOOP_MERGE:
                p = 1 + n_ctl_preds[i]
            if p == 0:
                raise ValueError(
                    f"node {self.node_names[i]!r} runs inside a while loop but has no "
                    "input there; ops in a loop must depend on the loop (its control "
                    "pivot) to know which iteration they belong to")
            pend[pending_off[f] + local[i]] = p
        for i in range(self.n_slots):
            f = slot_frame[i]
            if f != 0:
                uses[uses_off[f] + slot_local[i]] = self.uses_init[i]
        n_enters = [0] * nf
        exits = [[] for _ in range(nf)]
        for i in range(n):
            if node_kind[i] == K_ENTER or node_kind[i] == K_CONST_ENTER:
                n_enters[enter_child[i]] += 1
            elif node_kind[i] == K_EXIT:
                exits[node_frame[i]].append(i)
        exit_ptr = [0]
        exit_flat = []
        for f in range(nf):
            exit_flat.extend(exits[f])
            exit_ptr.append(len(exit_flat))
        self.node_frame = int_array(node_frame)
        self.node_local = int_array(local)
        self.node_kind = int_array(node_kind)
        self.enter_child = int_array(enter_child)
        self.slot_local = int_array(slot_local)
        self.succ_ctl = <char*>malloc(len(flat) + 1)
        if self.succ_ctl == NULL:
            raise MemoryError()
        for j in range(len(flat)):
            self.succ_ctl[j] = ctl[j]
        self.frame_parallel = int_array(frame_parallel)
        self.frame_nn = int_array(nn)
        self.frame_ns = int_array(ns)
        self.frame_n_enters = int_array(n_enters)
        self.frame_pending_off = int_array(pending_off)
        self.frame_pending = int_array(pend)
        self.frame_uses_off = int_array(uses_off)
        self.frame_uses = int_array(uses)
        self.exit_ptr = int_array(exit_ptr)
        self.exit_nodes = int_array(exit_flat)

    def __dealloc__(self):
        cdef int i
        free(self.in_ptr)
        free(self.in_slots)
        free(self.out_base)
        free(self.n_out)
        free(self.succ_ptr)
        free(self.succ)
        free(self.pending_init)
        free(self.uses_init)
        free(self.flags)
        free(self.initial_ready)
        if self.kern != NULL:
            for i in range(self.n_nodes):
                Py_XDECREF(self.kern[i])
            free(self.kern)
        if self.init_vals != NULL:
            for i in range(self.n_init):
                Py_XDECREF(self.init_vals[i])
            free(self.init_vals)
        free(self.init_slots)
        free_buffers(self.spare)
        free(self.spare_stack)
        free(self.node_frame)
        free(self.node_local)
        free(self.node_kind)
        free(self.enter_child)
        free(self.slot_local)
        free(self.succ_ctl)
        free(self.frame_parallel)
        free(self.frame_nn)
        free(self.frame_ns)
        free(self.frame_n_enters)
        free(self.frame_pending_off)
        free(self.frame_pending)
        free(self.frame_uses_off)
        free(self.frame_uses)
        free(self.exit_ptr)
        free(self.exit_nodes)

    @property
    def num_nodes(self):
        return self.n_nodes

    def successors(self, int node):
        return [self.succ[j] for j in range(self.succ_ptr[node], self.succ_ptr[node + 1])]

    # -- working memory ----------------------------------------------------------------
    cdef Buffers* take_buffers(self) except NULL:
        """The spare block, or a new one; ``vals`` all NULL, counts copied."""
        cdef Buffers* b = self.spare
        cdef int n = self.n_nodes if self.n_nodes > 0 else 1
        cdef int ns = self.n_slots if self.n_slots > 0 else 1
        if b != NULL:
            self.spare = NULL
        else:
            b = <Buffers*>calloc(1, sizeof(Buffers))
            if b == NULL:
                raise MemoryError()
            b.pending = <int*>malloc(n * sizeof(int))
            b.uses = <int*>malloc(ns * sizeof(int))
            b.vals = <PyObject**>calloc(ns, sizeof(PyObject*))
            b.stack = <int*>malloc((n + 1) * sizeof(int))
            b.done_lock = PyThread_allocate_lock()
            if (b.pending == NULL or b.uses == NULL or b.vals == NULL or b.stack == NULL
                    or b.done_lock == NULL):
                if b.done_lock != NULL:
                    PyThread_free_lock(b.done_lock)
                    b.done_lock = NULL
                free_buffers(b)
                raise MemoryError()
            PyThread_acquire_lock(b.done_lock, WAIT_LOCK)
        memcpy(b.pending, self.pending_init, self.n_nodes * sizeof(int))
        memcpy(b.uses, self.uses_init, self.n_slots * sizeof(int))
        return b

    cdef void give_buffers(self, Buffers* b) noexcept:
        if self.spare == NULL:
            self.spare = b
        else:
            free_buffers(b)

    cdef int* take_stack(self) except NULL:
        cdef int* s = self.spare_stack
        if s != NULL:
            self.spare_stack = NULL
            return s
        s = <int*>malloc((self.n_nodes + 1) * sizeof(int))
        if s == NULL:
            raise MemoryError()
        return s

    cdef void give_stack(self, int* s) noexcept:
        if self.spare_stack == NULL:
            self.spare_stack = s
        else:
            free(s)


# -- control flow: frames and iterations ------------------------------------------------------
cdef struct TaskStack:
    int* nodes
    PyObject** iters  # borrowed: an iteration outlives its queued nodes (`outstanding`)
    int top
    int cap


cdef int ts_init(TaskStack* ts, int cap) except -1:
    if cap < 16:
        cap = 16
    ts.nodes = <int*>malloc(cap * sizeof(int))
    ts.iters = <PyObject**>malloc(cap * sizeof(PyObject*))
    ts.top = 0
    ts.cap = cap
    if ts.nodes == NULL or ts.iters == NULL:
        free(ts.nodes)
        free(ts.iters)
        ts.nodes = NULL
        ts.iters = NULL
        raise MemoryError()
    return 0


cdef void ts_free(TaskStack* ts) noexcept:
    free(ts.nodes)
    free(ts.iters)
    ts.nodes = NULL
    ts.iters = NULL


cdef int ts_grow(TaskStack* ts) except -1:
    cdef int cap = ts.cap * 2
    cdef int* nodes = <int*>realloc(ts.nodes, cap * sizeof(int))
    if nodes == NULL:
        raise MemoryError()
    ts.nodes = nodes
    cdef PyObject** iters = <PyObject**>realloc(ts.iters, cap * sizeof(PyObject*))
    if iters == NULL:
        raise MemoryError()
    ts.iters = iters
    ts.cap = cap
    return 0


cdef class IterState:
    """One iteration of one frame instance: pending counts, slot values and control
    deadness for the nodes of its frame (local indices), and the work still to do."""

    cdef FrameState frame
    cdef int fid
    cdef long long iter_id
    cdef int* pending
    cdef int* uses
    cdef PyObject** vals
    cdef char* cdead  # per node: a control predecessor was dead
    cdef int n_slots
    cdef int outstanding  # queued or running nodes + live child frames (not the root)
    cdef bint owned  # arrays allocated here (the root borrows the step's buffers)
    cdef dict children  # frame id -> FrameState entered from this iteration

    def __cinit__(self):
        self.pending = NULL
        self.uses = NULL
        self.vals = NULL
        self.cdead = NULL
        self.owned = False
        self.n_slots = 0

    cdef int release(self) except -1:
        """Drop the values still held and free the arrays."""
        cdef int s
        cdef PyObject* v
        if self.vals != NULL and self.owned:
            for s in range(self.n_slots):
                v = self.vals[s]
                if v != NULL:
                    self.vals[s] = NULL
                    Py_DECREF(<object>v)
        if self.owned:
            free(self.pending)
            free(self.uses)
            free(self.vals)
        free(self.cdead)
        self.pending = NULL
        self.uses = NULL
        self.vals = NULL
        self.cdead = NULL
        self.frame = None
        self.children = None
        return 0

    def __dealloc__(self):
        cdef int s
        cdef PyObject* v
        if self.owned and self.vals != NULL:
            for s in range(self.n_slots):
                v = self.vals[s]
                self.vals[s] = NULL
                Py_XDECREF(v)
        if self.owned:
            free(self.pending)
            free(self.uses)
            free(self.vals)
        free(self.cdead)


cdef IterState new_iteration(Plan plan, FrameState frame, int fid):
    cdef IterState it = IterState.__new__(IterState)
    cdef int nn = plan.frame_nn[fid]
    cdef int ns = plan.frame_ns[fid]
    it.frame = frame
    it.fid = fid
    it.n_slots = ns
    it.owned = True
    it.outstanding = 0
    it.pending = <int*>malloc((nn if nn > 0 else 1) * sizeof(int))
    it.uses = <int*>malloc((ns if ns > 0 else 1) * sizeof(int))
    it.vals = <PyObject**>calloc(ns if ns > 0 else 1, sizeof(PyObject*))
    it.cdead = <char*>calloc(nn if nn > 0 else 1, 1)
    if it.pending == NULL or it.uses == NULL or it.vals == NULL or it.cdead == NULL:
        raise MemoryError()
    memcpy(it.pending, plan.frame_pending + plan.frame_pending_off[fid], nn * sizeof(int))
    memcpy(it.uses, plan.frame_uses + plan.frame_uses_off[fid], ns * sizeof(int))
    return it


cdef class FrameState:
    """One dynamic instance of a loop frame (a static frame entered from one iteration
    of its parent frame)."""

    cdef int fid
    cdef IterState parent_iter
    cdef int pending_enters  # Enter nodes of this frame that have not delivered yet
    cdef long long next_id  # id of the next iteration to create
    cdef list iters  # live iterations, oldest first
    cdef list invariants  # (enter node, value, dead): delivered to every new iteration
    cdef list queued  # (node, value) for iteration `next_id`, held back by the window
    cdef set exits_fired  # Exit nodes that delivered a live value


cdef class AsyncDone:
    """Completion callback handed to an async kernel: call with outputs or an error."""

    cdef Step step
    cdef int node
    cdef bint fired
    cdef IterState it  # the node's iteration (plans with control flow)
    cdef long long t0  # when the kernel started (tracing), else -1

    def __call__(self, outputs=None, error=None):
        if self.fired:
            return
        self.fired = True
        if self.it is not None:
            self.step._async_done_cf(self.node, self.it, outputs, error, self.t0)
        else:
            self.step._async_done(self.node, outputs, error, self.t0)


cdef object current_exception():
    """Take the exception set by a failed C-API call (the GIL is held)."""
    cdef PyObject* t = NULL
    cdef PyObject* v = NULL
    cdef PyObject* tb = NULL
    PyErr_Fetch(&t, &v, &tb)
    PyErr_NormalizeException(&t, &v, &tb)
    if v == NULL:
        exc = SystemError("a kernel returned NULL without setting an exception")
    else:
        if tb != NULL:
            PyException_SetTraceback(v, tb)
        exc = <object>v
    Py_XDECREF(t)
    Py_XDECREF(v)
    Py_XDECREF(tb)
    return exc


cdef tuple args_tuple(PyObject** argv, int nargs):
    cdef tuple args = PyTuple_New(nargs)
    cdef int k
    cdef object v
    for k in range(nargs):
        v = <object>argv[k]
        Py_INCREF(v)
        PyTuple_SET_ITEM(args, k, v)
    return args


cdef object dead_fetch_error(Plan plan, int index, int slot):
    from flowgraph.framework import errors

    return errors.InvalidArgumentError(
        None, None, f"Retval[{index}] does not have value: fetched slot {slot} is dead (it "
        "is computed on the untaken branch of a tf.cond, or only inside a loop that never "
        "ran). Fetch the tf.cond/tf.while_loop result instead.")


cdef class Step:
    """The state of one run of a `Plan`."""

    cdef Plan plan
    cdef Buffers* buf
    cdef int* pending
    cdef int* uses
    cdef PyObject** vals
    cdef int n_slots
    cdef object shared
    cdef int active
    cdef int n_async
    cdef bint waiting
    cdef bint finished
    cdef public object error
    cdef public object error_node
    cdef public object context
    cdef object pool
    cdef public bint tracing
    cdef public list trace
    cdef long long live_bytes
    cdef public long long peak_bytes
    cdef bint cf  # the plan has control flow: run on the frame-aware path
    cdef IterState root_it

    def __cinit__(self):
        self.buf = NULL

    def __init__(self, Plan plan, object context, object pool, bint tracing):
        self.plan = plan
        self.buf = plan.take_buffers()
        self.pending = self.buf.pending
        self.uses = self.buf.uses
        self.vals = self.buf.vals
        self.n_slots = plan.n_slots
        self.shared = collections.deque() if pool is not None else None
        self.active = 0
        self.n_async = 0
        self.waiting = False
        self.finished = False
        self.error = None
        self.error_node = None
        self.context = context
        self.pool = pool
        self.tracing = tracing
        self.trace = [] if tracing else None
        self.live_bytes = 0
        self.peak_bytes = 0
        self.cf = plan.has_cf
        self.root_it = None
        if self.cf:
            self.root_it = IterState.__new__(IterState)
            self.root_it.fid = 0
            self.root_it.pending = self.pending
            self.root_it.uses = self.uses
            self.root_it.vals = self.vals
            self.root_it.n_slots = plan.n_slots
            self.root_it.cdead = <char*>calloc(plan.n_nodes if plan.n_nodes > 0 else 1, 1)
            if self.root_it.cdead == NULL:
                raise MemoryError()

    def __dealloc__(self):
        # Only reached with buffers when `run` was never called; `self.plan` may already
        # be cleared by the garbage collector, so free rather than hand back.
        cdef Buffers* b = self.buf
        cdef int s
        cdef PyObject* v
        if b == NULL:
            return
        self.buf = NULL
        for s in range(self.n_slots):
            v = b.vals[s]
            b.vals[s] = NULL
            Py_XDECREF(v)
        free_buffers(b)

    # -- public entry ------------------------------------------------------------------
    def run(self, list feed_slots, list feed_values, list fetch_slots):
        """Execute the plan; return the values of `fetch_slots`."""
        cdef Plan plan = self.plan
        cdef int i, s
        cdef PyObject* old
        cdef object v
        if self.buf == NULL or self.finished:
            raise RuntimeError("a Step runs once; create a new Step for the next run")
        cdef PyObject** vals = self.vals
        for i in range(plan.n_init):
            s = plan.init_slots[i]
            Py_INCREF(<object>plan.init_vals[i])
            vals[s] = plan.init_vals[i]
        for i in range(len(feed_slots)):
            s = feed_slots[i]
            if s < 0 or s >= self.n_slots:
                raise IndexError(f"feed slot {s} is out of range (the plan has "
                                 f"{self.n_slots} slots)")
            v = feed_values[i]
            Py_INCREF(v)
            old = vals[s]
            vals[s] = <PyObject*>v
            Py_XDECREF(old)
        if self.tracing:
            for i in range(self.n_slots):
                if vals[i] != NULL:
                    self._account_alloc(<object>vals[i])
        quiet = quiet_enter()
        try:
            try:
                if self.cf:
                    self._run_to_end_cf()
                else:
                    self._run_to_end()
            except BaseException as e:  # bookkeeping failures (MemoryError, ...)
                if self.error is None:
                    self.error = e
            self._quiesce()
        finally:
            quiet_exit(quiet)
        result = None
        if self.error is None:
            result = []
            for i in range(len(fetch_slots)):
                s = fetch_slots[i]
                if vals[s] == DEAD_P and self.cf:
                    self.error = dead_fetch_error(plan, i, s)
                    result = None
                    break
                result.append(<object>vals[s] if vals[s] != NULL else None)
        if self.cf:
            self._release_frames()
        self._release_all()
        if self.error is not None:
            exc = self.error
            self.error = None
            raise exc
        return result

    cdef int _run_to_end(self) except -1:
        """Schedule the initially ready nodes and drain the caller's stack."""
        cdef Plan plan = self.plan
        cdef int* stack = self.buf.stack
        cdef int top = 0
        cdef int i, node
        cdef bint kept = False
        for i in range(plan.n_initial_ready):
            node = plan.initial_ready[i]
            if (plan.flags[node] & F_HAND_OFF) and self.pool is not None:
                if kept:
                    self._share(node)
                    continue
                kept = True
            stack[top] = node
            top += 1
        self._drain(stack, top)
        return 0

    cdef int _help(self) except -1:
        """Run shared nodes (and what they make ready) on the calling thread."""
        cdef int* stack = self.buf.stack
        while self.shared and self.error is None:
            if self.cf:
                item = self.shared.popleft()
                try:
                    self._run_shared_cf(item)
                finally:
                    self.active -= 1
                continue
            stack[0] = self.shared.popleft()
            try:
                self._drain(stack, 1)
            finally:
                self.active -= 1
        return 0

    cdef void _wait(self) noexcept:
        """Release the GIL until another thread reports progress."""
        cdef PyThread_type_lock lock = self.buf.done_lock
        self.waiting = True
        with nogil:
            PyThread_acquire_lock(lock, WAIT_LOCK)

    cdef int _quiesce(self) except -1:
        """Help and wait until no other thread works on this step; then mark it finished."""
        while True:
            if self.error is not None:
                if self.shared:
                    self.active -= len(self.shared)
                    self.shared.clear()
                if self.active - self.n_async <= 0:
                    break
            elif self.shared:
                try:
                    self._help()
                except BaseException as e:
                    if self.error is None:
                        self.error = e
                continue
            elif self.active <= 0:
                break
            self._wait()
        self.finished = True
        return 0

    cdef void _release_all(self) noexcept:
        """Drop every remaining value and hand the buffers back to the plan."""
        cdef Buffers* b = self.buf
        cdef PyObject** vals = self.vals
        cdef PyObject* v
        cdef int s
        self.buf = NULL
        self.vals = NULL
        self.pending = NULL
        self.uses = NULL
        for s in range(self.n_slots):
            v = vals[s]
            if v != NULL:
                vals[s] = NULL
                Py_DECREF(<object>v)
        self.plan.give_buffers(b)

    # -- scheduling --------------------------------------------------------------------
    cdef int _share(self, int node) except -1:
        """Hand ready `node` to the pool (and to the caller, if it is waiting)."""
        self.active += 1
        self.shared.append(node)
        self.pool.notify(self)
        self._wake_caller()
        return 0

    cdef inline void _wake_caller(self) noexcept:
        if self.waiting and self.buf != NULL:
            self.waiting = False
            PyThread_release_lock(self.buf.done_lock)

    def work_shared(self):
        """Pool threads call this: run one shared node and what it makes ready."""
        if self.finished or not self.shared:
            return
        node = self.shared.popleft()
        cdef Plan plan = self.plan
        cdef int* stack = NULL
        quiet = None
        if self.cf:
            try:
                quiet = quiet_enter()
                self._run_shared_cf(node)
            except BaseException as e:
                if self.error is None:
                    self.error = e
            finally:
                if quiet is not None:
                    quiet_exit(quiet)
                self.active -= 1
                if self.active <= 0 or self.shared or self.error is not None:
                    self._wake_caller()
            return
        try:
            quiet = quiet_enter()
            stack = plan.take_stack()
            stack[0] = node
            self._drain(stack, 1)
        except BaseException as e:
            if self.error is None:
                self.error = e
        finally:
            if quiet is not None:
                quiet_exit(quiet)
            if stack != NULL:
                plan.give_stack(stack)
            self.active -= 1
            if self.active <= 0 or self.shared or self.error is not None:
                self._wake_caller()

    cdef int _drain(self, int* stack, int top) except -1:
        """Run the nodes on `stack` and every node they make ready locally."""
        cdef Plan plan = self.plan
        cdef PyObject** vals = self.vals
        cdef int* in_ptr = plan.in_ptr
        cdef int* in_slots = plan.in_slots
        cdef int* flags = plan.flags
        cdef PyObject* small[SMALL_ARGS]
        cdef PyObject** argv
        cdef PyObject* v
        cdef PyObject* result
        cdef int node, fl, a, k, nargs, extra
        cdef bint dead
        cdef long long t0 = 0
        while top > 0:
            if self.error is not None:
                return 0
            top -= 1
            node = stack[top]
            fl = flags[node]
            if fl & F_ASYNC:
                self._start_async(node)
                continue
            a = in_ptr[node]
            extra = 1 if fl & F_NEEDS_STEP else 0
            nargs = in_ptr[node + 1] - a + extra
            if nargs + 1 <= SMALL_ARGS:
                argv = small
            else:
                argv = <PyObject**>PyMem_Malloc((nargs + 1) * sizeof(PyObject*))
                if argv == NULL:
                    raise MemoryError()
            # argv[0] is scratch space the callee may use (PY_VECTORCALL_ARGUMENTS_OFFSET).
            if extra:
                argv[1] = <PyObject*>self.context
            dead = False
            for k in range(extra + 1, nargs + 1):
                v = vals[in_slots[a + k - extra - 1]]
                if v == NULL:
                    v = <PyObject*>None
                elif v == DEAD_P:
                    dead = True
                argv[k] = v
            if self.tracing:
                t0 = now_ns()
            if dead and not (fl & F_MERGE):
                Py_INCREF(<object>DEAD_P)
                result = DEAD_P
            else:
                result = PyObject_Vectorcall(plan.kern[node], argv + 1,
                                             <size_t>nargs | PY_VECTORCALL_ARGUMENTS_OFFSET,
                                             NULL)
            if result == NULL:
                try:
                    self._fail(node, current_exception(), args_tuple(argv + 1, nargs))
                finally:
                    if argv != small:
                        PyMem_Free(argv)
                return 0
            if argv != small:
                PyMem_Free(argv)
            if not self._store(node, result, t0):
                return 0
            top = self._complete(node, stack, top)
        return 0

    cdef int _complete(self, int node, int* stack, int top) except -1:
        """Release `node`'s inputs; push its ready successors; return the new top."""
        cdef Plan plan = self.plan
        cdef int* uses = self.uses
        cdef int* pending = self.pending
        cdef PyObject** vals = self.vals
        cdef PyObject* v
        cdef int k, s, j, succ_node
        # An expensive successor stays on this thread only when this thread has nothing
        # else to do; otherwise it goes to the pool, so that branches reached through
        # separate chains of cheap nodes still overlap.
        cdef bint kept = top > 0
        for k in range(plan.in_ptr[node], plan.in_ptr[node + 1]):
            s = plan.in_slots[k]
            uses[s] -= 1
            if uses[s] == 0:
                v = vals[s]
                if v != NULL:
                    vals[s] = NULL
                    if self.tracing:
                        self._account_free(<object>v)
                    Py_DECREF(<object>v)
        for j in range(plan.succ_ptr[node], plan.succ_ptr[node + 1]):
            succ_node = plan.succ[j]
            pending[succ_node] -= 1
            if pending[succ_node] == 0:
                if (plan.flags[succ_node] & F_HAND_OFF) and self.pool is not None:
                    if kept:
                        self._share(succ_node)
                        continue
                    kept = True
                stack[top] = succ_node
                top += 1
        return top

    # -- running one node --------------------------------------------------------------
    cdef bint _store(self, int node, PyObject* result, long long t0) except -1:
        """Store `node`'s outputs, taking over the reference `result`; False on failure."""
        cdef Plan plan = self.plan
        cdef int base = plan.out_base[node]
        cdef PyObject* old
        if (plan.flags[node] & F_MULTI_OUT) or self.tracing:
            obj = <object>result
            Py_DECREF(obj)  # `obj` now holds the only reference we own
            return self._store_object(node, obj, t0, ())
        if plan.n_out[node] == 1 and self.uses[base] > 0:
            old = self.vals[base]
            self.vals[base] = result
            Py_XDECREF(old)
        else:
            Py_DECREF(<object>result)
        return True

    cdef bint _store_object(self, int node, object result, long long t0,
                            tuple args) except -1:
        """The general store: multi-output results, tracing; False on failure.

        A trace entry is recorded when tracing and ``t0 >= 0``. An async kernel's entry
        spans from its start to its completion (waiting included), as in TensorFlow's
        step stats for Recv and queue ops; a dead async node is not traced.
        """
        cdef Plan plan = self.plan
        cdef int base = plan.out_base[node]
        cdef int n = plan.n_out[node]
        cdef int k
        try:
            if plan.flags[node] & F_MULTI_OUT:
                if result is DEAD:
                    result = (DEAD,) * n
                elif len(result) != n:
                    raise ValueError(
                        f"kernel returned {len(result)} outputs, the op declares {n}")
                items = [result[k] for k in range(n)]
            elif n == 1:
                items = [result]
            else:
                items = []
            for k in range(len(items)):
                if self.uses[base + k] > 0:
                    self._set(base + k, items[k])
                    if self.tracing:
                        self._account_alloc(items[k])
        except BaseException as e:
            self._fail(node, e, args)
            return False
        if self.tracing and t0 >= 0:
            self._record(node, t0, result)
        return True

    cdef inline void _set(self, int s, object v) noexcept:
        cdef PyObject* old = self.vals[s]
        Py_INCREF(v)
        self.vals[s] = <PyObject*>v
        Py_XDECREF(old)

    cdef int _account_alloc(self, object v) except -1:
        cdef long long n = getattr(v, "nbytes", 0) or 0
        self.live_bytes += n
        if self.live_bytes > self.peak_bytes:
            self.peak_bytes = self.live_bytes
        return 0

    cdef int _account_free(self, object v) except -1:
        cdef long long n = getattr(v, "nbytes", 0) or 0
        self.live_bytes -= n
        return 0

    cdef int _record(self, int node, long long t0, object result) except -1:
        cdef long long t1 = now_ns()
        cdef long long out_bytes = 0
        if self.plan.flags[node] & F_MULTI_OUT:
            if result is not DEAD:
                for r in result:
                    out_bytes += getattr(r, "nbytes", 0) or 0
        else:
            out_bytes = getattr(result, "nbytes", 0) or 0
        self.trace.append((node, t0, t1, PyThread_get_thread_ident(), out_bytes,
                           self.live_bytes))
        return 0

    cdef int _fail(self, int node, object exc, tuple args) except -1:
        if self.error is None:
            try:
                self.error = self.plan.describe_error(node, exc, args)
            except BaseException as e2:  # never lose the original error
                self.error = e2
            if self.error is None:
                self.error = exc
            self.error_node = node
            # Fail async kernels still in flight (queue waiters, Recvs) at once, so none
            # of them consumes an element or a value on behalf of a dead step.
            cancel = getattr(self.context, "cancel", None)
            if cancel is not None:
                cancel(self.error)
        return 0

    # -- async kernels -----------------------------------------------------------------
    cdef int _start_async(self, int node) except -1:
        cdef Plan plan = self.plan
        cdef int a = plan.in_ptr[node]
        cdef int b = plan.in_ptr[node + 1]
        cdef tuple args = PyTuple_New(b - a)
        cdef bint dead = False
        cdef int k
        cdef PyObject* p
        cdef object v
        for k in range(a, b):
            p = self.vals[plan.in_slots[k]]
            v = <object>p if p != NULL else None
            if v is DEAD:
                dead = True
            Py_INCREF(v)
            PyTuple_SET_ITEM(args, k - a, v)
        cdef AsyncDone done = AsyncDone.__new__(AsyncDone)
        done.step = self
        done.node = node
        done.fired = False
        done.t0 = now_ns() if self.tracing and not dead else -1
        self.active += 1
        self.n_async += 1
        try:
            if dead:
                done(DEAD, None)
            else:
                (<object>plan.kern[node])(self.context, done, *args)
        except BaseException as e:
            done(None, e)
        return 0

    def _async_done(self, int node, outputs, error, long long t0=-1):
        cdef int* stack = NULL
        cdef int top = 0
        cdef Plan plan = self.plan
        if self.finished:
            return  # the step ended (after an error) without waiting for this kernel
        self.n_async -= 1
        try:
            if error is not None:
                self._fail(node, error, ())
            elif self.error is None and self._store_object(node, outputs, t0, ()):
                stack = plan.take_stack()
                top = self._complete(node, stack, 0)
                quiet = quiet_enter()
                try:
                    self._drain(stack, top)
                finally:
                    quiet_exit(quiet)
        except BaseException as e:
            if self.error is None:
                self.error = e
        finally:
            if stack != NULL:
                plan.give_stack(stack)
            self.active -= 1
            if self.active <= 0 or self.shared or self.error is not None:
                self._wake_caller()

    # -- control flow ------------------------------------------------------------------
    # The frame-aware path (plans with Switch/Merge/Enter/...): every ready node is a
    # (node, iteration) pair; see "Frames" in the module docstring.
    cdef int _run_to_end_cf(self) except -1:
        cdef Plan plan = self.plan
        cdef TaskStack ts
        cdef int i
        ts_init(&ts, plan.n_nodes + 16)
        try:
            for i in range(plan.n_initial_ready):
                self._push_cf(&ts, plan.initial_ready[i], self.root_it)
            self._drain_cf(&ts)
        finally:
            ts_free(&ts)
        return 0

    cdef int _run_shared_cf(self, tuple item) except -1:
        cdef TaskStack ts
        ts_init(&ts, 64)
        try:
            ts.nodes[0] = item[0]
            ts.iters[0] = <PyObject*>item[1]
            ts.top = 1
            self._drain_cf(&ts)
        finally:
            ts_free(&ts)
        return 0

    cdef int _push_cf(self, TaskStack* ts, int node, IterState it) except -1:
        """Schedule ready `node` in iteration `it`: on `ts`, or, when it is expensive and
        `ts` already holds other work, on the pool (so expensive nodes of different
        iterations overlap, also when each sits behind the loop's cheap bookkeeping)."""
        if it.fid != 0:
            it.outstanding += 1
        if (self.plan.flags[node] & F_HAND_OFF) and self.pool is not None and ts.top > 0:
            self.active += 1
            self.shared.append((node, it))
            self.pool.notify(self)
            self._wake_caller()
            return 0
        if ts.top >= ts.cap:
            ts_grow(ts)
        ts.nodes[ts.top] = node
        ts.iters[ts.top] = <PyObject*>it
        ts.top += 1
        return 0

    cdef int _drain_cf(self, TaskStack* ts) except -1:
        cdef int node
        cdef IterState it
        while ts.top > 0:
            if self.error is not None:
                return 0
            ts.top -= 1
            node = ts.nodes[ts.top]
            it = <IterState>ts.iters[ts.top]
            self._run_cf(node, it, ts)
        return 0

    cdef int _run_cf(self, int node, IterState it, TaskStack* ts) except -1:
        cdef Plan plan = self.plan
        cdef int fl = plan.flags[node]
        if fl & F_ASYNC:
            return self._start_async_cf(node, it)
        cdef int* in_slots = plan.in_slots
        cdef int* slot_local = plan.slot_local
        cdef PyObject** vals = it.vals
        cdef int a = plan.in_ptr[node]
        cdef int extra = 1 if fl & F_NEEDS_STEP else 0
        cdef int nargs = plan.in_ptr[node + 1] - a + extra
        cdef PyObject* small[SMALL_ARGS]
        cdef PyObject** argv
        cdef PyObject* v
        cdef PyObject* result
        cdef int k
        cdef bint ctl_dead = it.cdead[plan.node_local[node]] != 0
        cdef bint dead = ctl_dead
        cdef long long t0 = -1
        if nargs + 1 <= SMALL_ARGS:
            argv = small
        else:
            argv = <PyObject**>PyMem_Malloc((nargs + 1) * sizeof(PyObject*))
            if argv == NULL:
                raise MemoryError()
        if extra:
            argv[1] = <PyObject*>self.context
        for k in range(extra + 1, nargs + 1):
            v = vals[slot_local[in_slots[a + k - extra - 1]]]
            if v == NULL:
                v = <PyObject*>None
            elif v == DEAD_P:
                dead = True
            argv[k] = v
        if dead and (ctl_dead or not (fl & F_MERGE)):
            Py_INCREF(<object>DEAD_P)  # skipped, and not traced: nothing ran
            result = DEAD_P
        else:
            if self.tracing:
                t0 = now_ns()
            result = PyObject_Vectorcall(plan.kern[node], argv + 1,
                                         <size_t>nargs | PY_VECTORCALL_ARGUMENTS_OFFSET,
                                         NULL)
        if result == NULL:
            try:
                self._fail(node, current_exception(), args_tuple(argv + 1, nargs))
            finally:
                if argv != small:
                    PyMem_Free(argv)
            return 0
        if argv != small:
            PyMem_Free(argv)
        obj = <object>result
        Py_DECREF(obj)  # `obj` holds the only reference we own
        return self._finish_cf(node, it, obj, result == DEAD_P, ts, t0)

    cdef int _finish_cf(self, int node, IterState it, object result, bint node_dead,
                        TaskStack* ts, long long t0) except -1:
        """Route `node`'s result by its kind, release its inputs, settle its iteration."""
        cdef Plan plan = self.plan
        cdef int kind = plan.node_kind[node]
        cdef FrameState fr
        if self.tracing and t0 >= 0:
            self._record(node, t0, result)
        self._release_inputs_cf(node, it)
        if kind == K_NORMAL or kind == K_LOOP_MERGE:
            if not self._deliver_cf(node, it, result, node_dead, ts):
                return 0
        elif kind == K_ENTER or kind == K_CONST_ENTER:
            self._enter_cf(node, it, result, node_dead, kind == K_CONST_ENTER, ts)
        elif kind == K_EXIT:
            if not node_dead:
                fr = it.frame
                fr.exits_fired.add(node)
                self._deliver_cf(node, fr.parent_iter, result, False, ts)
        elif kind == K_NEXT:
            if not node_dead:  # a dead value ends the loop here instead
                self._next_cf(node, it, result, ts)
        if it.fid != 0:
            it.outstanding -= 1
            if it.outstanding == 0:
                self._check_iter(it, ts)
        return 0

    cdef int _release_inputs_cf(self, int node, IterState it) except -1:
        cdef Plan plan = self.plan
        cdef int k, s
        cdef PyObject* v
        for k in range(plan.in_ptr[node], plan.in_ptr[node + 1]):
            s = plan.slot_local[plan.in_slots[k]]
            it.uses[s] -= 1
            if it.uses[s] == 0:
                v = it.vals[s]
                if v != NULL:
                    it.vals[s] = NULL
                    if self.tracing:
                        self._account_free(<object>v)
                    Py_DECREF(<object>v)
        return 0

    cdef bint _deliver_cf(self, int node, IterState target, object result, bint node_dead,
                          TaskStack* ts) except -1:
        """Store `node`'s outputs in iteration `target`; schedule what becomes ready."""
        cdef Plan plan = self.plan
        cdef int base = plan.out_base[node]
        cdef int n = plan.n_out[node]
        cdef int k, s, j, succ_node, loc
        try:
            if n == 1:
                s = plan.slot_local[base]
                if target.uses[s] > 0:
                    self._set_cf(target, s, result)
            elif n > 1:
                if result is DEAD:
                    items = (DEAD,) * n
                elif len(result) != n:
                    raise ValueError(
                        f"kernel returned {len(result)} outputs, the op declares {n}")
                else:
                    items = result
                for k in range(n):
                    s = plan.slot_local[base + k]
                    if target.uses[s] > 0:
                        self._set_cf(target, s, items[k])
        except BaseException as e:
            self._fail(node, e, ())
            return False
        for j in range(plan.succ_ptr[node], plan.succ_ptr[node + 1]):
            succ_node = plan.succ[j]
            loc = plan.node_local[succ_node]
            if node_dead and plan.succ_ctl[j]:
                target.cdead[loc] = 1
            target.pending[loc] -= 1
            if target.pending[loc] == 0:
                self._push_cf(ts, succ_node, target)
        return True

    cdef inline int _set_cf(self, IterState it, int s, object v) except -1:
        cdef PyObject* old = it.vals[s]
        Py_INCREF(v)
        it.vals[s] = <PyObject*>v
        Py_XDECREF(old)
        if self.tracing:
            self._account_alloc(v)
        return 0

    cdef FrameState _child_frame(self, IterState it, int fid, TaskStack* ts):
        cdef FrameState fr = None
        if it.children is None:
            it.children = {}
        else:
            fr = it.children.get(fid)
        if fr is None:
            fr = FrameState.__new__(FrameState)
            fr.fid = fid
            fr.parent_iter = it
            fr.pending_enters = self.plan.frame_n_enters[fid]
            fr.next_id = 0
            fr.iters = []
            fr.invariants = []
            fr.queued = []
            fr.exits_fired = set()
            it.children[fid] = fr
            if it.fid != 0:
                it.outstanding += 1
            self._new_iter(fr, ts)
        return fr

    cdef IterState _new_iter(self, FrameState fr, TaskStack* ts):
        cdef IterState it = new_iteration(self.plan, fr, fr.fid)
        it.iter_id = fr.next_id
        fr.next_id += 1
        fr.iters.append(it)
        for enode, value, dead in fr.invariants:
            self._deliver_cf(enode, it, value, dead, ts)
        return it

    cdef int _enter_cf(self, int node, IterState it, object value, bint dead, bint const,
                       TaskStack* ts) except -1:
        cdef FrameState fr = self._child_frame(it, self.plan.enter_child[node], ts)
        cdef IterState first = fr.iters[0]  # iteration 0 lives until every Enter arrived
        if const:
            fr.invariants.append((node, value, dead))
            for target in list(fr.iters):
                self._deliver_cf(node, target, value, dead, ts)
        else:
            self._deliver_cf(node, first, value, dead, ts)
        fr.pending_enters -= 1
        if fr.pending_enters == 0 and first.outstanding == 0:
            self._check_iter(fr.iters[0], ts)
        return 0

    cdef int _next_cf(self, int node, IterState it, object value, TaskStack* ts) except -1:
        cdef FrameState fr = it.frame
        cdef long long want = it.iter_id + 1
        cdef IterState target = None
        if want < fr.next_id:
            for x in reversed(fr.iters):
                if (<IterState>x).iter_id == want:
                    target = x
                    break
        elif fr.queued or len(fr.iters) >= self.plan.frame_parallel[fr.fid]:
            fr.queued.append((node, value))  # wait for an older iteration to finish
            return 0
        else:
            target = self._new_iter(fr, ts)
        if target is None:  # pragma: no cover - iterations retire in order
            raise RuntimeError(f"iteration {want} of frame {fr.fid} vanished")
        self._deliver_cf(node, target, value, False, ts)
        return 0

    cdef int _check_iter(self, IterState it, TaskStack* ts) except -1:
        """Retire finished iterations of `it`'s frame, oldest first; start queued ones;
        finish the frame when none is left."""
        cdef FrameState fr = it.frame
        cdef IterState ni
        while True:
            if it.outstanding != 0 or fr.iters[0] is not it:
                return 0
            if it.iter_id == 0 and fr.pending_enters > 0:
                return 0
            fr.iters.pop(0)
            it.release()
            if fr.queued:
                queued = fr.queued
                fr.queued = []
                ni = self._new_iter(fr, ts)
                for qnode, qvalue in queued:
                    self._deliver_cf(qnode, ni, qvalue, False, ts)
            if fr.iters:
                it = fr.iters[0]
                continue
            return self._frame_done(fr, ts)

    cdef int _frame_done(self, FrameState fr, TaskStack* ts) except -1:
        """Every iteration of `fr` retired: Exits that never fired deliver dead values."""
        cdef Plan plan = self.plan
        cdef IterState parent = fr.parent_iter
        cdef int j, e
        for j in range(plan.exit_ptr[fr.fid], plan.exit_ptr[fr.fid + 1]):
            e = plan.exit_nodes[j]
            if e not in fr.exits_fired:
                self._deliver_cf(e, parent, DEAD, True, ts)
        fr.invariants = None
        fr.parent_iter = None
        del parent.children[fr.fid]
        if parent.fid != 0:
            parent.outstanding -= 1
            if parent.outstanding == 0:
                self._check_iter(parent, ts)
        return 0

    cdef int _release_frames(self) except -1:
        """After an error: drop every frame instance still alive."""
        if self.root_it is None:
            return 0
        pending = [self.root_it]
        while pending:
            it = pending.pop()
            children = (<IterState>it).children
            (<IterState>it).children = None
            if children:
                for fr in children.values():
                    for x in (<FrameState>fr).iters:
                        pending.append(x)
                    (<FrameState>fr).iters = None
                    (<FrameState>fr).invariants = None
                    (<FrameState>fr).queued = None
                    (<FrameState>fr).parent_iter = None
            if it is not self.root_it:
                (<IterState>it).release()
        self.root_it.release()  # the root borrows the step's arrays: frees `cdead` only
        self.root_it = None
        if self.shared:
            self.shared.clear()
        return 0

    cdef int _start_async_cf(self, int node, IterState it) except -1:
        cdef Plan plan = self.plan
        cdef int a = plan.in_ptr[node]
        cdef int b = plan.in_ptr[node + 1]
        cdef tuple args = PyTuple_New(b - a)
        cdef bint dead = it.cdead[plan.node_local[node]] != 0
        cdef int k
        cdef PyObject* p
        cdef object v
        for k in range(a, b):
            p = it.vals[plan.slot_local[plan.in_slots[k]]]
            v = <object>p if p != NULL else None
            if v is DEAD:
                dead = True
            Py_INCREF(v)
            PyTuple_SET_ITEM(args, k - a, v)
        cdef AsyncDone done = AsyncDone.__new__(AsyncDone)
        done.step = self
        done.node = node
        done.fired = False
        done.it = it
        done.t0 = now_ns() if self.tracing and not dead else -1
        self.active += 1
        self.n_async += 1
        try:
            if dead:
                done(DEAD, None)
            else:
                (<object>plan.kern[node])(self.context, done, *args)
        except BaseException as e:
            done(None, e)
        return 0

    def _async_done_cf(self, int node, IterState it, outputs, error, long long t0=-1):
        cdef TaskStack ts
        cdef bint have_ts = False
        if self.finished:
            return
        self.n_async -= 1
        try:
            if error is not None:
                self._fail(node, error, ())
            elif self.error is None:
                ts_init(&ts, 64)
                have_ts = True
                quiet = quiet_enter()
                try:
                    self._finish_cf(node, it, outputs, outputs is DEAD, &ts, t0)
                    self._drain_cf(&ts)
                finally:
                    quiet_exit(quiet)
        except BaseException as e:
            if self.error is None:
                self.error = e
        finally:
            if have_ts:
                ts_free(&ts)
            self.active -= 1
            if self.active <= 0 or self.shared or self.error is not None:
                self._wake_caller()

    def cancel(self, exc):
        """Abort the step from outside (timeouts, session close)."""
        if self.finished:
            return
        if self.error is None:
            self.error = exc
        self._wake_caller()


class WorkerPool:
    """Persistent daemon threads that help steps with their shared queues."""

    def __init__(self, int num_threads, str name="flowgraph-executor"):
        import queue

        self.num_threads = num_threads
        self._queue = queue.SimpleQueue()
        self._threads = []
        self._closed = False
        for i in range(num_threads):
            t = threading.Thread(target=self._loop, name=f"{name}-{i}", daemon=True)
            t.start()
            self._threads.append(t)

    def notify(self, step):
        self._queue.put(step)

    def _loop(self):
        get = self._queue.get
        while True:
            step = get()
            if step is None:
                return
            try:
                step.work_shared()
            except BaseException as e:  # pragma: no cover - work_shared records errors
                print(f"flowgraph executor thread error: {e!r}", file=sys.stderr)
            step = None

    def close(self):
        if self._closed:
            return
        self._closed = True
        for _ in self._threads:
            self._queue.put(None)
