"""`tf.keras.applications`: Keras' image models, built in graph mode.

The constructors build Keras' architectures with Keras' layer and weight names, so
``count_params()`` and the names agree with TensorFlow's: `VGG16`, `VGG19`, `ResNet50`,
`ResNet101`, `ResNet152`, `MobileNet`, `MobileNetV2`. Train them from scratch with
``weights=None``; ``weights='imagenet'`` loads Keras' HDF5 file from
``$KERAS_HOME/models/`` if it is there (flowgraph never downloads; the error names the
file and its URL), and a path loads that file. Each model module also has Keras'
``preprocess_input`` and ``decode_predictions``.

Example
-------
>>> import flowgraph as tf
>>> import numpy as np
>>> x = tf.keras.applications.mobilenet_v2.preprocess_input(np.array([[[255.0, 0.0, 127.5]]]))
>>> x.tolist()
[[[1.0, -1.0, 0.0]]]
"""

from flowgraph.keras.applications import mobilenet, mobilenet_v2, resnet, vgg
from flowgraph.keras.applications.mobilenet import MobileNet
from flowgraph.keras.applications.mobilenet_v2 import MobileNetV2
from flowgraph.keras.applications.resnet import ResNet50, ResNet101, ResNet152
from flowgraph.keras.applications.vgg import VGG16, VGG19

# Keras' per-model module names (tf.keras.applications.vgg16.preprocess_input, ...).
resnet50 = resnet
vgg16 = vgg
vgg19 = vgg

__all__ = [
           "VGG16",
           "VGG19",
           "MobileNet",
           "MobileNetV2",
           "ResNet50",
           "ResNet101",
           "ResNet152",
           "mobilenet",
           "mobilenet_v2",
           "resnet",
           "resnet50",
           "vgg16",
           "vgg19",
]
