"""Keras preprocessing layers in graph mode: `Rescaling`, `CenterCrop`, `Resizing`,
`CategoryEncoding`, `Hashing`, `Discretization`, `Normalization`. Re-exported by
`flowgraph.keras.layers`.

As in TF 2.15 with v2 behaviour disabled, ``adapt`` raises ``RuntimeError`` (it needs
eager execution): `Normalization` takes ``mean=``/``variance=`` and `Discretization`
``bin_boundaries=``. A `Normalization` without them keeps its statistics in non-trainable
weights ``mean``, ``variance`` and ``count`` (zeros, ones, 0), which `set_weights` or a
loaded model fills.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph import keras
>>> with tf.Graph().as_default():
...     x = tf.constant([[1.0, 5.0]])
...     y = keras.layers.Normalization(mean=[1.0, 1.0], variance=[4.0, 4.0])(x)
...     print(tf.Session().run(y))
[[0. 2.]]
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant, convert_to_tensor
from flowgraph.framework.graph import control_dependencies
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.keras import backend
from flowgraph.keras.layers import Layer
from flowgraph.ops import (
    array_index_ops,
    array_join_ops,
    array_ops,
    array_shape_ops,
    control_flow_cond,
    image_ops,
    math_ops,
    math_reduce,
    sparse_ops,
    string_hash_ops,
    string_legacy_hash_ops,
)
from flowgraph.ops.op_util import make_tensor

__all__ = ["CategoryEncoding", "CenterCrop", "Discretization", "Hashing", "Normalization",
           "Rescaling", "Resizing"]


def _adapt_unsupported(layer) -> None:
    raise RuntimeError(f"`adapt` is only supported in tensorflow v2. (layer {layer.name}: "
                       f"flowgraph runs TF1 graphs; pass the statistics to the constructor, "
                       f"or set them with `set_weights`.)")


def _check_mode(layer_name: str, value, allowed) -> None:
    if value not in allowed:
        raise ValueError(f"Unkown value for `output_mode` argument of layer {layer_name}. "
                         f"Allowed values are: or one of the following values: {allowed}. "
                         f"Received: {value}")


# -- image ---------------------------------------------------------------------------------
class Rescaling(Layer):
    """``inputs * scale + offset``, computed in the layer's dtype (float32)."""

    def __init__(self, scale, offset=0.0, **kwargs) -> None:
        super().__init__(**kwargs)
        self.scale, self.offset = scale, offset

    def get_config(self) -> dict:
        return {**super().get_config(), "scale": self.scale, "offset": self.offset}

    def call(self, inputs):
        dtype = self._dtype or _dtypes.float32
        x = math_ops.cast(inputs, dtype) if inputs.dtype.base_dtype != dtype else inputs
        scale = math_ops.cast(convert_to_tensor(self.scale), dtype)
        offset = math_ops.cast(convert_to_tensor(self.offset), dtype)
        return math_ops.add(math_ops.multiply(x, scale, name="mul"), offset, name="add")


_RESIZE_METHODS = ("bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5",
                   "gaussian", "mitchellcubic")


def _resize(images, height: int, width: int, method: str):
    """TF2's ``tf.image.resize`` (half-pixel centres) for the methods flowgraph has."""
    size = [height, width]
    if method == "bilinear":
        return image_ops.resize_bilinear(images, size, half_pixel_centers=True)
    if method == "nearest":
        return image_ops.resize_nearest_neighbor(images, size, half_pixel_centers=True)
    if method == "bicubic":
        return image_ops.resize_bicubic(images, size, half_pixel_centers=True)
    if method == "area":
        return image_ops.resize_area(images, size)
    raise NotImplementedError(f"Resizing(interpolation={method!r}) is not supported by "
                              f"flowgraph (it has 'bilinear', 'nearest', 'bicubic', 'area').")


def _spatial(images) -> tuple:
    """``(height, width)`` of NHWC (or HWC) images: ints when static, else tensors."""
    dims = images.shape.as_list() if images.shape.ndims is not None else None
    shape = array_shape_ops.shape(images)
    out = []
    for axis in (-3, -2):
        d = dims[axis] if dims else None
        out.append(d if d is not None else shape[images.shape.ndims + axis])
    return tuple(out)


