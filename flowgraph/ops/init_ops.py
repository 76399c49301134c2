"""Variable initializers: callables ``init(shape, dtype=None, partition_info=None)``.

An initializer is an object that stores its parameters (`get_config` returns them) and,
when called, adds the ops computing an initial value of `shape` to the graph. They are
what `tf.get_variable(..., initializer=...)` and the `tf.layers` take. Random
initializers pass their `seed` to the random op they create, so TensorFlow's seeding
rule applies: with a graph seed (`tf.set_random_seed`) or an op seed the values are
reproducible; two variables built by one seeded initializer get identical values.

The variance-scaling family draws from a distribution whose variance is
``scale / n``, where ``n`` is the kernel's fan-in, fan-out or their mean. Fans treat
shapes of rank > 2 as convolution kernels ``[..., in, out]``::

    shape [k1, k2, in, out]:  fan_in = k1*k2*in   fan_out = k1*k2*out
    shape [in, out]:          fan_in = in         fan_out = out
    shape [n]:                fan_in = fan_out = n;   shape []: 1

Example
-------
>>> import flowgraph as tf
>>> init = tf.glorot_uniform_initializer(seed=1)
>>> w = tf.get_variable("w", [30, 20], initializer=init)
>>> with tf.Session() as sess:
...     sess.run(w.initializer)
...     bool(abs(sess.run(w)).max() <= (6 / 50) ** 0.5)
True
"""

from __future__ import annotations

import math
import types
import warnings

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant
from flowgraph.ops import (
    array_shape_ops,
    linalg_basic,
    linalg_diag_ops,
    linalg_ops,
    math_ops,
    random_ops,
)

__all__ = [
    "constant_initializer",
    "glorot_normal_initializer",
    "glorot_uniform_initializer",
    "he_normal",
    "he_uniform",
    "identity_initializer",
    "initializers",
    "lecun_normal",
    "lecun_uniform",
    "ones_initializer",
    "orthogonal_initializer",
    "random_normal_initializer",
    "random_uniform_initializer",
    "truncated_normal_initializer",
    "uniform_unit_scaling_initializer",
    "variance_scaling_initializer",
    "zeros_initializer",
]

# scipy.stats.truncnorm.std(a=-2, b=2): the stddev of a unit normal cut at two sigmas.
_TRUNCATED_STD = 0.87962566103423978


def _float_dtype(dtype, who: str):
    dtype = _dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"{who}: expected floating point type, got {dtype}.")
    return dtype


def _drawn_dtype(dtype, who: str, complex_ok: bool = False):
    """The dtype an initializer is called with: as in TensorFlow, where the op it builds
    rejects a non-floating type, a TypeError (the constructor's check is a ValueError)."""
    dtype = _dtypes.as_dtype(dtype)
    if not (dtype.is_floating or (complex_ok and dtype.is_complex)):
        raise TypeError(f"{who}: the values drawn must be of a floating point type, got "
                        f"{dtype}.")
    return dtype


def _shape_list(shape) -> list[int]:
    if hasattr(shape, "as_list"):
        shape = shape.as_list()
    elif isinstance(shape, int | np.integer):
        shape = [shape]
    return [int(d) for d in shape]


def compute_fans(shape) -> tuple[int, int]:
    """``(fan_in, fan_out)`` of a weight of `shape` (rank > 2: a convolution kernel).

    Example
    -------
    >>> compute_fans([3, 5, 4, 7])
    (60, 105)
    """
    shape = _shape_list(shape)
    if not shape:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive = int(np.prod(shape[:-2]))
    return shape[-2] * receptive, shape[-1] * receptive


class Initializer:
    """Base class: subclasses store their arguments and implement `__call__`."""

    dtype = _dtypes.float32

    def __call__(self, shape, dtype=None, partition_info=None):
        raise NotImplementedError

    def get_config(self) -> dict:
        """The constructor arguments (a dict `from_config` accepts)."""
        return {}

    @classmethod
    def from_config(cls, config: dict):
        config = dict(config)
        config.pop("dtype", None)
        return cls(**config)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_config().items())
        return f"{type(self).__name__}({args})"


