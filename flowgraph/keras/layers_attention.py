"""Keras attention layers in graph mode: `Attention` (Luong: dot-product or concat
scores), `AdditiveAttention` (Bahdanau), `EinsumDense` (a dense layer written as an
einsum equation) and `MultiHeadAttention` (four `EinsumDense` projections named
``query``, ``key``, ``value``, ``attention_output``). Re-exported by
`flowgraph.keras.layers`.

The dense-attention layers take ``[query, value]`` or ``[query, value, key]`` and
``mask=[query_mask, value_mask]``: scores ``(batch, Tq, Tv)``, masked positions lowered by
1e9 before the softmax, the result ``softmax(scores) @ value``, zeroed on masked queries::

    query (B, Tq, d) ─┐
                      ├─ scores (B, Tq, Tv) ─ softmax over Tv ─ @ value (B, Tv, d) ─> (B, Tq, d)
    key   (B, Tv, d) ─┘

Example
-------
>>> import flowgraph as tf
>>> from flowgraph import keras
>>> with tf.Graph().as_default():
...     q, v = keras.Input((3, 8)), keras.Input((5, 8))
...     mha = keras.layers.MultiHeadAttention(num_heads=2, key_dim=4)
...     out, scores = mha(q, v, return_attention_scores=True)
...     print(out.shape, scores.shape, mha.weights[0].name)
(?, 3, 8) (?, 2, 3, 5) multi_head_attention/query/kernel:0
"""

from __future__ import annotations

import re
import string

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.keras import constraints as _constraints
from flowgraph.keras.layers import Layer, get_activation, to_list
from flowgraph.layers.core import smart_cond
from flowgraph.ops import (
    array_gen_ops,
    array_ops,
    array_shape_ops,
    math_ops,
    math_reduce,
    nn_ops,
    random_ops,
)

__all__ = ["AdditiveAttention", "Attention", "EinsumDense", "MultiHeadAttention"]


def _dropout(x, rate: float, training, seed=None):
    """`x` with a `rate` fraction zeroed (the rest scaled up) while `training`."""
    if not rate:
        return x

    def drop():
        noise = random_ops.random_uniform(array_shape_ops.shape(x), dtype=x.dtype.base_dtype,
                                          seed=seed)
        keep = math_ops.cast(math_ops.greater_equal(noise, rate), x.dtype.base_dtype)
        return math_ops.multiply(math_ops.multiply(x, 1.0 / (1.0 - rate)), keep)

    return smart_cond(training, drop, lambda: array_ops.identity(x))


def _causal_mask(tq, tv):
    """``(1, Tq, Tv)`` booleans: query ``i`` sees values ``j <= i``."""
    rows = array_gen_ops.range(tq)
    cols = array_gen_ops.range(tv)
    mask = math_ops.greater_equal(array_shape_ops.expand_dims(rows, 1),
                                  array_shape_ops.expand_dims(cols, 0))
    return array_shape_ops.expand_dims(mask, 0)


