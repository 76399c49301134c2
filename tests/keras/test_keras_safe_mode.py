"""Loading a Keras model never runs code from the file unless asked to: a `Lambda`'s
marshalled lambda is refused by default (`load_model`, `model_from_json`,
`model_from_config`), accepted with ``safe_mode=False`` or replaced by the function given
in ``custom_objects`` (keyed by the layer's name)."""

from __future__ import annotations

import base64
import json
import marshal
import pathlib

import numpy as np
import pytest

import flowgraph as tf
from flowgraph import keras

L = keras.layers
DATA = pathlib.Path(__file__).resolve().parent.parent / "data" / "keras_h5"
X = np.array([[1.0, 2.0, 3.0]], np.float32)


def _model():
    return keras.Sequential([L.Dense(2, input_shape=(3,), kernel_initializer="ones"),
                             L.Lambda(lambda t: t * 3.0, name="triple")])


def test_lambda_is_written_as_tensorflow_writes_it():
    config = json.loads(_model().to_json())["config"]["layers"][2]["config"]
    assert config["function_type"] == "lambda" and config["module"] == __name__
    code, defaults, closure = config["function"]
    assert isinstance(marshal.loads(base64.b64decode(code)), type((lambda: 0).__code__))
    assert (defaults, closure, config["output_shape_type"]) == (None, None, "raw")


@pytest.mark.parametrize("how", ["json", "config", "directory", "h5"])
def test_lambda_code_is_refused_by_default(how, tmp_path):
    if how == "h5":
        pytest.importorskip("h5py")
    model = _model()
    path = str(tmp_path / ("m.h5" if how == "h5" else "m"))
    if how in ("directory", "h5"):
        model.save(path)
    with tf.Graph().as_default():
        with pytest.raises(ValueError) as info:
            if how == "json":
                keras.models.model_from_json(model.to_json())
            elif how == "config":
                keras.models.model_from_config(json.loads(model.to_json()))
            else:
                keras.models.load_model(path)
    message = str(info.value)
    assert "Layer 'triple'" in message and "safe_mode=False" in message
    assert "custom_objects={'triple': your_function}" in message
    if how in ("directory", "h5"):
        assert path in message


@pytest.mark.parametrize("how", ["json", "directory", "h5"])
def test_lambda_loads_with_safe_mode_off_or_custom_objects(how, tmp_path):
    if how == "h5":
        pytest.importorskip("h5py")
    model = _model()
    expected = model.predict(X)   # [[18, 18]]
    path = str(tmp_path / ("m.h5" if how == "h5" else "m"))
    model.save(path)

    def load(**kwargs):
        with tf.Graph().as_default():
            if how == "json":
                return keras.models.model_from_json(model.to_json(), **kwargs).predict(X)
            return keras.models.load_model(path, **kwargs).predict(X)

    np.testing.assert_allclose(load(safe_mode=False), expected)
    np.testing.assert_allclose(load(custom_objects={"triple": lambda t: t * 3.0}), expected)
    np.testing.assert_allclose(load(custom_objects={"triple": lambda t: t * 0.5}),
                               expected / 6)   # the given function, not the file's


def test_refused_code_never_runs(tmp_path):
    """A lambda that would leave a marker when run: refused, the marker never appears;
    with safe_mode=False the model build calls it (what safe mode protects from)."""
    marker = tmp_path / "ran"
    model = keras.Sequential([L.Dense(1, input_shape=(2,)),
                              L.Lambda(lambda t, m=str(marker): (open(m, "w").close(), t)[1],
                                       name="evil")])
    marker.unlink()   # built once here
    text = model.to_json()
    with tf.Graph().as_default(), pytest.raises(ValueError, match="Layer 'evil'"):
        keras.models.model_from_json(text)
    assert not marker.exists()
    with tf.Graph().as_default():
        keras.models.model_from_json(text, safe_mode=False)
    assert marker.exists()


def test_tensorflow_written_lambda(tmp_path):
    pytest.importorskip("h5py")
    path = str(DATA / "seq_lambda.h5")
    with pytest.raises(ValueError, match=r"Layer 'lambda' in the file .*seq_lambda\.h5 holds "
                                         r"a Python lambda"):
        keras.models.load_model(path)
    expected = np.load(DATA / "expected.npz")
    with tf.Graph().as_default():
        model = keras.models.load_model(path, safe_mode=False)
        np.testing.assert_allclose(model.predict(expected["seq_lambda/x0"]),
                                   expected["seq_lambda/y0"], rtol=1e-6)
    with tf.Graph().as_default():
        model = keras.models.load_model(path, custom_objects={"lambda": lambda t: t * 2.0})
        np.testing.assert_allclose(model.predict(expected["seq_lambda/x0"]),
                                   expected["seq_lambda/y0"], rtol=1e-6)


def scale_by_four(t):
    return t * 4.0


def test_named_functions_are_looked_up_never_imported():
    model = keras.Sequential([L.Dense(1, input_shape=(2,), kernel_initializer="ones"),
                              L.Lambda(scale_by_four, name="four")])
    config = json.loads(model.to_json())
    entry = config["config"]["layers"][2]["config"]
    assert (entry["function"], entry["function_type"], entry["module"]) == \
        ("scale_by_four", "function", __name__)
    with tf.Graph().as_default():   # found in its (already imported) module: no code runs
        loaded = keras.models.model_from_config(config)
        assert loaded.predict(np.ones((1, 2), np.float32)).tolist() == [[8.0]]
    entry["module"], entry["function"] = "no_such_module_anywhere", "nowhere"
    with tf.Graph().as_default(), pytest.raises(ValueError, match=r"Unknown function 'nowhere'.*"
                                                                  r"custom_objects"):
        keras.models.model_from_config(config)
    with tf.Graph().as_default():
        loaded = keras.models.model_from_config(config, {"nowhere": scale_by_four})
        assert loaded.predict(np.ones((1, 2), np.float32)).tolist() == [[8.0]]


def test_older_flowgraph_lambda_encoding_is_refused_too():
    model = _model()
    config = json.loads(model.to_json())
    entry = config["config"]["layers"][2]["config"]
    code = entry.pop("function")[0]
    for key in ("function_type", "module", "output_shape_type", "output_shape_module"):
        entry.pop(key)
    entry["function"] = {"__lambda__": code}
    with tf.Graph().as_default(), pytest.raises(ValueError, match="safe_mode=False"):
        keras.models.model_from_config(config)
    with tf.Graph().as_default():
        loaded = keras.models.model_from_config(config, safe_mode=False)
        assert loaded.predict(X).tolist() == [[18.0, 18.0]]
