"""JSON request bodies parsed with bounded memory.

``json.loads`` turns every number into a Python float inside a Python list: about 32
bytes per number, 30x the text of a typical payload. `parse_body` keeps large numeric
arrays as text instead: it finds each long run of array characters (digits, ``.eE+-``,
commas, brackets, whitespace) that starts with ``[``, checks that the run is one
rectangular array by comparing its skeleton (the brackets and commas left after
deleting the numbers) with the skeleton of the shape it implies, and replaces it with a
placeholder before decoding the rest. The placeholder becomes a `NumericText`, which
is converted straight into an array of the signature input's dtype, in slices of
`CHUNK` bytes, once the signature is known (`materialize`).

Peak memory for a numeric body is the body, its skeleton (at most half the body), the
expected skeleton (the same size) and the result array: under 4x the body for float32
payloads, and about 1.5x for typical numbers such as ``0.123456``.

Anything unusual (a run that is not rectangular, a number that does not parse, a
placeholder landing inside a JSON string) falls back to ``json.loads`` of that text,
which gives the ordinary error messages.

Example
-------
>>> body = parse_body(b'{"instances": [' + b",".join([b"[1.5, 2]"] * 200) + b"]}")
>>> materialize(body["instances"], np.float32).shape
(200, 2)
"""

from __future__ import annotations

import itertools
import json
import math
import re
import secrets

import numpy as np

__all__ = ["NumericText", "leading_dim", "materialize", "parse_body"]

MIN_RUN_BYTES = 1024  # shorter arrays are cheap enough for json.loads
CHUNK = 1 << 18
MAX_RANK = 32  # deeper nesting is left to json.loads (which refuses very deep nesting)
_RUN = re.compile(rb"\[[0-9eE.+\-,\s\[\]]*")
_NUMBER_AND_SPACE = b"0123456789eE.+- \t\r\n"
_SPACE = b" \t\r\n"
_TOKEN = "\x00numeric-" + secrets.token_hex(8) + "-"


class NumericText:
    """A rectangular JSON array of numbers of shape `shape`, kept as text (a slice of
    the request body) until `to_array` converts it."""

    __slots__ = ("_body", "_end", "_start", "shape")

    def __init__(self, body: bytes, start: int, end: int, shape: tuple[int, ...]) -> None:
        self._body, self._start, self._end, self.shape = body, start, end, shape

    def __len__(self) -> int:
        return self.shape[0]

    def text(self) -> bytes:
        return self._body[self._start:self._end]

    def to_list(self):
        """The array as nested Python lists (what ``json.loads`` gives); ``ValueError``
        names the problem if the text is not valid JSON."""
        try:
            return json.loads(self.text())
        except ValueError as e:
            raise ValueError(f"Malformed JSON in request body: {e}") from None

    def to_array(self, dtype) -> np.ndarray | list:
        """An array of `dtype` (int, uint or float kinds), parsed slice by slice; any
        other dtype, or a number that does not parse as `dtype`, gives `to_list()`."""
        dtype = np.dtype(dtype)
        if dtype.kind not in "iuf":
            return self.to_list()
        out = np.empty(math.prod(self.shape), dtype)
        pos, filled, body, end = self._start, 0, self._body, self._end
        try:
            while pos < end:
                stop = body.find(b",", min(pos + CHUNK, end), end)
                stop = end if stop < 0 else stop
                tokens = body[pos:stop].translate(None, b"[]" + _SPACE).split(b",")
                if tokens and not tokens[0] and pos > self._start:
                    tokens = tokens[1:]  # the comma that ended the previous slice
                n = len(tokens)
                if filled + n > out.size:
                    return self.to_list()
                out[filled:filled + n] = np.array(tokens).astype(dtype)
                filled += n
                pos = stop
        except (ValueError, OverflowError):
            return self.to_list()
        if filled != out.size:
            return self.to_list()
        return out.reshape(self.shape)


