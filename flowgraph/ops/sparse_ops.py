"""Sparse ops: densify, reorder, fill empty rows, reshape, reduce and multiply `SparseTensor`s;
``SparseSegment{Sum,Mean,SqrtN}`` (the reductions behind embedding lookups); `Bucketize`;
hashed feature crosses (`tf.sparse.cross_hashed`).

A `SparseTensor` enters an op as its three tensors (indices, values, dense_shape); an op
producing a sparse result has one output per part. Gradients (values only, never indices)
live in `flowgraph/ops/sparse_grad.py`; the segment reductions' gradients are
`IndexedSlices`, so a reduction over rows of a huge table never densifies the table.
Kernels: `flowgraph/backends/cpu/kernels_sparse.py`.

    sparse_segment_sum(data, indices=[0, 2, 2], segment_ids=[0, 0, 1])
      out[0] = data[0] + data[2]          out[1] = data[2]

Example
-------
>>> import flowgraph as tf
>>> sp = tf.SparseTensor([[0, 1], [2, 0]], [5, 6], [3, 2])
>>> with tf.Session() as sess:
...     print(sess.run(tf.sparse.to_dense(sp)))
[[0 5]
 [0 0]
 [6 0]]
"""

from __future__ import annotations

import itertools

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import (
    constant,
    constant_value,
    constant_value_as_shape,
    convert_to_tensor,
    register_constant_evaluator,
)
from flowgraph.framework.graph import name_scope
from flowgraph.framework.operation import Tensor
from flowgraph.framework.registry import OpCost, not_differentiable, register_op
from flowgraph.framework.sparse_tensor import (
    SparseTensor,
    SparseTensorValue,
    convert_to_sparse_tensor,
)
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops import array_ops, math_ops
from flowgraph.ops.array_static import static_elements
from flowgraph.ops.math_reduce import reduce_max
from flowgraph.ops.op_util import fixed_dtype, make_op, make_tensor

__all__ = [
    "sparse_concat",
    "sparse_fill_empty_rows",
    "sparse_reduce_sum",
    "sparse_reorder",
    "sparse_reshape",
    "sparse_retain",
    "sparse_segment_mean",
    "sparse_segment_sqrt_n",
    "sparse_segment_sum",
    "sparse_tensor_dense_matmul",
    "sparse_tensor_to_dense",
    "sparse_to_dense",
]

_I64 = _dtypes.int64


def _vec(n=None) -> TensorShape:
    return TensorShape([n])


def _nnz(indices: TensorShape):
    return indices[0] if indices.ndims else None


def _rank_of(indices: TensorShape, shape: TensorShape):
    r = indices[1].value if indices.ndims == 2 else None
    return r if r is not None else (shape[0].value if shape.ndims == 1 else None)


def _sp(sp_input, name="sp_input") -> SparseTensor:
    return convert_to_sparse_tensor(sp_input, name)


# -- SparseToDense --------------------------------------------------------------------------
@register_op("SparseToDense", attrs={"validate_indices": True},
             dtype_fn=lambda op: [op.inputs[2].dtype.base_dtype])
def _sparse_to_dense_shape(op, indices, output_shape, values, default_value):
    if default_value.ndims not in (None, 0):
        raise op.shape_error(f"default_value must be a scalar, got shape {default_value}")
    if op.inputs[2].dtype.base_dtype != op.inputs[3].dtype.base_dtype:
        raise op.shape_error(f"default_value has dtype {op.inputs[3].dtype.name}, values have "
                             f"{op.inputs[2].dtype.name}")
    return [constant_value_as_shape(op.inputs[1])]


