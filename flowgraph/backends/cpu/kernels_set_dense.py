"""CPU kernels of ``DenseToDenseSetOperation`` and ``DenseToSparseSetOperation``
(`flowgraph/ops/set_ops.py`), the set-operation ops TensorFlow's graphs use when one or
both sets are dense (a canned estimator's evaluation metrics, ``tf.sets.*`` of dense
tensors): every entry along a dense input's last axis is a set element, and the work is
the sparse kernel's on the dense inputs' (indices, values, shape) triples."""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.backends.cpu.kernels_set import set_operation as _sparse_set_operation
from flowgraph.framework import errors


def _as_sparse(dense):
    dense = np.asarray(dense)
    if dense.ndim < 2:
        raise ValueError(f"a dense set input must have rank >= 2, got shape {dense.shape}")
    indices = np.argwhere(np.ones(dense.shape, bool)).astype(np.int64)
    return indices, dense.reshape(-1), np.asarray(dense.shape, np.int64)


def _name(v) -> str:
    return v.decode() if isinstance(v, bytes) else v


def _run(a, b, set_operation, validate_indices, op):
    return _sparse_set_operation(*a, *b, set_operation=_name(set_operation),
                                 validate_indices=validate_indices, op=op)


@cpu_kernel("DenseToDenseSetOperation")
def dense_to_dense(set1, set2, *, set_operation, validate_indices, op, **_):
    return _run(_as_sparse_checked(set1, op), _as_sparse_checked(set2, op), set_operation,
                validate_indices, op)


@cpu_kernel("DenseToSparseSetOperation")
def dense_to_sparse(set1, indices2, values2, shape2, *, set_operation, validate_indices, op,
                    **_):
    return _run(_as_sparse_checked(set1, op), (indices2, values2, shape2), set_operation,
                validate_indices, op)


def _as_sparse_checked(dense, op):
    try:
        return _as_sparse(dense)
    except ValueError as e:
        raise errors.InvalidArgumentError(None, None, f"{op.type} '{op.name}': {e}") from None
