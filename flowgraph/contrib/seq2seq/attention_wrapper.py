"""Attention: `BahdanauAttention`, `LuongAttention` and the `AttentionWrapper` cell.

An attention mechanism holds the encoder's outputs (the ``memory``, ``[batch,
max_time, depth]``), its ``values`` (the memory with positions past
`memory_sequence_length` zeroed) and its ``keys`` (the values through
``memory_layer``, a bias-free `Dense` created where the mechanism is constructed:
variable ``memory_layer/kernel``). Called with a query (the decoder cell's output) it
scores every memory position, turns the scores into ``alignments`` with its
``probability_fn`` (softmax by default; masked positions score ``-inf``) and returns
them as its next state.

`AttentionWrapper` wraps a cell. Each step it feeds ``cell_input_fn(inputs,
previous attention)`` (a concatenation by default) to the cell, queries each
mechanism with the cell's output, takes the alignment-weighted sum of the values
(the context) and, with `attention_layer_size`, projects ``[cell_output, context]``
through a bias-free ``attention_layer``. Its state is an `AttentionWrapperState`;
``alignment_history=True`` records each step's alignments in a TensorArray.

Variables, as TensorFlow 1.x names them inside the decoder's scope:
``attention_wrapper/<cell name>/...``, ``attention_wrapper/bahdanau_attention/
query_layer/kernel``, ``.../attention_v`` (and ``attention_g``, ``attention_b`` with
``normalize``), ``attention_wrapper/luong_attention/attention_g`` (with ``scale``),
``attention_wrapper/attention_layer/kernel``.
"""

from __future__ import annotations

import collections
import math

import numpy as np

from flowgraph.framework import dtypes, nest
from flowgraph.framework.constant_op import constant_value, convert_to_tensor
from flowgraph.framework.graph import (
    GraphKeys,
    control_dependencies,
    get_collection,
    name_scope,
)
from flowgraph.framework.operation import Tensor
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.layers.core import Dense
from flowgraph.ops import array_ops, check_ops, init_ops, math_ops, math_reduce, nn_ops
from flowgraph.ops import variable_scope as vs
from flowgraph.ops.rnn_cell_impl import RNNCell, zeros_for_size
from flowgraph.ops.tensor_array import TensorArray

__all__ = [
    "AttentionMechanism",
    "AttentionWrapper",
    "AttentionWrapperState",
    "BahdanauAttention",
    "LuongAttention",
    "hardmax",
    "safe_cumprod",
]


class AttentionMechanism:
    """The base of the attention mechanisms."""


def _static_or_dynamic(t, axis: int):
    v = t.shape[axis].value if t.shape.ndims is not None else None
    return v if v is not None else array_ops.shape(t)[axis]


def _prepare_memory(memory, memory_sequence_length, check_inner_dims_defined: bool):
    memory = nest.map_structure(lambda m: convert_to_tensor(m, name="memory"), memory)
    if check_inner_dims_defined:
        for m in nest.flatten(memory):
            if not m.shape[2:].is_fully_defined():
                raise ValueError(f"Expected memory {m.name} to have fully defined inner "
                                 f"dims, but saw shape: {m.shape}")
    if memory_sequence_length is None:
        return memory
    lengths = convert_to_tensor(memory_sequence_length, name="memory_sequence_length")
    first = nest.flatten(memory)[0]
    mask = array_ops.sequence_mask(lengths, maxlen=array_ops.shape(first)[1],
                                   dtype=first.dtype)

    def apply(m):
        extra = [1] * (m.shape.ndims - 2)
        return m * array_ops.reshape(mask, array_ops.concat(
            [array_ops.shape(mask), extra], 0)) if extra else m * mask

    return nest.map_structure(apply, memory)


def _mask_score(score, memory_sequence_length, score_mask_value):
    if memory_sequence_length is None:
        return score
    mask = array_ops.sequence_mask(memory_sequence_length, maxlen=array_ops.shape(score)[1])
    return array_ops.where(mask, score, score_mask_value * array_ops.ones_like(score))


