"""`tf.layers.batch_normalization`: normalize with batch statistics while training and
with moving averages otherwise.

Variables (under the layer's scope, ``batch_normalization``, ``batch_normalization_1``,
...): trainable ``gamma`` (if `scale`) and ``beta`` (if `center`); non-trainable
``moving_mean`` and ``moving_variance``. While training, each call adds two update ops
(``AssignMovingAvg``, ``AssignMovingAvg_1``) to ``GraphKeys.UPDATE_OPS``::

    moving -= (moving - batch_statistic) * (1 - momentum)

They are not run by the layer's output; run them with the train op::

    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        train_op = optimizer.minimize(loss)

As in TensorFlow 1.x, a 4-D input normalized over axis 1 or 3 (float16/float32, fused
not False) builds one ``FusedBatchNormV3`` op (``batch_normalization/FusedBatchNormV3``;
with `training` a tensor, one per branch of ``batch_normalization/cond``): the moving
variance moves towards its unbiased (Bessel-corrected, ``n / (n - 1)``) batch variance
output. Other inputs build ``batchnorm/add_1`` from elementwise ops and use the biased
one. The output always uses the biased batch variance. With `training` a tensor, the
update uses ``momentum = 1`` (no change) when it is False.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     x = tf.placeholder(tf.float32, [None, 3])
...     y = tf.layers.batch_normalization(x, training=True)
...     print(len(tf.get_collection(tf.GraphKeys.UPDATE_OPS)),
...           [v.name for v in tf.trainable_variables()])
2 ['batch_normalization/gamma:0', 'batch_normalization/beta:0']
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import control_dependencies, get_default_graph, name_scope
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.layers.core import Layer, smart_cond, static_bool
from flowgraph.layers.layer_api import serialize_initializer
from flowgraph.ops import (
    array_identity_ops,
    array_join_ops,
    array_shape_ops,
    init_ops,
    math_ops,
    math_reduce,
    nn_norm_ops,
    nn_ops,
    state_ops,
)

__all__ = ["BatchNormalization", "batch_normalization"]


def _read(variable):
    """A variable's value; a partitioned one (gamma or beta under a partitioning
    scope) is its parts concatenated."""
    if hasattr(variable, "value"):
        return variable.value()
    return convert_to_tensor(variable)


class BatchNormalization(Layer):
    """Batch normalization layer; see `batch_normalization`."""

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center: bool = True,
                 scale: bool = True, beta_initializer=None, gamma_initializer=None,
                 moving_mean_initializer=None, moving_variance_initializer=None,
                 beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                 gamma_constraint=None, renorm: bool = False, renorm_clipping=None,
                 renorm_momentum=0.99, fused=None, trainable: bool = True,
                 virtual_batch_size=None, adjustment=None, name=None, **kwargs) -> None:
        super().__init__(trainable=trainable, name=name, **kwargs)
        if adjustment is not None:
            raise NotImplementedError(
                "batch_normalization: adjustment is not supported by flowgraph; leave it "
                "at its default (None).")
        if virtual_batch_size is not None:
            fused = False  # as TF 1.x: ghost batches are never fused
        self.virtual_batch_size = virtual_batch_size
        if renorm:
            renorm_clipping = dict(renorm_clipping or {})
            unknown = set(renorm_clipping) - {"rmax", "rmin", "dmax"}
            if unknown:
                raise ValueError(f"Received invalid keys for `renorm_clipping` argument: "
                                 f"{renorm_clipping}. Supported values: ['rmax', 'rmin', "
                                 f"'dmax'].")
            fused = False  # as TF 1.x: batch renormalization is never fused
        self.renorm, self.renorm_clipping = bool(renorm), renorm_clipping
        self.renorm_momentum = renorm_momentum
        self.axis = list(axis) if isinstance(axis, list | tuple) else int(axis)
        self.momentum, self.epsilon = momentum, epsilon
        self.center, self.scale = center, scale
        self.beta_initializer = beta_initializer or init_ops.zeros_initializer()
        self.gamma_initializer = gamma_initializer or init_ops.ones_initializer()
        self.moving_mean_initializer = moving_mean_initializer or init_ops.zeros_initializer()
        self.moving_variance_initializer = (moving_variance_initializer
                                            or init_ops.ones_initializer())
        self.beta_regularizer, self.gamma_regularizer = beta_regularizer, gamma_regularizer
        self.beta_constraint, self.gamma_constraint = beta_constraint, gamma_constraint
        self.fused = fused

    supports_masking = True

    def get_config(self) -> dict:
        ser = serialize_initializer
        return {**super().get_config(), "axis": self.axis, "momentum": self.momentum,
                "epsilon": self.epsilon, "center": self.center, "scale": self.scale,
                "beta_initializer": ser(self.beta_initializer),
                "gamma_initializer": ser(self.gamma_initializer),
                "moving_mean_initializer": ser(self.moving_mean_initializer),
                "moving_variance_initializer": ser(self.moving_variance_initializer),
                "beta_regularizer": ser(self.beta_regularizer),
                "gamma_regularizer": ser(self.gamma_regularizer),
                "beta_constraint": ser(self.beta_constraint),
                "gamma_constraint": ser(self.gamma_constraint),
                **({"renorm": True, "renorm_clipping": self.renorm_clipping,
                    "renorm_momentum": self.renorm_momentum} if self.renorm else {}),
                **({"virtual_batch_size": self.virtual_batch_size}
                   if self.virtual_batch_size is not None else {})}

    def compute_output_shape(self, input_shape):
        return input_shape  # TF returns it as given (a tuple stays a tuple)

    def build(self, input_shape) -> None:
        input_shape = TensorShape(input_shape)
        ndims = input_shape.ndims
        if ndims is None:
            raise ValueError(f"Input has undefined rank: {input_shape} (layer "
                             f"{self._base_name}).")
        axes = self.axis if isinstance(self.axis, list) else [self.axis]
        norm = []
        for a in axes:
            if not -ndims <= a < ndims:
                raise ValueError(f"Invalid axis: {a} for input of rank {ndims} (shape "
                                 f"{input_shape}).")
            norm.append(a % ndims)
        if len(set(norm)) != len(norm):
            raise ValueError(f"Duplicate axis: {axes}")
        self._axes = sorted(norm)
        vbs = self.virtual_batch_size
        if vbs is not None:
            if not isinstance(vbs, int) or vbs <= 0:
                raise ValueError(f"`virtual_batch_size` must be a positive integer that "
                                 f"divides the true batch size of the input tensor. "
                                 f"Received: virtual_batch_size={vbs}")
            if 0 in self._axes:
                raise ValueError(f"When using `virtual_batch_size`, the batch dimension "
                                 f"must be 0 and thus axis cannot include 0. Received "
                                 f"axis={self._axes}")
        dims = {a: input_shape[a].value for a in self._axes}
        for a, d in dims.items():
            if d is None:
                raise ValueError(f"Input has undefined `axis` dimension. Input shape: "
                                 f"{input_shape} (axis {a}).")
        self._ndims = ndims
        param_dtype = self._dtype
        if param_dtype in (_dtypes.float16,):
            param_dtype = _dtypes.float32
        self._fused = (self.fused is not False and ndims == 4 and self._axes in ([1], [3])
                       and self._dtype in (_dtypes.float16, _dtypes.float32))
        if len(self._axes) == 1 and vbs is None:
            param_shape = [dims[self._axes[0]]]
        else:
            param_shape = [dims.get(i, 1) for i in range(ndims)]
        if vbs is not None:
            # as TF: the statistics of a [virtual_batch_size, -1, ...] view of the input,
            # whose axis 1 (the ghost batches) is kept
            param_shape.insert(1, 1)
            self._axes = [a + 1 for a in self._axes]
            self._ndims = ndims + 1
        self.gamma = self.beta = None
        if self.scale:
            self.gamma = self.add_weight("gamma", param_shape, dtype=param_dtype,
                                         initializer=self.gamma_initializer,
                                         regularizer=self.gamma_regularizer,
                                         constraint=self.gamma_constraint)
        if self.center:
            self.beta = self.add_weight("beta", param_shape, dtype=param_dtype,
                                        initializer=self.beta_initializer,
                                        regularizer=self.beta_regularizer,
                                        constraint=self.beta_constraint)
        # As in TensorFlow, a partitioning scope splits gamma and beta but never the
        # moving statistics (the canned DNN's batch norm: ``.../batchnorm_0/moving_mean``).
        scope = self._current_scope
        partitioner = scope.partitioner
        scope.set_partitioner(None)
        try:
            self.moving_mean = self.add_weight(
                "moving_mean", param_shape, dtype=param_dtype,
                initializer=self.moving_mean_initializer, trainable=False)
            self.moving_variance = self.add_weight(
                "moving_variance", param_shape, dtype=param_dtype,
                initializer=self.moving_variance_initializer, trainable=False)
            if self.renorm:
                # TF's batch renormalization variables, in TF's order: the inference
                # stddev, then the mean and stddev used while training
                stddev_init = _SqrtInitializer(self.moving_variance_initializer)
                self.moving_stddev = self.add_weight(
                    "moving_stddev", param_shape, dtype=param_dtype,
                    initializer=stddev_init, trainable=False)
                self.renorm_mean = self.add_weight(
                    "renorm_mean", param_shape, dtype=param_dtype,
                    initializer=self.moving_mean_initializer, trainable=False)
                self.renorm_stddev = self.add_weight(
                    "renorm_stddev", param_shape, dtype=param_dtype,
                    initializer=stddev_init, trainable=False)
        finally:
            scope.set_partitioner(partitioner)

    def _broadcast(self, v):
        """Reshape a per-channel tensor so that it broadcasts against the input."""
        if v is None:
            return None
        if self._axes == [self._ndims - 1] or v.shape.ndims == self._ndims:
            return v
        shape = [1] * self._ndims
        shape[self._axes[0]] = -1
        return array_shape_ops.reshape(v, shape)

    def _assign_moving_average(self, variable, value, momentum):
        with name_scope("AssignMovingAvg") as scope:
            graph = get_default_graph()
            with graph.colocate_with(variable.op):
                dtype = variable.dtype.base_dtype
                if isinstance(momentum, int | float):
                    # TF's non-fused layer: the decay computed in Python, then converted
                    # (float32(1 - 0.9) is 0.1, not 1 - float32(0.9))
                    decay = convert_to_tensor(1.0 - momentum, name="decay")
                    if decay.dtype.base_dtype != dtype:
                        decay = math_ops.cast(decay, dtype)
                else:
                    decay = math_ops.subtract(convert_to_tensor(1.0, dtype=dtype),
                                              math_ops.cast(momentum, dtype), name="decay")
                delta = (variable - math_ops.cast(value, dtype)) * decay  # TF's sub, mul
                return state_ops.assign_sub(variable, delta, name=scope)

    def _update_moving_averages(self, training, known, mean, variance) -> None:
        """Add the updates moving the moving mean and variance towards `mean` and
        `variance`; with `training` a tensor (`known` None), by momentum 1 (no change)
        when it is False."""
        stat_dtype = self.moving_mean.dtype.base_dtype
        if known is None:
            momentum = smart_cond(
                training, lambda: convert_to_tensor(self.momentum, dtype=stat_dtype),
                lambda: convert_to_tensor(1.0, dtype=stat_dtype))
        elif self._fused:
            momentum = convert_to_tensor(self.momentum, dtype=stat_dtype)
        else:
            momentum = float(self.momentum)
        self.add_update(self._assign_moving_average(self.moving_mean, mean, momentum))
        self.add_update(self._assign_moving_average(self.moving_variance, variance, momentum))

    def _fused_call(self, inputs, training):
        # One FusedBatchNormV3 op (two under a cond when `training` is a tensor), as
        # TensorFlow builds it; its batch variance output is already Bessel-corrected.
        data_format = "NHWC" if self._axes == [3] else "NCHW"
        # Without beta/gamma, constant zeros then ones (TensorFlow's Const, Const_1).
        channels = self.moving_mean.shape.as_list()
        beta = _read(self.beta) if self.beta is not None else \
            convert_to_tensor(np.zeros(channels, np.float32), name="Const")
        gamma = _read(self.gamma) if self.gamma is not None else \
            convert_to_tensor(np.ones(channels, np.float32), name="Const")

        def run(is_training):
            return nn_norm_ops.fused_batch_norm(
                inputs, gamma, beta, self.moving_mean.value(), self.moving_variance.value(),
                epsilon=self.epsilon, data_format=data_format, is_training=is_training)

        known = static_bool(training)
        if known is False:
            return run(False)[0]
        y, mean, variance = smart_cond(training, lambda: run(True), lambda: run(False))
        self._update_moving_averages(training, known, mean, variance)
        return y

    def call(self, inputs, training=False):
        if self._fused:
            return self._fused_call(inputs, training)
        if self.virtual_batch_size is not None:
            return self._ghost_batch_call(inputs, training)
        return self._elementwise_call(inputs, training)

    def _reduction(self):
        reduction = [i for i in range(self._ndims) if i not in self._axes]
        if self.virtual_batch_size is not None:
            del reduction[1]  # one mean and variance per ghost batch
        return reduction

    def _for_update(self, statistic):
        """The statistic the moving averages move towards: the ghost batches' mean
        (TF updates once per step, not once per ghost batch)."""
        if self.virtual_batch_size is None:
            return statistic
        return math_reduce.reduce_mean(statistic, axis=1, keepdims=True)

    def _ghost_batch_call(self, inputs, training):
        # TF 1.x's layout, also when not training: the input viewed as
        # [virtual_batch_size, -1, ...], normalized, and reshaped back
        original = array_join_ops.concat(
            [np.array([-1], np.int32), array_shape_ops.shape(inputs)[1:]], 0)
        expanded = array_join_ops.concat(
            [np.array([self.virtual_batch_size, -1], np.int32), original[1:]], 0)
        outputs = self._elementwise_call(array_shape_ops.reshape(inputs, expanded), training)
        return array_shape_ops.reshape(outputs, original)

    def _elementwise_call(self, inputs, training):
        in_dtype = inputs.dtype.base_dtype
        if in_dtype not in (_dtypes.float16, _dtypes.bfloat16):
            return self._elementwise_call_f32(inputs, training)
        # TF normalizes 16-bit inputs in float32 and casts the result back; its casts of
        # float32 variables (the moving statistics when not training, gamma, beta) make no
        # op but take a "Cast_N" name each, so the output is "<layer>/Cast_3" or "Cast_5".
        outputs = self._elementwise_call_f32(math_ops.cast(inputs, _dtypes.float32), training)
        graph = get_default_graph()
        unused = [self.beta, self.gamma] + ([0, 0] if static_bool(training) is False else [])
        for _ in range(sum(v is not None for v in unused)):
            graph.unique_name("Cast")
        return math_ops.cast(outputs, in_dtype)

    def _elementwise_call_f32(self, inputs, training):
        if self.renorm and static_bool(training) is not False:
            return self._renorm_call(inputs, training)
        reduction = self._reduction()
        keep = len(self._axes) > 1 or self.virtual_batch_size is not None
        known = static_bool(training)
        mean, variance = nn_ops.moments(inputs, reduction, keep_dims=keep)
        stat_dtype = self.moving_mean.dtype.base_dtype
        if inputs.dtype.base_dtype != stat_dtype:
            mean, variance = math_ops.cast(mean, stat_dtype), math_ops.cast(variance,
                                                                            stat_dtype)
        moving_mean = self.moving_mean.value()
        moving_var = self.moving_variance.value()
        use_mean = smart_cond(training, lambda: mean, lambda: moving_mean)
        use_var = smart_cond(training, lambda: variance, lambda: moving_var)
        if known is not False:
            update_var = variance
            if self._fused:
                n = math_ops.cast(math_ops.truediv(array_shape_ops.size(inputs),
                                                   array_shape_ops.size(variance)),
                                  stat_dtype)
                one = convert_to_tensor(1.0, dtype=stat_dtype)
                update_var = math_ops.multiply(
                    variance, math_ops.truediv(n, math_ops.maximum(
                        math_ops.subtract(n, one), one)))
            if known is None and not self._fused:
                # TF's non-fused layer assigns inside a cond on `training` (its update ops
                # are "cond_2/Merge" and "cond_3/Merge"); the fused one runs the assign
                # with momentum 1.0 when not training.
                momentum = float(self.momentum)
                for var, value in ((self.moving_mean, self._for_update(mean)),
                                   (self.moving_variance, self._for_update(update_var))):
                    self.add_update(smart_cond(
                        training,
                        lambda var=var, value=value: self._assign_moving_average(
                            var, value, momentum),
                        lambda var=var: var.value()))
                return self._normalize(inputs, self._broadcast(use_mean),
                                       self._broadcast(use_var))
            self._update_moving_averages(training, known, self._for_update(mean),
                                         self._for_update(update_var))
        return self._normalize(inputs, self._broadcast(use_mean), self._broadcast(use_var))

    def _normalize(self, x, mean, variance, scale=None, offset=None):
        if scale is None and self.gamma is not None:
            scale = self._broadcast(_read(self.gamma))
        if offset is None and self.beta is not None:
            offset = self._broadcast(_read(self.beta))
        with name_scope("batchnorm"):
            dtype = x.dtype.base_dtype
            # TF's op names (tf.nn.batch_normalization): add, Rsqrt, mul, mul_1, mul_2,
            # sub, add_1
            inv = math_ops.rsqrt(variance + self.epsilon)
            if scale is not None:
                inv = inv * scale
            scaled = x * math_ops.cast(inv, dtype)
            shift = offset - mean * inv if offset is not None else -mean * inv
            return scaled + math_ops.cast(shift, dtype)

    # -- batch renormalization (Ioffe, 2017) ------------------------------------------------
    def _renorm_call(self, inputs, training):
        """Batch renormalization while training (`training` True or a tensor): the batch
        statistics corrected by ``r = stddev / renorm_stddev`` and ``d = (mean -
        renorm_mean) / renorm_stddev`` (clipped by `renorm_clipping`, constants in the
        gradient), the renorm averages moved by `renorm_momentum` before the inference
        ones, which track ``moving_stddev`` and set ``moving_variance`` from it (TF's
        ``AssignNewValue``). TF's graph: its conds, update ops and op names."""
        stat_dtype = self.moving_mean.dtype.base_dtype
        batch_mean, batch_var = nn_ops.moments(math_ops.cast(inputs, stat_dtype),
                                               self._reduction(),
                                               keep_dims=len(self._axes) > 1
                                               or self.virtual_batch_size is not None)
        moving_mean, moving_var = self.moving_mean.value(), self.moving_variance.value()
        mean = smart_cond(training, lambda: batch_mean, lambda: moving_mean)
        variance = smart_cond(training, lambda: batch_var, lambda: moving_var)
        r, d, new_mean, new_variance = self._renorm_correction(
            self._for_update(mean), self._for_update(variance), training)
        r = self._broadcast(array_identity_ops.stop_gradient(r, name="renorm_r"))
        d = self._broadcast(array_identity_ops.stop_gradient(d, name="renorm_d"))
        scale = offset = None
        if self.gamma is not None:
            gamma = self._broadcast(_read(self.gamma))
            scale, offset = r * gamma, d * gamma
        else:
            scale, offset = r, d
        if self.beta is not None:
            offset = offset + self._broadcast(_read(self.beta))
        momentum = self.momentum

        def mean_update():
            return self._assign_moving_average(self.moving_mean, new_mean, momentum)

        def variance_update():
            stddev = self._assign_moving_average(
                self.moving_stddev, math_ops.sqrt(new_variance + self.epsilon), momentum)
            with name_scope("AssignNewValue") as scope, \
                    get_default_graph().colocate_with(self.moving_variance.op):
                value = nn_ops.relu(stddev * stddev - self.epsilon)
                return state_ops.assign(self.moving_variance, value, name=scope)

        for update, var in ((mean_update, self.moving_mean),
                            (variance_update, self.moving_variance)):
            self.add_update(smart_cond(training, update, lambda var=var: var.value()))
        dtype = inputs.dtype.base_dtype
        return self._normalize(inputs, self._broadcast(math_ops.cast(mean, dtype)),
                               self._broadcast(math_ops.cast(variance, dtype)),
                               math_ops.cast(scale, dtype), math_ops.cast(offset, dtype))

    def _renorm_correction(self, mean, variance, training):
        stddev = math_ops.sqrt(variance + self.epsilon)
        renorm_mean = self.renorm_mean.value()
        renorm_stddev = math_ops.maximum(self.renorm_stddev.value(),
                                         math_ops.sqrt(self.epsilon))
        r = stddev / renorm_stddev
        d = (mean - renorm_mean) / renorm_stddev
        # the corrections read the averages before this step moves them
        with control_dependencies([r, d]):
            mean = array_identity_ops.identity(mean)
            stddev = array_identity_ops.identity(stddev)
        rmin, rmax, dmax = (self.renorm_clipping.get(k) for k in ("rmin", "rmax", "dmax"))
        if rmin is not None:
            r = math_ops.maximum(r, rmin)
        if rmax is not None:
            r = math_ops.minimum(r, rmax)
        if dmax is not None:
            d = math_ops.minimum(math_ops.maximum(d, -dmax), dmax)
        r = smart_cond(training, lambda: r, lambda: array_shape_ops.ones_like(r))
        d = smart_cond(training, lambda: d, lambda: array_shape_ops.zeros_like(d))

        def move(var, value):
            value = array_identity_ops.identity(value)
            return smart_cond(
                training,
                lambda: self._assign_moving_average(var, value, self.renorm_momentum),
                lambda: array_identity_ops.identity(var.value()))

        moved = [move(self.renorm_mean, mean), move(self.renorm_stddev, stddev)]
        with control_dependencies(moved):
            return r, d, array_identity_ops.identity(mean), array_identity_ops.identity(variance)


