"""Random and fixed geometric and channel transforms of one image array, as Keras'
`preprocessing.image` (the brightness ones, which go through PIL, live there).

The geometric ones go through `apply_affine_transform` (`scipy.ndimage`); the random
ones draw from NumPy's global generator. Axes are given as Keras does: by default a
``channels_first`` single image (``channel_axis=0``, ``row_axis=1``, ``col_axis=2``).

Example
-------
>>> import numpy as np
>>> x = np.arange(9.0).reshape(1, 3, 3)
>>> apply_channel_shift(x, 10.0)[0, 0].tolist()     # clipped to the image's range
[8.0, 8.0, 8.0]
"""

from __future__ import annotations

import numpy as np

__all__ = ["apply_affine_transform", "apply_channel_shift", "random_channel_shift",
           "random_rotation", "random_shear", "random_shift", "random_zoom"]


def apply_affine_transform(x, theta=0, tx=0, ty=0, shear=0, zx=1, zy=1, row_axis=1,
                           col_axis=2, channel_axis=0, fill_mode="nearest", cval=0.0,
                           order=1):
    """Rotate (``theta`` degrees), shift (``tx`` rows, ``ty`` columns), shear (degrees)
    and zoom one image about its centre; ``fill_mode`` as `scipy.ndimage`."""
    from scipy import ndimage

    matrix = np.eye(3)
    if theta:
        t = np.deg2rad(theta)
        matrix = matrix @ np.array([[np.cos(t), -np.sin(t), 0], [np.sin(t), np.cos(t), 0],
                                    [0, 0, 1]])
    if tx or ty:
        matrix = matrix @ np.array([[1, 0, tx], [0, 1, ty], [0, 0, 1]])
    if shear:
        s = np.deg2rad(shear)
        matrix = matrix @ np.array([[1, -np.sin(s), 0], [0, np.cos(s), 0], [0, 0, 1]])
    if zx != 1 or zy != 1:
        matrix = matrix @ np.array([[zx, 0, 0], [0, zy, 0], [0, 0, 1]])
    if np.allclose(matrix, np.eye(3)):
        return x
    h, w = x.shape[row_axis], x.shape[col_axis]
    centre = np.array([[1, 0, h / 2 - 0.5], [0, 1, w / 2 - 0.5], [0, 0, 1]])
    back = np.array([[1, 0, -(h / 2 - 0.5)], [0, 1, -(w / 2 - 0.5)], [0, 0, 1]])
    matrix = centre @ matrix @ back
    if col_axis > row_axis:
        # Keras builds the matrix in (x, y) = (column, row) order and applies it to arrays
        # indexed (row, column): swapping both axes of the matrix gives its result.
        matrix = matrix[[1, 0, 2]][:, [1, 0, 2]]
    out = [ndimage.affine_transform(plane, matrix[:2, :2], matrix[:2, 2], order=order,
                                    mode=fill_mode, cval=cval)
           for plane in np.moveaxis(x, channel_axis, 0)]
    return np.moveaxis(np.stack(out), 0, channel_axis)


def random_rotation(x, rg, row_axis=1, col_axis=2, channel_axis=0, fill_mode="nearest",
                    cval=0.0, interpolation_order=1):
    """Rotate by a uniform angle in ``[-rg, rg]`` degrees."""
    theta = np.random.uniform(-rg, rg)
    return apply_affine_transform(x, theta=theta, row_axis=row_axis, col_axis=col_axis,
                                  channel_axis=channel_axis, fill_mode=fill_mode, cval=cval,
                                  order=interpolation_order)


def random_shift(x, wrg, hrg, row_axis=1, col_axis=2, channel_axis=0, fill_mode="nearest",
                 cval=0.0, interpolation_order=1):
    """Shift by uniform fractions ``[-hrg, hrg]`` of the height, ``[-wrg, wrg]`` of the
    width."""
    h, w = x.shape[row_axis], x.shape[col_axis]
    tx = np.random.uniform(-hrg, hrg) * h
    ty = np.random.uniform(-wrg, wrg) * w
    return apply_affine_transform(x, tx=tx, ty=ty, row_axis=row_axis, col_axis=col_axis,
                                  channel_axis=channel_axis, fill_mode=fill_mode, cval=cval,
                                  order=interpolation_order)


def random_shear(x, intensity, row_axis=1, col_axis=2, channel_axis=0, fill_mode="nearest",
                 cval=0.0, interpolation_order=1):
    """Shear by a uniform angle in ``[-intensity, intensity]`` degrees."""
    shear = np.random.uniform(-intensity, intensity)
    return apply_affine_transform(x, shear=shear, row_axis=row_axis, col_axis=col_axis,
                                  channel_axis=channel_axis, fill_mode=fill_mode, cval=cval,
                                  order=interpolation_order)


def random_zoom(x, zoom_range, row_axis=1, col_axis=2, channel_axis=0, fill_mode="nearest",
                cval=0.0, interpolation_order=1):
    """Zoom each axis by a uniform factor in ``zoom_range`` (a pair)."""
    if len(zoom_range) != 2:
        raise ValueError(f"random_zoom: `zoom_range` should be a tuple or list of two floats. "
                         f"Received: {zoom_range}")
    if zoom_range[0] == 1 and zoom_range[1] == 1:
        zx, zy = 1, 1
    else:
        zx, zy = np.random.uniform(zoom_range[0], zoom_range[1], 2)
    return apply_affine_transform(x, zx=zx, zy=zy, row_axis=row_axis, col_axis=col_axis,
                                  channel_axis=channel_axis, fill_mode=fill_mode, cval=cval,
                                  order=interpolation_order)


def apply_channel_shift(x, intensity, channel_axis=0):
    """Add ``intensity`` to every channel, clipped to the image's own min and max."""
    lo, hi = np.min(x), np.max(x)
    planes = [np.clip(plane + intensity, lo, hi) for plane in np.moveaxis(x, channel_axis, 0)]
    return np.moveaxis(np.stack(planes), 0, channel_axis)


def random_channel_shift(x, intensity_range, channel_axis=0):
    """`apply_channel_shift` by a uniform amount in ``[-intensity_range, intensity_range]``."""
    intensity = np.random.uniform(-intensity_range, intensity_range)
    return apply_channel_shift(x, intensity, channel_axis=channel_axis)
