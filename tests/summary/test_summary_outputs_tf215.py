"""What TensorBoard and checking scripts read back from summaries, as TensorFlow 2.15
(`tf.compat.v1`) gives it: the values below were read from TensorFlow itself.

Covers `str(summary)` (protobuf's upb printer: declaration order, %.6g/%.17g numbers),
proto3 bytes (fields at their default left out), and sub-messages reached through an
unset field (``value.metadata.plugin_data.plugin_name = ...``) landing in their parent.
"""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf


def _summary(sess, t, feed=None):
    return tf.Summary.FromString(sess.run(t, feed))


def test_histogram_of_an_empty_tensor_leaves_zero_fields_out():
    # HistogramSummary: HistogramProto is proto3, so num/sum/sum_squares at 0 are not
    # written; min/max are +-DBL_MAX and one bucket [DBL_MAX] of count 0.
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.placeholder(tf.float32, [None])
        data = sess.run(tf.summary.histogram("h", x), {x: np.zeros([0], np.float32)})
    assert data == (b"\n+\n\x01h*&\t\xff\xff\xff\xff\xff\xff\xef\x7f\x11\xff\xff\xff\xff"
                    b"\xff\xff\xef\xff2\x08\xff\xff\xff\xff\xff\xff\xef\x7f:\x08\x00\x00"
                    b"\x00\x00\x00\x00\x00\x00")
    assert str(tf.Summary.FromString(data)) == (
        'value {\n  tag: "h"\n  histo {\n    min: 1.7976931348623157e+308\n'
        '    max: -1.7976931348623157e+308\n    bucket_limit: 1.7976931348623157e+308\n'
        '    bucket: 0\n  }\n}\n')


def test_histogram_text_prints_doubles_as_upb_does():
    # str() of a HistogramProto: %.15g where it reads back, else %.17g.
    h = tf.HistogramProto(bucket_limit=[4.636194617418625, 1e15, 0.1, -0.0, 123456789012.0,
                                        2.0, float("inf")])
    assert str(h) == ("bucket_limit: 4.6361946174186253\nbucket_limit: 1e+15\n"
                      "bucket_limit: 0.1\nbucket_limit: -0\nbucket_limit: 123456789012\n"
                      "bucket_limit: 2\nbucket_limit: inf\n")
    assert str(tf.HistogramProto(min=0.0)) == ""  # proto3: +0.0 is not printed


def test_simple_value_text_prints_floats_as_upb_does():
    # float fields: %.6g, or %.9g where that does not read back as the same float32.
    out = [str(tf.Summary.Value(simple_value=v)).strip()
           for v in (1.2345678, 16777216.0, 1e20, 0.1, 3.0, 123456.7, float("nan"),
                     -float("inf"), 0.0)]
    assert out == ["simple_value: 1.23456776", "simple_value: 16777216",
                   "simple_value: 1e+20", "simple_value: 0.1", "simple_value: 3",
                   "simple_value: 123456.703", "simple_value: nan", "simple_value: -inf",
                   "simple_value: 0"]


def test_text_summary_prints_metadata_before_tensor():
    # TextSummary (TensorSummaryV2 with plugin "text"): Summary.Value's declaration order
    # is node_name, tag, metadata, then the value; the bytes keep field-number order.
    with tf.Graph().as_default(), tf.Session() as sess:
        data = sess.run(tf.summary.text("x", tf.constant("a")))
    assert data == b"\n\x16\n\x01xB\x07\x08\x07\x12\x00B\x01aJ\x08\n\x06\n\x04text"
    assert str(tf.Summary.FromString(data)) == (
        'value {\n  tag: "x"\n  metadata {\n    plugin_data {\n      plugin_name: "text"\n'
        '    }\n  }\n  tensor {\n    dtype: DT_STRING\n    tensor_shape {\n    }\n'
        '    string_val: "a"\n  }\n}\n')


@pytest.mark.parametrize("engine", ["protobuf", "hand codec"])
def test_setting_a_field_of_an_unset_sub_message_sets_it_in_the_parent(engine, monkeypatch):
    if engine == "hand codec":
        monkeypatch.setenv("FLOWGRAPH_PROTOBUF", "0")
    # protobuf: v.tensor.dtype = 1 makes v.tensor present (and v.metadata likewise).
    s = tf.Summary()
    v = s.value.add()
    v.tensor.dtype = 1
    v.metadata.summary_description = "d"
    v.tag = "t"
    v.node_name = "n"
    assert s.SerializeToString() == b"\n\x0f\n\x01t:\x01nB\x02\x08\x01J\x03\x1a\x01d"
    assert str(s) == ('value {\n  node_name: "n"\n  tag: "t"\n  metadata {\n'
                      '    summary_description: "d"\n  }\n  tensor {\n    dtype: DT_FLOAT\n'
                      '  }\n}\n')


