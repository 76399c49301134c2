"""``IdentityN`` (TensorFlow's op) with `identity_n`, and the gradient helpers built on
it: the `custom_gradient` decorator, `hessians`, and `py_function` (a `py_func` whose
function receives eager-style values with ``.numpy()``).

`custom_gradient` routes the decorated function's outputs and inputs through one
``IdentityN`` whose gradient is overridden (``Graph.gradient_override_map``) with the
user's gradient function, so backpropagation reaches the inputs only through it.

Example
-------
>>> import flowgraph as tf
>>> @tf.custom_gradient
... def clip_grad_square(x):
...     def grad(dy):
...         return tf.clip_by_value(dy * 2.0 * x, -1.0, 1.0)
...     return x * x, grad
>>> x = tf.constant(3.0)
>>> print(tf.Session().run(tf.gradients(clip_grad_square(x), x)[0]))
1.0
"""

from __future__ import annotations

import inspect
import itertools

import numpy as np

from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.gradient_override import RegisterGradient
from flowgraph.framework.graph import get_default_graph
from flowgraph.framework.registry import register_gradient, register_op
from flowgraph.ops.array_shape_ops import reshape
from flowgraph.ops.op_util import make_op

__all__ = ["custom_gradient", "hessians", "identity_n", "py_function"]


@register_op("IdentityN", num_outputs=lambda op: len(op.inputs),
             dtype_fn=lambda op: [t.dtype.base_dtype for t in op.inputs])
def _identity_n_shape(op, *shapes):
    return list(shapes)


@register_gradient("IdentityN")
def _identity_n_grad(op, *grads):
    return list(grads)


def identity_n(input, name=None):
    """A list of tensors with the same values as the tensors of `input` (one op).

    Example
    -------
    >>> import flowgraph as tf
    >>> a, b = tf.identity_n([tf.constant(1), tf.constant([2.0])])
    >>> b.dtype.name
    'float32'
    """
    tensors = [convert_to_tensor(t) for t in input]
    if not tensors:
        raise ValueError("tf.identity_n: input must hold at least one tensor")
    return list(make_op("IdentityN", tensors, name=name or "IdentityN").outputs)


_custom_ids = itertools.count()


def _flatten(result):
    if isinstance(result, list | tuple):
        return list(result), type(result)
    return [result], None


def custom_gradient(f=None):
    """Decorator: `f(*inputs)` returns ``(outputs, grad_fn)``; the gradient of the
    outputs with respect to the inputs is ``grad_fn(*output_grads)`` (one gradient per
    input), not the derivative of the ops inside `f`.

    Example
    -------
    >>> import flowgraph as tf
    >>> @tf.custom_gradient
    ... def log1pexp(x):
    ...     e = tf.exp(x)
    ...     return tf.log(1 + e), lambda dy: dy * (1 - 1 / (1 + e))
    >>> x = tf.constant(100.0)
    >>> print(tf.Session().run(tf.gradients(log1pexp(x), x)[0]))
    1.0
    """
    if f is None:
        return custom_gradient

    def decorated(*args, **kwargs):
        if kwargs:
            # TensorFlow's error (a ValueError in graph mode), then which function
            raise ValueError(f"The custom_gradient decorator currently supports keywords "
                             f"arguments only when eager execution is enabled. (Function "
                             f"{f.__name__} got keyword arguments {sorted(kwargs)}; pass its "
                             f"tensors positionally.)")
        inputs = [convert_to_tensor(a) for a in args]
        graph = get_default_graph()
        first_new = len(graph.get_operations())
        before = _all_variables(graph)
        result, grad_fn = f(*inputs)
        _check_new_variables(graph, before, f)
        flat, kind = _flatten(result)
        flat = [convert_to_tensor(t) for t in flat]
        variables, reads = variables_read(graph, graph.get_operations()[first_new:])
        wants_variables = "variables" in inspect.signature(grad_fn).parameters
        if variables and not wants_variables:
            raise TypeError(f"@tf.custom_gradient grad_fn must accept keyword argument "
                            f"'variables', since function uses variables: {variables}")
        name = f"CustomGradient-{next(_custom_ids)}"

        @RegisterGradient(name)
        def _grad(op, *grads):
            out_grads = list(grads[:len(flat)])
            var_grads = []
            if wants_variables:
                input_grads, var_grads = grad_fn(*out_grads, variables=variables)
                var_grads = list(var_grads or [])
                if len(var_grads) != len(variables):
                    raise ValueError(f"custom_gradient function {f.__name__}: its gradient "
                                     f"function returned {len(var_grads)} variable gradients "
                                     f"for {len(variables)} variables")
            else:
                input_grads = grad_fn(*out_grads)
            input_grads, _ = _flatten(input_grads)
            if len(input_grads) != len(inputs):
                raise ValueError(f"custom_gradient function {f.__name__}: its gradient "
                                 f"function returned {len(input_grads)} gradients for "
                                 f"{len(inputs)} inputs; return one per input")
            return [None] * len(flat) + list(input_grads) + var_grads

        # the variables' reads pass through the IdentityN too, so their gradients are
        # the ones grad_fn gives for `variables`
        with graph.gradient_override_map({"IdentityN": name}):
            outs = identity_n(flat + inputs + reads)
        outs = outs[:len(flat)]
        return kind(outs) if kind is not None else outs[0]

    decorated.__name__ = getattr(f, "__name__", "custom_gradient")
    decorated.__doc__ = f.__doc__
    return decorated


