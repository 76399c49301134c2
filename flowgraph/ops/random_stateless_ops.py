"""Stateless random ops (`tf.random.stateless_*`, `tf.random.fold_in`, `tf.random.split`).

A stateless op takes its seed as an input, a pair of integers, and has no state: the
same shape and seed give the same values in every run and every session, and a new seed
gives new values. Uniform, normal, truncated-normal, integer and categorical samples
reproduce TensorFlow's Philox stream; gamma (differentiable in alpha), Poisson and
binomial samples are deterministic per seed but are not TensorFlow's values (kernels:
`flowgraph/backends/cpu/kernels_random_stateless.py`).

Example
-------
>>> import flowgraph as tf
>>> u = tf.random.stateless_uniform([3], seed=[1, 2])
>>> with tf.Session() as sess:
...     print([round(float(v), 4) for v in sess.run(u)])
[0.8441, 0.192, 0.9962]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import (
    constant_value,
    constant_value_as_shape,
    convert_to_tensor,
)
from flowgraph.framework.graph import name_scope
from flowgraph.framework.registry import not_differentiable, register_gradient, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops import math_ops
from flowgraph.ops.array_gen_ops import range as range_
from flowgraph.ops.array_join_ops import concat, stack
from flowgraph.ops.array_shape_ops import ones, rank, reshape, shape, size
from flowgraph.ops.math_reduce import reduce_sum
from flowgraph.ops.op_util import attr_dtype, make_op, make_tensor
from flowgraph.ops.random_ops import FLOATS, _shape_tensor

__all__ = ["fold_in", "split", "stateless_binomial", "stateless_categorical",
           "stateless_gamma", "stateless_multinomial", "stateless_normal",
           "stateless_parameterized_truncated_normal", "stateless_poisson",
           "stateless_truncated_normal", "stateless_uniform"]

_INTS = (_dtypes.int32, _dtypes.int64)


# -- registrations -----------------------------------------------------------------------
def _check_seed(op, seed):
    if seed.ndims is not None and (seed.ndims != 1 or seed[0].value not in (None, 2)):
        raise op.shape_error(f"seed must have shape [2], got {seed}")


def _shaped(op, shape, seed, *params):
    _check_seed(op, seed)
    if shape.ndims is not None and shape.ndims != 1:
        raise op.shape_error(f"shape must be a 1-D tensor, got rank {shape.ndims}")
    return [constant_value_as_shape(op.inputs[0])]


for _name in ("StatelessRandomUniform", "StatelessRandomNormal", "StatelessTruncatedNormal",
              "StatelessRandomUniformFullInt"):
    register_op(_name, attrs={"dtype": _dtypes.float32}, dtype_fn=attr_dtype())(_shaped)
register_op("StatelessRandomUniformInt", attrs={"dtype": _dtypes.int32},
            dtype_fn=attr_dtype())(_shaped)
register_op("StatelessRandomPoisson", attrs={"dtype": _dtypes.int32},
            dtype_fn=attr_dtype())(_shaped)
register_op("StatelessRandomBinomial", attrs={"dtype": _dtypes.int32},
            dtype_fn=attr_dtype())(_shaped)


def _param_dtype(index):
    return lambda op: [op.inputs[index].dtype.base_dtype]


register_op("StatelessRandomGammaV2", dtype_fn=_param_dtype(2))(_shaped)
register_op("StatelessParameterizedTruncatedNormal", dtype_fn=_param_dtype(2))(_shaped)


@register_op("StatelessMultinomial", attrs={"output_dtype": _dtypes.int64},
             dtype_fn=attr_dtype("output_dtype"))
def _stateless_multinomial_shape(op, logits, num_samples, seed):
    _check_seed(op, seed)
    if logits.ndims is not None and logits.ndims != 2:
        raise op.shape_error(f"logits must be 2-D [batch_size, num_classes], got {logits}")
    n = constant_value(op.inputs[1])
    batch = logits[0].value if logits.ndims is not None else None
    return [TensorShape([batch, None if n is None else int(n)])]


@register_gradient("StatelessRandomGammaV2")
def _stateless_gamma_grad(op, grad):
    # Implicit reparameterization, as for RandomGamma: d sample / d alpha from
    # RandomGammaGrad, summed over the leading sample axes that alpha broadcasts along.
    shape_t, _, alpha = op.inputs
    lead = size(shape_t) - rank(alpha)
    alpha_b = reshape(alpha, concat([ones([lead], _dtypes.int32), shape(alpha)], 0))
    partial = make_tensor("RandomGammaGrad", [alpha_b, op.outputs[0]])
    return [None, None, reduce_sum(grad * partial, range_(lead))]


not_differentiable("StatelessRandomUniform", "StatelessRandomNormal",
                   "StatelessTruncatedNormal", "StatelessRandomUniformFullInt",
                   "StatelessRandomUniformInt", "StatelessRandomPoisson",
                   "StatelessRandomBinomial",
                   "StatelessParameterizedTruncatedNormal", "StatelessMultinomial")


# -- wrappers ----------------------------------------------------------------------------
def _seed(seed):
    s = convert_to_tensor(seed, name="seed")
    if s.dtype.base_dtype not in _INTS:
        raise TypeError(f"seed must be an int32 or int64 tensor of shape [2], got "
                        f"{s.dtype.name}")
    if s.shape.ndims is not None and s.shape.as_list() not in ([2], [None]):
        got = s.shape.as_list()[-1] if s.shape.ndims else 0
        raise ValueError(f"Dimension must be 2 but is {got} for the seed of a stateless "
                         f"random op: seed has shape {s.shape}, expected [2]")
    return s


def _float_dtype(dtype, what):
    dtype = _dtypes.as_dtype(dtype).base_dtype
    if dtype not in FLOATS:
        raise ValueError(f"{what}: dtype must be one of {', '.join(d.name for d in FLOATS)}, "
                         f"got {dtype.name}")
    return dtype


_ALGORITHMS = {"philox": 1, "threefry": 2, "auto_select": 3}


def _algorithm(alg) -> int:
    """TF's number for a stateless algorithm: a name, a ``tf.random.Algorithm`` or an int."""
    value = getattr(alg, "value", alg)
    if value is None:
        return _ALGORITHMS["auto_select"]
    if isinstance(value, str) and value.lower() in _ALGORITHMS:
        return _ALGORITHMS[value.lower()]
    if isinstance(value, int) and not isinstance(value, bool) and value in (1, 2, 3):
        return value
    raise ValueError(f"Argument `alg` got unsupported value {alg!r}. Supported values are "
                     f"{sorted(_ALGORITHMS)} (or the tf.random.Algorithm members).")


