"""AutoGraph's ``break`` and ``continue`` in loops on tensors (`autograph_jumps`), and
the liveness that decides what a converted statement carries (`autograph_liveness`).

Every expected value is TensorFlow 2.15's for the same program under ``tf.compat.v1``
with v2 behaviour disabled (tf-oracle), for n = 0, 3 and 8.
"""

from __future__ import annotations

import ast

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.compat.autograph_jumps import lower_jumps
from flowgraph.compat.autograph_liveness import live_names


@tf.function
def first_over(x, limit):
    """Index of the first element above `limit` (-1 if none): for over tf.range, break."""
    found = -1
    for i in tf.range(tf.shape(x)[0]):
        if x[i] > limit:
            found = i
            break
    return found


@tf.function
def sum_odd(n):
    total = 0
    for i in tf.range(n):
        if i % 2 == 0:
            continue
        total += i
    return total


@tf.function
def while_break(n):
    i = 0
    acc = 1
    while i < n:
        i += 1
        if acc > 50:
            break
        acc *= 3
    return i, acc


@tf.function
def while_continue(n):
    i = 0
    acc = 0
    while i < n:
        i += 1
        if i % 3 == 0:
            continue
        acc += i * i
    return acc


@tf.function
def nested(n):
    """An outer for with continue; an inner while with break in an if/else (`j` is a
    temporary of each outer iteration: not carried, need not exist before the loop)."""
    total = 0
    for i in tf.range(n):
        if i == 2:
            continue
        j = 0
        while j < n:
            if j > i:
                break
            else:
                total += j
            j += 1
        total += 100
    return total


@tf.function
def rows_break(x):
    acc = tf.zeros([2])
    for row in x:
        if tf.reduce_sum(row) < 0:
            break
        acc += row
    return acc


@tf.function
def both(n):
    total = 0
    for i in tf.range(n):
        if i > 6:
            break
        if i % 2 == 1:
            continue
        total += i
    return total


@tf.function
def python_break(x):
    acc = x
    for i in range(10):
        if i == 3:
            break
        acc = acc * 2.0
    return acc


@tf.function
def with_break(n):
    total = 0
    for i in tf.range(n):
        with tf.name_scope("step"):
            if i > 2:
                break
            total += i
    return total


def plain(n):
    k = 0
    s = 0
    while k < 2 * n:
        k += 1
        if k > n:
            break
        if k == 2:
            continue
        s += k
    return s


WANT = {
    0: {"both": 0, "first_over": -1, "nested": 0, "python_break": [], "rows_break": [0, 0],
        "sum_odd": 0, "to_graph": 0, "while_break": [0, 1], "while_continue": 0,
        "with_break": 0},
    3: {"both": 3, "first_over": 1, "nested": 304, "python_break": [8.0, 24.0, 16.0],
        "rows_break": [1.0, 2.0], "sum_odd": 3, "to_graph": 6, "while_break": [3, 27],
        "while_continue": 14, "with_break": 3},
    8: {"both": 21, "first_over": 1, "nested": 884, "python_break": [8.0, 24.0, 16.0, 32.0],
        "rows_break": [1.0, 2.0], "sum_odd": 28, "to_graph": 36, "while_break": [5, 81],
        "while_continue": 204, "with_break": 3},
}


@pytest.fixture(scope="module")
def graph():
    with tf.Graph().as_default() as g:
        n = tf.placeholder(tf.int32, [], name="n")
        x = tf.placeholder(tf.float32, [None], name="x")
        m = tf.placeholder(tf.float32, [None, 2], name="m")
        outs = {"first_over": first_over(x, 2.5), "sum_odd": sum_odd(n),
                "while_break": list(while_break(n)), "while_continue": while_continue(n),
                "nested": nested(n), "rows_break": rows_break(m), "both": both(n),
                "python_break": python_break(x), "with_break": with_break(n),
                "to_graph": tf.autograph.to_graph(plain)(n)}
    return g, (n, x, m), outs


@pytest.mark.parametrize("value", [0, 3, 8])
def test_break_and_continue_give_tensorflows_values(graph, value):
    g, (n, x, m), outs = graph
    feed = {n: value, x: [1.0, 3.0, 2.0, 4.0][:value],
            m: np.array([[1.0, 2.0], [3.0, -5.0], [1.0, 1.0]])[:value]}
    with tf.Session(graph=g) as sess:
        got = sess.run(outs, feed)
    for name, want in WANT[value].items():
        np.testing.assert_allclose(np.asarray(got[name], np.float64), want, err_msg=name)


def test_loops_with_jumps_become_while_loops_not_python_loops(graph):
    g, _, _ = graph
    enters = [op for op in g.get_operations() if op.type == "Enter"]
    assert len({op.get_attr("frame_name") for op in enters}) == 10  # all but python_break


def test_a_break_depending_on_a_tensor_in_a_python_loop_raises_like_tensorflow():
    """TensorFlow raises NotImplementedError for both (a loop whose condition starts
    as a Python value cannot turn into a tf.while_loop half way)."""

    def forever(n):
        k = 0
        while True:
            k += 1
            if k > n:
                break
        return k

    @tf.function
    def py_range(x):
        acc = 0.0
        for i in range(4):
            if x[i] > 2.0:
                break
            acc += x[i]
        return acc

    with tf.Graph().as_default():
        with pytest.raises(NotImplementedError, match="became a tensor"):
            tf.autograph.to_graph(forever)(tf.placeholder(tf.int32, []))
        with pytest.raises(NotImplementedError, match="Python iterable"):
            py_range(tf.placeholder(tf.float32, [4]))


def test_python_semantics_are_kept_for_python_values():
    def search(items, target):
        position = -1
        for k in range(len(items)):
            if items[k] != target:
                continue
            position = k
            break
        return position

    converted = tf.autograph.to_graph(search)
    assert converted([4, 7, 9, 7], 7) == 1 and converted([4], 5) == -1


def test_lowering_sets_flags_and_guards_what_follows():
    tree = ast.parse("for i in r:\n    if a:\n        continue\n    b()\n    if c:\n"
                     "        break\n        d()\n    e()\n")
    assert ast.unparse(lower_jumps(tree.body)).splitlines() == [
        "break1__ag = False", "continue1__ag = False", "for i in r:",
        "    continue1__ag = False", "    if a:", "        continue1__ag = True",
        "    if not break1__ag and (not continue1__ag):", "        b()", "        if c:",
        "            break1__ag = True",
        "        if not break1__ag and (not continue1__ag):", "            e()"]


def test_a_loop_with_an_else_or_a_return_keeps_its_jumps():
    for body in ("    while a:\n        break\n    else:\n        b()\n",
                 "    for i in r:\n        if i:\n            return i\n        break\n"):
        tree = ast.parse("def f():\n" + body)
        before = ast.dump(tree)
        tree.body[0].body = lower_jumps(tree.body[0].body)
        assert ast.dump(tree) == before


def test_liveness_sees_assignments_that_come_first_in_each_iteration():
    fn = ast.parse("def f(n):\n    t = 0\n    for i in n:\n        j = 0\n"
                   "        while j < i:\n            j += 1\n        if j:\n"
                   "            k = j\n        t += j\n    return t\n").body[0]
    loop = fn.body[1]
    inner, cond = loop.body[1], loop.body[2]
    live = live_names(fn)
    assert "t" in live[id(loop)] and "j" not in live[id(loop)]
    assert "j" in live[id(inner)]  # read by the `if` and `t += j` after it
    assert "k" not in live[id(cond)]
