"""CPU kernels for gradient accumulators (`tf.ConditionalAccumulator`,
`tf.SparseConditionalAccumulator`).

State it keeps
--------------
An accumulator lives in the session's resource container under ``(container,
shared_name)``, like a queue. It holds a global step (starting at 0), the sum of the
gradients applied since the last take and their count, and a FIFO list of blocked
takes, all changed under one lock::

    apply(g1, step 0) ─┐
    apply(g2, step 0) ─┼─> sum, count = 2 ──> take(2) gets (g1 + g2) / 2, step -> 1
    apply(g0, step -1) ┘   (stale: dropped)

Invariants
----------
* A gradient whose ``local_step`` is below the global step is dropped silently.
* A take completes once ``count >= num_required``; it returns the mean (or the sum with
  ``reduction_type='SUM'``), resets the sum and count, and increments the global step.
* A blocked take gives up on its step's deadline or cancellation (like a queue's
  dequeue: `flowgraph/backends/cpu/kernels_data_flow.py`), leaving the sum untouched.
"""

from __future__ import annotations

import threading

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.backends.cpu.kernels_data_flow import (
    QueueBase,
    _step_failed,
    _timeout_ms,
    abandon_pending,
    park_waiter,
)
from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors


def _shape_list(shape) -> list | None:
    if shape is None:
        return None
    if hasattr(shape, "as_list"):
        dims = None if shape.ndims is None else shape.as_list()
    else:
        dims = shape
    return None if dims is None else [None if d is None or d < 0 else int(d) for d in dims]


def _compatible(want: list | None, got: tuple) -> bool:
    return want is None or (len(want) == len(got)
                            and all(w is None or w == g for w, g in zip(want, got)))


class _Take:
    __slots__ = ("done", "pending", "step", "timer", "want")

    def __init__(self, step, done, want: int) -> None:
        self.step, self.done, self.want = step, done, want
        self.pending = True
        self.timer = None


class Accumulator:
    """A dense accumulator: the running sum of applied gradients and its count."""

    kind = "ConditionalAccumulator"

    def __init__(self, name: str, dtype, shape, reduction_type: str) -> None:
        self.name = name
        self.dtype = _dtypes.as_dtype(dtype).base_dtype
        self.grad_shape = _shape_list(shape)
        self.reduction = reduction_type or "MEAN"
        self.global_step = 0
        self.count = 0
        self.lock = threading.Lock()
        self._takes: list[_Take] = []
        self._reset()

    def describe(self) -> str:
        return f"{self.kind} '{self.name}'"

    def signature(self):
        return (type(self), self.dtype, self.grad_shape, self.reduction)

    def _reset(self) -> None:
        self.sum = None

    # -- applying -----------------------------------------------------------------------
    def _check(self, shape: tuple) -> None:
        want = self.grad_shape
        if self.sum is not None and hasattr(self.sum, "shape"):
            want = list(self.sum.shape)
        if not _compatible(want, shape):
            raise errors.InvalidArgumentError(
                None, None, f"Shape mismatch applying a gradient to {self.describe()}: "
                f"expected shape {want}, got {list(shape)}. Every gradient must have the "
                "accumulator's shape")

    def apply(self, local_step: int, grad) -> None:
        grad = np.asarray(grad, dtype=self.dtype.as_numpy_dtype)
        with self.lock:
            self._check(grad.shape)
            if int(local_step) < self.global_step:
                return  # a stale gradient
            self.sum = grad.copy() if self.sum is None else self.sum + grad
            self.count += 1
            fired = self._pump()
        self._fire(fired)

    # -- taking -------------------------------------------------------------------------
    def _result(self):
        total = self.sum
        if self.reduction == "MEAN":
            total = (total / self.count).astype(total.dtype)
        return total

    def _pump(self) -> list:
        fired = []
        while self._takes:
            w = self._takes[0]
            if _step_failed(w.step):
                self._takes.pop(0)
                fired.append(self._finish(w, None, errors.CancelledError(
                    None, None, f"Take from {self.describe()} was cancelled")))
                continue
            if self.count < w.want:
                break
            self._takes.pop(0)
            value = self._result()
            self._reset()
            self.count = 0
            self.global_step += 1
            fired.append(self._finish(w, value, None))
        return fired

    @staticmethod
    def _finish(w: _Take, value, error):
        w.pending = False
        if w.timer is not None:
            w.timer.cancel()
        return w.done, value, error

    _fire = staticmethod(QueueBase._fire)  # completes waiters outside the lock, as queues

    def _abandon(self, w: _Take, error) -> None:
        abandon_pending(self.lock, self._takes, w, error)

    def take(self, step, done, num_required) -> None:
        n = int(num_required)
        if n < 1:
            raise errors.InvalidArgumentError(
                None, None, f"Argument num_required must be positive, but was {n} (taking "
                f"from {self.describe()})")
        w = _Take(step, done, n)
        with self.lock:
            self._takes.append(w)
            fired = self._pump()
        self._fire(fired)
        if w.pending:
            self._wait(step, w)

    def _wait(self, step, w: _Take) -> None:
        timeout_ms = _timeout_ms(step)
        park_waiter(self, step, w, timeout_ms,
                    f"Timed out after {timeout_ms} ms waiting to take {w.want} gradients "
                    f"from {self.describe()} (RunOptions.timeout_in_ms)", lambda: w.pending)

    def num_accumulated(self) -> int:
        with self.lock:
            return self.count

    def set_global_step(self, step) -> None:
        with self.lock:
            self.global_step = int(step)

    def close_resource(self) -> None:
        """The container is being cleared (Session.reset): fail every blocked take."""
        with self.lock:
            takes, self._takes = self._takes, []
            fired = [self._finish(w, None, errors.CancelledError(
                None, None, f"{self.describe()} was destroyed (Session.reset).")) for w in takes]
        self._fire(fired)


