"""TF1 programs about ``tf.Session`` itself, sweep 14 (area ``session``), run under
TensorFlow 2.15 and flowgraph with the tf-oracle; TensorFlow's printed values are inline.

The programs (2016-2019 style): feeding a model in stages with
``partial_run_setup``/``partial_run`` (fetching twice, feeding again, a feed or fetch not
declared, an unknown handle, use after ``close``); a training loop through
``make_callable`` (``feed_list`` by tensor and by name, namedtuple and nested dict
fetches, ``accept_options`` with ``RunMetadata``); nested fetch structures
(namedtuples, dicts in lists, ``OrderedDict``, ``defaultdict``, tuples of ops, the same
tensor three times, names) and feeds of every kind (a non-placeholder, a variable,
Python scalars and nested lists, ``SparseTensorValue`` and tuples, bad keys and values);
``ConfigProto`` options with ``operation_timeout_in_ms`` and
``RunOptions(timeout_in_ms=...)`` on a blocked dequeue, ``options``/``run_metadata``
passed positionally, step stats and the Chrome trace of ``timeline.Timeline``; the
session life cycle (default sessions, ``as_default``, ``eval``/``run`` without one,
``close``, another graph's tensors, ``InteractiveSession``, ``finalize``,
``prevent_fetching``/``prevent_feeding``); ``SingularMonitoredSession`` and
``MonitoredSession`` with ``run_step_fn`` (``run_with_hooks``, ``request_stop``,
a hook's ``before_run``/``after_run``); an MLP traced at one step, its run metadata
written to a ``FileWriter`` and its timeline to a file; attrs-class fetches, fed values
fetched back and feed conversions.

Left as is: TensorFlow places the whole graph when a session first runs, so an op
pinned to ``/gpu:0`` fails every run of a session without soft placement on a machine
without a GPU; flowgraph offers an OpenCL ``GPU:0`` (PoCL) here and places only the
ops a run needs. ``RunMetadata.cost_graph`` is None (TensorFlow: an empty
``CostGraphDef``). Printed ``ConfigProto``/``RunOptions`` enums are numbers
(``global_jit_level: 1``, ``trace_level: 1``; TensorFlow ``ON_1``, ``SOFTWARE_TRACE``), and
an enum given by name (``RunOptions(trace_level="FULL_TRACE")``) is refused.
``log_device_placement`` logs the ops a run places (after folding), TensorFlow every op of
the graph. A fetched fed string comes back as the bytes the feed was
converted to (TensorFlow returns the ``str`` given). Error messages differ in wording
but not in type (``Must run 'setup' before performing partial runs!``, ``Timed out
waiting for notification``).

Classes of discrepancy found and fixed (one focused test each below):

* ``InteractiveSession`` did not warn when another one was still open.
* ``Session.reset("")`` raised; TensorFlow returns None and closes every in-process
  session, whose next run raises ``CancelledError: Session has been closed.``
* ``make_callable`` without a ``feed_list`` checks the fetches when it is called
  (TypeError/ValueError), its function takes no feeds and, only with
  ``accept_options``, ``options``/``run_metadata``, and raises ``CancelledError`` once
  the session is closed; with a ``feed_list`` (a list or tuple, else TypeError) it is
  ``run`` (RuntimeError after ``close``). flowgraph refused any ``make_callable`` on a
  closed session and checked nothing up front.
* ``print(config)`` showed a Python repr; TensorFlow prints protobuf's text format (all
  of ``ConfigProto``, ``RunOptions``, ``GPUOptions``, ``RunMetadata``...).
* A node fused from one op was labelled ``sq = Fused(sq:Square)`` in its step stats, so
  ``Timeline`` reported its input as ``sq:Square``; it is labelled as the op
  (``sq = Square(x)``).
* attrs classes in fetches (TensorFlow's ``_AttrsFetchMapper``) were refused.
* A fetched tensor that is also fed gives back the fed value as converted (a 0-d array
  for a fed scalar), not the executor's NumPy scalar.
* An unknown field in a ``ConfigProto``/``RunOptions``/... constructor was a TypeError;
  protobuf raises ``ValueError: Protocol message ConfigProto has no "bogus" field.``
* ``list_devices()``/``device_lib.list_local_devices()`` reported a CPU's
  ``memory_limit`` as 0; TensorFlow reports 268435456.
"""

from __future__ import annotations

import collections
import json
import os
import time
import warnings
import weakref

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.python.client import timeline
from flowgraph.runtime import session as session_module


@pytest.fixture(autouse=True)
def _fresh_graph():
    with tf.Graph().as_default():
        yield


def _close(got, want):
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=0, atol=1.5e-5)


# -- programs ---------------------------------------------------------------------------


