"""TensorList and TensorMap ops (`flowgraph/ops/list_ops.py`), Case lowering, and graphs
TensorFlow 2.15 wrote with them (tests/data/tf_formats/raw_tlist/make_fixture.py). Every
expected value and error below was printed by TensorFlow 2.15 (tf.compat.v1) running the
same calls (/work/shared/tools/tf-oracle); messages are flowgraph's own, the error types
TensorFlow's."""

from __future__ import annotations

import os

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework.event_format import GraphDef
from flowgraph.framework.tf_formats.function_inline import inline_functions
from flowgraph.framework.tf_formats.meta_graph_messages import FunctionDefProto

R = tf.raw_ops
F32 = tf.float32
X = np.arange(6, dtype=np.float32).reshape(3, 2)
HERE = os.path.join(os.path.dirname(__file__), "..", "data", "tf_formats", "raw_tlist")


def _run(fetch):
    with tf.Session() as sess:
        return sess.run(fetch)


def _rows(x=X, shape=-1):
    return R.TensorListFromTensor(tensor=x, element_shape=shape)


def _stack(lst, shape=-1, dtype=F32, **kw):
    return R.TensorListStack(input_handle=lst, element_shape=shape, element_dtype=dtype, **kw)


def _get(lst, i, shape=-1, dtype=F32):
    return R.TensorListGetItem(input_handle=lst, index=i, element_shape=shape,
                               element_dtype=dtype)


def _reserve(shape, n, dtype=F32):
    return R.TensorListReserve(element_shape=shape, num_elements=n, element_dtype=dtype)


def _empty(shape=-1, most=-1, dtype=F32):
    return R.EmptyTensorList(element_shape=shape, max_num_elements=most, element_dtype=dtype)


def _length(lst):
    return R.TensorListLength(input_handle=lst)


def _push(lst, t):
    return R.TensorListPushBack(input_handle=lst, tensor=t)


# -- values (TensorFlow's, inline) -------------------------------------------------------
def _set_then_stack():
    lst = R.TensorListSetItem(input_handle=_reserve([-1], 3), index=2, item=[1.0, 2.0])
    return _stack(lst)  # the unset slots become zeros of the set item's shape


def _pop():
    lst = _push(_empty(), [1.0, 5.0])
    rest, item = R.TensorListPopBack(input_handle=lst, element_shape=-1, element_dtype=F32)
    return [_length(rest), item, _length(lst)]


def _concat():
    lst = _push(_push(_empty([-1, 2]), X), X[:1])
    return list(R.TensorListConcat(input_handle=lst, element_dtype=F32))


def _push_back_batch():
    lists = tf.stack([_rows(), _empty()])
    lists = R.TensorListPushBackBatch(input_handles=lists,
                                      tensor=np.array([[7.0, 8.0], [9.0, 10.0]], np.float32))
    return [_stack(lists[0]), _stack(lists[1])]


