"""`tf.contrib.gan` (TFGAN, TF 1.x): build a GAN with `gan_model` (or `acgan_model`),
its losses with `gan_loss` (`losses`: Wasserstein by default, minimax, modified,
least-squares, ACGAN, WGAN-GP's gradient penalty), train ops with `gan_train_ops`, and
train with `gan_train` and the sequential or joint hooks. `features` holds weight
clipping and the tensor pool, `eval` the image grids. See docs/contrib.md.

Example
-------
>>> import flowgraph as tf
>>> tf.contrib.gan.GANTrainSteps(1, 2)
GANTrainSteps(generator_train_steps=1, discriminator_train_steps=2)
"""

from flowgraph.contrib.gan import eval, features, losses
from flowgraph.contrib.gan.model import acgan_model, gan_model
from flowgraph.contrib.gan.namedtuples import (
    ACGANModel,
    GANLoss,
    GANModel,
    GANTrainOps,
    GANTrainSteps,
)
from flowgraph.contrib.gan.train import (
    RunTrainOpsHook,
    gan_loss,
    gan_train,
    gan_train_ops,
    get_joint_train_hooks,
    get_sequential_train_hooks,
)

__all__ = [
    "ACGANModel",
    "GANLoss",
    "GANModel",
    "GANTrainOps",
    "GANTrainSteps",
    "RunTrainOpsHook",
    "acgan_model",
    "eval",
    "features",
    "gan_loss",
    "gan_model",
    "gan_train",
    "gan_train_ops",
    "get_joint_train_hooks",
    "get_sequential_train_hooks",
    "losses",
]
