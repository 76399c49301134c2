"""CPU kernel of ``CTCBeamSearchDecoder`` (`flowgraph/ops/ctc_decode_ops.py`): prefix
beam search in log space, per batch entry.

Each prefix keeps two log-probabilities, of paths ending in a blank and ending in its last
label; extending by the same label as the last one only continues from the blank-ending
paths (CTC's rule that repeats need a blank between them).
"""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import errors

_NEG = -np.inf


def _logsumexp(a, b):
    if a == _NEG:
        return b
    if b == _NEG:
        return a
    m = max(a, b)
    return m + np.log1p(np.exp(-abs(a - b)))


def _beam_search(logp, beam_width):
    """The beams after all steps: {prefix: (log p ending in blank, ending in label)}."""
    blank = logp.shape[1] - 1
    beams = {(): (0.0, _NEG)}
    for step in logp:
        nxt: dict = {}
        for prefix, (pb, pnb) in beams.items():
            total = _logsumexp(pb, pnb)
            b, nb = nxt.get(prefix, (_NEG, _NEG))
            nxt[prefix] = (_logsumexp(b, total + step[blank]), nb)
            for c in range(blank):
                p = step[c]
                if prefix and prefix[-1] == c:
                    b, nb = nxt[prefix]
                    nxt[prefix] = (b, _logsumexp(nb, pnb + p))  # repeat collapses
                    extended = (*prefix, c)
                    b2, nb2 = nxt.get(extended, (_NEG, _NEG))
                    nxt[extended] = (b2, _logsumexp(nb2, pb + p))
                else:
                    extended = (*prefix, c)
                    b2, nb2 = nxt.get(extended, (_NEG, _NEG))
                    nxt[extended] = (b2, _logsumexp(nb2, total + p))
        ranked = sorted(nxt.items(), key=lambda kv: -_logsumexp(*kv[1]))
        beams = dict(ranked[:beam_width])
    return sorted(beams.items(), key=lambda kv: -_logsumexp(*kv[1]))


def _merge(path):
    out = []
    for c in path:
        if not out or out[-1] != c:
            out.append(c)
    return tuple(out)


@cpu_kernel("CTCBeamSearchDecoder")
def ctc_beam_search_decoder(inputs, sequence_length, *, beam_width, top_paths,
                            merge_repeated, op):
    max_time, batch, _ = inputs.shape
    lengths = np.asarray(sequence_length).reshape(-1)
    if lengths.size != batch or np.any(lengths > max_time) or np.any(lengths < 0):
        raise errors.InvalidArgumentError(
            None, None, f"CTCBeamSearchDecoder '{op.name}': sequence_length must hold "
            f"{batch} values in [0, {max_time}], got {lengths.tolist()}")
    x = inputs.astype(np.float64)
    shifted = x - x.max(axis=2, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=2, keepdims=True))
    paths = [[] for _ in range(top_paths)]
    log_probs = np.full((batch, top_paths), _NEG)
    for b in range(batch):
        ranked = _beam_search(logp[:int(lengths[b]), b, :], beam_width)
        for k in range(min(top_paths, len(ranked))):
            prefix, scores = ranked[k]
            paths[k].append(_merge(prefix) if merge_repeated else prefix)
            log_probs[b, k] = _logsumexp(*scores)
        for k in range(len(ranked), top_paths):
            paths[k].append(())
    indices, values, shapes = [], [], []
    for k in range(top_paths):
        idx = [(b, t) for b, p in enumerate(paths[k]) for t in range(len(p))]
        vals = [c for p in paths[k] for c in p]
        indices.append(np.asarray(idx, np.int64).reshape(-1, 2))
        values.append(np.asarray(vals, np.int64))
        shapes.append(np.asarray([batch, max((len(p) for p in paths[k]), default=0)],
                                 np.int64))
    return [*indices, *values, *shapes, log_probs.astype(inputs.dtype)]
