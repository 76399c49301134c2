"""`tf.contrib.image`: the geometric data-augmentation ops of TF1 programs.

`transform` applies 8-float projective transforms (``ImageProjectiveTransformV2``, or
``V3`` with a ``fill_value``; each maps *output* points to *input* points); `rotate`
(counterclockwise, in radians, about the image centre) and `translate` build such
transforms with `angles_to_projective_transforms` and
`translations_to_projective_transforms`; `compose_transforms` chains them (the result
applies the last one first to the output point). `dense_image_warp` resamples an image
along a per-pixel flow field, bilinearly and differentiably in both the image and the
flow; `interpolate_spline` fits polyharmonic splines. `connected_components` labels
regions of equal nonzero pixels. Images may be
``[height, width]``, ``[height, width, channels]`` or
``[batch, height, width, channels]`` of uint8, int32, int64, float16, float32 or float64.

Example
-------
>>> import flowgraph as tf
>>> img = tf.reshape(tf.range(9.0), [3, 3])
>>> tf.Session().run(tf.contrib.image.rotate(img, 3.14159265 / 2)).tolist()
[[2.0, 5.0, 8.0], [1.0, 4.0, 7.0], [0.0, 3.0, 6.0]]
"""

from __future__ import annotations

from flowgraph.framework import dtypes
from flowgraph.framework.constant_op import constant_value, convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.ops import array_ops, linalg_ops, math_ops, math_reduce
from flowgraph.ops.image_transform_ops import (
    FILL_MODES,
    IMAGE_DTYPES,
    INTERPOLATIONS,
    flat_transforms_to_matrices,
    matrices_to_flat_transforms,
)
from flowgraph.ops.op_util import make_tensor

__all__ = ["angles_to_projective_transforms", "compose_transforms", "connected_components",
           "dense_image_warp", "flat_transforms_to_matrices", "interpolate_spline",
           "matrices_to_flat_transforms", "rotate", "transform", "translate",
           "translations_to_projective_transforms"]


def _as_batch(images):
    """`images` as a 4-D tensor, and a function giving a result the input's rank."""
    img = convert_to_tensor(images, name="images")
    if img.dtype.base_dtype not in IMAGE_DTYPES:
        raise TypeError(f"Invalid dtype {img.dtype.name} for images; expected one of "
                        f"{', '.join(d.name for d in IMAGE_DTYPES)}")
    rank = img.shape.ndims
    if rank is None:
        raise TypeError("image_or_images rank must be statically known")
    if rank == 2:
        return img[None, :, :, None], lambda out: out[0, :, :, 0]
    if rank == 3:
        return img[None, :, :, :], lambda out: out[0]
    if rank == 4:
        return img, lambda out: out
    raise TypeError(f"Images should have rank between 2 and 4, got shape {img.shape}")


