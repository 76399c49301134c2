"""`tf.distributions`: probability distributions built from the op library.

Every quantity (``log_prob``, ``entropy``, ``kl_divergence``, reparameterized
``sample``) is a graph of ordinary ops, so gradients flow to the parameters.

Example
-------
>>> import flowgraph as tf
>>> q = tf.distributions.Normal(loc=0.5, scale=2.0)
>>> kl = tf.distributions.kl_divergence(q, tf.distributions.Normal(0., 1.))
>>> with tf.Session() as sess:
...     print(round(float(sess.run(kl)), 4))
0.9319
"""

from flowgraph.distributions.beta import Beta, Dirichlet
from flowgraph.distributions.categorical import Bernoulli, Categorical
from flowgraph.distributions.distribution import (
    FULLY_REPARAMETERIZED,
    NOT_REPARAMETERIZED,
    Distribution,
    ReparameterizationType,
)
from flowgraph.distributions.gamma import Exponential, Gamma
from flowgraph.distributions.kullback_leibler import RegisterKL, kl_divergence
from flowgraph.distributions.multinomial import DirichletMultinomial, Multinomial
from flowgraph.distributions.normal import Laplace, Normal
from flowgraph.distributions.uniform import StudentT, Uniform

__all__ = [
    "FULLY_REPARAMETERIZED",
    "NOT_REPARAMETERIZED",
    "Bernoulli",
    "Beta",
    "Categorical",
    "Dirichlet",
    "DirichletMultinomial",
    "Distribution",
    "Exponential",
    "Gamma",
    "Laplace",
    "Multinomial",
    "Normal",
    "RegisterKL",
    "ReparameterizationType",
    "StudentT",
    "Uniform",
    "kl_divergence",
]

# the package's modules are not part of TF's `tf.distributions` namespace
for _module in ("_ops", "beta", "categorical", "distribution", "gamma", "kullback_leibler",
                "multinomial", "normal", "uniform"):
    globals().pop(_module, None)
del _module
