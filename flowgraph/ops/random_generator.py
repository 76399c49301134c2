"""`tf.random.Generator`: a random number generator whose state is a variable.

A generator holds an int64 state variable (``random_generator/StateVar``): for Philox
the 128-bit counter and the 64-bit key, ``[counter_lo, counter_hi, key]``. Each sampling
method builds one ``RngReadAndSkip`` op, which returns the state and advances the counter
past the draw, and one ``*V2`` stateless sampler on the returned key and counter, as
TensorFlow 2.15 does under ``tf.compat.v1``; so each run of a sampling tensor gives new
values, and the values are TensorFlow's for the same seed and algorithm (binomial
samples excepted: deterministic per state, not TensorFlow's stream).

As in TensorFlow's graph mode, `Generator.split` raises `NotImplementedError`, and
`reset` / `reset_from_seed` / `reset_from_key_counter` build an assign op and return
None (run ``g.state.assign(...)`` to reset the state in a session).

Example
-------
>>> import flowgraph as tf
>>> g = tf.random.Generator.from_seed(1)
>>> x = g.uniform([2], minval=0, maxval=10, dtype=tf.int32)
>>> with tf.Session() as sess:
...     sess.run(g.state.initializer)
...     print(sess.run(g.state).tolist())
...     _ = sess.run(x)
...     print(sess.run(g.state).tolist())
[1, 0, 0]
[513, 0, 0]
"""

from __future__ import annotations

import enum
import secrets

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant, convert_to_tensor
from flowgraph.framework.graph import get_default_graph, name_scope
from flowgraph.framework.operation import Tensor
from flowgraph.ops import math_ops
from flowgraph.ops.array_extra_ops import bitcast
from flowgraph.ops.array_join_ops import stack
from flowgraph.ops.array_shape_ops import zeros_like
from flowgraph.ops.math_reduce import reduce_prod
from flowgraph.ops.op_util import make_tensor
from flowgraph.ops.random_ops import _shape_tensor
from flowgraph.ops.variables import Variable

__all__ = ["Algorithm", "Generator", "create_rng_state", "get_global_generator",
           "set_global_generator"]


class Algorithm(enum.Enum):
    """The counter-based RNG algorithms (`Generator`'s ``alg``)."""

    PHILOX = 1
    THREEFRY = 2
    AUTO_SELECT = 3


_STATE_SIZE = {1: 3, 2: 2, 3: 3}
_NAMES = {"philox": 1, "threefry": 2, "auto_select": 3}


def _alg_id(alg) -> int:
    if alg is None:
        return Algorithm.PHILOX.value
    if isinstance(alg, Algorithm):
        return alg.value
    if isinstance(alg, str):
        key = alg.lower()
        if key not in _NAMES:
            raise ValueError(f"Unsupported random algorithm {alg!r}: expected one of "
                             f"{sorted(_NAMES)} or a tf.random.Algorithm")
        return _NAMES[key]
    if isinstance(alg, int | np.integer) and int(alg) in _STATE_SIZE:
        return int(alg)
    raise ValueError(f"Unsupported random algorithm {alg!r}: expected 1 (Philox), "
                     "2 (ThreeFry), 3 (auto-select), their names, or a tf.random.Algorithm")


def _state_words(seed, size: int) -> list[int]:
    """A Python integer as `size` little-endian 64-bit words; anything else as int64
    values, cut to `size` and zero-padded on the left (TensorFlow's layout)."""
    mask = (1 << 64) - 1
    if isinstance(seed, int | np.integer):
        seed = int(seed)
        words = [(seed >> (64 * i)) & mask for i in range(size)]
    else:
        words = [int(v) & mask for v in np.asarray(seed).reshape(-1).tolist()][:size]
        words = [0] * (size - len(words)) + words
    return [w - (1 << 64) if w >= 1 << 63 else w for w in words]


