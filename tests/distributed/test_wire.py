"""The wire format of flowgraph.distributed: raw buffers, validated sizes, no pickle."""

import pathlib
import re
import struct

import numpy as np
import pytest

from flowgraph.distributed import _wire, wire
from flowgraph.framework import errors

DISTRIBUTED = pathlib.Path(__file__).resolve().parents[2] / "flowgraph" / "distributed"


@pytest.mark.parametrize("value", [
    np.arange(12, dtype=np.float32).reshape(3, 4),
    np.array(3.5, dtype=np.float64),  # 0-d keeps its shape
    np.zeros((0, 5), dtype=np.int64),
    np.array([True, False]),
    np.array([1 + 2j], dtype=np.complex64),
    np.arange(6, dtype=np.uint8).reshape(2, 3)[:, ::2],  # not contiguous
])
def test_numeric_round_trip(value):
    header, tensors = wire.decode(wire.encode({"k": 1}, {"t": value}))
    assert header == {"k": 1}
    out = tensors["t"]
    assert out.dtype == value.dtype and out.shape == value.shape
    np.testing.assert_array_equal(out, value)


def test_received_arrays_view_the_message_without_copying():
    blob = wire.encode({}, {"t": np.arange(4, dtype=np.float32)})
    out = wire.decode(blob)[1]["t"]
    assert not out.flags.owndata and not out.flags.writeable


def test_string_tensors_round_trip():
    value = np.array([[b"a", b""], [b"\x00\xff", "caf\u00e9".encode()]], dtype=object)
    out = wire.decode(wire.encode({}, {"s": value}))[1]["s"]
    assert out.shape == (2, 2) and out.tolist() == value.tolist()


def test_truncated_and_padded_messages_are_data_loss():
    blob = wire.encode({}, {"t": np.arange(4, dtype=np.float32)})
    with pytest.raises(errors.DataLossError, match="does not fit"):
        wire.decode(blob[:-1])
    with pytest.raises(errors.DataLossError, match="follow the last tensor"):
        wire.decode(blob + b"\x00")
    with pytest.raises(errors.DataLossError, match="magic"):
        wire.decode(b"PK\x03\x04" + blob[4:])


def _message(table: bytes, body: bytes, head: bytes = b"{}") -> bytes:
    """A message with this tensor table, written by hand (as a faulty peer could)."""
    return wire.MAGIC + struct.pack("<II", len(head), len(table)) + head + table + body


def test_size_that_disagrees_with_shape_is_data_loss():
    blob = _message(b'[["t","<f4",[3],8]]', b"\x00" * 8)
    with pytest.raises(errors.DataLossError, match="needs 12 bytes; the message holds 8"):
        wire.decode(blob)


def test_malformed_tables_are_data_loss():
    for table, what in [(b'{"t": 1}', "not a list"), (b'[["t","<f4"]]', "not \\[name"),
                        (b'[["t","<f4",[-1],0]]', "invalid shape"),
                        (b'[["t","<q9",[1],8]]', "unknown dtype"), (b"[", "not JSON")]:
        with pytest.raises(errors.DataLossError, match=what):
            wire.decode(_message(table, b"\x00" * 8))


def test_object_dtypes_are_refused_both_ways():
    with pytest.raises(errors.DataLossError, match="non-numeric"):
        wire.decode(_message(b'[["t","|O",[1],8]]', b"\x00" * 8))
    with pytest.raises(errors.InvalidArgumentError, match="dtype"):
        wire.encode({}, {"t": np.array(["2020-01-01"], dtype="datetime64[D]")})


def test_no_pickle_anywhere_in_the_distributed_runtime():
    sources = sorted(DISTRIBUTED.glob("*.py"))
    assert sources
    forbidden = re.compile(r"\b(import|from)\s+(c?pickle|marshal|dill|cloudpickle|shelve)\b"
                           r"|\b(pickle|marshal)\.|\beval\(|\bexec\(")
    for path in sources:
        hit = forbidden.search(path.read_text())
        assert hit is None, f"{path.name} uses {hit.group(0)!r}"


