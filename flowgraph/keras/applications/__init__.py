"""`tf.keras.applications`: Keras' image models, built in graph mode.

The constructors build Keras' architectures with Keras' layer and weight names, so
``count_params()`` and the names agree with TensorFlow's: `VGG16`, `VGG19`, `ResNet50`,
`ResNet101`, `ResNet152`, `MobileNet`, `MobileNetV2`, and (one module per family)
ResNet v2, DenseNet, Xception, InceptionV3, InceptionResNetV2, EfficientNet,
EfficientNetV2, MobileNetV3, NASNet, RegNet, ResNet-RS and ConvNeXt. Train them from scratch with
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

from flowgraph.keras.applications import (
    convnext,
    densenet,
    efficientnet,
    efficientnet_v2,
    imagenet_utils,
    inception_resnet_v2,
    inception_v3,
    mobilenet,
    mobilenet_v2,
    mobilenet_v3,
    nasnet,
    regnet,
    resnet,
    resnet_rs,
    resnet_v2,
    vgg,
    xception,
)
from flowgraph.keras.applications.convnext import (
    ConvNeXtBase,
    ConvNeXtLarge,
    ConvNeXtSmall,
    ConvNeXtTiny,
    ConvNeXtXLarge,
)
from flowgraph.keras.applications.densenet import DenseNet121, DenseNet169, DenseNet201
from flowgraph.keras.applications.efficientnet import (
    EfficientNetB0,
    EfficientNetB1,
    EfficientNetB2,
    EfficientNetB3,
    EfficientNetB4,
    EfficientNetB5,
    EfficientNetB6,
    EfficientNetB7,
)
from flowgraph.keras.applications.efficientnet_v2 import (
    EfficientNetV2B0,
    EfficientNetV2B1,
    EfficientNetV2B2,
    EfficientNetV2B3,
    EfficientNetV2L,
    EfficientNetV2M,
    EfficientNetV2S,
)
from flowgraph.keras.applications.inception_resnet_v2 import InceptionResNetV2
from flowgraph.keras.applications.inception_v3 import InceptionV3
from flowgraph.keras.applications.mobilenet import MobileNet
from flowgraph.keras.applications.mobilenet_v2 import MobileNetV2
from flowgraph.keras.applications.mobilenet_v3 import MobileNetV3Large, MobileNetV3Small
from flowgraph.keras.applications.nasnet import NASNetLarge, NASNetMobile
from flowgraph.keras.applications.regnet import (
    RegNetX002,
    RegNetX004,
    RegNetX006,
    RegNetX008,
    RegNetX016,
    RegNetX032,
    RegNetX040,
    RegNetX064,
    RegNetX080,
    RegNetX120,
    RegNetX160,
    RegNetX320,
    RegNetY002,
    RegNetY004,
    RegNetY006,
    RegNetY008,
    RegNetY016,
    RegNetY032,
    RegNetY040,
    RegNetY064,
    RegNetY080,
    RegNetY120,
    RegNetY160,
    RegNetY320,
)
from flowgraph.keras.applications.resnet import ResNet50, ResNet101, ResNet152
from flowgraph.keras.applications.resnet_rs import (
    ResNetRS50,
    ResNetRS101,
    ResNetRS152,
    ResNetRS200,
    ResNetRS270,
    ResNetRS350,
    ResNetRS420,
)
from flowgraph.keras.applications.resnet_v2 import ResNet50V2, ResNet101V2, ResNet152V2
from flowgraph.keras.applications.vgg import VGG16, VGG19
from flowgraph.keras.applications.xception import Xception

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
           "DenseNet121",
           "DenseNet169",
           "DenseNet201",
           "InceptionResNetV2",
           "InceptionV3",
           "ResNet50V2",
           "ResNet101V2",
           "ResNet152V2",
           "Xception",
           "EfficientNetB0",
           "EfficientNetB1",
           "EfficientNetB2",
           "EfficientNetB3",
           "EfficientNetB4",
           "EfficientNetB5",
           "EfficientNetB6",
           "EfficientNetB7",
           "EfficientNetV2B0",
           "EfficientNetV2B1",
           "EfficientNetV2B2",
           "EfficientNetV2B3",
           "EfficientNetV2L",
           "EfficientNetV2M",
           "EfficientNetV2S",
           "MobileNetV3Large",
           "MobileNetV3Small",
           *regnet.__all__[:24],
           *resnet_rs.__all__[:7],
           *convnext.__all__[:5],
           "convnext",
           "NASNetLarge",
           "NASNetMobile",
           "densenet",
           "efficientnet",
           "efficientnet_v2",
           "imagenet_utils",
           "inception_resnet_v2",
           "inception_v3",
           "mobilenet_v3",
           "nasnet",
           "regnet",
           "resnet_rs",
           "resnet_v2",
           "xception",
]
