"""Run-time checks: `tf.Assert`, `tf.check_numerics`, `tf.verify_tensor_all_finite` and
the ``tf.assert_*`` family (also in ``tf.debugging``).

An assertion is an op with no outputs; it fails the step with an `InvalidArgumentError`
("assertion failed: [...]") naming the op. Like in TensorFlow, an assertion runs only if
something depends on it: fetch it, or create dependent ops inside
``tf.control_dependencies([assert_op])``. When both sides of a comparison are known while
the graph is built, a violated ``assert_*`` raises at once.

Example
-------
>>> import flowgraph as tf
>>> x = tf.placeholder(tf.float32, [None])
>>> with tf.control_dependencies([tf.assert_positive(x)]):
...     y = tf.sqrt(x)
>>> with tf.Session() as sess:
...     print(sess.run(y, {x: [4.0, 9.0]}))
[2. 3.]
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors
from flowgraph.framework.constant_op import constant_value, convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.operation import Operation, Tensor
from flowgraph.framework.registry import not_differentiable, register_gradient, register_op
from flowgraph.ops.control_flow_cond import Assert  # tf.Assert: a cond guards it
from flowgraph.ops.op_util import make_tensor

__all__ = [
    "Assert",
    "add_check_numerics_ops",
    "assert_equal",
    "assert_greater",
    "assert_greater_equal",
    "assert_integer",
    "assert_less",
    "assert_less_equal",
    "assert_negative",
    "assert_non_negative",
    "assert_non_positive",
    "assert_none_equal",
    "assert_positive",
    "assert_rank",
    "assert_rank_at_least",
    "assert_scalar",
    "assert_type",
    "check_numerics",
    "is_numeric_tensor",
    "verify_tensor_all_finite",
]

_FLOATS = (_dtypes.float16, _dtypes.float32, _dtypes.float64)


# -- Assert ----------------------------------------------------------------------------------
@register_op("Assert", attrs={"summarize": 3}, num_outputs=0, dtype_fn=lambda op: [],
             stateful=True)
def _assert_shape(op, condition, *data):
    c = op.inputs[0]
    if c.dtype.base_dtype != _dtypes.bool:
        raise op.shape_error(f"the condition must be bool, found {c.dtype.base_dtype.name}")
    if condition.ndims not in (None, 0):
        raise op.shape_error(f"the condition must be a scalar, found shape {condition}")
    return []


# -- CheckNumerics ---------------------------------------------------------------------------
@register_op("CheckNumerics", attrs={"message": ""})
def _check_numerics_shape(op, x):
    return [x]


not_differentiable("Assert")


@register_gradient("CheckNumerics")
def _check_numerics_grad(op, grad):
    # The gradient passes through, checked in turn (as TensorFlow does); TF formats the
    # attr as the bytes it reads back, so its message shows b'...'
    message = op.attrs["message"]
    message = message.encode("utf-8") if isinstance(message, str) else message
    return [check_numerics(grad, "Not a number (NaN) or infinity (Inf) values detected in "
                           f"gradient. {message!r}")]


def check_numerics(tensor, message: str, name: str | None = None) -> Tensor:
    """`tensor`, after checking that it holds no NaN or Inf (InvalidArgumentError with
    `message` and the op's name if it does).

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.placeholder(tf.float32, [2])
    >>> y = tf.check_numerics(x, "bad x")
    >>> with tf.Session() as sess:
    ...     print(sess.run(y, {x: [1.0, 2.0]}))
    [1. 2.]
    """
    t = convert_to_tensor(tensor)
    if t.dtype.base_dtype not in _FLOATS:
        raise TypeError(
            f"Value passed to parameter 'tensor' of op 'CheckNumerics' has DataType "
            f"{t.dtype.base_dtype.name} not in list of allowed values: "
            f"{', '.join(d.name for d in _FLOATS)} ({t.name}); only floats can hold NaN/Inf.")
    return make_tensor("CheckNumerics", [t], {"message": str(message)},
                       name=name or "CheckNumerics")


def verify_tensor_all_finite(t=None, msg=None, name: str | None = None, x=None,
                             message=None) -> Tensor:
    """`t`, checked to be free of NaN and Inf (see `check_numerics`); also available as
    ``tf.debugging.assert_all_finite``.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.verify_tensor_all_finite(tf.constant([1.0]), "finite").name
    'VerifyFinite/control_dependency:0'
    """
    from flowgraph.ops.control_flow_ops import with_dependencies

    t = x if t is None else t
    msg = message if msg is None else msg
    if t is None:
        raise TypeError("verify_tensor_all_finite() needs a tensor (t=).")
    with name_scope(name, "VerifyFinite", [t]):
        t = convert_to_tensor(t, name="t")
        g = t.graph
        with g.colocate_with(t.op):
            check = check_numerics(t, message=msg if msg is not None else "")
        # TF returns `t` behind the check (an Identity), not the CheckNumerics output
        return with_dependencies([check], t)


def add_check_numerics_ops():
    """`check_numerics` of every float16/32/64 tensor of the default graph, run as a group.

    As TensorFlow builds it: one ``CheckNumerics`` per tensor in creation order, named
    in the current name scope, each after the previous one (a control edge), so that the
    first tensor with a NaN or Inf is the one reported; the message names the tensor
    (``"mul:0"``). The group is ``group_deps``. A graph with float tensors inside
    `tf.cond`/`tf.while_loop` is refused (ValueError).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     _ = tf.constant(1.0) * 2.0
    ...     print(tf.add_check_numerics_ops().type)
    NoOp
    """
    from flowgraph.framework.graph import get_default_graph
    from flowgraph.ops.control_flow_ops import group

    g = get_default_graph()
    checks = []
    for op in list(g.get_operations()):
        floats = [out for out in op.outputs  # TensorFlow's test: not refs, not bfloat16
                  if out.dtype.base_dtype in _FLOATS and not out.dtype.is_ref_dtype]
        if floats and (getattr(op, "_control_flow_context", None) is not None
                       or op.op_def.control_flow):
            raise ValueError(
                "`tf.add_check_numerics_ops() is not compatible with TensorFlow control flow "
                f"operations such as `tf.cond()` or `tf.while_loop()` (op '{op.name}' is "
                "inside one); check the tensors you need with tf.check_numerics instead.")
        for out in floats:
            with g.control_dependencies(checks):
                checks = [check_numerics(out, f"{op.name}:{out.value_index}").op]
    return group(*checks)


# -- assert_* --------------------------------------------------------------------------------
def _static(x: Tensor):
    return constant_value(x)


def _fail_static(data) -> None:
    parts = []
    for d in data:
        if isinstance(d, Tensor):
            v = _static(d)
            parts.append(str(v) if v is not None else d.name)
        else:
            parts.append(str(d))
    raise errors.InvalidArgumentError(None, None, "\n".join(parts))


def _with_message(message, data):
    return data if message is None else [message, *data]


def _binary_assert(sym: str, opname: str, op_fn, static_fn, x, y, data, summarize, message,
                   name):
    with name_scope(name, opname, [x, y]):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y")
        if x.dtype.base_dtype != y.dtype.base_dtype:
            raise TypeError(f"{opname}: x ({x.name}, {x.dtype.base_dtype.name}) and y "
                            f"({y.name}, {y.dtype.base_dtype.name}) must have the same dtype.")
        if data is None:
            data = [f"Condition x {sym} y did not hold element-wise:",
                    f"x ({x.name}) = ", x, f"y ({y.name}) = ", y]
        data = _with_message(message, data)
        from flowgraph.ops import math_reduce

        # the condition ops come first, as in TF: a static failure leaves them in the graph
        condition = math_reduce.reduce_all(op_fn(x, y))
        xs, ys = _static(x), _static(y)
        if xs is not None and ys is not None and not np.all(static_fn(xs, ys)):
            _fail_static(data)
        return Assert(condition, data, summarize=summarize)


def _math():
    from flowgraph.ops import math_ops

    return math_ops


def assert_equal(x, y, data=None, summarize=None, message=None, name=None) -> Operation:
    """Assert ``x == y`` element-wise (broadcasting). Returns the Assert op.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.assert_equal(tf.placeholder(tf.int32), 1).type
    'Assert'
    """
    from flowgraph.ops.control_flow_ops import no_op

    # TF opens (and closes) a scope of its own first, so the checks land in the next one
    # (`assert_equal_1/...`); the same tensor twice is a NoOp in that first scope
    with name_scope(name, "assert_equal", [x, y]):
        if x is y:
            return no_op()
    return _binary_assert("==", "assert_equal", _math().equal, np.equal, x, y, data,
                          summarize, message, name)


def assert_none_equal(x, y, data=None, summarize=None, message=None, name=None) -> Operation:
    """Assert ``x != y`` element-wise. Returns the Assert op."""
    return _binary_assert("!=", "assert_none_equal", _math().not_equal, np.not_equal, x, y,
                          data, summarize, message, name)


def assert_less(x, y, data=None, summarize=None, message=None, name=None) -> Operation:
    """Assert ``x < y`` element-wise. Returns the Assert op."""
    return _binary_assert("<", "assert_less", _math().less, np.less, x, y, data, summarize,
                          message, name)


def assert_less_equal(x, y, data=None, summarize=None, message=None, name=None) -> Operation:
    """Assert ``x <= y`` element-wise. Returns the Assert op."""
    return _binary_assert("<=", "assert_less_equal", _math().less_equal, np.less_equal, x, y,
                          data, summarize, message, name)


def assert_greater(x, y, data=None, summarize=None, message=None, name=None) -> Operation:
    """Assert ``x > y`` element-wise. Returns the Assert op."""
    return _binary_assert(">", "assert_greater", _math().greater, np.greater, x, y, data,
                          summarize, message, name)


def assert_greater_equal(x, y, data=None, summarize=None, message=None,
                         name=None) -> Operation:
    """Assert ``x >= y`` element-wise. Returns the Assert op."""
    return _binary_assert(">=", "assert_greater_equal", _math().greater_equal,
                          np.greater_equal, x, y, data, summarize, message, name)


def _sign_assert(opname: str, sym: str, zero_first: bool, binary, x, data, summarize, message,
                 name):
    with name_scope(name, opname, [x]):
        x = convert_to_tensor(x, name="x")
        if data is None:
            # as TF: the message (ending in ".  ", or "" when none is given) heads the
            # default data; a caller's own `data` is used as given
            data = [f"{message}.  " if message else "",
                    f"Condition x {sym} 0 did not hold element-wise:", f"x ({x.name}) = ", x]
        zero = convert_to_tensor(np.zeros((), x.dtype.base_dtype.as_numpy_dtype))  # "Const"
        if zero_first:
            return binary(zero, x, data=data, summarize=summarize)
        return binary(x, zero, data=data, summarize=summarize)


def assert_positive(x, data=None, summarize=None, message=None, name=None) -> Operation:
    """Assert ``x > 0`` element-wise. Returns the Assert op."""
    return _sign_assert("assert_positive", ">", True, assert_less, x, data, summarize,
                        message, name)


def assert_negative(x, data=None, summarize=None, message=None, name=None) -> Operation:
    """Assert ``x < 0`` element-wise. Returns the Assert op."""
    return _sign_assert("assert_negative", "<", False, assert_less, x, data, summarize,
                        message, name)


def assert_non_negative(x, data=None, summarize=None, message=None, name=None) -> Operation:
    """Assert ``x >= 0`` element-wise. Returns the Assert op."""
    return _sign_assert("assert_non_negative", ">=", True, assert_less_equal, x, data,
                        summarize, message, name)


def assert_non_positive(x, data=None, summarize=None, message=None, name=None) -> Operation:
    """Assert ``x <= 0`` element-wise. Returns the Assert op."""
    return _sign_assert("assert_non_positive", "<=", False, assert_less_equal, x, data,
                        summarize, message, name)


def _rank_assert(opname: str, ok, describe: str, x, rank, data, summarize, message, name):
    from flowgraph.ops import array_ops
    from flowgraph.ops.control_flow_ops import no_op

    with name_scope(name, opname, [x]):
        x = convert_to_tensor(x, name="x")
        rank_t = convert_to_tensor(rank, name="rank")
        if rank_t.shape.ndims not in (None, 0):
            raise ValueError(f"{opname}: rank must be a scalar, got shape {rank_t.shape}.")
        static_rank = _static(rank_t)
        if static_rank is not None and x.shape.ndims is not None:
            if not ok(x.shape.ndims, int(static_rank)):
                prefix = f"{message}.  " if message else ""
                raise ValueError(
                    f"{prefix}Tensor {x.name} must have rank {describe}{int(static_rank)}.  "
                    f"Received rank {x.shape.ndims}, shape {x.shape}")
            return no_op(name="static_checks_determined_all_ok")
        if data is None:
            data = [f"Tensor {x.name} must have rank {describe}".rstrip(), rank_t,
                    "Received shape: ", array_ops.shape(x)]
        data = _with_message(f"{message}.  " if message else None, data)  # TF's prefix
        m = _math()
        actual = array_ops.rank(x)
        cond = (m.equal if describe == "" else m.greater_equal)(
            actual, m.cast(rank_t, _dtypes.int32))
        return Assert(cond, data, summarize=summarize)


def assert_rank(x, rank, data=None, summarize=None, message=None, name=None) -> Operation:
    """Assert that `x` has rank `rank` (ValueError at once if the static rank differs)."""
    return _rank_assert("assert_rank", lambda a, b: a == b, "", x, rank, data, summarize,
                        message, name)


def assert_rank_at_least(x, rank, data=None, summarize=None, message=None,
                         name=None) -> Operation:
    """Assert that `x` has rank `rank` or more."""
    return _rank_assert("assert_rank_at_least", lambda a, b: a >= b, "at least ", x, rank,
                        data, summarize, message, name)


def assert_type(tensor, tf_type, message=None, name=None):
    """TypeError unless `tensor` has dtype `tf_type` (checked while building the graph)."""
    from flowgraph.ops.control_flow_ops import no_op

    t = convert_to_tensor(tensor)
    want = _dtypes.as_dtype(tf_type).base_dtype
    if t.dtype.base_dtype != want:
        prefix = f"{message}.  " if message else ""
        raise TypeError(f"{prefix}{t.name} must be of type {want!r}; got "
                        f"{t.dtype.base_dtype!r}")
    with name_scope(name, "assert_type", [t]):
        return no_op(name="statically_determined_correct_type")


def assert_integer(x, message=None, name=None):
    """TypeError unless `x` has an integer dtype (checked while building the graph)."""
    from flowgraph.ops.control_flow_ops import no_op

    t = convert_to_tensor(x)
    if not t.dtype.base_dtype.is_integer:
        prefix = f"{message}.  " if message else ""
        raise TypeError(f'{prefix}Expected "x" to be integer type.  Found: {t.name} of dtype '
                        f"{t.dtype.base_dtype}")
    with name_scope(name, "assert_integer", [t]):
        return no_op(name="statically_determined_was_integer")


def assert_scalar(tensor, name=None, message=None) -> Tensor:
    """`tensor`, after checking that its static shape is a scalar (ValueError if not)."""
    t = convert_to_tensor(tensor, name=name)
    if t.shape.ndims is not None and t.shape.ndims != 0:
        prefix = f"{message}.  " if message else ""
        raise ValueError(f"{prefix}Expected scalar shape for {t.name}, saw shape: {t.shape}.")
    return t


def is_numeric_tensor(tensor) -> bool:
    """Whether `tensor` is a Tensor of a numeric (integer, float or complex) dtype."""
    if not isinstance(tensor, Tensor):
        return False
    dt = tensor.dtype.base_dtype
    return bool(dt.is_integer or dt.is_floating or dt.is_complex)
