# cython: language_level=3, boundscheck=False, wraparound=False
"""Reusable output arrays for the large results of hot CPU kernels (MatMul, ReLU, BiasAdd).

Why
---
A training step allocates the same large arrays every step (activations, their
gradients, weight gradients) and frees them as their last consumers finish. glibc hands
the freed top of the heap back to the OS once it exceeds its trim threshold, so the next
step page-faults the memory in again: on this VM ~950 faults (~1.2 ms) in a 5 ms MLP step.
Keeping those arrays and handing them out again avoids the faults and keeps them warm in
the cache.

State it keeps
--------------
``_free``: ``(shape, dtype) -> list`` of arrays this module allocated and still holds,
at most `PER_KEY` per key and `BUDGET` bytes in all (less while a memory-budgeted step
runs: `push_cap`, see docs/memory.md); only sizes in ``[MIN_BYTES, MAX_BYTES]`` are kept
(smaller ones cost malloc nothing). An array returns to the pool when the executor drops
its slot's reference, i.e. when its value's last consumer finishes. `counts` tells how
many calls reused a kept array and how many had to allocate (a budget that caps the pool
too tightly shows up there as misses every step).

The invariant
-------------
An array is handed out again only when this module's list holds the *only* reference to
it (``Py_REFCNT == 1``): every user of an array (the executor's slot for a live output, a
fetched result, a view's ``base``, a Variable's storage) holds a reference, so nobody can
see the array change. The check and the hand-out run with the GIL held and without
calling into Python, so two threads never get the same array::

    step 1:  empty((256, 512)) -> A (new, kept)      A: list + executor slot
             ... A's last consumer finishes           A: list only
    step 2:  empty((256, 512)) -> A again            no allocation, no page fault

Example
-------
>>> import numpy as np
>>> from flowgraph.backends.cpu._buffers import empty
>>> a = empty((300, 301), np.float32)
>>> b = empty((300, 301), np.float32)   # `a` is still referenced: a different array
>>> a is b
False
>>> address = a.ctypes.data
>>> del a                               # now only the kept list references it
>>> empty((300, 301), np.float32).ctypes.data == address
True
"""

from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from cpython.ref cimport PyObject

import numpy as np

MIN_BYTES = 1 << 16
MAX_BYTES = 1 << 26
PER_KEY = 8
BUDGET = 1 << 28

cdef Py_ssize_t ALIGN = 64
cdef dict _free = {}
cdef Py_ssize_t _held = 0
cdef Py_ssize_t _cap = BUDGET
cdef list _caps = []
cdef Py_ssize_t _hits = 0  # calls served from the pool (counted for `counts`)
cdef Py_ssize_t _misses = 0  # pool-sized calls that had to allocate


cdef extern from "Python.h":
    Py_ssize_t Py_REFCNT(PyObject* o)


def empty(tuple shape, dtype):
    """An uninitialized C-contiguous array: a kept one that nobody references, or new."""
    global _held, _hits, _misses
    cdef object dt = np.dtype(dtype)
    cdef Py_ssize_t n = dt.itemsize
    cdef object d
    for d in shape:
        n *= d
    if n < MIN_BYTES or n > MAX_BYTES:
        return np.empty(shape, dt)
    key = (shape, dt)
    cdef list kept = _free.get(key)
    cdef Py_ssize_t i
    cdef PyObject* p
    if kept is None:
        kept = _free[key] = []
    for i in range(PyList_GET_SIZE(kept)):
        p = PyList_GET_ITEM(kept, i)
        if Py_REFCNT(p) == 1:
            _hits += 1
            return <object>p  # (a new reference: the caller's)
    _misses += 1
    out = _aligned_empty(shape, dt, n)
    if PyList_GET_SIZE(kept) < PER_KEY and _held + n <= _cap:
        kept.append(out)
        _held += n
    return out


cdef object _aligned_empty(tuple shape, object dt, Py_ssize_t n):
    # On a 64-byte line (glibc's large blocks start 16 bytes into a page): vector loads
    # and stores of the kernels that read or write the array then never straddle two
    # cache lines. The array is made straight on the memory (its base a memoryview, not
    # an array), so NumPy's views of it name it as their base and count in its refcount,
    # which the invariant above needs.
    buf = bytearray(n + ALIGN)
    cdef char* start = buf
    cdef Py_ssize_t offset = (ALIGN - (<size_t>start) % ALIGN) % ALIGN
    return np.ndarray(shape, dt, buffer=memoryview(buf)[offset:offset + n])


def held_bytes() -> int:
    """Bytes of the arrays kept for reuse (in use or not)."""
    return _held


def counts() -> tuple:
    """``(hits, misses)`` of `empty` calls in the pool's size range since the process
    started: a miss allocated (and page-faults the array in); a hit reused a kept array.
    """
    return _hits, _misses


def clear() -> None:
    """Forget every kept array (those still in use live on with their users)."""
    global _held
    _free.clear()
    _held = 0


def push_cap(Py_ssize_t n) -> None:
    """Cap the pool at `n` bytes until the matching `pop_cap` (caps nest: the smallest
    holds; none raises the pool above `BUDGET`), dropping kept arrays, idle ones first,
    until it holds at most `n`."""
    _caps.append(n)
    _apply_cap()


def pop_cap(Py_ssize_t n) -> None:
    """End a `push_cap(n)`."""
    _caps.remove(n)
    _apply_cap()


cdef void _apply_cap() except *:
    global _cap, _held
    _cap = min(min(_caps), BUDGET) if _caps else BUDGET
    cdef list kept
    cdef int idle
    cdef Py_ssize_t i
    for idle in (1, 0):  # first arrays nobody uses, then any (their users keep them)
        for kept in _free.values():
            i = len(kept) - 1
            while i >= 0 and _held > _cap:
                if not idle or Py_REFCNT(PyList_GET_ITEM(kept, i)) == 1:
                    _held -= kept[i].nbytes
                    del kept[i]
                i -= 1
