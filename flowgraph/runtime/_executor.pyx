# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The dataflow executor: runs one compiled plan for one `Session.run` step.

State it keeps
--------------
A `Plan` is flat C arrays built once per run signature: per node its input slots
(CSR ``in_ptr``/``in_slots``), its first output slot and output count, its successor
nodes (CSR ``succ_ptr``/``succ``, one entry per distinct producer->consumer pair), its
initial pending count and flags; per slot (one slot per tensor) the number of uses.
A `Step` copies ``pending`` and ``uses`` and holds the slot values for one run.

Invariants
----------
* A node is pushed on a ready stack exactly once: when its pending count reaches 0.
* A slot's value is dropped the moment its use count reaches 0, so memory follows the
  schedule; fetched slots carry one extra use and survive to the end.
* ``active`` counts work outside the calling thread's own stack (nodes handed to the
  shared queue, nodes running on pool threads, async kernels in flight). The step ends
  when the caller's stack is empty and ``active`` is 0.
* All bookkeeping (pending counts, stacks, slot values) happens while holding the GIL,
  and never calls back into Python in between, so it is atomic with respect to other
  threads; threads release the GIL only to block (waiting for work or for the step to
  finish) and inside kernels that release it themselves (NumPy, BLAS, Cython nogil).

Scheduling
----------
The calling thread runs the step. When a node finishes, its ready successors are pushed
on the finishing thread's own stack, so a chain never changes thread; cheap nodes
always stay local. Expensive ready nodes beyond the first go to the step's shared queue
and wake one pool thread (or the caller, if it is waiting), so independent heavy
branches overlap::

        feed ─┬─ A (expensive) ── C ─┐
              └─ B (expensive) ── D ─┴─ AddN ── fetch
    caller: feed, A, C, ...     pool thread: B, D      (AddN runs where the last input lands)

Dead values (the untaken side of a `Switch`) are the `DEAD` sentinel: a node with a dead
input produces dead outputs without running its kernel, except `Merge`, which takes its
first live input.
"""

from cpython.pythread cimport (
    PyThread_acquire_lock,
    PyThread_allocate_lock,
    PyThread_free_lock,
    PyThread_release_lock,
    PyThread_type_lock,
    WAIT_LOCK,
)
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec

import collections
import sys
import threading

cdef enum:
    F_EXPENSIVE = 1
    F_ASYNC = 2
    F_NEEDS_STEP = 4
    F_MERGE = 8
    F_MULTI_OUT = 16


class _Dead:
    """The value of a tensor on an untaken control-flow branch."""

    __slots__ = ()

    def __repr__(self):
        return "<dead>"

    def __reduce__(self):
        return "DEAD"


DEAD = _Dead()
FLAG_EXPENSIVE = F_EXPENSIVE
FLAG_ASYNC = F_ASYNC
FLAG_NEEDS_STEP = F_NEEDS_STEP
FLAG_MERGE = F_MERGE
FLAG_MULTI_OUT = F_MULTI_OUT


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
    cdef public list kernels
    cdef public list initial_values
    cdef public list node_names
    cdef public object describe_error

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

    def __init__(self, int n_slots, list kernels, list inputs, list out_base, list n_out,
                 list flags, list uses, list initial_values, list node_names,
                 object describe_error):
        """Build from per-node Python lists; `inputs[i]` is node i's input slot list."""
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
        self._control_edges = None
        self.in_ptr = int_array(in_ptr)
        self.in_slots = int_array(flat_inputs)
        self.out_base = int_array(out_base)
        self.n_out = int_array(n_out)
        self.flags = int_array(flags)
        self.uses_init = int_array(uses)
        self._succ_sets = succ_sets
        self._pending = pending

    cdef object _succ_sets
    cdef object _pending
    cdef object _control_edges

    def add_control_edges(self, list edges):
        """Add (before, after) node pairs that order nodes without passing data."""
        for a, b in edges:
            if b not in self._succ_sets[a]:
                self._succ_sets[a].append(b)
                self._pending[b] += 1

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
        self.initial_ready = int_array(ready)
        self.n_initial_ready = len(ready)
        self._succ_sets = None

    def __dealloc__(self):
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

    @property
    def num_nodes(self):
        return self.n_nodes

    def successors(self, int node):
        return [self.succ[j] for j in range(self.succ_ptr[node], self.succ_ptr[node + 1])]


cdef class AsyncDone:
    """Completion callback handed to an async kernel: call with outputs or an error."""

    cdef Step step
    cdef int node
    cdef bint fired

    def __call__(self, outputs=None, error=None):
        if self.fired:
            return
        self.fired = True
        self.step._async_done(self.node, outputs, error)


