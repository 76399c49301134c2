"""`tf.contrib.gan.losses`: the GAN losses on a model tuple; `wargs` holds the same
losses on tensors.

Example
-------
>>> import flowgraph as tf
>>> L = tf.contrib.gan.losses
>>> with tf.Graph().as_default():
...     loss = L.wargs.wasserstein_discriminator_loss(tf.constant([2.0]), tf.constant([0.5]))
...     float(tf.Session().run(loss))
-1.5
"""

from flowgraph.contrib.gan.losses import losses_impl as wargs
from flowgraph.contrib.gan.losses.tuple_losses import (
    acgan_discriminator_loss,
    acgan_generator_loss,
    least_squares_discriminator_loss,
    least_squares_generator_loss,
    minimax_discriminator_loss,
    minimax_generator_loss,
    modified_discriminator_loss,
    modified_generator_loss,
    wasserstein_discriminator_loss,
    wasserstein_generator_loss,
    wasserstein_gradient_penalty,
)

__all__ = [
    "acgan_discriminator_loss",
    "acgan_generator_loss",
    "least_squares_discriminator_loss",
    "least_squares_generator_loss",
    "minimax_discriminator_loss",
    "minimax_generator_loss",
    "modified_discriminator_loss",
    "modified_generator_loss",
    "wargs",
    "wasserstein_discriminator_loss",
    "wasserstein_generator_loss",
    "wasserstein_gradient_penalty",
]
