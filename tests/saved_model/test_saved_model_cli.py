"""``flowgraph saved_model_cli show|run`` and ``flowgraph --version``, in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import flowgraph as tf
from flowgraph import saved_model as sm


def _flowgraph(*argv, cwd=None):
    return subprocess.run([sys.executable, "-m", "flowgraph", *argv], capture_output=True,
                          text=True, timeout=120, cwd=cwd)


@pytest.fixture(scope="module")
def export(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("cli") / "1")
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        w = tf.Variable([[1.0], [10.0]], name="w")
        y = tf.matmul(x, w, name="y")
        with tf.Session() as sess:
            sess.run(w.initializer)
            sm.simple_save(sess, d, {"x": x}, {"y": y})
    return d


def test_version():
    r = _flowgraph("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"flowgraph {tf.__version__}"


def test_show_tag_sets_signatures_and_one_signature(export):
    r = _flowgraph("saved_model_cli", "show", "--dir", export)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["The given SavedModel contains the following tag-sets:",
                                     "'serve'"]
    r = _flowgraph("saved_model_cli", "show", "--dir", export, "--tag_set", "serve")
    assert 'SignatureDef key: "serving_default"' in r.stdout
    r = _flowgraph("saved_model_cli", "show", "--dir", export, "--tag_set", "serve",
                   "--signature_def", "serving_default")
    assert r.returncode == 0, r.stderr
    assert ("  inputs['x'] tensor_info:\n      dtype: DT_FLOAT\n      shape: (-1, 2)\n"
            "      name: x:0") in r.stdout
    assert "outputs['y'] tensor_info:" in r.stdout
    assert "Method name is: tensorflow/serving/predict" in r.stdout


def test_show_all(export):
    r = _flowgraph("saved_model_cli", "show", "--dir", export, "--all")
    assert r.returncode == 0, r.stderr
    assert "MetaGraphDef with tag-set: 'serve' contains the following SignatureDefs:" \
        in r.stdout
    assert "signature_def['serving_default']:" in r.stdout and "DT_FLOAT" in r.stdout
    # the default export is TensorFlow's saved_model.pb; TensorFlow's tool ends with the ops
    assert os.path.isfile(os.path.join(export, "saved_model.pb"))
    assert ("The MetaGraph with tag set ['serve'] contains the following ops: {'Assign', "
            "'Const', ") in r.stdout and "'MatMul'" in r.stdout \
        and "'RestoreV2'" in r.stdout  # the saver's nodes, as TensorFlow lists them


def test_show_and_run_read_flowgraph_format_too(tmp_path):
    d = str(tmp_path / "1")
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        with tf.Session() as sess:
            sm.simple_save(sess, d, {"x": x}, {"y": tf.reduce_sum(x, 1, name="y")},
                           format="flowgraph")
    assert os.path.isfile(os.path.join(d, "saved_model.json"))
    r = _flowgraph("saved_model_cli", "show", "--dir", d, "--all")
    assert r.returncode == 0, r.stderr
    assert "signature_def['serving_default']:" in r.stdout and "'Sum'" in r.stdout
    r = _flowgraph("saved_model_cli", "run", "--dir", d, "--tag_set", "serve",
                   "--signature_def", "serving_default", "--input_exprs", "x=[[1, 2]]")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["Result", "for", "output", "key", "y:", "[3.]"]


@pytest.mark.slow
def test_run_with_literals_and_npy_files(export, tmp_path):
    base = ["saved_model_cli", "run", "--dir", export, "--tag_set", "serve",
            "--signature_def", "serving_default"]
    r = _flowgraph(*base, "--input_exprs", "x=[[1, 2], [3, 4]]")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["Result", "for", "output", "key", "y:", "[[21.]", "[43.]]"]
    np.save(tmp_path / "x.npy", np.array([[0.5, 0.5]], np.float32))
    np.savez(tmp_path / "xs.npz", a=np.array([[1.0, 0.0]], np.float32))
    out = tmp_path / "out"
    r = _flowgraph(*base, "--inputs", f"x={tmp_path / 'x.npy'}", "--outdir", str(out))
    assert r.returncode == 0, r.stderr
    np.testing.assert_allclose(np.load(out / "y.npy"), [[5.5]])
    r = _flowgraph(*base, "--inputs", f"x={tmp_path / 'xs.npz'}[a]", "--outdir", str(out))
    assert r.returncode == 1 and "--overwrite" in r.stderr
    r = _flowgraph(*base, "--inputs", f"x={tmp_path / 'xs.npz'}[a]", "--outdir", str(out),
                   "--overwrite")
    assert r.returncode == 0, r.stderr
    np.testing.assert_allclose(np.load(out / "y.npy"), [[1.0]])


def test_run_never_evaluates_expressions(export, tmp_path):
    marker = tmp_path / "PWNED"
    r = _flowgraph("saved_model_cli", "run", "--dir", export, "--tag_set", "serve",
                   "--signature_def", "serving_default", "--input_exprs",
                   f"x=__import__('os').system('touch {marker}')")
    assert r.returncode == 1
    assert "not a JSON or Python literal" in r.stderr
    assert not os.path.exists(marker)


@pytest.mark.parametrize("argv, needle", [
    (["--tag_set", "train"], "could not be found"),
    (["--tag_set", "serve", "--signature_def", "nope"], "'nope' is not in"),
])
def test_show_errors_are_one_line(export, argv, needle):
    r = _flowgraph("saved_model_cli", "show", "--dir", export, *argv)
    assert r.returncode == 1
    assert needle in r.stderr and "Traceback" not in r.stderr


def test_run_wrong_shape_is_reported(export):
    r = _flowgraph("saved_model_cli", "run", "--dir", export, "--tag_set", "serve",
                   "--signature_def", "serving_default", "--input_exprs", "x=[1, 2, 3]")
    assert r.returncode == 1 and "shape" in r.stderr and "Traceback" not in r.stderr
