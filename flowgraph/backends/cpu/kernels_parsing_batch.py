"""The feature lists of a batch of SequenceExamples (for `kernels_parsing_v2`): each
serialized SequenceExample parsed by the one-example kernel of
`kernels_parsing`, then the sparse features concatenated with an example index and the
dense ones zero-padded to the longest sequence."""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu.kernels_parsing import parse_sequence_features


def parse_sequence_features_batch(serialized, *, sparse_keys, sparse_types, dense_keys,
                                  dense_types, dense_shapes, dense_allow_missing):
    attrs = {"sparse_keys": sparse_keys, "sparse_types": sparse_types,
             "dense_keys": dense_keys, "dense_types": dense_types,
             "dense_shapes": dense_shapes, "dense_allow_missing": dense_allow_missing}
    n_sparse = len(sparse_keys)
    per_example = []
    for item in np.asarray(serialized, dtype=object).reshape(-1):
        outs = parse_sequence_features(np.array(item, dtype=object), **attrs)
        per_example.append(list(outs) if isinstance(outs, tuple) else [outs])
    batch = len(per_example)
    result_idx, result_val, result_shape = [], [], []
    for k in range(n_sparse):
        idx = [np.concatenate([np.full((len(o[k]), 1), b, np.int64), o[k]], axis=1)
               for b, o in enumerate(per_example)]
        vals = [o[n_sparse + k] for o in per_example]
        shapes = [o[2 * n_sparse + k] for o in per_example]
        steps = max((int(s[0]) for s in shapes), default=0)
        longest = max((int(s[1]) for s in shapes), default=0)
        result_idx.append(np.concatenate(idx).reshape(-1, 3) if idx
                          else np.zeros((0, 3), np.int64))
        dtype = vals[0].dtype if vals else object
        result_val.append(np.concatenate(vals) if vals else np.zeros(0, dtype))
        result_shape.append(np.array([batch, steps, longest], np.int64))
    dense, lengths = [], []
    for j, shape in enumerate(dense_shapes):
        arrays = [o[3 * n_sparse + j] for o in per_example]
        steps = np.array([len(a) for a in arrays], np.int64)
        longest = int(steps.max()) if batch else 0
        inner = shape.as_list()
        dtype = arrays[0].dtype if arrays else np.dtype(np.float32)
        out = np.zeros((batch, longest, *inner), dtype)
        if dtype.kind == "O":
            out[...] = b""
        for b, a in enumerate(arrays):
            out[b, :len(a)] = a
        dense.append(out)
        lengths.append(steps)
    outs = result_idx + result_val + result_shape + dense + lengths
    return outs[0] if len(outs) == 1 else tuple(outs)
