"""control_dependencies, group, tuple, no_op (graph structure checked with the TF oracle)."""

import numpy as np
import pytest

import flowgraph as tf


def _names(ops):
    return [op.name for op in ops]


def test_nesting_and_clearing():
    a = tf.constant(1.0, name="a")
    b = tf.constant(2.0, name="b")
    with tf.control_dependencies([a]):
        c = tf.constant(3.0, name="c")
        with tf.control_dependencies([b.op]):
            d = tf.constant(4.0, name="d")
            with tf.control_dependencies(None):
                e = tf.constant(5.0, name="e")
                with tf.control_dependencies([c]):
                    e2 = tf.constant(5.0, name="e2")
            f = tf.add(a, c, name="f")
    assert _names(c.op.control_inputs) == ["a"]
    assert _names(d.op.control_inputs) == ["a", "b"]
    assert e.op.control_inputs == []
    assert _names(e2.op.control_inputs) == ["c"]
    # f's input c was created inside the [a] block, so it needs only b
    assert _names(f.op.control_inputs) == ["b"]
    g = tf.constant(0.0, name="g")
    assert g.op.control_inputs == []  # only ops created inside the block


def test_data_inputs_are_not_control_inputs():
    a = tf.constant(1.0, name="a")
    b = tf.constant(2.0, name="b")
    with tf.control_dependencies([a]):
        h = tf.identity(a, name="h")
        with tf.control_dependencies([b]):
            h2 = tf.identity(b, name="h2")
            h3 = tf.identity(h, name="h3")
    assert h.op.control_inputs == []
    assert _names(h2.op.control_inputs) == ["a"]
    assert _names(h3.op.control_inputs) == ["b"]


def test_duplicates_and_names():
    a = tf.constant(1.0, name="a")
    with tf.control_dependencies([a]):
        c = tf.constant(3.0, name="c")
    with tf.control_dependencies([c]):
        with tf.control_dependencies([c]):
            j = tf.constant(1, name="j")
        with tf.control_dependencies([a, c]):
            j2 = tf.constant(1, name="j2")
    with tf.control_dependencies([c, c.op, a]):
        k = tf.no_op(name="k")
    with tf.control_dependencies(["a", "c:0"]):
        s = tf.constant(1.0, name="s")
    assert _names(j.op.control_inputs) == ["c"]
    assert _names(j2.op.control_inputs) == ["c", "a"]
    assert _names(k.control_inputs) == ["c", "a"]
    assert _names(s.op.control_inputs) == ["a", "c"]
    assert _names(c.op._control_outputs) == ["j", "j2", "k", "s"]


def test_invalid_control_inputs():
    with pytest.raises(TypeError, match="Can not convert a NoneType"):
        tf.control_dependencies([None])
    with pytest.raises(TypeError):
        tf.control_dependencies([1])
    with tf.Graph().as_default():
        other = tf.constant(1.0)
    with pytest.raises(ValueError, match="not an element of this graph"):
        tf.control_dependencies([other])
    with tf.control_dependencies([]):
        assert tf.constant(1.0).op.control_inputs == []


def test_variable_creation_ignores_control_dependencies():
    a = tf.constant(1.0, name="a")
    with tf.control_dependencies([a]):
        v = tf.Variable(1.0, name="v")
    assert v.op.control_inputs == []
    assert v.initializer.control_inputs == []
    assert v.initial_value.op.control_inputs == []


def test_control_dependency_on_variable_uses_its_op():
    v = tf.Variable(1.0, name="v")
    with tf.control_dependencies([v]):
        c = tf.constant(1.0)
    assert _names(c.op.control_inputs) == ["v"]


def test_assign_add_runs_before_dependent_read(sess):
    c = tf.Variable(0, name="c")
    inc = tf.assign_add(c, 1)
    with tf.control_dependencies([inc]):
        rd = c.read_value()
    sess.run(c.initializer)
    assert sess.run(rd) == 1
    assert sess.run(rd) == 2
    assert sess.run(c) == 2


def test_control_dependency_on_op_inside_session(sess):
    v = tf.Variable(np.zeros([2, 3], np.float32), name="v")
    update = v.assign(np.ones([2, 3], np.float32))
    with tf.control_dependencies([update.op]):
        total = tf.identity(v.read_value())
    sess.run(tf.global_variables_initializer())
    np.testing.assert_array_equal(sess.run(total), np.ones([2, 3], np.float32))


def test_no_op():
    op = tf.no_op(name="anchor")
    assert op.type == "NoOp"
    assert op.outputs == []
    assert tf.no_op().name == "NoOp"


def test_group_structure():
    a = tf.constant(1, name="a")
    b = tf.constant(2, name="b")
    v = tf.Variable(1.0, name="v")
    grp = tf.group(a, [b, v])
    assert grp.type == "NoOp"
    assert grp.name == "group_deps"
    assert _names(grp.control_inputs) == ["a", "b", "v"]
    assert tf.group(a, name="foo").name == "foo"
    empty = tf.group()
    assert empty.type == "NoOp" and empty.control_inputs == []
    with pytest.raises(TypeError, match=r"tf\.group"):
        tf.group(a, 3)


def test_group_runs_all(sess):
    v = tf.Variable([1.0, 2.0], name="v")
    c = tf.Variable(0, name="c")
    sess.run(tf.global_variables_initializer())
    assert sess.run(tf.group(v.assign([9.0, 9.0]), c.assign(4))) is None
    got_v, got_c = sess.run([v, c])
    np.testing.assert_array_equal(got_v, [9.0, 9.0])
    assert got_c == 4


def test_tuple(sess):
    v = tf.Variable([1.0, 2.0], name="v")
    c = tf.Variable(0, name="c")
    a, b = tf.tuple([v.assign_add([1.0, 1.0]), c.assign_add(1)])
    assert a.op.type == "Identity"
    assert len(a.op.control_inputs) == 1
    assert a.op.control_inputs[0].type == "NoOp"
    assert a.name.startswith("tuple/control_dependency")
    sess.run(tf.global_variables_initializer())
    got_a, got_b = sess.run([a, b])
    np.testing.assert_array_equal(got_a, [2.0, 3.0])
    assert got_b == 1


def test_tuple_with_none_and_control_inputs():
    x = tf.constant(1.0)
    extra = tf.no_op(name="extra")
    out = tf.tuple([x, None], control_inputs=[extra])
    assert out[1] is None
    gate = out[0].op.control_inputs[0]
    assert "extra" in _names(gate.control_inputs)
    with pytest.raises(ValueError, match="at least one Tensor"):
        tf.tuple([None])
    with pytest.raises(TypeError):
        tf.tuple([x], control_inputs=[3])
