"""CPU kernels for ops with Python side effects: PyFunc, PyFuncStateless and EagerPyFunc
(ops/script_ops.py), Print and PrintV2 (ops/logging_ops.py)."""

from __future__ import annotations

import threading
import traceback

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors


def _argument(x):
    """What the user's function receives: a private writable copy; 0-d as a NumPy scalar."""
    if isinstance(x, np.ndarray):
        return x[()] if x.ndim == 0 else np.array(x, copy=True)
    return x


def _to_string_array(value) -> np.ndarray:
    arr = np.asarray(value)
    if arr.dtype == object:
        flat = [v.encode("utf-8") if isinstance(v, str) else v for v in arr.reshape(-1)]
    elif arr.dtype.kind in "US":
        flat = [v.encode("utf-8") if isinstance(v, str) else bytes(v)
                for v in arr.reshape(-1).tolist()]
    else:
        return arr
    out = np.empty(len(flat), dtype=object)
    out[:] = flat
    return out.reshape(arr.shape)


class PyFuncKernel:
    """Calls the op's Python function and checks its results against ``Tout``."""

    def __init__(self, ctx, *, token, Tout, is_async=False):
        from flowgraph.ops import script_ops

        self.op = ctx.op
        self.token = token
        self.dtypes = [_dtypes.as_dtype(d) for d in Tout]
        entry = script_ops.lookup(ctx.op.graph, token)
        if entry is None:
            raise errors.InvalidArgumentError(
                None, ctx.op,
                f"The Python function of op '{ctx.op.name}' ({token}) is not registered in "
                "this graph; tf.py_func ops can only run in the program that created them.")
        self.func = entry[0]

    def __call__(self, *inputs):
        try:
            result = self.func(*[_argument(x) for x in inputs])
        except Exception as e:
            raise self._error(e) from e
        values = list(result) if isinstance(result, list | tuple) else [result]
        if not self.dtypes and result is None:
            return None
        if len(values) != len(self.dtypes):
            raise errors.InvalidArgumentError(
                None, None,
                f"{self.token} returns {len(values)} values, but expects to see "
                f"{len(self.dtypes)} values (Tout={[d.name for d in self.dtypes]}). Return "
                "a list of one value per Tout dtype, or a single value for a single dtype.")
        out = [self._check(i, v, d) for i, (v, d) in enumerate(zip(values, self.dtypes))]
        if not out:
            return None
        return out[0] if len(out) == 1 else tuple(out)

    def _check(self, i: int, value, dtype) -> np.ndarray:
        if dtype == _dtypes.string:
            arr = _to_string_array(value)
        else:
            arr = np.asarray(value)
        want = np.dtype(dtype.as_numpy_dtype)
        hint = "object_" if want.kind == "O" else want.name
        if arr.dtype != want:
            got = _dtypes.as_dtype(arr.dtype).name if arr.dtype.kind not in "OUS" else "string"
            raise errors.InvalidArgumentError(
                None, None,
                f"{i}-th value returned by {self.token} is {got}, but expects {dtype.name}. "
                f"Return NumPy values of the declared dtype (e.g. "
                f"np.asarray(value, dtype=np.{hint})), "
                "or change Tout.")
        return arr

    def _error(self, e: Exception) -> errors.OpError:
        text = "".join(traceback.format_exception_only(type(e), e)).strip()
        tb = "".join(traceback.format_tb(e.__traceback__)[1:])
        message = f"{text}\nTraceback (most recent call last) in {self.token}:\n{tb}".rstrip()
        from flowgraph.ops.script_ops import op_error_class

        return op_error_class(e)(None, None, message)


cpu_kernel("PyFunc")(PyFuncKernel)
cpu_kernel("PyFuncStateless")(PyFuncKernel)
cpu_kernel("EagerPyFunc")(PyFuncKernel)


# -- printing (ops/logging_ops.py) ---------------------------------------------------------
class PrintKernel:
    """tf.Print: pass input 0 through; print the first `first_n` times (all if negative)."""

    def __init__(self, ctx, *, message, first_n, summarize):
        self.message, self.first_n, self.summarize = message, first_n, summarize
        self.count = 0
        self.lock = threading.Lock()

    def __call__(self, value, *data):
        from flowgraph.ops.logging_ops import summarize_v1, write_output

        with self.lock:
            if 0 <= self.first_n <= self.count:
                return value
            self.count += 1
        parts = "".join(f"[{summarize_v1(d, self.summarize)}]" for d in data)
        write_output("stderr", f"{self.message}{parts}\n")
        return value


@cpu_kernel("PrintV2")
def print_v2(*values, template, summarize, output_stream, end):
    from flowgraph.ops.logging_ops import summarize_v2, write_output

    pieces = [template[0]]
    for value, text in zip(values, template[1:]):
        pieces.append(summarize_v2(value, summarize))
        pieces.append(text)
    write_output(output_stream, "".join(pieces) + end)


cpu_kernel("Print")(PrintKernel)
