"""The assertion helpers of `tf.test.TestCase` beyond ``assertAllClose``/``assertAllEqual``.

A mixin for `flowgraph.test_case.TestCase`: range and ordering checks over arrays, dtype
checks, op-error matching, and the absl-style helpers TF 1.x test files call
(``assertItemsEqual``, ``assertStartsWith``, ``assertLen`` ...).
"""

from __future__ import annotations

import contextlib
import re
import threading

import numpy as np

from flowgraph.framework import errors

__all__ = ["AssertionsMixin", "CheckedThread"]


class CheckedThread:
    """A thread whose exception fails the test at `join` (``TestCase.checkedThread``).

    Example
    -------
    >>> out = []
    >>> t = CheckedThread(None, target=lambda: out.append(1))
    >>> t.start(); t.join(); out
    [1]
    """

    def __init__(self, testcase, target, args=(), kwargs=None):
        self._testcase = testcase
        self._target = target
        self._args, self._kwargs = args, kwargs or {}
        self._exception = None
        self._thread = threading.Thread(target=self._run)

    def _run(self):
        try:
            self._target(*self._args, **self._kwargs)
        except Exception as e:
            self._exception = e

    def start(self):
        self._thread.start()

    def join(self):
        self._thread.join()
        if self._exception is not None:
            if self._testcase is not None:
                self._testcase.fail(f"Error in checkedThread: {self._exception}")
            raise self._exception

    def is_alive(self) -> bool:
        return self._thread.is_alive()


def _array(testcase, value):
    return np.asarray(testcase._value(value))


