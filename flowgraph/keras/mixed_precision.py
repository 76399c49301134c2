"""`tf.keras.mixed_precision` (TF 1.x mode): `LossScaleOptimizer`.

TF 1.x's ``tf.compat.v1.keras.mixed_precision`` holds only the loss-scale optimizer (the
``Policy`` API is TF2's). It multiplies the loss by a scale before differentiating and
divides the gradients by it, so that float16 gradients neither underflow nor overflow.
With ``dynamic=True`` (the default) a step whose gradients are not all finite is skipped
and halves the scale (down to 1), and ``dynamic_growth_steps`` finite steps in a row
double it; with ``dynamic=False`` the scale stays ``initial_scale``.

Example
-------
>>> import numpy as np
>>> import flowgraph as tf
>>> K = tf.keras
>>> with tf.Graph().as_default():
...     model = K.Sequential([K.layers.Dense(1, input_shape=(2,))])
...     opt = K.mixed_precision.LossScaleOptimizer(K.optimizers.SGD(0.1))
...     model.compile(opt, "mse")
...     _ = model.fit(np.ones((4, 2)), np.ones((4, 1)), epochs=2, verbose=0)
...     print(float(K.backend.get_value(opt.loss_scale)))
32768.0
"""

from __future__ import annotations

import weakref

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import get_default_graph, name_scope
from flowgraph.keras import optimizers as _optimizers
from flowgraph.ops import (
    array_index_ops,
    array_join_ops,
    array_shape_ops,
    control_flow_cond,
    control_flow_ops,
    math_ops,
    math_reduce,
    state_ops,
)
from flowgraph.ops import variables as _variables
from flowgraph.train.optimizer import Optimizer as _TFOptimizer

__all__ = ["LossScaleOptimizer"]


class LossScaleOptimizer(_optimizers.Optimizer):
    """Wrap a Keras optimizer with loss scaling (see the module docstring).

    Parameters
    ----------
    inner_optimizer : a Keras optimizer (or anything `tf.keras.optimizers.get` accepts)
    dynamic : bool
        Adjust the scale as training goes (default) or keep ``initial_scale``.
    initial_scale : float
        Default ``2 ** 15`` when dynamic; required otherwise.
    dynamic_growth_steps : int
        Finite steps in a row before the scale doubles (default 2000).
    """

    def __init__(self, inner_optimizer, dynamic=True, initial_scale=None,
                 dynamic_growth_steps=None, **kwargs) -> None:
        if kwargs.pop("decay", 0) not in (0, None) or kwargs:
            raise TypeError(f"LossScaleOptimizer: unexpected keyword argument(s) "
                            f"{sorted(kwargs) or ['decay']}")
        inner = _optimizers.get(inner_optimizer)
        if isinstance(inner, LossScaleOptimizer):
            raise TypeError("LossScaleOptimizer cannot wrap another LossScaleOptimizer.")
        if not isinstance(inner, _optimizers.Optimizer):
            raise TypeError(f"LossScaleOptimizer: `inner_optimizer` must be a Keras optimizer "
                            f"(tf.keras.optimizers.*), got {type(inner).__name__}.")
        self.dynamic = bool(dynamic)
        if self.dynamic:
            initial_scale = 2.0 ** 15 if initial_scale is None else initial_scale
            dynamic_growth_steps = dynamic_growth_steps or 2000
        else:
            if initial_scale is None:
                raise ValueError('"initial_scale" must be specified if "dynamic" is False')
            if dynamic_growth_steps is not None:
                raise ValueError(f'"dynamic_growth_steps" must be None if "dynamic" is '
                                 f'False, but got: {dynamic_growth_steps}')
        if initial_scale < 1:
            raise ValueError(f"LossScaleOptimizer: initial_scale must be at least 1, got "
                             f"{initial_scale}")
        self.inner_optimizer = inner
        self.initial_scale = float(initial_scale)
        self.dynamic_growth_steps = dynamic_growth_steps
        self._config = {"inner_optimizer": inner, "dynamic": self.dynamic,
                        "initial_scale": self.initial_scale,
                        "dynamic_growth_steps": dynamic_growth_steps}
        self._scale_vars = weakref.WeakKeyDictionary()
        self._state()  # made now in the default graph, as TF does (before the model's)

    def get_config(self) -> dict:
        return {"inner_optimizer": _optimizers_config(self.inner_optimizer),
                "dynamic": self.dynamic, "initial_scale": self.initial_scale,
                "dynamic_growth_steps": self.dynamic_growth_steps}

    def _lr_variable(self, graph=None, prefix=None):
        return self.inner_optimizer._lr_variable(graph, prefix)

    def _state(self, graph=None):
        """``(scale, good steps)`` variables of ``graph`` (made on first use)."""
        graph = graph or get_default_graph()
        state = self._scale_vars.get(graph)
        if state is None:
            # TF 2.15: resource variables ``current_loss_scale`` and ``good_steps`` at the
            # root name scope
            with graph.as_default(), graph.control_dependencies(None), name_scope(None):
                scale = _variables.Variable(self.initial_scale, dtype=_dtypes.float32,
                                            trainable=False, name="current_loss_scale",
                                            use_resource=True)
                good = _variables.Variable(0, dtype=_dtypes.int64, trainable=False,
                                           name="good_steps", use_resource=True)
            state = self._scale_vars[graph] = (scale, good)
        return state

    @property
    def loss_scale(self):
        """The current scale (a float32 variable of the default graph)."""
        return self._state()[0]

    @property
    def dynamic_counter(self):
        """The count of finite steps since the scale last changed (an int64 variable of
        the default graph); None when not dynamic."""
        return self._state()[1] if self.dynamic else None

    @property
    def weights(self) -> list:
        """The inner optimizer's weights (the loss-scale variables are not among them)."""
        return self.inner_optimizer.weights

    def get_weights(self) -> list:
        return self.inner_optimizer.get_weights()

    def set_weights(self, weights) -> None:
        self.inner_optimizer.set_weights(weights)

    @property
    def iterations(self):
        return self.inner_optimizer.iterations

    def get_scaled_loss(self, loss):
        """``loss * loss_scale``."""
        loss = convert_to_tensor(loss)
        return math_ops.multiply(loss, math_ops.cast(self.loss_scale, loss.dtype.base_dtype))

    def get_unscaled_gradients(self, grads):
        """Each gradient divided by the loss scale (None stays None)."""
        return [None if g is None else
                math_ops.multiply(g, math_ops.cast(math_ops.reciprocal(self.loss_scale),
                                                   g.dtype.base_dtype))
                for g in grads]

    def _make(self, scope: str = "training/"):
        return _ScaledOptimizer(self, self.inner_optimizer._make(scope))


