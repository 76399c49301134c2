"""tf.keras.datasets: small fake files in a temporary Keras cache, read as TF 2.15's Keras
reads the real ones (expected arrays recorded with the tf-oracle on the same data)."""

from __future__ import annotations

import gzip
import io
import json
import os
import tarfile

import numpy as np
import pytest

import flowgraph as tf

D = tf.keras.datasets
XTR = [[1, 5, 9], [2, 3], [7, 7, 7, 7, 8], [4], [10, 11, 2]]
XTE = [[3, 3], [12, 1, 1, 1], [6]]


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    (tmp_path / "datasets").mkdir()
    return tmp_path / "datasets"


def _flat(key, xs):
    return {key: np.concatenate([np.asarray(x, np.int32) for x in xs]),
            key + "_lengths": np.array([len(x) for x in xs])}


def test_mnist_and_path_argument(cache, tmp_path):
    x = np.arange(2 * 28 * 28, dtype=np.uint8).reshape(2, 28, 28)
    np.savez(cache / "mnist.npz", x_train=x, y_train=np.array([3, 4], np.uint8),
             x_test=np.zeros((1, 28, 28), np.uint8), y_test=np.array([7], np.uint8))
    (a, b), (c, d) = D.mnist.load_data()
    assert a.dtype == np.uint8 and a.shape == (2, 28, 28) and int(a.sum()) == 196336
    assert b.tolist() == [3, 4] and c.shape == (1, 28, 28) and d.tolist() == [7]
    other = tmp_path / "elsewhere.npz"
    os.rename(cache / "mnist.npz", other)
    (a2, _), _ = D.mnist.load_data(path=str(other))  # an absolute path is used as is
    np.testing.assert_array_equal(a2, a)


def test_missing_file_names_file_url_and_place(cache):
    with pytest.raises(FileNotFoundError) as e:
        D.mnist.load_data()
    msg = str(e.value)
    assert str(cache / "mnist.npz") in msg
    assert "https://storage.googleapis.com/tensorflow/tf-keras-datasets/mnist.npz" in msg
    with pytest.raises(FileNotFoundError, match=r"cifar-10-binary\.tar\.gz"):
        D.cifar10.load_data()


def test_pickled_npz_is_refused(cache):
    objects = np.empty(2, dtype=object)
    objects[:] = [[1, 2], [3]]
    np.savez(cache / "imdb.npz", x_train=objects, x_test=objects, y_train=np.zeros(2),
             y_test=np.zeros(2))
    with pytest.raises(ValueError, match="pickled Python objects"):
        D.imdb.load_data()


@pytest.mark.parametrize("kwargs, train, ytrain, test, ytest", [
    ({}, [[1, 5, 6], [1, 4, 8, 12], [1, 7], [1, 10, 10, 10, 10, 11], [1, 13, 14, 5]],
     [1, 0, 0, 1, 1], [[1, 2, 4, 4, 4], [1, 6, 6], [1, 9]], [0, 1, 0]),
    (dict(num_words=8), [[1, 5, 6], [1, 4, 2, 2], [1, 7], [1, 2, 2, 2, 2, 2], [1, 2, 2, 5]],
     [1, 0, 0, 1, 1], [[1, 2, 4, 4, 4], [1, 6, 6], [1, 2]], [0, 1, 0]),
    (dict(num_words=10, skip_top=5, oov_char=None), [[5, 6], [8], [7], [], [5]],
     [1, 0, 0, 1, 1], [[], [6, 6], [9]], [0, 1, 0]),
    (dict(maxlen=4, seed=1), [[1, 5, 6], [1, 7]], [1, 0], [[1, 6, 6], [1, 2]], [1, 0]),
    (dict(start_char=None, index_from=2, oov_char=0, num_words=9),
     [[4, 5], [3, 7, 0], [6], [0, 0, 0, 0, 0], [0, 0, 4]], [1, 0, 0, 1, 1],
     [[0, 3, 3, 3], [5, 5], [8]], [0, 1, 0]),
])
def test_imdb_as_keras(cache, kwargs, train, ytrain, test, ytest):
    np.savez(cache / "imdb.npz", **_flat("x_train", XTR), **_flat("x_test", XTE),
             y_train=np.array([0, 1, 1, 0, 1]), y_test=np.array([1, 0, 0]))
    (a, b), (c, d) = D.imdb.load_data(**kwargs)
    assert a.dtype == object and a.shape == (len(train),)
    assert a.tolist() == train and b.tolist() == ytrain
    assert c.tolist() == test and d.tolist() == ytest and b.dtype == np.int64


