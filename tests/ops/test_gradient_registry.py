"""Every registered op is either declared non-differentiable or has a gradient that is
checked here against float64 finite differences.

`CASES` maps an op type to one or more ``(inputs, build)`` pairs: `inputs` are NumPy
arrays (floating/complex ones are differentiated), ``build(*tensors)`` creates the op. A
new op must be added either to `CASES` (after registering its gradient) or declared with
``not_differentiable``: `test_every_op_is_declared` fails otherwise.
"""

from __future__ import annotations

import batch_norm_cases
import cf_cases
import conv3d_cases
import dx_cases
import fractional_pool_cases
import image_random_cases
import image_transform_cases
import issue15_cases
import issue15_cov_cases
import issue15_math_cases
import linalg_complete_cases
import misc_names_cases
import missing_names_cases
import numpy as np
import pytest
import quantize_cases
import raw_img_cases
import raw_math_cases
import raw_parse_cases
import raw_rnn_cases
import raw_sparse_cases
import raw_state_cases
import raw_tlist_cases
import raw_train_cases
import resource_variable_cases
import tensor_array_cases
from gradient_checker import check_gradient

import flowgraph as tf
from flowgraph.framework.registry import registered_ops
from flowgraph.ops import array_grad, gradients, math_grad, nn_grad  # noqa: F401
from flowgraph.ops.math_ops import fused_tensordot
from flowgraph.ops.nn_ops import fused_l2_normalize
from flowgraph.ops.op_util import make_tensor

R = np.random.RandomState(7)


def u(*shape, low=-2.0, high=2.0):
    return R.uniform(low, high, size=shape)


def away(*shape, gap=0.2):
    """Values bounded away from zero (for sign-like kinks)."""
    x = R.uniform(gap, 2.0, size=shape)
    return x * R.choice([-1.0, 1.0], size=shape)


def pos(*shape):
    return R.uniform(0.5, 2.0, size=shape)


def cplx(*shape):
    return u(*shape) + 1j * u(*shape)


def distinct(*shape):
    """Values whose pairwise gaps are >= 0.1 (stable max/argmax)."""
    n = int(np.prod(shape))
    return (R.permutation(n) * 0.1 - n * 0.05 + 0.03).reshape(shape)


def nonint(*shape):
    """Values away from integers and half-integers (Floor, Ceil, Round)."""
    return np.floor(u(*shape) * 3) + R.choice([0.2, 0.3, 0.7, 0.8], size=shape)


def op(op_type, inputs, attrs=None):
    """A builder making `op_type` directly from tensors and constants."""

    def build(*xs):
        it = iter(xs)
        ins = [next(it) if v is None else tf.constant(v) for v in inputs]
        return make_tensor(op_type, ins, attrs)

    return build


def unary(fn, x):
    return [([x], fn)]


def binary(fn, x, y):
    return [([x, y], fn), ([x[:1], y], fn), ([x, y[..., :1]], fn)]


CONV = {"strides": [1, 2, 1, 1], "padding": "SAME", "explicit_paddings": [],
        "dilations": [1, 1, 1, 1], "data_format": "NHWC"}
CONV_NCHW = {"strides": [1, 1, 1, 1], "padding": "VALID", "explicit_paddings": [],
             "dilations": [1, 1, 2, 1], "data_format": "NCHW"}
POOL = {"ksize": [1, 2, 2, 1], "strides": [1, 2, 1, 1], "padding": "SAME",
        "data_format": "NHWC"}
IDX = np.array([[2, 0], [1, 2], [0, 0]], np.int32)

