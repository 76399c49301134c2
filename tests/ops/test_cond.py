"""tf.cond, tf.case, Switch and Merge: values, dead branches, structures, errors."""

import collections

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework import errors
from flowgraph.ops.check_ops import Assert
from flowgraph.ops.control_flow_cond import case, cond, merge, smart_cond, switch


def test_cond_values_against_python(sess):
    x = tf.placeholder(tf.float32, [])
    y = cond(x > 0.0, lambda: x * 2.0, lambda: x - 1.0)
    for v in (3.0, -4.0, 0.0):
        got = sess.run(y, {x: v})
        assert got == (v * 2.0 if v > 0 else v - 1.0)
        assert got.dtype == np.float32


def test_switch_and_merge_primitives(sess):
    p = tf.placeholder(tf.bool, [])
    data = tf.constant([1, 2, 3])
    f, t = switch(data, p)
    assert f.shape.as_list() == [3] and t.dtype == tf.int32
    out, index = merge([f * 10, t * 100])
    assert out.shape.as_list() == [3]
    got, idx = sess.run([out, index], {p: True})
    np.testing.assert_array_equal(got, [100, 200, 300])
    assert idx == 1 and idx.dtype == np.int32
    got, idx = sess.run([out, index], {p: False})
    np.testing.assert_array_equal(got, [10, 20, 30])
    assert idx == 0


def test_fetching_a_dead_tensor_is_an_error(sess):
    p = tf.placeholder(tf.bool, [])
    _, t = switch(tf.constant(1.0), p)
    assert sess.run(t, {p: True}) == 1.0
    with pytest.raises(errors.InvalidArgumentError, match="does not have value"):
        sess.run(t, {p: False})


def test_constants_in_branches_follow_the_predicate(sess):
    # Constants have no inputs: they are dead on the untaken side through their control
    # edge from the branch pivot.
    p = tf.placeholder(tf.bool, [])
    y = cond(p, lambda: tf.constant(1), lambda: tf.constant(2))
    assert sess.run(y, {p: True}) == 1
    assert sess.run(y, {p: False}) == 2


def test_external_tensors_returned_directly(sess):
    p = tf.placeholder(tf.bool, [])
    a, b = tf.constant(10.0), tf.constant(20.0)
    y = cond(p, lambda: a, lambda: b)
    assert sess.run(y, {p: True}) == 10.0
    assert sess.run(y, {p: False}) == 20.0


def test_untaken_branch_side_effects_do_not_run(sess):
    v = tf.Variable(0)
    p = tf.placeholder(tf.bool, [])
    y = cond(p, lambda: tf.assign_add(v, 1), lambda: tf.assign_add(v, 100))
    sess.run(tf.global_variables_initializer())
    assert sess.run(y, {p: True}) == 1
    assert sess.run(y, {p: False}) == 101
    assert sess.run(y, {p: True}) == 102
    assert sess.run(v) == 102


def test_branch_returning_an_operation(sess):
    v = tf.Variable(0)
    p = tf.placeholder(tf.bool, [])
    y = cond(p, lambda: tf.assign_add(v, 5).op, lambda: tf.no_op())
    assert y.dtype == tf.bool
    sess.run(tf.global_variables_initializer())
    sess.run(y, {p: False})
    assert sess.run(v) == 0
    sess.run(y, {p: True})
    assert sess.run(v) == 5


def test_stateful_op_with_control_dependency_in_branch(sess):
    v = tf.Variable(0.0)
    p = tf.placeholder(tf.bool, [])

    def taken():
        with tf.control_dependencies([tf.assign_add(v, 1.0)]):
            return tf.identity(v.read_value())

    y = cond(p, taken, lambda: tf.constant(-1.0))
    sess.run(tf.global_variables_initializer())
    assert sess.run(y, {p: False}) == -1.0
    assert sess.run(y, {p: True}) == 1.0
    assert sess.run(v) == 1.0


