"""`tf.contrib.distributions.bijectors`: invertible, differentiable maps with their
log-Jacobian determinants, the pieces of normalizing flows and of
`TransformedDistribution`.

A bijector acts on the last ``min_event_ndims`` axes at least (0 for the elementwise
ones, 1 for `Affine`); ``forward_log_det_jacobian(x, event_ndims)`` sums its log
determinant over the last `event_ndims` axes, as TF 1.x's bijectors take that argument
on each call. `Chain([b1, b2])` applies `b2` first; `Invert(b)` swaps directions.

Example
-------
>>> import flowgraph as tf
>>> tfb = tf.contrib.distributions.bijectors
>>> flow = tfb.Chain([tfb.Exp(), tfb.AffineScalar(shift=1.0, scale=2.0)])
>>> with tf.Session() as sess:
...     y, ldj = sess.run([flow.forward(0.5), flow.forward_log_det_jacobian(0.5, 0)])
>>> round(float(y), 4), round(float(ldj), 4)
(7.3891, 2.6931)
"""

from __future__ import annotations

import contextlib

from flowgraph.distributions import _ops as o
from flowgraph.linalg.linear_operator import LinearOperatorLowerTriangular
from flowgraph.linalg.linear_operator_basic import (
    LinearOperatorDiag,
)
from flowgraph.ops.array_gen_ops import invert_permutation
from flowgraph.ops.array_index_ops import gather
from flowgraph.ops.linalg_diag_ops import matrix_band_part
from flowgraph.ops.linalg_diag_v3 import matrix_diag_part, matrix_set_diag
from flowgraph.ops.math_ops import multiply

__all__ = ["Affine", "AffineScalar", "Bijector", "Chain", "Exp", "Identity", "Invert",
           "Permute", "Sigmoid", "Softplus"]

# (`solve_events` is shared with the multivariate normals; not part of TF's namespace)


class Bijector:
    """The base: subclasses give ``_forward``, ``_inverse`` and one of the log-det
    Jacobians (per ``min_event_ndims`` block); the public methods sum the rest."""

    def __init__(self, forward_min_event_ndims=0, is_constant_jacobian=False,
                 validate_args=False, name=None, graph_parents=None) -> None:
        self._min = int(forward_min_event_ndims)
        self._constant = bool(is_constant_jacobian)
        self._validate_args = bool(validate_args)
        self._name = name or type(self).__name__
        self._graph_parents = list(graph_parents or [])

    @property
    def name(self) -> str:
        return self._name

    @property
    def forward_min_event_ndims(self) -> int:
        return self._min

    @property
    def inverse_min_event_ndims(self) -> int:
        return self._min

    @property
    def is_constant_jacobian(self) -> bool:
        return self._constant

    @property
    def validate_args(self) -> bool:
        return self._validate_args

    @property
    def graph_parents(self) -> list:
        return list(self._graph_parents)

    @contextlib.contextmanager
    def _scope(self, name, values=None):
        with o.name_scope(self._name), o.name_scope(name, values=values) as scope:
            yield scope

    def forward(self, x, name: str = "forward"):
        with self._scope(name, [x]):
            return self._forward(o.convert_to_tensor(x, name="x"))

    def inverse(self, y, name: str = "inverse"):
        with self._scope(name, [y]):
            return self._inverse(o.convert_to_tensor(y, name="y"))

    def forward_log_det_jacobian(self, x, event_ndims, name="forward_log_det_jacobian"):
        with self._scope(name, [x]):
            x = o.convert_to_tensor(x, name="x")
            return self._reduce(self._fldj(x), x, event_ndims)

    def inverse_log_det_jacobian(self, y, event_ndims, name="inverse_log_det_jacobian"):
        with self._scope(name, [y]):
            y = o.convert_to_tensor(y, name="y")
            return self._reduce(self._ildj(y), y, event_ndims)

    def _fldj(self, x):
        return -self._ildj(self._forward(x))

    def _ildj(self, y):
        return -self._fldj(self._inverse(y))

    def _reduce(self, ldj, x, event_ndims):
        event_ndims = _static_int(event_ndims, self._name)
        if event_ndims < self._min:
            raise ValueError(f"{self._name}: event_ndims ({event_ndims}) must be at least "
                             f"forward_min_event_ndims ({self._min})")
        extra = event_ndims - self._min
        if extra == 0 and not self._constant:
            return ldj
        # the log-det of each min-event block, broadcast to them and summed over the rest
        block = o.shape(x)[:o.rank(x) - self._min] if self._min else o.shape(x)
        ldj = ldj + o.zeros(block, dtype=x.dtype.base_dtype)
        if extra == 0:
            return ldj
        return o.reduce_sum(ldj, axis=list(range(-extra, 0)))


