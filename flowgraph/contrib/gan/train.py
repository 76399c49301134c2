"""TFGAN's losses, train ops and training loop: `gan_loss`, `gan_train_ops`,
`gan_train` with the sequential or joint update hooks.

`gan_train_ops` makes one `create_train_op` per network (under ``generator_train`` and
``discriminator_train``) that does not step the global step, and a separate
``global_step.assign_add(1)``; `gan_train` runs that increment in a monitored session
whose hooks run the networks' train ops before each step.

Example
-------
>>> import flowgraph as tf
>>> G = tf.contrib.gan
>>> with tf.Graph().as_default():
...     model = G.gan_model(lambda z: tf.layers.dense(z, 2),
...                         lambda x, _: tf.layers.dense(x, 1),
...                         real_data=tf.ones([4, 2]), generator_inputs=tf.ones([4, 3]))
...     loss = G.gan_loss(model)
...     ops = G.gan_train_ops(model, loss, tf.train.GradientDescentOptimizer(0.1),
...                           tf.train.GradientDescentOptimizer(0.1))
...     int(G.gan_train(ops, None, hooks=[tf.train.StopAtStepHook(num_steps=2)],
...                     save_checkpoint_secs=None, save_summaries_steps=None))
2
"""

from __future__ import annotations

from flowgraph.contrib.gan.losses import tuple_losses
from flowgraph.contrib.gan.namedtuples import ACGANModel, GANLoss, GANTrainOps, GANTrainSteps
from flowgraph.contrib.training.train_loop import train as _train
from flowgraph.contrib.training.training import create_train_op
from flowgraph.framework.graph import GraphKeys, control_dependencies, get_collection, name_scope
from flowgraph.framework.operation import Tensor
from flowgraph.losses.util import get_regularization_loss
from flowgraph.ops import check_ops, state_ops
from flowgraph.ops import variable_scope as vs
from flowgraph.ops.array_identity_ops import identity
from flowgraph.train.session_run_hook import SessionRunHook
from flowgraph.train.training_util import get_or_create_global_step

__all__ = [
    "RunTrainOpsHook",
    "gan_loss",
    "gan_train",
    "gan_train_ops",
    "get_joint_train_hooks",
    "get_sequential_train_hooks",
]

_ONE_EACH = GANTrainSteps(1, 1)


def _validate_weight(weight, name: str):
    if isinstance(weight, Tensor):
        weight.shape.assert_is_compatible_with([])
        with control_dependencies([check_ops.assert_greater_equal(weight, 0.0)]):
            return identity(weight)
    if weight is not None and weight < 0:
        raise ValueError(f"gan_loss: `{name}` must be greater than 0. Instead, was "
                         f"{weight}")
    return weight


def _used(weight) -> bool:
    return weight is not None and (isinstance(weight, Tensor) or weight > 0)


def _pooled_model(model, tensor_pool_fn):
    """`model` with the discriminator rerun on generated data drawn from a pool."""
    inputs, generated = tensor_pool_fn((model.generator_inputs, model.generated_data))
    with vs.variable_scope(model.discriminator_scope, reuse=True):
        outputs = model.discriminator_fn(generated, inputs)
    if isinstance(model, ACGANModel):
        logits, class_logits = outputs
        return model._replace(generator_inputs=inputs, generated_data=generated,
                              discriminator_gen_outputs=logits,
                              discriminator_gen_classification_logits=class_logits)
    return model._replace(generator_inputs=inputs, generated_data=generated,
                          discriminator_gen_outputs=outputs)