cdef class Step:
    """The state of one run of a `Plan`."""

    cdef Plan plan
    cdef int* pending
    cdef int* uses
    cdef public list values
    cdef object shared
    cdef int active
    cdef PyThread_type_lock done_lock
    cdef bint waiting
    cdef public object error
    cdef public object error_node
    cdef public object context
    cdef object pool
    cdef public bint tracing
    cdef public list trace
    cdef long long live_bytes
    cdef public long long peak_bytes
    cdef object nbytes_of

    def __cinit__(self):
        self.pending = NULL
        self.uses = NULL
        self.done_lock = NULL

    def __init__(self, Plan plan, object context, object pool, bint tracing):
        cdef int n = plan.n_nodes
        self.plan = plan
        self.pending = <int*>malloc((n if n > 0 else 1) * sizeof(int))
        self.uses = <int*>malloc((plan.n_slots if plan.n_slots > 0 else 1) * sizeof(int))
        if self.pending == NULL or self.uses == NULL:
            raise MemoryError()
        memcpy(self.pending, plan.pending_init, n * sizeof(int))
        memcpy(self.uses, plan.uses_init, plan.n_slots * sizeof(int))
        self.values = list(plan.initial_values)
        self.shared = collections.deque()
        self.active = 0
        self.done_lock = PyThread_allocate_lock()
        if self.done_lock == NULL:
            raise MemoryError()
        PyThread_acquire_lock(self.done_lock, WAIT_LOCK)
        self.waiting = False
        self.error = None
        self.error_node = None
        self.context = context
        self.pool = pool
        self.tracing = tracing
        self.trace = [] if tracing else None
        self.live_bytes = 0
        self.peak_bytes = 0

    def __dealloc__(self):
        if self.pending != NULL:
            free(self.pending)
        if self.uses != NULL:
            free(self.uses)
        if self.done_lock != NULL:
            if self.waiting:
                PyThread_release_lock(self.done_lock)
            PyThread_free_lock(self.done_lock)

    # -- public entry ------------------------------------------------------------------
    def run(self, list feed_slots, list feed_values, list fetch_slots):
        """Execute the plan; return the values of `fetch_slots`."""
        cdef Plan plan = self.plan
        cdef int i, node
        cdef list values = self.values
        for i in range(len(feed_slots)):
            values[<int>feed_slots[i]] = feed_values[i]
            if self.tracing:
                self._account_alloc(feed_values[i])
        if self.tracing:
            for v in plan.initial_values:
                if v is not None:
                    self._account_alloc(v)
        cdef int* stack = <int*>malloc((plan.n_nodes + 1) * sizeof(int))
        if stack == NULL:
            raise MemoryError()
        cdef int top = 0
        cdef bint kept = False
        try:
            for i in range(plan.n_initial_ready):
                node = plan.initial_ready[i]
                top = self._schedule(node, stack, top, &kept)
            kept = False
            self._drain(stack, top)
            while True:
                # Help with shared work, then wait for the rest.
                while self.shared and self.error is None:
                    node = self.shared.popleft()
                    stack[0] = node
                    self._drain(stack, 1)
                    self.active -= 1
                if self.active <= 0:
                    break
                if self.shared:
                    continue
                self.waiting = True
                with nogil:
                    PyThread_acquire_lock(self.done_lock, WAIT_LOCK)
        finally:
            free(stack)
        if self.error is not None:
            exc = self.error
            self.error = None
            raise exc
        return [values[<int>s] for s in fetch_slots]

    # -- scheduling --------------------------------------------------------------------
    cdef int _schedule(self, int node, int* stack, int top, bint* kept) except -1:
        """Put ready `node` on the local stack, or hand it to the pool."""
        if (self.plan.flags[node] & F_EXPENSIVE) and self.pool is not None:
            if kept[0]:
                self.active += 1
                self.shared.append(node)
                self.pool.notify(self)
                self._wake_caller()
                return top
            kept[0] = True
        stack[top] = node
        return top + 1

    cdef inline void _wake_caller(self):
        if self.waiting:
            self.waiting = False
            PyThread_release_lock(self.done_lock)

    def work_shared(self):
        """Pool threads call this: run one shared node and what it makes ready."""
        if not self.shared:
            return
        node = self.shared.popleft()
        cdef int* stack = <int*>malloc((self.plan.n_nodes + 1) * sizeof(int))
        if stack == NULL:
            raise MemoryError()
        try:
            stack[0] = node
            self._drain(stack, 1)
        finally:
            free(stack)
            self.active -= 1
            if self.active <= 0 or self.shared:
                self._wake_caller()

    cdef int _drain(self, int* stack, int top) except -1:
        cdef Plan plan = self.plan
        cdef int node, j, succ_node
        cdef bint kept
        while top > 0:
            if self.error is not None:
                return 0
            top -= 1
            node = stack[top]
            if plan.flags[node] & F_ASYNC:
                self._start_async(node)
                continue
            if not self._execute(node):
                return 0
            kept = False
            for j in range(plan.succ_ptr[node], plan.succ_ptr[node + 1]):
                succ_node = plan.succ[j]
                self.pending[succ_node] -= 1
                if self.pending[succ_node] == 0:
                    top = self._schedule(succ_node, stack, top, &kept)
        return 0

    # -- running one node --------------------------------------------------------------
    cdef tuple _gather(self, int node, bint* dead, int extra):
        cdef Plan plan = self.plan
        cdef int a = plan.in_ptr[node]
        cdef int b = plan.in_ptr[node + 1]
        cdef tuple args = PyTuple_New(b - a + extra)
        cdef int k
        cdef object v
        cdef list values = self.values
        dead[0] = False
        for k in range(a, b):
            v = values[plan.in_slots[k]]
            if v is DEAD:
                dead[0] = True
            Py_INCREF(v)
            PyTuple_SET_ITEM(args, k - a + extra, v)
        return args

    cdef void _release_inputs(self, int node):
        cdef Plan plan = self.plan
        cdef int k, s
        for k in range(plan.in_ptr[node], plan.in_ptr[node + 1]):
            s = plan.in_slots[k]
            self.uses[s] -= 1
            if self.uses[s] == 0:
                if self.tracing:
                    self._account_free(self.values[s])
                self.values[s] = None

    cdef void _account_alloc(self, object v):
        cdef long long n = getattr(v, "nbytes", 0) or 0
        self.live_bytes += n
        if self.live_bytes > self.peak_bytes:
            self.peak_bytes = self.live_bytes

    cdef void _account_free(self, object v):
        cdef long long n = getattr(v, "nbytes", 0) or 0
        self.live_bytes -= n

    cdef int _store(self, int node, object result) except -1:
        cdef Plan plan = self.plan
        cdef int base = plan.out_base[node]
        cdef int n = plan.n_out[node]
        cdef int k
        if plan.flags[node] & F_MULTI_OUT:
            if result is DEAD:
                result = (DEAD,) * n
            elif len(result) != n:
                raise ValueError(
                    f"kernel returned {len(result)} outputs, the op declares {n}")
            for k in range(n):
                if self.uses[base + k] > 0:
                    self.values[base + k] = result[k]
                    if self.tracing:
                        self._account_alloc(result[k])
        elif n == 1:
            if self.uses[base] > 0:
                self.values[base] = result
                if self.tracing:
                    self._account_alloc(result)
        return 0

    cdef bint _execute(self, int node) except -1:
        """Run node's kernel; on failure record the error and return False."""
        cdef Plan plan = self.plan
        cdef bint dead
        cdef int flags = plan.flags[node]
        cdef int extra = 1 if flags & F_NEEDS_STEP else 0
        cdef tuple args = self._gather(node, &dead, extra)
        cdef long long t0 = 0
        if extra:
            Py_INCREF(self.context)
            PyTuple_SET_ITEM(args, 0, self.context)
        if self.tracing:
            t0 = now_ns()
        try:
            if dead and not (flags & F_MERGE):
                result = DEAD
            else:
                result = plan.kernels[node](*args)
            self._store(node, result)
        except BaseException as e:
            self._fail(node, e, args)
            return False
        if self.tracing:
            self._record(node, t0, result)
        args = None
        self._release_inputs(node)
        return True

    cdef void _record(self, int node, long long t0, object result):
        cdef long long t1 = now_ns()
        cdef long long out_bytes = 0
        if self.plan.flags[node] & F_MULTI_OUT:
            if result is not DEAD:
                for r in result:
                    out_bytes += getattr(r, "nbytes", 0) or 0
        else:
            out_bytes = getattr(result, "nbytes", 0) or 0
        self.trace.append((node, t0, t1, threading.get_ident(), out_bytes, self.live_bytes))

    cdef void _fail(self, int node, object exc, tuple args):
        if self.error is None:
            try:
                self.error = self.plan.describe_error(node, exc, args)
            except BaseException as e2:  # never lose the original error
                self.error = e2
            self.error_node = node

    # -- async kernels -----------------------------------------------------------------
    cdef void _start_async(self, int node):
        cdef bint dead
        cdef tuple args = self._gather(node, &dead, 0)
        cdef AsyncDone done = AsyncDone.__new__(AsyncDone)
        done.step = self
        done.node = node
        done.fired = False
        self.active += 1
        try:
            if dead:
                done(DEAD, None)
            else:
                self.plan.kernels[node](self.context, done, *args)
        except BaseException as e:
            done(None, e)

    def _async_done(self, int node, outputs, error):
        cdef int* stack
        cdef int top = 0
        cdef int j, succ_node
        cdef bint kept = False
        cdef Plan plan = self.plan
        try:
            if error is not None:
                self._fail(node, error, ())
                return
            if self.error is not None:
                return
            try:
                self._store(node, outputs)
            except BaseException as e:
                self._fail(node, e, ())
                return
            self._release_inputs(node)
            stack = <int*>malloc((plan.n_nodes + 1) * sizeof(int))
            if stack == NULL:
                raise MemoryError()
            try:
                for j in range(plan.succ_ptr[node], plan.succ_ptr[node + 1]):
                    succ_node = plan.succ[j]
                    self.pending[succ_node] -= 1
                    if self.pending[succ_node] == 0:
                        top = self._schedule(succ_node, stack, top, &kept)
                self._drain(stack, top)
            finally:
                free(stack)
        finally:
            self.active -= 1
            if self.active <= 0 or self.shared or self.error is not None:
                self._wake_caller()

    def cancel(self, exc):
        """Abort the step from outside (timeouts, session close)."""
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

    def close(self):
        if self._closed:
            return
        self._closed = True
        for _ in self._threads:
            self._queue.put(None)
