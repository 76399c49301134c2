"""Op-contract and gradient-registry cases for the resource-variable ops
(`flowgraph/ops/resource_variable_ops.py`) and the ``Resource(Sparse)Apply*`` updates.

The finite-difference checker differentiates with respect to placeholders, which never
reach a handle; the gradient cases therefore take the first-order gradient with respect
to the variable inside the graph (``ReadVariableOp``'s and ``ResourceGather``'s gradient
functions build it) and check its derivative with respect to `x`. The first-order
values themselves are checked against NumPy and finite differences in
tests/framework/test_resource_variables.py.
"""

import numpy as np

import flowgraph as tf
from flowgraph.ops import resource_variable_ops as rv

R = np.random.RandomState(7)


def _f64(*shape):
    return R.uniform(-2.0, 2.0, size=shape)


def _var(x, shape=None, name="v"):
    value = np.ones(shape or x.shape.as_list() or [], x.dtype.as_numpy_dtype)
    return tf.Variable(value, name=name, use_resource=True)


def _read_grad(x):
    v = _var(x, [2, 3])
    with tf.control_dependencies([v.initializer]):
        read = v.value()
    (g,) = tf.gradients(tf.reduce_sum(read * x * x), v)
    return g


def _gather_grad(x):
    v = _var(x, [4, 3])
    with tf.control_dependencies([v.initializer]):
        rows = tf.gather(v, [0, 2, 0])
    (g,) = tf.gradients(tf.reduce_sum(rows * x * x), v)
    return tf.convert_to_tensor(g)


def _batch_gather_grad(x):
    v = _var(x, [2, 4, 3])
    with tf.control_dependencies([v.initializer]):
        rows = rv.resource_gather(v.handle, [[0, 2, 0], [3, 3, 1]], v.dtype, batch_dims=1)
    (g,) = tf.gradients(tf.reduce_sum(rows * x * x), v)
    return tf.convert_to_tensor(g)


# TF registers no gradient for these: tf.gradients raises LookupError
# (tests/framework/test_resource_variables_more.py).
NO_GRADIENT_LIKE_TENSORFLOW = {"StridedSliceAssign"}

GRADIENT_CASES = {
    "ReadVariableOp": [([_f64(2, 3)], _read_grad)],
    "ResourceGather": [([_f64(3, 3)], _gather_grad), ([_f64(2, 3, 3)], _batch_gather_grad)],
}


def _program(x):
    """Every resource-variable op once, in one step after the initializers."""
    v = _var(x, [3, 2])
    rv.var_is_initialized_op(v.handle)
    rv.variable_shape(v.handle, name="shape")
    v.sparse_read([2, 0])
    ones = np.ones([2, 2], x.dtype.as_numpy_dtype)
    for kind in rv.SCATTER_KINDS:
        rv.resource_scatter(kind, v.handle, [1, 0], ones, v.dtype)
    for kind in rv.SCATTER_ND_KINDS:
        rv.resource_scatter_nd(kind, v.handle, [[1, 0], [2, 1]], ones[0], v.dtype)
    v[1:, 0].assign(ones[0])
    v.assign(np.ones([3, 2], x.dtype.as_numpy_dtype) * 2, read_value=False)
    v.assign_add(np.ones([3, 2], x.dtype.as_numpy_dtype), read_value=False)
    v.assign_sub(np.ones([3, 2], x.dtype.as_numpy_dtype), read_value=False)
    return v.value() + tf.reduce_sum(x)


def _variable_shape(x):
    v = _var(x, [3, 2])
    v.set_shape([None, 2])  # not fully known here: the op, not a constant
    return rv.make_tensor("VariableShape", [v.handle], {"out_type": tf.int32})


def _batch_gather(x):
    v = _var(x, [2, 3, 2])
    return rv.resource_gather(v.handle, [[2, 0], [1, 1]], v.dtype, batch_dims=1)


def _ref_slice_assign(x):
    v = tf.Variable(np.ones([3, 2], x.dtype.as_numpy_dtype), name="r")
    return v[::2].assign(tf.ones([2, 2], x.dtype) * tf.reduce_sum(x))


def _count_up_to(x):
    v = tf.Variable(0, name="counter", use_resource=True)
    return tf.count_up_to(v, 5) + tf.cast(tf.reduce_sum(x), tf.int32) * 0


_OPTIMIZERS = {
    "GradientDescent": lambda: tf.train.GradientDescentOptimizer(0.1),
    "Momentum": lambda: tf.train.MomentumOptimizer(0.1, 0.9),
    "Adagrad": lambda: tf.train.AdagradOptimizer(0.1),
    "Adadelta": lambda: tf.train.AdadeltaOptimizer(0.1),
    "Adam": lambda: tf.train.AdamOptimizer(0.1),
    "RMSProp": lambda: tf.train.RMSPropOptimizer(0.1),
    "CenteredRMSProp": lambda: tf.train.RMSPropOptimizer(0.1, centered=True),
    "Ftrl": lambda: tf.train.FtrlOptimizer(0.1),
    "FtrlV2": lambda: tf.train.FtrlOptimizer(0.1, l2_shrinkage_regularization_strength=0.1),
}


def _minimize(make_opt, sparse):
    def build(x):
        var = tf.Variable(np.ones([4, 3], x.dtype.as_numpy_dtype), use_resource=True)
        used = tf.gather(var, [0, 2]) if sparse else var[:2]
        make_opt().minimize(tf.reduce_sum(used * x))

    return build


_INIT = {"init": True}
_NO_FETCH = {"init": True, "fetch": lambda o: []}  # ops without outputs, or a handle

CONTRACT_CASES: dict = {
    "VarHandleOp": [([_f64(2)], _program, _NO_FETCH)],
    "VarIsInitializedOp": [([_f64(2)], _program, _INIT)],
    "ReadVariableOp": [([_f64(2)], _program, _INIT)],
    "ResourceGather": [([_f64(2)], _program, _INIT), ([_f64(2)], _batch_gather, _INIT)],
    "StridedSliceAssign": [([_f64(2)], _ref_slice_assign, _INIT)],
    "VariableShape": [([_f64(2)], _variable_shape, _INIT)],
    "ResourceCountUpTo": [([_f64(2)], _count_up_to, _INIT)],
    **{name: [([_f64(2)], _program, _NO_FETCH)] for name in (
        "AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp",
        *(f"ResourceScatter{k}" for k in rv.SCATTER_KINDS),
        *(f"ResourceScatterNd{k}" for k in rv.SCATTER_ND_KINDS),
        "ResourceStridedSliceAssign")},
    **{f"ResourceApply{name}": [([_f64(2, 3)], _minimize(make, False), _NO_FETCH)]
       for name, make in _OPTIMIZERS.items()},
    **{f"ResourceSparseApply{name}": [([_f64(2, 3)], _minimize(make, True), _NO_FETCH)]
       for name, make in _OPTIMIZERS.items()},
}
