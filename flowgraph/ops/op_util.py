"""Helpers shared by the op modules: building ops, naming the constants made from Python
values, matching dtypes of binary inputs.

TensorFlow 1.x builds an op whose arguments include Python values inside a name scope
named after the op: each value becomes a constant named after its argument inside that
scope, and the op takes the scope's name. `op_scope` reproduces this (opening the scope
only when some argument is not already a tensor, so tensor-only ops cost nothing extra)::

    x * 2.0               ->  mul/y (Const), mul (Mul)
    tf.reshape(x, [1, 2]) ->  Reshape/shape (Const), Reshape (Reshape)

Example
-------
>>> import flowgraph as tf
>>> x = tf.placeholder(tf.float32, [2])
>>> with op_scope(None, "Mul", (x, 2)) as scope:
...     a, b = binary_inputs(x, 2, "Mul", names=("x", "y"))
...     out = make_tensor("Mul", [a, b], name=scope)
>>> b.op.name, out.op.name
('Mul/y', 'Mul')
"""

from __future__ import annotations

import contextlib

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import get_default_graph, graph_for, name_scope
from flowgraph.framework.indexed_slices import IndexedSlices
from flowgraph.framework.operation import Tensor


def op_scope(name: str | None, default: str, values=()):
    """Context manager for building one op from `values`, TensorFlow's way.

    If some value is not a `Tensor` (a Python number or list, a NumPy array, a
    variable), it opens the name scope ``name or default`` (made unique, in the graph of
    the tensor values) and yields it as ``"scope/"``: convert the values inside under
    their argument names (``convert_to_tensor(v, name="y")`` gives ``scope/y``) and pass
    the yielded string as the op's name, which `Graph.create_op` then uses exactly.
    Otherwise no scope is opened and it yields ``name or default``: the op is named the
    same either way.

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.placeholder(tf.float32, [2])
    >>> with op_scope(None, "Reshape", (x, [2, 1])) as scope:
    ...     shape = convert_to_tensor([2, 1], name="shape")
    ...     out = make_tensor("Reshape", [x, shape], name=scope)
    >>> shape.op.name, out.op.name
    ('Reshape/shape', 'Reshape')
    """
    for v in values:
        if not isinstance(v, Tensor):
            break
    else:
        return contextlib.nullcontext(name or default)
    default_graph = get_default_graph()
    if graph_for(values) is not default_graph:
        return name_scope(name, default, values)  # enters that graph too
    return default_graph.name_scope(default if name is None else name)


def make_op(op_type: str, inputs=(), attrs=None, name=None, dtypes=None):
    """Create an op in the default graph (or the graph of its first tensor input)."""
    inputs = list(inputs)
    if any(isinstance(t, IndexedSlices) for t in inputs):
        return _make_op_with_dense_inputs(op_type, inputs, attrs, name, dtypes)
    graph = graph_for([t for t in inputs if isinstance(t, Tensor)])
    return graph.create_op(op_type, inputs, attrs, name=name, dtypes=dtypes)


def _make_op_with_dense_inputs(op_type: str, inputs: list, attrs, name, dtypes):
    """As TensorFlow's op creation: inside the op's own name scope, an IndexedSlices
    input (a `tf.gather` gradient reaching a ``TanhGrad``, say) becomes a dense tensor
    named after its input argument (``.../TanhGrad/dy``).

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.placeholder(tf.float32, [4, 2])
    >>> g = tf.gradients(tf.gather(tf.tanh(x), [1, 3]), x)[0]
    >>> g.op.inputs[1].op.name
    'gradients/Tanh_grad/TanhGrad/dy'
    """
    from flowgraph.ops.raw_op_signatures import SIGNATURES

    spec = SIGNATURES.get(op_type, ("", ""))[0]
    args = [a.split(":")[0].lstrip("*") for a in spec.split(",")] if spec else []
    graph = graph_for([t for t in inputs if isinstance(t, Tensor | IndexedSlices)])
    with graph.as_default(), graph.name_scope(name or op_type) as scope:
        inputs = [convert_to_tensor(t, name=args[i] if i < len(args) else None)
                  if isinstance(t, IndexedSlices) else t for i, t in enumerate(inputs)]
        return graph.create_op(op_type, inputs, attrs, name=scope, dtypes=dtypes)


def make_tensor(op_type: str, inputs=(), attrs=None, name=None, dtypes=None) -> Tensor:
    """Like `make_op`, returning the op's single output."""
    return make_op(op_type, inputs, attrs, name, dtypes).outputs[0]


def binary_inputs(x, y, op_name: str, name: str | None = None,
                  names: tuple[str, str] | None = None) -> tuple[Tensor, Tensor]:
    """Convert `x`, `y` to tensors of one dtype, as TensorFlow does for binary ops.

    A non-tensor operand takes the dtype of the tensor operand; two tensors of different
    dtypes are a TypeError naming the op and both dtypes. `names` names the constants
    made from non-tensor operands (TensorFlow's argument names, e.g. ``("x", "y")``); use
    it inside `op_scope` or a name scope of the op, else they would land at the root.
    """
    nx, ny = names or (None, None)
    if isinstance(x, Tensor) or not isinstance(y, Tensor):
        x = convert_to_tensor(x, name=nx)
        y = _convert_like(y, x, op_name, ny)
    else:
        y = convert_to_tensor(y, name=ny)
        x = _convert_like(x, y, op_name, nx)
    if x.dtype.base_dtype != y.dtype.base_dtype:
        where = f"'{name}' " if name else ""
        raise TypeError(
            f"Input 'y' of '{op_name}' Op {where}has type {y.dtype.base_dtype.name} that does "
            f"not match type {x.dtype.base_dtype.name} of argument 'x' ({x.name} vs {y.name}). "
            f"Cast one of them with tf.cast first."
        )
    return x, y


def _convert_like(value, like: Tensor, op_name: str, arg: str | None = None) -> Tensor:
    if isinstance(value, Tensor):
        return convert_to_tensor(value)
    try:
        return convert_to_tensor(value, dtype=like.dtype.base_dtype, name=arg)
    except (TypeError, ValueError):
        got = convert_to_tensor(value)
        raise TypeError(
            f"Input of '{op_name}' Op has type {got.dtype.name} that does not match type "
            f"{like.dtype.base_dtype.name} of argument '{like.name}'."
        ) from None


def same_dtype(op):
    """dtype_fn: every output has the dtype of input 0."""
    return [op.inputs[0].dtype.base_dtype] * op.op_def.output_count(op)


def attr_dtype(name: str = "dtype"):
    """dtype_fn factory: the single output has the dtype in attribute `name`."""

    def fn(op):
        return [_dtypes.as_dtype(op.attrs[name])]

    return fn


def fixed_dtype(*dtypes):
    """dtype_fn factory: fixed output dtypes."""

    def fn(op):
        return list(dtypes)

    return fn