def _key_counter(seed):
    """TF 2.15's graph for a seed: ``StatelessRandomGetKeyCounter`` (Philox's key and
    counter; its seed constant is created inside the op's own scope, as TF names it)."""
    with name_scope(None, "StatelessRandomGetKeyCounter") as scope:
        seed_t = _seed(seed)
        key, counter = make_op("StatelessRandomGetKeyCounter", [seed_t], name=scope).outputs
    return key, counter


def _sample_v2(op_type, shape_t, seed, alg, attrs, name=None, extra=()):
    """``op_type`` (a ``*V2`` stateless sampler) of `shape_t` from `seed`'s key and
    counter; the algorithm constant is made inside the op's scope (or `name`'s)."""
    key, counter = _key_counter(seed)
    with name_scope(name, op_type) as scope:
        alg_t = convert_to_tensor(_algorithm(alg), dtype=_dtypes.int32, name="alg")
        return make_tensor(op_type, [shape_t, key, counter, alg_t, *extra], attrs, name=scope)


def stateless_uniform(shape, seed, minval=0, maxval=None, dtype=_dtypes.float32, name=None,
                      alg="auto_select"):
    """Deterministic uniform samples in ``[minval, maxval)`` (``[0, 1)`` for floats by
    default). Integer dtypes need both bounds, or neither for the dtype's whole range.
    `alg` is "auto_select" (Philox on the CPU, as TF), "philox" or "threefry" (which TF's
    CPU kernels, and flowgraph's, refuse when run).

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.random.stateless_uniform([4], seed=[1, 2], minval=0, maxval=10, dtype=tf.int32)
    >>> tf.Session().run(x).tolist() == tf.Session().run(x).tolist()
    True
    """
    dtype = _dtypes.as_dtype(dtype).base_dtype
    if dtype in _INTS:
        if (minval is None) != (maxval is None):
            raise ValueError(f"For integer dtype {dtype.name}, minval and maxval must be "
                             "both `None` or both non-`None`.")
    elif dtype not in FLOATS:
        raise ValueError(f"stateless_uniform: dtype must be a float or int32/int64, got "
                         f"{dtype.name}")
    _algorithm(alg)
    with name_scope(name, "stateless_random_uniform", [shape, seed, minval, maxval]) as scope:
        shape_t = _shape_tensor(shape)
        if dtype in _INTS and minval is None:
            return _sample_v2("StatelessRandomUniformFullIntV2", shape_t, seed, alg,
                              {"dtype": dtype}, name=scope)
        if dtype in _INTS:
            lo = convert_to_tensor(minval, dtype=dtype, name="min")
            hi = convert_to_tensor(maxval, dtype=dtype, name="max")
            return _sample_v2("StatelessRandomUniformIntV2", shape_t, seed, alg, {"dtype": dtype},
                              name=scope, extra=(lo, hi))
        lo = convert_to_tensor(minval, dtype=dtype, name="min")
        hi = convert_to_tensor(1 if maxval is None else maxval, dtype=dtype, name="max")
        rnd = _sample_v2("StatelessRandomUniformV2", shape_t, seed, alg, {"dtype": dtype})
        return make_tensor("AddV2", [rnd * (hi - lo), lo], name=scope)


