"""Tests for flowgraph.framework.tensor_shape, with emphasis on partial shapes."""

import operator
import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from flowgraph.framework.tensor_shape import (
    Dimension,
    TensorShape,
    as_dimension,
    as_shape,
    broadcast_shape,
    dimension_at_index,
    dimension_value,
    matrix,
    scalar,
    unknown_shape,
    vector,
)

U = Dimension(None)

# -- Dimension --------------------------------------------------------------------------


def test_dimension_construction():
    assert Dimension(3).value == 3
    assert Dimension(0).value == 0
    assert Dimension(None).value is None
    assert Dimension(Dimension(4)).value == 4
    assert Dimension(np.int64(5)).value == 5
    assert Dimension(np.array(6)).value == 6
    for bad in (2.0, "7", np.float32(4.0)):  # TF 2.15: no float or string at all
        with pytest.raises(TypeError, match="must be integer or None or have an __index__"):
            Dimension(bad)
    with pytest.raises(ValueError):
        Dimension(-1)
    with pytest.raises(TypeError):  # TF's type
        Dimension(2.5)
    with pytest.raises(TypeError):
        Dimension([1])
    with pytest.raises(TypeError):
        Dimension("abc")


def test_dimension_int_and_index():
    assert int(Dimension(3)) == 3
    assert [0, 1, 2, 3][Dimension(2)] == 2
    assert list(range(Dimension(2))) == [0, 1]
    with pytest.raises(TypeError):
        int(Dimension(None))
    with pytest.raises(TypeError):
        [0, 1][Dimension(None)]


def test_dimension_repr_str_hash():
    assert repr(Dimension(3)) == "Dimension(3)"
    assert repr(Dimension(None)) == "Dimension(None)"
    assert str(Dimension(3)) == "3"
    assert str(Dimension(None)) == "?"
    assert hash(Dimension(3)) == hash(Dimension(3))
    assert len({Dimension(3), Dimension(3), Dimension(4)}) == 2
    assert pickle.loads(pickle.dumps(Dimension(5))).value == 5
    assert pickle.loads(pickle.dumps(Dimension(None))).value is None


def test_dimension_equality_with_unknowns():
    assert (Dimension(3) == Dimension(3)) is True
    assert (Dimension(3) == 3) is True
    assert (Dimension(3) == 4) is False
    assert (Dimension(3) != 4) is True
    assert (Dimension(None) == 3) is None
    assert (Dimension(3) == Dimension(None)) is None
    assert (Dimension(None) == Dimension(None)) is None
    assert (Dimension(None) != 3) is None
    assert (Dimension(3) == "not a dim") is False
    assert (Dimension(3) != [1]) is True


def test_dimension_ordering():
    assert (Dimension(2) < 3) is True
    assert (Dimension(2) <= 2) is True
    assert (Dimension(2) > 3) is False
    assert (Dimension(2) >= Dimension(1)) is True
    for op in ("__lt__", "__le__", "__gt__", "__ge__"):
        assert getattr(Dimension(None), op)(1) is None
        assert getattr(Dimension(1), op)(Dimension(None)) is None


def test_dimension_arithmetic():
    assert Dimension(3) + 2 == Dimension(5)
    assert 2 + Dimension(3) == Dimension(5)
    assert Dimension(5) - 2 == Dimension(3)
    assert 7 - Dimension(2) == Dimension(5)
    assert Dimension(3) * Dimension(4) == Dimension(12)
    assert 4 * Dimension(3) == Dimension(12)
    assert Dimension(7) // 2 == Dimension(3)
    assert 7 // Dimension(2) == Dimension(3)
    assert Dimension(7) % 4 == Dimension(3)
    assert 7 % Dimension(4) == Dimension(3)
    with pytest.raises(ValueError):
        Dimension(2) - 3  # would be negative
    with pytest.raises(ZeroDivisionError):
        Dimension(2) // 0
    with pytest.raises(TypeError):
        Dimension(4) / 2
    with pytest.raises(TypeError):
        4 / Dimension(2)


@pytest.mark.parametrize(
    "expr",
    [
        lambda: U + 1, lambda: 1 + U, lambda: U - 1, lambda: 5 - U, lambda: U * 3,
        lambda: 3 * U, lambda: U // 2, lambda: 8 // U, lambda: U % 2, lambda: 8 % U,
        lambda: Dimension(2) + U, lambda: U * U,
    ],
)
def test_dimension_arithmetic_unknown(expr):
    result = expr()
    assert isinstance(result, Dimension)
    assert result.value is None


