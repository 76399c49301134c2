"""float16 variables train with every built-in optimizer, as in TF1 on CPU.

The CPU update kernels (`backends/cpu/kernels_training.py`) run a float16 variable's rule
in float32 on copies of the variable and its slots and round the results back into the
float16 storages. The expected values below were printed by TF 2.15 (`tf.compat.v1`, CPU)
for the same programs; TF's half kernels round after each operation, so the two agree to a
few float16 ulps, not bitwise.
"""

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.backends.cpu import backend, kernels_training
from flowgraph.framework import errors
from flowgraph.framework.resources import VariableState
from flowgraph.ops import training_ops
from flowgraph.ops.training_ops import _SIGNATURES

nan = float("nan")

OPTIMIZERS = {
    "GradientDescent": lambda: tf.train.GradientDescentOptimizer(0.1),
    "Momentum": lambda: tf.train.MomentumOptimizer(0.1, 0.9),
    "MomentumNesterov": lambda: tf.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
    "Adam": lambda: tf.train.AdamOptimizer(0.1),
    "Adagrad": lambda: tf.train.AdagradOptimizer(0.1),
    "RMSProp": lambda: tf.train.RMSPropOptimizer(0.1),
    "RMSPropCentered": lambda: tf.train.RMSPropOptimizer(0.1, momentum=0.5, centered=True),
    "Ftrl": lambda: tf.train.FtrlOptimizer(0.1, l1_regularization_strength=0.01,
                                           l2_regularization_strength=0.02),
    "Adadelta": lambda: tf.train.AdadeltaOptimizer(1.0),
}