def transform(images, transforms, interpolation="NEAREST", output_shape=None, name=None,
              fill_mode="CONSTANT", fill_value=0.0):
    """Apply projective transforms to images.

    `transforms` is one ``[8]`` vector ``[a0, a1, a2, b0, b1, b2, c0, c1]`` for every
    image or ``[batch, 8]``: the output pixel ``(x, y)`` takes the input's value at
    ``((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k)``, ``k = c0 x + c1 y + 1``.
    `interpolation` is ``"NEAREST"`` or ``"BILINEAR"`` (any case); `output_shape` is
    ``[new_height, new_width]`` (default: the input's). `fill_mode` (``"CONSTANT"``,
    ``"REFLECT"``, ``"WRAP"``, ``"NEAREST"``) and `fill_value` (TF Addons' extensions)
    say what points outside the input read; a nonzero `fill_value` uses
    ``ImageProjectiveTransformV3``.

    Example
    -------
    >>> import flowgraph as tf
    >>> img = tf.constant([[1, 2, 3], [4, 5, 6]], tf.uint8)
    >>> shift = tf.contrib.image.transform(img, [1.0, 0, 1, 0, 1, 0, 0, 0])
    >>> tf.Session().run(shift).tolist()
    [[2, 3, 0], [5, 6, 0]]
    """
    with name_scope(name, "transform", [images, transforms]):
        batch, restore = _as_batch(images)
        t = convert_to_tensor(transforms, name="transforms", dtype=dtypes.float32)
        if t.shape.ndims == 1:
            t = t[None]
        elif t.shape.ndims != 2:
            raise TypeError(f"Transforms should have rank 1 or 2, got shape {t.shape}")
        if output_shape is None:
            known = batch.shape[1:3]
            output_shape = (known.as_list() if known.is_fully_defined()
                            else array_ops.shape(batch)[1:3])
        output_shape = convert_to_tensor(output_shape, dtypes.int32, name="output_shape")
        if not output_shape.shape.is_compatible_with([2]):
            raise ValueError("output_shape must be a 1-D Tensor of 2 elements: new_height, "
                             f"new_width; got shape {output_shape.shape}")
        interp = str(interpolation).upper()
        if interp not in INTERPOLATIONS:
            raise ValueError(f"transform: interpolation must be 'NEAREST' or 'BILINEAR', got "
                             f"{interpolation!r}")
        mode = str(fill_mode).upper()
        if mode not in FILL_MODES:
            raise ValueError(f"transform: fill_mode must be one of {', '.join(FILL_MODES)}, "
                             f"got {fill_mode!r}")
        attrs = {"interpolation": interp, "fill_mode": mode}
        static_fill = constant_value(fill_value) if hasattr(fill_value, "op") else fill_value
        if static_fill is not None and float(static_fill) == 0.0:
            out = make_tensor("ImageProjectiveTransformV2", [batch, t, output_shape], attrs)
        else:
            fill = convert_to_tensor(fill_value, dtypes.float32, name="fill_value")
            out = make_tensor("ImageProjectiveTransformV3", [batch, t, output_shape, fill],
                              attrs)
        return restore(out)


def angles_to_projective_transforms(angles, image_height, image_width, name=None):
    """The ``[n, 8]`` transforms that rotate ``image_height`` x ``image_width`` images
    counterclockwise by `angles` (radians; a scalar or ``[n]``) about their centres.

    Example
    -------
    >>> import flowgraph as tf
    >>> t = tf.contrib.image.angles_to_projective_transforms(0.0, 4.0, 6.0)
    >>> tf.Session().run(t).tolist()
    [[1.0, -0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]]
    """
    with name_scope(name, "angles_to_projective_transforms"):
        a = convert_to_tensor(angles, name="angles", dtype=dtypes.float32)
        if a.shape.ndims == 0:
            a = a[None]
        elif a.shape.ndims != 1:
            raise TypeError(f"Angles should have rank 0 or 1, got shape {a.shape}")
        cos, sin = math_ops.cos(a), math_ops.sin(a)
        x_offset = ((image_width - 1) - (cos * (image_width - 1) - sin * (image_height - 1))) / 2.0
        y_offset = ((image_height - 1) - (sin * (image_width - 1) + cos * (image_height - 1))) / 2.0
        n = array_ops.shape(a)[0]
        return array_ops.concat(
            [cos[:, None], -sin[:, None], x_offset[:, None], sin[:, None], cos[:, None],
             y_offset[:, None], array_ops.zeros(array_ops.stack([n, 2]), dtypes.float32)],
            axis=1)


def rotate(images, angles, interpolation="NEAREST", name=None):
    """Rotate images counterclockwise by `angles` (radians: a scalar, or one per image),
    filling the corners with zeros.

    Example
    -------
    >>> import flowgraph as tf
    >>> img = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    >>> tf.Session().run(tf.contrib.image.rotate(img, 3.14159265)).tolist()
    [[4.0, 3.0], [2.0, 1.0]]
    """
    with name_scope(name, "rotate"):
        batch, restore = _as_batch(images)
        size = math_ops.cast(array_ops.shape(batch)[1:3], dtypes.float32)
        transforms = angles_to_projective_transforms(angles, size[0][None], size[1][None])
        return restore(transform(batch, transforms, interpolation=interpolation))


