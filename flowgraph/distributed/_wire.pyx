# cython: language_level=3, boundscheck=False, wraparound=False
"""The wire format's common case in C (`flowgraph.distributed.wire` calls it).

State it keeps
--------------
None per call. A `Views` holds one parsed tensor table of numeric tensors (names,
dtypes, shapes as C arrays, sizes), made once per table by `wire` and kept in its cache.

What it does
------------
A step sends the same names, dtypes and shapes on every call, so most of a message's
cost in Python was per-tensor bookkeeping that repeats:

* `signature` reads a dict of tensors in one pass and, when every value is a
  C-contiguous NumPy array or a NumPy scalar of a numeric dtype, returns a bytes key of its layout
  (per tensor: name, dtype kind, byte order, item size, shape) by which `wire` finds the
  layout's tensor table, encoded once; anything else (a list, a string tensor, a
  non-contiguous array, float32 under bfloat16) returns None and takes `wire`'s general
  path. Two layouts never share a key: every field is written with its length.
* `Views.arrays` makes the NumPy arrays of a received message: one array per tensor
  that views the message's buffer (no copy), read-only unless the buffer is writable,
  kept alive by the buffer. It returns None, and `wire` takes its general path (which
  says what is wrong), unless the buffers fill the message exactly.

Example
-------
>>> import numpy as np
>>> key = signature({"x": np.zeros(3, np.float32)}, False)
>>> key == signature({"x": np.ones(3, np.float32)}, False), signature({"x": [1]}, False)
(True, None)
>>> signature({"n": np.int64(3)}, False) == signature({"n": np.array(4)}, False)
True
>>> views = Views([("x", np.dtype("<f4"), (3,), 3, 12)])
>>> views.arrays(memoryview(np.arange(4, dtype=np.float32).tobytes()), 0)["x"].tolist()
[0.0, 1.0, 2.0]
"""

from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.dict cimport PyDict_Next
from cpython.object cimport PyTypeObject
from cpython.ref cimport Py_INCREF, PyObject
from libc.stdint cimport int64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy

cimport numpy as cnp

cnp.import_array()

cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object, Py_ssize_t*)
    void PyErr_Clear()

cdef extern from "numpy/arrayobject.h":
    # (steals a reference to the dtype)
    object PyArray_NewFromDescr(PyTypeObject*, cnp.PyArray_Descr*, int, cnp.npy_intp*,
                                cnp.npy_intp*, void*, int, PyObject*)

cdef enum:
    _ALIGN = 16  # flowgraph.distributed.wire.ALIGN

cdef PyTypeObject* _ARRAY = <PyTypeObject*>cnp.ndarray


cdef inline Py_ssize_t _padded(Py_ssize_t nbytes) noexcept:
    return nbytes + (_ALIGN - nbytes % _ALIGN) % _ALIGN


cdef object _plain_dtype(object value, bint bfloat16, int* nd):
    """The dtype of a value `signature` takes (its dimensions in `nd`), else None."""
    cdef cnp.dtype descr
    if type(value) is cnp.ndarray:
        if not cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>value):
            return None
        descr = <cnp.dtype>cnp.PyArray_DESCR(<cnp.ndarray>value)
        nd[0] = cnp.PyArray_NDIM(<cnp.ndarray>value)
    elif isinstance(value, cnp.generic):  # a NumPy scalar: its own buffer
        descr = cnp.PyArray_DescrFromScalar(value)
        nd[0] = 0
    else:
        return None
    if descr.kind not in b"biufc" or (
            bfloat16 and descr.kind == b"f" and descr.itemsize == 4):
        return None
    return descr


