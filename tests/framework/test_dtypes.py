"""Tests for flowgraph.framework.dtypes."""

import copy
import pickle

import numpy as np
import pytest

from flowgraph.framework import dtypes

BASE = {
    # name: (numpy type, enum)
    "float32": (np.float32, 1),
    "float64": (np.float64, 2),
    "int32": (np.int32, 3),
    "uint8": (np.uint8, 4),
    "int16": (np.int16, 5),
    "int8": (np.int8, 6),
    "string": (np.object_, 7),
    "complex64": (np.complex64, 8),
    "int64": (np.int64, 9),
    "bool": (np.bool_, 10),
    "uint16": (np.uint16, 17),
    "complex128": (np.complex128, 18),
    "float16": (np.float16, 19),
    "uint32": (np.uint32, 22),
    "uint64": (np.uint64, 23),
}


@pytest.mark.parametrize("name", sorted(BASE))
def test_module_instances(name):
    np_type, enum = BASE[name]
    d = getattr(dtypes, name)
    assert isinstance(d, dtypes.DType)
    assert d.name == name
    assert d.as_numpy_dtype is np_type
    assert d.as_datatype_enum == enum
    assert not d.is_ref_dtype
    assert d.base_dtype is d
    assert repr(d) == f"tf.{name}"
    assert str(d) == f"<dtype: '{name}'>"


@pytest.mark.parametrize("name", sorted(BASE))
def test_ref_variants(name):
    np_type, enum = BASE[name]
    base = getattr(dtypes, name)
    ref = getattr(dtypes, f"{name}_ref")
    assert ref.is_ref_dtype
    assert ref.name == f"{name}_ref"
    assert ref.as_datatype_enum == enum + 100
    assert ref.base_dtype is base
    assert base._as_ref is ref
    assert ref._as_ref is ref
    assert ref.as_numpy_dtype is np_type
    assert ref != base
    assert repr(ref) == f"tf.{name}_ref"


def test_aliases():
    assert dtypes.half is dtypes.float16
    assert dtypes.double is dtypes.float64
    assert dtypes.half_ref is dtypes.float16_ref
    assert dtypes.double_ref is dtypes.float64_ref


def test_singletons():
    assert dtypes.DType(1) is dtypes.float32
    assert dtypes.DType(101) is dtypes.float32_ref
    assert dtypes.as_dtype("float32") is dtypes.float32
    assert copy.copy(dtypes.int32) is dtypes.int32
    assert copy.deepcopy([dtypes.int32])[0] is dtypes.int32
    for d in (*dtypes.ALL, dtypes.float32_ref):
        assert pickle.loads(pickle.dumps(d)) is d
    with pytest.raises(TypeError):
        dtypes.DType(42)


def test_immutable():
    with pytest.raises(AttributeError):
        dtypes.float32._name = "x"
    with pytest.raises(AttributeError):
        dtypes.float32.foo = 1
    with pytest.raises(AttributeError):
        del dtypes.float32._enum


def test_hash_and_eq():
    assert hash(dtypes.float32) == hash(dtypes.DType(1))
    assert len({dtypes.float32, dtypes.float32, dtypes.float32_ref, dtypes.int32}) == 3
    assert dtypes.float32 == np.float32
    assert dtypes.float32 == np.dtype("float32")
    assert dtypes.float32 == "float32"
    assert dtypes.float32 == "float"
    assert dtypes.float64.__eq__(float)
    assert dtypes.float32 != np.float64
    assert dtypes.float32 != "int32"
    assert not (dtypes.float32 == "no such type")
    assert dtypes.float32 != "no such type"
    assert dtypes.float32 != None  # noqa: E711
    assert dtypes.float32 != object()
    assert dtypes.float32 != [1, 2]
    assert dtypes.int32 != dtypes.int32_ref


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (np.float32, "float32"),
        (np.dtype("float64"), "float64"),
        (np.dtype(">f4"), "float32"),
        (np.int8, "int8"),
        (np.uint64, "uint64"),
        (np.bool_, "bool"),
        (np.complex64, "complex64"),
        (np.object_, "string"),
        (np.str_, "string"),
        (np.bytes_, "string"),
        (np.dtype("U5"), "string"),
        (np.dtype("S3"), "string"),
        (np.dtype(object), "string"),
        (float, "float64"),
        (int, "int64"),
        (bool, "bool"),
        (complex, "complex128"),
        (str, "string"),
        (bytes, "string"),
        ("float32", "float32"),
        ("float", "float32"),
        ("half", "float16"),
        ("double", "float64"),
        ("bool", "bool"),
        ("string", "string"),
        ("float32_ref", "float32_ref"),
        ("double_ref", "float64_ref"),
        ("uint16_ref", "uint16_ref"),
        (1, "float32"),
        (9, "int64"),
        (109, "int64_ref"),
        (np.int64(3), "int32"),
    ],
)
def test_as_dtype(value, expected):
    assert dtypes.as_dtype(value).name == expected


