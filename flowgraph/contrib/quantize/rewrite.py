"""The quantization rewrite: fake quantization after each matched layer's weights
(``<layer scope>/weights_quant``, last-value range, narrow range) and after its
activation (``<layer scope>/act_quant``, moving-average range), plus residual adds
(``conv_quant``, ``add_quant``, ``post_activation_bypass_quant``). The consumers are
rewired in place, so what the graph computes changes. With `quant_delay`, the quantized
values are used only once the ``fake_quantization_step`` counter (one per run) reaches it.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.contrib.quantize.rewrite import quantize
>>> with tf.Graph().as_default() as g:
...     y = tf.layers.dense(tf.ones([1, 2]), 1, activation=tf.nn.relu)
...     quantize(g, is_training=False)
...     g.get_operation_by_name("dense/MatMul").inputs[1].name
'dense/weights_quant/FakeQuantWithMinMaxVars:0'
"""

from __future__ import annotations

import logging
import re

from flowgraph.contrib.quantize import quant_ops
from flowgraph.contrib.quantize.layers import ACTIVATION_TYPES, find_layers
from flowgraph.framework import dtypes
from flowgraph.framework.graph import GraphKeys, get_default_graph, name_scope
from flowgraph.ops import math_ops, state_ops
from flowgraph.ops import variable_scope as vs
from flowgraph.ops.array_identity_ops import identity
from flowgraph.ops.control_flow_cond import cond
from flowgraph.ops.control_flow_cond import update_input as _update_input
from flowgraph.ops.init_ops import zeros_initializer

log = logging.getLogger("tensorflow")

__all__ = ["quantization_step", "quantize"]

_FAKE_QUANT_TYPES = {"FakeQuantWithMinMaxVars", "FakeQuantWithMinMaxArgs",
                     "FakeQuantWithMinMaxVarsPerChannel"}


def quantization_step():
    """The ``fake_quantization_step`` counter, incremented once per run (its
    ``fake_quantization_step/Identity`` tensor, created on first use)."""
    graph = get_default_graph()
    try:
        return graph.get_tensor_by_name("fake_quantization_step/Identity:0")
    except KeyError:
        pass
    with name_scope(None):
        step = vs.get_variable("fake_quantization_step", shape=[], dtype=dtypes.int64,
                               initializer=zeros_initializer(), trainable=False,
                               collections=[GraphKeys.GLOBAL_VARIABLES])
        with name_scope(step.op.name + "/"):
            return identity(state_ops.assign_add(step, 1))


def _parent(name: str) -> str:
    """The scope holding `name` ('' at the top level)."""
    m = re.search(r"^(.*)/([^/]+)", name)
    return m.group(1) if m else ""


def _followed_by_fake_quant(tensor) -> bool:
    pending = list(tensor.consumers())
    while pending:
        c = pending.pop()
        if c.type in _FAKE_QUANT_TYPES:
            return True
        if c.type in ("Reshape", "Identity"):
            for out in c.outputs:
                pending.extend(out.consumers())
    return False


def _reroute(new, old, consumers) -> int:
    """Make each op of `consumers` read `new` where it read `old`; the count of inputs
    changed."""
    count = 0
    for op in consumers:
        for i, t in enumerate(list(op.inputs)):
            if t is old:
                if hasattr(op, "_update_input"):
                    op._update_input(i, new)
                else:
                    _update_input(op, i, new)
                count += 1
    return count


def _insert_quant_op(context, name, producer, consumers, is_training, moving_avg=True,
                     init_min=-6.0, init_max=6.0, bits=8, symmetric=False, ema_decay=0.999,
                     quant_delay=None, vars_collection=GraphKeys.GLOBAL_VARIABLES,
                     narrow_range=False, producer_scope=None, consumer_scope=None):
    """Fake-quantize `producer`'s first output for `consumers`."""
    if producer_scope and not producer.name.startswith(producer_scope):
        return
    if consumer_scope and any(not c.name.startswith(consumer_scope) for c in consumers):
        return
    prefix = f"{context}/{name}" if context else name
    scope = get_default_graph().get_name_scope()
    if scope and prefix.startswith(scope + "/"):
        prefix = prefix[len(scope) + 1:]
    inputs = producer.outputs[0]
    if _followed_by_fake_quant(inputs):
        return
    fn = quant_ops.moving_avg_quantize if moving_avg else quant_ops.last_value_quantize
    kwargs = {"ema_decay": ema_decay} if moving_avg else {}
    quant = fn(inputs, init_min=init_min, init_max=init_max, is_training=is_training,
               num_bits=bits, narrow_range=narrow_range, symmetric=symmetric,
               vars_collection=vars_collection, name_prefix=prefix, **kwargs)
    if quant_delay and quant_delay > 0:
        active = math_ops.greater_equal(quantization_step(), quant_delay,
                                        name=prefix + "/activate_quant")
        quant = cond(active, lambda: quant, lambda: inputs, name=prefix + "/delayed_quant")
    consumers = sorted(set(consumers), key=lambda op: op.name)
    if consumers and _reroute(quant, inputs, consumers) < len(consumers):
        raise ValueError("quantize: No inputs quantized for ops: [" +
                         ", ".join(c.name for c in consumers) + "]")


def _consumers(op) -> set:
    return {c for out in op.outputs for c in out.consumers()}


def quantize(graph, is_training, weight_bits=8, activation_bits=8, symmetric=False,
             ema_decay=0.999, quant_delay=None, vars_collection=GraphKeys.GLOBAL_VARIABLES,
             scope=None) -> None:
    """Insert fake quantization into `graph` at every matched layer (only those in
    `scope`, when given)."""
    if scope and not scope.endswith("/"):
        scope += "/"
    common = {"is_training": is_training, "ema_decay": ema_decay,
              "quant_delay": quant_delay, "vars_collection": vars_collection,
              "symmetric": symmetric}
    matches = find_layers(graph)
    # consumers as the graph had them before the rewrite
    consumers_of = {op: _consumers(op) for m in matches
                    for op in (m.activation_op, m.bypass_op, m.post_activation_bypass_op)
                    if op is not None}
    for m in matches:
        context = _parent(m.layer_op.name)
        _insert_quant_op(context, "weights_quant", m.weight_tensor.op, [m.layer_op],
                         moving_avg=False, narrow_range=True, bits=weight_bits,
                         consumer_scope=scope, **common)
        add_context = context
        if m.bypass_op is not None:
            add_context = _parent(context)
        _insert_quant_op(add_context, "act_quant", m.activation_op,
                         consumers_of[m.activation_op], moving_avg=True, init_min=0.0,
                         bits=activation_bits, producer_scope=scope, **common)
        if m.bypass_op is not None:
            _insert_quant_op(context, "conv_quant", m.bias_add_op, [m.bypass_op],
                             bits=activation_bits, producer_scope=scope,
                             consumer_scope=scope, **common)
            following = consumers_of[m.bypass_op]
            if not any(c.type in ACTIVATION_TYPES for c in following):
                _insert_quant_op(add_context, "add_quant", m.bypass_op, following,
                                 bits=activation_bits, producer_scope=scope,
                                 consumer_scope=scope, **common)
        if m.post_activation_bypass_op is not None:
            post = m.post_activation_bypass_op
            following = consumers_of[post]
            if not any(c.type in ACTIVATION_TYPES for c in following):
                _insert_quant_op(_parent(post.name), "post_activation_bypass_quant", post,
                                 following, bits=activation_bits, producer_scope=scope,
                                 **common)
