"""tf.Variable, assign ops and the variable initializers (checked with the TF oracle)."""

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework import errors


def _op_names():
    return [op.name for op in tf.get_default_graph().get_operations()]


# -- graph structure -----------------------------------------------------------------
def test_variable_ops_and_names():
    v = tf.Variable([1.0, 2.0], name="v")
    assert _op_names() == ["v/initial_value", "v", "v/Assign", "v/read"]
    assert v.name == "v:0" and v.op.name == "v" and v.op.type == "VariableV2"
    assert v.dtype == tf.float32._as_ref
    assert v.dtype.base_dtype == tf.float32
    assert v.shape.as_list() == [2] and v.get_shape().as_list() == [2]
    assert v.initializer.name == "v/Assign" and v.initializer.type == "Assign"
    assert v.initial_value.name == "v/initial_value:0"
    assert v.value().name == "v/read:0"
    assert v.read_value().name == "read:0"
    assert v.read_value().name == "read_1:0"
    assert v._ref().name == "v:0"
    assert repr(v) == "<tf.Variable 'v:0' shape=(2,) dtype=float32_ref>"


def test_variable_name_scoping_and_defaults():
    with tf.name_scope("scope"):
        w = tf.Variable(1, name="w")
        w2 = tf.Variable(lambda: tf.zeros([2, 3]), name="w2")
        w3 = tf.Variable(3.0)
    assert (w.name, w.dtype.base_dtype, w.initial_value.name, w.initializer.name,
            w.value().name) == ("scope/w:0", tf.int32, "scope/w/initial_value:0",
                                "scope/w/Assign", "scope/w/read:0")
    assert w2.name == "scope/w2:0"
    assert w2.initial_value.name.startswith("scope/w2/Initializer/")
    assert w2.shape.as_list() == [2, 3]
    assert (w3.name, w3.initial_value.name) == ("scope/Variable:0",
                                                "scope/Variable/initial_value:0")


def test_initial_value_tensor():
    init = tf.constant(np.ones([2, 3], np.float32), name="init")
    v = tf.Variable(init, name="v")
    assert v.initial_value is init
    assert v.shape.as_list() == [2, 3]


def test_collections_and_trainable():
    v = tf.Variable(1.0, name="v")
    u = tf.Variable(1.0, trainable=False, collections=["mine"], name="u")
    u2 = tf.Variable(1.0, collections=["mine"], name="u2")
    lv = tf.Variable(1.0, collections=[tf.GraphKeys.LOCAL_VARIABLES], name="lv")
    assert tf.global_variables() == [v]
    assert tf.trainable_variables() == [v, u2, lv]
    assert tf.get_collection("mine") == [u, u2]
    assert tf.local_variables() == [lv]
    assert v.trainable and not u.trainable
    with pytest.raises(ValueError, match="collections argument"):
        tf.Variable(1.0, collections="mine")


def test_validate_shape_false():
    z = tf.Variable(tf.zeros([2]), validate_shape=False, name="z")
    assert z.shape.ndims is None
    assert z.value().shape.ndims is None
    assert z.assign([1.0, 2.0, 3.0]).shape.as_list() == [3]
    p = tf.placeholder(tf.float32, [None])
    assert tf.Variable(p, validate_shape=False, name="us").shape.ndims is None


def test_constructor_errors():
    with pytest.raises(ValueError, match="initial_value must be specified"):
        tf.Variable()
    with pytest.raises(ValueError, match="initial_value must be specified"):
        tf.Variable(None)
    with pytest.raises(ValueError, match="requested dtype float32"):
        tf.Variable(tf.constant(1), dtype=tf.float32)
    with pytest.raises(ValueError, match="must have a shape specified"):
        tf.Variable(tf.placeholder(tf.float32, [None]))
    assert tf.Variable(1, dtype=tf.float32).dtype.base_dtype == tf.float32


def test_assign_ops_structure():
    v = tf.Variable([1.0, 2.0], name="v")
    a = v.assign([3.0, 4.0])
    assert (a.name, a.op.type, a.dtype) == ("Assign:0", "Assign", tf.float32._as_ref)
    assert v.assign_add([3.0, 4.0]).op.type == "AssignAdd"
    assert v.assign_sub([3.0, 4.0]).op.type == "AssignSub"
    assert tf.assign(v, [3.0, 4.0]).name == "Assign_1:0"
    assert tf.assign_add(v, [3.0, 4.0]).name == "AssignAdd_1:0"
    assert tf.assign_sub(v, [3.0, 4.0]).name == "AssignSub_1:0"
    op = v.assign([1.0, 1.0], read_value=False)
    assert isinstance(op, tf.Operation) and op.name == "Assign_2"
    assert v.assign([1, 2]).dtype.base_dtype == tf.float32  # Python ints are converted