@pytest.mark.parametrize(
    "value",
    ["floatt", "", "float32_ref_ref", 0, 50, 99, 200, -1, True, None, 1.0, dict, list,
     np.float128 if hasattr(np, "float128") else np.datetime64, np.dtype("M8[s]"),
     np.dtype([("a", "f4")]), [1, 2], object()],
)
def test_as_dtype_rejects(value):
    with pytest.raises(TypeError, match=r"Cannot convert value .* to a flowgraph DType"):
        dtypes.as_dtype(value)


def test_as_dtype_passthrough():
    for d in dtypes.ALL:
        assert dtypes.as_dtype(d) is d
        assert dtypes.as_dtype(d.name) is d
        assert dtypes.as_dtype(d.as_datatype_enum) is d
        assert dtypes.as_dtype(d._as_ref.name) is d._as_ref


@pytest.mark.parametrize("d", [d for d in dtypes.ALL if d is not dtypes.string])
def test_numpy_round_trip(d):
    assert dtypes.as_dtype(d.as_numpy_dtype) is d
    assert dtypes.as_dtype(np.dtype(d.as_numpy_dtype)) is d


def test_classification():
    assert [d.name for d in dtypes.ALL if d.is_floating] == ["float16", "float32", "float64"]
    assert {d.name for d in dtypes.ALL if d.is_integer} == {
        "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"}
    assert {d.name for d in dtypes.ALL if d.is_unsigned} == {
        "uint8", "uint16", "uint32", "uint64"}
    assert {d.name for d in dtypes.ALL if d.is_complex} == {"complex64", "complex128"}
    assert [d.name for d in dtypes.ALL if d.is_bool] == ["bool"]
    assert not dtypes.bool.is_integer
    assert not dtypes.string.is_floating
    assert dtypes.float32_ref.is_floating
    assert dtypes.uint8_ref.is_unsigned
    for d in dtypes.ALL:
        assert d.is_numpy_compatible
        assert not d.is_quantized


def test_groups():
    assert dtypes.FLOATS == (dtypes.float16, dtypes.float32, dtypes.float64)
    assert len(dtypes.INTEGERS) == 8
    assert set(dtypes.NUMERIC) == set(dtypes.FLOATS + dtypes.INTEGERS + dtypes.COMPLEX)
    assert set(dtypes.ALL) == set(dtypes.NUMERIC) | {dtypes.bool, dtypes.string}
    assert len(dtypes.ALL) == 15
    assert all(not d.is_ref_dtype for d in dtypes.ALL)


def test_size():
    assert dtypes.float32.size == 4
    assert dtypes.float16.size == 2
    assert dtypes.complex128.size == 16
    assert dtypes.bool.size == 1
    assert dtypes.uint64.size == 8
    assert dtypes.int8_ref.size == 1


def test_min_max():
    assert dtypes.int8.min == -128 and dtypes.int8.max == 127
    assert dtypes.uint8.min == 0 and dtypes.uint8.max == 255
    assert dtypes.int64.max == 2**63 - 1
    assert dtypes.uint64.max == 2**64 - 1
    assert dtypes.float32.max == np.finfo(np.float32).max
    assert dtypes.float64.min == -np.finfo(np.float64).max
    assert dtypes.float16.max == 65504
    assert dtypes.int32_ref.max == 2**31 - 1
    assert dtypes.int16.limits == (0, 2**15 - 1)  # TF clips the negative part
    assert (dtypes.uint8.limits, dtypes.float64.limits) == ((0, 255), (0, 1))
    for d in (dtypes.bool, dtypes.string, dtypes.complex64, dtypes.complex128):
        with pytest.raises(TypeError):
            _ = d.min
        with pytest.raises(TypeError):
            _ = d.max


def test_real_dtype():
    assert dtypes.complex64.real_dtype is dtypes.float32
    assert dtypes.complex128.real_dtype is dtypes.float64
    assert dtypes.complex64_ref.real_dtype is dtypes.float32
    assert dtypes.float16.real_dtype is dtypes.float16
    assert dtypes.int32.real_dtype is dtypes.int32


