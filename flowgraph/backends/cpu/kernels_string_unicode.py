"""CPU kernels of `flowgraph/ops/string_unicode_ops.py`: Unicode decoding (to code
points and byte offsets) of byte strings in any encoding Python has a codec for (ICU's
names: ISO-8859-1, windows-1252, UTF-16-LE, ...), encoding and transcoding to UTF-8,
UTF-16-BE or UTF-32-BE, with TensorFlow's error policies (``replace``: the replacement character
for each invalid byte sequence, ``ignore``: dropped, ``strict``: an error)."""

from __future__ import annotations

import codecs

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import errors

_CODECS = {"UTF-8": "utf-8", "UTF-16-BE": "utf-16-be", "UTF-32-BE": "utf-32-be"}
_UNIT = {"UTF-8": 1, "UTF-16-BE": 2, "UTF-32-BE": 4}


def _b(v) -> bytes:
    return v if isinstance(v, bytes) else str(v).encode("utf-8")


def _utf8_length(lead: int) -> int:
    if lead < 0x80:
        return 1
    if 0xC2 <= lead < 0xE0:
        return 2
    if 0xE0 <= lead < 0xF0:
        return 3
    if 0xF0 <= lead < 0xF5:
        return 4
    return 1  # a continuation or invalid lead byte: one invalid byte


def _utf8_error_span(s: bytes, p: int) -> int:
    """The bytes one replacement character stands for at an invalid UTF-8 sequence: a
    lead byte and the continuation bytes that follow it, when the sequence is cut short
    (one error, as ICU counts them), else the one bad byte."""
    need = _utf8_length(s[p]) - 1
    k = 0
    while k < need and p + 1 + k < len(s) and 0x80 <= s[p + 1 + k] < 0xC0:
        k += 1
    return 1 + k if k < need else 1


def _resolve(encoding: str, op) -> str:
    """The codec decoding `encoding`, an ICU converter name: one of `_CODECS`' keys for
    UTF-8/UTF-16-BE/UTF-32-BE however spelled, else the Python codec's name."""
    try:
        name = codecs.lookup(encoding).name
    except LookupError:
        raise errors.InvalidArgumentError(
            None, None, f"{op.type} '{op.name}': could not create converter for input "
            f"encoding: {encoding}") from None
    return _CANONICAL.get(name, name)


def _decode_generic(s: bytes, codec: str, op, errors_mode: str, replacement: int,
                    replace_control: bool, index: int):
    """Code points and byte offsets of `s` in any Python codec, fed byte by byte so that
    each undecodable sequence is found where it starts."""
    if codec in _BOM_CODECS:  # ICU: a byte order mark picks the order, else big-endian
        codec, skip = _BOM_CODECS[codec](s)
    else:
        skip = 0
    dec = codecs.getincrementaldecoder(codec)("strict")
    chars, starts = [], []
    start, p, n = skip, skip, len(s)

    def bad(at):
        if errors_mode == "strict":
            raise errors.InvalidArgumentError(
                None, None, f"{op.type} '{op.name}': invalid formatting on input string "
                f"{index} ({s!r}) at byte {at}; use errors='replace' or 'ignore'")
        if errors_mode == "replace":
            chars.append(replacement)
            starts.append(at)

    while p < n:
        try:
            text = dec.decode(s[p:p + 1])
        except UnicodeDecodeError:
            dec.reset()
            if codec == "cp1252" and p == start:  # ICU maps its five holes to C1 controls
                chars.append(s[p])
                starts.append(p)
            else:
                bad(start)
            p += 1
            start = p
            continue
        p += 1
        for ch in text:
            cp = ord(ch)
            chars.append(replacement if replace_control and cp < 0x20 else cp)
            starts.append(start)
        if text:
            start = p
    if start < n:  # a sequence cut short by the end of the string
        bad(start)
    return chars, starts


def _bom_order(bom_le: bytes, bom_be: bytes, le: str, be: str):
    def pick(s: bytes):
        if s.startswith(bom_le):
            return le, len(bom_le)
        if s.startswith(bom_be):
            return be, len(bom_be)
        return be, 0
    return pick