def test_dimension_compatibility_and_merge():
    assert Dimension(3).is_compatible_with(3)
    assert Dimension(3).is_compatible_with(None)
    assert U.is_compatible_with(7)
    assert not Dimension(3).is_compatible_with(4)
    Dimension(3).assert_is_compatible_with(Dimension(None))
    with pytest.raises(ValueError, match="3 and 4"):
        Dimension(3).assert_is_compatible_with(4)
    assert Dimension(None).merge_with(4).value == 4
    assert Dimension(4).merge_with(None).value == 4
    assert Dimension(4).merge_with(4).value == 4
    assert U.merge_with(U).value is None
    with pytest.raises(ValueError):
        Dimension(3).merge_with(4)


def test_dimension_helpers():
    d = Dimension(3)
    assert as_dimension(d) is d
    assert as_dimension(3) == d
    assert as_dimension(None).value is None
    assert dimension_value(d) == 3
    assert dimension_value(U) is None
    assert dimension_value(5) == 5
    assert dimension_value(None) is None


# -- TensorShape construction and access --------------------------------------------------


def test_shape_construction():
    assert TensorShape(None).ndims is None
    assert TensorShape([]).ndims == 0
    assert TensorShape([2, None, Dimension(4)]).as_list() == [2, None, 4]
    assert TensorShape((1, 2)).as_list() == [1, 2]
    assert TensorShape(np.array([3, 4])).as_list() == [3, 4]
    assert TensorShape(np.zeros((2, 5)).shape).as_list() == [2, 5]
    assert TensorShape(3).as_list() == [3]
    assert TensorShape(Dimension(None)).as_list() == [None]
    s = TensorShape([1, None])
    assert TensorShape(s) == s
    assert as_shape(s) is s
    with pytest.raises(TypeError):
        TensorShape("12")
    with pytest.raises(ValueError):
        TensorShape([2, -1])
    with pytest.raises(TypeError):
        TensorShape([[1]])


def test_shape_rank_and_len():
    s = TensorShape([2, None, 3])
    assert s.ndims == s.rank == len(s) == 3
    u = TensorShape(None)
    assert u.ndims is None and u.rank is None
    with pytest.raises(ValueError):
        len(u)
    with pytest.raises(ValueError):
        u.as_list()
    with pytest.raises(ValueError):
        iter(u)


def test_shape_dims_and_iter():
    s = TensorShape([2, None])
    dims = s.dims
    assert all(isinstance(d, Dimension) for d in dims)
    assert [d.value for d in dims] == [2, None]
    dims.append(Dimension(9))  # a copy: the shape must not change
    assert s.as_list() == [2, None]
    assert TensorShape(None).dims is None
    assert [d.value for d in s] == [2, None]
    assert all(isinstance(d, Dimension) for d in s)


def test_shape_getitem_known_rank():
    s = TensorShape([2, None, 4, 5])
    assert isinstance(s[0], Dimension)
    assert s[0].value == 2
    assert s[1].value is None
    assert s[-1].value == 5
    assert s[np.int64(2)].value == 4
    assert isinstance(s[1:3], TensorShape)
    assert s[1:3].as_list() == [None, 4]
    assert s[::2].as_list() == [2, 4]
    assert s[5:].as_list() == []
    with pytest.raises(IndexError):
        s[4]


def test_shape_getitem_unknown_rank():
    u = TensorShape(None)
    assert u[0].value is None
    assert u[-3].value is None
    assert u[1:].ndims is None
    assert u[0:2].ndims is None
    with pytest.raises(TypeError):
        u["a"]


def test_shape_bool():
    assert not TensorShape(None)
    assert TensorShape([])
    assert TensorShape([None])


def test_fully_defined_and_num_elements():
    assert TensorShape([2, 3]).is_fully_defined()
    assert TensorShape([]).is_fully_defined()
    assert not TensorShape([2, None]).is_fully_defined()
    assert not TensorShape(None).is_fully_defined()
    assert TensorShape([2, 3]).num_elements() == 6
    assert TensorShape([]).num_elements() == 1
    assert TensorShape([2, 0]).num_elements() == 0
    assert TensorShape([2, None]).num_elements() is None
    assert TensorShape(None).num_elements() is None
    TensorShape([1]).assert_is_fully_defined()
    with pytest.raises(ValueError):
        TensorShape([None]).assert_is_fully_defined()