def test_partial_run_in_stages():
    tf.set_random_seed(1)
    with tf.variable_scope("stage"):
        a = tf.placeholder(tf.float32, [None, 3], name="a")
        b = tf.placeholder(tf.float32, [], name="b")
        c = tf.placeholder(tf.float32, name="c")
        w = tf.get_variable("w", [3, 2], initializer=tf.random_normal_initializer(seed=3))
        r1 = tf.add(tf.matmul(a, w, name="h"), b, name="r1")
        r2 = tf.multiply(r1, c, name="r2")
        r3 = tf.reduce_sum(r2, name="r3")
    assert (r1.name, r2.name, r3.name) == ("stage/r1:0", "stage/r2:0", "stage/r3:0")
    assert r1.shape.as_list() == [None, 2]
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    h = sess.partial_run_setup([r1, r2, r3], [a, b, c])
    assert isinstance(h, str)
    v1 = sess.partial_run(h, r1, feed_dict={a: x, b: 1.5})
    assert type(v1) is np.ndarray and v1.dtype == np.float32
    _close(v1, [[3.74357, 2.27241], [6.29225, 4.246]])
    v2, v3 = sess.partial_run(h, [r2, r3], feed_dict={c: 2.0})
    _close(v2, [[7.48714, 4.54483], [12.5845, 8.49201]])
    assert round(float(v3), 4) == 33.1085
    for bad in (lambda: sess.partial_run(h, r1),                      # fetched twice
                lambda: sess.partial_run(h, r2, feed_dict={c: 3.0}),  # fed again
                lambda: sess.partial_run("nope", r1, feed_dict={a: x, b: 0.0})):
        with pytest.raises(tf.errors.InvalidArgumentError):
            bad()
    h2 = sess.partial_run_setup([r1, r2], [a, b, c])
    with pytest.raises(tf.errors.InvalidArgumentError, match="can't be computed"):
        sess.partial_run(h2, r2, feed_dict={a: x})
    h3 = sess.partial_run_setup([r1], [a, b])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="feed stage/c:0 was not specified in partial_run_setup"):
        sess.partial_run(h3, r1, feed_dict={a: x, b: 1.0, c: 2.0})
    h4 = sess.partial_run_setup([r1], [a, b])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="fetch stage/r2:0 was not specified in partial_run_setup"):
        sess.partial_run(h4, r2, feed_dict={a: x, b: 1.0})
    h5 = sess.partial_run_setup([r1, r2], [a, b, c])
    got = sess.partial_run(h5, {"x": r1}, feed_dict={a: x, b: 0.0})
    _close(got["x"], [[2.24357, 0.77241], [4.79225, 2.746]])
    sess.close()
    with pytest.raises(RuntimeError, match=r"Attempted to use a closed Session."):
        sess.partial_run_setup([r1], [a, b])


def test_make_callable_training_loop():
    tf.set_random_seed(7)
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    y = tf.placeholder(tf.int32, [None], name="y")
    with tf.variable_scope("model"):
        logits = tf.layers.dense(x, 3, name="fc")
    loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
    gs = tf.train.get_or_create_global_step()
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=gs)
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    rng = np.random.RandomState(0)
    X = rng.randn(8, 4).astype(np.float32)
    Y = rng.randint(0, 3, 8).astype(np.int32)
    step = sess.make_callable([loss, train], feed_list=[x, y])
    losses = []
    for _ in range(3):
        value, none = step(X, Y)
        assert none is None and type(value) is np.float32
        losses.append(round(float(value), 5))
    assert losses == [1.47101, 1.36664, 1.2771]
    Pair = collections.namedtuple("Pair", ["loss", "step"])
    r = sess.make_callable(Pair(loss, gs), feed_list=[x, y])(X, Y)
    assert type(r) is Pair and round(float(r.loss), 5) == 1.20091 and r.step == 3
    assert type(r.step) is np.int64
    r = sess.make_callable({"l": loss, "nested": [gs, {"t": train}]}, feed_list=[x, y])(X, Y)
    assert sorted(r) == ["l", "nested"] and r["nested"][0] == 4 and r["nested"][1] == {"t": None}
    assert sess.make_callable(gs)() == 4
    assert sess.make_callable(train, feed_list=[x, y])(X, Y) is None
    assert round(float(sess.make_callable([loss], feed_list=[x.name, "y:0"])(X, Y)[0]), 5) \
        == 1.08194
    traced = sess.make_callable(loss, feed_list=[x, y], accept_options=True)
    md = tf.RunMetadata()
    out = traced(X, Y, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                 run_metadata=md)
    assert round(float(out), 5) == 1.08194 and len(md.step_stats.dev_stats) > 0
    with pytest.raises(tf.errors.InvalidArgumentError):  # y left unfed
        step(X)
    assert type(sess.make_callable((loss, gs), feed_list=[x, y])(X, Y)) is tuple
    assert sess.make_callable([], feed_list=[])() == []
    with pytest.raises(ValueError, match="Cannot feed value of shape \\(8, 3\\)"):
        step(X[:, :3], Y)


