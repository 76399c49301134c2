"""Fused optimizer update ops: ``Apply*`` (dense gradient) and ``SparseApply*`` (rows).

Each op updates a variable and its accumulator slots in place and outputs the variable's
ref. The variable and accumulators are ref inputs (the kernel receives their storage);
the hyperparameters are scalars of the variable's dtype (float16, float32 or float64).
TensorFlow's op names, input orders and attributes are kept, so a graph reads the same::

    ApplyAdam(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad)
    SparseApplyMomentum(var, accum, lr, grad, indices, momentum)

A sparse op's `grad` holds one row per entry of `indices` (duplicates add up) and only
those rows are updated, except ``SparseApplyAdam`` (a flowgraph op following TF1's
``AdamOptimizer``), which decays the moments of every row. ``SparseApplyGradientDescent``
and ``SparseApplyAdam`` have no TensorFlow kernel; TF1 builds them from scatter ops.

Optimizers (`flowgraph.train`) create these ops; they are not meant to be called directly.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.ops.training_ops import apply_gradient_descent
>>> v = tf.Variable([1.0, 2.0])
>>> step = apply_gradient_descent(v, 0.5, tf.constant([2.0, 2.0]))
>>> with tf.Session() as sess:
...     sess.run(v.initializer)
...     print(sess.run(step))
[0. 1.]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.registry import OpCost, not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.op_util import make_tensor
from flowgraph.ops.state_ops import _ref_of

__all__: list[str] = []  # internal ops: the optimizers are the public API

FLOAT_TYPES = (_dtypes.float16, _dtypes.float32, _dtypes.float64)

# op type -> (input names, number of ref inputs, attrs). Scalars are every input that is
# not a ref, not "grad" and not "indices".
_SIGNATURES = {
    "ApplyGradientDescent": (("var", "alpha", "delta"), 1, {}),
    "ApplyMomentum": (("var", "accum", "lr", "grad", "momentum"), 2,
                      {"use_nesterov": False}),
    "ApplyAdagrad": (("var", "accum", "lr", "grad"), 2, {"update_slots": True}),
    "ApplyAdam": (("var", "m", "v", "beta1_power", "beta2_power", "lr", "beta1", "beta2",
                   "epsilon", "grad"), 3, {"use_nesterov": False}),
    "ApplyRMSProp": (("var", "ms", "mom", "lr", "rho", "momentum", "epsilon", "grad"), 3, {}),
    "ApplyCenteredRMSProp": (("var", "mg", "ms", "mom", "lr", "rho", "momentum", "epsilon",
                              "grad"), 4, {}),
    "ApplyFtrl": (("var", "accum", "linear", "grad", "lr", "l1", "l2", "lr_power"), 3, {}),
    "ApplyFtrlV2": (("var", "accum", "linear", "grad", "lr", "l1", "l2", "l2_shrinkage",
                     "lr_power"), 3, {}),
    "ApplyAdadelta": (("var", "accum", "accum_update", "lr", "rho", "epsilon", "grad"), 3, {}),
    "SparseApplyGradientDescent": (("var", "alpha", "grad", "indices"), 1, {}),
    "SparseApplyMomentum": (("var", "accum", "lr", "grad", "indices", "momentum"), 2,
                            {"use_nesterov": False}),
    "SparseApplyAdagrad": (("var", "accum", "lr", "grad", "indices"), 2,
                           {"update_slots": True}),
    "SparseApplyAdam": (("var", "m", "v", "beta1_power", "beta2_power", "lr", "beta1",
                         "beta2", "epsilon", "grad", "indices"), 3, {"use_nesterov": False}),
    "SparseApplyRMSProp": (("var", "ms", "mom", "lr", "rho", "momentum", "epsilon", "grad",
                            "indices"), 3, {}),
    "SparseApplyCenteredRMSProp": (("var", "mg", "ms", "mom", "lr", "rho", "momentum",
                                    "epsilon", "grad", "indices"), 4, {}),
    "SparseApplyFtrl": (("var", "accum", "linear", "grad", "indices", "lr", "l1", "l2",
                         "lr_power"), 3, {}),
    "SparseApplyFtrlV2": (("var", "accum", "linear", "grad", "indices", "lr", "l1", "l2",
                           "l2_shrinkage", "lr_power"), 3, {}),
    "SparseApplyAdadelta": (("var", "accum", "accum_update", "lr", "rho", "epsilon", "grad",
                             "indices"), 3, {}),
    # TensorFlow's further update ops; their kernels are NumPy ones
    # (`backends/cpu/kernels_training_raw.py`).
    "ApplyAdaMax": (("var", "m", "v", "beta1_power", "lr", "beta1", "beta2", "epsilon",
                     "grad"), 3, {}),
    "ApplyAdagradV2": (("var", "accum", "lr", "epsilon", "grad"), 2, {"update_slots": True}),
    "ApplyAdagradDA": (("var", "gradient_accumulator", "gradient_squared_accumulator", "grad",
                        "lr", "l1", "l2", "global_step"), 3, {}),
    "ApplyAddSign": (("var", "m", "lr", "alpha", "sign_decay", "beta", "grad"), 2, {}),
    "ApplyPowerSign": (("var", "m", "lr", "logbase", "sign_decay", "beta", "grad"), 2, {}),
    "ApplyProximalAdagrad": (("var", "accum", "lr", "l1", "l2", "grad"), 2, {}),
    "ApplyProximalGradientDescent": (("var", "alpha", "l1", "l2", "delta"), 1, {}),
    "SparseApplyAdagradV2": (("var", "accum", "lr", "epsilon", "grad", "indices"), 2,
                             {"update_slots": True}),
    "SparseApplyAdagradDA": (("var", "gradient_accumulator", "gradient_squared_accumulator",
                              "grad", "indices", "lr", "l1", "l2", "global_step"), 3, {}),
    "SparseApplyProximalAdagrad": (("var", "accum", "lr", "l1", "l2", "grad", "indices"), 2,
                                   {}),
    "SparseApplyProximalGradientDescent": (("var", "alpha", "l1", "l2", "grad", "indices"), 1,
                                           {}),
}

# Update ops TensorFlow defines for resource variables only (Keras's optimizers).
_RESOURCE_ONLY = {
    "ApplyKerasMomentum": (("var", "accum", "lr", "grad", "momentum"), 2,
                           {"use_nesterov": False}),
    "SparseApplyKerasMomentum": (("var", "accum", "lr", "grad", "indices", "momentum"), 2,
                                 {"use_nesterov": False}),
    "ApplyAdamWithAmsgrad": (("var", "m", "v", "vhat", "beta1_power", "beta2_power", "lr",
                              "beta1", "beta2", "epsilon", "grad"), 4, {}),
}


def _make_shape_fn(names: tuple[str, ...], num_refs: int):
    grad_at = names.index("grad") if "grad" in names else names.index("delta")
    idx_at = names.index("indices") if "indices" in names else None

    def shape_fn(op, *shapes):
        var = shapes[0]
        for k in range(1, num_refs):
            if not var.is_compatible_with(shapes[k]):
                raise op.shape_error(f"'{names[k]}' has shape {shapes[k]} but 'var' has "
                                     f"shape {var}; accumulators must have the var's shape")
            var = var.merge_with(shapes[k])
        for k, name in enumerate(names):
            if k < num_refs or k in (grad_at, idx_at):
                continue
            if not shapes[k].is_compatible_with(TensorShape([])):
                raise op.shape_error(f"'{name}' must be a scalar, got shape {shapes[k]}")
        grad = shapes[grad_at]
        if idx_at is None:
            if not var.is_compatible_with(grad):
                raise op.shape_error(f"var and grad do not have the same shape: var {var}, "
                                     f"grad {grad}")
            return [var.merge_with(grad)]
        indices = shapes[idx_at]
        if not indices.is_compatible_with(TensorShape([None])):
            raise op.shape_error(f"indices must be one-dimensional, got shape {indices}")
        if grad.ndims is not None and grad.ndims < 1:
            raise op.shape_error(f"grad must be at least one-dimensional, got {grad}")
        if grad.ndims is not None and indices.ndims is not None and \
                not grad[0].is_compatible_with(indices[0]):
            raise op.shape_error(f"grad must have one row per index: grad {grad}, indices "
                                 f"{indices}")
        if grad.ndims is not None and var.ndims is not None and \
                not var[1:].is_compatible_with(grad[1:]):
            raise op.shape_error(f"var and grad must match in all dimensions but the first: "
                                 f"var {var}, grad {grad}")
        return [var]

    return shape_fn


for _op_type, (_names, _refs, _attrs) in _SIGNATURES.items():
    register_op(_op_type, attrs={"use_locking": False, **_attrs},
                ref_inputs=tuple(range(_refs)), ref_outputs=(0,), stateful=True,
                cost=OpCost.EXPENSIVE)(_make_shape_fn(_names, _refs))
not_differentiable(*_SIGNATURES)


def _resource_shape_fn(ref_fn, num_refs: int):
    """The ``Resource*`` form's shape check: the reference one on the variables' shapes
    (read from their handles); no outputs."""
    from flowgraph.ops.resource_variable_ops import handle_shape

    def shape_fn(op, *shapes):
        var_shapes = [handle_shape(t) for t in op.inputs[:num_refs]]
        ref_fn(op, *var_shapes, *shapes[num_refs:])
        return []

    return shape_fn


# The resource-variable forms: the same inputs with handles in place of the refs, no
# outputs (``ResourceSparseApplyGradientDescent`` and ``ResourceSparseApplyAdam`` are
# flowgraph's, as their reference forms are).
for _op_type, (_names, _refs, _attrs) in {**_SIGNATURES, **_RESOURCE_ONLY}.items():
    register_op("Resource" + _op_type, attrs={"use_locking": False, "T": None, **_attrs},
                num_outputs=0, dtype_fn=lambda op: [], stateful=True,
                cost=OpCost.EXPENSIVE)(_resource_shape_fn(_make_shape_fn(_names, _refs),
                                                          _refs))
not_differentiable(*("Resource" + k for k in (*_SIGNATURES, *_RESOURCE_ONLY)))


def _is_resource(var) -> bool:
    handle = getattr(var, "handle", var)
    return getattr(getattr(handle, "dtype", None), "base_dtype", None) == _dtypes.resource


def _apply_resource(op_type: str, args: dict, attrs: dict, name: str | None):
    """``Resource<op_type>`` on the handles of resource variables; returns the op."""
    from flowgraph.ops.op_util import make_op

    names, num_refs, defaults = _SIGNATURES.get(op_type) or _RESOURCE_ONLY[op_type]
    handles = []
    for n in names[:num_refs]:
        v = args[n]
        if not _is_resource(v):
            raise TypeError(f"Resource{op_type}: '{n}' must be a resource variable like "
                            f"'var', got {v!r}")
        handles.append(getattr(v, "handle", v))
    dtype = _dtypes.as_dtype(handles[0].op.attrs["dtype"]).base_dtype
    if dtype not in FLOAT_TYPES:
        raise TypeError(f"Resource{op_type}: variable '{handles[0].op.name}' has dtype "
                        f"{dtype.name}; the optimizer kernels support float16, float32 and "
                        "float64 variables")
    inputs = list(handles) + _tensor_inputs("Resource" + op_type, names[num_refs:], args,
                                            dtype, handles[0].op.name)
    full = {"use_locking": False, **defaults}
    full.update({k: bool(v) for k, v in attrs.items()})
    full["T"] = dtype
    return make_op("Resource" + op_type, inputs, full, name=name or "Resource" + op_type)


def _tensor_inputs(op_type: str, names, args: dict, dtype, var_name: str) -> list:
    """The update's non-variable inputs as tensors: ``indices`` of an integer type,
    ``global_step`` int64, the rest of the variable's dtype (TypeError naming the op and
    input otherwise)."""
    out = []
    for n in names:
        if n == "global_step":
            t = convert_to_tensor(args[n], dtype_hint=_dtypes.int64)
            if t.dtype.base_dtype != _dtypes.int64:
                raise TypeError(f"{op_type}: global_step must be int64, got {t.dtype.name} "
                                f"({t.name}); cast it with tf.cast first")
        elif n == "indices":
            t = convert_to_tensor(args[n])
            if t.dtype.base_dtype not in (_dtypes.int32, _dtypes.int64):
                raise TypeError(f"{op_type}: indices must be int32 or int64, got "
                                f"{t.dtype.name} ({t.name})")
        else:
            t = convert_to_tensor(args[n], dtype_hint=dtype)
            if t.dtype.base_dtype != dtype:
                raise TypeError(
                    f"{op_type}: input '{n}' ({t.name}) has dtype {t.dtype.base_dtype.name} "
                    f"but var '{var_name}' has dtype {dtype.name}; cast it with tf.cast "
                    "first")
        out.append(t)
    return out


def _apply(op_type: str, args: dict, attrs: dict, name: str | None):
    """Build op `op_type` from its named inputs: refs, then tensors of the var's dtype
    (``Resource<op_type>`` on handles when `var` is a resource variable: the op)."""
    if _is_resource(args["var"]) or op_type in _RESOURCE_ONLY:
        return _apply_resource(op_type, args, attrs, name)
    names, num_refs, defaults = _SIGNATURES[op_type]
    refs = [_ref_of(args[n]) for n in names[:num_refs]]
    dtype = refs[0].dtype.base_dtype
    if dtype not in FLOAT_TYPES:
        raise TypeError(f"{op_type}: variable '{refs[0].op.name}' has dtype {dtype.name}; "
                        "the optimizer kernels support float16, float32 and float64 "
                        "variables")
    for n, r in zip(names[1:num_refs], refs[1:]):
        if r.dtype.base_dtype != dtype:
            raise TypeError(f"{op_type}: '{n}' ({r.op.name}) has dtype {r.dtype.base_dtype.name}"
                            f" but var '{refs[0].op.name}' has dtype {dtype.name}")
    inputs = list(refs) + _tensor_inputs(op_type, names[num_refs:], args, dtype,
                                         refs[0].op.name)
    full = {"use_locking": False, **defaults}
    full.update({k: bool(v) for k, v in attrs.items()})
    return make_tensor(op_type, inputs, full, name=name or op_type)


def apply_gradient_descent(var, alpha, delta, use_locking=False, name=None):
    """``var -= alpha * delta`` in place; returns the var's ref."""
    return _apply("ApplyGradientDescent", {"var": var, "alpha": alpha, "delta": delta},
                  {"use_locking": use_locking}, name)


def sparse_apply_gradient_descent(var, alpha, grad, indices, use_locking=False, name=None):
    """``var[indices] -= alpha * grad`` (duplicate indices add up)."""
    return _apply("SparseApplyGradientDescent",
                  {"var": var, "alpha": alpha, "grad": grad, "indices": indices},
                  {"use_locking": use_locking}, name)


def apply_op(op_type: str, inputs: dict, use_locking=False, name=None, **attrs):
    """Build any update op of this module from a dict of its named inputs.

    Example
    -------
    >>> import flowgraph as tf
    >>> v = tf.Variable([1.0, 2.0])
    >>> a = tf.Variable([0.0, 0.0])
    >>> apply_op("ApplyMomentum", {"var": v, "accum": a, "lr": 0.1, "grad": [1.0, 1.0],
    ...                            "momentum": 0.9}).op.type
    'ApplyMomentum'
    """
    if op_type not in _SIGNATURES and op_type not in _RESOURCE_ONLY:
        raise ValueError(f"unknown update op '{op_type}'; known: "
                         f"{', '.join((*_SIGNATURES, *_RESOURCE_ONLY))}")
    return _apply(op_type, inputs, {"use_locking": use_locking, **attrs}, name)