def test_nested_structures(sess):
    p = tf.placeholder(tf.bool, [])
    x = tf.constant(3)
    Pair = collections.namedtuple("Pair", ["a", "b"])

    def t():
        return {"s": x + 1, "pair": Pair(x * 2, [x, tf.constant(7)])}

    def f():
        return {"s": x - 1, "pair": Pair(x * 3, [x - x, tf.constant(8)])}

    out = cond(p, t, f)
    assert isinstance(out, dict) and isinstance(out["pair"], Pair)
    got = sess.run(out, {p: True})
    assert got["s"] == 4 and got["pair"].a == 6 and list(got["pair"].b) == [3, 7]
    got = sess.run(out, {p: False})
    assert got["s"] == 2 and got["pair"].a == 9 and list(got["pair"].b) == [0, 8]


def test_singleton_unpacking_and_strict():
    p = tf.placeholder(tf.bool, [])
    loose = cond(p, lambda: [tf.constant(1)], lambda: [tf.constant(2)])
    assert isinstance(loose, tf.Tensor)
    strict = cond(p, lambda: [tf.constant(1)], lambda: [tf.constant(2)], strict=True)
    assert isinstance(strict, list) and len(strict) == 1


def test_python_values_in_branches(sess):
    p = tf.placeholder(tf.bool, [])
    y = cond(p, lambda: 1.5, lambda: 2.5)
    assert sess.run(y, {p: False}) == 2.5


def test_merged_shape_is_most_specific_compatible():
    p = tf.placeholder(tf.bool, [])
    a = tf.placeholder(tf.float32, [2, 3])
    b = tf.placeholder(tf.float32, [2, 5])
    c = tf.placeholder(tf.float32, [2, 3, 1])
    assert cond(p, lambda: a, lambda: a).shape.as_list() == [2, 3]
    assert cond(p, lambda: a, lambda: b).shape.as_list() == [2, None]
    assert cond(p, lambda: a, lambda: c).shape.ndims is None


def test_nested_conds(sess):
    x = tf.placeholder(tf.int32, [])

    def inner_true():
        return cond(x > 10, lambda: x * 100, lambda: x * 10)

    y = cond(x > 0, inner_true, lambda: -x)
    for v in (20, 5, -3):
        want = v * 100 if v > 10 else v * 10 if v > 0 else -v
        assert sess.run(y, {x: v}) == want


def test_ops_named_under_cond_scope():
    p = tf.placeholder(tf.bool, [])
    y = cond(p, lambda: tf.constant(1) + 1, lambda: tf.constant(2), name="choose")
    assert y.op.type == "Merge"
    assert y.op.name.startswith("choose/")
    names = [op.name for op in tf.get_default_graph().get_operations()]
    assert "choose/pred_id" in names and "choose/switch_t" in names


def test_pred_errors():
    x = tf.constant(1.0)
    with pytest.raises(TypeError, match="Python bool"):
        cond(True, lambda: x, lambda: x)
    with pytest.raises(TypeError, match=r"bool tensor.*float32"):
        cond(tf.constant(1.0), lambda: x, lambda: x)
    with pytest.raises(ValueError, match=r"scalar.*shape"):
        cond(tf.constant([True, False]), lambda: x, lambda: x)
    with pytest.raises(TypeError, match="callable"):
        cond(tf.constant(True), x, lambda: x)


def test_branch_structure_and_dtype_errors_name_both_sides():
    p = tf.placeholder(tf.bool, [])
    a, b = tf.constant(1.0), tf.constant(2.0)
    with pytest.raises(ValueError, match=r"(?s)^The two structures don't have the same nested "
                                         r"structure\..*lengths.*true_fn returned.*false_fn "
                                         r"returned"):
        cond(p, lambda: [a, b], lambda: [a, b, a])
    with pytest.raises(TypeError, match=r"sequence types.*list vs tuple"):
        cond(p, lambda: [a, b], lambda: (a, b))
    with pytest.raises(ValueError, match="dict keys"):
        cond(p, lambda: {"x": a}, lambda: {"y": a})
    # TF 2.15's words (tf-oracle), then flowgraph's details
    with pytest.raises(ValueError, match=r"^Outputs of 'true_fn' and 'false_fn' must have the "
                                         r"same type\(s\)\. Received float32 from 'true_fn' "
                                         r"and int32 from 'false_fn'"):
        cond(p, lambda: a, lambda: tf.constant(1))
    with pytest.raises(ValueError, match="at least one result"):
        cond(p, lambda: None, lambda: None)


