# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The dataflow executor: runs one compiled plan for one `Session.run` step.

State it keeps
--------------
A `Plan` is flat C arrays built once per run signature (the int tables share one block,
`Tables`): per node its kernel (a C array of owned references), its input slots (CSR
``in_ptr``/``in_slots``), its first output slot and output count, its successor nodes
(CSR ``succ_ptr``/``succ``, one entry per distinct producer->consumer pair), its initial
pending count and flags; per slot (one slot per tensor) the number of uses; the slots
that hold constants from the start; and the frame tables (see "Frames"). Slot indices
in the node tables are frame-local; in the root frame they are the global ones.

A `Step` is one run. Its working memory is a `Buffers` block: ``pending`` and ``uses``
(copied from the plan), ``vals`` (one owned ``PyObject*`` per slot, NULL when empty),
``cdead`` (control deadness per node), the calling thread's ready stack and the lock it
waits on, and the root frame's iteration (an `IterState` that borrows those arrays). The
plan keeps one spare block and one spare stack, so a step that does not overlap another
step of the same plan allocates nothing but itself.

Invariants
----------
* A node is pushed on a ready stack exactly once per iteration: when its pending count
  there reaches 0. Without loops a stack never holds more than ``n_nodes`` entries
  (with loops it grows when it must).
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
always stay local. A thread keeps a ready expensive node only when it has nothing else
to do (its stack was empty when the node that made it ready finished, and it kept no
other one since); every other expensive ready node goes to the step's shared queue and
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

Seeded random ops inside a loop take the next block of their stream at each run, so the
order of their runs decides which iteration gets which values; the executor follows
TensorFlow's (whose executor runs inline nodes first in, first out, and ops it counts as
expensive on a thread pool that runs the newest task first):

