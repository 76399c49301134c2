"""TensorFlow 1.x graph functions: ``function.Defun`` (``tensorflow.python.framework.
function``), as TF1 programs used it for custom gradients, shape functions and reused
subgraphs.

TensorFlow adds a ``FunctionDef`` to the graph's library and one call op per call (op
type: the function's name). flowgraph's executor runs plain ops only, so each call
builds the function's body inline, under a name scope named as TensorFlow names the call
(``MyFunc_<hash>/...``), and ends in an ``IdentityN`` with the call's own name
(``MyFunc_<hash>:0``, ``:1``...). What a program sees matches TensorFlow's call: inside
the body the arguments have unknown static shapes, the call's outputs have unknown
shapes unless ``shape_func`` sets them, values and gradients are the body's (or
``python_grad_func(op, *grads)`` / ``grad_func(*inputs, *grads)``'s, where ``op`` shows
the call's inputs and outputs). Differences: the call op's type is ``IdentityN`` (not
the function's name), the body's ops are in the graph, the graph def has no function
library, and the ``<hash>`` suffix is flowgraph's own (TensorFlow hashes the serialized
body), stable for a given function and signature.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.ops.defun import Defun
>>> @Defun(tf.float32, python_grad_func=lambda op, dy: dy * 0.5)
... def Double(x):
...     return x * 2.0
>>> x = tf.constant([1.0, 2.0])
>>> y = Double(x)
>>> y.op.name == Double.name, y.shape.rank
(True, None)
>>> tf.Session().run([y, tf.gradients(y, x)[0]])[1].tolist()
[0.5, 0.5]
"""

from __future__ import annotations

import base64
import hashlib
import inspect
import itertools

from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.dtypes import as_dtype
from flowgraph.framework.gradient_override import RegisterGradient
from flowgraph.framework.graph import Graph, get_default_graph
from flowgraph.framework.operation import Operation, Tensor
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.framework.tf_formats.meta_graph_messages import FunctionDefProto

__all__ = ["Defun", "get_extra_args", "get_extra_inputs", "get_extra_vars"]

# TensorFlow's short dtype names in the names of overloaded instances (``F_f32i32``)
_DTYPE_TO_STR = {"float16": "f16", "float32": "f32", "float64": "f64", "int32": "i32",
                 "uint8": "i8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
                 "int16": "i16", "int8": "i8", "string": "s", "complex64": "c64",
                 "complex128": "c128", "int64": "i64", "bool": "b", "qint8": "qi8",
                 "quint8": "qu8", "qint16": "qi16", "quint16": "qu16", "qint32": "qi32",
                 "bfloat16": "b16"}
# TensorFlow's DataTypeString, as its type errors spell dtypes
_TF_TYPE_NAMES = {"float32": "float", "float64": "double", "float16": "half"}
_grad_ids = itertools.count()


class Defun:
    """Decorator: the function becomes a graph function taking tensors of `input_types`.

    Keyword arguments: ``func_name`` (the function's name, no hash suffix),
    ``python_grad_func`` (``f(op, *output_grads)`` -> input gradients), ``grad_func``
    (a Defun taking the inputs, then the output gradients), ``out_names``,
    ``shape_func`` (``f(op)`` -> one static shape per output); others (``noinline``...)
    are accepted as TensorFlow's function attributes.

    >>> import flowgraph as tf
    >>> @Defun(tf.float32, tf.float32, func_name="AddMul")
    ... def f(x, y):
    ...     return x + y, x * y
    >>> s, p = f(tf.constant(2.0), tf.constant(3.0))
    >>> s.name, float(tf.Session().run(p))
    ('AddMul:0', 6.0)
    """

    def __init__(self, *input_types, **kwargs) -> None:
        self._input_types = input_types
        self._func_name = kwargs.pop("func_name", None)
        self._grad_func = kwargs.pop("grad_func", None)
        self._python_grad_func = kwargs.pop("python_grad_func", None)
        self._out_names = kwargs.pop("out_names", None)
        self._extra_kwargs = kwargs

    def __call__(self, func):
        if not callable(func):
            raise ValueError(f"Function {func} must be a callable.")
        spec = inspect.getfullargspec(func)
        if spec.varkw or spec.defaults:
            raise ValueError(
                f"Functions with argument defaults or keywords arguments are not "
                f"supported. {func} has defaults {spec.defaults} and keywords "
                f"{spec.varkw}.")
        argnames = list(spec.args)
        if inspect.ismethod(func):
            argnames = argnames[1:]
        min_args = len(argnames)
        max_args = 1000000 if spec.varargs else min_args
        common = dict(func_name=self._func_name, grad_func=self._grad_func,
                      python_grad_func=self._python_grad_func,
                      out_names=self._out_names, **self._extra_kwargs)
        if self._input_types:
            num = len(self._input_types)
            if num < min_args or num > max_args:
                raise ValueError(
                    f"The number of tf.function input types is not compatible with the "
                    f"allowed arguments of {func}. The tf.function have {num} input "
                    f"types, while the python function allows minimum {min_args} and "
                    f"maximum {max_args} arguments.")
            return _DefinedFunction(func, argnames, self._input_types, **common)
        if max_args == 0:
            return _DefinedFunction(func, [], [], **common)
        return _OverloadedFunction(func, argnames, **common)


