"""tf.get_variable / tf.variable_scope / regularizers (TF1 naming, reuse and errors)."""

import doctest

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.ops import regularizers, variable_scope


# -- naming and reuse ----------------------------------------------------------------------
def test_variable_names_follow_variable_scopes_not_name_scopes():
    with tf.name_scope("ns"):
        with tf.variable_scope("vs") as scope:
            v = tf.get_variable("w", [2, 3])
            c = tf.constant(0.0, name="c")
    assert v.name == "vs/w:0"
    assert c.name == "ns/vs/c:0"
    assert scope.name == "vs" and scope.original_name_scope == "ns/vs/"
    assert v.shape.as_list() == [2, 3] and v.dtype.base_dtype == tf.float32


def test_reentering_opens_new_name_scope_but_shares_variables():
    with tf.variable_scope("s") as s1:
        a = tf.get_variable("a", [2, 3])
        c1 = tf.constant(1.0, name="c")
    with tf.variable_scope("s", reuse=True) as s2:
        b = tf.get_variable("a", [2, 3])
        c2 = tf.constant(1.0, name="c")
    with tf.variable_scope(s1):
        c3 = tf.constant(1.0, name="c")
    assert a is b
    assert (c1.name, c2.name, c3.name) == ("s/c:0", "s_1/c:0", "s_2/c:0")
    assert (s1.reuse, s2.reuse) == (False, True)
    assert s2.original_name_scope == "s_1/"


def test_default_name_made_unique_and_counts_reset_on_exit():
    with tf.variable_scope("outer"):
        names = []
        for _ in range(3):
            with tf.variable_scope(None, default_name="blk") as sc:
                names.append(sc.name)
    assert names == ["outer/blk", "outer/blk_1", "outer/blk_2"]
    with tf.variable_scope("outer", reuse=True):
        with tf.variable_scope(None, default_name="blk") as sc:
            assert sc.name == "outer/blk"


def test_existing_variable_without_reuse_is_the_tf_error():
    with tf.variable_scope("dense"):
        tf.get_variable("kernel", [3, 4])
    with pytest.raises(ValueError, match=r"^Variable dense/kernel already exists, disallowed\. "
                       r"Did you mean to set reuse=True or reuse=tf\.AUTO_REUSE in VarScope\?"):
        with tf.variable_scope("dense"):
            tf.get_variable("kernel", [3, 4])


def test_missing_variable_with_reuse_is_the_tf_error():
    msg = ("Variable x does not exist, or was not created with tf.get_variable(). Did you "
           "mean to set reuse=tf.AUTO_REUSE in VarScope?")
    with pytest.raises(ValueError) as err, tf.variable_scope("", reuse=True):
        tf.get_variable("x", [1])
    assert str(err.value) == msg


def test_reuse_with_wrong_shape_or_dtype_names_both():
    with tf.variable_scope("s"):
        tf.get_variable("a", [2, 3])
    with pytest.raises(ValueError, match=r"specified shape \(3, 3\) and found shape \(2, 3\)"):
        with tf.variable_scope("s", reuse=True):
            tf.get_variable("a", [3, 3])
    with pytest.raises(ValueError, match="specified dtype int32 and found dtype float32"):
        with tf.variable_scope("s", reuse=True):
            tf.get_variable("a", [2, 3], dtype=tf.int32)
    with tf.variable_scope("s", reuse=True):
        assert tf.get_variable("a").name == "s/a:0"  # shape may be omitted on reuse


def test_auto_reuse_creates_then_shares():
    with tf.variable_scope("auto", reuse=tf.AUTO_REUSE) as sc:
        a = tf.get_variable("v", [1])
        b = tf.get_variable("v", [1])
    assert a is b and sc.reuse is tf.AUTO_REUSE
    assert len(tf.global_variables()) == 1


def test_reuse_is_inherited_and_cannot_be_turned_off():
    with tf.variable_scope("a", reuse=True):
        with tf.variable_scope("b") as b:
            assert b.reuse is True
        with tf.variable_scope("c", reuse=False) as c:
            assert c.reuse is True
    with tf.variable_scope("d") as d:
        d.reuse_variables()
        assert tf.get_variable_scope().reuse is True