class Zeros(Initializer):
    """Initializer of all zeros (`tf.zeros_initializer`); any dtype.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.zeros_initializer()([2, 3], tf.int32)).tolist()
    [[0, 0, 0], [0, 0, 0]]
    """

    def __init__(self, dtype=_dtypes.float32) -> None:
        self.dtype = _dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        return array_shape_ops.zeros(shape, dtype or self.dtype)

    def get_config(self) -> dict:
        return {"dtype": self.dtype.name}


class Ones(Initializer):
    """Initializer of all ones (`tf.ones_initializer`); any dtype.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.ones_initializer()([2])).tolist()
    [1.0, 1.0]
    """

    def __init__(self, dtype=_dtypes.float32) -> None:
        self.dtype = _dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        return array_shape_ops.ones(shape, dtype or self.dtype)

    def get_config(self) -> dict:
        return {"dtype": self.dtype.name}


class Constant(Initializer):
    """Initializer to a fixed `value` (`tf.constant_initializer`).

    A scalar fills the shape; a list or array of as many elements is reshaped; a shorter
    list is padded with its last element (TF1's rule); a longer one is a ValueError.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.constant_initializer([1, 2])([2, 3])).tolist()
    [[1.0, 2.0, 2.0], [2.0, 2.0, 2.0]]
    """

    def __init__(self, value=0, dtype=_dtypes.float32, verify_shape: bool = False) -> None:
        if not np.isscalar(value) and not isinstance(value, list | tuple | np.ndarray):
            raise TypeError(
                f"constant_initializer: invalid type for initial value {value!r} of type "
                f"{type(value).__name__}; expected a Python scalar, list or tuple of values, "
                "or a NumPy array.")
        self.value = value
        self.dtype = _dtypes.as_dtype(dtype)
        self._verify_shape = verify_shape

    def __call__(self, shape, dtype=None, partition_info=None, verify_shape=None):
        dtype = _dtypes.as_dtype(dtype or self.dtype)
        verify = self._verify_shape if verify_shape is None else verify_shape
        dims = _shape_list(shape)
        size = int(np.prod(dims))
        n = int(np.size(self.value))
        if n > size:
            raise ValueError(f"constant_initializer: too many elements provided. Takes at "
                             f"most {size} (shape {dims}), but got {n}.")
        return constant(self.value, dtype=dtype, shape=dims, verify_shape=verify)

    def get_config(self) -> dict:
        value = self.value.tolist() if isinstance(self.value, np.ndarray) else self.value
        return {"value": value, "dtype": self.dtype.name, "verify_shape": self._verify_shape}


class RandomUniform(Initializer):
    """Uniform values in ``[minval, maxval)`` (`tf.random_uniform_initializer`); `maxval`
    defaults to 1 for floats.

    Example
    -------
    >>> import flowgraph as tf
    >>> v = tf.Session().run(tf.random_uniform_initializer(-2.0, 2.0, seed=3)([500]))
    >>> bool((v >= -2).all() and (v < 2).all())
    True
    """

    def __init__(self, minval=0, maxval=None, seed=None, dtype=_dtypes.float32) -> None:
        self.minval, self.maxval, self.seed = minval, maxval, seed
        self.dtype = _dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        return random_ops.random_uniform(_shape_list(shape), self.minval, self.maxval,
                                         dtype or self.dtype, seed=self.seed)

    def get_config(self) -> dict:
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed,
                "dtype": self.dtype.name}


class RandomNormal(Initializer):
    """Normal values (`tf.random_normal_initializer`).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.random_normal_initializer(1.0, 0.1, seed=2)([3, 2]).shape.as_list()
    [3, 2]
    """

    def __init__(self, mean=0.0, stddev=1.0, seed=None, dtype=_dtypes.float32) -> None:
        self.mean, self.stddev, self.seed = mean, stddev, seed
        self.dtype = _float_dtype(dtype, "random_normal_initializer")

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = _drawn_dtype(dtype or self.dtype, "random_normal_initializer")
        return random_ops.random_normal(_shape_list(shape), self.mean, self.stddev, dtype,
                                        seed=self.seed)

    def get_config(self) -> dict:
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed,
                "dtype": self.dtype.name}


class TruncatedNormal(RandomNormal):
    """Normal values redrawn beyond two `stddev` of `mean`
    (`tf.truncated_normal_initializer`).

    Example
    -------
    >>> import flowgraph as tf
    >>> v = tf.Session().run(tf.truncated_normal_initializer(0.0, 0.5, seed=2)([400]))
    >>> bool(abs(v).max() <= 1.0)
    True
    """

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = _drawn_dtype(dtype or self.dtype, "truncated_normal_initializer")
        return random_ops.truncated_normal(_shape_list(shape), self.mean, self.stddev, dtype,
                                           seed=self.seed)


