"""Gradients of the math ops (elementwise, casts, matrix products, reductions, scans).

Each rule is ``grad_fn(op, grad) -> [one gradient per input]`` built from ordinary,
differentiable ops, so gradients of gradients work. Complex inputs follow TensorFlow's
convention: the gradient of a real loss ``L`` with respect to ``z = a + ib`` is
``dL/da + i dL/db``, which makes the rule for a holomorphic ``f`` ``grad * conj(f'(z))``
(`conj` is the identity on real tensors and adds no op).

Binary ops broadcast: the gradient of an input is the output gradient summed over the
axes along which that input was broadcast. `unbroadcast` finds those axes from the static
shapes when it can and otherwise with the `BroadcastGradientArgs` op at run time.

Example
-------
>>> import flowgraph as tf
>>> x = tf.constant([[1.0, 2.0, 3.0]])          # broadcast along axis 0 below
>>> y = x * tf.ones([2, 3])
>>> with tf.Session() as sess:
...     print(sess.run(tf.gradients(y, x)[0]))
[[2. 2. 2.]]
"""

from __future__ import annotations

import math

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant, constant_value, convert_to_tensor
from flowgraph.framework.indexed_slices import IndexedSlices
from flowgraph.framework.registry import register_gradient
from flowgraph.ops import array_gen_ops
from flowgraph.ops import array_ops as _a
from flowgraph.ops import math_ops as _m
from flowgraph.ops import math_reduce as _r
from flowgraph.ops.broadcast_grad import (
    broadcast_gradient_args,
    reduce_gradient_args,
    same_full_shapes,
)
from flowgraph.ops.math_grad_ops import output_grad as _output_grad  # registers *Grad ops
from flowgraph.ops.op_util import make_tensor, op_scope
from flowgraph.ops.reduce_grad import _broadcast_back, _kept_shape  # registers Sum, Mean

__all__: list[str] = []


# -- broadcasting ------------------------------------------------------------------------
def unbroadcast(op, gx, gy, x=None, y=None):
    """Reduce gradients `gx`, `gy` of the broadcast output to the shapes of `x`, `y`
    (TensorFlow's ops and names; see `broadcast_grad`)."""
    x = op.inputs[0] if x is None else x
    y = op.inputs[1] if y is None else y
    return reduce_gradient_args(x, y, gx, gy)


def _c(t):
    """conj(t) for complex tensors, t itself otherwise."""
    return _m.conj(t) if t.dtype.is_complex else t


def _const(value, like):
    return constant(value, dtype=like.dtype.base_dtype)


# -- unary elementwise ------------------------------------------------------------------
@register_gradient("Neg")
def _neg_grad(op, grad):
    return [_m.negative(grad)]


@register_gradient("Sign")
def _sign_grad(op, grad):
    return [_a.zeros_like(op.inputs[0])]


@register_gradient("Reciprocal")
def _reciprocal_grad(op, grad):
    return [_output_grad("ReciprocalGrad", op, grad)]


@register_gradient("Square")
def _square_grad(op, grad):
    two = _const(2, grad)
    return [_mul(grad, _mul(_c(op.inputs[0]), two))]


@register_gradient("Sqrt")
def _sqrt_grad(op, grad):
    return [_output_grad("SqrtGrad", op, grad)]


@register_gradient("Rsqrt")
def _rsqrt_grad(op, grad):
    return [_output_grad("RsqrtGrad", op, grad)]


@register_gradient("Exp")
def _exp_grad(op, grad):
    return [grad * _c(op.outputs[0])]


@register_gradient("Expm1")
def _expm1_grad(op, grad):
    return [grad * _c(_m.exp(op.inputs[0]))]


@register_gradient("Log")
def _log_grad(op, grad):
    return [grad * _m.reciprocal(_c(op.inputs[0]))]


def _one_plus(x):
    """``1 + x`` as TensorFlow builds it: AddV2 ``add`` with the constant ``add/x``."""
    with op_scope(None, "add", (None,)) as scope:
        one = constant(1, dtype=x.dtype.base_dtype, name="x")
        return make_tensor("AddV2", [one, x], name=scope)


@register_gradient("Log1p")
def _log1p_grad(op, grad):
    return [grad * _m.reciprocal(_one_plus(_c(op.inputs[0])))]


