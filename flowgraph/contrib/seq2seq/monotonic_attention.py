"""Monotonic attention (Raffel et al., 2017): `monotonic_attention`,
`BahdanauMonotonicAttention` and `LuongMonotonicAttention`.

A monotonic mechanism scans the memory left to right from where it stopped at the last
step; at each position it stops with probability ``p_choose_i = sigmoid(score)``. The
expected alignment given the previous one is

    attention_i = p_i * sum_{j <= i} prev_j * prod_{j <= k < i} (1 - p_k)

computed by a scan (``mode="recursive"``), in closed form with cumulative products
(``"parallel"``, the default) or, with hard 0/1 choices, exactly (``"hard"``). The
first alignment is one-hot on the first memory position. The score gets a learned
scalar bias ``attention_score_bias`` (initialized to `score_bias_init`); the other
variables are those of `BahdanauAttention` / `LuongAttention`, in scopes
``bahdanau_monotonic_attention`` / ``luong_monotonic_attention``.
"""

from __future__ import annotations

from flowgraph.contrib.seq2seq.attention_wrapper import (
    _bahdanau_score,
    _luong_score,
    _ScoredAttentionMechanism,
    safe_cumprod,
)
from flowgraph.framework import dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.ops import array_ops, init_ops, math_ops, math_reduce, random_ops
from flowgraph.ops import variable_scope as vs
from flowgraph.ops.functional_ops import scan

__all__ = ["BahdanauMonotonicAttention", "LuongMonotonicAttention", "monotonic_attention"]


def monotonic_attention(p_choose_i, previous_attention, mode: str):
    """The expected monotonic alignment from the stopping probabilities `p_choose_i`
    ``[batch, memory_time]`` and the previous alignment, with ``mode`` one of
    ``"recursive"``, ``"parallel"`` or ``"hard"``.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     a = tf.contrib.seq2seq.monotonic_attention([[0.5, 0.5, 0.5]], [[1.0, 0.0, 0.0]],
    ...                                                "parallel")
    ...     print(tf.Session().run(a).round(3))
    [[0.5   0.25  0.125]]
    """
    p_choose_i = convert_to_tensor(p_choose_i, name="p_choose_i")
    previous_attention = convert_to_tensor(previous_attention, name="previous_attention")
    if mode == "recursive":
        batch = p_choose_i.shape[0].value or array_ops.shape(p_choose_i)[0]
        ones = array_ops.ones(array_ops.stack([batch, 1]), p_choose_i.dtype)
        shifted = array_ops.concat([ones, 1 - p_choose_i[:, :-1]], 1)
        q = scan(lambda x, yz: array_ops.reshape(yz[0] * x + yz[1], array_ops.reshape(
            batch, [1])), [array_ops.transpose(shifted), array_ops.transpose(previous_attention)],
            array_ops.zeros(array_ops.reshape(batch, [1]), p_choose_i.dtype))
        return p_choose_i * array_ops.transpose(q)
    if mode == "parallel":
        cumprod = safe_cumprod(1 - p_choose_i, axis=1, exclusive=True)
        return p_choose_i * cumprod * math_reduce.cumsum(
            previous_attention / math_ops.clip_by_value(cumprod, 1e-10, 1.0), axis=1)
    if mode == "hard":
        p_choose_i = p_choose_i * math_reduce.cumsum(previous_attention, axis=1)
        return p_choose_i * math_reduce.cumprod(1 - p_choose_i, axis=1, exclusive=True)
    raise ValueError(f"monotonic_attention: mode must be 'recursive', 'parallel', or 'hard', "
                     f"got {mode!r}.")


def _monotonic_probability_fn(sigmoid_noise: float, mode: str, seed):
    def fn(score, previous_alignments):
        if sigmoid_noise > 0:
            score += sigmoid_noise * random_ops.random_normal(array_ops.shape(score),
                                                              dtype=score.dtype, seed=seed)
        if mode == "hard":
            p_choose_i = math_ops.cast(math_ops.greater(score, 0), score.dtype)
        else:
            p_choose_i = math_ops.sigmoid(score)
        return monotonic_attention(p_choose_i, previous_alignments, mode)

    return fn


