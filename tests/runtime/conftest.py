"""Tiny test-only ops (type names start with ``Test``) for the runtime tests.

Each records its kernel invocations so tests can prove what ran:

- ``TestCount`` (pure): ``x + 1``; counted per op name.
- ``TestStateful`` (stateful): ``x + 1``; counted per op name.
- ``TestFail`` (stateful): raises ValueError when ``x`` has a negative element.
- ``TestSleep`` (stateful, expensive): sleeps ``seconds`` (releasing the GIL), returns x.
- ``TestBlock`` (stateful, needs the step): waits for an external Event or the step's
  cancellation, whichever comes first.
- ``TestAsyncNever`` (async): never completes.
- ``TestBig`` (stateful): a fresh float64 array of ``n`` elements (weakly recorded).
- ``TestProbe`` (stateful): records which recorded big arrays are still alive.
- ``TestSum`` (pure): the sum of all elements, shape ``[1]``.
"""

from __future__ import annotations

import threading
import time
import types
import weakref
from collections import Counter

import numpy as np
import pytest

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import errors
from flowgraph.framework.registry import OpCost, has_op_def, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.op_util import make_tensor

COUNTS: Counter = Counter()
BIG_REFS: list = []
PROBES: list = []
RELEASE = threading.Event()


def _same_shape(op, x):
    return [x]


if not has_op_def("TestCount"):
    register_op("TestCount")(_same_shape)
    register_op("TestStateful", stateful=True)(_same_shape)
    register_op("TestFail", stateful=True)(_same_shape)
    register_op("TestSleep", attrs={"seconds": 0.0}, stateful=True,
                cost=OpCost.EXPENSIVE)(_same_shape)
    register_op("TestBlock", stateful=True)(_same_shape)
    register_op("TestAsyncNever", stateful=True, cost=OpCost.ASYNC)(_same_shape)
    register_op("TestBig", attrs={"n": 1, "dtype": None}, stateful=True,
                )(lambda op: [TensorShape([op.attrs["n"]])])
    register_op("TestProbe", stateful=True)(_same_shape)
    register_op("TestSum")(lambda op, x: [TensorShape([1])])

    @cpu_kernel("TestSum")
    def _sum(x):
        return np.asarray([np.sum(x)], dtype=x.dtype)

    @cpu_kernel("TestCount")
    def _count(x, *, op):
        COUNTS[op.name] += 1
        return np.asarray(x + 1)

    @cpu_kernel("TestStateful")
    def _stateful(x, *, op):
        COUNTS[op.name] += 1
        return np.asarray(x + 1)

    @cpu_kernel("TestFail")
    def _fail(x):
        if np.any(x < 0):
            raise ValueError("TestFail got a negative value")
        return x

    @cpu_kernel("TestSleep")
    def _sleep(x, *, seconds):
        time.sleep(seconds)
        return x

    @cpu_kernel("TestBlock", needs_step=True)
    def _block(step, x):
        cancelled = step.cancellation_event()
        while not RELEASE.is_set():
            if cancelled.wait(0.005):
                raise errors.CancelledError(None, None, "TestBlock was cancelled")
        return x

    @cpu_kernel("TestAsyncNever", is_async=True)
    def _async_never(step, done, x):
        return None

    @cpu_kernel("TestBig")
    def _big(*, n):
        arr = np.ones(n, dtype=np.float64)
        BIG_REFS.append(weakref.ref(arr))
        return arr

    @cpu_kernel("TestProbe")
    def _probe(x):
        PROBES.append([r() is not None for r in BIG_REFS])
        return x


def _op(kind):
    def make(x, name=None, **attrs):
        return make_tensor(kind, [x], attrs=attrs, name=name)
    return make


@pytest.fixture
def testops():
    """Builders for the Test* ops plus their recorders (reset for each test)."""
    COUNTS.clear()
    BIG_REFS.clear()
    PROBES.clear()
    RELEASE.clear()
    ns = types.SimpleNamespace(
        count=_op("TestCount"), stateful=_op("TestStateful"), fail=_op("TestFail"),
        sleep=_op("TestSleep"), block=_op("TestBlock"), async_never=_op("TestAsyncNever"),
        probe=_op("TestProbe"), sum=_op("TestSum"),
        big=lambda n, name=None: make_tensor("TestBig", [], attrs={"n": n,
                                                                   "dtype": _float64()},
                                             name=name),
        counts=COUNTS, big_refs=BIG_REFS, probes=PROBES, release=RELEASE,
    )
    yield ns
    RELEASE.set()


def _float64():
    import flowgraph as tf

    return tf.float64
