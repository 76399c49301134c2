"""TF 1.x top-level helpers around graph building: `container`, `variable_creator_scope`,
`CriticalSection`, `function`, `nondifferentiable_batch_function`, `to_bfloat16` and
the kernel-library loaders (which explain that flowgraph cannot load TensorFlow C++
kernels).

Example
-------
>>> import flowgraph as tf
>>> def halve(next_creator, **kwargs):
...     kwargs["initial_value"] = 0.5 * tf.convert_to_tensor(kwargs["initial_value"])
...     return next_creator(**kwargs)
>>> with tf.Graph().as_default():
...     with tf.variable_creator_scope(halve):
...         v = tf.Variable(4.0)
...     with tf.Session() as sess:
...         sess.run(v.initializer)
...         print(sess.run(v))
2.0
"""

from __future__ import annotations

import contextlib
import functools
import os

from flowgraph.compat import autograph_convert
from flowgraph.compat.function_call import call_results
from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import get_default_graph
from flowgraph.framework.nest import flatten, pack_sequence_as
from flowgraph.framework.operation import Tensor
from flowgraph.ops.critical_section_ops import CriticalSection
from flowgraph.ops.math_ops import cast

__all__ = ["CriticalSection", "WrappedFunction", "container", "function",
           "load_file_system_library", "load_library", "load_op_library",
           "nondifferentiable_batch_function", "to_bfloat16", "variable_creator_scope",
           "wrap_function"]


def to_bfloat16(x, name: str = "ToBFloat16") -> Tensor:
    """`x` cast to bfloat16 (TF 1.x's deprecated spelling of ``tf.cast``).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.to_bfloat16(tf.constant([1.5])).dtype.name
    'bfloat16'
    """
    return cast(x, _dtypes.bfloat16, name=name)


# -- kernel libraries ----------------------------------------------------------------------
def _no_kernels(what: str, path) -> errors.NotFoundError:
    return errors.NotFoundError(
        None, None, f"{what}('{path}'): flowgraph cannot load TensorFlow C++ kernel or "
        "file-system libraries (it does not run TensorFlow's runtime). Write the op in "
        "Python instead: tf.py_func / tf.numpy_function for a host function, or register "
        "an op type with a NumPy kernel (ARCHITECTURE.md, 'Adding an op').")


def load_op_library(library_filename: str):
    """Raises `NotFoundError`: flowgraph cannot load TensorFlow op libraries (``.so``).

    Example
    -------
    >>> import flowgraph as tf
    >>> try:
    ...     tf.load_op_library("zero_out.so")
    ... except tf.errors.NotFoundError as e:
    ...     print("py_func" in str(e))
    True
    """
    raise _no_kernels("tf.load_op_library", library_filename)


def load_file_system_library(library_filename: str):
    """Raises `NotFoundError`: flowgraph cannot load TensorFlow file-system plugins.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.load_file_system_library("fs.so")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    flowgraph.framework.errors.NotFoundError: tf.load_file_system_library('fs.so'): ...
    """
    raise _no_kernels("tf.load_file_system_library", library_filename)


def load_library(library_location: str):
    """Raises `FileNotFoundError` for a missing path (as TensorFlow), else `NotFoundError`.

    Example
    -------
    >>> import flowgraph as tf
    >>> try:
    ...     tf.load_library("/no/such/lib.so")
    ... except FileNotFoundError:
    ...     print("missing")
    missing
    """
    if not os.path.exists(library_location):
        raise FileNotFoundError(
            2, "The file or folder to load kernel libraries from does not exist.",
            library_location)
    raise _no_kernels("tf.load_library", library_location)


# -- containers and creator scopes ---------------------------------------------------------
def container(container_name: str):
    """Context manager: stateful ops created inside keep their state in resource
    container `container_name` of the session's target.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     with tf.container("experiment"):
    ...         q = tf.FIFOQueue(2, tf.float32)
    ...     print(q.queue_ref.op.get_attr("container"))
    b'experiment'
    """
    return get_default_graph().container(container_name)


@contextlib.contextmanager
def variable_creator_scope(variable_creator):
    """Variables created inside go through ``variable_creator(next_creator, **kwargs)``,
    with the `tf.Variable` arguments as keywords (innermost scope first).

    Example
    -------
    >>> import flowgraph as tf
    >>> seen = []
    >>> def log(next_creator, **kwargs):
    ...     seen.append(kwargs["name"])
    ...     return next_creator(**kwargs)
    >>> with tf.Graph().as_default(), tf.variable_creator_scope(log):
    ...     _ = tf.Variable(1.0, name="w")
    >>> seen
    ['w']
    """
    graph = get_default_graph()
    stack = graph.__dict__.setdefault("_variable_creator_stack", [])
    stack.append(variable_creator)
    try:
        yield
    finally:
        stack.remove(variable_creator)


