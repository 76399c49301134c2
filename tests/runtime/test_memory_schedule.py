"""The memory schedule (`flowgraph/runtime/memory_schedule.py`): peak live bytes per
device stay within `memory_budget_bytes`, results equal the unbounded run's."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import flowgraph as tf
from flowgraph.framework import errors
from flowgraph.runtime.memory_schedule import default_budgets, device_budgets

MiB = 1 << 20
CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"


def _run(fetch, feed, budget=0, config=None):
    """(value, peak bytes, compiled plan) of one traced run."""
    with tf.Session(config=config) as sess:
        md = tf.RunMetadata()
        opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE, memory_budget_bytes=budget)
        value = sess.run(fetch, feed, options=opts, run_metadata=md)
        (cp,) = set(sess._plans.values())
        return value, md.step_stats.peak_bytes(), cp


def _late_consumer(n=65536, branches=32, chain=300):
    """The issue's graph, scaled: `branches` temporaries of 16 * n float32 (4 MiB) whose
    consumers also need the end of a `chain` of small ops."""
    x = tf.placeholder(tf.float32, [n])
    y = tf.reduce_sum(x[:16])
    for _ in range(chain):
        y = tf.sin(y) + 1.0
    outs = [tf.reduce_sum(tf.tile(x + float(i), [16]) * y) for i in range(branches)]
    feed = {x: np.random.RandomState(0).rand(n).astype(np.float32)}
    return tf.add_n(outs), feed


def test_late_consumer_stays_within_budget():
    with tf.Graph().as_default():
        total, feed = _late_consumer()
        free, free_peak, cp = _run(total, feed)
        assert cp.memory_schedule is None  # no budget: the pass does not run
        assert free_peak > 64 * MiB  # the naive order holds most temporaries
        budget = 13 * MiB  # about three temporaries
        bounded, peak, cp = _run(total, feed, budget)
        assert cp.memory_schedule.edges
        assert peak <= budget
        assert bounded == free


def test_config_budget_applies_to_every_run():
    with tf.Graph().as_default():
        total, feed = _late_consumer(branches=8, chain=50)
        free, _, _ = _run(total, feed)
        config = tf.ConfigProto(memory_budget_bytes={"CPU": 10 * MiB})
        value, peak, cp = _run(total, feed, config=config)
        assert cp.memory_schedule.budgets == {CPU0: 10 * MiB}
        assert peak <= 10 * MiB and value == free


def test_run_options_budget_gets_its_own_plan():
    with tf.Graph().as_default():
        total, feed = _late_consumer(branches=8, chain=50)
        with tf.Session() as sess:
            free = sess.run(total, feed)
            opts = tf.RunOptions(memory_budget_bytes=10 * MiB)
            assert sess.run(total, feed, options=opts) == free
            schedules = {id(cp): cp.memory_schedule for cp in sess._plans.values()}
            assert len(schedules) == 2 and None in schedules.values()


def test_sixty_four_branches_with_two_temporaries():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [4096])
        y = tf.reduce_sum(x)
        for _ in range(10):  # the consumers wait a little: naively, all 64 temporaries
            y = tf.sin(y) + 1.0  # are made first
        outs = [tf.reduce_sum(tf.tile(x * float(i), [64]) * y) for i in range(64)]  # 1 MiB
        total = tf.add_n(outs)
        feed = {x: np.linspace(0, 1, 4096, dtype=np.float32)}
        free, free_peak, _ = _run(total, feed)
        budget = 3 * MiB + 64 * 1024  # a product reads one temporary and makes one
        bounded, peak, _ = _run(total, feed, budget)
        assert peak <= budget < free_peak
        assert bounded == free
        wide, wide_peak, _ = _run(total, feed, 8 * MiB + 64 * 1024)
        assert wide == free and wide_peak <= 8 * MiB + 64 * 1024


def test_infeasible_budget_names_the_node_before_running():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [65536])
        big = tf.tile(x, [16], name="big_tile")  # 256 KiB and [16] in, 4 MiB out
        with tf.Session() as sess:
            opts = tf.RunOptions(memory_budget_bytes=2 * MiB)
            with pytest.raises(errors.ResourceExhaustedError,
                               match=r"big_tile.*Tile.*4456452 bytes.*2097152"):
                sess.run(big, {x: np.zeros(65536, np.float32)}, options=opts)


def test_two_devices_with_transfers():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [16384])
        y = tf.reduce_sum(x)
        for _ in range(10):
            y = tf.sin(y) + 1.0
        with tf.device("/device:CPU:1"):
            parts = [tf.tile(x + float(i), [8]) * y for i in range(8)]  # 512 KiB each
        outs = [tf.reduce_sum(p) for p in parts]  # on CPU:0, across a _Send/_Recv
        total = tf.add_n(outs)
        feed = {x: np.ones(16384, np.float32)}
        config = tf.ConfigProto(device_count={"CPU": 2})
        free, free_peak, _ = _run(total, feed, config=config)
        value, peak, cp = _run(total, feed, 2 * MiB, config=config)
        assert value == free
        assert set(cp.memory_schedule.budgets) == {d.name for d in cp.devices}
        assert peak <= 2 * MiB < free_peak


def test_loops_are_left_alone():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [1024])
        big = tf.tile(x, [64])
        _, acc = tf.while_loop(lambda i, a: i < 5, lambda i, a: (i + 1, a + big * 0.5),
                               [tf.constant(0), tf.zeros([65536])])
        out = tf.reduce_sum(acc) + tf.reduce_sum(tf.tile(x, [32]))
        feed = {x: np.ones(1024, np.float32)}
        free, _, _ = _run(out, feed)
        value, _, cp = _run(out, feed, 2 * MiB)
        assert value == free
        edges = cp.memory_schedule.edges
        assert edges  # the tiles outside the loop are still ordered
        assert not [e for e in edges for i in e if cp.nodes[i].name.startswith("while")]


def test_fed_shapes_size_unknown_dims_and_specialize_the_plan():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None])  # the late-consumer graph, unsized
        y = tf.reduce_sum(x[:16])
        for _ in range(100):
            y = tf.sin(y) + 1.0
        total = tf.add_n([tf.reduce_sum(tf.tile(x + float(i), [16]) * y) for i in range(16)])
        feeds = [{x: np.random.RandomState(k).rand(n).astype(np.float32)}
                 for k, n in ((0, 65536), (1, 32768))]
        with tf.Session() as sess:
            free = [sess.run(total, f) for f in feeds]
            assert len({id(cp) for cp in sess._plans.values()}) == 1  # no shapes in keys
        with tf.Session(config=tf.ConfigProto(memory_budget_bytes=13 * MiB)) as sess:
            for f, want in zip(feeds, free):
                md = tf.RunMetadata()
                opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
                assert sess.run(total, f, options=opts, run_metadata=md) == want
                assert md.step_stats.peak_bytes() <= 13 * MiB
            plans = {id(cp): cp for cp in sess._plans.values()}.values()
            assert len(plans) == 2  # one per fed-shape signature
            for cp in plans:
                assert not cp.memory_schedule.unknown_sizes and cp.memory_schedule.edges


def test_sizes_shapes_cannot_tell_come_from_an_earlier_run():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [1024])
        reps = tf.placeholder(tf.int32, [1])
        t = tf.tile(x, reps, name="unsized")  # its size depends on a fed *value*
        out = tf.reduce_sum(t * 2.0)
        feed = {x: np.ones(1024, np.float32), reps: [64]}
        with tf.Session(config=tf.ConfigProto(memory_budget_bytes=4 * MiB)) as sess:
            assert sess.run(out, feed) == 131072.0
            (first,) = {id(cp): cp for cp in sess._plans.values()}.values()
            assert "unsized" in first.memory_schedule.unknown_sizes
            assert first.measured_sizes["unsized"] == (262144, 1)
            assert sess.run(out, feed) == 131072.0  # compiled again with the measured size
            (second,) = {id(cp): cp for cp in sess._plans.values()}.values()
            assert second is not first and not second.memory_schedule.unknown_sizes
            assert not second.memory_schedule.needs_measure
            assert second.memory_schedule.sequential_peak[CPU0] >= 2 * 262144


def test_budget_defaults():
    class Backend:
        host_memory = False

    class Device:
        def __init__(self, name, limit, backend=None):
            self.name, self.memory_limit = name, limit
            self.backend = backend or Backend()

    gpu = "/job:localhost/replica:0/task:0/device:GPU:0"
    cpu = Device(CPU0, None, tf.Session().devices[0].backend)
    assert default_budgets([cpu, Device(gpu, 1 << 30)]) == {gpu: 1 << 30}
    assert default_budgets([Device(gpu, None)]) == {}  # no known limit: none
    assert device_budgets(0, [CPU0, gpu], {gpu: 5}) == {gpu: 5}
    assert device_budgets({"CPU": 7}, [CPU0, gpu], {gpu: 5}) == {CPU0: 7, gpu: 5}
    assert device_budgets({"GPU": 3}, [gpu], {gpu: 5}) == {gpu: 3}
    with tf.Graph().as_default():  # the CPU: unlimited, the pass does not run
        _, _, cp = _run(tf.reduce_sum(tf.ones([4])), None)
        assert cp.memory_schedule is None


def test_step_stats_report_the_largest_tensors_at_the_peak():
    with tf.Graph().as_default():
        total, feed = _late_consumer(branches=8, chain=50)
        with tf.Session() as sess:
            md = tf.RunMetadata()
            opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE,
                                 memory_budget_bytes=10 * MiB)
            sess.run(total, feed, options=opts, run_metadata=md)
        (dev,) = md.step_stats.dev_stats
        assert dev.memory_budget_bytes == 10 * MiB
        top = dev.peak_live_tensors
        assert 1 <= len(top) <= 8
        assert [t.bytes for t in top] == sorted((t.bytes for t in top), reverse=True)
        assert top[0].bytes == 4 * MiB and top[0].name.endswith(":0")
        assert top[0].producer.endswith("(Tile)") or top[0].producer.endswith("(Mul)")
        assert sum(t.bytes for t in top) <= dev.peak_bytes
        assert any(t.producer == "feed" and t.bytes == 256 * 1024 for t in top)
        assert dev.pool_bytes >= 0


def _matmul_chain(n=12):
    x = tf.placeholder(tf.float32, [256, 256])
    w = tf.constant(np.eye(256, dtype=np.float32) * 0.5)
    y = x
    for _ in range(n):
        y = tf.matmul(y, w)  # 256 KiB each: pooled (`_buffers`)
    return tf.reduce_sum(y), {x: np.ones((256, 256), np.float32)}


def test_pool_buffers_return_at_last_consumer_and_count_against_the_budget():
    from flowgraph.backends.cpu import _buffers

    with tf.Graph().as_default():
        out, feed = _matmul_chain()
        _buffers.clear()
        with tf.Session() as sess:
            free = sess.run(out, feed)
        # each product's buffer goes back when the next product (its last reader) is
        # done: a chain of 12 needs two or three, not twelve
        assert _buffers.held_bytes() <= 3 * 256 * 1024
        budget = 4 * MiB
        _buffers.clear()
        value, peak, cp = _run(out, feed, budget)
        assert value == free
        cap = cp.memory_schedule.pool_cap
        # the pool gets at least 1/8 of the budget, and what the chain can never use
        assert cap == cp.memory_schedule.pool_allowance[CPU0] > budget // 8
        assert _buffers.held_bytes() <= cap
        assert peak <= budget - cap  # live tensors plus the pool stay in the budget
        with tf.Session() as sess:
            md = tf.RunMetadata()
            opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE,
                                 memory_budget_bytes=budget)
            sess.run(out, feed, options=opts, run_metadata=md)
            (dev,) = md.step_stats.dev_stats
            assert dev.pool_bytes == _buffers.held_bytes() <= cap
            assert dev.peak_bytes + dev.pool_bytes <= budget


def test_long_loop_under_a_budget_finishes_with_fewer_iterations_in_flight():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [65536])  # 256 KiB

        def body(i, a):
            t = tf.tile(x * tf.cast(i, tf.float32), [4])  # 1 MiB made every iteration
            return i + 1, a + tf.reduce_sum(t)

        _, acc = tf.while_loop(lambda i, a: i < 1000, body,
                               [tf.constant(0), tf.constant(0.0)], parallel_iterations=32)
        feed = {x: np.full(65536, 1 / 65536, np.float32)}
        free, _, _ = _run(acc, feed)
        value, _, cp = _run(acc, feed, 6 * MiB)
        assert value == free
        mem = cp.memory_schedule
        assert 1 <= mem.loop_parallel["while"] < 32
        assert mem.loop_bytes[CPU0] <= 6 * MiB - mem.pool_allowance[CPU0]


def test_stacks_kept_by_loop_gradients_are_counted():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [16384])  # 64 KiB
        w = tf.Variable(np.full(16384, 0.9, np.float32))
        _, y = tf.while_loop(lambda i, a: i < 20, lambda i, a: (i + 1, tf.sin(a) * w),
                             [tf.constant(0), x])
        grad = tf.gradients(tf.reduce_sum(y), w)[0]
        feed = {x: np.linspace(0, 1, 16384, dtype=np.float32)}
        results = []
        for budget in (0, 64 * MiB):
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                opts = tf.RunOptions(memory_budget_bytes=budget)
                results.append([sess.run(grad, feed, options=opts) for _ in range(2)])
                plans = [cp for cp in sess._plans.values() if cp.memory_schedule]
        np.testing.assert_array_equal(results[0][0], results[1][0])
        np.testing.assert_array_equal(results[1][0], results[1][1])
        stacks = {cp.memory_schedule.stack_bytes.get(CPU0, 0) for cp in plans}
        # measured on the first run: 20 iterations push their 64 KiB values
        assert max(stacks) >= 20 * 64 * 1024


def test_training_step_under_a_budget_matches():
    def losses(budget):
        with tf.Graph().as_default():
            tf.set_random_seed(3)
            x = tf.placeholder(tf.float32, [64, 96])
            h = tf.layers.dense(x, 128, activation=tf.nn.relu)
            loss = tf.reduce_mean(tf.square(tf.layers.dense(h, 4)))
            train = tf.train.AdamOptimizer(1e-2).minimize(loss)
            feed = {x: np.random.RandomState(0).rand(64, 96).astype(np.float32)}
            with tf.Session(config=tf.ConfigProto(memory_budget_bytes=budget)) as sess:
                sess.run(tf.global_variables_initializer())
                out = [sess.run([train, loss], feed)[1] for _ in range(2)]
                md = tf.RunMetadata()
                opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
                out.append(sess.run([train, loss], feed, options=opts, run_metadata=md)[1])
                edges = sum(len(cp.memory_schedule.edges) for cp in sess._plans.values()
                            if cp.memory_schedule is not None)
                return out, edges, md.step_stats.peak_bytes()

    bounded, edges, peak = losses(200 * 1024)
    assert edges and peak <= 200 * 1024
    assert bounded == losses(0)[0]


def test_device_budgets_forms():
    assert device_budgets(0, [CPU0]) == {}
    assert device_budgets(5, [CPU0]) == {CPU0: 5}
    assert device_budgets({"/device:CPU:0": 7}, [CPU0]) == {CPU0: 7}
    assert device_budgets({CPU0: 9, "CPU": 1}, [CPU0]) == {CPU0: 9}
    with pytest.raises(ValueError, match="non-negative int"):
        device_budgets(-1, [CPU0])


@st.composite
def _dags(draw):
    """A random DAG: per node its inputs (earlier nodes) and its size in float32s."""
    n = draw(st.integers(2, 14))
    nodes = []
    for i in range(n):
        k = draw(st.integers(1, min(3, i + 1)))
        ins = draw(st.lists(st.integers(-1, i - 1), min_size=k, max_size=k, unique=True))
        nodes.append((ins, draw(st.sampled_from([16, 1024, 8192, 32768]))))
    return nodes, draw(st.floats(-0.2, 1.0))


def _build(nodes):
    x = tf.placeholder(tf.float32, [256])
    vals = []
    for i, (ins, size) in enumerate(nodes):
        total = tf.add_n([tf.reduce_sum(x if j < 0 else vals[j]) for j in ins])
        vals.append(tf.tile(tf.reshape(total * float(i % 3 + 1) * 0.25, [1]), [size]))
    used = {j for ins, _ in nodes for j in ins}
    sinks = [tf.reduce_sum(v) for i, v in enumerate(vals) if i not in used]
    return tf.add_n(sinks) if len(sinks) > 1 else sinks[0], x


@settings(max_examples=40, deadline=None)
@given(_dags())
def test_random_dags_never_deadlock_and_match(dag):
    nodes, fraction = dag
    with tf.Graph().as_default():
        out, x = _build(nodes)
        feed = {x: np.arange(256, dtype=np.float32) / 256}
        free, free_peak, _ = _run(out, feed)
        _, _, roomy = _run(out, feed, 1 << 50)  # no edges; tells the sequential peak
        sequential = roomy.memory_schedule.sequential_peak[CPU0]
        assert not roomy.memory_schedule.edges
        budget = max(1, int(sequential + fraction * (max(free_peak, sequential) - sequential)))
        try:
            value, peak, cp = _run(out, feed, budget)
        except errors.ResourceExhaustedError:
            return  # one node needs more than the budget
        assert value == free
        assert peak <= max(budget, sequential)
        if sequential + budget // 8 <= budget:  # the schedule's part holds the sequential
            # peak: live bytes stay within what the buffer pool was not given
            assert peak + cp.memory_schedule.pool_allowance[CPU0] <= budget


def _digits_accuracy(tmp_path, budget):
    """Train the digits MLP with an Estimator (300 steps) and return its test accuracy."""
    from flowgraph.datasets import load_digits, train_test_split
    from flowgraph.estimators import Estimator, EstimatorSpec, ModeKeys, RunConfig
    from flowgraph.estimators.inputs import numpy_input_fn

    def model_fn(features, labels, mode):
        h = tf.layers.dense(features["pixels"], 64, activation=tf.nn.relu)
        logits = tf.layers.dense(h, 10)
        classes = tf.argmax(logits, 1)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=labels, logits=logits))
        train_op = tf.train.GradientDescentOptimizer(0.3).minimize(
            loss, global_step=tf.train.get_global_step()) if mode == ModeKeys.TRAIN else None
        return EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops={
            "accuracy": tf.metrics.accuracy(labels=labels, predictions=classes)})

    x, y = load_digits()
    x, xt, y, yt = train_test_split((x / 16.0).astype(np.float32), y, test_fraction=0.25,
                                    seed=0)
    config = RunConfig(model_dir=str(tmp_path / str(budget)), tf_random_seed=3,
                       session_config=tf.ConfigProto(memory_budget_bytes=budget),
                       log_step_count_steps=1000)
    est = Estimator(model_fn, config=config)
    est.train(numpy_input_fn({"pixels": x}, y, batch_size=32, num_epochs=None, shuffle=False),
              max_steps=300)
    return est.evaluate(numpy_input_fn({"pixels": xt}, yt, batch_size=128,
                                       shuffle=False))["accuracy"]


def test_estimator_trains_the_digits_model_to_the_same_accuracy_under_a_budget(tmp_path):
    free = _digits_accuracy(tmp_path, 0)
    assert free >= 0.9
    assert _digits_accuracy(tmp_path, 100 * 1024) == free  # edges in the training plan


def _late_transfers(budget, source="/cpu:1", target="/cpu:0", chain=100):
    """Eight 4 MiB values made early on `source` and consumed on `target` at the end of a
    `chain` there: (value, `target`'s peak bytes, plan). `budget`: RunOptions' spec."""
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [65536])
        with tf.device(target):
            y = tf.reduce_sum(x[:16])
            for _ in range(chain):
                y = tf.sin(y) + 1.0
        with tf.device(source):
            big = [tf.tile(x + float(i), [16]) for i in range(8)]
        with tf.device(target):
            total = tf.add_n([tf.reduce_sum(b * y) for b in big])
        feed = {x: np.random.RandomState(0).rand(65536).astype(np.float32)}
        config = tf.ConfigProto(device_count={"CPU": 2}, allow_soft_placement=True)
        with tf.Session(config=config) as sess:
            md = tf.RunMetadata()
            opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE,
                                 memory_budget_bytes=budget)
            value = sess.run(total, feed, options=opts, run_metadata=md)
            (cp,) = set(sess._plans.values())
            device = next(d.name for d in cp.devices if d.name.endswith(target[1:].upper()))
            peak = {d.device: d.peak_bytes for d in md.step_stats.dev_stats}[device]
            return value, peak, cp


def _recv_gates(cp) -> dict[str, set[str]]:
    """Per `_Recv` of a Tile the nodes the memory schedule made it wait for."""
    names = [n.name for n in cp.nodes]
    gates: dict[str, set[str]] = {}
    for a, b in cp.memory_schedule.edges:
        if names[b].startswith("_recv_Tile"):
            gates.setdefault(names[b], set()).add(names[a])
    return gates


def test_a_transfer_to_the_cpu_counts_from_its_send(caplog):
    """The eight values wait in the rendezvous from their early `_Send` on: CPU:0, which
    receives them, counts them from there (delaying the `_Recv` would save nothing)."""
    free, free_peak, _ = _late_transfers(0)
    assert free_peak >= 28 * MiB  # unbounded, every transfer arrives before the chain ends
    with caplog.at_level("WARNING", logger="flowgraph.runtime.memory_schedule"):
        value, _, cp = _late_transfers(14 * MiB)
    assert value == free
    mem = cp.memory_schedule
    assert mem.sequential_peak[CPU0] >= 32 * MiB  # not the 4-8 MiB the Recvs alone hold
    assert "below the peak of the most frugal order" in caplog.text
    assert not _recv_gates(cp)  # a CPU receiver's Recvs are never gated


def test_a_transfer_counts_from_the_last_node_its_send_waits_for(caplog):
    """CPU:1's `_Send` waits for the end of CPU:0's chain, so its 8 MiB value cannot be
    in the rendezvous before: CPU:0 counts it from there, after its own early 8 MiB
    temporary has gone, and both fit a 12 MiB budget one after the other."""
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [65536])
        y = tf.reduce_sum(x[:16]) + tf.reduce_sum(tf.tile(x, [32]))  # 8 MiB, early
        for _ in range(20):
            y = tf.sin(y) + 1.0
        with tf.device("/cpu:1"):
            big = tf.tile(x + y, [32])  # 8 MiB, sent once the chain has ended
        total = tf.reduce_sum(big)
        feed = {x: np.full(65536, 0.5, np.float32)}
        config = tf.ConfigProto(device_count={"CPU": 2})
        free, _, _ = _run(total, feed, config=config)
        with caplog.at_level("WARNING", logger="flowgraph.runtime.memory_schedule"):
            value, peak, cp = _run(total, feed, {"/device:CPU:0": 12 * MiB}, config=config)
        assert value == free and peak <= 12 * MiB
        # counted from the step's start it would overlap the temporary: 16 MiB
        assert 8 * MiB < cp.memory_schedule.sequential_peak[CPU0] < 9 * MiB
        assert "below the peak" not in caplog.text


def _gpu_or_skip():
    from tests.backends.opencl_support import opencl_devices

    opencl_devices()


def test_recvs_on_a_device_wait_for_their_consumers_when_memory_is_tight():
    """ALAP (whitepaper 5.2) where it saves memory: a device with memory of its own
    receives the values only when their consumers can run; meanwhile they wait in host
    memory, which the sending CPU counts until the end of the step."""
    _gpu_or_skip()
    free, free_peak, _ = _late_transfers(0, "/cpu:0", "/gpu:0", chain=30)
    value, peak, cp = _late_transfers({"GPU": 14 * MiB, "CPU": 64 * MiB}, "/cpu:0", "/gpu:0",
                                      chain=30)
    np.testing.assert_allclose(value, free, rtol=1e-5)
    assert peak <= 14 * MiB < free_peak
    gates = _recv_gates(cp)
    # ALAP: most transfers wait for the chain's end, the other input of their consumer;
    # ASAP: the first one fits the budget from the start and is left ungated
    assert len([r for r, srcs in gates.items() if "add_29" in srcs]) >= 5
    assert not any(r.startswith("_recv_Tile:0_") for r in gates)
    assert cp.memory_schedule.sequential_peak[CPU0] >= 32 * MiB  # the waits, on the CPU


def test_a_value_sent_to_a_device_counts_on_the_cpu_until_the_device_took_it(caplog):
    """CPU:0 sends 8 MiB to the device and later reads the device's sum of it: the value
    waits in the CPU's memory at most until then, so the CPU's second 8 MiB temporary,
    made after, does not overlap it."""
    _gpu_or_skip()
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [65536])
        with tf.device("/cpu:0"):
            big = tf.tile(x, [32])  # 8 MiB, read on the device
        with tf.device("/gpu:0"):
            s = tf.reduce_sum(big)
        with tf.device("/cpu:0"):
            out = tf.reduce_sum(tf.tile(x + tf.sin(s), [32]))  # 8 MiB, after the sum
        feed = {x: np.full(65536, 0.25, np.float32)}
        config = tf.ConfigProto(allow_soft_placement=True)
        free, _, _ = _run(out, feed, config=config)
        with caplog.at_level("WARNING", logger="flowgraph.runtime.memory_schedule"):
            value, _, cp = _run(out, feed, {"CPU": 12 * MiB}, config=config)
    np.testing.assert_allclose(value, free, rtol=1e-5)
    assert 8 * MiB < cp.memory_schedule.sequential_peak[CPU0] < 9 * MiB
    assert "below the peak" not in caplog.text


def test_recvs_on_a_device_run_as_early_as_possible_when_memory_is_plentiful():
    _gpu_or_skip()
    free, _, _ = _late_transfers(0, "/cpu:0", "/gpu:0", chain=30)
    value, peak, cp = _late_transfers({"GPU": 64 * MiB}, "/cpu:0", "/gpu:0", chain=30)
    names = [cp.nodes[b].name for _, b in cp.memory_schedule.edges]
    np.testing.assert_allclose(value, free, rtol=1e-5)
    assert peak <= 64 * MiB
    assert not any(n.startswith("_recv_") for n in names)


def _deep_mlp_losses(budget, steps=3):
    """Losses of `steps` Adam steps of a 12-layer, 512-wide MLP at batch 256, and the last
    step's live peak and pool bytes on CPU:0."""
    with tf.Graph().as_default():
        tf.set_random_seed(5)
        x = tf.placeholder(tf.float32, [256, 512])
        h = x
        for _ in range(12):
            h = tf.layers.dense(h, 512, activation=tf.nn.relu)
        loss = tf.reduce_mean(tf.square(tf.layers.dense(h, 1)))
        train = tf.train.AdamOptimizer(1e-3).minimize(loss)
        feed = {x: np.random.RandomState(0).rand(256, 512).astype(np.float32)}
        with tf.Session(config=tf.ConfigProto(memory_budget_bytes=budget)) as sess:
            sess.run(tf.global_variables_initializer())
            out = [sess.run([train, loss], feed)[1] for _ in range(steps - 1)]
            md = tf.RunMetadata()
            opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
            out.append(sess.run([train, loss], feed, options=opts, run_metadata=md)[1])
            (dev,) = md.step_stats.dev_stats
            return out, dev.peak_bytes, dev.pool_bytes


def test_deep_mlp_activations_stay_within_the_budget():
    free, free_peak, free_pool = _deep_mlp_losses(0)
    # the backward pass needs every layer's activations (about 19 MiB); unbounded, the
    # buffer pool keeps another 12 MiB on top
    budget = 22 * MiB
    assert free_peak + free_pool > budget
    bounded, peak, pool = _deep_mlp_losses(budget)
    assert peak + pool <= budget
    assert bounded == free


def test_a_send_and_its_recv_pair_up_whatever_the_reader_is_called():
    """The schedule pairs each `_Send` with its `_Recv` by name; a pair made for one
    reader carries that reader's name, which may itself hold ``_to_`` or ``_on_``."""
    from types import SimpleNamespace

    from flowgraph.runtime import memory_schedule, partition
    from flowgraph.runtime.node_table import NodeTable

    def device(name, short):
        return SimpleNamespace(name=name, short_name=short, backend=None)

    cpu, gpu = device("/device:CPU:0", "CPU0"), device("/device:GPU:0", "GPU0")
    table = NodeTable()
    slot = table.new_slot()
    for reader in (None, "add_on_top", "copy_to_gpu/read"):
        after = None if reader is None else []
        partition._add_pair(table, slot, "w_on_a_to_b:0", cpu, gpu, {}, deref=reader,
                            after=after)
    keys = [memory_schedule._pair_key(n) for n in table.nodes]
    assert keys[0::2] == keys[1::2]  # each _Send with the _Recv made with it
    assert len(set(keys)) == 3  # and with no other
