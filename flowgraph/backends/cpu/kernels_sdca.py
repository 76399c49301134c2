"""CPU kernels of `flowgraph/ops/sdca_ops.py`."""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.backends.cpu._fingerprint128 import fingerprint128


@cpu_kernel("SdcaFprint", fresh=True)
def sdca_fprint(values):
    flat = np.asarray(values, dtype=object).reshape(-1)
    out = np.empty((flat.size, 2), np.uint64)
    for i, v in enumerate(flat):
        out[i] = fingerprint128(v if isinstance(v, bytes) else str(v).encode())
    return out.view(np.int64)


@cpu_kernel("SdcaShrinkL1")
def sdca_shrink_l1(*weights, l1, l2, op):
    with np.errstate(divide="ignore", invalid="ignore"):
        shrinkage = np.float32(l1) / np.float32(l2)
    for ref in weights:
        with ref.lock:
            w = ref.read(op.name)
            ref.value = (np.sign(w) * np.maximum(np.abs(w) - shrinkage, np.float32(0))
                         ).astype(w.dtype)


# -- SdcaOptimizer -----------------------------------------------------------------------
_NEWTON_STEPS = 10
_SMOOTH_GAMMA = 1.0


def _invalid(message: str):
    from flowgraph.framework import errors

    return errors.InvalidArgumentError(None, None, message)


def _convert_label(loss: str, label: float) -> float:
    if loss in ("logistic_loss", "hinge_loss", "smooth_hinge_loss"):
        if label == 0.0:
            return -1.0
        if label != 1.0:
            raise _invalid(f"SdcaOptimizer: only labels of 0.0 or 1.0 are supported for "
                           f"{loss}; found an example with label {label}")
    return label


def _updated_dual(loss, parts, y, w, dual, wx, norm) -> float:
    c = parts * norm * w
    if loss == "squared_loss":
        return dual + (y - dual - wx) / (1.0 + c)
    if loss == "logistic_loss":
        x = 0.0
        for _ in range(_NEWTON_STEPS):
            t = np.tanh(x)
            num = -2.0 * y * x - wx - c * (0.5 * (1.0 + t) / y - dual)
            den = -2.0 * y - c * (1.0 - t * t) * 0.5 / y
            x -= num / den
        return 0.5 * (1.0 + np.tanh(x)) / y
    if loss == "hinge_loss":
        candidate = dual + (y - wx) / c
        if y * candidate < 0:
            return 0.0
        if y * candidate > 1.0:
            return y
        return candidate
    if loss == "smooth_hinge_loss":
        candidate = dual + (y - wx - _SMOOTH_GAMMA * dual) / (c + _SMOOTH_GAMMA)
        return y * min(max(y * candidate, 0.0), 1.0)
    # poisson: (y - a) = exp(x); solve x - wx - c * (y - exp(x) - dual) = 0
    x = np.log(max(y - dual, 1e-12)) if y - dual > 0 else 0.0
    for _ in range(_NEWTON_STEPS):
        f = x - wx - c * (y - np.exp(x) - dual)
        x -= f / (1.0 + c * np.exp(x))
    return y - np.exp(x)


def _primal_loss(loss, wx, y, w) -> float:
    if loss == "squared_loss":
        return 0.5 * (wx - y) ** 2 * w
    if loss == "logistic_loss":
        ywx = y * wx
        return (np.log1p(np.exp(-ywx)) if ywx > 0 else np.log1p(np.exp(ywx)) - ywx) * w
    if loss == "hinge_loss":
        return max(0.0, 1.0 - y * wx) * w
    if loss == "smooth_hinge_loss":
        ywx = y * wx
        if ywx >= 1.0:
            return 0.0
        if ywx <= 1.0 - _SMOOTH_GAMMA:
            return (1.0 - ywx - _SMOOTH_GAMMA / 2.0) * w
        return (1.0 - ywx) ** 2 * w * 0.5 / _SMOOTH_GAMMA
    return (np.exp(wx) - y * wx) * w


def _dual_loss(loss, dual, y, w) -> float:
    if loss == "squared_loss":
        return (0.5 * dual - y) * dual * w
    if loss == "logistic_loss":
        ya = y * dual
        if ya <= 0 or ya >= 1:
            return 0.0
        return (ya * np.log(ya) + (1 - ya) * np.log(1 - ya)) * w
    if loss == "hinge_loss":
        return -y * dual * w
    if loss == "smooth_hinge_loss":
        return (-y * dual + 0.5 * _SMOOTH_GAMMA * dual * dual) * w
    rest = y - dual
    return rest * (np.log(rest) - 1.0) * w if rest > 0 else 0.0


