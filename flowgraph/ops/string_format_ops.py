"""``StringFormat`` (`tf.strings.format`): tensors rendered into a template, as one string.

Each ``placeholder`` (default ``"{}"``) in `template` is replaced by the next input,
rendered the way `tf.print` renders it (`summarize` entries kept at both ends of each
axis). The result is a scalar string tensor.

Example
-------
>>> import flowgraph as tf
>>> s = tf.strings.format("x={} y={}", (tf.constant(1), tf.constant([1.5, 2.0])))
>>> tf.Session().run(s)
b'x=1 y=[1.5 2]'
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.operation import Tensor
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.op_util import fixed_dtype, make_tensor

__all__ = ["string_format"]


@register_op("StringFormat", attrs={"template": "%s", "placeholder": "%s", "summarize": 3},
             dtype_fn=fixed_dtype(_dtypes.string))
def _string_format_shape(op, *inputs):
    slots = op.attrs["template"].count(op.attrs["placeholder"])
    if slots != len(op.inputs):
        raise op.shape_error(f"the template has {slots} placeholders but the op has "
                             f"{len(op.inputs)} inputs")
    return [TensorShape([])]


not_differentiable("StringFormat")


def string_format(template: str, inputs, placeholder: str = "{}", summarize: int = 3,
                  name=None) -> Tensor:
    """`template` with each `placeholder` replaced by the next of `inputs` (a tensor or a
    list/tuple of tensors), rendered like `tf.print` renders them; a scalar string.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.strings.format("sum: {}", tf.reduce_sum([1, 2])))
    b'sum: 3'
    """
    if not isinstance(inputs, list | tuple):
        inputs = [inputs]
    tensors = [convert_to_tensor(x, name="inputs") for x in inputs]
    slots = template.count(placeholder)
    if slots != len(tensors):
        raise ValueError(f"tf.strings.format: the template {template!r} has {slots} "
                         f"placeholders {placeholder!r} but {len(tensors)} inputs were given")
    return make_tensor("StringFormat", tensors,
                       {"template": template, "placeholder": placeholder,
                        "summarize": int(summarize)}, name=name or "StringFormat")
