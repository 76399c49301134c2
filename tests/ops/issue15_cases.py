"""Registry-wide cases for the lookup-table, string, image and sequence-parsing ops
(issue 15): `GRADIENT_CASES` merge into `test_gradient_registry.CASES` (and through it
into the op contract), `CONTRACT_CASES` are contract-only cases for the ops without a
gradient (`test_op_contract` wraps each ``(inputs, build, options)`` in its `Case`)."""

from __future__ import annotations

import os
import tempfile

import numpy as np

import flowgraph as tf

R = np.random.RandomState(15)
SETUP = "op_contract_setup"  # ops test_op_contract runs first (table initializers)


def _u(*shape):
    return R.uniform(-2.0, 2.0, size=shape)


def _strings(*items):
    return np.array([s.encode() for s in items], dtype=object)


GRADIENT_CASES = {
    "ResizeBilinear": [
        ([_u(2, 3, 4, 2)], lambda x: tf.image.resize_bilinear(x, [5, 3])),
        ([_u(1, 4, 3, 1)], lambda x: tf.image.resize_bilinear(x, [2, 5], align_corners=True))],
    "ResizeBicubic": [
        ([_u(2, 3, 4, 2)], lambda x: tf.image.resize_bicubic(x, [5, 3])),
        ([_u(1, 4, 3, 1)], lambda x: tf.image.resize_bicubic(x, [2, 5], align_corners=True,
                                                             half_pixel_centers=False)),
        ([_u(1, 4, 3, 1)], lambda x: tf.image.resize_bicubic(x, [6, 5],
                                                             half_pixel_centers=True))],
    "ResizeNearestNeighbor": [
        ([_u(2, 3, 4, 2)], lambda x: tf.image.resize_nearest_neighbor(x, [5, 7])),
        ([_u(1, 4, 3, 1)], lambda x: tf.image.resize_nearest_neighbor(
            x, [2, 5], align_corners=True))],
}


def _table(keys, values, default):
    table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(keys, values),
                                      default)
    tf.add_to_collection(SETUP, table.initializer)
    return table


_VOCAB = os.path.join(tempfile.mkdtemp(prefix="issue15_cases_"), "vocab.txt")
with open(_VOCAB, "w") as _f:
    _f.write("a\t1\nb\t2\nc\t3\n")


def _text_table(x):
    table = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
        _VOCAB, tf.string, 0, tf.int64, 1), -1)
    tf.add_to_collection(SETUP, table.initializer)
    return table.lookup(x)


def _png():
    from flowgraph.framework.event_format import encode_png

    return np.array(encode_png(np.arange(24, dtype=np.uint8).reshape(2, 4, 3)), dtype=object)


def _jpeg():
    import io

    from PIL import Image  # Pillow: flowgraph's image decoder

    buf = io.BytesIO()
    Image.fromarray(np.full((3, 5, 3), 90, np.uint8)).save(buf, format="JPEG")
    return np.array(buf.getvalue(), dtype=object)


_SEQ = tf.train.SequenceExample()
for _t in ([b"x"], [b"y", b"z"]):
    _SEQ.feature_lists.feature_list["w"].feature.add().bytes_list.value.extend(_t)
    _SEQ.feature_lists.feature_list["v"].feature.add().float_list.value.extend([1.0, 2.0])
_SEQ_BYTES = np.array(_SEQ.SerializeToString(), dtype=object)

_VD = {"value_dependent": True}
CONTRACT_CASES = {
    "HashTableV2": [([], lambda: _table(["a"], [1], -1).resource_handle, {})],
    "LookupTableImportV2": [([_strings("a", "b", "c")], lambda k: _table(
        k, tf.constant([1, 2, 3], tf.int64), -1).lookup(k), {})],
    "LookupTableFindV2": [([_strings("b", "zz", "a")], lambda k: _table(
        ["a", "b"], [1.5, 2.5], -1.0).lookup(k), {})],
    "LookupTableSizeV2": [([], lambda: _table(["a", "b"], [1, 2], 0).size(), {})],
    "InitializeTableFromTextFileV2": [([_strings("c", "q")], _text_table, {})],
    "StringSplit": [([_strings("a b  c", "", "d")], lambda s: tf.string_split(s), _VD)],
    "StringSplitV2": [([_strings("a,b,,c", "")], lambda s: tf.strings.split(s, sep=","), _VD)],
    "StringToNumber": [([_strings("1.5", "-2", "3e2")],
                        lambda s: tf.strings.to_number(s, tf.float64), {})],
    "StringJoin": [([_strings("a", "b"), _strings("x", "y")],
                    lambda a, b: tf.strings.join([a, "-", b], separator="+"), {})],
    "Substr": [([_strings("hello", "world")], lambda s: tf.strings.substr(s, 1, 3), {})],
    "StringLength": [([_strings("héllo", "")], lambda s: tf.strings.length(s), {})],
    "ResizeBilinearGrad": [([_u(2, 5, 3, 2), _u(2, 3, 4, 2)], lambda g, x: tf.gradients(
        tf.image.resize_bilinear(x, [5, 3]), x, grad_ys=tf.cast(g, tf.float32))[0], {})],
    "ResizeNearestNeighborGrad": [([_u(2, 5, 7, 2), _u(2, 3, 4, 2)], lambda g, x: tf.gradients(
        tf.image.resize_nearest_neighbor(x, [5, 7]), x, grad_ys=g)[0], _VD)],
    "ResizeBicubicGrad": [([_u(2, 5, 3, 2), _u(2, 3, 4, 2)], lambda g, x: tf.gradients(
        tf.image.resize_bicubic(x, [5, 3]), x, grad_ys=tf.cast(g, tf.float32))[0], {})],
    "ResizeArea": [([_u(2, 3, 4, 2)], lambda x: tf.image.resize_area(x, [2, 3]), {})],
    "DecodePng": [([_png()], lambda s: tf.image.decode_png(s, channels=3), _VD)],
    "DecodeJpeg": [([_jpeg()], lambda s: tf.image.decode_jpeg(s), _VD)],
    "EncodePng": [([np.zeros((2, 3, 3), np.uint8)], lambda x: tf.image.encode_png(x), {})],
    "ParseSequenceExampleV2": [([_SEQ_BYTES], lambda s: tf.io.parse_single_sequence_example(
        s, sequence_features={"w": tf.io.VarLenFeature(tf.string),
                              "v": tf.io.FixedLenSequenceFeature([2], tf.float32)})[1]["v"],
        _VD)],
}