CASES = {
    # -- math: unary
    "Neg": unary(tf.negative, u(2, 3)),
    "Sign": unary(tf.sign, away(2, 3)),
    "Reciprocal": unary(tf.reciprocal, pos(2, 3)),
    "Square": [*unary(tf.square, u(2, 3)), *unary(tf.square, cplx(3))],
    "Sqrt": unary(tf.sqrt, pos(2, 3)),
    "Rsqrt": unary(tf.rsqrt, pos(2, 3)),
    "Exp": unary(tf.exp, u(2, 3)) + unary(tf.exp, cplx(2)),
    "Expm1": unary(tf.expm1, u(2, 3)),
    "Log": unary(tf.log, pos(2, 3)) + unary(tf.log, cplx(2) + 3),
    "Log1p": unary(tf.log1p, pos(2, 3)),
    "Tanh": unary(tf.tanh, u(2, 3)),
    "Sigmoid": unary(tf.sigmoid, u(2, 3)),
    "Sin": unary(tf.sin, u(2, 3)),
    "Cos": unary(tf.cos, u(2, 3)),
    "Tan": unary(tf.tan, u(2, 3, low=-1, high=1)),
    "Erf": unary(tf.erf, u(2, 3)),
    "Floor": unary(tf.floor, nonint(2, 3)),
    "Ceil": unary(tf.ceil, nonint(2, 3)),
    "Round": unary(tf.round, nonint(2, 3)),
    "Abs": unary(tf.abs, away(2, 3)),
    "ComplexAbs": unary(tf.abs, cplx(2, 3)),
    "Conj": unary(tf.conj, cplx(2, 3)),
    # -- math: binary, with broadcasting both ways
    "Add": [([u(2, 3), u(3)], op("Add", [None, None]))],  # what older graphs hold
    "AddV2": binary(tf.add, u(2, 3), u(2, 3)),
    "Sub": binary(tf.subtract, u(2, 3), u(2, 3)),
    "Mul": [*binary(tf.multiply, u(2, 3), u(2, 3)), ([cplx(2), cplx(2)], tf.multiply)],
    "RealDiv": binary(tf.realdiv, u(2, 3), pos(2, 3)),
    "DivNoNan": binary(tf.div_no_nan, u(2, 3), pos(2, 3)),
    "FloorMod": [([np.array([1.3, 2.7, -4.1]), np.array([2.1, -1.7, 1.9])], tf.floormod)],
    "NextAfter": binary(tf.math.nextafter, u(2, 3), u(2, 3)),  # slopes 1 and 0, as TF
    "Pow": binary(tf.pow, pos(2, 3), u(2, 3)),
    "Maximum": binary(tf.maximum, distinct(2, 3), distinct(2, 3) + 0.05),
    "Minimum": binary(tf.minimum, distinct(2, 3), distinct(2, 3) + 0.05),
    "SquaredDifference": binary(tf.squared_difference, u(2, 3), u(2, 3)),
    "Cast": [([u(2, 3)], lambda x: tf.cast(x, tf.complex128)),
             ([cplx(3)], lambda z: tf.cast(z, tf.float64))],
    # -- matrix products
    "MatMul": [([u(2, 3), u(3, 4)], tf.matmul),
               ([u(3, 2), u(3, 4)], lambda a, b: tf.matmul(a, b, transpose_a=True)),
               ([u(2, 3), u(4, 3)], lambda a, b: tf.matmul(a, b, transpose_b=True)),
               ([u(3, 2), u(4, 3)], lambda a, b: tf.matmul(a, b, True, True)),
               ([cplx(2, 3), cplx(3, 2)], tf.matmul)],
    "BatchMatMulV2": [([u(5, 2, 3), u(5, 3, 4)], tf.matmul),
                      ([u(5, 1, 2, 3), u(3, 3, 4)], tf.matmul),
                      ([u(5, 3, 2), u(5, 4, 3)],
                       lambda a, b: tf.matmul(a, b, adjoint_a=True, adjoint_b=True))],
    "BatchMatMul": [([u(5, 2, 3), u(5, 4, 3)], op("BatchMatMul", [None, None],
                                                  {"adj_x": False, "adj_y": True}))],
    "Tensordot": [([u(2, 3, 4), u(4, 3, 5)],
                   lambda a, b: fused_tensordot(a, b, [[1, 2], [1, 0]])),
                  ([u(2, 3), u(3, 4)], lambda a, b: fused_tensordot(a, b, 1))],
    "Einsum": [([u(2, 3), u(3, 4)], lambda a, b: tf.einsum("ij,jk->ik", a, b)),
               ([u(5, 2, 3), u(3)], lambda a, b: tf.einsum("bij,j->bi", a, b)),
               ([u(2, 3)], lambda a: tf.einsum("ij->j", a))],
    # -- reductions and scans
    "Sum": [([u(2, 3, 4)], lambda x: tf.reduce_sum(x, [0, 2])),
            ([u(2, 3)], lambda x: tf.reduce_sum(x, 1, keepdims=True)),
            ([u(2, 3)], tf.reduce_sum)],
    "Mean": [([u(2, 3, 4)], lambda x: tf.reduce_mean(x, -1)),
             ([u(2, 3)], tf.reduce_mean)],
    "Prod": [([u(2, 3, 4)], lambda x: tf.reduce_prod(x, [0, 2])),
             ([np.array([[0.0, 2.0, 3.0], [1.5, 0.5, -1.0]])],
              lambda x: tf.reduce_prod(x, 1, keepdims=True))],
    "Max": [([distinct(2, 3, 4)], lambda x: tf.reduce_max(x, 1))],
    "Min": [([distinct(2, 3, 4)], lambda x: tf.reduce_min(x, [0, 2], keepdims=True))],
    "AddN": [([u(2, 3), u(2, 3), u(2, 3)], lambda *xs: tf.add_n(list(xs)))],
    "Cumsum": [([u(2, 3)], lambda x: tf.cumsum(x, 1)),
               ([u(2, 3)], lambda x: tf.cumsum(x, 0, exclusive=True, reverse=True))],
    "Cumprod": [([pos(2, 3)], lambda x: tf.cumprod(x, 1)),
                ([pos(2, 3)], lambda x: tf.cumprod(x, 1, exclusive=True, reverse=True))],
    # -- array
    "CheckNumerics": [([u(2, 3)], op("CheckNumerics", [None], {"message": "m"}))],
    "SoftmaxCrossEntropyWithLogits": [([u(3, 4), R.dirichlet(np.ones(4), size=3)],
        lambda x, y: tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=x))],
    "SparseSoftmaxCrossEntropyWithLogits": [([u(3, 4), np.array([0, 3, 1])],
        lambda x, i: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=i, logits=x))],
    "L2Loss": unary(tf.nn.l2_loss, u(2, 3)),
    "CTCLoss": [([u(5, 2, 4)], lambda x: tf.nn.ctc_loss(tf.SparseTensor(
        [[0, 0], [0, 1], [1, 0]], tf.constant([1, 1, 2], tf.int32), [2, 2]), x, [5, 4]))],
    "TopKV2": [([distinct(2, 6)], lambda x: tf.nn.top_k(x, 3).values)],
    "Print": [([u(2, 3)], lambda x: tf.Print(x, [x], "dbg", first_n=1) * 2.0)],
    "Identity": unary(tf.identity, u(2, 3)),
    "PlaceholderWithDefault": unary(lambda x: tf.placeholder_with_default(x, [2, 3]),
                                    u(2, 3)),
    "Reshape": unary(lambda x: tf.reshape(x, [3, -1]), u(2, 3, 4)),
    "ExpandDims": unary(lambda x: tf.expand_dims(x, 1), u(2, 3)),
    "Squeeze": unary(lambda x: tf.squeeze(x, [1]), u(2, 1, 3)),
    "Transpose": unary(lambda x: tf.transpose(x, [2, 0, 1]), u(2, 3, 4)),
    "ConjugateTranspose": unary(lambda x: tf.transpose(x, [1, 0], conjugate=True),
                                cplx(2, 3)),
    "ConcatV2": [([u(2, 3), u(2, 4)], lambda a, b: tf.concat([a, b], 1)),
                 ([u(2, 3), u(4, 3)], lambda a, b: tf.concat([a, b], -2))],
    "Split": unary(lambda x: tf.split(x, 2, axis=1)[1], u(3, 4)),
    "SplitV": unary(lambda x: tf.split(x, [1, 3], axis=1), u(3, 4)),
    "Pack": [([u(2, 3), u(2, 3)], lambda a, b: tf.stack([a, b], axis=1))],
    "Unpack": unary(lambda x: tf.unstack(x, axis=1)[1:], u(2, 3, 4)),
    "Tile": unary(lambda x: tf.tile(x, [2, 1, 3]), u(2, 3, 1)),
    "BroadcastTo": [*unary(lambda x: tf.broadcast_to(x, [4, 2, 3]), u(2, 1)),
                    *unary(lambda x: tf.broadcast_to(x, tf.constant([2, 3], tf.int64)), u(3))],
    "Pad": unary(lambda x: tf.pad(x, [[1, 0], [2, 3]]), u(2, 3)),
    "PadV2": [([u(2, 3), u()], lambda x, c: make_tensor(
        "PadV2", [x, tf.constant([[1, 0], [0, 2]]), c]))],
    "MirrorPad": [([u(3, 4)], lambda x: tf.pad(x, [[1, 2], [2, 1]], mode="REFLECT")),
                  ([u(3, 4)], lambda x: tf.pad(x, [[1, 2], [0, 3]], mode="SYMMETRIC"))],
    "ReverseV2": unary(lambda x: tf.reverse_v2(x, [0, 2]), u(2, 3, 4)),
    "ReverseSequence": unary(lambda x: tf.reverse_sequence(x, [2, 4, 1], seq_axis=1,
                                                           batch_axis=0), u(3, 4, 2)),
    "Slice": unary(lambda x: tf.slice(x, [1, 0, 2], [1, -1, 2]), u(2, 3, 5)),
    "StridedSlice": [([u(4, 5, 3)], lambda x: x[1:, ::-2, 1]),
                     ([u(4, 5)], lambda x: x[..., tf.newaxis, 1:4:2])],
    "GatherV2": [([u(4, 3)], lambda p: tf.gather(p, IDX)),
                 ([u(2, 4, 3)], lambda p: tf.gather(p, [3, 0, 3], axis=1))],
    "GatherNd": unary(lambda p: tf.gather_nd(p, [[0, 1], [1, 2], [0, 1]]), u(2, 3, 4)),
    "ScatterNd": [([u(3, 4)], lambda v: tf.scatter_nd([[1], [4], [1]], v, [5, 4]))],
    "Select": [([u(3, 2), u(3, 2)], lambda x, y: tf.where([True, False, True], x, y))],
    "SelectV2": [([u(2, 3), u(3)], lambda x, y: tf.where_v2([[True], [False]], x, y))],
    "Fill": [([u()], lambda v: tf.fill([2, 3], v))],
    # -- nn
    "Relu": unary(tf.nn.relu, away(2, 3)),
    "Relu6": unary(tf.nn.relu6, np.array([-1.0, 0.5, 3.0, 6.5, 7.0, 2.0])),
    "Elu": unary(tf.nn.elu, away(2, 3)),
    "Selu": unary(tf.nn.selu, away(2, 3)),
    "Softplus": unary(tf.nn.softplus, u(2, 3)),
    "Softsign": unary(tf.nn.softsign, away(2, 3)),
    "LeakyRelu": unary(lambda x: tf.nn.leaky_relu(x, 0.3), away(2, 3)),
    "Softmax": unary(tf.nn.softmax, u(2, 3)) + unary(lambda x: tf.nn.softmax(x, 0), u(2, 3)),
    "LogSoftmax": unary(tf.nn.log_softmax, u(2, 3)),
    "L2Normalize": unary(lambda x: fused_l2_normalize(x, 1), u(2, 3)) +
    unary(lambda x: fused_l2_normalize(x, 1, epsilon=1.0), u(2, 3) * 0.1),
    "BiasAdd": [([u(2, 3), u(3)], tf.nn.bias_add),
                ([u(2, 3, 4), u(3)], lambda x, b: tf.nn.bias_add(x, b, "NCHW"))],
    "Conv2D": [([u(2, 5, 4, 3), u(3, 2, 3, 2)],
                lambda x, f: tf.nn.conv2d(x, f, [1, 2, 1, 1], "SAME")),
               ([u(1, 3, 6, 5), u(2, 2, 3, 2)],
                lambda x, f: tf.nn.conv2d(x, f, 1, "VALID", data_format="NCHW",
                                          dilations=[1, 1, 2, 1])),
               ([u(1, 4, 5, 2), u(2, 3, 2, 3)],
                lambda x, f: tf.nn.conv2d(x, f, 2, [[0, 0], [1, 0], [2, 1], [0, 0]]))],
    "DepthwiseConv2dNative": [([u(2, 5, 4, 3), u(3, 2, 3, 2)],
                               lambda x, f: tf.nn.depthwise_conv2d(x, f, [1, 2, 1, 1],
                                                                   "SAME"))],
    "MaxPool": [([distinct(2, 5, 4, 3)],
                 lambda x: tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 1, 1], "SAME")),
                ([distinct(1, 3, 5, 4)],
                 lambda x: tf.nn.max_pool(x, 2, 2, "VALID", data_format="NCHW"))],
    "AvgPool": [([u(2, 5, 4, 3)],
                 lambda x: tf.nn.avg_pool(x, [1, 2, 3, 1], [1, 2, 1, 1], "SAME"))],
    # -- backward ops (second derivatives)
    "ReluGrad": [([u(2, 3), away(2, 3)], op("ReluGrad", [None, None]))],
    # (y, dy) with y a possible forward output: tanh in (-1, 1), sigmoid in (0, 1)
    "TanhGrad": [([u(2, 3, low=-0.9, high=0.9), u(2, 3)], op("TanhGrad", [None, None])),
                 ([cplx(3) * 0.5, cplx(3)], op("TanhGrad", [None, None]))],
    "SigmoidGrad": [([u(2, 3, low=0.1, high=0.9), u(2, 3)], op("SigmoidGrad", [None, None])),
                    ([cplx(3) * 0.5, cplx(3)], op("SigmoidGrad", [None, None]))],
    "SqrtGrad": [([pos(2, 3), u(2, 3)], op("SqrtGrad", [None, None])),
                 ([cplx(3) + 3, cplx(3)], op("SqrtGrad", [None, None]))],
    "RsqrtGrad": [([pos(2, 3), u(2, 3)], op("RsqrtGrad", [None, None])),
                  ([cplx(3) + 3, cplx(3)], op("RsqrtGrad", [None, None]))],
    "ReciprocalGrad": [([pos(2, 3), u(2, 3)], op("ReciprocalGrad", [None, None])),
                       ([cplx(3) + 3, cplx(3)], op("ReciprocalGrad", [None, None]))],
    "Relu6Grad": [([u(6), np.array([-1.0, 0.5, 3.0, 6.5, 7.0, 2.0])],
                   op("Relu6Grad", [None, None]))],
    "LeakyReluGrad": [([u(2, 3), away(2, 3)], op("LeakyReluGrad", [None, None],
                                                  {"alpha": 0.3}))],
    "EluGrad": [([u(2, 3), away(2, 3, gap=0.1) * 0.5], op("EluGrad", [None, None]))],
    "SeluGrad": [([u(2, 3), away(2, 3, gap=0.1)], op("SeluGrad", [None, None]))],
    "SoftplusGrad": [([u(2, 3), u(2, 3)], op("SoftplusGrad", [None, None]))],
    "SoftsignGrad": [([u(2, 3), away(2, 3)], op("SoftsignGrad", [None, None]))],
    "BiasAddGrad": [([u(2, 4, 3)], op("BiasAddGrad", [None])),
                    ([u(2, 4, 3)], op("BiasAddGrad", [None], {"data_format": "NCHW"}))],
    "Conv2DBackpropInput": [([u(3, 2, 3, 2), u(2, 3, 4, 2)], op(
        "Conv2DBackpropInput", [np.array([2, 5, 4, 3], np.int32), None, None], CONV))],
    "Conv2DBackpropFilter": [([u(2, 5, 4, 3), u(2, 3, 4, 2)], op(
        "Conv2DBackpropFilter", [None, np.array([3, 2, 3, 2], np.int32), None], CONV)),
        ([u(1, 3, 6, 5), u(1, 2, 4, 4)], op(
            "Conv2DBackpropFilter", [None, np.array([2, 2, 3, 2], np.int32), None],
            CONV_NCHW))],
    "DepthwiseConv2dNativeBackpropInput": [([u(3, 2, 3, 2), u(2, 3, 4, 6)], op(
        "DepthwiseConv2dNativeBackpropInput", [np.array([2, 5, 4, 3], np.int32), None, None],
        CONV))],
    "DepthwiseConv2dNativeBackpropFilter": [([u(2, 5, 4, 3), u(2, 3, 4, 6)], op(
        "DepthwiseConv2dNativeBackpropFilter", [None, np.array([3, 2, 3, 2], np.int32), None],
        CONV))],
    "MaxPoolWithArgmax": [([distinct(2, 5, 4, 3)],
                           lambda x: tf.nn.max_pool_with_argmax(
                               x, [1, 2, 2, 1], [1, 2, 1, 1], "SAME").output),
                          ([distinct(1, 5, 5, 2)],
                           lambda x: tf.nn.max_pool_with_argmax(
                               x, [1, 3, 3, 1], [1, 2, 2, 1], "VALID",
                               include_batch_in_index=True).output)],
    "MaxPoolGrad": [([distinct(2, 5, 4, 3), u(2, 3, 4, 3), u(2, 3, 4, 3)],
                     op("MaxPoolGrad", [None, None, None], POOL))],
    "MaxPoolGradGrad": [([distinct(2, 5, 4, 3), u(2, 3, 4, 3), u(2, 5, 4, 3)],
                         op("MaxPoolGradGrad", [None, None, None], POOL))],
    "AvgPoolGrad": [([u(2, 3, 4, 3)], op("AvgPoolGrad", [np.array([2, 5, 4, 3], np.int32),
                                                         None], POOL))],
    "StridedSliceGrad": [([u(3, 2)], op("StridedSliceGrad", [
        np.array([4, 5], np.int32), np.array([1, 4], np.int32), np.array([0, 0], np.int32),
        np.array([1, -2], np.int32), None], {"end_mask": 1}))],
    "MirrorPadGrad": [([u(6, 7)], op("MirrorPadGrad", [None, np.array([[1, 2], [2, 1]])],
                                     {"mode": "REFLECT"}))],
    # -- sparse (flowgraph/ops/sparse_ops.py): SparseTensor parts as constants
    "SparseToDense": [([u(3), u()], op("SparseToDense", [
        np.array([[0, 1], [1, 2], [2, 0]], np.int64), np.array([3, 4], np.int64), None, None]))],
    "SparseReorder": [([u(3)], lambda v: tf.get_default_graph().create_op("SparseReorder", [
        tf.constant(np.array([[2, 0], [0, 1], [1, 3]], np.int64)), v,
        tf.constant(np.array([3, 4], np.int64))]).outputs[1])],
    "SparseFillEmptyRows": [([u(3), u()], lambda v, d: tf.get_default_graph().create_op(
        "SparseFillEmptyRows", [tf.constant(np.array([[1, 0], [1, 2], [3, 1]], np.int64)), v,
                                tf.constant(np.array([5, 3], np.int64)), d]).outputs[1])],
    "SparseReduceSum": [([u(4)], op("SparseReduceSum", [
        np.array([[0, 1, 0], [1, 0, 1], [1, 2, 1], [0, 2, 0]], np.int64), None,
        np.array([2, 3, 2], np.int64), np.array([1], np.int32)])),
        ([u(4)], op("SparseReduceSum", [
            np.array([[0, 1, 0], [1, 0, 1], [1, 2, 1], [0, 2, 0]], np.int64), None,
            np.array([2, 3, 2], np.int64), np.array([0, -1], np.int32)], {"keep_dims": True}))],
    "SparseTensorDenseMatMul": [
        ([u(3), u(3, 4)], op("SparseTensorDenseMatMul", [
            np.array([[0, 1], [1, 0], [1, 2]], np.int64), None, np.array([2, 3], np.int64),
            None])),
        ([u(3), u(4, 2)], op("SparseTensorDenseMatMul", [
            np.array([[0, 1], [1, 0], [1, 2]], np.int64), None, np.array([2, 3], np.int64),
            None], {"adjoint_a": True, "adjoint_b": True}))],
    **{name: [([u(4, 3)], op(name, [None, np.array([0, 2, 2, 3], np.int32),
                                     np.array([0, 0, 2, 2], np.int32)]))]
       for name in ("SparseSegmentSum", "SparseSegmentMean", "SparseSegmentSqrtN")},
    **{name: [([u(4, 3)], op(name, [None, np.array([3, 1, 1], np.int64),
                                     np.array([1, 1, 2], np.int64), np.array(5, np.int32)]))]
       for name in ("SparseSegmentSumWithNumSegments", "SparseSegmentMeanWithNumSegments",
                    "SparseSegmentSqrtNWithNumSegments")},
    # The fused safe_embedding_lookup_sparse (embedding_ops.py): a negative id dropped,
    # a repeated id, an empty row, unsorted entries.
    **{"SafeSparseLookup": [([u(5, 3)], op("SafeSparseLookup", [
        None, np.array([[2, 0], [0, 0], [0, 1], [2, 1], [3, 0]], np.int64),
        np.array([4, 1, -1, 4, 0], np.int64), np.array([4, 2], np.int64)],
        {"combiner": c})) for c in ("mean", "sum", "sqrtn")]},
    # Control flow (control_flow_grad.py): small tf.cond / tf.while_loop programs.
    "Switch": [([pos(2, 3), u(2, 3)], lambda x, y: tf.cond(
        tf.reduce_sum(x) > 0.0, lambda: x * y, lambda: tf.sin(x) - y)),
        ([-pos(2, 3), u(2, 3)], lambda x, y: tf.cond(
            tf.reduce_sum(x) > 0.0, lambda: x * y, lambda: tf.sin(x) - y))],
    "RefSwitch": [([u(2, 3), u(2, 3)], lambda x, y: tf.identity(make_tensor(
        "RefSwitch", [x, tf.constant(True)]).op.outputs[1]) * y)],
    "Merge": [([u(2, 3), pos(2, 3)], lambda x, y: tf.cond(
        tf.reduce_sum(y) < 0.0, lambda: tf.exp(x), lambda: x * y)),
        ([u(2, 3), -pos(2, 3)], lambda x, y: (lambda sw: make_tensor("Merge", [
            sw * 2.0, tf.sin(sw.op.outputs[1])]))(make_tensor(
                "Switch", [x, tf.reduce_sum(y) > 0.0])) * y)],
    "Enter": [([u(2, 3), u(2, 3)], lambda x, y: tf.while_loop(
        lambda i, a: i < 3, lambda i, a: (i + 1, tf.tanh(a) * y), [0, x])[1])],
    "RefEnter": [([u(2, 3), u(2, 3)], lambda x, y: (lambda r: tf.while_loop(
        lambda i, a: i < 2, lambda i, a: (i + 1, a * r), [0, y])[1])(make_tensor(
            "RefSwitch", [x, tf.constant(True)]).op.outputs[1]))],
    "Exit": [([u(3, 2)], lambda x: tf.while_loop(
        lambda i, a: i < 2, lambda i, a: (i + 1, tf.sin(a) * a), [0, x])[1])],
    "NextIteration": [([u(2, 3), u(3, 3) * 0.5], lambda x, w: tf.while_loop(
        lambda i, a: i < 2, lambda i, a: (i + 1, tf.tanh(tf.matmul(a, w))), [0, x],
        parallel_iterations=1)[1])],
}
# RandomGamma's gradient (implicit reparameterization) is checked statistically and
# against scipy in tests/distributions/test_tf_distributions.py: fresh draws every run
# defeat finite differences, so this case only builds it, with no draws.
CASES["RandomGamma"] = [([pos(3)], lambda a: tf.random_gamma([0], a, dtype=a.dtype, seed=1))]
CASES.update(tensor_array_cases.GRADIENT_CASES)
CASES.update(issue15_cases.GRADIENT_CASES)
CASES.update(issue15_math_cases.GRADIENT_CASES)
CASES.update(issue15_cov_cases.GRADIENT_CASES)
CASES.update(quantize_cases.GRADIENT_CASES)
CASES.update(image_random_cases.GRADIENT_CASES)
CASES.update(image_transform_cases.GRADIENT_CASES)
CASES.update(fractional_pool_cases.GRADIENT_CASES)
CASES.update(linalg_complete_cases.GRADIENT_CASES)
CASES.update(batch_norm_cases.GRADIENT_CASES)
CASES.update(missing_names_cases.GRADIENT_CASES)
CASES.update(resource_variable_cases.GRADIENT_CASES)
CASES.update(misc_names_cases.GRADIENT_CASES)
CASES.update(raw_train_cases.GRADIENT_CASES)
CASES.update(conv3d_cases.GRADIENT_CASES)
CASES.update(raw_math_cases.GRADIENT_CASES)
CASES.update(raw_sparse_cases.GRADIENT_CASES)
CASES.update(raw_tlist_cases.GRADIENT_CASES)
CASES.update(raw_img_cases.GRADIENT_CASES)
CASES.update(raw_rnn_cases.GRADIENT_CASES)
CASES.update(raw_state_cases.GRADIENT_CASES)
CASES.update(raw_parse_cases.GRADIENT_CASES)  # none: no parse op has a gradient


