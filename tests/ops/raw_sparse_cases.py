"""Registry-wide cases for the sparse, segment-gradient, scatter, random and ragged op
types of the raw-op gap fill (`flowgraph/ops/sparse_raw_ops.py`, `scatter_raw_ops.py`,
`random_raw_ops.py`, `ragged_raw_ops.py`): `GRADIENT_CASES` merge into
`test_gradient_registry.CASES`, `CONTRACT_CASES` are contract-only ``(inputs, build,
options)`` cases for ops without a gradient, in the format of `misc_names_cases`."""

from __future__ import annotations

import numpy as np

import flowgraph as tf
from flowgraph.ops.op_util import make_op, make_tensor
from flowgraph.ops.scatter_raw_ops import tensor_strided_slice_update

R = np.random.RandomState(2027)
_VD = {"value_dependent": True}
_INIT = {"init": True}

# The shapes of these ops' outputs depend on input values (which entries meet, row
# lengths).
VALUE_DEPENDENT = {"RaggedGather", "RaggedTensorToTensor", "RaggedTensorToSparse",
                   "SparseAdd",
                   "SparseSparseMaximum", "SparseSparseMinimum", "SparseSlice",
                   "SparseSplit", "SparseReduceMaxSparse", "SparseReduceSumSparse",
                   "DeserializeSparse", "SparseSegmentSumGradV2", "SparseSegmentMeanGradV2",
                   "SparseSegmentSqrtNGradV2", "ParallelDynamicStitch",
                   "TakeManySparseFromTensorsMap", "SparseCrossV2", "RaggedCross"}
# TensorFlow registers no gradient for these: tf.gradients raises LookupError.
NO_GRADIENT_LIKE_TENSORFLOW = frozenset({
    "SparseSliceGrad", "SparseSplit", "SparseReduceMax", "SparseReduceMaxSparse",
    "SparseReduceSumSparse", "SerializeSparse", "DeserializeSparse",
    *(f"SparseSegment{k}Grad{v}" for k in ("Sum", "Mean", "SqrtN") for v in ("", "V2")),
    "RandomPoisson", "NonDeterministicInts", "StatefulStandardNormal",
    "StatelessRandomGetKeyCounterAlg", "StatelessRandomGetAlg", "SparseCrossV2", "RaggedCross",
    "AddSparseToTensorsMap", "AddManySparseToTensorsMap", "TakeManySparseFromTensorsMap"})
# TensorFlow registers a gradient that raises NotImplementedError (tested in
# tests/ops/test_raw_sparse.py).
GRADIENT_NOT_IMPLEMENTED = frozenset({"SparseSparseMaximum", "SparseSparseMinimum",
                                      "SparseDenseCwiseAdd"})

_A_IDX = np.array([[0, 0], [0, 2], [1, 1]], np.int64)
_B_IDX = np.array([[0, 2], [1, 0]], np.int64)
_SHAPE = np.array([2, 3], np.int64)


def _u(*shape):
    return R.uniform(0.5, 2.0, size=shape)


def _sp(idx, values, shape=_SHAPE):
    return tf.SparseTensor(tf.constant(idx), values, tf.constant(shape))


def _sparse_add(a, b):
    return tf.sparse.add(_sp(_A_IDX, a), _sp(_B_IDX, b)).values


def _dense_add(a, d):
    return tf.sparse.add(_sp(_A_IDX, a), d)


def _cwise(kind):
    def build(a, d):
        sp = _sp(_A_IDX, a)
        return (sp * d if kind == "Mul" else sp / d).values

    return build


def _slice(a):
    return tf.sparse.slice(_sp(_A_IDX, a), [0, 1], [2, 2]).values


def _softmax(a):
    return tf.sparse.softmax(_sp(_A_IDX, a)).values


def _non_aliasing_add(x, u):
    return make_tensor("ScatterNdNonAliasingAdd", [x, tf.constant([[1], [0], [1]]), u])


def _strided_update(x, v):
    return tensor_strided_slice_update(x, [0, 2], [2, 0], [1, -2], v, end_mask=2)


def _resource_gather_nd(x):
    v = tf.Variable(np.ones([3, 2], x.dtype.as_numpy_dtype), use_resource=True)
    with tf.control_dependencies([v.initializer]):
        rows = tf.gather_nd(v, [[2], [0]])
        cells = tf.gather_nd(v, [[1, 1], [2, 0]])
    (g,) = tf.gradients(tf.reduce_sum(rows * x) + tf.reduce_sum(cells * x[:, 0]), v)
    return tf.convert_to_tensor(g)


def _parallel_stitch(a, b):
    return make_tensor("ParallelDynamicStitch", [tf.constant([0, 2]), tf.constant([1]), a, b],
                       {"N": 2})


def _gamma_v3(alpha):
    key, counter, alg = make_op("StatelessRandomGetKeyCounterAlg",
                                [tf.constant([1, 2], tf.int64)]).outputs
    return make_tensor("StatelessRandomGammaV3", [tf.constant([3, 2]), key, counter, alg,
                                                  alpha])