def gan_loss(model, generator_loss_fn=tuple_losses.wasserstein_generator_loss,
             discriminator_loss_fn=tuple_losses.wasserstein_discriminator_loss,
             gradient_penalty_weight=None, gradient_penalty_epsilon=1e-10,
             gradient_penalty_target=1.0, gradient_penalty_one_sided=False,
             mutual_information_penalty_weight=None, aux_cond_generator_weight=None,
             aux_cond_discriminator_weight=None, tensor_pool_fn=None,
             add_summaries=True) -> GANLoss:
    """A `GANLoss`: the loss functions (Wasserstein by default) on `model`, plus the
    weighted gradient penalty and ACGAN class losses when their weights are given, plus
    each network's regularization losses."""
    gradient_penalty_weight = _validate_weight(gradient_penalty_weight,
                                               "gradient_penalty_weight")
    _validate_weight(mutual_information_penalty_weight, "infogan_weight")
    aux_cond_generator_weight = _validate_weight(aux_cond_generator_weight,
                                                 "aux_cond_generator_weight")
    aux_cond_discriminator_weight = _validate_weight(aux_cond_discriminator_weight,
                                                     "aux_cond_discriminator_weight")
    if _used(mutual_information_penalty_weight):
        raise ValueError("gan_loss: When `mutual_information_penalty_weight` is provided, "
                         "`model` must be an `InfoGANModel` (not supported by flowgraph). "
                         f"Instead, was {type(model)}.")
    if ((_used(aux_cond_generator_weight) or _used(aux_cond_discriminator_weight))
            and not isinstance(model, ACGANModel)):
        raise ValueError("gan_loss: When `aux_cond_generator_weight` or "
                         "`aux_cond_discriminator_weight` is provided, `model` must be an "
                         f"`ACGANModel`. Instead, was {type(model)}.")
    pooled = _pooled_model(model, tensor_pool_fn) if tensor_pool_fn else model
    gen_loss = generator_loss_fn(model, add_summaries=add_summaries)
    dis_loss = discriminator_loss_fn(pooled, add_summaries=add_summaries)
    if _used(gradient_penalty_weight):
        gp_loss = tuple_losses.wasserstein_gradient_penalty(
            pooled, epsilon=gradient_penalty_epsilon, target=gradient_penalty_target,
            one_sided=gradient_penalty_one_sided, add_summaries=add_summaries)
        dis_loss += gradient_penalty_weight * gp_loss
    if _used(aux_cond_generator_weight):
        gen_loss += aux_cond_generator_weight * tuple_losses.acgan_generator_loss(
            model, add_summaries=add_summaries)
    if _used(aux_cond_discriminator_weight):
        dis_loss += aux_cond_discriminator_weight * tuple_losses.acgan_discriminator_loss(
            pooled, add_summaries=add_summaries)
    gen_reg = get_regularization_loss(model.generator_scope.name) \
        if model.generator_scope else 0
    dis_reg = get_regularization_loss(model.discriminator_scope.name) \
        if model.discriminator_scope else 0
    return GANLoss(gen_loss + gen_reg, dis_loss + dis_reg)


def _update_ops(kwargs: dict, gen_scope: str, dis_scope: str, check_unused: bool):
    """The ``UPDATE_OPS`` split between the two networks (by scope)."""
    if "update_ops" in kwargs:
        update_ops = set(kwargs.pop("update_ops"))
    else:
        update_ops = set(get_collection(GraphKeys.UPDATE_OPS))
    gen_ops = set(get_collection(GraphKeys.UPDATE_OPS, gen_scope))
    dis_ops = set(get_collection(GraphKeys.UPDATE_OPS, dis_scope))
    if check_unused:
        unused = update_ops - gen_ops - dis_ops
        if unused:
            raise ValueError(f"gan_train_ops: There are unused update ops: "
                             f"{sorted(op.name for op in unused)}")
    by_name = lambda ops: sorted(ops, key=lambda op: op.name)  # noqa: E731
    return by_name(gen_ops & update_ops), by_name(dis_ops & update_ops)