def test_is_compatible_with():
    f, fr = dtypes.float32, dtypes.float32_ref
    assert f.is_compatible_with(f)
    assert f.is_compatible_with(fr)
    assert not fr.is_compatible_with(f)
    assert fr.is_compatible_with(fr)
    assert f.is_compatible_with(np.float32)
    assert f.is_compatible_with("float32_ref")
    assert not f.is_compatible_with(dtypes.float64)
    assert not f.is_compatible_with(dtypes.int32_ref)
    with pytest.raises(TypeError):
        f.is_compatible_with("nope")


# -- dtype_of_value -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1.5, "float32"),
        (1, "int32"),
        (2**31 - 1, "int32"),
        (-(2**31), "int32"),
        (2**31, "int64"),
        (-(2**31) - 1, "int64"),
        (2**63 - 1, "int64"),
        (True, "bool"),
        ("abc", "string"),
        (b"abc", "string"),
        (1 + 2j, "complex128"),
        ([], "float32"),
        ([[], []], "float32"),
        ([1, 2, 3], "int32"),
        ([1, 2**40], "int64"),
        ([1, 2.0], "float32"),
        ([[1, 2], [3, 4.5]], "float32"),
        ([True, False], "bool"),
        ([True, 1], "int32"),
        ([1, 2j], "complex128"),
        ((1, 2), "int32"),
        (["a", b"b"], "string"),
        ([["a"], ["b"]], "string"),
        (np.float64(1.0), "float64"),
        (np.float16(1.0), "float16"),
        (np.int64(1), "int64"),
        (np.uint8(3), "uint8"),
        (np.bool_(True), "bool"),
        (np.array([1, 2], dtype=np.int16), "int16"),
        (np.zeros((2, 3)), "float64"),
        (np.zeros((0,), dtype=np.uint32), "uint32"),
        (np.array(["a", "bc"]), "string"),
        (np.array([b"a"]), "string"),
        (np.array(["a", b"b"], dtype=object), "string"),
        (np.array([], dtype=object), "string"),
        (np.str_("x"), "string"),
        (np.bytes_(b"x"), "string"),
        ([np.float64(1.0), np.float64(2.0)], "float64"),
        ([np.float32(1.0), 2.0], "float32"),
        ([np.float64(1.0), 2], "float64"),
        ([np.int8(1), 2], "int8"),
        ([np.int8(1), 1000], "int32"),
        ([np.int64(1), 2.5], "float32"),
        ([np.int32(1), np.float32(2)], "float64"),
        ([np.array([1, 2], np.int16), [3, 4]], "int16"),
        ([np.bool_(True), 1], "int32"),
        ([np.float32(1), 1j], "complex128"),
    ],
)
def test_dtype_of_value(value, expected):
    assert dtypes.dtype_of_value(value).name == expected


def test_dtype_of_value_tensor_like():
    class FakeTensor:
        dtype = dtypes.float64_ref

    class FakeStringTensor:
        dtype = dtypes.string

    assert dtypes.dtype_of_value(FakeTensor()) is dtypes.float64
    assert dtypes.dtype_of_value([FakeTensor(), 1.0]) is dtypes.float64
    assert dtypes.dtype_of_value([FakeStringTensor(), "a"]) is dtypes.string


def test_dtype_of_value_array_like():
    class ArrayLike:
        def __array__(self, dtype=None, copy=None):
            return np.ones(3, dtype=np.int16)

    assert dtypes.dtype_of_value(ArrayLike()) is dtypes.int16


def test_dtype_of_value_errors():
    with pytest.raises(TypeError, match="mix strings and numbers"):
        dtypes.dtype_of_value(["a", 1])
    with pytest.raises(TypeError, match="mix strings and numbers"):
        dtypes.dtype_of_value([np.array(["a"]), np.array([1.0])])
    with pytest.raises(ValueError, match="out of range"):
        dtypes.dtype_of_value(2**63)
    with pytest.raises(ValueError, match="out of range"):
        dtypes.dtype_of_value([1, -(2**64)])
    with pytest.raises(ValueError, match="None"):
        dtypes.dtype_of_value([1.0, None])
    with pytest.raises(TypeError, match="Cannot convert"):
        dtypes.dtype_of_value(object())
    with pytest.raises(TypeError, match="Cannot convert"):
        dtypes.dtype_of_value({1: 2})
    with pytest.raises(TypeError):
        dtypes.dtype_of_value(np.array(["2020-01-01"], dtype="M8[D]"))


def test_dtype_of_value_matches_constant_conversion():
    # The inferred dtype must hold the value exactly for ordinary inputs.
    for v in ([1, 2, 3], [[1.5, 2.5]], [True, False], 7, 2**40):
        d = dtypes.dtype_of_value(v)
        arr = np.asarray(v, dtype=d.as_numpy_dtype)
        assert np.array_equal(arr, np.asarray(v))