def test_imdb_errors_and_word_index(cache):
    np.savez(cache / "imdb.npz", **_flat("x_train", XTR), **_flat("x_test", XTE),
             y_train=np.array([0, 1, 1, 0, 1]), y_test=np.array([1, 0, 0]))
    with pytest.raises(ValueError, match=r"no sequence was kept\. Increase maxlen"):
        D.imdb.load_data(maxlen=2)
    with pytest.raises(TypeError, match="Unrecognized keyword arguments"):
        D.imdb.load_data(foo=1)
    (cache / "imdb_word_index.json").write_text(json.dumps({"the": 1, "and": 2}))
    assert D.imdb.get_word_index() == {"the": 1, "and": 2}


@pytest.mark.parametrize("kwargs, train, ytrain, test, ytest", [
    ({}, [[1, 5, 6], [1, 7], [1, 2, 4, 4, 4], [1, 4, 8, 12], [1, 9], [1, 10, 10, 10, 10, 11]],
     [1, 1, 2, 3, 6, 4], [[1, 13, 14, 5], [1, 6, 6]], [5, 9]),
    (dict(test_split=0.5, num_words=6), [[1, 5, 2], [1, 2], [1, 2, 4, 4, 4], [1, 4, 2, 2]],
     [1, 1, 2, 3], [[1, 2], [1, 2, 2, 2, 2, 2], [1, 2, 2, 5], [1, 2, 2]], [6, 4, 5, 9]),
    (dict(maxlen=4), [[1, 5, 6], [1, 7], [1, 2]], [1, 1, 6], [[1, 6, 6]], [9]),
    (dict(skip_top=4, oov_char=None, seed=3),
     [[6, 6], [9], [13, 14, 5], [4, 4, 4], [7], [5, 6]], [9, 6, 5, 2, 1, 1],
     [[4, 8, 12], [10, 10, 10, 10, 11]], [3, 4]),
])
def test_reuters_as_keras(cache, kwargs, train, ytrain, test, ytest):
    np.savez(cache / "reuters.npz", **_flat("x", XTR + XTE),
             y=np.array([3, 1, 4, 1, 5, 9, 2, 6]))
    (a, b), (c, d) = D.reuters.load_data(**kwargs)
    assert a.dtype == object and a.tolist() == train and b.tolist() == ytrain
    assert c.tolist() == test and d.tolist() == ytest
    assert len(D.reuters.get_label_names()) == 46
    assert D.reuters.get_label_names()[:3] == ("cocoa", "grain", "veg-oil")


def test_boston_housing_shuffle_and_split(cache):
    np.savez(cache / "boston_housing.npz", x=np.arange(30.0).reshape(10, 3),
             y=np.arange(10.0) * 1.5)
    (a, b), (c, d) = D.boston_housing.load_data()
    assert a[:, 0].tolist() == [27.0, 9.0, 18.0, 3.0, 0.0, 21.0, 12.0, 24.0]
    assert b.tolist() == [13.5, 4.5, 9.0, 1.5, 0.0, 10.5, 6.0, 12.0]
    assert c[:, 0].tolist() == [6.0, 15.0] and d.tolist() == [3.0, 7.5]
    (a, b), (c, d) = D.boston_housing.load_data(test_split=0.3, seed=5)
    assert b.tolist() == [13.5, 7.5, 3.0, 6.0, 10.5, 1.5, 0.0] and d.tolist() == [12.0, 9.0, 4.5]
    with pytest.raises(AssertionError):
        D.boston_housing.load_data(test_split=1.5)


