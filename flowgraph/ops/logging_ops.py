"""Printing from inside a graph: `tf.Print` (an identity op that prints) and `tf.print`
(an op with no outputs that prints when run).

Both print when the op runs, not when it is built, and format tensors the way
TensorFlow does, so logs read the same:

* ``tf.Print`` writes ``message`` then each tensor of `data` in brackets, the first
  `summarize` elements in row-major order and ``...`` for the rest, to standard error:
  ``x: [1 2.5 3...][[1 2 3...]...]``.
* ``tf.print`` writes its arguments separated by `sep`, tensors laid out like NumPy with
  `summarize` elements kept at both ends of every dimension (``[0 1 2 ... 7 8 9]``),
  Python structures through `pprint`, to `output_stream`.

Floats use the shortest of ``%.6g``/``%.9g`` (float32) or ``%.15g``/``%.17g``
(float64) that reads back exactly; booleans print as 1 and 0.

Example
-------
>>> import flowgraph as tf, sys
>>> x = tf.constant([1.0, 2.5, 3.0, 4.0])
>>> p = tf.print("x =", x, output_stream=sys.stdout)
>>> with tf.Session() as sess:
...     sess.run(p)
x = [1 2.5 3 4]
"""

from __future__ import annotations

import logging as _logging
import pprint
import sys

import numpy as np

from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import get_default_graph
from flowgraph.framework.operation import Operation, Tensor
from flowgraph.framework.registry import not_differentiable, register_gradient, register_op
from flowgraph.framework.sparse_tensor import SparseTensor
from flowgraph.ops.op_util import make_op

__all__ = ["Print", "print"]


# -- op registrations --------------------------------------------------------------------
@register_op("Print", attrs={"message": "", "first_n": -1, "summarize": 3}, stateful=True)
def _print_shape(op, input_shape, *data_shapes):
    return [input_shape]


@register_gradient("Print")
def _print_grad(op, grad):
    # Print passes its first input through; the printed data gets no gradient.
    return [grad] + [None] * (len(op.inputs) - 1)


@register_op("PrintV2", attrs={"template": [""], "summarize": 3, "output_stream": "stderr",
                               "end": "\n"},
             num_outputs=0, dtype_fn=lambda op: [], stateful=True)
def _print_v2_shape(op, *input_shapes):
    if len(op.attrs["template"]) != len(op.inputs) + 1:
        raise op.shape_error(
            f"the template has {len(op.attrs['template']) - 1} tensor slots but the op has "
            f"{len(op.inputs)} inputs")
    return []


not_differentiable("PrintV2")


# -- formatting (shared with the CPU kernels) ------------------------------------------------
def _escape(raw: bytes) -> str:
    out = []
    for ch in raw.decode("utf-8", "surrogateescape"):
        code = ord(ch)
        if ch in "\n\r\t\"'\\":
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t", '"': '\\"', "'": "\\'",
                        "\\": "\\\\"}[ch])
        elif code < 0x20 or code == 0x7F or 0xDC80 <= code <= 0xDCFF:
            out.append(f"\\{(code & 0xFF):03o}")
        else:
            out.append(ch)
    return "".join(out)


def format_element(value, quote_strings: bool = False) -> str:
    """One element as TensorFlow prints it."""
    if isinstance(value, bytes | str):
        text = _escape(value if isinstance(value, bytes) else value.encode("utf-8"))
        return f'"{text}"' if quote_strings else text
    if isinstance(value, bool | np.bool_):
        return "1" if value else "0"
    if isinstance(value, np.floating):
        if isinstance(value, np.float64):
            short, full, kind = 15, 17, np.float64
        else:
            short, full, kind = 6, 9, np.float32
        text = f"{float(value):.{short}g}"
        if np.isfinite(value) and kind(float(text)) != kind(value):
            text = f"{float(value):.{full}g}"
        return text
    if isinstance(value, np.complexfloating):
        part = np.float64 if value.dtype == np.complex128 else np.float32
        return f"({format_element(part(value.real))},{format_element(part(value.imag))})"
    if isinstance(value, np.integer):
        return str(int(value))
    return str(value)


def _unprintable(arr, limit: int) -> str:
    """TensorFlow's rendering of a tensor whose elements it cannot print (complex):
    a flat run of "?" for the first `limit` elements, "..." when some are left."""
    limit = arr.size if limit < 0 else min(limit, arr.size)
    return " ".join(["?"] * limit) + ("..." if arr.size > limit else "")


