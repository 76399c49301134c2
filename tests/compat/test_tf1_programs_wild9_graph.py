"""TF1 programs "from the wild", round 9, graph semantics: variable scopes with reuse,
AUTO_REUSE and partitioners, custom getters and ``tf.make_template`` (EMA getters,
``create_scope_now_``), v1 reference variables next to resource variables (assign
chains, slice assignment, the scatter methods, ``initialized_value``), name scopes and
devices, ``gradient_override_map`` with ``tf.RegisterGradient``/``tf.NotDifferentiable``
(straight-through estimators), ``tf.custom_gradient``, ``tf.while_loop`` (shape
invariants, ``maximum_iterations``, TensorArray RNNs trained with Adam), ``tf.cond`` and
``tf.case``, ``map_fn``/``scan``/``foldl`` with gradients, ``tf.gradients``' options,
``tf.py_func``, ``Graph.finalize``, collections and the global step; and the classes of
discrepancy they found.

Each program was first run under TensorFlow 2.15's ``tf.compat.v1`` with the tf-oracle;
the values asserted here are the ones TensorFlow printed. Covered: a reference
variable's ``scatter_*``/``scatter_nd_*``/``count_up_to`` methods (missing before);
every variable's ``synchronization``/``aggregation`` (validated, ``ON_READ`` not
trainable by default); ``initialized_value`` as a ``tf.cond``; the partitioned-variable
reuse errors; ``tf.NotDifferentiable`` for names no op type has (custom ops, override
targets), duplicate gradient registrations, ``tf.RegisterGradient`` for an op type
without a gradient, ``PreventGradient``'s error; ``tf.case`` without a default (the last
function's result as is); the while loops of ``map_fn``/``scan``/``foldl``/``foldr``
bounded by ``maximum_iterations`` (TF's ``Exit`` numbering); ``tf.gradients`` with a value
among ``xs`` and with a ``grad_ys`` of another dtype; the gradient of a resource variable
read in both branches of a ``tf.cond`` (a crash, then a dead tensor, before); a reference
variable's ``read`` snapshot on its ``caching_device``; ``tf.custom_gradient``'s and
``tf.make_template``'s errors; ``tf.hessians`` as TensorFlow's while loop (x of unknown
shape).
"""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf


@pytest.fixture(autouse=True)
def _fresh_graph():
    with tf.Graph().as_default() as g:
        yield g


# -- a reference variable's scatter methods (embedding tables updated in place) ---------
def test_reference_variable_scatter_methods_match_tensorflow():
    v = tf.get_variable("v", initializer=tf.constant([1.0, 2.0, 3.0, 4.0]))
    up = v.scatter_update(tf.IndexedSlices(tf.constant([9.0]), tf.constant([3])))
    add = v.scatter_add(tf.IndexedSlices(tf.constant([1.0, 1.0]), tf.constant([0, 1])))
    mul = v.scatter_mul(tf.IndexedSlices(tf.constant([2.0]), tf.constant([2])))
    mx = v.scatter_max(tf.IndexedSlices(tf.constant([100.0]), tf.constant([0])))
    nd = v.scatter_nd_update(tf.constant([[1]]), tf.constant([-1.0]))
    # TF 2.15: RefVariable methods are the v1 ref ops, named after them
    assert [t.name for t in (up, add, mul, mx, nd)] == [
        "ScatterUpdate:0", "ScatterAdd:0", "ScatterMul:0", "ScatterMax:0",
        "ScatterNdUpdate:0"]
    nd_max = v.scatter_nd_max([[2]], [50.0])
    nd_min = v.scatter_nd_min([[0]], [-5.0])
    sub = v.scatter_sub(tf.IndexedSlices(tf.constant([1.0]), tf.constant([1])))
    counter = tf.get_variable("iv", initializer=tf.constant(0))
    count = counter.count_up_to(2)
    assert count.name == "CountUpTo:0"
    with pytest.raises(TypeError, match="sparse_delta is not IndexedSlices"):
        v.scatter_add(tf.constant([1.0]))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        seen = [sess.run(t).tolist() for t in (up, add, mul, mx, nd)]
        assert seen == [[1.0, 2.0, 3.0, 9.0], [2.0, 3.0, 3.0, 9.0], [2.0, 3.0, 6.0, 9.0],
                        [100.0, 3.0, 6.0, 9.0], [100.0, -1.0, 6.0, 9.0]]
        v.load([7.0, 7.0, 7.0, 7.0], sess)
        assert sess.run(count) == 0 and sess.run(count) == 1
        assert sess.run(nd_max).tolist() == [7.0, 7.0, 50.0, 7.0]
        assert sess.run(nd_min).tolist() == [-5.0, 7.0, 50.0, 7.0]
        assert sess.run(sub).tolist() == [-5.0, 6.0, 50.0, 7.0]