def _static_int(value, who) -> int:
    found = o.constant_value(o.convert_to_tensor(value)) if not isinstance(value, int) \
        else value
    if found is None:
        raise NotImplementedError(f"{who}: event_ndims must be known when the graph is "
                                  f"built, got {value!r}")
    return int(found)


class Identity(Bijector):
    """``y = x``."""

    def __init__(self, validate_args=False, name="identity") -> None:
        super().__init__(0, True, validate_args, name)

    def _forward(self, x):
        return x

    def _inverse(self, y):
        return y

    def _fldj(self, x):
        return o.constant(0.0, dtype=x.dtype.base_dtype)

    def _ildj(self, y):
        return o.constant(0.0, dtype=y.dtype.base_dtype)


class Exp(Bijector):
    """``y = exp(x)``; ``log|dy/dx| = x``."""

    def __init__(self, validate_args=False, name="exp") -> None:
        super().__init__(0, False, validate_args, name)

    def _forward(self, x):
        return o.exp(x)

    def _inverse(self, y):
        return o.log(y)

    def _fldj(self, x):
        return x

    def _ildj(self, y):
        return -o.log(y)


class Softplus(Bijector):
    """``y = log(1 + exp(x))``."""

    def __init__(self, validate_args=False, name="softplus") -> None:
        super().__init__(0, False, validate_args, name)

    def _forward(self, x):
        return o.softplus(x)

    def _inverse(self, y):
        return o.log(-o.expm1(-y)) + y

    def _fldj(self, x):
        return -o.softplus(-x)

    def _ildj(self, y):
        return -o.log(-o.expm1(-y))


class Sigmoid(Bijector):
    """``y = 1 / (1 + exp(-x))``."""

    def __init__(self, validate_args=False, name="sigmoid") -> None:
        super().__init__(0, False, validate_args, name)

    def _forward(self, x):
        return o.sigmoid(x)

    def _inverse(self, y):
        return o.log(y) - o.log1p(-y)

    def _fldj(self, x):
        return -o.softplus(-x) - o.softplus(x)

    def _ildj(self, y):
        return -o.log(y) - o.log1p(-y)


class AffineScalar(Bijector):
    """``y = scale * x + shift`` with scalar (or batch) `shift` and `scale`."""

    def __init__(self, shift=None, scale=None, validate_args=False,
                 name="affine_scalar") -> None:
        with o.name_scope(name, values=[shift, scale]):
            self._shift = None if shift is None else o.convert_to_tensor(shift, name="shift")
            dtype = None if self._shift is None else self._shift.dtype.base_dtype
            self._scale_t = None if scale is None else o.convert_to_tensor(
                scale, name="scale", preferred_dtype=dtype)
        super().__init__(0, True, validate_args, name,
                         [t for t in (self._shift, self._scale_t) if t is not None])

    @property
    def shift(self):
        return self._shift

    @property
    def scale(self):
        return self._scale_t

    def _forward(self, x):
        y = x if self._scale_t is None else x * self._scale_t
        return y if self._shift is None else y + self._shift

    def _inverse(self, y):
        x = y if self._shift is None else y - self._shift
        return x if self._scale_t is None else x / self._scale_t

    def _fldj(self, x):
        if self._scale_t is None:
            return o.constant(0.0, dtype=x.dtype.base_dtype)
        return o.log(o.abs(self._scale_t))

    def _ildj(self, y):
        return -self._fldj(y)