def test_nested_fetch_structures():
    tf.set_random_seed(2)
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    with tf.variable_scope("net"):
        w = tf.get_variable("w", [2, 2], initializer=tf.glorot_uniform_initializer(seed=1))
        b = tf.get_variable("b", [2], initializer=tf.constant_initializer(0.5))
        out = tf.nn.relu(tf.matmul(x, w) + b, name="out")
        mean = tf.reduce_mean(out, name="mean")
    init = tf.global_variables_initializer()
    sess = tf.Session()
    assert sess.run(init) is None
    X = np.array([[1., 2.], [3., -1.]], np.float32)
    Stats = collections.namedtuple("Stats", "mean out")
    r = sess.run(Stats(mean, out), {x: X})
    assert type(r) is Stats and type(r.mean) is np.float32
    assert round(float(r.mean), 5) == 0.24577
    _close(r.out, [[0.18566, 0.0], [0.0, 0.79741]])
    r = sess.run([{"m": mean, "o": [out, mean]}, (mean,)], feed_dict={x: X})
    assert (type(r), type(r[0]), type(r[1])) == (list, dict, tuple)
    od = sess.run(collections.OrderedDict([("z", mean), ("a", out)]), {x: X})
    assert type(od) is collections.OrderedDict and list(od) == ["z", "a"]
    dd = collections.defaultdict(list)
    dd["k"] = mean
    assert type(sess.run(dd, {x: X})) is collections.defaultdict
    assert sess.run((init, init)) == (None, None)
    r = sess.run([mean, mean, "net/mean:0"], {x: X})
    assert [round(float(v), 5) for v in r] == [1.03671] * 3
    r = sess.run("net/mean:0", {"x:0": X})
    assert type(r) is np.float32 and round(float(r), 5) == 1.03671
    assert sess.run("net/out", {x: X}) is None
    assert sess.run(w.initializer) is None
    assert type(sess.run(w)) is np.ndarray
    with pytest.raises(TypeError):
        sess.run(None)
    with pytest.raises(TypeError):
        sess.run([mean, None], {x: X})
    with pytest.raises(TypeError, match="Can not convert a int into a Tensor or Operation"):
        sess.run(3)
    with pytest.raises(ValueError, match="The name 'nope:0' refers to a Tensor which does not"):
        sess.run("nope:0")


def test_feeds_of_every_kind():
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    with tf.variable_scope("net"):
        w = tf.get_variable("w", [2, 2], initializer=tf.glorot_uniform_initializer(seed=1))
        b = tf.get_variable("b", [2], initializer=tf.constant_initializer(0.5))
        out = tf.nn.relu(tf.matmul(x, w) + b, name="out")
        mean = tf.reduce_mean(out, name="mean")
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    X = np.array([[1., 2.], [3., -1.]], np.float32)
    assert sess.run(mean, {out: np.ones((3, 2), np.float32)}) == 1.0
    eye = np.eye(2, dtype=np.float32)
    assert sess.run(out, {w: eye, x: X}).tolist() == [[1.5, 2.5], [3.5, 0.0]]
    assert sess.run(out, {w.value(): eye, x: X}).tolist() == [[1.5, 2.5], [3.5, 0.0]]
    s = tf.placeholder(tf.int64, [], name="s")
    lst = tf.placeholder(tf.float64, [None, 2], name="l")
    r = sess.run(s * 2, {s: 3})
    assert r == 6 and type(r) is np.int64
    assert sess.run(tf.reduce_sum(lst), {lst: [[1, 2], [3, 4]]}) == 10.0
    assert sess.run(s, {s: True}) == 1 and sess.run(s, {s: 2.5}) == 2
    assert sess.run(s, {s: np.float32(4.0)}) == 4
    with pytest.raises(ValueError, match="could not convert string to float: 'a'"):
        sess.run(lst, {lst: [["a", "b"]]})
    with pytest.raises(ValueError, match="inhomogeneous"):
        sess.run(lst, {lst: [[1, 2], [3]]})
    with pytest.raises(ValueError, match="Cannot feed value of shape \\(2,\\)"):
        sess.run(lst, {lst: [1.0, 2.0]})
    with pytest.raises(ValueError, match="Cannot feed value of shape \\(\\)"):
        sess.run(mean, {x: None})
    with pytest.raises(TypeError, match="Cannot interpret feed_dict key as Tensor: The name "
                                        "'nope:0' refers to a Tensor which does not exist"):
        sess.run(mean, {"nope:0": X})
    with pytest.raises(TypeError, match="The name 'x' refers to an Operation, not a Tensor"):
        sess.run(mean, {"x": X})
    with pytest.raises(TypeError, match="Cannot interpret feed_dict key as Tensor"):
        sess.run(mean, {3: X})


def test_sparse_feeds():
    sp = tf.sparse_placeholder(tf.float32, shape=[3, 4], name="sp")
    tot = tf.sparse_reduce_sum(sp)
    sess = tf.Session()
    v = tf.SparseTensorValue([[0, 1], [2, 3]], [1.5, 2.5], [3, 4])
    assert sess.run(tot, {sp: v}) == 4.0
    assert sess.run(tot, {sp: ([[0, 0]], [4.0], [3, 4])}) == 4.0
    rv = sess.run(sp, {sp: v})
    assert type(rv).__name__ == "SparseTensorValue" and rv.indices.dtype == np.int64
    assert rv.dense_shape.tolist() == [3, 4]
    assert sess.run(tot, {sp.indices: [[1, 1]], sp.values: [7.0], sp.dense_shape: [3, 4]}) \
        == 7.0
    st = tf.SparseTensor([[0, 0]], [1.0], [2, 2])
    with pytest.raises(ValueError, match=r"Cannot feed value of shape \(2, 2\) for Tensor "
                                         r"'?SparseTensor_1/indices:0'?, which has shape "
                                         r"'?\(1, 2\)"):
        sess.run(tf.sparse_tensor_to_dense(st), {st: v})


