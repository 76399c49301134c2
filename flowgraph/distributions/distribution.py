"""`tf.distributions.Distribution`: the base class every distribution extends.

A subclass stores its parameters as tensors and implements private methods
(``_log_prob``, ``_sample_n``, ``_entropy``, ...); the public methods open the
distribution's name scope, convert arguments and fall back between related
quantities (``prob`` from ``_log_prob``, ``stddev`` from ``_variance``, ...).
Sampling asks the subclass for ``n`` draws of shape ``[n] + batch + event`` and
reshapes them to ``sample_shape + batch + event``.
"""

from __future__ import annotations

import contextlib
import hashlib

import numpy as np

from flowgraph.distributions import _ops as o
from flowgraph.distributions import kullback_leibler
from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant_value_as_shape
from flowgraph.framework.operation import Tensor
from flowgraph.framework.tensor_shape import TensorShape

__all__ = [
    "FULLY_REPARAMETERIZED",
    "NOT_REPARAMETERIZED",
    "Distribution",
    "ReparameterizationType",
    "gen_new_seed",
]


class ReparameterizationType:
    """Whether samples are differentiable functions of the parameters.

    Example
    -------
    >>> import flowgraph as tf
    >>> tfd = tf.distributions
    >>> tfd.Normal(0., 1.).reparameterization_type == tfd.FULLY_REPARAMETERIZED
    True
    """

    def __init__(self, rep_type: str):
        self._rep_type = rep_type

    def __repr__(self) -> str:
        return f"<Reparameterization Type: {self._rep_type}>"

    def __eq__(self, other) -> bool:
        return self is other

    __hash__ = object.__hash__


FULLY_REPARAMETERIZED = ReparameterizationType("FULLY_REPARAMETERIZED")
NOT_REPARAMETERIZED = ReparameterizationType("NOT_REPARAMETERIZED")


def gen_new_seed(seed, salt: str):
    """A second op seed derived from `seed` as TensorFlow derives it (the first 31 bits
    of the MD5 of ``str(seed) + salt``), so a distribution drawing twice (Beta's two
    Gamma draws, StudentT's Normal and Gamma) reproduces TensorFlow's numbers.
    None stays None."""
    if seed is None:
        return None
    digest = hashlib.md5((str(seed) + salt).encode("utf-8")).hexdigest()
    return int(digest[:8], 16) & 0x7FFFFFFF


def same_float_dtype(tensors) -> _dtypes.DType:
    """The common floating dtype of `tensors`; ValueError as TF's check when they differ."""
    first = tensors[0]
    for t in tensors[1:]:
        if t.dtype.base_dtype != first.dtype.base_dtype:
            raise ValueError(f"{t.name}, type={t.dtype}, must be of the same type "
                             f"({first.dtype}) as {first.name}.")
    if not first.dtype.is_floating:
        raise ValueError(f"Expected floating point type, got {first.dtype}.")
    return first.dtype.base_dtype


def params_dict(local_vars: dict) -> dict:
    """A constructor's ``locals()`` as the ``parameters`` dict."""
    return {k: v for k, v in local_vars.items() if k not in ("self", "__class__")}


def static_batch(*tensors) -> TensorShape:
    """The broadcast of the tensors' static shapes."""
    out = tensors[0].shape
    for t in tensors[1:]:
        out = o.broadcast_static_shape(out, t.shape)
    return out


def dynamic_batch(*tensors) -> Tensor:
    """The broadcast of the tensors' runtime shapes (int32)."""
    out = o.shape(tensors[0])
    for t in tensors[1:]:
        out = o.broadcast_dynamic_shape(out, o.shape(t))
    return out


def _static_sample_shape(sample_shape) -> TensorShape:
    if isinstance(sample_shape, Tensor):
        value = o.constant_value(sample_shape)
        if value is None:
            # as TF: a scalar count is one unknown dimension, a vector its known parts
            # (``stack([n, 4])`` is ``(?, 4)``), a vector of unknown length unknown
            if sample_shape.shape.ndims == 0:
                return TensorShape([None])
            if sample_shape.shape.ndims == 1:
                return constant_value_as_shape(sample_shape)
            return TensorShape(None)
        sample_shape = value
    return TensorShape([int(d) for d in np.asarray(sample_shape).reshape(-1)])


