"""tf.keras gap-fill (session 16): tf.keras.utils (Sequence in fit / evaluate /
predict, enqueuers, Progbar, pad_sequences, to_ordinal, get_file, images, logging
switches), registration and (de)serialization by name (utils / saving / initializers /
activations), model_from_yaml, RemoteMonitor, LinearModel / WideDeepModel, and HDF5
files of models trained with the new optimizers saved and loaded in fresh processes.
Expected values: the tf-oracle under TF 2.15's tf.compat.v1."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tarfile
import textwrap
import zipfile

import numpy as np
import pytest

import flowgraph as tf

K = tf.keras
U = tf.keras.utils


# -- arrays ----------------------------------------------------------------------------------
def test_pad_sequences_matches_tf():
    assert U.pad_sequences([[1, 2, 3], [4, 5], [6]]).tolist() == [[1, 2, 3], [0, 4, 5],
                                                                  [0, 0, 6]]
    assert U.pad_sequences([[1, 2, 3], [4, 5], [6]], maxlen=2, padding="post",
                           truncating="post", value=-1).tolist() == [[1, 2], [4, 5], [6, -1]]
    out = U.pad_sequences([[1.5, 2], []], dtype="float32")
    assert out.tolist() == [[1.5, 2.0], [0.0, 0.0]] and out.dtype == np.float32
    assert U.pad_sequences([np.ones((2, 3)), np.ones((1, 3))]).shape == (2, 2, 3)
    assert U.pad_sequences([["a", "b"], ["c"]], dtype=object, value="").tolist() == [
        ["a", "b"], ["", "c"]]
    with pytest.raises(ValueError, match='Padding type "mid" not understood'):
        U.pad_sequences([[1]], padding="mid")
    with pytest.raises(ValueError, match='Truncating type "x" not understood'):
        U.pad_sequences([[1]], truncating="x", maxlen=0)
    with pytest.raises(ValueError, match="Found non-iterable: 1"):
        U.pad_sequences([1, 2])
    with pytest.raises(ValueError, match="is not compatible with `value`'s type"):
        U.pad_sequences([["a"]], dtype="int32", value="x")


def test_to_ordinal_and_logging_switches_match_tf(capsys):
    assert U.to_ordinal([0, 2, 1], 3).tolist() == [[0, 0], [1, 1], [1, 0]]
    assert U.to_ordinal(np.array([[1], [3]])).tolist() == [[1, 0, 0], [1, 1, 1]]
    assert U.to_ordinal([1, 0]).dtype == np.float32
    assert U.is_interactive_logging_enabled()
    U.disable_interactive_logging()
    try:
        assert not U.is_interactive_logging_enabled()
        U.Progbar(2, verbose=2).update(2, [("loss", 1.0)])
        assert capsys.readouterr().out == ""  # went to the `keras` logger
    finally:
        U.enable_interactive_logging()


def test_progbar_prints_running_means_as_tf(capsys):
    bar = U.Progbar(4, verbose=1, stateful_metrics=["acc"])
    for i in range(1, 5):
        bar.update(i, values=[("loss", i * 0.5), ("acc", i / 10)])
    out = capsys.readouterr().out.lstrip("\r")  # redrawn in place, as TF does on POSIX
    assert out.startswith("1/4 [======>.......................] - ETA: 0s - loss: 0.5000 - "
                          "acc: 0.1000")
    assert "4/4 [==============================] - 0s" in out
    assert out.rstrip().endswith("- loss: 1.2500 - acc: 0.4000")
    bar = U.Progbar(2, verbose=2)
    bar.update(1, [("loss", 1.0)])
    bar.update(2, [("loss", 2.0)])
    assert capsys.readouterr().out.startswith("2/2 - 0s - loss: 1.5000")
    bar = U.Progbar(None)
    bar.add(3, [("loss", 1.0)])
    assert bar._seen_so_far == 3 and "3/Unknown" in capsys.readouterr().out


def test_get_source_inputs_matches_tf():
    a, b = K.Input((3,), name="a"), K.Input((2,), name="b")
    out = K.layers.Concatenate()([K.layers.Dense(2)(a), b])
    assert [t.name for t in U.get_source_inputs(out)] == ["a:0", "b:0"]
    assert [t.name for t in U.get_source_inputs(a)] == ["a:0"]


# -- Sequence and enqueuers --------------------------------------------------------------------
class Batches(U.Sequence):
    def __init__(self):
        self.epochs_ended = 0

    def __len__(self):
        return 3

    def __getitem__(self, i):
        return np.full((2, 1), i, "f"), np.full((2, 1), i * 2.0, "f")

    def on_epoch_end(self):
        self.epochs_ended += 1


def test_sequence_in_fit_evaluate_predict_matches_tf():
    s = Batches()
    assert len(s) == 3 and s[1][1].ravel().tolist() == [2.0, 2.0]
    assert [x[0].ravel().tolist() for x in s] == [[0, 0], [1, 1], [2, 2]]
    model = K.Sequential([K.layers.Dense(1, input_shape=(1,), kernel_initializer="ones",
                                         bias_initializer="zeros")])
    model.compile(K.optimizers.SGD(0.1), "mse")
    history = model.fit(s, epochs=2, verbose=0, shuffle=False)
    np.testing.assert_allclose(history.history["loss"], [0.98667, 0.0948], atol=1e-5)
    assert s.epochs_ended == 1
    np.testing.assert_allclose(model.get_weights()[0].ravel(), [1.80416], atol=1e-5)
    np.testing.assert_allclose(model.evaluate(Batches(), verbose=0), 0.06392, atol=1e-5)
    np.testing.assert_allclose(model.predict(Batches(), verbose=0).ravel(),
                               [0.3917, 0.3917, 2.1958, 2.1958, 4.0, 4.0], atol=1e-4)
    history = model.fit(Batches(), epochs=1, verbose=0, validation_data=Batches(),
                        shuffle=False)
    assert sorted(history.history) == ["loss", "val_loss"]
    np.testing.assert_allclose(history.history["val_loss"], [0.04256], atol=1e-5)
    with pytest.raises(ValueError, match="`y` argument is not supported"):
        model.fit(Batches(), np.ones(3), verbose=0)


def test_enqueuers_match_tf():
    s = Batches()
    enqueuer = U.OrderedEnqueuer(s, use_multiprocessing=False, shuffle=False)
    enqueuer.start(workers=2, max_queue_size=4)
    batches = enqueuer.get()
    assert [float(next(batches)[0][0, 0]) for _ in range(7)] == [0, 1, 2, 0, 1, 2, 0]
    assert enqueuer.is_running()
    enqueuer.stop()
    assert not enqueuer.is_running() and s.epochs_ended >= 2

    def gen():
        yield from (i * 10 for i in range(4))

    enqueuer = U.GeneratorEnqueuer(gen(), use_multiprocessing=False)
    enqueuer.start(workers=1, max_queue_size=3)
    assert list(enqueuer.get()) == [0, 10, 20, 30]
    enqueuer.stop()

    def broken():
        yield 1
        raise RuntimeError("boom")

    enqueuer = U.GeneratorEnqueuer(broken())
    enqueuer.start()
    with pytest.raises(RuntimeError, match="boom"):
        list(enqueuer.get())
    assert issubclass(U.OrderedEnqueuer, U.SequenceEnqueuer)


# -- get_file -----------------------------------------------------------------------------------
def test_get_file_copies_checks_and_extracts(tmp_path, capsys):
    src = tmp_path / "src"
    src.mkdir()
    (src / "data.txt").write_text("hello\n")
    with tarfile.open(src / "arch.tar.gz", "w:gz") as t:
        t.add(src / "data.txt", arcname="inner/data.txt")
    with zipfile.ZipFile(src / "arch.zip", "w") as z:
        z.write(src / "data.txt", arcname="zinner/data.txt")
    sha = hashlib.sha256(b"hello\n").hexdigest()
    md5 = hashlib.md5(b"hello\n").hexdigest()
    cache = tmp_path / "cache"
    cache.mkdir()
    path = U.get_file("data.txt", f"file://{src}/data.txt", cache_dir=str(cache), file_hash=sha)
    assert path == str(cache / "datasets" / "data.txt") and open(path).read() == "hello\n"
    assert f"Downloading data from file://{src}/data.txt" in capsys.readouterr().out
    assert U.get_file("d2.txt", f"file://{src}/data.txt", cache_dir=str(cache), md5_hash=md5,
                      cache_subdir="sub") == str(cache / "sub" / "d2.txt")
    path = U.get_file("arch", f"file://{src}/arch.tar.gz", cache_dir=str(cache), untar=True)
    assert path == str(cache / "datasets" / "arch")
    assert (cache / "datasets" / "inner" / "data.txt").exists()
    path = U.get_file("arch.zip", f"file://{src}/arch.zip", cache_dir=str(cache), extract=True)
    assert (cache / "datasets" / "zinner" / "data.txt").exists()
    assert U.get_file(origin=f"file://{src}/data.txt", cache_dir=str(cache)).endswith(
        "datasets/data.txt")
    with pytest.raises(ValueError, match="The auto file hash does not match the provided "
                                         "value of 0000"):
        U.get_file("bad.txt", f"file://{src}/data.txt", cache_dir=str(cache),
                   file_hash="0" * 64)
    with pytest.raises(Exception, match="URL fetch failure on file://"):
        U.get_file("x.txt", f"file://{src}/missing.txt", cache_dir=str(cache))
    with pytest.raises(ValueError, match='Please specify the "origin" argument'):
        U.get_file("x.txt", cache_dir=str(cache))
    # no network: an http origin is served from the cache, or the error names the fix
    (cache / "datasets" / "cached.txt").write_text("hello\n")
    assert U.get_file("cached.txt", "http://example.invalid/cached.txt",
                      cache_dir=str(cache), file_hash=sha).endswith("cached.txt")
    with pytest.raises(OSError, match=r"cannot download http://example.invalid/x.bin.*put it "
                                      r"at .*x\.bin"):
        U.get_file("x.bin", "http://example.invalid/x.bin", cache_dir=str(cache))


# -- images -------------------------------------------------------------------------------------
def test_image_utils_round_trip(tmp_path):
    pytest.importorskip("PIL")
    x = (np.arange(2 * 3 * 3).reshape(2, 3, 3) * 3.0).astype("float32")
    img = U.array_to_img(x)
    assert img.size == (3, 2) and img.mode == "RGB"
    a = U.img_to_array(img)
    assert a.shape == (2, 3, 3) and a.dtype == np.float32
    assert a[0, :2].tolist() == [[0.0, 15.0, 30.0], [45.0, 60.0, 75.0]]  # rescaled to 0-255
    assert U.img_to_array(img, data_format="channels_first").shape == (3, 2, 3)
    assert U.array_to_img(x, scale=False).getpixel((1, 0)) == (9, 12, 15)
    gray = U.array_to_img(x[:, :, :1])
    assert gray.mode == "L" and U.img_to_array(gray).shape == (2, 3, 1)
    assert U.array_to_img(np.ones((3, 2, 4), "f")).mode == "RGBA"
    path = str(tmp_path / "a.png")
    U.save_img(path, x)
    loaded = U.load_img(path)
    assert loaded.size == (3, 2) and U.img_to_array(loaded)[1, 2].tolist() == [225, 240, 255]
    assert U.load_img(path, color_mode="grayscale").mode == "L"
    assert U.load_img(path, target_size=(4, 6)).size == (6, 4)
    assert U.load_img(path, color_mode="rgba").mode == "RGBA"
    with pytest.raises(ValueError, match="Expected image array to have rank 3"):
        U.array_to_img(np.ones((2, 2)))
    with pytest.raises(ValueError, match="Unsupported channel number: 5"):
        U.array_to_img(np.ones((2, 2, 5)))
    with pytest.raises(ValueError, match='color_mode must be "grayscale", "rgb", or "rgba"'):
        U.load_img(path, color_mode="cmyk")


def test_image_utils_without_pil_raise_tf_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "PIL", None)
    with pytest.raises(ImportError, match=r"Could not import PIL\.Image\. The use of "
                                          r"`array_to_img` requires PIL\."):
        U.array_to_img(np.ones((2, 2, 3)))
    with pytest.raises(ImportError, match="`load_img` requires PIL"):
        U.load_img("x.png")


# -- registration and serialization ---------------------------------------------------------------
def test_register_and_serialize_keras_objects_as_tf():
    @U.register_keras_serializable(package="ka_test")
    class Scale(K.layers.Layer):
        def __init__(self, factor=2.0, **kwargs):
            super().__init__(**kwargs)
            self.factor = factor

        def call(self, x):
            return x * self.factor

        def get_config(self):
            return {**super().get_config(), "factor": self.factor}

    @U.register_keras_serializable(package="ka_test", name="sq")
    def square(x):
        return x * x

    try:
        assert U.get_registered_name(Scale) == "ka_test>Scale"
        assert U.get_registered_name(square) == "ka_test>sq"
        assert U.get_registered_name(K.layers.Dense) == "Dense"
        assert U.get_registered_object("ka_test>Scale") is Scale
        assert U.get_registered_object("Nope") is None
        assert U.get_registered_object("x", custom_objects={"x": 1}) == 1
        assert K.saving.get_registered_object("ka_test>sq") is square
        assert K.saving.get_custom_objects() is U.get_custom_objects()
        with pytest.raises(ValueError, match="does not have a get_config"):
            U.register_keras_serializable()(type("NoConfig", (), {}))
        config = U.serialize_keras_object(Scale(3.0, name="sc"))
        assert config["class_name"] == "ka_test>Scale" and config["config"]["factor"] == 3.0
        assert K.saving.serialize_keras_object(square) == "ka_test>sq"
        assert U.serialize_keras_object(None) is None
        with pytest.raises(ValueError, match="Cannot serialize 3 because it doesn't "
                                             "implement `get_config\\(\\)`"):
            U.serialize_keras_object(3)
        again = U.deserialize_keras_object(config)
        assert isinstance(again, Scale) and again.factor == 3.0 and again.name == "sc"
        assert type(U.deserialize_keras_object({"class_name": "Foo", "config": {}},
                                               custom_objects={"Foo": Scale})) is Scale
        with pytest.raises(ValueError, match="Unknown object: 'Bar'"):
            U.deserialize_keras_object({"class_name": "Bar", "config": {}})
        assert U.deserialize_keras_object("ka_test>sq") is square
        with K.saving.custom_object_scope({"Zed": Scale}):
            assert isinstance(U.deserialize_keras_object(
                {"class_name": "Zed", "config": {"factor": 4.0}}), Scale)
        # a registered layer round-trips through JSON with no custom_objects
        inp = K.Input((2,))
        model = K.Model(inp, Scale(5.0)(inp))
        assert '"class_name": "ka_test>Scale"' in model.to_json()
        loaded = K.models.model_from_json(model.to_json())
        assert type(loaded.layers[1]) is Scale and loaded.layers[1].factor == 5.0
    finally:
        for name in ("ka_test>Scale", "ka_test>sq"):
            U.get_custom_objects().pop(name, None)


def test_initializer_and_activation_names_match_tf():
    INIT = K.initializers
    assert INIT.normal is INIT.RandomNormal and INIT.random_normal is INIT.RandomNormal
    assert INIT.uniform is INIT.RandomUniform and INIT.random_uniform is INIT.RandomUniform
    assert INIT.truncated_normal is INIT.TruncatedNormal
    assert INIT.serialize(INIT.RandomNormal(0.0, 2.0, seed=3)) == {
        "class_name": "RandomNormal",
        "config": {"mean": 0.0, "stddev": 2.0, "seed": 3, "dtype": "float32"}}
    assert INIT.serialize(INIT.glorot_uniform())["class_name"] == "GlorotUniform"
    assert type(INIT.deserialize("glorot_uniform")).__name__ == "GlorotUniform"
    assert type(INIT.deserialize({"class_name": "Zeros", "config": {}})).__name__ == "Zeros"
    uniform = INIT.deserialize({"class_name": "RandomUniform", "config": {"minval": -1,
                                                                      "maxval": 1}})
    assert isinstance(uniform, INIT.RandomUniform)
    with pytest.raises(ValueError, match="Unknown initializer: 'nope'"):
        INIT.deserialize("nope")
    A = K.activations
    y = A.mish(tf.constant([-2., -0.5, 0., 1., 3.]))
    assert y.op.type == "Mul"
    np.testing.assert_allclose(tf.Session().run(y), [-0.2525, -0.22074, 0., 0.8651, 2.98654],
                               atol=1e-5)
    assert A.serialize(A.mish) == "mish" and A.get("mish") is A.mish
    assert A.deserialize("mish") is A.mish
    x = tf.constant(np.float64([[-1.5, 0.2, 2.0]]))
    with tf.Session():
        theirs, ours = tf.test.compute_gradient(x, [1, 3], A.mish(x), [1, 3],
                                                x_init_value=np.float64([[-1.5, 0.2, 2.0]]))
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-7)


# -- models and callbacks ------------------------------------------------------------------
def test_yaml_is_refused_as_tf():
    with pytest.raises(RuntimeError, match="Method `model_from_yaml\\(\\)` has been removed"):
        K.models.model_from_yaml("a: 1")
    model = K.Sequential([K.layers.Dense(1, input_shape=(2,))])
    with pytest.raises(RuntimeError, match=r"Method `model\.to_yaml\(\)` has been removed"):
        model.to_yaml()


def test_remote_monitor_warns_when_the_server_is_unreachable(caplog):
    model = K.Sequential([K.layers.Dense(1, input_shape=(2,))])
    model.compile("sgd", "mse")
    monitor = K.callbacks.RemoteMonitor(root="http://127.0.0.1:9", path="/x", field="d",
                                        headers={"A": "b"}, send_as_json=True)
    assert (monitor.root, monitor.path, monitor.field, monitor.headers,
            monitor.send_as_json) == ("http://127.0.0.1:9", "/x", "d", {"A": "b"}, True)
    history = model.fit(np.ones((4, 2)), np.ones((4, 1)), epochs=2, verbose=0,
                        callbacks=[monitor])
    assert len(history.history["loss"]) == 2
    assert caplog.text.count("could not reach RemoteMonitor root server at "
                             "http://127.0.0.1:9") == 2


def test_remote_monitor_posts_each_epoch():
    import http.server
    import threading

    received = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            received.append(self.rfile.read(int(self.headers["Content-Length"])).decode())
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        model = K.Sequential([K.layers.Dense(1, input_shape=(2,))])
        model.compile("sgd", "mse")
        root = f"http://127.0.0.1:{server.server_port}"
        model.fit(np.ones((4, 2)), np.ones((4, 1)), epochs=2, verbose=0,
                  callbacks=[K.callbacks.RemoteMonitor(root=root, send_as_json=True)])
    finally:
        server.shutdown()
    assert len(received) == 2 and '"epoch": 1' in received[1] and '"loss"' in received[0]


def test_linear_and_wide_deep_models_match_tf():
    assert K.models.LinearModel is K.experimental.LinearModel
    assert K.models.WideDeepModel is K.experimental.WideDeepModel
    x = np.arange(12, dtype="f").reshape(4, 3) / 10
    linear = K.experimental.LinearModel(units=1, kernel_initializer="ones",
                                        bias_initializer="zeros")
    linear.compile(K.optimizers.SGD(0.1), "mse")
    history = linear.fit(x, np.float32([[1], [2], [3], [4]]), epochs=3, batch_size=4,
                         verbose=0)
    np.testing.assert_allclose(history.history["loss"], [0.735, 0.26015, 0.0997], atol=1e-5)
    assert [w.name for w in linear.weights] == ["linear_model/kernel:0", "linear_model/bias:0"]
    np.testing.assert_allclose(linear.predict(x).ravel(), [0.69782, 1.76789, 2.83797, 3.90805],
                               atol=1e-5)
    config = linear.get_config()
    assert config["kernel_initializer"]["class_name"] == "Ones"
    assert config["activation"] == "linear" and config["units"] == 1
    with tf.Graph().as_default():
        lin = K.experimental.LinearModel(units=1, kernel_initializer="zeros")
        dnn = K.Sequential([K.layers.Dense(1, kernel_initializer="ones", input_shape=(3,))])
        wide_deep = K.experimental.WideDeepModel(lin, dnn, activation="sigmoid")
        wide_deep.compile([K.optimizers.SGD(0.1), K.optimizers.SGD(0.05)], "mse")
        y = np.float32([[0], [1], [0], [1]])
        history = wide_deep.fit([x, x], y, epochs=3, batch_size=4, verbose=0)
        np.testing.assert_allclose(history.history["loss"], [0.29488, 0.29324, 0.29159],
                                   atol=1e-5)
        assert [w.name for w in wide_deep.weights] == [
            "wide_deep_model/linear_model/kernel:0", "wide_deep_model/linear_model/bias:0",
            "dense/kernel:0", "dense/bias:0"]
        np.testing.assert_allclose(wide_deep.predict([x, x]).ravel(),
                                   [0.56319, 0.75818, 0.88404, 0.94882], atol=1e-5)
    with tf.Graph().as_default():
        by_key = K.experimental.LinearModel(units=2, activation="softmax", use_bias=False,
                                            kernel_regularizer="l2")
        inputs = {"a": np.ones((3, 1), "f"), "b": np.ones((3, 2), "f")}
        by_key.compile("adam", "categorical_crossentropy")
        by_key.fit(inputs, np.float32([[1, 0]] * 3), epochs=1, verbose=0)
        assert [w.name for w in by_key.weights] == ["linear_model/kernel:0",
                                                     "linear_model/kernel_1:0"]
        assert by_key.predict(inputs).shape == (3, 2) and len(by_key.losses) == 2


_MODEL_MODULE = '''
import flowgraph as tf

K = tf.keras


@K.utils.register_keras_serializable(package="ka")
class Scale(K.layers.Layer):
    def __init__(self, factor=2.0, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor

    def call(self, x):
        return x * self.factor

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}
'''

_SAVE = '''
import sys, numpy as np
import flowgraph as tf
from ka_layers import Scale
K = tf.keras
kind, path = sys.argv[1], sys.argv[2]
opt = K.optimizers.Nadam(0.01) if kind == "nadam" else K.optimizers.Ftrl(0.1)
inp = K.Input((3,))
out = K.layers.Dense(2, kernel_initializer="ones", activation=K.activations.mish)(Scale(3.0)(inp))
model = K.Model(inp, out)
model.compile(opt, "mse")
x = np.arange(12, dtype="f").reshape(4, 3) / 10
model.fit(x, np.ones((4, 2), "f"), epochs=2, verbose=0)
model.save(path)
print(np.round(model.predict(x)[:, 0], 5).tolist())
'''

_LOAD = '''
import sys, numpy as np
import flowgraph as tf
import ka_layers
K = tf.keras
model = K.models.load_model(sys.argv[2])
x = np.arange(12, dtype="f").reshape(4, 3) / 10
print(type(model.optimizer).__name__, type(model.layers[1]).__name__, model.layers[1].factor)
print([w.name for w in model.optimizer.weights])
model.fit(x, np.ones((4, 2), "f"), epochs=1, verbose=0)
print(np.round(model.predict(x)[:, 0], 5).tolist())
'''


@pytest.mark.parametrize("kind, saved, resumed", [
    ("nadam", [0.72552, 3.50973, 6.16599, 8.81649], [0.71152, 3.47607, 6.11307, 8.74401]),
    ("ftrl", None, [0.34847, 2.47485, 4.53608, 6.57084]),
])
def test_h5_with_new_optimizer_and_registered_layer_in_fresh_processes(tmp_path, kind, saved,
                                                                       resumed):
    (tmp_path / "ka_layers.py").write_text(textwrap.dedent(_MODEL_MODULE))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    path = str(tmp_path / "model.h5")

    def run(script):
        done = subprocess.run([sys.executable, "-c", script, kind, path], env=env,
                              capture_output=True, text=True, cwd=tmp_path, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout.strip().splitlines()

    first = run(_SAVE)
    if saved is not None:
        np.testing.assert_allclose(eval(first[-1]), saved, atol=1e-4)
    lines = run(_LOAD)
    assert lines[0] == ("Nadam" if kind == "nadam" else "Ftrl") + " Scale 3.0"
    names = eval(lines[1])
    if kind == "nadam":  # TF's order: iter, momentum_cache, then the m and v slots
        assert names[:3] == ["training/Nadam/iter:0", "training/Nadam/momentum_cache:0",
                             "training/Nadam/dense/kernel/m:0"]
    else:  # Ftrl: each weight's accumulator and linear in turn
        assert names[1:3] == ["training/Ftrl/dense/kernel/accumulator:0",
                              "training/Ftrl/dense/kernel/linear:0"]
    # the optimizer state came back: training resumes where TF's does
    np.testing.assert_allclose(eval(lines[-1]), resumed, atol=1e-4)
