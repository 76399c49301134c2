"""tf.train global-step helpers."""

import doctest

import pytest

import flowgraph as tf
from flowgraph.train import training_util


def test_create_and_get_global_step(sess):
    assert tf.train.get_global_step() is None
    step = tf.train.get_or_create_global_step()
    assert step.name == "global_step:0" and step.shape.as_list() == []
    assert step.dtype.base_dtype == tf.int64 and not step.trainable
    assert tf.get_collection(tf.GraphKeys.GLOBAL_STEP) == [step]
    assert step in tf.global_variables() and step not in tf.trainable_variables()
    assert step.initializer.inputs[1].op.name == "global_step/Initializer/zeros"
    assert tf.train.get_global_step() is step
    assert tf.train.get_or_create_global_step() is step
    sess.run(step.initializer)
    sess.run(tf.assign_add(step, 3))
    assert tf.train.global_step(sess, step) == 3


def test_create_twice_and_name_scope_ignored():
    with tf.name_scope("ns"):
        step = tf.train.create_global_step()
    assert step.op.name == "global_step"
    with pytest.raises(ValueError, match=r'"global_step" already exists\.'):
        tf.train.create_global_step()


def test_other_graph_argument():
    g = tf.Graph()
    step = tf.train.get_or_create_global_step(g)
    assert step.graph is g and tf.train.get_global_step() is None
    assert tf.train.get_global_step(g) is step


def test_found_by_name_when_not_in_collection():
    v = tf.Variable(0, dtype=tf.int64, name="global_step", trainable=False)
    assert tf.train.get_global_step().name == v.name


def test_assert_global_step():
    tf.train.assert_global_step(tf.constant(1, dtype=tf.int64))
    with pytest.raises(TypeError, match="does not have integer type"):
        tf.train.assert_global_step(tf.constant(1.0))
    with pytest.raises(TypeError, match="is not scalar"):
        tf.train.assert_global_step(tf.constant([1, 2]))
    with pytest.raises(TypeError, match="must be a Variable or Tensor"):
        tf.train.assert_global_step(3)
    tf.add_to_collection(tf.GraphKeys.GLOBAL_STEP, tf.constant(1.5))
    with pytest.raises(TypeError, match="integer type"):
        tf.train.get_global_step()


def test_multiple_in_collection_returns_none():
    tf.add_to_collection(tf.GraphKeys.GLOBAL_STEP, tf.constant(1))
    tf.add_to_collection(tf.GraphKeys.GLOBAL_STEP, tf.constant(2))
    assert tf.train.get_global_step() is None


def test_global_step_read_and_increment(sess):
    assert training_util._get_or_create_global_step_read() is None
    step = tf.train.get_or_create_global_step()
    read = training_util._get_or_create_global_step_read()
    assert training_util._get_or_create_global_step_read() is read
    inc = training_util._increment_global_step(2)
    sess.run(step.initializer)
    sess.run(inc)
    assert sess.run(step) == 2 and sess.run(read) == 2


def test_docstring_examples():
    result = doctest.testmod(training_util, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
