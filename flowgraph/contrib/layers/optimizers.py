"""`tf.contrib.layers.optimize_loss`: TF1's one-call training op (optimizer by name).

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     w = tf.Variable(3.0)
...     step = tf.train.get_or_create_global_step()
...     train = tf.contrib.layers.optimize_loss(tf.square(w), step, 0.25, "SGD",
...                                             summaries=[])
...     with tf.Session() as sess:
...         sess.run(tf.global_variables_initializer())
...         loss = sess.run(train)
...         print(loss, float(sess.run(w)), int(sess.run(step)))
9.0 1.5 1
"""

from __future__ import annotations

from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import GraphKeys, get_collection
from flowgraph.framework.operation import Tensor
from flowgraph.ops import clip_ops, control_flow_ops, init_ops
from flowgraph.ops import variable_scope as vs
from flowgraph.ops.variables import trainable_variables
from flowgraph.summary import summary_ops
from flowgraph.train import adagrad, adam, ftrl, gradient_descent, momentum, rmsprop, training_util
from flowgraph.train.optimizer import Optimizer

__all__ = ["OPTIMIZER_CLS_NAMES", "OPTIMIZER_SUMMARIES", "optimize_loss"]

OPTIMIZER_CLS_NAMES = {
    "Adagrad": adagrad.AdagradOptimizer,
    "Adam": adam.AdamOptimizer,
    "Ftrl": ftrl.FtrlOptimizer,
    "Momentum": lambda learning_rate: momentum.MomentumOptimizer(learning_rate,
                                                                 momentum=0.9),
    "RMSProp": rmsprop.RMSPropOptimizer,
    "SGD": gradient_descent.GradientDescentOptimizer,
}

OPTIMIZER_SUMMARIES = ["learning_rate", "loss", "gradients", "gradient_norm",
                       "global_gradient_norm"]


def _make_optimizer(optimizer, lr, learning_rate):
    if isinstance(optimizer, str):
        if lr is None:
            raise ValueError(f"Learning rate is None, but should be specified if optimizer "
                             f"is string ({optimizer}).")
        if optimizer not in OPTIMIZER_CLS_NAMES:
            raise ValueError(f"Optimizer name should be one of "
                             f"[{', '.join(OPTIMIZER_CLS_NAMES)}], you provided {optimizer}.")
        return OPTIMIZER_CLS_NAMES[optimizer](learning_rate=lr)
    if isinstance(optimizer, type) and issubclass(optimizer, Optimizer):
        if lr is None:
            raise ValueError(f"Learning rate is None, but should be specified if optimizer "
                             f"is class ({optimizer}).")
        return optimizer(learning_rate=lr)
    if isinstance(optimizer, Optimizer):
        return optimizer
    if callable(optimizer):
        opt = optimizer(lr) if learning_rate is not None else optimizer()
        if not isinstance(opt, Optimizer):
            raise ValueError(f"Unrecognized optimizer: function should return subclass of "
                             f"Optimizer. Got {opt}.")
        return opt
    raise ValueError(f"Unrecognized optimizer: should be string, subclass of Optimizer, "
                     f"instance of subclass of Optimizer or function with one argument. "
                     f"Got {optimizer}.")


