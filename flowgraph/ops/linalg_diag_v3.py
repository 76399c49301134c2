"""Bands of diagonals of (batches of) matrices: ``MatrixDiagV2``/``V3``,
``MatrixDiagPartV2``/``V3`` and ``MatrixSetDiagV2``/``V3``, the op types TensorFlow 2.x's
`tf.linalg.diag`, `tf.linalg.diag_part`, `tf.linalg.set_diag` and `tf.eye` emit.

``k`` picks the diagonals: a scalar (diagonal ``k``: 0 the main one, > 0 above it, < 0
below it) or a pair ``[lower, upper]``, the band from ``lower`` to ``upper``. A band is
packed as ``[..., upper - lower + 1, max_diag_len]``, the uppermost diagonal first; a
diagonal shorter than ``max_diag_len`` is padded on one side, which ``align`` (V3 only)
names as ``"SUPER_SUB"``: ``"RIGHT_LEFT"`` (the default) right-aligns superdiagonals and
left-aligns subdiagonals; the V2 ops left-align both (``"LEFT_LEFT"``). The main diagonal
is left-aligned when either half says ``LEFT``.

Kernels: `flowgraph/backends/cpu/kernels_linalg_raw.py`.

Example
-------
>>> import flowgraph as tf
>>> x = tf.constant([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
>>> tf.Session().run(tf.linalg.diag_part(x, k=(-1, 1))).tolist()
[[0, 2, 6], [1, 5, 9], [4, 8, 0]]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant_value, convert_to_tensor
from flowgraph.framework.registry import register_gradient, register_op
from flowgraph.framework.tensor_shape import Dimension, TensorShape
from flowgraph.ops.array_shape_ops import zeros_like
from flowgraph.ops.op_util import make_tensor, op_scope

__all__ = ["diag_matrix_size", "matrix_diag", "matrix_diag_part", "matrix_set_diag"]


def diag_matrix_size(max_len: int, lower: int, upper: int, rows, cols) -> tuple:
    """``(rows, cols, min_rows, min_cols)`` of the matrices ``MatrixDiagV3`` makes from
    diagonals ``k = [lower, upper]`` of length `max_len`: a size of -1 is the smallest
    that holds them (both -1: square). The caller checks the sizes against the minimums.

    >>> diag_matrix_size(3, 0, 0, -1, -1), diag_matrix_size(3, 1, 1, -1, 5)
    ((3, 3, 3, 3), (3, 5, 3, 4))
    """
    min_rows, min_cols = max_len - min(upper, 0), max_len + max(lower, 0)
    if rows == -1 and cols == -1:
        rows = cols = max(min_rows, min_cols)
    elif rows == -1:
        rows = min_rows
    elif cols == -1:
        cols = min_cols
    return rows, cols, min_rows, min_cols

ALIGNMENTS = ("LEFT_RIGHT", "RIGHT_LEFT", "LEFT_LEFT", "RIGHT_RIGHT")


def _band(op, k):
    """``(lower, upper)`` from the constant `k` tensor, or None when not constant."""
    value = constant_value(k)
    if value is None:
        return None
    flat = [int(v) for v in value.ravel()]
    if not 1 <= len(flat) <= 2:
        raise op.shape_error(f"k must be a scalar or a pair [lower, upper], got {len(flat)} "
                             "values")
    lower, upper = flat[0], flat[-1]
    if lower > upper:
        raise op.shape_error(f"k = [{lower}, {upper}]: lower must be at most upper")
    return lower, upper


def _check_align(op):
    align = op.attrs.get("align", "LEFT_LEFT")
    if isinstance(align, bytes):
        align = align.decode()
    if align not in ALIGNMENTS:
        raise op.shape_error(f"align must be one of {', '.join(ALIGNMENTS)}, got {align!r}")


def _scalar(op, index):
    value = constant_value(op.inputs[index])
    return None if value is None else int(value)


def _diag_shape(op, diagonal, k, *_):
    _check_align(op)
    band = _band(op, op.inputs[1])
    if band is None or diagonal.ndims is None:
        return [TensorShape(None)]
    lower, upper = band
    single = lower == upper
    need = 1 if single else 2
    if diagonal.ndims < need:
        raise op.shape_error(f"diagonal must have rank >= {need} for k = {list(band)}, got "
                             f"shape {diagonal}")
    dims = diagonal.dims
    if not single and not dims[-2].is_compatible_with(upper - lower + 1):
        raise op.shape_error(f"diagonal of shape {diagonal} holds {dims[-2]} diagonals but "
                             f"k = [{lower}, {upper}] names {upper - lower + 1}")
    batch = dims[:-need]
    rows, cols = _scalar(op, 2), _scalar(op, 3)
    max_len = dims[-1].value
    if max_len is None:
        out = [Dimension(rows if rows not in (None, -1) else None),
               Dimension(cols if cols not in (None, -1) else None)]
        return [TensorShape([*batch, *out])]
    rows, cols, min_rows, min_cols = diag_matrix_size(max_len, lower, upper, rows, cols)
    if rows is not None and cols is not None and (
            rows < min_rows or cols < min_cols or (rows != min_rows and cols != min_cols)):
        raise op.shape_error(f"{rows} x {cols} matrices cannot hold diagonals of length "
                             f"{max_len} for k = [{lower}, {upper}]: they need {min_rows} "
                             f"rows or {min_cols} columns (and at least that many of each)")
    return [TensorShape([*batch, rows, cols])]


def _max_len(rows, cols, lower, upper):
    if rows.value is None or cols.value is None:
        return Dimension(None)
    return Dimension(max(0, min(rows.value + min(upper, 0), cols.value - max(lower, 0))))


def _check_bounds(op, x, lower, upper):
    rows, cols = x.dims[-2].value, x.dims[-1].value
    if rows is not None and not (lower > -rows or lower == 0):
        raise op.shape_error(f"lower diagonal index {lower} is out of bounds for {rows} rows")
    if cols is not None and not (upper < cols or upper == 0):
        raise op.shape_error(f"upper diagonal index {upper} is out of bounds for {cols} "
                             "columns")


def _diag_part_shape(op, x, k, *_):
    _check_align(op)
    if x.ndims is not None and x.ndims < 2:
        raise op.shape_error(f"input must be a matrix or a batch of matrices (rank >= 2), "
                             f"got shape {x}")
    band = _band(op, op.inputs[1])
    if band is None or x.ndims is None:
        return [TensorShape(None)]
    lower, upper = band
    _check_bounds(op, x, lower, upper)
    length = _max_len(x.dims[-2], x.dims[-1], lower, upper)
    middle = [] if lower == upper else [upper - lower + 1]
    return [TensorShape([*x.dims[:-2], *middle, length])]


def _set_diag_shape(op, x, diagonal, k):
    _check_align(op)
    if x.ndims is not None and x.ndims < 2:
        raise op.shape_error(f"input must be a matrix or a batch of matrices (rank >= 2), "
                             f"got shape {x}")
    band = _band(op, op.inputs[2])
    if band is not None and x.ndims is not None:
        # As TensorFlow: the diagonal's shape is checked when the kernel runs.
        _check_bounds(op, x, *band)
    return [x]


for _v, _attrs in (("V2", {}), ("V3", {"align": "RIGHT_LEFT"})):
    register_op(f"MatrixDiag{_v}", attrs=dict(_attrs))(_diag_shape)
    register_op(f"MatrixDiagPart{_v}", attrs=dict(_attrs))(_diag_part_shape)
    register_op(f"MatrixSetDiag{_v}", attrs=dict(_attrs))(_set_diag_shape)


# -- Python wrappers -------------------------------------------------------------------------

def _k(k):
    return convert_to_tensor(k, dtype=_dtypes.int32, name="k")


def matrix_diag(diagonal, name="diag", k=0, num_rows=-1, num_cols=-1, padding_value=0,
                align="RIGHT_LEFT"):
    """Matrices with the given diagonals, `padding_value` elsewhere.

    With ``k = 0`` (the default), ``diagonal`` ``[..., n]`` gives ``[..., n, n]``
    matrices. ``k`` may name another diagonal or a band ``(lower, upper)``, packed as the
    module docstring describes; ``num_rows``/``num_cols`` (-1: the smallest that fits)
    size the matrices.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.linalg.diag([1, 2])).tolist()
    [[1, 0], [0, 2]]
    >>> tf.Session().run(tf.linalg.diag([1, 2], k=1)).tolist()
    [[0, 1, 0], [0, 0, 2], [0, 0, 0]]
    """
    with op_scope(name, "MatrixDiagV3", (diagonal, k, num_rows, num_cols,
                                         padding_value)) as scope:
        d = convert_to_tensor(diagonal, name="diagonal")
        ins = [d, _k(k), convert_to_tensor(num_rows, dtype=_dtypes.int32, name="num_rows"),
               convert_to_tensor(num_cols, dtype=_dtypes.int32, name="num_cols"),
               convert_to_tensor(padding_value, dtype=d.dtype.base_dtype,
                                 name="padding_value")]
        return make_tensor("MatrixDiagV3", ins, {"align": align}, name=scope)


def matrix_diag_part(input, name="diag_part", k=0, padding_value=0, align="RIGHT_LEFT"):
    """The diagonal ``k`` (default the main one, ``[..., min(m, n)]``) of each matrix, or
    the band ``k = (lower, upper)`` packed ``[..., upper - lower + 1, max_len]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.linalg.diag_part([[1, 2, 3], [4, 5, 6]])).tolist()
    [1, 5]
    """
    with op_scope(name, "MatrixDiagPartV3", (input, k, padding_value)) as scope:
        x = convert_to_tensor(input, name="input")
        ins = [x, _k(k), convert_to_tensor(padding_value, dtype=x.dtype.base_dtype,
                                           name="padding_value")]
        return make_tensor("MatrixDiagPartV3", ins, {"align": align}, name=scope)


def matrix_set_diag(input, diagonal, name="set_diag", k=0, align="RIGHT_LEFT"):
    """A copy of each matrix with the diagonal (or band) ``k`` replaced by `diagonal`.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.linalg.set_diag(tf.zeros([2, 3]), [7.0, 8.0])).tolist()
    [[7.0, 0.0, 0.0], [0.0, 8.0, 0.0]]
    """
    with op_scope(name, "MatrixSetDiagV3", (input, diagonal, k)) as scope:
        x = convert_to_tensor(input, name="input")
        d = convert_to_tensor(diagonal, dtype=x.dtype.base_dtype, name="diagonal")
        return make_tensor("MatrixSetDiagV3", [x, d, _k(k)], {"align": align}, name=scope)


# -- gradients ------------------------------------------------------------------------------
# The V2 ops' gradients emit V2 ops (both left-aligned), the V3 ops' gradients V3 ops with
# the forward op's alignment.

def _like(op, op_type, inputs):
    attrs = {"align": op.attrs["align"]} if op.type.endswith("V3") else {}
    return make_tensor(op_type + op.type[-2:], inputs, attrs)


def _zero(x):
    return convert_to_tensor(0, dtype=x.dtype.base_dtype)


@register_gradient("MatrixDiagV2")
@register_gradient("MatrixDiagV3")
def _matrix_diag_grad(op, grad):
    return [_like(op, "MatrixDiagPart", [grad, op.inputs[1], _zero(grad)]),
            None, None, None, None]


@register_gradient("MatrixDiagPartV2")
@register_gradient("MatrixDiagPartV3")
def _matrix_diag_part_grad(op, grad):
    x = op.inputs[0]
    return [_like(op, "MatrixSetDiag", [zeros_like(x), grad, op.inputs[1]]), None, None]


@register_gradient("MatrixSetDiagV2")
@register_gradient("MatrixSetDiagV3")
def _matrix_set_diag_grad(op, grad):
    k = op.inputs[2]
    return [_like(op, "MatrixSetDiag", [grad, zeros_like(op.inputs[1]), k]),
            _like(op, "MatrixDiagPart", [grad, k, _zero(grad)]), None]
