"""Keyed staging areas: ``MapStage``, ``MapUnstage``, ``MapUnstageNoKey``, ``MapPeek``,
``MapSize``, ``MapIncompleteSize``, ``MapClear`` and their ``OrderedMap*`` twins.

A map staging area holds tuples of tensors under int64 keys, shared by ``shared_name``
in the session's resource container (no handle: every op names the area, as
``Stage`` does). ``MapStage`` puts the components listed by ``indices`` under a key; a
tuple with only some components set waits among the *incomplete* ones until later
stages of the same key fill the rest. ``MapUnstage`` takes the listed components of a
key (blocking until the key is there; the tuple goes once all its components are
taken), ``MapPeek`` reads them, ``MapUnstageNoKey`` takes a whole tuple and its key:
the smallest key for an ordered map, the most recently completed one otherwise
(TensorFlow's order is that of its hash map). ``capacity`` bounds the complete tuples,
``memory_limit`` their bytes (0: no bound). Kernels:
`flowgraph/backends/cpu/kernels_map_staging.py`.

Example
-------
>>> import flowgraph as tf
>>> area = {"dtypes": [tf.float32, tf.int32], "shared_name": "doc_map"}
>>> put_a = tf.raw_ops.OrderedMapStage(key=tf.constant(7, tf.int64), indices=[0],
...                                    values=[tf.constant(1.5)], **area)
>>> put_b = tf.raw_ops.OrderedMapStage(key=tf.constant(7, tf.int64), indices=[1],
...                                    values=[tf.constant(4)], **area)
>>> size = tf.raw_ops.OrderedMapSize(**area)
>>> got = tf.raw_ops.OrderedMapUnstage(key=tf.constant(7, tf.int64), indices=[0, 1], **area)
>>> with tf.Session() as sess:
...     sess.run(put_a)
...     print(sess.run(size))
...     sess.run(put_b)
...     print(sess.run(size), [v.item() for v in sess.run(got)])
0
1 [1.5, 4]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.registry import OpCost, not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.op_util import fixed_dtype

__all__: list[str] = []

_ATTRS = {"capacity": 0, "memory_limit": 0, "dtypes": None, "container": "",
          "shared_name": ""}
MAP_OPS = ("Stage", "Unstage", "UnstageNoKey", "Peek", "Size", "IncompleteSize", "Clear")


def _value_dtypes(op):
    return [_dtypes.as_dtype(d) for d in op.attrs["dtypes"]]


def _check_key_indices(op, key, indices) -> None:
    if key is not None and key.ndims not in (None, 0):
        raise op.shape_error(f"key must be a scalar int64, got shape {key}")
    if indices.ndims not in (None, 1):
        raise op.shape_error(f"indices must be a vector of int32, got shape {indices}")


def _stage_shape(op, key, indices, *values):
    _check_key_indices(op, key, indices)
    if indices.ndims == 1 and indices[0].value is not None and \
            indices[0].value != len(values):
        raise op.shape_error(f"{indices[0].value} indices but {len(values)} values; stage "
                             "one value per index")
    return []


def _take_shape(op, key, indices):
    _check_key_indices(op, key, indices)
    return [TensorShape(None)] * len(op.attrs["dtypes"])


def _no_key_shape(op, indices):
    _check_key_indices(op, None, indices)
    return [TensorShape(None)] * (1 + len(op.attrs["dtypes"]))


for _prefix in ("Map", "OrderedMap"):
    _kw = {"stateful": True, "cost": OpCost.CHEAP}
    register_op(f"{_prefix}Stage", attrs={**_ATTRS, "fake_dtypes": None}, num_outputs=0,
                dtype_fn=lambda op: [], **_kw)(_stage_shape)
    for _name in ("Unstage", "Peek"):
        register_op(f"{_prefix}{_name}", attrs=_ATTRS,
                    num_outputs=lambda op: len(op.attrs["dtypes"]), dtype_fn=_value_dtypes,
                    **_kw)(_take_shape)
    register_op(f"{_prefix}UnstageNoKey", attrs=_ATTRS,
                num_outputs=lambda op: 1 + len(op.attrs["dtypes"]),
                dtype_fn=lambda op: [_dtypes.int64, *_value_dtypes(op)], **_kw)(_no_key_shape)
    for _name in ("Size", "IncompleteSize"):
        register_op(f"{_prefix}{_name}", attrs=_ATTRS, dtype_fn=fixed_dtype(_dtypes.int32),
                    **_kw)(lambda op: [TensorShape([])])
    register_op(f"{_prefix}Clear", attrs=_ATTRS, num_outputs=0, dtype_fn=lambda op: [],
                **_kw)(lambda op: [])
    not_differentiable(*(f"{_prefix}{n}" for n in MAP_OPS))