# TF 2.15's values of `v` (flattened) after steps 1, 2 and 3; (dense, sparse) per optimizer.
# Sparse Adam leaves NaN in the row no index touches: epsilon=1e-8 rounds to 0 in float16
# and that row's m and v stay 0, so its step is 0/0 (TF does the same).
TF_VALUES = {
    "GradientDescent": (
        [[0.91015625, -2.2109375, 0.260009765625, 2.720703125, -1.599609375, 0.1151123046875],
         [0.82568359375, -2.451171875, 0.07763671875, 2.462890625, -1.7099609375,
          0.00439453125],
         [0.74609375, -2.724609375, -0.0609130859375, 2.2265625, -1.8310546875,
          -0.08636474609375]],
        [[0.447509765625, -1.263671875, 0.5, 3.0, -1.2255859375, 0.11895751953125],
         [0.115478515625, -0.822265625, 0.5, 3.0, -1.005859375, 0.0141754150390625],
         [-0.083740234375, -0.55810546875, 0.5, 3.0, -0.830078125, -0.06964111328125]]),
    "Momentum": (
        [[0.91015625, -2.2109375, 0.260009765625, 2.720703125, -1.599609375, 0.1151123046875],
         [0.74462890625, -2.638671875, -0.138427734375, 2.2109375, -1.7998046875,
          -0.1170654296875],
         [0.52099609375, -3.32421875, -0.583984375, 1.5361328125, -2.109375,
          -0.39501953125]],
        [[0.44677734375, -1.265625, 0.5, 3.0, -1.224609375, 0.1190185546875],
         [-0.3828125, -0.1630859375, 0.5, 3.0, -0.7578125, -0.1036376953125],
         [-1.12890625, 0.82958984375, 0.5, 3.0, -0.2109375, -0.3642578125]]),
    "MomentumNesterov": (
        [[0.8291015625, -2.3984375, 0.0439453125, 2.46875, -1.689453125, -0.00634765625],
         [0.6044921875, -3.07421875, -0.39794921875, 1.791015625, -1.99609375,
          -0.284423828125],
         [0.348388671875, -4.125, -0.72509765625, 1.046875, -2.44921875, -0.5283203125]],
        [[-0.05078125, -0.603515625, 0.5, 3.0, -0.9775390625, 0.0010986328125],
         [-0.7509765625, 0.3271484375, 0.5, 3.0, -0.43115234375, -0.25927734375],
         [-0.9814453125, 0.6337890625, 0.5, 3.0, 0.023681640625, -0.47607421875]]),
    "Adam": (
        [[0.89990234375, -2.099609375, 0.39990234375, 2.900390625, -1.599609375,
          0.14990234375],
         [0.7998046875, -2.19921875, 0.30029296875, 2.80078125, -1.7001953125,
          0.05035400390625],
         [0.7001953125, -2.298828125, 0.201416015625, 2.701171875, -1.80078125,
          -0.0479736328125]],
        [[0.89990234375, -1.900390625, nan, nan, -1.400390625, 0.14990234375],
         [0.80029296875, -1.80078125, nan, nan, -1.30078125, 0.050537109375],
         [0.701171875, -1.701171875, nan, nan, -1.201171875, -0.04730224609375]]),
    "Adagrad": (
        [[0.90576171875, -2.099609375, 0.40087890625, 2.900390625, -1.595703125,
          0.152587890625],
         [0.83984375, -2.171875, 0.334228515625, 2.830078125, -1.66796875, 0.087890625],
         [0.78662109375, -2.232421875, 0.28173828125, 2.7734375, -1.728515625,
          0.03759765625]],
        [[0.900390625, -1.900390625, 0.5, 3.0, -1.400390625, 0.15283203125],
         [0.83251953125, -1.83203125, 0.5, 3.0, -1.3330078125, 0.089111328125],
         [0.7783203125, -1.77734375, 0.5, 3.0, -1.279296875, 0.039947509765625]]),
    "RMSProp": (
        [[0.9091796875, -2.181640625, 0.302490234375, 2.78515625, -1.599609375,
          0.120361328125],
         [0.82275390625, -2.359375, 0.15478515625, 2.607421875, -1.708984375,
          0.01385498046875],
         [0.740234375, -2.533203125, 0.03692626953125, 2.453125, -1.826171875,
          -0.075439453125]],
        [[0.72216796875, -1.70703125, 0.5, 3.0, -1.2861328125, 0.1234130859375],
         [0.5341796875, -1.5068359375, 0.5, 3.0, -1.123046875, 0.02154541015625],
         [0.38818359375, -1.34765625, 0.5, 3.0, -0.9892578125, -0.06201171875]]),
    "RMSPropCentered": (
        [[0.90869140625, -2.18359375, 0.298583984375, 2.779296875, -1.6005859375,
          0.119140625],
         [0.775390625, -2.462890625, 0.042724609375, 2.48046875, -1.76171875,
          -0.055419921875],
         [0.62646484375, -2.80078125, -0.1934814453125, 2.1640625, -1.9697265625,
          -0.2239990234375]],
        [[0.7109375, -1.6943359375, 0.5, 3.0, -1.28125, 0.1224365234375],
         [0.36279296875, -1.322265625, 0.5, 3.0, -0.9990234375, -0.04541015625],
         [0.048828125, -0.97265625, 0.5, 3.0, -0.7265625, -0.2032470703125]]),
    "Ftrl": (
        [[0.5703125, -1.7978515625, 0.334716796875, 2.55859375, -1.1376953125,
          0.0946044921875],
         [0.5146484375, -1.86328125, 0.27099609375, 2.494140625, -1.189453125,
          0.033599853515625],
         [0.468017578125, -1.9189453125, 0.220458984375, 2.439453125, -1.2373046875,
          -0.01340484619140625]],
        [[0.8427734375, -1.8134765625, 0.5, 3.0, -1.2265625, 0.09307861328125],
         [0.7763671875, -1.74609375, 0.5, 3.0, -1.1650390625, 0.03375244140625],
         [0.72314453125, -1.6923828125, 0.5, 3.0, -1.1142578125, -0.01146697998046875]]),
    # epsilon=1e-6 and lr=1.0: every step is below half a float16 ulp of v (TF agrees).
    "Adadelta": ([[1.0, -2.0, 0.5, 3.0, -1.5, 0.25]] * 3, [[1.0, -2.0, 0.5, 3.0, -1.5, 0.25]] * 3),
}

