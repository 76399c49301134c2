"""The one depth-first walk: producers first, loop back edges last, other cycles refused."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowgraph.framework.graph_walk import GraphCycleError, depth_first_order


def test_dependencies_come_first_and_unreached_nodes_are_left_out():
    deps = {"d": ["b", "c"], "b": ["a"], "c": ["a"], "a": [], "x": ["a"]}
    order = depth_first_order(["d"], lambda n: deps[n])
    assert order == ["a", "b", "c", "d"]


def test_roots_are_visited_in_the_order_given():
    deps = {"a": [], "b": []}
    assert depth_first_order(["b", "a"], lambda n: deps[n]) == ["b", "a"]


def test_a_back_edge_is_walked_after_everything_else():
    # enter -> merge -> body -> next -> (back to) merge; exit reads merge.
    deps = {"exit": ["merge"], "merge": ["enter", "next"], "next": ["body"],
            "body": ["merge"], "enter": []}
    order = depth_first_order(["exit"], lambda n: deps[n],
                              lambda node, dep: (node, dep) == ("merge", "next"))
    assert order == ["enter", "merge", "exit", "body", "next"]


def test_an_unmarked_cycle_names_a_node_on_it():
    deps = {"a": ["b"], "b": ["c"], "c": ["a"]}
    with pytest.raises(GraphCycleError) as info:
        depth_first_order(["a"], lambda n: deps[n])
    assert info.value.node in {"a", "b", "c"}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, 30), max_size=4), min_size=1, max_size=30))
def test_every_edge_of_a_random_dag_points_backwards_in_the_order(raw):
    # Node i may depend only on nodes < i: a DAG.
    deps = {i: sorted({d % i for d in ds}) if i else [] for i, ds in enumerate(raw)}
    order = depth_first_order(reversed(range(len(raw))), lambda n: deps[n])
    position = {n: k for k, n in enumerate(order)}
    assert sorted(order) == list(range(len(raw)))
    for n, ds in deps.items():
        for d in ds:
            assert position[d] < position[n]


def test_import_graph_def_orders_nodes_with_the_walk_and_names_a_cycle():
    import flowgraph as tf

    with tf.Graph().as_default() as g:
        a = tf.constant(1.0, name="a")
        tf.negative(a, name="b")
    nodes = g.as_graph_def()["node"]
    with tf.Graph().as_default():
        b, = tf.import_graph_def({"node": nodes[::-1]}, return_elements=["b:0"], name="")
        with tf.Session() as sess:
            assert sess.run(b) == -1.0
    looped = [dict(n) for n in nodes]
    for n in looped:
        if n["name"] == "a":
            n["input"] = ["^b"]
    with tf.Graph().as_default(), pytest.raises(ValueError, match="cycle through"):
        tf.import_graph_def({"node": looped}, name="")
