"""Registry-wide cases for the image, layout and TF1 normalization op types of
`flowgraph/ops/image_raw_ops.py` and `flowgraph/ops/nn_layout_ops.py`: `GRADIENT_CASES`
merge into `test_gradient_registry.CASES`, `CONTRACT_CASES` are contract-only
``(inputs, build, options)`` cases, `NO_GRADIENT_LIKE_TENSORFLOW` the op types that
TensorFlow registers no gradient for (tf.gradients raises LookupError)."""

from __future__ import annotations

import numpy as np

import flowgraph as tf
from flowgraph.ops.op_util import make_op, make_tensor

R = np.random.RandomState(2017)
_VD = {"value_dependent": True}

VALUE_DEPENDENT = {"NonMaxSuppression", "NonMaxSuppressionV2"}

NO_GRADIENT_LIKE_TENSORFLOW = frozenset({
    "LRNGrad", "BatchNormWithGlobalNormalizationGrad", "MaxPoolGradGradV2",
    "DataFormatDimMap", "DataFormatVecPermute", "Dilation2DBackpropInput",
    "Dilation2DBackpropFilter", "AdjustHue", "AdjustSaturation", "AdjustContrast",
    "AdjustContrastv2", "AudioSpectrogram", "Mfcc", "Conv2DBackpropInputV2",
    "Conv2DBackpropFilterV2", "Conv3DBackpropInput", "Conv3DBackpropFilter",
    "MaxPoolGradGradWithArgmax", "FusedPadConv2D", "FusedResizeAndPadConv2D",
    "ScaleAndTranslateGrad", "Conv", "ResizeArea", "ResizeBilinearGrad",
    "ResizeNearestNeighborGrad", "ResizeBicubicGrad", "CropAndResizeGradImage",
    "CropAndResizeGradBoxes", "DrawBoundingBoxesV2", "ExtractGlimpseV2",
    "NonMaxSuppressionV5", "CombinedNonMaxSuppression"})


def _x(*shape):
    return R.standard_normal(shape)


def _distinct(*shape):
    """Values far enough apart that a max or a hue sector does not flip under the finite
    difference step."""
    return (R.permutation(int(np.prod(shape))).reshape(shape) + R.uniform(0.1, 0.3, shape)) \
        / np.prod(shape)


def _bn(scale: bool):
    def build(t, m, v, beta, gamma):
        return make_tensor("BatchNormWithGlobalNormalization", [t, m, v + 1.0, beta, gamma],
                           {"variance_epsilon": 0.01, "scale_after_normalization": scale})
    return build


def _pool_v2(x):
    return make_tensor("MaxPoolV2", [x, tf.constant([1, 2, 2, 1]), tf.constant([1, 2, 1, 1])],
                       {"padding": "SAME"})


def _pool_grad_v2(x, dy):
    y = tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 1, 1], "SAME")
    return make_tensor("MaxPoolGradV2", [x, y, dy, tf.constant([1, 2, 2, 1]),
                                         tf.constant([1, 2, 1, 1])], {"padding": "SAME"})


def _dilation_op(op_type):
    def build(x, f, dy):
        return make_tensor(op_type, [x, f, dy], {"strides": [1, 1, 2, 1],
                                                 "rates": [1, 2, 1, 1], "padding": "SAME"})
    return build


def _conv_v2(op_type):
    def build(x, f, dy):
        return make_tensor(op_type, [x, f, dy], {"strides": [1, 2, 1, 1], "padding": "SAME"})
    return build


def _conv3d_v1(op_type):
    def build(x, f, dy):
        return make_tensor(op_type, [x, f, dy], {"strides": [1] * 5, "padding": "VALID"})
    return build


def _grad_grad_argmax(x, grad):
    _, argmax = tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    return tf.raw_ops.MaxPoolGradGradWithArgmax(input=x, grad=grad, argmax=argmax,
                                                ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1],
                                                padding="VALID")


_IMG = R.uniform(0.0, 1.0, (2, 3, 4, 3))
_BOXES = np.array([[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, 10, 1, 11]], np.float32)
_SCORES = np.array([0.9, 0.8, 0.7], np.float32)