def test_smart_cond_short_circuits_static_predicates(sess):
    calls = []
    y = smart_cond(tf.constant(True), lambda: calls.append("t") or tf.constant(1),
                   lambda: calls.append("f") or tf.constant(2))
    assert calls == ["t"] and y.op.type == "Const"
    p = tf.placeholder(tf.bool, [])
    z = smart_cond(p, lambda: tf.constant(1), lambda: tf.constant(2))
    assert z.op.type == "Merge" and sess.run(z, {p: False}) == 2


def test_case_picks_first_true(sess):
    x = tf.placeholder(tf.int32, [])
    y = case([(x < 0, lambda: tf.constant(-1)), (x < 10, lambda: tf.constant(1)),
              (x < 100, lambda: tf.constant(2))], default=lambda: tf.constant(3))
    for v, want in ((-5, -1), (5, 1), (50, 2), (500, 3)):
        assert sess.run(y, {x: v}) == want


def test_case_dict_and_side_effects(sess):
    v = tf.Variable(0)
    x = tf.placeholder(tf.int32, [])
    y = case({tf.equal(x, 1): lambda: tf.assign_add(v, 1),
              tf.equal(x, 2): lambda: tf.assign_add(v, 10)},
             default=lambda: tf.assign_add(v, 100))
    sess.run(tf.global_variables_initializer())
    sess.run(y, {x: 2})
    sess.run(y, {x: 9})
    assert sess.run(v) == 110


def test_case_exclusive_checks_at_run_time(sess):
    x = tf.placeholder(tf.int32, [])
    y = case([(x > 0, lambda: tf.constant(1)), (x > 5, lambda: tf.constant(2))],
             default=lambda: tf.constant(0), exclusive=True)
    assert sess.run(y, {x: 3}) == 1
    assert sess.run(y, {x: -3}) == 0
    with pytest.raises(errors.InvalidArgumentError, match=r"exclusive=True.*more than 1"):
        sess.run(y, {x: 7})


def test_case_without_default_asserts_last_predicate(sess):
    x = tf.placeholder(tf.int32, [])
    y = case([(x < 0, lambda: tf.constant(-1)), (x > 0, lambda: tf.constant(1))])
    assert sess.run(y, {x: 4}) == 1
    assert sess.run(y, {x: -4}) == -1
    with pytest.raises(errors.InvalidArgumentError, match="None of conditions"):
        sess.run(y, {x: 0})


def test_case_argument_errors():
    with pytest.raises(TypeError, match="bool Tensor"):
        case([(True, lambda: 1)])
    with pytest.raises(TypeError, match="2-tuple"):
        case([tf.constant(True)])
    with pytest.raises(TypeError, match="callable"):
        case([(tf.constant(True), 1)])


def test_assert_in_untaken_branch_does_not_fire(sess):
    x = tf.placeholder(tf.float32, [])

    def checked():
        with tf.control_dependencies([Assert(x > 0.0, ["x must be positive", x])]):
            return tf.sqrt(x)

    y = cond(x > 0.0, checked, lambda: tf.constant(0.0))
    assert sess.run(y, {x: 4.0}) == 2.0
    assert sess.run(y, {x: -1.0}) == 0.0


def test_variable_created_inside_branch_is_lifted(sess):
    p = tf.placeholder(tf.bool, [])

    def make():
        w = tf.Variable(5.0, name="w_in_cond")
        return w * 2.0

    y = cond(p, make, lambda: tf.constant(0.0))
    sess.run(tf.global_variables_initializer())  # initializer does not depend on p
    assert sess.run(y, {p: True}) == 10.0
    assert sess.run(y, {p: False}) == 0.0


def test_cond_in_parallel_branches_and_tracing(sess):
    x = tf.placeholder(tf.float64, [64])
    outs = [cond(tf.reduce_sum(x) > k, lambda k=k: tf.reduce_sum(x * k),
                 lambda: tf.reduce_sum(x)) for k in range(4)]
    total = tf.add_n(outs)
    v = np.arange(64, dtype=np.float64)
    s = v.sum()
    want = sum(s * k if s > k else s for k in range(4))
    opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    md = tf.RunMetadata()
    assert sess.run(total, {x: v}, options=opts, run_metadata=md) == want
    assert md.step_stats.dev_stats