def create_rng_state(seed, alg) -> Tensor:
    """The initial state (int64 vector) of algorithm `alg` for `seed`: the seed's 64-bit
    words, zero-padded or cut to the state size (3 for Philox, 2 for ThreeFry).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.random.create_rng_state(1, "philox")).tolist()
    [1, 0, 0]
    """
    words = _state_words(seed, _STATE_SIZE[_alg_id(alg)])
    return convert_to_tensor(np.array(words, np.int64), name="concat")


class Generator:
    """A random number generator with its state in a variable (see the module docstring).

    Build one with `from_seed`, `from_non_deterministic_state`, `from_key_counter`, or
    ``Generator(state=..., alg=...)``; run ``g.state.initializer`` (or the global
    variables initializer) before drawing.

    Example
    -------
    >>> import flowgraph as tf
    >>> g = tf.random.Generator.from_seed(1)
    >>> n = g.normal([3])
    >>> with tf.Session() as sess:
    ...     sess.run(tf.global_variables_initializer())
    ...     a, b = sess.run(n), sess.run(n)   # each run advances the state
    >>> bool((a != b).all())
    True
    """

    def __init__(self, copy_from: Generator | None = None, state=None, alg=None) -> None:
        if copy_from is not None:
            if state is not None or alg is not None:
                raise ValueError("When copy_from is not None, state and alg must be None")
            self._alg = copy_from.algorithm
            initial = copy_from.state.read_value()
        else:
            if state is None:
                raise ValueError("Generator needs a state (or copy_from); use "
                                 "Generator.from_seed or from_non_deterministic_state")
            self._alg = _alg_id(alg)
            initial = convert_to_tensor(state, dtype=_dtypes.int64, name="state")
            size = _STATE_SIZE[self._alg]
            dims = initial.shape.as_list() if initial.shape.ndims is not None else None
            if dims is not None and dims != [size]:
                raise ValueError(f"Shapes ({dims[0]},) and [{size}] are incompatible: the "
                                 f"state of algorithm {self._alg} has {size} int64 words")
        with name_scope("random_generator"):
            self._state_var = Variable(initial, dtype=_dtypes.int64, trainable=False,
                                       name="StateVar", use_resource=True)

    # -- constructors --------------------------------------------------------------------
    @classmethod
    def from_state(cls, state, alg) -> Generator:
        """A generator starting at `state`."""
        return cls(state=state, alg=alg)

    @classmethod
    def from_seed(cls, seed, alg=None) -> Generator:
        """A generator whose state is `create_rng_state(seed, alg)` (Philox by default)."""
        alg = _alg_id(alg)
        return cls(state=create_rng_state(seed, alg), alg=alg)

    @classmethod
    def from_non_deterministic_state(cls, alg=None) -> Generator:
        """A generator seeded from the operating system's entropy."""
        alg = _alg_id(alg)
        words = [secrets.randbits(63) for _ in range(_STATE_SIZE[alg])]
        return cls(state=np.array(words, np.int64), alg=alg)

    @classmethod
    def from_key_counter(cls, key, counter, alg) -> Generator:
        """A generator whose state is ``counter + [key]``."""
        counter = np.asarray(counter, np.int64).reshape(-1)
        state = np.concatenate([counter, np.asarray(key, np.int64).reshape(-1)])
        return cls(state=state, alg=alg)

    # -- state ---------------------------------------------------------------------------
    @property
    def state(self) -> Variable:
        """The state variable (int64, shape ``[3]`` for Philox)."""
        return self._state_var

    @property
    def algorithm(self) -> int:
        """The algorithm's id (1 Philox, 2 ThreeFry, 3 auto-select)."""
        return self._alg

    @property
    def key(self) -> Tensor:
        """The key word of the state (a scalar int64 tensor)."""
        return self._state_var.value()[_STATE_SIZE[self._alg] - 1]

    def _skip(self, delta) -> Tensor:
        alg = constant(self._alg, _dtypes.int32, name="Cast/x")
        delta = math_ops.cast(delta, _dtypes.uint64)
        return make_tensor("RngReadAndSkip", [self._state_var._ref(), alg, delta],
                           name="RngReadAndSkip")

    def skip(self, delta) -> Tensor:
        """Advance the state past `delta` draws; returns the state before the skip."""
        return self._skip(delta)

    def _key_counter(self, shape_t: Tensor) -> tuple[Tensor, Tensor]:
        state = self._skip(reduce_prod(shape_t))
        counter = bitcast(state[:2], _dtypes.uint64)
        key = bitcast(state[2:3], _dtypes.uint64)
        return key, counter

    def reset(self, state) -> None:
        """Build an assign of `state` to the state variable (returns None, as TF's graph
        mode does)."""
        self._state_var.assign(convert_to_tensor(state, dtype=_dtypes.int64))

    def reset_from_seed(self, seed) -> None:
        """`reset` to ``create_rng_state(seed, self.algorithm)``."""
        self.reset(create_rng_state(seed, self._alg))

    def reset_from_key_counter(self, key, counter) -> None:
        """`reset` to ``counter + [key]``."""
        state = np.concatenate([np.asarray(counter, np.int64).reshape(-1),
                                np.asarray(key, np.int64).reshape(-1)])
        self.reset(state)

    # -- samplers ------------------------------------------------------------------------
    def _sampler_v2(self, op_type, shape_t, dtype, *extra):
        key, counter = self._key_counter(shape_t)
        alg = constant(self._alg, _dtypes.int32, name=f"{op_type}/alg")
        return make_tensor(op_type, [shape_t, key, counter, alg, *extra],
                           {"dtype": dtype, "Tshape": shape_t.dtype.base_dtype},
                           name=op_type)

    def _float_dtype(self, dtype, what) -> _dtypes.DType:
        dtype = _dtypes.as_dtype(dtype).base_dtype
        if not dtype.is_floating:
            raise TypeError(f"Generator.{what}: dtype must be a floating point type, got "
                             f"{dtype.name}")
        return dtype

    def normal(self, shape, mean=0.0, stddev=1.0, dtype=_dtypes.float32, name=None):
        """Normal samples of `shape` (``mean + stddev * N(0, 1)``).

        Example
        -------
        >>> import flowgraph as tf
        >>> tf.random.Generator.from_seed(1).normal([2, 3]).shape.as_list()
        [2, 3]
        """
        return self._scaled_normal("StatelessRandomNormalV2", "stateful_normal", shape,
                                   mean, stddev, self._float_dtype(dtype, "normal"), name)

    def truncated_normal(self, shape, mean=0.0, stddev=1.0, dtype=_dtypes.float32,
                         name=None):
        """Normal samples redrawn until within two standard deviations of `mean`."""
        return self._scaled_normal("StatelessTruncatedNormalV2", "truncated_normal", shape,
                                   mean, stddev,
                                   self._float_dtype(dtype, "truncated_normal"), name)

    def _scaled_normal(self, op_type: str, default_name: str, shape, mean, stddev, dtype,
                       name):
        """``sample * stddev + mean`` for the sampler `op_type`, in TF's layout."""
        with name_scope(name, default_name, [shape, mean, stddev]) as scope:
            shape_t = _shape_tensor(shape)
            mean = convert_to_tensor(mean, dtype=dtype, name="mean")
            stddev = convert_to_tensor(stddev, dtype=dtype, name="stddev")
            rnd = self._sampler_v2(op_type, shape_t, dtype)
            return make_tensor("AddV2", [rnd * stddev, mean], name=scope)

    def uniform(self, shape, minval=0, maxval=None, dtype=_dtypes.float32, name=None):
        """Uniform samples in ``[minval, maxval)`` (``[0, 1)`` for floats by default;
        integer dtypes need `maxval`, or neither bound for the whole range)."""
        dtype = _dtypes.as_dtype(dtype).base_dtype
        if dtype.is_integer and (minval is None) != (maxval is None):
            raise ValueError(f"For integer dtype {dtype!r}, minval and maxval must be both "
                             f"`None` or both non-`None`; got minval={minval} and "
                             f"maxval={maxval}")
        if dtype.is_integer and minval is None:
            return self.uniform_full_int(shape, dtype=dtype, name=name)
        if dtype.is_unsigned:
            raise ValueError(f"Generator.uniform: the dtype {dtype.name} is unsigned, which "
                             "a bounded range does not support; use uniform_full_int")
        if maxval is None:
            maxval = 1
        with name_scope(name, "stateful_uniform", [shape, minval, maxval]) as scope:
            shape_t = _shape_tensor(shape)
            lo = convert_to_tensor(minval, dtype=dtype, name="min")
            hi = convert_to_tensor(maxval, dtype=dtype, name="max")
            if dtype.is_integer:
                key, counter = self._key_counter(shape_t)
                alg = constant(self._alg, _dtypes.int32, name="alg")
                return make_tensor("StatelessRandomUniformIntV2",
                                   [shape_t, key, counter, alg, lo, hi],
                                   {"dtype": dtype, "Tshape": shape_t.dtype.base_dtype},
                                   name=scope)
            rnd = self._sampler_v2("StatelessRandomUniformV2", shape_t, dtype)
            return make_tensor("AddV2", [rnd * (hi - lo), lo], name=scope)

    def uniform_full_int(self, shape, dtype=_dtypes.uint64, name=None):
        """Integers over the whole range of `dtype` (int32, int64, uint32, uint64)."""
        dtype = _dtypes.as_dtype(dtype).base_dtype
        with name_scope(name, "stateful_uniform_full_int", [shape]) as scope:
            shape_t = _shape_tensor(shape)
            key, counter = self._key_counter(shape_t)
            alg = constant(self._alg, _dtypes.int32, name="alg")
            return make_tensor("StatelessRandomUniformFullIntV2",
                               [shape_t, key, counter, alg],
                               {"dtype": dtype, "Tshape": shape_t.dtype.base_dtype},
                               name=scope)

    def binomial(self, shape, counts, probs, dtype=_dtypes.int32, name=None):
        """Binomial(`counts`, `probs`) samples (one ``StatefulRandomBinomial`` op)."""
        with name_scope(name, "binomial", [shape, counts, probs]) as scope:
            counts = convert_to_tensor(counts, name="counts")
            probs = convert_to_tensor(probs, name="probs")
            shape_t = _shape_tensor(shape)
            alg = constant(self._alg, _dtypes.int64, name="algorithm")
            return make_tensor("StatefulRandomBinomial",
                               [self._state_var._ref(), alg, shape_t, counts, probs],
                               {"dtype": _dtypes.as_dtype(dtype)}, name=scope)

    def make_seeds(self, count=1) -> Tensor:
        """``[2, count]`` int64 seeds for the stateless samplers (one per column)."""
        keys = self.uniform_full_int([count], dtype=_dtypes.int64)
        return stack([keys, zeros_like(keys)])

    def split(self, count=1):
        """Not available in graph mode (TensorFlow raises `NotImplementedError` too)."""
        raise NotImplementedError(
            "Generator.split creates new state variables from values drawn when it runs, "
            "which graph mode (tf.compat.v1) does not support; build generators with "
            "Generator.from_seed(seed + i) instead")


_global_generator: Generator | None = None


def get_global_generator() -> Generator:
    """The process-wide generator, created from non-deterministic state on first use
    (and again when the default graph is not the one its state variable lives in)."""
    global _global_generator
    if _global_generator is None or \
            _global_generator.state.graph is not get_default_graph():
        _global_generator = Generator.from_non_deterministic_state()
    return _global_generator


def set_global_generator(generator: Generator) -> None:
    """Replace the process-wide generator (what `get_global_generator` returns)."""
    global _global_generator
    _global_generator = generator