GRADIENT_CASES = {
    "LRN": [([_x(2, 2, 3, 5)], lambda x: tf.nn.lrn(x, 2, 1.5, 0.3, 0.75))],
    "SpaceToDepth": [([_x(1, 4, 2, 3)], lambda x: tf.nn.space_to_depth(x, 2))],
    "DepthToSpace": [([_x(1, 2, 3, 8)], lambda x: tf.nn.depth_to_space(x, 2))],
    "SpaceToBatch": [([_x(1, 4, 2, 3)], lambda x: tf.raw_ops.SpaceToBatch(
        input=x, paddings=[[0, 0], [1, 1]], block_size=2))],
    "BatchToSpace": [([_x(8, 2, 1, 3)], lambda x: tf.raw_ops.BatchToSpace(
        input=x, crops=[[0, 1], [1, 0]], block_size=2))],
    "BatchNormWithGlobalNormalization": [
        ([_x(2, 2, 3, 4), _x(4), R.uniform(0.5, 1, 4), _x(4), _x(4)], _bn(True)),
        ([_x(2, 2, 3, 4), _x(4), R.uniform(0.5, 1, 4), _x(4), _x(4)], _bn(False))],
    "MaxPoolV2": [([_distinct(2, 4, 3, 2)], _pool_v2)],
    "MaxPoolGradV2": [([_distinct(2, 4, 3, 2), _x(2, 2, 3, 2)], _pool_grad_v2)],
    "Dilation2D": [([_distinct(2, 4, 5, 2), _distinct(2, 3, 2)], lambda x, f: tf.nn.dilation2d(
        x, f, [1, 1, 2, 1], [1, 2, 1, 1], "SAME"))],
    "RGBToHSV": [([_distinct(2, 3, 3)], tf.image.rgb_to_hsv)],
    "ExtractImagePatches": [([_x(2, 5, 4, 2)], lambda x: tf.image.extract_patches(
        x, [1, 3, 2, 1], [1, 2, 1, 1], [1, 1, 2, 1], "SAME"))],
    "ScaleAndTranslate": [([_x(2, 5, 4, 2)], lambda x: tf.raw_ops.ScaleAndTranslate(
        images=x, size=[3, 7], scale=[0.6, 1.75], translation=[0.2, -0.5]))],
    "ExtractVolumePatches": [([_x(1, 3, 4, 3, 2)], lambda x: tf.extract_volume_patches(
        x, [1, 2, 2, 2, 1], [1, 1, 2, 1, 1], "SAME"))],
}