def _sample_shape_vector(shape_t):
    """TF's handling of a sample shape: the number of draws (a NumPy value when the
    shape is constant, else a ``Prod``) and the shape as a vector (a new constant, or a
    ``Reshape`` of a scalar tensor)."""
    static = o.constant_value(shape_t)
    n = o.reduce_prod(shape_t) if static is None else np.prod(static, dtype=np.int32)
    ndims = shape_t.shape.ndims
    if ndims is None:
        vector_shape = o.where(o.equal(o.rank(shape_t), 0), np.array([1], np.int32),
                               o.shape(shape_t))
        shape_t = o.reshape(shape_t, vector_shape)
    elif ndims == 0:
        if static is not None:
            shape_t = o.convert_to_tensor(np.array([static], np.int32), name="sample_shape")
        else:
            shape_t = o.reshape(shape_t, [1])
    elif ndims != 1:
        raise ValueError("Input is neither scalar nor vector.")
    return shape_t, n


class Distribution:
    """A batch of probability distributions with a common event shape.

    Example
    -------
    >>> import flowgraph as tf
    >>> d = tf.distributions.Normal(loc=[0., 1.], scale=1.)
    >>> d.batch_shape.as_list(), d.event_shape.as_list()
    ([2], [])
    >>> with tf.Session() as sess:
    ...     print(sess.run(d.log_prob(0.)).round(4))
    [-0.9189 -1.4189]
    """

    def __init__(self, dtype, reparameterization_type, validate_args, allow_nan_stats,
                 parameters=None, graph_parents=None, name=None):
        if not isinstance(reparameterization_type, ReparameterizationType):
            raise TypeError(f"{type(self).__name__}: reparameterization_type must be "
                            f"FULLY_REPARAMETERIZED or NOT_REPARAMETERIZED, got "
                            f"{reparameterization_type!r}.")
        self._dtype = dtype
        self._reparameterization_type = reparameterization_type
        self._validate_args = bool(validate_args)
        self._allow_nan_stats = bool(allow_nan_stats)
        self._parameters = dict(parameters or {})
        self._graph_parents = list(graph_parents or [])
        self._name = name or type(self).__name__

    # -- properties ------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._name

    @property
    def dtype(self):
        return self._dtype

    @property
    def parameters(self) -> dict:
        return dict(self._parameters)

    @property
    def reparameterization_type(self) -> ReparameterizationType:
        return self._reparameterization_type

    @property
    def allow_nan_stats(self) -> bool:
        return self._allow_nan_stats

    @property
    def validate_args(self) -> bool:
        return self._validate_args

    @property
    def batch_shape(self) -> TensorShape:
        return TensorShape(self._batch_shape())

    @property
    def event_shape(self) -> TensorShape:
        return TensorShape(self._event_shape())

    def _batch_shape(self) -> TensorShape:
        # By default the parameters (`graph_parents`) broadcast to the batch shape.
        return static_batch(*self._graph_parents) if self._graph_parents else TensorShape(None)

    def _batch_shape_tensor(self):
        return dynamic_batch(*self._graph_parents)

    def _event_shape(self) -> TensorShape:
        return TensorShape([])

    def _event_shape_tensor(self):
        return o.constant([], dtype=_dtypes.int32)

    def batch_shape_tensor(self, name: str = "batch_shape_tensor"):
        """The batch shape as a 1-D int32 tensor."""
        with self._name_scope(name):
            if self.batch_shape.is_fully_defined():
                return o.constant(self.batch_shape.as_list(), dtype=_dtypes.int32,
                                  name="batch_shape")
            return self._batch_shape_tensor()

    def event_shape_tensor(self, name: str = "event_shape_tensor"):
        """The event shape as a 1-D int32 tensor."""
        with self._name_scope(name):
            if self.event_shape.is_fully_defined():
                return o.constant(self.event_shape.as_list(), dtype=_dtypes.int32,
                                  name="event_shape")
            return self._event_shape_tensor()

    def is_scalar_batch(self, name: str = "is_scalar_batch"):
        """A bool tensor: whether the batch shape is ``[]``."""
        with self._name_scope(name):
            return self._is_scalar(self.batch_shape, self.batch_shape_tensor, name)

    def is_scalar_event(self, name: str = "is_scalar_event"):
        """A bool tensor: whether the event shape is ``[]``."""
        with self._name_scope(name):
            return self._is_scalar(self.event_shape, self.event_shape_tensor, name)

    def _is_scalar(self, static, dynamic, name):
        if static.ndims is not None:
            return o.constant(static.ndims == 0, dtype=_dtypes.bool, name=name)
        return o.equal(o.shape(dynamic())[0], 0, name=name)

    # -- scoping and conversion ---------------------------------------------------------
    @contextlib.contextmanager
    def _name_scope(self, name: str, values=None):
        with o.name_scope(self.name):
            with o.name_scope(name, values=values) as scope:
                yield scope

    def _value(self, value, name: str = "value"):
        return o.convert_to_tensor(value, name=name, preferred_dtype=self.dtype)

    def _missing(self, what: str):
        return NotImplementedError(f"{what} is not implemented: {type(self).__name__}")

    def _has(self, method: str) -> bool:
        return getattr(type(self), method, None) is not getattr(Distribution, method, None)

    # -- sampling -----------------------------------------------------------------------
    def sample(self, sample_shape=(), seed=None, name: str = "sample"):
        """Draws of shape ``sample_shape + batch_shape + event_shape``.

        Example
        -------
        >>> import flowgraph as tf
        >>> tf.distributions.Normal([0., 1.], 1.).sample([4, 3]).shape.as_list()
        [4, 3, 2]
        """
        with self._name_scope(name, values=[sample_shape]):
            static_sample = _static_sample_shape(sample_shape)
            shape_t = o.convert_to_tensor(sample_shape, dtype=_dtypes.int32,
                                          name="sample_shape")
            shape_t, n = _sample_shape_vector(shape_t)
            draws = self._sample_n(n, seed)
            final = o.concat([shape_t, o.shape(draws)[1:]], 0)
            samples = o.reshape(draws, final)
            samples.set_shape(static_sample.concatenate(self.batch_shape)
                              .concatenate(self.event_shape))
            return samples

    def _sample_n(self, n, seed=None):
        raise self._missing("sample_n")

    # -- densities ----------------------------------------------------------------------
    def log_prob(self, value, name: str = "log_prob"):
        """Log probability density/mass of `value`."""
        with self._name_scope(name, values=[value]):
            value = self._value(value)
            if self._has("_log_prob"):
                return self._log_prob(value)
            if self._has("_prob"):
                return o.log(self._prob(value))
            raise self._missing("log_prob")

    def prob(self, value, name: str = "prob"):
        """Probability density/mass of `value`."""
        with self._name_scope(name, values=[value]):
            value = self._value(value)
            if self._has("_prob"):
                return self._prob(value)
            if self._has("_log_prob"):
                return o.exp(self._log_prob(value))
            raise self._missing("prob")

    def log_cdf(self, value, name: str = "log_cdf"):
        """Log of the cumulative distribution function at `value`."""
        with self._name_scope(name, values=[value]):
            value = self._value(value)
            if self._has("_log_cdf"):
                return self._log_cdf(value)
            if self._has("_cdf"):
                return o.log(self._cdf(value))
            raise self._missing("log_cdf")

    def cdf(self, value, name: str = "cdf"):
        """Cumulative distribution function at `value`."""
        with self._name_scope(name, values=[value]):
            value = self._value(value)
            if self._has("_cdf"):
                return self._cdf(value)
            if self._has("_log_cdf"):
                return o.exp(self._log_cdf(value))
            raise self._missing("cdf")

    def log_survival_function(self, value, name: str = "log_survival_function"):
        """``log(1 - cdf(value))``."""
        with self._name_scope(name, values=[value]):
            value = self._value(value)
            if self._has("_log_survival_function"):
                return self._log_survival_function(value)
            # as TF: the public cdf (its own scope) when there is no closed form
            if self._has("_cdf") or self._has("_log_cdf"):
                return o.log1p(-self.cdf(value))
            raise self._missing("log_survival_function")

    def survival_function(self, value, name: str = "survival_function"):
        """``1 - cdf(value)``."""
        with self._name_scope(name, values=[value]):
            value = self._value(value)
            if self._has("_survival_function"):
                return self._survival_function(value)
            if self._has("_cdf") or self._has("_log_cdf"):
                return 1.0 - self.cdf(value)
            raise self._missing("survival_function")

    def quantile(self, value, name: str = "quantile"):
        """The inverse cdf at probability `value`."""
        with self._name_scope(name, values=[value]):
            value = self._value(value)
            if self._has("_quantile"):
                return self._quantile(value)
            raise self._missing("quantile")

    # -- statistics ---------------------------------------------------------------------
    def _stat(self, name: str):
        with self._name_scope(name):
            if self._has("_" + name):
                return getattr(self, "_" + name)()
            raise self._missing(name)

    def entropy(self, name: str = "entropy"):
        """Shannon entropy in nats, one per batch member."""
        with self._name_scope(name):
            if self._has("_entropy"):
                return self._entropy()
            raise self._missing("entropy")

    def mean(self, name: str = "mean"):
        """The mean."""
        with self._name_scope(name):
            if self._has("_mean"):
                return self._mean()
            raise self._missing("mean")

    def mode(self, name: str = "mode"):
        """The mode."""
        with self._name_scope(name):
            if self._has("_mode"):
                return self._mode()
            raise self._missing("mode")

    def variance(self, name: str = "variance"):
        """The variance (``stddev**2``)."""
        with self._name_scope(name):
            if self._has("_variance"):
                return self._variance()
            if self._has("_stddev"):
                return o.square(self._stddev())
            raise self._missing("variance")

    def stddev(self, name: str = "stddev"):
        """The standard deviation (``sqrt(variance)``)."""
        with self._name_scope(name):
            if self._has("_stddev"):
                return self._stddev()
            if self._has("_variance"):
                return o.sqrt(self._variance())
            raise self._missing("stddev")

    def covariance(self, name: str = "covariance"):
        """The covariance matrix of a vector event (the variance for scalar events)."""
        with self._name_scope(name):
            if self._has("_covariance"):
                return self._covariance()
            raise self._missing("covariance")

    def cross_entropy(self, other, name: str = "cross_entropy"):
        """``H[self, other] = entropy(self) + KL(self || other)``."""
        with self._name_scope(name), o.name_scope("cross_entropy"):
            return self.entropy() + kullback_leibler.kl_divergence(self, other)

    def kl_divergence(self, other, name: str = "kl_divergence"):
        """``KL(self || other)`` from the registered rule for the two types."""
        with self._name_scope(name):
            return kullback_leibler.kl_divergence(self, other)

    def copy(self, **override_parameters_kwargs):
        """The same distribution type with some constructor arguments replaced."""
        params = dict(self.parameters, **override_parameters_kwargs)
        return type(self)(**params)

    # -- helpers for subclasses ---------------------------------------------------------
    def _nan_where(self, bad, value, message: str):
        """`value` with NaN where `bad` (allow_nan_stats) or an assertion failing there."""
        if self.allow_nan_stats:
            nan = o.fill(o.shape(value), np.array(np.nan, dtype=value.dtype.as_numpy_dtype))
            return o.where(bad, nan, value)
        with o.control_dependencies([o.Assert(o.logical_not(o.reduce_any(bad)), [message])]):
            return o.identity(value)

    def __str__(self) -> str:
        return (f"tfp.distributions.{type(self).__name__}(\"{self.name}\", "
                f"batch_shape={self.batch_shape}, event_shape={self.event_shape}, "
                f"dtype={self.dtype.name})")

    def __repr__(self) -> str:
        return (f"<tfp.distributions.{type(self).__name__} '{self.name}' "
                f"batch_shape={self.batch_shape} event_shape={self.event_shape} "
                f"dtype={self.dtype.name}>")
