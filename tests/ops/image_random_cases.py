"""Registry-wide cases for the box, extra image-codec and stateless random ops:
`GRADIENT_CASES` merge into `test_gradient_registry.CASES` (and through it into the op
contract), `CONTRACT_CASES` are contract-only ``(inputs, build, options)`` cases for the
ops without a gradient, `VALUE_DEPENDENT` the op types whose output length depends on
input values."""

from __future__ import annotations

import io

import numpy as np

import flowgraph as tf
from flowgraph.ops.op_util import make_tensor

R = np.random.RandomState(12)
_VD = {"value_dependent": True}
SEED = np.array([3, 4], np.int64)

VALUE_DEPENDENT = {"NonMaxSuppressionV3", "NonMaxSuppressionWithOverlaps", "DecodeBmp",
                   "DecodeGif", "DecodeAndCropJpeg", "DecodeImage"}

# Box corners away from the sampling grid's integer positions (where bilinear
# interpolation has kinks) so that finite differences see a smooth function.
CROP_BOXES = np.array([[0.13, 0.21, 0.77, 0.64], [0.31, 0.12, 0.93, 0.88],
                       [0.55, 0.47, 0.18, 0.07]])


def _u(*shape):
    return R.uniform(-1.0, 1.0, size=shape)


GRADIENT_CASES = {
    "CropAndResize": [
        ([_u(2, 5, 6, 2), CROP_BOXES],
         lambda x, b: tf.image.crop_and_resize(x, b, [0, 1, 1], [3, 4])),
        ([_u(2, 5, 6, 2), CROP_BOXES],
         lambda x, b: tf.image.crop_and_resize(x, b, [1, 0, 1], [1, 2])),
        ([_u(2, 5, 6, 1)], lambda x: tf.image.crop_and_resize(
            x, CROP_BOXES, [0, 1, 1], [3, 2], method="nearest"))],
    "StatelessRandomGammaV2": [  # tf.random.stateless_gamma emits V3, as TF 2.15
        ([np.array([1.5, 3.0])], lambda a: make_tensor("StatelessRandomGammaV2", [
            tf.constant([3, 2]), tf.constant([1, 2], tf.int64), a]))],
}


def _f32(*shape):
    return R.uniform(0.0, 1.0, size=shape).astype(np.float32)


def _boxes():
    return np.array([[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, 10, 1, 11], [0, 10.1, 1, 11.1]],
                    np.float32)


_SCORES = np.array([0.9, 0.75, 0.6, 0.95], np.float32)


def _png_like(fmt: str, frames: int = 1) -> np.ndarray:
    from PIL import Image

    buf = io.BytesIO()
    imgs = [Image.fromarray(np.full((3, 5, 3), 60 * k, np.uint8)) for k in range(frames)]
    if frames > 1:
        imgs[0].save(buf, format=fmt, save_all=True, append_images=imgs[1:])
    else:
        imgs[0].save(buf, format=fmt)
    return np.array(buf.getvalue(), dtype=object)


def _jpeg() -> np.ndarray:
    return _png_like("JPEG")


def _sequence_examples() -> np.ndarray:
    out = []
    for steps in (2, 0, 3):
        se = tf.train.SequenceExample()
        for t in range(steps):
            se.feature_lists.feature_list["t"].feature.add().float_list.value.extend([t, -t])
            se.feature_lists.feature_list["w"].feature.add().bytes_list.value.extend(
                [b"x"] * (t + 1))
        out.append(se.SerializeToString())
    return np.array(out, dtype=object)


def _parse_sequences(s):
    _, seq, lengths = tf.io.parse_sequence_example(s, sequence_features={
        "t": tf.io.FixedLenSequenceFeature([2], tf.float32, allow_missing=True),
        "w": tf.io.VarLenFeature(tf.string)})
    return seq, lengths


