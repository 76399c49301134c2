"""The Cython executor on hand-built plans (Python callables as kernels, no graph).

Slots: the feeds come first, then each node's outputs in node order. `build` computes
use counts (consumers plus fetches) the way `plan.py` does.
"""

import threading
import time
import warnings
import weakref

import numpy as np
import pytest
from flowgraph.runtime._executor import (
    DEAD,
    FLAG_ASYNC,
    FLAG_HAND_OFF,
    FLAG_MERGE,
    FLAG_MULTI_OUT,
    FLAG_NEEDS_STEP,
    FLAG_TRANSFER,
    Plan,
    Step,
    WorkerPool,
)


class KernelError(RuntimeError):
    pass


def describe(node, exc, args):
    err = KernelError(f"node {node} failed: {exc!r} with {len(args)} args")
    err.__cause__ = exc
    return err


def build(n_feeds, nodes, fetch, control=()):
    """`nodes`: (kernel, input slots, number of outputs, flags) per node."""
    kernels, inputs, out_base, n_out, flags = [], [], [], [], []
    n_slots = n_feeds
    for kernel, ins, k, f in nodes:
        kernels.append(kernel)
        inputs.append(list(ins))
        out_base.append(n_slots)
        n_out.append(k)
        flags.append(f)
        n_slots += k
    uses = [0] * n_slots
    for ins in inputs:
        for s in ins:
            uses[s] += 1
    for s in fetch:
        uses[s] += 1
    plan = Plan(n_slots, kernels, inputs, out_base, n_out, flags, uses, [None] * n_slots,
                [f"n{i}" for i in range(len(nodes))], describe)
    plan.add_control_edges(list(control))
    plan.finish()
    return plan


def run(plan, feeds=(), fetch=(), pool=None, context=None, tracing=False):
    step = Step(plan, context, pool, tracing)
    return step.run(list(range(len(feeds))), list(feeds), list(fetch)), step


@pytest.fixture
def pool():
    p = WorkerPool(2)
    yield p
    p.close()


# -- dependency counting ------------------------------------------------------------------
@pytest.mark.parametrize("reverse", [False, True])
def test_diamond_runs_each_node_once_after_its_inputs(reverse):
    """
        x ─┬─ a ─┐
           └─ b ─┴─ c      c needs both a and b; x + x counts x once
    """
    order = []

    def k(name, fn):
        def kernel(*args):
            order.append(name)
            return fn(*args)
        return kernel

    specs = {"a": lambda x: x + 1, "b": lambda x: x * 10}
    names = ["a", "b"][::-1] if reverse else ["a", "b"]
    nodes = [(k(n, specs[n]), [0], 1, 0) for n in names]
    slot = {n: 1 + i for i, n in enumerate(names)}
    nodes.append((k("c", lambda p, q: p + q), [slot["a"], slot["b"]], 1, 0))
    nodes.append((k("d", lambda p, q: p - q), [0, 0], 1, 0))  # one producer, two uses
    plan = build(1, nodes, [3, 4])
    assert plan.successors(0) == [2] and plan.successors(1) == [2]
    (c, d), _ = run(plan, [np.float64(2.0)], [3, 4])
    assert c == 3.0 + 20.0 and d == 0.0
    assert sorted(order) == ["a", "b", "c", "d"] and order.index("c") > max(
        order.index("a"), order.index("b"))
    (c2, _), _ = run(plan, [np.float64(1.0)], [3, 4])  # the plan runs again, fresh counts
    assert c2 == 2.0 + 10.0


@pytest.mark.parametrize("reverse", [False, True])
def test_control_edges_order_nodes_without_data(reverse):
    """  first ··> second   (a control edge; neither reads the other's output)  """
    order = []
    nodes = [(lambda: order.append("first"), [], 0, 0),
             (lambda: order.append("second"), [], 0, 0)]
    a, b = (1, 0) if reverse else (0, 1)
    if reverse:
        nodes.reverse()
    plan = build(0, nodes, [], control=[(a, b)])
    run(plan)
    assert order == ["first", "second"]


def test_intermediate_released_when_last_consumer_finishes():
    """  x ── a ── b ── c   a's output is gone while c runs; fetched c survives  """
    refs = {}

    def a(x):
        out = x + 1.0
        refs["a"] = weakref.ref(out)
        return out

    seen = {}

    def c(y):
        seen["a_alive"] = refs["a"]() is not None
        return y * 2.0

    plan = build(1, [(a, [0], 1, 0), (lambda y: y + 1.0, [1], 1, 0), (c, [2], 1, 0)], [3])
    (out,), _ = run(plan, [np.ones(3)], [3])
    assert seen == {"a_alive": False}
    np.testing.assert_array_equal(out, np.full(3, 6.0))