SLOTS = {"GradientDescent": [], "Momentum": ["momentum"], "MomentumNesterov": ["momentum"],
         "Adam": ["m", "v"], "Adagrad": ["accumulator"], "RMSProp": ["momentum", "rms"],
         "RMSPropCentered": ["mg", "momentum", "rms"], "Ftrl": ["accum", "linear"],
         "Adadelta": ["accum", "accum_update"]}


def _train(make_opt, sparse):
    """Three steps on a fixed 3x2 float16 problem: (values after each step, optimizer, v)."""
    v = tf.Variable(np.array([[1.0, -2.0], [0.5, 3.0], [-1.5, 0.25]], np.float16), name="v")
    x = tf.constant(np.array([[0.3, -0.7], [1.2, 0.4], [-0.5, 0.9]], np.float16))
    if sparse:
        rows = tf.gather(v, [0, 2, 0])
        loss = tf.reduce_sum(rows * tf.gather(x, [0, 2, 1]) ** 2 + rows ** 2)
    else:
        loss = tf.reduce_sum(v * v * x + v * x)
    opt = make_opt()
    step = opt.minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        values = []
        for _ in range(3):
            sess.run(step)
            out = sess.run(v)
            assert out.dtype == np.float16
            values.append(out.ravel())
    return np.array(values), opt, v


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_float16_training_matches_tensorflow(name, sparse):
    with tf.Graph().as_default():
        values, opt, v = _train(OPTIMIZERS[name], sparse)
        assert sorted(opt.get_slot_names()) == SLOTS[name]
        for slot in opt.get_slot_names():
            assert opt.get_slot(v, slot).dtype.base_dtype == tf.float16
    # A few float16 ulps: TF rounds after every operation, flowgraph once per result. The
    # absolute part is 2 ulps at 1.0: small entries are differences of values near 1.
    np.testing.assert_allclose(values, np.array(TF_VALUES[name][sparse]), rtol=4e-3,
                               atol=2e-3, equal_nan=True)


def test_adam_keeps_float32_beta_powers_for_a_float16_variable():
    with tf.Graph().as_default():
        v = tf.Variable(np.array([1.0, 2.0], np.float16))
        opt = tf.train.AdamOptimizer(0.1)
        opt.minimize(tf.reduce_sum(v * v))
        assert [b.dtype.base_dtype for b in opt._get_beta_accumulators()] == [tf.float32] * 2
        apply = [op for op in tf.get_default_graph().get_operations() if op.type == "ApplyAdam"]
        assert [t.dtype.base_dtype for t in apply[0].inputs] == [tf.float16] * 10


@pytest.mark.parametrize("lr_dtype", [tf.float32, tf.float16])
def test_float16_variable_takes_a_learning_rate_tensor_of_either_dtype(lr_dtype):
    with tf.Graph().as_default():
        v = tf.Variable(np.array([1.0, 2.0], np.float16))
        step = tf.train.GradientDescentOptimizer(tf.constant(0.25, lr_dtype)).minimize(
            tf.reduce_sum(v * v))
        with tf.Session() as sess:
            sess.run(v.initializer)
            sess.run(step)
            np.testing.assert_array_equal(sess.run(v), np.array([0.5, 1.0], np.float16))


# -- the kernels: float16 is the float32 rule on the upcast state, rounded once -----------
SCALARS = {"alpha": 0.1, "lr": 0.05, "momentum": 0.9, "beta1_power": 0.81,
           "beta2_power": 0.998, "beta1": 0.9, "beta2": 0.999, "epsilon": 1e-3, "rho": 0.9,
           "l1": 0.01, "l2": 0.02, "l2_shrinkage": 0.05, "lr_power": -0.5}