# Op types registered without a CPU kernel, as TensorFlow's CPU build has none (the TPU
# ops of flowgraph/ops/tpu_ops.py, cuDNN's RNN): their gradients are checked as graphs.
NO_CPU_KERNEL = frozenset({"CrossReplicaSum", "TPUReplicatedInput", "CudnnRNNV2"})


def _is_test_op(name: str) -> bool:
    return "Test" in name  # ops that tests register (TestFoo, DataTestSleep, ...)


def _ops():
    return sorted(n for n in registered_ops() if not _is_test_op(n))


# Undeclared as in TensorFlow (LookupError when a gradient reaches them); tested in
# tests/compat/test_tf1_programs_wild13_grads.py.
NO_GRADIENT_LIKE_TENSORFLOW_GRADS = {
    "Bincount", "DenseBincount", "SparseBincount", "RaggedBincount", "DenseCountSparseOutput",
    "SparseCountSparseOutput", "RaggedCountSparseOutput", "ListDiff", "UniqueWithCounts",
    "RandomPoissonV2", "RandomGammaGrad", "CudnnRNNBackpropV2", "ScatterUpdate", "ScatterMin",
    "ScatterMax", "ScatterNdMax", "ScatterNdMin", "FakeQuantWithMinMaxArgsGradient",
    "FakeQuantWithMinMaxVarsGradient", "FakeQuantWithMinMaxVarsPerChannelGradient"}