def signature(dict tensors, bint bfloat16):
    """The layout key of `tensors`, or None when one of them needs `wire`'s general
    path (see the module docstring)."""
    cdef Py_ssize_t n = 0, pos = 0, length
    cdef PyObject* name
    cdef PyObject* value
    cdef cnp.dtype descr
    cdef const char* text
    cdef int nd = 0, i
    cdef int64_t field
    cdef char* key
    while PyDict_Next(tensors, &pos, &name, &value):  # the key's size; refusals
        if type(<object>name) is not str:
            return None
        if _plain_dtype(<object>value, bfloat16, &nd) is None:
            return None
        text = PyUnicode_AsUTF8AndSize(<object>name, &length)
        if text == NULL:  # (a name with lone surrogates: the general path says so)
            PyErr_Clear()
            return None
        n += 8 + length + 4 + 8 * nd
    out = PyBytes_FromStringAndSize(NULL, n)
    key = PyBytes_AS_STRING(out)
    n = pos = 0
    while PyDict_Next(tensors, &pos, &name, &value):
        descr = _plain_dtype(<object>value, bfloat16, &nd)
        text = PyUnicode_AsUTF8AndSize(<object>name, &length)
        field = length
        memcpy(key + n, &field, 8)
        memcpy(key + n + 8, text, length)
        n += 8 + length
        key[n] = descr.kind
        key[n + 1] = descr.byteorder
        key[n + 2] = <char>descr.itemsize  # (numeric items are at most 16 bytes)
        key[n + 3] = <char>nd
        n += 4
        for i in range(nd):
            field = cnp.PyArray_DIMS(<cnp.ndarray>value)[i]
            memcpy(key + n, &field, 8)
            n += 8
    return out


cdef class Views:
    """The arrays of one tensor table of numeric, non-empty tensors: `layout` is
    `wire`'s parsed table, ``[(name, dtype, shape, count, nbytes)]``."""

    cdef list names
    cdef list dtypes
    cdef int count
    cdef int* nds
    cdef cnp.npy_intp* dims  # every tensor's shape, one after the other
    cdef Py_ssize_t* nbytes
    cdef Py_ssize_t total  # the buffers and their padding

    def __cinit__(self, list layout):
        cdef int i, k, at = 0, dims = 0
        self.count = len(layout)
        for item in layout:
            dims += len(item[2])
        self.nds = <int*>malloc(max(self.count, 1) * sizeof(int))
        self.dims = <cnp.npy_intp*>malloc(max(dims, 1) * sizeof(cnp.npy_intp))
        self.nbytes = <Py_ssize_t*>malloc(max(self.count, 1) * sizeof(Py_ssize_t))
        if self.nds == NULL or self.dims == NULL or self.nbytes == NULL:
            raise MemoryError()
        self.names, self.dtypes, self.total = [], [], 0
        for i, (name, dtype, shape, count, nbytes) in enumerate(layout):
            if not isinstance(dtype, cnp.dtype) or not count:
                raise ValueError("Views: numeric, non-empty tensors only")
            self.names.append(name)
            self.dtypes.append(dtype)
            self.nds[i] = len(shape)
            for k in range(len(shape)):
                self.dims[at] = shape[k]
                at += 1
            self.nbytes[i] = nbytes
            self.total += _padded(nbytes)

    def __dealloc__(self):
        free(self.nds)
        free(self.dims)
        free(self.nbytes)

    def arrays(self, object buffer, Py_ssize_t pos):
        """``{name: array}`` viewing `buffer` (bytes-like) from offset `pos`, or None
        when the tensors do not end exactly where `buffer` does."""
        cdef Py_buffer view
        cdef dict out = {}
        cdef int i, at = 0, flags
        cdef char* data
        cdef object dtype
        PyObject_GetBuffer(buffer, &view, PyBUF_SIMPLE)
        try:
            if pos < 0 or pos + self.total != view.len:
                return None
            data = <char*>view.buf
            flags = 0 if view.readonly else cnp.NPY_ARRAY_WRITEABLE
            for i in range(self.count):
                dtype = self.dtypes[i]
                Py_INCREF(dtype)
                arr = PyArray_NewFromDescr(_ARRAY, <cnp.PyArray_Descr*>dtype, self.nds[i],
                                           self.dims + at, NULL, data + pos, flags, NULL)
                cnp.set_array_base(arr, buffer)
                out[self.names[i]] = arr
                at += self.nds[i]
                pos += _padded(self.nbytes[i])
        finally:
            PyBuffer_Release(&view)
        return out
