"""tf.io.decode_csv and tf.io.parse_example / parse_single_example (hand-encoded
tf.train.Example protos)."""

import struct

import numpy as np
import pytest

import flowgraph as tf
import flowgraph.data
import flowgraph.io


# -- a tiny tf.train.Example encoder ----------------------------------------------------------
def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def encode_example(features: dict, packed: bool = True) -> bytes:
    """Example bytes for {name: list of bytes | floats | ints}."""
    entries = b""
    for name, values in features.items():
        if values and isinstance(values[0], bytes | str):
            lst = b"".join(_field(1, v.encode() if isinstance(v, str) else v) for v in values)
            feature = _field(1, lst)
        elif values and isinstance(values[0], float):
            if packed:
                lst = _field(1, struct.pack(f"<{len(values)}f", *values))
            else:
                lst = b"".join(_varint(1 << 3 | 5) + struct.pack("<f", v) for v in values)
            feature = _field(2, lst)
        else:
            if packed:
                lst = _field(1, b"".join(_varint(v) for v in values))
            else:
                lst = b"".join(_varint(1 << 3 | 0) + _varint(v) for v in values)
            feature = _field(3, lst)
        entries += _field(1, _field(1, name.encode()) + _field(2, feature))
    return _field(1, entries)


# -- decode_csv --------------------------------------------------------------------------------
def test_decode_csv_types_defaults_and_quotes(sess):
    records = tf.constant([['1,"a,b",2.5,7', '2,,,'], ['3,"say ""hi""",-1e2,9', '4,z,0.5,1']])
    a, b, c, d = tf.io.decode_csv(records, [[0], ["dflt"], [1.0], tf.constant([5], tf.int64)])
    assert [t.dtype for t in (a, b, c, d)] == [tf.int32, tf.string, tf.float32, tf.int64]
    assert a.shape.as_list() == [2, 2]
    va, vb, vc, vd = sess.run([a, b, c, d])
    np.testing.assert_array_equal(va, [[1, 2], [3, 4]])
    assert vb.tolist() == [[b"a,b", b"dflt"], [b'say "hi"', b"z"]]
    np.testing.assert_allclose(vc, [[2.5, 1.0], [-100.0, 0.5]])
    assert vc.dtype == np.float32 and vd.dtype == np.int64
    np.testing.assert_array_equal(vd, [[7, 5], [9, 1]])


def test_decode_csv_options(sess):
    recs = tf.constant(["1|NA|x|9", "2|3|y|8"])
    a, b = tf.io.decode_csv(recs, [[0.0], [-1.0]], field_delim="|", na_value="NA")
    with pytest.raises(tf.errors.InvalidArgumentError, match="Expect 2 fields but have 4"):
        sess.run(a)
    a, b, c = tf.io.decode_csv(recs, [[0.0], [-1.0], [0]], field_delim="|", na_value="NA",
                               select_cols=[0, 1, 3])
    va, vb, vc = sess.run([a, b, c])
    assert va.tolist() == [1.0, 2.0] and vb.tolist() == [-1.0, 3.0] and vc.tolist() == [9, 8]
    q, = tf.io.decode_csv(tf.constant(['"a"b']), [[""]], use_quote_delim=False)
    assert sess.run(q).tolist() == [b'"a"b']