def translations_to_projective_transforms(translations, name=None):
    """The ``[n, 8]`` transforms that shift images by ``[dx, dy]`` (one ``[2]`` or
    ``[n, 2]``): the output pixel ``(x, y)`` reads the input at ``(x - dx, y - dy)``.

    Example
    -------
    >>> import flowgraph as tf
    >>> t = tf.contrib.image.translations_to_projective_transforms([2.0, -1.0])
    >>> tf.Session().run(t).tolist()
    [[1.0, 0.0, -2.0, 0.0, 1.0, 1.0, 0.0, 0.0]]
    """
    with name_scope(name, "translations_to_projective_transforms"):
        t = convert_to_tensor(translations, name="translations", dtype=dtypes.float32)
        if t.shape.ndims is None:
            raise TypeError("translation_or_translations rank must be statically known")
        if t.shape.ndims == 1:
            t = t[None]
        elif t.shape.ndims != 2:
            raise TypeError(f"Translations should have rank 1 or 2, got shape {t.shape}")
        n = array_ops.shape(t)[0]
        col = array_ops.stack([n, 1])
        ones, zeros = (array_ops.ones(col, dtypes.float32),
                       array_ops.zeros(col, dtypes.float32))
        return array_ops.concat(
            [ones, zeros, -t[:, 0, None], zeros, ones, -t[:, 1, None],
             array_ops.zeros(array_ops.stack([n, 2]), dtypes.float32)], axis=1)


def translate(images, translations, interpolation="NEAREST", name=None):
    """Shift images by ``[dx, dy]`` pixels (one pair, or one per image), filling with
    zeros.

    Example
    -------
    >>> import flowgraph as tf
    >>> img = tf.constant([[1.0, 2.0, 3.0]])
    >>> tf.Session().run(tf.contrib.image.translate(img, [1.0, 0.0])).tolist()
    [[0.0, 1.0, 2.0]]
    """
    with name_scope(name, "translate"):
        return transform(images, translations_to_projective_transforms(translations),
                         interpolation=interpolation)


def compose_transforms(*transforms):
    """One ``[n, 8]`` transform equal to applying `transforms` right to left to an
    output point (so ``transform(img, compose_transforms(a, b))`` is the transform by
    ``b`` of the transform by ``a``).

    Example
    -------
    >>> import flowgraph as tf
    >>> t1 = tf.contrib.image.translations_to_projective_transforms([1.0, 0.0])
    >>> t2 = tf.contrib.image.translations_to_projective_transforms([0.0, 2.0])
    >>> tf.Session().run(tf.contrib.image.compose_transforms(t1, t2)).tolist()
    [[1.0, 0.0, -1.0, 0.0, 1.0, -2.0, 0.0, 0.0]]
    """
    if not transforms:
        raise ValueError("compose_transforms needs at least one transform")
    with name_scope(None, "compose_transforms"):
        composed = flat_transforms_to_matrices(transforms[0])
        for t in transforms[1:]:
            composed = math_ops.matmul(composed, flat_transforms_to_matrices(t))
        return matrices_to_flat_transforms(composed)


def _interpolate_bilinear(grid, query_points, name="interpolate_bilinear"):
    """Bilinear samples of ``grid`` ``[b, h, w, c]`` at ``query_points`` ``[b, n, 2]``
    (``(y, x)`` pairs), clamped to the grid (extrapolating one cell off its edge)."""
    with name_scope(name):
        size = array_ops.shape(grid)
        b, h, w, c = size[0], size[1], size[2], size[3]
        n = array_ops.shape(query_points)[1]
        floors, ceils, alphas = [], [], []
        for dim, queries in enumerate(array_ops.unstack(query_points, num=2, axis=2)):
            max_floor = math_ops.cast(size[dim + 1] - 2, query_points.dtype)
            floor = math_ops.minimum(math_ops.maximum(0.0, math_ops.floor(queries)),
                                     max_floor)
            int_floor = math_ops.cast(floor, dtypes.int32)
            floors.append(int_floor)
            ceils.append(int_floor + 1)
            alpha = math_ops.cast(queries - floor, grid.dtype)
            alphas.append(math_ops.minimum(math_ops.maximum(0.0, alpha), 1.0)[:, :, None])
        flat = array_ops.reshape(grid, array_ops.stack([b * h * w, c]))
        offsets = array_ops.reshape(array_ops.range(b) * h * w, [-1, 1])

        def gather(ys, xs):
            linear = offsets + ys * w + xs
            return array_ops.reshape(array_ops.gather(flat, linear), array_ops.stack([b, n, c]))

        top_left, top_right = gather(floors[0], floors[1]), gather(floors[0], ceils[1])
        bottom_left, bottom_right = gather(ceils[0], floors[1]), gather(ceils[0], ceils[1])
        top = alphas[1] * (top_right - top_left) + top_left
        bottom = alphas[1] * (bottom_right - bottom_left) + bottom_left
        return alphas[0] * (bottom - top) + top