class _SqrtInitializer:
    """The square root of another initializer's values (``moving_stddev`` and
    ``renorm_stddev`` start at the square root of the moving variance's start)."""

    def __init__(self, initializer):
        self.initializer = initializer

    def __call__(self, shape, dtype=None, partition_info=None):
        return math_ops.sqrt(self.initializer(shape, dtype=dtype, partition_info=partition_info))


def batch_normalization(inputs, axis=-1, momentum=0.99, epsilon=1e-3, center: bool = True,
                        scale: bool = True, beta_initializer=None, gamma_initializer=None,
                        moving_mean_initializer=None, moving_variance_initializer=None,
                        beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                        gamma_constraint=None, training=False, trainable: bool = True,
                        name=None, reuse=None, renorm: bool = False, renorm_clipping=None,
                        renorm_momentum=0.99, fused=None, virtual_batch_size=None,
                        adjustment=None):
    """Batch normalization: ``gamma * (x - mean) / sqrt(var + epsilon) + beta``.

    Parameters
    ----------
    inputs : Tensor
        Known rank; the `axis` dimensions known.
    axis : int or list of int
        The feature axis (default -1; 1 for channels_first images).
    momentum, epsilon : float
        Moving-average momentum and the variance epsilon.
    center, scale : bool
        Create and use ``beta`` / ``gamma``.
    training : bool or bool tensor
        True: normalize with the batch's mean and variance and add the moving-average
        updates to ``GraphKeys.UPDATE_OPS``; False: use the moving averages (no updates).
    name, reuse, trainable, *_initializer, *_regularizer :
        As for `dense`.
    fused : None, True or False
        False: elementwise ops even for 4-D input (see the module docstring).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.constant([[1.0, 10.0], [3.0, 30.0]])
    ...     y = tf.layers.batch_normalization(x, training=True, epsilon=0.0)
    ...     with tf.Session() as sess:
    ...         sess.run(tf.global_variables_initializer())
    ...         print(sess.run(y).round(3).tolist())
    [[-1.0, -1.0], [1.0, 1.0]]
    """
    layer = BatchNormalization(
        axis=axis, momentum=momentum, epsilon=epsilon, center=center, scale=scale,
        beta_initializer=beta_initializer, gamma_initializer=gamma_initializer,
        moving_mean_initializer=moving_mean_initializer,
        moving_variance_initializer=moving_variance_initializer,
        beta_regularizer=beta_regularizer, gamma_regularizer=gamma_regularizer,
        beta_constraint=beta_constraint, gamma_constraint=gamma_constraint, renorm=renorm,
        renorm_clipping=renorm_clipping, renorm_momentum=renorm_momentum, fused=fused,
        trainable=trainable, virtual_batch_size=virtual_batch_size, adjustment=adjustment,
        name=name, _scope=name, _reuse=reuse)
    return layer.apply(inputs, training=training)

