"""Registry-wide contract cases for the ops of the tf.config/tf.test gap-fill: TensorFlow's
example ``Fact`` op (its shape is unknown, as TensorFlow registers none) and
``tf.random.experimental.stateless_shuffle``'s two ops; ``(inputs, build, options)``
as in `issue15_math_cases`. None of them has a gradient."""

from __future__ import annotations

import numpy as np

import flowgraph as tf

R = np.random.RandomState(1616)


def _shuffle(alg):
    return lambda x: tf.random.experimental.stateless_shuffle(x, seed=[4, 5], alg=alg)


# TensorFlow registers no gradient for StatelessShuffle: tf.gradients raises LookupError
# (tests/compat/test_module_gapfill.py), where not_differentiable would give None
NO_GRADIENT_LIKE_TENSORFLOW = {"StatelessShuffle"}

CONTRACT_CASES: dict = {
    "Fact": [([], lambda: tf.user_ops.my_fact(), {"value_dependent": True})],
    "StatelessRandomGetKeyCounter": [
        ([np.array([3, 9], np.int64)], lambda s: tf.raw_ops.StatelessRandomGetKeyCounter(
            seed=s)[0], {})],
    "StatelessShuffle": [([R.randn(5, 3)], _shuffle("auto_select"), {}),
                         ([R.randn(4)], _shuffle("philox"), {})],
}
