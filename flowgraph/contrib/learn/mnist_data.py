"""`tf.contrib.learn.datasets.mnist` (also `flowgraph.examples.tutorials.mnist.input_data`):
the MNIST reader of TF1's beginner tutorials.

`read_data_sets(train_dir)` reads the four gzipped IDX files from `train_dir`, fetching a
missing one from `source_url` first (written atomically), and returns
``Datasets(train, validation, test)`` of `DataSet`: images scaled to [0, 1] as float32
rows of 784 pixels (or uint8, or 28x28x1 with ``reshape=False``), labels as class ids or
one-hot rows. `DataSet.next_batch` walks the examples in an order reshuffled every epoch
with NumPy's global generator, which each `DataSet` seeds as TF 1.x's did: from ``seed``
when given, else from the graph-level seed (`tf.set_random_seed`), else from the OS.

Files are parsed without trusting their headers: a count or size that the data does not
hold is an error naming the file, not a huge allocation.

Example
-------
>>> import numpy as np
>>> train = DataSet(np.zeros((3, 28, 28, 1), np.uint8), np.arange(3), seed=7)
>>> images, labels = train.next_batch(2, shuffle=False)
>>> images.shape, images.dtype.name, labels.tolist(), train.epochs_completed
((2, 784), 'float32', [0, 1], 0)
"""

from __future__ import annotations

import gzip
import os
import tempfile
import urllib.request

import numpy as np

from flowgraph.contrib.learn.dataset_tuples import Datasets
from flowgraph.framework import dtypes
from flowgraph.framework.graph import get_seed
from flowgraph.io import gfile

__all__ = ["DEFAULT_SOURCE_URL", "DataSet", "dense_to_one_hot", "extract_images",
           "extract_labels", "load_mnist", "maybe_download", "read_data_sets"]

DEFAULT_SOURCE_URL = "https://storage.googleapis.com/cvdf-datasets/mnist/"
TRAIN_IMAGES = "train-images-idx3-ubyte.gz"
TRAIN_LABELS = "train-labels-idx1-ubyte.gz"
TEST_IMAGES = "t10k-images-idx3-ubyte.gz"
TEST_LABELS = "t10k-labels-idx1-ubyte.gz"
_IMAGES_MAGIC = 2051
_LABELS_MAGIC = 2049


def _file_name(f) -> str:
    return getattr(f, "name", None) or repr(f)


def _read_idx(f, magic: int, dims: int, what: str) -> np.ndarray:
    """The uint8 array of a gzipped IDX file holding `dims` dimensions."""
    name = _file_name(f)
    with gzip.GzipFile(fileobj=f) as stream:
        try:
            data = stream.read()
        except (OSError, EOFError) as e:
            raise ValueError(f"{name}: not a readable gzip file of MNIST {what}: {e}") from None
    header_size = 4 + 4 * dims
    if len(data) < header_size:
        raise ValueError(f"{name}: {len(data)} bytes, too short for the {header_size}-byte "
                         f"header of an MNIST {what} file")
    header = np.frombuffer(data, dtype=">u4", count=1 + dims)
    if int(header[0]) != magic:
        raise ValueError(f"Invalid magic number {int(header[0])} in MNIST {what} file: "
                         f"{name} (expected {magic})")
    shape = tuple(int(d) for d in header[1:])
    expected = int(np.prod(shape, dtype=np.int64))
    found = len(data) - header_size
    if found != expected:
        raise ValueError(f"{name}: the header declares {'x'.join(map(str, shape))} = "
                         f"{expected} bytes of {what}, the file holds {found}")
    return np.frombuffer(data, dtype=np.uint8, offset=header_size).reshape(shape)


def extract_images(f) -> np.ndarray:
    """The images of an open gzipped IDX file as uint8 ``[count, rows, cols, 1]``.

    >>> import io, gzip, numpy as np
    >>> raw = np.array([2051, 1, 2, 2], ">u4").tobytes() + bytes([0, 1, 2, 3])
    >>> extract_images(io.BytesIO(gzip.compress(raw))).shape
    (1, 2, 2, 1)
    """
    images = _read_idx(f, _IMAGES_MAGIC, 3, "images")
    return images.reshape((*images.shape, 1))