def sparse_to_dense(sparse_indices, output_shape, sparse_values, default_value=0,
                    validate_indices: bool = True, name: str | None = None):
    """A dense tensor of `output_shape` holding `sparse_values` at `sparse_indices` and
    `default_value` elsewhere (TF's deprecated low-level form of `tf.sparse.to_dense`).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.sparse_to_dense([[0, 1]], [2, 3], [7]).shape.as_list()
    [2, 3]
    """
    with name_scope(name, "SparseToDense", [sparse_indices, sparse_values]) as scope:
        # As TF: a plain-list argument takes the int type of the other one when a tensor.
        hint = output_shape.dtype.base_dtype if isinstance(output_shape, Tensor) and \
            not isinstance(sparse_indices, Tensor) else _I64
        idx = convert_to_tensor(sparse_indices, preferred_dtype=hint, name="sparse_indices")
        values = convert_to_tensor(sparse_values, name="sparse_values")
        shape = convert_to_tensor(output_shape, dtype=None if isinstance(
            output_shape, Tensor) else idx.dtype, name="output_shape")
        if shape.dtype.base_dtype != idx.dtype.base_dtype:
            raise TypeError(
                f"Input 'output_shape' of 'SparseToDense' Op has type "
                f"{shape.dtype.base_dtype.name} that does not match type "
                f"{idx.dtype.base_dtype.name} of argument 'sparse_indices'; cast one of them "
                f"(tf.cast) so both are int32 or both int64")
        default = convert_to_tensor(default_value, dtype=values.dtype.base_dtype,
                                    name="default_value")
        return make_tensor("SparseToDense", [idx, shape, values, default],
                           {"validate_indices": bool(validate_indices)}, name=scope)


def sparse_tensor_to_dense(sp_input, default_value=None, validate_indices: bool = True,
                           name: str | None = None):
    """The dense tensor of `sp_input`, `default_value` (0 / '' by default) where unset.

    Example
    -------
    >>> import flowgraph as tf
    >>> sp = tf.SparseTensor([[1]], ["x"], [3])
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.sparse.to_dense(sp)))
    [b'' b'x' b'']
    """
    sp = _sp(sp_input)
    if default_value is None:
        default_value = b"" if sp.dtype.base_dtype == _dtypes.string else 0
    return sparse_to_dense(sp.indices, sp.dense_shape, sp.values, default_value,
                           validate_indices, name=name or "SparseToDense")


def sparse_from_dense(tensor, name: str | None = None) -> SparseTensor:
    """The `SparseTensor` of the nonzero (non-empty for strings) entries of `tensor`.

    Example
    -------
    >>> import flowgraph as tf
    >>> sp = tf.sparse.from_dense([[0, 3], [4, 0]])
    >>> with tf.Session() as sess:
    ...     print(sess.run(sp.values))
    [3 4]
    """
    with name_scope(name, "dense_to_sparse", [tensor]):
        t = convert_to_tensor(tensor)
        zero = b"" if t.dtype.base_dtype == _dtypes.string else 0
        indices = array_ops.where(math_ops.not_equal(t, constant(zero, t.dtype.base_dtype)))
        values = array_ops.gather_nd(t, indices)
        shape = array_ops.shape(t, out_type=_I64)
        return SparseTensor(indices, values, shape)


# -- SparseReorder, SparseReshape, SparseFillEmptyRows, retain, concat ----------------------
@register_op("SparseReorder", num_outputs=2,
             dtype_fn=lambda op: [_I64, op.inputs[1].dtype.base_dtype])
def _sparse_reorder_shape(op, indices, values, shape):
    return [TensorShape([_nnz(indices), _rank_of(indices, shape)]), _vec(_nnz(indices))]


def sparse_reorder(sp_input, name: str | None = None) -> SparseTensor:
    """The same sparse tensor with its entries in row-major (canonical) order.

    Example
    -------
    >>> import flowgraph as tf
    >>> sp = tf.sparse.reorder(tf.SparseTensor([[1, 0], [0, 2]], [1.0, 2.0], [2, 3]))
    >>> with tf.Session() as sess:
    ...     print(sess.run(sp.values))
    [2. 1.]
    """
    sp = _sp(sp_input)
    op = make_op("SparseReorder", [sp.indices, sp.values, sp.dense_shape],
                 name=name or "SparseReorder")
    # As TensorFlow: a known shape becomes a new constant dense shape, else an Identity.
    static = sp.shape
    if static.is_fully_defined():
        return SparseTensor(op.outputs[0], op.outputs[1], static.as_list())
    out = SparseTensor(op.outputs[0], op.outputs[1], array_ops.identity(sp.dense_shape))
    out._shape_hint = static
    return out


@register_op("SparseReshape", num_outputs=2, dtype_fn=fixed_dtype(_I64, _I64))
def _sparse_reshape_shape(op, indices, shape, new_shape):
    return [TensorShape([_nnz(indices), new_shape[0] if new_shape.ndims == 1 else None]),
            new_shape]