class AssertionsMixin:
    """Assertions of `tf.test.TestCase`; the host class provides ``_value``."""

    def assertNotAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):
        """Assert that `a` and `b` are NOT elementwise close."""
        try:
            self.assertAllClose(a, b, rtol=rtol, atol=atol, msg=msg)
        except AssertionError:
            return
        self.fail(f"The two values are close at all elements. {msg or ''}")

    def assertNotAllEqual(self, a, b, msg=None):
        """Assert that `a` and `b` differ in at least one element."""
        try:
            self.assertAllEqual(a, b, msg)
        except AssertionError:
            return
        self.fail(f"The two values are equal at all elements. {msg or ''}")

    def assertAllCloseAccordingToType(self, a, b, rtol=1e-6, atol=1e-6, float_rtol=1e-6,
                                      float_atol=1e-6, half_rtol=1e-3, half_atol=1e-3,
                                      bfloat16_rtol=1e-2, bfloat16_atol=1e-2, msg=None):
        """`assertAllClose` with tolerances loosened to the precision of the dtype."""
        a_arr, b_arr = _array(self, a), _array(self, b)
        kinds = {a_arr.dtype, b_arr.dtype}
        if kinds & {np.dtype(np.float32), np.dtype(np.complex64)}:
            rtol, atol = max(rtol, float_rtol), max(atol, float_atol)
        if np.dtype(np.float16) in kinds:
            rtol, atol = max(rtol, half_rtol), max(atol, half_atol)
        if any(d.name == "bfloat16" for d in kinds):
            rtol, atol = max(rtol, bfloat16_rtol), max(atol, bfloat16_atol)
        self.assertAllClose(a_arr.astype(np.float64) if a_arr.dtype.kind == "f" else a_arr,
                            b_arr.astype(np.float64) if b_arr.dtype.kind == "f" else b_arr,
                            rtol=rtol, atol=atol, msg=msg)

    # As TensorFlow: the extreme element against the target, with unittest's message.
    def assertAllGreater(self, a, comparison_target):
        """Assert that every element of `a` is greater than `comparison_target`."""
        self.assertGreater(np.min(_array(self, a)), comparison_target)

    def assertAllGreaterEqual(self, a, comparison_target):
        """Assert that every element of `a` is at least `comparison_target`."""
        self.assertGreaterEqual(np.min(_array(self, a)), comparison_target)

    def assertAllLess(self, a, comparison_target):
        """Assert that every element of `a` is less than `comparison_target`."""
        self.assertLess(np.max(_array(self, a)), comparison_target)

    def assertAllLessEqual(self, a, comparison_target):
        """Assert that every element of `a` is at most `comparison_target`."""
        self.assertLessEqual(np.max(_array(self, a)), comparison_target)

    def assertAllInRange(self, target, lower_bound, upper_bound, open_lower_bound=False,
                         open_upper_bound=False):
        """Assert that every element of `target` lies in [lower_bound, upper_bound].

        ``open_lower_bound``/``open_upper_bound`` exclude the bound itself. A failure
        lists the offending subscripts and values (ten at most), as TensorFlow's does.
        """
        arr = _array(self, target)
        if arr.dtype.kind not in "iuf":
            raise AssertionError(f"The value of {arr} does not have an ordered numeric type, "
                                 f"instead it has type: {arr.dtype}")
        if arr.dtype.kind == "f" and np.isnan(arr).any():
            where = np.where(np.isnan(arr))
            raise AssertionError(
                f"{len(where[0])} of the {arr.size} element(s) are NaN. Subscripts(s) and "
                f"value(s) of the NaN element(s):\n" + "\n".join(_subscripts(where, arr)))
        what = (f"{'(' if open_lower_bound else '['}{lower_bound}, {upper_bound}"
                f"{')' if open_upper_bound else ']'}")
        bad = arr <= lower_bound if open_lower_bound else arr < lower_bound
        bad = bad | (arr >= upper_bound if open_upper_bound else arr > upper_bound)
        where = np.where(bad)
        if np.size(where):
            raise AssertionError(
                f"{len(where[0])} of the {arr.size} element(s) are outside the range {what}. "
                "Subscript(s) and value(s) of the offending elements:\n"
                + "\n".join(_subscripts(where, arr)))

    def assertAllInSet(self, target, expected_set):
        """Assert that every element of `target` is in `expected_set`."""
        arr = _array(self, target)
        missing = set(np.unique(arr).tolist()) - set(expected_set)
        if missing:
            self.fail(f"{len(missing)} unique element(s) are not in the set "
                      f"{expected_set}: {sorted(missing)}")

    def assertNDArrayNear(self, ndarray1, ndarray2, err, msg=None):
        """Assert that two arrays are elementwise within `err` of each other."""
        a, b = np.asarray(ndarray1), np.asarray(ndarray2)
        self.assertTrue(a.shape == b.shape and bool(np.all(np.abs(a - b) <= err)),
                        f"{a!r} != {b!r} +/- {err!r}. {msg or ''}")

    def assertDTypeEqual(self, target, expected_dtype):
        """Assert that `target` (an array or a nest of arrays) has dtype `expected_dtype`."""
        expected = np.dtype(getattr(expected_dtype, "as_numpy_dtype", expected_dtype))
        targets = target if isinstance(target, (list, tuple)) else [target]
        for t in targets:
            actual = np.asarray(t).dtype
            if actual != expected:  # unittest's words, the dtype as given (as TF shows it)
                self.fail(f"{actual!r} != {expected_dtype!r}")

    def assertDeviceEqual(self, device1, device2, msg=None):
        """Assert that two device strings name the same device."""
        from flowgraph.framework.device_spec import canonical_device

        self.assertEqual(canonical_device(device1), canonical_device(device2), msg)

    def assertProtoEquals(self, expected_message_maybe_ascii, message, msg=None):
        """Assert that `message` equals the expected message or its text format."""
        expected = expected_message_maybe_ascii
        if isinstance(expected, str):
            pair = _parse_like(expected, message)
            if pair is not None:  # compare as messages: enum names, 1 vs 1.0, field order
                self.assertMultiLineEqual(str(pair[0]), str(pair[1]), msg)
                return
            self.assertEqual(_squash(expected), _squash(_text_format(message)), msg)
        else:
            self.assertEqual(expected, message, msg)

    # -- errors ------------------------------------------------------------------------
    @contextlib.contextmanager
    def assertRaisesWithPredicateMatch(self, exception_type, expected_err_re_or_predicate):
        """Expect `exception_type` whose message matches a regex (or passes a predicate)."""
        if callable(expected_err_re_or_predicate):
            predicate = expected_err_re_or_predicate
        else:
            pattern = expected_err_re_or_predicate
            predicate = lambda e: re.search(pattern, str(e)) is not None  # noqa: E731
        try:
            yield
            self.fail(f"{exception_type.__name__} not raised")
        except Exception as e:
            if isinstance(e, AssertionError) and not issubclass(exception_type,
                                                                  AssertionError):
                raise
            if not isinstance(e, exception_type) or not predicate(e):
                raise AssertionError(
                    f"Exception of type {type(e)}: {e}") from e

    def assertRaisesOpError(self, expected_err_re_or_predicate):
        """Expect an `tf.errors.OpError` whose message matches the regex or predicate."""
        return self.assertRaisesWithPredicateMatch(errors.OpError,
                                                   expected_err_re_or_predicate)

    def assertRaisesIncompatibleShapesError(self, exception_type=errors.InvalidArgumentError):
        """Expect `exception_type` about incompatible shapes."""
        return self.assertRaisesWithPredicateMatch(
            exception_type, r"Incompatible shapes|Dimensions must be equal|"
                            r"required broadcastable shapes|incompatible|not compatible|"
                            r"could not be broadcast")

    def assertRaisesWithLiteralMatch(self, expected_exception, expected_exception_message,
                                     *args, **kwargs):
        """Expect `expected_exception` whose message is exactly the given text."""
        ctx = self.assertRaisesWithPredicateMatch(
            expected_exception, lambda e: str(e) == expected_exception_message)
        if not args:
            return ctx
        with ctx:
            args[0](*args[1:], **kwargs)
        return None

    # -- TF1 and absl names ---------------------------------------------------------------
    def assertRaisesRegexp(self, expected_exception, expected_regex, *args, **kwargs):
        """TF1's name of ``assertRaisesRegex`` (unittest's alias warned, then went in 3.12)."""
        return self.assertRaisesRegex(expected_exception, expected_regex, *args, **kwargs)

    def assertRegexpMatches(self, text, expected_regex, msg=None):
        """The old name of ``assertRegex`` (gone from unittest in Python 3.12)."""
        self.assertRegex(text, expected_regex, msg)

    def assertItemsEqual(self, first, second, msg=None):
        """Same as ``assertCountEqual``: the same elements, in any order."""
        self.assertCountEqual(first, second, msg)

    def assertSameElements(self, expected_seq, actual_seq, msg=None):
        """Assert that two sequences hold the same set of elements."""
        self.assertEqual(set(expected_seq), set(actual_seq), msg)

    def assertLen(self, container, expected_len, msg=None):
        """Assert that ``len(container) == expected_len``."""
        self.assertEqual(len(container), expected_len,
                         msg or f"{container!r} has length {len(container)}, "
                                f"expected {expected_len}")

    def assertEmpty(self, container, msg=None):
        """Assert that `container` has no elements."""
        self.assertLen(container, 0, msg)

    def assertNotEmpty(self, container, msg=None):
        """Assert that `container` has elements."""
        self.assertTrue(len(container) > 0, msg or f"{container!r} is empty")

    def assertStartsWith(self, actual, expected_start, msg=None):
        """Assert that the string `actual` starts with `expected_start`."""
        self.assertTrue(actual.startswith(expected_start),
                        msg or f"{actual!r} does not start with {expected_start!r}")

    def assertEndsWith(self, actual, expected_end, msg=None):
        """Assert that the string `actual` ends with `expected_end`."""
        self.assertTrue(actual.endswith(expected_end),
                        msg or f"{actual!r} does not end with {expected_end!r}")

    def assertBetween(self, value, minv, maxv, msg=None):
        """Assert that ``minv <= value <= maxv``."""
        self.assertTrue(minv <= value <= maxv,
                        msg or f"{value!r} is not between {minv!r} and {maxv!r}")

    def assertSequenceStartsWith(self, prefix, whole, msg=None):
        """Assert that the sequence `whole` starts with `prefix`."""
        self.assertEqual(list(whole)[:len(prefix)], list(prefix), msg)

    def assertContainsSubset(self, expected_subset, actual_set, msg=None):
        """Assert that every element of `expected_subset` is in `actual_set`."""
        missing = [e for e in expected_subset if e not in actual_set]
        self.assertFalse(missing, msg or f"missing elements {missing!r}")

    def assertDictContainsSubset(self, subset, dictionary, msg=None):
        """Assert that `dictionary` has every key/value pair of `subset`."""
        bad = {k: v for k, v in subset.items() if k not in dictionary or dictionary[k] != v}
        self.assertFalse(bad, msg or f"not contained: {bad!r}")

    def assertRegexMatch(self, actual_str, regexes, message=None):
        """Assert that at least one of `regexes` matches `actual_str`."""
        self.assertTrue(any(re.search(r, actual_str) for r in regexes),
                        message or f"none of {regexes!r} found in {actual_str!r}")

    def checkedThread(self, target, args=None, kwargs=None):
        """A thread running `target` whose exception fails the test at ``join()``."""
        return CheckedThread(self, target, args or (), kwargs)


