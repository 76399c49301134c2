"""`tf.contrib.learn.utils.input_fn_utils`: serving input functions returning `InputFnOps`
(for `export_savedmodel`), built on `tf.estimator.export`'s receivers.

Example
-------
>>> import flowgraph as tf
>>> spec = {"x": tf.FixedLenFeature([2], tf.float32)}
>>> ops = input_fn_utils.build_parsing_serving_input_fn(spec)()
>>> sorted(ops.features), sorted(ops.default_inputs)
(['x'], ['examples'])
"""

from __future__ import annotations

import sys
import types

from flowgraph.contrib.learn.learn_estimator import InputFnOps
from flowgraph.estimators import export as _export

__all__ = ["input_fn_utils"]


def _as_input_fn_ops(receiver_fn):
    def input_fn():
        receiver = receiver_fn()
        return InputFnOps(receiver.features, None, receiver.receiver_tensors)
    return input_fn


def build_parsing_serving_input_fn(feature_spec, default_batch_size=None):
    """A serving input fn parsing serialized `tf.Example`s fed as ``examples``."""
    return _as_input_fn_ops(_export.build_parsing_serving_input_receiver_fn(
        feature_spec, default_batch_size))


def build_default_serving_input_fn(features, default_batch_size=None):
    """A serving input fn with one placeholder per feature, shaped like `features`."""
    return _as_input_fn_ops(_export.build_raw_serving_input_receiver_fn(
        features, default_batch_size))


input_fn_utils = types.ModuleType(__name__ + ".input_fn_utils",
                                  "`input_fn_utils`: `InputFnOps` serving input functions.")
input_fn_utils.InputFnOps = InputFnOps
input_fn_utils.build_parsing_serving_input_fn = build_parsing_serving_input_fn
input_fn_utils.build_default_serving_input_fn = build_default_serving_input_fn
input_fn_utils.__all__ = ["InputFnOps", "build_default_serving_input_fn",
                          "build_parsing_serving_input_fn"]
sys.modules.setdefault(input_fn_utils.__name__, input_fn_utils)