@pytest.mark.parametrize("op_type", _ops())
def test_every_op_is_declared(op_type):
    opdef = registered_ops()[op_type]
    if op_type in (quantize_cases.NO_GRADIENT_LIKE_TENSORFLOW | {"MaxPoolGradWithArgmax"}
                   | fractional_pool_cases.NO_GRADIENT_LIKE_TENSORFLOW
                   | linalg_complete_cases.NO_GRADIENT_LIKE_TENSORFLOW
                   | resource_variable_cases.NO_GRADIENT_LIKE_TENSORFLOW
                   | cf_cases.NO_GRADIENT_LIKE_TENSORFLOW
                   | dx_cases.NO_GRADIENT_LIKE_TENSORFLOW
                   | raw_sparse_cases.NO_GRADIENT_LIKE_TENSORFLOW
                   | raw_img_cases.NO_GRADIENT_LIKE_TENSORFLOW
                   | raw_rnn_cases.NO_GRADIENT_LIKE_TENSORFLOW
                   | raw_math_cases.NO_GRADIENT_LIKE_TENSORFLOW
                   | NO_GRADIENT_LIKE_TENSORFLOW_GRADS):
        # TF registers no gradient for these: tf.gradients raises LookupError (tested in
        # tests/ops/test_quantize_ops.py), where not_differentiable would give None
        assert opdef.gradient is None, f"{op_type} has a gradient; TensorFlow has none"
        return
    if op_type in raw_math_cases.GRADIENT_RAISES_LIKE_TENSORFLOW:
        return  # a gradient that raises TensorFlow's LookupError (test_raw_math.py)
    if opdef.differentiable is False:
        assert op_type not in CASES, f"{op_type} is non-differentiable but has cases"
        return
    if op_type in raw_sparse_cases.GRADIENT_NOT_IMPLEMENTED:
        return  # as TensorFlow's, it raises NotImplementedError (test_raw_sparse.py)
    assert opdef.gradient is not None, (
        f"op {op_type} has no gradient and is not declared non-differentiable: register "
        f"one with @register_gradient('{op_type}') or call not_differentiable('{op_type}')")
    if op_type in NO_CPU_KERNEL:
        return  # nothing to run finite differences on (tests/compat/test_tpu_estimator.py)
    assert op_type in CASES, f"op {op_type} has a gradient but no case in CASES"


