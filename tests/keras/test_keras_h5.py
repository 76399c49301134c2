"""Keras HDF5 files: ``model.save('m.h5')``, `load_model`, ``save_weights`` /
``load_weights('w.h5')`` in TF 2.15's layout.

The fixtures in tests/data/keras_h5/ were written by TF 2.15's tf.keras
(`make_fixtures.py` there); flowgraph must load them with TensorFlow's predictions and,
for ``seq_adam``, continue training exactly as TensorFlow did (the optimizer's state comes
from the file). The other direction (TF reading flowgraph's files) was checked with the
tf-oracle; here the layout flowgraph writes is compared with TF's file item by item.
"""

from __future__ import annotations

import faulthandler
import os
import pathlib
import random
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest

import flowgraph as tf
from flowgraph import keras

h5py = pytest.importorskip("h5py")

L = keras.layers
DATA = pathlib.Path(__file__).resolve().parent.parent / "data" / "keras_h5"
EXPECTED = dict(np.load(DATA / "expected.npz"))


def _inputs(name: str) -> list:
    return [EXPECTED[f"{name}/x{i}"] for i in range(5) if f"{name}/x{i}" in EXPECTED]


def _outputs(name: str) -> list:
    return [EXPECTED[f"{name}/y{i}"] for i in range(5) if f"{name}/y{i}" in EXPECTED]


def _predict(model, xs) -> list:
    out = model.predict(xs if len(xs) > 1 else xs[0])
    return out if isinstance(out, list) else [out]


def _listing(path) -> dict:
    """``{item path: attributes or (shape, dtype)}`` of an HDF5 file (model_config aside)."""
    out = {}
    with h5py.File(path, "r") as f:
        out["/"] = {k: (v if k != "model_config" else "...") for k, v in f.attrs.items()}

        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                out[name] = (obj.shape, str(obj.dtype))
            else:
                out[name] = {k: np.asarray(v).tolist() if k != "model_config" else "..."
                             for k, v in obj.attrs.items()}
                out[name + "#dtypes"] = {k: str(np.asarray(v).dtype)
                                         for k, v in obj.attrs.items()}

        f.visititems(visit)
    return out