def test_decode_csv_required_column_and_bad_values(sess):
    recs = tf.placeholder(tf.string, [None])
    a, b = tf.io.decode_csv(recs, [[0.0], []])
    assert b.dtype == tf.float32 and a.shape.as_list() == [None]
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Field 1 is required but missing in record 1"):
        sess.run(b, {recs: ["1,2", "3,"]})
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Field 0 in record 0 is not a valid float32: abc"):
        sess.run(a, {recs: ["abc,2"]})
    i, = tf.io.decode_csv(recs, [[0]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="not a valid int32"):
        sess.run(i, {recs: ["99999999999"]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="escaped by another quote"):
        sess.run(i, {recs: ['"1"2']})


def test_decode_csv_construction_errors():
    with pytest.raises(ValueError, match="one character"):
        tf.io.decode_csv(["a"], [[""]], field_delim="||")
    with pytest.raises(TypeError, match="dtype bool"):
        tf.io.decode_csv(["a"], [[True]])
    with pytest.raises(ValueError, match="select_cols"):
        tf.io.decode_csv(["a"], [[""], [""]], select_cols=[2, 1])
    with pytest.raises(ValueError, match="at most one element"):
        tf.io.decode_csv(["a"], [["x", "y"]])


def test_decode_csv_in_batched_dataset_map():
    lines = ["1,2.0", "3,4.0", "5,6.0"]
    ds = tf.data.Dataset.from_tensor_slices(lines).batch(2).map(
        lambda r: tuple(tf.io.decode_csv(r, [[0], [0.0]])))
    assert ds.output_shapes[0].as_list() == [None]
    nxt = ds.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        a, b = sess.run(nxt)
        assert a.tolist() == [1, 3] and b.tolist() == [2.0, 4.0]


# -- parse_example ---------------------------------------------------------------------------
def _examples():
    return [
        encode_example({"age": [31], "score": [0.5, 1.5], "tags": ["a", "b", "c"],
                        "seq": [1.0, 2.0, 3.0, 4.0]}),
        encode_example({"age": [-7], "score": [2.0, 3.0], "tags": ["d"], "seq": [5.0, 6.0]},
                       packed=False),
        encode_example({"score": [4.0, 5.0]}),
    ]


def test_parse_example_dense_sparse_and_sequence(sess):
    serialized = tf.placeholder(tf.string, [None])
    out = tf.io.parse_example(serialized, {
        "age": tf.io.FixedLenFeature([], tf.int64, default_value=-1),
        "score": tf.io.FixedLenFeature([2], tf.float32),
        "tags": tf.io.VarLenFeature(tf.string),
        "seq": tf.io.FixedLenSequenceFeature([2], tf.float32, allow_missing=True),
    })
    assert out["score"].shape.as_list() == [None, 2] and out["score"].dtype == tf.float32
    assert out["seq"].shape.as_list() == [None, None, 2]
    assert out["tags"].indices.shape.as_list() == [None, 2]
    v = sess.run(out, {serialized: _examples()})
    assert v["age"].tolist() == [31, -7, -1] and v["age"].dtype == np.int64
    np.testing.assert_allclose(v["score"], [[0.5, 1.5], [2.0, 3.0], [4.0, 5.0]])
    tags = v["tags"]
    assert tags.indices.tolist() == [[0, 0], [0, 1], [0, 2], [1, 0]]
    assert tags.values.tolist() == [b"a", b"b", b"c", b"d"]
    assert tags.dense_shape.tolist() == [3, 3]
    assert v["seq"].shape == (3, 2, 2)
    np.testing.assert_allclose(v["seq"][1], [[5.0, 6.0], [0.0, 0.0]])


def test_parse_example_errors(sess):
    serialized = tf.placeholder(tf.string, [None])
    out = tf.io.parse_example(serialized, {"age": tf.io.FixedLenFeature([], tf.int64)})
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"age .*required"):
        sess.run(out["age"], {serialized: [encode_example({"x": [1]})]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="Data types don't match"):
        sess.run(out["age"], {serialized: [encode_example({"age": [1.0]})]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="Values size: 2"):
        sess.run(out["age"], {serialized: [encode_example({"age": [1, 2]})]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="Could not parse example"):
        sess.run(out["age"], {serialized: [b"\x0a\x05ab"]})
    with pytest.raises(ValueError, match="allow_missing"):
        tf.io.parse_example(serialized, {"s": tf.io.FixedLenSequenceFeature([], tf.int64)})
    with pytest.raises(ValueError, match="not supported"):
        tf.io.parse_example(serialized, {"s": tf.io.FixedLenFeature([], tf.int32)})


def test_parse_single_example_in_dataset_map():
    records = [encode_example({"x": [1.0, 2.0], "y": [3]}),
               encode_example({"x": [4.0, 5.0], "y": [6]})]
    spec = {"x": tf.io.FixedLenFeature([2], tf.float32), "y": tf.io.FixedLenFeature([], tf.int64),
            "z": tf.io.VarLenFeature(tf.int64)}

    def parse(s):
        f = tf.io.parse_single_example(s, spec)
        return f["x"], f["y"], f["z"].dense_shape

    ds = tf.data.Dataset.from_tensor_slices(records).map(parse)
    assert ds.output_shapes[0].as_list() == [2] and ds.output_shapes[1].as_list() == []
    nxt = ds.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        x, y, zshape = sess.run(nxt)
        assert x.tolist() == [1.0, 2.0] and y == 3 and zshape.tolist() == [0]
        assert sess.run(nxt)[1] == 6


def test_parse_example_docstring_bytes_match_encoder():
    assert encode_example({"x": [1, 2, 3, 4]}) == (
        b"\n\x0f\n\r\n\x01x\x12\x08\x1a\x06\n\x04\x01\x02\x03\x04")
