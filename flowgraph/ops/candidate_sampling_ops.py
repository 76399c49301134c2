"""Candidate samplers for sampled losses, with TensorFlow 1.x's op types:
``UniformCandidateSampler``, ``LogUniformCandidateSampler`` (Zipfian),
``LearnedUnigramCandidateSampler``, ``FixedUnigramCandidateSampler``,
``AllCandidateSampler``, and ``ComputeAccidentalHits``.

Each sampler draws `num_sampled` class ids in ``[0, range_max)`` and returns
``(sampled_candidates, true_expected_count, sampled_expected_count)``: how many times
each true class and each sampled class is expected among the draws. With
``unique=True`` draws repeat until `num_sampled` distinct ids are found, and a class of
probability p drawn in n tries is expected ``1 - (1 - p)^n`` times; otherwise
``p * num_sampled`` times. A learned-unigram sampler counts the true classes it sees
(starting from one count per class) and samples in proportion.

Example
-------
>>> import flowgraph as tf
>>> labels = tf.constant([[1], [7]], tf.int64)
>>> s, t, e = tf.nn.uniform_candidate_sampler(labels, 1, 4, True, 10, seed=3)
>>> with tf.Session() as sess:
...     ids, true_count = sess.run([s, t])
>>> len(set(ids.tolist())), true_count.shape
(4, (2, 1))
"""

from __future__ import annotations

import collections

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.operation import Tensor
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.math_ops import cast
from flowgraph.ops.op_util import fixed_dtype, make_op
from flowgraph.ops.random_ops import op_seeds

__all__ = ["all_candidate_sampler", "compute_accidental_hits",
           "fixed_unigram_candidate_sampler", "learned_unigram_candidate_sampler",
           "log_uniform_candidate_sampler", "uniform_candidate_sampler"]

_SAMPLERS = ("UniformCandidateSampler", "LogUniformCandidateSampler",
             "LearnedUnigramCandidateSampler", "FixedUnigramCandidateSampler",
             "AllCandidateSampler")


def _sampler_shape(op, true_classes):
    n = op.attrs["num_sampled"]
    if true_classes.ndims not in (None, 2):
        raise op.shape_error(f"true_classes must be a matrix [batch, num_true], got shape "
                             f"{true_classes}")
    batch = true_classes.dims[0] if true_classes.ndims else None
    return [TensorShape([n]), TensorShape([batch, op.attrs["num_true"]]), TensorShape([n])]


_BASE = {"num_true": 1, "num_sampled": 1, "unique": True, "range_max": 1, "seed": 0,
         "seed2": 0}
_EXTRA = {"FixedUnigramCandidateSampler": {"vocab_file": "", "distortion": 1.0,
                                           "num_reserved_ids": 0, "num_shards": 1,
                                           "shard": 0, "unigrams": ()},
          "AllCandidateSampler": {}}
for _t in _SAMPLERS:
    attrs = dict(_BASE)
    attrs.update(_EXTRA.get(_t, {}))
    if _t == "AllCandidateSampler":
        attrs.pop("range_max")
    register_op(_t, attrs=attrs, num_outputs=3, stateful=True,
                dtype_fn=fixed_dtype(_dtypes.int64, _dtypes.float32, _dtypes.float32))(
        _sampler_shape)


@register_op("ComputeAccidentalHits", attrs={"num_true": 1, "seed": 0, "seed2": 0},
             num_outputs=3, dtype_fn=fixed_dtype(_dtypes.int32, _dtypes.int64,
                                                 _dtypes.float32))
def _hits_shape(op, true_classes, sampled):
    return [TensorShape([None])] * 3


not_differentiable(*_SAMPLERS, "ComputeAccidentalHits")


def _int64_input(value, arg, op_type, what):
    """`value` as the op's int64 input: as in TensorFlow, a tensor of another dtype is a
    TypeError (never cast), a Python or NumPy integer value becomes an int64 constant."""
    if isinstance(value, Tensor):
        if value.dtype.base_dtype != _dtypes.int64:
            raise TypeError(f"Input '{arg}' of '{op_type}' Op has type "
                            f"{value.dtype.base_dtype.name} that does not match expected type "
                            "of int64.")
        return value
    t = convert_to_tensor(value, name=arg)
    if not t.dtype.is_integer:
        raise TypeError(f"Expected int64 passed to parameter '{arg}' of op '{op_type}', "
                        f"got {value!r} of type '{type(value).__name__}' instead: tf.nn.{what} "
                        f"takes integer class ids, not {t.dtype.name} values.")
    return cast(t, _dtypes.int64)


def _true_classes(true_classes, num_true, what, op_type):
    t = _int64_input(true_classes, "true_classes", op_type, what)
    if t.shape.ndims not in (None, 2) or (t.shape.ndims == 2 and t.shape[1].value not in
                                          (None, num_true)):
        raise ValueError(f"tf.nn.{what}: true_classes must have shape [batch, num_true="
                         f"{num_true}], got {t.shape}")
    return t


# TF returns these as named tuples named after the op type.
_SAMPLED = {t: collections.namedtuple(t, ["sampled_candidates", "true_expected_count",
                                         "sampled_expected_count"]) for t in _SAMPLERS}
AccidentalHits = collections.namedtuple("ComputeAccidentalHits", ["indices", "ids", "weights"])