def sparse_reshape(sp_input, shape, name: str | None = None) -> SparseTensor:
    """`sp_input` with a new dense shape (one dimension may be -1), entries in the same
    row-major positions.

    Example
    -------
    >>> import flowgraph as tf
    >>> sp = tf.sparse.reshape(tf.SparseTensor([[0, 5]], [1], [2, 6]), [-1, 4])
    >>> with tf.Session() as sess:
    ...     print(sess.run(sp.indices))
    [[1 1]]
    """
    sp = _sp(sp_input)
    with name_scope(name, "SparseReshape", [sp.values]) as scope:
        new_shape = convert_to_tensor(shape, dtype=None if isinstance(shape, Tensor) else _I64,
                                      name="shape")
        op = make_op("SparseReshape", [sp.indices, sp.dense_shape, new_shape], name=scope)
        dense_shape = op.outputs[1]
        wanted = constant_value_as_shape(new_shape)
        if wanted.ndims is not None and sp.shape.is_fully_defined():
            dense_shape = _static_reshape_shape(sp.shape, wanted, new_shape, dense_shape)
        # As TensorFlow: the values pass through an Identity in the op's scope.
        out = SparseTensor(op.outputs[0], array_ops.identity(sp.values), dense_shape)
    return out


def _static_reshape_shape(known, wanted, new_shape, dense_shape):
    """TensorFlow's build-time check of a reshape of a fully known sparse shape: the
    element counts must agree, and a shape it can complete becomes a constant."""
    given = constant_value(new_shape)
    if given is not None and int(np.sum(np.reshape(given, -1) == -1)) > 1:
        raise ValueError("At most one dimension can be inferred (-1). Found: "
                         f"{np.reshape(given, -1)}")
    dims = wanted.as_list()
    size = int(np.prod(known.as_list()))
    implied = [i for i, d in enumerate(dims) if d is None]
    rest = int(np.prod([d for d in dims if d is not None]))
    if len(implied) == 1 and rest:
        dims[implied[0]] = size // rest
    if not implied or (len(implied) == 1 and rest and size % rest == 0):
        if int(np.prod(dims)) != size:
            raise ValueError(f"Cannot reshape a tensor with {size} elements to shape "
                             f"{wanted.as_list()} ({int(np.prod(dims))} elements).")
        return constant(np.asarray(dims, np.int64))
    return dense_shape


@register_op("SparseFillEmptyRows", num_outputs=4,
             dtype_fn=lambda op: [_I64, op.inputs[1].dtype.base_dtype, _dtypes.bool, _I64])
def _fill_empty_rows_shape(op, indices, values, shape, default_value):
    if default_value.ndims not in (None, 0):
        raise op.shape_error(f"default_value must be a scalar, got shape {default_value}")
    rank = _rank_of(indices, shape)
    rows = static_elements(op.inputs[2])
    n_rows = rows[0] if rows and isinstance(rows[0], int) and rows[0] >= 0 else None
    return [TensorShape([None, rank]), _vec(), _vec(n_rows), _vec(_nnz(indices))]


@register_op("SparseFillEmptyRowsGrad", num_outputs=2,
             dtype_fn=lambda op: [op.inputs[1].dtype.base_dtype] * 2)
def _fill_empty_rows_grad_shape(op, reverse_index_map, grad_values):
    return [reverse_index_map, TensorShape([])]


def sparse_fill_empty_rows(sp_input, default_value, name: str | None = None):
    """Give every empty row of `sp_input` one entry ``[row, 0, ...] = default_value``.

    Returns ``(sp_output, empty_row_indicator)``: the filled tensor (row-major order) and
    a bool vector, True for the rows that were empty.

    Example
    -------
    >>> import flowgraph as tf
    >>> sp, empty = tf.sparse.fill_empty_rows(tf.SparseTensor([[1, 0]], [4], [3, 2]), -1)
    >>> with tf.Session() as sess:
    ...     print(sess.run([sp.values, empty]))
    [array([-1,  4, -1], dtype=int32), array([ True, False,  True])]
    """
    with name_scope(name, "SparseFillEmptyRows", [sp_input]):
        sp = _sp(sp_input)
        default = convert_to_tensor(default_value, dtype=sp.dtype.base_dtype)
        # TensorFlow builds the op inside its scope under the type's name; the result's
        # static shape comes from the dense-shape tensor alone.
        op = make_op("SparseFillEmptyRows", [sp.indices, sp.values, sp.dense_shape, default],
                     name="SparseFillEmptyRows")
        return SparseTensor(op.outputs[0], op.outputs[1], sp.dense_shape), op.outputs[2]


