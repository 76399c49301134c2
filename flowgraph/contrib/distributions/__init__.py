"""`tf.contrib.distributions`: TF 1.x's contrib distributions, a superset of
`tf.distributions` (every class of it, the same objects) with the multivariate normals
(`MultivariateNormalDiag`, `MultivariateNormalTriL`, `MultivariateNormalFullCovariance`),
`TransformedDistribution`, `Independent`, `Mixture`, `MixtureSameFamily`,
`OneHotCategorical`, `Poisson`, the Gumbel-softmax `RelaxedOneHotCategorical`, the
`bijectors` module and `fill_triangular`.

Example
-------
>>> import flowgraph as tf
>>> tfd = tf.contrib.distributions
>>> tfd.Normal is tf.distributions.Normal
True
>>> log_normal = tfd.TransformedDistribution(tfd.Normal(0., 1.), tfd.bijectors.Exp())
>>> with tf.Session() as sess:
...     print(round(float(sess.run(log_normal.log_prob(1.0))), 4))
-0.9189
"""

from flowgraph.contrib.distributions import bijectors
from flowgraph.contrib.distributions.independent import Independent
from flowgraph.contrib.distributions.mixture import Mixture
from flowgraph.contrib.distributions.mixture_same_family import MixtureSameFamily
from flowgraph.contrib.distributions.mvn import (
    MultivariateNormalDiag,
    MultivariateNormalFullCovariance,
    MultivariateNormalTriL,
    TransformedDistribution,
)
from flowgraph.contrib.distributions.onehot_categorical import OneHotCategorical
from flowgraph.contrib.distributions.poisson import Poisson
from flowgraph.contrib.distributions.relaxed import (
    ExpRelaxedOneHotCategorical,
    RelaxedOneHotCategorical,
)
from flowgraph.contrib.distributions.triangular import fill_triangular
from flowgraph.distributions import *
from flowgraph.distributions import __all__ as _core_names

__all__ = [
    *_core_names,
    "ExpRelaxedOneHotCategorical",
    "Independent",
    "Mixture",
    "MixtureSameFamily",
    "MultivariateNormalDiag",
    "MultivariateNormalFullCovariance",
    "MultivariateNormalTriL",
    "OneHotCategorical",
    "Poisson",
    "RelaxedOneHotCategorical",
    "TransformedDistribution",
    "bijectors",
    "fill_triangular",
]

for _module in ("independent", "mixture", "mixture_same_family", "mvn",
                "onehot_categorical", "poisson", "relaxed", "triangular"):
    globals().pop(_module, None)
del _module
