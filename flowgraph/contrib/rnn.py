"""`tf.contrib.rnn`: TensorFlow 1.x's aliases of the recurrent cells and of
`static_rnn`/`static_bidirectional_rnn`, plus contrib's `OutputProjectionWrapper` and
`InputProjectionWrapper` (see flowgraph/ops/rnn_cell_impl.py and
flowgraph/ops/rnn.py), and contrib's own cells: the block cells, layer-normalized,
NAS, UGRNN, intersection, coupled-gate and convolutional LSTMs, the highway and
attention wrappers and the stacked bidirectional RNNs (``rnn_block.py``,
``rnn_extra.py``, ``rnn_cells.py``).

Example
-------
>>> import flowgraph as tf
>>> tf.contrib.rnn.LSTMCell is tf.nn.rnn_cell.LSTMCell
True
"""

from flowgraph.contrib.legacy_seq2seq_attention import EmbeddingWrapper
from flowgraph.contrib.rnn_block import (
    GRUBlockCell,
    GRUBlockCellV2,
    LSTMBlockCell,
    LSTMBlockFusedCell,
    LSTMBlockWrapper,
)
from flowgraph.contrib.rnn_cells import (
    Conv1DLSTMCell,
    Conv2DLSTMCell,
    Conv3DLSTMCell,
    ConvLSTMCell,
    CoupledInputForgetGateLSTMCell,
    IntersectionRNNCell,
    LayerNormBasicGRUCell,
    NASCell,
)
from flowgraph.contrib.rnn_extra import (
    AttentionCellWrapper,
    FusedRNNCell,
    FusedRNNCellAdaptor,
    HighwayWrapper,
    LayerNormBasicLSTMCell,
    TimeReversedFusedRNN,
    UGRNNCell,
    stack_bidirectional_dynamic_rnn,
    stack_bidirectional_rnn,
)
from flowgraph.ops.rnn import static_bidirectional_rnn, static_rnn
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
    InputProjectionWrapper,
    MultiRNNCell,
    OutputProjectionWrapper,
    ResidualWrapper,
)

__all__ = [
    "AttentionCellWrapper",
    "BasicLSTMCell",
    "BasicRNNCell",
    "Conv1DLSTMCell",
    "Conv2DLSTMCell",
    "Conv3DLSTMCell",
    "ConvLSTMCell",
    "CoupledInputForgetGateLSTMCell",
    "DeviceWrapper",
    "DropoutWrapper",
    "EmbeddingWrapper",
    "FusedRNNCell",
    "FusedRNNCellAdaptor",
    "GRUBlockCell",
    "GRUBlockCellV2",
    "GRUCell",
    "HighwayWrapper",
    "InputProjectionWrapper",
    "IntersectionRNNCell",
    "LSTMBlockCell",
    "LSTMBlockFusedCell",
    "LSTMBlockWrapper",
    "LSTMCell",
    "LSTMStateTuple",
    "LayerNormBasicGRUCell",
    "LayerNormBasicLSTMCell",
    "MultiRNNCell",
    "NASCell",
    "OutputProjectionWrapper",
    "RNNCell",
    "ResidualWrapper",
    "TimeReversedFusedRNN",
    "UGRNNCell",
    "stack_bidirectional_dynamic_rnn",
    "stack_bidirectional_rnn",
    "static_bidirectional_rnn",
    "static_rnn",
]



# A package path, empty: TensorFlow's `tensorflow.contrib.rnn.python.ops.*` module paths
# import as views of this namespace (`flowgraph.python.tf_paths`).
__path__: list[str] = []
