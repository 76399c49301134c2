"""CPU kernels of `flowgraph/ops/string_ngram_ops.py` (``StringNGrams``,
``UnsortedSegmentJoin``) and of ``UnicodeScript`` (`flowgraph/ops/string_script_ops.py`,
codes from `flowgraph/ops/string_script_table.py`)."""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import errors


def _b(v) -> bytes:
    return v if isinstance(v, bytes) else str(v).encode("utf-8")


def _row_ngrams(tokens: list, widths, sep: bytes, left: bytes, right: bytes,
                pad_width: int, preserve: bool) -> list:
    out = []
    for w in widths:
        pad = min(pad_width if pad_width >= 0 else w - 1, w - 1)
        padded = [left] * pad + tokens + [right] * pad
        count = len(padded) - w + 1
        if count > 0:
            out.extend(sep.join(padded[i:i + w]) for i in range(count))
        elif preserve and tokens:
            out.append(sep.join(padded))
    return out


@cpu_kernel("StringNGrams")
def string_ngrams(data, splits, *, separator, ngram_widths, left_pad, right_pad, pad_width,
                  preserve_short_sequences, op, **_):
    splits = np.asarray(splits)
    n = data.shape[0]
    if splits.size and (splits[0] != 0 or splits[-1] != n or np.any(np.diff(splits) < 0)):
        raise errors.InvalidArgumentError(
            None, None, f"StringNGrams '{op.name}': data_splits must start at 0, ascend and "
            f"end at the number of tokens ({n}), got {splits.tolist()}")
    tokens = [_b(t) for t in data.reshape(-1).tolist()]
    sep, left, right = _b(separator), _b(left_pad), _b(right_pad)
    grams, out_splits = [], [0]
    for i in range(max(len(splits) - 1, 0)):
        grams.extend(_row_ngrams(tokens[splits[i]:splits[i + 1]], list(ngram_widths), sep,
                                 left, right, int(pad_width), bool(preserve_short_sequences)))
        out_splits.append(len(grams))
    values = np.empty(len(grams), dtype=object)
    values[:] = grams
    return [values, np.asarray(out_splits if splits.size else [], dtype=splits.dtype)]


@cpu_kernel("UnsortedSegmentJoin", fresh=True)
def unsorted_segment_join(inputs, segment_ids, num_segments, *, separator, op, **_):
    ids = np.asarray(segment_ids)
    n = int(num_segments)
    if inputs.shape[:ids.ndim] != ids.shape:
        raise errors.InvalidArgumentError(
            None, None, f"UnsortedSegmentJoin '{op.name}': segment_ids shape {ids.shape} must "
            f"be a prefix of the inputs' shape {inputs.shape}")
    bad = ids[(ids < 0) | (ids >= n)]
    if bad.size:
        raise errors.InvalidArgumentError(
            None, None, f"UnsortedSegmentJoin '{op.name}': segment_ids must be in "
            f"[0, num_segments = {n}), found {int(bad.reshape(-1)[0])}")
    inner = inputs.shape[ids.ndim:]
    rows = inputs.reshape((ids.size, *inner)).reshape(ids.size, -1)
    parts: list[list[list[bytes]]] = [[[] for _ in range(rows.shape[1])] for _ in range(n)]
    for r, seg in enumerate(ids.reshape(-1).tolist()):
        for j, v in enumerate(rows[r].tolist()):
            parts[seg][j].append(_b(v))
    sep = _b(separator)
    out = np.empty((n, rows.shape[1]), dtype=object)
    for s in range(n):
        for j in range(rows.shape[1]):
            out[s, j] = sep.join(parts[s][j])
    return out.reshape((n, *inner))


@cpu_kernel("UnicodeScript", fresh=True)
def unicode_script(x):
    from flowgraph.ops.string_script_table import script_runs

    starts, codes = script_runs()
    x = np.asarray(x)
    valid = (x >= 0) & (x <= 0x10FFFF)
    where = np.searchsorted(starts, np.where(valid, x, 0), side="right") - 1
    return np.where(valid, codes[where], -1).astype(np.int32)
