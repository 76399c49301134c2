"""Check `tf.gradients` against float64 central finite differences (a test helper).

`check_gradient(build, inputs)` builds ``ys = build(*placeholders)`` in a fresh graph, picks
a random upstream gradient ``w`` for each y and compares, for every floating or complex
input x, the analytic vector-Jacobian product ``tf.gradients(ys, x, grad_ys=w)`` with
central differences of ``L(x) = sum(Re(conj(w) * y))``:

- inputs of at most `max_full` elements: every partial derivative (for complex inputs,
  the real and the imaginary part separately, so that the result is compared with
  TensorFlow's convention ``dL/da + i dL/db``);
- larger inputs: the derivative along `directions` random directions ``v``, compared with
  ``Re(sum(conj(g) * v))``.

The finite differences always run in float64 (complex128). The analytic gradient runs in
`dtype` (default: float64), with a tolerance per dtype. A None gradient counts as zero.

Example
-------
>>> import flowgraph as tf
>>> import numpy as np
>>> check_gradient(lambda x: tf.tanh(x) * x, [np.array([0.5, -1.0, 2.0])])  # doctest: +SKIP
"""

from __future__ import annotations

import warnings

import numpy as np

import flowgraph as tf
from flowgraph.framework.indexed_slices import IndexedSlices
from flowgraph.ops import array_grad, gradients, math_grad, nn_grad  # noqa: F401

TOLERANCE = {  # dtype name -> (rtol, atol) relative to the gradient's largest magnitude
    "float64": (1e-5, 1e-6),
    "complex128": (1e-5, 1e-6),
    "float32": (3e-3, 3e-3),
    "complex64": (3e-3, 3e-3),
    "float16": (5e-2, 5e-2),
}


def _as_list(ys):
    return list(ys) if isinstance(ys, list | tuple) else [ys]


def _differentiable(a: np.ndarray) -> bool:
    return a.dtype.kind in "fc"


def _cast(a: np.ndarray, dtype) -> np.ndarray:
    if not _differentiable(a):
        return a
    if a.dtype.kind == "c":
        return a.astype(np.complex64 if dtype == np.float32 else np.complex128)
    return a.astype(dtype)


def _placeholder_shape(a: np.ndarray, shapes: str):
    """The static shape given to the placeholder of input `a`: its own shape ("static"),
    unknown dimensions ("dims"), or unknown rank ("rank") for differentiable inputs."""
    if shapes == "static" or not _differentiable(a):
        return a.shape
    if shapes == "dims":
        return [None] * a.ndim
    if shapes == "rank":
        return None
    raise ValueError(f"shapes must be 'static', 'dims' or 'rank', got {shapes!r}")


def _dense(sess, g, feed):
    if g is None:
        return None
    if isinstance(g, IndexedSlices):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # unknown dense shape: fine here
            g = tf.convert_to_tensor(g)
    return sess.run(g, feed)


class _Graph:
    """``ys = build(*placeholders)`` in its own graph, with its upstream weights."""

    def __init__(self, build, inputs, weights_seed, shapes="static"):
        self.graph = tf.Graph()
        with self.graph.as_default():
            self.phs = [tf.placeholder(tf.as_dtype(a.dtype), _placeholder_shape(a, shapes),
                                       name=f"x{i}") for i, a in enumerate(inputs)]
            self.ys = [tf.convert_to_tensor(y) for y in _as_list(build(*self.phs))]
            rng = np.random.RandomState(weights_seed)
            self.weights = []
        self.sess = tf.Session(graph=self.graph)
        out_shapes = [np.shape(v) for v in self.sess.run(self.ys, self.feed(inputs))]
        with self.graph.as_default():
            for y, shape in zip(self.ys, out_shapes):
                w = rng.normal(size=shape)
                if y.dtype.is_complex:
                    w = w + 1j * rng.normal(size=shape)
                self.weights.append(w.astype(y.dtype.as_numpy_dtype))

    def feed(self, values):
        return dict(zip(self.phs, values))

    def loss(self, values) -> float:
        outs = self.sess.run(self.ys, self.feed(values))
        return float(sum(np.sum(np.real(np.conj(w) * np.asarray(y, np.complex128)))
                         for w, y in zip(self.weights, outs)))

    def analytic(self, values, which):
        with self.graph.as_default():
            grad_ys = [tf.constant(w) for w in self.weights]
            gs = gradients.gradients(self.ys, [self.phs[i] for i in which], grad_ys=grad_ys)
        feed = self.feed(values)
        out = []
        for i, g in zip(which, gs):
            v = _dense(self.sess, g, feed)
            out.append(np.zeros(values[i].shape, values[i].dtype) if v is None else v)
        return out


