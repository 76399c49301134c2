"""Registry-wide gradient cases (and through them op-contract cases) for the projective
image transforms. TensorFlow's gradient transforms the incoming gradient by the inverse
transform, which is the exact adjoint only where the transform permutes pixels: the
cases use integer shifts and a quarter turn with nearest-pixel reads, which finite
differences check exactly (bilinear reads go through float32, as TensorFlow's do)."""

from __future__ import annotations

import numpy as np

import flowgraph as tf
from flowgraph.ops.op_util import make_tensor

R = np.random.RandomState(15)
SHIFT = [[1.0, 0.0, 2.0, 0.0, 1.0, -1.0, 0.0, 0.0]]  # reads (x + 2, y - 1)
QUARTER = [[0.0, -1.0, 3.0, 1.0, 0.0, 0.0, 0.0, 0.0]]  # a quarter turn of a 4x4 image


def _u(*shape):
    return R.uniform(-1.0, 1.0, size=shape)


GRADIENT_CASES = {
    "ImageProjectiveTransformV2": [
        ([_u(2, 3, 5, 2)], lambda x: tf.raw_ops.ImageProjectiveTransformV2(
            images=x, transforms=SHIFT, output_shape=[3, 5], interpolation="NEAREST")),
        ([_u(1, 4, 4, 3)], lambda x: tf.raw_ops.ImageProjectiveTransformV2(
            images=x, transforms=QUARTER, output_shape=[4, 4], interpolation="NEAREST",
            fill_mode="REFLECT")),
    ],
    "ImageProjectiveTransformV3": [
        ([_u(2, 3, 5, 1)], lambda x: tf.raw_ops.ImageProjectiveTransformV3(
            images=x, transforms=SHIFT, output_shape=[3, 5], fill_value=0.5,
            interpolation="NEAREST")),
    ],
}

def _components(x):  # a TF1 contrib op: TensorFlow 2.15's raw_ops has no such name
    return make_tensor("ImageConnectedComponents", [x])


# Contract-only ``(inputs, build, options)`` cases for the ops without a gradient.
CONTRACT_CASES = {
    "ImageConnectedComponents": [
        ([R.randint(0, 3, size=(2, 4, 5)).astype(np.int32)],
         _components, {}),
        ([R.rand(1, 3, 6) > 0.5], _components, {}),
    ],
}
