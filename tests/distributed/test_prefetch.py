"""Optimistic variable reads (flowgraph/distributed/prefetch.py): a training step costs
one call to its ps, and a write by anyone else between steps is never missed."""

import numpy as np
from conftest import free_port
from test_step_rpcs import PS, WORKER, _as_if_remote, _calls, _cluster

import flowgraph as tf
from flowgraph.distributed.master import delegate, plan_run, relay_through_master
from flowgraph.distributed.prefetch import SWITCH, plan_prefetch


def _ps_calls(ps) -> int:
    return _calls(ps.target, "RunStage") + _calls(ps.target, "RecvTensor")


def _counter_model(random_in_worker: bool = False):
    """``w`` on the ps; the worker computes ``seen = w`` and ``delta = x`` from it (an
    apply stage fed only by the worker), and the ps adds ``delta`` to ``w``."""
    with tf.device("/job:ps/task:0"):
        w = tf.Variable(1.0, name="w")
    x = tf.placeholder(tf.float32, [])
    with tf.device("/job:worker/task:0"):
        seen = w * 1.0
        delta = seen * 0.0 + x
        if random_in_worker:
            delta += 0.0 * tf.random_uniform([])
    with tf.device("/job:ps/task:0"):
        train = tf.assign_add(w, delta)
    return w, x, seen, train.op


def test_a_write_between_steps_is_seen_by_the_next_step(servers):
    cluster = _cluster()
    ps, worker = _as_if_remote(servers(cluster, "ps", 0)), servers(cluster, "worker", 0)
    with tf.Graph().as_default():
        w, x, seen, train = _counter_model()
        with tf.Session(worker.target) as sess, tf.Session(worker.target) as other:
            sess.run(w.initializer)
            assert sess.run([seen, train], {x: 1.0})[0] == 1.0  # pull, apply: w = 2
            before = _ps_calls(ps)
            assert sess.run([seen, train], {x: 1.0})[0] == 2.0  # from the prefetch
            assert sess.run([seen, train], {x: 1.0})[0] == 3.0
            assert _ps_calls(ps) - before == 2  # one call per step
            other.run(w.assign(100.0))  # another session writes on the ps
            before = _ps_calls(ps)
            assert sess.run([seen, train], {x: 1.0})[0] == 100.0  # not the stale 4.0
            assert _ps_calls(ps) - before == 3  # refused apply, pull, apply
            assert other.run(w) == 101.0  # applied once
            other.run(w.read_value())  # a read is no write: the prefetch stays good
            before = _ps_calls(ps)
            assert sess.run([seen, train], {x: 1.0})[0] == 101.0
            assert _ps_calls(ps) - before == 1
            sess.run(w.assign(7.0))  # a write by this session's other run, too
            assert sess.run([seen, train], {x: 1.0})[0] == 7.0
            assert sess.run(w) == 8.0


def test_prefetched_steps_leave_no_step_stores_behind(servers):
    """A step that applied from prefetched values returned every value in its replies:
    neither task keeps a step store for it, and no cleanup rides on later calls."""
    cluster = _cluster()
    ps, worker = _as_if_remote(servers(cluster, "ps", 0)), servers(cluster, "worker", 0)
    with tf.Graph().as_default():
        w, x, seen, train = _counter_model()
        with tf.Session(worker.target) as sess:
            sess.run(w.initializer)
            for k in range(5):  # one ordinary step, then prefetched ones
                assert sess.run([seen, train], {x: 1.0})[0] == 1.0 + k
            assert ps._service._steps == {} and worker._service._steps == {}
            assert not any(sess._finished.values())
            sess.run(w.assign(0.0))  # an ordinary run stores and is cleaned up as before
            assert sess.run([seen, train], {x: 1.0})[0] == 0.0
            assert sess.run([seen, train], {x: 1.0})[0] == 1.0
            assert sess.run(w) == 2.0


def test_ordinary_steps_keep_only_the_values_another_stage_pulls(servers, monkeypatch):
    """Without prefetching, the ps keeps the read stage's values (the worker's pull takes
    them) until the next call drops them; the worker's gradients (relayed by the master)
    and the apply stage's values (the step's last) are kept nowhere."""
    monkeypatch.setenv(SWITCH, "0")
    cluster = _cluster()
    ps, worker = _as_if_remote(servers(cluster, "ps", 0)), servers(cluster, "worker", 0)
    with tf.Graph().as_default():
        w, x, seen, train = _counter_model()
        with tf.Session(worker.target) as sess:
            sess.run(w.initializer)
            for k in range(4):
                assert sess.run([seen, train], {x: 1.0})[0] == 1.0 + k
            assert worker._service._steps == {}
            assert len(ps._service._steps) == 1  # the last step's reads, until next call
            (kept,) = ps._service._steps.values()
            assert sorted(kept[1]) == ["w/read:0"]
            assert list(sess._finished) == [PS]


