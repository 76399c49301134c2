"""An Estimator's graph under a distribution strategy (``RunConfig(train_distribute=...,
eval_distribute=...)``), as TF1's Estimator builds it.

`input_fn` (given an `InputContext` when it takes ``input_context``) returns a dataset
of *per-replica* batches; replica *i* of a step gets the step's *i*-th consecutive
element; `model_fn` is built once per replica (`call_for_each_replica`) and the
replicas' specs combine into one:

- loss: training, the replicas' losses summed (averaged when the optimizer scaled a
  mean loss); evaluation, averaged;
- train_op: every replica's train op, grouped;
- eval_metric_ops: replica 0's value (metric variables are sync-on-read, so the read
  sums the replicas' copies) with every replica's update grouped;
- hooks and scaffold: replica 0's.
"""

from __future__ import annotations

from flowgraph.data.iterator import make_one_shot_iterator
from flowgraph.estimators import estimator_util as util
from flowgraph.estimators.model_fn import ModeKeys
from flowgraph.framework.graph import get_default_graph
from flowgraph.strategies.base import ReduceOp
from flowgraph.strategies.input import DistributedDataset
from flowgraph.strategies.values import PerReplica

__all__ = ["distributed_spec"]


def distributed_spec(est, input_fn, strategy, mode: str):
    """The combined `EstimatorSpec` of `est`'s model built per replica for `mode`."""
    config = est.config

    def dataset_fn(input_context):
        args = util.fn_args(input_fn)
        kwargs = {k: v for k, v in (("mode", mode), ("params", est.params),
                                    ("config", config), ("input_context", input_context))
                  if k in args}
        return input_fn(**kwargs)

    # TF reads it through an initializable iterator, which draws no op seed
    source = strategy.distribute_datasets_from_function(dataset_fn)
    if isinstance(source, DistributedDataset):
        iterator = source.make_one_shot_iterator(_draw_seed=False)
    else:  # a strategy of one device hands back the dataset itself
        iterator = make_one_shot_iterator(source, _draw_seed=False)
    element = iterator.get_next()

    def replica_fn(element):
        if isinstance(element, tuple) and not hasattr(element, "_fields") and \
                len(element) == 2:
            features, labels = element
        else:
            features, labels = element, None
        return util.call_model_fn(est._model_fn, features, labels, mode, est.params, config)

    specs = strategy.extended._call_each(replica_fn, args=(element,))
    graph = get_default_graph()
    reduce_op = ReduceOp.SUM
    if mode == ModeKeys.EVAL or graph.__dict__.get("_is_loss_scaled_by_optimizer"):
        reduce_op = ReduceOp.MEAN  # TF 2.15 reports the replicas' mean eval loss
    first = specs[0]
    loss = strategy.reduce(reduce_op, PerReplica([s.loss for s in specs]))
    if mode == ModeKeys.TRAIN:
        return first._replace(loss=loss,
                              train_op=strategy.group([s.train_op for s in specs]))
    metrics = {}
    for name, (value, _) in first.eval_metric_ops.items():
        updates = [s.eval_metric_ops[name][1] for s in specs]
        metrics[name] = (value, strategy.group(updates))
    return first._replace(loss=loss, eval_metric_ops=metrics)