class _BaseAttentionMechanism(AttentionMechanism):
    def __init__(self, query_layer, memory, probability_fn, memory_sequence_length=None,
                 memory_layer=None, check_inner_dims_defined: bool = True,
                 score_mask_value=None, name=None) -> None:
        self._query_layer = query_layer
        self._memory_layer = memory_layer
        self.dtype = memory_layer.dtype if memory_layer is not None and \
            getattr(memory_layer, "dtype", None) is not None else None
        if not callable(probability_fn):
            raise TypeError(f"probability_fn must be callable, saw type: "
                            f"{type(probability_fn).__name__}")
        with name_scope(name, "BaseAttentionMechanismInit", nest.flatten(memory)):
            self._values = _prepare_memory(memory, memory_sequence_length,
                                           check_inner_dims_defined)
            self._keys = memory_layer(self._values) if memory_layer is not None else \
                self._values
            self._batch_size = _static_or_dynamic(self._keys, 0)
            self._alignments_size = _static_or_dynamic(self._keys, 1)
        if self.dtype is None:
            self.dtype = self._values.dtype
        if score_mask_value is None:
            score_mask_value = self._values.dtype.as_numpy_dtype(-np.inf)
        lengths = None if memory_sequence_length is None else \
            convert_to_tensor(memory_sequence_length)
        self._probability_fn = lambda score, prev: probability_fn(
            _mask_score(score, lengths, score_mask_value), prev)

    memory_layer = property(lambda self: self._memory_layer)
    query_layer = property(lambda self: self._query_layer)
    values = property(lambda self: self._values)
    keys = property(lambda self: self._keys)
    batch_size = property(lambda self: self._batch_size)
    alignments_size = property(lambda self: self._alignments_size)
    state_size = property(lambda self: self._alignments_size)

    def initial_alignments(self, batch_size, dtype):
        """All-zero alignments ``[batch_size, max_time]``."""
        if isinstance(self._alignments_size, int):
            return zeros_for_size(self._alignments_size, batch_size, dtype)
        return array_ops.zeros(array_ops.stack([batch_size, self._alignments_size]), dtype)

    def initial_state(self, batch_size, dtype):
        return self.initial_alignments(batch_size, dtype)


class _ScoredAttentionMechanism(_BaseAttentionMechanism):
    """A mechanism with bias-free dense projections of `num_units` (of the memory, and of
    the query when `query_layer`) whose alignments are `probability_fn` of the score a
    subclass computes (`_score`) in its variable scope (`_score_scope`)."""

    _score_scope: str

    def __init__(self, num_units: int, memory, query_layer: bool, probability_fn,
                 memory_sequence_length, score_mask_value, dtype, name: str) -> None:
        dtype = dtype or dtypes.float32
        super().__init__(
            query_layer=(Dense(num_units, name="query_layer", use_bias=False, dtype=dtype)
                         if query_layer else None),
            memory_layer=Dense(num_units, name="memory_layer", use_bias=False, dtype=dtype),
            memory=memory, probability_fn=probability_fn,
            memory_sequence_length=memory_sequence_length, score_mask_value=score_mask_value,
            name=name)
        self._num_units = num_units
        self._name = name

    def __call__(self, query, state):
        """``(alignments, next_state)`` for ``query [batch, query_depth]``."""
        with vs.variable_scope(None, self._score_scope, [query]):
            score = self._score(query)
        alignments = self._probability_fn(score, state)
        return alignments, alignments


def _softmax_fn(probability_fn):
    fn = nn_ops.softmax if probability_fn is None else probability_fn
    return lambda score, _: fn(score)


def _bahdanau_score(processed_query, keys, normalize: bool):
    dtype = processed_query.dtype
    num_units = keys.shape[2].value
    processed_query = array_ops.expand_dims(processed_query, 1)
    v = vs.get_variable("attention_v", [num_units], dtype=dtype)
    if normalize:
        g = vs.get_variable("attention_g", dtype=dtype, shape=(),
                            initializer=init_ops.constant_initializer(math.sqrt(1.0 / num_units)))
        b = vs.get_variable("attention_b", [num_units], dtype=dtype,
                            initializer=init_ops.zeros_initializer())
        normed_v = g * v * math_ops.rsqrt(math_reduce.reduce_sum(math_ops.square(v)))
        return math_reduce.reduce_sum(normed_v * math_ops.tanh(keys + processed_query + b), [2])
    return math_reduce.reduce_sum(v * math_ops.tanh(keys + processed_query), [2])


class BahdanauAttention(_ScoredAttentionMechanism):
    """Additive attention: ``score_j = v . tanh(W_k memory_j + W_q query)`` (Bahdanau et
    al., 2015); ``normalize=True`` is the weight-normalized form of Salimans and
    Kingma, 2016 (``attention_g``, ``attention_b``).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     att = tf.contrib.seq2seq.BahdanauAttention(8, tf.ones([2, 5, 3]), [5, 2])
    ...     print(att.keys.shape, att.alignments_size, tf.global_variables()[0].name)
    (2, 5, 8) 5 memory_layer/kernel:0
    """

    _score_scope = "bahdanau_attention"

    def __init__(self, num_units: int, memory, memory_sequence_length=None,
                 normalize: bool = False, probability_fn=None, score_mask_value=None,
                 dtype=None, custom_key_value_fn=None, name: str = "BahdanauAttention") -> None:
        super().__init__(num_units, memory, True, _softmax_fn(probability_fn),
                         memory_sequence_length, score_mask_value, dtype, name)
        self._normalize = normalize

    def _score(self, query):
        return _bahdanau_score(self.query_layer(query), self._keys, self._normalize)


