"""GraphDefs with a function library, written by TensorFlow 2.15 in TF1 graph mode
(tests/data/tf_formats/functions/make_fixture.py), import and run with TensorFlow's
values: calls inlined, TF 2's functional If/While lowered to TF 1's control flow."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework.event_format import AttrValue, GraphDef, NameAttrList, NodeDef
from flowgraph.framework.tf_formats.function_inline import inline_functions
from flowgraph.framework.tf_formats.meta_graph_messages import FunctionDefProto, OpDefProto

HERE = os.path.join(os.path.dirname(__file__), "..", "data", "tf_formats", "functions")
EXPECTED = json.load(open(os.path.join(HERE, "expected.json")))
FEED_X = [[1.0, -3.0, 0.5], [2.0, 0.25, -1.0]]


def _graph_def(name: str) -> GraphDef:
    with open(os.path.join(HERE, name), "rb") as f:
        return GraphDef.FromString(f.read())


def test_the_fixture_holds_calls_and_functional_control_flow():
    ops = {n.op for n in _graph_def("pure.pb").node}
    assert "PartitionedCall" in ops
    bodies = [FunctionDefProto.FromString(raw) for raw in _graph_def("pure.pb").library.function]
    body_ops = {n.op for fn in bodies for n in fn.node_def}
    assert {"StatelessIf", "StatelessWhile", "PartitionedCall", "SplitV"} <= body_ops
    assert "StatefulPartitionedCall" in {n.op for n in _graph_def("stateful.pb").node}


def test_inlined_graph_has_no_library_and_no_calls():
    inlined = inline_functions(_graph_def("pure.pb"))
    assert not inlined.library.function
    assert not {"PartitionedCall", "StatelessIf", "StatelessWhile"} & {n.op for n in
                                                                        inlined.node}


@pytest.mark.parametrize("flag", [True, False])
def test_pure_functions_give_tensorflows_values(flag):
    want = EXPECTED[f"pure_{flag}"]
    with tf.Graph().as_default():
        tf.import_graph_def(_graph_def("pure.pb"), name="")
        names = sorted(want)
        with tf.Session() as sess:
            got = sess.run([f"{n}:0" for n in names], {"x:0": FEED_X, "flag:0": flag})
    for name, value in zip(names, got, strict=True):
        np.testing.assert_allclose(value, want[name], rtol=1e-6, err_msg=name)


def test_a_function_updating_a_resource_variable_runs_its_side_effects():
    want = EXPECTED["stateful"]
    with tf.Graph().as_default() as graph:
        tf.import_graph_def(_graph_def("stateful.pb"), name="")
        with tf.Session() as sess:
            sess.run(want["init"])
            bumped = [sess.run("bumped:0", {"delta:0": d}).tolist()
                      for d in ([0.5, -1.0], [1.0, 1.0])]
            v = graph.get_tensor_by_name("v/Read/ReadVariableOp:0")
            sess.run("maybe:0", {"delta:0": [1.0, 1.0]})
            after_positive = sess.run(v).tolist()
            sess.run("maybe:0", {"delta:0": [-5.0, -5.0]})
            after_negative = sess.run(v).tolist()
    assert bumped == want["bumped"]
    assert after_positive == want["after_positive"]  # the taken branch's assign ran
    assert after_negative == want["after_negative"]  # the untaken one's did not


def _library_graph(body_input: str, output_arg: str = "y") -> GraphDef:
    fn = FunctionDefProto(
        signature=OpDefProto(name="f", input_arg=[OpDefProto.ArgDef(name="a", type=1)],
                             output_arg=[OpDefProto.ArgDef(name=output_arg, type=1)]),
        node_def=[NodeDef(name="neg", op="Neg", input=[body_input],
                          attr={"T": AttrValue(type=1)})],
        ret={output_arg: "neg:y:0"})
    call = NodeDef(name="call", op="PartitionedCall", input=["x"],
                   attr={"f": AttrValue(func=NameAttrList(name="f").SerializeToString()),
                         "Tin": AttrValue(list=AttrValue.ListValue(type=[1])),
                         "Tout": AttrValue(list=AttrValue.ListValue(type=[1]))})
    x = NodeDef(name="x", op="Placeholder", attr={"dtype": AttrValue(type=1)})
    graph = GraphDef(node=[x, call])
    graph.library.function.append(fn.SerializeToString())
    return graph


def test_a_hand_built_call_and_clear_errors():
    with tf.Graph().as_default():
        tf.import_graph_def(_library_graph("a"), name="")
        with tf.Session() as sess:
            assert sess.run("call:0", {"x:0": 2.0}) == -2.0
    with pytest.raises(ValueError, match="neither an argument nor a node of the body"):
        inline_functions(_library_graph("nope"))
    bad = _library_graph("a")
    bad.node[1].attr["f"] = AttrValue(func=NameAttrList(name="g").SerializeToString())
    with pytest.raises(ValueError, match="calls function 'g', which the GraphDef's library"):
        inline_functions(bad)


def test_a_recursive_function_is_refused():
    graph = _library_graph("a")
    fn = FunctionDefProto.FromString(graph.library.function[0])
    fn.node_def[0].op = "f"  # the body calls the function itself
    fn.ret["y"] = "neg:y:0"
    graph.library.ClearField("function")
    graph.library.function.append(fn.SerializeToString())
    with pytest.raises(ValueError, match="nest more than 64 deep"):
        inline_functions(graph)
