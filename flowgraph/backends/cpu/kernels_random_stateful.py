"""CPU kernels of the stateful random ops (`flowgraph/ops/random_stateful_ops.py`) and
of the ``*V2`` stateless ops that take a Philox key and counter.

A generator's state is an int64 variable of three words: the 128-bit Philox counter
(low word first) and the 64-bit key. An op that draws ``n`` values reads the state,
draws from ``(key, counter)`` exactly as the stateless samplers do
(`flowgraph/backends/cpu/kernels_random_stateless.py`), and advances the counter by
``256 * n`` blocks, TensorFlow's stride (every sampler consumes at most 256 blocks per
output), so consecutive draws never share blocks::

    state [1, 0, 0] --normal([4])--> [1025, 0, 0] --uniform([3])--> [1793, 0, 0]

``RngReadAndSkip`` returns the state before the skip; the ``*V2`` ops then draw from it.
Only Philox (algorithm 1, and auto-select, which is Philox on the CPU) is implemented.
"""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.backends.cpu import kernels_random_stateless as _sl
from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors

PHILOX, THREEFRY, AUTO_SELECT = 1, 2, 3
_MASK32, _MASK64 = 0xFFFFFFFF, (1 << 64) - 1
SKIP_STRIDE = 256  # Philox blocks reserved per output


def _invalid(message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, message)


def _check_alg(alg, op_type: str, threefry_error=errors.UnimplementedError) -> None:
    alg = int(alg)
    if alg == THREEFRY:
        raise threefry_error(
            None, None, f"{op_type}: the ThreeFry algorithm (2) is not implemented on the "
            "CPU; use Philox (algorithm 1, 'philox').")
    if alg not in (PHILOX, AUTO_SELECT):
        raise _invalid(f"{op_type}: unsupported algorithm id {alg}; expected 1 (Philox), "
                       "2 (ThreeFry) or 3 (auto-select)")


def key_counter_of(key: int, counter_lo: int, counter_hi: int) -> _sl.KeyCounter:
    """The Philox stream of a 64-bit key and a 128-bit counter given as two words."""
    lo, hi = counter_lo & _MASK64, counter_hi & _MASK64
    return _sl.KeyCounter((((key & _MASK32), (key >> 32) & _MASK32),
                           (lo & _MASK32, lo >> 32, hi & _MASK32, hi >> 32)))


def _read_state(ref, op, op_type: str) -> np.ndarray:
    state = ref.read(op.name)
    if state.dtype != np.int64 or state.ndim != 1 or state.shape[0] < 3:
        raise _invalid(f"{op_type}: the RNG state of variable '{ref.name}' must be an int64 "
                       f"vector of at least 3 words for Philox, got {state.dtype} of shape "
                       f"{list(state.shape)}")
    return state


def skip_state(state: np.ndarray, delta: int) -> np.ndarray:
    """`state` with its 128-bit counter advanced by ``256 * delta`` (wrapping)."""
    words = [int(w) & _MASK64 for w in state]
    counter = (words[0] | (words[1] << 64)) + SKIP_STRIDE * int(delta)
    counter &= (1 << 128) - 1
    words[0], words[1] = counter & _MASK64, counter >> 64
    return np.array(words, np.uint64).view(np.int64)


def _draw(ref, op, alg, n: int, op_type: str) -> _sl.KeyCounter:
    """Read the state, advance it past `n` outputs, and return the stream to draw from."""
    _check_alg(alg, op_type)
    with ref.lock:
        state = _read_state(ref, op, op_type)
        old = [int(w) for w in state[:3]]
        ref.value = skip_state(state, n)
    return key_counter_of(old[2] & _MASK64, old[0], old[1])


def _v2_stream(key, counter, alg, op_type: str) -> _sl.KeyCounter:
    # TF's stateless kernels refuse ThreeFry as an invalid argument (stateful ones as
    # unimplemented).
    _check_alg(alg, op_type, errors.InvalidArgumentError)
    key, counter = np.asarray(key).reshape(-1), np.asarray(counter).reshape(-1)
    if key.shape != (1,):
        raise _invalid(f"{op_type}: key must have shape [1], got {list(np.shape(key))}")
    if counter.shape[0] < 2:
        raise _invalid(f"{op_type}: the Philox counter must have 2 elements, got "
                       f"{counter.shape[0]}")
    words = [int(w) & _MASK64 for w in counter.view(np.uint64)[:2]]
    return key_counter_of(int(key.view(np.uint64)[0]), words[0], words[1])


def _np(dtype):
    return _dtypes.as_dtype(dtype).as_numpy_dtype


def _int_bounds(minval, maxval, op_type: str) -> tuple[int, int]:
    lo, hi = int(minval), int(maxval)
    if hi <= lo:
        raise _invalid(f"{op_type}: Need minval < maxval: {lo} >= {hi}")
    return lo, hi


# -- state ops ---------------------------------------------------------------------------
@cpu_kernel("RngReadAndSkip", fresh=True)
def rng_read_and_skip(ref, alg, delta, *, op):
    _check_alg(alg, "RngReadAndSkip")
    with ref.lock:
        state = _read_state(ref, op, "RngReadAndSkip")
        old = state.copy()
        ref.value = skip_state(state, int(np.asarray(delta).astype(np.uint64)))
    return old


