"""The synchronous push's ops (`flowgraph/ops/sync_replicas_ops.py`) against NumPy: the
staleness check, the accumulation, the mean (bitwise what the graph ops it replaced
give), the lock state, dead outputs, all-or-nothing shape checks, the finish."""

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.ops.sync_replicas_ops import sync_replicas_finish, sync_replicas_push


def _state(dtype=np.float32, step=5, local=5, shapes=((2, 3), (3,))):
    rng = np.random.RandomState(0)
    starts = [rng.randn(*s).astype(dtype) for s in shapes]
    accs = [tf.Variable(a) for a in starts]
    return (tf.Variable(np.int64(step)), tf.Variable(np.int64(local)),
            tf.Variable(np.zeros(2, np.int64)), accs, starts)


def _grads(dtype=np.float32, shapes=((2, 3), (3,))):
    rng = np.random.RandomState(1)
    return [rng.randn(*s).astype(dtype) for s in shapes]


@pytest.mark.parametrize("fresh", [True, False])
def test_a_push_that_does_not_complete_the_step_adds_only_a_fresh_gradient(fresh):
    with tf.Graph().as_default():
        step, local, lock, accs, starts = _state(local=5 if fresh else 4)
        grads = _grads()
        push = sync_replicas_push(tf.constant(1), tf.constant(17, tf.int64), lock, step,
                                  local, accs, [tf.constant(g) for g in grads], 3)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(push.count) == (2 if fresh else 1)
            got = sess.run(accs)
            np.testing.assert_array_equal(sess.run(lock), [17, 1])
            with pytest.raises(tf.errors.InvalidArgumentError, match="does not have value"):
                sess.run(push.aggregating)  # dead: this push does not aggregate
    for value, start, grad in zip(got, starts, grads):
        want = np.add(start, grad) if fresh else start
        assert value.dtype == np.float32 and value.tobytes() == want.tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("replicas", [2, 3])
def test_the_last_push_returns_the_mean_bitwise_as_the_graph_ops_and_writes_nothing(
        dtype, replicas):
    with tf.Graph().as_default():
        step, local, lock, accs, starts = _state(dtype)
        grads = [tf.constant(g) for g in _grads(dtype)]
        push = sync_replicas_push(tf.constant(replicas - 1), tf.constant(3, tf.int64), lock,
                                  step, local, accs, grads, replicas)
        as_ops = [(a.read_value() + g) * (1.0 / replicas) for a, g in zip(accs, grads)]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            aggregating, *means = sess.run([push.aggregating, *push.means])
            assert aggregating == np.True_
            for mean, want in zip(means, sess.run(as_ops)):
                assert mean.dtype == dtype and mean.tobytes() == want.tobytes()
            for value, start in zip(sess.run(accs), starts):
                np.testing.assert_array_equal(value, start)
            np.testing.assert_array_equal(sess.run(lock), [3, replicas - 1])


def test_a_stale_last_gradient_does_not_aggregate():
    """count + fresh decides: a stale push with ``count == n - 1`` only puts the count back."""
    with tf.Graph().as_default():
        step, local, lock, accs, _ = _state(local=2)
        push = sync_replicas_push(tf.constant(1), tf.constant(1, tf.int64), lock, step, local,
                                  accs, [tf.constant(g) for g in _grads()], 2)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(push.count) == 1


def test_a_gradient_of_the_wrong_shape_names_the_op_and_writes_no_accumulator():
    with tf.Graph().as_default():
        step, local, lock, accs, starts = _state()
        grad = tf.placeholder(tf.float32)
        push = sync_replicas_push(tf.constant(0), tf.constant(1, tf.int64), lock, step, local,
                                  accs, [tf.constant(_grads()[0]), grad], 2, name="push")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match=r"SyncReplicasPush 'push'.*shape \[3\] but gradient 1 "
                                     r"has shape \[4\]"):
                sess.run(push.count, {grad: np.zeros(4, np.float32)})
            for value, start in zip(sess.run(accs), starts):
                np.testing.assert_array_equal(value, start)


def test_static_shapes_are_checked_when_the_op_is_built():
    with tf.Graph().as_default():
        step, local, lock, accs, _ = _state()
        with pytest.raises(ValueError, match="accumulator 1 has shape"):
            sync_replicas_push(tf.constant(0), tf.constant(1, tf.int64), lock, step, local,
                               accs, [tf.zeros([2, 3]), tf.zeros([4])], 2)
        with pytest.raises(ValueError, match="one gradient per accumulator"):
            sync_replicas_push(tf.constant(0), tf.constant(1, tf.int64), lock, step, local,
                               accs, [tf.zeros([2, 3])], 2)


def test_finish_zeroes_the_accumulators_and_returns_the_tokens():
    with tf.Graph().as_default():
        step, _, _, accs, _ = _state(step=7)
        tokens = sync_replicas_finish(step, accs, 3)
        assert tokens.dtype == tf.int64 and tokens.shape.as_list() == [3]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(tokens), [7, 7, 7])
            for value in sess.run(accs):
                assert not value.any()


def test_storages_that_cannot_be_updated_in_place_are_replaced():
    """A read-only accumulator (as a restore may leave) is replaced, not written."""
    from flowgraph.backends.cpu.kernels_sync_replicas import (
        sync_replicas_finish as finish_kernel,
    )
    from flowgraph.backends.cpu.kernels_sync_replicas import (
        sync_replicas_push as push_kernel,
    )
    from flowgraph.framework.resources import VariableState

    class Op:
        name = "push"

    def variable(value):
        v = VariableState("v")
        v.value = value
        return v

    frozen = np.ones(3, np.float32)
    frozen.flags.writeable = False
    acc = variable(frozen)
    step, local, lock = variable(np.int64(0)), variable(np.int64(0)), variable(None)
    push_kernel(np.int32(0), np.int64(1), lock, step, local, acc, np.ones(3, np.float32),
                N=1, replicas_to_aggregate=2, op=Op)
    np.testing.assert_array_equal(acc.value, [2, 2, 2])
    np.testing.assert_array_equal(frozen, [1, 1, 1])
    acc.value.flags.writeable = False
    kept = acc.value
    finish_kernel(step, acc, N=1, num_tokens=1, op=Op)
    np.testing.assert_array_equal(acc.value, [0, 0, 0])
    np.testing.assert_array_equal(kept, [2, 2, 2])
