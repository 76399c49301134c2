"""CPU kernel for ``NumpyBatchSource`` (`flowgraph/ops/input_ops.py`), the op behind
`tf.estimator.inputs.numpy_input_fn`.

The kernel is a class (one instance per session and op) holding a cursor over an
endless, or `num_epochs`-long, stream of row indices: one permutation per epoch when
shuffling, else ``0..n-1``. A call takes the next `batch_size` indices, crossing epoch
boundaries, and fancy-indexes every column; a sequential run of indices becomes a slice
(a view, no copy).
"""

from __future__ import annotations

import threading

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.backends.cpu.kernels_random import make_generator
from flowgraph.framework import errors
from flowgraph.ops.input_ops import lookup_arrays


@cpu_kernel("NumpyBatchSource")
class NumpyBatchSource:
    """Next batch of every column; OutOfRangeError once `num_epochs` are read."""

    def __init__(self, ctx, *, key, batch_size, num_epochs, shuffle, seed, seed2):
        arrays = lookup_arrays(key)
        if arrays is None:
            raise errors.FailedPreconditionError(
                None, None, f"NumpyBatchSource {ctx.op.name}: its arrays are gone (the graph "
                f"was serialized or rebuilt in another process); call the input_fn again.")
        self._arrays = arrays
        self._n = len(arrays[0])
        self._batch = batch_size
        self._epochs_left = None if num_epochs < 0 else num_epochs
        self._rng = make_generator(seed, seed2) if shuffle else None
        self._order = np.empty(0, np.int64)
        self._pos = 0
        self._lock = threading.Lock()

    def _next_indices(self) -> np.ndarray | None:
        parts, want = [], self._batch
        while want:
            if self._pos == len(self._order):
                if self._epochs_left == 0:
                    break
                if self._epochs_left is not None:
                    self._epochs_left -= 1
                self._order = (self._rng.permutation(self._n) if self._rng is not None
                               else np.arange(self._n))
                self._pos = 0
            take = self._order[self._pos:self._pos + want]
            self._pos += len(take)
            want -= len(take)
            parts.append(take)
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def __call__(self):
        with self._lock:
            idx = self._next_indices()
        if idx is None:
            raise errors.OutOfRangeError(None, None, "End of numpy input (all epochs read).")
        if self._rng is None and idx[-1] - idx[0] == len(idx) - 1:
            idx = slice(int(idx[0]), int(idx[-1]) + 1)
        out = tuple(a[idx] for a in self._arrays)
        return out if len(out) > 1 else out[0]