def test_config_timeouts_and_traced_runs():
    config = tf.ConfigProto(log_device_placement=False, allow_soft_placement=True,
                            device_count={"GPU": 0, "CPU": 1},
                            inter_op_parallelism_threads=2, intra_op_parallelism_threads=2)
    config.gpu_options.allow_growth = True
    config.graph_options.optimizer_options.global_jit_level = tf.OptimizerOptions.ON_1
    assert config.allow_soft_placement and config.gpu_options.allow_growth
    assert dict(config.device_count) == {"CPU": 1, "GPU": 0}
    assert (tf.OptimizerOptions.ON_1, tf.OptimizerOptions.OFF) == (1, -1)
    q = tf.FIFOQueue(3, tf.float32, shapes=[], name="q")
    deq = q.dequeue(name="deq")
    enq = q.enqueue([1.0])
    sess = tf.Session(config=tf.ConfigProto(operation_timeout_in_ms=300))
    t0 = time.time()
    with pytest.raises(tf.errors.DeadlineExceededError):
        sess.run(deq)
    assert time.time() - t0 < 3
    sess.run(enq)
    assert sess.run(deq) == 1.0
    sess.close()
    sess = tf.Session()
    with pytest.raises(tf.errors.DeadlineExceededError):
        sess.run(deq, options=tf.RunOptions(timeout_in_ms=200))
    assert tf.errors.DEADLINE_EXCEEDED == 4
    x = tf.placeholder(tf.float32, [None], name="x")
    y = tf.reduce_sum(tf.square(x, name="sq"), name="tot")
    md = tf.RunMetadata()
    ro = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    assert sess.run(y, {x: [1., 2.]}, ro, md) == 5.0  # options, run_metadata positionally
    names = {n.node_name for d in md.step_stats.dev_stats for n in d.node_stats}
    assert {"sq", "tot"} <= names
    assert md.step_stats.dev_stats[0].device == "/job:localhost/replica:0/task:0/device:CPU:0"
    sq = next(n for d in md.step_stats.dev_stats for n in d.node_stats if n.node_name == "sq")
    assert sq.all_start_micros > 0 and sq.op_end_rel_micros >= sq.op_start_rel_micros
    assert md.HasField("step_stats") and len(md.partition_graphs) == 0
    trace = json.loads(timeline.Timeline(md.step_stats).generate_chrome_trace_format(
        show_memory=False))
    assert sorted(trace) == ["traceEvents"]
    assert {"M", "X"} <= {e["ph"] for e in trace["traceEvents"]}
    ev = next(e for e in trace["traceEvents"] if e.get("args", {}).get("name") == "sq")
    assert (ev["name"], ev["cat"]) == ("Square", "Op")
    assert sorted(ev) == ["args", "cat", "dur", "name", "ph", "pid", "tid", "ts"]
    assert sorted(ev["args"]) == ["input0", "name", "op"]
    md2 = tf.RunMetadata()
    sess.run(y, {x: [1.]}, options=tf.RunOptions(trace_level=tf.RunOptions.NO_TRACE),
             run_metadata=md2)
    assert len(md2.step_stats.dev_stats) == 0
    assert (tf.RunOptions.SOFTWARE_TRACE, tf.RunOptions.HARDWARE_TRACE,
            tf.RunOptions.FULL_TRACE) == (1, 2, 3)
    with pytest.raises(AttributeError):
        sess.run(y, {x: [1.]}, options="x")


def test_session_life_cycle():
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(5)
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        with tf.variable_scope("lin"):
            w = tf.get_variable("w", [3, 1], initializer=tf.truncated_normal_initializer(
                stddev=0.1, seed=2))
            y = tf.matmul(x, w, name="y")
        loss = tf.reduce_mean(tf.square(y - 1.0), name="loss")
        train_op = tf.train.AdamOptimizer(0.05).minimize(loss)
        init = tf.global_variables_initializer()
    assert tf.get_default_session() is None
    sess = tf.Session(graph=g)
    assert sess.graph is g and sess.sess_str == b""
    devices = sess.list_devices()
    assert devices[0].name == "/job:localhost/replica:0/task:0/device:CPU:0"
    assert devices[0].device_type == "CPU" and devices[0].memory_limit_bytes == 268435456
    X = np.ones((4, 3), np.float32)
    with sess.as_default():
        assert tf.get_default_session() is sess
        init.run()
        losses = []
        for _ in range(3):
            train_op.run(feed_dict={x: X})
            losses.append(round(float(loss.eval(feed_dict={x: X})), 5))
        assert losses == [0.61403, 0.40304, 0.23873]
        assert round(float(loss.eval(feed_dict={x: X})), 5) == 0.23873
    assert tf.get_default_session() is None
    with pytest.raises(ValueError, match="Cannot execute operation using `run\\(\\)`"):
        train_op.run(feed_dict={x: X})
    with pytest.raises(ValueError, match="Cannot evaluate tensor using `eval\\(\\)`"):
        loss.eval(feed_dict={x: X})
    assert round(float(loss.eval(feed_dict={x: X}, session=sess)), 5) == 0.23873
    assert train_op.run(feed_dict={x: X}, session=sess) is None
    with tf.Session(graph=g) as s2:
        assert tf.get_default_session() is s2
    with pytest.raises(RuntimeError, match=r"Attempted to use a closed Session."):
        s2.run(init)
    sess.close()
    sess.close()
    with pytest.raises(RuntimeError, match=r"Attempted to use a closed Session."):
        sess.run(loss, {x: X})
    with tf.Graph().as_default():
        tf.constant(1.0, name="other")
        s3 = tf.Session()
        with pytest.raises(ValueError, match="is not an element of this graph"):
            s3.run(loss)
        with pytest.raises(TypeError, match="Cannot interpret feed_dict key as Tensor"):
            s3.run("other:0", {x: X})
        with pytest.raises(ValueError, match="the tensor's graph is different from the "
                                             "session's graph"):
            loss.eval(session=s3)
        s3.close()