def sparse_retain(sp_input, to_retain, name: str | None = None) -> SparseTensor:
    """The entries of `sp_input` where the bool vector `to_retain` is True.

    Example
    -------
    >>> import flowgraph as tf
    >>> sp = tf.sparse_retain(tf.SparseTensor([[0], [2]], [1, 2], [3]), [False, True])
    >>> with tf.Session() as sess:
    ...     print(sess.run(sp.values))
    [2]
    """
    sp = _sp(sp_input)
    # As TensorFlow: no name scope (`name` is accepted and unused), the dense shape passed
    # through an Identity.
    del name
    keep = convert_to_tensor(to_retain, dtype=_dtypes.bool)
    if keep.shape.ndims not in (None, 1):
        raise ValueError(f"sparse_retain: to_retain must be a vector, got shape {keep.shape}")
    n_values = sp.values.shape[0] if sp.values.shape.ndims else None
    if not keep.shape[0].is_compatible_with(n_values):
        raise ValueError(f"sparse_retain: to_retain has {keep.shape[0]} entries but the "
                         f"sparse tensor has {n_values} values")
    where = array_ops.reshape(array_ops.where(keep), [-1])
    return SparseTensor(array_ops.gather(sp.indices, where),
                        array_ops.gather(sp.values, where), array_ops.identity(sp.dense_shape))


def sparse_concat(axis=None, sp_inputs=None, name: str | None = None,
                  expand_nonconcat_dim: bool = False, concat_dim=None,
                  expand_nonconcat_dims=None) -> SparseTensor:
    """Concatenate sparse tensors of equal rank along `axis` (other dimensions must match
    unless `expand_nonconcat_dim`, which takes their maximum). Output in row-major order.

    Example
    -------
    >>> import flowgraph as tf
    >>> a = tf.SparseTensor([[0, 0]], [1], [2, 2])
    >>> b = tf.SparseTensor([[1, 0]], [2], [2, 3])
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.sparse.concat(1, [a, b]).indices))
    [[0 0]
     [1 2]]
    """
    # `concat_dim` and `expand_nonconcat_dims` are TF's older names of the arguments.
    if axis is not None and concat_dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'concat_dim'")
    axis = concat_dim if axis is None else axis
    if axis is None:
        raise ValueError("sparse_concat: give `axis`")
    if expand_nonconcat_dims is not None:
        expand_nonconcat_dim = expand_nonconcat_dims
    sps = [_sp(s, "sp_inputs") for s in sp_inputs or []]
    if not sps:
        raise ValueError("sparse_concat: sp_inputs is empty")
    if len(sps) == 1:  # as TensorFlow: one input comes back unchanged
        return sps[0]
    statics = [s.shape for s in sps]
    ranks = {sh.ndims for sh in statics} - {None}
    if len(ranks) > 1:
        raise ValueError(f"sparse_concat: inputs must have equal ranks, got "
                         f"{[str(sh) for sh in statics]}")
    axis = int(axis)
    shapes = [s.dense_shape for s in sps]
    # As TensorFlow, no name scope: the helper ops sit where the call is made and the op
    # takes `name` (the axis attribute keeps its sign; the kernel wraps it).
    if expand_nonconcat_dim:  # every other axis takes the largest size among the inputs
        largest = reduce_max(
            array_ops.concat([array_ops.reshape(sh, [1, -1]) for sh in shapes], 0), 0)
        shapes = [array_ops.concat([largest[:axis], sh[-1:] if axis == -1 else
                                    sh[axis:axis + 1], [] if axis == -1 else
                                    largest[axis + 1:]], 0) for sh in shapes]
    op = make_op("SparseConcat", [s.indices for s in sps] + [s.values for s in sps]
                 + shapes, {"concat_dim": axis, "N": len(sps)}, name=name or "SparseConcat")
    out = SparseTensor(op.outputs[0], op.outputs[1], op.outputs[2])
    if not ranks:
        return out
    rank = ranks.pop()
    if not -rank <= axis < rank:
        raise ValueError(f"sparse_concat: axis {axis} is out of range for rank {rank}")
    dims = [[sh[d].value for sh in statics] for d in range(rank)]
    static = ([None if None in col else max(col) for col in dims] if expand_nonconcat_dim
              else [col[0] for col in dims])
    along = dims[axis % rank]
    static[axis % rank] = None if None in along else sum(along)
    if all(sh.is_fully_defined() for sh in statics):  # TensorFlow's constant dense shape
        return SparseTensor(out.indices, out.values, constant(np.array(static, np.int64)))
    if all(sh.ndims is not None for sh in statics):
        out._shape_hint = TensorShape(static)
    return out