def test_assign_errors_at_graph_construction():
    v = tf.Variable([1.0, 2.0], name="v")
    with pytest.raises(ValueError, match="Assign"):
        v.assign([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="AssignAdd"):
        v.assign_add([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="AssignSub"):
        tf.assign_sub(v, [[1.0, 2.0]])
    with pytest.raises(TypeError, match="Input 'value' of 'Assign' Op has type int32"):
        v.assign(tf.constant([1, 2]))
    with pytest.raises(TypeError, match="not a variable"):
        tf.assign(tf.constant(1.0), 2.0)
    assert tf.assign(v, [1.0, 2.0, 3.0], validate_shape=False).shape.as_list() == [3]


def test_operators_on_variables():
    v = tf.Variable([1.0, 2.0], name="v")
    m = tf.Variable([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], name="m")
    n = tf.Variable(np.ones([3, 4], np.float32), name="n")
    assert (v + 1).op.type == "AddV2"
    assert (1 + v).op.inputs[1] is v.value()
    assert (v * v).shape.as_list() == [2]
    assert (m @ n).shape.as_list() == [2, 4]
    assert (v - 1).op.type == "Sub"
    assert (np.float32(2) * v).shape.as_list() == [2]


def test_bool_and_iteration():
    v = tf.Variable([1.0, 2.0], name="v")
    assert bool(v) is True  # as in TensorFlow
    with pytest.raises(TypeError, match="not iterable"):
        iter(v)


def test_initializer_ops():
    v = tf.Variable(1.0, name="v")
    w = tf.Variable(2.0, name="w")
    tf.Variable(3.0, collections=[tf.GraphKeys.LOCAL_VARIABLES], name="lv")
    init = tf.global_variables_initializer()
    assert (init.name, init.type) == ("init", "NoOp")
    assert sorted(c.name for c in init.control_inputs) == ["v/Assign", "w/Assign"]
    local = tf.local_variables_initializer()
    assert (local.name, local.type) == ("init_1", "NoOp")
    assert [c.name for c in local.control_inputs] == ["lv/Assign"]
    assert tf.variables_initializer([v, w]).name == "init_2"
    empty = tf.variables_initializer([])
    assert (empty.name, empty.type, empty.control_inputs) == ("init_3", "NoOp", [])
    assert tf.variables_initializer([v], name="foo").name == "foo"


def test_report_and_is_initialized_structure():
    v = tf.Variable(1.0, name="v")
    t = tf.is_variable_initialized(v)
    assert (t.dtype, t.shape.as_list()) == (tf.bool, [])
    r = tf.report_uninitialized_variables()
    assert (r.dtype, r.shape.as_list()) == (tf.string, [None])
    assert r.name.startswith("report_uninitialized_variables")
    e = tf.report_uninitialized_variables([])
    assert (e.dtype, e.shape.as_list(), e.op.type) == (tf.string, [0], "Const")


# -- running -----------------------------------------------------------------------
def test_uninitialized_read_raises_naming_variable(sess):
    v = tf.Variable([1.0, 2.0], name="my_var")
    for fetch in (v, v.value(), v + 1):
        with pytest.raises(errors.FailedPreconditionError, match="uninitialized value my_var"):
            sess.run(fetch)
    c = tf.Variable(0, name="counter")
    with pytest.raises(errors.FailedPreconditionError, match="counter"):
        sess.run(tf.assign_add(c, 1))


def test_initialize_and_update(sess):
    v = tf.Variable([1.0, 2.0], name="v")
    w = tf.Variable(np.ones([2, 3], np.float32), name="w")
    sess.run(tf.global_variables_initializer())
    np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])
    np.testing.assert_array_equal(sess.run(v.assign([3.0, 4.0])), [3.0, 4.0])
    np.testing.assert_array_equal(sess.run(v.assign_add([1.0, 1.0])), [4.0, 5.0])
    np.testing.assert_array_equal(sess.run(v.assign_sub([0.5, 0.5])), [3.5, 4.5])
    got = sess.run([v + 1, v * v, 2 * v])
    np.testing.assert_allclose(got[0], [4.5, 5.5])
    np.testing.assert_allclose(got[1], [12.25, 20.25])
    np.testing.assert_allclose(got[2], [7.0, 9.0])
    np.testing.assert_array_equal(sess.run(tf.constant([[1.0, 2.0]]) @ w), [[3.0, 3.0, 3.0]])
    assert sess.run(v).dtype == np.float32