def test_get_variable_scope_root_and_errors():
    root = tf.get_variable_scope()
    assert root.name == "" and root.reuse is False
    with pytest.raises(TypeError, match="default_name is None then name_or_scope"):
        tf.variable_scope(None)
    with pytest.raises(ValueError, match="reuse=True cannot be used without a name_or_scope"):
        with tf.variable_scope(None, default_name="x", reuse=True):
            pass
    with pytest.raises(ValueError, match="reuse parameter must be True or False or None"):
        tf.variable_scope("x", reuse="yes")


def test_auxiliary_name_scope_false_keeps_current_name_scope():
    with tf.name_scope("ns"):
        with tf.variable_scope("vs", auxiliary_name_scope=False) as sc:
            c = tf.constant(0, name="k")
            v = tf.get_variable("q", [1])
    assert c.name == "ns/k:0" and v.name == "vs/q:0" and sc.original_name_scope == "ns/"


def test_variable_scope_values_selects_graph():
    g = tf.Graph()
    with g.as_default():
        x = tf.constant(1.0)
    with tf.variable_scope("s", values=[x]):
        v = tf.get_variable("v", [1])
    assert v.graph is g and tf.get_default_graph() is not g


def test_improper_nesting_is_runtime_error():
    a = tf.variable_scope("a")
    b = tf.variable_scope("b")
    a.__enter__()
    b.__enter__()
    with pytest.raises(RuntimeError, match="Improper nesting"):
        a.__exit__(None, None, None)


# -- defaults inherited from scopes --------------------------------------------------------
def test_scope_initializer_dtype_and_inheritance(sess):
    with tf.variable_scope("s", initializer=tf.constant_initializer(0.5), dtype=tf.float64):
        with tf.variable_scope("inner"):
            v = tf.get_variable("v", [2, 3])
        w = tf.get_variable("w", [2], initializer=tf.ones_initializer())
    sess.run(tf.global_variables_initializer())
    assert v.dtype.base_dtype == tf.float64
    np.testing.assert_array_equal(sess.run(v), np.full((2, 3), 0.5))
    np.testing.assert_array_equal(sess.run(w), np.ones(2))


def test_default_initializers_by_dtype(sess):
    f = tf.get_variable("f", [40, 30])
    i = tf.get_variable("i", [2, 3], dtype=tf.int32)
    b = tf.get_variable("b", [2], dtype=tf.bool)
    assert f.initializer.inputs[1].op.name.startswith("f/Initializer/random_uniform")
    sess.run(tf.global_variables_initializer())
    fv = sess.run(f)
    assert np.abs(fv).max() <= np.sqrt(6 / 70) and fv.std() > 0.05
    assert sess.run(i).tolist() == [[0, 0, 0], [0, 0, 0]]
    assert sess.run(b).tolist() == [False, False]


def test_initializer_value_or_tensor(sess):
    v = tf.get_variable("v", initializer=tf.constant([1, 2]))
    w = tf.get_variable("w", initializer=np.arange(6.0).reshape(2, 3))
    assert v.dtype.base_dtype == tf.int32 and v.shape.as_list() == [2]
    sess.run(tf.global_variables_initializer())
    assert sess.run(w).tolist() == [[0, 1, 2], [3, 4, 5]]
    with pytest.raises(ValueError, match="If initializer is a constant, do not specify shape"):
        tf.get_variable("x", [2], initializer=tf.constant([1.0, 2.0]))
    with pytest.raises(ValueError, match=r"Initializer type .*int32.* and explicit dtype "
                                         r".*float32.* don't match"):
        tf.get_variable("y", initializer=tf.constant([1, 2]), dtype=tf.float32)
    with pytest.raises(ValueError, match="did not get an initializer, so its `shape`"):
        tf.get_variable("z")
    with pytest.raises(ValueError, match="initializer passed is not valid"):
        tf.get_variable("u", [None, 2])


def test_trainable_collections_and_model_variables():
    a = tf.get_variable("a", [1])
    b = tf.get_variable("b", [1], trainable=False)
    c = tf.get_variable("c", [1], collections=[tf.GraphKeys.GLOBAL_VARIABLES,
                                               tf.GraphKeys.MODEL_VARIABLES])
    d = tf.get_local_variable("d", [1])
    assert tf.trainable_variables() == [a, c]
    assert tf.global_variables() == [a, b, c]
    assert tf.model_variables() == [c]
    assert tf.local_variables() == [d] and not d.trainable