def _crop(images, top, left, height: int, width: int):
    """``images[..., top:top+height, left:left+width, :]``."""
    rank = images.shape.ndims
    begin = [0] * (rank - 3) + [top, left, 0]
    size = [-1] * (rank - 3) + [height, width, -1]
    begin_t = begin if all(isinstance(b, int) for b in begin) else \
        array_join_ops.stack([convert_to_tensor(b, dtype=_dtypes.int32) for b in begin])
    return array_index_ops.slice(images, begin_t, size)


def _smart_resize(images, height: int, width: int, method: str):
    """Crop the centre to the target's aspect ratio, then resize (Keras's
    ``smart_resize``)."""
    h, w = _spatial(images)
    if isinstance(h, int) and isinstance(w, int):
        crop_h = min(h, int(w * height / width))
        crop_w = min(w, int(h * width / height))
        top, left = (h - crop_h) // 2, (w - crop_w) // 2
        cropped = _crop(images, top, left, crop_h, crop_w)
    else:
        hf, wf = math_ops.cast(h, _dtypes.float32), math_ops.cast(w, _dtypes.float32)
        crop_h = math_ops.cast(math_ops.minimum(hf, wf * (height / width)), _dtypes.int32)
        crop_w = math_ops.cast(math_ops.minimum(wf, hf * (width / height)), _dtypes.int32)
        top = math_ops.floordiv(math_ops.subtract(h, crop_h), 2)
        left = math_ops.floordiv(math_ops.subtract(w, crop_w), 2)
        rank = images.shape.ndims
        begin = array_join_ops.stack([0] * (rank - 3) + [top, left, 0])
        size = array_join_ops.stack([-1] * (rank - 3) + [crop_h, crop_w, -1])
        cropped = array_index_ops.slice(images, begin, size)
    return _resize(cropped, height, width, method)


def _batched(images, fn):
    """Apply a batch-of-images `fn` to 3-D (one image) or 4-D inputs."""
    if images.shape.ndims == 3:
        out = fn(array_shape_ops.expand_dims(images, 0))
        return array_shape_ops.squeeze(out, [0])
    return fn(images)


class Resizing(Layer):
    """Resize images to ``(height, width)`` (`interpolation`: 'bilinear', 'nearest',
    'bicubic', 'area'); ``crop_to_aspect_ratio`` crops the centre to the target's aspect
    ratio first."""

    def __init__(self, height, width, interpolation="bilinear",
                 crop_to_aspect_ratio: bool = False, **kwargs) -> None:
        super().__init__(**kwargs)
        if interpolation not in _RESIZE_METHODS:
            raise NotImplementedError(
                f"Value not recognized for `interpolation`: {interpolation}. Supported "
                f"values are: dict_keys({list(_RESIZE_METHODS)})")
        self.height, self.width = int(height), int(width)
        self.interpolation, self.crop_to_aspect_ratio = interpolation, crop_to_aspect_ratio

    def get_config(self) -> dict:
        return {**super().get_config(), "height": self.height, "width": self.width,
                "interpolation": self.interpolation,
                "crop_to_aspect_ratio": self.crop_to_aspect_ratio}

    def call(self, inputs):
        def fn(images):
            if self.crop_to_aspect_ratio:
                return _smart_resize(images, self.height, self.width, self.interpolation)
            return _resize(images, self.height, self.width, self.interpolation)

        out = _batched(inputs, fn)
        dtype = self._dtype or _dtypes.float32
        return math_ops.cast(out, dtype) if out.dtype.base_dtype != dtype else out


