"""The planner's passes, one at a time, through their explicit inputs and outputs."""

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework import errors
from flowgraph.runtime.layout import lay_out_slots
from flowgraph.runtime.node_table import NodeTable
from flowgraph.runtime.partition import partition
from flowgraph.runtime.placement import place
from flowgraph.runtime.plan import compile_plan
from flowgraph.runtime.prune import needed_ops
from flowgraph.runtime.rewrite import Rewrites, rewrite
from flowgraph.runtime.schedule import schedule


def _names(ops):
    return [op.name for op in ops]


def test_prune_walks_a_while_loop_without_calling_it_a_cycle():
    with tf.Graph().as_default():
        _, out = tf.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2.0),
                               [tf.constant(0), tf.constant(1.0)])
        ops = needed_ops([out], [], fed=set())
        position = {op: k for k, op in enumerate(ops)}
        for op in ops:
            for t in op.inputs:
                if op.type == "Merge" and t.op.type == "NextIteration":
                    assert position[t.op] > position[op]  # the back edge
                else:
                    assert position[t.op] < position[op]
        assert any(op.type == "NextIteration" for op in ops)


def test_prune_refuses_a_cycle_that_is_not_a_loop():
    with tf.Graph().as_default():
        a = tf.identity(tf.constant(1.0), name="a")
        b = tf.identity(a, name="b")
        a.op._add_control_input(b.op)
        with pytest.raises(ValueError, match="cycle through op"):
            needed_ops([b], [], fed=set())


def test_prune_sees_inputs_through_replacements_and_stops_at_cut_tensors():
    with tf.Graph().as_default():
        x = tf.constant(2.0, name="x")
        s1 = tf.sin(x, name="s1")
        s2 = tf.sin(x, name="s2")
        out = tf.add(s1, s2, name="out")
        assert _names(needed_ops([out], [], set(), replace={s2: s1})) == ["x", "s1", "out"]
        assert _names(needed_ops([out], [], set(), cut={s1, s2})) == ["out"]


def test_rewrite_merges_and_folds_as_the_options_ask():
    with tf.Graph().as_default() as g:
        x = tf.constant(2.0)
        y = tf.add(tf.sin(x), tf.sin(x))
        ops = needed_ops([y], [], set())
        with tf.Session(graph=g) as sess:
            env = sess._compile_env
            host = env.devices[0]
            opts = env.config.graph_options.optimizer_options
            found = rewrite(ops, set(), opts, lambda op: env.kernels.host_kernel(host, op))
        assert len(found.replace) == 1
        np.testing.assert_allclose(found.known[y], 2 * np.sin(2.0))


def test_layout_partition_and_schedule_on_two_devices():
    config = tf.ConfigProto(device_count={"CPU": 2})
    with tf.Graph().as_default() as g:
        with tf.device("/cpu:0"):
            x = tf.placeholder(tf.float32, name="x")
            a = tf.negative(x, name="a")
        with tf.device("/cpu:1"):
            b = tf.square(a, name="b")
            c = tf.add(a, b, name="c")
        ops = needed_ops([c], [], {x})
        with tf.Session(graph=g, config=config) as sess:
            placement = place(ops, sess._compile_env.devices, False)
            table = lay_out_slots(ops, [x], Rewrites(), placement)
            assert isinstance(table, NodeTable)
            assert [n.name for n in table.nodes] == ["a", "b", "c"]
            assert table.feed_slots[x] == 0 and table.nodes[0].input_slots == [0]
            graphs = partition(table)
            # One pair carries `a` to CPU:1 for both of its consumers there.
            kinds = [n.op_type for n in table.nodes]
            assert kinds.count("_Send") == 1 and kinds.count("_Recv") == 1
            recv_slot = table.nodes[kinds.index("_Recv")].out_base
            assert table.nodes[1].input_slots == [recv_slot]
            assert table.nodes[2].input_slots[0] == recv_slot
            assert {p["device"] for p in graphs} == {d.name for d in placement.values()}
            fetch_slots = schedule(table, [c])
            assert fetch_slots == [table.nodes[2].out_base]
            assert table.uses[recv_slot] == 2
            np.testing.assert_allclose(sess.run(c, {x: 3.0}), -3.0 + 9.0)


def test_a_compiled_plan_lists_its_nodes_and_devices():
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, name="x")
        y = tf.negative(x, name="y")
        with tf.Session(graph=g) as sess:
            cp = compile_plan(sess._compile_env, [y], [], [x])
    assert [n.name for n in cp.nodes] == ["y"]
    assert [d.short_name for d in cp.devices] == ["/device:CPU:0"]
    assert cp.feed_slots == {x: 0} and cp.fetch_slots == [1]


def test_a_grpc_target_raises_instead_of_running_locally():
    # nothing listens there: the session waits for the task (as TF's does) until the
    # operation deadline, shortened here
    config = tf.ConfigProto(operation_timeout_in_ms=500)
    with pytest.raises(errors.UnavailableError, match="unavailable"):
        tf.Session("grpc://localhost:2222", config=config)
    with pytest.raises(errors.NotFoundError, match="not supported"):  # TF's type
        tf.Session("http://localhost:2222")


@pytest.mark.parametrize("module", [
    "flowgraph.framework.graph_walk", "flowgraph.framework.registry",
    "flowgraph.runtime.prune", "flowgraph.runtime.placement", "flowgraph.runtime.layout",
    "flowgraph.runtime.plan", "flowgraph.backends.base", "flowgraph.backends.fusion_rules",
    "flowgraph.backends.cpu.kernels_fused", "flowgraph.backends.cpu._fused"])
def test_module_examples_run(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted > 0 and result.failed == 0
