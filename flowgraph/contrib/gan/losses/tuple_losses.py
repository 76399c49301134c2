"""TFGAN's losses on a model tuple (``tfgan.losses.*``, what `gan_loss` takes): each
reads the arguments its tensor version (`losses_impl`) names after a `GANModel` field
from the model, and takes the rest as keyword arguments.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.contrib.gan.namedtuples import GANModel
>>> from flowgraph.contrib.gan.losses.tuple_losses import wasserstein_generator_loss
>>> with tf.Graph().as_default():
...     model = GANModel(*[None] * 7, tf.constant([1.0, 3.0]), *[None] * 3)
...     float(tf.Session().run(wasserstein_generator_loss(model)))
-2.0
"""

from __future__ import annotations

import functools
import inspect

from flowgraph.contrib.gan.losses import losses_impl

__all__ = list(losses_impl.__all__)


def _on_model(loss_fn):
    """`loss_fn` taking a model tuple: its parameters named like the tuple's fields come
    from the tuple; passing one of those as a keyword too is an error."""
    params = inspect.signature(loss_fn).parameters
    required = [n for n, p in params.items() if p.default is inspect.Parameter.empty]

    @functools.wraps(loss_fn)
    def on_model(gan_model, **kwargs):
        fields = gan_model._asdict()
        both = sorted(set(fields) & set(kwargs))
        if both:
            raise ValueError(f"{loss_fn.__name__}: the args {both} are present in both the "
                             "model tuple and the keyword args.")
        missing = [n for n in required if n not in fields and n not in kwargs]
        if missing:
            raise ValueError(f"{loss_fn.__name__}: `{missing[0]}` must be supplied.")
        for name in params:
            if name in fields and (name in required or fields[name] is not None):
                kwargs[name] = fields[name]
        return loss_fn(**kwargs)

    on_model.__doc__ = (f"`{loss_fn.__name__}` of `losses_impl` with its tensors taken "
                        "from a model tuple.\n\n" + (loss_fn.__doc__ or ""))
    return on_model


wasserstein_generator_loss = _on_model(losses_impl.wasserstein_generator_loss)
wasserstein_discriminator_loss = _on_model(losses_impl.wasserstein_discriminator_loss)
wasserstein_gradient_penalty = _on_model(losses_impl.wasserstein_gradient_penalty)
minimax_generator_loss = _on_model(losses_impl.minimax_generator_loss)
minimax_discriminator_loss = _on_model(losses_impl.minimax_discriminator_loss)
modified_generator_loss = _on_model(losses_impl.modified_generator_loss)
modified_discriminator_loss = _on_model(losses_impl.modified_discriminator_loss)
least_squares_generator_loss = _on_model(losses_impl.least_squares_generator_loss)
least_squares_discriminator_loss = _on_model(losses_impl.least_squares_discriminator_loss)
acgan_generator_loss = _on_model(losses_impl.acgan_generator_loss)
acgan_discriminator_loss = _on_model(losses_impl.acgan_discriminator_loss)
