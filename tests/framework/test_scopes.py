"""name_scope, device and colocate_with scopes (behaviour checked with the TF oracle)."""

import threading

import pytest

import flowgraph as tf
from flowgraph.framework.device_spec import DeviceSpec


# -- name scopes ----------------------------------------------------------------------
def test_name_scope_reentry_and_reset():
    with tf.name_scope("s") as s:
        assert s == "s/"
        assert tf.constant(1).name == "s/Const:0"
    with tf.name_scope("s") as s:
        assert s == "s_1/"
        assert tf.constant(1).name == "s_1/Const:0"
    with tf.name_scope("s/") as s:  # re-enter the first scope exactly
        assert s == "s/"
        assert tf.constant(1).name == "s/Const_1:0"


def test_name_scope_none_and_empty_return_to_root():
    with tf.name_scope("s"):
        with tf.name_scope(None) as s:
            assert s == ""
            assert tf.constant(1).name == "Const:0"
        with tf.name_scope("") as s:
            assert s == ""
            assert tf.constant(1).name == "Const_1:0"
        with tf.name_scope("in") as s:
            assert s == "s/in/"


def test_nested_scope_and_path_scope():
    with tf.name_scope("a"):
        with tf.name_scope("b") as s:
            assert s == "a/b/"
    with tf.name_scope("a/b") as s:
        assert s == "a/b_1/"
    with tf.name_scope("a/") as s:
        assert s == "a/"
        assert tf.constant(1).name == "a/Const:0"
    with tf.name_scope("nonexist/") as s:
        assert s == "nonexist/"
    with tf.name_scope("nonexist") as s:  # reusing with '/' does not mark it used
        assert s == "nonexist/"


def test_name_scope_default_name_and_values():
    with tf.name_scope("lay", "def") as s:
        assert s == "lay/"
    with tf.name_scope(None, "def") as s:
        assert s == "def/"
    with tf.name_scope(None, "def") as s:
        assert s == "def_1/"
    with tf.name_scope(None, None) as s:
        assert s == ""
    a = tf.constant(1.0)
    with pytest.raises(ValueError, match="At least one of name"), \
            tf.name_scope(None, None, [a]):
        pass


def test_name_scope_object_has_name():
    assert tf.name_scope("qq").name == "qq"
    assert tf.name_scope(None, "dflt").name == "dflt"


def test_name_scope_values_select_graph():
    g = tf.Graph()
    with g.as_default():
        x = tf.constant(1.0)
    with tf.name_scope("s", values=[x]):
        assert tf.get_default_graph() is g
        y = tf.identity(x)
    assert y.name == "s/Identity:0"
    assert tf.get_default_graph() is not g


def test_name_scope_validation():
    with pytest.raises(ValueError, match="not a valid root scope name"):
        with tf.name_scope("a b"):
            pass
    with pytest.raises(ValueError, match="not a valid root scope name"):
        with tf.name_scope("_ab"):
            pass
    with tf.name_scope("sc"):
        with tf.name_scope("_inner") as s:  # allowed below the root
            assert s == "sc/_inner/"
        with pytest.raises(ValueError, match="not a valid scope name"):
            with tf.name_scope("a b"):
                pass


def test_get_name_scope():
    g = tf.get_default_graph()
    assert g.get_name_scope() == ""
    with tf.name_scope("k"):
        with tf.name_scope("j"):
            assert g.get_name_scope() == "k/j"


def test_name_scope_is_per_thread():
    names = []
    with tf.name_scope("main"):
        t = threading.Thread(target=lambda: names.append(tf.constant(1.0).name))
        t.start()
        t.join()
    assert names == ["Const:0"]


# -- devices --------------------------------------------------------------------------
def test_device_strings_are_canonical_and_merge():
    with tf.device("/cpu:0"):
        d1 = tf.constant(1)
        with tf.device("/job:ps/task:0"):
            d2 = tf.constant(1)
            with tf.device("/device:GPU:1"):
                d3 = tf.constant(1)
            with tf.device(None):
                d4 = tf.constant(1)
            with tf.device(""):
                d5 = tf.constant(1)
        with tf.device("/device:CPU:1"):
            d6 = tf.constant(1)
        with tf.device("/gpu:*"):
            d7 = tf.constant(1)
        with tf.device("/job:w/replica:2"):
            d8 = tf.constant(1)
    assert d1.device == "/device:CPU:0"
    assert d2.device == "/job:ps/task:0/device:CPU:0"
    assert d3.device == "/job:ps/task:0/device:GPU:1"
    assert d4.device == ""
    assert d5.device == "/job:ps/task:0/device:CPU:0"
    assert d6.device == "/device:CPU:1"
    assert d7.device == "/device:GPU:0"  # the unset index comes from the outer scope
    assert d8.device == "/job:w/replica:2/device:CPU:0"
    assert d1.op.device == d1.device


def test_device_type_without_index_keeps_outer_index():
    with tf.device("/device:CPU:1"), tf.device("/gpu"):
        assert tf.constant(1).device == "/device:GPU:1"
    with tf.device("/GPU:0"):
        assert tf.constant(1).device == "/device:GPU:0"
    with tf.device("/job:worker/replica:0/task:1/device:cpu:0"):
        assert tf.constant(1).device == "/job:worker/replica:0/task:1/device:CPU:0"
    with tf.device("/gpu:*"):
        assert tf.constant(1).device == "/device:GPU:*"


