"""`tf.contrib.graph_editor`: selection, subgraph views, rerouting, editing and copying
(TF 1.15's documented API; TensorFlow 2.15 has no graph editor), rewires taking effect in a
session that already ran, and a gradient-checkpointing program in the style of OpenAI's
``memory_saving_gradients.py`` giving `tf.gradients`' values.

Numbers marked "TF 2.15" were printed by TensorFlow 2.15 (`tf.compat.v1`) on the same
programs; op names follow `Graph.unique_name`, checked under TF 2.15 (``y`` -> ``y_1``,
``copy`` -> ``copy_1``, scoped by the current name scope).
"""

import doctest
import importlib

import numpy as np
import pytest

import flowgraph as tf
import flowgraph.contrib.graph_editor as ge

MODULES = ["flowgraph.contrib.graph_editor", "flowgraph.contrib.graph_editor.util",
           "flowgraph.contrib.graph_editor.select", "flowgraph.contrib.graph_editor.subgraph",
           "flowgraph.contrib.graph_editor.reroute", "flowgraph.contrib.graph_editor.edit",
           "flowgraph.contrib.graph_editor.transform"]


def _names(items):
    return [x.name for x in items]


def test_namespace():
    assert tf.contrib.graph_editor is ge
    assert ge.sgv is ge.make_view and ge.sgv_scope is ge.make_view_from_scope
    for name in ("get_forward_walk_ops", "get_backward_walk_ops", "filter_ts",
                 "get_walks_intersection_ops", "copy_with_input_replacements", "reroute_ts",
                 "add_control_inputs", "make_list_of_op", "make_list_of_t",
                 "filter_ops_from_regex", "connect", "swap_inputs", "detach_inputs",
                 "remove_control_inputs", "SubGraphView", "select_ops", "select_ts",
                 "graph_replace", "Transformer"):
        assert callable(getattr(ge, name)), name


def _chain():
    a = tf.placeholder(tf.float32, [2], name="a")
    b = tf.identity(a, name="b")
    c = tf.square(b, name="c")
    d = tf.add(c, a, name="d")
    return a, b, c, d


def test_walks_and_filters():
    with tf.Graph().as_default() as g:
        a, b, c, d = _chain()
        assert _names(ge.get_forward_walk_ops([a.op])) == ["a", "b", "d", "c"]
        assert _names(ge.get_forward_walk_ops(a)) == ["b", "d", "c"]  # a tensor: consumers
        assert _names(ge.get_forward_walk_ops([b.op], inclusive=False)) == ["c", "d"]
        assert _names(ge.get_forward_walk_ops([a.op], stop_at_ts=[b])) == ["a", "b", "d"]
        assert _names(ge.get_backward_walk_ops([d.op])) == ["d", "a", "c", "b"]
        assert _names(ge.get_backward_walk_ops([d.op], stop_at_ts=[c])) == ["d", "a"]
        assert _names(ge.get_backward_walk_ops(d, within_ops=[d.op, c.op])) == ["d", "c"]
        assert _names(ge.get_walks_intersection_ops([b.op], [d.op])) == ["b", "c", "d"]
        assert _names(ge.get_walks_intersection_ops(
            [b.op], [d.op], forward_inclusive=False, backward_inclusive=False)) == ["c"]
        assert set(_names(ge.get_walks_union_ops([c.op], [b.op]))) == {"c", "d", "b", "a"}
        assert _names(ge.filter_ts([a.op, c.op], True)) == ["a:0", "c:0"]
        assert _names(ge.filter_ts(g, lambda t: t.op.type == "Square")) == ["c:0"]
        assert _names(ge.filter_ops_from_regex(g, "^[bc]$")) == ["b", "c"]
        assert _names(ge.make_list_of_op(g)) == ["a", "b", "c", "d"]
        assert _names(ge.make_list_of_t([a, b.op], ignore_ops=True)) == ["a:0"]
        assert ge.make_list_of_op(c.op) == [c.op]
        with pytest.raises(TypeError, match="Operation"):
            ge.make_list_of_op([a])
        with pytest.raises(TypeError, match="Tensor"):
            ge.make_list_of_t([a.op])
        assert _names(ge.get_consuming_ops([a])) == ["b", "d"]
        assert _names(ge.get_generating_ops([c, d])) == ["c", "d"]


