"""Generate the raw_img GraphDef fixture under TensorFlow (run it with the tf-oracle's
Python: ``/tmp/tf-oracle-venv/bin/python tests/data/tf_formats/raw_img/make_raw_img.py``).

A small 2016-style conv net over an RGB image, built with TensorFlow's public TF1 API
where that API emits the op type (``tf.image.adjust_hue``, ``tf.nn.lrn``,
``tf.nn.space_to_depth``, ...) and with ``tf.raw_ops`` elsewhere:

    image -> RGBToHSV -> HSVToRGB -> AdjustHue -> AdjustSaturation -> AdjustContrastv2
          -> Conv2D -> BatchNormWithGlobalNormalization -> Relu -> LRN -> MaxPoolV2
          -> SpaceToDepth -> DepthToSpace -> SpaceToBatch -> BatchToSpace -> Dilation2D
          -> ExtractImagePatches -> logits
    plus NonMaxSuppressionV2 / NonMaxSuppression on fixed boxes and the data-format maps.

``BatchNormWithGlobalNormalization`` was deprecated at GraphDef version 9, so TensorFlow
no longer builds it: the script adds its node to the GraphDef by hand and marks the
GraphDef as written by producer version 8, as the frozen graphs of that time were.
Writes ``graph.pb`` (GraphDef bytes) and ``expected.npz`` (the feed and TF's outputs).

A second graph, ``speech.pb`` / ``speech_expected.npz``, is the speech-commands front end
(``DecodeWav`` -> ``AudioSpectrogram`` -> ``Mfcc`` -> a dense layer) fed WAV bytes, with
``DecodePaddedRaw``, ``FusedPadConv2D`` and ``FusedResizeAndPadConv2D`` beside it (the
fused convolutions on one image: TensorFlow's kernels misread later images of a batch).
"""

import os

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()
HERE = os.path.dirname(os.path.abspath(__file__))
R = np.random.RandomState(17)


def build():
    image = tf.placeholder(tf.float32, [2, 8, 8, 3], name="image")
    hsv = tf.image.rgb_to_hsv(image)
    rgb = tf.image.hsv_to_rgb(hsv)
    x = tf.image.adjust_hue(rgb, 0.15)
    x = tf.image.adjust_saturation(x, 1.3)
    x = tf.image.adjust_contrast(x, 1.2)
    w = tf.constant(R.standard_normal((3, 3, 3, 8)).astype(np.float32) * 0.3, name="conv1/w")
    conv = tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME", name="conv1/Conv2D")
    # a stand-in, replaced by BatchNormWithGlobalNormalization in the GraphDef below
    bn = tf.identity(conv, name="conv1/bn")
    for name, value in (("mean", R.standard_normal(8) * 0.1),
                        ("variance", R.uniform(0.5, 1.5, 8)),
                        ("beta", R.standard_normal(8) * 0.1),
                        ("gamma", R.uniform(0.8, 1.2, 8))):
        tf.constant(value.astype(np.float32), name=f"conv1/{name}")
    relu = tf.nn.relu(bn, name="conv1/Relu")
    norm = tf.nn.lrn(relu, 2, 1.0, 2e-5, 0.75, name="norm1")
    pool = tf.raw_ops.MaxPoolV2(input=norm, ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1],
                                padding="SAME", name="pool1")
    s2d = tf.nn.space_to_depth(pool, 2, name="s2d")
    d2s = tf.nn.depth_to_space(s2d, 2, name="d2s")
    s2b = tf.raw_ops.SpaceToBatch(input=d2s, paddings=[[1, 1], [0, 0]], block_size=2,
                                  name="s2b")
    b2s = tf.raw_ops.BatchToSpace(input=s2b, crops=[[1, 1], [0, 0]], block_size=2,
                                  name="b2s")
    dil = tf.nn.dilation2d(b2s, tf.constant(R.uniform(0, 0.2, (2, 2, 8)).astype(np.float32)),
                           [1, 1, 1, 1], [1, 1, 1, 1], "SAME")
    patches = tf.image.extract_patches(dil, [1, 2, 2, 1], [1, 2, 2, 1], [1, 1, 1, 1], "VALID")
    logits = tf.reduce_mean(patches, axis=[1, 2], name="logits")
    boxes = tf.constant([[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, 10, 1, 11], [0, 9.9, 1, 11]],
                        tf.float32)
    scores = tf.reduce_max(logits[:, :4], axis=0)
    tf.raw_ops.NonMaxSuppressionV2(boxes=boxes, scores=scores, max_output_size=4,
                                   iou_threshold=0.5, name="nms")
    tf.raw_ops.NonMaxSuppression(boxes=boxes, scores=scores, max_output_size=2,
                                 iou_threshold=0.5, name="nms_v1")
    tf.raw_ops.DataFormatVecPermute(x=tf.shape(image), name="shape_nchw")
    tf.raw_ops.DataFormatDimMap(x=[-1, 1, 2], name="axes_nchw")
    return tf.get_default_graph().as_graph_def()