def _luong_score(query, keys, scale: bool):
    depth = query.shape[-1].value
    key_units = keys.shape[-1].value
    if depth != key_units:
        raise ValueError(
            "Incompatible or unknown inner dimensions between query and keys.  Query "
            f"({query.name}) has units: {depth}.  Keys ({keys.name}) have units: "
            f"{key_units}.  Perhaps you need to set num_units to the keys' dimension "
            f"({key_units})?")
    score = array_ops.squeeze(math_ops.matmul(array_ops.expand_dims(query, 1), keys,
                                              transpose_b=True), [1])
    if scale:
        g = vs.get_variable("attention_g", dtype=query.dtype, shape=(),
                            initializer=init_ops.ones_initializer())
        score = g * score
    return score


class LuongAttention(_ScoredAttentionMechanism):
    """Multiplicative attention: ``score_j = query . W memory_j`` (Luong et al., 2015);
    ``scale=True`` multiplies the scores by a learned scalar ``attention_g``.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     att = tf.contrib.seq2seq.LuongAttention(4, tf.ones([2, 5, 3]), scale=True)
    ...     a, _ = att(tf.ones([2, 4]), att.initial_state(2, tf.float32))
    ...     print(a.shape)
    (2, 5)
    """

    _score_scope = "luong_attention"

    def __init__(self, num_units: int, memory, memory_sequence_length=None,
                 scale: bool = False, probability_fn=None, score_mask_value=None,
                 dtype=None, custom_key_value_fn=None, name: str = "LuongAttention") -> None:
        super().__init__(num_units, memory, False, _softmax_fn(probability_fn),
                         memory_sequence_length, score_mask_value, dtype, name)
        self._scale = scale

    def _score(self, query):
        return _luong_score(query, self._keys, self._scale)


def hardmax(logits, name=None):
    """One-hot of the argmax along the last axis, in the dtype of `logits`.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     print(tf.Session().run(tf.contrib.seq2seq.hardmax([[0.1, 0.7, 0.2]])))
    [[0. 1. 0.]]
    """
    with name_scope(name, "Hardmax", [logits]):
        logits = convert_to_tensor(logits, name="logits")
        depth = _static_or_dynamic(logits, -1)
        return array_ops.one_hot(math_reduce.argmax(logits, -1), depth, dtype=logits.dtype)


def safe_cumprod(x, *args, **kwargs):
    """``cumprod`` of values in ``(0, 1]`` computed as ``exp(cumsum(log(x)))`` with `x`
    clipped to ``[tiny, 1]``; the other arguments are `tf.cumsum`'s.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     p = tf.contrib.seq2seq.safe_cumprod([0.5, 0.5, 0.0], exclusive=True)
    ...     print(tf.Session().run(p).round(3))
    [1.   0.5  0.25]
    """
    with name_scope(None, "SafeCumprod", [x]):
        x = convert_to_tensor(x, name="x")
        tiny = np.finfo(x.dtype.as_numpy_dtype).tiny
        return math_ops.exp(math_reduce.cumsum(
            math_ops.log(math_ops.clip_by_value(x, tiny, 1.0)), *args, **kwargs))


class AttentionWrapperState(collections.namedtuple(
        "AttentionWrapperState", ("cell_state", "attention", "time", "alignments",
                                  "alignment_history", "attention_state"))):
    """The state of an `AttentionWrapper`: the wrapped cell's state, the last
    attention vector, the step count, the last alignments (one per mechanism), the
    alignment history (TensorArrays, or ``()``) and the mechanisms' states."""

    __slots__ = ()

    def clone(self, **kwargs):
        """A copy with the given fields replaced (e.g. ``cell_state=encoder_state``);
        a replaced tensor takes the static shape of the one it replaces when they are
        compatible.

        Example
        -------
        >>> import flowgraph as tf
        >>> s = tf.contrib.seq2seq.AttentionWrapperState(1, 2, 3, 4, 5, 6)
        >>> s.clone(time=7).time
        7
        """
        def with_same_shape(old, new):
            if isinstance(old, Tensor) and isinstance(new, Tensor):
                if not new.shape.is_compatible_with(old.shape):
                    raise ValueError(f"AttentionWrapperState.clone: {new.name} has shape "
                                     f"{new.shape}, incompatible with the {old.shape} of the "
                                     "value it replaces.")
                new.set_shape(old.shape)
            return new

        return nest.map_structure(with_same_shape, self, self._replace(**kwargs))


