"""Joining, splitting and rearranging: `concat`, `split`, `stack`, `unstack`, `tile`,
`pad`, `reverse`, `reverse_sequence`.

Variadic ops (`ConcatV2`, `Pack`) take a flat input list and record its length in the
attribute ``N``; ops with several outputs (`Split`, `SplitV`, `Unpack`) read their
output count from an attribute.
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import (
    constant_value,
    convert_to_tensor,
    install_stack_function,
    register_constant_evaluator,
)
from flowgraph.framework.graph import name_scope
from flowgraph.framework.operation import (
    OperatorNotAllowedInGraphError,
    Tensor,
    install_tensor_operator,
)
from flowgraph.framework.registry import register_op
from flowgraph.framework.tensor_shape import TensorShape, unknown_shape
from flowgraph.ops.array_static import (
    MAX_EVAL_ELEMENTS,
    const_int,
    normalize_axis,
    static_elements,
)
from flowgraph.ops.op_dispatch import handler_for
from flowgraph.ops.op_util import make_op, make_tensor, op_scope

__all__ = [
    "concat",
    "pad",
    "reverse",
    "reverse_sequence",
    "reverse_v2",
    "split",
    "stack",
    "tile",
    "unstack",
]


def _merge_all(op, shapes, what: str) -> TensorShape:
    out = unknown_shape()
    for i, s in enumerate(shapes):
        try:
            out = out.merge_with(s)
        except ValueError:
            raise op.shape_error(f"{what}: value {i} has shape {s}, which is not compatible "
                                 f"with the shape {out} of the values before it") from None
    return out


def _convert_values(values, op_name: str, arg: str | None = None) -> list[Tensor]:
    """Convert a list of values to tensors of one dtype (plain values follow the tensors).

    With `arg`, a plain value i becomes the constant ``<arg>_<i>`` (TensorFlow's names for
    list arguments; call it inside the op's scope)."""
    if isinstance(values, Tensor):
        raise TypeError(f"{op_name} expects a list of tensors, got the single tensor "
                        f"{values.name}; wrap it in a list")
    values = list(values)
    dtype = next((v.dtype.base_dtype for v in values if isinstance(v, Tensor)), None)
    out = []
    for i, v in enumerate(values):
        t = convert_to_tensor(v, dtype=None if isinstance(v, Tensor) else dtype,
                              name=arg and f"{arg}_{i}")
        dtype = dtype or t.dtype.base_dtype
        out.append(t)
    for t in out[1:]:
        if t.dtype.base_dtype != out[0].dtype.base_dtype:
            raise TypeError(f"{op_name}: all values must have the same dtype, got "
                            f"{out[0].dtype.name} ({out[0].name}) and {t.dtype.name} ({t.name})")
    return out


# -- ConcatV2 -----------------------------------------------------------------------------
@register_op("ConcatV2", attrs={"N": 2})
def _concat_shape(op, *shapes):
    values = shapes[:-1]
    ranks = {s.ndims for s in values if s.ndims is not None}
    if len(ranks) > 1:
        raise op.shape_error(f"all values must have the same rank, got ranks {sorted(ranks)}")
    if not ranks:
        return [TensorShape(None)]
    r = ranks.pop()
    if r == 0:
        raise op.shape_error("cannot concatenate scalars (rank 0); use tf.stack instead")
    axis = const_int(op.inputs[-1])
    if axis is None:
        return [TensorShape([None] * r)]
    try:
        axis = normalize_axis(axis, r, "concat")
    except ValueError as e:
        raise op.shape_error(str(e)) from None
    total = 0
    rest = [None] * r
    for i, s in enumerate(values):
        if s.ndims is None:
            total = None
            continue
        total = None if total is None or s[axis].value is None else total + s[axis].value
        for j, d in enumerate(s.dims):
            if j == axis or d.value is None:
                continue
            if rest[j] is not None and rest[j] != d.value:
                raise op.shape_error(
                    f"dimension {j} of all values must match when concatenating along axis "
                    f"{axis}, but value {i} has shape {s} ({d.value} vs {rest[j]})")
            rest[j] = d.value
    dims = rest
    dims[axis] = total
    return [TensorShape(dims)]


def concat(values, axis, name: str = "concat"):
    """Join the tensors `values` along dimension `axis` (negative counts from the end).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.concat([tf.zeros([2, 3]), tf.zeros([2, 5])], axis=-1).shape.as_list()
    [2, 8]
    """
    if isinstance(values, Tensor):
        values = [values]
    values = list(values)
    if (h := handler_for("concat", values)) is not None:  # RaggedTensors
        return h(values, axis, None if name == "concat" else name)
    if len(values) == 1:
        # Shape check only, as TensorFlow does: one value is passed through, as an
        # Identity named `name` inside the scope `name` (`concat/concat`).
        with name_scope(name):
            values = _convert_values(values, "concat")
            axis_t = convert_to_tensor(axis, preferred_dtype=_dtypes.int32, name="concat_dim")
            a, r = const_int(axis_t), values[0].shape.ndims
            if a is not None and r is not None:
                normalize_axis(a, max(r, 1), "concat")
            return make_tensor("Identity", values, name=name)
    with op_scope(name, "concat", (*values, axis)) as scope:
        values = _convert_values(values, "concat", "values")
        axis_t = convert_to_tensor(axis, preferred_dtype=_dtypes.int32, name="axis")
        return make_tensor("ConcatV2", [*values, axis_t], {"N": len(values)}, name=scope)


# -- Split, SplitV ------------------------------------------------------------------------
def _split_axis(op, x, axis_tensor) -> int | None:
    """The axis a split op cuts `x` (shape) along, normalized; None when the rank or the
    axis is not known statically."""
    axis = const_int(axis_tensor)
    if x.ndims is None or axis is None:
        return None
    try:
        return normalize_axis(axis, x.ndims, "split")
    except ValueError as e:
        raise op.shape_error(str(e)) from None


@register_op("Split", attrs={"num_split": 1}, num_outputs=lambda op: op.attrs["num_split"],
             dtype_fn=lambda op: [op.inputs[1].dtype.base_dtype] * op.attrs["num_split"])
def _split_shape(op, axis_shape, x):
    n = op.attrs["num_split"]
    axis = _split_axis(op, x, op.inputs[0])
    if axis is None:
        return [TensorShape(None if x.ndims is None else [None] * x.ndims)] * n
    d = x[axis].value
    if d is not None and d % n:
        raise op.shape_error(f"Dimension size must be evenly divisible by {n} but is {d} "
                             f"(axis {axis})")
    dims = x.dims
    dims[axis] = None if d is None else d // n
    return [TensorShape(dims)] * n


@register_op("SplitV", attrs={"num_split": 1}, num_outputs=lambda op: op.attrs["num_split"])
def _split_v_shape(op, x, sizes_shape, axis_shape):
    n = op.attrs["num_split"]
    sizes = static_elements(op.inputs[1])
    if sizes is not None and len(sizes) != n:
        raise op.shape_error(f"size_splits has {len(sizes)} entries but num_split is {n}")
    axis = _split_axis(op, x, op.inputs[2])
    if axis is None:
        return [TensorShape(None if x.ndims is None else [None] * x.ndims)] * n
    if sizes is None or not all(isinstance(s, int) for s in sizes):
        sizes = [None] * n  # as TensorFlow: partly known sizes tell nothing
    if sum(1 for s in sizes if s == -1) > 1:
        raise op.shape_error(f"size_splits can only have one -1, got {sizes}")
    d = x[axis].value
    known = sum(s for s in sizes if s is not None and s >= 0)
    if d is not None and None not in sizes:
        if -1 in sizes:
            if known > d:
                raise op.shape_error(f"the sizes {sizes} add up to more than the dimension "
                                     f"{d} being split")
            sizes[sizes.index(-1)] = d - known
        elif known != d:
            raise op.shape_error(f"Determined shape must either match input shape along "
                                 f"split_dim exactly if fully specified, or be less than the "
                                 f"size of the input along split_dim if not fully specified. "
                                 f"Got sizes {sizes} for a dimension of size {d}")
    out = []
    for s in sizes:
        dims = x.dims
        dims[axis] = s if s is not None and s >= 0 else None
        out.append(TensorShape(dims))
    return out


def split(value, num_or_size_splits, axis=0, num=None, name: str = "split") -> list[Tensor]:
    """Split `value` along `axis` into `num_or_size_splits` equal parts, or into parts of
    the listed sizes (one size may be -1).

    Example
    -------
    >>> import flowgraph as tf
    >>> [p.shape.as_list() for p in tf.split(tf.zeros([7, 2]), [2, -1, 3])]
    [[2, 2], [2, 2], [3, 2]]
    """
    if isinstance(num_or_size_splits, int | np.integer) and not isinstance(
            num_or_size_splits, bool):
        n = int(num_or_size_splits)
        if n <= 0:
            raise ValueError(f"split: num_or_size_splits must be positive, got {n}")
        with op_scope(name, "split", (value, axis)) as scope:
            axis_t = convert_to_tensor(axis, preferred_dtype=_dtypes.int32, name="split_dim")
            x = convert_to_tensor(value, name="value")
            return make_op("Split", [axis_t, x], {"num_split": n}, name=scope).outputs
    # As in TensorFlow, the sizes are converted outside the op's scope (a root `Const`).
    sizes = convert_to_tensor(num_or_size_splits, preferred_dtype=_dtypes.int32)
    if num is None:
        if sizes.shape.ndims != 1 or sizes.shape[0].value is None:
            raise ValueError(f"Cannot infer argument `num` from shape {sizes.shape} of "
                             "size_splits; pass num=")
        num = sizes.shape[0].value
    with op_scope(name, "split", (value, axis)) as scope:
        x = convert_to_tensor(value, name="value")
        axis_t = convert_to_tensor(axis, preferred_dtype=_dtypes.int32, name="split_dim")
        return make_op("SplitV", [x, sizes, axis_t], {"num_split": int(num)},
                       name=scope).outputs


# -- Pack, Unpack -------------------------------------------------------------------------
@register_op("Pack", attrs={"N": 1, "axis": 0})
def _pack_shape(op, *shapes):
    s = _merge_all(op, shapes, "stack")
    if s.ndims is None:
        return [TensorShape(None)]
    try:
        axis = normalize_axis(op.attrs["axis"], s.ndims + 1, "stack")
    except ValueError as e:
        raise op.shape_error(str(e)) from None
    dims = s.dims
    return [TensorShape([*dims[:axis], len(shapes), *dims[axis:]])]


def stack(values, axis: int = 0, name: str = "stack"):
    """Stack the same-shaped tensors `values` along a new dimension `axis`.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.stack([tf.zeros([2, 3])] * 4, axis=1).shape.as_list()
    [2, 4, 3]
    """
    if (h := handler_for("stack", values)) is not None:  # RaggedTensors
        return h(values, axis, None if name == "stack" else name)
    if isinstance(values, list | tuple) and axis == 0:
        # TensorFlow converts the list as one value first: plain values (or none: an empty
        # float32 constant) give one constant named `name`; a list holding tensors is
        # packed in the scope `name`, its plain elements named by their index (`stack/1`).
        if not any(isinstance(v, Tensor) or _holds_tensor(v) for v in values):
            try:
                return convert_to_tensor(values, name=name)
            except (TypeError, ValueError):
                pass
        elif not all(isinstance(v, Tensor) for v in values):
            return convert_to_tensor(values, name=name)
    with op_scope(name, "stack", values if isinstance(values, list | tuple) else ()) as scope:
        values = _convert_values(values, "stack", "values")
        if not values:
            raise ValueError("stack: needs at least one value")
        r = values[0].shape.ndims
        if r is not None:
            normalize_axis(axis, r + 1, "stack")
        return make_tensor("Pack", values, {"N": len(values), "axis": int(axis)}, name=scope)


def _holds_tensor(v) -> bool:
    return isinstance(v, list | tuple) and any(
        isinstance(e, Tensor) or _holds_tensor(e) for e in v)


@register_op("Unpack", attrs={"num": 1, "axis": 0}, num_outputs=lambda op: op.attrs["num"])
def _unpack_shape(op, x):
    n = op.attrs["num"]
    if x.ndims is None:
        return [TensorShape(None)] * n
    try:
        axis = normalize_axis(op.attrs["axis"], x.ndims, "unstack")
    except ValueError as e:
        raise op.shape_error(str(e)) from None
    if x[axis].value is not None and x[axis].value != n:
        raise op.shape_error(f"num={n} but dimension {axis} has size {x[axis].value}")
    dims = x.dims
    return [TensorShape(dims[:axis] + dims[axis + 1:])] * n


def unstack(value, num=None, axis: int = 0, name: str = "unstack") -> list[Tensor]:
    """Split `value` along `axis` into `num` tensors of one rank less.

    Example
    -------
    >>> import flowgraph as tf
    >>> len(tf.unstack(tf.zeros([2, 3]), axis=1))
    3
    """
    x = convert_to_tensor(value)
    if num is None:
        if x.shape.ndims is None:
            raise ValueError(f"Cannot infer argument `num` from shape {x.shape}")
        a = normalize_axis(axis, x.shape.ndims, "unstack")
        num = x.shape[a].value
        if num is None:
            raise ValueError(f"Cannot infer argument `num` from shape {x.shape}")
    return make_op("Unpack", [x], {"num": int(num), "axis": int(axis)}, name=name).outputs


# -- Tile ---------------------------------------------------------------------------------
@register_op("Tile")
def _tile_shape(op, x, multiples):
    if multiples.ndims not in (None, 1):
        raise op.shape_error(f"multiples must be 1-D, got rank {multiples.ndims}")
    m = static_elements(op.inputs[1])
    r = x.ndims if x.ndims is not None else (None if m is None else len(m))
    if r is None:
        return [TensorShape(None)]
    if m is not None and len(m) != r:
        raise op.shape_error(f"multiples has {len(m)} entries but the input has rank {r}")
    m = m or [None] * r
    dims = [None] * r if x.ndims is None else [d.value for d in x.dims]
    return [TensorShape([d * k if isinstance(k, int) and d is not None else
                         (0 if k == 0 else None) for d, k in zip(dims, m)])]


def tile(input, multiples, name: str | None = None):
    """Repeat `input` `multiples[i]` times along each dimension i.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.tile(tf.zeros([2, 3]), [2, 1]).shape.as_list()
    [4, 3]
    """
    with op_scope(name, "Tile", (input, multiples)) as scope:
        x = convert_to_tensor(input, name="input")
        m = convert_to_tensor(multiples, preferred_dtype=_dtypes.int32, name="multiples")
        return make_tensor("Tile", [x, m], name=scope)


# -- Pad, PadV2, MirrorPad ------------------------------------------------------------------
def _pad_shape(op, x, paddings, *rest):
    if paddings.ndims not in (None, 2) or (paddings.ndims == 2 and
                                           paddings[1].value not in (None, 2)):
        raise op.shape_error(f"paddings must have shape [rank, 2], got {paddings}")
    r = x.ndims if x.ndims is not None else paddings[0].value
    if r is None:
        return [TensorShape(None)]
    if paddings[0].value is not None and paddings[0].value != r:
        raise op.shape_error(f"paddings has {paddings[0].value} rows but the input has rank {r}")
    p = constant_value(op.inputs[1])
    dims = [None] * r if x.ndims is None else [d.value for d in x.dims]
    if p is None:
        return [TensorShape([None] * r)]
    p = np.asarray(p).reshape(r, 2)
    if np.any(p < 0):
        raise op.shape_error(f"paddings must be non-negative, got {p.tolist()}")
    # MirrorPad's limits (a pad below the dimension's size) are checked when it runs, as in
    # TensorFlow
    return [TensorShape([None if d is None else d + int(a) + int(b)
                         for d, (a, b) in zip(dims, p)])]


register_op("Pad")(_pad_shape)
register_op("PadV2")(_pad_shape)
register_op("MirrorPad", attrs={"mode": "REFLECT"})(_pad_shape)


def pad(tensor, paddings, mode: str = "CONSTANT", name: str | None = None,
        constant_values=0):
    """Pad `tensor` with `paddings[i] = [before, after]` elements along each dimension.

    `mode` is "CONSTANT" (fill with `constant_values`), "REFLECT" or "SYMMETRIC"
    (mirror, excluding or including the edge), case-insensitive.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.pad(tf.zeros([2, 3]), [[1, 1], [0, 2]]).shape.as_list()
    [4, 5]
    """
    m = str(mode).upper()
    if m == "CONSTANT":
        if not isinstance(constant_values, Tensor) and np.all(np.asarray(constant_values) == 0):
            op_type, values = "Pad", (tensor, paddings)
        else:
            op_type, values = "PadV2", (tensor, paddings, constant_values)
    elif m in ("REFLECT", "SYMMETRIC"):
        op_type, values = "MirrorPad", (tensor, paddings)
    else:
        raise ValueError(f'pad: mode must be one of "CONSTANT", "REFLECT", or "SYMMETRIC", '
                         f"got {mode!r}")
    with op_scope(name, op_type, values) as scope:
        x = convert_to_tensor(tensor, name="input")
        p = convert_to_tensor(paddings, preferred_dtype=_dtypes.int32, name="paddings")
        if op_type == "PadV2":
            cv = convert_to_tensor(constant_values, dtype=x.dtype.base_dtype,
                                   name="constant_values")
            return _pad_static(make_tensor("PadV2", [x, p, cv], name=scope), paddings)
        attrs = {"mode": m} if op_type == "MirrorPad" else None
        return _pad_static(make_tensor(op_type, [x, p], attrs, name=scope), paddings)


def _pad_static(out: Tensor, paddings) -> Tensor:
    """As TensorFlow's `tf.pad`: rows of a Python `paddings` list that hold plain integers
    fix their dimension even when other rows are tensors (the op itself then knows none)."""
    x = out.op.inputs[0]
    if isinstance(paddings, Tensor) or x.shape.ndims is None or out.shape.is_fully_defined():
        return out
    try:
        rows = list(paddings)
    except TypeError:
        return out
    if len(rows) != x.shape.ndims:
        return out
    dims = []
    for row, d in zip(rows, x.shape.as_list()):
        ends = list(row) if isinstance(row, list | tuple | np.ndarray) else []
        ok = len(ends) == 2 and all(isinstance(e, int | np.integer) for e in ends)
        dims.append(d + int(ends[0]) + int(ends[1]) if ok and d is not None else None)
    out.set_shape(dims)
    return out


# -- ReverseV2, ReverseSequence --------------------------------------------------------------
@register_op("ReverseV2")
def _reverse_shape(op, x, axis):
    a = constant_value(op.inputs[1])
    if a is not None and x.ndims is not None:
        seen = set()
        for v in np.reshape(a, -1):
            try:
                v = normalize_axis(int(v), x.ndims, "reverse")
            except ValueError as e:
                raise op.shape_error(str(e)) from None
            if v in seen:
                raise op.shape_error(f"axis {v} specified more than once")
            seen.add(v)
    return [x]


def reverse_v2(tensor, axis, name: str | None = None):
    """Reverse `tensor` along each dimension listed in `axis`.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.reverse_v2(tf.zeros([2, 3]), [1]).shape.as_list()
    [2, 3]
    """
    with op_scope(name, "ReverseV2", (tensor, axis)) as scope:
        x = convert_to_tensor(tensor, name="tensor")
        a = convert_to_tensor(axis, preferred_dtype=_dtypes.int32, name="axis")
        return make_tensor("ReverseV2", [x, a], name=scope)


reverse = reverse_v2


@register_op("ReverseSequence", attrs={"seq_dim": 1, "batch_dim": 0})
def _reverse_sequence_shape(op, x, lengths):
    if lengths.ndims not in (None, 1):
        raise op.shape_error(f"seq_lengths must be 1-D, got rank {lengths.ndims}")
    if x.ndims is not None:
        for key in ("seq_dim", "batch_dim"):
            if not 0 <= op.attrs[key] < x.ndims:
                raise op.shape_error(f"{key}={op.attrs[key]} out of range for rank {x.ndims}")
        b = x[op.attrs["batch_dim"]]
        if lengths.ndims == 1 and not b.is_compatible_with(lengths[0]):
            raise op.shape_error(f"seq_lengths has {lengths[0]} entries but the batch "
                                 f"dimension has size {b}")
    return [x]


def reverse_sequence(input, seq_lengths, seq_axis=None, batch_axis=None,
                     name: str | None = None, seq_dim=None, batch_dim=None):
    """Reverse the first `seq_lengths[b]` elements along `seq_axis` of each batch entry.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.reverse_sequence(tf.zeros([2, 5]), [3, 5], seq_axis=1).shape.as_list()
    [2, 5]
    """
    seq_axis = seq_dim if seq_axis is None else seq_axis
    batch_axis = batch_dim if batch_axis is None else batch_axis
    x = convert_to_tensor(input)
    lengths = convert_to_tensor(seq_lengths, preferred_dtype=_dtypes.int64)
    r = x.shape.ndims
    seq_axis = 1 if seq_axis is None else int(seq_axis)
    batch_axis = 0 if batch_axis is None else int(batch_axis)
    if r is not None:
        seq_axis, batch_axis = seq_axis % r, batch_axis % r
    return make_tensor("ReverseSequence", [x, lengths],
                       {"seq_dim": seq_axis, "batch_dim": batch_axis},
                       name=name or "ReverseSequence")


# -- constant evaluators ----------------------------------------------------------------------
@register_constant_evaluator("Pack")
def _eval_pack(op, index):
    values = [constant_value(t) for t in op.inputs]
    if any(v is None for v in values):
        return None
    return np.stack(values, axis=op.attrs["axis"])


@register_constant_evaluator("ConcatV2")
def _eval_concat(op, index):
    values = [constant_value(t) for t in op.inputs]
    if any(v is None for v in values):
        return None
    return np.concatenate(values[:-1], axis=int(values[-1]))


@register_constant_evaluator("Tile")
def _eval_tile(op, index):
    v, m = constant_value(op.inputs[0]), constant_value(op.inputs[1])
    if v is None or m is None or np.size(v) * np.prod(m) > MAX_EVAL_ELEMENTS:
        return None
    return np.tile(v, [int(k) for k in m])


def _tensor_iter(self: Tensor):
    """``iter(tensor)`` raises TypeError, as in TensorFlow's graph mode: a symbolic
    tensor has no rows to iterate in Python (``tf.unstack`` makes them)."""
    raise OperatorNotAllowedInGraphError(
        f"Iterating over a symbolic Tensor ('{self.name}') is not allowed in graph mode: use "
        "tf.unstack(x) for a list of tensors along the first dimension, or tf.map_fn / "
        "tf.while_loop to loop over it in the graph.")


install_tensor_operator("__iter__", _tensor_iter)
install_stack_function(stack)
