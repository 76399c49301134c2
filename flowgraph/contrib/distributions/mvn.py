"""`tf.contrib.distributions`' multivariate normals and `TransformedDistribution`.

`TransformedDistribution(distribution, bijector, batch_shape=, event_shape=)` is the law
of ``bijector.forward(x)`` for ``x ~ distribution``; its density is the base density at
``bijector.inverse(y)`` plus the inverse log-Jacobian. Given an `event_shape`, a scalar
base distribution is drawn that many times independently (its log-density summed).

The multivariate normals are TF 1.x's: ``loc + scale @ eps`` with ``eps`` a standard
normal drawn as one flat ``random_normal`` (so a seeded draw gives TensorFlow's
numbers), `scale` a `LinearOperator` (diagonal, lower-triangular, or the Cholesky
factor of a full covariance).

Example
-------
>>> import flowgraph as tf
>>> mvn = tf.contrib.distributions.MultivariateNormalDiag(loc=[1., -1.], scale_diag=[1., 2.])
>>> with tf.Session() as sess:
...     print(round(float(sess.run(mvn.log_prob([1., -1.]))), 4))
-2.531
"""

from __future__ import annotations

import math

from flowgraph.contrib.distributions.bijectors import Bijector, Identity, solve_events
from flowgraph.distributions import _ops as o
from flowgraph.distributions.distribution import FULLY_REPARAMETERIZED, Distribution
from flowgraph.distributions.kullback_leibler import RegisterKL
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.linalg.linear_operator import LinearOperatorLowerTriangular
from flowgraph.linalg.linear_operator_basic import (
    LinearOperatorDiag,
    LinearOperatorScaledIdentity,
)
from flowgraph.ops.linalg_diag_ops import matrix_band_part
from flowgraph.ops.linalg_ops import cholesky, matrix_triangular_solve
from flowgraph.ops.math_ops import matmul

__all__ = ["MultivariateNormalDiag", "MultivariateNormalFullCovariance",
           "MultivariateNormalTriL", "TransformedDistribution"]


class TransformedDistribution(Distribution):
    """The distribution of ``bijector.forward(x)``, ``x ~ distribution``."""

    def __init__(self, distribution, bijector=None, batch_shape=None, event_shape=None,
                 validate_args=False, name=None) -> None:
        bijector = bijector if bijector is not None else Identity()
        if not isinstance(bijector, Bijector):
            raise TypeError(f"TransformedDistribution: bijector must be a Bijector, got "
                            f"{bijector!r}")
        self._distribution, self._bijector = distribution, bijector
        self._override_batch = None if batch_shape is None else TensorShape(batch_shape)
        self._override_event = None if event_shape is None else TensorShape(event_shape)
        if self._override_event is not None and distribution.event_shape.ndims != 0:
            raise ValueError("TransformedDistribution: event_shape may be overridden only "
                             "for a scalar base distribution")
        with o.name_scope(name or (bijector.name + distribution.name)) as name:
            pass  # as TF: the instance's scope, uniquified when the name is reused
        super().__init__(distribution.dtype, distribution.reparameterization_type,
                         validate_args, distribution.allow_nan_stats,
                         {"distribution": distribution, "bijector": bijector,
                          "batch_shape": batch_shape, "event_shape": event_shape},
                         list(getattr(distribution, "_graph_parents", [])), name)

    @property
    def distribution(self):
        return self._distribution

    @property
    def bijector(self) -> Bijector:
        return self._bijector

    def _batch_shape(self):
        if self._override_batch is not None:
            return self._override_batch
        return self._distribution.batch_shape

    def _batch_shape_tensor(self):
        return self._distribution.batch_shape_tensor()

    def _event_shape(self):
        if self._override_event is not None:
            return self._override_event
        return self._distribution.event_shape

    def _event_shape_tensor(self):
        return self._distribution.event_shape_tensor()

    def _event_ndims(self) -> int:
        ndims = self.event_shape.ndims
        if ndims is None:
            raise NotImplementedError(f"{self.name}: the event rank must be known")
        return ndims

    def _sample_n(self, n, seed=None):
        extra = []
        if self._override_batch is not None:
            extra.append(o.constant(self._override_batch.as_list(), dtype="int32"))
        if self._override_event is not None:
            extra.append(o.constant(self._override_event.as_list(), dtype="int32"))
        shape = o.concat([[n], *extra], 0) if extra else [n]
        x = self._distribution.sample(shape if extra else n, seed=seed)
        return self._bijector.forward(x)

    def _log_prob(self, y):
        x = self._bijector.inverse(y)
        ildj = self._bijector.inverse_log_det_jacobian(y, event_ndims=self._event_ndims())
        lp = self._distribution.log_prob(x)
        if self._override_event is not None and self._override_event.ndims:
            lp = o.reduce_sum(lp, axis=list(range(-self._override_event.ndims, 0)))
        return lp + ildj


