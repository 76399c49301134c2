"""`tf.contrib.seq2seq`: TensorFlow 1.x's sequence-to-sequence decoding library.

- `sequence_loss` (``loss.py``): weighted cross-entropy over time steps.
- Helpers (``helper.py``): where a decoder's next inputs come from: `TrainingHelper`,
  `GreedyEmbeddingHelper`, `SampleEmbeddingHelper`, `ScheduledEmbeddingTrainingHelper`,
  `ScheduledOutputTrainingHelper`, `InferenceHelper`, `CustomHelper`.
- Decoders (``decoder.py``): `BasicDecoder` and `dynamic_decode`, one `tf.while_loop`.
- Attention (``attention_wrapper.py``): `BahdanauAttention`, `LuongAttention`,
  `AttentionWrapper`, `hardmax`; monotonic attention (``monotonic_attention.py``):
  `BahdanauMonotonicAttention`, `LuongMonotonicAttention`, `monotonic_attention`.
- Beam search (``beam_search_decoder.py``): `BeamSearchDecoder`, `tile_batch`,
  `gather_tree`.

Variable names, defaults and output structures are TF 1.x's, so checkpoints of
seq2seq models carry over.

Example
-------
>>> import flowgraph as tf
>>> tf.contrib.seq2seq.BasicDecoderOutput._fields
('rnn_output', 'sample_id')
"""

from flowgraph.contrib.seq2seq.attention_wrapper import (
    AttentionMechanism,
    AttentionWrapper,
    AttentionWrapperState,
    BahdanauAttention,
    LuongAttention,
    hardmax,
    safe_cumprod,
)
from flowgraph.contrib.seq2seq.beam_search_decoder import (
    BeamSearchDecoder,
    BeamSearchDecoderOutput,
    BeamSearchDecoderState,
    FinalBeamSearchDecoderOutput,
    gather_tree,
    tile_batch,
)
from flowgraph.contrib.seq2seq.decoder import (
    BasicDecoder,
    BasicDecoderOutput,
    Decoder,
    dynamic_decode,
)
from flowgraph.contrib.seq2seq.helper import (
    CustomHelper,
    GreedyEmbeddingHelper,
    Helper,
    InferenceHelper,
    SampleEmbeddingHelper,
    ScheduledEmbeddingTrainingHelper,
    ScheduledOutputTrainingHelper,
    TrainingHelper,
)
from flowgraph.contrib.seq2seq.loss import sequence_loss
from flowgraph.contrib.seq2seq.monotonic_attention import (
    BahdanauMonotonicAttention,
    LuongMonotonicAttention,
    monotonic_attention,
)

__all__ = [
    "AttentionMechanism",
    "AttentionWrapper",
    "AttentionWrapperState",
    "BahdanauAttention",
    "BahdanauMonotonicAttention",
    "BasicDecoder",
    "BasicDecoderOutput",
    "BeamSearchDecoder",
    "BeamSearchDecoderOutput",
    "BeamSearchDecoderState",
    "CustomHelper",
    "Decoder",
    "FinalBeamSearchDecoderOutput",
    "GreedyEmbeddingHelper",
    "Helper",
    "InferenceHelper",
    "LuongAttention",
    "LuongMonotonicAttention",
    "SampleEmbeddingHelper",
    "ScheduledEmbeddingTrainingHelper",
    "ScheduledOutputTrainingHelper",
    "TrainingHelper",
    "dynamic_decode",
    "gather_tree",
    "hardmax",
    "monotonic_attention",
    "safe_cumprod",
    "sequence_loss",
    "tile_batch",
]
