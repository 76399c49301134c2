"""The Python side of the CPU optimizer kernels (`backends/cpu/kernels_training.py`):
Adam's bias-corrected step size computed in C (bitwise NumPy's scalar arithmetic), the
storages kept 64-byte aligned (same bits, replaced once, then updated in place), the
fast paths of the wrapper (gradient checks, no lock context unless asked), and the
public optimizer still matching a NumPy reference of TF1's Adam."""

import doctest
import threading

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.backends.cpu import _training, kernels_training
from flowgraph.framework import errors
from flowgraph.framework.resources import VariableState

apply_adam = kernels_training._make_kernel("ApplyAdam", "Adam", False)
apply_sgd = kernels_training.apply_gradient_descent


def _alpha_numpy(dtype, lr, b1p, b2p):
    """What the kernel computed before: NumPy scalar arithmetic in the variable's dtype."""
    t = np.dtype(dtype).type
    lr, b1p, b2p, one = t(lr), t(b1p), t(b2p), t(1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(lr * np.sqrt(one - b2p) / (one - b1p))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_adam_alpha_is_bitwise_numpys_scalar_arithmetic(dtype):
    rng = np.random.default_rng(0)
    steps = rng.integers(1, 100_000, 500)
    b1 = rng.uniform(0.5, 0.99999, 500)
    b2 = rng.uniform(0.9, 0.999999, 500)
    lr = 10.0 ** rng.uniform(-6, 0, 500)
    cases = [(lr[k], b1[k] ** steps[k], b2[k] ** steps[k]) for k in range(500)]
    cases += [(1e-3, 0.9, 0.999), (0.1, 1.0, 0.5), (0.1, 0.5, 1.0), (0.1, 0.0, 0.0),
              (0.1, 1.0, 1.0), (np.nan, 0.9, 0.99), (1e-3, 1e-45, 1e-45)]
    for lr_, b1p, b2p in cases:
        got = _training.adam_alpha(lr_, b1p, b2p, dtype is np.float32)
        want = _alpha_numpy(dtype, lr_, b1p, b2p)
        assert np.array_equal(np.array(got), np.array(want), equal_nan=True), (lr_, b1p, b2p)


def _misaligned(shape, dtype, offset_bytes, fill):
    """A C-contiguous array whose data starts `offset_bytes` past a 64-byte line."""
    n = int(np.prod(shape))
    item = np.dtype(dtype).itemsize
    buf = np.empty(n * item + 128, np.uint8)
    start = (-buf.ctypes.data % 64) + offset_bytes
    a = buf[start:start + n * item].view(dtype).reshape(shape)
    a[...] = fill
    return a


def _adam_reference(var, m, v, g, lr, b1, b2, eps, b1p, b2p):
    """TF1's Adam step in the kernel's operation order, with NumPy arrays of var's dtype."""
    t = var.dtype.type
    alpha = t(_alpha_numpy(var.dtype, lr, b1p, b2p))
    one_b1, one_b2 = t(1.0 - t(b1)), t(1.0 - t(b2))
    m = m + (g - m) * one_b1
    v = v + (g * g - v) * one_b2
    return var - m * alpha / (np.sqrt(v) + t(eps)), m, v


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(5,), (37, 29), (64, 130)])
def test_adam_kernel_on_misaligned_storages_is_bitwise_the_reference(dtype, shape):
    rng = np.random.default_rng(1)
    init = [rng.standard_normal(shape).astype(dtype) for _ in range(2)]
    init.append(rng.random(shape).astype(dtype))
    states = []
    for k, a in enumerate(init):
        s = VariableState(f"s{k}")
        s.value = _misaligned(shape, dtype, 16 * (k + 1), a)
        states.append(s)
    var, m, v = (a.copy() for a in init)
    hyper = (1e-3, 0.9, 0.999, 1e-8)
    for step in range(1, 4):
        g = rng.standard_normal(shape).astype(dtype)
        b1p, b2p = 0.9 ** step, 0.999 ** step
        scalars = [np.asarray(x, dtype) for x in (b1p, b2p, *hyper)]
        out = apply_adam(*states, *scalars, g, use_locking=False, use_nesterov=False,
                         op=None)
        assert out is states[0]
        var, m, v = _adam_reference(var, m, v, g, *hyper, b1p, b2p)
        for s, want in zip(states, (var, m, v)):
            np.testing.assert_array_equal(s.value, want)


def test_large_storage_is_realigned_once_then_updated_in_place():
    shape = (40, 64)  # 10 KiB of float32: above the alignment threshold
    var = VariableState("w")
    var.value = _misaligned(shape, np.float32, 16, 1.0)
    before = var.value
    apply_sgd(var, np.asarray(np.float32(0.5)), np.ones(shape, np.float32),
              use_locking=False, op=None)
    first = var.value
    assert first is not before and first.ctypes.data % 64 == 0
    assert first.flags.c_contiguous and first.flags.writeable and first.dtype.isnative
    np.testing.assert_array_equal(first, np.full(shape, 0.5, np.float32))
    np.testing.assert_array_equal(before, np.ones(shape, np.float32))  # old one untouched
    apply_sgd(var, np.asarray(np.float32(0.5)), np.ones(shape, np.float32),
              use_locking=False, op=None)
    assert var.value is first  # in place from now on
    np.testing.assert_array_equal(first, np.zeros(shape, np.float32))