def _compute_attention(mechanism, cell_output, attention_state, attention_layer):
    alignments, next_attention_state = mechanism(cell_output, state=attention_state)
    context = array_ops.squeeze(
        math_ops.matmul(array_ops.expand_dims(alignments, 1), mechanism.values), [1])
    if attention_layer is not None:
        attention = attention_layer(array_ops.concat([cell_output, context], 1))
    else:
        attention = context
    return attention, alignments, next_attention_state


class AttentionWrapper(RNNCell):
    """A cell with attention over one or several mechanisms (see the module's notes).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     mech = tf.contrib.seq2seq.LuongAttention(4, tf.ones([2, 5, 4]), [5, 3])
    ...     cell = tf.contrib.seq2seq.AttentionWrapper(tf.nn.rnn_cell.LSTMCell(4), mech,
    ...                                                attention_layer_size=6)
    ...     out, state = cell(tf.ones([2, 3]), cell.zero_state(2, tf.float32))
    ...     print(out.shape, state.alignments.shape)
    (2, 6) (2, 5)
    """

    def __init__(self, cell, attention_mechanism, attention_layer_size=None,
                 alignment_history: bool = False, cell_input_fn=None,
                 output_attention: bool = True, initial_cell_state=None, name=None,
                 attention_layer=None, attention_fn=None) -> None:
        super().__init__(name=name)
        self._is_multi = isinstance(attention_mechanism, list | tuple)
        mechanisms = tuple(attention_mechanism) if self._is_multi else (attention_mechanism,)
        for m in mechanisms:
            if not isinstance(m, AttentionMechanism):
                raise TypeError("AttentionWrapper: attention_mechanism must be an "
                                "AttentionMechanism or a list of them, saw type: "
                                f"{type(m).__name__}")
        if cell_input_fn is None:
            def cell_input_fn(inputs, attention):
                return array_ops.concat([inputs, attention], -1)
        elif not callable(cell_input_fn):
            raise TypeError(f"cell_input_fn must be callable, saw type: "
                            f"{type(cell_input_fn).__name__}")
        if attention_layer_size is not None and attention_layer is not None:
            raise ValueError("Only one of attention_layer_size and attention_layer should "
                             "be set")
        if attention_layer_size is not None:
            sizes = tuple(attention_layer_size) if isinstance(attention_layer_size,
                                                              list | tuple) \
                else (attention_layer_size,)
            if len(sizes) != len(mechanisms):
                raise ValueError("If provided, attention_layer_size must contain exactly one "
                                 "integer per attention_mechanism, saw: "
                                 f"{len(sizes)} vs {len(mechanisms)}")
            self._attention_layers = tuple(
                Dense(size, name="attention_layer", use_bias=False, dtype=m.dtype)
                for size, m in zip(sizes, mechanisms))
            self._attention_layer_size = sum(sizes)
        elif attention_layer is not None:
            layers = tuple(attention_layer) if isinstance(attention_layer, list | tuple) \
                else (attention_layer,)
            if len(layers) != len(mechanisms):
                raise ValueError("If provided, attention_layer must contain exactly one "
                                 "layer per attention_mechanism, saw: "
                                 f"{len(layers)} vs {len(mechanisms)}")
            self._attention_layers = layers
            self._attention_layer_size = sum(int(layer.units) for layer in layers)
        else:
            self._attention_layers = None
            self._attention_layer_size = sum(m.values.shape[-1].value for m in mechanisms)
        self._cell = cell
        self._attention_mechanisms = mechanisms
        self._cell_input_fn = cell_input_fn
        self._output_attention = output_attention
        self._alignment_history = alignment_history
        self._attention_fn = attention_fn or _compute_attention
        self._initial_cell_state = initial_cell_state

    def _item_or_tuple(self, seq):
        t = tuple(seq)
        return t if self._is_multi else t[0]

    @property
    def output_size(self):
        return self._attention_layer_size if self._output_attention else \
            self._cell.output_size

    @property
    def state_size(self):
        ms = self._attention_mechanisms
        return AttentionWrapperState(
            cell_state=self._cell.state_size, time=TensorShape([]),
            attention=self._attention_layer_size,
            alignments=self._item_or_tuple(m.alignments_size for m in ms),
            attention_state=self._item_or_tuple(m.state_size for m in ms),
            alignment_history=self._item_or_tuple(
                m.alignments_size if self._alignment_history else () for m in ms))

    def _collect(self, key: str) -> list:
        """The variables of `key` in the wrapper's scope (cell, attention and attention
        layer), then those of the mechanisms' memory layers."""
        found = [] if self._scope is None else get_collection(key, self._scope.name + "/")
        seen = {id(v) for v in found}
        pool = {id(v) for v in get_collection(key)}
        for m in self._attention_mechanisms:
            layer = m.memory_layer
            for v in (layer.variables if layer is not None else []):
                if id(v) not in seen and id(v) in pool:
                    found.append(v)
                    seen.add(id(v))
        return found

    @property
    def variables(self) -> list:
        return self._collect(GraphKeys.GLOBAL_VARIABLES)

    weights = variables

    @property
    def trainable_variables(self) -> list:
        return self._collect(GraphKeys.TRAINABLE_VARIABLES)

    trainable_weights = trainable_variables

    def _check_batch(self, batch_size, what: str):
        memory_batch = self._attention_mechanisms[0].batch_size
        static = constant_value(convert_to_tensor(batch_size))
        if isinstance(memory_batch, int) and static is not None:
            if int(static) != memory_batch:
                raise ValueError(
                    f"When calling {what} of AttentionWrapper {self._base_name}: "
                    f"Non-matching batch sizes between the memory (encoder output, "
                    f"{memory_batch}) and the requested batch size ({int(static)}).  Are you "
                    "using the BeamSearchDecoder?  If so, make sure your encoder output has "
                    "been tiled to beam_width via tf.contrib.seq2seq.tile_batch, and the "
                    "batch_size= argument passed to zero_state is batch_size * beam_width.")
            return []
        return [check_ops.assert_equal(
            batch_size, memory_batch,
            message=f"When calling {what} of AttentionWrapper {self._base_name}: "
                    "Non-matching batch sizes between the memory (encoder output) and the "
                    "requested batch size.")]

    def zero_state(self, batch_size, dtype):
        """The initial `AttentionWrapperState`: the cell's zero state (or
        `initial_cell_state`), zero attention and alignments, empty histories."""
        with name_scope(f"{type(self).__name__}ZeroState", values=[batch_size]):
            cell_state = self._initial_cell_state if self._initial_cell_state is not None \
                else self._cell.zero_state(batch_size, dtype)
            checks = self._check_batch(batch_size, "zero_state")
            if checks:
                with control_dependencies(checks):
                    cell_state = nest.map_structure(
                        lambda s: array_ops.identity(s, name="checked_cell_state"), cell_state)
            alignments = [m.initial_alignments(batch_size, dtype)
                          for m in self._attention_mechanisms]
            return AttentionWrapperState(
                cell_state=cell_state, time=array_ops.zeros([], dtypes.int32),
                attention=zeros_for_size(self._attention_layer_size, batch_size, dtype),
                alignments=self._item_or_tuple(alignments),
                attention_state=self._item_or_tuple(
                    m.initial_state(batch_size, dtype) for m in self._attention_mechanisms),
                alignment_history=self._item_or_tuple(
                    TensorArray(dtype, size=0, dynamic_size=True, element_shape=a.shape)
                    if self._alignment_history else () for a in alignments))

    def call(self, inputs, state):
        if not isinstance(state, AttentionWrapperState):
            raise TypeError("Expected state to be instance of AttentionWrapperState. "
                            f"Received type {type(state).__name__} instead.")
        cell_inputs = self._cell_input_fn(inputs, state.attention)
        cell_output, next_cell_state = self._cell(cell_inputs, state.cell_state)
        if self._is_multi:
            prev_states, prev_histories = state.attention_state, state.alignment_history
        else:
            prev_states, prev_histories = [state.attention_state], [state.alignment_history]
        attentions, alignments, att_states, histories = [], [], [], []
        for i, mechanism in enumerate(self._attention_mechanisms):
            layer = self._attention_layers[i] if self._attention_layers else None
            attention, align, next_att_state = self._attention_fn(
                mechanism, cell_output, prev_states[i], layer)
            history = prev_histories[i].write(state.time, align) \
                if self._alignment_history else ()
            attentions.append(attention)
            alignments.append(align)
            att_states.append(next_att_state)
            histories.append(history)
        attention = array_ops.concat(attentions, 1)
        next_state = AttentionWrapperState(
            time=state.time + 1, cell_state=next_cell_state, attention=attention,
            attention_state=self._item_or_tuple(att_states),
            alignments=self._item_or_tuple(alignments),
            alignment_history=self._item_or_tuple(histories))
        return (attention if self._output_attention else cell_output), next_state