def test_many_inputs_and_unused_outputs():
    args = 40  # beyond the executor's on-stack argument array
    nodes = [(lambda *xs: sum(xs), list(range(args)), 1, 0),
             (lambda x: (x, x + 1), [args], 2, FLAG_MULTI_OUT),  # output 1 unused
             (lambda x: None, [args + 1], 0, 0)]
    plan = build(args, nodes, [args, args + 1])
    (total, first), _ = run(plan, [float(i) for i in range(args)], [args, args + 1])
    assert total == sum(range(args)) and first == total


def test_wrong_number_of_outputs_is_an_error():
    plan = build(0, [(lambda: (1, 2, 3), [], 2, FLAG_MULTI_OUT)], [0])
    with pytest.raises(KernelError, match="returned 3 outputs, the op declares 2"):
        run(plan, fetch=[0])


def test_a_step_runs_once():
    plan = build(0, [(lambda: 1, [], 1, 0)], [0])
    step = Step(plan, None, None, False)
    assert step.run([], [], [0]) == [1]
    with pytest.raises(RuntimeError, match="runs once"):
        step.run([], [], [0])


def test_a_plan_runs_only_once_finished():
    plan = Plan(1, [lambda: 1], [[]], [0], [1], [0], [1], [None], ["n0"], describe)
    with pytest.raises(RuntimeError, match="finish"):
        Step(plan, None, None, False)
    plan.finish()
    assert Step(plan, None, None, False).run([], [], [0]) == [1]


def test_needs_step_kernels_receive_the_context():
    ctx = object()
    plan = build(1, [(lambda c, x: (c is ctx, x), [0], 1, FLAG_NEEDS_STEP)], [1])
    (out,), _ = run(plan, [5], [1], context=ctx)
    assert out == (True, 5)


# -- ufunc kernels ------------------------------------------------------------------------
def test_ufunc_kernels_on_0d_inputs_pass_numpy_scalars_on():
    # A ufunc on 0-d inputs returns a NumPy scalar; the executor hands it on unchanged
    # (scalar arithmetic is about twice as fast as 0-d array arithmetic).
    plan = build(1, [(np.sin, [0], 1, 0), (np.divmod, [1, 0], 2, FLAG_MULTI_OUT)], [1, 2, 3])
    (s, q, r), _ = run(plan, [np.asarray(0.5, np.float32)], [1, 2, 3])
    assert type(s) is np.float32 and s == np.sin(np.float32(0.5))
    assert type(q) is np.float32 and type(r) is np.float32
    assert (q, r) == divmod(np.sin(np.float32(0.5)), np.float32(0.5))


def test_0d_results_through_the_session_keep_dtype_and_value():
    import flowgraph as tf

    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [])
        y = x
        for _ in range(5):
            y = tf.sin(y) + tf.constant(0.25)
        z = tf.reshape(y, [1]) * tf.ones([3])
        with tf.Session() as sess:
            got_y, got_z = sess.run([y, z], {x: 0.5})
    want = np.float32(0.5)
    for _ in range(5):
        want = np.sin(want) + np.float32(0.25)
    assert type(got_y) is np.float32 and got_y == want
    assert got_z.dtype == np.float32 and got_z.shape == (3,)
    np.testing.assert_array_equal(got_z, np.full(3, want, np.float32))


def test_kernels_run_with_floating_point_warnings_silenced():
    before = np.geterr()
    plan = build(1, [(np.log, [0], 1, 0), (lambda x: np.sqrt(x), [0], 1, 0)], [1, 2])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (a, b), _ = run(plan, [np.array([-1.0, 0.0])], [1, 2])
    assert np.isnan(a[0]) and a[1] == -np.inf and np.isnan(b[0])
    assert np.geterr() == before


# -- threads ------------------------------------------------------------------------------
def test_cheap_chain_runs_inline_on_the_calling_thread(pool):
    """  x ── n0 ── n1 ── ... ── n49   (cheap: never leaves the caller)  """
    threads = []

    def k(x):
        threads.append(threading.get_ident())
        return x + 1

    plan = build(1, [(k, [i], 1, 0) for i in range(50)], [50])
    (out,), _ = run(plan, [0], [50], pool=pool)
    assert out == 50 and set(threads) == {threading.get_ident()}