class _BaseMonotonicAttentionMechanism(_ScoredAttentionMechanism):
    """What both monotonic mechanisms share: the monotonic probability function and the
    learned scalar score bias."""

    def __init__(self, num_units: int, memory, query_layer: bool, memory_sequence_length,
                 score_mask_value, sigmoid_noise: float, sigmoid_noise_seed,
                 score_bias_init: float, mode: str, dtype, name: str) -> None:
        super().__init__(num_units, memory, query_layer,
                         _monotonic_probability_fn(sigmoid_noise, mode, sigmoid_noise_seed),
                         memory_sequence_length, score_mask_value, dtype, name)
        self._score_bias_init = score_bias_init

    def initial_alignments(self, batch_size, dtype):
        """One-hot alignments on the first memory position."""
        return array_ops.one_hot(array_ops.zeros(array_ops.reshape(batch_size, [1]),
                                                 dtypes.int32),
                                 self._alignments_size, dtype=dtype)

    def _score_bias(self, dtype):
        return vs.get_variable("attention_score_bias", shape=(), dtype=dtype,
                               initializer=init_ops.constant_initializer(self._score_bias_init))


class BahdanauMonotonicAttention(_BaseMonotonicAttentionMechanism):
    """`BahdanauAttention`'s score plus a scalar bias, turned into a monotonic
    alignment (see the module's notes).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     att = tf.contrib.seq2seq.BahdanauMonotonicAttention(4, tf.ones([2, 5, 3]))
    ...     print(tf.Session().run(att.initial_alignments(2, tf.float32))[0])
    [1. 0. 0. 0. 0.]
    """

    _score_scope = "bahdanau_monotonic_attention"

    def __init__(self, num_units: int, memory, memory_sequence_length=None,
                 normalize: bool = False, score_mask_value=None, sigmoid_noise: float = 0.0,
                 sigmoid_noise_seed=None, score_bias_init: float = 0.0,
                 mode: str = "parallel", dtype=None,
                 name: str = "BahdanauMonotonicAttention") -> None:
        super().__init__(num_units, memory, True, memory_sequence_length, score_mask_value,
                         sigmoid_noise, sigmoid_noise_seed, score_bias_init, mode, dtype, name)
        self._normalize = normalize

    def _score(self, query):
        score = _bahdanau_score(self.query_layer(query), self._keys, self._normalize)
        return score + self._score_bias(score.dtype)


class LuongMonotonicAttention(_BaseMonotonicAttentionMechanism):
    """`LuongAttention`'s score plus a scalar bias, turned into a monotonic alignment
    (see the module's notes).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     att = tf.contrib.seq2seq.LuongMonotonicAttention(3, tf.ones([2, 5, 3]), mode="hard")
    ...     a, _ = att(tf.ones([2, 3]), att.initial_state(2, tf.float32))
    ...     print(a.shape)
    (2, 5)
    """

    _score_scope = "luong_monotonic_attention"

    def __init__(self, num_units: int, memory, memory_sequence_length=None,
                 scale: bool = False, score_mask_value=None, sigmoid_noise: float = 0.0,
                 sigmoid_noise_seed=None, score_bias_init: float = 0.0,
                 mode: str = "parallel", dtype=None,
                 name: str = "LuongMonotonicAttention") -> None:
        super().__init__(num_units, memory, False, memory_sequence_length, score_mask_value,
                         sigmoid_noise, sigmoid_noise_seed, score_bias_init, mode, dtype, name)
        self._scale = scale

    def _score(self, query):
        score = _luong_score(query, self._keys, self._scale)
        return score + self._score_bias(score.dtype)
