"""Random ops: uniform, normal, truncated normal, shuffle, multinomial / categorical.

Seeding follows TensorFlow 1.x. `flowgraph.framework.graph.get_seed` turns the graph-level
seed (`tf.set_random_seed`) and the op's `seed` argument into the attributes ``seed`` and
``seed2``; both 0 means "no seed". Each session builds one generator per op from these:

==========================  ===============================================================
seeds                       behaviour
==========================  ===============================================================
none                        fresh OS entropy: every session gives different values
graph seed and/or op seed   a new session of the same graph repeats the same sequence;
                            two ops with equal (seed, seed2) start with the same values
==========================  ===============================================================

Within one session every run of an op draws new values. Random ops are stateful, so the
runtime never folds them into constants nor merges two of them, and they have no gradient.

Example
-------
>>> import flowgraph as tf
>>> g = tf.Graph()
>>> with g.as_default():
...     tf.set_random_seed(1)
...     u = tf.random_uniform([2, 3])
>>> with tf.Session(graph=g) as s1, tf.Session(graph=g) as s2:
...     bool((s1.run(u) == s2.run(u)).all())
True
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import (
    constant_value,
    constant_value_as_shape,
    convert_to_tensor,
)
from flowgraph.framework.graph import get_seed, name_scope
from flowgraph.framework.operation import Tensor
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops import math_ops
from flowgraph.ops.op_util import attr_dtype, make_tensor, op_scope

__all__ = [
    "multinomial",
    "random_normal",
    "random_shuffle",
    "random_uniform",
    "truncated_normal",
]

FLOATS = (_dtypes.float16, _dtypes.float32, _dtypes.float64)
_INTS = (_dtypes.int32, _dtypes.int64)
_MAXINT32 = 2**31 - 1


def op_seeds(seed) -> tuple[int, int]:
    """The ``(seed, seed2)`` attributes for a random op created now with op seed `seed`."""
    graph_seed, op_seed = get_seed(None if seed is None else int(seed))
    if graph_seed is None:
        return 0, 0
    if graph_seed == 0 and op_seed == 0:
        return 0, _MAXINT32  # (0, 0) would mean "unseeded" to the kernel
    return int(graph_seed), int(op_seed)


def _shape_tensor(shape) -> Tensor:
    """A 1-D int32/int64 tensor from a shape given as list, TensorShape or tensor."""
    if isinstance(shape, Tensor):
        if shape.dtype.base_dtype not in _INTS:
            raise TypeError(f"shape must be an int32 or int64 tensor, got {shape.dtype.name} "
                            f"({shape.name})")
        return shape
    if isinstance(shape, TensorShape):
        if not shape.is_fully_defined():
            raise ValueError(f"Cannot convert a partially known TensorShape {shape} to a Tensor.")
        shape = shape.as_list()
    if isinstance(shape, int | np.integer):
        shape = [int(shape)]
    values = list(shape)
    if any(v is None for v in values):
        raise TypeError(f"Failed to convert elements of {shape!r} to Tensor: the shape of "
                        "random values must be fully known (use tf.shape(x) for dynamic sizes)")
    big = any(isinstance(v, int | np.integer) and abs(int(v)) > _MAXINT32 for v in values)
    return convert_to_tensor(values, dtype=_dtypes.int64 if big else _dtypes.int32,
                             name="shape")


def _check_float(dtype, what: str):
    dtype = _dtypes.as_dtype(dtype).base_dtype
    if dtype not in FLOATS:
        raise ValueError(f"{what}: argument `dtype` got invalid value {dtype!r}. Accepted "
                         f"dtypes are {', '.join(d.name for d in FLOATS)}.")
    return dtype


def _random_shape(op, shape):
    if shape.ndims is not None and shape.ndims != 1:
        raise op.shape_error(f"shape must be a 1-D tensor but has rank {shape.ndims}")
    return [constant_value_as_shape(op.inputs[0])]


_SEEDS = {"seed": 0, "seed2": 0}
for _name in ("RandomUniform", "RandomStandardNormal", "TruncatedNormal"):
    register_op(_name, attrs={**_SEEDS, "dtype": _dtypes.float32}, dtype_fn=attr_dtype(),
                stateful=True)(_random_shape)


@register_op("RandomUniformInt", attrs={**_SEEDS, "Tout": _dtypes.int32},
             dtype_fn=attr_dtype("Tout"), stateful=True)
def _random_uniform_int_shape(op, shape, minval, maxval):
    for what, s in (("minval", minval), ("maxval", maxval)):
        if s.ndims is not None and s.ndims != 0:
            raise op.shape_error(f"{what} must be a scalar but has shape {s}")
    return _random_shape(op, shape)


def random_uniform(shape, minval=0, maxval=None, dtype=_dtypes.float32, seed=None,
                   name=None):
    """Values drawn uniformly from ``[minval, maxval)``.

    Floats default to ``[0, 1)``; integer dtypes (int32, int64) require `maxval`.

    Example
    -------
    >>> import flowgraph as tf
    >>> u = tf.random_uniform([2, 3], minval=-1.0, maxval=1.0, seed=7)
    >>> v = tf.Session().run(u)
    >>> v.shape, bool(((v >= -1) & (v < 1)).all())
    ((2, 3), True)
    """
    dtype = _dtypes.as_dtype(dtype).base_dtype
    if dtype not in FLOATS + _INTS:
        raise ValueError(f"random_uniform: argument `dtype` got invalid value {dtype!r}. "
                         f"Accepted dtypes are float16, float32, float64, int32, int64.")
    if maxval is None:
        if dtype.is_integer:
            raise ValueError(f"Must specify maxval for integer dtype {dtype!r}")
        maxval = 1
    with name_scope(name, "random_uniform", [shape, minval, maxval]) as scope:
        shape = _shape_tensor(shape)
        seed1, seed2 = op_seeds(seed)
        if dtype.is_integer:
            lo = convert_to_tensor(minval, dtype=dtype, name="min")
            hi = convert_to_tensor(maxval, dtype=dtype, name="max")
            return make_tensor("RandomUniformInt", [shape, lo, hi],
                               {"seed": seed1, "seed2": seed2, "Tout": dtype}, name=scope)
        lo_is_zero = type(minval) is int and minval == 0
        hi_is_one = type(maxval) is int and maxval == 1
        if not (lo_is_zero and hi_is_one):  # converted before the draw, as in TensorFlow
            lo = convert_to_tensor(minval, dtype=dtype, name="min")
            hi = convert_to_tensor(maxval, dtype=dtype, name="max")
        rnd = make_tensor("RandomUniform", [shape],
                          {"seed": seed1, "seed2": seed2, "dtype": dtype}, name="RandomUniform")
        if lo_is_zero and hi_is_one:
            return rnd
        if lo_is_zero:
            return math_ops.multiply(rnd, hi)  # "random_uniform/Mul", as in TensorFlow
        scale = math_ops.subtract(hi, lo, name="sub")
        return math_ops.add(math_ops.multiply(rnd, scale, name="mul"), lo, name=scope)


def _normal(op_type, scope_name, shape, mean, stddev, dtype, seed, name):
    with name_scope(name, scope_name, [shape, mean, stddev]) as scope:
        shape = _shape_tensor(shape)
        mean = convert_to_tensor(mean, dtype=dtype, name="mean")
        stddev = convert_to_tensor(stddev, dtype=dtype, name="stddev")
        dtype = _check_float(dtype, scope_name)
        seed1, seed2 = op_seeds(seed)
        rnd = make_tensor(op_type, [shape], {"seed": seed1, "seed2": seed2, "dtype": dtype},
                          name=op_type)
        return math_ops.add(math_ops.multiply(rnd, stddev, name="mul"), mean, name=scope)


def random_normal(shape, mean=0.0, stddev=1.0, dtype=_dtypes.float32, seed=None, name=None):
    """Values drawn from a normal distribution with the given `mean` and `stddev`.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.random_normal([4, 2], mean=3.0, seed=1).shape.as_list()
    [4, 2]
    """
    return _normal("RandomStandardNormal", "random_normal", shape, mean, stddev, dtype, seed,
                   name)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=_dtypes.float32, seed=None,
                     name=None):
    """Normal values, redrawn until they lie within two `stddev` of `mean`.

    Example
    -------
    >>> import flowgraph as tf
    >>> v = tf.Session().run(tf.truncated_normal([1000], stddev=0.5, seed=3))
    >>> bool((abs(v) <= 1.0).all())
    True
    """
    return _normal("TruncatedNormal", "truncated_normal", shape, mean, stddev, dtype, seed,
                   name)


# -- RandomShuffle ------------------------------------------------------------------------
@register_op("RandomShuffle", attrs=dict(_SEEDS), stateful=True)
def _random_shuffle_shape(op, value):
    return [value]


def random_shuffle(value, seed=None, name=None):
    """`value` with its first dimension randomly permuted.

    Example
    -------
    >>> import flowgraph as tf
    >>> v = tf.Session().run(tf.random_shuffle([1, 2, 3, 4], seed=2))
    >>> sorted(v.tolist())
    [1, 2, 3, 4]
    """
    seed1, seed2 = op_seeds(seed)
    x = convert_to_tensor(value, name="value")
    return make_tensor("RandomShuffle", [x], {"seed": seed1, "seed2": seed2},
                       name=name or "RandomShuffle")


# -- Multinomial --------------------------------------------------------------------------
@register_op("Multinomial", attrs={**_SEEDS, "output_dtype": _dtypes.int64},
             dtype_fn=attr_dtype("output_dtype"), stateful=True)
def _multinomial_shape(op, logits, num_samples):
    if logits.ndims is not None and logits.ndims != 2:
        raise op.shape_error(f"logits must be 2-D [batch_size, num_classes] but has rank "
                             f"{logits.ndims}")
    if num_samples.ndims is not None and num_samples.ndims != 0:
        raise op.shape_error(f"num_samples must be a scalar but has shape {num_samples}")
    n = constant_value(op.inputs[1])
    if n is not None and int(n) < 0:
        raise op.shape_error(f"num_samples must be non-negative but is {int(n)}")
    batch = logits[0] if logits.ndims is not None else None
    return [TensorShape([batch, None if n is None else int(n)])]


def _categorical(scope_name, logits, num_samples, dtype, seed, name):
    dtype = _dtypes.as_dtype(dtype).base_dtype if dtype is not None else _dtypes.int64
    if dtype not in _INTS:
        raise ValueError(f"{scope_name}: argument `dtype` got invalid value {dtype!r}. "
                         "Accepted dtypes are int32, int64.")
    with name_scope(name, scope_name, [logits]):
        x = convert_to_tensor(logits, name="logits")
        if not (x.dtype.is_floating or x.dtype.is_integer):
            raise TypeError(f"{scope_name}: logits must be real numbers, got {x.dtype.name}")
        seed1, seed2 = op_seeds(seed)
        with op_scope(None, "Multinomial", (x, num_samples)) as op_name:
            n = convert_to_tensor(num_samples, dtype=_dtypes.int32, name="num_samples")
            return make_tensor("Multinomial", [x, n],
                               {"seed": seed1, "seed2": seed2, "output_dtype": dtype},
                               name=op_name)


def multinomial(logits, num_samples, seed=None, name=None, output_dtype=None):
    """Draw `num_samples` class indices per row of `logits` ``[batch, classes]``.

    Row ``i`` samples class ``j`` with probability ``softmax(logits[i])[j]``. The result is
    ``[batch, num_samples]`` of `output_dtype` (int64 by default, or int32).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.multinomial([[0.0, 0.0]], 5).dtype.name
    'int64'
    """
    return _categorical("multinomial", logits, num_samples, output_dtype, seed, name)


def categorical(logits, num_samples, dtype=None, seed=None, name=None):
    """`tf.random.categorical`: `multinomial` with the output dtype named `dtype`.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.random.categorical([[0.0, 1.0, 2.0]], 4).shape.as_list()
    [1, 4]
    """
    return _categorical("categorical", logits, num_samples, dtype, seed, name)


not_differentiable("RandomUniform", "RandomUniformInt", "RandomStandardNormal",
                   "TruncatedNormal", "RandomShuffle", "Multinomial")