class _MVNLinearOperator(Distribution):
    """``loc + scale @ eps``, `scale` a `LinearOperator`, `eps` standard normal."""

    def __init__(self, loc, scale, validate_args, allow_nan_stats, name, parameters):
        self._loc, self._scale = loc, scale
        dtype = (loc if loc is not None else scale).dtype
        dtype = getattr(dtype, "base_dtype", dtype)
        parents = [t for t in ([loc] if loc is not None else []) + list(scale.graph_parents)]
        super().__init__(dtype, FULLY_REPARAMETERIZED, validate_args, allow_nan_stats,
                         parameters, parents, name)

    @property
    def loc(self):
        return self._loc

    @property
    def scale(self):
        """The scale as a `LinearOperator`."""
        return self._scale

    def _batch_shape(self):
        scale = self._scale.batch_shape
        if self._loc is None:
            return scale
        return o.broadcast_static_shape(self._loc.shape[:-1], scale)

    def _batch_shape_tensor(self):
        scale = self._scale.batch_shape_tensor()
        if self._loc is None:
            return scale
        return o.broadcast_dynamic_shape(o.shape(self._loc)[:-1], scale)

    def _event_shape(self):
        return TensorShape([self._scale.range_dimension])

    def _event_shape_tensor(self):
        return o.reshape(self._scale.range_dimension_tensor(), [1])

    def _sample_n(self, n, seed=None):
        shape = o.concat([[n], self.batch_shape_tensor(), self.event_shape_tensor()], 0)
        flat = o.random_normal(o.reshape(o.reduce_prod(shape), [1]), dtype=self.dtype,
                               seed=seed)
        eps = o.reshape(flat, shape)
        y = self._scale.matvec(eps)
        return y if self._loc is None else y + self._loc

    def _whiten(self, x):
        """``scale^-1 (x - loc)`` for `x` of shape ``sample + batch + event``."""
        x = x if self._loc is None else x - self._loc
        batch_ndims = self.batch_shape.ndims
        if x.shape.ndims is not None and batch_ndims is not None \
                and x.shape.ndims - 1 < batch_ndims:  # one value for every batch member
            x = x + o.zeros(o.concat([self.batch_shape_tensor(), self.event_shape_tensor()],
                                     0), dtype=self.dtype)
        return solve_events(self._scale, x)

    def _log_prob(self, x):
        z = self._whiten(x)
        d = o.cast(self.event_shape_tensor()[0], self.dtype)
        return (-0.5 * o.reduce_sum(o.square(z), axis=-1) - 0.5 * d * math.log(2.0 * math.pi)
                - self._scale.log_abs_determinant())

    def _entropy(self):
        d = o.cast(self.event_shape_tensor()[0], self.dtype)
        h = 0.5 * d * (1.0 + math.log(2.0 * math.pi)) + self._scale.log_abs_determinant()
        return h + o.zeros(self.batch_shape_tensor(), dtype=self.dtype)

    def _mean(self):
        zeros = o.zeros(o.concat([self.batch_shape_tensor(), self.event_shape_tensor()], 0),
                        dtype=self.dtype)
        return zeros if self._loc is None else self._loc + zeros

    _mode = _mean

    def _covariance(self):
        dense = self._scale.to_dense()
        return matmul(dense, dense, adjoint_b=True)

    def _variance(self):
        dense = self._scale.to_dense()
        return o.reduce_sum(o.square(dense), axis=-1)