def _idx(path, magic_len, payload):
    with gzip.open(path, "wb") as f:
        f.write(b"\0" * magic_len + payload.tobytes())


def test_fashion_mnist_idx_files(cache):
    folder = cache / "fashion-mnist"
    folder.mkdir()
    images = np.arange(3 * 784, dtype=np.uint32).astype(np.uint8).reshape(3, 28, 28)
    _idx(folder / "train-labels-idx1-ubyte.gz", 8, np.array([1, 2, 3], np.uint8))
    _idx(folder / "train-images-idx3-ubyte.gz", 16, images)
    _idx(folder / "t10k-labels-idx1-ubyte.gz", 8, np.array([9], np.uint8))
    _idx(folder / "t10k-images-idx3-ubyte.gz", 16, images[:1])
    (a, b), (c, d) = D.fashion_mnist.load_data()
    np.testing.assert_array_equal(a, images)
    assert b.tolist() == [1, 2, 3] and c.shape == (1, 28, 28) and d.tolist() == [9]


def _cifar_records(n, label_bytes, seed):
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, 100, size=(n, label_bytes)).astype(np.uint8)
    pixels = rng.randint(0, 256, size=(n, 3, 32, 32)).astype(np.uint8)
    blob = np.concatenate([labels, pixels.reshape(n, -1)], axis=1).tobytes()
    return blob, labels, pixels


def test_cifar10_binary_folder_and_archive(cache):
    folder = cache / "cifar-10-batches-bin"
    folder.mkdir()
    parts = [_cifar_records(2, 1, i) for i in range(6)]
    names = [f"data_batch_{i}.bin" for i in range(1, 6)] + ["test_batch.bin"]
    for name, (blob, _, _) in zip(names, parts, strict=True):
        (folder / name).write_bytes(blob)
    (a, b), (c, d) = D.cifar10.load_data()
    assert a.shape == (10, 32, 32, 3) and a.dtype == np.uint8
    assert b.shape == (10, 1) and b.dtype == np.uint8 and d.shape == (2, 1)
    np.testing.assert_array_equal(a[0], parts[0][2][0].transpose(1, 2, 0))  # channels last
    assert b[:, 0].tolist() == np.concatenate([p[1][:, 0] for p in parts[:5]]).tolist()
    np.testing.assert_array_equal(c[1], parts[5][2][1].transpose(1, 2, 0))
    # The same batches read from the .tar.gz, without unpacking.
    with tarfile.open(cache / "cifar-10-binary.tar.gz", "w:gz") as tar:
        for name, (blob, _, _) in zip(names, parts, strict=True):
            info = tarfile.TarInfo(f"cifar-10-batches-bin/{name}")
            info.size = len(blob)
            tar.addfile(info, io.BytesIO(blob))
    for name in names:
        (folder / name).unlink()
    folder.rmdir()
    (a2, b2), _ = D.cifar10.load_data()
    np.testing.assert_array_equal(a2, a)
    np.testing.assert_array_equal(b2, b)


def test_cifar100_label_modes_and_pickled_refusal(cache):
    folder = cache / "cifar-100-binary"
    folder.mkdir()
    train, labels, pixels = _cifar_records(3, 2, 0)
    (folder / "train.bin").write_bytes(train)
    (folder / "test.bin").write_bytes(_cifar_records(1, 2, 1)[0])
    (a, b), _ = D.cifar100.load_data()
    assert b.dtype == np.int64 and b[:, 0].tolist() == labels[:, 1].tolist()
    (_, b2), _ = D.cifar100.load_data(label_mode="coarse")
    assert b2[:, 0].tolist() == labels[:, 0].tolist()
    np.testing.assert_array_equal(a[2], pixels[2].transpose(1, 2, 0))
    with pytest.raises(ValueError, match='`label_mode` must be one of `"fine"`, `"coarse"`'):
        D.cifar100.load_data(label_mode="middle")
    (cache / "cifar-10-batches-py").mkdir()
    with pytest.raises(FileNotFoundError, match="pickled Python batches"):
        D.cifar10.load_data()
