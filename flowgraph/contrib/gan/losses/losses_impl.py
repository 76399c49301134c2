"""TFGAN's losses on tensors (``tfgan.losses.wargs``): the adversarial losses of the
original, Wasserstein, least-squares and ACGAN papers, and WGAN-GP's gradient penalty.

Each reduces with `tf.losses.compute_weighted_loss` (default ``SUM_BY_NONZERO_WEIGHTS``)
and adds the result to `loss_collection`; a two-part discriminator loss adds only its sum.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.contrib.gan.losses.losses_impl import least_squares_generator_loss
>>> with tf.Graph().as_default():
...     loss = least_squares_generator_loss(tf.constant([0.0, 2.0]))
...     float(tf.Session().run(loss))
0.5
"""

from __future__ import annotations

from flowgraph.framework import dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import GraphKeys, name_scope
from flowgraph.losses import losses_impl as _tf_losses
from flowgraph.losses.util import Reduction, add_loss, compute_weighted_loss
from flowgraph.ops import math_ops, math_reduce
from flowgraph.ops import variable_scope as vs
from flowgraph.ops.array_shape_ops import ones_like, shape, zeros_like
from flowgraph.ops.gradients import gradients
from flowgraph.ops.random_ops import random_uniform
from flowgraph.summary import summary_ops

__all__ = [
    "acgan_discriminator_loss",
    "acgan_generator_loss",
    "least_squares_discriminator_loss",
    "least_squares_generator_loss",
    "minimax_discriminator_loss",
    "minimax_generator_loss",
    "modified_discriminator_loss",
    "modified_generator_loss",
    "wasserstein_discriminator_loss",
    "wasserstein_generator_loss",
    "wasserstein_gradient_penalty",
]

_LOSSES = GraphKeys.LOSSES
_SUM_NZ = Reduction.SUM_BY_NONZERO_WEIGHTS


def _to_float(x):
    return math_ops.cast(x, dtypes.float32, name="ToFloat")


def _summaries(add_summaries: bool, **named) -> None:
    if add_summaries:
        for tag, value in named.items():
            summary_ops.scalar(tag, value)


def wasserstein_generator_loss(discriminator_gen_outputs, weights=1.0, scope=None,
                               loss_collection=_LOSSES, reduction=_SUM_NZ,
                               add_summaries=False):
    """``-D(G(z))``, reduced (WGAN's generator loss)."""
    with name_scope(scope, "generator_wasserstein_loss",
                    (discriminator_gen_outputs, weights)) as scope:
        gen = _to_float(discriminator_gen_outputs)
        loss = compute_weighted_loss(-gen, weights, scope, loss_collection, reduction)
        _summaries(add_summaries, generator_wass_loss=loss)
    return loss


def wasserstein_discriminator_loss(discriminator_real_outputs, discriminator_gen_outputs,
                                   real_weights=1.0, generated_weights=1.0, scope=None,
                                   loss_collection=_LOSSES, reduction=_SUM_NZ,
                                   add_summaries=False):
    """``D(G(z)) - D(x)``, each side reduced with its weights (WGAN's critic loss)."""
    with name_scope(scope, "discriminator_wasserstein_loss",
                    (discriminator_real_outputs, discriminator_gen_outputs, real_weights,
                     generated_weights)) as scope:
        real = _to_float(discriminator_real_outputs)
        gen = _to_float(discriminator_gen_outputs)
        real.shape.assert_is_compatible_with(gen.shape)
        on_gen = compute_weighted_loss(gen, generated_weights, scope, None, reduction)
        on_real = compute_weighted_loss(real, real_weights, scope, None, reduction)
        loss = on_gen - on_real
        add_loss(loss, loss_collection)
        _summaries(add_summaries, discriminator_gen_wass_loss=on_gen,
                   discriminator_real_wass_loss=on_real, discriminator_wass_loss=loss)
    return loss


def acgan_discriminator_loss(discriminator_real_classification_logits,
                             discriminator_gen_classification_logits, one_hot_labels,
                             label_smoothing=0.0, real_weights=1.0, generated_weights=1.0,
                             scope=None, loss_collection=_LOSSES, reduction=_SUM_NZ,
                             add_summaries=False):
    """Softmax cross-entropy of the class logits on generated plus on real data (the
    real side with `label_smoothing`)."""
    with name_scope(scope, "acgan_discriminator_loss",
                    (discriminator_real_classification_logits,
                     discriminator_gen_classification_logits, one_hot_labels)) as scope:
        on_gen = _tf_losses.softmax_cross_entropy(
            one_hot_labels, discriminator_gen_classification_logits,
            weights=generated_weights, scope=scope, loss_collection=None,
            reduction=reduction)
        on_real = _tf_losses.softmax_cross_entropy(
            one_hot_labels, discriminator_real_classification_logits,
            weights=real_weights, label_smoothing=label_smoothing, scope=scope,
            loss_collection=None, reduction=reduction)
        loss = on_gen + on_real
        add_loss(loss, loss_collection)
        _summaries(add_summaries, discriminator_gen_ac_loss=on_gen,
                   discriminator_real_ac_loss=on_real, discriminator_ac_loss=loss)
    return loss