class _CallOp:
    """The call op as a gradient or shape function sees it: ``inputs`` are the call's
    arguments and ``outputs`` its results; anything else is the underlying op's."""

    def __init__(self, op: Operation, inputs, outputs) -> None:
        self._op = op
        self.inputs = tuple(inputs)
        self.outputs = list(outputs)

    def __getattr__(self, name):
        return getattr(self._op, name)

    def __repr__(self) -> str:
        return f"<function call op {self._op.name!r}>"


class _DefinedFunction:
    """A `Defun` with declared input types; calling it builds the body on tensors."""

    def __init__(self, func, argnames, input_types, func_name=None, grad_func=None,
                 python_grad_func=None, out_names=None, shape_func=None, **kwargs) -> None:
        self._func = func
        self._input_types = [as_dtype(t) for t in input_types]
        self._func_name = func_name
        self._grad_func = grad_func
        self._python_grad_func = python_grad_func
        self._out_names = out_names
        self._shape_func = shape_func
        self._extra_kwargs = kwargs
        self._arg_names = [argnames[i] if i < len(argnames) else f"arg{i}"
                           for i in range(len(input_types))]
        self._gradient_name = None
        self._outputs = None  # (name, dtype) per output, from the first call

    @property
    def name(self) -> str:
        """The function's name: ``func_name``, else the Python name and a hash."""
        if self._func_name is None:
            base = _python_name(self._func)
            if self._grad_func is not None:
                base += "_" + self._grad_func.name
            self._func_name = f"{base}_{self._hash()}"
        return self._func_name

    def _hash(self) -> str:
        code = getattr(self._func, "__code__", None)
        h = hashlib.sha1()
        for part in (getattr(self._func, "__qualname__", ""), *self._arg_names,
                     *(t.name for t in self._input_types), *(self._out_names or ())):
            h.update(part.encode() + b"\0")
        if code is not None:
            h.update(code.co_code)
            h.update(repr(code.co_names).encode())
        encoded = base64.urlsafe_b64encode(h.digest()[:8]).decode().rstrip("=")
        return encoded.replace("-", "a").replace("_", "A")

    @property
    def declared_input_types(self):
        return tuple(self._input_types)

    @property
    def captured_inputs(self) -> list:
        return []

    @property
    def stateful_ops(self) -> list:
        return []

    @property
    def python_grad_func(self):
        return self._python_grad_func

    @property
    def grad_func_name(self):
        return self._grad_func.name if self._grad_func is not None else None

    def set_grad_func(self, grad_func) -> None:
        if self._grad_func is not None:
            raise ValueError(f"function {self.name} already has a gradient function")
        self._grad_func = grad_func

    def add_to_graph(self, g) -> None:
        """TensorFlow adds the FunctionDef to `g`'s library; flowgraph inlines calls."""

    @property
    def definition(self) -> FunctionDefProto:
        """A ``FunctionDef`` with this function's signature (no body: calls are inlined)."""
        if self._outputs is None:
            self._outputs = self._trace()
        fdef = FunctionDefProto()
        fdef.signature.name = self.name
        for name, dtype in zip(self._arg_names, self._input_types):
            arg = fdef.signature.input_arg.add()
            arg.name, arg.type = name, dtype.as_datatype_enum
        for name, dtype in self._outputs:
            arg = fdef.signature.output_arg.add()
            arg.name, arg.type = name, dtype.as_datatype_enum
        if self._func.__doc__:
            fdef.signature.description = self._func.__doc__
        return fdef

    cached_definition = definition

    def _trace(self) -> list:
        from flowgraph.ops.array_ops import placeholder

        with Graph().as_default():
            args = [placeholder(t, name=n) for n, t in zip(self._arg_names,
                                                             self._input_types)]
            flat = _flat_outputs(self._func(*args), self.name)
        return self._output_signature(flat, "")

    def _output_signature(self, flat, scope: str) -> list:
        names = list(self._out_names or [])
        if not names:
            for t in flat:
                op_name = t.op.name[len(scope):] if t.op.name.startswith(scope) else t.op.name
                names.append(op_name.replace("/", "_") if t.value_index == 0
                             else f"{op_name.replace('/', '_')}_{t.value_index}")
        if len(names) != len(flat):
            raise ValueError(f"Defun {self.name}: out_names has {len(names)} names for "
                             f"{len(flat)} outputs")
        return [(n, t.dtype.base_dtype) for n, t in zip(names, flat)]

    def __call__(self, *args, **kwargs):
        from flowgraph.ops.array_identity_ops import identity

        if len(args) != len(self._input_types):
            raise ValueError(f"Expected {len(self._input_types)} arguments, got "
                             f"{len(args)}.")
        graph = get_default_graph()
        call_name = kwargs.pop("name", None) or self.name
        tensors = [convert_to_tensor(a) for a in args]
        for arg, t, want in zip(self._arg_names, tensors, self._input_types):
            if t.dtype.base_dtype != want:
                raise ValueError(
                    f"Input '{arg}' passed {_tf_type(t.dtype)} expected {_tf_type(want)} "
                    f"while building NodeDef '{call_name}' (a call of the function "
                    f"{self.name})")
        first_new = len(graph.get_operations())
        with graph.name_scope(call_name) as scope:
            # inside a TensorFlow function the arguments' static shapes are unknown
            body_args = []
            for arg, t in zip(self._arg_names, tensors):
                with graph.gradient_override_map({"Identity": _ARGUMENT_GRADIENT}):
                    inner = identity(t, name=arg)
                inner._shape = TensorShape(None)
                body_args.append(inner)
            result = self._func(*body_args)
            if result is None:
                return self._no_outputs(graph, first_new, scope)
            flat = _flat_outputs(result, self.name)
            if self._outputs is None:
                self._outputs = self._output_signature(flat, scope)
            op = self._call_op(graph, flat, tensors, scope)
        outputs = op.outputs[:len(flat)]
        view = _CallOp(op, tensors, outputs)
        if self._shape_func is not None:
            shapes = self._shape_func(view)
            if len(shapes) != len(outputs):
                raise ValueError(f"shape_func {self._shape_func} produced {len(shapes):d} "
                                 f"shapes, which does not match {len(outputs)} outputs.")
            for t, shape in zip(outputs, shapes):
                t.set_shape(shape)
        if len(outputs) == 1:
            return outputs[0]
        return tuple(outputs)

    def _call_op(self, graph, flat, tensors, scope) -> Operation:
        from flowgraph.ops.op_util import make_op

        if self._python_grad_func is None and self._grad_func is None:
            op = make_op("IdentityN", flat, name=scope)
        else:
            # the call's inputs pass through the IdentityN too, so that backpropagation
            # reaches them only through the function's own gradient
            with graph.gradient_override_map({"IdentityN": self._register_gradient()}):
                op = make_op("IdentityN", flat + tensors, name=scope)
        for t in op.outputs:
            t._shape = TensorShape(None)  # TensorFlow skips shape inference of calls
        return op

    def _no_outputs(self, graph, first_new: int, scope: str):
        from flowgraph.framework.graph import GraphKeys
        from flowgraph.ops.control_flow_ops import no_op

        # variables made in the body belong to the outer graph: running the call must
        # not run their initializers again
        inits = {id(v.initializer) for key in (GraphKeys.GLOBAL_VARIABLES,
                                               GraphKeys.LOCAL_VARIABLES)
                 for v in graph.get_collection(key) if hasattr(v, "initializer")}
        body = [op for op in graph.get_operations()[first_new:] if id(op) not in inits]
        with graph.control_dependencies(body):
            return no_op(name=scope)

    def _register_gradient(self) -> str:
        if self._gradient_name is not None:
            return self._gradient_name
        name = f"Defun-{self.name}-{next(_grad_ids)}"

        @RegisterGradient(name)
        def _grad(op, *grads):
            from flowgraph.ops.array_shape_ops import zeros_like

            n = len(op.outputs) - len(self._input_types)
            outputs, inputs = op.outputs[:n], op.inputs[n:]
            out_grads = [zeros_like(t) if g is None and t.dtype.is_floating else g
                         for t, g in zip(outputs, grads[:n])]
            if self._python_grad_func is not None:
                in_grads = self._python_grad_func(_CallOp(op, inputs, outputs), *out_grads)
            else:
                in_grads = self._grad_func(*inputs, *out_grads)
            if isinstance(in_grads, Tensor) or in_grads is None:
                in_grads = [in_grads]
            in_grads = list(in_grads)
            if len(in_grads) != len(inputs):
                raise ValueError(f"The gradient function of {self.name} returned "
                                 f"{len(in_grads)} gradients; the function has "
                                 f"{len(inputs)} inputs")
            for t, g in zip(inputs, in_grads):
                _set_input_shape(g, t)
            return [None] * n + in_grads

        self._gradient_name = name
        return name