# -- functions -----------------------------------------------------------------------------
def function(func=None, input_signature=None, autograph: bool = True, **kwargs):
    """Graph-mode `tf.function`: calling the decorated function inside a graph builds
    its ops into that graph (no separate function library). With `autograph` (the
    default), its Python ``if``/``while``/``for`` on tensors become `tf.cond` /
    `tf.while_loop` (`flowgraph/compat/autograph_convert.py`). With `input_signature`,
    arguments are converted to its dtypes and checked against its shapes.

    Example
    -------
    >>> import flowgraph as tf
    >>> @tf.function
    ... def double(x):
    ...     return 2 * x
    >>> int(tf.Session().run(double(tf.constant(3))))
    6
    """
    if func is None:
        return lambda f: function(f, input_signature=input_signature, autograph=autograph)
    converted: list = []

    @functools.wraps(func)
    def wrapper(*args, **kw):
        if input_signature is not None:
            args = _conform(func.__name__, args, input_signature)
        if not converted:  # once, at the first call (as TensorFlow traces)
            converted.append(autograph_convert.convert(func) if autograph else func)
        return call_results(converted[0], args, kw)

    wrapper.python_function = func
    wrapper.input_signature = input_signature
    return wrapper


def _conform(fname: str, args, signature):
    if len(args) != len(signature):
        raise TypeError(f"{fname}: input_signature has {len(signature)} entries but the "
                        f"call passes {len(args)} positional arguments")
    out = []
    for i, (arg, spec) in enumerate(zip(args, signature)):
        t = convert_to_tensor(arg, dtype=spec.dtype)
        if not spec.shape.is_compatible_with(t.shape):
            raise TypeError(
                f"{fname}: argument {i} has shape {t.shape}, which is not compatible with "
                f"input_signature[{i}] = {spec}")
        out.append(t)
    return out


def nondifferentiable_batch_function(num_batch_threads, max_batch_size,
                                     batch_timeout_micros, allowed_batch_sizes=None,
                                     max_enqueued_batches: int = 10,
                                     autograph: bool = True,
                                     enable_large_batch_splitting: bool = True):
    """Decorator for a function on batched tensors. In flowgraph's graph mode the
    function runs on the batch each call gives it (no batching across concurrent runs);
    the batching parameters are accepted and ignored.

    Example
    -------
    >>> import flowgraph as tf
    >>> @tf.nondifferentiable_batch_function(1, 4, 1000)
    ... def plus_one(x):
    ...     return x + 1
    >>> tf.Session().run(plus_one(tf.constant([1, 2]))).tolist()
    [2, 3]
    """
    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args):
            tensors = [convert_to_tensor(a) for a in args]
            result = fn(*tensors)
            return _stop(result)
        return wrapper
    return decorate


def _stop(result):
    from flowgraph.ops.gradients import stop_gradient

    flat = flatten(result)
    out = [stop_gradient(t) if isinstance(t, Tensor) else t for t in flat]
    return pack_sequence_as(result, out)



# -- wrap_function ---------------------------------------------------------------------------
class WrappedFunction:
    """What `wrap_function` returns: `fn` traced once on placeholders of `signature` in a
    graph of its own (``graph``, ``inputs``, ``outputs``, ``structured_outputs``);
    calling it builds `fn`'s ops into the current graph on the given tensors (flowgraph
    has no function library: no ``PartitionedCall`` op)."""

    def __init__(self, fn, signature, name=None) -> None:
        from flowgraph.framework.graph import Graph
        from flowgraph.ops.array_ops import placeholder

        self._fn = fn
        self.name = name or getattr(fn, "__name__", "wrapped_function")
        self.structured_input_signature = (tuple(signature), {})
        self.graph = Graph()
        with self.graph.as_default():
            self.inputs = [placeholder(s.dtype, s.shape, name=s.name or f"tensor_{i}")
                           for i, s in enumerate(signature)]
            self.structured_outputs = fn(*self.inputs)
        self.outputs = [t for t in flatten(self.structured_outputs)
                        if hasattr(t, "op")]

    def __call__(self, *args):
        signature = self.structured_input_signature[0]
        return self._fn(*_conform(self.name, args, signature))

    def prune(self, feeds, fetches, name=None, input_signature=None):
        """A function from the tensors `feeds` (of this function's graph) to `fetches`,
        evaluated by importing that part of the graph into the caller's graph."""
        from flowgraph.framework.importer import import_graph_def

        feeds = list(feeds) if isinstance(feeds, list | tuple) else [feeds]
        single = not isinstance(fetches, list | tuple)
        fetch_list = [fetches] if single else list(fetches)
        graph_def = self.graph.as_graph_def()

        def pruned(*args):
            if len(args) != len(feeds):
                raise TypeError(f"{name or self.name}: expected {len(feeds)} arguments "
                                f"(one per feed), got {len(args)}")
            out = import_graph_def(
                graph_def, input_map={f.name: convert_to_tensor(a) for f, a in
                                      zip(feeds, args, strict=True)},
                return_elements=[t.name for t in fetch_list], name=name or "pruned")
            return out[0] if single else out

        return pruned

    def __repr__(self) -> str:
        return f"<WrappedFunction {self.name} inputs={len(self.inputs)}>"


def wrap_function(fn, signature, name=None) -> WrappedFunction:
    """Trace `fn` on placeholders of the `tf.TensorSpec` list `signature`.

    Example
    -------
    >>> import flowgraph as tf
    >>> double = tf.wrap_function(lambda x: x * 2.0, [tf.TensorSpec([2], tf.float32)])
    >>> double.outputs[0].shape.as_list()
    [2]
    >>> tf.Session().run(double(tf.constant([1.0, 2.0]))).tolist()
    [2.0, 4.0]
    """
    return WrappedFunction(fn, list(signature), name)
