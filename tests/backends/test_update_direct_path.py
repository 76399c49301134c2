"""The direct path of the CPU optimizer kernels (`_training.Update`, called first by every
`Apply*` / `SparseApply*` kernel in `backends/cpu/kernels_training.py`): the same bits as
the checked path for every rule, flag, dtype and layout; it declines (writing nothing)
whatever needs a conversion, an error or the kernel threads, so the checked path still
raises the same errors; a training step through `Session.run` takes it for every update."""

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.backends.base import bind_kernel
from flowgraph.backends.cpu import backend, kernel_pool, kernels_training
from flowgraph.framework import errors
from flowgraph.framework.resources import VariableState
from flowgraph.ops.training_ops import _SIGNATURES

# Values per scalar input; positive, so that every rule's accumulators stay valid.
SCALARS = {"alpha": 0.1, "lr": 0.05, "momentum": 0.9, "beta1_power": 0.81,
           "beta2_power": 0.998, "beta1": 0.9, "beta2": 0.999, "epsilon": 1e-7, "rho": 0.9,
           "l1": 0.01, "l2": 0.02, "l2_shrinkage": 0.05, "lr_power": -0.6}
FLAGGED = {"ApplyMomentum": "use_nesterov", "ApplyAdam": "use_nesterov",
           "ApplyAdagrad": "update_slots"}
DENSE = sorted(kernels_training._OPS)


def _kernel(op_type, dtype=np.float32):
    return backend.find_kernel(op_type, tf.as_dtype(dtype)).fn


def _inputs(op_type, shape, dtype, rng, as_floats=False, k=5):
    """(ref states, the op's inputs): Python floats for the scalars when `as_floats`."""
    names, num_refs, _ = _SIGNATURES[op_type]
    refs = []
    for n in names[:num_refs]:
        s = VariableState(n)
        s.value = (rng.random(shape) + 0.5).astype(dtype)
        refs.append(s)
    args = list(refs)
    for n in names[num_refs:]:
        if n == "indices":
            args.append(rng.integers(0, shape[0], k).astype(np.int64))
        elif n in ("grad", "delta"):
            gshape = (k, *shape[1:]) if "indices" in names else shape
            args.append(rng.standard_normal(gshape).astype(dtype))
        else:
            value = np.asarray(SCALARS[n], dtype)
            args.append(float(value) if as_floats else value)
    return refs, args


def _counting(monkeypatch, op_type):
    """Replace `op_type`'s direct path by a wrapper that records what it returned."""
    results = []
    direct = kernels_training._UPDATES[op_type]

    def call(inputs, use_nesterov, update_slots):
        results.append(direct(inputs, use_nesterov, update_slots))
        return results[-1]

    monkeypatch.setitem(kernels_training._UPDATES, op_type, call)
    return results


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("op_type, flag", [(op, flag) for op in DENSE for flag in (
    (False, True) if op in FLAGGED else (False,))])
def test_direct_and_checked_paths_give_the_same_bits(monkeypatch, op_type, flag, sparse,
                                                      dtype):
    op_type = "Sparse" + op_type if sparse else op_type
    attrs = {FLAGGED[op_type.removeprefix("Sparse")]: flag} if flag else {}
    kernel = _kernel(op_type, dtype)
    results = _counting(monkeypatch, op_type)
    # (37, 29): small; (700, 8): above the size the loops release the GIL at
    for shape in [(37, 29), (700, 8), (1,)]:
        direct, checked = (_inputs(op_type, shape, dtype, np.random.default_rng(5), as_floats,
                                   k=9) for as_floats in (False, True))
        for _ in range(3):
            for refs, args in (direct, checked):
                assert kernel(*args, use_locking=False, op=None, **attrs) is refs[0]
        # Python floats take the checked path; a large storage not on a 64-byte line is
        # realigned by the checked path at the first step (`_storage`), direct from then on.
        assert results[-4:] == [True, False] * 2
        for a, b in zip(direct[0], checked[0]):
            assert a.value.dtype == b.value.dtype
            np.testing.assert_array_equal(a.value, b.value)


@pytest.mark.parametrize("op_type", ["ApplyAdam", "SparseApplyAdam", "ApplyFtrlV2",
                                     "SparseApplyMomentum"])