class _OverloadedFunction:
    """A `Defun` without input types: one `_DefinedFunction` per list of argument
    dtypes, made at the first call with them."""

    def __init__(self, func, argnames, func_name=None, grad_func=None,
                 python_grad_func=None, out_names=None, **kwargs) -> None:
        self._func = func
        self._argnames = argnames
        self._func_name = func_name
        self._grad_func = grad_func
        self._python_grad_func = python_grad_func
        self._out_names = out_names
        self._extra_kwargs = kwargs
        self._overload: dict[str, _DefinedFunction] = {}

    def instantiate(self, input_types) -> _DefinedFunction:
        types = [as_dtype(t) for t in input_types]
        unsupported = [t for t in types if t.name not in _DTYPE_TO_STR]
        if unsupported:
            raise ValueError(f"Unsupported dtypes {unsupported} in `types`.")
        key = "".join(_DTYPE_TO_STR[t.name] for t in types)
        defined = self._overload.get(key)
        if defined is None:
            name = f"{self._func_name}_{key}" if self._func_name is not None else None
            defined = _DefinedFunction(self._func, self._argnames, types, name, None,
                                       self._python_grad_func, self._out_names,
                                       **self._extra_kwargs)
            if self._grad_func is not None:
                defined._grad_func = self._grad_func
            self._overload[key] = defined
        return defined

    def __call__(self, *args, **kwargs):
        tensors = []
        for x in args:
            t = convert_to_tensor(x)
            if not isinstance(t, Tensor):
                raise ValueError(f"Expected a Tensor but got {x} with type {type(x)}.")
            tensors.append(t)
        return self.instantiate([t.dtype.base_dtype for t in tensors])(*tensors, **kwargs)


