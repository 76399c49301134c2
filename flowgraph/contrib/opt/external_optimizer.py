"""`tf.contrib.opt.ScipyOptimizerInterface`: minimize a loss with `scipy.optimize.minimize`
(L-BFGS-B by default; SLSQP & co. with equality and inequality constraints), the way
physics-informed networks and other full-batch models of the TF1 era trained.

The variables are packed into one flat vector. Each evaluation SciPy asks for is one
``Session.run`` of the loss and the packed gradient with the variables *fed* the
candidate point (plus the user's `feed_dict`), so the graph's variables change only once,
at the end, when the optimum is assigned to them. Bounds come per variable
(``var_to_bounds``, broadcast to the variable's shape); ``method``, ``options`` and
SciPy's other keyword arguments pass through, except those the interface sets itself.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     x = tf.Variable([1.0, 2.0])
...     loss = tf.reduce_sum(tf.square(x - [3.0, -1.0]))
...     opt = tf.contrib.opt.ScipyOptimizerInterface(loss, options={"maxiter": 50})
...     with tf.Session() as sess:
...         sess.run(x.initializer)
...         opt.minimize(sess)
...         print(sess.run(x).round(4))
[ 3. -1.]
"""

from __future__ import annotations

import numpy as np

from flowgraph import logging_compat as logging
from flowgraph.framework.session_stack import get_default_session
from flowgraph.ops import array_join_ops, array_shape_ops
from flowgraph.ops.array_ops import placeholder
from flowgraph.ops.gradients import gradients
from flowgraph.ops.variables import trainable_variables

__all__ = ["ExternalOptimizerInterface", "ScipyOptimizerInterface"]


def _shape_tuple(tensor) -> tuple:
    shape = tensor.get_shape()
    if not shape.is_fully_defined():
        raise ValueError(f"ScipyOptimizerInterface: variable {tensor.name} needs a fully "
                         f"defined shape, found {shape}")
    return tuple(shape.as_list())


def _pack(tensors):
    """One flat vector of `tensors`, in order."""
    flat = [array_shape_ops.reshape(t, [-1]) for t in tensors]
    return flat[0] if len(flat) == 1 else array_join_ops.concat(flat, 0)


def _gradients_or_zeros(target, variables):
    grads = gradients(target, variables)
    return [array_shape_ops.zeros_like(v) if g is None else g
            for g, v in zip(grads, variables)]