def _subscripts(where, value, limit: int = 10) -> list[str]:
    """``  [i j] : v`` lines for the elements at `where` (TensorFlow's format)."""
    if np.ndim(value) == 0:
        return [f"  [0] : {value}"]
    rows = np.transpose(where)
    lines = [f"  {row} : {value[tuple(row)]}" for row in rows[:limit]]
    return lines + (["  ..."] if len(rows) > limit else [])


def _parse_like(text: str, message):
    """(`text` parsed as a message of `message`'s protobuf class, `message` as that class),
    or None when there is no such class (then the caller compares the texts themselves)."""
    from flowgraph.framework.proto_codec import Message
    from flowgraph.framework.tf_formats.text_parse import TextParseError, parse_text
    if hasattr(message, "_to_wire"):  # a record such as ConfigProto: its codec message
        message = message._to_wire()
    for cls in type(message).__mro__:
        if not (isinstance(cls, type) and issubclass(cls, Message)) or cls is Message:
            continue
        try:
            return parse_text(text, cls), message
        except TextParseError:
            raise
        except (KeyError, AttributeError, TypeError):  # a subclass storing fields its own way
            continue
    return None


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"\s*([{}:])\s*", r" \1 ", text)).strip()


def _text_format(message) -> str:
    """Protobuf text format of a flowgraph message (fields holding defaults left out)."""
    fields = getattr(message, "_ORDERED", None)
    if fields is None:
        return str(message)
    parts = []
    for _, name, _, _ in fields:
        value = getattr(message, name)
        if isinstance(value, dict):
            for k in sorted(value):
                v = value[k]
                inner = f"{{ {_text_format(v)} }}" if hasattr(v, "_ORDERED") else \
                    f": {_scalar(v)}"
                parts.append(f"{name} {{ key: {_scalar(k)} value {inner} }}")
            continue
        for item in (value if isinstance(value, list) or hasattr(value, "add") else [value]):
            if hasattr(item, "_ORDERED"):
                inner = _text_format(item)
                if inner or isinstance(value, list):  # an empty singular one: unset
                    parts.append(f"{name} {{ {inner} }}")
            elif item not in (None, 0, 0.0, "", b"", False):
                parts.append(f"{name}: {_scalar(item)}")
    return " ".join(parts)


def _scalar(value) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, bytes):
        value = value.decode("utf-8", "backslashreplace")
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)
