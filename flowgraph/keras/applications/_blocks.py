"""Building blocks that several `tf.keras.applications` families share: the zero padding
that makes a strided 'valid' convolution match TF's 'same', squeeze-and-excitation, and
TF 1.x's ``tf_op_layer_*`` layers (`flowgraph.keras.layers_tf_op`). Grouped convolutions
are the public ``Conv2D(groups=)``.
"""

from __future__ import annotations

from flowgraph.keras import layers as L
from flowgraph.keras.layers_tf_op import TensorFlowOpLayer

__all__ = ["TensorFlowOpLayer", "correct_pad", "squeeze_excite"]


def correct_pad(x, kernel_size):
    """Zero padding ``((top, bottom), (left, right))`` before a stride-2 'valid'
    convolution of ``kernel_size`` so that it lines up with 'same' on even sizes."""
    if isinstance(kernel_size, int):
        kernel_size = (kernel_size, kernel_size)
    size = x.shape.as_list()[1:3]
    adjust = (1, 1) if size[0] is None else (1 - size[0] % 2, 1 - size[1] % 2)
    half = (kernel_size[0] // 2, kernel_size[1] // 2)
    return ((half[0] - adjust[0], half[0]), (half[1] - adjust[1], half[1]))


def squeeze_excite(x, filters_se, filters, activation, name, kernel_initializer=None):
    """EfficientNet's squeeze-and-excitation: global average pooling (``se_squeeze``),
    reshape to 1x1 (``se_reshape``), a reducing and an expanding 1x1 convolution
    (``se_reduce``, ``se_expand``, sigmoid) and the product (``se_excite``)."""
    init = {} if kernel_initializer is None else {"kernel_initializer": kernel_initializer}
    se = L.GlobalAveragePooling2D(name=name + "se_squeeze")(x)
    se = L.Reshape((1, 1, filters), name=name + "se_reshape")(se)
    se = L.Conv2D(filters_se, 1, padding="same", activation=activation,
                  name=name + "se_reduce", **init)(se)
    se = L.Conv2D(filters, 1, padding="same", activation="sigmoid", name=name + "se_expand",
                  **init)(se)
    return L.Multiply(name=name + "se_excite")([x, se])
