"""CPU kernels for joining, splitting and rearranging arrays (`flowgraph.ops.array_join_ops`)."""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import errors


def _invalid(msg: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, msg)


def _axis(axis, rank: int, what: str) -> int:
    a = int(axis)
    if not -rank <= a < rank:
        raise _invalid(f"{what}: axis {a} is out of range [{-rank}, {rank})")
    return a + rank if a < 0 else a


@cpu_kernel("ConcatV2")
def concat(*args):
    values, axis = [np.asarray(v) for v in args[:-1]], args[-1]
    r = values[0].ndim
    for i, v in enumerate(values):
        if v.ndim != r:
            raise _invalid(f"ConcatOp : Ranks of all input tensors should match: shape[0] = "
                           f"{list(values[0].shape)} vs. shape[{i}] = {list(v.shape)}")
    a = _axis(axis, max(r, 1), "concat")
    for i, v in enumerate(values):
        if v.shape[:a] + v.shape[a + 1:] != values[0].shape[:a] + values[0].shape[a + 1:]:
            bad = next(j for j in range(r) if j != a and v.shape[j] != values[0].shape[j])
            raise _invalid(f"ConcatOp : Dimension {bad} in both shapes must be equal: shape[0] "
                           f"= {list(values[0].shape)} vs. shape[{i}] = {list(v.shape)} "
                           "(Dimensions of inputs should match)")
    return np.concatenate(values, axis=a)


@cpu_kernel("Split")
def split(axis, x, *, num_split):
    a = _axis(axis, np.ndim(x), "split")
    if x.shape[a] % num_split:
        raise _invalid(f"Number of ways to split should evenly divide the split dimension, "
                       f"but got split_dim {a} (size = {x.shape[a]}) and num_split {num_split}")
    return tuple(np.split(x, num_split, axis=a))


@cpu_kernel("SplitV")
def split_v(x, sizes, axis, *, num_split):
    a = _axis(axis, np.ndim(x), "split")
    sizes = [int(s) for s in np.reshape(sizes, -1)]
    d = x.shape[a]
    if len(sizes) != num_split:
        raise _invalid(f"size_splits has {len(sizes)} entries but num_split is {num_split}")
    if sizes.count(-1) > 1:
        raise _invalid(f"size_splits can only have one -1, got {sizes}")
    known = sum(s for s in sizes if s != -1)
    if -1 in sizes:
        if known > d:
            raise _invalid(f"size_splits {sizes} add up to more than dimension {a} (size {d})")
        sizes[sizes.index(-1)] = d - known
    elif known != d:
        raise _invalid(f"size_splits {sizes} must add up to the size {d} of dimension {a}")
    if any(s < 0 for s in sizes):
        raise _invalid(f"size_splits must be non-negative (or one -1), got {sizes}")
    return tuple(np.split(x, np.cumsum(sizes)[:-1], axis=a))


@cpu_kernel("Pack")
def pack(*values, axis):
    values = [np.asarray(v) for v in values]
    for i, v in enumerate(values):
        if v.shape != values[0].shape:
            raise _invalid(f"Shapes of all inputs must match: values[0].shape = "
                           f"{list(values[0].shape)} != values[{i}].shape = {list(v.shape)}")
    return np.stack(values, axis=_axis(axis, values[0].ndim + 1, "stack"))


@cpu_kernel("Unpack")
def unpack(x, *, num, axis):
    a = _axis(axis, np.ndim(x), "unstack")
    if x.shape[a] != num:
        raise _invalid(f"Input shape axis {a} must equal {num}, got shape {list(x.shape)}")
    return tuple(np.take(x, i, axis=a) for i in range(num))


@cpu_kernel("Tile")
def tile(x, multiples):
    m = [int(k) for k in np.reshape(multiples, -1)]
    if len(m) != np.ndim(x):
        raise _invalid(f"Expected multiples argument to be a vector of length {np.ndim(x)} "
                       f"but got length {len(m)}")
    if any(k < 0 for k in m):
        raise _invalid(f"Expected multiples to be non-negative, got {m}")
    return np.tile(x, m) if m else np.array(x, copy=True)