class SparseAccumulator(Accumulator):
    """Accumulates ``(indices, values, shape)`` gradients row by row; the mean divides
    each row by the number of gradients that had it."""

    kind = "SparseConditionalAccumulator"

    def _reset(self) -> None:
        self.sum = None  # unused; rows hold the sums
        self.rows: dict[int, list] = {}
        self.row_shape = None
        self.dense_shape = None

    def apply_sparse(self, local_step: int, indices, values, shape) -> None:
        indices = np.asarray(indices, dtype=np.int64).reshape(-1)
        values = np.asarray(values, dtype=self.dtype.as_numpy_dtype)
        shape = None if shape is None else np.asarray(shape, dtype=np.int64).reshape(-1)
        where = f"applying a sparse gradient to {self.describe()}"
        if values.ndim == 0 or values.shape[0] != indices.shape[0]:
            raise errors.InvalidArgumentError(
                None, None, f"Shape mismatch {where}: {indices.shape[0]} indices but values "
                f"of shape {list(values.shape)}; values need one row per index")
        full = tuple(shape.tolist()) if shape is not None else None
        with self.lock:
            if full is not None and not _compatible(self.grad_shape, full):
                raise errors.InvalidArgumentError(
                    None, None, f"Shape mismatch {where}: expected shape {self.grad_shape}, got "
                    f"{list(full)}")
            row = tuple(values.shape[1:])
            if self.grad_shape is not None and not _compatible(self.grad_shape[1:], row):
                raise errors.InvalidArgumentError(
                    None, None, f"Shape mismatch {where}: expected rows of shape "
                    f"{self.grad_shape[1:]}, got {list(row)}")
            if self.row_shape is not None and row != self.row_shape:
                raise errors.InvalidArgumentError(
                    None, None, f"Shape mismatch {where}: the accumulated rows have shape "
                    f"{list(self.row_shape)}, got {list(row)}")
            if int(local_step) < self.global_step:
                return
            self.row_shape = row
            if full is not None:
                self.dense_shape = full
            for k, i in enumerate(indices.tolist()):
                slot = self.rows.get(i)
                if slot is None:
                    self.rows[i] = [values[k].copy(), 1]
                else:
                    slot[0] = slot[0] + values[k]
                    slot[1] += 1
            self.count += 1
            fired = self._pump()
        self._fire(fired)

    def _result(self):
        order = list(self.rows)  # first-arrival order, as TensorFlow returns them
        npd = self.dtype.as_numpy_dtype
        if order:
            vals = [self.rows[i][0] / self.rows[i][1] if self.reduction == "MEAN"
                    else self.rows[i][0] for i in order]
            values = np.stack(vals).astype(npd)
        else:
            values = np.zeros((0, *(self.row_shape or ())), dtype=npd)
        if self.dense_shape is not None:
            shape = np.asarray(self.dense_shape, dtype=np.int64)
        elif self.grad_shape is not None and None not in self.grad_shape:
            shape = np.asarray(self.grad_shape, dtype=np.int64)
        else:
            shape = np.asarray([-1, *values.shape[1:]], dtype=np.int64)
        return np.asarray(order, dtype=np.int64), values, shape