def test_custom_getters_nest():
    calls = []

    def outer(getter, name, *args, **kwargs):
        calls.append(("outer", name))
        return getter(name, *args, **kwargs)

    def inner(getter, name, *args, **kwargs):
        calls.append(("inner", name))
        kwargs["trainable"] = False
        return getter(name, *args, **kwargs)

    with tf.variable_scope("o", custom_getter=outer):
        with tf.variable_scope("i", custom_getter=inner):
            v = tf.get_variable("v", [2])
    assert calls == [("inner", "o/i/v"), ("outer", "o/i/v")]
    assert v.name == "o/i/v:0" and not v.trainable


def test_partitioner_creates_partitioned_variable(sess):
    # As TensorFlow: shards p/v/part_0 and p/v/part_1 of a PartitionedVariable.
    def two_parts(shape, dtype):
        return [2, 1]

    with tf.variable_scope("p", partitioner=two_parts):
        v = tf.get_variable("v", [5, 3], initializer=tf.ones_initializer())
    assert v.name == "p/v" and v.get_shape().as_list() == [5, 3]
    assert [(p.name, p.shape.as_list()) for p in v] == [("p/v/part_0:0", [3, 3]),
                                                      ("p/v/part_1:0", [2, 3])]
    sess.run(tf.global_variables_initializer())
    assert sess.run(tf.convert_to_tensor(v)).tolist() == [[1.0] * 3] * 5


def test_variable_scope_collection_helpers():
    with tf.variable_scope("m") as m:
        a = tf.get_variable("a", [1])
        tf.get_variable("b", [1], trainable=False)
    tf.get_variable("other", [1])
    assert m.trainable_variables() == [a]
    assert len(m.global_variables()) == 2


# -- regularizers --------------------------------------------------------------------------
def test_get_variable_regularizer_collects_loss(sess):
    reg = tf.contrib.layers.l2_regularizer(0.1)
    with tf.variable_scope("s", regularizer=reg):
        v = tf.get_variable("w", [2], initializer=tf.constant_initializer([1.0, 3.0]))
        tf.get_variable("n", [2], regularizer=tf.no_regularizer)
    with tf.variable_scope("s", reuse=True):
        tf.get_variable("w", [2])  # reusing adds no second loss
    losses = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert [t.name for t in losses] == ["s/w/Regularizer/l2_regularizer:0"]
    sess.run(v.initializer)
    assert sess.run(losses[0]) == pytest.approx(0.1 * 10 / 2)


def test_regularizer_values(sess):
    w = tf.constant([[1.0, -2.0, 0.5]])
    l1 = regularizers.l1_regularizer(0.5)(w)
    l2 = regularizers.l2_regularizer(0.5)(w)
    both = regularizers.l1_l2_regularizer(0.5, 0.5)(w)
    w64 = tf.constant([3.0], dtype=tf.float64)
    l2_64 = regularizers.l2_regularizer(2.0)(w64)
    got = sess.run([l1, l2, both, l2_64])
    np.testing.assert_allclose(got, [0.5 * 3.5, 0.5 * 5.25 / 2, 0.5 * 3.5 + 0.5 * 5.25 / 2,
                                     9.0], rtol=1e-6)
    assert l2_64.dtype == tf.float64 and l1.op.name == "l1_regularizer"


def test_regularizer_scale_validation():
    assert regularizers.l2_regularizer(0.0)(tf.constant([1.0])) is None
    with pytest.raises(ValueError, match="scale cannot be an integer"):
        regularizers.l1_regularizer(1)
    with pytest.raises(ValueError, match="less than 0"):
        regularizers.l2_regularizer(-0.5)
    assert regularizers.sum_regularizer([None]) is None


def test_apply_regularization(sess):
    a, b = tf.constant([1.0, -1.0]), tf.constant([2.0])
    total = regularizers.apply_regularization(regularizers.l1_regularizer(1.0), [a, b])
    assert sess.run(total) == pytest.approx(4.0)
    assert tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES) == [total]
    with pytest.raises(ValueError, match="No weights to regularize"):
        regularizers.apply_regularization(regularizers.l1_regularizer(1.0))


@pytest.mark.parametrize("module", [variable_scope, regularizers])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