def summarize_v1(value, summarize: int) -> str:
    """`tf.Print`'s rendering of one tensor (without the surrounding brackets)."""
    arr = np.asarray(value)
    if arr.dtype.kind == "c":
        return _unprintable(arr, summarize)
    flat = arr.reshape(-1)
    limit = flat.size if summarize < 0 else min(summarize, flat.size)
    if arr.ndim == 0:
        return " ".join(format_element(flat[i]) for i in range(limit))
    out: list[str] = []
    index = [0]

    def one_dim(dim: int) -> None:
        if index[0] >= limit:
            return
        count = arr.shape[dim]
        if dim == arr.ndim - 1:
            for i in range(count):
                if index[0] >= limit:
                    if dim != 0:
                        out.append("...")
                    return
                if i > 0:
                    out.append(" ")
                out.append(format_element(flat[index[0]]))
                index[0] += 1
            return
        for _ in range(count):
            opened = index[0] < limit
            if opened:
                out.append("[")
            one_dim(dim + 1)
            if index[0] < limit or opened:
                out.append("]")

    one_dim(0)
    if flat.size > limit:
        out.append("...")
    return "".join(out)


def summarize_v2(value, summarize: int) -> str:
    """`tf.print`'s rendering of one tensor: `summarize` entries at both ends per axis."""
    arr = np.asarray(value)
    if arr.dtype.kind == "c":
        text = _unprintable(arr, summarize)
        return text if arr.ndim == 0 else f"[{text}]"
    if arr.ndim == 0:
        return format_element(arr[()], quote_strings=True)
    ends = max(arr.shape) if summarize < 0 else summarize
    out: list[str] = []

    def spacing(dim: int) -> None:
        if dim == arr.ndim - 1:
            out.append(" ")
        else:
            out.append("\n" * (arr.ndim - dim - 1) + " " * (dim + 1))

    def one_dim(dim: int, index: tuple) -> None:
        if dim == arr.ndim:
            out.append(format_element(arr[index], quote_strings=True))
            return
        out.append("[")
        count = arr.shape[dim]
        start_of_end = max(ends, count - ends)
        for i in range(min(ends, count)):
            if i > 0:
                spacing(dim)
            one_dim(dim + 1, (*index, i))
        if count > 2 * ends:
            spacing(dim)
            out.append("...")
        for i in range(start_of_end, count):
            spacing(dim)
            one_dim(dim + 1, (*index, i))
        out.append("]")

    one_dim(0, ())
    return "".join(out)


# -- user-facing functions -------------------------------------------------------------------
def _as_tensor(x) -> Tensor:
    if isinstance(x, Operation):
        raise TypeError(f"Cannot print Operation '{x.name}': pass a Tensor (op.outputs[0]).")
    return convert_to_tensor(x)


def Print(input_, data, message: str | None = None, first_n: int | None = None,
          summarize: int | None = None, name: str | None = None) -> Tensor:
    """Identity on `input_` that prints `message` and the tensors `data` when it runs.

    Output goes to standard error, one line per run: ``message`` followed by each
    tensor of `data` in brackets, showing its first `summarize` elements (default 3;
    negative shows all) in row-major order. Only the first `first_n` runs print
    (default: all). Use the returned tensor in place of `input_`, or nothing prints.
    `tf.print` is the newer form.

    Parameters
    ----------
    input_ : Tensor
        Passed through unchanged (gradients too).
    data : list of Tensor
        What to print.
    message : str, optional
    first_n : int, optional
    summarize : int, optional
    name : str, optional

    Returns
    -------
    Tensor
        Same value, shape and dtype as `input_`.

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.constant([1, 2, 3, 4])
    >>> y = tf.Print(x, [x, tf.reduce_sum(x)], "x, sum: ")   # prints x, sum: [1 2 3...][10]
    >>> y.shape.as_list()
    [4]
    """
    input_ = convert_to_tensor(input_)
    if not isinstance(data, list | tuple):
        raise TypeError(f"Expected list for 'data' argument to 'Print' Op, not {data!r:.80}. "
                        "Pass the tensors to print as a list, e.g. [x].")
    tensors = [_as_tensor(d) for d in data]
    attrs = {"message": "" if message is None else str(message),
             "first_n": -1 if first_n is None else int(first_n),
             "summarize": 3 if summarize is None else int(summarize)}
    return make_op("Print", [input_, *tensors], attrs, name=name or "Print").outputs[0]


_STREAMS = {"info": "log(info)", "warning": "log(warning)", "warn": "log(warning)",
            "error": "log(error)"}


def _stream_name(stream) -> str:
    if stream is sys.stderr or stream is sys.__stderr__:
        return "stderr"
    if stream is sys.stdout or stream is sys.__stdout__:
        return "stdout"
    if isinstance(stream, str) and stream.startswith("file://") and len(stream) > 7:
        return stream
    fn_name = getattr(stream, "__name__", "")
    module = getattr(stream, "__module__", "")
    if module in ("flowgraph.logging_compat", "logging") and fn_name in _STREAMS:
        return _STREAMS[fn_name]
    raise ValueError(
        f"tf.print: unsupported output_stream {stream!r}. Use sys.stderr, sys.stdout, "
        "tf.logging.info/warning/error, or a 'file://<path>' string.")