* A random op that depends, within its iteration, on real work
  (``frames._waits_for_work``: dropout on an RNN cell's output of unknown batch) runs as
  soon as it is ready, and the nodes it depends on there are flagged
  ``F_LEADS_IN_ORDER``: `finish` sorts every successor list so that they are pushed
  last, so popped first, and the op is ready before the loop's next iteration goes on.
  Such ops draw in step order.
* One that does not (a constant noise shape) is flagged ``F_IN_ORDER``: it is not pushed
  on a stack but put in the step's ``in_order`` list, which is emptied when a thread's
  stack is empty or before a node of real work (``F_FLUSH_IN_ORDER``: any op that is not
  cheap) runs, the task TensorFlow would run first going first: of the earliest
  iteration of the outer loops, the latest of the innermost one. Such ops, made ready
  together by the loop's bookkeeping, draw newest first, window of
  ``parallel_iterations`` after window (``dynamic_rnn`` over 12 steps with a window of 4
  draws for steps 3, 2, 1, 0, 7, 6, 5, 4, ...; with a window of 1, in step order).

Where TensorFlow's order depends on thread timing, this is one of the orders it gives.

Dead values (the untaken side of a `Switch`) are the `DEAD` sentinel: a node with a dead
input produces dead outputs without running its kernel, except `Merge`, which takes its
first live input, and `_Send` (``F_TRANSFER``), which runs with DEAD as its value so that
the `_Recv` on the other device learns the value is dead instead of waiting for it.

Frames
------
Every plan runs on one path, which knows frames; a plan without control flow (no
`Plan.set_frames`) has the root frame only: every node is normal, its index inside the
frame is its own, and no edge is control-only. Static tables: per node its index inside
the frame it runs in (0 is the root; each `tf.while_loop` is one frame, nested loops
are child frames), its *kind* (normal, Enter, constant Enter, Exit, NextIteration, loop
Merge) and, for an Enter, the frame it enters; per slot its index inside the frame whose
nodes read it (a node's outputs are read in one frame); per frame
``parallel_iterations``, its initial pending counts and use counts (frame-local), its
Enter count and its Exit nodes; per successor edge the successor's index inside its
frame and whether it is a control-only edge.

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

Invariants of frames:

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
result pointer, decrement input uses and successor pending counts (each slot and node
found through its frame-local index, the identity outside loops). No Python object is
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

cimport cython
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
from libc.string cimport memcpy, memset
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
    F_TRANSFER = 32  # a _Send: runs even when dead, to tell its receiver so
    F_IN_ORDER = 64  # its runs in a loop follow TensorFlow's order (`_take_in_order`)
    F_FLUSH_IN_ORDER = 128  # queued in-order tasks run before this node (`_flush_in_order`)
    F_LEADS_IN_ORDER = 256  # feeds an F_IN_ORDER node in its iteration: runs before siblings
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
FLAG_TRANSFER = F_TRANSFER
FLAG_IN_ORDER = F_IN_ORDER
FLAG_FLUSH_IN_ORDER = F_FLUSH_IN_ORDER
FLAG_LEADS_IN_ORDER = F_LEADS_IN_ORDER
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


cdef tuple _describe(object value):
    """(dtype, shape, bytes) of a traced output (None for what is not an array)."""
    return (getattr(value, "dtype", None), getattr(value, "shape", None),
            getattr(value, "nbytes", 0) or 0)


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


cdef struct TaskStack:  # ready tasks: node `nodes[k]` in iteration `iters[k]`
    int* nodes
    PyObject** iters  # borrowed: an iteration outlives its queued nodes (`outstanding`)
    int top
    int cap
    bint kept  # an expensive node was kept here since the running node finished


cdef int ts_init(TaskStack* ts, int cap) noexcept:
    """Allocate `ts` empty; -1 when out of memory (then `ts_free` it)."""
    if cap < 16:
        cap = 16
    ts.nodes = <int*>malloc(cap * sizeof(int))
    ts.iters = <PyObject**>malloc(cap * sizeof(PyObject*))
    ts.top = 0
    ts.cap = cap
    ts.kept = False
    return 0 if ts.nodes != NULL and ts.iters != NULL else -1


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


cdef void drop_values(PyObject** vals, int n) noexcept:
    """Release every value of `vals[:n]`, leaving NULL (a slot is cleared first)."""
    cdef PyObject* v
    cdef int s
    if vals == NULL:
        return
    for s in range(n):
        v = vals[s]
        if v != NULL:
            vals[s] = NULL
            Py_DECREF(<object>v)


cdef struct Buffers:
    int* pending
    int* uses
    PyObject** vals
    char* cdead
    TaskStack stack  # the calling thread's
    PyThread_type_lock done_lock  # held whenever nobody waits on it
    PyObject* root  # owned: the root frame's `IterState`, borrowing these arrays


cdef void free_buffers(Buffers* b) noexcept:
    """Free `b`; its ``vals`` must all be NULL already."""
    if b == NULL:
        return
    free(b.pending)
    free(b.uses)
    free(b.vals)
    free(b.cdead)
    ts_free(&b.stack)
    if b.done_lock != NULL:
        PyThread_release_lock(b.done_lock)
        PyThread_free_lock(b.done_lock)
    if b.root != NULL:
        (<IterState>b.root).free_arrays()  # borrowed: this only forgets them
        Py_DECREF(<object>b.root)
    free(b)


cdef struct Tables:  # a plan's int tables, one block; `TABLES` names the fields in order
    int* in_ptr  # per node + 1: CSR offsets into `in_slots`
    int* in_slots  # frame-local slot indices, as `out_base` (the root's are global)
    int* out_base
    int* n_out
    int* flags
    int* succ_ptr  # per node + 1: CSR offsets into `succ`, `succ_local` and `succ_ctl`
    int* succ
    int* succ_local  # the successor's index inside its frame
    int* succ_ctl  # 1 for a control-only edge
    int* pending_init
    int* uses_init
    int* initial_ready
    int* init_slots
    int* node_local  # the node's index inside its frame
    int* node_kind
    int* enter_child
    int* frame_parallel
    int* frame_nn
    int* frame_ns
    int* frame_n_enters
    int* frame_pending_off  # CSR offsets into `frame_pending` (its root part is empty)
    int* frame_pending
    int* frame_uses_off
    int* frame_uses
    int* exit_ptr  # per frame + 1: CSR offsets into `exit_nodes`
    int* exit_nodes


# The fields of `Tables`, in their order (`pack_tables` fills the struct as an array).
cdef tuple TABLES = tuple(
    "in_ptr in_slots out_base n_out flags succ_ptr succ succ_local succ_ctl pending_init "
    "uses_init initial_ready init_slots node_local node_kind enter_child frame_parallel "
    "frame_nn frame_ns frame_n_enters frame_pending_off frame_pending frame_uses_off "
    "frame_uses exit_ptr exit_nodes".split())
assert len(TABLES) * sizeof(int*) == sizeof(Tables)


cdef int* pack_tables(Tables* t, dict lists) except NULL:
    """Copy the int lists named by `TABLES` into one block; point the fields of `t` at
    their parts; return the block (the owner frees it)."""
    flat = []
    offsets = []
    for name in TABLES:
        offsets.append(len(flat))
        flat.extend(lists[name])
    cdef int* block = int_array(flat)
    cdef int** field = <int**>t
    cdef int k
    for k in range(len(TABLES)):
        field[k] = block + <int>offsets[k]
    return block


cdef void free_objects(PyObject** objs, int n) noexcept:
    """Release the owned references `objs[:n]` and free the array."""
    cdef int i
    if objs == NULL:
        return
    for i in range(n):
        Py_XDECREF(objs[i])
    free(objs)


cdef class Plan:
    """A compiled run plan (see the module docstring for its arrays)."""

    cdef int n_nodes
    cdef int n_slots
    cdef Tables t  # NULL pointers until `finish`
    cdef int* block  # what the tables point into
    cdef int n_initial_ready
    cdef PyObject** kern
    cdef PyObject** init_vals
    cdef int n_init
    cdef Buffers* spare
    cdef TaskStack spare_stack
    cdef bint has_spare_stack
    cdef readonly list initial_values
    cdef public list node_names
    cdef public object describe_error
    cdef bint has_cf  # `set_frames` was called (see "Frames" in the module docstring)
    cdef dict _lists  # the tables while the plan is built
    cdef object _succ_sets
    cdef object _pending
    cdef object _frames
    cdef object _ctl_pairs

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
        init = [s for s in range(min(n_slots, len(initial_values)))
                if initial_values[s] is not None]
        self.kern = object_array(kernels)
        self.init_vals = object_array([initial_values[s] for s in init])
        self.n_init = len(init)
        self._lists = dict(in_ptr=in_ptr, in_slots=flat_inputs, out_base=list(out_base),
                           n_out=list(n_out), flags=list(flags), uses_init=list(uses),
                           init_slots=init)
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
        frame its parent frame (-1 for the root) and ``parallel_iterations``. With
        control flow, deadness also follows control edges, and fetching a dead value is
        an error, even with the root frame only (a `tf.cond` outside loops).
        """
        self.has_cf = True
        self._frames = (node_frame, node_kind, enter_child, slot_frame, frame_parent,
                        frame_parallel)

    def finish(self):
        """Freeze the successor lists; call after the last `add_control_edges`."""
        cdef int n = self.n_nodes
        succ_ptr = [0]
        flat = []
        flags = self._lists["flags"]
        leads = [i for i in range(n) if flags[i] & F_LEADS_IN_ORDER]
        for lst in self._succ_sets:
            if leads:  # pushed last, so popped first (see "Scheduling")
                lst.sort(key=lambda j: (flags[j] & F_LEADS_IN_ORDER) != 0)
            flat.extend(lst)
            succ_ptr.append(len(flat))
        if self._frames is None:  # the root frame only
            self._frames = ([0] * n, [K_NORMAL] * n, [0] * n, [0] * self.n_slots, [-1], [1])
        node_frame = self._frames[0]
        ready = [i for i in range(n) if self._pending[i] == 0 and node_frame[i] == 0]
        self._lists.update(succ_ptr=succ_ptr, succ=flat, pending_init=self._pending,
                           initial_ready=ready)
        self._finish_frames(flat, succ_ptr)
        self.block = pack_tables(&self.t, self._lists)
        self.n_initial_ready = len(ready)
        self._lists = None
        self._succ_sets = None
        self._ctl_pairs = None
        self._frames = None

    def _finish_frames(self, list flat, list succ_ptr):
        node_frame, node_kind, enter_child, slot_frame, frame_parent, frame_parallel = \
            self._frames
        cdef int n = self.n_nodes
        cdef int nf = len(frame_parent)
        cdef int i, j, f
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
        ctl = [0] * len(flat)
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
        uses_init = self._lists["uses_init"]
        for i in range(self.n_slots):
            f = slot_frame[i]
            if f != 0:
                uses[uses_off[f] + slot_local[i]] = uses_init[i]
        out_base = self._lists["out_base"]
        n_out = self._lists["n_out"]
        for i in range(n):  # a node's outputs are read in one frame: local indices in a row
            for j in range(1, n_out[i]):
                if slot_frame[out_base[i] + j] != slot_frame[out_base[i]]:
                    raise ValueError(f"the outputs of node {self.node_names[i]!r} are read "
                                     "in different frames")
            if n_out[i]:
                out_base[i] = slot_local[out_base[i]]
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
        self._lists.update(
            in_slots=[slot_local[x] for x in self._lists["in_slots"]],
            succ_local=[local[x] for x in flat], node_local=local, node_kind=node_kind,
            enter_child=enter_child, succ_ctl=ctl, frame_parallel=frame_parallel, frame_nn=nn,
            frame_ns=ns, frame_n_enters=n_enters, frame_pending_off=pending_off,
            frame_pending=pend, frame_uses_off=uses_off, frame_uses=uses, exit_ptr=exit_ptr,
            exit_nodes=exit_flat)

    def __dealloc__(self):
        free(self.block)
        free_objects(self.kern, self.n_nodes)
        free_objects(self.init_vals, self.n_init)
        free_buffers(self.spare)
        if self.has_spare_stack:
            ts_free(&self.spare_stack)

    @property
    def num_nodes(self):
        return self.n_nodes

    def successors(self, int node):
        return [self.t.succ[j] for j in range(self.t.succ_ptr[node], self.t.succ_ptr[node + 1])]

    # -- working memory ----------------------------------------------------------------
    cdef Buffers* take_buffers(self) except NULL:
        """The spare block, or a new one; ``vals`` all NULL, counts copied."""
        cdef Buffers* b = self.spare
        cdef int n = self.n_nodes if self.n_nodes > 0 else 1
        cdef int ns = self.n_slots if self.n_slots > 0 else 1
        if b != NULL:
            self.spare = NULL
            if self.has_cf:
                memset(b.cdead, 0, n)
        else:
            b = <Buffers*>calloc(1, sizeof(Buffers))
            if b == NULL:
                raise MemoryError()
            b.pending = <int*>malloc(n * sizeof(int))
            b.uses = <int*>malloc(ns * sizeof(int))
            b.vals = <PyObject**>calloc(ns, sizeof(PyObject*))
            b.cdead = <char*>calloc(n, 1)
            b.done_lock = PyThread_allocate_lock()
            if b.done_lock != NULL:
                PyThread_acquire_lock(b.done_lock, WAIT_LOCK)
            if (ts_init(&b.stack, n + 1) < 0 or b.pending == NULL or b.uses == NULL
                    or b.vals == NULL or b.cdead == NULL or b.done_lock == NULL):
                free_buffers(b)
                raise MemoryError()
            root = root_iteration(b, self.n_slots)
            Py_INCREF(root)
            b.root = <PyObject*>root
        memcpy(b.pending, self.t.pending_init, self.n_nodes * sizeof(int))
        memcpy(b.uses, self.t.uses_init, self.n_slots * sizeof(int))
        return b

    cdef void give_buffers(self, Buffers* b) noexcept:
        if self.spare == NULL:
            self.spare = b
        else:
            free_buffers(b)

    cdef int take_stack(self, TaskStack* ts) except -1:
        """Fill `ts` with the spare stack, or a new one (empty either way)."""
        if self.has_spare_stack:
            self.has_spare_stack = False
            ts[0] = self.spare_stack
            ts.top = 0
            return 0
        if ts_init(ts, self.n_nodes + 1) < 0:
            ts_free(ts)
            raise MemoryError()
        return 0

    cdef void give_stack(self, TaskStack* ts) noexcept:
        if self.has_spare_stack:
            ts_free(ts)
        else:
            self.spare_stack = ts[0]
            self.has_spare_stack = True


# -- frames and iterations --------------------------------------------------------------------
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

    cdef void free_arrays(self) noexcept:
        """Drop the values still held and free the arrays (only forget borrowed ones)."""
        if self.owned:
            drop_values(self.vals, self.n_slots)
            free(self.pending)
            free(self.uses)
            free(self.vals)
            free(self.cdead)
        self.pending = NULL
        self.uses = NULL
        self.vals = NULL
        self.cdead = NULL

    cdef int release(self) except -1:
        self.free_arrays()
        self.frame = None
        self.children = None
        return 0

    def __dealloc__(self):
        self.free_arrays()


cdef IterState root_iteration(Buffers* b, int n_slots):
    """The root frame's iteration for the steps that use `b`: it borrows b's arrays."""
    cdef IterState it = IterState.__new__(IterState)
    it.pending = b.pending
    it.uses = b.uses
    it.vals = b.vals
    it.cdead = b.cdead
    it.n_slots = n_slots
    return it


cdef IterState new_iteration(Plan plan, FrameState frame, int fid):
    cdef IterState it = IterState.__new__(IterState)
    cdef int nn = plan.t.frame_nn[fid]
    cdef int ns = plan.t.frame_ns[fid]
    it.frame = frame
    it.fid = fid
    it.n_slots = ns
    it.owned = True
    it.pending = <int*>malloc((nn if nn > 0 else 1) * sizeof(int))
    it.uses = <int*>malloc((ns if ns > 0 else 1) * sizeof(int))
    it.vals = <PyObject**>calloc(ns if ns > 0 else 1, sizeof(PyObject*))
    it.cdead = <char*>calloc(nn if nn > 0 else 1, 1)
    if it.pending == NULL or it.uses == NULL or it.vals == NULL or it.cdead == NULL:
        raise MemoryError()
    memcpy(it.pending, plan.t.frame_pending + plan.t.frame_pending_off[fid], nn * sizeof(int))
    memcpy(it.uses, plan.t.frame_uses + plan.t.frame_uses_off[fid], ns * sizeof(int))
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


cdef tuple iteration_key(IterState it):
    """`it`'s iteration numbers, outermost loop first, the innermost one negated: the
    smallest key is the task of an ``F_IN_ORDER`` node to run first."""
    cdef list path = []
    if it.fid != 0:
        path.append(-it.iter_id)
        it = it.frame.parent_iter
    while it is not None and it.fid != 0:
        path.append(it.iter_id)
        it = it.frame.parent_iter
    path.reverse()
    return tuple(path)


cdef class AsyncDone:
    """Completion callback handed to an async kernel: call with outputs or an error."""

    cdef Step step
    cdef int node
    cdef bint fired
    cdef IterState it  # the node's iteration
    cdef long long t0  # when the kernel started (tracing), else -1

    def __call__(self, outputs=None, error=None):
        if self.fired:
            return
        self.fired = True
        self.step._async_done(self.node, self.it, outputs, error, self.t0)


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


@cython.final
cdef class Step:
    """The state of one run of a `Plan`."""

    cdef Plan plan
    cdef Buffers* buf
    cdef IterState root  # the root frame's iteration: `buf.root`
    cdef int n_slots
    cdef object shared
    cdef list in_order  # ready (node, iteration) tasks of F_IN_ORDER nodes
    cdef int active
    cdef int n_async
    cdef bint waiting
    cdef bint finished
    cdef public object error
    cdef public object error_node
    cdef object context
    cdef object pool
    cdef bint tracing
    cdef public list trace

    def __init__(self, Plan plan, object context, object pool, bint tracing):
        if plan.block == NULL:
            raise RuntimeError("Plan.finish() must be called before the plan runs")
        self.plan = plan
        self.buf = plan.take_buffers()
        self.n_slots = plan.n_slots
        self.root = <IterState>self.buf.root
        self.shared = collections.deque() if pool is not None else None
        self.context = context
        self.pool = pool
        self.tracing = tracing
        self.trace = [] if tracing else None

    def __dealloc__(self):
        # Only reached with buffers when `run` was never called; `self.plan` may already
        # be cleared by the garbage collector, so free rather than hand back.
        cdef Buffers* b = self.buf
        if b == NULL:
            return
        self.buf = NULL
        drop_values(b.vals, self.n_slots)
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
        cdef PyObject** vals = self.buf.vals
        for i in range(plan.n_init):
            s = plan.t.init_slots[i]
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
        quiet = quiet_enter()
        try:
            try:
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
                if vals[s] == DEAD_P and plan.has_cf:
                    self.error = dead_fetch_error(plan, i, s)
                    result = None
                    break
                result.append(<object>vals[s] if vals[s] != NULL else None)
        self._release_all()
        if self.error is not None:
            exc = self.error
            self.error = None
            raise exc
        return result

    def run_fetch(self, list feed_slots, list feed_values, list fetch_slots):
        """`run`, with each fetched ndarray as `Session.run` returns it: a 0-d array as a
        NumPy scalar, a read-only array as a writable copy."""
        cdef list out = self.run(feed_slots, feed_values, fetch_slots)
        cdef Py_ssize_t i
        cdef object v
        for i in range(len(out)):
            v = out[i]
            if type(v) is cnp.ndarray:
                if cnp.PyArray_NDIM(<cnp.ndarray>v) == 0:
                    out[i] = v[()]
                elif not cnp.PyArray_ISWRITEABLE(<cnp.ndarray>v):
                    out[i] = v.copy()
        return out

    cdef int _run_to_end(self) except -1:
        """Schedule the initially ready nodes and drain the caller's stack."""
        cdef Plan plan = self.plan
        cdef TaskStack* ts = &self.buf.stack
        cdef int i
        ts.top = 0
        ts.kept = False
        for i in range(plan.n_initial_ready):
            self._push(ts, plan.t.initial_ready[i], self.root)
        self._drain(ts)
        return 0

    cdef int _run_shared(self, tuple item, TaskStack* ts) except -1:
        """Run a (node, iteration) task from the shared queue, and what it makes ready."""
        ts.nodes[0] = item[0]
        ts.iters[0] = <PyObject*>item[1]
        ts.top = 1
        return self._drain(ts)

    cdef int _help(self) except -1:
        """Run shared nodes (and what they make ready) on the calling thread."""
        while self.shared and self.error is None:
            item = self.shared.popleft()
            try:
                self._run_shared(item, &self.buf.stack)
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
                if self.in_order:
                    self.active -= len(self.in_order)
                    self.in_order.clear()
                if self.active - self.n_async <= 0:
                    break
            elif self.shared:
                try:
                    self._help()
                except BaseException as e:
                    if self.error is None:
                        self.error = e
                continue
            elif self.in_order:
                try:
                    self._drain(&self.buf.stack)
                except BaseException as e:
                    if self.error is None:
                        self.error = e
                continue
            elif self.active <= 0:
                break
            self._wait()
        self.finished = True
        return 0

    cdef int _release_all(self) except -1:
        """Drop the frame instances still alive (after an error), every remaining value,
        and hand the buffers back to the plan."""
        cdef Buffers* b = self.buf
        if self.root.children:
            self._release_frames()
        self.buf = NULL
        drop_values(b.vals, self.n_slots)
        self.plan.give_buffers(b)
        return 0

    cdef int _release_frames(self) except -1:
        pending = [self.root]
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
            if it is not self.root:
                (<IterState>it).release()
        return 0

    # -- scheduling --------------------------------------------------------------------
    cdef inline int _push(self, TaskStack* ts, int node, IterState it) except -1:
        """Schedule ready `node` in iteration `it`.

        An expensive node stays on this thread only when this thread has nothing else to
        do (its stack held nothing when the node that made it ready finished, and no
        other expensive node was kept since); otherwise it goes to the pool, so that
        branches reached through separate chains of cheap nodes still overlap.
        """
        if it.fid != 0:
            it.outstanding += 1
        if self.plan.t.flags[node] & F_IN_ORDER:
            if self.in_order is None:
                self.in_order = []
            self.active += 1
            self.in_order.append((node, it))
            return 0
        if (self.plan.t.flags[node] & F_HAND_OFF) and self.pool is not None:
            if ts.kept:
                return self._share(node, it)
            ts.kept = True
        if ts.top >= ts.cap:
            ts_grow(ts)
        ts.nodes[ts.top] = node
        ts.iters[ts.top] = <PyObject*>it
        ts.top += 1
        return 0

    cdef int _share(self, int node, IterState it) except -1:
        """Hand ready `node` to the pool (and to the caller, if it is waiting)."""
        self.active += 1
        self.shared.append((node, it))
        self.pool.notify(self)
        self._wake_caller()
        return 0

    cdef inline void _wake_caller(self) noexcept:
        if self.waiting and self.buf != NULL:
            self.waiting = False
            PyThread_release_lock(self.buf.done_lock)

    cdef inline void _end_work(self) noexcept:
        """Work outside the caller's stack ended: wake the caller when it should look."""
        self.active -= 1
        if self.active <= 0 or self.shared or self.error is not None:
            self._wake_caller()

    def work_shared(self):
        """Pool threads call this: run one shared node and what it makes ready."""
        if self.finished or not self.shared:
            return
        item = self.shared.popleft()
        cdef Plan plan = self.plan
        cdef TaskStack ts
        cdef bint have_ts = False
        quiet = None
        try:
            quiet = quiet_enter()
            plan.take_stack(&ts)
            have_ts = True
            self._run_shared(item, &ts)
        except BaseException as e:
            if self.error is None:
                self.error = e
        finally:
            if quiet is not None:
                quiet_exit(quiet)
            if have_ts:
                plan.give_stack(&ts)
            self._end_work()

    cdef int _drain(self, TaskStack* ts) except -1:
        """Run the tasks on `ts` and every task they make ready locally; then the queued
        in-order tasks, oldest first, each with what it makes ready."""
        self._drain_stack(ts)
        while self.in_order and self.error is None:
            item = self._take_in_order()
            self.active -= 1
            ts.nodes[0] = item[0]
            ts.iters[0] = <PyObject*>item[1]
            ts.top = 1
            self._drain_stack(ts)
        return 0

    cdef int _flush_in_order(self, TaskStack* ts) except -1:
        """Move every queued in-order task onto `ts`, the one TensorFlow would run first
        on top."""
        cdef list queue = self.in_order
        cdef list order = sorted(range(len(queue)), reverse=True,
                                 key=lambda k: iteration_key(<IterState>(<tuple>queue[k])[1]))
        cdef Py_ssize_t k
        self.in_order = None
        self.active -= len(queue)
        for k in order:
            if ts.top >= ts.cap:
                ts_grow(ts)
            ts.nodes[ts.top] = (<tuple>queue[k])[0]
            ts.iters[ts.top] = <PyObject*>(<tuple>queue[k])[1]
            ts.top += 1
        return 0

    cdef tuple _take_in_order(self):
        """Remove and return the queued in-order task that TensorFlow would run first:
        of the earliest iteration of the outer loops, the latest of the innermost one
        (`iteration_key`; only tasks of one node need comparing, as each node draws
        from its own stream)."""
        cdef list queue = self.in_order
        cdef Py_ssize_t best = 0, k
        cdef tuple best_key = iteration_key(<IterState>(<tuple>queue[0])[1])
        cdef tuple key
        for k in range(1, len(queue)):
            key = iteration_key(<IterState>(<tuple>queue[k])[1])
            if key < best_key:
                best, best_key = k, key
        return queue.pop(best)

    cdef int _drain_stack(self, TaskStack* ts) except -1:
        """Run the tasks on `ts` and every task they make ready locally.

        A node's kernel is skipped (its result is DEAD, and it is not traced) when an
        input or a control predecessor is dead; a Merge needs only one live input.
        """
        cdef Tables* t = &self.plan.t
        cdef PyObject** kern = self.plan.kern
        cdef PyObject* small[SMALL_ARGS]
        cdef PyObject** argv
        cdef PyObject** vals
        cdef PyObject* v
        cdef PyObject* result
        cdef PyObject* it  # borrowed, an `IterState`
        cdef int node, fl, a, k, nargs, extra
        cdef bint ctl_dead, dead
        cdef long long t0
        while ts.top > 0:
            if self.error is not None:
                return 0
            ts.top -= 1
            node = ts.nodes[ts.top]
            it = ts.iters[ts.top]
            fl = t.flags[node]
            if (fl & F_FLUSH_IN_ORDER) and self.in_order:
                ts.top += 1  # (still in place) after the queued in-order tasks
                self._flush_in_order(ts)
                continue
            if fl & F_ASYNC:
                self._start_async(node, <IterState>it)
                continue
            a = t.in_ptr[node]
            extra = 1 if fl & F_NEEDS_STEP else 0
            nargs = t.in_ptr[node + 1] - a + extra
            if nargs + 1 <= SMALL_ARGS:
                argv = small
            else:
                argv = <PyObject**>PyMem_Malloc((nargs + 1) * sizeof(PyObject*))
                if argv == NULL:
                    raise MemoryError()
            # argv[0] is scratch space the callee may use (PY_VECTORCALL_ARGUMENTS_OFFSET).
            if extra:
                argv[1] = <PyObject*>self.context
            vals = (<IterState>it).vals
            ctl_dead = (<IterState>it).cdead[t.node_local[node]] != 0
            dead = ctl_dead
            for k in range(extra + 1, nargs + 1):
                v = vals[t.in_slots[a + k - extra - 1]]
                if v == NULL:
                    v = <PyObject*>None
                elif v == DEAD_P:
                    dead = True
                argv[k] = v
            t0 = -1
            if dead and (fl & F_TRANSFER):
                # A dead _Send (a dead input or control predecessor) still runs, with
                # DEAD as its value: its _Recv on the other device must not wait for ever.
                for k in range(extra + 1, nargs + 1):
                    argv[k] = DEAD_P
                dead = False
            if dead and (ctl_dead or not (fl & F_MERGE)):
                Py_INCREF(<object>DEAD_P)
                result = DEAD_P
            else:
                if self.tracing:
                    t0 = now_ns()
                result = PyObject_Vectorcall(kern[node], argv + 1,
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
            ts.kept = ts.top > 0
            self._finish(node, <IterState>it, result, t0, ts)
        return 0

    # -- finishing one node ------------------------------------------------------------
    cdef int _finish(self, int node, IterState it, PyObject* result, long long t0,
                     TaskStack* ts) except -1:
        """Take over the reference `result`: trace `node`, release its inputs, route its
        outputs by its kind, settle its iteration."""
        cdef Tables* t = &self.plan.t
        cdef int kind = t.node_kind[node]
        cdef bint node_dead = result == DEAD_P
        cdef int* uses = it.uses
        cdef PyObject** vals = it.vals
        cdef PyObject* v
        cdef int k, s
        if self.tracing and t0 >= 0:
            self._record(node, t0, <object>result)
        for k in range(t.in_ptr[node], t.in_ptr[node + 1]):  # drop inputs used up
            s = t.in_slots[k]
            uses[s] -= 1
            if uses[s] == 0:
                v = vals[s]
                if v != NULL:
                    vals[s] = NULL
                    Py_DECREF(<object>v)
        if kind == K_NORMAL or kind == K_LOOP_MERGE:
            if not self._store(node, it, result):
                return 0
            self._schedule(node, it, node_dead, ts)
        else:
            value = <object>result
            Py_DECREF(value)  # `value` now holds the reference we own
            self._route(node, it, value, node_dead, kind, ts)
        if it.fid != 0:
            it.outstanding -= 1
            if it.outstanding == 0:
                self._check_iter(it, ts)
        return 0

    cdef inline bint _store(self, int node, IterState target, PyObject* result) except -1:
        """Store `node`'s outputs in `target`, taking over the reference `result`; False
        on failure. Outputs nobody uses are not stored."""
        cdef Tables* t = &self.plan.t
        cdef int s
        cdef PyObject* old
        if t.n_out[node] != 1 or (t.flags[node] & F_MULTI_OUT):
            return self._store_many(node, target, result)
        s = t.out_base[node]
        if target.uses[s] > 0:
            old = target.vals[s]
            target.vals[s] = result
            Py_XDECREF(old)
        else:
            Py_DECREF(<object>result)
        return True

    cdef bint _store_many(self, int node, IterState target, PyObject* result) except -1:
        """`_store` for nodes with other than one output: a multi-output node returns a
        sequence (or DEAD, which makes every output dead); others have no outputs."""
        cdef Plan plan = self.plan
        cdef int base = plan.t.out_base[node]
        cdef int n = plan.t.n_out[node]
        cdef int k, s
        cdef PyObject* old
        cdef object item
        value = <object>result
        Py_DECREF(value)  # `value` now holds the reference we own
        if not (plan.t.flags[node] & F_MULTI_OUT):
            return True
        try:
            if value is DEAD:
                value = (DEAD,) * n
            elif len(value) != n:
                raise ValueError(f"kernel returned {len(value)} outputs, the op declares {n}")
            for k in range(n):
                s = base + k
                if target.uses[s] > 0:
                    item = value[k]
                    Py_INCREF(item)
                    old = target.vals[s]
                    target.vals[s] = <PyObject*>item
                    Py_XDECREF(old)
        except BaseException as e:
            self._fail(node, e, ())
            return False
        return True

    cdef inline int _schedule(self, int node, IterState target, bint node_dead,
                              TaskStack* ts) except -1:
        """`node`'s outputs arrived in `target`: push the successors that became ready.
        A dead node makes its control successors dead."""
        cdef Tables* t = &self.plan.t
        cdef int* pending = target.pending
        cdef int j, succ_node, loc
        for j in range(t.succ_ptr[node], t.succ_ptr[node + 1]):
            succ_node = t.succ[j]
            loc = t.succ_local[j]
            if node_dead and t.succ_ctl[j]:
                target.cdead[loc] = 1
            pending[loc] -= 1
            if pending[loc] == 0:
                self._push(ts, succ_node, target)
        return 0

    cdef bint _deliver(self, int node, IterState target, object value, bint node_dead,
                       TaskStack* ts) except -1:
        """Store `node`'s outputs in iteration `target`; schedule what becomes ready."""
        Py_INCREF(value)
        if not self._store(node, target, <PyObject*>value):
            return False
        self._schedule(node, target, node_dead, ts)
        return True

    cdef int _record(self, int node, long long t0, object result) except -1:
        """Trace row of a finished node: (node, start, end, thread, output bytes,
        outputs) where outputs holds (dtype, shape, bytes) per output."""
        cdef long long t1 = now_ns()
        cdef long long out_bytes = 0
        cdef list outputs = []
        if self.plan.t.flags[node] & F_MULTI_OUT:
            if result is not DEAD:
                for r in result:
                    outputs.append(_describe(r))
        elif result is not DEAD:
            outputs.append(_describe(result))
        for o in outputs:
            out_bytes += o[2]
        self.trace.append((node, t0, t1, PyThread_get_thread_ident(), out_bytes,
                           outputs))
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
    cdef int _start_async(self, int node, IterState it) except -1:
        cdef Plan plan = self.plan
        cdef int a = plan.t.in_ptr[node]
        cdef int b = plan.t.in_ptr[node + 1]
        cdef tuple args = PyTuple_New(b - a)
        cdef bint dead = it.cdead[plan.t.node_local[node]] != 0
        cdef int k
        cdef PyObject* p
        cdef object v
        for k in range(a, b):
            p = it.vals[plan.t.in_slots[k]]
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

    def _async_done(self, int node, IterState it, outputs, error, long long t0=-1):
        cdef Plan plan = self.plan
        cdef TaskStack ts
        cdef bint have_ts = False
        if self.finished:
            return  # the step ended (after an error) without waiting for this kernel
        self.n_async -= 1
        try:
            if error is not None:
                self._fail(node, error, ())
            elif self.error is None:
                plan.take_stack(&ts)
                have_ts = True
                quiet = quiet_enter()
                try:
                    Py_INCREF(outputs)
                    self._finish(node, it, <PyObject*>outputs, t0, &ts)
                    self._drain(&ts)
                finally:
                    quiet_exit(quiet)
        except BaseException as e:
            if self.error is None:
                self.error = e
        finally:
            if have_ts:
                plan.give_stack(&ts)
            self._end_work()

    # -- frames ------------------------------------------------------------------------
    # Where the outputs of Enter, Exit and NextIteration nodes go; see "Frames" in the
    # module docstring.
    cdef int _route(self, int node, IterState it, object value, bint node_dead, int kind,
                    TaskStack* ts) except -1:
        cdef FrameState fr
        if kind == K_EXIT:
            if not node_dead:
                fr = it.frame
                fr.exits_fired.add(node)
                self._deliver(node, fr.parent_iter, value, False, ts)
        elif kind == K_NEXT:
            if not node_dead:  # a dead value ends the loop here instead
                self._next(node, it, value, ts)
        else:
            self._enter(node, it, value, node_dead, kind == K_CONST_ENTER, ts)
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
            fr.pending_enters = self.plan.t.frame_n_enters[fid]
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
            self._deliver(enode, it, value, dead, ts)
        return it

    cdef int _enter(self, int node, IterState it, object value, bint dead, bint const,
                    TaskStack* ts) except -1:
        cdef FrameState fr = self._child_frame(it, self.plan.t.enter_child[node], ts)
        cdef IterState first = fr.iters[0]  # iteration 0 lives until every Enter arrived
        if const:
            fr.invariants.append((node, value, dead))
            for target in list(fr.iters):
                self._deliver(node, target, value, dead, ts)
        else:
            self._deliver(node, first, value, dead, ts)
        fr.pending_enters -= 1
        if fr.pending_enters == 0 and first.outstanding == 0:
            self._check_iter(fr.iters[0], ts)
        return 0

    cdef int _next(self, int node, IterState it, object value, TaskStack* ts) except -1:
        cdef FrameState fr = it.frame
        cdef long long want = it.iter_id + 1
        cdef IterState target = None
        if want < fr.next_id:
            for x in reversed(fr.iters):
                if (<IterState>x).iter_id == want:
                    target = x
                    break
        elif fr.queued or len(fr.iters) >= self.plan.t.frame_parallel[fr.fid]:
            fr.queued.append((node, value))  # wait for an older iteration to finish
            return 0
        else:
            target = self._new_iter(fr, ts)
        if target is None:  # pragma: no cover - iterations retire in order
            raise RuntimeError(f"iteration {want} of frame {fr.fid} vanished")
        self._deliver(node, target, value, False, ts)
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
                    self._deliver(qnode, ni, qvalue, False, ts)
            if fr.iters:
                it = fr.iters[0]
                continue
            return self._frame_done(fr, ts)

    cdef int _frame_done(self, FrameState fr, TaskStack* ts) except -1:
        """Every iteration of `fr` retired: Exits that never fired deliver dead values."""
        cdef Plan plan = self.plan
        cdef IterState parent = fr.parent_iter
        cdef int j, e
        for j in range(plan.t.exit_ptr[fr.fid], plan.t.exit_ptr[fr.fid + 1]):
            e = plan.t.exit_nodes[j]
            if e not in fr.exits_fired:
                self._deliver(e, parent, DEAD, True, ts)
        fr.invariants = None
        fr.parent_iter = None
        del parent.children[fr.fid]
        if parent.fid != 0:
            parent.outstanding -= 1
            if parent.outstanding == 0:
                self._check_iter(parent, ts)
        return 0

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
