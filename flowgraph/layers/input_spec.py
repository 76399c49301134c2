"""`tf.layers.InputSpec`: what a layer accepts as input (dtype, rank, fixed axes).

A layer whose ``input_spec`` is set checks every input against it when called
(`assert_input_compatibility`), with TensorFlow's messages: `tf.layers.Dense` accepts
rank >= 2 and, once built, only inputs whose last axis has the size it was built for.

Example
-------
>>> import flowgraph as tf
>>> spec = tf.layers.InputSpec(ndim=2, axes={-1: 3})
>>> spec
InputSpec(ndim=2, axes={-1: 3})
>>> spec.get_config()["ndim"]
2
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.tensor_shape import TensorShape

__all__ = ["InputSpec", "assert_input_compatibility"]


class InputSpec:
    """The dtype, shape or rank bounds, and fixed axis sizes a layer's input must have.

    Example
    -------
    >>> import flowgraph as tf
    >>> s = tf.layers.InputSpec(shape=(None, 3))
    >>> s.shape, s.ndim
    ((None, 3), 2)
    """

    def __init__(self, dtype=None, shape=None, ndim=None, max_ndim=None, min_ndim=None,
                 axes=None, allow_last_axis_squeeze=False, name=None) -> None:
        self.dtype = _dtypes.as_dtype(dtype).name if dtype is not None else None
        shape = TensorShape(shape)
        if shape.ndims is None:
            self.shape = None
        else:
            self.shape = tuple(shape.as_list())
            ndim = len(self.shape)
        self.ndim = ndim
        self.max_ndim = max_ndim
        self.min_ndim = min_ndim
        self.name = name
        self.allow_last_axis_squeeze = allow_last_axis_squeeze
        try:
            axes = axes or {}
            self.axes = {int(k): v for k, v in axes.items()}
        except (ValueError, TypeError) as err:
            raise TypeError(f"Argument `axes` must be a dict with integer keys. "
                            f"Received: axes={axes}") from err
        if self.axes and (self.ndim is not None or self.max_ndim is not None):
            max_dim = (self.ndim if self.ndim else self.max_ndim) - 1
            max_axis = max(self.axes)
            if max_axis > max_dim:
                raise ValueError(f"Axis {max_axis} is greater than the maximum allowed "
                                 f"value: {max_dim}")

    def __repr__(self) -> str:
        parts = [f"dtype={self.dtype}" if self.dtype else "",
                 f"shape={self.shape}" if self.shape else "",
                 f"ndim={self.ndim}" if self.ndim else "",
                 f"max_ndim={self.max_ndim}" if self.max_ndim else "",
                 f"min_ndim={self.min_ndim}" if self.min_ndim else "",
                 f"axes={self.axes}" if self.axes else ""]
        return f"InputSpec({', '.join(p for p in parts if p)})"

    def get_config(self) -> dict:
        return {"dtype": self.dtype, "shape": self.shape, "ndim": self.ndim,
                "max_ndim": self.max_ndim, "min_ndim": self.min_ndim, "axes": self.axes}

    @classmethod
    def from_config(cls, config: dict) -> InputSpec:
        return cls(**config)


def assert_input_compatibility(spec: InputSpec | None, inputs, layer_name: str,
                               index: int = 0) -> None:
    """Raise ValueError (TensorFlow's message) if the tensor `inputs` (input `index` of
    the layer) does not satisfy `spec`; nothing to check when `spec` is None."""
    if spec is None:
        return
    shape = TensorShape(inputs.shape)
    rank = shape.ndims
    head = f'Input {index} of layer "{layer_name}" is incompatible with the layer: '
    if spec.ndim is not None and not spec.allow_last_axis_squeeze and rank is not None \
            and rank != spec.ndim:
        raise ValueError(f"{head}expected ndim={spec.ndim}, found ndim={rank}. Full shape "
                         f"received: {tuple(shape.as_list())}")
    if spec.max_ndim is not None and rank is not None and rank > spec.max_ndim:
        raise ValueError(f"{head}expected max_ndim={spec.max_ndim}, found ndim={rank}")
    if spec.min_ndim is not None and rank is not None and rank < spec.min_ndim:
        raise ValueError(f"{head}expected min_ndim={spec.min_ndim}, found ndim={rank}. Full "
                         f"shape received: {tuple(shape.as_list())}")
    if spec.dtype is not None and inputs.dtype.base_dtype.name != spec.dtype:
        raise ValueError(f"{head}expected dtype={spec.dtype}, found dtype={inputs.dtype}")
    if spec.axes and rank is not None:
        dims = shape.as_list()
        for axis, value in spec.axes.items():
            if value is None or not -rank <= axis < rank:
                continue
            if dims[axis] not in (value, None):
                raise ValueError(f"{head}expected axis {axis} of input shape to have value "
                                 f"{value}, but received input with shape {tuple(dims)}")
    if spec.shape is not None and rank is not None:
        for want, got in zip(spec.shape, shape.as_list(), strict=False):
            if want is not None and got is not None and want != got:
                raise ValueError(f"{head}expected shape={spec.shape}, found shape="
                                 f"{tuple(shape.as_list())}")
