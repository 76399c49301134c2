"""CPU kernels for the estimator heads' label ops (`flowgraph/ops/head_ops.py`):
vocabulary lookup in both directions and the run-time label/weight checks.

String tensors are object arrays whose items may be `bytes` (graph constants) or `str`
(fed values); both are accepted, and strings are always produced as `bytes`.
"""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework.errors import InvalidArgumentError


def _text(v) -> str:
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)


@cpu_kernel("LabelVocabLookup")
class LabelVocabLookup:
    """string labels -> int64 index in the vocabulary; unknown labels fail the step."""

    def __init__(self, ctx, *, vocabulary, head_name):
        self.vocabulary = list(vocabulary)
        self.index = {v: i for i, v in enumerate(self.vocabulary)}
        self.head_name = head_name

    def __call__(self, labels):
        flat = labels.reshape(-1)
        out = np.empty(flat.shape, dtype=np.int64)
        index = self.index
        for i, v in enumerate(flat):
            key = _text(v)
            found = index.get(key)
            if found is None:
                head = f"head '{self.head_name}'" if self.head_name else "the head"
                raise InvalidArgumentError(
                    None, None,
                    f"Label {key!r} (at flat position {i} of labels with shape "
                    f"{list(labels.shape)}) is not in the label_vocabulary of {head}: "
                    f"{self.vocabulary}. Every label must be one of label_vocabulary; "
                    f"check the labels your input_fn returns or extend label_vocabulary.",
                )
            out[i] = found
        return out.reshape(labels.shape)


@cpu_kernel("ClassIdToString")
class ClassIdToString:
    """int class ids -> bytes: vocabulary[id] (b"UNK" when out of range) or str(id)."""

    def __init__(self, ctx, *, vocabulary):
        self.table = np.array([v.encode("utf-8") for v in vocabulary] + [b"UNK"],
                              dtype=object)

    def __call__(self, ids):
        if len(self.table) == 1:  # no vocabulary: the decimal id
            out = np.empty(ids.shape, dtype=object)
            flat = out.reshape(-1)
            for i, v in enumerate(ids.reshape(-1).tolist()):
                flat[i] = str(v).encode("ascii")
            return out
        n = len(self.table) - 1
        idx = np.where((ids >= 0) & (ids < n), ids, n)
        return self.table[idx]


@cpu_kernel("HeadAssertShape")
def head_assert_shape(x, logits, *, last_dims, what, message):
    batch = tuple(logits.shape[:-1])
    allowed = [(*batch, int(d)) for d in last_dims]
    if tuple(x.shape) not in allowed:
        expected = " or ".join(str(list(s)) for s in allowed)
        raise InvalidArgumentError(
            None, None,
            f"{message} Expected {what} shape {expected} (logits shape "
            f"{list(logits.shape)}), found {what} shape {list(x.shape)}.",
        )


@cpu_kernel("HeadAssertRange")
def head_assert_range(x, *, low, high, message):
    if x.size == 0:
        return None
    bad = ~((x >= low) & (x <= high))
    if np.any(bad):
        values = np.unique(x[bad])[:5].tolist()
        raise InvalidArgumentError(
            None, None, f"{message}. Found values outside [{low:g}, {high:g}]: {values}.",
        )
    return None
