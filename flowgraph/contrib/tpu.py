"""`tf.contrib.tpu` and `tf.compat.v1.tpu`: the TPU API, for programs run without a TPU.

flowgraph has no TPU. What TensorFlow does on a CPU-only machine is what this module
does:

- `TPUEstimator` & co. run on the CPU with ``use_tpu=False`` (`flowgraph.estimators.tpu`).
- `CrossShardOptimizer` builds: the wrapped optimizer's gradients summed by
  ``CrossReplicaSum`` ops; running one fails (no kernel), as in TensorFlow.
- `rewrite`, `replicate`, `shard`, `batch_parallel` build the replicated graph
  (``TPUReplicatedInput`` / ``TPUReplicatedOutput`` around the computation); running it
  fails (no kernel).
- `cross_replica_sum`, `initialize_system`, `shutdown_system` build their op; running
  it fails.
- `outside_compilation` calls the computation (outside a TPU computation there is
  nothing to move).
- `bfloat16_scope` is a variable scope storing bfloat16 variables as float32 and casting
  reads to bfloat16.

Example
-------
>>> import flowgraph as tf
>>> opt = tf.tpu.CrossShardOptimizer(tf.train.GradientDescentOptimizer(0.1))
>>> opt.get_name()
'CrossShardOptimizer'
>>> with tf.tpu.bfloat16_scope():
...     v = tf.get_variable("bf16_doc_v", [2], dtype=tf.bfloat16)
>>> v.dtype.name, v.op.type
('bfloat16', 'Cast')
"""

from __future__ import annotations

import collections
import contextlib
import enum
import logging
import types

from flowgraph.estimators.tpu import (
    InputPipelineConfig,
    RunConfig,
    TPUConfig,
    TPUEstimator,
    TPUEstimatorSpec,
)
from flowgraph.feature_column import embedding_column as _embedding_column
from flowgraph.feature_column import shared_embedding_columns as _shared_embedding_columns
from flowgraph.framework import dtypes
from flowgraph.framework.graph import control_dependencies, device, get_default_graph
from flowgraph.ops.array_identity_ops import identity
from flowgraph.ops.op_util import make_op, make_tensor
from flowgraph.ops.tpu_ops import cross_replica_sum
from flowgraph.ops.variable_scope import variable_scope
from flowgraph.train.optimizer import Optimizer

__all__ = ["CrossShardOptimizer", "InputPipelineConfig", "PaddingSpec", "RunConfig",
           "TPUConfig", "TPUEstimator", "TPUEstimatorSpec", "XLAOptions", "batch_parallel",
           "bfloat16_scope", "core", "cross_replica_sum", "experimental", "initialize_system",
           "outside_compilation", "replicate", "rewrite", "shard", "shutdown_system"]

logger = logging.getLogger("tensorflow")


