"""The one protobuf varint encoder (`flowgraph.framework.event_format.write_varint`), its
reader, and the length-delimited field every hand-written encoder builds on."""

from __future__ import annotations

import doctest

import pytest

from flowgraph.framework import errors, event_format
from flowgraph.framework.event_format import (
    DecodeError,
    read_varint,
    write_length_delimited,
    write_varint,
)


@pytest.mark.parametrize("n", [0, 1, 127, 128, 300, 2**31, 2**63 - 1, 2**64 - 1])
def test_a_varint_reads_back(n):
    data = write_varint(n)
    assert read_varint(b"xx" + data, 2) == (n, 2 + len(data))
    assert len(data) == max(1, -(-n.bit_length() // 7))


@pytest.mark.parametrize("n", [-1, -300, -(2**63)])
def test_a_negative_varint_is_its_64_bit_twos_complement(n):
    data = write_varint(n)
    assert len(data) == 10
    assert read_varint(data, 0) == (n + 2**64, 10)


def test_a_varint_wraps_at_64_bits():
    assert write_varint(2**64 + 5) == write_varint(5)


def test_a_cut_off_varint_is_a_data_loss_error():
    with pytest.raises(DecodeError, match="truncated varint") as info:
        read_varint(write_varint(300)[:1], 0)
    assert isinstance(info.value, errors.DataLossError)


def test_a_length_delimited_field_is_tag_length_payload():
    payload = bytes(200)
    data = write_length_delimited(5, payload)
    tag, pos = read_varint(data, 0)
    length, pos = read_varint(data, pos)
    assert (tag >> 3, tag & 7, length, data[pos:]) == (5, 2, 200, payload)


def test_the_module_examples_run():
    result = doctest.testmod(event_format)
    assert result.attempted > 0 and result.failed == 0