def test_select_with_regexes_and_scopes():
    with tf.Graph().as_default() as g:
        with tf.name_scope("enc"):
            x = tf.constant(1.0, name="x")
            y = tf.identity(x, name="y")
        with tf.name_scope("dec"):
            z = tf.identity(y, name="z")
        assert _names(ge.select_ops("^enc/", graph=g)) == ["enc/x", "enc/y"]
        assert _names(ge.select_ops("^enc/", z.op, graph=g)) == ["enc/x", "enc/y", "dec/z"]
        assert _names(ge.select_ops("y|z", graph=g, restrict_ops_regex="^dec")) == ["dec/z"]
        assert _names(ge.select_ts("^enc/.*:0$", graph=g)) == ["enc/x:0", "enc/y:0"]
        ops, ts = ge.select_ops_and_ts("(?#ops)^dec", "(?#ts)^enc/x", graph=g)
        assert (_names(ops), _names(ts)) == (["dec/z"], ["enc/x:0"])
        assert _names(ge.get_name_scope_ops(g, "enc")) == ["enc/x", "enc/y"]
        assert _names(ge.sgv_scope("dec", graph=g).ops) == ["dec/z"]
        with tf.Graph().as_default():
            with pytest.raises(TypeError, match="regex, an op, a tensor or a graph"):
                ge.select_ops(3, graph=g)


def test_subgraph_view_boundary_and_remap():
    with tf.Graph().as_default():
        a, b, c, d = _chain()
        e = tf.negative(c, name="e")
        view = ge.sgv(b.op, c.op)
        assert _names(view.ops) == ["b", "c"]
        assert _names(view.inputs) == ["a:0"]
        assert _names(view.outputs) == ["c:0"]  # b:0 is only read inside
        assert len(view) == 2 and bool(view) and not ge.SubGraphView()
        assert view.graph is a.graph and view.find_op_by_name("c") is c.op
        assert _names(view.consumers()) == ["d", "e"]
        assert view.input_index(a) == 0 and view.output_index(c) == 0
        with pytest.raises(ValueError, match="not in subgraph"):
            view.find_op_by_name("d")
        both = ge.SubGraphView([d.op, e.op], passthrough_ts=[b])
        assert _names(both.inputs) == ["c:0", "a:0", "b:0"]
        assert _names(both.outputs) == ["d:0", "e:0", "b:0"]
        assert both.is_passthrough(b) and _names(both.passthroughs) == ["b:0"]
        assert _names(both.connected_inputs) == ["c:0", "a:0"]
        remapped = both.remap([1, 0], [2])
        assert _names(remapped.inputs) == ["a:0", "c:0"] and _names(remapped.outputs) == ["b:0"]
        assert _names(both.inputs) == ["c:0", "a:0", "b:0"]  # remap returns a copy
        assert _names(remapped.remap_default().inputs) == ["c:0", "a:0", "b:0"]
        with pytest.raises(IndexError, match="input index 5"):
            both.remap_inputs([5])
        assert ge.sgv(view) is view


def test_reroute_takes_effect_in_a_session_that_already_ran():
    with tf.Graph().as_default():
        a = tf.constant(3.0, name="a")
        b = tf.constant(5.0, name="b")
        y = tf.square(a, name="y")
        z = tf.add(a, 1.0, name="z")
        with tf.Session() as sess:
            assert sess.run(y) == 9.0
            assert sess.run(y) == 9.0  # the repeated-run fast path is cached now
            # TF 2.15 keeps running the old graph in this session (and warns); flowgraph
            # recompiles, as a new session would in both.
            assert ge.reroute_ts([b], [a], can_modify=[y.op]) == 1
            assert sess.run(y) == 25.0
            assert sess.run(z) == 4.0  # z could not be modified
            assert _names(a.consumers()) == ["z"] and _names(b.consumers()) == ["y"]
            assert ge.swap_ts([a], [b]) == 2
            assert sess.run([y, z]) == [9.0, 6.0]
            assert ge.reroute_ts([a], [a]) == 0
            with pytest.raises(ValueError, match="Dtypes int32 and float32"):
                ge.reroute_ts([tf.constant(1)], [a])
            with pytest.raises(ValueError, match="different sizes: 1 != 2"):
                ge.reroute_ts([a], [a, b])


