"""`tf.keras.preprocessing.image`: images as arrays and `ImageDataGenerator`.

`img_to_array` / `array_to_img` convert between PIL images and float arrays in the
``channels_last`` (default) or ``channels_first`` layout. `ImageDataGenerator`
normalizes (``rescale``, sample- or feature-wise centring and scaling, ZCA whitening) and
augments (rotation, shifts, shear, zoom, flips, channel and brightness shifts) images
batch by batch; ``flow`` iterates over NumPy arrays. The augmentations draw from NumPy's
global generator in Keras' order and ``flow(seed=...)`` reseeds it before each batch as
Keras does, so a seeded program gets Keras' batches.

Example
-------
>>> import numpy as np
>>> from flowgraph.keras.preprocessing.image import ImageDataGenerator
>>> gen = ImageDataGenerator(rescale=0.5)
>>> batch = next(iter(gen.flow(np.full((3, 2, 2, 1), 4.0), batch_size=2, shuffle=False)))
>>> batch.shape, float(batch.max())
((2, 2, 2, 1), 2.0)
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from flowgraph.keras import backend
from flowgraph.keras.preprocessing.image_transforms import (
    apply_affine_transform,
    apply_channel_shift,
    random_channel_shift,
    random_rotation,
    random_shear,
    random_shift,
    random_zoom,
)

# TF's two names for one function: the image <-> array conversions are `tf.keras.utils`' own
from flowgraph.keras.utils_files import array_to_img, img_to_array, load_img, save_img

__all__ = ["ImageDataGenerator", "NumpyArrayIterator", "apply_affine_transform",
           "apply_brightness_shift", "apply_channel_shift", "array_to_img", "img_to_array",
           "load_img", "random_brightness", "random_channel_shift", "random_rotation",
           "random_shear", "random_shift", "random_zoom", "save_img"]


def _layout(data_format):
    data_format = data_format or backend.image_data_format()
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError(f"Unknown data_format: {data_format!r}; use 'channels_last' or "
                         f"'channels_first'.")
    return data_format


def apply_brightness_shift(x, brightness, scale=True):
    """Scale the brightness of a channels-last image by ``brightness`` (PIL's
    ``ImageEnhance.Brightness``); an image outside 0..255 is mapped there and back."""
    from PIL import ImageEnhance

    lo, hi = np.min(x), np.max(x)
    outside = lo < 0 or hi > 255
    img = ImageEnhance.Brightness(array_to_img(x, scale=outside or scale)).enhance(brightness)
    out = img_to_array(img)
    if not scale and outside:
        out = out / 255 * (hi - lo) + lo
    return out


def random_brightness(x, brightness_range, scale=True):
    """`apply_brightness_shift` by a uniform factor in ``brightness_range`` (a pair)."""
    if len(brightness_range) != 2:
        raise ValueError(f"random_brightness: `brightness_range should be tuple or list of "
                         f"two floats. Received: {brightness_range}")
    return apply_brightness_shift(x, np.random.uniform(*brightness_range), scale)


def _range(value, name):
    if np.isscalar(value):
        return (1 - value, 1 + value)
    if len(value) == 2:
        return (value[0], value[1])
    raise ValueError(f"ImageDataGenerator: `{name}` should be a float or a tuple or list of "
                     f"two floats. Received: {value}")


class ImageDataGenerator:
    """Normalizes and augments batches of images (see the module docstring).

    Normalization, per image, in this order: ``preprocessing_function``, ``rescale``
    (a factor), ``samplewise_center`` / ``samplewise_std_normalization`` (the image's own
    mean and std), ``featurewise_center`` / ``featurewise_std_normalization`` (per
    channel statistics from `fit`), ``zca_whitening``.

    Example
    -------
    >>> gen = ImageDataGenerator(featurewise_center=True)
    >>> x = np.arange(8, dtype=np.float32).reshape(2, 2, 2, 1)
    >>> gen.fit(x)
    >>> float(gen.mean.ravel()[0]), gen.standardize(x[0].copy()).ravel().tolist()
    (3.5, [-3.5, -2.5, -1.5, -0.5])
    """

    def __init__(self, featurewise_center=False, samplewise_center=False,
                 featurewise_std_normalization=False, samplewise_std_normalization=False,
                 zca_whitening=False, zca_epsilon=1e-6, rotation_range=0,
                 width_shift_range=0.0, height_shift_range=0.0, brightness_range=None,
                 shear_range=0.0, zoom_range=0.0, channel_shift_range=0.0,
                 fill_mode="nearest", cval=0.0, horizontal_flip=False, vertical_flip=False,
                 rescale=None, preprocessing_function=None, data_format=None,
                 validation_split=0.0, interpolation_order=1, dtype=None) -> None:
        self.data_format = _layout(data_format)
        self.dtype = dtype or backend.floatx()
        self.featurewise_center = featurewise_center
        self.samplewise_center = samplewise_center
        self.featurewise_std_normalization = featurewise_std_normalization
        self.samplewise_std_normalization = samplewise_std_normalization
        self.zca_whitening, self.zca_epsilon = zca_whitening, zca_epsilon
        self.rotation_range = rotation_range
        self.width_shift_range, self.height_shift_range = width_shift_range, height_shift_range
        self.shear_range = shear_range
        self.zoom_range = _range(zoom_range, "zoom_range")
        self.channel_shift_range = channel_shift_range
        self.brightness_range = brightness_range
        if fill_mode not in ("constant", "nearest", "reflect", "wrap"):
            raise ValueError(f"ImageDataGenerator: fill_mode must be 'constant', 'nearest', "
                             f"'reflect' or 'wrap', got {fill_mode!r}")
        self.fill_mode, self.cval = fill_mode, cval
        self.horizontal_flip, self.vertical_flip = horizontal_flip, vertical_flip
        self.rescale = rescale
        self.preprocessing_function = preprocessing_function
        if not 0 <= validation_split < 1:
            raise ValueError(f"ImageDataGenerator: `validation_split` must be strictly "
                             f"between 0 and 1. Received: {validation_split}")
        self.validation_split = validation_split
        self.interpolation_order = interpolation_order
        if self.data_format == "channels_first":
            self.channel_axis, self.row_axis, self.col_axis = 1, 2, 3
        else:
            self.channel_axis, self.row_axis, self.col_axis = 3, 1, 2
        self.mean = self.std = self.zca_whitening_matrix = None
        # Keras' implied settings: whitening centres (and replaces std scaling), std
        # scaling centres.
        if zca_whitening:
            self.featurewise_center = True
            self.featurewise_std_normalization = False
        if featurewise_std_normalization and not zca_whitening:
            self.featurewise_center = True
        if samplewise_std_normalization:
            self.samplewise_center = True

    def flow(self, x, y=None, batch_size=32, shuffle=True, sample_weight=None, seed=None,
             save_to_dir=None, save_prefix="", save_format="png", subset=None):
        """An iterator over ``x`` (rank 4) and ``y``: batches of ``(images, labels)`` (or
        images alone without ``y``; ``(images, labels, weights)`` with weights)."""
        if save_to_dir is not None:
            raise NotImplementedError("ImageDataGenerator.flow: save_to_dir is not supported "
                                      "by flowgraph; save batches with `save_img`.")
        return NumpyArrayIterator(x, y, self, batch_size=batch_size, shuffle=shuffle,
                                  sample_weight=sample_weight, seed=seed, subset=subset)

    def _missing_fit(self, what):
        warnings.warn(f"This ImageDataGenerator specifies `{what}`, but it hasn't been fit "
                      f"on any training data. Fit it first by calling `.fit(numpy_data)`.",
                      stacklevel=3)

    def standardize(self, x):
        """Normalize one image or a batch (in place where it can, like Keras)."""
        if self.preprocessing_function:
            x = self.preprocessing_function(x)
        if self.rescale:
            x *= self.rescale
        if self.samplewise_center:
            x -= np.mean(x, keepdims=True)
        if self.samplewise_std_normalization:
            x /= np.std(x, keepdims=True) + 1e-6
        for flag, stat, what in ((self.featurewise_center, "mean", "featurewise_center"),
                                 (self.featurewise_std_normalization, "std",
                                  "featurewise_std_normalization")):
            if flag:
                value = getattr(self, stat)
                if value is None:
                    self._missing_fit(what)
                elif stat == "mean":
                    x -= value
                else:
                    x /= value + 1e-6
        if self.zca_whitening:
            if self.zca_whitening_matrix is None:
                self._missing_fit("zca_whitening")
            else:
                flat = x.reshape(-1, int(np.prod(x.shape[-3:])))
                x = np.reshape(flat @ self.zca_whitening_matrix, x.shape)
        return x

    @staticmethod
    def _shift(value, size):
        if not value:
            return 0
        try:  # an int or a list: a random element, either sign
            shift = np.random.choice(value) * np.random.choice([-1, 1])
        except ValueError:  # a float: uniform in [-value, value]
            shift = np.random.uniform(-value, value)
        return shift * size if np.max(value) < 1 else shift

    def get_random_transform(self, img_shape, seed=None) -> dict:
        """Random parameters for `apply_transform`, drawn from NumPy's global generator in
        Keras' order (so a seed gives Keras' parameters)."""
        if seed is not None:
            np.random.seed(seed)
        rows, cols = img_shape[self.row_axis - 1], img_shape[self.col_axis - 1]
        r = self.rotation_range
        params = {"theta": np.random.uniform(-r, r) if r else 0}
        params["tx"] = self._shift(self.height_shift_range, rows)
        params["ty"] = self._shift(self.width_shift_range, cols)
        params["shear"] = (np.random.uniform(-self.shear_range, self.shear_range)
                           if self.shear_range else 0)
        zx, zy = ((1, 1) if tuple(self.zoom_range) == (1, 1) else
                  np.random.uniform(self.zoom_range[0], self.zoom_range[1], 2))
        params.update(zx=zx, zy=zy)
        params["flip_horizontal"] = bool(np.random.random() < 0.5) and self.horizontal_flip
        params["flip_vertical"] = bool(np.random.random() < 0.5) and self.vertical_flip
        params["channel_shift_intensity"] = (
            np.random.uniform(-self.channel_shift_range, self.channel_shift_range)
            if self.channel_shift_range else None)
        params["brightness"] = (np.random.uniform(*self.brightness_range)
                                if self.brightness_range is not None else None)
        return params

    def apply_transform(self, x, transform_parameters: dict):
        """Apply the parameters `get_random_transform` drew to one image."""
        p = transform_parameters
        rows, cols, chans = self.row_axis - 1, self.col_axis - 1, self.channel_axis - 1
        x = apply_affine_transform(x, p.get("theta", 0), p.get("tx", 0), p.get("ty", 0),
                                   p.get("shear", 0), p.get("zx", 1), p.get("zy", 1),
                                   row_axis=rows, col_axis=cols, channel_axis=chans,
                                   fill_mode=self.fill_mode, cval=self.cval,
                                   order=self.interpolation_order)
        if p.get("channel_shift_intensity") is not None:
            x = apply_channel_shift(x, p["channel_shift_intensity"], chans)
        if p.get("flip_horizontal"):
            x = np.flip(x, cols)
        if p.get("flip_vertical"):
            x = np.flip(x, rows)
        if p.get("brightness") is not None:
            x = apply_brightness_shift(x, p["brightness"], False)
        return x

    def random_transform(self, x, seed=None):
        """One randomly augmented copy of an image."""
        return self.apply_transform(x, self.get_random_transform(x.shape, seed))

    def fit(self, x, augment=False, rounds=1, seed=None) -> None:
        """Per-channel mean / std (and the ZCA matrix) of a rank-4 sample of images."""
        x = np.array(x, dtype=self.dtype)
        if x.ndim != 4:
            raise ValueError(f"ImageDataGenerator.fit: Input to `.fit()` should have rank 4. "
                             f"Got array with shape: {x.shape}")
        if seed is not None:
            np.random.seed(seed)
        if self.rescale:
            x *= self.rescale
        if augment:
            x = np.stack([self.random_transform(img) for _ in range(rounds) for img in x])
        shape = [1, 1, 1]
        shape[self.channel_axis - 1] = x.shape[self.channel_axis]
        axes = (0, self.row_axis, self.col_axis)
        if self.featurewise_center:
            self.mean = np.reshape(np.mean(x, axis=axes), shape)
            x -= self.mean
        if self.featurewise_std_normalization:
            self.std = np.reshape(np.std(x, axis=axes), shape)
            x /= self.std + 1e-6
        if self.zca_whitening:
            flat = x.reshape(len(x), -1)
            u, sv, _ = np.linalg.svd(flat.T, full_matrices=False)
            scale = float(np.sqrt(len(x))) / (sv + self.zca_epsilon)
            self.zca_whitening_matrix = (u * scale) @ u.T


class NumpyArrayIterator:
    """Batches of `ImageDataGenerator`-processed images from arrays (``len()`` is the
    batches per epoch; iteration goes on epoch after epoch, reshuffling each time)."""

    def __init__(self, x, y, image_data_generator, batch_size=32, shuffle=False,
                 sample_weight=None, seed=None, subset=None, dtype=None) -> None:
        gen = image_data_generator
        x = np.asarray(x, dtype=dtype or gen.dtype)
        if x.ndim != 4:
            raise ValueError(f"NumpyArrayIterator: Input data should have rank 4 (images), "
                             f"got shape {x.shape}")
        if y is not None and len(x) != len(y):
            raise ValueError(f"`x` (images tensor) and `y` (labels) should have the same "
                             f"length. Found: x.shape = {x.shape}, y.shape = "
                             f"{np.asarray(y).shape}")
        if subset is not None:
            if subset not in ("training", "validation"):
                raise ValueError(f"Invalid subset name: {subset}; expected 'training' or "
                                 f"'validation'")
            cut = int(len(x) * gen.validation_split)
            part = slice(None, cut) if subset == "validation" else slice(cut, None)
            x = x[part]
            y = None if y is None else np.asarray(y)[part]
            sample_weight = None if sample_weight is None else np.asarray(sample_weight)[part]
        self.x, self.y = x, None if y is None else np.asarray(y)
        self.sample_weight = None if sample_weight is None else np.asarray(sample_weight)
        self.gen, self.batch_size, self.shuffle, self.seed = gen, batch_size, shuffle, seed
        self.n, self.batch_index, self.total_batches_seen = len(x), 0, 0
        self._order = None

    def __len__(self) -> int:
        return math.ceil(self.n / self.batch_size)

    def on_epoch_end(self) -> None:
        self._order = None

    def _seed(self) -> None:
        # Keras reseeds before every batch, so a seeded flow repeats exactly.
        if self.seed is not None:
            np.random.seed(self.seed + self.total_batches_seen)

    def _set_order(self) -> None:
        self._order = np.random.permutation(self.n) if self.shuffle else np.arange(self.n)

    def _batch(self, indices):
        images = np.zeros((len(indices), *self.x.shape[1:]), dtype=self.x.dtype)
        for i, j in enumerate(indices):
            img = self.gen.random_transform(self.x[j].astype(self.x.dtype))
            images[i] = self.gen.standardize(img)
        out = [images]
        if self.y is not None:
            out.append(self.y[indices])
        if self.sample_weight is not None:
            out.append(self.sample_weight[indices])
        return out[0] if len(out) == 1 else tuple(out)

    def __getitem__(self, idx: int):
        if idx >= len(self):
            raise ValueError(f"Asked to retrieve element {idx}, but the Sequence has length "
                             f"{len(self)}")
        self._seed()
        self.total_batches_seen += 1
        if self._order is None:
            self._set_order()
        return self._batch(self._order[self.batch_size * idx:self.batch_size * (idx + 1)])

    def __iter__(self):
        return self

    def __next__(self):
        self._seed()
        if self.batch_index == 0:
            self._set_order()
        start = (self.batch_index * self.batch_size) % self.n
        self.batch_index = self.batch_index + 1 if self.n > start + self.batch_size else 0
        self.total_batches_seen += 1
        return self._batch(self._order[start:start + self.batch_size])

    next = __next__
