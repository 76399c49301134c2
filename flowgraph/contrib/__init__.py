"""The `tf.contrib` namespace, reduced to the parts TF1 model code commonly imports.

`tf.contrib.slim` (with `tf.contrib.framework`'s `arg_scope` and variable helpers),
`tf.contrib.training` (`HParams`, `create_train_op`), `tf.contrib.losses` and
`tf.contrib.metrics` (TF1's first loss and ``streaming_*`` metric APIs), `tf.contrib.opt`
(`AdamWOptimizer`, `LazyAdamOptimizer`), `tf.contrib.estimator` (heads, `forward_features`,
early stopping), `tf.contrib.data`, `tf.contrib.predictor` and
`tf.contrib.learn.preprocessing.VocabularyProcessor`; see docs/contrib.md.

`tf.contrib.layers` holds the TF1 regularizers, initializers, functional layers and
`optimize_loss`. `tf.contrib.lookup` aliases `tf.lookup` and TF1's vocabulary-table
helpers (`index_table_from_tensor`, ...). `tf.contrib.distributions` holds every class of
`tf.distributions` (the same objects) plus TF 1.x's multivariate normals,
`TransformedDistribution` and `bijectors` (TensorFlow 2.15 has no ``contrib``);
`tf.contrib.bayesflow.monte_carlo` estimates expectations from samples.

`tf.contrib.cudnn_rnn` (cuDNN RNN layers computed on any device, their compatible
cells), `tf.contrib.summary` (TF 1.x's writer-resource summaries),
`tf.contrib.factorization` (k-means), `tf.contrib.staging` (`StagingArea`) and
`tf.contrib.tensorboard.plugins.projector` (the embedding projector's config).

`tf.contrib.deprecated` (TF 1.0's ``*_summary`` functions), `tf.contrib.stateless`,
`tf.contrib.linalg` (the `tf.linalg` operators), `tf.contrib.nn`, `tf.contrib.compiler`
(`jit.experimental_jit_scope`, `xla.compile`), `tf.contrib.mixed_precision` (loss
scaling) and `tf.contrib.graph_editor` (graph surgery, gradient checkpointing).

`tf.contrib.gan` (TFGAN: models, losses, train ops and loops) and
`tf.contrib.quantize` (fake-quantization graph rewrites) follow TF 1.15.
`tf.contrib.resampler` (bilinear sampling for spatial transformers) and
`tf.contrib.losses.metric_learning` (embedding losses) compute what TF 1.x's did, and
`tf.contrib.kernel_methods` (random Fourier features, `KernelLinearClassifier`).

Example
-------
>>> import flowgraph as tf
>>> tf.contrib.distributions.Normal is tf.distributions.Normal
True
"""

from flowgraph import keras
from flowgraph.contrib import (
    bayesflow,
    cluster_resolver,
    compiler,
    crf,
    cudnn_rnn,
    data,
    deprecated,
    distribute,
    distributions,
    estimator,
    factorization,
    feature_column,
    framework,
    gan,
    graph_editor,
    image,
    integrate,
    kernel_methods,
    layers,
    learn,
    legacy_seq2seq,
    linalg,
    lookup,
    losses,
    metrics,
    mixed_precision,
    nn,
    opt,
    predictor,
    quantize,
    resampler,
    rnn,
    seq2seq,
    slim,
    sparsemax,
    staging,
    stateless,
    summary,
    tensorboard,
    tpu,
    training,
    util,
)
from flowgraph.math import signal

__all__ = [
    "bayesflow",
    "cluster_resolver",
    "compiler",
    "crf",
    "cudnn_rnn",
    "data",
    "deprecated",
    "distribute",
    "distributions",
    "estimator",
    "factorization",
    "feature_column",
    "framework",
    "gan",
    "graph_editor",
    "image",
    "integrate",
    "keras",
    "kernel_methods",
    "layers",
    "learn",
    "legacy_seq2seq",
    "linalg",
    "lookup",
    "losses",
    "metrics",
    "mixed_precision",
    "nn",
    "opt",
    "predictor",
    "quantize",
    "resampler",
    "rnn",
    "seq2seq",
    "signal",
    "slim",
    "sparsemax",
    "staging",
    "stateless",
    "summary",
    "tensorboard",
    "tpu",
    "training",
    "util",
]