def _sample(op_type, true_classes, num_true, num_sampled, unique, range_max, seed, name,
            what, **extra):
    if num_sampled < 1:
        raise ValueError(f"tf.nn.{what}: num_sampled must be positive, got {num_sampled}")
    if range_max is not None and unique and num_sampled > range_max:
        raise ValueError(f"tf.nn.{what}: cannot draw {num_sampled} unique classes from "
                         f"range_max={range_max}")
    seed1, seed2 = op_seeds(seed)
    attrs = {"num_true": int(num_true), "num_sampled": int(num_sampled),
             "unique": bool(unique), "seed": seed1, "seed2": seed2, **extra}
    if range_max is not None:
        attrs["range_max"] = int(range_max)
    op = make_op(op_type, [_true_classes(true_classes, num_true, what, op_type)], attrs,
                 name=name or op_type)
    return _SAMPLED[op_type](*op.outputs)


def uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                              seed=None, name=None):
    """Sample classes uniformly from ``[0, range_max)``."""
    return _sample("UniformCandidateSampler", true_classes, num_true, num_sampled, unique,
                   range_max, seed, name, "uniform_candidate_sampler")


def log_uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                                  seed=None, name=None):
    """Sample classes with the Zipfian ``P(k) = log((k + 2) / (k + 1)) / log(range_max
    + 1)``, for classes sorted by decreasing frequency (word ids, for one).

    Example
    -------
    >>> import flowgraph as tf
    >>> s, t, e = tf.nn.log_uniform_candidate_sampler([[0]], 1, 2, False, 100, seed=1)
    >>> with tf.Session() as sess:
    ...     print(round(float(sess.run(t)[0, 0]), 4))   # 2 * log(2) / log(101)
    0.3004
    """
    return _sample("LogUniformCandidateSampler", true_classes, num_true, num_sampled, unique,
                   range_max, seed, name, "log_uniform_candidate_sampler")


def learned_unigram_candidate_sampler(true_classes, num_true, num_sampled, unique,
                                      range_max, seed=None, name=None):
    """Sample classes in proportion to how often they appeared among the true classes
    seen so far in this session (every class starts with one count)."""
    return _sample("LearnedUnigramCandidateSampler", true_classes, num_true, num_sampled,
                   unique, range_max, seed, name, "learned_unigram_candidate_sampler")


def fixed_unigram_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                                    vocab_file="", distortion=1.0, num_reserved_ids=0,
                                    num_shards=1, shard=0, unigrams=(), seed=None,
                                    name=None):
    """Sample classes in proportion to given counts (``unigrams``, or the last
    comma-separated field of each line of `vocab_file`) raised to `distortion`; the
    first `num_reserved_ids` ids have probability 0, and with `num_shards` only the ids
    of `shard` (``id % num_shards == shard``) keep their weight.

    Example
    -------
    >>> import flowgraph as tf
    >>> s, t, e = tf.nn.fixed_unigram_candidate_sampler(
    ...     [[1]], 1, 3, False, 3, unigrams=[0.0, 1.0, 3.0], seed=2)
    >>> with tf.Session() as sess:
    ...     print(sess.run(t).tolist())    # P(1) = 1/4, times 3 draws
    [[0.75]]
    """
    if not vocab_file and len(unigrams) == 0:
        raise ValueError("tf.nn.fixed_unigram_candidate_sampler: pass unigrams or "
                         "vocab_file")
    return _sample("FixedUnigramCandidateSampler", true_classes, num_true, num_sampled,
                   unique, range_max, seed, name, "fixed_unigram_candidate_sampler",
                   vocab_file=str(vocab_file), distortion=float(distortion),
                   num_reserved_ids=int(num_reserved_ids), num_shards=int(num_shards),
                   shard=int(shard), unigrams=tuple(float(u) for u in unigrams))


def all_candidate_sampler(true_classes, num_true, num_sampled, unique, seed=None,
                          name=None):
    """The classes ``0 .. num_sampled - 1``, each expected once (for testing sampled
    losses against the full softmax)."""
    return _sample("AllCandidateSampler", true_classes, num_true, num_sampled, unique, None,
                   seed, name, "all_candidate_sampler")


def compute_accidental_hits(true_classes, sampled_candidates, num_true, seed=None,
                            name=None):
    """Where a sampled candidate equals a true class of an example: ``(indices, ids,
    weights)`` with the example index, the position in `sampled_candidates`, and a large
    negative weight to add to that sampled logit.

    Example
    -------
    >>> import flowgraph as tf
    >>> idx, ids, w = tf.nn.compute_accidental_hits([[1], [2]], [2, 5, 1], 1)
    >>> tf.Session().run([idx, ids])
    [array([0, 1], dtype=int32), array([2, 0])]
    """
    seed1, seed2 = op_seeds(seed)
    t = _true_classes(true_classes, num_true, "compute_accidental_hits",
                      "ComputeAccidentalHits")
    s = _int64_input(sampled_candidates, "sampled_candidates", "ComputeAccidentalHits",
                     "compute_accidental_hits")
    op = make_op("ComputeAccidentalHits", [t, s],
                 {"num_true": int(num_true), "seed": seed1, "seed2": seed2},
                 name=name or "ComputeAccidentalHits")
    return AccidentalHits(*op.outputs)
