"""The `tf.train` namespace: re-exports only."""

from flowgraph.summary.event_format import summary_iterator
from flowgraph.train.checkpoint_state import *
from flowgraph.train.checkpoint_utils import *
from flowgraph.train.coordinator import *
from flowgraph.train.input import *
from flowgraph.train.queue_runner import *
from flowgraph.train.saver import *
from flowgraph.train.training_util import *