def _normal_like(op_type, scope_name, shape, seed, mean, stddev, dtype, name, alg):
    dtype = _float_dtype(dtype, scope_name)
    _algorithm(alg)
    with name_scope(name, scope_name, [shape, seed, mean, stddev]) as scope:
        shape_t = _shape_tensor(shape)
        m = convert_to_tensor(mean, dtype=dtype, name="mean")
        s = convert_to_tensor(stddev, dtype=dtype, name="stddev")
        rnd = _sample_v2(op_type, shape_t, seed, alg, {"dtype": dtype})
        return make_tensor("AddV2", [rnd * s, m], name=scope)


def stateless_normal(shape, seed, mean=0.0, stddev=1.0, dtype=_dtypes.float32, name=None,
                     alg="auto_select"):
    """Deterministic normal samples (Box-Muller on TensorFlow's Philox stream).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.random.stateless_normal([2, 3], seed=[7, 8]).shape.as_list()
    [2, 3]
    """
    return _normal_like("StatelessRandomNormalV2", "stateless_random_normal", shape, seed,
                        mean, stddev, dtype, name, alg)


def stateless_truncated_normal(shape, seed, mean=0.0, stddev=1.0, dtype=_dtypes.float32,
                               name=None, alg="auto_select"):
    """Deterministic normal samples redrawn until within two standard deviations.

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.random.stateless_truncated_normal([100], seed=[1, 2])
    >>> bool(abs(tf.Session().run(x)).max() < 2.0)
    True
    """
    return _normal_like("StatelessTruncatedNormalV2", "stateless_truncated_normal", shape,
                        seed, mean, stddev, dtype, name, alg)


def _multinomial(logits, num_samples, seed, dtype, scope_name, name):
    with name_scope(name, scope_name, [logits, num_samples, seed]):
        lg = convert_to_tensor(logits, name="logits")
        # TF names the op ``<scope>/StatelessMultinomial``, its converted inputs under it.
        with name_scope("StatelessMultinomial") as scope:
            n = convert_to_tensor(num_samples, dtype=_dtypes.int32, name="num_samples")
            return make_tensor("StatelessMultinomial", [lg, n, _seed(seed)],
                               {"output_dtype": _dtypes.as_dtype(dtype or _dtypes.int64)},
                               name=scope)


def stateless_categorical(logits, num_samples, seed, dtype=_dtypes.int64, name=None):
    """Deterministic class indices ``[batch_size, num_samples]`` drawn from the rows of
    the unnormalized log-probabilities `logits` ``[batch_size, num_classes]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> c = tf.random.stateless_categorical([[0.0, 1.0, 2.0]], 4, seed=[1, 2])
    >>> tf.Session().run(c).tolist()
    [[2, 2, 1, 2]]
    """
    return _multinomial(logits, num_samples, seed, dtype, "stateless_categorical", name)


def stateless_multinomial(logits, num_samples, seed, output_dtype=_dtypes.int64, name=None):
    """`stateless_categorical` under its TF 1.x name (``output_dtype``).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.random.stateless_multinomial([[0.0, 1.0, 2.0]], 4, seed=[1, 2]).dtype
    tf.int64
    """
    return _multinomial(logits, num_samples, seed, output_dtype, "stateless_multinomial", name)