def test_reroute_in_a_finalized_graph_recompiles_cached_plans():
    # a finalized graph's plans are also shared between sessions by fingerprint
    with tf.Graph().as_default() as g:
        a = tf.placeholder_with_default(2.0, [], name="a")
        b = tf.constant(7.0, name="b")
        y = tf.multiply(a, 10.0, name="y")
        g.finalize()
        with tf.Session() as sess:
            assert sess.run(y) == 20.0
        with tf.Session() as sess:
            assert sess.run(y) == 20.0
            ge.reroute_ts([b], [a])
            assert sess.run(y) == 70.0
        with tf.Session() as sess:
            assert sess.run(y) == 70.0


def test_control_inputs_edits():
    with tf.Graph().as_default():
        v = tf.Variable(0.0, name="v")
        inc = tf.assign_add(v, 1.0, name="inc").op
        seven = tf.constant(7.0)
        with tf.control_dependencies([inc]):
            out = tf.identity(seven, name="out")
        with tf.Session() as sess:
            sess.run(v.initializer)
            sess.run(out)
            assert sess.run(v) == 1.0
            ge.remove_control_inputs(out.op, [inc])
            assert out.op.control_inputs == []
            sess.run(out)
            assert sess.run(v) == 1.0  # the increment no longer runs
            ge.add_control_inputs(out.op, inc)
            sess.run(out)
            assert sess.run(v) == 2.0
            with pytest.raises(ValueError, match="inc is already a control_input of out"):
                ge.add_control_inputs(out.op, [inc])
            with pytest.raises(TypeError, match=r"expected a tf\.Operation"):
                ge.add_control_inputs(out, [inc])
            ge.remove_control_inputs(out.op, [inc])
            with pytest.raises(ValueError, match="inc is not a control_input of out"):
                ge.remove_control_inputs(out.op, [inc])


def test_detach_connect_swap_and_bypass():
    with tf.Graph().as_default():
        a, b, c, d = _chain()
        view, phs = ge.detach_inputs(ge.sgv(b.op, c.op))
        assert _names(phs) == ["geph__a_0:0"] and phs[0].shape.as_list() == [2]
        assert _names(b.op.inputs) == ["geph__a_0:0"] and _names(d.op.inputs) == ["c:0", "a:0"]
        assert _names(view.inputs) == ["geph__a_0:0"]
        with tf.Session() as sess:
            out = sess.run(d, {phs[0]: [1.0, 2.0], a: [10.0, 20.0]})
            np.testing.assert_allclose(out, [11.0, 24.0])
            k = tf.constant([3.0, 4.0], name="k")
            ge.connect(ge.sgv(k.op), ge.sgv(b.op))  # k feeds b now
            np.testing.assert_allclose(sess.run(d, {a: [0.0, 1.0]}), [9.0, 17.0])
            m = tf.constant([1.0, 1.0], name="m")
            n = tf.identity(m, name="n")
            ge.swap_inputs(ge.sgv(b.op), ge.sgv(n.op))
            assert _names(b.op.inputs) == ["m:0"] and _names(n.op.inputs) == ["k:0"]
            np.testing.assert_allclose(sess.run([d, n], {a: [0.0, 0.0]}), [[1.0, 1.0],
                                                                           [3.0, 4.0]])
    with tf.Graph().as_default():
        x = tf.constant([2.0], name="x")
        sq = tf.square(x, name="sq")
        y = tf.add(sq, 1.0, name="y")
        view, phs = ge.bypass(ge.sgv(sq.op))
        assert _names(phs) == ["geph__x_0:0"] and _names(y.op.inputs)[0] == "x:0"
        with tf.Session() as sess:
            assert sess.run(y).tolist() == [3.0]


def test_detach_outputs_and_control_outputs():
    with tf.Graph().as_default() as g:
        x = tf.constant(2.0, name="x")
        sq = tf.square(x, name="sq")
        with tf.control_dependencies([sq.op]):
            y = tf.add(sq, 1.0, name="y")
        _, phs = ge.detach_outputs(ge.sgv(sq.op), ge.ControlOutputs(g))
        assert _names(phs) == ["geph__sq_0:0"]
        assert _names(y.op.inputs)[0] == "geph__sq_0:0" and y.op.control_inputs == []
        with tf.Session() as sess:
            assert sess.run(y, {phs[0]: 10.0}) == 11.0


