"""The CPU kernel of ``CTCLoss`` (ops/ctc_ops.py): forward-backward in log space."""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import errors

_NEG = -np.inf


def _logsumexp(*xs):
    stacked = np.stack(xs)
    top = np.max(stacked, axis=0)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return safe + np.log(np.sum(np.exp(stacked - safe), axis=0))


def _one(log_probs: np.ndarray, label: list[int], blank: int, merge: bool):
    """(loss, gradient wrt logits) of one sequence; `log_probs` is [T, classes]."""
    steps = log_probs.shape[0]
    ext = [blank]
    for c in label:
        ext += [c, blank]
    n = len(ext)
    ext = np.asarray(ext)
    # s may come from s - 2 when it is a label differing from the label two back (or, when
    # repeats are not merged, any label).
    skip = np.zeros(n, bool)
    for s in range(2, n):
        skip[s] = ext[s] != blank and (ext[s] != ext[s - 2] or not merge)
    # A label may repeat over frames (stay at s) only when repeats are merged; the blank
    # always may.
    stay = (ext == blank) | merge
    emit = log_probs[:, ext]  # [T, n]
    alpha = np.full((steps, n), _NEG)
    alpha[0, 0] = emit[0, 0]
    if n > 1:
        alpha[0, 1] = emit[0, 1]
    for t in range(1, steps):
        prev = alpha[t - 1]
        one = np.concatenate([[_NEG], prev[:-1]])
        two = np.where(skip, np.concatenate([[_NEG, _NEG], prev[:-2]]), _NEG)
        alpha[t] = emit[t] + _logsumexp(np.where(stay, prev, _NEG), one, two)
    beta = np.full((steps, n), _NEG)
    beta[-1, -1] = emit[-1, -1]
    if n > 1:
        beta[-1, -2] = emit[-1, -2]
    skip_next = np.concatenate([skip[2:], [False, False]])  # s + 2 may come from s
    for t in range(steps - 2, -1, -1):
        nxt = beta[t + 1]
        one = np.concatenate([nxt[1:], [_NEG]])
        two = np.where(skip_next, np.concatenate([nxt[2:], [_NEG, _NEG]]), _NEG)
        beta[t] = emit[t] + _logsumexp(np.where(stay, nxt, _NEG), one, two)
    ends = [alpha[-1, -1]] + ([alpha[-1, -2]] if n > 1 else [])
    log_p = _logsumexp(*ends)
    probs = np.exp(log_probs)
    occupancy = np.exp(alpha + beta - emit - log_p)  # [T, n]
    grad = probs.copy()
    for s in range(n):
        grad[:, ext[s]] -= occupancy[:, s]
    return -log_p, grad


def _only_nulls(log_probs: np.ndarray, label, blank: int, merge: bool):
    """(loss, gradient) of a sequence whose labels are all null, as TensorFlow computes
    them: its backward pass then starts from both of the last two frames (not only the
    last), so the all-blank path's probability ``prod y_blank`` has its last factor
    ``y`` replaced by ``1 + y``; the gradient follows from the same backward values."""
    probs = np.exp(log_probs)
    y_last = probs[-1, blank]
    if log_probs.shape[0] == 1:
        return -log_probs[0, blank], probs - np.eye(probs.shape[1])[blank]
    loss = -(log_probs[:-1, blank].sum() + np.log1p(y_last))
    grad = probs.copy()
    grad[:-1, blank] -= 1.0
    grad[-1, blank] -= y_last / (1.0 + y_last)
    return loss, grad


def _until_null(label: list[int], blank: int, b: int, classes: int) -> list[int]:
    """As TensorFlow: a label id >= the blank's is a "null" label, padding that ends the
    sequence; a real label after one is an error."""
    for i, c in enumerate(label):
        if c >= blank:
            if any(d < blank for d in label[i:]):
                raise errors.InvalidArgumentError(
                    None, None, f"CTCLoss: saw a label below the blank ({blank}) after a "
                    f"null label (>= {blank}) in sequence {b} ({classes} classes): labels "
                    f"{label}; null labels may only pad the end of a sequence")
            return label[:i]
    return label


@cpu_kernel("CTCLoss")
def ctc_loss(inputs, indices, values, lengths, *, preprocess_collapse_repeated,
             ctc_merge_repeated, ignore_longer_outputs_than_inputs, op=None):
    _, batch, classes = inputs.shape
    blank = classes - 1
    labels: list[list[int]] = [[] for _ in range(batch)]
    for (b, _), v in sorted(zip(map(tuple, indices.tolist()), values.tolist())):
        labels[b].append(int(v))
    x = inputs.astype(np.float64)
    shifted = x - x.max(axis=2, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=2, keepdims=True))
    loss = np.zeros(batch, np.float64)
    grad = np.zeros_like(x)
    for b in range(batch):
        if not labels[b]:
            raise errors.InvalidArgumentError(
                None, None, f"CTCLoss: labels length is zero in batch {b}: every sequence "
                "needs at least one label")
        label = _until_null(labels[b], blank, b, classes)
        if preprocess_collapse_repeated:
            label = [c for i, c in enumerate(label) if i == 0 or c != label[i - 1]]
        if any(c < 0 for c in label):
            raise errors.InvalidArgumentError(
                None, None, f"CTCLoss: labels of sequence {b} must be non-negative class "
                f"ids, got {label}")
        t = int(lengths[b])
        need = len(label) + sum(1 for i in range(1, len(label)) if label[i] == label[i - 1])
        if t < need or t == 0:
            if ignore_longer_outputs_than_inputs:
                continue
            raise errors.InvalidArgumentError(
                None, None, f"CTCLoss: not enough time for target transition sequence of "
                f"sequence {b} (sequence_length {t}, {len(label)} labels); pass "
                "ignore_longer_outputs_than_inputs=True to skip such sequences")
        one = _one if label else _only_nulls
        loss[b], grad[:t, b] = one(log_probs[:t, b], label, blank, ctc_merge_repeated)
    return loss.astype(inputs.dtype), grad.astype(inputs.dtype)
