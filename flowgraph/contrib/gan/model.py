"""`gan_model` and `acgan_model`: build the generator once and the discriminator twice
(generated, then real data, sharing its variables), as TF 1.x's TFGAN does.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.contrib.gan.model import gan_model
>>> with tf.Graph().as_default():
...     m = gan_model(lambda z: tf.layers.dense(z, 2), lambda x, _: tf.layers.dense(x, 1),
...                   real_data=tf.zeros([4, 2]), generator_inputs=tf.zeros([4, 3]))
...     [v.op.name for v in m.discriminator_variables]
['Discriminator/dense/kernel', 'Discriminator/dense/bias']
"""

from __future__ import annotations

from flowgraph.contrib.framework.variables import get_trainable_variables
from flowgraph.contrib.gan.namedtuples import ACGANModel, GANModel
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.ops import variable_scope as vs

__all__ = ["acgan_model", "gan_model"]


def _to_tensors(value):
    """A tensor, or a list or dict of them, converted to tensors."""
    if isinstance(value, (list, tuple)):
        return [convert_to_tensor(x) for x in value]
    if isinstance(value, dict):
        return {k: convert_to_tensor(v) for k, v in value.items()}
    return convert_to_tensor(value)


def _check_shapes(fn: str, generated_data, real_data) -> None:
    if not generated_data.shape.is_compatible_with(real_data.shape):
        raise ValueError(f"{fn}: Generator output shape ({generated_data.shape}) must be "
                         f"the same shape as real data ({real_data.shape}).")


def gan_model(generator_fn, discriminator_fn, real_data, generator_inputs,
              generator_scope="Generator", discriminator_scope="Discriminator",
              check_shapes=True) -> GANModel:
    """A `GANModel`: ``generator_fn(generator_inputs)`` under `generator_scope`, and
    ``discriminator_fn(data, generator_inputs)`` on the generated and then (reusing the
    variables) the real data under `discriminator_scope`."""
    with vs.variable_scope(generator_scope) as gen_scope:
        generator_inputs = _to_tensors(generator_inputs)
        generated_data = generator_fn(generator_inputs)
    with vs.variable_scope(discriminator_scope) as dis_scope:
        dis_gen_outputs = discriminator_fn(generated_data, generator_inputs)
    with vs.variable_scope(dis_scope, reuse=True):
        real_data = _to_tensors(real_data)
        dis_real_outputs = discriminator_fn(real_data, generator_inputs)
    if check_shapes:
        _check_shapes("gan_model", generated_data, real_data)
    return GANModel(generator_inputs, generated_data, get_trainable_variables(gen_scope),
                    gen_scope, generator_fn, real_data, dis_real_outputs, dis_gen_outputs,
                    get_trainable_variables(dis_scope), dis_scope, discriminator_fn)


def _pair(outputs):
    try:
        logits, class_logits = outputs
    except (TypeError, ValueError):
        raise TypeError("acgan_model: A discriminator function for ACGAN must output a "
                        "tuple consisting of (discrimination logits, classification "
                        "logits).") from None
    return logits, class_logits


def acgan_model(generator_fn, discriminator_fn, real_data, generator_inputs, one_hot_labels,
                generator_scope="Generator", discriminator_scope="Discriminator",
                check_shapes=True) -> ACGANModel:
    """An `ACGANModel`: `gan_model` with a discriminator returning ``(logits,
    class_logits)``; its two calls run under the name scopes ``<scope>/generated/`` and
    ``<scope>/real/``."""
    with vs.variable_scope(generator_scope) as gen_scope:
        generator_inputs = _to_tensors(generator_inputs)
        generated_data = generator_fn(generator_inputs)
    with vs.variable_scope(discriminator_scope) as dis_scope:
        with name_scope(dis_scope.name + "/generated/"):
            dis_gen, gen_class = _pair(discriminator_fn(generated_data, generator_inputs))
    with vs.variable_scope(dis_scope, reuse=True):
        with name_scope(dis_scope.name + "/real/"):
            real_data = convert_to_tensor(real_data)
            dis_real, real_class = _pair(discriminator_fn(real_data, generator_inputs))
    if check_shapes:
        _check_shapes("acgan_model", generated_data, real_data)
    return ACGANModel(generator_inputs, generated_data, get_trainable_variables(gen_scope),
                      gen_scope, generator_fn, real_data, dis_real, dis_gen,
                      get_trainable_variables(dis_scope), dis_scope, discriminator_fn,
                      one_hot_labels, real_class, gen_class)