def _all_variables(graph) -> dict:
    from flowgraph.framework.graph import GraphKeys
    return {id(v): v for key in (GraphKeys.GLOBAL_VARIABLES, GraphKeys.LOCAL_VARIABLES)
            for v in graph.get_collection(key)}


def _check_new_variables(graph, before: dict, f) -> None:
    """TensorFlow's rule in graph mode: a variable the function creates must be a
    resource variable (a reference variable's reads could not be routed to grad_fn)."""
    from flowgraph.ops.resource_variables import is_resource_variable
    for key, v in _all_variables(graph).items():
        if key not in before and not is_resource_variable(v):
            raise TypeError(
                f"All variables used by a function wrapped with @custom_gradient must be "
                f"`ResourceVariable`s. Ensure that no `variable_scope` is created with "
                f"`use_resource=False`. (Function {getattr(f, '__name__', f)} created the "
                f"reference variable {v.name}; pass use_resource=True.)")


def variables_read(graph, new_ops):
    """The variables that `new_ops` read, and for each the read tensor to route its
    gradient through (a read made inside the function, or the variable's snapshot)."""
    from flowgraph.framework.graph import GraphKeys
    new = set(new_ops)
    variables, reads = [], []
    for v in graph.get_collection(GraphKeys.GLOBAL_VARIABLES):
        ref = v.op.outputs[0]
        snapshot = v.value()
        found = None
        for op in new_ops:
            for t in op.inputs:
                if t is ref and op.type in ("Identity", "ReadVariableOp"):
                    found = op.outputs[0]  # a reference or a resource variable's read
                elif t is snapshot and snapshot.op not in new:
                    found = found or snapshot
            if found is not None:
                break
        if found is not None:
            variables.append(v)
            reads.append(found)
    return variables, reads


def hessians(ys, xs, name="hessians", colocate_gradients_with_ops=False,
             gate_gradients=False, aggregation_method=None):
    """For each x of `xs`, the second derivatives of ``sum(ys)``: a tensor of shape
    ``x.shape + x.shape`` (dynamic when x's shape is not fully known).

    Built as TensorFlow builds it: the first gradient flattened (``Reshape``), then a
    ``tf.while_loop`` over its ``Size(x)`` elements writing ``tf.gradients(g[j], x)`` into
    a TensorArray, stacked and reshaped to ``concat([Shape(x), Shape(x)])``; `name` is
    accepted and unused, as in TensorFlow. As in TensorFlow, an x that `ys` does not depend
    on, or one `ys` is linear in (a row without a gradient), raises ValueError.

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.constant([1.0, 2.0])
    >>> (h,) = tf.hessians(tf.reduce_sum(x * x * x), x)
    >>> tf.Session().run(h).tolist()
    [[6.0, 0.0], [0.0, 12.0]]
    """
    from flowgraph.ops.array_join_ops import concat
    from flowgraph.ops.array_shape_ops import shape, size
    from flowgraph.ops.control_flow_loops import while_loop
    from flowgraph.ops.gradients import gradients
    from flowgraph.ops.math_ops import less
    from flowgraph.ops.tensor_array import TensorArray

    del name
    xs = list(xs) if isinstance(xs, list | tuple) else [xs]
    kwargs = {"colocate_gradients_with_ops": colocate_gradients_with_ops,
              "gate_gradients": gate_gradients, "aggregation_method": aggregation_method}
    out = []
    for g, x in zip(gradients(ys, xs, **kwargs), xs):
        if g is None:
            # TensorFlow reshapes the missing gradient and fails converting None.
            raise ValueError("Tried to convert 'tensor' to a tensor and failed. "
                             "Error: None values not supported.")
        flat = reshape(g, [-1])
        n = size(x)

        def body(j, result, flat=flat, x=x):
            (row,) = gradients(flat[j], x)
            if row is None:  # TensorFlow's TensorArray write of None
                raise ValueError("None values not supported.")
            return j + 1, result.write(j, row)

        _, rows = while_loop(lambda j, _, n=n: less(j, n), body,
                             [convert_to_tensor(0), TensorArray(x.dtype.base_dtype, n)])
        dims = shape(x)
        out.append(reshape(rows.stack(), concat((dims, dims), 0)))
    return out


class _EagerValue(np.ndarray):
    """A NumPy array that also answers ``.numpy()``, as the eager tensors that
    TensorFlow's `py_function` passes do."""

    def numpy(self):
        return np.asarray(self)


def _as_eager(v):
    arr = np.asarray(v)
    return arr.view(_EagerValue) if arr.dtype != object else arr


def py_function(func, inp, Tout, name=None):
    """Wrap `func` as an op, like `tf.py_func`, but `func` receives array values that
    also have ``.numpy()`` (TensorFlow passes eager tensors) and may return such values.
    Not differentiable in flowgraph.

    Example
    -------
    >>> import flowgraph as tf
    >>> y = tf.py_function(lambda x: x.numpy() * 2, [tf.constant([1.0, 2.0])], tf.float32)
    >>> tf.Session().run(y).tolist()
    [2.0, 4.0]
    """
    from flowgraph.ops.script_ops import build_py_func

    def call(*values):
        out = func(*[_as_eager(v) for v in values])
        if isinstance(out, list | tuple):
            return [np.asarray(o.numpy() if hasattr(o, "numpy") else o) for o in out]
        return np.asarray(out.numpy() if hasattr(out, "numpy") else out)

    return build_py_func(call, inp, Tout, "EagerPyFunc", name=name)
