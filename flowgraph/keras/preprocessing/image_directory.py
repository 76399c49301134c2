"""`ImageDataGenerator.flow_from_directory` and its `DirectoryIterator`.

One sub-folder per class (sorted by name unless ``classes`` is given; class ``i`` is the
``i``-th), image files with Keras' extensions found recursively and sorted, read with
`load_img` at ``target_size`` when a batch is made; labels per ``class_mode``:
``'categorical'`` (one-hot), ``'binary'``, ``'sparse'``, ``'input'`` or None. Batching,
shuffling and seeding are `NumpyArrayIterator`'s.

Example
-------
>>> import os, tempfile
>>> import numpy as np
>>> from flowgraph.keras.preprocessing.image import ImageDataGenerator, save_img
>>> root = tempfile.mkdtemp()
>>> for label in ("cats", "dogs"):
...     os.makedirs(os.path.join(root, label))
...     save_img(os.path.join(root, label, "a.png"), np.random.rand(8, 8, 3))
>>> it = ImageDataGenerator(rescale=1 / 255).flow_from_directory(
...     root, target_size=(4, 4), batch_size=2, shuffle=False)
Found 2 images belonging to 2 classes.
>>> x, y = next(it)
>>> x.shape, y.tolist(), it.class_indices
((2, 4, 4, 3), [[1.0, 0.0], [0.0, 1.0]], {'cats': 0, 'dogs': 1})
"""

from __future__ import annotations

import os

import numpy as np

from flowgraph.keras.preprocessing.image import (
    ImageDataGenerator,
    NumpyArrayIterator,
    img_to_array,
    load_img,
)

__all__ = ["DirectoryIterator"]

_FORMATS = ("png", "jpg", "jpeg", "bmp", "ppm", "tif", "tiff")
_CLASS_MODES = ("categorical", "binary", "sparse", "input", None)


def _files(folder: str, follow_links: bool) -> list[str]:
    found = []
    for root, _, names in sorted(os.walk(folder, followlinks=follow_links),
                                 key=lambda entry: entry[0]):
        found += [os.path.join(root, n) for n in sorted(names)
                  if n.lower().endswith(tuple("." + f for f in _FORMATS))]
    return found


class DirectoryIterator(NumpyArrayIterator):
    """Batches of images read from ``directory``'s class folders (see the module
    docstring); ``filenames``, ``classes`` and ``class_indices`` as Keras'."""

    def __init__(self, directory, image_data_generator, target_size=(256, 256),
                 color_mode="rgb", classes=None, class_mode="categorical", batch_size=32,
                 shuffle=True, seed=None, data_format=None, follow_links=False, subset=None,
                 interpolation="nearest", keep_aspect_ratio=False, dtype=None) -> None:
        gen = image_data_generator
        if color_mode not in ("rgb", "rgba", "grayscale"):
            raise ValueError(f"Invalid color mode: {color_mode}; expected 'rgb', 'rgba', or "
                             f"'grayscale'.")
        if class_mode not in _CLASS_MODES:
            raise ValueError(f"Invalid class_mode: {class_mode}; expected one of "
                             f"{list(_CLASS_MODES)}")
        if subset not in (None, "training", "validation"):
            raise ValueError(f"Invalid subset name: {subset}; expected 'training' or "
                             f"'validation'")
        self.directory, self.target_size = directory, tuple(target_size)
        self.color_mode, self.class_mode = color_mode, class_mode
        self.interpolation, self.dtype = interpolation, dtype or gen.dtype
        channels = {"rgb": 3, "rgba": 4, "grayscale": 1}[color_mode]
        self.image_shape = (*self.target_size, channels) if gen.data_format == \
            "channels_last" else (channels, *self.target_size)
        if not classes:
            classes = sorted(d for d in os.listdir(directory)
                             if os.path.isdir(os.path.join(directory, d)))
        self.class_indices = dict(zip(classes, range(len(classes))))
        filenames, labels = [], []
        for name in classes:
            files = _files(os.path.join(directory, name), follow_links)
            cut = int(len(files) * gen.validation_split)
            if subset == "validation":
                files = files[:cut]
            elif subset == "training":
                files = files[cut:]
            filenames += [os.path.relpath(f, directory) for f in files]
            labels += [self.class_indices[name]] * len(files)
        self.filenames, self.classes = filenames, np.array(labels, dtype=np.int32)
        self.samples = len(filenames)
        print(f"Found {self.samples} images belonging to {len(classes)} classes.")
        self.x = self.y = self.sample_weight = None
        self.gen, self.batch_size, self.shuffle, self.seed = gen, batch_size, shuffle, seed
        self.n, self.batch_index, self.total_batches_seen = self.samples, 0, 0
        self._order = None

    @property
    def filepaths(self) -> list[str]:
        return [os.path.join(self.directory, f) for f in self.filenames]

    @property
    def labels(self) -> np.ndarray:
        return self.classes

    def _batch(self, indices):
        images = np.zeros((len(indices), *self.image_shape), dtype=self.dtype)
        paths = self.filepaths
        for i, j in enumerate(indices):
            img = load_img(paths[j], color_mode=self.color_mode, target_size=self.target_size,
                           interpolation=self.interpolation)
            x = img_to_array(img, data_format=self.gen.data_format, dtype=self.dtype)
            img.close()
            x = self.gen.random_transform(x)
            images[i] = self.gen.standardize(x)
        if self.class_mode is None:
            return images
        if self.class_mode == "input":
            return images, images.copy()
        if self.class_mode == "sparse":
            return images, self.classes[indices]
        if self.class_mode == "binary":
            return images, self.classes[indices].astype(self.dtype)
        onehot = np.zeros((len(indices), len(self.class_indices)), dtype=self.dtype)
        onehot[np.arange(len(indices)), self.classes[indices]] = 1.0
        return images, onehot


def flow_from_directory(self, directory, target_size=(256, 256), color_mode="rgb",
                        classes=None, class_mode="categorical", batch_size=32, shuffle=True,
                        seed=None, save_to_dir=None, save_prefix="", save_format="png",
                        follow_links=False, subset=None, interpolation="nearest",
                        keep_aspect_ratio=False):
    """A `DirectoryIterator` over ``directory``'s class folders with this generator's
    normalization and augmentation."""
    if save_to_dir is not None:
        raise NotImplementedError("flow_from_directory: save_to_dir is not supported by "
                                  "flowgraph; save batches with `save_img`.")
    return DirectoryIterator(directory, self, target_size=target_size, color_mode=color_mode,
                             classes=classes, class_mode=class_mode, batch_size=batch_size,
                             shuffle=shuffle, seed=seed, follow_links=follow_links,
                             subset=subset, interpolation=interpolation,
                             keep_aspect_ratio=keep_aspect_ratio)


ImageDataGenerator.flow_from_directory = flow_from_directory