def dense_to_one_hot(labels_dense, num_classes: int) -> np.ndarray:
    """Class ids as float64 one-hot rows.

    >>> dense_to_one_hot(np.array([2, 0]), 3).tolist()
    [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]
    """
    labels_dense = np.asarray(labels_dense)
    one_hot = np.zeros((labels_dense.shape[0], num_classes))
    one_hot[np.arange(labels_dense.shape[0]), labels_dense.ravel()] = 1
    return one_hot


def extract_labels(f, one_hot: bool = False, num_classes: int = 10) -> np.ndarray:
    """The labels of an open gzipped IDX file: uint8 ids, or one-hot float64 rows.

    >>> import io, gzip, numpy as np
    >>> raw = np.array([2049, 2], ">u4").tobytes() + bytes([3, 1])
    >>> extract_labels(io.BytesIO(gzip.compress(raw))).tolist()
    [3, 1]
    """
    labels = _read_idx(f, _LABELS_MAGIC, 1, "labels")
    if one_hot:
        if labels.size and int(labels.max()) >= num_classes:
            raise ValueError(f"{_file_name(f)}: label {int(labels.max())} is not below "
                             f"num_classes={num_classes}")
        return dense_to_one_hot(labels, num_classes)
    return labels


class DataSet:
    """Images and labels with an epoch-wise shuffled `next_batch`.

    >>> ds = DataSet(np.full((4, 2, 2, 1), 255, np.uint8), np.arange(4), seed=1)
    >>> ds.num_examples, float(ds.images.max())
    (4, 1.0)
    """

    def __init__(self, images, labels, fake_data=False, one_hot=False,
                 dtype=dtypes.float32, reshape=True, seed=None):
        seed1, seed2 = get_seed(seed)
        # TF 1.x seeds NumPy's global generator here; the shuffles draw from it
        np.random.seed(seed1 if seed is None else seed2)
        dtype = dtypes.as_dtype(dtype).base_dtype
        if dtype not in (dtypes.uint8, dtypes.float32):
            raise TypeError(f"Invalid image dtype {dtype!r}, expected uint8 or float32")
        if fake_data:
            self._num_examples = 10000
            self.one_hot = one_hot
        else:
            images, labels = np.asarray(images), np.asarray(labels)
            if images.shape[0] != labels.shape[0]:
                raise ValueError(f"images.shape: {images.shape} labels.shape: "
                                 f"{labels.shape}: the counts differ")
            self._num_examples = images.shape[0]
            if reshape:
                if images.ndim != 4 or images.shape[3] != 1:
                    raise ValueError(f"reshape=True needs images of shape [count, rows, "
                                     f"cols, 1]; got {images.shape}")
                images = images.reshape(images.shape[0], images.shape[1] * images.shape[2])
            if dtype == dtypes.float32:
                images = images.astype(np.float32) * np.float32(1.0 / 255.0)
        self._images = images
        self._labels = labels
        self._epochs_completed = 0
        self._index_in_epoch = 0

    @property
    def images(self):
        return self._images

    @property
    def labels(self):
        return self._labels

    @property
    def num_examples(self) -> int:
        return self._num_examples

    @property
    def epochs_completed(self) -> int:
        return self._epochs_completed

    def _shuffle(self) -> None:
        order = np.arange(self._num_examples)
        np.random.shuffle(order)
        self._images = self._images[order]
        self._labels = self._labels[order]

    def next_batch(self, batch_size: int, fake_data: bool = False, shuffle: bool = True):
        """The next `batch_size` images and labels; an epoch's end wraps into the next."""
        if fake_data:
            image = [1] * 784
            label = [1] + [0] * 9 if self.one_hot else 0
            return [image] * batch_size, [label] * batch_size
        start = self._index_in_epoch
        if shuffle and self._epochs_completed == 0 and start == 0:
            self._shuffle()
        if start + batch_size <= self._num_examples:
            self._index_in_epoch = start + batch_size
            return (self._images[start:self._index_in_epoch],
                    self._labels[start:self._index_in_epoch])
        # the epoch ends inside this batch: its rest, then the next epoch's first rows
        self._epochs_completed += 1
        rest_images = self._images[start:self._num_examples]
        rest_labels = self._labels[start:self._num_examples]
        if shuffle:
            self._shuffle()
        self._index_in_epoch = batch_size - (self._num_examples - start)
        end = self._index_in_epoch
        return (np.concatenate((rest_images, self._images[:end]), axis=0),
                np.concatenate((rest_labels, self._labels[:end]), axis=0))


