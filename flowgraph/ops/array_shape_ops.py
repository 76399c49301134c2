"""Shape queries and shape changes: `shape`, `shape_n`, `size`, `rank`, `reshape`,
`expand_dims`, `squeeze`, `transpose`, and the filled tensors `fill`, `zeros`, `ones`,
`zeros_like`, `ones_like`.

The constant evaluators at the end let static shapes flow through shape arithmetic:
``tf.zeros(tf.shape(y))`` has `y`'s static shape.
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import (
    constant,
    constant_value,
    convert_to_tensor,
    register_constant_evaluator,
)
from flowgraph.framework.graph import name_scope
from flowgraph.framework.indexed_slices import IndexedSlices
from flowgraph.framework.operation import Tensor
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape, as_shape
from flowgraph.ops.array_static import (
    MAX_EVAL_ELEMENTS,
    static_elements,
    static_shape_of,
)
from flowgraph.ops.op_dispatch import handler_for
from flowgraph.ops.op_util import attr_dtype, fixed_dtype, make_op, make_tensor, op_scope

__all__ = [
    "expand_dims",
    "fill",
    "ones",
    "ones_like",
    "rank",
    "reshape",
    "shape",
    "shape_n",
    "size",
    "squeeze",
    "transpose",
    "zeros",
    "zeros_like",
]


# -- Shape, ShapeN, Size, Rank --------------------------------------------------------
@register_op("Shape", attrs={"out_type": _dtypes.int32}, dtype_fn=attr_dtype("out_type"))
def _shape_shape(op, x):
    return [TensorShape([x.ndims])]


def shape(input, name: str | None = None, out_type=_dtypes.int32, optimize: bool = True):
    """The shape of `input` as a 1-D integer tensor.

    Built as TensorFlow builds it: with `optimize` and a fully known static shape, the
    shape is a constant (``Const`` named `name`); otherwise a ``Shape`` op. Code that needs
    the op itself (a value that is dead when `input` is, in loop and cond gradients)
    passes ``optimize=False``. A `SparseTensor` gives its ``dense_shape``, cast.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.shape(tf.zeros([2, 3])).op.type
    'Const'
    >>> tf.shape(tf.placeholder(tf.float32, [None, 3])).op.type
    'Shape'
    """
    out_type = _dtypes.as_dtype(out_type)
    with name_scope(name, "Shape", [input]) as scope:
        dense_shape = _sparse_dense_shape(input)
        if dense_shape is not None:
            return _cast(dense_shape, out_type)
        x = convert_to_tensor(input)
        if optimize and x.shape.is_fully_defined():
            return constant(np.asarray(x.shape.as_list(), out_type.as_numpy_dtype), out_type,
                            name=scope)
        return make_tensor("Shape", [x], {"out_type": out_type}, name=scope)


def _sparse_dense_shape(value):
    """The ``dense_shape`` of a SparseTensor (or SparseTensorValue), else None."""
    from flowgraph.framework.sparse_tensor import SparseTensor, SparseTensorValue

    if isinstance(value, SparseTensor | SparseTensorValue):
        return convert_to_tensor(value.dense_shape)
    return None


def _cast(x, dtype):
    if x.dtype.base_dtype == dtype:
        return x
    return make_tensor("Cast", [x], {"DstT": dtype, "Truncate": False}, name="Cast")


@register_op("ShapeN", attrs={"N": 1, "out_type": _dtypes.int32},
             num_outputs=lambda op: op.attrs["N"],
             dtype_fn=lambda op: [_dtypes.as_dtype(op.attrs["out_type"])] * op.attrs["N"])
def _shape_n_shape(op, *xs):
    return [TensorShape([x.ndims]) for x in xs]


def shape_n(input, out_type=_dtypes.int32, name: str | None = None) -> list[Tensor]:
    """The shapes of the tensors in `input`, one 1-D tensor each.

    Example
    -------
    >>> import flowgraph as tf
    >>> [s.shape.as_list() for s in tf.shape_n([tf.zeros([2, 3]), tf.zeros([4])])]
    [[2], [1]]
    """
    xs = [convert_to_tensor(x) for x in input]
    return make_op("ShapeN", xs, {"N": len(xs), "out_type": _dtypes.as_dtype(out_type)},
                   name=name or "ShapeN").outputs


@register_op("Size", attrs={"out_type": _dtypes.int32}, dtype_fn=attr_dtype("out_type"))
def _size_shape(op, x):
    return [TensorShape([])]


def size(input, name: str | None = None, out_type=_dtypes.int32, optimize: bool = True):
    """The number of elements of `input` as a scalar integer tensor.

    With `optimize`, a constant when the static shape is fully known (or has a zero
    dimension), as TensorFlow builds it; otherwise a ``Size`` op.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.size(tf.zeros([2, 3])).dtype.name
    'int32'
    >>> tf.size(tf.placeholder(tf.float32, [None, 3])).op.type
    'Size'
    """
    out_type = _dtypes.as_dtype(out_type)
    if (h := handler_for("size", input)) is not None:  # a RaggedTensor: its flat values
        return h(input, name, out_type)
    with name_scope(name, "Size", [input]) as scope:
        dense_shape = _sparse_dense_shape(input)
        if dense_shape is not None:
            return make_tensor("Prod", [_cast(dense_shape, out_type), constant(0)],
                               {"keep_dims": False}, name=scope)
        x = convert_to_tensor(input)
        s = x.shape
        if optimize and (s.is_fully_defined() or
                         (s.ndims is not None and any(d.value == 0 for d in s.dims))):
            n = s.num_elements() if s.is_fully_defined() else 0
            return constant(np.asarray(n, out_type.as_numpy_dtype), out_type, name=scope)
        return make_tensor("Size", [x], {"out_type": out_type}, name=scope)


@register_op("Rank", dtype_fn=fixed_dtype(_dtypes.int32))
def _rank_shape(op, x):
    return [TensorShape([])]


def rank(input, name: str | None = None, optimize: bool = True):
    """The number of dimensions of `input` as a scalar int32 tensor.

    With `optimize`, a constant when the rank is known statically, as TensorFlow builds
    it; otherwise a ``Rank`` op.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.rank(tf.zeros([2, 3])).op.type
    'Const'
    >>> tf.rank(tf.placeholder(tf.float32)).op.type
    'Rank'
    """
    with name_scope(name, "Rank", [input]) as scope:
        dense_shape = _sparse_dense_shape(input)
        if dense_shape is not None:
            return make_tensor("Size", [dense_shape], {"out_type": _dtypes.int32}, name=scope)
        x = convert_to_tensor(input)
        if optimize and x.shape.ndims is not None:
            return constant(np.int32(x.shape.ndims), _dtypes.int32, name=scope)
        return make_tensor("Rank", [x], name=scope)


not_differentiable("Shape", "ShapeN", "Size", "Rank")


# -- Reshape ------------------------------------------------------------------------------
@register_op("Reshape")
def _reshape_shape(op, x, shape_shape):
    if shape_shape.ndims not in (None, 1):
        raise op.shape_error(f"the shape argument must be a 1-D tensor, got rank "
                             f"{shape_shape.ndims}")
    elems = static_elements(op.inputs[1])
    if elems is None:
        return [TensorShape(None)]
    if sum(1 for e in elems if e == -1 and isinstance(e, int)) > 1:
        return [TensorShape([None] * len(elems))]  # fails when it runs, as in TensorFlow
    bad = [e for e in elems if isinstance(e, int) and e < -1]
    if bad:
        raise op.shape_error(f"shape entries must be >= -1, got {bad[0]}")
    out = [e if isinstance(e, int) and e >= 0 else None for e in elems]
    if x.ndims is None:
        return [TensorShape(out)]
    # As TensorFlow infers it: at most one unknown dimension on each side, matched by the
    # element counts of the known ones; a symbolic `shape(x)[i]` entry counts as unknown.
    in_dims = [d.value for d in x.dims]
    unknown_out = [i for i, o in enumerate(out) if o is None]
    unknown_in = [i for i, d in enumerate(in_dims) if d is None]
    if len(unknown_out) > 1 or len(unknown_in) > 1:
        return [TensorShape(out)]
    n_in = int(np.prod([d for d in in_dims if d is not None], dtype=np.int64))
    known = int(np.prod([o for o in out if o is not None], dtype=np.int64))
    if unknown_in and not unknown_out:
        if n_in and known % n_in:
            raise op.shape_error(
                f"cannot reshape a tensor of shape {x} into {out}: the known input "
                f"dimensions hold {n_in} elements per unknown one, which does not "
                f"divide the {known} elements requested")
        return [TensorShape(out)]
    if unknown_in:  # one unknown on each side: equal when the known parts hold as many
        if n_in == known:
            out[unknown_out[0]] = in_dims[unknown_in[0]]
        return [TensorShape(out)]
    if not unknown_out:
        if n_in != known:
            raise op.shape_error(
                f"Cannot reshape a tensor with {n_in} elements (shape {x}) to shape "
                f"{_fmt(elems)} ({known} elements)")
        return [TensorShape(out)]
    if known == 0:
        if n_in != 0:
            raise op.shape_error(
                f"Cannot reshape a tensor with {n_in} elements (shape {x}) to shape "
                f"{_fmt(elems)} (0 elements)")
        return [TensorShape(out)]
    if n_in % known:
        raise op.shape_error(
            f"Cannot reshape a tensor with {n_in} elements (shape {x}) to shape "
            f"{_fmt(elems)}: {n_in} is not divisible by {known}")
    out[unknown_out[0]] = n_in // known
    return [TensorShape(out)]


def _fmt(elems) -> str:
    return "[" + ", ".join("?" if not isinstance(e, int) else str(e) for e in elems) + "]"


def reshape(tensor, shape, name: str | None = None):
    """A tensor with the values of `tensor` in the shape `shape` (one entry may be -1).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.reshape(tf.zeros([2, 3, 4]), [-1, 4]).shape.as_list()
    [6, 4]
    """
    with op_scope(name, "Reshape", (tensor, shape)) as scope:
        x = convert_to_tensor(tensor, name="tensor")
        s = _shape_tensor(shape, name="shape")
        return make_tensor("Reshape", [x, s], name=scope)


def _shape_tensor(shape, allow_int: bool = False, name: str | None = None) -> Tensor:
    if allow_int and isinstance(shape, int | np.integer):
        shape = [int(shape)]
    if isinstance(shape, TensorShape):
        if not shape.is_fully_defined():
            msg = f"Cannot convert a partially known TensorShape {shape} to a Tensor."
            # TensorFlow names the op input that failed to convert (Reshape's `shape`).
            raise ValueError(f"Tried to convert '{name}' to a tensor and failed. Error: {msg}"
                             if name else msg)
        shape = shape.as_list()
    if isinstance(shape, list | tuple) and not shape:
        return convert_to_tensor(np.zeros([0], np.int32), name=name)
    return convert_to_tensor(shape, preferred_dtype=_dtypes.int32, name=name)


# -- ExpandDims, Squeeze ------------------------------------------------------------------
@register_op("ExpandDims")
def _expand_dims_shape(op, x, dim):
    value = constant_value(op.inputs[1])
    if value is not None and np.size(value) != 1:
        raise op.shape_error(f"'dim' input must be a tensor with a single value, got "
                             f"{np.size(value)} values")
    # TF takes a one-element vector too; with the axis unknown, so is the rank (as TF).
    axis = None if value is None else int(np.reshape(value, [-1])[0])
    if x.ndims is None or axis is None:
        return [TensorShape(None)]
    if not -(x.ndims + 1) <= axis <= x.ndims:
        raise op.shape_error(f"dim {axis} not in the interval [{-(x.ndims + 1)}, {x.ndims}]")
    if axis < 0:
        axis += x.ndims + 1
    dims = x.dims
    return [TensorShape([*dims[:axis], 1, *dims[axis:]])]


def expand_dims(input, axis=None, name: str | None = None, dim=None):
    """Insert a dimension of size 1 at `axis` (TF1 also accepts the alias `dim`).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.expand_dims(tf.zeros([2, 3]), -1).shape.as_list()
    [2, 3, 1]
    """
    if axis is not None and dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'dim' in tf.expand_dims")
    axis = dim if axis is None else axis
    if axis is None:
        raise ValueError("Must specify an axis argument to tf.expand_dims()")
    with op_scope(name, "ExpandDims", (input, axis)) as scope:
        x = convert_to_tensor(input, name="input")
        dim_t = convert_to_tensor(axis, preferred_dtype=_dtypes.int32, name="dim")
        return make_tensor("ExpandDims", [x, dim_t], name=scope)


@register_op("Squeeze", attrs={"squeeze_dims": []})
def _squeeze_shape(op, x):
    axes = list(op.attrs["squeeze_dims"])
    if x.ndims is None:
        return [TensorShape(None)]
    dims = [d.value for d in x.dims]
    if not axes:
        if any(d is None for d in dims):
            return [TensorShape(None)]
        return [TensorShape([d for d in dims if d != 1])]
    norm = set()
    for a in axes:
        if not -len(dims) <= a < len(dims):
            raise op.shape_error(f"squeeze axis {a} is out of range for rank {len(dims)}")
        a = a + len(dims) if a < 0 else a
        if dims[a] is not None and dims[a] != 1:
            raise op.shape_error(
                f"Can not squeeze dim[{a}], expected a dimension of 1, got {dims[a]}")
        norm.add(a)
    return [TensorShape([d for i, d in enumerate(dims) if i not in norm])]


def squeeze(input, axis=None, name: str | None = None, squeeze_dims=None):
    """Remove dimensions of size 1 (all of them, or those in `axis`; alias `squeeze_dims`).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.squeeze(tf.zeros([1, 2, 1, 3]), axis=[2]).shape.as_list()
    [1, 2, 3]
    """
    if axis is not None and squeeze_dims is not None:
        raise ValueError("Cannot specify both 'axis' and 'squeeze_dims' in tf.squeeze")
    axis = squeeze_dims if axis is None else axis
    if axis is None:
        axis = []
    elif isinstance(axis, int | np.integer):
        axis = [int(axis)]
    with op_scope(name, "Squeeze", (input,)) as scope:
        x = convert_to_tensor(input, name="input")
        return make_tensor("Squeeze", [x], {"squeeze_dims": [int(a) for a in axis]},
                           name=scope)


# -- Transpose ----------------------------------------------------------------------------
def _transpose_shape(op, x, perm_shape):
    perm = constant_value(op.inputs[1])
    n = perm_shape[0].value if perm_shape.ndims == 1 else None
    if x.ndims is not None and n is not None and n != x.ndims:
        raise op.shape_error(f"perm has {n} entries but the input has rank {x.ndims}")
    if perm is None:
        r = x.ndims if x.ndims is not None else n
        return [TensorShape(None if r is None else [None] * r)]
    perm = [int(p) for p in perm]
    if any(not -len(perm) <= p < len(perm) for p in perm):
        raise op.shape_error(f"perm {perm}: an entry is out of range for rank {len(perm)}")
    if x.ndims is None:
        return [TensorShape([None] * len(perm))]
    # a repeated entry fails when it runs, as in TensorFlow
    return [TensorShape([x.dims[p] for p in perm])]


register_op("Transpose")(_transpose_shape)
register_op("ConjugateTranspose")(_transpose_shape)


def transpose(a, perm=None, name: str = "transpose", conjugate: bool = False):
    """Permute the dimensions of `a` (default: reverse them); `conjugate` also conjugates
    complex values.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.transpose(tf.zeros([2, 3, 4])).shape.as_list()
    [4, 3, 2]
    """
    # TensorFlow always opens the scope here: a default perm is the constant `<name>/perm`.
    with name_scope(name, "transpose", [a]) as scope:
        # an IndexedSlices (a gather's gradient) is converted as the op's input "x", as
        # TensorFlow's wrapper leaves it to the op builder
        x = convert_to_tensor(a, name="x" if isinstance(a, IndexedSlices) else "a")
        if perm is None:
            if x.shape.ndims is not None:
                perm = convert_to_tensor(np.arange(x.shape.ndims - 1, -1, -1, dtype=np.int32),
                                         name="perm")
            else:
                r = make_tensor("Rank", [x])
                zero, one = convert_to_tensor(0), convert_to_tensor(1)
                seq = make_tensor("Range", [zero, r, one])
                perm = make_tensor("ReverseV2", [seq, convert_to_tensor([0])], name="perm")
        else:
            perm = convert_to_tensor(perm, preferred_dtype=_dtypes.int32, name="perm")
        op_type = "ConjugateTranspose" if conjugate and x.dtype.is_complex else "Transpose"
        return make_tensor(op_type, [x, perm], name=scope)


# -- Fill, zeros, ones ----------------------------------------------------------------------
@register_op("Fill", dtype_fn=lambda op: [op.inputs[1].dtype.base_dtype])
def _fill_shape(op, dims, value):
    if dims.ndims not in (None, 1):
        raise op.shape_error(f"dims must be a 1-D tensor, got rank {dims.ndims}")
    if value.ndims not in (None, 0):
        raise op.shape_error(f"value must be a scalar, got shape {value}")
    known = constant_value(op.inputs[0])
    if known is not None and np.ndim(known) == 1 and (np.asarray(known) < 0).any():
        bad = int(np.asarray(known)[np.asarray(known) < 0][0])
        raise op.shape_error(f"Invalid value in tensor used for shape: {bad} (Fill "
                             f"dimensions must be >= 0, got {np.asarray(known).tolist()})")
    out = static_shape_of(op.inputs[0])
    if out.ndims is None and dims.ndims == 1 and dims[0].value is not None:
        out = TensorShape([None] * dims[0].value)
    return [out]


def fill(dims, value, name: str | None = None):
    """A tensor of shape `dims` with every element equal to scalar `value`.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.fill([2, 3], 9).dtype.name
    'int32'
    """
    with op_scope(name, "Fill", (dims, value)) as scope:
        dims_t = _shape_tensor(dims, name="dims")
        value = convert_to_tensor(value, name="value")
        return make_tensor("Fill", [dims_t, value], name=scope)


def _scalar(dtype, one: bool):
    """The NumPy zero or one of `dtype` (b"" for a string zero) and the base dtype."""
    dtype = _dtypes.as_dtype(dtype).base_dtype
    if dtype == _dtypes.string:
        if one:
            raise TypeError("tf.ones/ones_like are not defined for string tensors")
        return b"", dtype
    return (np.ones if one else np.zeros)((), dtype.as_numpy_dtype), dtype


def _zero(dtype):
    value, dtype = _scalar(dtype, False)
    return convert_to_tensor(value, dtype=dtype)


def _one(dtype):
    value, dtype = _scalar(dtype, True)
    return convert_to_tensor(value, dtype=dtype)


_SMALL_CONSTANT = 1000  # TensorFlow's limit for making tf.zeros/tf.ones one constant


def _filled(shape, dtype, name, default_name, one: bool):
    """`tf.zeros`/`tf.ones` as TensorFlow builds them: in the scope `default_name`, one
    constant named like the scope for a static shape of under 1,000 elements, else a Fill
    of the shape (`<scope>/shape_as_tensor` when static) and the scalar `<scope>/Const`."""
    with name_scope(name, default_name, [shape]) as scope:
        dims = None
        if not isinstance(shape, Tensor):
            if isinstance(shape, int | np.integer):
                shape = [int(shape)]
            try:
                dims = as_shape(shape)
            except (TypeError, ValueError):
                dims = None  # a list holding tensors: packed below
        value, dtype = _scalar(dtype, one)
        if dims is not None and dims.is_fully_defined():
            if dims.num_elements() < _SMALL_CONSTANT:
                # dense (not a broadcast view): at most 999 elements
                arr = np.full(dims.as_list(), value, dtype=object if dtype == _dtypes.string
                              else dtype.as_numpy_dtype)
                return constant(arr, dtype=dtype, name=scope)
            shape_t = convert_to_tensor(dims)
        else:
            shape_t = _shape_tensor(shape, True)
        if shape_t.shape.ndims == 0:  # as TensorFlow: a scalar shape is made a vector
            shape_t = reshape(shape_t, [-1])
        return make_tensor("Fill", [shape_t, convert_to_tensor(value, dtype=dtype)], name=scope)


def zeros(shape, dtype=_dtypes.float32, name: str | None = None):
    """A tensor of zeros; `shape` is a list, tuple, TensorShape or 1-D int tensor.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.zeros([2, 3]).shape.as_list(), tf.zeros([2], tf.int32).dtype.name
    ([2, 3], 'int32')
    """
    return _filled(shape, dtype, name, "zeros", one=False)


def ones(shape, dtype=_dtypes.float32, name: str | None = None):
    """A tensor of ones; `shape` is a list, tuple, TensorShape or 1-D int tensor.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.ones([2, 3], tf.bool).dtype.name
    'bool'
    """
    return _filled(shape, dtype, name, "ones", one=True)


@register_op("ZerosLike")
def _zeros_like_shape(op, x):
    return [x]


@register_op("OnesLike")
def _ones_like_shape(op, x):
    return [x]


not_differentiable("ZerosLike", "OnesLike")


def zeros_like(tensor, dtype=None, name: str | None = None, optimize: bool = True):
    """Zeros with the shape of `tensor` (and its dtype, unless `dtype` is given).

    Built as TensorFlow builds it: with `optimize` and a static shape, `tf.zeros` of that
    shape (one constant when small); otherwise a `ZerosLike` op (a `Fill` of the shape for
    another dtype). Gradient code passes `optimize=False`: the gradients of conditionals
    and loops rely on a zero that is dead when `tensor` is (`control_flow_grad`).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.zeros_like(tf.zeros([2, 3]), dtype=tf.int32).op.type
    'Const'
    >>> tf.zeros_like(tf.placeholder(tf.float32, [None, 3])).op.type
    'ZerosLike'
    >>> tf.zeros_like(tf.placeholder(tf.float32, [2, 3]), optimize=False).op.type
    'ZerosLike'
    """
    if (h := handler_for("unary", tensor)) is not None:  # a RaggedTensor
        return h(lambda v, name=None: zeros_like(v, dtype, name, optimize), tensor, name=name)
    with name_scope(name, "zeros_like", [tensor]) as scope:
        x = convert_to_tensor(tensor, name="tensor")
        base = x.dtype.base_dtype
        dt = base if dtype is None else _dtypes.as_dtype(dtype).base_dtype
        if optimize and x.shape.is_fully_defined() and base != _dtypes.variant:
            return _filled(x.shape, dt, scope, "zeros", one=False)
        if dt != base:
            dims = (constant(np.asarray(x.shape.as_list(), np.int32), _dtypes.int32)
                    if optimize and x.shape.is_fully_defined() else shape(x, optimize=False))
            return make_tensor("Fill", [dims, _zero(dt)], name=scope)
        return make_tensor("ZerosLike", [x], name=scope)


def ones_like(tensor, dtype=None, name: str | None = None, optimize: bool = True):
    """Ones with the shape of `tensor` (and its dtype, unless `dtype` is given).

    Built as TensorFlow builds it: a `Fill` of the shape (a constant when static and
    `optimize`, else a `Shape` op) with the scalar one.

    Example
    -------
    >>> import flowgraph as tf
    >>> y = tf.ones_like([1, 2])
    >>> y.op.type, y.shape.as_list()
    ('Fill', [2])
    """
    if (h := handler_for("unary", tensor)) is not None:  # a RaggedTensor
        return h(lambda v, name=None: ones_like(v, dtype, name, optimize), tensor, name=name)
    with name_scope(name, "ones_like", [tensor]) as scope:
        x = convert_to_tensor(tensor, name="tensor")
        dt = x.dtype.base_dtype if dtype is None else _dtypes.as_dtype(dtype).base_dtype
        if optimize and x.shape.is_fully_defined():
            with name_scope(None, "Shape"):
                dims = constant(np.asarray(x.shape.as_list(), np.int32), _dtypes.int32,
                                name="shape_as_tensor")
        else:
            dims = shape(x, name="Shape", optimize=False)
        value, dt = _scalar(dt, True)
        out = make_tensor("Fill", [dims, constant(value, dtype=dt, name="Const")], name=scope)
        out.set_shape(x.shape)
        return out


# -- constant evaluators ----------------------------------------------------------------------
@register_constant_evaluator("Shape")
def _eval_shape(op, index):
    s = op.inputs[0].shape
    if not s.is_fully_defined():
        return None
    return np.asarray(s.as_list(), dtype=op.attrs["out_type"].as_numpy_dtype)


@register_constant_evaluator("ShapeN")
def _eval_shape_n(op, index):
    s = op.inputs[index].shape
    if not s.is_fully_defined():
        return None
    return np.asarray(s.as_list(), dtype=op.attrs["out_type"].as_numpy_dtype)


@register_constant_evaluator("Size")
def _eval_size(op, index):
    n = op.inputs[0].shape.num_elements()
    return None if n is None else np.asarray(n, dtype=op.attrs["out_type"].as_numpy_dtype)


@register_constant_evaluator("Rank")
def _eval_rank(op, index):
    r = op.inputs[0].shape.ndims
    return None if r is None else np.asarray(r, dtype=np.int32)


@register_constant_evaluator("Identity")
def _eval_identity(op, index):
    return constant_value(op.inputs[0])


@register_constant_evaluator("Reshape")
def _eval_reshape(op, index):
    v, s = constant_value(op.inputs[0]), constant_value(op.inputs[1])
    if v is None or s is None:
        return None
    return np.reshape(v, [int(d) for d in s])


@register_constant_evaluator("ExpandDims")
def _eval_expand_dims(op, index):
    v, a = constant_value(op.inputs[0]), constant_value(op.inputs[1])
    if v is None or a is None or np.size(a) != 1:
        return None
    return np.expand_dims(v, int(np.reshape(a, [-1])[0]))


@register_constant_evaluator("Squeeze")
def _eval_squeeze(op, index):
    v = constant_value(op.inputs[0])
    if v is None:
        return None
    axes = tuple(op.attrs["squeeze_dims"]) or None
    return np.squeeze(v, axis=axes)


@register_constant_evaluator("Fill")
def _eval_fill(op, index):
    dims, value = constant_value(op.inputs[0]), constant_value(op.inputs[1])
    if dims is None or value is None or np.prod(dims) > MAX_EVAL_ELEMENTS:
        return None
    return np.full([int(d) for d in dims], value, dtype=np.asarray(value).dtype)

