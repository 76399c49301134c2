"""The rest of `tf.estimator.experimental` and `tf.estimator.export.EvalOutput`.

- `build_raw_supervised_input_receiver_fn`: a receiver fn of placeholders mirroring
  features *and* labels (for exporting train/eval graphs).
- `call_logit_fn`: calls a ``logit_fn`` with the arguments it takes, checks that it
  returns logits.
- `dnn_logit_fn_builder`, `linear_logit_fn_builder`: the canned DNN / linear logits.
- `make_stop_at_checkpoint_step_hook`: the chief stops at `last_step`; other workers
  when a checkpoint reaches it.
- `LinearSDCA`: SDCA settings for the linear estimators (kept).
- `EvalOutput`: an eval signature of a loss, predictions and metrics (value and
  update op).

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     fn = tf.estimator.experimental.build_raw_supervised_input_receiver_fn(
...         {"x": tf.zeros([4, 3])}, tf.zeros([4, 1]), default_batch_size=2)
...     r = fn()
...     r.features["x"].shape.as_list(), r.labels.shape.as_list(), sorted(r.receiver_tensors)
([2, 3], [2, 1], ['label', 'x'])
"""

from __future__ import annotations

import collections
import logging
import time

from flowgraph.estimators import estimator_util as util
from flowgraph.estimators.canned.dnn import dnn_logit_fn_builder
from flowgraph.estimators.canned.linear import linear_logit_fn_builder
from flowgraph.estimators.export import (
    SINGLE_LABEL_DEFAULT_NAME,
    SINGLE_RECEIVER_DEFAULT_NAME,
    _placeholder_like,
)
from flowgraph.estimators.export_supervised import EvalOutput, TrainOutput
from flowgraph.framework.operation import Tensor

__all__ = ["EvalOutput", "LinearSDCA", "SupervisedInputReceiver", "TrainOutput",
           "build_raw_supervised_input_receiver_fn", "call_logit_fn", "dnn_logit_fn_builder",
           "linear_logit_fn_builder", "make_stop_at_checkpoint_step_hook"]

logger = logging.getLogger("tensorflow")


class SupervisedInputReceiver(collections.namedtuple(
        "SupervisedInputReceiver", ["features", "labels", "receiver_tensors"])):
    """Features, labels and the tensors that feed them, of an exported train/eval graph."""

    __slots__ = ()

    def __new__(cls, features, labels, receiver_tensors):
        for what, value in (("features", features), ("labels", labels)):
            values = value.values() if isinstance(value, dict) else [value]
            for v in values:
                if not isinstance(v, Tensor):
                    raise ValueError(f"{what} must be a Tensor or a dict of Tensors; got "
                                     f"{v!r}")
        if not isinstance(receiver_tensors, dict):
            receiver_tensors = {SINGLE_RECEIVER_DEFAULT_NAME: receiver_tensors}
        return super().__new__(cls, features, labels, receiver_tensors)


def build_raw_supervised_input_receiver_fn(features, labels, default_batch_size=None):
    """A receiver fn making placeholders like `features` and `labels` (Tensors or dicts
    of Tensors): their dtypes and op names, the batch dimension `default_batch_size`.

    The receiver tensors are the features' placeholders (key ``input`` for a single
    Tensor) and the labels' (key ``label``); the keys must differ.
    """
    if isinstance(features, dict) and isinstance(labels, dict):
        overlap = set(features) & set(labels)
        if overlap:
            raise ValueError(f"Features and labels must have distinct keys. Found "
                             f"overlapping keys: {overlap}")

    def supervised_input_receiver_fn():
        def mirror(value, single_key):
            if isinstance(value, dict):
                made = {k: _placeholder_like(t, default_batch_size) for k, t in value.items()}
                return made, dict(made)
            made = _placeholder_like(value, default_batch_size)
            return made, {single_key: made}

        feats, receivers = mirror(features, SINGLE_RECEIVER_DEFAULT_NAME)
        labs, label_receivers = mirror(labels, SINGLE_LABEL_DEFAULT_NAME)
        receivers.update(label_receivers)
        return SupervisedInputReceiver(feats, labs, receivers)

    return supervised_input_receiver_fn


def call_logit_fn(logit_fn, features, mode, params, config):
    """Call ``logit_fn(features[, mode][, params][, config])`` with the arguments its
    signature names; it must return a Tensor or a dict of Tensors."""
    logits = logit_fn(features=features,
                      **util.taken_kwargs(logit_fn, mode=mode, params=params, config=config))
    ok = (isinstance(logits, Tensor) or (isinstance(logits, dict) and all(
        isinstance(k, str) and isinstance(v, Tensor) for k, v in logits.items())))
    if not ok:
        raise ValueError(f"logit_fn should return a Tensor or a dictionary mapping strings to "
                         f"Tensors.  logit_fn returned: {logits}")
    return logits


def make_stop_at_checkpoint_step_hook(estimator, last_step, wait_after_file_check_secs=30):
    """The chief's `StopAtStepHook(last_step)`; on other workers a hook that stops once
    the newest checkpoint of the estimator's `model_dir` is at `last_step` (checking
    again every `wait_after_file_check_secs` seconds)."""
    train_lib = util.train_api()
    if estimator.config.is_chief:
        return train_lib.StopAtStepHook(last_step=last_step)
    return _stop_at_checkpoint_step_hook(estimator.model_dir, last_step,
                                         wait_after_file_check_secs)


def _stop_at_checkpoint_step_hook(model_dir, last_step, wait_secs):
    train_lib = util.train_api()

    class _StopAtCheckpointStepHook(train_lib.SessionRunHook):
        def begin(self):
            self._global_step = train_lib.get_global_step()
            if self._global_step is None:
                raise RuntimeError("Global step should be created to use "
                                   "StopAtCheckpointStepHook.")

        def before_run(self, run_context):
            return train_lib.SessionRunArgs(self._global_step)

        def after_run(self, run_context, run_values):
            if run_values.results >= last_step:
                run_context.request_stop()
                return
            if util.global_step_of_checkpoint(model_dir) >= last_step:
                run_context.request_stop()
            else:
                time.sleep(wait_secs)

    return _StopAtCheckpointStepHook()


class LinearSDCA:
    """Stochastic dual coordinate ascent settings for the linear estimators' `optimizer`
    (kept as given: `example_id_column`, the loss partitions, table shards, the
    symmetric L1/L2 regularization, `adaptive` sampling)."""

    def __init__(self, example_id_column, num_loss_partitions=1, num_table_shards=None,
                 symmetric_l1_regularization=0.0, symmetric_l2_regularization=1.0,
                 adaptive=False) -> None:
        self._example_id_column = example_id_column
        self._num_loss_partitions = num_loss_partitions
        self._num_table_shards = num_table_shards
        self._symmetric_l1_regularization = symmetric_l1_regularization
        self._symmetric_l2_regularization = symmetric_l2_regularization
        self._adaptive = adaptive