@register_gradient("Tanh")
def _tanh_grad(op, grad):
    return [_output_grad("TanhGrad", op, grad)]


@register_gradient("Sigmoid")
def _sigmoid_grad(op, grad):
    return [_output_grad("SigmoidGrad", op, grad)]


@register_gradient("Sin")
def _sin_grad(op, grad):
    return [grad * _c(_m.cos(op.inputs[0]))]


@register_gradient("Cos")
def _cos_grad(op, grad):
    return [_m.negative(grad) * _c(_m.sin(op.inputs[0]))]


@register_gradient("Tan")
def _tan_grad(op, grad):
    sec = _m.reciprocal(_m.cos(op.inputs[0]))
    return [grad * _c(sec * sec)]


@register_gradient("Erf")
def _erf_grad(op, grad):
    x = op.inputs[0]
    return [grad * (_const(2 / math.sqrt(math.pi), grad) * _m.exp(_m.negative(x * x)))]


@register_gradient("Floor")
@register_gradient("Ceil")
@register_gradient("Round")
def _step_grad(op, grad):
    """Piecewise constant: the derivative is zero almost everywhere (TF returns None)."""
    return [None]


@register_gradient("Abs")
def _abs_grad(op, grad):
    return [grad * _m.sign(op.inputs[0])]


@register_gradient("ComplexAbs")
def _complex_abs_grad(op, grad):
    # TensorFlow's graph: grad * x / |x|, as complex values, 0 where |x| is 0.
    x, y = op.inputs[0], op.outputs[0]

    def as_complex(t):
        return make_tensor("Complex", [t, _a.zeros_like(t)], {"Tout": x.dtype.base_dtype},
                           name="Complex")

    return [_m.div_no_nan(as_complex(grad) * x, as_complex(y))]


@register_gradient("Conj")
def _conj_grad(op, grad):
    return [_m.conj(grad)]


# -- binary elementwise (broadcasting) --------------------------------------------------
@register_gradient("Add")
@register_gradient("AddV2")
def _add_grad(op, grad):
    x, y = op.inputs
    if same_full_shapes(x, y, grad):
        return [grad, grad]
    return list(unbroadcast(op, grad, grad))


@register_gradient("Sub")
def _sub_grad(op, grad):
    x, y = op.inputs
    if same_full_shapes(x, y, grad):
        return [grad, _m.negative(grad)]
    return list(unbroadcast(op, grad, _m.negative(grad)))


def _mul(a, b):
    """A ``Mul`` op named ``Mul`` (TensorFlow's gradients call the raw op); an
    IndexedSlices operand is made dense first."""
    return make_tensor("Mul", [_dense(a), _dense(b)], name="Mul")


def _dense(t):
    return convert_to_tensor(t) if isinstance(t, IndexedSlices) else t


@register_gradient("Mul")
def _mul_grad(op, grad):
    x, y = op.inputs
    if same_full_shapes(x, y, grad) and grad.dtype.base_dtype in (_dtypes.int32,
                                                                  _dtypes.float32):
        return [_mul(grad, y), _mul(grad, x)]
    return list(unbroadcast(op, _mul(grad, _c(y)), _mul(_c(x), grad)))


def _quotient_grad(op, grad, div):
    """Gradients of ``div(x, y)``: ``div(grad, y)`` and ``grad * div(div(-x, y), y)``."""
    x, y = (_c(t) for t in op.inputs)
    return list(unbroadcast(op, div(grad, y), grad * div(div(_m.negative(x), y), y)))


@register_gradient("RealDiv")
def _realdiv_grad(op, grad):
    return _quotient_grad(op, grad, _m.realdiv)


@register_gradient("DivNoNan")
def _div_no_nan_grad(op, grad):
    return _quotient_grad(op, grad, _m.div_no_nan)


@register_gradient("FloorMod")
def _floor_mod_grad(op, grad):
    x, y = op.inputs
    return list(unbroadcast(op, grad, grad * _m.negative(_m.floor_div(x, y))))


# TruncateMod has no gradient in TensorFlow: tf.gradients through it is a LookupError.