def test_work_for_the_kernel_threads_goes_to_the_checked_path(monkeypatch, op_type):
    results = _counting(monkeypatch, op_type)
    kernel = _kernel(op_type)
    direct = _inputs(op_type, (64, 9), np.float32, np.random.default_rng(1), k=40)
    threaded = _inputs(op_type, (64, 9), np.float32, np.random.default_rng(1), k=40)
    kernel(*direct[1], use_locking=False, op=None)
    monkeypatch.setitem(kernel_pool.GRAIN, "update", 16)  # read at every call
    kernel(*threaded[1], use_locking=False, op=None)
    assert results == [True, False]
    for a, b in zip(direct[0], threaded[0]):
        np.testing.assert_array_equal(a.value, b.value)


def test_int32_unsorted_and_repeated_indices_take_the_direct_path(monkeypatch):
    results = _counting(monkeypatch, "SparseApplyAdagrad")
    kernel = _kernel("SparseApplyAdagrad")
    outs = []
    for idx in (np.array([3, 0, 3, 2], np.int32), np.array([3, 9, 0, 9, 3, 9, 2, 9])[::2],
                [3, 0, 3, 2]):
        refs, args = _inputs("SparseApplyAdagrad", (5, 3), np.float32,
                             np.random.default_rng(2), k=4)
        args[4] = idx
        kernel(*args, use_locking=False, op=None)
        outs.append(refs[0].value)
    # int32 and strided indices are converted on the direct path; a list on the checked one
    assert results == [True, True, False]
    np.testing.assert_array_equal(outs[0], outs[2])
    np.testing.assert_array_equal(outs[1], outs[2])


def _state(value):
    s = VariableState("v")
    s.value = value
    return s


