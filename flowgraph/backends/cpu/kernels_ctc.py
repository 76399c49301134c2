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
        label = labels[b]
        if preprocess_collapse_repeated:
            label = [c for i, c in enumerate(label) if i == 0 or c != label[i - 1]]
        if any(c < 0 or c >= blank for c in label):
            raise errors.InvalidArgumentError(
                None, None, f"CTCLoss: labels of sequence {b} must be in [0, {blank}) (class "
                f"{blank} is the blank), got {label}")
        t = int(lengths[b])
        need = len(label) + sum(1 for i in range(1, len(label)) if label[i] == label[i - 1])
        if t < need or t == 0:
            if ignore_longer_outputs_than_inputs:
                continue
            raise errors.InvalidArgumentError(
                None, None, f"CTCLoss: not enough time for target transition sequence of "
                f"sequence {b} (sequence_length {t}, {len(label)} labels); pass "
                "ignore_longer_outputs_than_inputs=True to skip such sequences")
        loss[b], grad[:t, b] = _one(log_probs[:t, b], label, blank, ctc_merge_repeated)
    return loss.astype(inputs.dtype), grad.astype(inputs.dtype)
