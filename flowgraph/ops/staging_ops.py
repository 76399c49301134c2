"""Staging-area ops: ``Stage``, ``Unstage``, ``StagePeek``, ``StageSize``, ``StageClear``.

A staging area is a buffer of tuples of tensors shared by name (attribute
``shared_name``) in the session's resource container; unlike a queue it has no handle
tensor: every op names the area itself. ``Stage`` blocks while the area is at its
``capacity`` (element count) or ``memory_limit`` (bytes); ``Unstage`` takes the oldest
element, blocking while the area is empty; ``StagePeek`` reads the element at an index
without removing it. The Python class is `flowgraph.contrib.staging.StagingArea`; the
kernels are in `flowgraph/backends/cpu/kernels_staging.py`.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.ops.op_util import make_op
>>> put = make_op("Stage", [tf.constant(1.5)], {"dtypes": [tf.float32],
...               "shared_name": "doc_area"})
>>> size = make_op("StageSize", [], {"dtypes": [tf.float32],
...                "shared_name": "doc_area"}).outputs[0]
>>> with tf.Session() as sess:
...     _ = sess.run(put)
...     print(sess.run(size))
1
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.registry import OpCost, not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.op_util import fixed_dtype

__all__: list[str] = []

_AREA_ATTRS = {"capacity": 0, "memory_limit": 0, "dtypes": None, "container": "",
               "shared_name": ""}


def _element_dtypes(op):
    return [_dtypes.as_dtype(d) for d in op.attrs["dtypes"]]


def _num_components(op) -> int:
    return len(op.attrs["dtypes"])


def _unknown_shapes(op, *inputs):
    # The area stores no shapes: StagingArea.get sets them on its outputs.
    return [TensorShape(None)] * len(op.attrs["dtypes"])


@register_op("Stage", attrs=_AREA_ATTRS, num_outputs=0, dtype_fn=lambda op: [],
             stateful=True, cost=OpCost.CHEAP)
def _stage_shape(op, *values):
    if len(values) != len(op.attrs["dtypes"]):
        raise op.shape_error(f"Stage takes one value per element component: "
                             f"{len(op.attrs['dtypes'])} dtypes, {len(values)} values")
    return []


register_op("Unstage", attrs=_AREA_ATTRS, num_outputs=_num_components,
            dtype_fn=_element_dtypes, stateful=True, cost=OpCost.CHEAP)(_unknown_shapes)


@register_op("StagePeek", attrs=_AREA_ATTRS, num_outputs=_num_components,
             dtype_fn=_element_dtypes, stateful=True, cost=OpCost.CHEAP)
def _peek_shape(op, index):
    if index.ndims is not None and index.ndims != 0:
        raise op.shape_error(f"StagePeek's index must be a scalar, got shape {index}")
    return _unknown_shapes(op)


register_op("StageSize", attrs=_AREA_ATTRS, dtype_fn=fixed_dtype(_dtypes.int32),
            stateful=True, cost=OpCost.CHEAP)(lambda op: [TensorShape([])])
register_op("StageClear", attrs=_AREA_ATTRS, num_outputs=0, dtype_fn=lambda op: [],
            stateful=True, cost=OpCost.CHEAP)(lambda op: [])

not_differentiable("Stage", "Unstage", "StagePeek", "StageSize", "StageClear")
