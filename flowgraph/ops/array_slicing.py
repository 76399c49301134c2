"""The strided-slice specification, shared by shape inference, constant evaluation and
the CPU kernel so that all three agree.

A *sparse* spec has one entry per element of `begin`/`end`/`strides`; bit ``i`` of a
mask refers to entry ``i``. Expanding it against the input rank gives the *dense* spec,
one entry per input dimension: an ellipsis entry (explicit, or implicit at the end)
covers as many full dimensions as needed; a new-axis entry consumes no input
dimension::

    x[1, ..., None, ::-1]   on rank 4
    sparse: [1] [...] [None] [::-1]
    dense:  d0=1 (shrink)  d1=:  d2=:  d3=::-1      output: d1, d2, 1, d3

Per dense dimension the begin/end are canonicalized like Python slices (negative
indices count from the end; out-of-range values clamp), except that a shrunk index must
lie inside the dimension.

Example
-------
>>> import numpy as np
>>> strided_slice_numpy(np.arange(6).reshape(2, 3), [0, 2], [0, 0], [1, -1],
...                     shrink_axis_mask=1, end_mask=2).tolist()
[2, 1, 0]
"""

from __future__ import annotations

import numpy as np

NEW_AXIS = "new"


def _bit(mask: int, i: int) -> bool:
    return bool((mask >> i) & 1)


def dense_spec(rank: int, n_sparse: int, *, begin_mask=0, end_mask=0, ellipsis_mask=0,
               new_axis_mask=0, shrink_axis_mask=0):
    """Expand a sparse spec of `n_sparse` entries against `rank` input dimensions.

    Returns a list of items in output order: ``NEW_AXIS``, or a tuple
    ``(dense_dim, sparse_index_or_None, begin_masked, end_masked, shrink)``; an entry with
    sparse index None is a full dimension from an ellipsis.
    """
    if bin(ellipsis_mask).count("1") > 1:
        raise ValueError("Multiple ellipses in slice spec not allowed")
    n = n_sparse
    seen = False
    new_after = 0
    for i in range(n):
        if seen and _bit(new_axis_mask, i):
            new_after += 1
        if _bit(ellipsis_mask, i):
            seen = True
    if not seen:
        ellipsis_mask |= 1 << n
        n += 1
    items: list = []
    full = 0
    for i in range(n):
        if _bit(ellipsis_mask, i):
            nxt = min(rank - (n - i) + 1 + new_after, rank)
            while full < nxt:
                items.append((full, None, True, True, False))
                full += 1
        elif _bit(new_axis_mask, i):
            items.append(NEW_AXIS)
        else:
            if full >= rank:
                raise ValueError(
                    f"Index out of range using input dim {full}; input has only {rank} dims")
            items.append((full, i, _bit(begin_mask, i), _bit(end_mask, i),
                          _bit(shrink_axis_mask, i)))
            full += 1
    return items


def canonical_range(dim, begin, end, stride, begin_masked, end_masked, shrink, where):
    """Canonical (begin, end, stride, size) of one dense dimension of known size `dim`.

    For a shrunk dimension returns (index, index + 1, 1, None). `where` is the dense index
    used in error messages.
    """
    if stride == 0:
        raise ValueError(f"strides[{where}] must be non-zero")
    if shrink:
        if stride != 1 and stride is not None:
            raise ValueError("only stride 1 allowed on non-range indexing.")
        if begin is None or dim is None:
            return None, None, 1, None
        x = begin + dim if begin < 0 else begin
        if not 0 <= x < dim:
            raise ValueError(f"slice index {begin} of dimension {where} out of bounds.")
        return x, x + 1, 1, None
    if stride is None:
        return None, None, None, None
    forward = stride > 0

    def canon(v, masked, is_begin):
        if masked:
            if dim is None:
                return None
            if is_begin:
                return 0 if forward else dim - 1
            return dim if forward else -1
        if v is None or dim is None:
            return None
        v = v + dim if v < 0 else v
        lo, hi = (0, dim) if forward else (-1, dim - 1)
        return min(max(v, lo), hi)

    b = canon(begin, begin_masked, True)
    e = canon(end, end_masked, False)
    if b is None or e is None:
        return b, e, stride, None
    if forward:
        size = max(0, -((b - e) // stride))
    else:
        size = max(0, -((e - b) // -stride))
    return b, e, stride, size


def strided_slice_shape(shape, begin, end, strides, masks: dict):
    """Output dims (list with None for unknown) for input dims `shape` (list, may hold
    None). `begin`/`end`/`strides` are lists whose elements may be None (unknown)."""
    items = dense_spec(len(shape), len(begin), **masks)
    out = []
    for item in items:
        if item == NEW_AXIS:
            out.append(1)
            continue
        d, i, bm, em, shrink = item
        if i is None:
            out.append(shape[d])
            continue
        _, _, _, size = canonical_range(shape[d], begin[i], end[i], strides[i], bm, em,
                                        shrink, d)
        if not shrink:
            out.append(size)
    return out


def strided_slice_numpy(x: np.ndarray, begin, end, strides, *, begin_mask=0, end_mask=0,
                        ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0):
    """`x[spec]` for a concrete array (a view where NumPy gives one)."""
    begin = [int(v) for v in np.reshape(begin, -1)]
    end = [int(v) for v in np.reshape(end, -1)]
    strides = [int(v) for v in np.reshape(strides, -1)]
    if not len(begin) == len(end) == len(strides):
        raise ValueError(
            f"begin, end and strides must have the same length, got {len(begin)}, "
            f"{len(end)} and {len(strides)}")
    items = dense_spec(x.ndim, len(begin), begin_mask=begin_mask, end_mask=end_mask,
                       ellipsis_mask=ellipsis_mask, new_axis_mask=new_axis_mask,
                       shrink_axis_mask=shrink_axis_mask)
    index: list = []
    for item in items:
        if item == NEW_AXIS:
            index.append(None)
            continue
        d, i, bm, em, shrink = item
        if i is None:
            index.append(slice(None))
            continue
        b, e, s, size = canonical_range(x.shape[d], begin[i], end[i], strides[i], bm, em,
                                        shrink, d)
        if shrink:
            index.append(b)
        elif size == 0:
            index.append(slice(0, 0))
        else:
            index.append(slice(b, None if e < 0 else e, s))
    return x[tuple(index)]
