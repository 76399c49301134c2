"""CRC-32C (flowgraph/framework/checksum.py): the native library, the NumPy lanes and the
Python table agree on every size and input type, and every file format uses it."""

from __future__ import annotations

import struct
import sys

import numpy as np
import pytest

from flowgraph.framework import checksum, event_format
from flowgraph.io import tf_record

SIZES = [0, 1, 7, 9, 4095, (1 << 16) - 1, 1 << 16, (1 << 16) + 17, 3 * (1 << 16) + 5]


def _data(n: int) -> bytes:
    return np.random.default_rng(n).integers(0, 256, n, dtype=np.uint8).tobytes()


def test_known_vectors():
    # RFC 3720 (iSCSI) check value and TensorFlow's masked CRC of the empty string
    for fn in (checksum.crc32c, checksum.crc32c_python, checksum.crc32c_numpy):
        assert fn(b"123456789") == 0xE3069283
        assert fn(b"") == 0
        assert fn(bytes(32)) == 0x8A9136AA
    assert checksum.masked_crc32c(b"") == 0xA282EAD8


@pytest.mark.parametrize("n", SIZES)
def test_numpy_lanes_match_the_python_table(n):
    data = _data(n)
    assert checksum.crc32c_numpy(data) == checksum.crc32c_python(data)


@pytest.mark.parametrize("n", SIZES)
def test_native_library_matches_python(n):
    pytest.importorskip("google_crc32c")
    assert checksum.crc32c_backend() in ("google-crc32c", "crc32c")
    data = _data(n)
    assert checksum.crc32c(data) == checksum.crc32c_python(data)


def test_google_crc32c_itself_matches_python():
    """Whatever the module picked, the ``crc`` extra's library agrees with the table."""
    google_crc32c = pytest.importorskip("google_crc32c")
    for n in SIZES:
        data = _data(n)
        assert google_crc32c.value(data) == checksum.crc32c_python(data)


def test_bytes_like_inputs():
    data = _data(1000)
    expected = checksum.crc32c_python(data)
    for value in (bytearray(data), memoryview(data), np.frombuffer(data, np.uint8)):
        assert checksum.crc32c(value) == expected
        assert checksum.crc32c_numpy(value) == expected
        assert checksum.crc32c_python(value) == expected
    words = np.frombuffer(data, np.uint32)  # a non-byte memoryview is read as its bytes
    assert checksum.crc32c(words) == expected


def test_without_a_library_the_fallback_is_used(monkeypatch):
    monkeypatch.setitem(sys.modules, "google_crc32c", None)  # import raises ImportError
    monkeypatch.setitem(sys.modules, "crc32c", None)
    assert checksum._native() is None


def test_every_format_uses_the_one_crc():
    data = _data(5000)
    masked = checksum.masked_crc32c(data)
    crc = checksum.crc32c_python(data)
    assert masked == (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF
    assert tf_record.masked_crc32c(data) == masked
    assert event_format.masked_crc32c(data) == masked
    assert tf_record.crc32c_backend() == checksum.crc32c_backend()
    record = event_format.frame_record(data)
    assert record == tf_record.encode_record(data)
    assert struct.unpack("<I", record[-4:])[0] == masked