# -- dense attention -----------------------------------------------------------------------
class _DenseAttention(Layer):
    """The shared call: scores from `_scores`, masks, softmax, the weighted values."""

    def __init__(self, use_scale: bool = False, dropout=0.0, **kwargs) -> None:
        kwargs.pop("causal", None)  # TF 2.x's deprecated argument: use_causal_mask
        super().__init__(**kwargs)
        self.use_scale, self.dropout = bool(use_scale), float(dropout)

    def get_config(self) -> dict:
        return {**super().get_config(), "dropout": self.dropout, "use_scale": self.use_scale}

    @staticmethod
    def _split(inputs, where: str):
        if not isinstance(inputs, list) or len(inputs) not in (2, 3):
            raise ValueError(f"{where} layer must be called on a list of inputs, namely "
                             f"[query, value] or [query, value, key]. Received: {inputs}.")
        q, v = inputs[0], inputs[1]
        return q, v, inputs[2] if len(inputs) == 3 else v

    def build(self, input_shape) -> None:
        if not isinstance(input_shape, list):
            raise ValueError(f"{type(self).__name__} layer must be called on a list of "
                             f"inputs, namely [query, value] or [query, value, key]. "
                             f"Received: {input_shape}.")
        self._build_weights([TensorShape(s) for s in input_shape])

    def _build_weights(self, shapes) -> None:
        pass

    def compute_mask(self, inputs, mask=None):
        """The query's mask, as TF."""
        if isinstance(mask, list) and mask:
            return mask[0]
        return None

    def call(self, inputs, mask=None, training=None, return_attention_scores: bool = False,
             use_causal_mask: bool = False):
        q, v, k = self._split(inputs, type(self).__name__)
        masks = to_list(mask) if mask is not None else \
            [getattr(q, "_keras_mask", None), getattr(v, "_keras_mask", None)]
        q_mask = masks[0] if masks else None
        v_mask = masks[1] if len(masks) > 1 else None
        scores = self._scores(q, k)
        scores_mask = None
        if v_mask is not None:
            scores_mask = array_shape_ops.expand_dims(math_ops.cast(v_mask, _dtypes.bool), -2)
        if use_causal_mask:
            shape = array_shape_ops.shape(scores)
            causal = _causal_mask(shape[-2], shape[-1])
            scores_mask = causal if scores_mask is None else \
                math_ops.logical_and(scores_mask, causal)
        if scores_mask is not None:
            penalty = 65504.0 if scores.dtype.base_dtype == _dtypes.float16 else 1.0e9
            padding = math_ops.cast(math_ops.logical_not(scores_mask), scores.dtype.base_dtype)
            scores = math_ops.subtract(scores, math_ops.multiply(penalty, padding))
        weights = nn_ops.softmax(scores)
        result = math_ops.matmul(_dropout(weights, self.dropout, training), v)
        if q_mask is not None:
            keep = array_shape_ops.expand_dims(math_ops.cast(q_mask, result.dtype.base_dtype),
                                               -1)
            result = math_ops.multiply(result, keep)
        return [result, weights] if return_attention_scores else result


class Attention(_DenseAttention):
    """Dot-product attention (Luong): scores ``query @ key^T`` (times a learned scalar
    ``scale`` with `use_scale`), or with ``score_mode='concat'``
    ``concat_score_weight * sum(tanh(scale * (query + key)))``."""

    def __init__(self, use_scale: bool = False, score_mode="dot", **kwargs) -> None:
        super().__init__(use_scale=use_scale, **kwargs)
        if score_mode not in ("dot", "concat"):
            raise ValueError(f"Invalid value for argument score_mode. Expected one of "
                             f"{{'dot', 'concat'}}. Received: score_mode={score_mode}")
        self.score_mode = score_mode

    def get_config(self) -> dict:
        return {**super().get_config(), "score_mode": self.score_mode}

    def _build_weights(self, shapes) -> None:
        self.scale = self.add_weight("scale", [], initializer="ones") \
            if self.use_scale else None
        self.concat_score_weight = self.add_weight("concat_score_weight", [],
                                                   initializer="ones") \
            if self.score_mode == "concat" else None

    def _scores(self, query, key):
        if self.score_mode == "dot":
            scores = math_ops.matmul(query, key, transpose_b=True)
            return math_ops.multiply(self.scale, scores) if self.scale is not None else scores
        total = math_ops.add(array_shape_ops.expand_dims(query, -2),
                             array_shape_ops.expand_dims(key, -3))
        if self.scale is not None:
            total = math_ops.multiply(self.scale, total)
        return math_ops.multiply(self.concat_score_weight,
                                 math_reduce.reduce_sum(math_ops.tanh(total), axis=-1))


class AdditiveAttention(_DenseAttention):
    """Additive attention (Bahdanau): scores ``sum(scale * tanh(query + key))`` over the
    features, ``scale`` a learned vector (`use_scale`, the default)."""

    def __init__(self, use_scale: bool = True, **kwargs) -> None:
        super().__init__(use_scale=use_scale, **kwargs)

    def _build_weights(self, shapes) -> None:
        dim = shapes[1][-1].value
        self.scale = self.add_weight("scale", [dim], initializer="glorot_uniform") \
            if self.use_scale else None

    def _scores(self, query, key):
        t = math_ops.tanh(math_ops.add(array_shape_ops.expand_dims(query, -2),
                                       array_shape_ops.expand_dims(key, -3)))
        if self.scale is not None:
            t = math_ops.multiply(self.scale, t)
        return math_reduce.reduce_sum(t, axis=-1)