class CenterCrop(Layer):
    """Crop the centre ``(height, width)`` of images; an image smaller than that is
    resized (after cropping to the aspect ratio) instead, as Keras does."""

    def __init__(self, height, width, **kwargs) -> None:
        super().__init__(**kwargs)
        self.height, self.width = int(height), int(width)

    def get_config(self) -> dict:
        return {**super().get_config(), "height": self.height, "width": self.width}

    def call(self, inputs):
        height, width = self.height, self.width

        def fn(images):
            h, w = _spatial(images)
            if isinstance(h, int) and isinstance(w, int):
                if h >= height and w >= width:
                    return _crop(images, (h - height) // 2, (w - width) // 2, height, width)
                return _smart_resize(images, height, width, "bilinear")
            fits = math_ops.logical_and(math_ops.greater_equal(h, height),
                                        math_ops.greater_equal(w, width))

            def crop():
                top = math_ops.floordiv(math_ops.subtract(h, height), 2)
                left = math_ops.floordiv(math_ops.subtract(w, width), 2)
                return math_ops.cast(_crop(images, top, left, height, width), _dtypes.float32)

            return control_flow_cond.cond(
                fits, crop, lambda: _smart_resize(images, height, width, "bilinear"))

        out = _batched(inputs, fn)
        static = inputs.shape.as_list() if inputs.shape.ndims else None
        if static:
            out.set_shape([*static[:-3], height, width, static[-1]])
        dtype = self._dtype or _dtypes.float32
        return math_ops.cast(out, dtype) if out.dtype.base_dtype != dtype else out


# -- categorical ---------------------------------------------------------------------------
def _encode(inputs, depth: int, mode: str, count_weights=None, dtype=_dtypes.float32):
    """Keras's categorical encoding of int ids: 'one_hot', 'multi_hot' or 'count' over
    `depth` bins (DenseBincount per row, as TensorFlow builds it), after checking the ids
    are in ``[0, depth)``."""
    if mode == "int":
        return inputs
    rank = inputs.shape.ndims
    if rank == 0:
        inputs = array_shape_ops.expand_dims(inputs, -1)
    if mode == "one_hot" and inputs.shape[-1].value != 1:
        inputs = array_shape_ops.expand_dims(inputs, -1)
    if inputs.shape.ndims is not None and inputs.shape.ndims > 2:
        raise ValueError(f"When output_mode is not `'int'`, maximum supported output rank "
                         f"is 2. Received output_mode {mode} and input shape "
                         f"{inputs.shape}, which would result in output rank "
                         f"{inputs.shape.ndims}.")
    ids = inputs if inputs.dtype.base_dtype in (_dtypes.int32, _dtypes.int64) else \
        math_ops.cast(inputs, _dtypes.int64)
    low = math_reduce.reduce_min(ids)
    high = math_reduce.reduce_max(ids)
    ok = math_ops.logical_and(math_ops.greater(depth, high), math_ops.greater_equal(low, 0))
    check = control_flow_cond.Assert(ok, [
        f"Input values must be in the range 0 <= values < num_tokens with "
        f"num_tokens={depth}"])
    binary = mode in ("one_hot", "multi_hot")
    if count_weights is not None:
        weights = math_ops.cast(convert_to_tensor(count_weights), dtype)
    else:
        weights = constant([], dtype=dtype)
    with control_dependencies([check]):
        out = make_tensor("DenseBincount",
                          [ids, constant(depth, dtype=ids.dtype.base_dtype), weights],
                          {"binary_output": binary, "Tidx": ids.dtype.base_dtype,
                           "T": dtype}, name="bincount/DenseBincount")
    lead = inputs.shape[0].value if inputs.shape.ndims == 2 else None
    out.set_shape([lead, depth] if inputs.shape.ndims == 2 else [depth])
    return out


class CategoryEncoding(Layer):
    """Integer ids to dense vectors of `num_tokens`: 'multi_hot' (the default: 1 where an
    id occurs in the row), 'one_hot' (one id per example), 'count' (occurrences, or the
    sum of ``count_weights``)."""

    _MODES = ("count", "one_hot", "multi_hot")

    def __init__(self, num_tokens=None, output_mode="multi_hot", sparse: bool = False,
                 **kwargs) -> None:
        super().__init__(**kwargs)
        if num_tokens is None:
            raise ValueError("num_tokens must be set to use this layer. If the number of "
                             "tokens is not known beforehand, use the IntegerLookup layer "
                             "instead.")
        if int(num_tokens) < 1:
            raise ValueError(f"`num_tokens` must be >= 1. Received: num_tokens={num_tokens}.")
        _check_mode("CategoryEncoding", output_mode, self._MODES)
        if sparse:
            raise NotImplementedError("CategoryEncoding(sparse=True) is not supported by "
                                      "flowgraph; use the dense output.")
        self.num_tokens, self.output_mode, self.sparse = int(num_tokens), output_mode, sparse

    def get_config(self) -> dict:
        return {**super().get_config(), "num_tokens": self.num_tokens,
                "output_mode": self.output_mode, "sparse": self.sparse}

    def _convert(self, x):
        return convert_to_tensor(x)  # ids keep their integer dtype

    def call(self, inputs, count_weights=None):
        if count_weights is not None and self.output_mode != "count":
            raise ValueError(f"`count_weights` is not used when `output_mode` is not "
                             f"`'count'`. Received `count_weights={count_weights}`.")
        return _encode(inputs, self.num_tokens, self.output_mode, count_weights,
                       self._dtype if self._dtype and self._dtype.is_floating
                       else _dtypes.float32)


class Hashing(Layer):
    """Hash strings (numbers are hashed as their decimal strings) into `num_bins` bins:
    TensorFlow's FarmHash fingerprint (``tf.strings.to_hash_bucket_fast``), or SipHash
    keyed by `salt` (an int, or two) with ``to_hash_bucket_strong``. With `mask_value`,
    that value maps to 0 and the others to ``1 .. num_bins - 1``. `output_mode` 'int'
    (int64 bins) or an encoding as `CategoryEncoding`'s."""

    _MODES = ("int", "one_hot", "multi_hot", "count")

    def __init__(self, num_bins, mask_value=None, salt=None, output_mode="int",
                 sparse: bool = False, **kwargs) -> None:
        if num_bins is None or int(num_bins) <= 0:
            raise ValueError(f"The `num_bins` for `Hashing` cannot be `None` or non-positive "
                             f"values. Received: num_bins={num_bins}.")
        _check_mode("Hashing", output_mode, self._MODES)
        if sparse:
            raise NotImplementedError("Hashing(sparse=True) is not supported by flowgraph.")
        kwargs.setdefault("dtype", "int64" if output_mode == "int" else "float32")
        super().__init__(**kwargs)
        self.num_bins, self.mask_value, self.salt = int(num_bins), mask_value, salt
        self.output_mode, self.sparse = output_mode, sparse

    def get_config(self) -> dict:
        return {**super().get_config(), "num_bins": self.num_bins, "salt": self.salt,
                "mask_value": self.mask_value, "output_mode": self.output_mode,
                "sparse": self.sparse}

    def _convert(self, x):
        return convert_to_tensor(x)

    def _key(self) -> list[int] | None:
        if self.salt is None:
            return None
        salt = self.salt if isinstance(self.salt, list | tuple) else [self.salt, self.salt]
        if len(salt) != 2:
            raise ValueError(f"`salt` can only be a tuple of size 2 integers, or a single "
                             f"integer. Received: salt={self.salt}.")
        return [int(s) for s in salt]

    def call(self, inputs):
        strings = inputs if inputs.dtype.base_dtype == _dtypes.string else \
            string_hash_ops.as_string(inputs)
        bins = self.num_bins - (1 if self.mask_value is not None else 0)
        key = self._key()
        if key is None:
            hashed = string_hash_ops.to_hash_bucket_fast(strings, bins)
        else:
            hashed = string_legacy_hash_ops.string_to_hash_bucket_strong(strings, bins, key)
        if self.mask_value is not None:
            mask = math_ops.equal(inputs, convert_to_tensor(self.mask_value,
                                                            dtype=inputs.dtype.base_dtype))
            hashed = array_index_ops.where(mask, array_shape_ops.zeros_like(hashed),
                                     math_ops.add(hashed, 1))
        out = array_ops.identity(hashed)
        if self.output_mode == "int":
            return out
        return _encode(out, self.num_bins, self.output_mode)


class Discretization(Layer):
    """Bucket numbers by `bin_boundaries` (bucket ``i`` holds ``b[i-1] <= x < b[i]``),
    int64 ids, or an encoding as `CategoryEncoding`'s."""

    _MODES = ("int", "one_hot", "multi_hot", "count")

    def __init__(self, bin_boundaries=None, num_bins=None, epsilon=0.01, output_mode="int",
                 sparse: bool = False, **kwargs) -> None:
        if num_bins is not None and bin_boundaries is not None:
            raise ValueError(f"Both `num_bins` and `bin_boundaries` should not be set. You "
                             f"passed `num_bins={num_bins}` and "
                             f"`bin_boundaries={list(bin_boundaries)}`")
        _check_mode("Discretization", output_mode, self._MODES)
        if sparse:
            raise NotImplementedError("Discretization(sparse=True) is not supported by "
                                      "flowgraph.")
        kwargs.setdefault("dtype", "int64" if output_mode == "int" else "float32")
        super().__init__(**kwargs)
        self.bin_boundaries = None if bin_boundaries is None else \
            [float(b) for b in bin_boundaries]
        self.num_bins, self.epsilon = num_bins, epsilon
        self.output_mode, self.sparse = output_mode, sparse

    def get_config(self) -> dict:
        return {**super().get_config(), "bin_boundaries": self.bin_boundaries,
                "num_bins": self.num_bins, "epsilon": self.epsilon,
                "output_mode": self.output_mode, "sparse": self.sparse}

    def adapt(self, data, batch_size=None, steps=None):
        _adapt_unsupported(self)

    def _convert(self, x):
        return convert_to_tensor(x)

    def call(self, inputs):
        if self.bin_boundaries is None:
            raise ValueError(f"Discretization ({self.name}) has no `bin_boundaries`: pass "
                             f"them to the constructor (`adapt` needs TF2's eager mode).")
        ids = math_ops.cast(sparse_ops.bucketize(inputs, self.bin_boundaries), _dtypes.int64)
        out = array_ops.identity(ids)
        if self.output_mode == "int":
            return out
        return _encode(out, len(self.bin_boundaries) + 1, self.output_mode)


class Normalization(Layer):
    """``(x - mean) / max(sqrt(variance), epsilon)`` along `axis` (the axes kept; None:
    one mean and variance for everything); ``invert=True``: ``mean + x * sqrt(variance)``.
    Give `mean` and `variance`, or load them into the ``mean``/``variance`` weights."""

    def __init__(self, axis=-1, mean=None, variance=None, invert: bool = False,
                 **kwargs) -> None:
        super().__init__(**kwargs)
        if (mean is None) != (variance is None):
            raise ValueError(f"When setting values directly, both `mean` and `variance` "
                             f"must be set. Got mean: {mean} and variance: {variance}")
        if axis is None:
            axis = ()
        elif isinstance(axis, int):
            axis = (axis,)
        self.axis = tuple(int(a) for a in axis)
        self.input_mean, self.input_variance, self.invert = mean, variance, bool(invert)

    def get_config(self) -> dict:
        def plain(v):
            return np.asarray(v).tolist() if v is not None else None

        return {**super().get_config(), "axis": self.axis, "invert": self.invert,
                "mean": plain(self.input_mean), "variance": plain(self.input_variance)}

    def adapt(self, data, batch_size=None, steps=None):
        _adapt_unsupported(self)

    def build(self, input_shape) -> None:
        shape = TensorShape(input_shape)
        if shape.ndims is None:
            raise ValueError(f"Normalization ({self.name}) needs inputs of known rank.")
        ndim = shape.ndims
        keep = sorted(a % ndim for a in self.axis)
        for a in keep:
            if shape[a].value is None:
                raise ValueError(f"All `axis` values to be kept must have known shape. Got "
                                 f"axis: {self.axis}, input shape: {shape.as_list()}, with "
                                 f"unknown axis at index: {a}")
        self._keep, self._ndim = keep, ndim
        stat_shape = [shape[a].value for a in keep]
        self._bshape = [shape[d].value if d in keep else 1 for d in range(ndim)]
        if self.input_mean is None:
            self.adapt_mean = self.add_weight("mean", stat_shape, initializer="zeros",
                                              trainable=False)
            self.adapt_variance = self.add_weight("variance", stat_shape,
                                                  initializer="ones", trainable=False)
            self.count = self.add_weight("count", [], dtype=_dtypes.int64,
                                         initializer="zeros", trainable=False)
            self.mean, self.variance = self.adapt_mean, self.adapt_variance
        else:
            ones = np.ones(stat_shape, np.float32)
            self.mean = ones * np.asarray(self.input_mean, np.float32)
            self.variance = ones * np.asarray(self.input_variance, np.float32)

    def call(self, inputs):
        dtype = self._dtype or _dtypes.float32
        mean = array_shape_ops.reshape(convert_to_tensor(self.mean), self._bshape)
        variance = array_shape_ops.reshape(convert_to_tensor(self.variance), self._bshape)
        mean, variance = math_ops.cast(mean, dtype), math_ops.cast(variance, dtype)
        x = math_ops.cast(inputs, dtype) if inputs.dtype.base_dtype != dtype else inputs
        if self.invert:
            return math_ops.add(mean, math_ops.multiply(x, math_ops.maximum(
                math_ops.sqrt(variance), backend.epsilon())))
        return math_ops.truediv(math_ops.subtract(x, mean),
                                math_ops.maximum(math_ops.sqrt(variance), backend.epsilon()))
