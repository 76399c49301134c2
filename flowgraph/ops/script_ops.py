"""Ops that call back into Python: `py_func` and `numpy_function`.

A ``PyFunc`` node holds only a token (``"pyfunc_3"``) and its output dtypes. The Python
callable lives in a registry owned by the graph that holds the node (a dict in the
graph's ``_py_func_registry`` attribute, token -> callable), so it is released with the
graph, even when the callable refers back to the graph's tensors, and is never part of
a graph def. A graph def that contains a ``PyFunc`` node therefore cannot be loaded: the
callable is not in the file (loading never runs code from a file) and
`import_graph_def` fails with an error naming the node.

At run time the CPU kernel (``backends/cpu/kernels_script.py``) looks the callable up,
calls it on NumPy values (arrays; 0-d tensors arrive as NumPy scalars, strings as
bytes) and checks what it returns against ``Tout`` exactly as TensorFlow does: the
number of values and each dtype must match (``np.float64`` for a ``tf.float32`` output
is an error, not a silent cast).

Example
-------
>>> import flowgraph as tf, numpy as np
>>> x = tf.constant([1.0, 2.0, 3.0])
>>> y = tf.py_func(lambda a: np.cumsum(a).astype(np.float32), [x], tf.float32)
>>> with tf.Session() as sess:
...     print(sess.run(y))
[1. 3. 6.]
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import graph_for
from flowgraph.framework.operation import Operation, OperatorNotAllowedInGraphError, Tensor
from flowgraph.framework.registry import OpCost, not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.op_util import make_op

# Python exception -> TensorFlow error, as TensorFlow maps them for py_func.
_ERRORS = (
    ((ValueError, TypeError), errors.InvalidArgumentError),
    ((StopIteration,), errors.OutOfRangeError),
    ((NotImplementedError,), errors.UnimplementedError),
    ((MemoryError,), errors.ResourceExhaustedError),
)


def op_error_class(exc: BaseException) -> type:
    """The TensorFlow error class that a Python exception of a py_func (or of a
    ``from_generator`` generator) becomes.

    Example
    -------
    >>> op_error_class(ValueError()).__name__, op_error_class(KeyError()).__name__
    ('InvalidArgumentError', 'UnknownError')
    """
    for kinds, mapped in _ERRORS:
        if isinstance(exc, kinds):
            return mapped
    return errors.UnknownError


__all__ = ["numpy_function", "py_func"]

# Each graph's registry is the dict {token: (callable, output dtypes)} in this attribute:
# owned by the graph, so a callable that refers back to the graph cannot keep it alive.
_REGISTRY_ATTR = "_py_func_registry"
_REGISTRY_LOCK = threading.Lock()
_TOKENS = itertools.count()
# The token `py_func` is creating on this thread: any other PyFunc node being created
# (import_graph_def, a copied graph def) has no callable and is refused.
_creating = threading.local()


def lookup(graph, token: str):
    """The (callable, dtypes) registered under `token` in `graph`, or None."""
    return getattr(graph, _REGISTRY_ATTR, {}).get(token)


def _register(graph, token: str, func: Callable, dtypes: list) -> None:
    with _REGISTRY_LOCK:
        registry = getattr(graph, _REGISTRY_ATTR, None)
        if registry is None:
            registry = {}
            setattr(graph, _REGISTRY_ATTR, registry)
        registry[token] = (func, dtypes)


def _out_dtypes(op) -> list:
    return [_dtypes.as_dtype(d) for d in op.attrs["Tout"]]


def _py_func_shape(op, *input_shapes):
    token = op.attrs["token"]
    if getattr(_creating, "token", None) != token or lookup(op.graph, token) is None:
        raise ValueError(
            f"Cannot create op '{op.name}' ({op.type}) from a graph def: it calls a Python "
            f"function (token {token!r}) that exists only in the program that built the "
            "graph. Graph defs, meta graphs and SavedModels never carry Python code, so a "
            "graph containing tf.py_func / tf.numpy_function cannot be loaded from a file. "
            "Rebuild that part of the graph with tf.py_func in your program instead."
        )
    return [TensorShape(None)] * len(op.attrs["Tout"])


for _name, _stateful in (("PyFunc", True), ("PyFuncStateless", False)):
    register_op(_name, attrs={"token": None, "Tout": []},
                num_outputs=lambda op: len(op.attrs["Tout"]), dtype_fn=_out_dtypes,
                stateful=_stateful, cost=OpCost.EXPENSIVE)(_py_func_shape)
# tf.py_function's op: the same call (its function is handed values with ``.numpy()``).
register_op("EagerPyFunc", attrs={"token": None, "Tout": [], "is_async": False},
            num_outputs=lambda op: len(op.attrs["Tout"]), dtype_fn=_out_dtypes,
            stateful=True, cost=OpCost.EXPENSIVE)(_py_func_shape)

not_differentiable("PyFunc", "PyFuncStateless", "EagerPyFunc")


def py_func(func: Callable, inp, Tout, stateful: bool = True, name: str | None = None):
    """Wrap the Python function `func` as an op of the graph.

    `func` is called with one NumPy value per tensor of `inp` (arrays; 0-d tensors as
    NumPy scalars; strings as ``bytes``) each time the op runs, and must return values of
    exactly the dtypes in `Tout` (``np.float32`` arrays for ``tf.float32``; a Python
    float is ``float64`` and is refused, as in TensorFlow). Outputs have unknown shapes;
    use ``Tensor.set_shape`` to declare them.

    Parameters
    ----------
    func : callable
        ``func(*arrays) -> array | list of arrays``.
    inp : list of Tensor
        The inputs.
    Tout : DType or list of DType
        A single dtype gives a single output Tensor; a list gives a list of Tensors
        (and an empty list gives the Operation itself).
    stateful : bool
        False lets the graph optimizer treat calls with equal inputs as equal
        (op type ``PyFuncStateless``); True (``PyFunc``) always runs the function.
    name : str, optional

    Returns
    -------
    Tensor, list of Tensor, or Operation

    Notes
    -----
    The function lives only in this process, in a registry of the graph: a graph def
    (or a checkpoint's meta graph) containing the op records no code and cannot be
    loaded elsewhere. The op has no gradient. Python exceptions become TensorFlow
    errors: ValueError/TypeError -> InvalidArgumentError, StopIteration ->
    OutOfRangeError, NotImplementedError -> UnimplementedError, MemoryError ->
    ResourceExhaustedError, anything else -> UnknownError.

    Example
    -------
    >>> import flowgraph as tf, numpy as np
    >>> x = tf.constant([3, 1, 2])
    >>> s, m = tf.py_func(lambda a: (np.sort(a), a.max()), [x], [tf.int32, tf.int32])
    >>> with tf.Session() as sess:
    ...     print(sess.run([s, m]))
    [array([1, 2, 3], dtype=int32), np.int32(3)]
    """
    return build_py_func(func, inp, Tout, "PyFunc" if stateful else "PyFuncStateless", name)


def build_py_func(func: Callable, inp, Tout, op_type: str, name: str | None = None):
    """The op of `op_type` (``PyFunc``, ``PyFuncStateless`` or ``EagerPyFunc``) calling
    `func` (see `py_func`)."""
    if not callable(func):  # ValueError, as TensorFlow's
        raise ValueError(f"tf.py_func: `func` must be callable, got {func!r} of type "
                         f"{type(func).__name__}")
    is_list = isinstance(Tout, list | tuple)
    try:
        dtypes = [_dtypes.as_dtype(d).base_dtype for d in (Tout if is_list else [Tout])]
    except TypeError as e:
        raise TypeError(f"tf.py_func: `Tout` must be a dtype or a list of dtypes: {e}") from None
    if isinstance(inp, Tensor):  # as in TensorFlow, `inp` is iterated: a list is expected
        raise OperatorNotAllowedInGraphError(
            f"tf.py_func: `inp` must be a list of tensors, got the Tensor {inp.name}; "
            "pass [x].")
    try:
        inp = list(inp)
    except TypeError:
        raise TypeError(f"tf.py_func: `inp` must be a list of tensors, got "
                        f"{type(inp).__name__} {inp!r:.60}") from None
    inputs = [convert_to_tensor(x) for x in inp]
    graph = graph_for(inputs)
    token = f"pyfunc_{next(_TOKENS)}"
    _register(graph, token, func, dtypes)
    _creating.token = token
    try:
        with graph.as_default():
            op: Operation = make_op(op_type, inputs, {"token": token, "Tout": dtypes},
                                    name=name or op_type)
    finally:
        _creating.token = None
    if not is_list:
        return op.outputs[0]
    return list(op.outputs) if dtypes else op


def numpy_function(func: Callable, inp, Tout, stateful: bool = True,
                   name: str | None = None):
    """`py_func` under its TensorFlow 2 name (same arguments and behaviour).

    Example
    -------
    >>> import flowgraph as tf, numpy as np
    >>> y = tf.numpy_function(lambda a: a * 2, [tf.constant([1, 2])], tf.int32)
    >>> with tf.Session() as sess:
    ...     print(sess.run(y))
    [2 4]
    """
    return py_func(func, inp, Tout, stateful=stateful, name=name or "PyFunc")