# -- SparseReduceSum, SparseTensorDenseMatMul ---------------------------------------------
@register_op("SparseReduceSum", attrs={"keep_dims": False},
             dtype_fn=lambda op: [op.inputs[1].dtype.base_dtype])
def _sparse_reduce_sum_shape(op, indices, values, shape, axes_shape):
    # As TensorFlow: a known result needs the whole dense shape as a constant value (a
    # partly known one, e.g. a sparse placeholder's, gives an unknown shape).
    value = constant_value(op.inputs[2])
    axes = constant_value(op.inputs[3])
    if value is None or axes is None:
        return [TensorShape(None)]
    dims = TensorShape([int(d) for d in np.reshape(value, -1)])
    rank = dims.ndims
    red = {int(a) % rank if rank else int(a) for a in np.reshape(axes, -1)}
    if op.attrs["keep_dims"]:
        return [TensorShape([1 if i in red else d for i, d in enumerate(dims.as_list())])]
    return [TensorShape([d for i, d in enumerate(dims.as_list()) if i not in red])]


def sparse_reduce_sum(sp_input, axis=None, keepdims=None, reduction_axes=None,
                      keep_dims=None, name: str | None = None):
    """Sum of the entries of `sp_input` over `axis` (all axes by default): a dense tensor.

    Example
    -------
    >>> import flowgraph as tf
    >>> sp = tf.SparseTensor([[0, 1], [1, 0], [1, 2]], [1.0, 2.0, 3.0], [2, 3])
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.sparse.reduce_sum(sp, axis=1)))
    [1. 5.]
    """
    sp = _sp(sp_input)
    if axis is None:
        axis = reduction_axes
    keep = bool(keepdims if keepdims is not None else (keep_dims or False))
    if axis is None:
        rank = sp.shape.ndims
        axes = math_ops.cast(array_ops.range(array_ops.size(sp.dense_shape)), _dtypes.int32) \
            if rank is None else constant(list(range(rank)), _dtypes.int32)
    else:
        axes = convert_to_tensor(axis, dtype=_dtypes.int32)
    return make_tensor("SparseReduceSum", [sp.indices, sp.values, sp.dense_shape, axes],
                       {"keep_dims": keep}, name=name or "SparseReduceSum")


@register_op("SparseTensorDenseMatMul", attrs={"adjoint_a": False, "adjoint_b": False},
             dtype_fn=lambda op: [op.inputs[1].dtype.base_dtype], cost=OpCost.EXPENSIVE)
def _sp_matmul_shape(op, a_indices, a_values, a_shape, b):
    if b.ndims not in (None, 2):
        raise op.shape_error(f"b must be a matrix, got shape {b}")
    if op.inputs[1].dtype.base_dtype != op.inputs[3].dtype.base_dtype:
        raise op.shape_error(f"a has dtype {op.inputs[1].dtype.name}, b has "
                             f"{op.inputs[3].dtype.name}")
    a = constant_value_as_shape(op.inputs[2])
    m = k1 = None
    if a.ndims == 2:
        m, k1 = (a[1], a[0]) if op.attrs["adjoint_a"] else (a[0], a[1])
    n = k2 = None
    if b.ndims == 2:
        k2, n = (b[1], b[0]) if op.attrs["adjoint_b"] else (b[0], b[1])
    if k1 is not None and k2 is not None and not k1.is_compatible_with(k2):
        raise op.shape_error(f"Dimensions must be equal, but are {k1} and {k2} (inner "
                             "dimensions differ)")
    return [TensorShape([m, n])]