# -- TensorFlow's files ------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["seq_adam", "func_cnn", "seq_rnn", "func_multi"])
def test_tf_written_model_loads_with_tf_predictions(name):
    model = keras.models.load_model(str(DATA / f"{name}.h5"))
    for got, want in zip(_predict(model, _inputs(name)), _outputs(name), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert model._compiled == (name in ("seq_adam", "func_cnn"))


def test_tf_weights_file_loads_into_a_flowgraph_model():
    model = keras.Sequential([L.Dense(4, activation="tanh", input_shape=(3,)), L.Dense(2)])
    model.load_weights(str(DATA / "seq_adam_weights.h5"))
    np.testing.assert_allclose(model.predict(EXPECTED["seq_adam/x0"]),
                               EXPECTED["seq_adam/y0"], rtol=1e-5, atol=1e-6)


def test_tf_optimizer_state_is_restored():
    """Adam's moments and iteration count come from the file: three more steps give
    TensorFlow's weights (a fresh optimizer would not)."""
    model = keras.models.load_model(str(DATA / "seq_adam.h5"))
    assert type(model.optimizer).__name__ == "Adam"
    for _ in range(3):
        model.train_on_batch(EXPECTED["seq_adam/train_x"], EXPECTED["seq_adam/train_y"])
    for i, w in enumerate(model.get_weights()):
        np.testing.assert_allclose(w, EXPECTED[f"seq_adam/trained{i}"], rtol=1e-4,
                                   atol=1e-6)


def test_layout_matches_tensorflows_file(tmp_path):
    """The same model trained the same way: every group, attribute (and its dtype) and
    dataset of TF's file is in flowgraph's, and nothing else."""
    model = keras.Sequential([L.Dense(4, activation="tanh", input_shape=(3,)), L.Dense(2)])
    model.compile(keras.optimizers.Adam(0.05), loss="mse", metrics=["mae"])
    x, y = EXPECTED["seq_adam/train_x"], EXPECTED["seq_adam/train_y"]
    model.fit(x, y, epochs=3, batch_size=4, verbose=0, shuffle=False)
    model.save(str(tmp_path / "m.h5"))
    ours, theirs = _listing(tmp_path / "m.h5"), _listing(DATA / "seq_adam.h5")
    assert sorted(ours) == sorted(theirs)
    for key, value in theirs.items():
        if key != "/":
            assert ours[key] == value, key
    assert sorted(ours["/"]) == ["backend", "keras_version", "model_config",
                                 "training_config"]
    with h5py.File(tmp_path / "m.h5") as f:
        assert int(f["optimizer_weights/training/Adam/iter:0"][()]) == 6


def test_model_config_of_a_tf_file_keeps_tf_only_keys_out():
    with h5py.File(DATA / "seq_rnn.h5") as f:
        config = f.attrs["model_config"]
    model = keras.models.model_from_json(config)
    assert [type(la).__name__ for la in model.layers] == ["Embedding", "LSTM", "GRU", "Dense"]


# -- flowgraph's files, round trip -------------------------------------------------------------
def _cnn():
    inp = keras.Input(shape=(6, 6, 2))
    h = L.Conv2D(3, 3, padding="same")(inp)
    h = L.BatchNormalization()(h)
    h = L.MaxPooling2D()(L.Activation("relu")(h))
    out = L.Dense(3, activation="softmax")(L.Dropout(0.3)(L.Flatten()(h)))
    return keras.Model(inp, out), [np.random.RandomState(0).rand(4, 6, 6, 2)]


def _rnn():
    m = keras.Sequential([L.Embedding(20, 5, input_length=6), L.LSTM(4, return_sequences=True),
                          L.GRU(3), L.Dense(1)])
    return m, [np.random.RandomState(0).randint(0, 20, (3, 6))]


def _multi():
    a, b = keras.Input(shape=(3,), name="a"), keras.Input(shape=(2,), name="b")
    h = L.Dense(6, activation="tanh")(L.Concatenate()([a, b]))
    m = keras.Model([a, b], [L.Dense(2, activation="softmax", name="cls")(h),
                             L.Dense(1, name="reg")(h)])
    rs = np.random.RandomState(0)
    return m, [rs.rand(5, 3), rs.rand(5, 2)]


@pytest.mark.parametrize("build", [_cnn, _rnn, _multi], ids=["cnn", "rnn", "multi"])
def test_round_trip(build, tmp_path):
    model, xs = build()
    if build is _cnn:
        model.compile(keras.optimizers.SGD(0.05, momentum=0.9),
                      "sparse_categorical_crossentropy", metrics=["accuracy"])
        model.fit(xs[0], np.arange(4) % 3, epochs=2, batch_size=2, verbose=0)
    before = _predict(model, xs)
    model.save(str(tmp_path / "m.hdf5"))
    model.save_weights(str(tmp_path / "w.h5"))
    with tf.Graph().as_default():
        loaded = keras.models.load_model(str(tmp_path / "m.hdf5"))
        for got, want in zip(_predict(loaded, xs), before, strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-6)
        if build is _cnn:
            assert loaded.metrics_names == ["loss", "acc"]
            assert type(loaded.optimizer).__name__ == "SGD"
        fresh = keras.models.model_from_json(model.to_json())
        fresh.load_weights(str(tmp_path / "w.h5"))
        for got, want in zip(_predict(fresh, xs), before, strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-6)


def test_save_format_h5_and_signature_detection(tmp_path):
    model = keras.Sequential([L.Dense(2, input_shape=(3,))])
    keras.models.save_model(model, str(tmp_path / "model"), save_format="h5")
    model.save_weights(str(tmp_path / "weights"), save_format="h5")
    assert (tmp_path / "model").is_file() and (tmp_path / "weights").is_file()
    loaded = keras.models.load_model(str(tmp_path / "model"))   # an HDF5 file, no .h5
    loaded.load_weights(str(tmp_path / "weights"))
    x = np.ones((1, 3), np.float32)
    np.testing.assert_allclose(loaded.predict(x), model.predict(x))
    with h5py.File(tmp_path / "model", "r") as f:   # an open file works too
        assert keras.models.load_model(f).output_shape == (None, 2)
    with pytest.raises(FileExistsError):
        model.save(str(tmp_path / "model"), overwrite=False, save_format="h5")
    with pytest.raises(ValueError, match=r"No model config found in the file at .*weights"):
        keras.models.load_model(str(tmp_path / "weights"))


# -- load_weights: order, by name, mismatches --------------------------------------------------
def _pair(units=(4, 2), names=("a", "b")):
    return keras.Sequential([L.Dense(units[0], input_shape=(3,), name=names[0]),
                             L.Dropout(0.1), L.Dense(units[1], name=names[1])])


def test_load_weights_by_name_and_skip_mismatch(tmp_path):
    src = _pair()
    src.save_weights(str(tmp_path / "w.h5"))
    kernel_a, _, kernel_b, _ = src.get_weights()
    renamed = _pair(names=("b", "a"), units=(4, 2))   # same shapes, names swapped
    with pytest.raises(ValueError, match=r"layer 'a' \(saved as 'a'\).*has shape \(4, 2\), "
                                         r"but the saved weight 'a/kernel:0' has shape "
                                         r"\(3, 4\)"):
        renamed.load_weights(str(tmp_path / "w.h5"), by_name=True)
    other = _pair(units=(4, 5))
    with pytest.raises(ValueError, match="skip_mismatch can only be set to True when "
                                         "by_name is True"):
        other.load_weights(str(tmp_path / "w.h5"), skip_mismatch=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        other.load_weights(str(tmp_path / "w.h5"), by_name=True, skip_mismatch=True)
    # the third model's layer 'b' builds in name scope 'b_2', as in TF
    assert any("Skipping loading weight b_2/kernel" in str(w.message) for w in caught)
    np.testing.assert_array_equal(other.get_weights()[0], kernel_a)   # 'a' loaded
    assert other.get_weights()[2].shape == (4, 5) and kernel_b.shape == (4, 2)


def test_load_weights_errors_name_the_file_layer_and_shapes(tmp_path):
    path = str(tmp_path / "w.h5")
    _pair().save_weights(path)
    with pytest.raises(ValueError, match=r"w\.h5, layer 'b' .*shape \(4, 5\).*shape \(4, 2\)"):
        _pair(units=(4, 5)).load_weights(path)
    one = keras.Sequential([L.Dense(4, input_shape=(3,))])
    with pytest.raises(ValueError, match=r"Layer count mismatch .*w\.h5.* has 1 layers .*"
                                         r"the file 2"):
        one.load_weights(path)
    with pytest.raises(OSError, match=r"No file or directory found at .*missing\.h5"):
        one.load_weights(str(tmp_path / "missing.h5"))
    before = _pair(units=(4, 5))
    values = before.get_weights()
    with pytest.raises(ValueError):
        before.load_weights(path)
    for a, b in zip(before.get_weights(), values, strict=True):   # nothing assigned
        np.testing.assert_array_equal(a, b)


# -- writing --------------------------------------------------------------------------------------
def test_writes_are_atomic(tmp_path, monkeypatch):
    from flowgraph.keras import hdf5_format

    model = _pair()
    path = tmp_path / "m.h5"
    model.save(str(path))
    good = path.read_bytes()

    def broken(group, model, values=None):
        group.create_group("half_written")
        raise RuntimeError("disk full")

    monkeypatch.setattr(hdf5_format, "save_weights_to_group", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        model.save(str(path))
    assert path.read_bytes() == good and os.listdir(tmp_path) == ["m.h5"]


def test_without_h5py_the_error_says_how_to_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "h5py", None)
    model = _pair()
    with pytest.raises(ImportError, match=r"pip install flowgraph\[hdf5\]"):
        model.save(str(tmp_path / "m.h5"))
    with pytest.raises(ImportError, match=r"pip install flowgraph\[hdf5\]"):
        model.load_weights(str(tmp_path / "w.h5"))
    model.save(str(tmp_path / "dir"))   # the directory format needs no h5py
    assert not os.path.exists(tmp_path / "m.h5")


@pytest.mark.slow
def test_import_flowgraph_does_not_import_h5py():
    code = "import sys, flowgraph; from flowgraph import keras; print('h5py' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


# -- damaged files ---------------------------------------------------------------------------
def _mutate(data: bytes, rng: random.Random) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        kind = rng.choice(["flip", "truncate", "splice", "inflate"])
        n = len(buf)
        if kind == "flip":
            for _ in range(rng.randint(1, 8)):
                buf[rng.randrange(n)] ^= 1 << rng.randrange(8)
        elif kind == "truncate":
            del buf[rng.randrange(n):]
        elif kind == "splice":
            a, b = rng.randrange(n), rng.randrange(n)
            buf[b:b + 32] = buf[a:a + 32]
        else:
            b = rng.randrange(max(n - 8, 1))
            buf[b:b + 8] = rng.choice([1 << 31, (1 << 64) - 1, 1 << 40]).to_bytes(8, "little")
        if not buf:
            break
    return bytes(buf)


def _fuzz(tmp_path, source: pathlib.Path, count: int, load) -> int:
    """Load `count` damaged copies of `source`; each loads or raises ValueError / OSError
    (NotImplementedError for a configuration asking for what flowgraph lacks) naming the
    file. Returns how many loaded."""
    rng = random.Random(1234)
    data = source.read_bytes()
    loaded = 0
    for i in range(count):
        path = tmp_path / f"damaged-{i}.h5"
        path.write_bytes(_mutate(data, rng))
        # a load stuck inside HDF5 cannot be interrupted: end the run with a traceback
        faulthandler.dump_traceback_later(60, exit=True)
        start = time.perf_counter()
        try:
            load(str(path))
            loaded += 1
        except (ValueError, OSError, NotImplementedError) as e:
            assert path.name in str(e), (i, e)
        finally:
            faulthandler.cancel_dump_traceback_later()
        assert time.perf_counter() - start < 5.0, i   # generous: shared CI machines
        path.unlink()
    return loaded


def test_damaged_weights_files_fail_cleanly(tmp_path):
    model = keras.Sequential([L.Dense(4, activation="tanh", input_shape=(3,)), L.Dense(2)])
    _fuzz(tmp_path, DATA / "seq_adam_weights.h5", 150, model.load_weights)


def test_damaged_model_files_fail_cleanly(tmp_path):
    def load(path):
        with tf.Graph().as_default():
            keras.models.load_model(path, compile=False)

    _fuzz(tmp_path, DATA / "seq_adam.h5", 12, load)


@pytest.mark.slow
def test_damaged_files_fail_cleanly_many(tmp_path):
    """Also bounds memory: HDF5 allocates a string's announced length (up to 4 GiB)
    before reading it, so the loader checks those lengths first (the peak resident size
    of the process may not grow by more than 256 MiB)."""
    import resource

    def load(path):
        with tf.Graph().as_default():
            keras.models.load_model(path)

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    _fuzz(tmp_path, DATA / "func_cnn.h5", 300, load)
    model = keras.Sequential([L.Dense(4, activation="tanh", input_shape=(3,)), L.Dense(2)])
    _fuzz(tmp_path, DATA / "seq_adam_weights.h5", 3000, model.load_weights)
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak
    assert grown_kib < 256 * 1024, grown_kib