def acgan_generator_loss(discriminator_gen_classification_logits, one_hot_labels,
                         weights=1.0, scope=None, loss_collection=_LOSSES,
                         reduction=_SUM_NZ, add_summaries=False):
    """Softmax cross-entropy of the class logits on generated data."""
    with name_scope(scope, "acgan_generator_loss",
                    (discriminator_gen_classification_logits, one_hot_labels)) as scope:
        loss = _tf_losses.softmax_cross_entropy(
            one_hot_labels, discriminator_gen_classification_logits, weights=weights,
            scope=scope, loss_collection=loss_collection, reduction=reduction)
        _summaries(add_summaries, generator_ac_loss=loss)
    return loss


def wasserstein_gradient_penalty(real_data, generated_data, generator_inputs,
                                 discriminator_fn, discriminator_scope, epsilon=1e-10,
                                 target=1.0, one_sided=False, weights=1.0, scope=None,
                                 loss_collection=_LOSSES, reduction=_SUM_NZ,
                                 add_summaries=False):
    """WGAN-GP's penalty: ``(sqrt(|grad D(x_hat)|^2 + epsilon) / target - 1)^2`` at
    points ``x_hat`` drawn uniformly between real and generated examples (one draw per
    example); with `one_sided`, only norms above `target` are penalized."""
    with name_scope(scope, "wasserstein_gradient_penalty",
                    (real_data, generated_data)) as scope:
        real_data = convert_to_tensor(real_data)
        generated_data = convert_to_tensor(generated_data)
        if real_data.shape.ndims is None:
            raise ValueError("wasserstein_gradient_penalty: `real_data` can't have "
                             "unknown rank.")
        if generated_data.shape.ndims is None:
            raise ValueError("wasserstein_gradient_penalty: `generated_data` can't have "
                             "unknown rank.")
        differences = generated_data - real_data
        batch_size = differences.shape.dims[0].value or shape(differences)[0]
        alpha = random_uniform([batch_size] + [1] * (differences.shape.ndims - 1))
        interpolates = real_data + alpha * differences
        with name_scope(None):  # the discriminator's own scope, as when it was built
            with vs.variable_scope(discriminator_scope, "gpenalty_dscope",
                                   reuse=vs.AUTO_REUSE):
                disc_interpolates = discriminator_fn(interpolates, generator_inputs)
        if isinstance(disc_interpolates, tuple):  # ACGAN: (logits, class logits)
            disc_interpolates = disc_interpolates[0]
        grads = gradients(disc_interpolates, interpolates)[0]
        squares = math_reduce.reduce_sum(math_ops.square(grads),
                                         axis=list(range(1, grads.shape.ndims)))
        if isinstance(batch_size, int):
            squares.set_shape([batch_size, *squares.shape.as_list()[1:]])
        penalties = math_ops.sqrt(squares + epsilon) / target - 1.0
        if one_sided:
            penalties = math_ops.maximum(0.0, penalties)
        penalty = compute_weighted_loss(math_ops.square(penalties), weights, scope=scope,
                                        loss_collection=loss_collection,
                                        reduction=reduction)
        _summaries(add_summaries, gradient_penalty_loss=penalty)
        return penalty


def minimax_discriminator_loss(discriminator_real_outputs, discriminator_gen_outputs,
                               label_smoothing=0.25, real_weights=1.0,
                               generated_weights=1.0, scope=None, loss_collection=_LOSSES,
                               reduction=_SUM_NZ, add_summaries=False):
    """``-log(sigmoid(D(x))) - log(1 - sigmoid(D(G(z))))`` as sigmoid cross-entropies,
    the real labels smoothed by `label_smoothing`."""
    with name_scope(scope, "discriminator_minimax_loss",
                    (discriminator_real_outputs, discriminator_gen_outputs, real_weights,
                     generated_weights, label_smoothing)) as scope:
        on_real = _tf_losses.sigmoid_cross_entropy(
            ones_like(discriminator_real_outputs), discriminator_real_outputs,
            real_weights, label_smoothing, scope, loss_collection=None,
            reduction=reduction)
        on_gen = _tf_losses.sigmoid_cross_entropy(
            zeros_like(discriminator_gen_outputs), discriminator_gen_outputs,
            generated_weights, scope=scope, loss_collection=None, reduction=reduction)
        loss = on_real + on_gen
        add_loss(loss, loss_collection)
        _summaries(add_summaries, discriminator_gen_minimax_loss=on_gen,
                   discriminator_real_minimax_loss=on_real,
                   discriminator_minimax_loss=loss)
    return loss