_PARAMS = [pytest.param(name, k, id=f"{name}-{k}")
           for name in sorted(CASES) for k in range(len(CASES[name]))]


@pytest.mark.parametrize(("op_type", "k"), _PARAMS)
def test_gradient_matches_finite_differences(op_type, k):
    inputs, build = CASES[op_type][k]
    dtype, delta = _FORWARD_DTYPE.get(op_type, (np.float64, 1e-5))
    built = []

    def recording_build(*xs):
        g = tf.get_default_graph()
        before = len(g.get_operations())
        out = build(*xs)
        built.extend(o.type for o in g.get_operations()[before:])
        return out

    check_gradient(recording_build, inputs, seed=k, dtype=dtype, delta=delta)
    assert op_type in built, f"case {k} of {op_type} does not build a {op_type} op: {built}"


# Cases whose forward op itself needs static shapes (or a known rank) to be built.
NEEDS_STATIC_DIMS = {"Unpack", "Einsum", "Tensordot"}
NEEDS_RANK = NEEDS_STATIC_DIMS | {"GatherV2", "MatMul", "BatchMatMulV2", "BatchMatMul",
                                  "Squeeze", "BiasAdd"}


# Ops whose output is float32 whatever the input's float type (as TF's resize kernels):
# checked in float32, with steps large enough for float32 outputs (the resizes are
# linear in the image, so the step size costs no accuracy there).
_FORWARD_DTYPE = {"ResizeBilinear": (np.float32, 1e-2), "ResizeBicubic": (np.float32, 1e-2),
                  "CropAndResize": (np.float32, 1e-3)}


@pytest.mark.parametrize("shapes", ["dims", "rank"])
@pytest.mark.parametrize(("op_type", "k"), _PARAMS)
def test_gradient_with_unknown_shapes(op_type, k, shapes):
    skip = NEEDS_STATIC_DIMS if shapes == "dims" else NEEDS_RANK
    if op_type in skip:
        pytest.skip(f"{op_type} needs static shapes to be built")
    inputs, build = CASES[op_type][k]
    dtype, delta = _FORWARD_DTYPE.get(op_type, (np.float64, 1e-5))
    check_gradient(build, inputs, seed=k, shapes=shapes, dtype=dtype, delta=delta)