def test_device_functions():
    def fn(op):
        return "/cpu:1" if op.device == "/device:GPU:2" else "/job:x"

    with tf.device("/job:ps"):
        with tf.device(fn):
            with tf.device("/gpu:2"):
                f1 = tf.constant(1)  # fn sees the inner device and replaces it
            f2 = tf.constant(1)
    assert f1.device == "/job:ps/device:CPU:1"
    assert f2.device == "/job:x"


def test_device_function_returning_empty_or_spec():
    with tf.device("/job:ps"):
        with tf.device(lambda op: ""):
            f1 = tf.constant(1)
        with tf.device(lambda op: DeviceSpec(job="z", device_type="CPU")):
            f2 = tf.constant(1)
        with tf.device(lambda op: "/gpu:0" if op.type == "MatMul" else ""):
            m = tf.matmul(tf.zeros([2, 3]), tf.zeros([3, 4]))
    assert f1.device == "/job:ps"
    assert f2.device == "/job:z/device:CPU:*"
    assert m.device == "/job:ps/device:GPU:0"


def test_device_spec_object_as_scope():
    with tf.device(DeviceSpec(job="ps", task=1)):
        assert tf.constant(1).device == "/job:ps/task:1"


def test_bad_device_strings():
    with pytest.raises(ValueError, match="unknown attribute 'foo'"):
        tf.device("/foo:bar:baz:1")
    with pytest.raises(ValueError, match="cpu0"):
        tf.device("cpu0")
    with pytest.raises(TypeError):
        tf.device(3)


def test_variable_ops_follow_device_scope():
    with tf.device("/cpu:0"):
        v = tf.Variable(1.0, name="v")
    assert v.device == "/device:CPU:0"
    assert v.initializer.device == "/device:CPU:0"
    assert v.value().device == "/device:CPU:0"


# -- colocation -----------------------------------------------------------------------
def test_colocate_with_sets_group_and_ignores_device_scopes():
    d3 = tf.constant(1, name="d3")
    with tf.device("/gpu:1"):
        d1 = tf.constant(1, name="d1")
    with tf.device("/job:ps"):
        with tf.colocate_with(d3.op):
            cl = tf.constant(1, name="cl")
            with tf.device("/cpu:3"):
                cl2 = tf.constant(1, name="cl2")
    assert cl.op.colocation_groups() == [b"loc:@d3"]
    assert cl.device == ""  # the enclosing /job:ps does not apply
    assert cl2.op.colocation_groups() == [b"loc:@d3"]
    assert cl2.device == "/device:CPU:3"
    with tf.device("/job:ps"), tf.colocate_with(d1):
        cl3 = tf.constant(1, name="cl3")
    assert cl3.device == "/device:GPU:1"  # the colocated op's device wins


def test_nested_colocation_groups_and_ignore_existing():
    d3 = tf.constant(1, name="d3")
    with tf.device("/gpu:1"):
        d1 = tf.constant(1, name="d1")
    with tf.colocate_with(d3):
        with tf.colocate_with(d1, ignore_existing=True):
            only = tf.constant(1, name="only")
        with tf.colocate_with(d1):
            both = tf.constant(1, name="both")
    assert only.op.colocation_groups() == [b"loc:@d1"]
    assert both.op.colocation_groups() == [b"loc:@d1", b"loc:@d3"]
    assert both.device == "/device:GPU:1"


def test_colocation_is_transitive():
    a = tf.constant(1, name="a")
    with tf.colocate_with(a):
        b = tf.constant(1, name="b")
    with tf.colocate_with(b):
        c = tf.constant(1, name="c")
    assert c.op.colocation_groups() == [b"loc:@a"]


def test_colocate_with_none():
    with pytest.raises(ValueError, match="ignore_existing is not True"):
        with tf.colocate_with(None):
            pass
    a = tf.constant(1, name="a")
    with tf.device("/job:q"), tf.colocate_with(a):
        with tf.colocate_with(None, ignore_existing=True):
            c = tf.constant(1, name="c")
    assert c.op.colocation_groups() == [b"loc:@c"]
    assert c.device == ""


def test_colocation_attr_and_default_group():
    a = tf.constant(1, name="a")
    with tf.colocate_with(a):
        b = tf.constant(1, name="b")
    assert a.op.colocation_groups() == [b"loc:@a"]
    assert b.op.get_attr("_class") == [b"loc:@a"]
    with pytest.raises(ValueError, match="no attr named '_class'"):
        a.op.get_attr("_class")


def test_variable_colocation():
    v = tf.Variable(1.0, name="v")
    assert v.op.colocation_groups() == [b"loc:@v"]
    assert v.value().op.colocation_groups() == [b"loc:@v"]
    assert v.initializer.colocation_groups() == [b"loc:@v"]
    assert v.initial_value.op.colocation_groups() == [b"loc:@v/initial_value"]
    with tf.colocate_with(v):
        c = tf.constant(1)
    assert c.op.colocation_groups() == [b"loc:@v"]