def numeric_partials(graph: _Graph, values, i, delta):
    """Every partial derivative of the loss with respect to input i (dL/da + i dL/db)."""
    x = values[i]
    out = np.zeros(x.shape, np.complex128 if x.dtype.kind == "c" else np.float64)
    parts = (1.0, 1j) if x.dtype.kind == "c" else (1.0,)
    for k in range(x.size):
        for unit in parts:
            vals = list(values)
            step = np.zeros(x.size, x.dtype)
            step[k] = unit * delta
            vals[i] = x + step.reshape(x.shape)
            up = graph.loss(vals)
            vals[i] = x - step.reshape(x.shape)
            down = graph.loss(vals)
            out.flat[k] += unit * (up - down) / (2 * delta)
    return out


def check_gradient(build, inputs, *, dtype=np.float64, seed: int = 0, max_full: int = 8,
                   directions: int = 2, delta: float = 1e-5, rtol=None, atol=None,
                   shapes: str = "static") -> float:
    """Assert that the gradients of `build` match finite differences; returns the error.

    `inputs` are NumPy arrays: floating/complex ones are checked, others (indices) are
    fed as they are. `build(*tensors)` returns a tensor or a list of tensors. `shapes`
    chooses the placeholders' static shapes: "static", "dims" (unknown dimensions) or
    "rank" (unknown rank), to exercise the gradients' run-time shape paths.
    """
    inputs = [np.asarray(a) for a in inputs]
    which = [i for i, a in enumerate(inputs) if _differentiable(a)]
    if not which:
        raise ValueError("check_gradient: no floating or complex input to check")
    exact = [_cast(a, np.float64) for a in inputs]
    ref = _Graph(build, exact, seed, shapes)
    rng = np.random.RandomState(seed + 1)
    try:
        if np.dtype(dtype) == np.float64:
            low, analytic_graph = exact, ref
        else:
            low = [_cast(a, np.dtype(dtype)) for a in inputs]
            analytic_graph = _Graph(build, low, seed, shapes)
        analytic = analytic_graph.analytic(low, which)
        name = np.dtype(dtype).name
        r, a = TOLERANCE[name]
        r, a = rtol if rtol is not None else r, atol if atol is not None else a
        worst = 0.0
        for i, g in zip(which, analytic):
            g = np.asarray(g, np.complex128 if exact[i].dtype.kind == "c" else np.float64)
            if g.shape != exact[i].shape:
                raise AssertionError(f"gradient of input {i} has shape {g.shape}, expected "
                                     f"{exact[i].shape}")
            if exact[i].size <= max_full:
                num = numeric_partials(ref, exact, i, delta)
                pairs = [(g.reshape(-1), num.reshape(-1))]
            else:
                pairs = []
                for _ in range(directions):
                    v = rng.normal(size=exact[i].shape)
                    if exact[i].dtype.kind == "c":
                        v = v + 1j * rng.normal(size=exact[i].shape)
                    vals = list(exact)
                    vals[i] = exact[i] + delta * v
                    up = ref.loss(vals)
                    vals[i] = exact[i] - delta * v
                    down = ref.loss(vals)
                    pairs.append((np.array([np.sum(np.real(np.conj(g) * v))]),
                                  np.array([(up - down) / (2 * delta)])))
            for got, want in pairs:
                scale = max(1.0, float(np.max(np.abs(want), initial=0.0)))
                err = float(np.max(np.abs(got - want), initial=0.0)) / scale
                worst = max(worst, err)
                if err > a + r:
                    raise AssertionError(
                        f"gradient of input {i} (shape {exact[i].shape}) differs from finite "
                        f"differences by {err:.3g} (tolerance {a + r:.1g} for {name}):\n"
                        f"analytic={np.round(got, 6)}\nnumeric={np.round(want, 6)}")
        return worst
    finally:
        ref.sess.close()
        if np.dtype(dtype) != np.float64:
            analytic_graph.sess.close()