@register_gradient("Pow")
def _pow_grad(op, grad):
    x, y = op.inputs
    z = op.outputs[0]
    one = _const(1, grad)
    gx = grad * _c(y * _m.pow(x, y - one))
    zero = _a.zeros_like(x)
    if x.dtype.is_complex:
        safe_x = _a.where_v2(_m.not_equal(x, zero), x, _a.ones_like(x))
        log_x = _a.where_v2(_m.not_equal(x, zero), _m.log(safe_x), zero)
    else:
        safe_x = _a.where_v2(_m.greater(x, zero), x, _a.ones_like(x))
        log_x = _a.where_v2(_m.greater(x, zero), _m.log(safe_x), zero)
    gy = grad * _c(z * log_x)
    return list(unbroadcast(op, gx, gy))


def _select_grads(op, grad, mask):
    zeros = _a.zeros_like(grad)
    return list(unbroadcast(op, _a.where_v2(mask, grad, zeros), _a.where_v2(mask, zeros, grad)))


@register_gradient("Maximum")
def _maximum_grad(op, grad):
    x, y = op.inputs
    return _select_grads(op, grad, _m.greater_equal(x, y))


@register_gradient("Minimum")
def _minimum_grad(op, grad):
    x, y = op.inputs
    return _select_grads(op, grad, _m.less_equal(x, y))


@register_gradient("SquaredDifference")
def _squared_difference_grad(op, grad):
    x, y = op.inputs
    two = constant(2, dtype=grad.dtype.base_dtype, name="scalar")
    gx = _mul(two, grad) * _c(x - y)
    return list(unbroadcast(op, gx, _m.negative(gx)))


# -- casts --------------------------------------------------------------------------------
@register_gradient("Cast")
def _cast_grad(op, grad):
    src = op.inputs[0].dtype.base_dtype
    dst = op.outputs[0].dtype.base_dtype
    ok = (src.is_floating or src.is_complex) and (dst.is_floating or dst.is_complex)
    return [_m.cast(grad, src) if ok else None]


# -- matrix products ----------------------------------------------------------------------
@register_gradient("MatMul")
def _matmul_grad(op, grad):
    ta, tb = op.attrs["transpose_a"], op.attrs["transpose_b"]
    a, b = (_c(t) for t in op.inputs)
    mm = _m.matmul
    if not ta and not tb:
        return [mm(grad, b, transpose_b=True), mm(a, grad, transpose_a=True)]
    if not ta and tb:
        return [mm(grad, b), mm(grad, a, transpose_a=True)]
    if ta and not tb:
        return [mm(b, grad, transpose_b=True), mm(a, grad)]
    return [mm(b, grad, transpose_a=True, transpose_b=True),
            mm(grad, a, transpose_a=True, transpose_b=True)]


def _batch_matmul_grads(op, grad):
    ax, ay = op.attrs["adj_x"], op.attrs["adj_y"]
    x, y = op.inputs
    mm = _m.matmul
    if not ax and not ay:
        return mm(grad, y, adjoint_b=True), mm(x, grad, adjoint_a=True)
    if not ax and ay:
        return mm(grad, y), mm(grad, x, adjoint_a=True)
    if ax and not ay:
        return mm(y, grad, adjoint_b=True), mm(x, grad)
    return mm(y, grad, adjoint_a=True, adjoint_b=True), mm(grad, x, adjoint_a=True,
                                                           adjoint_b=True)


@register_gradient("BatchMatMul")
def _batch_matmul_grad(op, grad):
    return list(_batch_matmul_grads(op, grad))


@register_gradient("BatchMatMulV2")
def _batch_matmul_v2_grad(op, grad):
    x, y = op.inputs
    gx, gy = _batch_matmul_grads(op, grad)
    sx, sy = x.shape, y.shape
    if sx.ndims is not None and sy.ndims is not None and sx[:-2].is_fully_defined() and \
            sx[:-2] == sy[:-2]:
        return [gx, gy]
    # Reduce over broadcast batch dimensions: treat the batch shapes as a binary op's.
    bx, by = _a.shape(x)[:-2], _a.shape(y)[:-2]
    rx, ry = broadcast_gradient_args(bx, by)
    gx = _a.reshape(_r.reduce_sum(gx, rx), _a.shape(x))
    gy = _a.reshape(_r.reduce_sum(gy, ry), _a.shape(y))
    return [gx, gy]