class Affine(Bijector):
    """``y = scale @ x + shift`` on vector events, with ``scale`` made of
    ``scale_identity_multiplier * I``, ``diag(scale_diag)`` or ``scale_tril`` (summed
    when several are given; the identity when none is)."""

    def __init__(self, shift=None, scale_identity_multiplier=None, scale_diag=None,
                 scale_tril=None, scale_perturb_factor=None, scale_perturb_diag=None,
                 adjoint=False, validate_args=False, name="affine") -> None:
        if scale_perturb_factor is not None or scale_perturb_diag is not None:
            raise NotImplementedError("Affine: scale_perturb_factor/scale_perturb_diag "
                                      "(low-rank updates) are not implemented in flowgraph")
        with o.name_scope(name, values=[shift, scale_identity_multiplier, scale_diag,
                                        scale_tril]):
            def convert(value, what):
                return None if value is None else o.convert_to_tensor(value, name=what)

            self._shift = convert(shift, "shift")
            mult = convert(scale_identity_multiplier, "scale_identity_multiplier")
            diag = convert(scale_diag, "scale_diag")
            tril = convert(scale_tril, "scale_tril")
            self._scale = _scale_operator(mult, diag, tril)
        self._adjoint = bool(adjoint)
        parents = [t for t in (self._shift, mult, diag, tril) if t is not None]
        super().__init__(1, True, validate_args, name, parents)

    @property
    def shift(self):
        return self._shift

    @property
    def scale(self):
        """The scale as a `LinearOperator` (None for the identity)."""
        return self._scale

    def _forward(self, x):
        y = x if self._scale is None else self._scale.matvec(x, adjoint=self._adjoint)
        return y if self._shift is None else y + self._shift

    def _inverse(self, y):
        x = y if self._shift is None else y - self._shift
        if self._scale is None or isinstance(self._scale, _ScaledIdentityOfEvent):
            return x if self._scale is None else self._scale.solvevec(x)
        return solve_events(self._scale, x, adjoint=self._adjoint)

    def _fldj(self, x):
        if self._scale is None:
            return o.constant(0.0, dtype=x.dtype.base_dtype)
        if isinstance(self._scale, _ScaledIdentityOfEvent):  # d * log|m|
            size = o.cast(o.shape(x)[-1], x.dtype.base_dtype)
            return self._scale.log_abs_determinant() * size
        return self._scale.log_abs_determinant()

    def _ildj(self, y):
        return -self._fldj(y)


def solve_events(scale, x, adjoint=False):
    """``scale^-1 x`` for `x` of shape ``sample + batch + event`` (`scale`'s batch): the
    sample axes become the columns of one solve, as TF 1.x's affine bijectors do it."""
    batch_ndims = scale.batch_shape.ndims
    if x.shape.ndims is None or batch_ndims is None:
        raise NotImplementedError("solving for vector events needs the ranks of the value "
                                  "and of the scale's batch to be known")
    extra = x.shape.ndims - 1 - batch_ndims
    if extra <= 0:
        return scale.solvevec(x, adjoint=adjoint)
    rank = x.shape.ndims
    perm = list(range(extra, rank)) + list(range(extra))
    moved = o.transpose(x, perm)
    moved_shape = o.shape(moved)
    columns = o.reshape(moved, o.concat([moved_shape[:batch_ndims + 1], [-1]], 0))
    solved = o.reshape(scale.solve(columns, adjoint=adjoint), moved_shape)
    return o.transpose(solved, [perm.index(i) for i in range(rank)])


def _scale_operator(mult, diag, tril):
    """The one `LinearOperator` of an affine scale's parts."""
    if tril is not None:
        dense = matrix_band_part(tril, -1, 0)
        if diag is not None:
            dense = matrix_set_diag(dense, matrix_diag_part(dense) + diag)
        if mult is not None:
            dense = matrix_set_diag(dense, matrix_diag_part(dense) + mult)
        return LinearOperatorLowerTriangular(dense, is_non_singular=True)
    if diag is not None:
        if mult is not None:
            diag = diag + mult
        return LinearOperatorDiag(diag, is_non_singular=True)
    if mult is not None:
        return _ScaledIdentityOfEvent(mult)
    return None