_ARGUMENT_GRADIENT = "DefunArgument"


@RegisterGradient(_ARGUMENT_GRADIENT)
def _argument_grad(op, grad):
    # an argument's gradient has the argument's static shape, as TensorFlow's
    # gradients of a call op have
    _set_input_shape(grad, op.inputs[0])
    return grad


def _set_input_shape(grad, tensor) -> None:
    if isinstance(grad, Tensor) and grad.shape.is_compatible_with(tensor.shape):
        grad.set_shape(tensor.shape)


def _flat_outputs(result, fname: str) -> list:
    items = list(result) if isinstance(result, list | tuple) else [result]
    out = []
    for i, item in enumerate(items):
        try:
            out.append(convert_to_tensor(item))
        except (TypeError, ValueError) as e:
            raise TypeError(f"Function {fname} returned {type(item).__name__} {item!r} as "
                            f"output {i}; a Defun must return tensors (or values that "
                            f"convert to tensors): {e}") from e
    return out


def _python_name(func) -> str:
    """The base of a function's name as TensorFlow takes it: ``Class.method`` for a
    bound method, the type of a callable object."""
    if inspect.isfunction(func):
        return func.__name__
    if inspect.ismethod(func):
        return f"{type(func.__self__).__name__}.{func.__func__.__name__}"
    return str(type(func))


def _tf_type(dtype) -> str:
    name = dtype.base_dtype.name
    return _TF_TYPE_NAMES.get(name, name)


def get_extra_vars() -> list:
    """Variables a function body being built reads from outside (none: flowgraph builds
    bodies inline in the graph itself).

    >>> get_extra_vars()
    []
    """
    return []


def get_extra_inputs() -> list:
    """Outer tensors a function body being built captures (none: bodies are inline).

    >>> get_extra_inputs()
    []
    """
    return []


def get_extra_args() -> list:
    """Placeholders of the captured tensors of a function body (none: bodies are inline).

    >>> get_extra_args()
    []
    """
    return []