CONTRACT_CASES = {
    "LRNGrad": [([_x(2, 2, 3, 5), _x(2, 2, 3, 5), _x(2, 2, 3, 5)], lambda g, x, y: make_tensor(
        "LRNGrad", [g, x, y], {"depth_radius": 1}), {})],
    "MaxPoolGradGradV2": [([_distinct(2, 4, 3, 2), _x(2, 4, 3, 2)], lambda x, g: make_tensor(
        "MaxPoolGradGradV2", [x, tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 1, 1], "SAME"), g,
                              tf.constant([1, 2, 2, 1]), tf.constant([1, 2, 1, 1])],
        {"padding": "SAME"}), {})],
    "BatchNormWithGlobalNormalizationGrad": [
        ([_x(2, 2, 3, 4), _x(4), R.uniform(0.5, 1, 4), _x(4), _x(2, 2, 3, 4)],
         lambda t, m, v, g, dy: make_op(
             "BatchNormWithGlobalNormalizationGrad", [t, m, v, g, dy],
             {"variance_epsilon": 0.01, "scale_after_normalization": True}).outputs, {})],
    "DataFormatDimMap": [([np.array([-4, -1, 0, 3], np.int32)], lambda x: tf.raw_ops.
                          DataFormatDimMap(x=x), {}),
                         ([np.array([[1, 4]], np.int64)], lambda x: tf.raw_ops.
                          DataFormatDimMap(x=x, src_format="NDHWC", dst_format="NCDHW"), {})],
    "DataFormatVecPermute": [([np.array([1, 2, 3, 4], np.int32)], lambda x: tf.raw_ops.
                              DataFormatVecPermute(x=x), {}),
                             ([np.arange(8, dtype=np.int64).reshape(4, 2)], lambda x: tf.
                              raw_ops.DataFormatVecPermute(x=x, src_format="NCHW",
                                                           dst_format="NHWC"), {})],
    "Dilation2DBackpropInput": [([_x(2, 4, 5, 2), _x(2, 3, 2), _x(2, 4, 3, 2)],
                                 _dilation_op("Dilation2DBackpropInput"), {})],
    "Dilation2DBackpropFilter": [([_x(2, 4, 5, 2), _x(2, 3, 2), _x(2, 4, 3, 2)],
                                  _dilation_op("Dilation2DBackpropFilter"), {})],
    "HSVToRGB": [([_IMG], tf.image.hsv_to_rgb, {})],
    "AdjustHue": [([_IMG], lambda x: tf.image.adjust_hue(x, 0.3), {})],
    "AdjustSaturation": [([_IMG], lambda x: tf.image.adjust_saturation(x, 1.5), {})],
    "AdjustContrastv2": [([_IMG], lambda x: tf.image.adjust_contrast(x, 1.5), {})],
    "AdjustContrast": [([(_IMG * 255).astype(np.uint8)], lambda x: tf.raw_ops.AdjustContrast(
        images=x, contrast_factor=1.5, min_value=0.0, max_value=255.0), {})],
    "NonMaxSuppression": [([_BOXES, _SCORES], lambda b, s: tf.raw_ops.NonMaxSuppression(
        boxes=b, scores=s, max_output_size=2), _VD)],
    "NonMaxSuppressionV2": [([_BOXES, _SCORES], lambda b, s: tf.raw_ops.NonMaxSuppressionV2(
        boxes=b, scores=s, max_output_size=3, iou_threshold=0.5), _VD)],
    "SampleDistortedBoundingBox": [([np.array([40, 50, 3], np.int32)], lambda size: list(
        tf.raw_ops.SampleDistortedBoundingBox(
            image_size=size, bounding_boxes=[[[0.1, 0.2, 0.5, 0.6]]], seed=7, seed2=3,
            min_object_covered=0.3)), {})],
    "StatelessSampleDistortedBoundingBox": [([np.array([40, 50, 3], np.int64)], lambda size: list(
        tf.raw_ops.StatelessSampleDistortedBoundingBox(
            image_size=size, bounding_boxes=[[[0.1, 0.2, 0.5, 0.6]]], min_object_covered=0.3,
            seed=[7, 3])), {})],
    "ScaleAndTranslateGrad": [([_x(2, 3, 7, 2), _x(2, 5, 4, 2)], lambda g, x: tf.raw_ops.
                               ScaleAndTranslateGrad(grads=g, original_image=x,
                                                     scale=[0.6, 1.75], translation=[0.2, -0.5],
                                                     kernel_type="triangle"), {})],
    "RandomCrop": [([R.standard_normal((5, 6, 2))], lambda x: tf.raw_ops.RandomCrop(
        image=x, size=np.array([3, 4], np.int64), seed=1, seed2=2), {})],
    "ExtractGlimpse": [([_IMG.astype(np.float32)], lambda x: tf.raw_ops.ExtractGlimpse(
        input=x, size=[2, 3], offsets=tf.zeros([2, 2]), noise="zero", uniform_noise=False),
        {})],
    "AudioSpectrogram": [([R.standard_normal((50, 2)).astype(np.float32)],
                          lambda a: tf.raw_ops.AudioSpectrogram(input=a, window_size=12,
                                                                stride=5), {})],
    "Mfcc": [([R.uniform(0.1, 2, (2, 3, 33)).astype(np.float32)], lambda s: tf.raw_ops.Mfcc(
        spectrogram=s, sample_rate=16000, filterbank_channel_count=20), {})],
    "DecodePaddedRaw": [([np.array([b"abc", b"defgh"], dtype=object)], lambda b: tf.raw_ops.
                         DecodePaddedRaw(input_bytes=b, fixed_length=4, out_type=tf.int16),
                         {})],
    "Conv2DBackpropInputV2": [([_x(2, 5, 4, 3), _x(3, 2, 3, 2), _x(2, 3, 4, 2)],
                               _conv_v2("Conv2DBackpropInputV2"), {})],
    "Conv2DBackpropFilterV2": [([_x(2, 5, 4, 3), _x(3, 2, 3, 2), _x(2, 3, 4, 2)],
                                _conv_v2("Conv2DBackpropFilterV2"), {})],
    "Conv3DBackpropInput": [([_x(1, 3, 4, 3, 2), _x(2, 2, 2, 2, 3), _x(1, 2, 3, 2, 3)],
                             _conv3d_v1("Conv3DBackpropInput"), {})],
    "Conv3DBackpropFilter": [([_x(1, 3, 4, 3, 2), _x(2, 2, 2, 2, 3), _x(1, 2, 3, 2, 3)],
                              _conv3d_v1("Conv3DBackpropFilter"), {})],
    "MaxPoolGradGradWithArgmax": [([_distinct(2, 4, 4, 3), _x(2, 4, 4, 3)],
                                   _grad_grad_argmax, {})],
    "Conv": [([_x(2, 3, 5, 4, 2), _x(3, 2, 2, 3)], lambda x, f: tf.raw_ops.Conv(
        input=x, filter=f, strides=[1, 2, 1, 1], padding="SAME", batch_dims=2), {}),
        ([_x(2, 2, 5, 4, 3), _x(2, 2, 3, 3, 2)], lambda x, f: tf.raw_ops.Conv(
            input=x, filter=f, strides=[1, 1, 1, 2, 1], padding="EXPLICIT",
            explicit_paddings=[0, 0, 1, 0, 0, 1, 1, 1, 0, 0]), {})],
    "FusedPadConv2D": [([_x(1, 4, 5, 2), _x(3, 2, 2, 3)], lambda x, f: tf.raw_ops.
                        FusedPadConv2D(input=x, paddings=[[0, 0], [1, 1], [0, 1], [0, 0]],
                                       filter=f, mode="REFLECT", strides=[1, 1, 2, 1],
                                       padding="VALID"), {})],
    "FusedResizeAndPadConv2D": [([_x(1, 4, 5, 2), _x(3, 2, 2, 3)], lambda x, f: tf.raw_ops.
                                 FusedResizeAndPadConv2D(
                                     input=x, size=[6, 3], paddings=[[0, 0], [1, 1], [0, 1],
                                                                     [0, 0]], filter=f,
                                     mode="SYMMETRIC", strides=[1, 2, 1, 1], padding="SAME"),
                                 {})],
}
