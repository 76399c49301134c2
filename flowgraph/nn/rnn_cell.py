"""The `tf.nn.rnn_cell` namespace: re-exports only (see flowgraph/ops/rnn_cell_impl.py and
rnn_cell_wrappers.py)."""

from flowgraph.ops.rnn_cell_impl import (
    BasicLSTMCell,
    BasicRNNCell,
    GRUCell,
    LSTMCell,
    LSTMStateTuple,
    RNNCell,
)
from flowgraph.ops.rnn_cell_wrappers import (
    DeviceWrapper,
    DropoutWrapper,
    MultiRNNCell,
    ResidualWrapper,
)

__all__ = [
    "BasicLSTMCell",
    "BasicRNNCell",
    "DeviceWrapper",
    "DropoutWrapper",
    "GRUCell",
    "LSTMCell",
    "LSTMStateTuple",
    "MultiRNNCell",
    "RNNCell",
    "ResidualWrapper",
]