# `tf.keras.optimizers.get` (and so `load_model`) finds it by its config's class name.
_optimizers._BY_NAME["lossscaleoptimizer"] = LossScaleOptimizer


def _optimizers_config(opt) -> dict:
    return {"class_name": type(opt).__name__, "config": opt.get_config()}


class _ScaledOptimizer(_TFOptimizer):
    """The `tf.train` side: scaled gradients in, the inner update (or a skip) out."""

    def __init__(self, keras_opt: LossScaleOptimizer, inner: _TFOptimizer) -> None:
        super().__init__(use_locking=False, name="LossScaleOptimizer")
        self._keras, self._inner = keras_opt, inner

    def compute_gradients(self, loss, var_list=None, **kwargs) -> list:
        if callable(loss) and not hasattr(loss, "op"):
            loss = loss()
        scaled = self._keras.get_scaled_loss(loss)
        pairs = self._inner.compute_gradients(scaled, var_list=var_list, **kwargs)
        grads = self._keras.get_unscaled_gradients([g for g, _ in pairs])
        return list(zip(grads, [v for _, v in pairs], strict=True))

    def get_slot(self, var, name):
        return self._inner.get_slot(var, name)

    def get_slot_names(self) -> list:
        return self._inner.get_slot_names()

    def variables(self) -> list:
        return [*self._inner.variables(), *self._keras._state()]

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        grads_and_vars = list(grads_and_vars)
        keras_opt = self._keras
        if not keras_opt.dynamic:
            return self._inner.apply_gradients(grads_and_vars, global_step=global_step,
                                               name=name)
        scale, good = keras_opt._state()
        # the inner optimizer's slots, made outside the cond below: a resource variable
        # made inside a branch would not be lifted out of it
        with get_default_graph().control_dependencies(None):
            self._inner._create_slots([v for g, v in grads_and_vars if g is not None])
        grads = [g for g, _ in grads_and_vars if g is not None]
        grads = [getattr(g, "values", g) for g in grads]  # IndexedSlices: their values
        finite = math_reduce.reduce_all(array_join_ops.stack(
            [math_reduce.reduce_all(math_ops.is_finite(g)) for g in grads]))

        def apply():
            update = self._inner.apply_gradients(grads_and_vars, global_step=global_step,
                                                 name=name)
            with get_default_graph().control_dependencies([update]):
                grow = math_ops.greater_equal(math_ops.add(good, 1),
                                              keras_opt.dynamic_growth_steps)
                new_scale = array_index_ops.where(grow, math_ops.multiply(scale, 2.0), scale)
                new_good = array_index_ops.where(grow, array_shape_ops.zeros_like(good),
                                                 math_ops.add(good, 1))
                return control_flow_ops.group(state_ops.assign(scale, new_scale),
                                              state_ops.assign(good, new_good))

        def skip():
            return control_flow_ops.group(
                state_ops.assign(scale, math_ops.maximum(math_ops.multiply(scale, 0.5), 1.0)),
                state_ops.assign(good, array_shape_ops.zeros_like(good)))

        return control_flow_cond.cond(finite, apply, skip)