def test_finalize_and_unfetchable_tensors():
    g2 = tf.Graph()
    with g2.as_default():
        c = tf.constant(3.0, name="c")
        g2.finalize()
        assert g2.finalized
        with pytest.raises(RuntimeError, match=r"Graph is finalized and cannot be modified."):
            tf.constant(1.0)
        with pytest.raises(RuntimeError, match=r"Graph is finalized and cannot be modified."):
            c + 1
        with tf.Session() as s:
            assert s.run(c) == 3.0
        g2._unsafe_unfinalize()
        assert not g2.finalized and (c * 2).name == "mul:0"
    g3 = tf.Graph()
    with g3.as_default():
        p = tf.placeholder(tf.float32, [], name="p")
        q = tf.square(p, name="q")
        r = q + 1
        g3.prevent_fetching(q.op)
        g3.prevent_feeding(q)
        assert (g3.is_fetchable(q), g3.is_fetchable(q.op), g3.is_feedable(q),
                g3.is_feedable(p)) == (False, False, False, True)
        with tf.Session() as s:
            with pytest.raises(ValueError, match="has been marked as not fetchable"):
                s.run(q, {p: 2.0})
            with pytest.raises(ValueError, match=r"q:0'? may not be fed"):
                s.run(r, {q: 2.0})
            assert s.run(r, {p: 2.0}) == 5.0


def test_monitored_sessions_run_step_fn():
    tf.set_random_seed(11)
    gs = tf.train.get_or_create_global_step()
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    with tf.variable_scope("reg"):
        w = tf.get_variable("w", [2, 1], initializer=tf.random_uniform_initializer(-1, 1, seed=4))
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 2.0))
    train_op = tf.train.MomentumOptimizer(0.05, 0.9).minimize(loss, global_step=gs)
    X = np.array([[1., 0.], [0., 1.], [1., 1.]], np.float32)

    class Logger(tf.train.SessionRunHook):
        def __init__(self):
            self.calls = []

        def begin(self):
            self.calls.append("begin")

        def after_create_session(self, session, coord):
            self.calls.append("after_create")

        def before_run(self, run_context):
            self.calls.append("before")
            return tf.train.SessionRunArgs({"loss": loss, "gs": gs})

        def after_run(self, run_context, run_values):
            r = run_values.results
            self.calls.append(f"after:{r['gs']}:{r['loss']:.5f}")

        def end(self, session):
            self.calls.append("end")

    hook = Logger()
    steps = []

    def step_fn(step_context):
        assert type(step_context).__name__ == "StepContext"
        v = step_context.run_with_hooks(fetches=[loss, train_op], feed_dict={x: X})
        raw = step_context.session.run(gs)
        if raw >= 3:
            step_context.request_stop()
        return round(float(v[0]), 5), v[1], int(raw)

    with tf.train.SingularMonitoredSession(
            hooks=[hook, tf.train.StopAtStepHook(last_step=5)]) as mon:
        assert mon.graph is tf.get_default_graph()
        while not mon.should_stop():
            steps.append(mon.run_step_fn(step_fn))
        pytest.fail("request_stop ends the with block")  # pragma: no cover
    assert steps == [(4.79293, None, 1), (3.98488, None, 2)]
    assert hook.calls == ["begin", "after_create", "before", "after:1:4.79293", "before",
                          "after:2:3.98488", "before", "after:3:2.74244", "end"]
    with pytest.raises(AttributeError):
        mon.run(gs)
    assert not tf.get_default_graph().finalized

    with tf.Graph().as_default():
        gs2 = tf.train.get_or_create_global_step()
        c = tf.get_variable("c", [], initializer=tf.constant_initializer(1.0))
        inc = tf.assign_add(gs2, 1)
        upd = tf.assign(c, c * 2.0)

        def fn2(step_context):
            return step_context.run_with_hooks(upd), step_context.session.run(inc)

        creator = tf.train.ChiefSessionCreator(
            config=tf.ConfigProto(allow_soft_placement=True))
        with tf.train.MonitoredSession(session_creator=creator,
                                       hooks=[tf.train.StopAtStepHook(num_steps=2)]) as m2:
            out = []
            while not m2.should_stop():
                out.append(m2.run_step_fn(fn2))
        assert [(float(a), int(b)) for a, b in out] == [(2.0, 1), (4.0, 2), (8.0, 3)]
        assert type(out[0][0]) is np.float32 and m2.should_stop()

        def bad(step_context):
            raise tf.errors.OutOfRangeError(None, None, "done")

        with tf.train.MonitoredSession() as m3:
            m3.run_step_fn(bad)
            pytest.fail("OutOfRangeError ends the with block")  # pragma: no cover
        with tf.train.MonitoredSession() as m4:
            with pytest.raises(RuntimeError, match="Graph is finalized"):
                m4.run_step_fn(lambda step_context: tf.constant(1.0))
            with pytest.raises(ValueError, match="`step_fn` may either have one "
                                                 "`step_context` argument"):
                m4.run_step_fn(lambda a, b: 1)