def optimize_loss(loss, global_step, learning_rate, optimizer, gradient_noise_scale=None,
                  gradient_multipliers=None, clip_gradients=None,
                  learning_rate_decay_fn=None, update_ops=None, variables=None, name=None,
                  summaries=None, colocate_gradients_with_ops: bool = False,
                  increment_global_step: bool = True):
    """Minimize `loss` and return a tensor that evaluates to `loss` after one step.

    `optimizer` is a name of `OPTIMIZER_CLS_NAMES` (``'SGD'``, ``'Adam'``, ``'Adagrad'``,
    ``'Momentum'`` (momentum 0.9), ``'RMSProp'``, ``'Ftrl'``), an `Optimizer` subclass
    (built with `learning_rate`), an instance, or a callable ``f(lr) -> Optimizer``.
    A float `learning_rate` becomes the non-trainable variable
    ``OptimizeLoss/learning_rate`` (a scalar tensor is used as is), optionally passed
    through ``learning_rate_decay_fn(lr, global_step)``. The ``UPDATE_OPS`` collection
    (or `update_ops`) runs before the gradients; `clip_gradients` is a float (clip by
    global norm) or a function of the ``(gradient, variable)`` list. `global_step`
    (``tf.train.get_global_step()`` when None) is incremented by the step unless
    ``increment_global_step=False``. `summaries` (default ``loss``, ``learning_rate``,
    ``global_gradient_norm``) choose scalar/histogram summaries from
    `OPTIMIZER_SUMMARIES`.
    """
    if gradient_noise_scale is not None or gradient_multipliers is not None:
        raise NotImplementedError("optimize_loss: gradient_noise_scale and "
                                  "gradient_multipliers are not supported by flowgraph.")
    loss = convert_to_tensor(loss)
    if loss.shape.ndims not in (None, 0):
        raise ValueError(f"Expected scalar shape for loss, saw shape: {loss.shape}.")
    if global_step is None:
        global_step = training_util.get_global_step()
    if summaries is None:
        summaries = ["loss", "learning_rate", "global_gradient_norm"]
    for s in summaries:
        if s not in OPTIMIZER_SUMMARIES:
            raise ValueError(f"Summaries should be one of [{', '.join(OPTIMIZER_SUMMARIES)}],"
                             f" you provided {s}.")
    with vs.variable_scope(name, default_name="OptimizeLoss", values=[loss, global_step]):
        if update_ops is None:
            update_ops = list(dict.fromkeys(get_collection(GraphKeys.UPDATE_OPS)))
        if update_ops:
            loss = control_flow_ops.with_dependencies(list(update_ops), loss)
        lr = None
        if learning_rate is not None:
            if isinstance(learning_rate, Tensor) and learning_rate.shape.ndims == 0:
                lr = learning_rate
            elif isinstance(learning_rate, float | int) and not isinstance(learning_rate,
                                                                          bool):
                if learning_rate < 0.0:
                    raise ValueError(f"Invalid learning_rate {learning_rate}.")
                lr = vs.get_variable("learning_rate", [], trainable=False,
                                     initializer=init_ops.constant_initializer(
                                         float(learning_rate)))
            else:
                raise ValueError(f"Learning rate should be 0d Tensor or float. Got "
                                 f"{learning_rate!r} of type {type(learning_rate)}.")
        if lr is not None and learning_rate_decay_fn is not None:
            if global_step is None:
                raise ValueError("global_step is required for learning_rate_decay_fn.")
            lr = learning_rate_decay_fn(lr, global_step)
        if lr is not None and "learning_rate" in summaries:
            summary_ops.scalar("learning_rate", lr)
        opt = _make_optimizer(optimizer, lr, learning_rate)
        if variables is None:
            variables = trainable_variables()
        gradients = opt.compute_gradients(
            loss, variables, colocate_gradients_with_ops=colocate_gradients_with_ops)
        if "loss" in summaries:
            summary_ops.scalar("loss", loss)
        if isinstance(clip_gradients, float):
            grads, vars_ = zip(*gradients) if gradients else ((), ())
            clipped, _ = clip_ops.clip_by_global_norm(list(grads), clip_gradients)
            gradients = list(zip(clipped, vars_))
        elif callable(clip_gradients):
            gradients = clip_gradients(gradients)
        elif clip_gradients is not None:
            raise ValueError(f"Unknown type {type(clip_gradients)} for clip_gradients.")
        present = [g for g, _ in gradients if g is not None]
        if "global_gradient_norm" in summaries and present:
            summary_ops.scalar("global_norm/gradient_norm", clip_ops.global_norm(present))
        for grad, var in gradients:
            if grad is None:
                continue
            tag = var.op.name
            if "gradients" in summaries:
                summary_ops.histogram(f"gradients/{tag}", grad)
            if "gradient_norm" in summaries:
                summary_ops.scalar(f"gradient_norm/{tag}", clip_ops.global_norm([grad]))
        grad_updates = opt.apply_gradients(
            gradients, global_step=global_step if increment_global_step else None,
            name="train")
        return control_flow_ops.with_dependencies([grad_updates], loss)