CONTRACT_CASES = {
    "NonMaxSuppressionV3": [([_boxes(), _SCORES],
                             lambda b, s: tf.image.non_max_suppression(b, s, 3, 0.5), {})],
    # the raw op: tf.image.non_max_suppression_padded maps it over a batch (TF's graph)
    # when the boxes' rank is not 2
    "NonMaxSuppressionV4": [
        ([_boxes(), _SCORES], lambda b, s: tf.raw_ops.NonMaxSuppressionV4(
            boxes=b, scores=s, max_output_size=3, iou_threshold=0.5,
            score_threshold=float("-inf"), pad_to_max_output_size=True)[0], {}),
        ([_boxes(), _SCORES], lambda b, s: tf.raw_ops.NonMaxSuppressionV4(
            boxes=b, scores=s, max_output_size=3, iou_threshold=0.5,
            score_threshold=float("-inf"))[0], _VD)],
    "NonMaxSuppressionV5": [([_boxes(), _SCORES], lambda b, s: tf.image.
                             non_max_suppression_with_scores(b, s, 4, soft_nms_sigma=0.5), _VD)],
    "NonMaxSuppressionWithOverlaps": [
        ([np.array([[1, .7, .2], [.7, 1, .1], [.2, .1, 1]], np.float32),
          np.array([.5, .9, .3], np.float32)],
         lambda o, s: tf.image.non_max_suppression_overlaps(o, s, 3, 0.6), {})],
    "CombinedNonMaxSuppression": [
        ([_f32(2, 4, 1, 4), _f32(2, 4, 3)],
         lambda b, s: tf.image.combined_non_max_suppression(b, s, 2, 5), {}),
        ([_f32(1, 4, 3, 4), _f32(1, 4, 3)],
         lambda b, s: tf.image.combined_non_max_suppression(b, s, 1, 5, pad_per_class=True,
                                                            clip_boxes=False), {})],
    "CropAndResizeGradImage": [
        ([_u(3, 2, 2, 2)], lambda g: tf.raw_ops.CropAndResizeGradImage(
            grads=g, boxes=CROP_BOXES.astype(np.float32), box_ind=[0, 1, 0],
            image_size=[2, 4, 5, 2], T=g.dtype), {})],
    "CropAndResizeGradBoxes": [
        ([_u(3, 2, 2, 2), _u(2, 4, 5, 2), CROP_BOXES],
         lambda g, x, b: tf.raw_ops.CropAndResizeGradBoxes(grads=g, image=x, boxes=b,
                                                           box_ind=[0, 1, 0]), {})],
    "DrawBoundingBoxesV2": [
        ([np.zeros((2, 5, 6, 3), np.float32), _f32(2, 2, 4)],  # colors=None builds V1
         lambda x, b: tf.image.draw_bounding_boxes(x, b, colors=[[1.0, 1.0, 0.0, 1.0]]), {}),
        ([np.zeros((1, 4, 4, 1), np.float32), np.array([[[0.0, 0.0, 0.5, 0.5]]], np.float32)],
         lambda x, b: tf.image.draw_bounding_boxes(x, b, colors=[[0.5, 0.2, 0.1, 1.0]]), {})],
    "SampleDistortedBoundingBoxV2": [
        ([np.array([40, 50, 3], np.int32)], lambda s: tf.image.sample_distorted_bounding_box(
            s, [[[0.2, 0.2, 0.6, 0.6]]], seed=3, min_object_covered=0.5), {})],
    "ExtractGlimpseV2": [
        ([_u(2, 6, 7, 2), np.array([[0.0, 0.0], [0.5, -1.2]], np.float32)],
         lambda x, o: tf.raw_ops.ExtractGlimpseV2(input=x, size=[3, 2], offsets=o), {})],
    "DecodeBmp": [([_png_like("BMP")], lambda c: tf.image.decode_bmp(c), {})],
    "DecodeGif": [([_png_like("GIF", 2)], lambda c: tf.image.decode_gif(c), {})],
    "DecodeImage": [
        ([_png_like("GIF", 2)], lambda c: tf.image.decode_image(c), {}),
        ([_png_like("BMP")], lambda c: tf.image.decode_image(c, expand_animations=False), {}),
        ([_png_like("PNG")], lambda c: tf.image.decode_image(
            c, channels=1, dtype=tf.float32, expand_animations=False), {})],
    "EncodeJpeg": [([np.zeros((4, 6, 3), np.uint8)], lambda x: tf.image.encode_jpeg(x), {})],
    "EncodeJpegVariableQuality": [([np.zeros((4, 6, 3), np.uint8), np.array(70, np.int32)],
                                   lambda x, q: tf.raw_ops.EncodeJpegVariableQuality(
                                       images=x, quality=q), {})],
    "ExtractJpegShape": [([_jpeg()], lambda c: tf.image.extract_jpeg_shape(c), {})],
    "ParseSequenceExampleV2": [([_sequence_examples()], _parse_sequences, _VD)],
    "DecodeAndCropJpeg": [([_jpeg(), np.array([1, 1, 2, 3], np.int32)],
                           lambda c, w: tf.image.decode_and_crop_jpeg(c, w), {})],
    # The public functions emit the V2 ops (as TF 2.15; their cases are in
    # missing_names_cases.py); the V1 ops through tf.raw_ops.
    "StatelessRandomUniform": [
        ([SEED], lambda s: tf.raw_ops.StatelessRandomUniform(shape=[2, 3], seed=s), {}),
        ([SEED], lambda s: tf.raw_ops.StatelessRandomUniform(shape=[4], seed=s,
                                                             dtype=tf.float64), {})],
    "StatelessRandomNormal": [
        ([SEED], lambda s: tf.raw_ops.StatelessRandomNormal(shape=[3, 1], seed=s,
                                                            dtype=tf.float64), {})],
    "StatelessTruncatedNormal": [
        ([SEED], lambda s: tf.raw_ops.StatelessTruncatedNormal(shape=[5], seed=s), {})],
    "StatelessRandomUniformInt": [
        ([SEED], lambda s: tf.raw_ops.StatelessRandomUniformInt(
            shape=[2, 2], seed=s, minval=np.int64(0), maxval=np.int64(9)), {})],
    "StatelessRandomUniformFullInt": [
        ([SEED], lambda s: tf.raw_ops.StatelessRandomUniformFullInt(
            shape=[3, 2], seed=s, dtype=tf.int64), {})],
    "StatelessMultinomial": [
        ([_u(2, 4), SEED], lambda lg, s: tf.random.stateless_categorical(lg, 5, s), {})],
    "StatelessRandomPoisson": [
        ([np.array([1.0, 4.0])], lambda lam: tf.random.stateless_poisson(
            [3, 2], [1, 2], lam), {})],
    "StatelessRandomBinomial": [
        ([np.array([5.0, 9.0]), np.array([0.3, 0.8])],
         lambda n, p: tf.random.stateless_binomial([3, 2], [1, 2], n, p), {})],
    "StatelessParameterizedTruncatedNormal": [
        ([np.array([0.0, 1.0])], lambda m: tf.random.stateless_parameterized_truncated_normal(
            [3, 2], [1, 2], means=m, minvals=-1.0, maxvals=2.0), {})],
}
