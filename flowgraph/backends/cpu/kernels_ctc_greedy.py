"""CPU kernel of ``CTCGreedyDecoder`` (`flowgraph/ops/ctc_decode_ops.py`): best-path
decoding. Per sequence, the most likely class of each step is emitted unless it is the
blank or (with `merge_repeated`) the same as the previous step's class; the log
probability is minus the sum of each step's largest logit.
"""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import errors


@cpu_kernel("CTCGreedyDecoder")
def ctc_greedy_decoder(inputs, sequence_length, *, merge_repeated, blank_index, op):
    max_time, batch, num_classes = inputs.shape
    lengths = np.asarray(sequence_length).reshape(-1)
    if lengths.size != batch:
        raise errors.InvalidArgumentError(
            None, None, f"CTCGreedyDecoder '{op.name}': len(sequence_length) != batch_size. "
            f"len(sequence_length): {lengths.size} batch_size: {batch}")
    for b, n in enumerate(lengths.tolist()):
        if not 0 <= n <= max_time:   # TF's status for a sequence longer than the input
            raise errors.FailedPreconditionError(
                None, None, f"CTCGreedyDecoder '{op.name}': sequence_length({b}) <= "
                f"{max_time}, got {n}")
    blank = blank_index + num_classes if blank_index < 0 else blank_index
    if not 0 <= blank < num_classes:
        raise errors.InvalidArgumentError(
            None, None, f"CTCGreedyDecoder '{op.name}': blank_index must be in "
            f"[{-num_classes}, {num_classes}), got {blank_index}")
    best = np.argmax(inputs, axis=2)
    top = np.max(inputs, axis=2)
    indices, values = [], []
    log_prob = np.zeros((batch, 1), inputs.dtype)
    longest = 0
    for b in range(batch):
        n = int(lengths[b])
        log_prob[b, 0] = -top[:n, b].sum()
        prev, k = -1, 0
        for t in range(n):
            c = int(best[t, b])
            if c != blank and not (merge_repeated and c == prev):
                indices.append((b, k))
                values.append(c)
                k += 1
            prev = c
        longest = max(longest, k)
    return (np.asarray(indices, np.int64).reshape(-1, 2), np.asarray(values, np.int64),
            np.asarray([batch, longest], np.int64), log_prob)