f32 = np.float32
ONE = np.asarray(f32(1.0))
BAD_INPUTS = {
    "non-scalar learning rate": (
        "ApplyGradientDescent", lambda: [_state(np.ones(3, f32)), np.ones(2, f32),
                                         np.ones(3, f32)],
        errors.InvalidArgumentError, r"alpha is not a scalar: shape \(2,\)"),
    "integer variable": (
        "ApplyGradientDescent", lambda: [_state(np.ones(3, np.int32)), ONE, np.ones(3, f32)],
        errors.InvalidArgumentError,
        "ApplyGradientDescent supports float32 and float64 variables, got int32"),
    "gradient shape": (
        "ApplyGradientDescent", lambda: [_state(np.ones((3, 4), f32)), ONE,
                                         np.ones((4, 3), f32)],
        errors.InvalidArgumentError,
        r"var and grad do not have the same shape: var \[3, 4\], grad \[4, 3\]"),
    "accumulator shape": (
        "ApplyMomentum", lambda: [_state(np.ones(3, f32)), _state(np.ones(4, f32)), ONE,
                                  np.ones(3, f32), ONE],
        errors.InvalidArgumentError,
        r"var and accum do not have the same shape and dtype: var \[3\] float32, "
        r"accum \[4\] float32"),
    "accumulator dtype": (
        "ApplyMomentum", lambda: [_state(np.ones(3, f32)), _state(np.ones(3)), ONE,
                                  np.ones(3, f32), ONE],
        errors.InvalidArgumentError, "accum \\[3\\] float64"),
    "uninitialized variable": (
        "ApplyGradientDescent", lambda: [VariableState("w"), ONE, np.ones(3, f32)],
        errors.FailedPreconditionError, "Attempting to use uninitialized value w"),
    "one storage as variable and accumulator": (
        "ApplyMomentum", lambda: [(s := _state(np.ones(3, f32))), s, ONE, np.ones(3, f32),
                                  ONE],
        ValueError, "var and s0 share memory"),  # (raised by the direct path itself)
    "index out of range": (
        "SparseApplyGradientDescent", lambda: [_state(np.zeros((4, 3), f32)), ONE,
                                               np.ones((2, 3), f32), np.array([0, 4])],
        errors.InvalidArgumentError, r"indices\[1\] = 4 is not in \[0, 4\)"),
    "negative index": (
        "SparseApplyAdam", lambda: [_state(np.zeros((4, 3), f32)),
                                    *(_state(np.zeros((4, 3), f32)) for _ in "mv"),
                                    *[ONE] * 6, np.ones((2, 3), f32),
                                    np.array([-1, 1], np.int32)],
        errors.InvalidArgumentError, r"indices\[0\] = -1 is not in \[0, 4\)"),
    "two-dimensional indices": (
        "SparseApplyGradientDescent", lambda: [_state(np.zeros((4, 3), f32)), ONE,
                                               np.ones((2, 3), f32), np.zeros((2, 1), int)],
        errors.InvalidArgumentError, r"indices must be one-dimensional, got shape \[2, 1\]"),
    "sparse gradient shape": (
        "SparseApplyGradientDescent", lambda: [_state(np.zeros((4, 3), f32)), ONE,
                                               np.ones((2, 2), f32), np.array([0, 1])],
        errors.InvalidArgumentError, r"grad must have shape \[len\(indices\)\] \+ var.shape"),
    "scalar variable, sparse": (
        "SparseApplyGradientDescent", lambda: [_state(np.zeros((), f32)), ONE,
                                               np.ones((1,), f32), np.array([0])],
        errors.InvalidArgumentError, "var must be at least 1 dimensional"),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_inputs_are_declined_then_raise_the_checked_errors(monkeypatch, case):
    op_type, make, error, message = BAD_INPUTS[case]
    results = _counting(monkeypatch, op_type)
    args = make()
    before = [None if a.value is None else a.value.copy() for a in args
              if isinstance(a, VariableState)]
    with pytest.raises(error, match=message):
        _kernel(op_type)(*args, use_locking=False, op=None)
    assert results == ([] if error is ValueError else [False])
    after = [a.value for a in args if isinstance(a, VariableState)]
    for b, a in zip(before, after):  # nothing written
        assert (a is None) if b is None else np.array_equal(a, b)


def test_bound_kernels_take_only_the_ops_flag_attrs_and_stay_shareable():
    from flowgraph.runtime import plan_cache

    with tf.Graph().as_default() as graph:
        w = tf.Variable(np.ones(3, np.float32))
        tf.train.MomentumOptimizer(0.1, 0.9).minimize(tf.reduce_sum(w * w))
        tf.train.GradientDescentOptimizer(0.1).minimize(tf.reduce_sum(w * w))
    for op_type, keywords in [("ApplyMomentum", {"use_locking", "use_nesterov", "op"}),
                              ("ApplyGradientDescent", {"use_locking", "op"})]:
        op = next(o for o in graph.get_operations() if o.type == op_type)
        kernel = bind_kernel(backend.find_kernel(op_type, tf.float32), op, None)
        assert set(kernel.keywords) == keywords
        relinked = plan_cache._relink(kernel, lambda o: "op", {})  # no _Uncacheable
        assert relinked.keywords["op"] == "op" and relinked.func is kernel.func


@pytest.mark.parametrize("optimizer", [
    lambda: tf.train.AdamOptimizer(0.01), lambda: tf.train.MomentumOptimizer(0.1, 0.9),
    lambda: tf.train.RMSPropOptimizer(0.01, centered=True)])
def test_a_training_step_takes_the_direct_path_for_every_update(monkeypatch, optimizer):
    seen = {op_type: _counting(monkeypatch, op_type) for op_type in kernels_training._UPDATES}
    rng = np.random.default_rng(0)
    with tf.Graph().as_default():
        x = tf.constant(rng.standard_normal((8, 5)).astype(np.float32))
        w = tf.Variable(rng.standard_normal((5, 3)).astype(np.float32))
        emb = tf.Variable(rng.standard_normal((10, 3)).astype(np.float32))
        loss = tf.reduce_sum(tf.square(tf.matmul(x, w))) + tf.reduce_sum(
            tf.gather(emb, tf.constant([4, 1, 4])))
        train = optimizer().minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(2):
                sess.run(train)
    calls = [r for results in seen.values() for r in results]
    assert len(calls) == 4 and all(calls)



def test_a_call_with_missing_inputs_is_declined_not_read_past_the_end(monkeypatch):
    results = _counting(monkeypatch, "ApplyAdam")
    states = [_state(np.ones(3, f32)) for _ in range(3)]
    with pytest.raises(IndexError):
        _kernel("ApplyAdam")(*states, *[ONE] * 5, use_locking=False, op=None)
    assert results == [False]


def test_an_inconsistent_layout_is_refused():
    from flowgraph.backends.cpu import _training

    good = (_training.SGD, 3, 1, (0, 0, 0), (1, -1, -1, -1, -1, -1), (), 2, -1, 0, 0,
            {"update": 1}, 64, 4096)
    _training.Update(*good)
    for k, bad in [(1, 2), (4, (0, 0, 0, 0)), (5, (3, -1, -1, -1, -1, -1)), (7, 3),
                   (3, (1, 0, 0))]:
        with pytest.raises(ValueError, match="inconsistent layout"):
            _training.Update(*good[:k], bad, *good[k + 1:])