# -- compatibility, merging ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "compatible"),
    [
        (None, None, True),
        (None, [1, 2], True),
        ([1, 2], None, True),
        ([], [], True),
        ([], [1], False),
        ([None], [5], True),
        ([None, 3], [4, None], True),
        ([2, 3], [2, 3], True),
        ([2, 3], [2, 4], False),
        ([2, None], [2, None, 1], False),
    ],
)
def test_is_compatible_with(a, b, compatible):
    assert TensorShape(a).is_compatible_with(b) is compatible
    assert TensorShape(b).is_compatible_with(TensorShape(a)) is compatible
    if compatible:
        TensorShape(a).assert_is_compatible_with(b)
    else:
        with pytest.raises(ValueError, match="incompatible"):
            TensorShape(a).assert_is_compatible_with(b)


@pytest.mark.parametrize(
    ("a", "b", "merged"),
    [
        (None, None, None),
        (None, [1, None], [1, None]),
        ([None, 2], None, [None, 2]),
        ([None, 3], [2, None], [2, 3]),
        ([None, None], [None, None], [None, None]),
        ([4, 5], [4, 5], [4, 5]),
        ([], [], []),
    ],
)
def test_merge_with(a, b, merged):
    result = TensorShape(a).merge_with(b)
    expected = TensorShape(merged)
    assert result == expected
    assert TensorShape(b).merge_with(a) == expected


@pytest.mark.parametrize(("a", "b"), [([1, 2], [1, 3]), ([1], [1, 1]), ([], [None])])
def test_merge_with_conflict(a, b):
    with pytest.raises(ValueError, match="not compatible"):
        TensorShape(a).merge_with(b)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ([2, 3], [2, 3], [2, 3]),
        ([2, 3], [2, 4], [2, None]),
        ([None, 3], [2, 3], [None, 3]),
        ([2, 3], [2, 3, 1], None),
        (None, [2], None),
        ([1], None, None),
    ],
)
def test_most_specific_compatible_shape(a, b, expected):
    result = TensorShape(a).most_specific_compatible_shape(b)
    assert result == TensorShape(expected)
    assert result.is_compatible_with(a) and result.is_compatible_with(b)


def test_concatenate():
    assert TensorShape([1, None]).concatenate([3]).as_list() == [1, None, 3]
    assert TensorShape([]).concatenate([]).as_list() == []
    assert TensorShape(None).concatenate([1]).ndims is None
    assert TensorShape([1]).concatenate(None).ndims is None
    assert operator.add(TensorShape([1]), [2]).as_list() == [1, 2]
    assert operator.add([2], TensorShape([1])).as_list() == [2, 1]


# -- rank checks ---------------------------------------------------------------------------


def test_with_rank():
    assert TensorShape(None).with_rank(2).as_list() == [None, None]
    assert TensorShape([1, None]).with_rank(2).as_list() == [1, None]
    with pytest.raises(ValueError, match="must have rank 3"):
        TensorShape([1, 2]).with_rank(3)


def test_with_rank_at_least_and_most():
    s = TensorShape([1, 2])
    assert s.with_rank_at_least(2) is s
    assert s.with_rank_at_least(0) is s
    assert s.with_rank_at_most(2) is s
    assert TensorShape(None).with_rank_at_least(5).ndims is None
    assert TensorShape(None).with_rank_at_most(0).ndims is None
    with pytest.raises(ValueError, match="at least 3"):
        s.with_rank_at_least(3)
    with pytest.raises(ValueError, match="at most 1"):
        s.with_rank_at_most(1)


def test_assert_has_rank_and_same_rank():
    TensorShape([1, 2]).assert_has_rank(2)
    TensorShape(None).assert_has_rank(7)
    with pytest.raises(ValueError):
        TensorShape([1]).assert_has_rank(2)
    TensorShape([1, 2]).assert_same_rank([None, None])
    TensorShape([1, 2]).assert_same_rank(None)
    TensorShape(None).assert_same_rank([1])
    with pytest.raises(ValueError, match="same rank"):
        TensorShape([1, 2]).assert_same_rank([1])


# -- equality, hashing, display --------------------------------------------------------------


def test_equality():
    assert TensorShape([1, 2]) == TensorShape([1, 2])
    assert TensorShape([1, 2]) == [1, 2]
    assert TensorShape([1, None]) == TensorShape([1, None])
    assert TensorShape(None) == TensorShape(None)
    assert TensorShape([]) == TensorShape([])
    assert TensorShape([1, 2]) != TensorShape([1, 3])
    assert TensorShape([1, None]) != TensorShape([1, 2])
    assert TensorShape(None) != TensorShape([])
    assert TensorShape([None]) != TensorShape(None)
    assert TensorShape([1]) != TensorShape([1, 1])
    assert TensorShape([1]) != "abc"
    assert TensorShape([1]) != object()
    assert TensorShape([1]) != [1.5]


