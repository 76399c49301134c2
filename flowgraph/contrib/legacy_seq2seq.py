"""`tf.contrib.legacy_seq2seq`: the list-of-time-steps sequence models of TF1's first
translation and char-RNN tutorials. The plain models and the losses
(`flowgraph.contrib.legacy_seq2seq_core`): `rnn_decoder`, `basic_rnn_seq2seq`,
`tied_rnn_seq2seq`, `sequence_loss_by_example`, `sequence_loss`; the embedding and
attention models (`flowgraph.contrib.legacy_seq2seq_attention`): `embedding_rnn_decoder`,
`embedding_rnn_seq2seq`, `attention_decoder`, `embedding_attention_decoder`,
`embedding_attention_seq2seq`, `model_with_buckets`.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     logits = [tf.constant([[2.0, 0.0]])] * 2
...     targets = [tf.constant([0])] * 2
...     loss = tf.contrib.legacy_seq2seq.sequence_loss(logits, targets, [tf.ones([1])] * 2)
...     print(round(float(tf.Session().run(loss)), 4))
0.1269
"""

from flowgraph.contrib.legacy_seq2seq_attention import (
    attention_decoder,
    embedding_attention_decoder,
    embedding_attention_seq2seq,
    embedding_rnn_decoder,
    embedding_rnn_seq2seq,
    model_with_buckets,
)
from flowgraph.contrib.legacy_seq2seq_core import (
    basic_rnn_seq2seq,
    rnn_decoder,
    sequence_loss,
    sequence_loss_by_example,
    tied_rnn_seq2seq,
)

__all__ = ["attention_decoder", "basic_rnn_seq2seq", "embedding_attention_decoder",
           "embedding_attention_seq2seq", "embedding_rnn_decoder", "embedding_rnn_seq2seq",
           "model_with_buckets", "rnn_decoder", "sequence_loss", "sequence_loss_by_example",
           "tied_rnn_seq2seq"]