class ExternalOptimizerInterface:
    """The packing, evaluation and final assignment shared by external optimizers;
    a subclass supplies `_minimize`."""

    def __init__(self, loss, var_list=None, equalities=None, inequalities=None,
                 var_to_bounds=None, **optimizer_kwargs) -> None:
        self._loss = loss
        self._equalities = list(equalities or [])
        self._inequalities = list(inequalities or [])
        self._vars = list(trainable_variables() if var_list is None else var_list)
        if not self._vars:
            raise ValueError("No variables to optimize.")
        self._var_shapes = [_shape_tuple(v) for v in self._vars]
        self.optimizer_kwargs = optimizer_kwargs

        self._packed_bounds = None
        if var_to_bounds is not None:
            low, high = [], []
            for var, shape in zip(self._vars, self._var_shapes):
                bounds = var_to_bounds.get(var, (-np.inf, np.inf))
                low.extend(np.broadcast_to(bounds[0], shape).flat)
                high.extend(np.broadcast_to(bounds[1], shape).flat)
            self._packed_bounds = list(zip(low, high))

        self._packed_var = _pack(self._vars)
        self._packed_loss_grad = _pack(_gradients_or_zeros(loss, self._vars))
        self._packed_equality_grads = [_pack(_gradients_or_zeros(e, self._vars))
                                       for e in self._equalities]
        self._packed_inequality_grads = [_pack(_gradients_or_zeros(i, self._vars))
                                         for i in self._inequalities]

        sizes = [int(np.prod(shape)) for shape in self._var_shapes]
        ends = np.cumsum(sizes)
        self._packing_slices = [slice(int(end - size), int(end))
                                for size, end in zip(sizes, ends)]
        self._update_placeholders = [placeholder(v.dtype.base_dtype) for v in self._vars]
        self._var_updates = [
            v.assign(array_shape_ops.reshape(p, shape))
            for v, p, shape in zip(self._vars, self._update_placeholders, self._var_shapes)]

    def minimize(self, session=None, feed_dict=None, fetches=None, step_callback=None,
                 loss_callback=None, **run_kwargs) -> None:
        """Run the external optimizer from the variables' current values, then assign
        the result to them. `loss_callback(*fetched)` sees `fetches` after each
        evaluation; `step_callback(x)` the packed variables after each iteration."""
        session = session or get_default_session()
        feed_dict = feed_dict or {}
        fetches = fetches or []
        loss_callback = loss_callback or (lambda *fetched: None)
        step_callback = step_callback or (lambda x: None)

        loss_grad_func = self._make_eval_func([self._loss, self._packed_loss_grad],
                                              session, feed_dict, fetches, loss_callback)
        equality_funcs = self._make_eval_funcs(self._equalities, session, feed_dict, fetches)
        equality_grad_funcs = self._make_eval_funcs(self._packed_equality_grads, session,
                                                    feed_dict, fetches)
        inequality_funcs = self._make_eval_funcs(self._inequalities, session, feed_dict,
                                                 fetches)
        inequality_grad_funcs = self._make_eval_funcs(self._packed_inequality_grads,
                                                      session, feed_dict, fetches)

        initial = session.run(self._packed_var)
        packed = self._minimize(
            initial_val=initial, loss_grad_func=loss_grad_func,
            equality_funcs=equality_funcs, equality_grad_funcs=equality_grad_funcs,
            inequality_funcs=inequality_funcs, inequality_grad_funcs=inequality_grad_funcs,
            packed_bounds=self._packed_bounds, step_callback=step_callback,
            optimizer_kwargs=self.optimizer_kwargs)
        values = [packed[s] for s in self._packing_slices]
        session.run(self._var_updates, feed_dict=dict(zip(self._update_placeholders, values)),
                    **run_kwargs)

    def _minimize(self, initial_val, loss_grad_func, equality_funcs, equality_grad_funcs,
                  inequality_funcs, inequality_grad_funcs, packed_bounds, step_callback,
                  optimizer_kwargs):
        raise NotImplementedError(
            f"{type(self).__name__} must implement _minimize (the external optimizer call)")

    def _make_eval_func(self, tensors, session, feed_dict, fetches, callback=None):
        """A function of a packed point: `tensors`' values with the variables fed it."""
        tensors = tensors if isinstance(tensors, list) else [tensors]
        count = len(tensors)

        def eval_func(x):
            fed = {var: x[s].reshape(shape) for var, s, shape
                   in zip(self._vars, self._packing_slices, self._var_shapes)}
            fed.update(feed_dict)
            values = session.run(tensors + list(fetches), feed_dict=fed)
            if callable(callback):
                callback(*values[count:])
            return values[:count]

        return eval_func

    def _make_eval_funcs(self, tensors, session, feed_dict, fetches, callback=None):
        return [self._make_eval_func(t, session, feed_dict, fetches, callback)
                for t in tensors]


class ScipyOptimizerInterface(ExternalOptimizerInterface):
    """`scipy.optimize.minimize` on the graph's loss (``method`` default ``'L-BFGS-B'``)."""

    _DEFAULT_METHOD = "L-BFGS-B"

    def _minimize(self, initial_val, loss_grad_func, equality_funcs, equality_grad_funcs,
                  inequality_funcs, inequality_grad_funcs, packed_bounds, step_callback,
                  optimizer_kwargs):
        import scipy.optimize

        def loss_and_gradient(x):
            loss, gradient = loss_grad_func(x)
            # SciPy's compiled minimizers (L-BFGS-B, SLSQP) want float64.
            return np.float64(loss), gradient.astype("float64")

        def in_float64(func):
            return lambda x: np.asarray(func(x), np.float64).reshape(-1)

        kwargs = dict(optimizer_kwargs)
        method = kwargs.pop("method", self._DEFAULT_METHOD)
        constraints = (
            [{"type": "eq", "fun": in_float64(f), "jac": in_float64(g)}
             for f, g in zip(equality_funcs, equality_grad_funcs)]
            + [{"type": "ineq", "fun": in_float64(f), "jac": in_float64(g)}
               for f, g in zip(inequality_funcs, inequality_grad_funcs)])
        fixed = {"jac": True, "callback": step_callback, "method": method,
                 "constraints": constraints, "bounds": packed_bounds}
        for key in fixed:
            if key in kwargs:
                if key == "bounds":
                    raise ValueError("Bounds must be set using the var_to_bounds argument")
                raise ValueError(f"Optimizer keyword arg '{key}' is set automatically and "
                                 "cannot be injected manually")
        fixed.update(kwargs)
        result = scipy.optimize.minimize(loss_and_gradient,
                                         np.asarray(initial_val, np.float64), **fixed)

        lines = ["Optimization terminated with:", "  Message: %s",
                 "  Objective function value: %f"]
        args = [result.message, result.fun]
        if hasattr(result, "nit"):
            lines.append("  Number of iterations: %d")
            args.append(result.nit)
        if hasattr(result, "nfev"):
            lines.append("  Number of functions evaluations: %d")
            args.append(result.nfev)
        logging.info("\n".join(lines), *args)
        return result["x"]

