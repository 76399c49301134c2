"""tf.Print and tf.print: pass-through, when they print, and TensorFlow's exact formats
(expected strings recorded from TensorFlow 2.15's tf.compat.v1 with the tf-oracle)."""

from __future__ import annotations

import logging
import sys

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.ops.logging_ops import Print, format_element, summarize_v1, summarize_v2
from flowgraph.ops.logging_ops import print as tf_print


# -- tf.Print ---------------------------------------------------------------------------------
def test_print_passes_input_through_and_prints_to_stderr(sess, capsys):
    x = tf.constant([1.0, 2.5, 3.0, 4.0, 5.0])
    m = tf.constant([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]])
    y = Print(x, [x, m, tf.constant(7), tf.constant(["ab", "cd"])], "vals: ")
    assert y.op.type == "Print" and y.dtype == tf.float32 and y.shape.as_list() == [5]
    assert capsys.readouterr().err == ""  # building prints nothing
    np.testing.assert_array_equal(sess.run(y), [1.0, 2.5, 3.0, 4.0, 5.0])
    assert capsys.readouterr().err == "vals: [1 2.5 3...][[1 2 3...]...][7][ab cd]\n"


def test_print_first_n_and_summarize(sess, capsys):
    x = tf.constant([1.0, 2.5, 3.0, 4.0, 5.0])
    y = Print(x, [x], first_n=2, summarize=10)
    for _ in range(4):
        sess.run(y)
    assert capsys.readouterr().err == "[1 2.5 3 4 5]\n" * 2


@pytest.mark.parametrize("value, summarize, expected", [
    (np.float64(2.5), -1, "2.5"),
    (np.array([[1, 2], [3, 4]], np.int32), -1, "[1 2][3 4]"),
    (np.zeros([0], np.float32), 3, ""),
    (np.zeros([2, 0, 3], np.float32), 4, ""),
    (np.arange(24).reshape(2, 3, 4), 5, "[[0 1 2 3][4...]]..."),
    (np.arange(24).reshape(2, 3, 4), 3, "[[0 1 2...]]..."),
    (np.arange(12).reshape(2, 3, 2), 4, "[[0 1][2 3]]..."),
    (np.array([b"a\nb", b'q"t'], dtype=object), 3, 'a\\nb q\\"t'),
])
def test_print_v1_layout(value, summarize, expected):
    assert summarize_v1(value, summarize) == expected


def test_print_shape_inference_and_gradient(sess):
    x = tf.placeholder(tf.float32, [None, 3])
    y = Print(x, [tf.shape(x)], "shape: ")
    assert y.shape.as_list() == [None, 3]
    unknown = tf.placeholder(tf.float32)
    assert Print(unknown, [unknown]).shape.ndims is None
    w = tf.constant([2.0, 3.0, 4.0])
    loss = tf.reduce_sum(Print(x * w, [w]))
    (grad,) = tf.gradients(loss, x)
    assert sess.run(grad, {x: np.ones((2, 3), np.float32)}).tolist() == [[2, 3, 4]] * 2


def test_print_rejects_operations():
    with pytest.raises(TypeError, match="Operation"):
        Print(tf.constant(1), [tf.no_op()])


# -- tf.print ---------------------------------------------------------------------------------
def _run(sess, capsys, *inputs, **kwargs):
    kwargs.setdefault("output_stream", sys.stdout)
    op = tf_print(*inputs, **kwargs)
    assert op.type == "PrintV2" and op.outputs == []
    sess.run(op)
    return capsys.readouterr().out


def test_tf_print_formats(sess, capsys):
    x = tf.constant([1.0, 2.5, 3.0, 4.0, 5.0])
    m = tf.constant([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]])
    s = tf.constant(7)
    out = _run(sess, capsys, "hello", x, m, s, tf.constant(["ab", "cd"]), {"a": s}, [s, 3])
    assert out == ('hello [1 2.5 3 4 5] [[1 2 3 4]\n [5 6 7 8]\n [9 10 11 12]] 7 ["ab" "cd"] '
                   "{'a': 7} [7, 3]\n")
    out = _run(sess, capsys, tf.range(10), tf.constant(True), tf.constant(1e-7),
               tf.constant(1234567.0), summarize=2)
    assert out == "[0 1 ... 8 9] 1 1e-07 1234567\n"
    out = _run(sess, capsys, tf.zeros([2, 3, 4]), sep="|", end="END\n")
    assert out == ("[[[0 0 0 0]\n  [0 0 0 0]\n  [0 0 0 0]]\n\n"
                   " [[0 0 0 0]\n  [0 0 0 0]\n  [0 0 0 0]]]END\n")
    out = _run(sess, capsys, tf.constant("hi"), "there", [tf.constant("hi"), "x"],
               {"k": "v"})
    assert out == "\"hi\" there [\"hi\", 'x'] {'k': 'v'}\n"
    out = _run(sess, capsys, tf.reshape(tf.range(60), [3, 4, 5]), summarize=1)
    assert out == ("[[[0 ... 4]\n  ...\n  [15 ... 19]]\n\n ...\n\n"
                   " [[40 ... 44]\n  ...\n  [55 ... 59]]]\n")
    assert _run(sess, capsys, tf.range(10), summarize=-1) == "[0 1 2 3 4 5 6 7 8 9]\n"
    assert _run(sess, capsys, tf.zeros([0, 3]), tf.constant([True, False]),
                tf.constant(-3, tf.int64)) == "[] [1 0] -3\n"
    assert _run(sess, capsys, "a", "b", sep="") == "ab\n"
    assert _run(sess, capsys) == "\n"