def _tensordot_perm(n_lead: int, lead_axes: list[int], axes: list[int], paired: list[int],
                    rank: int, free_first: bool) -> list[int]:
    """Permutation taking a tensordot result back to an input's axis order (see below)."""
    free = [p for p in range(rank) if p not in axes]
    order = sorted(paired)
    perm = [0] * rank
    for p in range(rank):
        if p in free:
            pos = free.index(p)
            perm[p] = pos if free_first else n_lead + pos
        else:
            pos = order.index(paired[axes.index(p)])
            perm[p] = len(free) + pos if free_first else pos
    return perm


@register_gradient("Tensordot")
def _tensordot_grad(op, grad):
    a, b = op.inputs
    if a.shape.ndims is None or b.shape.ndims is None:
        raise ValueError(f"Gradient of Tensordot '{op.name}' needs inputs of known rank, got "
                         f"{a.shape} and {b.shape}")
    ra, rb = a.shape.ndims, b.shape.ndims
    a_axes, b_axes = _m._tensordot_axes(op.attrs["axes"], ra, rb)
    free_a = [p for p in range(ra) if p not in a_axes]
    free_b = [q for q in range(rb) if q not in b_axes]
    nfa = len(free_a)
    # da[free_a, k] = sum_{free_b} g[free_a, free_b] * b[k, free_b]
    ga = _m.fused_tensordot(grad, _c(b), [list(range(nfa, nfa + len(free_b))), free_b])
    ga = _a.transpose(ga, _tensordot_perm(0, [], a_axes, b_axes, ra, True))
    # db[k, free_b] = sum_{free_a} a[free_a, k] * g[free_a, free_b]
    gb = _m.fused_tensordot(_c(a), grad, [free_a, list(range(nfa))])
    gb = _a.transpose(gb, _tensordot_perm(len(b_axes), [], b_axes, a_axes, rb, False))
    return [ga, gb]


@register_gradient("Einsum")
def _einsum_grad(op, grad):
    inputs = op.inputs
    ins, out = _m.parse_einsum(op.attrs["equation"], len(inputs))
    for spec in ins:
        named = [lab for lab in spec if lab != "..."]
        if len(set(named)) != len(named) and "..." in spec:
            raise NotImplementedError(
                f"Gradient of Einsum '{op.name}' ({op.attrs['equation']}): repeated labels "
                "within an operand that has an ellipsis are not supported")
    if any("..." in spec for spec in ins):
        shapes = [t.shape for t, spec in zip(inputs, ins) if "..." in spec]
        lens = {s.ndims - len([lab for lab in spec if lab != "..."])
                for s, spec in zip(shapes, [sp for sp in ins if "..." in sp])
                if s.ndims is not None}
        if len(lens) != 1 or any(s.ndims is None for s in shapes):
            raise NotImplementedError(
                f"Gradient of Einsum '{op.name}' ({op.attrs['equation']}): operands whose "
                "ellipsis dimensions broadcast against each other are not supported")
    term = "".join  # labels -> subscript string ("..." stays "...")
    grads = []
    for k, x in enumerate(inputs):
        others = [(_c(t), spec) for j, (t, spec) in enumerate(zip(inputs, ins)) if j != k]
        operands = [grad, *[t for t, _ in others]]
        specs = [term(out), *[term(s) for _, s in others]]
        available = {lab for spec in [out, *[s for _, s in others]] for lab in spec}
        uniq = list(dict.fromkeys(ins[k]))  # a repeated label (a diagonal) once
        if any(lab not in available for lab in ins[k]):
            # x has labels summed away in the forward pass: ones broadcast back.
            operands.append(_a.ones_like(x) if uniq == ins[k] else
                            _a.ones(_a.stack([_a.shape(x)[ins[k].index(lab)]
                                              for lab in uniq]), x.dtype))
            specs.append(term(uniq))
        equation = ",".join(specs) + "->" + term(uniq)
        if uniq == ins[k] and len(operands) == len(inputs):
            # The plain case builds the op itself, as TensorFlow's gradient does
            # (``Einsum_grad/Einsum``, ``Einsum_grad/Einsum_1``).
            grads.append(make_tensor("Einsum", operands,
                                     {"equation": equation, "N": len(operands)},
                                     name="Einsum"))
            continue
        g = _m.einsum(equation, *operands)
        grads.append(g if uniq == ins[k] else _einsum_undiagonal(g, x, uniq, ins[k], ins))
    return grads


