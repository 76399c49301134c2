"""TF1 array helpers composed from existing ops: `clip_by_average_norm`, `parallel_stack`,
`histogram_fixed_width`/`histogram_fixed_width_bins`, `switch_case`, `ensure_shape`,
`extract_image_patches`, `sparse_matmul` and `guarantee_const`.

Each is differentiable wherever its parts are (`extract_image_patches` is a gather from
the padded image, so its gradient scatters back to the pixels).

Example
-------
>>> import flowgraph as tf
>>> h = tf.histogram_fixed_width([-1.0, 0.0, 1.5, 2.0, 5.0], [0.0, 5.0], nbins=5)
>>> tf.Session().run(h).tolist()
[2, 1, 1, 0, 1]
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import nest
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.operation import Tensor
from flowgraph.ops.array_identity_ops import identity
from flowgraph.ops.array_raw import (  # the op types TensorFlow emits
    ensure_shape,
    guarantee_const,
    histogram_fixed_width,
    parallel_stack,
)
from flowgraph.ops.math_ops import (
    cast,
    clip_by_value,
    equal,
    floor,
    matmul,
    minimum,
    rsqrt,
    truediv,
)
from flowgraph.ops.math_reduce import reduce_sum

__all__ = ["clip_by_average_norm", "ensure_shape", "extract_image_patches",
           "guarantee_const", "histogram_fixed_width", "histogram_fixed_width_bins",
           "parallel_stack", "sparse_matmul", "switch_case"]


def clip_by_average_norm(t, clip_norm, name=None):
    """Scale `t` so that its L2 norm divided by its number of elements is at most
    `clip_norm` (unchanged when it already is).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.clip_by_average_norm([3.0, 4.0], 1.0)).tolist()
    [1.2000000476837158, 1.600000023841858]
    """
    with name_scope(name, "clip_by_average_norm", [t, clip_norm]) as scope:
        t = convert_to_tensor(t, name="t")
        n = cast(_num_elements(t), t.dtype.base_dtype)
        clip = convert_to_tensor(clip_norm, dtype=t.dtype.base_dtype, name="clip_norm")
        inv_l2 = rsqrt(reduce_sum(t * t))
        scale = minimum(inv_l2 * clip * n, 1.0)
        return identity(t * scale, name=scope)


def _num_elements(t):
    from flowgraph.ops.array_shape_ops import size

    return size(t)




def histogram_fixed_width_bins(values, value_range, nbins=100, dtype=_dtypes.int32,
                               name=None):
    """The bin index of each value for `nbins` equal bins over ``value_range = [lo, hi]``;
    values below `lo` go to bin 0, those at or above `hi` to the last bin.

    TensorFlow's graph: computed in the values' dtype over the flattened values, an
    ``Assert`` that ``nbins > 0``, the int32 indices reshaped back (`dtype` is ignored, as
    in TensorFlow).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.histogram_fixed_width_bins([-1.0, 2.5, 9.0], [0.0, 5.0], 5))
    array([0, 2, 4], dtype=int32)
    """
    from flowgraph.ops.array_shape_ops import reshape, shape
    from flowgraph.ops.control_flow_cond import Assert
    from flowgraph.ops.control_flow_ops import with_dependencies
    from flowgraph.ops.math_ops import greater

    del dtype
    with name_scope(name, "histogram_fixed_width_bins", [values, value_range, nbins]):
        values = convert_to_tensor(values, name="values")
        dims = shape(values)
        values = reshape(values, [-1])
        value_range = convert_to_tensor(value_range, name="value_range")
        nbins = convert_to_tensor(nbins, dtype=_dtypes.int32, name="nbins")
        check = Assert(greater(nbins, 0), [f"nbins {nbins} must > 0"])
        nbins = with_dependencies([check], nbins)
        nbins_float = cast(nbins, values.dtype)
        scaled = truediv(values - value_range[0], value_range[1] - value_range[0],
                         name="scaled_values")
        indices = floor(nbins_float * scaled, name="indices")
        indices = cast(clip_by_value(indices, 0, nbins_float - 1), _dtypes.int32)
        return reshape(indices, dims)


def switch_case(branch_index, branch_fns, default=None, name="switch_case"):
    """Run ``branch_fns[branch_index]`` (a list, or a dict from int keys to callables);
    an index with no branch runs `default`, or the last branch when `default` is None.

    Example
    -------
    >>> import flowgraph as tf
    >>> i = tf.constant(1)
    >>> out = tf.switch_case(i, [lambda: tf.constant(10), lambda: tf.constant(20)])
    >>> int(tf.Session().run(out))
    20
    """
    from flowgraph.ops.control_flow_cond import case

    if isinstance(branch_fns, dict):
        pairs = sorted(branch_fns.items())
    else:
        pairs = list(enumerate(branch_fns))
    if not pairs:
        raise ValueError("tf.switch_case: branch_fns must not be empty")
    keys = [k for k, _ in pairs]
    if keys != list(range(len(keys))):
        raise ValueError(f"tf.switch_case: branch indices (keys) must form the contiguous "
                         f"range [0, {len(keys)}), got {sorted(keys)}")
    for key, fn in pairs:
        if not isinstance(key, int | np.integer) or not callable(fn):
            raise TypeError(f"tf.switch_case: branch_fns must map ints to callables, got "
                            f"{key!r}: {fn!r}")
    with name_scope(name, "switch_case", [branch_index]):
        index = convert_to_tensor(branch_index, name="branch_index")
        if index.dtype.base_dtype != _dtypes.int32:
            raise TypeError(f"tf.switch_case: branch_index must be int32, got "
                            f"{index.dtype.base_dtype.name}")
        if default is None:
            pairs, default = pairs[:-1], pairs[-1][1]
        # TensorFlow runs one ``StatelessCase`` op, "<scope>/indexed_case", and returns an
        # Identity of each of its outputs ("<scope>/indexed_case/Identity", ...): the
        # same output names here, over exclusive conds under that scope.
        with name_scope("indexed_case"):
            out = case([(equal(index, k), fn) for k, fn in pairs], default=default,
                       exclusive=True)
            return nest.map_structure(
                lambda t: identity(t) if isinstance(t, Tensor) else t, out)




def _rank_of(x):
    from flowgraph.ops.array_shape_ops import rank

    return rank(x)


def extract_image_patches(images, ksizes=None, strides=None, rates=None, padding=None,
                          name=None, sizes=None):
    """The ``ksizes[1] x ksizes[2]`` patches of each image (dilated by `rates`, every
    `strides` pixels), flattened into the depth: ``[batch, out_rows, out_cols,
    k_rows * k_cols * depth]``: one ``ExtractImagePatches`` op.

    Example
    -------
    >>> import flowgraph as tf
    >>> img = tf.reshape(tf.range(16.0), [1, 4, 4, 1])
    >>> p = tf.extract_image_patches(img, [1, 2, 2, 1], [1, 2, 2, 1], [1, 1, 1, 1], "VALID")
    >>> tf.Session().run(p)[0, 0, 0].tolist()
    [0.0, 1.0, 4.0, 5.0]
    """
    ksizes = sizes if ksizes is None else ksizes
    for arg, value in (("ksizes", ksizes), ("strides", strides), ("rates", rates)):
        if value is None or len(value) != 4 or value[0] != 1 or value[3] != 1:
            raise ValueError(f"tf.extract_image_patches: {arg} must be [1, rows, cols, 1], "
                             f"got {value}")
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"tf.extract_image_patches: padding must be 'SAME' or 'VALID', "
                         f"got {padding!r}")
    from flowgraph.ops.op_util import make_tensor

    x = convert_to_tensor(images, name="images")
    if x.dtype.base_dtype in (_dtypes.string, _dtypes.resource, _dtypes.variant):
        raise TypeError(f"Value passed to parameter 'images' of op 'ExtractImagePatches' has "
                        f"DataType {x.dtype.base_dtype.name} not in list of allowed values: "
                        f"real number, complex and bool types")
    attrs = {"ksizes": [int(v) for v in ksizes], "strides": [int(v) for v in strides],
             "rates": [int(v) for v in rates], "padding": padding}
    return make_tensor("ExtractImagePatches", [x], attrs, name=name or "ExtractImagePatches")


def sparse_matmul(a, b, transpose_a=False, transpose_b=False, a_is_sparse=False,
                  b_is_sparse=False, name=None):
    """``a @ b`` for float matrices that may be mostly zeros (the sparsity flags are
    hints; the product is the same dense float32 result).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.sparse_matmul([[1.0, 0.0]], [[2.0], [3.0]])).tolist()
    [[2.0]]
    """
    with name_scope(name, "SparseMatMul", [a, b]) as scope:
        a = cast(convert_to_tensor(a, name="a"), _dtypes.float32)
        b = cast(convert_to_tensor(b, name="b"), _dtypes.float32)
        return matmul(a, b, transpose_a=transpose_a, transpose_b=transpose_b,
                      a_is_sparse=a_is_sparse, b_is_sparse=b_is_sparse, name=scope)