def stateless_gamma(shape, seed, alpha, beta=None, dtype=_dtypes.float32, name=None):
    """Deterministic Gamma(`alpha`, `beta`) samples of `shape`, which must end with the
    broadcast shape of `alpha` and `beta` (rate; 1 by default).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.random.stateless_gamma([3, 2], seed=[1, 2], alpha=[1.0, 2.0]).shape.as_list()
    [3, 2]
    """
    dtype = _float_dtype(dtype, "stateless_gamma")
    with name_scope(name, "stateless_random_gamma", [shape, seed, alpha, beta]) as scope:
        a = convert_to_tensor(alpha, dtype=dtype, name="alpha")
        b = None if beta is None else convert_to_tensor(beta, dtype=dtype, name="beta")
        shape_t = _shape_tensor(shape)
        if b is not None:
            a = a + 0 * b  # broadcast alpha against beta
        # As TensorFlow 2.15: the seed's Philox key and counter, then the V3 sampler
        # (the same numbers as StatelessRandomGammaV2 of the seed).
        key, counter = make_op("StatelessRandomGetKeyCounter", [_seed(seed)]).outputs
        alg = convert_to_tensor(1, dtype=_dtypes.int32, name="alg")  # Philox
        sample = make_tensor("StatelessRandomGammaV3", [shape_t, key, counter, alg, a],
                             {"shape_dtype": shape_t.dtype.base_dtype},
                             name=None if b is not None else scope)
        return sample if b is None else math_ops.divide(sample, b, name=scope)


def stateless_poisson(shape, seed, lam, dtype=_dtypes.int32, name=None):
    """Deterministic Poisson(`lam`) samples of `shape` (ending with ``lam.shape``).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.random.stateless_poisson([3, 2], seed=[1, 2], lam=[1.0, 5.0]).dtype
    tf.int32
    """
    with name_scope(name, "stateless_random_poisson", [shape, seed, lam]) as scope:
        rate = convert_to_tensor(lam, name="lam")
        if rate.dtype.base_dtype not in FLOATS:
            rate = math_ops.cast(rate, _dtypes.float32)
        return make_tensor("StatelessRandomPoisson", [_shape_tensor(shape), _seed(seed), rate],
                           {"dtype": _dtypes.as_dtype(dtype)}, name=scope)


def stateless_binomial(shape, seed, counts, probs, output_dtype=_dtypes.int32, name=None):
    """Deterministic Binomial(`counts`, `probs`) samples of `shape`.

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.random.stateless_binomial([4], seed=[1, 2], counts=10.0, probs=0.5)
    >>> bool(((tf.Session().run(x) >= 0) & (tf.Session().run(x) <= 10)).all())
    True
    """
    with name_scope(name, "stateless_random_binomial", [shape, seed, counts, probs]) as scope:
        c = convert_to_tensor(counts, name="counts")
        if c.dtype.base_dtype not in FLOATS:
            c = math_ops.cast(c, _dtypes.float32)
        p = convert_to_tensor(probs, dtype=c.dtype.base_dtype, name="probs")
        return make_tensor("StatelessRandomBinomial", [_shape_tensor(shape), _seed(seed), c, p],
                           {"dtype": _dtypes.as_dtype(output_dtype)}, name=scope)


def stateless_parameterized_truncated_normal(shape, seed, means=0.0, stddevs=1.0,
                                             minvals=-2.0, maxvals=2.0, name=None):
    """Deterministic normal samples truncated to ``[minvals, maxvals]`` (inverse-CDF; not
    TensorFlow's stream).

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.random.stateless_parameterized_truncated_normal([50], [1, 2], minvals=0.0)
    >>> bool((tf.Session().run(x) >= 0.0).all())
    True
    """
    with name_scope(name, "stateless_parameterized_truncated_normal",
                    [shape, seed, means, stddevs, minvals, maxvals]) as scope:
        m = convert_to_tensor(means, name="means")
        dtype = m.dtype.base_dtype if m.dtype.base_dtype in FLOATS else _dtypes.float32
        m = math_ops.cast(m, dtype)
        params = [m] + [convert_to_tensor(v, dtype=dtype, name=n) for v, n in
                        ((stddevs, "stddevs"), (minvals, "minvals"), (maxvals, "maxvals"))]
        return make_tensor("StatelessParameterizedTruncatedNormal",
                           [_shape_tensor(shape), _seed(seed), *params], name=scope)


def split(seed, num=2, alg="auto_select"):
    """`num` new seed pairs ``[num, 2]`` derived from `seed` (of the seed's dtype).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.random.split([1, 2], 3)).shape
    (3, 2)
    """
    s = _seed(seed)
    return stateless_uniform([num, 2], seed=s, dtype=s.dtype.base_dtype, minval=None,
                             maxval=None)


def fold_in(seed, data, alg="auto_select"):
    """A new seed pair from `seed` and the integer `data`: ``[draw(seed), data]``, of
    `data`'s dtype.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.random.fold_in([1, 2], 7)).tolist()
    [1105988140, 7]
    """
    s = _seed(seed)
    d = convert_to_tensor(data, name="data")
    first = stateless_uniform([], seed=s, dtype=d.dtype.base_dtype, minval=None, maxval=None)
    return stack([first, reshape(d, [])])