@cpu_kernel("RngSkip")
def rng_skip(ref, algorithm, delta, *, op):
    _check_alg(algorithm, "RngSkip")
    if int(delta) < 0:
        raise _invalid(f"RngSkip: delta must be non-negative, got {int(delta)}")
    with ref.lock:
        ref.value = skip_state(_read_state(ref, op, "RngSkip"), int(delta))


# -- stateful samplers (read, draw, skip) -----------------------------------------------
@cpu_kernel("StatefulUniform", fresh=True)
def stateful_uniform(ref, algorithm, shape, *, dtype, op):
    dims = _sl._shape(shape)
    return _sl.uniform(_draw(ref, op, algorithm, int(np.prod(dims)), "StatefulUniform"),
                       dims, _np(dtype))


@cpu_kernel("StatefulStandardNormalV2", fresh=True)
def stateful_normal(ref, algorithm, shape, *, dtype, op):
    dims = _sl._shape(shape)
    stream = _draw(ref, op, algorithm, int(np.prod(dims)), "StatefulStandardNormalV2")
    return _sl.normal(stream, dims, _np(dtype))


@cpu_kernel("StatefulTruncatedNormal", fresh=True)
def stateful_truncated_normal(ref, algorithm, shape, *, dtype, op):
    dims = _sl._shape(shape)
    stream = _draw(ref, op, algorithm, int(np.prod(dims)), "StatefulTruncatedNormal")
    return _sl.truncated_normal(stream, dims, _np(dtype))


@cpu_kernel("StatefulUniformInt", fresh=True)
def stateful_uniform_int(ref, algorithm, shape, minval, maxval, *, dtype, op):
    lo, hi = _int_bounds(minval, maxval, "StatefulUniformInt")
    dims = _sl._shape(shape)
    stream = _draw(ref, op, algorithm, int(np.prod(dims)), "StatefulUniformInt")
    return _sl.uniform_int(stream, dims, lo, hi, _np(dtype))


@cpu_kernel("StatefulUniformFullInt", fresh=True)
def stateful_uniform_full_int(ref, algorithm, shape, *, dtype, op):
    dims = _sl._shape(shape)
    stream = _draw(ref, op, algorithm, int(np.prod(dims)), "StatefulUniformFullInt")
    return _sl.full_int(stream, dims, _np(dtype))


@cpu_kernel("StatefulRandomBinomial", fresh=True)
def stateful_binomial(ref, algorithm, shape, counts, probs, *, dtype, op):
    """TensorFlow's binomial sampler on the generator's stream; the state moves on by
    ``200 * num_batches * (samples_per_batch + 3) / 4`` blocks, TensorFlow's reservation."""
    def reserve(num_batches, samples_per_batch):
        _check_alg(algorithm, "StatefulRandomBinomial")
        with ref.lock:
            state = _read_state(ref, op, "StatefulRandomBinomial")
            old = [int(w) & _MASK64 for w in state[:3]]
            blocks = num_batches * 2 * 100 * (samples_per_batch + 3) // 4
            counter = (old[0] | (old[1] << 64)) + blocks
            words = [int(w) & _MASK64 for w in state]
            words[0], words[1] = counter & _MASK64, (counter >> 64) & _MASK64
            ref.value = np.array(words, np.uint64).view(np.int64)
        return key_counter_of(old[2], old[0], old[1])

    return _sl.binomial(None, shape, counts, probs, _np(dtype), "StatefulRandomBinomial",
                        reserve=reserve)


# -- stateless samplers on an explicit key and counter ----------------------------------
@cpu_kernel("StatelessRandomUniformV2", fresh=True)
def stateless_uniform_v2(shape, key, counter, alg, *, dtype):
    return _sl.uniform(_v2_stream(key, counter, alg, "StatelessRandomUniformV2"),
                       _sl._shape(shape), _np(dtype))


@cpu_kernel("StatelessRandomNormalV2", fresh=True)
def stateless_normal_v2(shape, key, counter, alg, *, dtype):
    return _sl.normal(_v2_stream(key, counter, alg, "StatelessRandomNormalV2"),
                      _sl._shape(shape), _np(dtype))


@cpu_kernel("StatelessTruncatedNormalV2", fresh=True)
def stateless_truncated_normal_v2(shape, key, counter, alg, *, dtype):
    return _sl.truncated_normal(_v2_stream(key, counter, alg, "StatelessTruncatedNormalV2"),
                                _sl._shape(shape), _np(dtype))


@cpu_kernel("StatelessRandomUniformIntV2", fresh=True)
def stateless_uniform_int_v2(shape, key, counter, alg, minval, maxval, *, dtype):
    lo, hi = _int_bounds(minval, maxval, "StatelessRandomUniformIntV2")
    return _sl.uniform_int(_v2_stream(key, counter, alg, "StatelessRandomUniformIntV2"),
                           _sl._shape(shape), lo, hi, _np(dtype))


@cpu_kernel("StatelessRandomUniformFullIntV2", fresh=True)
def stateless_uniform_full_int_v2(shape, key, counter, alg, *, dtype):
    return _sl.full_int(_v2_stream(key, counter, alg, "StatelessRandomUniformFullIntV2"),
                        _sl._shape(shape), _np(dtype))
