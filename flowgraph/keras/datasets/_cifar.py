"""CIFAR-10/100 from the *binary* versions of the archives (no pickles).

Keras downloads the Python versions (``cifar-10-python.tar.gz``), whose batches are
pickles; flowgraph refuses those and reads the binary versions of the same data
instead: fixed-size records of label byte(s) and 3,072 pixel bytes (channel-major
32x32), either from the unpacked folder or straight from the ``.tar.gz``.
"""

from __future__ import annotations

import os
import tarfile

import numpy as np

from flowgraph.keras import backend
from flowgraph.keras.datasets._files import cache_dir, locate

_PIXELS = 3 * 32 * 32


def _records(name: str, folder: str, archive: str, url: str, files) -> list[bytes]:
    """The raw bytes of ``files`` from ``folder`` or, failing that, from ``archive``."""
    base = locate(name, folder, url, must_exist=False)
    if os.path.isdir(base):
        out = []
        for f in files:
            with open(os.path.join(base, f), "rb") as fh:
                out.append(fh.read())
        return out
    tar_path = locate(name, archive, url, must_exist=False)
    if os.path.exists(tar_path):
        with tarfile.open(tar_path, "r:gz") as tar:
            return [tar.extractfile(f"{folder}/{f}").read() for f in files]
    pickled = {"cifar10": "cifar-10-batches-py", "cifar100": "cifar-100-python"}[name]
    hint = (f" ({os.path.join(cache_dir(), pickled)} holds Keras' pickled Python batches, "
            f"which flowgraph does not unpickle)"
            if os.path.exists(os.path.join(cache_dir(), pickled)) else "")
    raise FileNotFoundError(
        f"tf.keras.datasets.{name}.load_data: neither {base}/ nor {tar_path} exists{hint}. "
        f"flowgraph reads the binary version of the data set and does not download it: "
        f"download {url} and put it at {tar_path} (or unpack it there).")


def parse(blob: bytes, label_bytes: int, label_index: int):
    """``(images (n, 3, 32, 32) uint8, labels (n,) uint8)`` of a binary batch."""
    width = label_bytes + _PIXELS
    if len(blob) % width:
        raise ValueError(f"CIFAR binary batch: {len(blob)} bytes is not a whole number of "
                         f"{width}-byte records")
    rows = np.frombuffer(blob, np.uint8).reshape(-1, width)
    return rows[:, label_bytes:].reshape(-1, 3, 32, 32), rows[:, label_index].copy()


def finish(x_train, y_train, x_test, y_test, label_dtype):
    y_train = y_train.astype(label_dtype).reshape(-1, 1)
    y_test = y_test.astype(label_dtype).reshape(-1, 1)
    if backend.image_data_format() == "channels_last":
        x_train, x_test = x_train.transpose(0, 2, 3, 1), x_test.transpose(0, 2, 3, 1)
    return (x_train, y_train), (x_test, y_test)


def load_cifar10():
    url = "https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz"
    files = [f"data_batch_{i}.bin" for i in range(1, 6)] + ["test_batch.bin"]
    blobs = _records("cifar10", "cifar-10-batches-bin", "cifar-10-binary.tar.gz", url, files)
    parts = [parse(b, 1, 0) for b in blobs]
    x_train = np.concatenate([p[0] for p in parts[:5]])
    y_train = np.concatenate([p[1] for p in parts[:5]])
    return finish(x_train, y_train, parts[5][0], parts[5][1], np.uint8)


def load_cifar100(label_mode):
    if label_mode not in ("fine", "coarse"):
        raise ValueError(f'`label_mode` must be one of `"fine"`, `"coarse"`. Received: '
                         f"label_mode={label_mode}.")
    url = "https://www.cs.toronto.edu/~kriz/cifar-100-binary.tar.gz"
    blobs = _records("cifar100", "cifar-100-binary", "cifar-100-binary.tar.gz", url,
                     ["train.bin", "test.bin"])
    index = 1 if label_mode == "fine" else 0
    (x_train, y_train), (x_test, y_test) = (parse(b, 2, index) for b in blobs)
    return finish(x_train, y_train, x_test, y_test, np.int64)