OPS = sorted(kernels_training._OPS) + ["Sparse" + op for op in sorted(kernels_training._OPS)]


def _args(op_type, dtype, seed, shape=(6, 5)):
    rng = np.random.default_rng(seed)
    names, num_refs, _ = _SIGNATURES[op_type]
    args = []
    for n in names:
        if len(args) < num_refs:
            state = VariableState(n)
            state.value = (rng.random(shape) + 0.5).astype(np.float16).astype(dtype)
            args.append(state)
        elif n == "indices":
            args.append(np.array([4, 0, 4, 2], np.int64))
        elif n in ("grad", "delta"):
            gshape = (4, *shape[1:]) if "indices" in names else shape
            args.append(rng.standard_normal(gshape).astype(np.float16).astype(dtype))
        else:
            args.append(np.asarray(np.float16(SCALARS[n]), dtype))
    return args, num_refs


@pytest.mark.parametrize("op_type, shape", [(op, (6, 5)) for op in OPS] + [
    # above two grains of kernel_pool: the float32 copies are updated on the kernel threads
    (op, (1030, 512)) for op in ("ApplyAdam", "SparseApplyAdam")])
def test_float16_kernel_is_the_float32_rule_rounded_once(op_type, shape):
    half, num_refs = _args(op_type, np.float16, 3, shape)
    single, _ = _args(op_type, np.float32, 3, shape)
    k16 = backend.find_kernel(op_type, tf.float16).fn
    k32 = backend.find_kernel(op_type, tf.float32).fn
    for _ in range(2):
        assert k16(*half, use_locking=False, op=None) is half[0]
        k32(*single, use_locking=False, op=None)
        for h, s in zip(half[:num_refs], single[:num_refs]):
            assert h.value.dtype == np.float16
            np.testing.assert_array_equal(h.value, s.value.astype(np.float16))
            s.value = h.value.astype(np.float32)  # the next step starts from the rounded state


def test_float16_sparse_update_keeps_other_rows_bitwise():
    args, _ = _args("SparseApplyMomentum", np.float16, 7)
    before = args[0].value.copy()
    backend.find_kernel("SparseApplyMomentum", tf.float16).fn(*args, use_locking=True, op=None)
    untouched = [1, 3, 5]
    assert before[untouched].tobytes() == args[0].value[untouched].tobytes()
    assert not np.array_equal(before[[0, 2, 4]], args[0].value[[0, 2, 4]])


def test_float16_sparse_bad_index_is_an_error_and_writes_nothing():
    args, _ = _args("SparseApplyAdagrad", np.float16, 1)
    args[4] = np.array([0, 9, 1, 2], np.int64)
    before = args[0].value.copy()
    with pytest.raises(errors.InvalidArgumentError, match=r"indices\[1\] = 9 is not in"):
        backend.find_kernel("SparseApplyAdagrad", tf.float16).fn(*args, use_locking=False,
                                                                 op=None)
    assert before.tobytes() == args[0].value.tobytes()


def test_integer_and_complex_variables_are_still_refused():
    with tf.Graph().as_default():
        for dtype in (np.int32, np.complex64):
            v = tf.Variable(np.array([1, 2], dtype))
            with pytest.raises(TypeError, match=r"ApplyGradientDescent: variable .* has dtype "
                               r".*support float16, float32 and float64"):
                training_ops.apply_gradient_descent(v, np.array(1, dtype), np.array([1, 1], dtype))
    var = VariableState("v")
    var.value = np.array([1, 2], np.int32)
    with pytest.raises(errors.InvalidArgumentError, match=r"supports float32 and float64 "
                       r"variables, got int32 \(float16 ones are updated in float32\)"):
        kernels_training.apply_gradient_descent(var, np.asarray(1, np.int32),
                                                np.array([1, 1], np.int32),
                                                use_locking=False, op=None)