def test_tf_print_structures_break_lines_where_tf_does(sess, capsys):
    # TF 2.15's output (tf-oracle): pprint lays structures out with 2-character slots.
    x = tf.constant([[1.5, 2.0], [3.0, 4.25]])
    d = {"a": x, "b": tf.constant(3), "c": "str"}
    assert _run(sess, capsys, d) == "{'a': [[1.5 2]\n [3 4.25]], 'b': 3, 'c': 'str'}\n"
    v = tf.constant([1, 2])
    assert _run(sess, capsys, {f"alpha_long_key_{i}": v for i in range(3)}) == (
        "{'alpha_long_key_0': [1 2], 'alpha_long_key_1': [1 2], 'alpha_long_key_2': [1 2]}\n")
    assert _run(sess, capsys, [v] * 20) == "[" + ",\n ".join(["[1 2]"] * 20) + "]\n"
    # Slot markers never collide with the values' own braces.
    assert _run(sess, capsys, "braces {} here", v, ["{}", v]) == (
        "braces {} here [1 2] ['{}', [1 2]]\n")
    sp = tf.sparse.SparseTensor([[0]], [1], [3])
    assert _run(sess, capsys, {"s": sp, "t": [v, "{{}}"]}) == (
        "{'s': 'SparseTensor(indices=[[0]], values=[1], shape=[3])', 't': [[1 2], '{{}}']}\n")
    sp2 = tf.sparse.SparseTensor([[0, 1]], [2.0], [2, 3])
    assert _run(sess, capsys, sp2) == (
        "'SparseTensor(indices=[[0 1]], values=[2], shape=[2 3])'\n")


@pytest.mark.parametrize("value, expected", [
    (np.float32(1 / 3), "0.333333343"),
    (np.float64(1 / 3), "0.33333333333333331"),
    (np.float32(np.nan), "nan"),
    (np.float32(-np.inf), "-inf"),
    (np.float32(-0.0), "-0"),
    (np.float32(1e20), "1e+20"),
    (np.float64(100000.0), "100000"),
    (np.uint8(255), "255"),
    (np.int64(2**40), "1099511627776"),
    (np.bool_(False), "0"),
    (np.complex64(1 + 2j), "(1,2)"),
])
def test_element_format(value, expected):
    assert format_element(value) == expected


def test_summarize_v2_scalar_string_is_quoted():
    assert summarize_v2(np.array(b"a\tb", dtype=object), 3) == '"a\\tb"'


def test_tf_print_runs_only_when_run_or_depended_on(sess, capsys):
    x = tf.placeholder(tf.float32, [None])
    p = tf_print("x:", x, output_stream=sys.stderr)
    with tf.control_dependencies([p]):
        y = tf.identity(x * 2)
    z = x + 1
    sess.run(z, {x: [1.0]})
    assert capsys.readouterr().err == ""
    sess.run(y, {x: [1.0, 2.0]})
    assert capsys.readouterr().err == "x: [1 2]\n"


def test_tf_print_to_file_and_logging(sess, tmp_path, caplog):
    from flowgraph import logging_compat

    path = tmp_path / "out.txt"
    op = tf_print("value", tf.constant(3), output_stream=f"file://{path}")
    sess.run(op)
    sess.run(op)
    assert path.read_text() == "value 3\nvalue 3\n"
    with caplog.at_level(logging.INFO, logger="tensorflow"):
        sess.run(tf_print("logged", tf.constant([1, 2]),
                          output_stream=logging_compat.info))
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [("INFO",
                                                                        "logged [1 2]")]


def test_tf_print_argument_errors():
    with pytest.raises(ValueError, match="unexpected keyword arguments \\['colour'\\]"):
        tf_print("x", colour="red")
    with pytest.raises(ValueError, match="unsupported output_stream"):
        tf_print("x", output_stream=open)
    with pytest.raises(TypeError, match="Operation"):
        tf_print(tf.no_op())
