"""Unique op names exactly like TensorFlow 1.x (checked with the TF oracle)."""

import pytest

import flowgraph as tf


def test_default_names_get_suffixes():
    a = tf.constant(1.0)
    b = tf.constant(2.0)
    assert (a.name, b.name) == ("Const:0", "Const_1:0")
    assert tf.add(a, b).name == "Add:0"
    assert tf.add(a, b).name == "Add_1:0"


def test_explicit_name_colliding_with_generated_suffix():
    a = tf.constant(1.0)
    assert tf.add(a, a).name == "Add:0"
    assert tf.add(a, a).name == "Add_1:0"
    # a user name equal to an earlier generated one skips to the next free suffix
    assert tf.constant(1.0, name="Add").name == "Add_2:0"
    assert tf.constant(1.0, name="add_1").name == "add_1_1:0"
    assert tf.add(a, a, name="add_1").name == "add_1_2:0"


def test_names_collide_case_insensitively():
    assert tf.constant(1, name="foo").name == "foo:0"
    assert tf.constant(1, name="FOO").name == "FOO_1:0"
    assert tf.constant(1, name="Foo").name == "Foo_2:0"
    with tf.name_scope("Foo") as scope:
        assert scope == "Foo_3/"


def test_existing_suffix_names_are_skipped():
    tf.constant(1, name="w_1")
    tf.constant(1, name="w")
    assert tf.constant(1, name="w").name == "w_2:0"


def test_graph_unique_name():
    g = tf.get_default_graph()
    assert g.unique_name("zz") == "zz"
    assert g.unique_name("zz") == "zz_1"
    assert g.unique_name("zz", mark_as_used=False) == "zz_2"
    assert g.unique_name("zz", mark_as_used=False) == "zz_2"
    with tf.name_scope("us"):
        assert g.unique_name("foo") == "us/foo"


def test_names_with_slashes():
    assert tf.constant(1, name="q/r").name == "q/r:0"
    with tf.name_scope("x/y") as s:
        assert s == "x/y/"
    with tf.name_scope("x") as s:
        assert s == "x/"
    assert tf.constant(1, name="x/y").name == "x/y_1:0"
    assert tf.constant(1, name="x/y/z").name == "x/y/z:0"


def test_trailing_slash_names_op_exactly():
    assert tf.constant(1, name="qq/").name == "qq:0"
    with pytest.raises(ValueError, match="Duplicate node name"):
        tf.constant(1, name="qq/")
    with tf.name_scope("sc"):
        assert tf.constant(1, name="ab/cd/").name == "ab/cd:0"


def test_trailing_slash_name_is_marked_used():
    # TensorFlow raises "Duplicate node name" here; flowgraph picks a free name instead.
    tf.constant(1, name="qq/")
    assert tf.constant(1, name="qq").name == "qq_1:0"


def test_op_named_like_scope_and_scope_named_like_op():
    with tf.name_scope("sc"):
        pass
    assert tf.constant(1, name="sc").name == "sc_1:0"
    tf.constant(1, name="opfirst")
    with tf.name_scope("opfirst") as s:
        assert s == "opfirst_1/"


@pytest.mark.parametrize("bad", ["a b", "-ab", "_ab", "a$"])
def test_invalid_op_names(bad):
    with pytest.raises(ValueError, match="not a valid"):
        tf.constant(1, name=bad)


def test_name_pattern_allows_dots_and_dashes():
    assert tf.constant(1, name=".a-b>c").name == ".a-b>c:0"


def test_generated_names_are_always_unique_property():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    names = st.lists(st.sampled_from(["a", "A", "a_1", "a_2", "b", "a/", "c/d"]), max_size=25)

    @settings(max_examples=60, deadline=None)
    @given(names)
    def check(seq):
        g = tf.Graph()
        with g.as_default():
            made = []
            for n in seq:
                try:
                    made.append(tf.constant(1, name=n).op.name)
                except ValueError:
                    assert n.endswith("/")  # an exact name that is already taken
        assert len(set(made)) == len(made)
        if not any(n.endswith("/") for n in seq):
            # generated names also differ case-insensitively (exact names, as in
            # TensorFlow, only have to differ case-sensitively)
            lowered = [m.lower() for m in made]
            assert len(set(lowered)) == len(lowered)

    check()