# -- synchronization / aggregation (tf.distribute-ready model code) ----------------------
@pytest.mark.parametrize("use_resource", [False, True])
def test_variables_keep_synchronization_and_aggregation(use_resource):
    s1 = tf.get_variable("sync", [], use_resource=use_resource,
                         synchronization=tf.VariableSynchronization.ON_READ,
                         aggregation=tf.VariableAggregation.SUM)
    # TF 2.15: an ON_READ variable is not trainable unless asked to be
    assert (s1.trainable, s1.synchronization, s1.aggregation) == (
        False, tf.VariableSynchronization.ON_READ, tf.VariableAggregation.SUM)
    assert tf.trainable_variables() == []
    s2 = tf.get_variable("sync2", [], synchronization=tf.VariableSynchronization.ON_READ,
                         trainable=True, use_resource=use_resource)
    assert s2.trainable and tf.trainable_variables() == [s2]
    s3 = tf.Variable(1.0, aggregation=tf.VariableAggregation.MEAN, name="s3",
                     use_resource=use_resource)
    assert (s3.aggregation, s3.synchronization) == (
        tf.VariableAggregation.MEAN, tf.VariableSynchronization.AUTO)
    with pytest.raises(ValueError, match=r"^Invalid variable aggregation mode: bad for "
                                         r"variable: None$"):
        tf.Variable(1.0, aggregation="bad", use_resource=use_resource)
    with pytest.raises(ValueError, match=r"^Invalid variable synchronization mode: bad "
                                         r"for variable: None$"):
        tf.Variable(1.0, synchronization="bad", use_resource=use_resource)


def test_initialized_value_is_a_cond_and_errors_read_as_tensorflow():
    v = tf.get_variable("v", initializer=tf.constant([1.0, 2.0]))
    iv = v.initialized_value()
    assert (iv.name, iv.op.type) == ("cond/Merge:0", "Merge")  # TF 2.15
    w = tf.Variable(iv * 2, name="w")
    with tf.Session() as sess:
        sess.run(tf.variables_initializer([w, v]))
        assert sess.run(w).tolist() == [2.0, 4.0]
    for bad in (lambda: tf.Variable(), lambda: tf.Variable(None)):
        with pytest.raises(ValueError, match=r"^initial_value must be specified\.$"):
            bad()


# -- partitioned embeddings reused across towers ---------------------------------------
def test_partitioned_variable_reuse_errors_are_tensorflows():
    part = tf.fixed_size_partitioner(3)
    with tf.variable_scope("emb", partitioner=part):
        e = tf.get_variable("e", [10, 4], initializer=tf.zeros_initializer())
    with pytest.raises(ValueError, match=r"^Partitioned variable with name emb/e already "
                                         r"exists\. Did you mean to set reuse=True or "
                                         r"reuse=tf\.AUTO_REUSE in VarScope\?$"):
        tf.get_variable("emb/e", [10, 4], partitioner=part)
    with tf.variable_scope("emb", partitioner=part, reuse=True):
        assert tf.get_variable("e", [10, 4]) is e
        with pytest.raises(ValueError, match=r"^Trying to reuse partitioned variable "
                                             r"emb/e, but specified shape \(11, 4\) and "
                                             r"found shape \(10, 4\)\.$"):
            tf.get_variable("e", [11, 4])
        with pytest.raises(ValueError, match=r"^Trying to reuse partitioned variable "
                                             r"emb/e, but specified dtype float64"):
            tf.get_variable("e", [10, 4], dtype=tf.float64)
        with pytest.raises(ValueError, match=r"^PartitionedVariable emb/zz does not exist, "
                                             r"or was not created with tf\.get_variable\(\)"
                                             r"\. Did you mean to set reuse=False or "
                                             r"reuse=tf\.AUTO_REUSE in VarScope\?$"):
            tf.get_variable("zz", [10, 4])