# -- CrossShardOptimizer ---------------------------------------------------------------------
class CrossShardOptimizer(Optimizer):
    """Sums each gradient over the TPU replicas (``CrossReplicaSum``) before the wrapped
    optimizer applies it.

    Outside a TPU computation the number of shards is unknown and taken as 1 (a
    warning says so), so the loss is not rescaled; the ``CrossReplicaSum`` ops have no
    CPU kernel, so a training step fails when run, as in TensorFlow. Programs wrap their
    optimizer only ``if use_tpu`` (BERT's ``optimization.py``).
    """

    def __init__(self, opt, reduction="weighted_mean", name="CrossShardOptimizer",
                 group_assignment=None) -> None:
        if reduction not in ("weighted_sum", "weighted_mean"):
            raise ValueError(f"Argument `reduction` should be one of ('weighted_sum', "
                             f"'weighted_mean'). Received: {reduction}")
        if not isinstance(opt, Optimizer):
            raise TypeError(
                f"CrossShardOptimizer only works with tf.training.Optimizer and not Keras "
                f"Optimizer. Received: {opt}. If you are using TPUEstimator, you may instead "
                f"sum your gradients with: `grads = [tf.compat.v1.tpu.cross_replica_sum(g) "
                f"for g in grads]`.")
        super().__init__(False, name)
        self._opt = opt
        self._reduction = reduction
        self._group_assignment = group_assignment

    def compute_gradients(self, loss, var_list=None, **kwargs):
        logger.warning("CrossShardOptimizer should be used within a tpu_shard_context, but "
                       "got unset number_of_shards. Assuming 1.")
        # One shard: the weighted mean's 1/num_shards scale is 1, the loss is unchanged.
        return self._opt.compute_gradients(loss, var_list=var_list, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        summed = []
        graph = get_default_graph()
        for grad, var in grads_and_vars:
            if grad is None:
                summed.append((grad, var))
                continue
            with graph.colocate_with(grad.op if hasattr(grad, "op") else grad):
                summed.append((cross_replica_sum(grad, self._group_assignment), var))
        return self._opt.apply_gradients(summed, global_step, name)

    def get_slot(self, *args, **kwargs):
        return self._opt.get_slot(*args, **kwargs)

    def get_slot_names(self, *args, **kwargs):
        return self._opt.get_slot_names(*args, **kwargs)

    def variables(self):
        return self._opt.variables()


# -- bfloat16_scope --------------------------------------------------------------------------
def _bfloat16_getter(getter, *args, **kwargs):
    if kwargs.get("dtype") == dtypes.bfloat16:
        from flowgraph.ops.math_ops import cast

        kwargs["dtype"] = dtypes.float32
        return cast(getter(*args, **kwargs), dtypes.bfloat16)
    return getter(*args, **kwargs)


@contextlib.contextmanager
def bfloat16_scope(name=None):
    """A variable scope (named `name`, default ``''``) whose bfloat16 variables are
    stored as float32 and read through a cast to bfloat16."""
    with variable_scope(name if name is not None else "",
                        custom_getter=_bfloat16_getter) as scope:
        yield scope


# -- replication -----------------------------------------------------------------------------
class PaddingSpec(enum.IntEnum):
    AUTO = 0
    POWER_OF_TWO = 1


class XLAOptions(collections.namedtuple("XLAOptions", [
        "use_spmd_for_xla_partitioning", "enable_xla_dynamic_padder"])):
    """XLA compilation options of a TPU computation (recorded)."""

    __slots__ = ()

    def __new__(cls, use_spmd_for_xla_partitioning=True, enable_xla_dynamic_padder=True):
        return super().__new__(cls, use_spmd_for_xla_partitioning, enable_xla_dynamic_padder)


def core(num: int) -> str:
    """The device name of TPU core `num` of a replicated computation."""
    return f"device:TPU_REPLICATED_CORE:{num}"


def _as_list(outputs) -> list:
    if outputs is None:
        return []
    if isinstance(outputs, (list, tuple)):
        return list(outputs)
    return [outputs]


def replicate(computation, inputs=None, infeed_queue=None, device_assignment=None, name=None,
              maximum_shapes=None, padding_spec=None, xla_options=None):
    """Build `computation` replicated over ``len(inputs)`` TPU replicas.

    Returns one list of outputs per replica. The graph holds TensorFlow's replication
    ops, which have no CPU kernel: running an output fails, as in TensorFlow.
    """
    from flowgraph.framework.constant_op import convert_to_tensor

    inputs = [[]] if inputs is None else [list(r) for r in inputs]
    if not inputs:
        raise ValueError("Number of replicas must be >= 1")
    widths = {len(r) for r in inputs}
    if len(widths) != 1:
        raise ValueError("Replicas must have the same number of inputs. Replica 0 had "
                         f"{len(inputs[0])} inputs, others had {sorted(widths)}.")
    n = len(inputs)
    metadata = make_op("TPUReplicateMetadata", [], {"num_replicas": n},
                       name=f"{name or 'TPUReplicate'}/metadata" if name else None)
    args = []
    for i in range(len(inputs[0])):
        values = [convert_to_tensor(r[i]) for r in inputs]
        args.append(make_tensor("TPUReplicatedInput", values,
                                {"N": n, "T": values[0].dtype}, name=f"input{i}"))
    with control_dependencies([metadata]):
        results = _as_list(computation(*[identity(a) for a in args]))
    make_op("TPUCompilationResult", [], {}, name="TPUCompilationResult")
    per_replica = [[] for _ in range(n)]
    for j, value in enumerate(results):
        value = convert_to_tensor(value)
        outs = make_op("TPUReplicatedOutput", [identity(value)], {"num_replicas": n,
                                                                 "T": value.dtype},
                       name=f"output{j}").outputs
        for r in range(n):
            per_replica[r].append(identity(outs[r], name=f"output_{j}_shard_{r}"))
    return per_replica


def rewrite(computation, inputs=None, infeed_queue=None, device_assignment=None, name=None,
            xla_options=None):
    """`replicate` with one replica: the outputs of replica 0."""
    return replicate(computation, None if inputs is None else [inputs], infeed_queue,
                     device_assignment, name, xla_options=xla_options)[0]


def shard(computation, inputs=None, num_shards=1, input_shard_axes=None,
          outputs_from_all_shards=True, output_shard_axes=None, infeed_queue=None,
          device_assignment=None, name=None, xla_options=None):
    """Split each input along its axis into `num_shards`, `replicate` `computation` over
    them and concatenate the outputs (TensorFlow's shard)."""
    from flowgraph.framework.constant_op import convert_to_tensor
    from flowgraph.ops.array_ops import concat, split

    if num_shards <= 0:
        raise ValueError(f"num_shards must be a positive integer. Received {num_shards}")
    inputs = [convert_to_tensor(x) for x in (inputs or [])]
    axes = input_shard_axes or [0] * len(inputs)
    if len(axes) != len(inputs):
        raise ValueError(f"Length of input_shard_axes must be equal to the number of inputs. "
                         f"Received {len(inputs)} inputs and {len(axes)} input_shard_axes.")
    pieces = [split(x, num_shards, axis=a) for x, a in zip(inputs, axes)]
    replicas = replicate(computation, [[p[r] for p in pieces] for r in range(num_shards)]
                         if inputs else [[] for _ in range(num_shards)],
                         infeed_queue, device_assignment, name, xla_options=xla_options)
    if not replicas[0]:
        return []
    out_axes = output_shard_axes or [0] * len(replicas[0])
    return [concat([r[j] for r in replicas], axis=out_axes[j])
            for j in range(len(replicas[0]))]


def batch_parallel(computation, inputs=None, num_shards=1, infeed_queue=None,
                   device_assignment=None, name=None, xla_options=None):
    """`shard` along the batch dimension (axis 0) of every input and output."""
    return shard(computation, inputs, num_shards=num_shards, infeed_queue=infeed_queue,
                 device_assignment=device_assignment, name=name, xla_options=xla_options)


def outside_compilation(computation, *args, **kwargs):
    """Run `computation` on the host; outside a TPU computation it is simply called."""
    return computation(*args, **kwargs)


def initialize_system(embedding_config=None, job=None, compilation_failure_closes_chips=True,
                      tpu_cancellation_closes_chips=None):
    """The ``ConfigureDistributedTPU`` op on ``/device:TPU_SYSTEM:0`` (a string
    topology); without a TPU running it fails."""
    where = f"/job:{job}/device:TPU_SYSTEM:0" if job else "/device:TPU_SYSTEM:0"
    with device(where):
        return make_tensor("ConfigureDistributedTPU", [], {
            "compilation_failure_closes_chips": compilation_failure_closes_chips,
            "tpu_cancellation_closes_chips": {None: 0, True: 1, False: 2}[
                tpu_cancellation_closes_chips]})


def shutdown_system(job=None):
    """The ``ShutdownDistributedTPU`` op on ``/device:TPU_SYSTEM:0``."""
    where = f"/job:{job}/device:TPU_SYSTEM:0" if job else "/device:TPU_SYSTEM:0"
    with device(where):
        return make_op("ShutdownDistributedTPU", [], {})


# -- tf.tpu.experimental ---------------------------------------------------------------------
class _OptimizationParameters:
    def __init__(self, learning_rate, use_gradient_accumulation=True, clip_weight_min=None,
                 clip_weight_max=None, weight_decay_factor=None,
                 multiply_weight_decay_factor_by_learning_rate=None, clip_gradient_min=None,
                 clip_gradient_max=None) -> None:
        self.learning_rate = learning_rate
        self.use_gradient_accumulation = use_gradient_accumulation
        self.clip_weight_min = clip_weight_min
        self.clip_weight_max = clip_weight_max
        self.weight_decay_factor = weight_decay_factor
        self.multiply_weight_decay_factor_by_learning_rate = (
            multiply_weight_decay_factor_by_learning_rate)
        self.clip_gradient_min = clip_gradient_min
        self.clip_gradient_max = clip_gradient_max


class AdagradParameters(_OptimizationParameters):
    """Adagrad settings of TPU embedding tables (recorded)."""

    def __init__(self, learning_rate, initial_accumulator=0.1, **kwargs) -> None:
        super().__init__(learning_rate, **kwargs)
        self.initial_accumulator = initial_accumulator


class AdamParameters(_OptimizationParameters):
    """Adam settings of TPU embedding tables (recorded)."""

    def __init__(self, learning_rate, beta1=0.9, beta2=0.999, epsilon=1e-08,
                 lazy_adam=True, sum_inside_sqrt=True, **kwargs) -> None:
        super().__init__(learning_rate, **kwargs)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon
        self.lazy_adam, self.sum_inside_sqrt = lazy_adam, sum_inside_sqrt


class FtrlParameters(_OptimizationParameters):
    """FTRL settings of TPU embedding tables (recorded)."""

    def __init__(self, learning_rate, learning_rate_power=-0.5,
                 initial_accumulator_value=0.1, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, multiply_linear_by_learning_rate=False,
                 beta=0, allow_zero_accumulator=False, **kwargs) -> None:
        super().__init__(learning_rate, **kwargs)
        self.learning_rate_power = learning_rate_power
        self.initial_accumulator_value = initial_accumulator_value
        self.l1_regularization_strength = l1_regularization_strength
        self.l2_regularization_strength = l2_regularization_strength
        self.multiply_linear_by_learning_rate = multiply_linear_by_learning_rate
        self.beta = beta
        self.allow_zero_accumulator = allow_zero_accumulator


class StochasticGradientDescentParameters(_OptimizationParameters):
    """SGD settings of TPU embedding tables (recorded)."""


class DeviceOrderMode(enum.IntEnum):
    AUTO = 0
    RING = 1
    MESH = 2


TPUSystemMetadata = collections.namedtuple(
    "TPUSystemMetadata", ["num_cores", "num_hosts", "num_of_cores_per_host", "topology",
                          "devices"])


class Topology:
    """A TPU slice's topology; there is none without a TPU, so one must be given
    (`mesh_shape` and `device_coordinates`)."""

    def __init__(self, serialized=None, mesh_shape=None, device_coordinates=None) -> None:
        if serialized is not None:
            raise ValueError("Topology(serialized=...) parses a TopologyProto from a TPU "
                             "system; flowgraph has no TPU. Pass mesh_shape and "
                             "device_coordinates.")
        if mesh_shape is None or device_coordinates is None:
            raise TypeError("Topology needs mesh_shape and device_coordinates (there is no "
                            "TPU system to read them from).")
        import numpy as np

        self.mesh_shape = np.asarray(mesh_shape, dtype=np.int32)
        self.device_coordinates = np.asarray(device_coordinates, dtype=np.int32)

    @property
    def num_tasks(self) -> int:
        return int(self.device_coordinates.shape[0])

    @property
    def num_tpus_per_task(self) -> int:
        return int(self.device_coordinates.shape[1])


class DeviceAssignment:
    """Which TPU cores run each replica (`core_assignment[replica][core]` -> coordinates)."""

    def __init__(self, topology, core_assignment) -> None:
        if not isinstance(topology, Topology):
            raise ValueError(f"topology must be a Topology object, got {type(topology)}")
        import numpy as np

        self.topology = topology
        self.core_assignment = np.asarray(core_assignment, dtype=np.int32)

    @property
    def num_replicas(self) -> int:
        return int(self.core_assignment.shape[0])

    @property
    def num_cores_per_replica(self) -> int:
        return int(self.core_assignment.shape[1])


class HardwareFeature:
    """The features of a TPU chip (recorded from a proto)."""

    def __init__(self, tpu_hardware_feature_proto=None) -> None:
        self.tpu_hardware_feature_proto = tpu_hardware_feature_proto


def _no_tpu_name(cluster_resolver=None):
    if cluster_resolver is None:
        raise ValueError("Please provide a TPU Name to connect to.")
    raise RuntimeError("flowgraph has no TPU system to initialize or shut down (master "
                       f"{cluster_resolver.master()!r}); run the program's CPU path.")


def initialize_tpu_system(cluster_resolver=None):
    """TensorFlow's error without a TPU: no name is a ValueError."""
    _no_tpu_name(cluster_resolver)


def shutdown_tpu_system(cluster_resolver=None):
    """TensorFlow's error without a TPU: no name is a ValueError."""
    _no_tpu_name(cluster_resolver)


def embedding_column(categorical_column, dimension, combiner="mean", initializer=None,
                     max_sequence_length=0, learning_rate_fn=None, embedding_lookup_device=None,
                     tensor_core_shape=None, use_safe_embedding_lookup=True):
    """A TPU embedding column; on the CPU path the plain `tf.feature_column.embedding_column`
    it behaves as."""
    return _embedding_column(categorical_column, dimension, combiner=combiner,
                             initializer=initializer)


def shared_embedding_columns(categorical_columns, dimension, combiner="mean",
                             initializer=None, shared_embedding_collection_name=None,
                             max_sequence_lengths=None, learning_rate_fn=None,
                             embedding_lookup_device=None, tensor_core_shape=None,
                             use_safe_embedding_lookup=True):
    """TPU shared embedding columns; on the CPU path the plain
    `tf.feature_column.shared_embedding_columns`."""
    return _shared_embedding_columns(categorical_columns, dimension, combiner=combiner,
                                     initializer=initializer,
                                     shared_embedding_collection_name=(
                                         shared_embedding_collection_name))


def _embedding_getattr(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    raise NotImplementedError(
        f"tf.tpu.experimental.embedding.{name} is TensorFlow 2's TPU embedding API (it needs "
        f"a TPU and eager execution); flowgraph runs TPU programs on their CPU path: use "
        f"tf.feature_column.embedding_column.")


embedding = types.ModuleType(__name__ + ".experimental.embedding",
                             "`tf.tpu.experimental.embedding`: needs a TPU (refused).")
embedding.__getattr__ = _embedding_getattr

experimental = types.ModuleType(__name__ + ".experimental", "`tf.tpu.experimental`.")
for _obj in (AdagradParameters, AdamParameters, DeviceAssignment, DeviceOrderMode,
             FtrlParameters, HardwareFeature, StochasticGradientDescentParameters,
             TPUSystemMetadata, Topology, embedding_column, initialize_tpu_system,
             shared_embedding_columns, shutdown_tpu_system):
    setattr(experimental, _obj.__name__, _obj)
experimental.embedding = embedding
experimental.__all__ = sorted(n for n in vars(experimental) if not n.startswith("_"))
del _obj


# -- TF 1.x's tf.contrib.tpu only --------------------------------------------------------------
def export_estimator_savedmodel(estimator, export_dir_base, serving_input_receiver_fn,
                                assets_extra=None, as_text=False, checkpoint_path=None):
    """TF 1.x's helper exporting a (TPU)Estimator's serving graph: here its
    ``export_saved_model`` (the CPU graph)."""
    return estimator.export_saved_model(export_dir_base, serving_input_receiver_fn,
                                        assets_extra=assets_extra, as_text=as_text,
                                        checkpoint_path=checkpoint_path)


def _async_checkpoint_saver_hook(*args, **kwargs):
    """TF 1.x's asynchronous checkpoint hook: flowgraph's `CheckpointSaverHook`."""
    from flowgraph.train import CheckpointSaverHook

    return CheckpointSaverHook(*args, **kwargs)


AsyncCheckpointSaverHook = _async_checkpoint_saver_hook
__all__ += ["AsyncCheckpointSaverHook", "DeviceAssignment", "Topology",
            "export_estimator_savedmodel"]
