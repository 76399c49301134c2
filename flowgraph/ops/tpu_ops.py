"""TPU op types: ``CrossReplicaSum``, the replication ops of ``tf.tpu.rewrite`` and the
TPU system ops. They are registered without a CPU kernel, as in TensorFlow's CPU build:
a graph holding them builds (``tf.tpu.CrossShardOptimizer``, ``tf.tpu.rewrite``, ...),
and running one fails with TensorFlow's error type (``InvalidArgumentError``: no kernel
for the op on the available devices). The Python API is `flowgraph.contrib.tpu`.

| op | inputs -> outputs |
| --- | --- |
| ``CrossReplicaSum`` | ``input``, ``group_assignment`` (int32) -> sum over replicas |
| ``TPUReplicatedInput`` | N per-replica values -> one value inside the computation |
| ``TPUReplicatedOutput`` | one value -> ``num_replicas`` per-replica values |
| ``TPUReplicateMetadata`` | none (attributes of the replicated computation) |
| ``TPUCompilationResult`` | -> a string scalar |
| ``ConfigureDistributedTPU`` / ``ShutdownDistributedTPU`` | -> a string scalar / none |

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.ops.tpu_ops import cross_replica_sum
>>> with tf.Graph().as_default():
...     s = cross_replica_sum(tf.constant([1.0, 2.0]))
...     s.op.type, s.shape.as_list()
('CrossReplicaSum', [2])
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.registry import (
    OpCost,
    not_differentiable,
    register_gradient,
    register_op,
)
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.op_util import fixed_dtype, make_tensor

__all__ = ["cross_replica_sum"]


@register_op("CrossReplicaSum", attrs={"T": None}, cost=OpCost.CHEAP)
def _cross_replica_sum_shape(op, x, group_assignment):
    if group_assignment.ndims not in (None, 2):
        raise op.shape_error(f"group_assignment must be a matrix [groups, replicas]; got "
                             f"shape {group_assignment}")
    return [x]


@register_gradient("CrossReplicaSum")
def _cross_replica_sum_grad(op, grad):
    # The sum's gradient is the sum of the replicas' gradients.
    return [cross_replica_sum(grad, op.inputs[1]), None]


def cross_replica_sum(x, group_assignment=None, name=None):
    """The sum of `x` over the TPU replicas of `group_assignment` (a ``CrossReplicaSum``
    op: no CPU kernel, so running it fails; ``[[0]]``, one replica, when None)."""
    from flowgraph.framework.constant_op import constant, convert_to_tensor
    from flowgraph.framework.graph import name_scope
    from flowgraph.framework.operation import Tensor

    x = convert_to_tensor(x)
    if group_assignment is None:
        import logging

        logging.getLogger("tensorflow").warning(
            "cross_replica_sum should be used within a tpu_shard_context, but got unset "
            "number_of_shards. Assuming 1.")
        group_assignment = [[0]]
    with name_scope(name, "CrossReplicaSum") as scope:
        groups = (group_assignment if isinstance(group_assignment, Tensor) else
                  constant(group_assignment, dtype=_dtypes.int32, name="group_assignment"))
        return make_tensor("CrossReplicaSum", [x, groups], {"T": x.dtype},
                           name=scope)


@register_op("TPUReplicatedInput", attrs={"N": None, "T": None, "is_mirrored_variable": False,
                                          "index": -1, "is_packed": False},
             cost=OpCost.CHEAP)
def _replicated_input_shape(op, *values):
    shape = values[0]
    for other in values[1:]:
        shape = shape.most_specific_compatible_shape(other) if hasattr(
            shape, "most_specific_compatible_shape") else shape
    return [shape]


register_op("TPUReplicatedOutput", attrs={"num_replicas": None, "T": None},
            num_outputs=lambda op: int(op.attrs["num_replicas"]),
            cost=OpCost.CHEAP)(
    lambda op, value: [value] * int(op.attrs["num_replicas"]))

register_op("TPUReplicateMetadata", attrs={
    "num_replicas": None, "num_cores_per_replica": 1, "topology": "",
    "use_tpu": True, "device_assignment": [], "computation_shape": [],
    "host_compute_core": [], "padding_map": [], "step_marker_location": "STEP_MARK_AT_ENTRY",
    "allow_soft_placement": False, "use_spmd_for_xla_partitioning": False,
    "tpu_compile_options_proto": ""}, num_outputs=0, dtype_fn=lambda op: [],
    stateful=True)(lambda op: [])

register_op("TPUCompilationResult", num_outputs=1, dtype_fn=fixed_dtype(_dtypes.string),
            stateful=True)(lambda op: [TensorShape([])])

register_op("ConfigureDistributedTPU", attrs={
    "embedding_config": "", "tpu_embedding_config": "", "is_global_init": False,
    "enable_whole_mesh_compilations": False, "compilation_failure_closes_chips": True,
    "tpu_cancellation_closes_chips": 0}, num_outputs=1,
    dtype_fn=fixed_dtype(_dtypes.string), stateful=True)(lambda op: [TensorShape([])])

register_op("ShutdownDistributedTPU", num_outputs=0, dtype_fn=lambda op: [],
            stateful=True)(lambda op: [])

not_differentiable("TPUReplicatedOutput", "TPUReplicateMetadata", "TPUCompilationResult",
                   "ConfigureDistributedTPU", "ShutdownDistributedTPU")


@register_gradient("TPUReplicatedInput")
def _replicated_input_grad(op, grad):
    return [grad] * len(op.inputs)