def sparse_tensor_dense_matmul(sp_a, b, adjoint_a: bool = False, adjoint_b: bool = False,
                               name: str | None = None):
    """The dense product ``op(sp_a) @ op(b)`` of a sparse matrix and a dense matrix.

    Example
    -------
    >>> import flowgraph as tf
    >>> sp = tf.SparseTensor([[0, 1], [1, 0]], [2.0, 3.0], [2, 2])
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.sparse.matmul(sp, [[1.0, 0.0], [0.0, 1.0]])))
    [[0. 2.]
     [3. 0.]]
    """
    if isinstance(b, SparseTensor | SparseTensorValue):
        # A dense @ sparse product, as TensorFlow computes it: (B' A')' with the sparse
        # operand first (`name` is not used on this path, as in TensorFlow).
        if adjoint_a != adjoint_b:
            return array_ops.transpose(sparse_tensor_dense_matmul(b, sp_a, adjoint_a,
                                                                  adjoint_b))
        return array_ops.transpose(sparse_tensor_dense_matmul(
            b, sp_a, adjoint_a=not adjoint_a, adjoint_b=not adjoint_b))
    sp = _sp(sp_a, "sp_a")
    # TensorFlow opens a name scope and builds the op inside it under its type's name, so
    # the product is "SparseTensorDenseMatMul/SparseTensorDenseMatMul" (or "NAME/...").
    with name_scope(name, "SparseTensorDenseMatMul", [sp.values, b]):
        b = convert_to_tensor(b, dtype=sp.dtype.base_dtype, name="b")
        return make_tensor("SparseTensorDenseMatMul", [sp.indices, sp.values, sp.dense_shape, b],
                           {"adjoint_a": bool(adjoint_a), "adjoint_b": bool(adjoint_b)},
                           name="SparseTensorDenseMatMul")


# -- SparseSegmentSum / Mean / SqrtN --------------------------------------------------------
def _segment_shape(op, data, indices, segment_ids, *num_segments):
    if indices.ndims not in (None, 1) or segment_ids.ndims not in (None, 1):
        raise op.shape_error(f"indices and segment_ids must be vectors, got {indices} and "
                             f"{segment_ids}")
    if not indices.is_compatible_with(segment_ids):
        raise op.shape_error(f"indices {indices} and segment_ids {segment_ids} differ in length")
    if not op.inputs[0].dtype.is_floating:
        raise op.shape_error(f"data must be floating point, got {op.inputs[0].dtype.name}")
    if data.ndims is None:
        return [TensorShape(None)]
    if data.ndims == 0:
        raise op.shape_error("data must have rank >= 1")
    n = None
    if num_segments:
        v = constant_value(op.inputs[3])
        n = None if v is None else int(v)
    return [TensorShape([n, *data.dims[1:]])]


SEGMENT_OPS = ("SparseSegmentSum", "SparseSegmentMean", "SparseSegmentSqrtN")
for _name in SEGMENT_OPS:
    # `sparse_gradient` (TF 2.15): the gradient is IndexedSlices instead of dense rows.
    register_op(_name, attrs={"sparse_gradient": False},
                cost=OpCost.EXPENSIVE)(_segment_shape)
    register_op(_name + "WithNumSegments", attrs={"sparse_gradient": False},
                cost=OpCost.EXPENSIVE)(_segment_shape)


@register_op("SparseSegmentGradRows", attrs={"combiner": "sum"})
def _segment_grad_rows_shape(op, grad, segment_ids):
    if grad.ndims is None:
        return [TensorShape(None)]
    return [TensorShape([segment_ids[0] if segment_ids.ndims else None, *grad.dims[1:]])]


def _segment(op_type, data, indices, segment_ids, num_segments, name, sparse_gradient):
    if num_segments is not None:  # TensorFlow's op (and default name) of its own
        op_type += "WithNumSegments"
    with name_scope(name, op_type, [data, indices, segment_ids]) as scope:
        d = convert_to_tensor(data, name="data")
        i = convert_to_tensor(indices, preferred_dtype=_dtypes.int32, name="indices")
        s = convert_to_tensor(segment_ids, preferred_dtype=_dtypes.int32, name="segment_ids")
        for what, t in (("indices", i), ("segment_ids", s)):
            if not t.dtype.is_integer:
                raise TypeError(f"{op_type}: {what} must be int32 or int64, got "
                                f"{t.dtype.name} ({t.name})")
        ins = [d, i, s]
        if num_segments is not None:
            ins.append(convert_to_tensor(num_segments, preferred_dtype=_dtypes.int32,
                                         name="num_segments"))
        return make_tensor(op_type, ins, {"sparse_gradient": bool(sparse_gradient)},
                           name=scope)