def _shrink(w, shrinkage):
    return np.sign(w) * np.maximum(np.abs(w) - shrinkage, 0.0)


@cpu_kernel("SdcaOptimizer", fresh=True)
def sdca_optimizer(*inputs, loss_type, adaptative, num_sparse_features,
                   num_sparse_features_with_values, num_dense_features, l1, l2,
                   num_loss_partitions, num_inner_iterations):
    nsf, nsv, ndf = num_sparse_features, num_sparse_features_with_values, num_dense_features
    it = iter(inputs)
    ex_idx = [np.asarray(next(it), np.int64) for _ in range(nsf)]
    feat_idx = [np.asarray(next(it), np.int64) for _ in range(nsf)]
    feat_vals = [np.asarray(next(it), np.float64) for _ in range(nsv)]
    dense = [np.asarray(next(it), np.float64) for _ in range(ndf)]
    weights = np.asarray(next(it), np.float64).reshape(-1)
    labels = np.asarray(next(it), np.float64).reshape(-1)
    _ = [next(it) for _ in range(nsf)]  # the global ids of the sparse weights
    sparse_w = [np.asarray(next(it), np.float32).reshape(-1) for _ in range(nsf)]
    dense_w = [np.asarray(next(it), np.float32).reshape(-1) for _ in range(ndf)]
    given = np.asarray(next(it), np.float32)
    state = given.copy()
    n = state.shape[0]
    if weights.shape[0] != n or labels.shape[0] != n:
        raise _invalid(f"SdcaOptimizer: example_weights ({weights.shape[0]}) and "
                       f"example_labels ({labels.shape[0]}) need one entry per row of "
                       f"example_state_data ({n})")
    # each example's sparse entries, per group: (feature positions, values)
    per_example = [[(feat_idx[g][ex_idx[g] == i],
                     feat_vals[g][ex_idx[g] == i] if g < nsv else
                     np.ones(int((ex_idx[g] == i).sum())))
                    for g in range(nsf)] for i in range(n)]
    for g in range(nsf):
        if feat_idx[g].size and (feat_idx[g].min() < 0 or
                                 feat_idx[g].max() >= sparse_w[g].shape[0]):
            raise _invalid(f"SdcaOptimizer: sparse feature indices of group {g} must be in "
                           f"[0, {sparse_w[g].shape[0]})")
    sparse_d = [np.zeros_like(w) for w in sparse_w]
    dense_d = [np.zeros_like(w) for w in dense_w]
    shrinkage = l1 / l2 if l2 else np.inf
    sq_norm = np.array([sum(float(np.sum(v * v)) for _, v in per_example[i])
                        + sum(float(np.sum(d[i] * d[i])) for d in dense) for i in range(n)])
    norms = sq_norm / l2 if l2 else np.full(n, np.inf)
    # TensorFlow starts every inner iteration again from the given duals and zero deltas
    # (only its random visiting order changes between them): in order, one pass is all.
    for _ in range(min(num_inner_iterations, 1)):
        for i in range(n):
            w, y = float(weights[i]), _convert_label(loss_type, float(labels[i]))
            dual = float(given[i, 0])  # every pass starts from the given duals
            prev_wx = wx = 0.0
            for g, (pos, vals) in enumerate(per_example[i]):
                nominal = sparse_w[g][pos].astype(np.float64)
                full = nominal + sparse_d[g][pos].astype(np.float64) * num_loss_partitions
                prev_wx += float(np.sum(vals * _shrink(nominal, shrinkage)))
                wx += float(np.sum(vals * _shrink(full, shrinkage)))
            for g, rows in enumerate(dense):
                nominal = dense_w[g].astype(np.float64)
                full = nominal + dense_d[g].astype(np.float64) * num_loss_partitions
                prev_wx += float(np.sum(rows[i] * _shrink(nominal, shrinkage)))
                wx += float(np.sum(rows[i] * _shrink(full, shrinkage)))
            new_dual = _updated_dual(loss_type, num_loss_partitions, y, w, dual, wx, norms[i])
            delta = (new_dual - dual) * w / l2
            for g, (pos, vals) in enumerate(per_example[i]):
                np.add.at(sparse_d[g], pos, (vals * delta).astype(np.float32))
            for g, rows in enumerate(dense):
                dense_d[g] += (rows[i] * delta).astype(np.float32)
            state[i] = [new_dual, _primal_loss(loss_type, prev_wx, y, w),
                        _dual_loss(loss_type, dual, y, w), w]
    return (state, *sparse_d, *dense_d)