# -- EinsumDense ---------------------------------------------------------------------------
def _einsum_shapes(equation: str, bias_axes, input_shape: list, output_shape: list):
    """``(kernel shape, bias shape or None, full output shape)`` of an EinsumDense
    equation: ``ab,bc->ac``, ``...b,bc->...c`` (leading dims elided) or
    ``ab...,bc->ac...`` (trailing dims elided)."""
    match, elide = None, None
    for pattern, side in ((r"([a-zA-Z]+),([a-zA-Z]+)->([a-zA-Z]+)$", None),
                          (r"\.\.\.([a-zA-Z]+),([a-zA-Z]+)->\.\.\.([a-zA-Z]+)$", "left"),
                          (r"([a-zA-Z]{2,})\.\.\.,([a-zA-Z]+)->([a-zA-Z]{2,})\.\.\.$",
                           "right")):
        match = re.match(pattern, equation)
        if match:
            elide = side
            break
    if match is None:
        raise ValueError(f"Invalid einsum equation '{equation}'. Equations must be in the "
                         f"form [X],[Y]->[Z], ...[X],[Y]->...[Z], or [X]...,[Y]->[Z]....")
    in_spec, w_spec, out_spec = match.groups()
    elided = len(input_shape) - len(in_spec)
    out = [input_shape[0], *output_shape]
    if elided > 0 and elide == "left":
        for i in range(1, elided):
            out.insert(1, input_shape[i])
    elif elided > 0 and elide == "right":
        for i in range(len(input_shape) - elided, len(input_shape)):
            out.append(input_shape[i])
    if elide == "left":
        in_map = {d: i + elided - len(input_shape) for i, d in enumerate(in_spec)}
        out_map = {d: i + elided for i, d in enumerate(out_spec)}
    else:
        in_map = {d: i for i, d in enumerate(in_spec)}
        out_map = {d: i for i, d in enumerate(out_spec)}
    for d in in_spec:
        if d in out_map and out[out_map[d]] is not None and \
                input_shape[in_map[d]] != out[out_map[d]]:
            raise ValueError(f"Input shape and output shape do not match at shared dimension "
                             f"'{d}'. Input shape is {input_shape[in_map[d]]}, and output "
                             f"shape is {out[out_map[d]]}.")
    for d in out_spec:
        if d not in in_spec and d not in w_spec:
            raise ValueError(f"Dimension '{d}' was specified in the output '{out_spec}' but "
                             f"has no corresponding dim in the input spec '{in_spec}' or "
                             f"weight spec '{w_spec}'")
    kernel = []
    for d in w_spec:
        if d in in_map:
            kernel.append(input_shape[in_map[d]])
        elif d in out_map:
            kernel.append(out[out_map[d]])
        else:
            raise ValueError(f"Weight dimension '{d}' did not have a match in either the "
                             f"input spec '{in_spec}' or the output spec '{out_spec}'. For "
                             f"this layer, the weight must be fully specified.")
    bias = None
    if bias_axes:
        sizes = {d: out[out_map[d]] for d in out_spec}
        for d in bias_axes:
            if d not in out_spec:
                raise ValueError(f"Bias dimension '{d}' was requested, but is not part of "
                                 f"the output spec '{out_spec}'")
        first = min(out_spec.find(d) for d in bias_axes)
        bias = [sizes[d] if d in bias_axes else 1 for d in out_spec[first:]]
        if elide == "right":
            bias += [1] * elided
    return kernel, bias, out


