"""`tf.contrib.crf`: a linear-chain conditional random field over tag sequences.

A sequence of ``T`` positions with ``N`` possible tags is scored by per-position unary
potentials ``inputs [batch, T, N]`` (a network's logits) plus a transition score
``transition_params[i, j]`` for each tag ``i`` followed by tag ``j``. For one tag
sequence ``y`` of length ``L``::

    score(y) = sum_{t < L} inputs[t, y_t] + sum_{0 < t < L} transition_params[y_{t-1}, y_t]

The log-likelihood of ``y`` is ``score(y) - log Z`` where ``log Z`` (`crf_log_norm`)
is the log-sum-exp of the scores of all ``N ** L`` sequences, computed by the forward
algorithm: `tf.nn.dynamic_rnn` over `CrfForwardRnnCell`, whose state is the vector of
log-sums of the prefixes ending in each tag. `crf_decode` finds the best sequence in
the graph (Viterbi: a forward pass keeping back pointers, `CrfDecodeForwardRnnCell`,
then a backward pass following them, `CrfDecodeBackwardRnnCell`); `viterbi_decode`
does the same in NumPy for one sequence. Positions at or past a sequence's length do
not count; a sequence of length 0 scores 0.

Example
-------
>>> import numpy as np
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     logits = tf.constant(np.log([[[0.9, 0.1], [0.2, 0.8]]]), tf.float32)
...     trans = tf.constant([[0.0, -2.0], [0.0, 0.0]])
...     tags, score = tf.contrib.crf.crf_decode(logits, trans, tf.constant([2]))
...     print(tf.Session().run(tags))
[[0 0]]
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops import array_ops, math_ops, math_reduce
from flowgraph.ops import variable_scope as vs
from flowgraph.ops.control_flow_cond import smart_cond
from flowgraph.ops.rnn import dynamic_rnn
from flowgraph.ops.rnn_cell_impl import RNNCell

__all__ = [
    "CrfDecodeBackwardRnnCell",
    "CrfDecodeForwardRnnCell",
    "CrfForwardRnnCell",
    "crf_binary_score",
    "crf_decode",
    "crf_log_likelihood",
    "crf_log_norm",
    "crf_multitag_sequence_score",
    "crf_sequence_score",
    "crf_unary_score",
    "viterbi_decode",
]


def _check_potentials(inputs, what: str):
    inputs = convert_to_tensor(inputs, name="inputs")
    if inputs.shape.ndims is not None and inputs.shape.ndims != 3:
        raise ValueError(f"{what}: inputs must be [batch_size, max_seq_len, num_tags], got "
                         f"shape {inputs.shape}.")
    return inputs


def _one_step(inputs) -> bool | object:
    """True when the time dimension is statically 1; else a boolean tensor."""
    t = inputs.shape[1].value if inputs.shape.ndims is not None else None
    if t is not None:
        return t == 1
    return math_ops.equal(array_ops.shape(inputs)[1], 1)


def _zero_empty(values, lengths):
    """Zero the entries of sequences of length <= 0."""
    return array_ops.where(math_ops.less_equal(lengths, 0), array_ops.zeros_like(values), values)


def _lengths_less_one(lengths):
    return math_ops.maximum(math_ops.cast(0, lengths.dtype), lengths - 1)


# -- scores of given tag sequences ------------------------------------------------------
def crf_unary_score(tag_indices, sequence_lengths, inputs):
    """Sum of ``inputs[b, t, tag_indices[b, t]]`` over the valid positions: ``[batch]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     s = tf.contrib.crf.crf_unary_score(tf.constant([[1, 0]]), tf.constant([1]),
    ...                                        tf.constant([[[1.0, 2.0], [3.0, 4.0]]]))
    ...     print(tf.Session().run(s))
    [2.]
    """
    tag_indices = convert_to_tensor(tag_indices)
    sequence_lengths = convert_to_tensor(sequence_lengths)
    inputs = convert_to_tensor(inputs)
    shape = array_ops.shape(inputs)
    batch_size, max_len, num_tags = shape[0], shape[1], shape[2]
    flat_inputs = array_ops.reshape(inputs, [-1])
    offsets = array_ops.expand_dims(array_ops.range(batch_size) * max_len * num_tags, 1)
    offsets += array_ops.expand_dims(array_ops.range(max_len) * num_tags, 0)
    flat_indices = array_ops.reshape(
        offsets + math_ops.cast(tag_indices, dtypes.int32), [-1])
    scores = array_ops.reshape(array_ops.gather(flat_inputs, flat_indices),
                               [batch_size, max_len])
    masks = array_ops.sequence_mask(sequence_lengths, maxlen=array_ops.shape(tag_indices)[1],
                                    dtype=scores.dtype)
    return math_reduce.reduce_sum(scores * masks, 1)


def crf_binary_score(tag_indices, sequence_lengths, transition_params):
    """Sum of the transition scores between consecutive valid tags: ``[batch]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     s = tf.contrib.crf.crf_binary_score(tf.constant([[1, 0, 1]]), tf.constant([3]),
    ...                                         tf.constant([[0.0, 1.0], [2.0, 0.0]]))
    ...     print(tf.Session().run(s))
    [3.]
    """
    tag_indices = math_ops.cast(convert_to_tensor(tag_indices), dtypes.int32)
    transition_params = convert_to_tensor(transition_params)
    num_tags = array_ops.shape(transition_params)[0]
    num_transitions = array_ops.shape(tag_indices)[1] - 1
    start = array_ops.slice(tag_indices, [0, 0], array_ops.stack([-1, num_transitions]))
    end = array_ops.slice(tag_indices, [0, 1], array_ops.stack([-1, num_transitions]))
    flat = array_ops.gather(array_ops.reshape(transition_params, [-1]),
                            start * num_tags + end)
    masks = array_ops.sequence_mask(sequence_lengths, maxlen=array_ops.shape(tag_indices)[1],
                                    dtype=transition_params.dtype)
    truncated = array_ops.slice(masks, [0, 1], [-1, -1])
    return math_reduce.reduce_sum(flat * truncated, 1)


def crf_sequence_score(inputs, tag_indices, sequence_lengths, transition_params):
    """Unnormalized score of each given tag sequence: ``[batch]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     s = tf.contrib.crf.crf_sequence_score(
    ...         tf.constant([[[1.0, 2.0], [3.0, 4.0]]]), tf.constant([[1, 0]]),
    ...         tf.constant([2]), tf.constant([[0.0, 1.0], [2.0, 0.0]]))
    ...     print(tf.Session().run(s))
    [7.]
    """
    inputs = _check_potentials(inputs, "crf_sequence_score")
    tag_indices = convert_to_tensor(tag_indices)
    sequence_lengths = convert_to_tensor(sequence_lengths)

    def single():
        batch = array_ops.shape(inputs)[0]
        rows = array_ops.expand_dims(array_ops.range(batch), 1)
        idx = array_ops.concat([rows, math_ops.cast(tag_indices, dtypes.int32)], 1)
        scores = array_ops.gather_nd(array_ops.squeeze(inputs, [1]), idx)
        return _zero_empty(scores, sequence_lengths)

    def multi():
        return (crf_unary_score(tag_indices, sequence_lengths, inputs)
                + crf_binary_score(tag_indices, sequence_lengths, transition_params))

    return smart_cond(_one_step(inputs), single, multi)


def crf_multitag_sequence_score(inputs, tag_bitmap, sequence_lengths, transition_params):
    """Log-sum-exp of the scores of every sequence allowed by ``tag_bitmap [batch, T,
    N]`` (a boolean mask of the tags each position may take).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     s = tf.contrib.crf.crf_multitag_sequence_score(
    ...         tf.zeros([1, 2, 2]), tf.constant([[[True, True], [True, False]]]),
    ...         tf.constant([2]), tf.zeros([2, 2]))
    ...     print(round(float(tf.Session().run(s)[0]), 4))
    0.6931
    """
    inputs = _check_potentials(inputs, "crf_multitag_sequence_score")
    mask = convert_to_tensor(tag_bitmap)
    filtered = array_ops.where(mask, inputs, array_ops.fill(array_ops.shape(inputs),
                                                           math_ops.cast(-np.inf, inputs.dtype)))
    return crf_log_norm(filtered, sequence_lengths, transition_params)


# -- the partition function ----------------------------------------------------------------
class _StatelessCell(RNNCell):
    """A cell without variables: called directly, no variable scope of its own."""

    def __call__(self, inputs, state, scope=None):
        return self.call(inputs, state)


class _TransitionCell(_StatelessCell):
    """A stateless cell over ``[batch, num_tags]`` states that scores every move
    ``previous tag -> tag`` as ``state[previous] + transition_params[previous, tag]``."""

    def __init__(self, transition_params) -> None:
        super().__init__()
        self._transition_params = array_ops.expand_dims(convert_to_tensor(transition_params), 0)
        self._num_tags = self._transition_params.shape[1].value

    state_size = property(lambda self: self._num_tags)
    output_size = property(lambda self: self._num_tags)

    def _move_scores(self, state):
        """``[batch, previous tag, tag]`` scores of every move."""
        return array_ops.expand_dims(state, 2) + self._transition_params


class CrfForwardRnnCell(_TransitionCell):
    """One step of the forward algorithm: ``alpha' = inputs + logsumexp_i(alpha_i +
    transition_params[i, :])``; output and state are ``alpha'`` ``[batch, num_tags]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.contrib.crf.CrfForwardRnnCell(tf.zeros([3, 3])).state_size
    3
    """

    def call(self, inputs, state):
        scores = self._move_scores(state)
        new_alphas = inputs + math_reduce.reduce_logsumexp(scores, [1])
        return new_alphas, new_alphas


def crf_log_norm(inputs, sequence_lengths, transition_params):
    """``log Z``: the log-sum-exp of the scores of all tag sequences, ``[batch]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     z = tf.contrib.crf.crf_log_norm(tf.zeros([1, 3, 2]), tf.constant([3]),
    ...                                     tf.zeros([2, 2]))
    ...     print(round(float(tf.Session().run(z)[0]), 4))  # log(2 ** 3)
    2.0794
    """
    inputs = _check_potentials(inputs, "crf_log_norm")
    sequence_lengths = convert_to_tensor(sequence_lengths)
    transition_params = convert_to_tensor(transition_params)
    first = array_ops.squeeze(array_ops.slice(inputs, [0, 0, 0], [-1, 1, -1]), [1])

    def single():
        return _zero_empty(math_reduce.reduce_logsumexp(first, [1]), sequence_lengths)

    def multi():
        rest = array_ops.slice(inputs, [0, 1, 0], [-1, -1, -1])
        _, alphas = dynamic_rnn(CrfForwardRnnCell(transition_params), rest,
                                sequence_length=_lengths_less_one(sequence_lengths),
                                initial_state=first, dtype=inputs.dtype)
        return _zero_empty(math_reduce.reduce_logsumexp(alphas, [1]), sequence_lengths)

    return smart_cond(_one_step(inputs), single, multi)


def crf_log_likelihood(inputs, tag_indices, sequence_lengths, transition_params=None):
    """Log-likelihood of each tag sequence, and the transition matrix.

    Without `transition_params`, creates the variable ``transitions [num_tags,
    num_tags]`` in the current variable scope (``num_tags`` must be known statically).
    Returns ``(log_likelihood [batch], transition_params)``; minimize
    ``-reduce_mean(log_likelihood)`` to train.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     ll, trans = tf.contrib.crf.crf_log_likelihood(
    ...         tf.zeros([2, 3, 4]), tf.zeros([2, 3], tf.int32), tf.constant([3, 1]))
    ...     print(trans.name, trans.shape)
    transitions:0 (4, 4)
    """
    inputs = _check_potentials(inputs, "crf_log_likelihood")
    if transition_params is None:
        num_tags = inputs.shape[2].value if inputs.shape.ndims is not None else None
        if num_tags is None:
            raise ValueError("crf_log_likelihood: the number of tags (inputs.shape[2]) must "
                             "be known to create the 'transitions' variable; pass "
                             f"transition_params instead (inputs: {inputs.shape}).")
        transition_params = vs.get_variable("transitions", [num_tags, num_tags],
                                            dtype=inputs.dtype)
    score = crf_sequence_score(inputs, tag_indices, sequence_lengths, transition_params)
    log_norm = crf_log_norm(inputs, sequence_lengths, transition_params)
    return score - log_norm, transition_params


# -- decoding ---------------------------------------------------------------------------
def viterbi_decode(score, transition_params):
    """The best tag sequence of one sequence, in NumPy.

    `score` is ``[seq_len, num_tags]``, `transition_params` ``[num_tags, num_tags]``.
    Returns ``(viterbi, viterbi_score)``: the tags as a list of ints, and the score of
    that sequence.

    Example
    -------
    >>> import numpy as np
    >>> import flowgraph as tf
    >>> tags, score = tf.contrib.crf.viterbi_decode(np.array([[2.0, 0.0], [0.0, 1.0]]),
    ...                                             np.zeros([2, 2]))
    >>> tags, float(score)
    ([0, 1], 3.0)
    """
    score = np.asarray(score)
    transition_params = np.asarray(transition_params)
    if score.ndim != 2 or transition_params.shape != (score.shape[1], score.shape[1]):
        raise ValueError(f"viterbi_decode: expected score [seq_len, num_tags] and "
                         f"transition_params [num_tags, num_tags], got {score.shape} and "
                         f"{transition_params.shape}.")
    trellis = np.zeros_like(score)
    backpointers = np.zeros_like(score, dtype=np.int32)
    trellis[0] = score[0]
    for t in range(1, score.shape[0]):
        v = np.expand_dims(trellis[t - 1], 1) + transition_params
        trellis[t] = score[t] + np.max(v, 0)
        backpointers[t] = np.argmax(v, 0)
    viterbi = [int(np.argmax(trellis[-1]))]
    for bp in reversed(backpointers[1:]):
        viterbi.append(int(bp[viterbi[-1]]))
    viterbi.reverse()
    return viterbi, np.max(trellis[-1])


class CrfDecodeForwardRnnCell(_TransitionCell):
    """One Viterbi step: the state is the best score of a prefix ending in each tag; the
    output the back pointers ``[batch, num_tags]`` (int32) to the previous tag.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.contrib.crf.CrfDecodeForwardRnnCell(tf.zeros([4, 4])).output_size
    4
    """

    def call(self, inputs, state):
        scores = self._move_scores(state)
        new_state = inputs + math_reduce.reduce_max(scores, [1])
        backpointers = math_ops.cast(math_reduce.argmax(scores, 1), dtypes.int32)
        return backpointers, new_state


class CrfDecodeBackwardRnnCell(_StatelessCell):
    """Follows the back pointers one step: the state is the current tag ``[batch, 1]``,
    the inputs the back pointers of that step, the output the previous tag.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.contrib.crf.CrfDecodeBackwardRnnCell(4).state_size
    1
    """

    def __init__(self, num_tags: int) -> None:
        super().__init__()
        self._num_tags = num_tags

    state_size = property(lambda self: 1)
    output_size = property(lambda self: 1)

    def call(self, inputs, state):
        state = array_ops.squeeze(state, [1])
        rows = array_ops.range(array_ops.shape(inputs)[0])
        tags = array_ops.gather_nd(inputs, array_ops.stack([rows, state], 1))
        tags = array_ops.expand_dims(tags, -1)
        return tags, tags


def crf_decode(potentials, transition_params, sequence_length):
    """The highest scoring tag sequences, in the graph.

    Returns ``(decode_tags [batch, max_seq_len] int32, best_score [batch])``; positions
    past a sequence's length hold 0.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     tags, best = tf.contrib.crf.crf_decode(
    ...         tf.constant([[[2.0, 0.0], [0.0, 1.0], [5.0, 0.0]]]),
    ...         tf.zeros([2, 2]), tf.constant([2]))
    ...     print(tf.Session().run([tags, best]))
    [array([[0, 1, 0]], dtype=int32), array([3.], dtype=float32)]
    """
    potentials = _check_potentials(potentials, "crf_decode")
    transition_params = convert_to_tensor(transition_params)
    sequence_length = convert_to_tensor(sequence_length)

    def single():
        tags = math_ops.cast(math_reduce.argmax(potentials, 2), dtypes.int32)
        best = math_reduce.reduce_max(array_ops.squeeze(potentials, [1]), 1)
        return tags, best

    def multi():
        num_tags = potentials.shape[2].value
        first = array_ops.squeeze(array_ops.slice(potentials, [0, 0, 0], [-1, 1, -1]), [1])
        rest = array_ops.slice(potentials, [0, 1, 0], [-1, -1, -1])
        less_one = _lengths_less_one(sequence_length)
        backpointers, last_score = dynamic_rnn(
            CrfDecodeForwardRnnCell(transition_params), rest, sequence_length=less_one,
            initial_state=first, dtype=dtypes.int32)
        backpointers = array_ops.reverse_sequence(backpointers, less_one, seq_axis=1)
        last_tag = array_ops.expand_dims(
            math_ops.cast(math_reduce.argmax(last_score, 1), dtypes.int32), -1)
        tags, _ = dynamic_rnn(CrfDecodeBackwardRnnCell(num_tags), backpointers,
                              sequence_length=less_one, initial_state=last_tag,
                              dtype=dtypes.int32)
        tags = array_ops.concat([last_tag, array_ops.squeeze(tags, [2])], 1)
        tags = array_ops.reverse_sequence(tags, sequence_length, seq_axis=1)
        tags.set_shape(TensorShape(potentials.shape[:2]))
        return tags, math_reduce.reduce_max(last_score, 1)

    return smart_cond(_one_step(potentials), single, multi)
