"""`tf.contrib.integrate`: ordinary differential equations ``dy/dt = func(y, t)`` solved
in the graph.

`odeint` is TF 1.x's adaptive Dormand-Prince (4)5 method: a `tf.while_loop` takes steps
whose size follows the local error estimate (``rtol``/``atol``), and the solution at each
requested time comes from the 4th-order interpolant of the step that covers it.
`odeint_fixed` takes fixed steps (``'rk4'`` or ``'midpoint'``) on the time grid, or
``dt``-sized substeps of each grid interval. Both are differentiable through their steps
(not through the adaptive step sizes, which are a numerical choice).
Note TF's argument order: ``func(y, t)``.

Example
-------
>>> import flowgraph as tf
>>> y = tf.contrib.integrate.odeint(lambda y, t: -y, 1.0, [0.0, 1.0, 2.0])
>>> [round(v, 5) for v in tf.Session().run(y).tolist()]
[1.0, 0.36788, 0.13534]
"""

from __future__ import annotations

from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import control_dependencies, name_scope
from flowgraph.ops import array_shape_ops, math_ops, math_reduce
from flowgraph.ops.array_identity_ops import identity, stop_gradient
from flowgraph.ops.array_index_ops import gather
from flowgraph.ops.array_index_ops import where_v2 as where
from flowgraph.ops.check_ops import Assert
from flowgraph.ops.control_flow_loops import while_loop
from flowgraph.ops.tensor_array import TensorArray

__all__ = ["odeint", "odeint_fixed"]

# Dormand-Prince: stage times, stage weights, 5th-order weights, error weights (5th - 4th)
_C = [0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0]
_A = [[], [1 / 5], [3 / 40, 9 / 40], [44 / 45, -56 / 15, 32 / 9],
      [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729],
      [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656]]
_B = [35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0.0]
_B4 = [5179 / 57600, 0.0, 7571 / 16695, 393 / 640, -92097 / 339200, 187 / 2100, 1 / 40]
_E = [b - b4 for b, b4 in zip(_B, _B4)]
# the weights of the solution at the step's middle (for the interpolant)
_MID = [6025192743 / 30085553152 / 2, 0.0, 51252292925 / 65400821598 / 2,
        -2691868925 / 45128329728 / 2, 187940372067 / 1594534317056 / 2,
        -1776094331 / 19743644256 / 2, 11237099 / 235043384 / 2]


def _weighted(y, dt, ks, weights):
    total = None
    for w, k in zip(weights, ks):
        if w:
            total = k * w if total is None else total + k * w
    return y if total is None else y + dt * total


def _dopri5_step(func, y0, f0, t0, dt):
    """One Dormand-Prince step from ``(t0, y0)`` (``f0 = func(y0, t0)``): the 5th-order
    solution, its derivative, the error estimate and the stages."""
    ks = [f0]
    for c, row in zip(_C[1:], _A[1:]):
        ks.append(func(_weighted(y0, dt, ks, row), t0 + c * dt))
    y1 = _weighted(y0, dt, ks, _B[:6])
    f1 = func(y1, t0 + dt)
    ks.append(f1)
    err = dt * sum(k * w for k, w in zip(ks, _E) if w)
    return y1, f1, err, ks


def _interp_coefficients(y0, y1, y_mid, f0, f1, dt):
    """The quartic through ``y0``, ``y_mid``, ``y1`` with slopes ``f0``, ``f1``, in
    ``x = (t - t0) / dt``, highest power first."""
    a = -2 * dt * f0 + 2 * dt * f1 - 8 * y0 - 8 * y1 + 16 * y_mid
    b = 5 * dt * f0 - 3 * dt * f1 + 18 * y0 + 14 * y1 - 32 * y_mid
    c = -4 * dt * f0 + dt * f1 - 11 * y0 - 5 * y1 + 16 * y_mid
    return [a, b, c, dt * f0, y0]


def _abs(x):
    return math_ops.abs(x)


def _rms(x):
    return math_ops.sqrt(math_reduce.reduce_mean(math_ops.square(_abs(x))))