def test_eval_and_load(sess):
    v = tf.Variable([1.0, 2.0], name="v")
    c = tf.Variable(0, name="c")
    sess.run(tf.global_variables_initializer())
    np.testing.assert_array_equal(v.eval(session=sess), [1.0, 2.0])
    with sess.as_default():
        np.testing.assert_array_equal(v.eval(), [1.0, 2.0])
        v.load([7.0, 8.0])
    np.testing.assert_array_equal(sess.run(v), [7.0, 8.0])
    v.load([1, 2], sess)
    np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])
    c.load(2.7, sess)
    assert sess.run(c) == 2
    with pytest.raises(ValueError):
        v.load([7.0, 8.0, 9.0], sess)


def test_eval_and_load_without_session():
    v = tf.Variable([1.0, 2.0], name="v")
    with pytest.raises(ValueError, match="no default session"):
        v.eval()
    with pytest.raises(ValueError, match="no default session"):
        v.load([1.0, 2.0])


def test_load_initializes(sess):
    w = tf.Variable(np.ones([2, 3], np.float32), name="w")
    w.load(np.zeros([2, 3]), sess)
    np.testing.assert_array_equal(sess.run(w), np.zeros([2, 3], np.float32))


def test_report_uninitialized_variables(sess):
    v = tf.Variable(1.0, name="v")
    w = tf.Variable(2.0, name="w")
    lv = tf.Variable(5.0, collections=[tf.GraphKeys.LOCAL_VARIABLES], name="lv")
    report = tf.report_uninitialized_variables()
    assert list(sess.run(report)) == [b"v", b"w", b"lv"]
    assert not sess.run(tf.is_variable_initialized(v))
    sess.run(tf.global_variables_initializer())
    assert list(sess.run(report)) == [b"lv"]
    assert list(sess.run(tf.report_uninitialized_variables([lv, v]))) == [b"lv"]
    sess.run(tf.local_variables_initializer())
    assert sess.run(report).shape == (0,)
    assert sess.run(tf.is_variable_initialized(w))
    assert sess.run(tf.report_uninitialized_variables([])).shape == (0,)


def test_variables_initializer_subset(sess):
    v = tf.Variable(1.0, name="v")
    w = tf.Variable(2.0, name="w")
    sess.run(tf.variables_initializer([v]))
    assert sess.run(v) == 1.0
    with pytest.raises(errors.FailedPreconditionError, match="w"):
        sess.run(w)


def test_initializer_resets_value(sess):
    v = tf.Variable([1.0, 2.0], name="v")
    sess.run(v.initializer)
    sess.run(v.assign([5.0, 5.0]))
    sess.run(v.initializer)
    np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])


def test_state_is_per_session():
    v = tf.Variable([1.0, 2.0], name="v")
    with tf.Session() as s1:
        s1.run(v.initializer)
        np.testing.assert_array_equal(s1.run(v), [1.0, 2.0])
    with tf.Session() as s2, pytest.raises(errors.FailedPreconditionError):
        s2.run(v)


def test_runtime_shape_checks(sess):
    z = tf.Variable([1.0], validate_shape=False, name="z")
    sess.run(z.initializer)
    np.testing.assert_array_equal(
        sess.run(tf.assign(z, [1.0, 2.0, 3.0], validate_shape=False)), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(sess.run(z), [1.0, 2.0, 3.0])
    with pytest.raises(errors.InvalidArgumentError, match="shape"):
        sess.run(tf.assign(z, [1.0, 2.0]))
    with pytest.raises(errors.InvalidArgumentError, match="shape"):
        sess.run(tf.assign_add(z, [1.0, 2.0]))
    p = tf.placeholder(tf.float32, [None])
    v = tf.Variable([1.0, 2.0], name="v")
    sess.run(v.initializer)
    with pytest.raises(errors.InvalidArgumentError, match="shape"):
        sess.run(tf.assign(v, p), feed_dict={p: [1.0, 2.0, 3.0]})


def test_feeding_a_variable(sess):
    v = tf.Variable([1.0, 2.0], name="v")
    np.testing.assert_array_equal(sess.run(v * 2, feed_dict={v: [0.0, 1.0]}), [0.0, 2.0])


def test_initialized_value(sess):
    v = tf.Variable([1.0, 2.0], name="v")
    w = tf.Variable(v.initialized_value() * 2, name="w")
    sess.run(tf.global_variables_initializer())
    np.testing.assert_array_equal(sess.run(w), [2.0, 4.0])