# -- gradient registrations: NotDifferentiable names, duplicates, custom op types ------
def test_not_differentiable_name_cuts_gradients_through_an_override(_fresh_graph):
    tf.NotDifferentiable("Wild9CutGradient")  # no op type has this name
    x = tf.constant([1.0, -2.0, 3.0], name="x")
    with _fresh_graph.gradient_override_map({"Identity": "Wild9CutGradient",
                                             "Exp": "Shape"}):
        cut = tf.identity(x * 2.0)
        ex = tf.exp(x)
    assert tf.gradients(tf.reduce_sum(cut), x) == [None]  # TF 2.15: [None] [None]
    assert tf.gradients(tf.reduce_sum(ex), x) == [None]
    g = tf.gradients(tf.reduce_sum(cut) + tf.reduce_sum(x), x)[0]
    with tf.Session() as sess:
        assert sess.run(g).tolist() == [1.0, 1.0, 1.0]
    # TF 2.15: a second registration of the name, either way, is a KeyError
    with pytest.raises(KeyError, match="Registering two gradient with name "
                                       "'Wild9CutGradient'"):
        tf.RegisterGradient("Wild9CutGradient")(lambda op, grad: grad)
    with pytest.raises(KeyError, match="Registering two gradient with name "
                                       "'Wild9CutGradient'"):
        tf.NotDifferentiable("Wild9CutGradient")
    with pytest.raises(KeyError, match="Registering two gradient with name 'Identity'"):
        tf.RegisterGradient("Identity")(lambda op, grad: grad)


def test_register_gradient_for_an_op_type_without_one():
    from flowgraph.framework import gradient_override

    # DeepCopy has no gradient in TF 2.15 or here: @tf.RegisterGradient gives it one
    tf.RegisterGradient("DeepCopy")(lambda op, grad: [grad * 7.0])
    try:
        x = tf.constant([1.0, 2.0])
        g = tf.gradients(tf.raw_ops.DeepCopy(x=x), x)[0]
        with tf.Session() as sess:
            assert sess.run(g).tolist() == [7.0, 7.0]
    finally:  # leave DeepCopy without a gradient for the rest of the process
        del gradient_override._NAMED_GRADIENTS["DeepCopy"]


def test_prevent_gradient_raises_tensorflows_lookup_error():
    x = tf.constant([1.0, 2.0])
    y = tf.raw_ops.PreventGradient(input=x, message="nope")
    with pytest.raises(LookupError, match=r"^Gradient explicitly disabled\. Reason: "
                                          r"b'nope'"):
        tf.gradients(tf.reduce_sum(y), x)


# -- tf.case without a default -----------------------------------------------------------
def test_case_without_default_returns_the_last_function_as_tensorflow():
    x = tf.placeholder(tf.float32, [], name="x")
    # the last fn returns a tensor from outside: TF 2.15 returns it unchecked
    c5 = tf.case([(x > 0, lambda: x)])
    c7 = tf.case([(x < 0, lambda: x)], exclusive=True)
    assert (c5.name, c7.name) == ("x:0", "x:0")
    c6 = tf.case([(x < 0, lambda: tf.constant(-1.0)), (x > 0, lambda: x * 2)])
    assert c6.name == "case_2/cond/Merge:0"
    with tf.Session() as sess:
        assert sess.run(c5, {x: -1.0}) == -1.0
        assert sess.run(c6, {x: 2.0}) == 4.0 and sess.run(c6, {x: -3.0}) == -1.0
        # the ops the last function creates still run after the check
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="None of conditions evaluated as True"):
            sess.run(c6, {x: 0.0})


# -- map_fn / scan / foldl / foldr loops are bounded by maximum_iterations ----------------
def test_functional_loops_number_their_exits_as_tensorflow():
    x = tf.constant([1.0, 2.0, 3.0], name="x")
    fl = tf.foldl(lambda acc, e: acc + e * e, x)
    fr = tf.foldr(lambda acc, e: acc * 2 + e, x, initializer=tf.constant(0.0))
    sc = tf.scan(lambda acc, e: acc * e, x, initializer=tf.constant(1.0))
    m = tf.map_fn(lambda e: e * e * x[0], x)
    assert (fl.name, fr.name) == ("foldl/while/Exit_2:0", "foldr/while/Exit_2:0")
    g = tf.get_default_graph()
    exits = sorted(o.name for o in g.get_operations()
                   if o.type == "Exit" and o.name.startswith(("map/", "scan/")))
    assert exits == ["map/while/Exit", "map/while/Exit_1", "map/while/Exit_2",
                     "scan/while/Exit", "scan/while/Exit_1", "scan/while/Exit_2",
                     "scan/while/Exit_3"]
    grads = tf.gradients([fl, fr], x) + tf.gradients(tf.reduce_sum(sc), x) + \
        tf.gradients(tf.reduce_sum(m), x)
    with tf.Session() as sess:
        assert sess.run([fl, fr]) == [14.0, 17.0]
        assert [v.tolist() for v in sess.run(grads)] == [
            [2.0, 6.0, 10.0], [9.0, 4.0, 2.0], [16.0, 4.0, 6.0]]