def _initial_step(func, t0, y0, f0, rtol, atol):
    """Hairer's starting step for a method of order 4."""
    dtype = t0.dtype.base_dtype
    scale = math_ops.cast(atol + _abs(y0) * rtol, dtype)
    d0 = _rms(math_ops.cast(_abs(y0), dtype) / scale)
    d1 = _rms(math_ops.cast(_abs(f0), dtype) / scale)
    small = math_ops.logical_or(math_ops.less(d0, 1e-5), math_ops.less(d1, 1e-5))
    h0 = where(small, convert_to_tensor(1e-6, dtype=dtype), 0.01 * d0 / d1)
    f1 = func(y0 + math_ops.cast(h0, y0.dtype.base_dtype) * f0, t0 + h0)
    d2 = _rms(math_ops.cast(_abs(f1 - f0), dtype) / scale) / h0
    worst = math_ops.maximum(d1, d2)
    h1 = where(math_ops.less_equal(worst, 1e-15), math_ops.maximum(h0 * 1e-3, 1e-6),
               (0.01 / worst) ** (1.0 / 5))
    return math_ops.minimum(100 * h0, h1)


def _next_step(dt, ratio, safety, ifactor, dfactor):
    """The next step size from the mean-square error `ratio` of the last attempt."""
    ones = array_shape_ops.ones_like(ratio)
    dfactor = where(math_ops.less(ratio, 1.0), ones, dfactor * ones)
    root = math_ops.sqrt(ratio) ** (1.0 / 5)
    factor = math_ops.maximum(1.0 / ifactor, math_ops.minimum(root / safety, 1.0 / dfactor))
    return where(math_ops.equal(ratio, 0.0), dt * ifactor, dt / factor)


def odeint(func, y0, t, rtol=1e-6, atol=1e-12, method=None, options=None,
           full_output=False, name=None):
    """Solve ``dy/dt = func(y, t)``, ``y(t[0]) = y0`` and return ``y`` at each time of
    the increasing 1-D `t` (shape ``[len(t)] + y0.shape``), with Dormand-Prince steps.

    `options`: ``first_step`` (default Hairer's estimate), ``safety`` (0.9),
    ``ifactor`` (10), ``dfactor`` (0.2) and ``max_num_steps`` (1000; more raise
    InvalidArgumentError when the graph runs). With `full_output`, also a dict of
    ``num_func_evals`` and ``integrate_points`` (the accepted step ends).
    """
    if method not in (None, "dopri5"):
        raise ValueError(f"invalid method: {method!r}")
    options = dict(options or {})
    unknown = set(options) - {"first_step", "safety", "ifactor", "dfactor", "max_num_steps"}
    if unknown:
        raise ValueError(f"odeint: unexpected options {sorted(unknown)}")
    with name_scope(name, "odeint", [y0, t, rtol, atol]):
        y0 = convert_to_tensor(y0, name="y0")
        if not (y0.dtype.is_floating or y0.dtype.is_complex):
            raise TypeError(f"`y0` must have a floating point or complex floating point "
                            f"dtype, got {y0.dtype.base_dtype.name}")
        real = y0.dtype.base_dtype.real_dtype
        t = math_ops.cast(convert_to_tensor(t, name="t"), real)
        if t.shape.ndims != 1:
            raise ValueError(f"odeint: t must be a vector of times, got shape {t.shape}")
        safety = options.get("safety", 0.9)
        ifactor = options.get("ifactor", 10.0)
        dfactor = options.get("dfactor", 0.2)
        max_steps = options.get("max_num_steps", 1000)
        n = array_shape_ops.shape(t)[0]
        t0 = t[0]
        f0 = func(y0, t0)
        first = options.get("first_step")
        # (the step sizes are a numerical choice: no gradient flows through them)
        dt = stop_gradient(_initial_step(func, t0, y0, f0, rtol, atol) if first is None
                           else math_ops.cast(convert_to_tensor(first), real))
        cast_y = (lambda v: math_ops.cast(v, y0.dtype.base_dtype)) if y0.dtype.is_complex \
            else (lambda v: v)
        zero = array_shape_ops.zeros_like(y0)
        coeffs0 = [zero, zero, zero, zero, y0]
        outputs = TensorArray(y0.dtype.base_dtype, size=n, element_shape=y0.shape)
        outputs = outputs.write(0, y0)
        points = TensorArray(real, size=0, dynamic_size=True).write(0, t0)

        def emit(i, t_start, t_end, coeffs, out):
            def going(j, _):
                ahead = math_ops.less(j, n)
                at = gather(t, math_ops.minimum(j, n - 1))
                return math_ops.logical_and(ahead, math_ops.less_equal(at, t_end))

            def write(j, out):
                x = cast_y((gather(t, j) - t_start) / (t_end - t_start))
                y = coeffs[0]
                for c in coeffs[1:]:
                    y = y * x + c
                return j + 1, out.write(j, y)

            return while_loop(going, write, [i, out])

        def body(i, t_end, y1, f1, dt, coeffs, out, points, steps, evals):
            check = Assert(math_ops.less(steps, max_steps),
                           ["max_num_steps exceeded"], name="max_num_steps_exceeded")
            with control_dependencies([check]):
                dt = identity(dt)
            y_new, f_new, err, ks = _dopri5_step(func, y1, f1, t_end, cast_y(dt))
            y_mid = _weighted(y1, cast_y(dt), ks, _MID)
            tol = atol + rtol * math_ops.maximum(_abs(y1), _abs(y_new))
            ratio = math_reduce.reduce_mean(math_ops.square(_abs(err) / tol))
            ratio = stop_gradient(math_ops.cast(ratio, real))
            accept = math_ops.less_equal(ratio, 1.0)
            fitted = _interp_coefficients(y1, y_new, y_mid, f1, f_new, cast_y(dt))
            t_next = where(accept, t_end + dt, t_end)
            coeffs = [where(accept, a, b) for a, b in zip(fitted, coeffs)]
            y1 = where(accept, y_new, y1)
            f1 = where(accept, f_new, f1)
            # (after a rejected step nothing is left to emit up to `t_end`)
            i, out = emit(i, t_end, t_next, coeffs, out)
            points = points.write(points.size(), t_next)
            dt = stop_gradient(_next_step(dt, ratio, safety, ifactor, dfactor))
            return i, t_next, y1, f1, dt, coeffs, out, points, steps + 1, evals + 6

        _, _, _, _, _, _, outputs, points, _, evals = while_loop(
            lambda i, *rest: math_ops.less(i, n), body,
            [convert_to_tensor(1), t0, y0, f0, dt, coeffs0, outputs, points,
             convert_to_tensor(0), convert_to_tensor(2 if first is None else 1)])
        y = outputs.stack(name="solution")
        y.set_shape(t.shape.concatenate(y0.shape))
        if full_output:
            return y, {"num_func_evals": evals, "integrate_points": points.stack()}
        return y


