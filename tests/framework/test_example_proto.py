"""tf.train.Example / SequenceExample: bytes equal to TensorFlow's (hex strings recorded
with the tf-oracle from TensorFlow 2.15's protobuf messages), round trips, errors."""

from __future__ import annotations

import pytest

import flowgraph as tf
from flowgraph.framework.example_proto import DecodeError

# tf.train.Example(...).SerializeToString(deterministic=True), from TensorFlow.
TF_EXAMPLE = bytes.fromhex(
    "0a4d0a100a0162120b0a090a0261620a0363c3a90a050a016512000a150a01661210120e0a0c0000003f"
    "0000a0bf666646400a1b0a017812161a140a120102fbffffffffffffffff01808080808020")
TF_MUTATED = bytes.fromhex("0a130a110a0179120c120a0a080000803f00000040")
TF_SEQUENCE = bytes.fromhex(
    "0a0e0a0c0a036c656e12051a030a0102122c0a130a0176120e0a0c120a0a080000c03f000020400a150a"
    "017712100a060a040a0268690a060a040a02796f")


def _example():
    return tf.train.Example(features=tf.train.Features(feature={
        "x": tf.train.Feature(int64_list=tf.train.Int64List(value=[1, 2, -5, 2**40])),
        "f": tf.train.Feature(float_list=tf.train.FloatList(value=[0.5, -1.25, 3.1])),
        "b": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"ab", "cé".encode()])),
        "e": tf.train.Feature(),
    }))


def test_example_bytes_match_tensorflow():
    assert _example().SerializeToString() == TF_EXAMPLE
    assert _example().SerializeToString(deterministic=True) == TF_EXAMPLE


def test_mutation_through_read_sub_messages_matches_tensorflow():
    ex = tf.train.Example()
    ex.features.feature["y"].float_list.value.extend([1.0, 2.0])
    assert ex.SerializeToString() == TF_MUTATED
    se = tf.train.SequenceExample()
    se.context.feature["len"].int64_list.value.append(2)
    for w in (b"hi", b"yo"):
        se.feature_lists.feature_list["w"].feature.add().bytes_list.value.append(w)
    se.feature_lists.feature_list["v"].feature.add().float_list.value.extend([1.5, 2.5])
    assert se.SerializeToString() == TF_SEQUENCE


def test_parse_tensorflow_bytes():
    ex = tf.train.Example.FromString(TF_EXAMPLE)
    feat = ex.features.feature
    assert feat["x"].int64_list.value == [1, 2, -5, 2**40]
    assert feat["f"].float_list.value == pytest.approx([0.5, -1.25, 3.1], rel=1e-6)
    assert feat["b"].bytes_list.value == [b"ab", "cé".encode()]
    assert feat["e"].WhichOneof("kind") is None
    assert feat["x"].WhichOneof("kind") == "int64_list"
    other = tf.train.Example()
    assert other.ParseFromString(TF_EXAMPLE) == len(TF_EXAMPLE)
    assert other == ex
    se = tf.train.SequenceExample.FromString(TF_SEQUENCE)
    steps = se.feature_lists.feature_list["w"].feature
    assert [f.bytes_list.value for f in steps] == [[b"hi"], [b"yo"]]


def test_reading_does_not_set_fields():
    ex = tf.train.Example()
    assert not ex.HasField("features")
    _ = ex.features  # read only
    assert ex.SerializeToString() == b""
    assert not ex.HasField("features")
    f = tf.train.Feature(int64_list=tf.train.Int64List(value=[1]))
    f.float_list = tf.train.FloatList(value=[2.0])  # a oneof: the other member goes
    assert f.WhichOneof("kind") == "float_list"
    assert not f.HasField("int64_list")


def test_errors():
    with pytest.raises(TypeError, match="no field named 'nope'"):
        tf.train.Feature(nope=1)
    with pytest.raises(AttributeError, match="repeated field 'value'"):
        tf.train.Int64List().value = [1]
    with pytest.raises(DecodeError, match="Example"):
        tf.train.Example.FromString(b"\x0a\x05ab")