@cpu_kernel("BroadcastTo")
def broadcast_to(x, shape):
    target = tuple(int(d) for d in np.reshape(shape, -1))
    if any(d < 0 for d in target):
        raise _invalid(f"BroadcastTo: the target shape {list(target)} has a negative "
                       f"dimension")
    try:
        return np.array(np.broadcast_to(x, target))  # a fresh array, not a read-only view
    except ValueError:
        raise _invalid(f"BroadcastTo: input of shape {list(np.shape(x))} cannot be broadcast "
                       f"to {list(target)}: each input dimension, aligned from the right, "
                       f"must be 1 or equal the target's") from None


def _paddings(x, paddings):
    p = np.asarray(paddings)
    if p.shape != (np.ndim(x), 2):
        raise _invalid(f"paddings must be a matrix with shape [{np.ndim(x)}, 2] for an input "
                       f"of shape {list(np.shape(x))}, got {list(p.shape)}")
    if np.any(p < 0):
        raise _invalid(f"Paddings must be non-negative: {' '.join(map(str, p.ravel()))} "
                       f"(paddings {p.tolist()})")
    return [(int(a), int(b)) for a, b in p]


def _pad(x, paddings, **how):
    widths = _paddings(x, paddings)
    if not widths:  # a scalar: nothing to pad (np.pad refuses an empty width list)
        return np.array(x, copy=True)
    return np.pad(x, widths, **how)


@cpu_kernel("Pad")
def pad(x, paddings):
    if np.asarray(x).dtype == object:  # strings pad with b"", not the int 0
        return _pad(x, paddings, mode="constant", constant_values=np.array(b"", dtype=object))
    return _pad(x, paddings, mode="constant")


@cpu_kernel("PadV2")
def pad_v2(x, paddings, constant_values):
    value = np.asarray(constant_values)
    # a 0-d object array keeps a string value as bytes (np.pad would make it np.bytes_)
    return _pad(x, paddings, mode="constant",
                constant_values=value if value.dtype == object else value[()])


@cpu_kernel("MirrorPad")
def mirror_pad(x, paddings, *, mode):
    p = _paddings(x, paddings)
    limit = 1 if mode == "REFLECT" else 0
    for i, (a, b) in enumerate(p):
        if max(a, b) > x.shape[i] - limit:
            raise _invalid(f"paddings must be no greater than the dimension size minus "
                           f"{limit} for {mode} mode: {a}, {b} greater than "
                           f"{x.shape[i] - limit} in dimension {i}")
    return _pad(x, paddings, mode="reflect" if mode == "REFLECT" else "symmetric")


@cpu_kernel("ReverseV2")
def reverse_v2(x, axis):
    axes = [_axis(a, np.ndim(x), "reverse") for a in np.reshape(axis, -1)]
    if len(set(axes)) != len(axes):
        raise _invalid(f"reverse: axis {axes} lists a dimension more than once")
    return np.flip(x, axis=tuple(axes)) if axes else x


@cpu_kernel("ReverseSequence")
def reverse_sequence(x, lengths, *, seq_dim, batch_dim):
    lengths = np.reshape(lengths, -1)
    if len(lengths) != x.shape[batch_dim]:
        raise _invalid(f"len(seq_lens) != input.dims({batch_dim}), ({len(lengths)} vs. "
                       f"{x.shape[batch_dim]})")
    out = np.array(x, copy=True)
    for b, n in enumerate(lengths):
        n = int(n)
        if not 0 <= n <= x.shape[seq_dim]:
            raise _invalid(f"seq_lens[{b}] = {n} is not in [0, {x.shape[seq_dim]}]")
        src = [slice(None)] * x.ndim
        src[batch_dim] = b
        src[seq_dim] = slice(0, n)
        out[tuple(src)] = np.flip(x[tuple(src)], axis=seq_dim - (batch_dim < seq_dim))
    return out
