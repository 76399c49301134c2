"""Graph collections and GraphKeys (checked with the TF oracle)."""

import pytest

import flowgraph as tf


class _Named:
    def __init__(self, name):
        self.name = name


def _names(items):
    return [getattr(x, "name", x) for x in items]


def test_add_and_get_collection_with_scope_filter():
    a = tf.constant(1, name="a")
    with tf.name_scope("s1"):
        b = tf.constant(1, name="b")
    with tf.name_scope("s10"):
        c = tf.constant(1, name="c")
    for item in (a, b, c, 3, "s1/str", _Named("s1/obj")):
        tf.add_to_collection("k", item)
    assert len(tf.get_collection("k")) == 6
    # scope is a regular expression matched at the start of item.name
    assert _names(tf.get_collection("k", scope="s1")) == ["s1/b:0", "s10/c:0", "s1/obj"]
    assert _names(tf.get_collection("k", scope="s1/")) == ["s1/b:0", "s1/obj"]
    assert _names(tf.get_collection("k", scope="s.*0")) == ["s1/b:0", "s10/c:0"]
    assert tf.get_collection("k", scope="b") == []
    # an empty scope keeps only items with a name
    assert _names(tf.get_collection("k", scope="")) == ["a:0", "s1/b:0", "s10/c:0", "s1/obj"]


def test_missing_collection_is_empty_and_not_created():
    g = tf.get_default_graph()
    assert tf.get_collection("nope") == []
    assert "nope" not in g.get_all_collection_keys()


def test_get_collection_returns_copy_and_ref_is_live():
    ref = tf.get_collection_ref("r")
    assert tf.get_collection_ref("r") is ref
    ref.append(1)
    assert tf.get_collection("r") == [1]
    copy = tf.get_collection("r")
    copy.append(2)
    assert tf.get_collection("r") == [1]
    assert "r" in tf.get_default_graph().get_all_collection_keys()


def test_add_to_collections():
    a = tf.constant(1)
    tf.add_to_collections(["x", "y", "x"], a)  # each collection once
    assert tf.get_collection("x") == [a]
    assert tf.get_collection("y") == [a]
    tf.add_to_collections("z", a)  # a single string is one collection name
    assert tf.get_collection("z") == [a]
    g = tf.get_default_graph()
    assert sorted(g.get_all_collection_keys()) == ["x", "y", "z"]
    g.clear_collection("x")
    assert tf.get_collection("x") == []
    assert sorted(g.get_all_collection_keys()) == ["y", "z"]


def test_collections_are_per_graph():
    tf.add_to_collection("k", 1)
    with tf.Graph().as_default():
        assert tf.get_collection("k") == []


def test_unhashable_key():
    with pytest.raises(TypeError):
        tf.get_collection(["a"])


def test_graph_keys_values():
    k = tf.GraphKeys
    assert (k.GLOBAL_VARIABLES, k.TRAINABLE_VARIABLES, k.LOCAL_VARIABLES) == (
        "variables", "trainable_variables", "local_variables")
    assert (k.UPDATE_OPS, k.LOSSES, k.SUMMARIES, k.GLOBAL_STEP) == (
        "update_ops", "losses", "summaries", "global_step")
    assert k.TABLE_INITIALIZERS == "table_initializer"
    assert k.VARIABLES == k.GLOBAL_VARIABLES
    assert (k.MODEL_VARIABLES, k.QUEUE_RUNNERS, k.INIT_OP, k.READY_OP, k.SAVERS) == (
        "model_variables", "queue_runners", "init_op", "ready_op", "savers")
    assert (k.REGULARIZATION_LOSSES, k.EVAL_STEP, k.TRAIN_OP, k.METRIC_VARIABLES) == (
        "regularization_losses", "eval_step", "train_op", "metric_variables")
    assert (k.COND_CONTEXT, k.WHILE_CONTEXT, k.LOCAL_INIT_OP) == (
        "cond_context", "while_context", "local_init_op")
    assert k.READY_FOR_LOCAL_INIT_OP == "ready_for_local_init_op"
    assert k.MOVING_AVERAGE_VARIABLES == "moving_average_variables"
    assert "trainable_resource_variables" in k._VARIABLE_COLLECTIONS


def test_variable_collections_with_scope():
    with tf.name_scope("net"):
        tf.Variable(1.0, name="v")
    tf.Variable(1.0, name="network_v")
    assert _names(tf.global_variables("net")) == ["net/v:0", "network_v:0"]
    assert _names(tf.trainable_variables(scope="net/")) == ["net/v:0"]
