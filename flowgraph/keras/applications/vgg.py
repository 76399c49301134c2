"""VGG16 and VGG19 (Simonyan & Zisserman, 2014) as Keras builds them, for graph mode.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     model = tf.keras.applications.VGG16(weights=None, include_top=False,
...                                         input_shape=(32, 32, 3))
...     print(model.count_params(), model.layers[-1].name)
14714688 block5_pool
"""

from __future__ import annotations

from flowgraph.keras import layers as L
from flowgraph.keras.applications import _common
from flowgraph.keras.models import Model

__all__ = ["VGG16", "VGG19", "decode_predictions", "preprocess_input"]


def _vgg(convs_per_block, name, include_top, weights, input_tensor, input_shape, pooling,
         classes, classifier_activation):
    _common.check_weights(weights, include_top, classes)
    input_shape = _common.obtain_input_shape(input_shape, 224, 32, include_top, weights)
    inputs, x = _common.model_input(input_tensor, input_shape)
    for block, (count, filters) in enumerate(zip(convs_per_block, (64, 128, 256, 512, 512),
                                                 strict=True), start=1):
        for i in range(1, count + 1):
            x = L.Conv2D(filters, (3, 3), activation="relu", padding="same",
                         name=f"block{block}_conv{i}")(x)
        x = L.MaxPooling2D((2, 2), strides=(2, 2), name=f"block{block}_pool")(x)
    if include_top:
        x = L.Flatten(name="flatten")(x)
        x = L.Dense(4096, activation="relu", name="fc1")(x)
        x = L.Dense(4096, activation="relu", name="fc2")(x)
        x = L.Dense(classes, activation=classifier_activation, name="predictions")(x)
    else:
        x = _common.pool(x, pooling)
    model = Model(inputs, x, name=name)
    suffix = "" if include_top else "_notop"
    _common.load_weights(model, weights,
                         f"{name}_weights_tf_dim_ordering_tf_kernels{suffix}.h5", name)
    return model


def VGG16(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
          pooling=None, classes=1000, classifier_activation="softmax"):
    """The 16-layer VGG network (13 convolutions in 5 blocks, 3 dense layers).

    ``include_top=False`` stops after ``block5_pool`` (``pooling`` ``'avg'``/``'max'``
    adds a global pooling); ``weights=None`` trains from scratch, ``'imagenet'`` or a
    path loads HDF5 weights (see `flowgraph.keras.applications`).
    """
    return _vgg((2, 2, 3, 3, 3), "vgg16", include_top, weights, input_tensor, input_shape,
                pooling, classes, classifier_activation)


def VGG19(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
          pooling=None, classes=1000, classifier_activation="softmax"):
    """The 19-layer VGG network (16 convolutions); arguments as `VGG16`."""
    return _vgg((2, 2, 4, 4, 4), "vgg19", include_top, weights, input_tensor, input_shape,
                pooling, classes, classifier_activation)


def preprocess_input(x, data_format=None):
    """Caffe-style: RGB to BGR, minus the ImageNet channel means (no scaling)."""
    return _common.preprocess(x, data_format, "caffe")


decode_predictions = _common.decode_predictions