def test_traced_training_step_written_out(tmp_path):
    logdir = str(tmp_path)
    tf.set_random_seed(123)
    rng = np.random.RandomState(3)
    X = rng.rand(16, 5).astype(np.float32)
    Y = (X.sum(1) > 2.5).astype(np.int64)
    with tf.name_scope("input"):
        x = tf.placeholder(tf.float32, [None, 5], name="x")
        y = tf.placeholder(tf.int64, [None], name="y")
    with tf.variable_scope("mlp"):
        h = tf.layers.dense(x, 8, activation=tf.nn.tanh, name="h",
                            kernel_initializer=tf.glorot_normal_initializer(seed=9))
        logits = tf.layers.dense(h, 2, name="out",
                                 kernel_initializer=tf.glorot_normal_initializer(seed=10))
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=y, logits=logits), name="xent")
    acc = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32), name="acc")
    gs = tf.train.get_or_create_global_step()
    train = tf.train.RMSPropOptimizer(0.01).minimize(loss, global_step=gs)
    tf.summary.scalar("loss", loss)
    merged = tf.summary.merge_all()
    saver = tf.train.Saver(max_to_keep=2)
    writer = tf.summary.FileWriter(logdir, tf.get_default_graph())
    history = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for i in range(4):
            if i == 2:
                md = tf.RunMetadata()
                summ, _ = sess.run([merged, train], {x: X, y: Y}, options=tf.RunOptions(
                    trace_level=tf.RunOptions.FULL_TRACE), run_metadata=md)
                writer.add_run_metadata(md, f"step{i}")
                with open(os.path.join(logdir, "timeline.json"), "w") as f:
                    f.write(timeline.Timeline(md.step_stats).generate_chrome_trace_format())
                labels = [n.timeline_label for d in md.step_stats.dev_stats
                          for n in d.node_stats if n.node_name == "xent"]
                assert labels[0].startswith(
                    "xent = Mean(SparseSoftmaxCrossEntropyWithLogits/"
                    "SparseSoftmaxCrossEntropyWithLogits, ")
                assert len(md.step_stats.dev_stats) == 1
            else:
                summ, _ = sess.run([merged, train], {x: X, y: Y})
            writer.add_summary(summ, i)
            history.append(sess.run([loss, acc], {x: X, y: Y}))
        path = saver.save(sess, os.path.join(logdir, "m"), global_step=gs)
        assert os.path.basename(path) == "m-4" and type(summ) is bytes
    writer.close()
    _close(history, [[0.68442, 0.6875], [0.68406, 0.6875], [0.68368, 0.6875],
                     [0.68328, 0.6875]])
    assert sorted(f.split(".")[0] for f in os.listdir(logdir)) == [
        "checkpoint", "events", "m-4", "m-4", "m-4", "timeline"]
    trace = json.load(open(os.path.join(logdir, "timeline.json")))
    ops = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert len(ops) > 5 and {e["cat"] for e in ops} == {"Op"}
    ev = next(e for e in ops if e["args"]["name"] == "xent")
    assert ev["name"] == "Mean" and ev["args"]["op"] == "Mean"
    assert ev["args"]["input0"] == "SparseSoftmaxCrossEntropyWithLogits/" \
                                   "SparseSoftmaxCrossEntropyWithLogits"
    meta = [e for e in trace["traceEvents"] if e["ph"] == "M"]
    assert {e["name"] for e in meta} == {"process_name"}
    assert [e["args"]["name"] for e in meta][:2] == [
        "Allocators", "/job:localhost/replica:0/task:0/device:CPU:0 Compute"]
    full = json.loads(timeline.Timeline(md.step_stats, graph=tf.get_default_graph())
                      .generate_chrome_trace_format(show_dataflow=True, show_memory=True))
    assert {"C", "D", "M", "N", "O", "X"} <= {e["ph"] for e in full["traceEvents"]}