def dense_image_warp(image, flow, name="dense_image_warp"):
    """Resample ``image`` ``[batch, height, width, channels]`` along ``flow``
    ``[batch, height, width, 2]``: ``out[b, y, x] = image[b, y - flow[b, y, x, 0],
    x - flow[b, y, x, 1]]``, bilinearly, clamped at the borders (height and width must
    be at least 2). Differentiable with respect to both inputs.

    Example
    -------
    >>> import flowgraph as tf
    >>> img = tf.reshape(tf.range(6.0), [1, 2, 3, 1])
    >>> flow = tf.concat([tf.zeros([1, 2, 3, 1]), tf.fill([1, 2, 3, 1], 0.5)], 3)
    >>> tf.Session().run(tf.contrib.image.dense_image_warp(img, flow))[0, :, :, 0].tolist()
    [[0.0, 0.5, 1.5], [3.0, 3.5, 4.5]]
    """
    with name_scope(name, "dense_image_warp", [image, flow]):
        image = convert_to_tensor(image, name="image")
        flow = convert_to_tensor(flow, name="flow")
        if image.shape.ndims not in (None, 4):
            raise ValueError(f"dense_image_warp: image must be 4-D [batch, height, width, "
                             f"channels], got shape {image.shape}")
        if flow.shape.ndims not in (None, 4):
            raise ValueError(f"dense_image_warp: flow must be 4-D [batch, height, width, 2], "
                             f"got shape {flow.shape}")
        for axis, what in ((1, "height"), (2, "width")):
            d = image.shape[axis].value if image.shape.ndims else None
            if d is not None and d < 2:
                raise ValueError(f"dense_image_warp: grid {what} must be at least 2, got {d}")
        size = array_ops.shape(image)
        b, h, w, c = size[0], size[1], size[2], size[3]
        ys = array_ops.reshape(array_ops.range(h), [-1, 1]) + array_ops.zeros(
            array_ops.stack([1, w]), dtypes.int32)
        xs = array_ops.reshape(array_ops.range(w), [1, -1]) + array_ops.zeros(
            array_ops.stack([h, 1]), dtypes.int32)
        grid = math_ops.cast(array_ops.stack([ys, xs], axis=2), flow.dtype)
        query = array_ops.reshape(grid[None] - flow, array_ops.stack([b, h * w, 2]))
        out = _interpolate_bilinear(image, query)
        return array_ops.reshape(out, array_ops.stack([b, h, w, c]))


def connected_components(images):
    """Label the connected regions of ``[height, width]`` or ``[batch, height, width]``
    images: pixels are joined when they share an edge and hold the same nonzero value
    (True, a non-empty string); labels are int32 ``1, 2, ...`` (as TF's renumbering
    leaves them) in the order of each region's first pixel over the whole batch, 0 for
    the background.

    Example
    -------
    >>> import flowgraph as tf
    >>> img = tf.constant([[1, 1, 0, 2], [0, 1, 0, 2], [3, 0, 0, 1]])
    >>> tf.Session().run(tf.contrib.image.connected_components(img)).tolist()
    [[1, 1, 0, 2], [0, 1, 0, 2], [3, 0, 0, 4]]
    """
    with name_scope(None, "connected_components", [images]):
        img = convert_to_tensor(images, name="images")
        rank = img.shape.ndims
        if rank not in (2, 3):
            raise TypeError(f"connected_components: images must have rank 2 [height, width] "
                            f"or 3 [batch, height, width], got shape {img.shape}")
        labels = make_tensor("ImageConnectedComponents", [img[None] if rank == 2 else img])
        labels = math_ops.cast(labels, dtypes.int32)
        return labels[0] if rank == 2 else labels