def minimax_generator_loss(discriminator_gen_outputs, label_smoothing=0.0, weights=1.0,
                           scope=None, loss_collection=_LOSSES, reduction=_SUM_NZ,
                           add_summaries=False):
    """The negated minimax discriminator loss with every input treated as real on one
    side and generated on the other (``log(1 - sigmoid(D(G(z))))`` plus a constant)."""
    with name_scope(scope, "generator_minimax_loss") as scope:
        loss = -minimax_discriminator_loss(
            ones_like(discriminator_gen_outputs), discriminator_gen_outputs,
            label_smoothing, weights, weights, scope, loss_collection, reduction,
            add_summaries=False)
    _summaries(add_summaries, generator_minimax_loss=loss)
    return loss


def modified_discriminator_loss(discriminator_real_outputs, discriminator_gen_outputs,
                                label_smoothing=0.25, real_weights=1.0,
                                generated_weights=1.0, scope=None,
                                loss_collection=_LOSSES, reduction=_SUM_NZ,
                                add_summaries=False):
    """`minimax_discriminator_loss` under the scope ``discriminator_modified_loss``."""
    return minimax_discriminator_loss(
        discriminator_real_outputs, discriminator_gen_outputs, label_smoothing,
        real_weights, generated_weights, scope or "discriminator_modified_loss",
        loss_collection, reduction, add_summaries)


def modified_generator_loss(discriminator_gen_outputs, label_smoothing=0.0, weights=1.0,
                            scope=None, loss_collection=_LOSSES, reduction=_SUM_NZ,
                            add_summaries=False):
    """``-log(sigmoid(D(G(z))))``, the non-saturating generator loss."""
    with name_scope(scope, "generator_modified_loss",
                    [discriminator_gen_outputs]) as scope:
        loss = _tf_losses.sigmoid_cross_entropy(
            ones_like(discriminator_gen_outputs), discriminator_gen_outputs, weights,
            label_smoothing, scope, loss_collection, reduction)
        _summaries(add_summaries, generator_modified_loss=loss)
    return loss


def least_squares_generator_loss(discriminator_gen_outputs, real_label=1, weights=1.0,
                                 scope=None, loss_collection=_LOSSES, reduction=_SUM_NZ,
                                 add_summaries=False):
    """``(D(G(z)) - real_label)^2 / 2`` (LSGAN)."""
    with name_scope(scope, "lsq_generator_loss",
                    (discriminator_gen_outputs, real_label)) as scope:
        gen = _to_float(discriminator_gen_outputs)
        loss = math_ops.squared_difference(gen, real_label) / 2.0
        loss = compute_weighted_loss(loss, weights, scope, loss_collection, reduction)
    _summaries(add_summaries, generator_lsq_loss=loss)
    return loss


def least_squares_discriminator_loss(discriminator_real_outputs, discriminator_gen_outputs,
                                     real_label=1, fake_label=0, real_weights=1.0,
                                     generated_weights=1.0, scope=None,
                                     loss_collection=_LOSSES, reduction=_SUM_NZ,
                                     add_summaries=False):
    """``(D(x) - real_label)^2 / 2 + (D(G(z)) - fake_label)^2 / 2`` (LSGAN)."""
    with name_scope(scope, "lsq_discriminator_loss",
                    (discriminator_gen_outputs, real_label)) as scope:
        real = _to_float(discriminator_real_outputs)
        gen = _to_float(discriminator_gen_outputs)
        real.shape.assert_is_compatible_with(gen.shape)
        real_losses = math_ops.squared_difference(real, real_label) / 2.0
        fake_losses = math_ops.squared_difference(gen, fake_label) / 2.0
        on_real = compute_weighted_loss(real_losses, real_weights, scope, None, reduction)
        on_gen = compute_weighted_loss(fake_losses, generated_weights, scope, None,
                                       reduction)
        loss = on_real + on_gen
        add_loss(loss, loss_collection)
    _summaries(add_summaries, discriminator_gen_lsq_loss=on_gen,
               discriminator_real_lsq_loss=on_real, discriminator_lsq_loss=loss)
    return loss