_CANONICAL = {"utf-8": "UTF-8", "utf-16-be": "UTF-16-BE", "utf-32-be": "UTF-32-BE"}
_BOM_CODECS = {
    "utf-16": _bom_order(b"\xff\xfe", b"\xfe\xff", "utf-16-le", "utf-16-be"),
    "utf-32": _bom_order(b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff", "utf-32-le", "utf-32-be"),
}


def _decode_one(s: bytes, encoding: str, op, errors_mode: str, replacement: int,
                replace_control: bool, index: int):
    """Code points and their byte offsets in `s`."""
    if encoding not in _CODECS:
        return _decode_generic(s, encoding, op, errors_mode, replacement, replace_control,
                               index)
    codec, unit = _CODECS[encoding], _UNIT[encoding]
    chars, starts = [], []
    p, n = 0, len(s)
    while p < n:
        size = _utf8_length(s[p]) if encoding == "UTF-8" else unit
        if encoding == "UTF-16-BE" and p + 2 <= n and 0xD8 <= s[p] < 0xDC:
            size = 4  # a surrogate pair
        piece = s[p:p + size]
        try:
            text = piece.decode(codec)
            if len(text) != 1:
                raise UnicodeDecodeError(codec, piece, 0, len(piece), "not one character")
            cp = ord(text)
        except UnicodeDecodeError:
            if errors_mode == "strict":
                raise errors.InvalidArgumentError(
                    None, None, f"{op.type} '{op.name}': invalid {encoding} sequence at byte "
                    f"{p} of string {index} ({s!r}); use errors='replace' or 'ignore'") from None
            if encoding == "UTF-8":
                size = _utf8_error_span(s, p)
            p_start = p
            p += min(size, n - p)
            if errors_mode == "replace":
                chars.append(replacement)
                starts.append(p_start)
            continue
        if replace_control and cp < 0x20:
            cp = replacement
        chars.append(cp)
        starts.append(p)
        p += size
    return chars, starts


def _decode(x, op, encoding, errors_mode, replacement, replace_control):
    encoding = _resolve(encoding, op)
    flat = np.asarray(x, dtype=object).reshape(-1).tolist()
    splits, values, offsets = [0], [], []
    for i, v in enumerate(flat):
        chars, starts = _decode_one(_b(v), encoding, op, errors_mode, replacement,
                                    replace_control, i)
        values.extend(chars)
        offsets.extend(starts)
        splits.append(len(values))
    return (np.asarray(splits, np.int64), np.asarray(values, np.int32),
            np.asarray(offsets, np.int64))


@cpu_kernel("UnicodeDecodeWithOffsets", fresh=True)
def unicode_decode_with_offsets(x, *, input_encoding, errors, replacement_char,
                                replace_control_characters, op):
    return list(_decode(x, op, input_encoding, errors, replacement_char,
                        replace_control_characters))


@cpu_kernel("UnicodeDecode", fresh=True)
def unicode_decode(x, *, input_encoding, errors, replacement_char,
                   replace_control_characters, op):
    return list(_decode(x, op, input_encoding, errors, replacement_char,
                        replace_control_characters)[:2])


def _encode_char(cp: int, codec: str, errors_mode: str, replacement: int, op) -> bytes:
    try:
        if cp < 0 or cp > 0x10FFFF or 0xD800 <= cp < 0xE000:
            raise ValueError(cp)
        return chr(cp).encode(codec)
    except (ValueError, UnicodeEncodeError):
        if errors_mode == "strict":
            raise errors.InvalidArgumentError(
                None, None, f"{op.type} '{op.name}': code point {cp} is not a valid Unicode "
                "character; use errors='replace' or 'ignore'") from None
        return b"" if errors_mode == "ignore" else chr(replacement).encode(codec)


@cpu_kernel("UnicodeEncode", fresh=True)
def unicode_encode(values, splits, *, errors, output_encoding, replacement_char, op):
    codec = _CODECS[output_encoding]
    vals = np.asarray(values).tolist()
    bounds = np.asarray(splits).tolist()
    out = np.empty(max(len(bounds) - 1, 0), dtype=object)
    for r in range(len(bounds) - 1):
        out[r] = b"".join(_encode_char(cp, codec, errors, replacement_char, op)
                          for cp in vals[bounds[r]:bounds[r + 1]])
    return out


@cpu_kernel("UnicodeTranscode", fresh=True)
def unicode_transcode(x, *, input_encoding, output_encoding, errors, replacement_char,
                      replace_control_characters, op):
    arr = np.asarray(x, dtype=object)
    codec = _CODECS[output_encoding]
    input_encoding = _resolve(input_encoding, op)
    out = np.empty(arr.shape, dtype=object)
    flat = out.reshape(-1)
    for i, v in enumerate(arr.reshape(-1).tolist()):
        chars, _ = _decode_one(_b(v), input_encoding, op, errors, replacement_char,
                               replace_control_characters, i)
        flat[i] = b"".join(_encode_char(cp, codec, errors, replacement_char, op)
                           for cp in chars)
    return out
