"""Registry cases for the fractional pooling ops (`flowgraph/ops/nn_pool_fractional.py`)
the V1 ``DrawBoundingBoxes`` op (`flowgraph/ops/image_boxes_ops.py`) and
``CTCGreedyDecoder`` (`flowgraph/ops/ctc_decode_ops.py`).

`GRADIENT_CASES` merge into `test_gradient_registry.CASES` (deterministic regions, so
finite differences see one fixed pooling); `CONTRACT_CASES` build the two gradient ops,
which have no gradient of their own (as in TensorFlow).
"""

from __future__ import annotations

import numpy as np

import flowgraph as tf

_DET = {"deterministic": True, "seed": 1, "seed2": 2}


def _x(*shape):
    return np.random.RandomState(sum(shape)).randn(*shape)


GRADIENT_CASES = {
    "FractionalMaxPool": [
        ([_x(2, 7, 9, 2)], lambda x: tf.nn.fractional_max_pool(
            x, [1.0, 1.44, 1.73, 1.0], pseudo_random=True, overlapping=True, **_DET)[0]),
        ([_x(1, 6, 5, 1)], lambda x: tf.nn.fractional_max_pool(
            x, [1.0, 1.5, 1.5, 1.0], **_DET)[0])],
    "FractionalAvgPool": [
        ([_x(2, 7, 9, 2)], lambda x: tf.nn.fractional_avg_pool(
            x, [1.0, 1.5, 2.0, 1.0], overlapping=True, **_DET)[0]),
        ([_x(1, 6, 5, 1)], lambda x: tf.nn.fractional_avg_pool(
            x, [1.0, 1.5, 1.5, 1.0], pseudo_random=True, **_DET)[0])],
}


def _grad_of(pool):
    def build(x):
        out = pool(x, [1.0, 1.5, 1.5, 1.0], overlapping=True, **_DET)[0]
        return tf.gradients(tf.reduce_sum(out * out), x)[0]
    return build


def _greedy(x):
    (decoded,), log_prob = tf.nn.ctc_greedy_decoder(x, [6, 4])
    (other,), _ = tf.nn.ctc_greedy_decoder(x, [5, 3], blank_index=0, merge_repeated=False)
    return [decoded.indices, decoded.values, decoded.dense_shape, log_prob, other.values]


CONTRACT_CASES = {
    "FractionalMaxPoolGrad": [([_x(1, 6, 5, 2)], _grad_of(tf.nn.fractional_max_pool), {})],
    "FractionalAvgPoolGrad": [([_x(1, 6, 5, 2)], _grad_of(tf.nn.fractional_avg_pool), {})],
    "DrawBoundingBoxes": [([_x(2, 5, 6, 3).astype(np.float32),  # float32/half only, as TF
                            np.array([[[0.1, 0.2, 0.8, 0.9]]] * 2, np.float32)],
                           lambda im, b: tf.image.draw_bounding_boxes(im, b), {})],
    "CTCGreedyDecoder": [([_x(6, 2, 4)], _greedy, {"value_dependent": True})],
}

NO_GRADIENT_LIKE_TENSORFLOW = {"FractionalMaxPoolGrad", "FractionalAvgPoolGrad"}