FETCHES = ["RGBToHSV:0", "adjust_contrast/Identity:0", "conv1/Relu:0", "norm1:0",
           "pool1:0", "s2d:0", "b2s:0", "Dilation2D:0", "ExtractImagePatches:0",
           "logits:0", "nms:0", "nms_v1:0", "shape_nchw:0", "axes_nchw:0"]


def main():
    with tf.Graph().as_default():
        graph_def = build()
    for node in graph_def.node:
        if node.name == "conv1/bn":
            node.op = "BatchNormWithGlobalNormalization"
            del node.input[:]
            node.input.extend(["conv1/Conv2D", "conv1/mean", "conv1/variance", "conv1/beta",
                               "conv1/gamma"])
            node.attr["variance_epsilon"].f = 0.001
            node.attr["scale_after_normalization"].b = True
    graph_def.versions.producer = 8
    image = R.uniform(0, 1, (2, 8, 8, 3)).astype(np.float32)
    with tf.Graph().as_default() as g:
        tf.import_graph_def(graph_def, name="")
        with tf.Session(graph=g) as sess:
            values = sess.run(FETCHES, {"image:0": image})
    with open(os.path.join(HERE, "graph.pb"), "wb") as f:
        f.write(graph_def.SerializeToString())
    np.savez(os.path.join(HERE, "expected.npz"), image=image,
             **{name.replace("/", "__").replace(":", "_"): v
                for name, v in zip(FETCHES, values)})
    print({n: np.shape(v) for n, v in zip(FETCHES, values)})


SPEECH_FETCHES = ["spectrogram:0", "mfcc:0", "logits:0", "padded_raw:0", "pad_conv:0",
                  "resize_pad_conv:0"]


def speech():
    with tf.Graph().as_default() as g:
        wav = tf.placeholder(tf.string, [], name="wav_data")
        audio, rate = tf.audio.decode_wav(wav, desired_channels=1, desired_samples=2000)
        spec = tf.raw_ops.AudioSpectrogram(input=audio, window_size=160, stride=80,
                                           magnitude_squared=True, name="spectrogram")
        mfcc = tf.raw_ops.Mfcc(spectrogram=spec, sample_rate=rate, dct_coefficient_count=13,
                               name="mfcc")
        flat = tf.reshape(mfcc, [1, -1])
        w = tf.constant(R.standard_normal((24 * 13, 4)).astype(np.float32) * 0.05)
        tf.matmul(flat, w, name="logits")
        tf.raw_ops.DecodePaddedRaw(input_bytes=tf.constant([b"\x01\x02\x03", b"\x7f"]),
                                   fixed_length=4, out_type=tf.int16, name="padded_raw")
        image = tf.reshape(spec[:, :16, :16], [1, 16, 16, 1])
        f = tf.constant(R.standard_normal((3, 3, 1, 2)).astype(np.float32))
        tf.raw_ops.FusedPadConv2D(input=image, paddings=[[0, 0], [1, 1], [1, 1], [0, 0]],
                                  filter=f, mode="REFLECT", strides=[1, 2, 2, 1],
                                  padding="VALID", name="pad_conv")
        tf.raw_ops.FusedResizeAndPadConv2D(input=image, size=[9, 7],
                                           paddings=[[0, 0], [2, 2], [1, 1], [0, 0]], filter=f,
                                           mode="SYMMETRIC", strides=[1, 1, 1, 1],
                                           padding="SAME", name="resize_pad_conv")
        samples = (np.sin(np.arange(2000) / 5.0) * 0.5).astype(np.float32).reshape(2000, 1)
        wav_bytes = tf.Session().run(tf.audio.encode_wav(samples, 16000))
        with tf.Session() as sess:
            values = sess.run(SPEECH_FETCHES, {wav: wav_bytes})
        graph_def = g.as_graph_def()
    with open(os.path.join(HERE, "speech.pb"), "wb") as f:
        f.write(graph_def.SerializeToString())
    np.savez(os.path.join(HERE, "speech_expected.npz"),
             wav=np.frombuffer(wav_bytes, np.uint8),
             **{name.split(":")[0]: v for name, v in zip(SPEECH_FETCHES, values)})
    print({n: np.shape(v) for n, v in zip(SPEECH_FETCHES, values)})


if __name__ == "__main__":
    main()
    speech()