def _shape_of(skeleton: bytes) -> tuple[int, ...] | None:
    """The shape whose rectangular array has exactly this skeleton, or None."""
    k = len(skeleton) - len(skeleton.lstrip(b"["))
    close = skeleton.find(b"]")
    if not 0 < k <= MAX_RANK or close < k or skeleton[k:close].strip(b","):
        return None
    counts = [1]  # arrays at each nesting level, outermost first
    for m in range(k - 1, 0, -1):
        counts.append(skeleton.count(b"]" * m + b"," + b"[" * m) + 1)
    shape = []
    for outer, here in itertools.pairwise(counts):
        if here % outer:
            return None
        shape.append(here // outer)
    shape.append(close - k + 1)
    size = shape[-1] + 1  # the skeleton's length for this shape, before building it
    for d in reversed(shape[:-1]):
        size = 2 + d * size + d - 1
    if size != len(skeleton):
        return None
    expected = b"[" + b"," * (shape[-1] - 1) + b"]"
    for d in reversed(shape[:-1]):
        expected = b"[" + b",".join([expected] * d) + b"]"
    return tuple(shape) if expected == skeleton else None


def _skeleton(body: bytes, start: int, end: int) -> bytes:
    parts = []
    for pos in range(start, end, CHUNK):
        parts.append(body[pos:min(pos + CHUNK, end)].translate(None, _NUMBER_AND_SPACE))
    return b"".join(parts)


def _numeric_runs(body: bytes):
    """(start, end, shape) of each long rectangular numeric array in `body`."""
    for m in _RUN.finditer(body):
        start, end = m.start(), m.end()
        if end - start < MIN_RUN_BYTES:
            continue
        end = body.rfind(b"]", start, end) + 1
        if end - start < MIN_RUN_BYTES:
            continue
        shape = _shape_of(_skeleton(body, start, end))
        if shape is not None:
            yield start, end, shape


def _restore(value, found: dict):
    if isinstance(value, str):
        return found.get(value, value) if value.startswith(_TOKEN) else value
    if isinstance(value, list):
        return [_restore(v, found) for v in value]
    if isinstance(value, dict):
        return {k: _restore(v, found) for k, v in value.items()}
    return value


def parse_body(body: bytes):
    """Decode a JSON request body; long rectangular numeric arrays become `NumericText`.

    Raises ``ValueError`` (or ``UnicodeDecodeError``/``RecursionError``) for malformed
    JSON, as ``json.loads`` does.
    """
    if len(body) < MIN_RUN_BYTES:
        return json.loads(body)
    pieces, found, pos = [], {}, 0
    for start, end, shape in _numeric_runs(body):
        token = f"{_TOKEN}{len(found)}"
        found[token] = NumericText(body, start, end, shape)
        pieces += [body[pos:start], b'"', token.replace("\x00", "\\u0000").encode(), b'"']
        pos = end
    if not found:
        return json.loads(body)
    pieces.append(body[pos:])
    try:
        value = json.loads(b"".join(pieces))
    except ValueError:  # a placeholder inside a string, or malformed JSON elsewhere
        return json.loads(body)
    return _restore(value, found)


def materialize(value, dtype=None):
    """`value` with every `NumericText` in it converted to arrays of `dtype` (None:
    float64); lists of equally shaped arrays become one array."""
    if isinstance(value, NumericText):
        return value.to_array(np.float64 if dtype is None else dtype)
    if isinstance(value, list) and any(isinstance(v, NumericText | list) for v in value):
        items = [materialize(v, dtype) for v in value]
        if all(a is b for a, b in zip(items, value, strict=True)):
            return value  # plain JSON lists: nothing to convert
        if all(isinstance(v, np.ndarray) for v in items) and len({v.shape for v in items}) == 1:
            return np.stack(items)
        return [v.tolist() if isinstance(v, np.ndarray) else v for v in items]
    if isinstance(value, dict):
        return {k: materialize(v, dtype) for k, v in value.items()}
    return value


def leading_dim(value) -> int | None:
    """The number of rows of a request value (None for a scalar)."""
    if isinstance(value, NumericText | list):
        return len(value)
    if isinstance(value, np.ndarray) and value.ndim:
        return value.shape[0]
    return None