def gan_train_ops(model, loss, generator_optimizer, discriminator_optimizer,
                  check_for_unused_update_ops=True, is_chief=True, **kwargs) -> GANTrainOps:
    """A `GANTrainOps`: a train op per network (its own variables, its update ops,
    no global step) and the global step's increment. `kwargs` go to
    `tf.contrib.training.create_train_op`."""
    del is_chief  # only SyncReplicasOptimizer's hooks use it
    global_step = get_or_create_global_step()
    global_step_inc = state_ops.assign_add(global_step, 1)
    gen_updates, dis_updates = _update_ops(kwargs, model.generator_scope.name,
                                           model.discriminator_scope.name,
                                           check_for_unused_update_ops)
    with name_scope("generator_train"):
        gen_train_op = create_train_op(
            total_loss=loss.generator_loss, optimizer=generator_optimizer,
            variables_to_train=model.generator_variables, global_step=None,
            update_ops=gen_updates, **kwargs)
    with name_scope("discriminator_train"):
        dis_train_op = create_train_op(
            total_loss=loss.discriminator_loss, optimizer=discriminator_optimizer,
            variables_to_train=model.discriminator_variables, global_step=None,
            update_ops=dis_updates, **kwargs)
    return GANTrainOps(gen_train_op, dis_train_op, global_step_inc, [])


class RunTrainOpsHook(SessionRunHook):
    """Runs `train_ops` (an op or a list run together) `train_steps` times before each
    step of the monitored session."""

    def __init__(self, train_ops, train_steps: int):
        self._train_ops = train_ops if isinstance(train_ops, (list, tuple)) else [train_ops]
        self._train_steps = train_steps

    def before_run(self, run_context):
        for _ in range(self._train_steps):
            run_context.session.run(self._train_ops)


def get_sequential_train_hooks(train_steps=_ONE_EACH):
    """A function of `GANTrainOps` giving the hooks that run the generator's train op,
    then the discriminator's, each its number of steps.

    >>> import flowgraph as tf
    >>> hooks = get_sequential_train_hooks(GANTrainSteps(2, 3))(GANTrainOps("g", "d", "i"))
    >>> [h._train_steps for h in hooks]
    [2, 3]
    """
    def get_hooks(train_ops):
        return [RunTrainOpsHook(train_ops.generator_train_op,
                                train_steps.generator_train_steps),
                RunTrainOpsHook(train_ops.discriminator_train_op,
                                train_steps.discriminator_train_steps),
                *train_ops.train_hooks]
    return get_hooks


def get_joint_train_hooks(train_steps=_ONE_EACH):
    """Like `get_sequential_train_hooks`, but the steps both networks take run both
    train ops in one `Session.run`; the surplus steps of one network follow.

    >>> hooks = get_joint_train_hooks(GANTrainSteps(3, 5))(GANTrainOps("g", "d", "i"))
    >>> [h._train_steps for h in hooks]
    [3, 0, 2]
    """
    g_steps = train_steps.generator_train_steps
    d_steps = train_steps.discriminator_train_steps
    joint = min(g_steps, d_steps)

    def get_hooks(train_ops):
        g_op, d_op = train_ops.generator_train_op, train_ops.discriminator_train_op
        return [RunTrainOpsHook([g_op, d_op], joint), RunTrainOpsHook(g_op, g_steps - joint),
                RunTrainOpsHook(d_op, d_steps - joint), *train_ops.train_hooks]
    return get_hooks


def gan_train(train_ops, logdir, get_hooks_fn=None, master="",
              is_chief=True, scaffold=None, hooks=None, chief_only_hooks=None,
              save_checkpoint_secs=600, save_summaries_steps=100, config=None):
    """`tf.contrib.training.train` of the global step's increment with `hooks` and those
    of `get_hooks_fn` (default: `get_sequential_train_hooks()`); returns the last global
    step."""
    new_hooks = (get_hooks_fn or get_sequential_train_hooks())(train_ops)
    hooks = list(hooks) + list(new_hooks) if hooks is not None else new_hooks
    return _train(train_ops.global_step_inc_op, logdir, master=master, is_chief=is_chief,
                  scaffold=scaffold, hooks=hooks, chief_only_hooks=chief_only_hooks,
                  save_checkpoint_secs=save_checkpoint_secs,
                  save_summaries_steps=save_summaries_steps, config=config)