class MultivariateNormalDiag(_MVNLinearOperator):
    """A normal with diagonal scale ``diag(scale_diag) + scale_identity_multiplier``."""

    def __init__(self, loc=None, scale_diag=None, scale_identity_multiplier=None,
                 validate_args=False, allow_nan_stats=True, name="MultivariateNormalDiag"):
        params = {"loc": loc, "scale_diag": scale_diag,
                  "scale_identity_multiplier": scale_identity_multiplier,
                  "validate_args": validate_args, "allow_nan_stats": allow_nan_stats,
                  "name": name}
        with o.name_scope(name, values=[loc, scale_diag, scale_identity_multiplier]) as scope:
            loc = None if loc is None else o.convert_to_tensor(loc, name="loc")
            diag = None if scale_diag is None else o.convert_to_tensor(scale_diag,
                                                                       name="scale_diag")
            mult = None if scale_identity_multiplier is None else o.convert_to_tensor(
                scale_identity_multiplier, name="scale_identity_multiplier")
            if diag is not None:
                scale = LinearOperatorDiag(diag if mult is None else diag + mult,
                                           is_non_singular=True, is_positive_definite=None)
            else:
                if loc is None or loc.shape[-1].value is None:
                    raise ValueError("MultivariateNormalDiag: without scale_diag, loc must "
                                     "have a known last dimension")
                scale = LinearOperatorScaledIdentity(
                    loc.shape[-1].value,
                    o.constant(1.0, dtype=loc.dtype) if mult is None else mult,
                    is_non_singular=True)
        # as TF: the instance's scope (methods build under "MultivariateNormalDiag/...")
        super().__init__(loc, scale, validate_args, allow_nan_stats, scope, params)

    def _stddev(self):
        if isinstance(self._scale, LinearOperatorDiag):
            return o.abs(self._scale.diag) + o.zeros_like(self._mean())
        return o.abs(self._scale.multiplier)[..., None] + o.zeros_like(self._mean())


class MultivariateNormalTriL(_MVNLinearOperator):
    """A normal with lower-triangular scale `scale_tril` (covariance
    ``scale_tril @ scale_tril^T``); the upper triangle is ignored."""

    def __init__(self, loc=None, scale_tril=None, validate_args=False, allow_nan_stats=True,
                 name="MultivariateNormalTriL"):
        params = {"loc": loc, "scale_tril": scale_tril, "validate_args": validate_args,
                  "allow_nan_stats": allow_nan_stats, "name": name}
        if scale_tril is None:
            raise ValueError("MultivariateNormalTriL: scale_tril is required here")
        with o.name_scope(name, values=[loc, scale_tril]) as scope:
            loc = None if loc is None else o.convert_to_tensor(loc, name="loc")
            tril = matrix_band_part(o.convert_to_tensor(scale_tril, name="scale_tril"), -1, 0)
            scale = LinearOperatorLowerTriangular(tril, is_non_singular=True)
        super().__init__(loc, scale, validate_args, allow_nan_stats, scope, params)


class MultivariateNormalFullCovariance(MultivariateNormalTriL):
    """A normal given its covariance matrix (scale: its Cholesky factor)."""

    def __init__(self, loc=None, covariance_matrix=None, validate_args=False,
                 allow_nan_stats=True, name="MultivariateNormalFullCovariance"):
        with o.name_scope(name, values=[loc, covariance_matrix]) as scope:
            chol = cholesky(o.convert_to_tensor(covariance_matrix, name="covariance_matrix"))
        super().__init__(loc, chol, validate_args, allow_nan_stats, scope)
        self._parameters = {"loc": loc, "covariance_matrix": covariance_matrix,
                            "validate_args": validate_args,
                            "allow_nan_stats": allow_nan_stats, "name": name}


@RegisterKL(_MVNLinearOperator, _MVNLinearOperator)
def _kl_mvn_mvn(a, b, name=None):
    """``KL(a || b)`` of two multivariate normals through their (triangular or
    diagonal) scales: ``(|Lb^-1 La|_F^2 + |Lb^-1 (mb - ma)|^2 - d) / 2 + log|Lb|/|La|``."""
    with o.name_scope(name, "kl_mvn_mvn"):
        da, db = a.scale.to_dense(), b.scale.to_dense()
        both = o.zeros_like(da) + o.zeros_like(db)  # the scales broadcast to one batch
        b_inv_a = matrix_triangular_solve(db + both, da + both)
        diff = b.mean() - a.mean()
        db_diff = db + o.zeros(o.concat([o.shape(diff)[:-1], o.shape(db)[-2:]], 0),
                               dtype=db.dtype)
        z = matrix_triangular_solve(db_diff, o.expand_dims(diff, -1))
        d = o.cast(a.event_shape_tensor()[0], a.dtype)
        return (0.5 * (o.reduce_sum(o.square(b_inv_a), axis=[-2, -1])
                       + o.reduce_sum(o.square(z), axis=[-2, -1]) - d)
                + b.scale.log_abs_determinant() - a.scale.log_abs_determinant())