def test_copy_names_scopes_and_placeholders():
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        with tf.name_scope("net"):
            h = tf.multiply(x, 3.0, name="h")
            y = tf.reduce_sum(h, name="y")
        tf.add_to_collection("checkpoints", h)
        view = ge.sgv(h.op, y.op)
        copied, info = ge.copy(view)
        # the inputs of a copy become placeholders
        assert _names(copied.ops) == ["net/h_1", "net/y_1"]
        assert _names(copied.inputs)[0] == "geph__x_0:0"
        assert copied.inputs[0].shape.as_list() == [None, 2]
        assert info.transformed(y).name == "net/y_1:0" and info.original(copied.ops[1]) is y.op
        assert info.transformed("net/h").name == "net/h_1" and info.transformed(x) is None
        assert [t.name for t in info.transformed([h, (y,)])[1]] == ["net/y_1:0"]
        assert info.graph is g and info.graph_ is g and info.scope_ == ""
        assert _names(g.get_collection("checkpoints")) == ["net/h:0", "net/h_1:0"]
        _, info2 = ge.copy(view, dst_scope="copy")
        _, info3 = ge.copy(view, dst_scope="copy")
        # as in TF 1.x, a non-standard collection's name must lie in the source scope
        with pytest.raises(ValueError, match="checkpoints does not belong to source scope"):
            ge.copy(view, dst_scope="copy", reuse_dst_scope=True, src_scope="net")
        g.clear_collection("checkpoints")
        _, info4 = ge.copy(view, dst_scope="copy", reuse_dst_scope=True, src_scope="net")
        assert info2.transformed(y).name == "copy/net/y:0"
        assert info3.transformed(y).name == "copy_1/net/y:0"
        assert info4.transformed(y).name == "copy/y:0" and info4.scope_ == "copy/"
        assert g.get_collection("copy/checkpoints")[0].name == "copy/net/h:0"
        with pytest.raises(TypeError, match=r"tf\.Graph"):
            ge.copy(view, dst_graph="nope")
        with tf.Session() as sess:
            # the constants 3.0 (net/h/y) and reduce_sum's axes (net/Const) are inputs too
            assert _names(copied.inputs) == ["geph__x_0:0", "geph__y_0:0", "geph__Const_0:0"]
            feed = dict(zip(copied.inputs, [[[1.0, 2.0]], 3.0, [0, 1]]))
            assert sess.run(info.transformed(y), feed) == 9.0
        other = tf.Graph()
        _, info5 = ge.copy_with_input_replacements(view, {}, dst_graph=other)
        y5 = info5.transformed(y)
        assert y5.graph is other and _names(other.get_operations()) == [
            "geph__x_0", "geph__y_0", "net/h", "geph__Const_0", "net/y"]
        with tf.Session(graph=other) as sess:
            feed = {"geph__x_0:0": [[1.0, 1.0]], "geph__y_0:0": 2.0, "geph__Const_0:0": [0, 1]}
            assert sess.run(y5, feed) == 4.0


def test_copy_with_input_replacements_and_graph_replace():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [], name="x")
        w = tf.constant(2.0, name="w")
        y = tf.multiply(x, w, name="y")
        z = tf.add(y, 1.0, name="z")
        other = tf.constant(10.0, name="other")
        copied, info = ge.copy_with_input_replacements(ge.sgv(y.op, z.op), {x: other})
        z2 = info.transformed(z)
        assert z2.name == "z_1:0" and _names(copied.inputs) == ["other:0", "w:0", "z/y:0"]
        r = ge.graph_replace({"out": [z], "same": w}, {x: other})
        assert r["out"][0].name == "z_2:0" and r["same"] is w
        with tf.Session() as sess:
            assert sess.run([z2, r["out"][0]]) == [21.0, 21.0]
            assert sess.run(z, {x: 1.0}) == 3.0  # the original is untouched
        with pytest.raises(ValueError, match="not connected"):
            ge.graph_replace(w, {x: other})