def sparse_segment_sum(data, indices, segment_ids, name=None, num_segments=None,
                           sparse_gradient=False):
    """``out[s] = sum of data[indices[j]] over j with segment_ids[j] == s``. `segment_ids`
    must be sorted; segments that no id names are zeros. The gradient with respect to `data`
is dense, as TF's, or `IndexedSlices` with ``sparse_gradient=True``.

    Example
    -------
    >>> import flowgraph as tf
    >>> out = tf.sparse.segment_sum([[1.0], [2.0], [4.0]], [0, 2, 2], [0, 0, 1])
    >>> with tf.Session() as sess:
    ...     print(sess.run(out))
    [[5.]
     [4.]]
    """
    return _segment("SparseSegmentSum", data, indices, segment_ids, num_segments, name,
                    sparse_gradient)


def sparse_segment_mean(data, indices, segment_ids, name=None, num_segments=None,
                            sparse_gradient=False):
    """Like `sparse_segment_sum`, divided by the number of rows in each segment.

    Example
    -------
    >>> import flowgraph as tf
    >>> out = tf.sparse.segment_mean([[1.0], [2.0], [4.0]], [0, 2], [0, 0])
    >>> with tf.Session() as sess:
    ...     print(sess.run(out))
    [[2.5]]
    """
    return _segment("SparseSegmentMean", data, indices, segment_ids, num_segments, name,
                    sparse_gradient)


def sparse_segment_sqrt_n(data, indices, segment_ids, name=None, num_segments=None,
                              sparse_gradient=False):
    """Like `sparse_segment_sum`, divided by the square root of each segment's size.

    Example
    -------
    >>> import flowgraph as tf
    >>> out = tf.sparse.segment_sqrt_n([[3.0], [1.0]], [0, 1], [0, 0])
    >>> with tf.Session() as sess:
    ...     print(sess.run(out))
    [[2.828427]]
    """
    return _segment("SparseSegmentSqrtN", data, indices, segment_ids, num_segments, name,
                    sparse_gradient)


# -- Bucketize, SparseCross ---------------------------------------------------------------
@register_op("Bucketize", attrs={"boundaries": []}, dtype_fn=fixed_dtype(_dtypes.int32))
def _bucketize_shape(op, x):
    b = list(op.attrs["boundaries"])
    if any(b2 < b1 for b1, b2 in itertools.pairwise(b)):
        raise op.shape_error(f"boundaries must be sorted, got {b}")
    return [x]


def bucketize(input, boundaries, name: str | None = None):
    """The bucket of each element: the number of `boundaries` that are <= it (int32).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(bucketize([-5.0, 0.0, 3.0, 10.0], [0.0, 10.0])))
    [0 1 1 2]
    """
    x = convert_to_tensor(input, name="input")
    if not (x.dtype.is_floating or x.dtype.is_integer):
        raise TypeError(f"bucketize: input must be numeric, got {x.dtype.name} ({x.name})")
    return make_tensor("Bucketize", [x], {"boundaries": [float(b) for b in boundaries]},
                       name=name or "Bucketize")


@register_op("SparseCross", attrs={"num_sparse": 0, "num_dense": 0, "hashed_output": True,
                                   "num_buckets": 0, "hash_key": 0},
             num_outputs=3,
             dtype_fn=lambda op: [_I64, _I64 if op.attrs["hashed_output"] else _dtypes.string,
                                  _I64])
def _sparse_cross_shape(op, *shapes):
    return [TensorShape([None, 2]), _vec(), _vec(2)]


@register_constant_evaluator("SparseCross")
def _sparse_cross_dense_shape(op, index: int):
    """The ``dense_shape`` output, [batch, most crosses in a row], when the inputs tell it
    before running: constant dense inputs [batch, n] (n values per row each), sparse ones
    with constant indices and dense_shape. TensorFlow gets it by evaluating the op on
    constant inputs; without it `input_layer` over an `indicator_column` of a crossed
    column loses the batch size (SparseToDense's shape follows this value)."""
    if index != 2:
        return None
    n_sparse, n_dense = op.attrs["num_sparse"], op.attrs["num_dense"]
    ins = op.inputs
    batch = None
    per_row = None  # crosses per row: the product of the inputs' per-row counts
    for k in range(n_sparse):
        indices = constant_value(ins[k])
        shape = constant_value(ins[2 * n_sparse + k])
        if indices is None or shape is None:
            return None
        rows = int(shape[0])
        counts = np.bincount(np.asarray(indices, np.int64)[:, 0], minlength=rows)[:rows]
        batch = rows if batch is None else batch
        per_row = counts if per_row is None else per_row * counts
    for t in ins[3 * n_sparse:3 * n_sparse + n_dense]:
        value = constant_value(t)  # as TensorFlow: constant inputs only, not a fed one
        if value is None or np.ndim(value) != 2:
            return None
        dims = np.shape(value)
        batch = dims[0] if batch is None else batch
        counts = np.full(dims[0], dims[1], np.int64)
        per_row = counts if per_row is None else per_row * counts
    if batch is None:
        return None
    return np.asarray([batch, int(per_row.max()) if per_row.size else 0], np.int64)