@pytest.mark.parametrize("module", ["wire", "_wire", "rpc", "cluster_spec", "master",
                                    "device_setter", "server", "remote_session", "worker",
                                    "prefetch"])
def test_module_examples(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(f"flowgraph.distributed.{module}"),
                             optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0


@pytest.mark.parametrize("name", ["t", "a_longer_name", "n" * 37])
def test_decoded_arrays_are_aligned_whatever_the_header(name):
    """Buffers start at multiples of wire.ALIGN: arrays read from an aligned buffer are
    aligned (NumPy's slow paths take unaligned ones), for any header length."""
    tensors = {name: np.ones((3, 5), np.float32), "b": np.arange(3, dtype=np.int8),
               "c": np.ones(7, np.float64), "s": np.array(2.5, np.float32)}
    parts = wire.encode_parts({"pad": name}, tensors)
    buf = bytearray(b"".join(bytes(memoryview(p).cast("B")) for p in parts))
    _, out = wire.decode(memoryview(buf))
    for key, value in tensors.items():
        assert out[key].flags.aligned and out[key].ctypes.data % wire.ALIGN == (
            np.frombuffer(buf, np.uint8).ctypes.data % wire.ALIGN)
        np.testing.assert_array_equal(out[key], value)


def test_plain_arrays_and_numpy_scalars_take_the_c_path_and_encode_as_the_general_one(
        monkeypatch):
    tensors = {"w": np.arange(12, dtype=np.float32).reshape(3, 4), "step": np.int64(7),
               "flag": np.bool_(True), "z": np.complex64(1 + 2j), "empty": np.zeros((0, 3))}
    assert _wire.signature(tensors, False) is not None
    fast = wire.encode({"h": 1}, tensors)
    monkeypatch.setattr(wire, "signature", lambda tensors, bfloat16: None)
    assert wire.encode({"h": 1}, tensors) == fast
    _, out = wire.decode(fast)
    assert out["step"].shape == () and out["step"] == 7 and out["z"] == 1 + 2j
    assert out["empty"].shape == (0, 3)
    np.testing.assert_array_equal(out["w"], tensors["w"])


def test_the_c_layout_key_tells_layouts_apart_and_refuses_the_rest():
    key = _wire.signature
    a = np.zeros((2, 3), np.float32)
    assert key({"a": a}, False) == key({"a": np.ones((2, 3), np.float32)}, False)
    others = [{"b": a}, {"a": a.astype(np.float64)}, {"a": a.reshape(3, 2)},
              {"a": a.astype(">f4")}, {"a": a, "b": a}, {"a": a.reshape(6)}]
    keys = {key(o, False) for o in others} | {key({"a": a}, False)}
    assert len(keys) == len(others) + 1
    for refused in [{"a": [1.0]}, {"a": np.zeros((3, 4)).T}, {"a": np.array(["s"])},
                    {"a": np.array([b"x"], object)}, {1: a}]:
        assert key(refused, False) is None
    assert key({"a": a}, True) is None  # float32 under bfloat16: the general path
    assert key({"a": a.astype(np.float64)}, True) is not None


def test_decoded_views_follow_the_buffer_writability_and_keep_it_alive():
    message = wire.encode({}, {"a": np.arange(6, dtype=np.int32).reshape(2, 3)})
    _, out = wire.decode(message)
    assert not out["a"].flags.writeable
    _, out = wire.decode(bytearray(message))
    assert out["a"].flags.writeable
    del message
    np.testing.assert_array_equal(out["a"], np.arange(6).reshape(2, 3))


def test_a_header_with_trailing_bytes_is_data_loss():
    head, table = b'{"a":1} x', b"[]"
    message = wire.MAGIC + struct.pack("<II", len(head), len(table)) + head + table
    with pytest.raises(errors.DataLossError, match="header is not JSON"):
        wire.decode(message)
    padded = wire.MAGIC + struct.pack("<II", 12, 2) + b'{"a":1}     ' + table
    assert wire.decode(padded)[0] == {"a": 1}
