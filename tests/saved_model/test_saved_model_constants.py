"""The tf.saved_model constants and main_op_with_restore added for TF1 API coverage
(issue 15); the values are TensorFlow 2.15's (recorded with the tf-oracle)."""

from __future__ import annotations

import doctest

import flowgraph as tf
from flowgraph.saved_model import constants_tf


def test_docstring_examples():
    result = doctest.testmod(constants_tf, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0


def test_constants_are_tensorflows():
    sm = tf.saved_model
    assert (sm.ASSETS_KEY, sm.DEBUG_DIRECTORY, sm.DEBUG_INFO_FILENAME_PB) == (
        "saved_model_assets", "debug", "saved_model_debug_info.pb")
    assert (sm.LEGACY_INIT_OP_KEY, sm.MAIN_OP_KEY) == ("legacy_init_op", "saved_model_main_op")
    assert (sm.SAVED_MODEL_FILENAME_PB, sm.SAVED_MODEL_FILENAME_PBTXT) == (
        "saved_model.pb", "saved_model.pbtxt")
    assert sm.SAVED_MODEL_SCHEMA_VERSION == 1


def test_main_op_with_restore_initializes_then_restores():
    with tf.Graph().as_default():
        v = tf.Variable(5.0, name="v")
        counter = tf.Variable(3, collections=[tf.GraphKeys.LOCAL_VARIABLES], name="c")
        restore = tf.assign(v, 7.0).op  # stands in for a Saver's restore op
        op = tf.saved_model.main_op.main_op_with_restore(restore)
        with tf.Session() as sess:
            sess.run(op)
            assert sess.run([v, counter]) == [7.0, 3]
