"""Small `tf.linalg` helpers built from existing ops: `matrix_transpose` (`adjoint`),
`matvec` and `eye`.

Example
-------
>>> import flowgraph as tf
>>> tf.linalg.matrix_transpose(tf.zeros([2, 3, 4])).shape.as_list()
[2, 4, 3]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.ops import (
    array_join_ops,
    array_shape_ops,
    math_ops,
)

__all__ = ["eye", "matrix_transpose"]  # also tf.*


def matrix_transpose(a, name="matrix_transpose", conjugate=False):
    """Swap the last two axes of `a` (rank >= 2, known when the graph is built);
    `conjugate` also conjugates (the adjoint).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.linalg.matrix_transpose([[1, 2, 3]]))
    array([[1],
           [2],
           [3]], dtype=int32)
    """
    with name_scope(name, "matrix_transpose", [a]):
        x = convert_to_tensor(a, name="a")
        rank = x.shape.ndims
        if rank is None or rank < 2:
            raise ValueError(f"matrix_transpose: the input must have a known rank of at least "
                             f"2, got shape {x.shape}")
        perm = [*range(rank - 2), rank - 1, rank - 2]
        return array_shape_ops.transpose(x, perm, conjugate=conjugate)


def adjoint(matrix, name=None):
    """The conjugate transpose of the last two axes; see `matrix_transpose`.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.linalg.adjoint(tf.zeros([3, 2])).shape.as_list()
    [2, 3]
    """
    with name_scope(name, "adjoint", [matrix]):
        return matrix_transpose(matrix, conjugate=True)


def matvec(a, b, transpose_a=False, adjoint_a=False, a_is_sparse=False, b_is_sparse=False,
           name=None):
    """Matrix-vector product ``op(a) @ b`` over the last axes (batches broadcast as in
    `matmul`).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.linalg.matvec([[1.0, 2.0], [3.0, 4.0]], [1.0, 1.0]))
    array([3., 7.], dtype=float32)
    """
    del a_is_sparse, b_is_sparse
    with name_scope(name, "matvec", [a, b]) as scope:
        column = array_shape_ops.expand_dims(convert_to_tensor(b, name="b"), -1)
        product = math_ops.matmul(a, column, transpose_a=transpose_a, adjoint_a=adjoint_a)
        return array_shape_ops.squeeze(product, [-1], name=scope)


def eye(num_rows, num_columns=None, batch_shape=None, dtype=_dtypes.float32, name=None):
    """The identity matrix ``[num_rows, num_columns]`` (ones on the main diagonal), or a
    batch of them of shape ``batch_shape + [num_rows, num_columns]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.eye(2, 3, dtype=tf.int32))
    array([[1, 0, 0],
           [0, 1, 0]], dtype=int32)
    """
    # As TensorFlow 2.x: MatrixDiagV3 of ones for square matrices, else MatrixSetDiagV3
    # of ones on zeros (shapes computed in the graph when a size is a tensor).
    from flowgraph.framework.operation import Tensor
    from flowgraph.ops.linalg_diag_v3 import matrix_diag, matrix_set_diag

    dtype = _dtypes.as_dtype(dtype)
    with name_scope(name, "eye", [num_rows, num_columns, batch_shape]):
        square = num_columns is None
        batch = [] if batch_shape is None else batch_shape
        cols = num_rows if num_columns is None else num_columns
        if isinstance(num_rows, Tensor) or isinstance(cols, Tensor):
            size = math_ops.minimum(num_rows, cols)
        else:
            if not all(isinstance(v, int) or hasattr(v, "__index__") for v in (num_rows, cols)):
                raise TypeError(f"tf.eye: num_rows and num_columns must be ints or int "
                                f"tensors, got {num_rows!r} and {cols!r}")
            square = int(num_rows) == int(cols)
            size = min(int(num_rows), int(cols))
        if isinstance(batch, Tensor) or isinstance(size, Tensor):
            batch = convert_to_tensor(batch, dtype=_dtypes.int32, name="shape")
            diag_shape = array_join_ops.concat([batch, [size]], 0)
            shape = None if square else array_join_ops.concat([batch, [num_rows, cols]], 0)
        else:
            batch = [int(d) for d in batch]
            diag_shape = [*batch, size]
            shape = None if square else [*batch, int(num_rows), int(cols)]
        ones = array_shape_ops.ones(diag_shape, dtype=dtype)
        if square:
            return matrix_diag(ones)
        return matrix_set_diag(array_shape_ops.zeros(shape, dtype=dtype), ones)
