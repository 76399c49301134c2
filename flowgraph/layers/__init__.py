"""The `tf.layers` namespace (TF1's functional layers and their classes): re-exports only.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     x = tf.placeholder(tf.float32, [None, 8, 8, 3])
...     y = tf.layers.dense(tf.layers.flatten(tf.layers.conv2d(x, 4, 3)), 10)
...     print(y.shape)
(?, 10)
"""

from flowgraph.layers import experimental
from flowgraph.layers.convolutional import (
    AveragePooling1D,
    AveragePooling2D,
    Conv1D,
    Conv2D,
    MaxPooling1D,
    MaxPooling2D,
    average_pooling1d,
    average_pooling2d,
    conv1d,
    conv2d,
    max_pooling1d,
    max_pooling2d,
)
from flowgraph.layers.core import Dense, Dropout, Flatten, Layer, dense, dropout, flatten
from flowgraph.layers.input_spec import InputSpec
from flowgraph.layers.normalization import BatchNormalization, batch_normalization

__all__ = [
    "AveragePooling1D",
    "AveragePooling2D",
    "BatchNormalization",
    "Conv1D",
    "Conv2D",
    "Dense",
    "Dropout",
    "Flatten",
    "Layer",
    "MaxPooling1D",
    "MaxPooling2D",
    "average_pooling1d",
    "average_pooling2d",
    "batch_normalization",
    "conv1d",
    "conv2d",
    "dense",
    "dropout",
    "flatten",
    "max_pooling1d",
    "max_pooling2d",
]

from flowgraph.layers.convolutional_extra import (
    Conv2DTranspose,
    SeparableConv2D,
    conv2d_transpose,
    separable_conv2d,
)

Convolution2DTranspose = Deconvolution2D = Conv2DTranspose
SeparableConvolution2D = SeparableConv2D
__all__ += ["Conv2DTranspose", "Convolution2DTranspose", "Deconvolution2D", "SeparableConv2D",
            "SeparableConvolution2D", "conv2d_transpose", "separable_conv2d"]
from flowgraph.layers.convolutional_3d import (  # noqa: E402
    AveragePooling3D,
    Conv3D,
    Conv3DTranspose,
    MaxPooling3D,
    SeparableConv1D,
    average_pooling3d,
    conv3d,
    conv3d_transpose,
    max_pooling3d,
    separable_conv1d,
)

Convolution3D = Conv3D
Convolution3DTranspose = Deconvolution3D = Conv3DTranspose
SeparableConvolution1D = SeparableConv1D
__all__ += ["AveragePooling3D", "Conv3D", "Conv3DTranspose", "Convolution3D",
            "Convolution3DTranspose", "Deconvolution3D", "MaxPooling3D", "SeparableConv1D",
            "SeparableConvolution1D", "average_pooling3d", "conv3d", "conv3d_transpose",
            "max_pooling3d", "separable_conv1d"]


def __getattr__(name: str):
    from flowgraph.framework.missing_api import missing_attribute

    raise missing_attribute("layers", name)