VALUES = {
    "from_tensor_stack": (lambda: _stack(_rows(shape=[2]), [2]), X.tolist()),
    "element_shape_unknown": (lambda: R.TensorListElementShape(
        input_handle=_rows(), shape_type=tf.int32), -1),
    "element_shape_int64": (lambda: R.TensorListElementShape(
        input_handle=_rows(shape=[-1]), shape_type=tf.int64), [-1]),
    "reserve_get_zeros": (lambda: _get(_reserve([2], 3), 1), [0.0, 0.0]),
    "reserve_get_given_shape": (lambda: _get(_reserve(-1, 3), 1, [2, 1]), [[0.0], [0.0]]),
    "set_then_stack": (_set_then_stack, [[0.0, 0.0], [0.0, 0.0], [1.0, 2.0]]),
    "set_resizes": (lambda: _length(R.TensorListSetItem(
        input_handle=_rows(), index=5, item=[1.0, 2.0], resize_if_index_out_of_bounds=True)),
        6),
    "set_other_shape": (lambda: _length(R.TensorListSetItem(
        input_handle=_rows(), index=0, item=[1.0, 2.0, 3.0])), 3),
    "push_ragged": (lambda: _length(_push(_push(_empty([-1], 2), [1.0]), [2.0, 3.0])), 2),
    "pop_back": (_pop, [0, [1.0, 5.0], 1]),
    "pop_uninitialized": (lambda: R.TensorListPopBack(
        input_handle=_reserve([3], 2), element_shape=-1, element_dtype=F32)[1],
        [0.0, 0.0, 0.0]),
    "stack_empty_known": (lambda: _stack(_empty([2, 3])), np.zeros((0, 2, 3)).tolist()),
    "stack_empty_given": (lambda: _stack(_empty(), [4]), np.zeros((0, 4)).tolist()),
    "stack_num_elements": (lambda: _stack(_rows(), [2], num_elements=3), X.tolist()),
    "gather": (lambda: R.TensorListGather(input_handle=_rows(), indices=[2, 0, 2],
                                          element_shape=-1, element_dtype=F32),
               [[4.0, 5.0], [0.0, 1.0], [4.0, 5.0]]),
    "scatter": (lambda: _stack(R.TensorListScatter(tensor=X, indices=[4, 0, 2],
                                                   element_shape=-1)),
                [[2.0, 3.0], [0.0, 0.0], [4.0, 5.0], [0.0, 0.0], [0.0, 1.0]]),
    "scatter_repeated_index": (lambda: _stack(R.TensorListScatter(
        tensor=X, indices=[1, 1, 0], element_shape=-1)), [[4.0, 5.0], [2.0, 3.0]]),
    "scatter_v2_size": (lambda: _length(R.TensorListScatterV2(
        tensor=X, indices=[1, 0, 2], element_shape=-1, num_elements=6)), 6),
    "scatter_v2_default_size": (lambda: _length(R.TensorListScatterV2(
        tensor=X, indices=[1, 0, 4], element_shape=-1, num_elements=-1)), 5),
    "scatter_into_existing": (lambda: _stack(R.TensorListScatterIntoExistingList(
        input_handle=_rows(), tensor=X[:1] * 10, indices=[1])),
        [[0.0, 1.0], [0.0, 10.0], [4.0, 5.0]]),
    "concat": (_concat, [[[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [0.0, 1.0]], [3, 1]]),
    "concat_v2_empty": (lambda: list(
        R.TensorListConcatV2(input_handle=_empty([-1, 2]), element_shape=[-1, 2],
                             leading_dims=np.zeros(0, np.int64), element_dtype=F32)),
        [np.zeros((0, 2)).tolist(), []]),
    "concat_v2_uninitialized": (lambda: list(R.TensorListConcatV2(
        input_handle=_reserve([-1, 2], 2), element_shape=[-1, 2],
        leading_dims=np.array([1, 2], np.int64), element_dtype=F32)),
        [np.zeros((3, 2)).tolist(), [1, 2]]),
    "split": (lambda: _get(R.TensorListSplit(tensor=X, element_shape=-1,
                                             lengths=np.array([1, 2], np.int64)), 1),
              [[2.0, 3.0], [4.0, 5.0]]),
    "split_element_shape": (lambda: R.TensorListElementShape(input_handle=R.TensorListSplit(
        tensor=X, element_shape=[-1, 2], lengths=np.array([1, 2], np.int64)),
        shape_type=tf.int32), [-1, 2]),
    "resize_grow": (lambda: _length(R.TensorListResize(input_handle=_rows(), size=5)), 5),
    "resize_cut": (lambda: _stack(R.TensorListResize(input_handle=_rows(), size=1)),
                   [[0.0, 1.0]]),
    "push_back_batch": (_push_back_batch, [[[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [7.0, 8.0]],
                                           [[9.0, 10.0]]]),
    "length_of_empty": (lambda: _length(_empty()), 0),
    "int64_items": (lambda: _stack(R.TensorListFromTensor(
        tensor=np.array([[1, 2]], np.int64), element_shape=np.array([2], np.int64)),
        dtype=tf.int64), [[1, 2]]),
}


@pytest.mark.parametrize("name", sorted(VALUES))
def test_values_match_tensorflow(name):
    build, want = VALUES[name]
    with tf.Graph().as_default():
        got = _run(build())
    got = [np.asarray(g).tolist() for g in got] if isinstance(got, list) else \
        np.asarray(got).tolist()
    assert got == want


def test_static_shapes_follow_the_element_shape_like_tensorflow():
    with tf.Graph().as_default():
        assert _stack(_rows(shape=[2]), [2]).shape.as_list() == [None, 2]
        assert _stack(_rows(), [2], num_elements=3).shape.as_list() == [3, 2]
        assert _get(_reserve([2], 3), 1).shape.as_list() == [2]  # from the list's maker
        assert _stack(_empty([2, 3])).shape.as_list() == [None, 2, 3]
        assert _stack(_rows()).shape.ndims is None  # FromTensor(-1): unknown, as in TF
        value, lengths = _concat()
        assert value.shape.as_list() == [None, 2] and lengths.shape.as_list() == [None]
        assert lengths.dtype == tf.int64 and _length(_rows()).dtype == tf.int32
        assert _push_back_batch()[0].shape.ndims is None


ERRORS = {
    "from_scalar": (lambda: _length(R.TensorListFromTensor(tensor=1.0, element_shape=-1)),
                    "at least a vector"),
    "get_uninitialized_unknown_shape": (lambda: _get(_reserve(-1, 3), 1), "not fully defined"),
    "reserve_negative": (lambda: _length(_reserve(-1, -1)), "non-negative"),
    "stack_uninitialized_unknown_shape": (lambda: _stack(_reserve([-1], 2)),
                                          "not fully defined"),
    "get_out_of_range": (lambda: _get(_rows(), 3), "element 3 in a list with 3"),
    "get_negative": (lambda: _get(_rows(), -1), "element -1 in a list with 3"),
    "set_out_of_range": (lambda: _length(R.TensorListSetItem(
        input_handle=_rows(), index=5, item=[1.0, 2.0])), "modify element 5"),
    "push_into_full_list": (lambda: _length(_push(_push(_empty(-1, 1), [1.0]), [2.0])),
                            "full list"),
    "pop_empty": (lambda: R.TensorListPopBack(input_handle=_empty(), element_shape=-1,
                                              element_dtype=F32)[1], "empty list"),
    "stack_empty_unknown_shape": (lambda: _stack(_empty()), "not fully defined"),
    "stack_wrong_count": (lambda: _stack(_rows(), num_elements=2), "2 elements"),
    "stack_wrong_shape": (lambda: _stack(_rows(), [3]), "incompatible element shapes"),
    "gather_none_unknown_shape": (lambda: R.TensorListGather(
        input_handle=_rows(), indices=np.zeros(0, np.int32), element_shape=-1,
        element_dtype=F32), "not fully defined"),
    "gather_out_of_range": (lambda: R.TensorListGather(
        input_handle=_rows(), indices=[3], element_shape=-1, element_dtype=F32),
        "gather element 3"),
    "scatter_negative": (lambda: _length(R.TensorListScatter(
        tensor=X, indices=[-1, 1, 0], element_shape=-1)), "non-negative"),
    "scatter_row_count": (lambda: _length(R.TensorListScatter(
        tensor=X, indices=[0, 1], element_shape=-1)), "one row per index"),
    "scatter_v2_too_small": (lambda: _length(R.TensorListScatterV2(
        tensor=X, indices=[1, 0, 4], element_shape=-1, num_elements=2)), "index 4"),
    "concat_scalars": (lambda: R.TensorListConcat(
        input_handle=_rows(np.array([1.0, 2.0], np.float32)), element_dtype=F32)[0],
        "at least vectors"),
    "split_lengths": (lambda: _length(R.TensorListSplit(
        tensor=X, element_shape=-1, lengths=np.array([1, 1], np.int64))), "add up to 2"),
    "resize_negative": (lambda: _length(R.TensorListResize(input_handle=_rows(), size=-1)),
                        "non-negative"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_run_time_errors_match_tensorflow(name):
    build, match = ERRORS[name]
    with tf.Graph().as_default(), pytest.raises(tf.errors.InvalidArgumentError, match=match):
        _run(build())


def test_construction_errors_match_tensorflow():
    """TensorFlow's shape functions refuse these when the graph is built (ValueError)."""
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="element shape"):
            _rows(shape=[3])
        with pytest.raises(ValueError, match="element shape"):
            R.TensorListSetItem(input_handle=_rows(shape=[2]), index=0, item=[1.0, 2.0, 3.0])
        with pytest.raises(ValueError, match="element dtype int32"):
            _get(_rows(), 0, dtype=tf.int32)


def test_exported_graph_def_carries_tensorflows_type_attributes():
    """Inferred type attributes (TensorFlow's element_dtype of SetItem, shape_type of
    FromTensor) come from the inputs' dtypes, so TensorFlow can import the graph."""
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        lst = R.TensorListSetItem(input_handle=_rows(x, [2]), index=0, item=[5.0, 6.0])
        tf.identity(_stack(R.TensorListPushBack(input_handle=lst, tensor=[1.0, 1.0]), [2]),
                    name="out")
        gd = g.as_graph_def()
    nodes = {n.op: n for n in gd.node}
    assert nodes["TensorListFromTensor"].attr["element_dtype"].type == tf.float32.as_datatype_enum
    assert nodes["TensorListFromTensor"].attr["shape_type"].type == tf.int32.as_datatype_enum
    assert nodes["TensorListSetItem"].attr["element_dtype"].type == tf.float32.as_datatype_enum
    with tf.Graph().as_default():
        tf.import_graph_def(GraphDef.FromString(gd.SerializeToString()), name="")
        got = _run_named("out:0", {"x:0": [[1.0, 2.0], [3.0, 4.0]]})
    assert got.tolist() == [[5.0, 6.0], [3.0, 4.0], [1.0, 1.0]]


def _run_named(fetch, feed):
    with tf.Session() as sess:
        return sess.run(fetch, feed)


def test_a_list_is_a_value_each_consumer_sees_its_own():
    """Two SetItems of one list: each result holds its own item, the input is unchanged."""
    with tf.Graph().as_default():
        base = _rows()
        a = R.TensorListSetItem(input_handle=base, index=0, item=[10.0, 11.0])
        b = R.TensorListSetItem(input_handle=base, index=0, item=[20.0, 21.0])
        got = _run([_stack(a), _stack(b), _stack(base)])
    assert got[0][0].tolist() == [10.0, 11.0] and got[1][0].tolist() == [20.0, 21.0]
    np.testing.assert_array_equal(got[2], X)


def test_gradients_match_tensorflow():
    """Gradients through GetItem / SetItem / Stack, a tf.while_loop pushing to a list
    (its gradient pops), and Split / ConcatV2 (TensorFlow's values)."""
    with tf.Graph().as_default():
        x = tf.constant([[1.0, -2.0], [0.5, 3.0], [2.0, 0.25]])
        lst = R.TensorListFromTensor(tensor=x * x, element_shape=[2])
        a, b = _get(lst, 2, [2]), _get(lst, 0, [2])
        st = _stack(R.TensorListSetItem(input_handle=lst, index=1, item=tf.sin(a)), [2])
        (g,) = tf.gradients(tf.reduce_sum(st * st) + tf.reduce_sum(a * b), [x])

        def body(i, acc):
            return i + 1, _push(acc, x[i] * tf.cast(i + 1, tf.float32))

        _, out = tf.while_loop(lambda i, _: i < 3, body, [0, _empty([2])])
        looped = _stack(out, [2])
        (lg,) = tf.gradients(tf.reduce_sum(looped * looped), [x])
        pieces = R.TensorListSplit(tensor=x, element_shape=[-1, 2],
                                   lengths=np.array([2, 1], np.int64))
        joined, lengths = R.TensorListConcatV2(input_handle=pieces, element_shape=[-1, 2],
                                               leading_dims=np.zeros(0, np.int64),
                                               element_dtype=F32)
        (sg,) = tf.gradients(tf.reduce_sum(tf.exp(joined) * tf.cast(lengths[0], F32)), [x])
        got = _run([g, looped, lg, joined, lengths, sg])
    np.testing.assert_allclose(got[0], [[12.0, -32.25], [0.0, 0.0],
                                        [39.95743179321289, 2.12483811378479]], rtol=1e-5)
    np.testing.assert_allclose(got[1], [[1.0, -2.0], [1.0, 6.0], [6.0, 0.75]])
    np.testing.assert_allclose(got[2], [[2.0, -4.0], [4.0, 24.0], [36.0, 4.5]])
    np.testing.assert_allclose(got[3], [[1.0, -2.0], [0.5, 3.0], [2.0, 0.25]])
    assert got[4].tolist() == [2, 1]
    np.testing.assert_allclose(got[5], [[5.436563968658447, 0.270671010017395],
                                        [3.2974419593811035, 40.17107009887695],
                                        [14.778112411499023, 2.5680510997772217]], rtol=1e-5)


def test_gather_gradient_adds_rows_gathered_twice():
    """TensorFlow's own rule keeps only the last of repeated indices; the sum is the
    derivative (finite differences: tests/ops/raw_tlist_cases.py)."""
    with tf.Graph().as_default():
        x = tf.constant(X)
        out = R.TensorListGather(input_handle=_rows(x, [2]), indices=[2, 0, 2],
                                 element_shape=[2], element_dtype=F32)
        (g,) = tf.gradients(tf.reduce_sum(out), [x])
        assert _run(g).tolist() == [[1.0, 1.0], [0.0, 0.0], [2.0, 2.0]]


# -- TensorMap ---------------------------------------------------------------------------
def _map():
    m = R.EmptyTensorMap()
    m = R.TensorMapInsert(input_handle=m, key=np.int32(2), value=[1.0, 2.0])
    m = R.TensorMapInsert(input_handle=m, key=np.int32(5), value=[3.0])
    return R.TensorMapInsert(input_handle=m, key=np.int32(2), value=[9.0])


def test_tensor_map_matches_tensorflow():
    with tf.Graph().as_default():
        m = _map()
        got = _run([
            R.TensorMapSize(input_handle=m),
            R.TensorMapLookup(input_handle=m, key=np.int32(2), value_dtype=F32),
            R.TensorMapHasKey(input_handle=m, key=np.int32(5)),
            R.TensorMapHasKey(input_handle=m, key=np.int32(7)),
            R.TensorMapHasKey(input_handle=m, key=np.int64(2)),  # another key dtype
            R.TensorMapSize(input_handle=R.TensorMapErase(input_handle=m, key=np.int32(5),
                                                          value_dtype=F32)),
            tf.sort(R.TensorMapStackKeys(input_handle=m, key_dtype=tf.int32)),
            R.TensorMapLookup(input_handle=R.TensorMapInsert(
                input_handle=R.EmptyTensorMap(), key="a", value=np.int64(4)), key="a",
                value_dtype=tf.int64)])
    assert [np.asarray(v).tolist() for v in got] == [2, [9.0], True, False, False, 1, [2, 5],
                                                    4]


def test_tensor_map_gradients_match_tensorflow():
    """TensorFlow registers them in tensorflow/python/ops/map_ops.py (imported there)."""
    with tf.Graph().as_default():
        x, y = tf.constant([1.0, -2.0]), tf.constant([0.5, 3.0])
        m = R.TensorMapInsert(input_handle=R.EmptyTensorMap(), key=np.int32(1), value=x * x)
        m = R.TensorMapInsert(input_handle=m, key=np.int32(2), value=tf.sin(y))
        rest = R.TensorMapErase(input_handle=m, key=np.int32(2), value_dtype=F32)
        a = R.TensorMapLookup(input_handle=m, key=np.int32(1), value_dtype=F32)
        b = R.TensorMapLookup(input_handle=m, key=np.int32(2), value_dtype=F32)
        c = R.TensorMapLookup(input_handle=rest, key=np.int32(1), value_dtype=F32)
        z = tf.reduce_sum(a * b) + tf.reduce_sum(c * 3.0)
        got = _run([z, *tf.gradients(z, [x, y])])
    np.testing.assert_allclose(got[0], 16.04390525817871, rtol=1e-6)
    np.testing.assert_allclose(got[1], [6.958850860595703, -12.56447982788086], rtol=1e-6)
    np.testing.assert_allclose(got[2], [0.8775830268859863, -3.959969997406006], rtol=1e-6)


@pytest.mark.parametrize(("build", "error", "match"), [
    (lambda m: R.TensorMapLookup(input_handle=m, key=np.int32(3), value_dtype=F32),
     tf.errors.InvalidArgumentError, "non-existent key 3"),
    (lambda m: R.TensorMapSize(input_handle=R.TensorMapErase(
        input_handle=m, key=np.int32(4), value_dtype=F32)),
     tf.errors.InvalidArgumentError, "non-existent key 4"),
    (lambda m: R.TensorMapStackKeys(input_handle=R.EmptyTensorMap(), key_dtype=tf.int32),
     tf.errors.InvalidArgumentError, "empty map"),
    (lambda m: R.TensorMapLookup(input_handle=m, key=np.int32(2), value_dtype=tf.int32),
     tf.errors.InternalError, "float32"),
])
def test_tensor_map_errors_match_tensorflow(build, error, match):
    with tf.Graph().as_default(), pytest.raises(error, match=match):
        _run(build(_map()))


# -- graphs TensorFlow 2.15 wrote --------------------------------------------------------
EXPECTED = np.load(os.path.join(HERE, "expected.npz"))
NAMES = ["squares", "running", "running_first", "unstacked", "grad"]


def _lists_graph() -> GraphDef:
    with open(os.path.join(HERE, "lists.pb"), "rb") as f:
        return GraphDef.FromString(f.read())


def test_the_fixture_holds_tensor_lists_and_case_in_functions():
    gd = _lists_graph()
    body_ops = {n.op for raw in gd.library.function
                for n in FunctionDefProto.FromString(raw).node_def}
    assert {"TensorListReserve", "TensorListSetItem", "TensorListStack", "TensorListGetItem",
            "TensorListFromTensor", "TensorListPushBack", "TensorListPopBack",
            "StatelessCase", "StatelessWhile"} <= body_ops
    inlined = {n.op for n in inline_functions(gd).node}
    assert "TensorListPopBack" in inlined
    assert not {"StatelessCase", "Case", "StatelessWhile", "PartitionedCall"} & inlined


@pytest.mark.parametrize("index", [0, 1, 2, 7, -1])
def test_imported_tf2_functions_give_tensorflows_values(index):
    """A TensorArray in a while loop and in AutoGraph's for over tf.range, the gradient
    of both by tf.gradients through the calls, and tf.switch_case (Case) in and outside a
    tf.function; an index out of range runs the last branch, as in TensorFlow."""
    with tf.Graph().as_default():
        tf.import_graph_def(_lists_graph(), name="")
        names = [*NAMES, "switch", "switch_graph"]
        with tf.Session() as sess:
            got = sess.run([f"{n}:0" for n in names],
                           {"x:0": EXPECTED["feed_x"], "index:0": index})
    for name, value in zip(names, got, strict=True):
        key = f"{name}_{index}" if name.startswith("switch") else name
        np.testing.assert_allclose(value, EXPECTED[key], rtol=1e-5, atol=1e-6, err_msg=key)


def test_a_tf2_saved_model_with_tensor_lists_and_case_loads_and_serves():
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], os.path.join(HERE, "saved_model"))
        sig = meta.signature_def["serving_default"]
        got = sess.run({k: v.name for k, v in sig.outputs.items()},
                       {sig.inputs["x"].name: EXPECTED["feed_x"]})
        np.testing.assert_allclose(got["squares"], EXPECTED["sm_squares"], rtol=1e-6)
        np.testing.assert_allclose(got["running"], EXPECTED["sm_running"], rtol=1e-6)
        sig = meta.signature_def["switch"]
        got = sess.run(sig.outputs["switch"].name, {sig.inputs["x"].name: EXPECTED["feed_x"],
                                                    sig.inputs["index"].name: 2})
        np.testing.assert_allclose(got, EXPECTED["sm_switch_2"], rtol=1e-6)


@pytest.mark.parametrize("bounds", [(0, 4, 1), (5, 0, -2), (3, 3, 1), (0, 5, 2)])
def test_imported_for_op_gives_tensorflows_values(bounds):
    with open(os.path.join(HERE, "for.pb"), "rb") as f:
        gd = GraphDef.FromString(f.read())
    assert "For" in {n.op for n in gd.node}
    with tf.Graph().as_default():
        tf.import_graph_def(gd, name="")
        with tf.Session() as sess:
            a, b = sess.run(["for_a:0", "for_b:0"],
                            dict(zip(["start:0", "limit:0", "delta:0"], bounds)))
    key = "_".join(map(str, bounds))
    np.testing.assert_allclose(a, EXPECTED[f"for_a_{key}"], rtol=1e-6)
    np.testing.assert_allclose(b, EXPECTED[f"for_b_{key}"], rtol=1e-6)


@pytest.mark.parametrize("bounds", [(4, 0, 1), (0, 3, 0)])
def test_for_op_refuses_a_range_it_cannot_walk_like_tensorflow(bounds):
    with open(os.path.join(HERE, "for.pb"), "rb") as f:
        gd = GraphDef.FromString(f.read())
    with tf.Graph().as_default():
        tf.import_graph_def(gd, name="")
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                                 match="invalid start/limit/delta"):
            sess.run("for_a:0", dict(zip(["start:0", "limit:0", "delta:0"], bounds)))


def test_a_stateful_case_runs_only_the_taken_branchs_update():
    with open(os.path.join(HERE, "stateful_case.pb"), "rb") as f:
        gd = GraphDef.FromString(f.read())
    with tf.Graph().as_default() as graph:
        tf.import_graph_def(gd, name="")
        counter = graph.get_tensor_by_name("counter/Read/ReadVariableOp:0")
        with tf.Session() as sess:
            sess.run(str(EXPECTED["stateful_init"]))
            steps = [[sess.run("bumped:0", {"which:0": k}), sess.run(counter)]
                     for k in (1, 0, 5, 1)]
    np.testing.assert_allclose(steps, EXPECTED["stateful_case"])
