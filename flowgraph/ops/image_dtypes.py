"""TF's dtype constraints on the tensor inputs of the image ops, checked when a wrapper
builds the op: a TypeError worded as TF's op-def library words it. Python and NumPy
values are left to the wrapper's own conversion; only tensors are checked here.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.ops.image_dtypes import check_input
>>> check_input(tf.zeros([2]), "ExtractGlimpse", "input", (tf.float32,)).dtype
tf.float32
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.operation import Tensor

INTS = (_dtypes.uint8, _dtypes.uint16, _dtypes.int8, _dtypes.int16, _dtypes.int32,
        _dtypes.int64)
FLOATS = (_dtypes.float16, _dtypes.float32, _dtypes.float64)
# ResizeBilinear & co. and CropAndResize take these images
REAL_IMAGES = (*INTS, _dtypes.bfloat16, *FLOATS)


def check_input(value, op_type: str, param: str, allowed: tuple):
    """`value` unchanged; a tensor whose dtype is not in `allowed` raises TF's TypeError
    (the "does not match expected type" form when one dtype is allowed).

    Example
    -------
    >>> import flowgraph as tf
    >>> check_input(tf.zeros([1, 4]), "CropAndResize", "boxes", (tf.float32,)).shape
    TensorShape([Dimension(1), Dimension(4)])
    """
    if not isinstance(value, Tensor):
        return value
    dt = value.dtype.base_dtype
    if dt in allowed:
        return value
    if len(allowed) == 1:
        raise TypeError(f"Input '{param}' of '{op_type}' Op has type {dt.name} that does not "
                        f"match expected type of {allowed[0].name}.")
    raise TypeError(f"Value passed to parameter '{param}' of op '{op_type}' has DataType "
                    f"{dt.name} not in list of allowed values: "
                    f"{', '.join(d.name for d in allowed)}")
