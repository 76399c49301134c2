"""The TF 1.x coverage table in docs/tf1-compatibility.md is up to date with the code,
and a missing TF name raises an AttributeError that says so."""

import importlib.util
import json
import pathlib
import subprocess
import sys

import pytest

import flowgraph as tf

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
SCRIPT = ROOT / "tools" / "coverage.py"


def _tool():
    spec = importlib.util.spec_from_file_location("coverage_tool", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_names_list_is_well_formed():
    data = json.loads((ROOT / "tools" / "tf1_names.json").read_text())
    assert data["_source"].startswith("tensorflow 2.15")
    modules = data["modules"]
    assert set(modules) == set(_tool().MODULES)
    for names in modules.values():
        assert names == sorted(set(names)) and not any(n.startswith("_") for n in names)
    assert {"Session", "placeholder", "nn", "train"} <= set(modules["tf"])
    assert "conv2d_transpose" in modules["nn"] and "DNNClassifier" in modules["estimator"]


def test_committed_table_is_up_to_date():
    tool = _tool()
    page = tool.updated_page(tool.render(tool.coverage()))
    assert page == tool.PAGE.read_text(), (
        "docs/tf1-compatibility.md's coverage table is stale: run `python tools/coverage.py`")


def test_check_mode_exits_zero_when_fresh():
    done = subprocess.run([sys.executable, str(SCRIPT), "--check"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


def test_render_counts_present_and_missing():
    tool = _tool()
    result = {m: ([], []) for m in tool.MODULES}
    result["tf"] = (["Session", "constant"], ["GradientTape", "RaggedTensor"])
    table = tool.render(result)
    assert "| **tf** | 2 | 4 | 50 % |" in table
    assert "- `tf.`: GradientTape, RaggedTensor" in table


@pytest.mark.parametrize("expr,module,hint", [
    ("tf.LMDBReader", "flowgraph", "tf.data"),
])
def test_missing_name_says_not_implemented_and_what_to_use(expr, module, hint):
    with pytest.raises(AttributeError) as info:
        eval(expr, {"tf": tf})
    message = str(info.value)
    assert message.startswith(f"module '{module}' has no attribute")
    assert "not implemented in flowgraph" in message and hint in message


def test_unknown_names_still_behave_like_attributes():
    assert not hasattr(tf, "surely_not_a_tf_name")
    assert getattr(tf.nn, "surely_not_a_tf_name", 7) == 7
    with pytest.raises(AttributeError, match=r"docs/tf1-compatibility\.md"):
        tf.surely_not_a_tf_name  # noqa: B018
    with pytest.raises(AttributeError, match=r"^module 'flowgraph' has no attribute '__x__'$"):
        tf.__x__  # noqa: B018


def test_deprecated_tf1_spellings():
    with tf.Graph().as_default():
        v = tf.Variable(1.0)
        assert tf.all_variables() == [v]
        with tf.Session() as sess:
            sess.run(tf.initialize_variables([v]))
            sess.run(tf.initialize_local_variables())
            assert sess.run(v) == 1.0
    assert tf.NoGradient is tf.no_gradient is tf.NotDifferentiable


def test_estimator_names_tf_train_hooks():
    for name in ("SessionRunHook", "SessionRunArgs", "LoggingTensorHook", "StopAtStepHook",
                 "NanLossDuringTrainingError", "SecondOrStepTimer", "CheckpointSaverListener"):
        assert getattr(tf.estimator, name) is getattr(tf.train, name)
