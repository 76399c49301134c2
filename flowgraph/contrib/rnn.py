"""`tf.contrib.rnn`: TensorFlow 1.x's aliases of the recurrent cells and of
`static_rnn`/`static_bidirectional_rnn`, plus contrib's `OutputProjectionWrapper` and
`InputProjectionWrapper` (see flowgraph/ops/rnn_cell_impl.py and
flowgraph/ops/rnn.py), and contrib's own cells: the block cells, layer-normalized,
NAS, UGRNN, intersection, coupled-gate and convolutional LSTMs, the highway and
attention wrappers and the stacked bidirectional RNNs (``rnn_extra.py``,
``rnn_cells.py``).

Example
-------
>>> import flowgraph as tf
>>> tf.contrib.rnn.LSTMCell is tf.nn.rnn_cell.LSTMCell
True
"""

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
    GRUBlockCellV2,
    HighwayWrapper,
    LayerNormBasicLSTMCell,
    LSTMBlockFusedCell,
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
    "FusedRNNCell",
    "FusedRNNCellAdaptor",
    "GRUBlockCellV2",
    "GRUCell",
    "HighwayWrapper",
    "InputProjectionWrapper",
    "IntersectionRNNCell",
    "LSTMBlockCell",
    "LSTMBlockFusedCell",
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


class LSTMBlockCell(LSTMCell):
    """contrib's fused LSTM: the same variables (``lstm_cell/kernel``, ``lstm_cell/bias``,
    peepholes ``w_i_diag``, ``w_f_diag``, ``w_o_diag``) and values as `LSTMCell`; here
    it is computed by the same ops. ``cell_clip`` of None or a negative value disables
    clipping.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.contrib.rnn.LSTMBlockCell(3).state_size
    LSTMStateTuple(c=3, h=3)
    """

    def __init__(self, num_units: int, forget_bias: float = 1.0, cell_clip=None,
                 use_peephole: bool = False, dtype=None, reuse=None,
                 name: str = "lstm_cell") -> None:
        clip = None if cell_clip is None or cell_clip < 0 else cell_clip
        super().__init__(num_units, use_peepholes=use_peephole, cell_clip=clip,
                         forget_bias=forget_bias, reuse=reuse, name=name, dtype=dtype)
