"""CPU kernels for session tensor handles (`tf.get_session_handle` and friends).

State it keeps
--------------
One dict per session, ``handle string -> NumPy value``, held in a weak map keyed by the
session, so the values go when the session does. A handle reads
``"<op name>;<n>;<device>"`` with ``n`` counting the session's handles, as in
TensorFlow. ``GetSessionHandle`` returns a `TensorHandle` object inside a 0-d object
array: the session's fetch hands it to the caller as it is, and the string kernels
below accept it wherever a handle string is expected.
"""

from __future__ import annotations

import itertools
import threading
import weakref

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import errors
from flowgraph.ops.session_handle_ops import TensorHandle

_STORES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()
_DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"


class _Store(dict):
    def __init__(self) -> None:
        super().__init__()
        self.counter = itertools.count()


def _store(session) -> _Store:
    if session is None:
        raise errors.FailedPreconditionError(
            None, None, "Session tensor handles need a session; this kernel runs without one")
    with _LOCK:
        store = _STORES.get(session)
        if store is None:
            store = _STORES[session] = _Store()
        return store


def _handle_text(handle) -> str:
    h = handle.item() if isinstance(handle, np.ndarray) else handle
    if isinstance(h, TensorHandle):
        return h.handle
    return h.decode() if isinstance(h, bytes) else str(h)


@cpu_kernel("GetSessionHandle")
class GetSessionHandleOp:
    def __init__(self, ctx, **attrs) -> None:
        self.session = ctx.session
        self.op_name = ctx.op.name
        self.dtype = ctx.op.inputs[0].dtype.base_dtype

    def __call__(self, value):
        store = _store(self.session)
        handle = f"{self.op_name};{next(store.counter)};{_DEVICE}"
        store[handle] = np.array(value, copy=True)
        out = np.empty((), dtype=object)
        out[()] = TensorHandle(handle, self.dtype, self.session, store)
        return out


class _HandleUser:
    def __init__(self, ctx, **attrs) -> None:
        self.session = ctx.session
        self.op_name = ctx.op.name

    def _lookup(self, handle) -> tuple[_Store, str]:
        store = _store(self.session)
        text = _handle_text(handle)
        if text not in store:
            raise errors.InvalidArgumentError(
                None, None, f"{self.op_name}: the tensor for handle '{text}' is not in this "
                "session: it was deleted, or the handle belongs to another session or is "
                "not a handle (feed the string a fetched TensorHandle's .handle gives)")
        return store, text


@cpu_kernel("GetSessionTensor")
class GetSessionTensorOp(_HandleUser):
    def __call__(self, handle):
        store, text = self._lookup(handle)
        return store[text]


@cpu_kernel("DeleteSessionTensor")
class DeleteSessionTensorOp(_HandleUser):
    def __call__(self, handle):
        store, text = self._lookup(handle)
        store.pop(text, None)