def test_fetch_structures_and_feed_conversions():
    x = tf.placeholder(tf.float32, [None], name="x")
    v = tf.Variable([1.0, 2.0], name="v")
    loss = tf.reduce_sum(x * v, name="loss")
    upd = tf.assign_add(v, [1.0, 1.0], name="upd")
    noop = tf.no_op(name="noop")
    grp = tf.group(upd, name="grp")
    sess = tf.Session()
    sess.run(v.initializer)
    assert sess.run((noop, grp)) == (None, None)
    assert sess.run({1: loss, (2, 3): [noop]}, {x: [2., 0.]}) == {1: 4.0, (2, 3): [None]}
    assert (sess.run([]), sess.run(()), sess.run({})) == ([], (), {})
    assert sess.run([[], {}, ()]) == [[], {}, ()]
    assert sess.run(v).tolist() == [2.0, 3.0] and sess.run(v.op) is None
    assert sess.run(v.initial_value).tolist() == [1.0, 2.0]
    assert [a.tolist() for a in sess.run([v.read_value(), upd])] == [[3.0, 4.0], [3.0, 4.0]]
    got = sess.run(["upd", "v:0"])
    assert got[0] is None and got[1].tolist() == [4.0, 5.0]
    with pytest.raises(TypeError, match="Can not convert a set into a Tensor or Operation"):
        sess.run({loss}, {x: [1., 1.]})
    with pytest.raises(TypeError, match="Can not convert a ndarray into a Tensor"):
        sess.run(np.array(1.0))
    with pytest.raises(ValueError, match=r"Could not flatten dictionary. Key had 1 elements, "
                                         r"but value had 2 elements."):
        sess.run(loss, {(x,): ([1., 1.],)})
    r = sess.run(loss, {x: np.array([1., 1.])})
    assert r == 9.0 and r.dtype == np.float32
    assert sess.run(loss, {x: [1, 2]}) == 14.0
    i8 = tf.placeholder(tf.int8, [], name="i8")
    with pytest.raises(TypeError, match="Type of feed value 300 with type <class 'int'> is "
                                        "not compatible with Tensor"):
        sess.run(i8, {i8: 300})
    assert sess.run(i8, {i8: np.int64(300)}) == 44
    b = tf.placeholder(tf.bool, [2], name="b")
    assert sess.run(b, {b: [0, 1]}).tolist() == [False, True]
    assert sess.run(loss, {v: [10., 10.], x: [1., 1.]}) == 20.0
    assert sess.run(loss, {v.value(): [5., 5.], x: [1., 1.]}) == 10.0
    c = tf.constant(2.0, name="c")
    assert sess.run(c * 3, {c: 5.0}) == 15.0
    with pytest.raises(TypeError, match="Cannot interpret feed_dict key as Tensor"):
        sess.run(c, {noop: 1.0})
    with pytest.raises(ValueError, match="Cannot feed value of shape \\(2,\\)"):
        sess.run(c, {c: [1.0, 2.0]})
    assert sess.run(x, {x: [7.0]}).tolist() == [7.0]
    r = sess.run({"a": [loss, loss], "b": loss}, {x: [1., 0.]})
    assert r == {"a": [4.0, 4.0], "b": 4.0}
    assert type(sess.run(loss, {x: [1., 0.]})) is np.float32
    assert type(sess.run(v)) is np.ndarray


# -- one test per class fixed ---------------------------------------------------------------


def test_interactive_session_warns_when_another_is_open(monkeypatch):
    # counted from none open, whatever an earlier test left open
    monkeypatch.setattr(session_module.InteractiveSession, "_active_count", 0)
    a = tf.constant([1.0, 2.0], name="a")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = tf.InteractiveSession()
        assert tf.get_default_session() is first and type(first).__name__ == \
            "InteractiveSession"
        assert a.eval().tolist() == [1.0, 2.0] and (a * 2).eval().tolist() == [2.0, 4.0]
        assert not caught
        second = tf.InteractiveSession()
        assert tf.get_default_session() is second
        # TF: "An interactive session is already active. ..." (flowgraph's own wording)
        assert [str(w.message)[:40] for w in caught] == [
            "An interactive session is already active"]
        second.close()
        assert tf.get_default_session() is first
        first.close()
        assert tf.get_default_session() is None
        third = tf.InteractiveSession()  # none open any more: no warning
        third.close()
        third.close()
        assert len(caught) == 1


def test_reset_default_target_closes_in_process_sessions(monkeypatch):
    # reset("") closes every in-process session: only this test's ones here
    monkeypatch.setattr(session_module, "_LOCAL_SESSIONS", weakref.WeakSet())
    v = tf.Variable(3.0, name="v")
    s = tf.Session()
    s.run(v.initializer)
    s1 = tf.Session()
    s1.run(v.initializer)
    assert tf.Session.reset("", ["c"]) is None
    for session in (s, s1):
        with pytest.raises(tf.errors.CancelledError, match=r"Session has been closed."):
            session.run(v)
    with pytest.raises(tf.errors.CancelledError):
        s.partial_run_setup([v.value()], [])
    s.close()  # still allowed, as in TensorFlow
    with tf.Session() as fresh:  # sessions made after the reset work
        fresh.run(v.initializer)
        assert fresh.run(v) == 3.0