# -- accumulator-creating ops ------------------------------------------------------------
class _AccumulatorOp:
    """Looks the accumulator up (creating it on first use) in the session's container."""

    factory = Accumulator

    def __init__(self, ctx, **attrs) -> None:
        self.resources = ctx.resources
        self.container = attrs.get("container", "") or ""
        self.name = attrs.get("shared_name", "") or ctx.op.name
        self.attrs = attrs

    def _make(self, name: str):
        a = self.attrs
        return self.factory(name, a["dtype"], a.get("shape"), a.get("reduction_type", "MEAN"))

    def __call__(self):
        dtype = _dtypes.as_dtype(self.attrs["dtype"]).base_dtype
        if dtype not in (_dtypes.float16, _dtypes.float32, _dtypes.float64):
            raise errors.InvalidArgumentError(
                None, None, f"No kernel for accumulator '{self.name}' of dtype {dtype.name}: "
                "accumulators hold float16, float32 or float64 gradients; cast them first")
        acc = self.resources.lookup_or_create(self.container, self.name, self._make)
        want = self._make(self.name)
        if not isinstance(acc, Accumulator) or acc.signature() != want.signature():
            have = acc.describe() if isinstance(acc, Accumulator) else type(acc).__name__
            raise errors.InvalidArgumentError(
                None, None, f"Shared accumulator '{self.name}' already exists as {have} "
                f"({getattr(acc, 'signature', lambda: '')()}), but this op requests a "
                f"{want.kind} of {want.dtype.name}, shape {want.grad_shape}, reduction "
                f"{want.reduction}; use another shared_name")
        return acc


class ConditionalAccumulatorOp(_AccumulatorOp):
    factory = Accumulator


class SparseConditionalAccumulatorOp(_AccumulatorOp):
    factory = SparseAccumulator


def accumulator_apply_gradient(acc, local_step, gradient, **_):
    acc.apply(local_step, gradient)


def sparse_accumulator_apply_gradient(acc, local_step, indices, values, shape, *,
                                      has_known_shape=False, **_):
    acc.apply_sparse(local_step, indices, values, shape if has_known_shape else None)


def accumulator_take_gradient(step, done, acc, num_required, **_):
    acc.take(step, done, num_required)


def accumulator_num_accumulated(acc):
    return np.asarray(acc.num_accumulated(), dtype=np.int32)


def accumulator_set_global_step(acc, new_global_step):
    acc.set_global_step(new_global_step)


# The dense accumulator's resource op types; the sparse one's string-handle ops.
cpu_kernel("ResourceConditionalAccumulator")(ConditionalAccumulatorOp)
cpu_kernel("ResourceAccumulatorApplyGradient")(accumulator_apply_gradient)
cpu_kernel("ResourceAccumulatorTakeGradient", is_async=True)(accumulator_take_gradient)
for _prefix in ("Resource", ""):
    cpu_kernel(f"{_prefix}AccumulatorNumAccumulated")(accumulator_num_accumulated)
    cpu_kernel(f"{_prefix}AccumulatorSetGlobalStep")(accumulator_set_global_step)
cpu_kernel("SparseConditionalAccumulator")(SparseConditionalAccumulatorOp)
cpu_kernel("SparseAccumulatorApplyGradient")(sparse_accumulator_apply_gradient)
cpu_kernel("SparseAccumulatorTakeGradient", is_async=True)(accumulator_take_gradient)