def maybe_download(filename: str, work_directory: str, source_url: str) -> str:
    """The path of `filename` in `work_directory`, fetched from `source_url` if missing.

    The download goes to a temporary file renamed into place, so an interrupted fetch
    leaves no partial file behind.
    """
    if not gfile.Exists(work_directory):
        gfile.MakeDirs(work_directory)
    path = os.path.join(work_directory, filename)
    if gfile.Exists(path):
        return path
    fd, partial = tempfile.mkstemp(prefix=filename + ".", suffix=".part", dir=work_directory)
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(source_url) as response:
            while chunk := response.read(1 << 20):
                out.write(chunk)
        os.replace(partial, path)
    except BaseException as e:
        os.unlink(partial)
        if not isinstance(e, (OSError, ValueError)):
            raise
        raise OSError(f"MNIST file {filename} is not in {work_directory} and could not be "
                      f"fetched from {source_url}: {e}. Put the four MNIST files "
                      f"({TRAIN_IMAGES}, {TRAIN_LABELS}, {TEST_IMAGES}, {TEST_LABELS}) "
                      f"in that directory, or pass source_url= a reachable copy") from None
    return path


def read_data_sets(train_dir, fake_data=False, one_hot=False, dtype=dtypes.float32,
                   reshape=True, validation_size=5000, seed=None,
                   source_url=DEFAULT_SOURCE_URL):
    """MNIST's train (less the first `validation_size`), validation and test `DataSet`s.

    >>> ds = read_data_sets("unused", fake_data=True, one_hot=True)
    >>> ds.train.next_batch(2, fake_data=True)[1]
    [[1, 0, 0, 0, 0, 0, 0, 0, 0, 0], [1, 0, 0, 0, 0, 0, 0, 0, 0, 0]]
    """
    if fake_data:
        def fake():
            return DataSet([], [], fake_data=True, one_hot=one_hot, dtype=dtype, seed=seed)
        return Datasets(train=fake(), validation=fake(), test=fake())
    if not source_url:
        source_url = DEFAULT_SOURCE_URL

    def read(name, extract, **kwargs):
        path = maybe_download(name, train_dir, source_url + name)
        with gfile.Open(path, "rb") as f:
            return extract(f, **kwargs)

    train_images = read(TRAIN_IMAGES, extract_images)
    train_labels = read(TRAIN_LABELS, extract_labels, one_hot=one_hot)
    test_images = read(TEST_IMAGES, extract_images)
    test_labels = read(TEST_LABELS, extract_labels, one_hot=one_hot)
    if not 0 <= validation_size <= len(train_images):
        raise ValueError(f"Validation size should be between 0 and {len(train_images)}. "
                         f"Received: {validation_size}.")
    options = dict(dtype=dtype, reshape=reshape, seed=seed)
    return Datasets(
        train=DataSet(train_images[validation_size:], train_labels[validation_size:],
                      **options),
        validation=DataSet(train_images[:validation_size], train_labels[:validation_size],
                           **options),
        test=DataSet(test_images, test_labels, **options))


def load_mnist(train_dir="MNIST-data"):
    """`read_data_sets(train_dir)` with every default."""
    return read_data_sets(train_dir)