def _template_for(value, placeholder: str, tensors: list) -> str:
    if isinstance(value, str):
        return value

    def replace(x):
        if isinstance(x, SparseTensor):
            # Printed as one string holding its three parts, quotes included.
            tensors.extend((x.indices, x.values, x.dense_shape))
            return (f"SparseTensor(indices={placeholder}, values={placeholder}, "
                    f"shape={placeholder})")
        if isinstance(x, Tensor) or (hasattr(x, "_as_graph_element")
                                     and not isinstance(x, Operation)):
            tensors.append(convert_to_tensor(x))
            return placeholder
        if isinstance(x, dict):
            return type(x)((k, replace(x[k])) for k in sorted(x, key=_sort_key))
        if isinstance(x, tuple) and hasattr(x, "_fields"):
            return type(x)(*[replace(v) for v in x])
        if isinstance(x, list | tuple):
            return type(x)(replace(v) for v in x)
        if isinstance(x, Operation):
            raise TypeError(f"tf.print cannot print Operation '{x.name}'; pass a Tensor.")
        return x

    return pprint.pformat(replace(value)).replace(f"'{placeholder}'", placeholder)


def _unused_placeholder(inputs) -> str:
    # The slot marker's length decides where pprint breaks lines, so it stays as short
    # as TF's: "{}", one more digit for each time the printed values already hold it.
    text = " ".join(str(x) for x in inputs)
    placeholder = "{}"
    digit = 0
    while placeholder in text:
        placeholder += str(digit % 10)
        digit += 7
    return placeholder


def _sort_key(k):
    return (type(k).__name__, k) if not isinstance(k, str) else ("", k)


def print(*inputs, **kwargs) -> Operation:
    """An op that prints `inputs` (tensors, Python values, nested lists/dicts) when run.

    Strings print as they are, tensors like NumPy arrays with `summarize` entries kept
    at both ends of each dimension (default 3; -1 prints everything), other values and
    structures through `pprint` with their tensors filled in.

    Parameters
    ----------
    *inputs
        What to print, separated by `sep`.
    output_stream : sys.stderr (default), sys.stdout, tf.logging.info/warning/error, or
        a ``"file://<path>"`` string (appended to).
    summarize : int, default 3
    sep : str, default " "
    end : str, default "\\n"
    name : str, optional

    Returns
    -------
    Operation
        Run it (``sess.run(op)``) or make other ops depend on it
        (``tf.control_dependencies([op])``); building it prints nothing.

    Example
    -------
    >>> import flowgraph as tf, sys
    >>> x = tf.range(10)
    >>> p = tf.print("x:", x, {"sum": tf.reduce_sum(x)}, output_stream=sys.stdout)
    >>> with tf.Session() as sess:
    ...     sess.run(p)
    x: [0 1 2 ... 7 8 9] {'sum': 45}
    """
    allowed = {"output_stream", "summarize", "sep", "end", "name"}
    unknown = sorted(set(kwargs) - allowed)
    if unknown:
        raise ValueError(
            f"tf.print got unexpected keyword arguments {unknown}; it accepts "
            f"{sorted(allowed)}.")
    stream = _stream_name(kwargs.get("output_stream", sys.stderr))
    summarize = kwargs.get("summarize", 3)
    sep, end = kwargs.get("sep", " "), kwargs.get("end", "\n")
    if not isinstance(sep, str) or not isinstance(end, str):
        raise TypeError("tf.print: `sep` and `end` must be strings")
    placeholder = _unused_placeholder(inputs)
    tensors: list[Tensor] = []
    template = sep.join(_template_for(x, placeholder, tensors) for x in inputs)
    segments = template.split(placeholder)
    attrs = {"template": segments, "summarize": 3 if summarize is None else int(summarize),
             "output_stream": stream, "end": end}
    graph = tensors[0].graph if tensors else get_default_graph()
    with graph.as_default():
        return make_op("PrintV2", tensors, attrs, name=kwargs.get("name") or "PrintV2")


def write_output(stream: str, text: str) -> None:
    """Write `text` to the stream named by a PrintV2 op (resolved at run time)."""
    if stream == "stderr":
        sys.stderr.write(text)
        sys.stderr.flush()
    elif stream == "stdout":
        sys.stdout.write(text)
        sys.stdout.flush()
    elif stream.startswith("file://"):
        with open(stream[len("file://"):], "a", encoding="utf-8") as f:
            f.write(text)
    else:
        level = {"log(info)": _logging.INFO, "log(warning)": _logging.WARNING,
                 "log(error)": _logging.ERROR}[stream]
        try:
            from flowgraph import logging_compat

            logging_compat.log(level, "%s", text.rstrip("\n"))
        except ImportError:  # pragma: no cover
            _logging.getLogger("tensorflow").log(level, "%s", text.rstrip("\n"))