class UniformUnitScaling(Initializer):
    """Deprecated TF1 initializer: uniform in ``±factor * sqrt(3 / input_size)``, where
    ``input_size`` is the product of all but the last dimension (of the whole variable
    when `partition_info` describes one shard of it).
    Use `variance_scaling_initializer(distribution='uniform')` instead.
    """

    def __init__(self, factor=1.0, seed=None, dtype=_dtypes.float32) -> None:
        self.factor, self.seed = factor, seed
        self.dtype = _float_dtype(dtype, "uniform_unit_scaling_initializer")

    def __call__(self, shape, dtype=None, partition_info=None):
        dims = _shape_list(shape)
        full = _shape_list(getattr(partition_info, "full_shape", None) or dims)
        input_size = max(int(np.prod(full[:-1])), 1) if full else 1
        limit = math.sqrt(3 / input_size) * self.factor
        return random_ops.random_uniform(dims, -limit, limit, dtype or self.dtype,
                                         seed=self.seed)

    def get_config(self) -> dict:
        return {"factor": self.factor, "seed": self.seed, "dtype": self.dtype.name}


class VarianceScaling(Initializer):
    """Values of variance ``scale / n`` (`tf.variance_scaling_initializer`).

    Parameters
    ----------
    scale : float
        Positive scaling factor.
    mode : 'fan_in', 'fan_out' or 'fan_avg'
        Which fan ``n`` is (see the module docstring).
    distribution : 'truncated_normal', 'untruncated_normal' or 'uniform'
        'normal' is TF1's name for 'truncated_normal'. The truncated normal's stddev is
        corrected so that the *truncated* distribution has variance ``scale / n``; the
        uniform one is ``±sqrt(3 * scale / n)``.

    Example
    -------
    >>> import flowgraph as tf
    >>> init = tf.variance_scaling_initializer(2.0, "fan_in", "uniform", seed=0)
    >>> v = tf.Session().run(init([50, 8]))
    >>> bool(abs(v).max() <= (3 * 2.0 / 50) ** 0.5)
    True
    """

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None,
                 dtype=_dtypes.float32) -> None:
        if scale <= 0.0:
            raise ValueError(f"`scale` must be positive float, got {scale!r}.")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"Invalid `mode` argument: {mode!r}; expected 'fan_in', "
                             "'fan_out' or 'fan_avg'.")
        distribution = str(distribution).lower()
        if distribution not in ("normal", "uniform", "truncated_normal",
                                "untruncated_normal"):
            raise ValueError(f"Invalid `distribution` argument: {distribution!r}; expected "
                             "'truncated_normal', 'untruncated_normal' or 'uniform'.")
        if distribution == "normal":
            warnings.warn("variance_scaling_initializer: distribution='normal' is TF1's "
                          "alias of 'truncated_normal'; pass 'truncated_normal' (or "
                          "'untruncated_normal').", DeprecationWarning, stacklevel=2)
        self.scale, self.mode, self.distribution, self.seed = scale, mode, distribution, seed
        self.dtype = _float_dtype(dtype, "variance_scaling_initializer")

    def _variance(self, shape, partition_info) -> float:
        full = getattr(partition_info, "full_shape", None) or shape
        fan_in, fan_out = compute_fans(full)
        n = {"fan_in": fan_in, "fan_out": fan_out,
             "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        return self.scale / max(1.0, n)

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = _dtypes.as_dtype(dtype or self.dtype)
        # As TensorFlow: a uniform draw rejects a complex type by its dtype (ValueError),
        # an integer one when its float limits are converted (TypeError).
        check = _float_dtype if self.distribution == "uniform" and not dtype.is_integer \
            else _drawn_dtype
        dtype = check(dtype, "variance_scaling_initializer")
        dims = _shape_list(shape)
        var = self._variance(dims, partition_info)
        if self.distribution in ("normal", "truncated_normal"):
            return random_ops.truncated_normal(dims, 0.0, math.sqrt(var) / _TRUNCATED_STD,
                                               dtype, seed=self.seed)
        if self.distribution == "untruncated_normal":
            return random_ops.random_normal(dims, 0.0, math.sqrt(var), dtype, seed=self.seed)
        limit = math.sqrt(3.0 * var)
        return random_ops.random_uniform(dims, -limit, limit, dtype, seed=self.seed)

    def get_config(self) -> dict:
        return {"scale": self.scale, "mode": self.mode, "distribution": self.distribution,
                "seed": self.seed, "dtype": self.dtype.name}


class GlorotUniform(VarianceScaling):
    """Xavier/Glorot uniform: ``±sqrt(6 / (fan_in + fan_out))``
    (`tf.glorot_uniform_initializer`, the default of `tf.get_variable` for floats).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.glorot_uniform_initializer().mode
    'fan_avg'
    """

    def __init__(self, seed=None, dtype=_dtypes.float32) -> None:
        super().__init__(1.0, "fan_avg", "uniform", seed, dtype)

    def get_config(self) -> dict:
        return {"seed": self.seed, "dtype": self.dtype.name}


class GlorotNormal(VarianceScaling):
    """Xavier/Glorot truncated normal of variance ``2 / (fan_in + fan_out)``
    (`tf.glorot_normal_initializer`).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.glorot_normal_initializer(seed=1)([4, 6]).shape.as_list()
    [4, 6]
    """

    def __init__(self, seed=None, dtype=_dtypes.float32) -> None:
        super().__init__(1.0, "fan_avg", "truncated_normal", seed, dtype)

    def get_config(self) -> dict:
        return {"seed": self.seed, "dtype": self.dtype.name}


class Orthogonal(Initializer):
    """A (semi-)orthogonal matrix times `gain`; shapes of rank > 2 are flattened to
    ``[prod(shape[:-1]), shape[-1]]`` (`tf.orthogonal_initializer`).

    The matrix is drawn in the graph, as TensorFlow does: a `RandomStandardNormal` of the
    tall orientation of the flattened shape, its `Qr`, the columns of ``q`` multiplied by
    the signs of ``diag(r)`` (which makes ``q`` unique), transposed back when the shape is
    wide, reshaped and scaled. Seeded values therefore equal TensorFlow's, and each run
    of the variable's initializer draws a new matrix.

    Example
    -------
    >>> import flowgraph as tf
    >>> q = tf.Session().run(tf.orthogonal_initializer(seed=1)([6, 4]))
    >>> bool(abs(q.T @ q - np.eye(4)).max() < 1e-5)
    True
    """

    def __init__(self, gain=1.0, seed=None, dtype=_dtypes.float32) -> None:
        self.gain, self.seed = gain, seed
        self.dtype = _float_dtype(dtype, "orthogonal_initializer")

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = _drawn_dtype(dtype or self.dtype, "orthogonal_initializer")
        dims = _shape_list(shape)
        if len(dims) < 2:
            raise ValueError("orthogonal_initializer: the tensor to initialize, specified by "
                             "argument `shape` must be at least two-dimensional. Received "
                             f"shape={dims}")
        rows, cols = int(np.prod(dims[:-1])), dims[-1]
        wide = rows < cols
        draw = random_ops.random_normal([cols, rows] if wide else [rows, cols], dtype=dtype,
                                        seed=self.seed)
        q, r = linalg_ops.qr(draw, full_matrices=False)
        q = q * math_ops.sign(linalg_diag_ops.diag_part(r))
        if wide:
            q = linalg_basic.matrix_transpose(q)
        return self.gain * array_shape_ops.reshape(q, dims)

    def get_config(self) -> dict:
        return {"gain": self.gain, "seed": self.seed, "dtype": self.dtype.name}


class Identity(Initializer):
    """`gain` times the identity matrix (2-D shapes only; `tf.initializers.identity`).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.initializers.identity()([2, 3])).tolist()
    [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    """

    def __init__(self, gain=1.0, dtype=_dtypes.float32) -> None:
        self.gain = gain
        self.dtype = _float_dtype(dtype, "identity_initializer")

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = _drawn_dtype(dtype or self.dtype, "identity_initializer", True)
        dims = _shape_list(shape)
        if len(dims) != 2:
            raise ValueError(f"identity_initializer is only for 2-D matrices, got shape "
                             f"{dims}.")
        return constant(self.gain * np.eye(*dims), dtype=dtype)

    def get_config(self) -> dict:
        return {"gain": self.gain, "dtype": self.dtype.name}


# TF1 exposes the classes under snake_case names.
zeros_initializer = Zeros
ones_initializer = Ones
constant_initializer = Constant
random_uniform_initializer = RandomUniform
random_normal_initializer = RandomNormal
truncated_normal_initializer = TruncatedNormal
uniform_unit_scaling_initializer = UniformUnitScaling
variance_scaling_initializer = VarianceScaling
glorot_uniform_initializer = GlorotUniform
glorot_normal_initializer = GlorotNormal
orthogonal_initializer = Orthogonal
identity_initializer = Identity


def he_normal(seed=None) -> VarianceScaling:
    """He truncated normal: variance ``2 / fan_in``.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.initializers.he_normal().get_config()["scale"]
    2.0
    """
    return VarianceScaling(2.0, "fan_in", "truncated_normal", seed)


def he_uniform(seed=None) -> VarianceScaling:
    """He uniform: ``±sqrt(6 / fan_in)``."""
    return VarianceScaling(2.0, "fan_in", "uniform", seed)


def lecun_normal(seed=None) -> VarianceScaling:
    """LeCun truncated normal: variance ``1 / fan_in``."""
    return VarianceScaling(1.0, "fan_in", "truncated_normal", seed)


def lecun_uniform(seed=None) -> VarianceScaling:
    """LeCun uniform: ``±sqrt(3 / fan_in)``."""
    return VarianceScaling(1.0, "fan_in", "uniform", seed)


def xavier_initializer(uniform: bool = True, seed=None, dtype=_dtypes.float32):
    """TF1's ``tf.contrib.layers.xavier_initializer``: Glorot uniform or (truncated)
    normal.

    Example
    -------
    >>> xavier_initializer().get_config()["distribution"]
    'uniform'
    """
    return VarianceScaling(1.0, "fan_avg", "uniform" if uniform else "truncated_normal",
                           seed, dtype)


def contrib_variance_scaling_initializer(factor=2.0, mode="FAN_IN", uniform=False, seed=None,
                                         dtype=_dtypes.float32):
    """TF1's ``tf.contrib.layers.variance_scaling_initializer`` (a different signature
    and normalisation from the core one): uniform in ``±sqrt(3 * factor / n)`` or a
    truncated normal of stddev ``sqrt(1.3 * factor / n)``, ``n`` by `mode`
    ('FAN_IN', 'FAN_OUT', 'FAN_AVG').

    Example
    -------
    >>> contrib_variance_scaling_initializer(uniform=True).get_config()["scale"]
    2.0
    """
    if mode not in ("FAN_IN", "FAN_OUT", "FAN_AVG"):
        raise TypeError(f"Unknown mode {mode} [FAN_IN, FAN_OUT, FAN_AVG]")
    if uniform:
        return VarianceScaling(float(factor), mode.lower(), "uniform", seed, dtype)
    # The contrib version's truncated normal has stddev sqrt(1.3 * factor / n) before
    # truncation, i.e. variance 1.3 * factor * 0.8796^2 / n after it.
    return VarianceScaling(1.3 * factor * _TRUNCATED_STD ** 2, mode.lower(),
                           "truncated_normal", seed, dtype)


def _initializers_namespace() -> types.ModuleType:
    mod = types.ModuleType("flowgraph.initializers",
                           "The `tf.initializers` namespace: TF1's short initializer names.")
    from flowgraph.ops import variables
    from flowgraph.ops.lookup_compat import tables_initializer

    names = {
        "zeros": Zeros, "ones": Ones, "constant": Constant,
        "random_uniform": RandomUniform, "random_normal": RandomNormal,
        "truncated_normal": TruncatedNormal, "uniform_unit_scaling": UniformUnitScaling,
        "variance_scaling": VarianceScaling, "glorot_uniform": GlorotUniform,
        "glorot_normal": GlorotNormal, "orthogonal": Orthogonal, "identity": Identity,
        "he_normal": he_normal, "he_uniform": he_uniform, "lecun_normal": lecun_normal,
        "lecun_uniform": lecun_uniform,
        "global_variables": variables.global_variables_initializer,
        "local_variables": variables.local_variables_initializer,
        "variables": variables.variables_initializer,
        "tables_initializer": tables_initializer,
    }
    for key, value in names.items():
        setattr(mod, key, value)
    mod.__all__ = sorted(names)
    return mod


initializers = _initializers_namespace()