def test_hash():
    assert hash(TensorShape([1, None])) == hash(TensorShape([1, None]))
    assert hash(TensorShape(None)) == hash(TensorShape(None))
    assert len({TensorShape([1, 2]), TensorShape([1, 2]), TensorShape([2, 1])}) == 2


def test_repr_and_str():
    assert repr(TensorShape([2, None])) == "TensorShape([Dimension(2), Dimension(None)])"
    assert repr(TensorShape([])) == "TensorShape([])"
    assert repr(TensorShape(None)) == "TensorShape(None)"
    assert str(TensorShape([2, None])) == "(2, ?)"
    assert str(TensorShape([3])) == "(3,)"
    assert str(TensorShape([None])) == "(?,)"
    assert str(TensorShape([])) == "()"
    assert str(TensorShape(None)) == "<unknown>"


def test_pickle():
    for s in (TensorShape(None), TensorShape([]), TensorShape([1, None, 3])):
        assert pickle.loads(pickle.dumps(s)) == s


def test_module_constructors():
    assert unknown_shape() == TensorShape(None)
    assert unknown_shape(rank=3).as_list() == [None] * 3
    assert unknown_shape(ndims=1).as_list() == [None]
    assert unknown_shape(0).as_list() == []
    assert scalar().as_list() == []
    assert vector(4).as_list() == [4]
    assert vector(None).as_list() == [None]
    assert matrix(2, None).as_list() == [2, None]
    assert as_shape([1, 2]).as_list() == [1, 2]
    assert as_shape(None).ndims is None
    assert dimension_at_index([4, 5], -1).value == 5
    assert dimension_at_index(None, 2).value is None


# -- broadcasting ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ([], [], []),
        ([3], [], [3]),
        ([2, 1], [1, 3], [2, 3]),
        ([5, 1, 4], [3, 1], [5, 3, 4]),
        ([None, 1], [3], [None, 3]),
        ([None], [1], [None]),
        ([None], [None], [None]),
        ([None], [4], [4]),
        ([None, 3], [2, 1, None], [2, None, 3]),
        ([0], [None], [0]),
        ([0], [1], [0]),
        ([1], [0], [0]),
        ([None], [], [None]),
    ],
)
def test_broadcast_shape_partial(a, b, expected):
    assert broadcast_shape(TensorShape(a), TensorShape(b)).as_list() == expected
    assert broadcast_shape(b, a).as_list() == expected


@pytest.mark.parametrize(("a", "b"), [(None, [1, 2]), ([3], None), (None, None)])
def test_broadcast_shape_unknown_rank(a, b):
    assert broadcast_shape(a, b).ndims is None


@pytest.mark.parametrize(("a", "b"), [([2], [3]), ([2, 3], [3, 3, 2]), ([0], [2])])
def test_broadcast_shape_incompatible(a, b):
    with pytest.raises(ValueError) as info:
        broadcast_shape(a, b)
    message = str(info.value)
    assert str(TensorShape(a)) in message
    assert str(TensorShape(b)) in message


_dims = st.lists(st.integers(min_value=0, max_value=4), max_size=5)


@given(_dims, _dims)
def test_broadcast_shape_matches_numpy(a, b):
    try:
        expected = np.broadcast_shapes(tuple(a), tuple(b))
    except ValueError:
        with pytest.raises(ValueError):
            broadcast_shape(a, b)
    else:
        result = broadcast_shape(a, b)
        assert result.is_fully_defined()
        assert tuple(result.as_list()) == expected


@given(_dims, _dims, st.data())
def test_broadcast_shape_with_unknowns_is_compatible_with_numpy(a, b, data):
    # Hiding some dimensions never contradicts the fully known answer.
    try:
        expected = np.broadcast_shapes(tuple(a), tuple(b))
    except ValueError:
        return
    mask_a = data.draw(st.lists(st.booleans(), min_size=len(a), max_size=len(a)))
    mask_b = data.draw(st.lists(st.booleans(), min_size=len(b), max_size=len(b)))
    pa = [None if m else d for d, m in zip(a, mask_a, strict=True)]
    pb = [None if m else d for d, m in zip(b, mask_b, strict=True)]
    result = broadcast_shape(pa, pb)
    assert result.is_compatible_with(list(expected))
