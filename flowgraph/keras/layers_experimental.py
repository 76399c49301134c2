"""`tf.keras.layers.experimental`: `RandomFourierFeatures`, and the layers TF lists there
too (``EinsumDense``; ``preprocessing.Normalization``, ``Hashing``, ...), which are the
same classes as in `tf.keras.layers` and are looked up there when asked for.

`RandomFourierFeatures` maps ``(batch, d)`` to ``cos(x @ W / kernel_scale + b)`` of
``(batch, output_dim)``: ``unscaled_kernel`` ``(d, output_dim)`` drawn once from a
standard normal ('gaussian', approximating the Gaussian kernel) or a standard Cauchy
('laplacian') distribution, ``bias`` uniform in ``[0, 2 pi)``, both fixed; the scalar
``kernel_scale`` (default ``sqrt(d / 2)`` for 'gaussian', 1 for 'laplacian') is trained
when the layer is made with ``trainable=True``.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph import keras
>>> with tf.Graph().as_default():
...     layer = keras.layers.experimental.RandomFourierFeatures(8)
...     y = layer(keras.Input((3,)))
...     print(y.shape, [w.name.split("/")[1] for w in layer.weights])
(?, 8) ['kernel_scale:0', 'unscaled_kernel:0', 'bias:0']
"""

from __future__ import annotations

import math
import numbers
import sys
import types

import numpy as np

from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.keras import constraints as _constraints
from flowgraph.keras.layers import Layer
from flowgraph.ops import init_ops, math_ops, nn_ops

__all__ = ["RandomFourierFeatures"]

_KERNELS = ("gaussian", "laplacian")


def _cauchy(shape, dtype=None, partition_info=None):
    """Standard Cauchy samples (drawn with NumPy's global generator, as TensorFlow)."""
    probs = np.random.uniform(0.0, 1.0, size=shape)
    dtype = np.float32 if dtype is None else dtype.as_numpy_dtype
    return init_ops.Constant(np.tan(np.pi * (probs - 0.5)).astype(dtype))(shape, dtype=dtype)


class RandomFourierFeatures(Layer):
    """Random Fourier features of a shift-invariant kernel (see the module)."""

    def __init__(self, output_dim, kernel_initializer="gaussian", scale=None,
                 trainable: bool = False, name=None, **kwargs) -> None:
        if not isinstance(output_dim, numbers.Integral) or output_dim <= 0:
            raise ValueError(f"`output_dim` should be a positive integer. Received: "
                             f"{output_dim}")
        if isinstance(kernel_initializer, str) and kernel_initializer.lower() not in _KERNELS:
            raise ValueError(f"Unsupported `kernel_initializer`: {kernel_initializer} "
                             f"Expected one of: {list(_KERNELS)}")
        if scale is not None and scale <= 0.0:
            raise ValueError(f"When provided, `scale` should be a positive float. Received: "
                             f"{scale}")
        super().__init__(trainable=trainable, name=name, **kwargs)
        self.output_dim = int(output_dim)
        self.kernel_initializer = kernel_initializer
        self.scale = scale

    def get_config(self) -> dict:
        return {**super().get_config(), "output_dim": self.output_dim,
                "kernel_initializer": self.kernel_initializer, "scale": self.scale}

    def build(self, input_shape) -> None:
        shape = TensorShape(input_shape)
        if shape.ndims != 2:
            raise ValueError(f"The rank of the input tensor should be 2. Received input with "
                             f"rank {shape.ndims} instead. Full input shape received: "
                             f"{shape}")
        dim = shape[1].value
        if dim is None:
            raise ValueError(f"The last dimension of the input tensor should be defined. "
                             f"Found `None` (layer {self.name}, input shape {shape}).")
        kind = self.kernel_initializer
        if isinstance(kind, str):
            kind = kind.lower()
            init = init_ops.RandomNormal(0.0, 1.0) if kind == "gaussian" else _cauchy
        else:
            init = kind
        if self.scale is None:
            self.scale = math.sqrt(dim / 2.0) if kind == "gaussian" else 1.0
        self.kernel_scale = self.add_weight("kernel_scale", [1],
                                            initializer=init_ops.Constant(self.scale),
                                            constraint=_constraints.NonNeg())
        self.unscaled_kernel = self.add_weight("unscaled_kernel", [dim, self.output_dim],
                                               initializer=init, trainable=False)
        self.bias = self.add_weight("bias", [self.output_dim], trainable=False,
                                    initializer=init_ops.RandomUniform(0.0, 2 * np.pi))

    def call(self, inputs):
        kernel = math_ops.multiply(math_ops.truediv(1.0, self.kernel_scale),
                                   self.unscaled_kernel)
        out = nn_ops.bias_add(math_ops.matmul(inputs, kernel), self.bias)
        return math_ops.cos(out)


# -- the namespaces ------------------------------------------------------------------------------
_EXPERIMENTAL = ("EinsumDense", "RandomFourierFeatures", "SyncBatchNormalization")
_PREPROCESSING = ("CategoryEncoding", "CenterCrop", "Discretization", "Hashing",
                  "Normalization", "PreprocessingLayer", "Rescaling", "Resizing")


def _forwarding(name: str, names: tuple, extra: dict) -> types.ModuleType:
    """A module whose `names` are the `tf.keras.layers` classes of the same name, looked
    up when asked for (an AttributeError names what is missing)."""
    module = types.ModuleType(name, f"`tf.{name.split('flowgraph.', 1)[1]}`.")
    module.__dict__.update(extra)

    def __getattr__(attr):
        from flowgraph.keras import layers

        if attr in names and hasattr(layers, attr):
            return getattr(layers, attr)
        raise AttributeError(f"module {name!r} has no attribute {attr!r}")

    def __dir__():
        from flowgraph.keras import layers

        return sorted({*extra, *(n for n in names if hasattr(layers, n))})

    module.__getattr__ = __getattr__
    module.__dir__ = __dir__
    sys.modules[name] = module
    return module


preprocessing = _forwarding("flowgraph.keras.layers.experimental.preprocessing",
                            _PREPROCESSING, {})
experimental = _forwarding("flowgraph.keras.layers.experimental", _EXPERIMENTAL,
                           {"RandomFourierFeatures": RandomFourierFeatures,
                            "preprocessing": preprocessing})