@pytest.mark.parametrize("engine", ["protobuf", "hand codec"])
def test_growing_a_repeated_field_of_an_unset_sub_message_attaches_it(engine, monkeypatch):
    if engine == "hand codec":
        monkeypatch.setenv("FLOWGRAPH_PROTOBUF", "0")
    v = tf.Summary.Value(tag="h")
    v.histo.bucket_limit.append(2.0)
    v.histo.bucket.extend([1.0])
    v.metadata.plugin_data.plugin_name = "histograms"
    v.tensor.tensor_shape.dim.add(size=3)
    back = tf.Summary.Value.FromString(v.SerializeToString())
    assert list(back.histo.bucket_limit) == [2.0] and list(back.histo.bucket) == [1.0]
    assert back.metadata.plugin_data.plugin_name == "histograms"
    assert back.tensor.tensor_shape.dim[0].size == 3
    untouched = tf.Summary.Value(tag="u")
    _ = untouched.histo.min  # only reading leaves it unset
    assert not untouched.HasField("histo") and untouched.WhichOneof("value") is None


def test_event_and_summary_bytes_are_proto3():
    # Event/Summary are proto3: step=0, wall_time=0.0 are not written; simple_value=0.0
    # is (a oneof member), and -0.0 is not +0.0.
    assert tf.Event(step=0, wall_time=0.0).SerializeToString() == b""
    assert tf.Summary(value=[tf.Summary.Value(tag="a", simple_value=0.0)]) \
        .SerializeToString() == b"\n\x08\n\x01a\x15\x00\x00\x00\x00"
    assert tf.HistogramProto(min=0.0, max=-0.0).SerializeToString() == \
        b"\x11\x00\x00\x00\x00\x00\x00\x00\x80"
    e = tf.Event(step=3)
    e.step = 0
    assert str(e) == "" and e.step == 0


def test_histogram_values_and_buckets_of_a_mixed_tensor():
    # HistogramSummary over TF's default buckets (±1e-12 * 1.1**k, 0, DBL_MAX).
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.placeholder(tf.float32, [None])
        h = tf.summary.histogram("weights", x)
        vals = np.array([0.0, 1.5, -2.25, 3.0, 1e-13, 1e5, -7.0], np.float32)
        histo = _summary(sess, h, {x: vals}).value[0].histo
    assert (histo.min, histo.max, histo.num, histo.sum) == (-7.0, 100000.0, 7.0, 99995.25)
    assert histo.sum_squares == 10000000065.3125
    np.testing.assert_allclose(histo.bucket_limit, [
        -7.466637793298873, -6.7878525393626115, -2.379100905625872, -2.1628190051144287,
        0.0, 1e-12, 1.47723448201245, 1.624957930213695, 2.8787120958073054,
        3.1665833053880363, 93540.76446483507, 102894.84091131858, 1.7976931348623157e+308],
        rtol=1e-15)
    assert list(histo.bucket) == [0.0, 1.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 1.0, 0.0,
                                  1.0, 0.0]


def _gradient_image():
    return (np.add.outer(np.arange(4) * 3, np.arange(5) * 2)[..., None]
            + np.arange(3) * 40).astype(np.uint8)


def test_png_bytes_match_libpngs_filters_and_zlib_header():
    # EncodePng / ImageSummary: libpng picks a filter per row (min sum of |signed byte|),
    # deflates with Z_FILTERED, and shrinks the zlib header's window to the data.
    noise = np.random.RandomState(3).randint(0, 256, (3, 4, 2)).astype(np.uint8)
    with tf.Graph().as_default(), tf.Session() as sess:
        got = sess.run([tf.image.encode_png(_gradient_image()), tf.image.encode_png(noise)])
    assert got[0].hex() == (
        "89504e470d0a1a0a0000000d4948445200000005000000040802000000c951621700000014494441"
        "5408996364d0086042022ccccccca4f0012d5a0101d9ce97140000000049454e44ae426082")
    assert got[1].hex() == (
        "89504e470d0a1a0a0000000d49484452000000040000000308040000001efd664d00000024494441"
        "54089963c89af1b379c7090651e613eee71f5808f09931ff8c75e039b09f471400a0cc0aa6f0e71a"
        "880000000049454e44ae426082")


def test_float16_image_is_scaled_in_float16():
    # ImageSummary on half: scale = half(255 / max) = 36.4375, so 7 * scale -> 255
    # (float32 arithmetic would give 254).
    with tf.Graph().as_default(), tf.Session() as sess:
        img = tf.constant(np.arange(8, dtype=np.float16).reshape(1, 2, 4, 1))
        png = _summary(sess, tf.summary.image("half", img)).value[0].image
        pixels = sess.run(tf.image.decode_png(png.encoded_image_string))
    assert png.encoded_image_string.hex() == (
        "89504e470d0a1a0a0000000d49484452000000040000000208000000005ac322bf00000012494441"
        "5408996364505151659ca8aaa20a000633016fb28bab970000000049454e44ae426082")
    assert pixels.reshape(-1).tolist() == [0, 36, 72, 109, 145, 182, 218, 255]
