"""`tf.keras.applications.imagenet_utils`: the generic ImageNet helpers behind each
model module's ``preprocess_input`` and ``decode_predictions``.

Example
-------
>>> import numpy as np
>>> import flowgraph as tf
>>> x = np.array([[[255.0, 0.0, 127.5]]])
>>> tf.keras.applications.imagenet_utils.preprocess_input(x, mode="tf").tolist()
[[[1.0, -1.0, 0.0]]]
"""

from __future__ import annotations

from flowgraph.keras.applications import _common

__all__ = ["decode_predictions", "preprocess_input"]


def preprocess_input(x, data_format=None, mode="caffe"):
    """Preprocess ImageNet images: ``mode='caffe'`` (RGB to BGR minus the channel
    means), ``'tf'`` (scale to [-1, 1]) or ``'torch'`` (scale to [0, 1] and standardize
    per channel)."""
    if mode not in ("caffe", "tf", "torch"):
        raise ValueError(f"Expected mode to be one of `caffe`, `tf` or `torch`. Received: "
                         f"mode={mode}")
    return _common.preprocess(x, data_format, mode)


decode_predictions = _common.decode_predictions