_FIXED = {
    "midpoint": lambda func, y, t, dt: y + dt * func(y + 0.5 * dt * func(y, t), t + 0.5 * dt),
}


def _rk4(func, y, t, dt):
    k1 = func(y, t)
    k2 = func(y + 0.5 * dt * k1, t + 0.5 * dt)
    k3 = func(y + 0.5 * dt * k2, t + 0.5 * dt)
    k4 = func(y + dt * k3, t + dt)
    return y + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


_FIXED["rk4"] = _rk4


def odeint_fixed(func, y0, t, dt=None, method="rk4", name=None):
    """Solve ``dy/dt = func(y, t)`` with fixed steps: one per interval of the grid `t`,
    or, given `dt`, ``ceil(interval / dt)`` equal substeps of each; ``method`` is
    ``'rk4'`` or ``'midpoint'``. Returns ``y`` at each time of `t`."""
    if method not in _FIXED:
        raise ValueError(f"method {method!r} is not supported; use one of "
                         f"{sorted(_FIXED)}")
    step = _FIXED[method]
    with name_scope(name, "odeint_fixed", [y0, t, dt]):
        y0 = convert_to_tensor(y0, name="y0")
        t = math_ops.cast(convert_to_tensor(t, name="t"), y0.dtype.base_dtype.real_dtype)
        widths = t[1:] - t[:-1]
        if dt is None:
            counts = array_shape_ops.ones_like(widths, dtype="int32")
        else:
            dt = math_ops.cast(convert_to_tensor(dt, name="dt"), widths.dtype)
            counts = math_ops.cast(math_ops.ceil(widths / dt), "int32")
        sizes = widths / math_ops.cast(counts, widths.dtype)
        n = array_shape_ops.shape(t)[0]
        outputs = TensorArray(y0.dtype.base_dtype, size=n, element_shape=y0.shape)

        def interval(i, y, out):
            h, m, start = gather(sizes, i - 1), gather(counts, i - 1), gather(t, i - 1)

            def sub(j, y):
                return j + 1, step(func, y, start + math_ops.cast(j, h.dtype) * h,
                                   math_ops.cast(h, y0.dtype.base_dtype))

            _, y = while_loop(lambda j, _: math_ops.less(j, m), sub, [0, y])
            return i + 1, y, out.write(i, y)

        _, _, outputs = while_loop(lambda i, *_: math_ops.less(i, n), interval,
                                   [convert_to_tensor(1), y0, outputs.write(0, y0)])
        y = outputs.stack(name="solution")
        y.set_shape(t.shape.concatenate(y0.shape))
        return y