def _einsum_undiagonal(g, x, uniq, spec, ins):
    """`g` (labels `uniq`) placed on the diagonals of `x`'s repeated labels (`spec`, as
    ``ii``): each later occurrence of a label gets a fresh one, tied by an identity."""
    used = {lab for s in ins for lab in s}
    fresh = (c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in used)
    seen, full, eyes, ties = set(), [], [], []
    for pos, lab in enumerate(spec):
        if lab in seen:
            new = next(fresh)
            r = array_gen_ops.range(0, _a.shape(x)[pos])
            eyes.append(_m.cast(_m.equal(_a.expand_dims(r, 1), _a.expand_dims(r, 0)), x.dtype))
            ties.append(lab + new)
            full.append(new)
        else:
            seen.add(lab)
            full.append(lab)
    return _m.einsum(",".join(["".join(uniq), *ties]) + "->" + "".join(full), g, *eyes)


# -- reductions -------------------------------------------------------------------------
@register_gradient("Prod")
def _prod_grad(op, grad):
    # d prod / d x_i = prod / x_i, written without dividing (exact for zeros): the product
    # of the other elements = exclusive cumprod from the left times from the right, along
    # the reduced axes flattened into one. Computed via reduce over a transposed layout.
    x = op.inputs[0]
    g = _broadcast_back(op, grad)
    kept = _a.reshape(op.outputs[0], _kept_shape(op)) if not op.attrs["keep_dims"] \
        else op.outputs[0]
    axes = constant_value(op.inputs[1])
    if axes is None or x.shape.ndims is None:
        # general fallback: prod / x (undefined where x == 0)
        return [g * _c(kept / x), None]
    rank = x.shape.ndims
    red = sorted({int(a) % rank for a in np.reshape(axes, -1).tolist()})
    other = [i for i in range(rank) if i not in red]
    perm = other + red
    xt = _a.transpose(x, perm)
    st = _a.shape(xt)
    flat = _a.reshape(xt, _a.concat([st[:len(other)], [-1]], 0))
    left = _r.cumprod(flat, axis=-1, exclusive=True)
    right = _r.cumprod(flat, axis=-1, exclusive=True, reverse=True)
    others = _a.reshape(left * right, st)
    inv = [perm.index(i) for i in range(rank)]
    return [g * _c(_a.transpose(others, inv)), None]


def _minmax_grad(op, grad):
    x = op.inputs[0]
    y = op.outputs[0]
    if not op.attrs["keep_dims"]:
        y = _a.reshape(y, _kept_shape(op))
    g = _broadcast_back(op, grad)
    eq = _m.cast(_m.equal(x, y), grad.dtype.base_dtype)
    if op.attrs["keep_dims"]:
        count = _r.reduce_sum(eq, op.inputs[1], keepdims=True)
    else:
        count = _a.reshape(_r.reduce_sum(eq, op.inputs[1]), _kept_shape(op))
    return [g * eq / count, None]


register_gradient("Max")(_minmax_grad)
register_gradient("Min")(_minmax_grad)


@register_gradient("AddN")
def _add_n_grad(op, grad):
    return [grad] * len(op.inputs)


@register_gradient("Cumsum")
def _cumsum_grad(op, grad):
    exclusive, reverse = op.attrs["exclusive"], op.attrs["reverse"]
    return [_r.cumsum(grad, op.inputs[1], exclusive=exclusive, reverse=not reverse), None]


@register_gradient("Cumprod")
def _cumprod_grad(op, grad):
    x, axis = op.inputs
    exclusive, reverse = op.attrs["exclusive"], op.attrs["reverse"]
    y = op.outputs[0]
    # Exact for nonzero x (TensorFlow's rule): d/dx_i sum_j g_j y_j = sum_{j>=i} g_j y_j / x_i,
    # and 0 where x_i = 0 (TensorFlow divides with div_no_nan)
    out = _r.cumsum(grad * _c(y), axis, exclusive=exclusive, reverse=not reverse)
    return [_m.div_no_nan(out, _c(x)), None]


def reduce_to(grad, x):
    """Sum `grad` (shaped like a broadcast result) over the axes along which `x` was
    broadcast, giving `x`'s shape."""
    return unbroadcast(None, grad, None, x=x, y=grad)[0]