def _expensive_branches(n):
    """
        x ─┬─ e0 ─┐
           ├─ e1 ─┼─ sum     each e_i waits at a barrier of n: only passes if they overlap
           └─ ... ┘
    """
    barrier = threading.Barrier(n, timeout=5)
    threads = []

    def expensive(x):
        threads.append(threading.get_ident())
        barrier.wait()
        return x + 1

    nodes = [(expensive, [0], 1, FLAG_HAND_OFF) for _ in range(n)]
    nodes.append((lambda *xs: sum(xs), list(range(1, n + 1)), 1, 0))
    return build(1, nodes, [n + 1]), threads


def test_expensive_branches_overlap_on_pool_threads(pool):
    plan, threads = _expensive_branches(2)
    (out,), _ = run(plan, [1], [3], pool=pool)
    assert out == 4
    assert len(set(threads)) == 2 and threading.get_ident() in threads


def test_without_a_pool_everything_runs_on_the_caller():
    threads = []

    def expensive(x):
        threads.append(threading.get_ident())
        return x

    plan = build(1, [(expensive, [0], 1, FLAG_HAND_OFF)] * 3, [1, 2, 3])
    run(plan, [1], [1, 2, 3])
    assert set(threads) == {threading.get_ident()}


def test_concurrent_steps_of_one_plan(pool):
    plan = build(1, [(lambda x: (time.sleep(0.01), x * 2)[1], [0], 1, FLAG_HAND_OFF),
                     (lambda x: x + 1, [1], 1, 0)], [2])
    results = {}

    def worker(i):
        results[i] = run(plan, [i], [2], pool=pool)[0][0]

    ts = [threading.Thread(target=worker, args=(i,)) for i in range(6)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert results == {i: 2 * i + 1 for i in range(6)}


# -- async kernels ------------------------------------------------------------------------
def test_async_kernel_completes_from_another_thread(pool):
    """  x ── recv (async, done() from a timer thread) ── plus_one  """
    seen = {}

    def recv(ctx, done, x):
        def later():
            seen["thread"] = threading.get_ident()
            done(x * 3)
        threading.Timer(0.02, later).start()

    plan = build(1, [(recv, [0], 1, FLAG_ASYNC), (lambda y: y + 1, [1], 1, 0)], [2])
    for p in (None, pool):
        (out,), _ = run(plan, [2], [2], pool=p)
        assert out == 7 and seen["thread"] != threading.get_ident()


def test_async_kernel_may_complete_synchronously():
    plan = build(1, [(lambda ctx, done, x: done(x + 1), [0], 1, FLAG_ASYNC),
                     (lambda y: y * 2, [1], 1, 0)], [2])
    assert run(plan, [1], [2])[0] == [4]


def test_async_error_fails_the_step():
    def recv(ctx, done, x):
        threading.Timer(0.01, lambda: done(None, ValueError("no such tensor"))).start()

    plan = build(1, [(recv, [0], 1, FLAG_ASYNC), (lambda y: y, [1], 1, 0)], [2])
    with pytest.raises(KernelError, match="no such tensor"):
        run(plan, [1], [2])


def test_cancel_ends_a_step_waiting_on_an_async_kernel():
    plan = build(0, [(lambda ctx, done: None, [], 1, FLAG_ASYNC)], [0])  # never completes
    step = Step(plan, None, None, False)
    threading.Timer(0.05, step.cancel, args=(TimeoutError("deadline"),)).start()
    with pytest.raises(TimeoutError, match="deadline"):
        step.run([], [], [0])


# -- dead values and Merge ----------------------------------------------------------------
@pytest.mark.parametrize("take_true", [True, False])
def test_dead_values_propagate_and_merge_takes_the_live_input(take_true):
    """
        x, pred ── switch ─┬─ (false) f_branch ─┐
                           └─ (true)  t_branch ─┴─ merge
    """
    calls = []

    def switch(x, pred):
        return (DEAD, x) if pred else (x, DEAD)

    def branch(name, fn):
        def kernel(x):
            calls.append(name)
            return fn(x)
        return kernel

    def merge(*xs):
        live = [x for x in xs if x is not DEAD]
        return live[0] if live else DEAD

    nodes = [(switch, [0, 1], 2, FLAG_MULTI_OUT),           # slots 2 (false), 3 (true)
             (branch("false", lambda v: v - 1), [2], 1, 0),  # slot 4
             (branch("true", lambda v: v + 1), [3], 1, 0),   # slot 5
             (merge, [4, 5], 1, FLAG_MERGE)]                 # slot 6
    plan = build(2, nodes, [4, 5, 6])
    (f, t, m), _ = run(plan, [10, take_true], [4, 5, 6])
    if take_true:
        assert calls == ["true"] and f is DEAD and t == 11 and m == 11
    else:
        assert calls == ["false"] and t is DEAD and f == 9 and m == 9


@pytest.mark.parametrize("take_true", [True, False])
@pytest.mark.parametrize("by_control", [False, True])
def test_transfer_nodes_run_when_dead_and_get_dead(take_true, by_control):
    """A `_Send`-like node (FLAG_TRANSFER) runs even when dead, by a dead input or a
    dead control predecessor, with DEAD for its value, so that its receiver learns of it;
    it stays dead itself (its control successors are dead too)."""
    sent = []

    def switch(x, pred):
        return (DEAD, x) if pred else (x, DEAD)

    def send(value):
        sent.append(value)
        return DEAD if value is DEAD else None

    after = []
    nodes = [(switch, [0, 1], 2, FLAG_MULTI_OUT),            # slots 2 (false), 3 (true)
             (lambda v: v * 2, [3], 1, 0),                    # slot 4: the true branch
             (send, [0] if by_control else [4], 0, FLAG_TRANSFER),
             (lambda: after.append(1), [], 0, 0)]             # runs after the send
    control = [(1, 2), (2, 3)] if by_control else [(2, 3)]   # (from node, to node)
    plan = build(2, nodes, [], control=control)
    run(plan, [10, take_true], [])
    if take_true:
        assert sent == [10 if by_control else 20] and after == [1]
    else:
        assert sent == [DEAD] and after == []  # the send ran, dead; its successor is dead


def test_dead_multi_output_node_makes_every_output_dead():
    nodes = [(lambda x: x, [0], 1, 0),
             (lambda x: pytest.fail("not run on dead input"), [1], 2, FLAG_MULTI_OUT)]
    plan = build(1, nodes, [2, 3])
    assert run(plan, [DEAD], [2, 3])[0] == [DEAD, DEAD]


# -- errors -------------------------------------------------------------------------------
@pytest.mark.parametrize("use_pool", [False, True])
def test_error_in_one_branch_cancels_the_step_and_the_next_step_works(use_pool, pool):
    """
        x ─┬─ bad (raises when x < 0) ── after_bad
           └─ slow ── after_slow        (after_bad never runs once bad fails)
    """
    ran = []

    def bad(x):
        if x < 0:
            raise ValueError("negative input")
        return x

    def slow(x):
        time.sleep(0.02)
        return x

    nodes = [(bad, [0], 1, FLAG_HAND_OFF),
             (lambda y: ran.append("after_bad") or y, [1], 1, 0),
             (slow, [0], 1, FLAG_HAND_OFF),
             (lambda y: ran.append("after_slow") or y, [3], 1, 0)]
    plan = build(1, nodes, [2, 4])
    p = pool if use_pool else None
    with pytest.raises(KernelError, match=r"node 0 failed.*negative input") as info:
        run(plan, [-1], [2, 4], pool=p)
    assert isinstance(info.value.__cause__, ValueError)
    assert "after_bad" not in ran
    ran.clear()
    assert run(plan, [3], [2, 4], pool=p)[0] == [3, 3]
    assert sorted(ran) == ["after_bad", "after_slow"]


def test_error_describer_failure_keeps_an_error():
    def broken(node, exc, args):
        raise LookupError("describer broke")

    plan = Plan(1, [lambda: 1 / 0], [[]], [0], [1], [0], [1], [None], ["n0"], broken)
    plan.finish()
    with pytest.raises(LookupError, match="describer broke"):
        Step(plan, None, None, False).run([], [], [0])


# -- tracing ------------------------------------------------------------------------------
def test_trace_records_each_node_with_bytes():
    plan = build(1, [(lambda x: x * 2, [0], 1, 0), (lambda y: y[:2].copy(), [1], 1, 0)], [2])
    _, step = run(plan, [np.ones(8)], [2], tracing=True)
    assert [t[0] for t in step.trace] == [0, 1]
    _, t0, t1, tid, out_bytes, outputs = step.trace[0]
    assert t1 >= t0 and tid == threading.get_ident() and out_bytes == 64
    assert outputs == [(np.dtype("float64"), (8,), 64)]  # per output: dtype, shape, bytes
    assert step.trace[1][4] == 16 and step.trace[1][5] == [(np.dtype("float64"), (2,), 16)]