def test_small_or_aligned_storage_is_left_alone():
    small = VariableState("b")
    small.value = _misaligned((8,), np.float32, 16, 1.0)  # 32 bytes: not worth a copy
    kept = small.value
    apply_sgd(small, np.asarray(np.float32(1.0)), np.ones(8, np.float32),
              use_locking=False, op=None)
    assert small.value is kept
    big = VariableState("w")
    big.value = _misaligned((64, 64), np.float64, 0, 2.0)
    kept = big.value
    apply_sgd(big, np.asarray(1.0), np.ones((64, 64)), use_locking=False, op=None)
    assert big.value is kept
    np.testing.assert_array_equal(kept, np.ones((64, 64)))


def test_storage_ok_reads_layout_flags():
    a = np.zeros((64, 64))
    assert _training.storage_ok(a[:, ::2].copy(), 1, 0)
    assert not _training.storage_ok(a[:, ::2], 1, 0)  # strided
    ro = a.copy()
    ro.flags.writeable = False
    assert not _training.storage_ok(ro, 1, 0)
    assert not _training.storage_ok(a.astype(">f8"), 1, 0)  # byte-swapped
    off = _misaligned((64, 64), np.float64, 8, 0.0)
    assert not _training.storage_ok(off, 64, 4096)
    assert _training.storage_ok(off, 64, off.nbytes + 1)  # below the size threshold


def test_byte_swapped_large_storage_becomes_native_and_aligned():
    var = VariableState("w")
    var.value = np.arange(2048, dtype=">f4").reshape(32, 64)
    apply_sgd(var, np.asarray(np.float32(1.0)), np.ones((32, 64), np.float32),
              use_locking=False, op=None)
    assert var.value.dtype == np.float32 and var.value.dtype.isnative
    assert var.value.ctypes.data % 64 == 0
    np.testing.assert_array_equal(var.value, np.arange(2048, dtype=np.float32).reshape(
        32, 64) - 1)


def test_gradient_fast_path_and_its_fallbacks():
    var = VariableState("w")
    var.value = np.zeros((4, 3), np.float32)
    lr = np.asarray(np.float32(1.0))
    apply_sgd(var, lr, np.ones((4, 3), np.float64), use_locking=False, op=None)  # cast
    apply_sgd(var, lr, np.ones((3, 4), np.float32).T, use_locking=False, op=None)  # F order
    apply_sgd(var, lr, [[1.0] * 3] * 4, use_locking=False, op=None)  # a list
    np.testing.assert_array_equal(var.value, np.full((4, 3), -3.0, np.float32))
    with pytest.raises(errors.InvalidArgumentError, match="same shape"):
        apply_sgd(var, lr, np.ones((3, 4), np.float32), use_locking=False, op=None)


@pytest.mark.parametrize("grad_dtype", [np.float32, np.float64])  # the direct, checked path
def test_use_locking_holds_every_storage_lock_during_the_update(monkeypatch, grad_dtype):
    states = [VariableState(n) for n in ("w", "m", "v")]
    for s in states:
        s.value = np.zeros(16, np.float32)
    seen = []
    direct = kernels_training._UPDATES["ApplyAdam"]
    checked = kernels_training._dense_update

    def spy(original):
        def call(*args):
            seen.append([s.lock.locked() for s in states])
            return original(*args)
        return call

    monkeypatch.setitem(kernels_training._UPDATES, "ApplyAdam", spy(direct))
    monkeypatch.setattr(kernels_training, "_dense_update", spy(checked))
    scalars = [np.asarray(np.float32(x)) for x in (0.9, 0.999, 1e-3, 0.9, 0.999, 1e-8)]
    for locking in (True, False):
        apply_adam(*states, *scalars, np.ones(16, grad_dtype), use_locking=locking,
                   use_nesterov=False, op=None)
    # The direct path is always asked first; a float64 gradient then takes the checked one.
    per_call = 1 if grad_dtype is np.float32 else 2
    assert seen == [[True] * 3] * per_call + [[False] * 3] * per_call
    assert not any(s.lock.locked() for s in states)
    assert isinstance(states[0].lock, type(threading.Lock()))


def test_adam_optimizer_defaults_match_numpy_reference_through_the_public_api():
    rng = np.random.default_rng(2)
    w0 = rng.standard_normal((48, 40)).astype(np.float32)  # 7.5 KiB: realigned storage
    x = rng.standard_normal((8, 48)).astype(np.float32)
    graph = tf.Graph()
    with graph.as_default():
        w = tf.Variable(w0, name="w")
        loss = tf.reduce_sum(tf.square(tf.matmul(tf.constant(x), w)))
        opt = tf.train.AdamOptimizer()
        train = opt.minimize(loss)
        (grad,) = tf.gradients(loss, [w])
        init = tf.global_variables_initializer()
        assert [v.op.name for v in opt.variables()][:2] == ["beta1_power", "beta2_power"]
    f32 = np.float32
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        var, m, v = w0.copy(), np.zeros_like(w0), np.zeros_like(w0)
        b1p, b2p = f32(0.9), f32(0.999)  # TF1: float32 variables, multiplied each step
        for _ in range(3):
            g = sess.run(grad)
            sess.run(train)
            var, m, v = _adam_reference(var, m, v, g, 1e-3, 0.9, 0.999, 1e-8, b1p, b2p)
            b1p, b2p = b1p * f32(0.9), b2p * f32(0.999)
            np.testing.assert_array_equal(sess.run(w), var)
        powers = sess.run([graph.get_tensor_by_name("beta1_power:0"),
                           graph.get_tensor_by_name("beta2_power:0")])
    assert powers == [b1p, b2p]


def test_training_module_examples():
    assert doctest.testmod(_training).failed == 0
