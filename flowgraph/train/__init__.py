"""The `tf.train` namespace: re-exports only."""

from flowgraph.distributed import ClusterSpec, Server, replica_device_setter
from flowgraph.distributed.sync_replicas import sync_replicas_optimizer_class
from flowgraph.framework.example_proto import *  # tf.train.Example and friends
from flowgraph.framework.tf_formats.graph_util import write_graph
from flowgraph.summary.event_format import summary_iterator
from flowgraph.train import slot_creator
from flowgraph.train.adadelta import *
from flowgraph.train.adagrad import *
from flowgraph.train.adam import *
from flowgraph.train.basic_session_run_hooks import *
from flowgraph.train.checkpoint_object import Checkpoint
from flowgraph.train.checkpoint_object_manager import CheckpointManager
from flowgraph.train.checkpoint_state import *
from flowgraph.train.checkpoint_utils import *
from flowgraph.train.coordinator import *
from flowgraph.train.ftrl import *
from flowgraph.train.gradient_descent import *
from flowgraph.train.input import *
from flowgraph.train.learning_rate_decay import *
from flowgraph.train.momentum import *
from flowgraph.train.monitored_session import *
from flowgraph.train.optimizer import *
from flowgraph.train.optimizer import Optimizer as _Optimizer
from flowgraph.train.queue_runner import *
from flowgraph.train.rmsprop import *
from flowgraph.train.saver import *
from flowgraph.train.scaffold import *
from flowgraph.train.session_manager import *
from flowgraph.train.session_run_hook import *
from flowgraph.train.session_run_hook import SessionRunHook as _SessionRunHook
from flowgraph.train.training_util import *

# Built from tf.train's base classes: flowgraph.distributed sits below flowgraph.train.
SyncReplicasOptimizer = sync_replicas_optimizer_class(_Optimizer, _SessionRunHook)
# Input producers, moving averages, Supervisor, and (issue 15) proximal optimizers,
# more schedules, conditional batching, checkpoint polling and cluster messages.
from flowgraph.distributed.cluster_protos import ClusterDef, JobDef, ServerDef  # noqa: E402
from flowgraph.ops.sdca_ops import sdca_fprint, sdca_optimizer, sdca_shrink_l1  # noqa: E402
from flowgraph.train import experimental  # noqa: E402
from flowgraph.train.checkpoint_iteration import *  # noqa: E402
from flowgraph.train.input_maybe import *  # noqa: E402
from flowgraph.train.input_producers import *  # noqa: E402
from flowgraph.train.learning_rate_decay_extra import *  # noqa: E402
from flowgraph.train.meta_graph_export import export_meta_graph  # noqa: E402
from flowgraph.train.meta_graph_import import import_meta_graph  # noqa: E402
from flowgraph.train.moving_averages import ExponentialMovingAverage  # noqa: E402
from flowgraph.train.proximal import *  # noqa: E402
from flowgraph.train.supervisor import Supervisor  # noqa: E402
from flowgraph.train.warm_starting import VocabInfo, warm_start  # noqa: E402