def _ragged(v):
    return tf.RaggedTensor.from_nested_row_splits(
        v, [tf.constant([0, 2, 3], tf.int64), tf.constant([0, 1, 1, 4], tf.int64)])


def _ragged_to_tensor(v, d):
    return _ragged(v).to_tensor(default_value=d)


def _ragged_to_sparse(v):
    return _ragged(v).to_sparse().values


def _ragged_gather(v):
    return tf.gather(_ragged(v), [[1, 0], [1, 1]]).flat_values


GRADIENT_CASES = {
    "RaggedGather": [([_u(4)], _ragged_gather), ([_u(4, 2)], _ragged_gather)],
    "RaggedTensorToTensor": [([_u(4), _u()], _ragged_to_tensor),
                             ([_u(4, 2), _u(2)], _ragged_to_tensor)],
    "RaggedTensorToSparse": [([_u(4)], _ragged_to_sparse), ([_u(4, 2)], _ragged_to_sparse)],
    "SparseAdd": [([_u(3), _u(2)], _sparse_add)],
    "SparseTensorDenseAdd": [([_u(3), _u(2, 3)], _dense_add)],
    "SparseDenseCwiseMul": [([_u(3), _u(2, 3)], _cwise("Mul")), ([_u(3), _u(3)], _cwise("Mul")),
                            ([_u(3), _u(2, 1)], _cwise("Mul"))],
    "SparseDenseCwiseDiv": [([_u(3), _u(2, 3)], _cwise("Div")), ([_u(3), _u(1, 3)], _cwise("Div"))],
    "SparseSlice": [([_u(3)], _slice)],
    "SparseSoftmax": [([_u(3)], _softmax)],
    "ScatterNdNonAliasingAdd": [([_u(3, 2), _u(3, 2)], _non_aliasing_add)],
    "TensorStridedSliceUpdate": [([_u(2, 3), _u(2, 2)], _strided_update),
                                 ([_u(2, 3), _u(1)], _strided_update)],
    "ResourceGatherNd": [([_u(2, 2)], _resource_gather_nd)],
    "ParallelDynamicStitch": [([_u(2, 2), _u(1, 2)], _parallel_stitch)],
    "StatelessRandomGammaV3": [([np.array([1.5, 3.0])], _gamma_v3)],
}


def _pair(op_type):
    def build(a):
        op = make_op(op_type, [tf.constant(_A_IDX), a, tf.constant(_SHAPE), tf.constant(_B_IDX),
                               a[:2] * 2.0 - 3.0, tf.constant(_SHAPE)])
        return op.outputs

    return build


def _cwise_add(a):
    return make_tensor("SparseDenseCwiseAdd", [tf.constant(_A_IDX), a, tf.constant(_SHAPE),
                                               tf.constant([1.0, 2.0, 3.0], a.dtype)])


def _concat(a):
    return tf.sparse.concat(1, [_sp(_A_IDX, a), _sp(_B_IDX, a[:2])]).values


def _reduce(op_type, axes, keep):
    def build(a):
        return make_op(op_type, [tf.constant(_A_IDX), a, tf.constant(_SHAPE),
                                 tf.constant(axes, tf.int32)], {"keep_dims": keep}).outputs

    return build


def _split(a):
    parts = tf.sparse.split(sp_input=_sp(_A_IDX, a), num_split=2, axis=1)
    return [t for p in parts for t in (p.indices, p.values, p.dense_shape)]


def _serialize(a):
    return tf.io.serialize_sparse(_sp(_A_IDX, a))


def _deserialize(a):
    s = tf.stack([tf.io.serialize_sparse(_sp(_A_IDX, a)),
                  tf.io.serialize_sparse(_sp(_B_IDX, a[:2]))])
    return make_op("DeserializeSparse", [s], {"dtype": a.dtype.base_dtype}).outputs


def _seg_grad(kind, v2):
    def build(g):
        ins = [g, tf.constant([3, 0, 3, 1]), tf.constant([0, 0, 1, 1]), tf.constant(5)]
        return make_op(f"SparseSegment{kind}Grad{'V2' if v2 else ''}", ins).outputs

    return build


def _add_grad(g):
    return make_op("SparseAddGrad", [g, tf.constant(_A_IDX), tf.constant(_B_IDX),
                                     tf.constant([[0, 0], [0, 2], [1, 0], [1, 1]],
                                                 tf.int64)]).outputs


def _slice_grad(g):
    return make_tensor("SparseSliceGrad", [g, tf.constant(_A_IDX),
                                           tf.constant([0, 1], tf.int64),
                                           tf.constant([[0, 1], [1, 0]], tf.int64)])


def _scatter_ref(op_type):
    def build(u):
        v = tf.Variable(np.ones([3, 2], u.dtype.as_numpy_dtype))
        return getattr(tf.raw_ops, op_type)(ref=v, indices=[[0], [2]], updates=u)

    return build