class EinsumDense(Layer):
    """``activation(einsum(equation, inputs, kernel) + bias)``: the kernel's shape comes
    from the equation, the input's shape and `output_shape` (without the batch axis;
    None for dimensions the input gives); `bias_axes` names the output axes the bias
    spans."""

    def __init__(self, equation, output_shape, activation=None, bias_axes=None,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs) -> None:
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.equation = equation
        self.partial_output_shape = [output_shape] if isinstance(output_shape, int) else \
            list(output_shape)
        self.bias_axes = bias_axes
        self._activation_id = activation
        self.activation = get_activation(activation)
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self.kernel_constraint = _constraints.get(kernel_constraint)
        self.bias_constraint = _constraints.get(bias_constraint)

    def get_config(self) -> dict:
        return {**super().get_config(), "output_shape": self.partial_output_shape,
                "equation": self.equation, "activation": self._activation_id,
                "bias_axes": self.bias_axes, "kernel_initializer": self.kernel_initializer,
                "bias_initializer": self.bias_initializer,
                "kernel_regularizer": self.kernel_regularizer,
                "bias_regularizer": self.bias_regularizer,
                "activity_regularizer": self.activity_regularizer,
                "kernel_constraint": self.kernel_constraint,
                "bias_constraint": self.bias_constraint}

    def build(self, input_shape) -> None:
        shape = TensorShape(input_shape).as_list()
        kernel, bias, out = _einsum_shapes(self.equation, self.bias_axes, shape,
                                           self.partial_output_shape)
        self.full_output_shape = out
        self.kernel = self.add_weight("kernel", kernel, initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.bias = self.add_weight("bias", bias, initializer=self.bias_initializer,
                                    regularizer=self.bias_regularizer,
                                    constraint=self.bias_constraint) if bias else None

    def call(self, inputs):
        out = math_ops.einsum(self.equation, inputs, self.kernel)
        if self.bias is not None:
            out = math_ops.add(out, self.bias)
        out = self.activation(out)
        full = list(self.full_output_shape)
        full[0] = inputs.shape[0].value
        out.set_shape(full)
        return out


# -- MultiHeadAttention --------------------------------------------------------------------
_CHR = string.ascii_lowercase


def _projection(free: int, bound: int, output: int) -> tuple[str, str, int]:
    """``(equation, bias_axes, output rank)`` of a projection keeping `free` leading
    axes, contracting `bound` axes and adding `output` axes."""
    inp = kernel = out = bias = ""
    for i in range(free):
        inp += _CHR[i]
        out += _CHR[i]
    for i in range(bound):
        inp += _CHR[free + i]
        kernel += _CHR[free + i]
    for i in range(output):
        c = _CHR[free + bound + i]
        kernel += c
        out += c
        bias += c
    return f"{inp},{kernel}->{out}", bias, len(out)


def _attention_equations(rank: int, attn_axes: tuple) -> tuple[str, str, tuple]:
    """The dot-product and combine equations of attention over `attn_axes` of
    projected tensors of `rank` (batch, positions..., heads, key_dim), and the softmax
    axes of the scores."""
    target = _CHR[:rank]
    batch_dims = [i for i in range(rank) if i not in attn_axes and i != rank - 1]
    offset = rank
    source = ""
    for i in range(rank):
        if i in batch_dims or i == rank - 1:
            source += target[i]
        else:
            source += _CHR[offset]
            offset += 1
    product = "".join([target[i] for i in batch_dims] + [target[i] for i in attn_axes] +
                      [source[i] for i in attn_axes])
    norm_axes = tuple(range(len(product) - len(attn_axes), len(product)))
    return f"{source},{target}->{product}", f"{product},{source}->{target}", norm_axes


class MultiHeadAttention(Layer):
    """Multi-head attention: `num_heads` heads projecting query and key to `key_dim`
    and value to `value_dim` (default `key_dim`) features, scaled dot products over
    `attention_axes` (default: all but batch, heads and features), and an output
    projection to `output_shape` (default: the query's last dimension).

    Call as ``mha(query, value, key=None, attention_mask=None,
    return_attention_scores=False, use_causal_mask=False)``.
    """

    supports_masking = True

    def compute_mask(self, inputs, mask=None):
        """The query's mask, as TF."""
        return mask[0] if isinstance(mask, list) and mask else mask

    def __init__(self, num_heads, key_dim, value_dim=None, dropout=0.0,
                 use_bias: bool = True, output_shape=None, attention_axes=None,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs) -> None:
        for key in ("query_shape", "key_shape", "value_shape"):
            kwargs.pop(key, None)  # TF's config records them; the first call builds
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.num_heads, self.key_dim = int(num_heads), int(key_dim)
        self.value_dim = int(value_dim) if value_dim else self.key_dim
        self.dropout, self.use_bias = float(dropout), use_bias
        self.output_shape_arg = output_shape
        if attention_axes is not None and not isinstance(attention_axes, list | tuple):
            attention_axes = (attention_axes,)
        self.attention_axes = tuple(attention_axes) if attention_axes is not None else None
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint
        self._shapes = None

    def get_config(self) -> dict:
        shapes = self._shapes or (None, None, None)
        return {**super().get_config(), "num_heads": self.num_heads, "key_dim": self.key_dim,
                "value_dim": self.value_dim, "dropout": self.dropout,
                "use_bias": self.use_bias, "output_shape": self.output_shape_arg,
                "attention_axes": getattr(self, "_attn_axes", self.attention_axes),
                "kernel_initializer": self.kernel_initializer,
                "bias_initializer": self.bias_initializer,
                "kernel_regularizer": self.kernel_regularizer,
                "bias_regularizer": self.bias_regularizer,
                "activity_regularizer": self.activity_regularizer,
                "kernel_constraint": self.kernel_constraint,
                "bias_constraint": self.bias_constraint,
                "query_shape": shapes[0], "key_shape": shapes[2], "value_shape": shapes[1]}

    def __call__(self, query, value=None, key=None, **kwargs):
        if value is None and isinstance(query, list | tuple) and len(query) in (2, 3):
            return super().__call__(list(query), **kwargs)  # a node replayed: [q, v(, k)]
        if value is None:
            raise TypeError(f"MultiHeadAttention ({self.name}) needs `value`: call it as "
                            f"mha(query, value, key=None, ...).")
        inputs = [query, value] if key is None else [query, value, key]
        return super().__call__(inputs, **kwargs)

    @property
    def trainable_weights(self) -> list:
        if not self.trainable:
            return []
        return [w for d in self._dense_layers() for w in d.trainable_weights]

    @property
    def non_trainable_weights(self) -> list:
        if self.trainable:
            return []
        return [w for d in self._dense_layers() for w in d.weights]

    @property
    def losses(self) -> list:
        return list(self._losses) + [x for d in self._dense_layers() for x in d.losses]

    def _dense_layers(self) -> list:
        return [d for d in (getattr(self, n, None) for n in
                            ("_query_dense", "_key_dense", "_value_dense", "_output_dense"))
                if d is not None]

    def _dense(self, equation, output_shape, bias_axes, name, input_shape):
        layer = EinsumDense(equation, output_shape,
                            bias_axes=bias_axes if self.use_bias else None,
                            kernel_initializer=self.kernel_initializer,
                            bias_initializer=self.bias_initializer,
                            kernel_regularizer=self.kernel_regularizer,
                            bias_regularizer=self.bias_regularizer,
                            kernel_constraint=self.kernel_constraint,
                            bias_constraint=self.bias_constraint, name=name,
                            dtype=self._dtype)
        layer._weight_scope = f"{self._scope}{name}/"
        layer._graph, layer._dtype = self._graph, self._dtype
        layer.build(input_shape)
        layer.built = True
        return layer

    def build(self, input_shape) -> None:
        from flowgraph.framework.graph import get_default_graph

        shapes = [TensorShape(s) for s in input_shape]
        q_shape, v_shape = shapes[0], shapes[1]
        k_shape = shapes[2] if len(shapes) == 3 else v_shape
        self._shapes = (q_shape.as_list(), v_shape.as_list(), k_shape.as_list())
        scope = get_default_graph().get_name_scope()
        self._scope = f"{scope}/" if scope else ""
        free = q_shape.ndims - 1
        eq, bias, rank = _projection(free, 1, 2)
        heads_key = [None] * (rank - 1 - 2) + [self.num_heads, self.key_dim]
        self._query_dense = self._dense(eq, heads_key, bias, "query", q_shape)
        eq, bias, rank = _projection(k_shape.ndims - 1, 1, 2)
        self._key_dense = self._dense(eq, [None] * (rank - 3) + [self.num_heads,
                                                                 self.key_dim],
                                      bias, "key", k_shape)
        eq, bias, rank = _projection(v_shape.ndims - 1, 1, 2)
        self._value_dense = self._dense(eq, [None] * (rank - 3) + [self.num_heads,
                                                                   self.value_dim],
                                        bias, "value", v_shape)
        rank = q_shape.ndims + 1
        axes = self.attention_axes if self.attention_axes is not None else \
            tuple(range(1, rank - 2))
        self._attn_axes = tuple(a % rank for a in axes)
        self._dot_eq, self._combine_eq, self._norm_axes = \
            _attention_equations(rank, self._attn_axes)
        out_shape = self.output_shape_arg
        out_shape = [q_shape[-1].value] if out_shape is None else \
            ([out_shape] if isinstance(out_shape, int) else list(out_shape))
        eq, bias, out_rank = _projection(free, 2, len(out_shape))
        proj_shape = TensorShape([*q_shape.as_list()[:-1], self.num_heads, self.value_dim])
        self._output_dense = self._dense(eq, [None] * (out_rank - 1 - len(out_shape)) +
                                         out_shape, bias, "attention_output", proj_shape)

    def _masked_softmax(self, scores, mask):
        if mask is not None:
            mask = math_ops.cast(mask, scores.dtype.base_dtype)
            for _ in range(scores.shape.ndims - mask.shape.ndims):
                mask = array_shape_ops.expand_dims(mask, -len(self._attn_axes) * 2 - 1)
            scores = math_ops.add(scores, math_ops.multiply(math_ops.subtract(1.0, mask),
                                                            -1e9))
        if len(self._norm_axes) == 1:
            return nn_ops.softmax(scores, axis=self._norm_axes[0])
        lse = math_reduce.reduce_logsumexp(scores, axis=list(self._norm_axes), keepdims=True)
        return math_ops.exp(math_ops.subtract(scores, lse))

    def _auto_mask(self, query, value, key, attention_mask, use_causal_mask: bool):
        q_mask = getattr(query, "_keras_mask", None)
        v_mask = getattr(value, "_keras_mask", None)
        k_mask = getattr(key, "_keras_mask", None)
        auto = None
        if q_mask is not None:
            auto = array_shape_ops.expand_dims(math_ops.cast(q_mask, _dtypes.bool), -1)
        for m in (v_mask, k_mask):
            if m is not None:
                m = array_shape_ops.expand_dims(math_ops.cast(m, _dtypes.bool), -2)
                auto = m if auto is None else math_ops.logical_and(auto, m)
        if use_causal_mask:
            causal = _causal_mask(array_shape_ops.shape(query)[1],
                                  array_shape_ops.shape(value)[1])
            auto = causal if auto is None else math_ops.logical_and(auto, causal)
        if auto is not None:
            attention_mask = auto if attention_mask is None else math_ops.logical_and(
                math_ops.cast(attention_mask, _dtypes.bool), auto)
        return attention_mask

    def call(self, inputs, attention_mask=None, return_attention_scores: bool = False,
             training=None, use_causal_mask: bool = False):
        query, value = inputs[0], inputs[1]
        key = inputs[2] if len(inputs) == 3 else value
        attention_mask = self._auto_mask(query, value, key, attention_mask, use_causal_mask)
        q = self._query_dense._invoke(query, {})
        k = self._key_dense._invoke(key, {})
        v = self._value_dense._invoke(value, {})
        q = math_ops.multiply(q, 1.0 / float(self.key_dim) ** 0.5)
        scores = math_ops.einsum(self._dot_eq, k, q)
        scores = self._masked_softmax(scores, attention_mask)
        out = math_ops.einsum(self._combine_eq, _dropout(scores, self.dropout, training), v)
        out = self._output_dense._invoke(out, {})
        return [out, scores] if return_attention_scores else out
