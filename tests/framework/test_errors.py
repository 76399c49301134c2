"""Tests for flowgraph.framework.errors."""

import pickle

import pytest

from flowgraph.framework import errors

EXPECTED = {
    "CancelledError": ("CANCELLED", 1),
    "UnknownError": ("UNKNOWN", 2),
    "InvalidArgumentError": ("INVALID_ARGUMENT", 3),
    "DeadlineExceededError": ("DEADLINE_EXCEEDED", 4),
    "NotFoundError": ("NOT_FOUND", 5),
    "AlreadyExistsError": ("ALREADY_EXISTS", 6),
    "PermissionDeniedError": ("PERMISSION_DENIED", 7),
    "ResourceExhaustedError": ("RESOURCE_EXHAUSTED", 8),
    "FailedPreconditionError": ("FAILED_PRECONDITION", 9),
    "AbortedError": ("ABORTED", 10),
    "OutOfRangeError": ("OUT_OF_RANGE", 11),
    "UnimplementedError": ("UNIMPLEMENTED", 12),
    "InternalError": ("INTERNAL", 13),
    "UnavailableError": ("UNAVAILABLE", 14),
    "DataLossError": ("DATA_LOSS", 15),
    "UnauthenticatedError": ("UNAUTHENTICATED", 16),
}


def test_ok_code():
    assert errors.OK == 0


@pytest.mark.parametrize("cls_name", sorted(EXPECTED))
def test_subclass_codes_and_constants(cls_name):
    const_name, code = EXPECTED[cls_name]
    cls = getattr(errors, cls_name)
    assert getattr(errors, const_name) == code
    assert issubclass(cls, errors.OpError)
    assert issubclass(cls, Exception)
    err = cls("node", "op", "went wrong")
    assert err.error_code == code
    assert err.node_def == "node"
    assert err.op == "op"
    assert err.message == "went wrong"
    assert str(err) == "went wrong"
    assert errors.exception_type_from_error_code(code) is cls
    assert errors.CODE_TO_EXCEPTION_CLASS[code] is cls
    assert errors.error_code_from_exception_type(cls) == code


@pytest.mark.parametrize("cls_name", sorted(EXPECTED))
def test_subclass_constructor_takes_exactly_three_args(cls_name):
    cls = getattr(errors, cls_name)
    with pytest.raises(TypeError):
        cls(None, None, "msg", 3)
    with pytest.raises(TypeError):
        cls(None, "msg")


def test_op_error_base():
    err = errors.OpError(None, None, "boom")
    assert err.error_code is None
    assert str(err) == "boom"
    err = errors.OpError("nd", "the_op", "boom", errors.INTERNAL)
    assert err.error_code == 13
    assert (err.node_def, err.op, err.message) == ("nd", "the_op", "boom")


def test_catching_by_base_class():
    with pytest.raises(errors.OpError) as info:
        raise errors.OutOfRangeError(None, None, "end of sequence")
    assert info.value.error_code == errors.OUT_OF_RANGE
    assert "end of sequence" in str(info.value)


def test_subclasses_are_distinct():
    assert not issubclass(errors.NotFoundError, errors.InvalidArgumentError)
    with pytest.raises(errors.NotFoundError):
        try:
            raise errors.NotFoundError(None, None, "x")
        except errors.InvalidArgumentError:  # must not catch
            pytest.fail("wrong class caught")


def test_exception_type_from_unknown_code():
    with pytest.raises(KeyError):
        errors.exception_type_from_error_code(errors.OK)
    with pytest.raises(KeyError):
        errors.exception_type_from_error_code(999)


def test_code_mapping_is_read_only_and_complete():
    assert set(errors.CODE_TO_EXCEPTION_CLASS) == set(range(1, 17))
    with pytest.raises(TypeError):
        errors.CODE_TO_EXCEPTION_CLASS[1] = ValueError


def test_error_code_from_exception_type_fallbacks():
    class MyNotFound(errors.NotFoundError):
        pass

    assert errors.error_code_from_exception_type(MyNotFound) == errors.NOT_FOUND
    assert errors.error_code_from_exception_type(errors.OpError) == errors.UNKNOWN
    assert errors.error_code_from_exception_type(ValueError) == errors.UNKNOWN


@pytest.mark.parametrize("cls_name", sorted(EXPECTED))
def test_pickle_round_trip(cls_name):
    cls = getattr(errors, cls_name)
    err = cls(None, object(), "kept message")  # the op itself is dropped
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is cls
    assert back.message == "kept message"
    assert back.error_code == err.error_code
    assert back.op is None


def test_pickle_base_keeps_code():
    back = pickle.loads(pickle.dumps(errors.OpError(None, None, "m", errors.ABORTED)))
    assert type(back) is errors.OpError
    assert back.error_code == errors.ABORTED
    assert str(back) == "m"
