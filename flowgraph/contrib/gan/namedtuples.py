"""The named tuples TFGAN's steps hand to each other (TF 1.x's field names and order).

Example
-------
>>> from flowgraph.contrib.gan.namedtuples import GANTrainOps, GANTrainSteps
>>> GANTrainOps("g", "d", "inc").train_hooks
()
>>> GANTrainSteps(1, 5).discriminator_train_steps
5
"""

from __future__ import annotations

import collections

__all__ = ["ACGANModel", "GANLoss", "GANModel", "GANTrainOps", "GANTrainSteps"]


class GANModel(collections.namedtuple("GANModel", (
        "generator_inputs", "generated_data", "generator_variables", "generator_scope",
        "generator_fn", "real_data", "discriminator_real_outputs",
        "discriminator_gen_outputs", "discriminator_variables", "discriminator_scope",
        "discriminator_fn"))):
    """What `gan_model` builds: both networks' outputs, variables and scopes."""


class ACGANModel(collections.namedtuple("ACGANModel", (
        *GANModel._fields, "one_hot_labels", "discriminator_real_classification_logits",
        "discriminator_gen_classification_logits"))):
    """A `GANModel` whose discriminator also classifies its input (`acgan_model`)."""


class GANLoss(collections.namedtuple("GANLoss", ("generator_loss", "discriminator_loss"))):
    """The generator's and the discriminator's scalar losses."""


class GANTrainOps(collections.namedtuple("GANTrainOps", (
        "generator_train_op", "discriminator_train_op", "global_step_inc_op",
        "train_hooks"))):
    """One train op per network, the global step's increment and extra hooks."""

    def __new__(cls, generator_train_op, discriminator_train_op, global_step_inc_op,
                train_hooks=()):
        return super().__new__(cls, generator_train_op, discriminator_train_op,
                               global_step_inc_op, train_hooks)


class GANTrainSteps(collections.namedtuple("GANTrainSteps", (
        "generator_train_steps", "discriminator_train_steps"))):
    """How many generator and discriminator updates one GAN step makes."""