_SPLINE_EPS = 1e-10  # keeps log and sqrt (and their gradients) finite at zero distance


def _spline_kernel(r2, order):
    """The polyharmonic radial basis function of squared distances `r2`:
    ``r**order`` for odd orders, ``r**order * log(r)`` for even ones."""
    safe = math_ops.maximum(r2, _SPLINE_EPS)
    if order == 1:
        return math_ops.sqrt(safe)
    if order == 2:
        return 0.5 * r2 * math_ops.log(safe)
    if order == 4:
        return 0.5 * r2 * r2 * math_ops.log(safe)
    if order % 2 == 0:
        return 0.5 * math_ops.pow(safe, 0.5 * order) * math_ops.log(safe)
    return math_ops.pow(safe, 0.5 * order)


def _squared_distances(a, b):
    """``[batch, n, m]`` squared distances between the rows of ``a`` and of ``b``."""
    na = math_reduce.reduce_sum(a * a, 2)[:, :, None]
    nb = math_reduce.reduce_sum(b * b, 2)[:, None, :]
    return na - 2.0 * math_ops.matmul(a, b, transpose_b=True) + nb


def interpolate_spline(train_points, train_values, query_points, order,
                       regularization_weight=0.0, name="interpolate_spline"):
    """Polyharmonic spline interpolation: fit ``f`` with ``f(train_points) = train_values``
    (``[batch, n, d]`` points, ``[batch, n, k]`` values) as radial basis functions of
    `order` (1: ``r``, 2: thin-plate ``r^2 log r``, ...) plus an affine term, then
    evaluate it at ``query_points`` ``[batch, m, d]``. A positive
    `regularization_weight` smooths instead of interpolating exactly. Differentiable in
    every input.

    Example
    -------
    >>> import flowgraph as tf
    >>> pts = [[[0.0], [1.0], [2.0]]]
    >>> vals = [[[0.0], [1.0], [4.0]]]
    >>> out = tf.contrib.image.interpolate_spline(pts, vals, [[[1.0], [1.5]]], order=2)
    >>> [round(v, 4) for v in tf.Session().run(out).reshape(-1).tolist()]
    [1.0, 2.3915]
    """
    with name_scope(name, "interpolate_spline"):
        c = convert_to_tensor(train_points, name="train_points")
        f = convert_to_tensor(train_values, name="train_values", dtype=c.dtype)
        q = convert_to_tensor(query_points, name="query_points", dtype=c.dtype)
        for what, t in (("train_points", c), ("train_values", f), ("query_points", q)):
            if t.shape.ndims not in (None, 3):
                raise ValueError(f"interpolate_spline: {what} must be 3-D [batch, n, dims], "
                                 f"got shape {t.shape}")
        with name_scope("solve"):
            size = array_ops.shape(c)
            b, n = size[0], size[1]
            d1 = array_ops.shape(c)[2] + 1
            k = array_ops.shape(f)[2]
            a = _spline_kernel(_squared_distances(c, c), order)
            if regularization_weight > 0:
                eye = math_ops.cast(array_ops.reshape(
                    math_ops.equal(array_ops.range(n)[:, None], array_ops.range(n)[None]),
                    array_ops.stack([1, n, n])), c.dtype)
                a = a + regularization_weight * eye
            affine = array_ops.concat([c, array_ops.ones_like(c[:, :, :1])], 2)
            lhs = array_ops.concat([
                array_ops.concat([a, array_ops.transpose(affine, [0, 2, 1])], 1),
                array_ops.concat([affine, array_ops.zeros(array_ops.stack([b, d1, d1]),
                                                          c.dtype)], 1)], 2)
            rhs = array_ops.concat([f, array_ops.zeros(array_ops.stack([b, d1, k]), c.dtype)], 1)
            weights = linalg_ops.matrix_solve(lhs, rhs)
            w, v = weights[:, :n, :], weights[:, n:, :]
        with name_scope("predict"):
            radial = math_ops.matmul(_spline_kernel(_squared_distances(q, c), order), w)
            q1 = array_ops.concat([q, array_ops.ones_like(q[:, :, :1])], 2)
            return radial + math_ops.matmul(q1, v)
