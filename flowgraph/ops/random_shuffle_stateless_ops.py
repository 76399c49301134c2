"""``tf.random.experimental.stateless_shuffle``: a deterministic shuffle along the first
axis, from a seed pair, with TensorFlow's graph and numbers.

``StatelessRandomGetKeyCounter`` turns a ``[2]`` seed into the Philox key (``uint64
[1]``) and counter (``uint64 [2]``) TensorFlow derives from it; ``StatelessShuffle``
shuffles ``value`` with that stream exactly as ``RandomShuffle`` does with its own
(`flowgraph.backends.cpu.kernels_random.shuffled_order`). With ``alg="philox"`` the key and
counter come from TensorFlow's seed scrambling (a ``StatelessRandomUniformFullIntV2``
draw). As in TensorFlow, ``StatelessShuffle`` has no gradient.

Example
-------
>>> import flowgraph as tf
>>> v = tf.constant([[1, 2], [3, 4], [5, 6]])
>>> tf.Session().run(tf.random.experimental.stateless_shuffle(v, seed=[8, 9])).tolist()
[[5, 6], [1, 2], [3, 4]]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant, convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.array_join_ops import stack
from flowgraph.ops.array_shape_ops import reshape
from flowgraph.ops.bitwise_ops import bitwise_or, left_shift
from flowgraph.ops.math_ops import cast
from flowgraph.ops.op_util import make_op, make_tensor

__all__ = ["stateless_shuffle"]

_PHILOX, _THREEFRY, _AUTO_SELECT = 1, 2, 3


@register_op("StatelessRandomGetKeyCounter", attrs={"Tseed": _dtypes.int64}, num_outputs=2,
             dtype_fn=lambda op: [_dtypes.uint64, _dtypes.uint64])
def _get_key_counter_shape(op, seed):
    if seed.ndims is not None:
        if seed.ndims != 1:
            raise op.shape_error(f"Shape must be rank 1 but is rank {seed.ndims}")
        if seed[0].value is not None and seed[0].value != 2:
            raise op.shape_error(f"Dimension must be 2 but is {seed[0].value}")
    return [TensorShape([1]), TensorShape([2])]


not_differentiable("StatelessRandomGetKeyCounter")


@register_op("StatelessShuffle", attrs={"T": None})
def _stateless_shuffle_shape(op, value, key, counter, alg):
    return [value]


def _alg_int(alg) -> int:
    if isinstance(alg, int):
        return alg
    if hasattr(alg, "value"):
        return int(alg.value)
    if isinstance(alg, str):
        canon = alg.strip().lower().replace("-", "").replace("_", "")
        names = {"philox": _PHILOX, "threefry": _THREEFRY, "autoselect": _AUTO_SELECT}
        if canon in names:
            return names[canon]
        raise ValueError(
            f"Argument `alg` got unsupported value {alg}. Supported values are philox for "
            "the Philox algorithm, threefry for the ThreeFry algorithm, and auto_select "
            "for auto-selection.")
    raise TypeError(f"Can't convert argument `alg` (of value {alg} and type {type(alg)}) "
                    "to int.")


def _uint64_of_pair(words):
    low = cast(words[0], _dtypes.uint64)
    high = cast(words[1], _dtypes.uint64)
    return bitwise_or(low, left_shift(high, constant(32, _dtypes.uint64)))


def _key_counter(seed, alg: int):
    if alg == _AUTO_SELECT:
        with name_scope(None, "StatelessRandomGetKeyCounter", [seed]) as scope:
            seed = convert_to_tensor(seed, name="seed")
            op = make_op("StatelessRandomGetKeyCounter", [seed],
                         {"Tseed": seed.dtype.base_dtype}, name=scope)
        return op.outputs[0], op.outputs[1]
    if alg == _PHILOX:  # TensorFlow's scrambling of the seed into a Philox key/counter
        key = constant([0x02461E293EC8F720], _dtypes.uint64)
        counter = cast(seed, _dtypes.uint64)
        shape = constant([4], _dtypes.int32, name="StatelessRandomUniformFullIntV2/shape")
        alg_t = constant(_PHILOX, _dtypes.int32, name="StatelessRandomUniformFullIntV2/alg")
        mix = make_tensor("StatelessRandomUniformFullIntV2", [shape, key, counter, alg_t],
                          {"dtype": _dtypes.uint32, "Tshape": _dtypes.int32},
                          name="StatelessRandomUniformFullIntV2")
        key = reshape(_uint64_of_pair(mix[:2]), [1])
        counter = stack([0, _uint64_of_pair(mix[2:])], axis=0)
        return key, counter
    if alg == _THREEFRY:
        key = reshape(_uint64_of_pair(cast(seed, _dtypes.uint32)), [1])
        return key, constant([0], _dtypes.uint64, name="zeros")
    raise ValueError(
        f"Argument `alg` got unsupported value {alg}. Supported values are 1 for the Philox "
        "algorithm, 2 for the ThreeFry algorithm, and 3 for auto-selection.")


def stateless_shuffle(value, seed, alg="auto_select", name=None):
    """`value` shuffled along its first axis, deterministically from `seed` (``[2]``
    integers): the same seed gives the same order, as TensorFlow's.

    Example
    -------
    >>> import flowgraph as tf
    >>> s = tf.random.experimental.stateless_shuffle(tf.range(10), seed=[1, 2])
    >>> tf.Session().run(s).tolist()
    [0, 3, 8, 1, 5, 4, 9, 7, 6, 2]
    """
    with name_scope(name, "stateless_shuffle", [value, seed]):
        alg = _alg_int(alg)
        value = convert_to_tensor(value, name="value")
        key, counter = _key_counter(seed, alg)
        alg_t = constant(alg, _dtypes.int32, name="StatelessShuffle/alg")
        return make_tensor("StatelessShuffle", [value, key, counter, alg_t],
                           {"T": value.dtype.base_dtype}, name="StatelessShuffle")