def _random(op_type):
    def build(p):
        shape = tf.constant([2, 3])
        if op_type == "RandomPoisson":
            return make_tensor(op_type, [shape, p], {"seed": 1, "seed2": 2, "dtype": p.dtype})
        if op_type == "ParameterizedTruncatedNormal":
            return make_tensor(op_type, [shape, p, p * 0.0 + 1.0, p - 1.0, p + 1.0],
                               {"seed": 1, "seed2": 2, "dtype": p.dtype})
        return make_tensor(op_type, [shape]) + tf.cast(tf.reduce_sum(p) * 0, tf.int64)

    return build


def _tensors_map(a):
    one = make_tensor("AddSparseToTensorsMap", [tf.constant([[0], [2]], tf.int64), a[:2],
                                                 tf.constant([4], tf.int64)],
                      {"shared_name": "contract_map"})
    many = make_tensor("AddManySparseToTensorsMap", [tf.constant(_A_IDX), a,
                                                     tf.constant(_SHAPE)],
                       {"shared_name": "contract_map"})
    taken = make_op("TakeManySparseFromTensorsMap", [tf.concat([many, [one]], 0)],
                    {"shared_name": "contract_map", "dtype": a.dtype.base_dtype}).outputs
    return [one, many, *taken]


def _cross_v2(a):
    words = tf.as_string(a)
    sp = tf.SparseTensor(tf.constant(_A_IDX), words, tf.constant(_SHAPE))
    return tf.sparse.cross([sp, tf.reshape(words[:2], [2, 1])], separator="+").values


def _stateful_normal(p):
    state = tf.Variable(np.array([5, 0, 123], np.int64), use_resource=True, name="state")
    return tf.raw_ops.StatefulStandardNormal(resource=state.handle, shape=[2, 3]) + tf.cast(
        tf.reduce_sum(p) * 0, tf.float32)


def _ragged_cross(a):
    words = tf.as_string(a)
    rt = tf.RaggedTensor.from_row_splits(words, tf.constant([0, 1, 3], tf.int64))
    sp = tf.SparseTensor(tf.constant([[0, 0], [1, 1]], tf.int64), tf.constant([4, 5], tf.int64),
                         tf.constant([2, 2], tf.int64))
    plain = tf.ragged.cross([tf.reshape(words[:2], [2, 1]), rt, sp])
    hashed = tf.ragged.cross_hashed([rt, sp], num_buckets=7)
    return [plain.values, plain.row_splits, hashed.values]


CONTRACT_CASES = {
    "RaggedCross": [([_u(3)], _ragged_cross, _VD)],
    "StatefulStandardNormal": [([_u(2)], _stateful_normal, _INIT)],
    "SparseCrossV2": [([_u(3)], _cross_v2, _VD)],
    **{name: [([_u(3)], _tensors_map, _VD)] for name in (
        "AddSparseToTensorsMap", "AddManySparseToTensorsMap", "TakeManySparseFromTensorsMap")},
    "SparseSparseMaximum": [([_u(3)], _pair("SparseSparseMaximum"), _VD)],
    "SparseSparseMinimum": [([_u(3)], _pair("SparseSparseMinimum"), _VD)],
    "SparseDenseCwiseAdd": [([_u(3)], _cwise_add, {})],
    "SparseAddGrad": [([_u(4)], _add_grad, {})],
    "SparseSliceGrad": [([_u(2)], _slice_grad, {})],
    "SparseConcat": [([_u(3)], _concat, {})],
    "SparseSplit": [([_u(3)], _split, _VD)],
    "SparseReduceMax": [([_u(3)], _reduce("SparseReduceMax", [1], False), {}),
                        ([_u(3)], _reduce("SparseReduceMax", [0, 1], True), {})],
    "SparseReduceMaxSparse": [([_u(3)], _reduce("SparseReduceMaxSparse", [1], True), _VD)],
    "SparseReduceSumSparse": [([_u(3)], _reduce("SparseReduceSumSparse", [0], False), _VD)],
    "SerializeSparse": [([_u(3)], _serialize, {})],
    "DeserializeSparse": [([_u(3)], _deserialize, _VD)],
    **{f"SparseSegment{k}Grad{'V2' if v2 else ''}": [([_u(2, 3)], _seg_grad(k, v2),
                                                      _VD if v2 else {})]
       for k in ("Sum", "Mean", "SqrtN") for v2 in (False, True)},
    "ScatterNdMax": [([_u(2, 2)], _scatter_ref("ScatterNdMax"), _INIT)],
    "ScatterNdMin": [([_u(2, 2)], _scatter_ref("ScatterNdMin"), _INIT)],
    "RandomPoisson": [([_u(2)], _random("RandomPoisson"), {})],
    "ParameterizedTruncatedNormal": [([_u(2)], _random("ParameterizedTruncatedNormal"), {})],
    "NonDeterministicInts": [([_u(2)], _random("NonDeterministicInts"), {})],
    "StatelessRandomGetKeyCounterAlg": [([np.array([3, 4], np.int64)], lambda s: make_op(
        "StatelessRandomGetKeyCounterAlg", [s]).outputs, {})],
    "StatelessRandomGetAlg": [([], lambda: make_tensor("StatelessRandomGetAlg", []), {})],
}