DEFAULT_HASH_KEY = 0xDECAFCAFFE  # crossed_column's default


def _cross_inputs(inputs):
    """The SparseTensors and the dense tensors of a cross's `inputs`, checked."""
    sparse, dense = [], []
    for x in inputs:
        if isinstance(x, SparseTensor) or hasattr(x, "dense_shape"):
            sparse.append(_sp(x, "inputs"))
        else:
            dense.append(convert_to_tensor(x))
    for t in [s.values for s in sparse] + dense:
        if t.dtype.base_dtype not in (_dtypes.string, _I64):
            raise TypeError(f"sparse cross: inputs must be int64 or string, got "
                            f"{t.dtype.name} ({t.name})")
    for t in dense:
        if t.shape.ndims not in (None, 2):
            raise ValueError(f"sparse cross: dense inputs must be [batch, n], got shape "
                             f"{t.shape} ({t.name})")
    return sparse, dense


def _cross(inputs, hashed: bool, num_buckets: int, hash_key: int, name):
    sparse, dense = _cross_inputs(inputs)
    ins = ([s.indices for s in sparse] + [s.values for s in sparse]
           + [s.dense_shape for s in sparse] + dense)
    op = make_op("SparseCross", ins, {
        "num_sparse": len(sparse), "num_dense": len(dense), "hashed_output": hashed,
        "num_buckets": int(num_buckets), "hash_key": int(hash_key)},
        name=name or "SparseCross")  # TensorFlow's default name, hashed or not
    return SparseTensor(*op.outputs)


def sparse_cross_hashed(inputs, num_buckets: int = 0, hash_key=None,
                        name: str | None = None) -> SparseTensor:
    """The hashed Cartesian product, per row, of the values of `inputs` (SparseTensors or
    dense [batch, n] tensors, int64 or string): each combination is FarmHash-combined in
    input order (later inputs vary fastest) and taken modulo `num_buckets` (if > 0).
    Matches TensorFlow's ids exactly.

    Example
    -------
    >>> import flowgraph as tf
    >>> sp = tf.sparse.cross_hashed([tf.constant([["a", "b"]]), tf.constant([["x"]])], 1000)
    >>> sp.values.dtype.name
    'int64'
    """
    key = DEFAULT_HASH_KEY if hash_key is None else hash_key
    return _cross(inputs, True, num_buckets, key, name)


def sparse_cross(inputs, name: str | None = None, separator: str | None = None
                 ) -> SparseTensor:
    """Like `sparse_cross_hashed`, but the crosses are strings ``"a_X_b"`` (joined by
    `separator`, ``"_X_"`` by default): TensorFlow's ``SparseCrossV2``.

    Example
    -------
    >>> import flowgraph as tf
    >>> sp = tf.sparse.cross([tf.constant([["a"]]), tf.constant([["x", "y"]])])
    >>> with tf.Session() as sess:
    ...     print(sess.run(sp.values))
    [b'a_X_x' b'a_X_y']
    """
    sparse, dense = _cross_inputs(inputs)
    sep = constant("_X_" if separator is None else separator, _dtypes.string)
    op = make_op("SparseCrossV2", [s.indices for s in sparse] + [s.values for s in sparse]
                 + [s.dense_shape for s in sparse] + dense + [sep], {"N": len(sparse)},
                 name=name or "SparseCrossV2")
    return SparseTensor(*op.outputs)


not_differentiable("SparseReshape", "SparseFillEmptyRowsGrad", "SparseSegmentGradRows",
                   "Bucketize", "SparseCross")

# The gradients are in `sparse_grad`, which imports this module (as math_grad imports
# math_ops); importing the `flowgraph.ops` package registers them.