def test_two_sessions_training_one_variable_lose_no_update(servers):
    """Interleaved steps make each other's values stale: none is lost, and backing off
    keeps the cost near the ordinary two calls per step."""
    cluster = _cluster()
    ps = _as_if_remote(servers(cluster, "ps", 0))
    worker = servers(cluster, "worker", 0)
    steps = 20
    with tf.Graph().as_default():
        w, x, seen, train = _counter_model()
        with tf.Session(worker.target) as a, tf.Session(worker.target) as b:
            a.run(w.initializer)
            seen_a, seen_b = [], []
            before = _ps_calls(ps)
            for _ in range(steps):
                seen_a.append(a.run([seen, train], {x: 1.0})[0])
                seen_b.append(b.run([seen, train], {x: 10.0})[0])
            calls = _ps_calls(ps) - before
            assert a.run(w) == 1.0 + steps * 11.0
    np.testing.assert_array_equal(seen_a, [1.0 + 11 * k for k in range(steps)])
    np.testing.assert_array_equal(seen_b, [2.0 + 11 * k for k in range(steps)])
    assert calls <= 2.4 * 2 * steps, calls


def test_the_switch_turns_it_off(monkeypatch):
    cluster = {"ps": ["h:1"], "worker": ["h:2"]}
    with tf.Graph().as_default() as g:
        _, x, seen, train = _counter_model()
        plan = plan_run(g, [seen], [train], {x: 1}, WORKER, cluster)
        relay_through_master(plan, [WORKER])
        delegate(plan, [WORKER])
        assert plan_prefetch(plan, [WORKER]) is not None
        monkeypatch.setenv(SWITCH, "0")
        assert plan_prefetch(plan, [WORKER]) is None


def test_a_worker_stage_with_state_keeps_the_pull():
    """A stage that would run twice after a stale answer must be pure: a random op (or
    a queue, an iterator) keeps the ordinary two calls."""
    cluster = {"ps": ["h:1"], "worker": ["h:2"]}
    for stateful in (False, True):
        with tf.Graph().as_default() as g:
            _, x, seen, train = _counter_model(random_in_worker=stateful)
            plan = plan_run(g, [seen], [train], {x: 1}, WORKER, cluster)
            relay_through_master(plan, [WORKER])
            delegate(plan, [WORKER])
            found = plan_prefetch(plan, [WORKER])
            assert (found is None) == stateful
            if found is not None:
                assert found.apply.task == found.read.task == PS


def test_values_read_while_another_write_ran_back_off_like_a_stale_answer():
    """An apply call whose read came back inconsistent (no epoch: another write ran)
    cost a transfer for nothing; the next steps' apply calls read nothing until the
    back-off ends, as after a stale answer. Replies that asked for no values, or stale
    ones, do not count."""
    from types import SimpleNamespace

    from flowgraph.distributed.prefetch import Prefetch

    worker = SimpleNamespace(recvs=[("p", "w/read:0", "ps")], returns=["out"])
    read = SimpleNamespace(fetches=[("w/read", "w/read:0")], returns=[])
    prefetch = Prefetch(worker, read, SimpleNamespace())
    prefetch.keep({}, {"out": 1})  # asked for no values: nothing to learn
    assert prefetch.wants_values()
    prefetch.keep({}, {"w/read:0": 1.0})  # read, but inconsistently: back off
    prefetch.keep({}, {"w/read:0": 1.0})
    assert [prefetch.wants_values() for _ in range(2)] == [False, True]
    prefetch.keep({"epoch": 3}, {"w/read:0": 2.0})
    assert prefetch.take() == ({"w/read:0": 2.0}, 3)
    prefetch.applied(stale=False)
    prefetch.keep({"stale": True}, {})  # counted by `applied`, not here
    assert prefetch.wants_values()



def test_no_prefetch_for_asynchronous_steps_among_several_trainers(servers):
    """With a second trainer in the cluster, whose updates interleave on the ps, an
    asynchronous step pulls and applies (two calls): prefetched values would mostly be
    stale, each stale answer costing a wasted worker stage."""

    cluster = {"ps": [f"localhost:{free_port()}"],
               "worker": [f"localhost:{free_port()}", f"localhost:{free_port()}"]}
    ps, worker = _as_if_remote(servers(cluster, "ps", 0)), servers(cluster, "worker", 0)
    with tf.Graph().as_default():
        w, x, seen, train = _counter_model()
        with tf.Session(worker.target) as sess:
            sess.run(w.initializer)
            sess.run([seen, train], {x: 1.0})
            before = _ps_calls(ps)
            assert sess.run([seen, train], {x: 1.0})[0] == 2.0
            assert sess.run([seen, train], {x: 1.0})[0] == 3.0
            assert _ps_calls(ps) - before == 4  # pull and apply, each step
