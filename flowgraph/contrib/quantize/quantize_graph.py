"""`tf.contrib.quantize`'s entry points: rewrite a graph for quantization-aware training
(`create_training_graph`) or for evaluating such a model (`create_eval_graph`); the
``experimental_`` variants choose the bit widths, symmetric ranges and a scope.

Call them after the model is built and before the optimizer: a graph that already has
training ops is refused, as TensorFlow does. Batch norms are not folded into the
weights (TensorFlow's ``FoldBatchNorms`` step): a layer whose activation follows a batch
norm is left unquantized.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default() as g:
...     y = tf.layers.dense(tf.ones([1, 2]), 1, activation=tf.nn.relu)
...     create_training_graph(g)
...     sorted(v.op.name for v in tf.global_variables() if "weights_quant" in v.op.name)
['dense/weights_quant/max', 'dense/weights_quant/min']
"""

from __future__ import annotations

from flowgraph.contrib.quantize.rewrite import quantize
from flowgraph.framework.graph import get_default_graph

__all__ = [
    "create_eval_graph",
    "create_training_graph",
    "experimental_create_eval_graph",
    "experimental_create_training_graph",
]

_APPLY = ("Adadelta", "Adagrad", "AdagradDA", "Adam", "AdaMax", "AddSign",
          "CenteredRMSProp", "Ftrl", "FtrlV2", "GradientDescent", "Momentum",
          "KerasMomentum", "PowerSign", "ProximalAdagrad", "ProximalGradientDescent",
          "RMSProp")
_TRAINING_OPS = frozenset(
    f"{prefix}Apply{name}" for name in _APPLY
    for prefix in ("", "Resource", "Sparse", "ResourceSparse"))


def _check_for_training_ops(graph) -> None:
    found = sorted({op.type for op in graph.get_operations()} & _TRAINING_OPS)
    if found:
        raise ValueError(f"Training op found in graph, exiting {set(found)}: call "
                         "tf.contrib.quantize before creating the optimizer's train op.")


def _create_graph(input_graph=None, is_training=True, weight_bits=8, activation_bits=8,
                  symmetric=False, quant_delay=None, freeze_bn_delay=None, scope=None):
    del freeze_bn_delay  # batch norms are not folded
    graph = input_graph if input_graph is not None else get_default_graph()
    _check_for_training_ops(graph)
    with graph.as_default():
        quantize(graph, is_training, quant_delay=quant_delay, weight_bits=weight_bits,
                 activation_bits=activation_bits, symmetric=symmetric, scope=scope)


def create_training_graph(input_graph=None, quant_delay=0):
    """Rewrite `input_graph` (default: the default graph) for quantization-aware
    training: 8-bit fake quantization of the layers' weights and activations, used once
    `quant_delay` runs have passed."""
    _create_graph(input_graph, is_training=True, quant_delay=quant_delay)


def create_eval_graph(input_graph=None):
    """Rewrite `input_graph` for evaluation: fake quantization to the ranges stored in
    the ``weights_quant``/``act_quant`` variables (restored from training)."""
    _create_graph(input_graph, is_training=False)


def experimental_create_training_graph(input_graph=None, weight_bits=8, activation_bits=8,
                                       symmetric=False, quant_delay=0, freeze_bn_delay=None,
                                       scope=None):
    """`create_training_graph` with the bit widths, symmetric ranges and the scope of
    the ops to rewrite chosen."""
    _create_graph(input_graph, is_training=True, weight_bits=weight_bits,
                  activation_bits=activation_bits, symmetric=symmetric,
                  quant_delay=quant_delay, freeze_bn_delay=freeze_bn_delay, scope=scope)


def experimental_create_eval_graph(input_graph=None, weight_bits=8, activation_bits=8,
                                   symmetric=False, quant_delay=None, scope=None):
    """`create_eval_graph` with the bit widths, symmetric ranges and scope chosen."""
    _create_graph(input_graph, is_training=False, weight_bits=weight_bits,
                  activation_bits=activation_bits, symmetric=symmetric,
                  quant_delay=quant_delay, scope=scope)