def test_graph_replace_through_cond_and_while_loop():
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [], name="x")
        p = tf.placeholder(tf.bool, [], name="p")
        y = tf.cond(p, lambda: x * 2.0, lambda: x - 1.0) + 1.0
        r = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * x), [0, 1.0])
        n = len(g.get_operations())
        y2, r2 = ge.graph_replace([y, r[1]], {x: tf.constant(5.0, name="five")})
        # only the loop's back edge needs a stand-in while copying (as in TF 1.x)
        stand_ins = [op.name for op in g.get_operations()[n:] if op.type == "Placeholder"]
        assert stand_ins == ["geph__NextIteration_1_0"]
        with tf.Session() as sess:
            assert sess.run([y2, r2], {p: True}) == [11.0, 125.0]
            assert sess.run(y2, {p: False}) == 5.0
            assert sess.run([y, r[1]], {x: 3.0, p: True}) == [7.0, 27.0]


def test_transformer_with_custom_handlers():
    with tf.Graph().as_default() as g:
        x = tf.constant(1.0, name="x")
        y = tf.add(x, 1.0, name="y")
        z = tf.multiply(y, 3.0, name="z")
        seen = []

        def keep_input(info, t):
            seen.append(t.name)
            return t

        def negate_op(info, op, new_inputs):
            op_, outputs_ = ge.copy_op_handler(info, op, new_inputs)
            return op_, outputs_

        transformer = ge.Transformer()
        transformer.transform_external_input_handler = keep_input
        transformer.transform_op_handler = negate_op
        copied, info = transformer(ge.sgv(y.op, z.op), g, "t")
        assert _names(copied.ops) == ["t/y", "t/z"] and seen == ["x:0", "y/y:0", "z/y:0"]
        with tf.Session() as sess:
            assert sess.run(info.transformed(z)) == 6.0
        assert "t/y -> " not in str(info) and "y -> t/y" in str(info)


def test_copy_keeps_control_inputs_and_devices():
    with tf.Graph().as_default():
        v = tf.Variable(0.0, name="v")
        inc = tf.assign_add(v, 1.0, name="inc").op
        five = tf.constant(5.0, name="five")
        with tf.device("/cpu:0"), tf.control_dependencies([inc]):
            out = tf.identity(five, name="out")
        _, info = ge.copy_with_input_replacements(ge.sgv(out.op), {})
        out2 = info.transformed(out)
        assert _names(out2.op.control_inputs) == ["inc"] and out2.op.device == out.op.device
        with tf.Session() as sess:
            sess.run(v.initializer)
            assert sess.run(out2) == 5.0 and sess.run(v) == 1.0


def test_copy_keeps_gradient_overrides():
    # TF 1.x copies the NodeDef, whose `_gradient_op_type` attribute names the override
    with tf.Graph().as_default() as g:
        @tf.RegisterGradient("GeDoubleGrad")
        def _double(op, grad):
            return [2.0 * grad]

        x = tf.constant(3.0, name="x")
        with g.gradient_override_map({"Identity": "GeDoubleGrad"}):
            y = tf.identity(x, name="y")
        _, info = ge.copy_with_input_replacements(ge.sgv(y.op), {})
        y2 = info.transformed(y)
        assert y2.op.get_attr("_gradient_op_type") == b"GeDoubleGrad"
        with tf.Session() as sess:
            assert sess.run(tf.gradients(y2, x))[0] == 2.0


# -- gradient checkpointing (the algorithm of memory_saving_gradients.py) ----------------

def _ops_of(xs):
    return [x.op if hasattr(x, "op") else x for x in xs]


def _backward_ops_between(within_ops, seed_ops, stop_at_ts):
    ops = set(ge.get_backward_walk_ops(seed_ops, stop_at_ts=stop_at_ts))
    return list(ops.intersection(within_ops).difference([t.op for t in stop_at_ts]))