def test_make_callable_follows_tensorflows_two_kinds():
    x = tf.placeholder(tf.float32, [], name="x")
    v = tf.Variable(3.0, name="v")
    y = v * 2.0
    sess = tf.Session()
    sess.run(v.initializer)
    # without a feed_list: fetches are checked now, the function takes no feeds
    with pytest.raises(TypeError):
        sess.make_callable(None)
    with tf.Graph().as_default():
        other = tf.constant(1.0)
    with pytest.raises(ValueError, match="is not an element of this graph"):
        sess.make_callable(other)
    plain = sess.make_callable(y)
    assert plain() == 6.0
    with pytest.raises(TypeError):
        plain(1.0)
    with pytest.raises(TypeError):
        plain(options=tf.RunOptions())
    md = tf.RunMetadata()
    traced = sess.make_callable([y], accept_options=True)
    assert traced(options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                  run_metadata=md) == [6.0]
    assert len(md.step_stats.dev_stats) == 1
    # with a feed_list: Session.run (checked when called)
    lazy = sess.make_callable(v, feed_list=["nope:0"])
    with pytest.raises(TypeError, match="Cannot interpret feed_dict key as Tensor"):
        lazy(1.0)
    with pytest.raises(TypeError, match="Argument `feed_list` must be a list or tuple"):
        sess.make_callable(y, feed_list=x)
    fed = sess.make_callable(x * 2.0, feed_list=(x,))
    assert fed(2.0) == 4.0
    sess.close()
    with pytest.raises(tf.errors.CancelledError, match=r"Session has been closed."):
        plain()
    with pytest.raises(RuntimeError, match=r"Attempted to use a closed Session."):
        fed(2.0)
    late = sess.make_callable(y)  # made on a closed session: fails when called
    with pytest.raises(tf.errors.CancelledError):
        late()


def test_config_messages_print_as_text_format():
    config = tf.ConfigProto(allow_soft_placement=True, inter_op_parallelism_threads=2)
    config.gpu_options.per_process_gpu_memory_fraction = 0.5
    config.gpu_options.allow_growth = True
    assert str(config) == ("inter_op_parallelism_threads: 2\n"
                           "gpu_options {\n"
                           "  per_process_gpu_memory_fraction: 0.5\n"
                           "  allow_growth: true\n"
                           "}\n"
                           "allow_soft_placement: true\n")
    assert str(tf.RunOptions()) == ""
    assert str(tf.RunOptions(timeout_in_ms=5)) == "timeout_in_ms: 5\n"
    assert str(tf.GPUOptions(allow_growth=True)) == "allow_growth: true\n"


def test_unknown_config_field_is_protobufs_value_error():
    with pytest.raises(ValueError, match=r'Protocol message ConfigProto has no "bogus" field\.'):
        tf.ConfigProto(bogus=1)
    with pytest.raises(ValueError, match=r'Protocol message RunOptions has no "timeout" field\.'):
        tf.RunOptions(timeout=5)


def test_cpu_devices_report_tensorflows_memory_limit():
    from flowgraph.python.client import device_lib

    with tf.Session(config=tf.ConfigProto(device_count={"GPU": 0})) as sess:
        devices = sess.list_devices()
    assert [(d.name, d.device_type, d.memory_limit_bytes) for d in devices] == [
        ("/job:localhost/replica:0/task:0/device:CPU:0", "CPU", 268435456)]
    cpu = next(d for d in device_lib.list_local_devices() if d.device_type == "CPU")
    assert cpu.memory_limit == 268435456


def test_single_op_fused_node_is_labelled_as_the_op():
    x = tf.placeholder(tf.float32, [None], name="x")
    y = tf.reduce_sum(tf.square(x, name="sq"), name="tot")
    md = tf.RunMetadata()
    with tf.Session() as sess:
        sess.run(y, {x: [1., 2.]}, tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), md)
    stats = {n.node_name: n for d in md.step_stats.dev_stats for n in d.node_stats}
    assert stats["sq"].timeline_label == "sq = Square(x)"  # TF: Square(_arg_x_0_0)
    trace = json.loads(timeline.Timeline(md.step_stats).generate_chrome_trace_format())
    ev = next(e for e in trace["traceEvents"] if e.get("args", {}).get("name") == "sq")
    assert ev["args"] == {"name": "sq", "op": "Square", "input0": "x"}


def test_attrs_class_fetch():
    class _Field:
        def __init__(self, name):
            self.name = name

    class Fake:  # what attrs.define makes: __attrs_attrs__, positional __init__
        __attrs_attrs__ = (_Field("loss"), _Field("extra"))

        def __init__(self, loss, extra):
            self.loss = loss
            self.extra = extra

    x = tf.placeholder(tf.float32, [None], name="x")
    v = tf.Variable([1.0, 2.0], name="v")
    loss = tf.reduce_sum(x * v, name="loss")
    noop = tf.no_op(name="noop")
    with tf.Session() as sess:
        sess.run(v.initializer)
        r = sess.run(Fake(loss, [loss, noop]), {x: [1., 1.]})
    assert type(r) is Fake and r.loss == 3.0 and r.extra == [3.0, None]


def test_fetching_a_fed_tensor_returns_the_fed_value():
    lr = tf.placeholder(tf.float32, [], name="lr")
    i8 = tf.placeholder(tf.int8, [], name="i8")
    x = tf.placeholder(tf.float32, [None], name="x")
    y = x * lr
    with tf.Session() as sess:
        for _ in range(3):  # the same on repeated runs (no shortcut past it)
            r = sess.run(lr, {lr: 0.1})
            assert type(r) is np.ndarray and r.shape == () and r.dtype == np.float32
        assert type(sess.run(i8, {i8: 3})) is np.ndarray
        got_lr, got_y = sess.run([lr, y], {lr: 2.0, x: [1.0, 3.0]})
        assert type(got_lr) is np.ndarray and got_y.tolist() == [2.0, 6.0]
        assert type(sess.run(y, {lr: 2.0, x: [1.0]})) is np.ndarray
        assert type(sess.run(tf.reduce_sum(y), {lr: 2.0, x: [1.0]})) is np.float32