# -- tf.gradients' arguments ------------------------------------------------------------
def test_gradients_take_values_as_xs_and_check_grad_ys_dtype():
    x = tf.constant([1.0, 2.0, 3.0], name="x")
    z = tf.reduce_sum(x * x)
    assert tf.gradients(z, [1.0]) == [None]  # TF 2.15: a new constant, no gradient
    with pytest.raises(TypeError, match="grad_ys"):  # TF 2.15: TypeError
        tf.gradients(z, [x], grad_ys=[tf.constant(1, tf.int32)])


# -- a resource variable read in both branches of a tf.cond ------------------------------
def test_gradient_of_resource_variable_read_in_both_cond_branches():
    v = tf.get_variable("v", initializer=1.0, use_resource=True)
    p = tf.placeholder(tf.bool, [])
    y = tf.cond(p, lambda: v * v, lambda: v * 3.0)
    gy = tf.gradients(y, v)[0]
    assert gy.name == "gradients/AddN_1:0"  # TF 2.15
    # TF's zeros for the untaken branch: VariableShape of the switched handle, then Fill
    types = {o.type for o in tf.get_default_graph().get_operations()
             if o.name.startswith("gradients/")}
    assert {"VariableShape", "Fill", "Merge"} <= types
    train = tf.train.GradientDescentOptimizer(0.25).minimize(y)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(gy, {p: True}) == 2.0 and sess.run(gy, {p: False}) == 3.0
        sess.run(tf.assign(v, 5.0))
        assert sess.run(gy, {p: True}) == 10.0
        sess.run(train, {p: False})
        assert sess.run(v) == np.float32(4.25)


def test_caching_device_places_a_reference_variables_snapshot():
    with tf.variable_scope("cd", caching_device="/cpu:0"):
        v = tf.get_variable("c", [1])
    # TF 2.15: the variable keeps no device, its `read` snapshot takes the caching one
    assert (v.device, v.value().device, v.value().op.type) == ("", "/device:CPU:0",
                                                               "Identity")
    assert v.value().op.colocation_groups() == [b"loc:@cd/c/read"]
    w = tf.Variable(1.0, name="w")
    assert w.value().op.colocation_groups() == [b"loc:@w"]


# -- tf.custom_gradient's misuse errors -----------------------------------------------
def test_custom_gradient_errors_are_tensorflows():
    with tf.variable_scope("cg"):
        w = tf.get_variable("w", initializer=tf.constant(3.0))

    @tf.custom_gradient
    def uses_var(x):
        return x * w, lambda dy: dy * w

    with pytest.raises(TypeError, match=r"^@tf\.custom_gradient grad_fn must accept keyword "
                                        r"argument 'variables', since function uses "
                                        r"variables: \[<tf\.Variable 'cg/w:0'"):
        uses_var(tf.constant(2.0))

    @tf.custom_gradient
    def scaled(x, scale=2.0):
        return x * scale, lambda dy: dy * scale

    # TF 2.15 (graph mode): a ValueError
    with pytest.raises(ValueError, match=r"^The custom_gradient decorator currently supports "
                                         r"keywords arguments only when eager execution is "
                                         r"enabled\."):
        scaled(tf.constant(1.0), scale=3.0)


# -- tf.hessians: TensorFlow's while loop, any static shape --------------------------------
def test_hessians_loop_over_a_dynamic_number_of_elements():
    x = tf.placeholder(tf.float32, [None], name="x")
    (h,) = tf.hessians(tf.reduce_sum(x * x * x) * 0.5, x)
    # TF 2.15: built at the root scope, a while loop over Size(x) writing a TensorArray
    assert (h.name, h.shape.as_list()) == ("Reshape_1:0", [None, None])
    types = {o.type for o in tf.get_default_graph().get_operations()}
    assert {"ConcatV2", "LoopCond", "Size", "TensorArrayV3"} <= types
    (h2,) = tf.hessians(tf.reduce_sum(tf.sin(x)), [x])
    with tf.Session() as sess:
        assert sess.run(h, {x: [1.0, 2.0]}).tolist() == [[3.0, 0.0], [0.0, 6.0]]
        assert sess.run(h, {x: [3.0]}).tolist() == [[9.0]]
        np.testing.assert_allclose(sess.run(h2, {x: [0.5, 1.0]}),
                                   [[-0.47943, 0.0], [0.0, -0.84147]], atol=1e-5)


def test_make_template_names_the_variable_created_on_a_later_call():
    def bad(x):
        return x + tf.Variable(1.0)

    t = tf.make_template("bad", bad)
    x = tf.ones([2])
    t(x)
    with pytest.raises(ValueError, match=r"^Trainable variable created when calling a "
                                         r"template after the first time, perhaps you used "
                                         r"tf\.Variable when you meant tf\.get_variable: "
                                         r"\[<tf\.Variable 'bad_1/Variable:0' shape=\(\) "
                                         r"dtype=float32_ref>\]"):
        t(x)