def _checkpointed_gradients(ys, xs, checkpoints):
    """d(sum ys)/d xs, recomputing the forward pass piecewise between `checkpoints`."""
    bwd_ops = ge.get_backward_walk_ops([y.op for y in ys], inclusive=True)
    fwd_ops = ge.get_forward_walk_ops(_ops_of(xs), inclusive=True, within_ops=bwd_ops)
    fwd_ops = [op for op in fwd_ops if op.inputs and op not in _ops_of(xs)]
    fwd_ops = [op for op in fwd_ops if "/read" not in op.name and "/Assign" not in op.name]
    ts_all = set(ge.filter_ts(fwd_ops, True)) - set(xs) - set(ys)
    checkpoints = [c for c in checkpoints if c in ts_all]
    disconnected = {c: tf.stop_gradient(c, name=c.op.name + "_sg") for c in checkpoints}

    ops_to_copy = _backward_ops_between(fwd_ops, [y.op for y in ys], checkpoints)
    _, info = ge.copy_with_input_replacements(ge.sgv(ops_to_copy), {})
    copied_ops = list(info._transformed_ops.values())
    ge.reroute_ts(list(disconnected.values()), list(disconnected), can_modify=copied_ops)
    copied_ys = [info._transformed_ops[y.op]._outputs[0] for y in ys]
    dv = tf.gradients(copied_ys, list(disconnected.values()) + list(xs))
    d_checkpoints = dict(zip(checkpoints, dv[:len(checkpoints)]))
    d_xs = list(dv[len(checkpoints):])

    for c in sorted(checkpoints, key=lambda t: ge.get_backward_walk_ops(t.op).__len__(),
                    reverse=True):
        others = [o for o in checkpoints if o is not c]
        ops_to_copy = _backward_ops_between(fwd_ops, [c.op], others)
        if not ops_to_copy:
            break
        _, info = ge.copy_with_input_replacements(ge.sgv(ops_to_copy), {})
        copied_ops = list(info._transformed_ops.values())
        ge.reroute_ts([disconnected[o] for o in others], others, can_modify=copied_ops)
        boundary = [info._transformed_ops[c.op]._outputs[0]]
        dv = tf.gradients(boundary, [disconnected[o] for o in others] + list(xs),
                          grad_ys=[d_checkpoints[c]])
        # recompute only once the backprop reached this checkpoint
        for op in copied_ops + [g.op for g in dv if g is not None]:
            waits = [d_checkpoints[c].op]
            waits = [w for w in waits if w not in op.control_inputs]
            ge.add_control_inputs(op, waits)
        for o, d in zip(others, dv[:len(others)]):
            if d is not None:
                d_checkpoints[o] = d if d_checkpoints[o] is None else d_checkpoints[o] + d
        for j, d in enumerate(dv[len(others):]):
            if d is not None:
                d_xs[j] = d if d_xs[j] is None else d_xs[j] + d
    return d_xs


def test_memory_saving_gradients_match_tf_gradients():
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        x = tf.constant(np.linspace(-1, 1, 24, dtype=np.float32).reshape(3, 8), name="x")
        h, ws, checkpoints = x, [], []
        for i in range(20):
            w = tf.get_variable(f"w{i}", [8, 8],
                                initializer=tf.random_normal_initializer(stddev=0.5, seed=i))
            ws.append(w)
            h = tf.tanh(tf.matmul(h, w), name=f"h{i}")
            if i % 4 == 3:
                checkpoints.append(h)
        loss = tf.reduce_sum(tf.square(h), name="loss")
        reference = tf.gradients(loss, ws)
        n_ops = len(tf.get_default_graph().get_operations())
        grads = _checkpointed_gradients([loss], ws, checkpoints)
        graph = tf.get_default_graph()
        # the backward pass reads recomputed activations: every TanhGrad takes a copy
        tanh_grads = [op for op in ge.get_backward_walk_ops(grads) if op.type == "TanhGrad"]
        assert len(tanh_grads) == 20
        assert all(op.inputs[0].op.name.startswith("h") and op.inputs[0].op.name[-2] == "_"
                   and graph.get_operations().index(op.inputs[0].op) >= n_ops
                   for op in tanh_grads)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            ref, got, loss_value = sess.run([reference, grads, loss])
    # TF 2.15: loss 6.8821235, reference gradients of w0[0, :3] and w19[0, :3]
    np.testing.assert_allclose(loss_value, 6.8821235, rtol=1e-5)
    np.testing.assert_allclose(ref[0][0, :3], [0.27651802, -3.122728, -2.3860354], rtol=1e-4)
    np.testing.assert_allclose(ref[19][0, :3], [-1.0119052, 0.7872959, 2.0484703], rtol=1e-4)
    for r, g in zip(ref, got):
        np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("module", MODULES)
def test_docstring_examples(module):
    result = doctest.testmod(importlib.import_module(module),
                             optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0
