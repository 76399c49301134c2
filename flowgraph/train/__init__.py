"""The `tf.train` namespace: re-exports only."""

from flowgraph.train.coordinator import *
from flowgraph.train.input import *
from flowgraph.train.queue_runner import *