class _ScaledIdentityOfEvent:
    """``multiplier * I`` whose size is the event's (known only from the argument)."""

    def __init__(self, multiplier):
        self._m = multiplier

    def matvec(self, x, adjoint=False):
        return multiply(self._m, x)

    def solvevec(self, x, adjoint=False):
        return x / self._m

    def log_abs_determinant(self):
        return o.log(o.abs(self._m))  # per event component: Affine scales it by the size


class Permute(Bijector):
    """Reorders the last axis: ``y[..., i] = x[..., permutation[i]]`` (volume kept)."""

    def __init__(self, permutation, validate_args=False, name=None) -> None:
        with o.name_scope(name, "permute", values=[permutation]):
            self._permutation = o.convert_to_tensor(permutation, name="permutation")
            if not self._permutation.dtype.is_integer:
                raise TypeError("permutation.dtype must be integer.")
            order = o.constant_value(self._permutation)
            if order is not None and sorted(order.tolist()) != list(range(order.size)):
                raise ValueError("Permutation over `d` must contain exactly one of each "
                                 "of `{0, 1, ..., d}`.")
        super().__init__(1, True, validate_args, name or "permute", [self._permutation])

    @property
    def permutation(self):
        return self._permutation

    def _forward(self, x):
        return gather(x, self._permutation, axis=-1)

    def _inverse(self, y):
        return gather(y, invert_permutation(self._permutation), axis=-1)

    def _fldj(self, x):
        return o.constant(0.0, dtype=x.dtype.base_dtype)

    def _ildj(self, y):
        return o.constant(0.0, dtype=y.dtype.base_dtype)


class Chain(Bijector):
    """The composition of `bijectors`: ``Chain([f, g]).forward(x) == f(g(x))``."""

    def __init__(self, bijectors=None, validate_args=False, name=None) -> None:
        self._bijectors = list(bijectors or [])
        name = name or ("identity" if not self._bijectors
                        else "chain_of_" + "_of_".join(b.name for b in self._bijectors))
        least = max([b.forward_min_event_ndims for b in self._bijectors], default=0)
        super().__init__(least, all(b.is_constant_jacobian for b in self._bijectors),
                         validate_args, name)

    @property
    def bijectors(self) -> list:
        return list(self._bijectors)

    def _forward(self, x):
        for b in reversed(self._bijectors):
            x = b.forward(x)
        return x

    def _inverse(self, y):
        for b in self._bijectors:
            y = b.inverse(y)
        return y

    def forward_log_det_jacobian(self, x, event_ndims, name="forward_log_det_jacobian"):
        with self._scope(name, [x]):
            x = o.convert_to_tensor(x, name="x")
            total = o.constant(0.0, dtype=x.dtype.base_dtype)
            for b in reversed(self._bijectors):
                total = total + b.forward_log_det_jacobian(x, event_ndims)
                x = b.forward(x)
            return total

    def inverse_log_det_jacobian(self, y, event_ndims, name="inverse_log_det_jacobian"):
        with self._scope(name, [y]):
            y = o.convert_to_tensor(y, name="y")
            total = o.constant(0.0, dtype=y.dtype.base_dtype)
            for b in self._bijectors:
                total = total + b.inverse_log_det_jacobian(y, event_ndims)
                y = b.inverse(y)
            return total


class Invert(Bijector):
    """`bijector` run backwards: its inverse is this one's forward."""

    def __init__(self, bijector, validate_args=False, name=None) -> None:
        self._bijector = bijector
        super().__init__(bijector.inverse_min_event_ndims, bijector.is_constant_jacobian,
                         validate_args, name or "_".join(["invert", bijector.name]))

    @property
    def bijector(self) -> Bijector:
        return self._bijector

    def forward(self, x, name: str = "forward"):
        return self._bijector.inverse(x, name)

    def inverse(self, y, name: str = "inverse"):
        return self._bijector.forward(y, name)

    def forward_log_det_jacobian(self, x, event_ndims, name="forward_log_det_jacobian"):
        return self._bijector.inverse_log_det_jacobian(x, event_ndims, name)

    def inverse_log_det_jacobian(self, y, event_ndims, name="inverse_log_det_jacobian"):
        return self._bijector.forward_log_det_jacobian(y, event_ndims, name)
