"""TF1 profiling and debugging programs, sweep 15 (area ``profiler``), run under
TensorFlow 2.15 and flowgraph with the tf-oracle; TensorFlow's printed values are inline.

The programs (2016-2019 style): an MLP trained with ``RunOptions(FULL_TRACE)`` whose
``RunMetadata`` step stats are read node by node (labels, outputs, allocation
descriptions, per-allocator memory, ``memory_stats``, ``cost_graph``) and turned into a
Chrome trace with ``client.timeline`` (with and without memory and dataflow events); a
CNN (conv, pooling, depthwise conv, dense, batch norm, L2 loss, a gradient-descent step)
profiled with ``tf.profiler.profile`` for FLOPs (scope and op views) and parameters; a
linear model under ``MonitoredTrainingSession`` with a ``ProfilerHook`` writing
``timeline-N.json`` and tagged run metadata, then a ``tf.profiler.Profiler`` fed traced
steps (``add_step``, ``profile_name_scope``/``operations``/``graph``, ``advise``) and a
``time_and_memory`` profile of one step; a report written with ``file:outfile=``;
``tf.add_check_numerics_ops``, ``check_numerics``, ``verify_tensor_all_finite``,
``tf.Print`` with ``first_n``/``summarize`` and ``tf.print`` to stdout; per-op statistics
through ``ops.RegisterStatistics``/``get_stats_for_node_def``; graph inspection
(``get_operations``, consumers, GraphDef nodes and attrs); and tfdbg without a terminal:
a ``DumpingDebugWrapperSession`` whose dump a ``DebugDumpDir`` searches with
``has_inf_or_nan``, and a ``DumpingDebugHook`` under ``MonitoredSession``.

Left as is: TensorFlow 2.15 runs grappler and oneDNN rewrites, so its traced nodes are
``_MklMatMul``/``_arg_x_0_0``/``_retval_*`` and its forwarded buffers report 0 bytes
(a ``Relu``), where flowgraph traces the graph's own ops and constants are not executed
nodes. (``tf.losses``' default-weight ``num_present`` subgraph, missing when this
sweep ran, was added by the losses sweep: tests/compat/test_tf1_programs_wild16_losses.py.)
``tf.print`` builds a ``PrintV2`` carrying its template (TensorFlow: a ``tp_format``
``StringFormat`` feeding it). ``tf.layers`` leave no empty ``update_ops`` collection key.
The advisor's checkers report nothing (TensorFlow prints its expensive-operation
ranking). ``tf.contrib.tfprof`` is not provided (contrib sits below ``tf.profiler`` in
the layers). A ``ProfilerHook`` timeline holds dataflow (``s``/``t``) events, TensorFlow's
none. tfdbg dumps name a fed placeholder by itself (TensorFlow 2.15: ``_arg_x_0_0``) and
keep fetch and feed information in the core-metadata event, not in
``_tfdbg_fetches_info_``/``_tfdbg_feed_keys_info_`` folders.

Classes of discrepancy found and fixed (one focused test each below):

* Traced ``NodeExecStats`` lacked TensorFlow's ``memory`` (per-allocator
  ``AllocatorMemoryUsed``), ``memory_stats``, ``scheduled_micros``/``_nanos`` and
  ``HasField``; each device's stats did not start with ``_SOURCE = NoOp()``;
  ``RunMetadata.cost_graph`` was None (TensorFlow: an empty ``CostGraphDef``).
* FLOP rules were missing for the ops a training step adds: ``Conv2DBackpropInput``/
  ``Filter`` (a float, as TensorFlow divides), ``MaxPoolGrad``, ``AvgPoolGrad``, the
  ``BatchMatMul`` family, ``Conv3D`` and ``Dilation2D``; ``Rsqrt`` counted one flop per
  element (TensorFlow two); ``FloorMod``/``FloorDiv`` counted flops TensorFlow has no
  rule for. Ties in the float-ops (and params) order were left in graph order
  (TensorFlow: by name).
* ``ops.RegisterStatistics``, ``ops.OpStats`` and ``ops.get_stats_for_node_def`` were
  missing, and the profiler's counts ignored statistics a program registers.
* ``run_meta`` was ignored: profiles reported no time or bytes; ``GraphNodeProto``
  lacked TensorFlow's run-time fields (``cpu_exec_micros``, ``peak_bytes``,
  ``output_bytes``, ``total_definition_count``, ``input_shapes``...), and
  ``Profiler.add_step`` dropped its metadata. Time/bytes minimums now compare a node's
  subtree, and totals/definition counts cover the displayed tree, as tfprof does.
* A report written to ``file:outfile=`` carried the options listing and banners
  (TensorFlow writes only the analysis: ``Doc:``, ``Profile:`` and the tree).
* ``Profiler.advise`` took no options (TensorFlow requires them) and the advisor
  ignored which checkers were asked for.
* ``tensorflow.python.debug`` was missing: ``DumpingDebugWrapperSession`` and
  ``DumpingDebugHook`` now write tfdbg's run folders (a device folder of
  ``<op>_<slot>_DebugIdentity_<micros>`` events, the graph, core metadata), and
  ``DebugDumpDir`` (also as ``debug.lib.debug_data``) reads them: ``size``,
  ``dumped_tensor_data``, ``find``, ``get_tensors``, ``node_op_type``/``node_inputs``,
  ``run_fetches_info``; an unknown watch key raises
  ``WatchKeyDoesNotExistInDebugDumpDirError``.
"""

from __future__ import annotations

import importlib
import json
import os
import sys

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework import op_statistics
from flowgraph.python.client import timeline

# as programs import it: ``from tensorflow.python.framework import ops``
tf_ops = importlib.import_module("flowgraph.python.framework.ops")


def _quiet(options):
    options = dict(options)
    options["output"] = "none"
    return options


def _flops_opts():
    return _quiet(tf.profiler.ProfileOptionBuilder.float_operation())


# -- program 1: a traced MLP and its timeline --------------------------------------------
def _traced_mlp():
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(1)
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        y = tf.placeholder(tf.float32, [None, 1], name="y")
        with tf.variable_scope("mlp"):
            h = tf.layers.dense(x, 8, activation=tf.nn.relu, name="h1")
            out = tf.layers.dense(h, 1, name="out")
        loss = tf.reduce_mean(tf.square(out - y), name="loss")
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
        md = tf.RunMetadata()
        rng = np.random.RandomState(0)
        xs, ys = rng.rand(16, 4).astype(np.float32), rng.rand(16, 1).astype(np.float32)
        losses = []
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                lv, _ = sess.run([loss, train], {x: xs, y: ys}, options=opts,
                                 run_metadata=md)
                losses.append(round(float(lv), 5))
    return md, losses


def test_traced_mlp_step_stats_and_chrome_trace():
    assert (tf.RunOptions.NO_TRACE, tf.RunOptions.SOFTWARE_TRACE,
            tf.RunOptions.HARDWARE_TRACE, tf.RunOptions.FULL_TRACE) == (0, 1, 2, 3)
    empty = tf.RunMetadata()
    assert (len(empty.step_stats.dev_stats), empty.HasField("step_stats")) == (0, False)
    md, losses = _traced_mlp()
    assert losses == [0.97726, 0.3493, 0.21497]
    assert [d.device for d in md.step_stats.dev_stats] == [
        "/job:localhost/replica:0/task:0/device:CPU:0"]
    stats = md.step_stats.dev_stats[0].node_stats
    names = {n.node_name for n in stats}
    assert {"_SOURCE", "loss", "GradientDescent"} <= names
    n = next(s for s in stats if s.node_name == "loss")
    assert n.timeline_label.startswith("loss = Mean(Square, ")
    assert isinstance(n.all_start_micros, int) and n.all_start_micros > 0
    assert [o.slot for o in n.output] == [0]
    desc = n.output[0].tensor_description
    assert (desc.dtype, [d.size for d in desc.shape.dim],
            desc.allocation_description.requested_bytes) == (1, [], 4)
    assert n.HasField("memory_stats") and n.scheduled_micros > 0
    assert len(md.partition_graphs) == 0 and len(md.cost_graph.node) == 0

    trace = json.loads(timeline.Timeline(md.step_stats).generate_chrome_trace_format(
        show_memory=False))
    assert sorted(trace) == ["traceEvents"]
    events = trace["traceEvents"]
    assert sorted({e["ph"] for e in events}) == ["M", "X", "s", "t"]
    meta = [e for e in events if e["ph"] == "M"]
    assert sorted({e["name"] for e in meta}) == ["process_name"]
    assert sorted({e["args"]["name"] for e in meta}) == [
        "/job:localhost/replica:0/task:0/device:CPU:0 Compute",
        "/job:localhost/replica:0/task:0/device:CPU:0 Tensors", "Allocators"]
    ops = [e for e in events if e["ph"] == "X"]
    assert {e["cat"] for e in ops} == {"Op"}
    mean = next(e for e in ops if e["args"].get("name") == "loss")
    assert sorted(mean) == ["args", "cat", "dur", "name", "ph", "pid", "tid", "ts"]
    assert (sorted(mean["args"]), mean["name"], mean["pid"]) == (
        ["input0", "input1", "name", "op"], "Mean", 1)
    full = json.loads(timeline.Timeline(md.step_stats).generate_chrome_trace_format(
        show_memory=True, show_dataflow=True))
    assert sorted({e["ph"] for e in full["traceEvents"]}) == [
        "C", "D", "M", "N", "O", "X", "s", "t"]


def test_node_exec_stats_have_tensorflows_memory_fields_and_source_node():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        w = tf.Variable(tf.ones([4, 3]), name="w")
        s = tf.nn.softmax(tf.matmul(x, w, name="mm"), name="sm")
        md = tf.RunMetadata()
        with tf.Session() as sess:
            sess.run(w.initializer)
            sess.run(s, {x: np.ones((2, 4), np.float32)},
                     options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                     run_metadata=md)
    stats = md.step_stats.dev_stats[0].node_stats
    # TensorFlow: '_SOURCE' '_SOURCE = NoOp()' first, without memory stats
    assert (stats[0].node_name, stats[0].timeline_label) == ("_SOURCE", "_SOURCE = NoOp()")
    assert not stats[0].HasField("memory_stats") and list(stats[0].memory) == []
    mm = next(n for n in stats if n.node_name == "mm")
    # TensorFlow: [('mklcpu', 24, 24)] and memory_stats set (temp 0)
    assert [(m.total_bytes, m.peak_bytes) for m in mm.memory] == [(24, 24)]
    assert mm.HasField("memory_stats") and mm.memory_stats.temp_memory_size == 0
    assert mm.scheduled_micros > 0 and mm.scheduled_nanos > 0
    with pytest.raises(ValueError):
        mm.HasField("node_name")
    # the fields survive the wire format
    back = tf.RunMetadata.FromString(md.SerializeToString())
    mm2 = next(n for n in back.step_stats.dev_stats[0].node_stats if n.node_name == "mm")
    assert [m.total_bytes for m in mm2.memory] == [24] and mm2.HasField("memory_stats")
    assert (md.HasField("cost_graph"), list(md.cost_graph.node), list(md.cost_graph.cost)) \
        == (False, [], [])


# -- program 2: FLOPs and parameters of a CNN --------------------------------------------
def _cnn_graph():
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(3)
        x = tf.placeholder(tf.float32, [8, 28, 28, 1], name="images")
        labels = tf.placeholder(tf.int64, [8], name="labels")
        with tf.variable_scope("conv1"):
            w = tf.get_variable("weights", [5, 5, 1, 16],
                                initializer=tf.truncated_normal_initializer(stddev=0.1))
            b = tf.get_variable("biases", [16], initializer=tf.zeros_initializer())
            c = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME"), b))
            p = tf.nn.max_pool(c, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
        with tf.variable_scope("conv2"):
            c2 = tf.layers.conv2d(p, 32, 3, padding="valid", activation=tf.nn.relu)
            p2 = tf.layers.average_pooling2d(c2, 2, 2)
            dw = tf.get_variable("dw", [3, 3, 32, 1])
            d = tf.nn.depthwise_conv2d(p2, dw, [1, 1, 1, 1], "SAME")
        with tf.variable_scope("fc"):
            logits = tf.layers.dense(tf.reshape(d, [8, -1]), 10)
        sm = tf.nn.softmax(logits)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=labels, logits=logits))
        l2 = tf.add_n([tf.nn.l2_loss(v) for v in tf.trainable_variables()])
        total = tf.add(loss, 1e-4 * l2, name="total")
        tf.argmax(sm, 1)
        tf.squared_difference(sm, 0.1)
        tf.layers.batch_normalization(tf.placeholder(tf.float32, [8, 10], name="bn_in"),
                                      training=True)
        tf.pow(sm, 2.0), tf.rsqrt(sm + 1.0), tf.negative(sm), tf.log(sm)
        tf.reduce_max(sm, 1), tf.reduce_mean(sm, 0), tf.reduce_sum(sm)
        tf.greater(sm, 0.5), tf.matmul(sm, sm, transpose_a=True)
        tf.train.GradientDescentOptimizer(0.1).minimize(total)
    return g


def test_cnn_flops_and_parameters_scope_and_op_views():
    g = _cnn_graph()
    fl = tf.profiler.profile(g, options=tf.profiler.ProfileOptionBuilder(
        tf.profiler.ProfileOptionBuilder.float_operation()).with_empty_output().build())
    assert fl.total_float_ops == 56022429
    assert [(c.name, c.total_float_ops) for c in fl.children[:11]] == [
        ("gradients/conv2/conv2d/Conv2D_grad/Conv2DBackpropFilter", 14450688),
        ("gradients/conv2/conv2d/Conv2D_grad/Conv2DBackpropInput", 14450688),
        ("conv2/conv2d/Conv2D", 10616832),
        ("conv1/Conv2D", 5017600),
        ("gradients/conv1/Conv2D_grad/Conv2DBackpropFilter", 5017600),
        ("gradients/conv1/Conv2D_grad/Conv2DBackpropInput", 5017600),
        ("fc/dense/MatMul", 184320),
        ("gradients/fc/dense/MatMul_grad/MatMul", 184320),
        ("gradients/fc/dense/MatMul_grad/MatMul_1", 184320),
        ("conv2/depthwise", 165888),
        ("gradients/conv1/MaxPool_grad/MaxPoolGrad", 125440)]
    names = [c.name for c in fl.children]
    # TensorFlow's order of the 80-flop nodes: by name
    i = names.index("Greater")
    assert names[i:i + 5] == ["Greater", "Log", "Mean_1", "Neg", "Pow"]
    bn = next(c for c in fl.children if c.name == "batch_normalization/AssignMovingAvg")
    assert (bn.float_ops, bn.total_float_ops, [c.name for c in bn.children]) == (
        10, 30, ["batch_normalization/AssignMovingAvg/mul",
                 "batch_normalization/AssignMovingAvg/sub"])
    pp = tf.profiler.profile(g, options=_quiet(
        tf.profiler.ProfileOptionBuilder.trainable_variables_parameter()))
    assert pp.total_parameters == 16894
    assert [(c.name, c.total_parameters) for c in pp.children] == [
        ("batch_normalization", 20), ("conv1", 416), ("conv2", 4928), ("fc", 11530)]
    op = tf.profiler.profile(g, cmd="op", options=_flops_opts())
    assert (type(op).__name__, op.total_float_ops) == ("MultiGraphNodeProto", 56022429)
    chain = []
    node = op
    while node.children:
        node = node.children[0]
        chain.append((node.name, node.float_ops, node.total_float_ops, len(node.graph_nodes)))
    assert chain[:10] == [
        ("Conv2DBackpropFilter", 19468288, 56022429, 2),
        ("Conv2DBackpropInput", 19468288, 36554141, 2),
        ("Conv2D", 15634432, 17085853, 2), ("MatMul", 554560, 1451421, 4),
        ("DepthwiseConv2dNative", 165888, 896861, 1), ("BiasAdd", 137296, 730973, 3),
        ("BiasAddGrad", 137238, 593677, 3), ("MaxPoolGrad", 125440, 456439, 1),
        ("MaxPool", 100352, 330999, 1), ("AvgPoolGrad", 73728, 230647, 1)]
    assert ("Rsqrt", 180, 712, 2) in chain


def test_flops_of_gradient_batched_and_3d_ops():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2, 9, 9, 3])
        w = tf.Variable(tf.ones([3, 3, 3, 5]))
        c = tf.nn.conv2d(x, w, [1, 2, 2, 1], "SAME")
        mp = tf.nn.max_pool(c, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
        ap = tf.nn.avg_pool(c, [1, 3, 3, 1], [1, 1, 1, 1], "SAME")
        tf.gradients(tf.reduce_sum(mp) + tf.reduce_sum(ap), [x, w])
        a, b = tf.ones([4, 2, 3]), tf.ones([4, 3, 5])
        tf.matmul(a, b), tf.matmul(a, b, adjoint_a=False)
        tf.rsqrt(tf.ones([6]))
        tf.floormod(tf.ones([6]), 2.0)
        tf.nn.conv3d(tf.ones([1, 4, 4, 4, 2]), tf.ones([2, 2, 2, 2, 3]), [1] * 5, "VALID")
    got = {op.name: tf_ops.get_stats_for_node_def(g, op.node_def, "flops").value
           for op in g.get_operations()
           if op.type in ("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter",
                          "MaxPoolGrad", "AvgPoolGrad", "MaxPool", "AvgPool",
                          "BatchMatMulV2", "Rsqrt", "FloorMod", "Conv3D")}
    assert got == {
        "Conv2D": 13500, "MaxPool": 160, "AvgPool": 2250,
        "gradients/MaxPool_grad/MaxPoolGrad": 200,
        "gradients/AvgPool_grad/AvgPoolGrad": 4500,
        "gradients/Conv2D_grad/Conv2DBackpropInput": 10935.0,
        "gradients/Conv2D_grad/Conv2DBackpropFilter": 10935.0,
        "MatMul": 240, "MatMul_1": 240, "Rsqrt": 12, "FloorMod": None, "Conv3D": 2592}
    assert isinstance(got["gradients/Conv2D_grad/Conv2DBackpropInput"], float)
    assert tf.profiler.profile(g, options=_flops_opts()).total_float_ops == 46103


def test_equal_flops_are_listed_by_name():
    g = tf.Graph()
    with g.as_default():
        a = tf.ones([4, 5])
        tf.log(a, name="zlog"), tf.negative(a, name="Neg"), tf.add(a, a, name="add")
        tf.square(a, name="Big"), tf.multiply(a, a, name="mul")
    names = [c.name for c in tf.profiler.profile(g, options=_flops_opts()).children]
    assert names == ["Big", "Neg", "add", "mul", "zlog"]


# -- program 3: ProfilerHook files, the Profiler class and run-time profiles ------------
def test_profiler_hook_files_and_profiler_class_over_traced_steps(tmp_path):
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(7)
        x = tf.constant(np.linspace(0, 1, 32).reshape(8, 4).astype(np.float32))
        y = tf.constant(np.arange(8).reshape(8, 1).astype(np.float32) / 8)
        with tf.name_scope("model"):
            w = tf.Variable(tf.random_normal([4, 1], seed=1), name="w")
            b = tf.Variable(0.0, name="b")
            pred = tf.matmul(x, w) + b
        loss = tf.losses.mean_squared_error(y, pred)
        gs = tf.train.get_or_create_global_step()
        train = tf.train.AdamOptimizer(0.1).minimize(loss, global_step=gs)
        hook = tf.train.ProfilerHook(save_steps=2, output_dir=str(tmp_path),
                                     show_memory=True)
        losses = []
        with tf.train.MonitoredTrainingSession(
                hooks=[hook], save_checkpoint_secs=None, save_summaries_steps=None,
                log_step_count_steps=None) as sess:
            for _ in range(5):
                _, lv = sess.run([train, loss])
                losses.append(round(float(lv), 5))
        assert losses == [0.00057, 0.09518, 0.00648, 0.02107, 0.05444]
        files = sorted(os.listdir(tmp_path))
        assert [f for f in files if not f.startswith("events")] == [
            "timeline-2.json", "timeline-4.json"]
        trace = json.load(open(tmp_path / "timeline-2.json"))
        assert sorted(trace) == ["traceEvents"]
        assert {"C", "D", "M", "N", "O", "X"} <= {e["ph"] for e in trace["traceEvents"]}
        tf.summary.FileWriterCache.clear()
        events = next(f for f in files if f.startswith("events"))
        tags = [e.tagged_run_metadata.tag
                for e in tf.train.summary_iterator(str(tmp_path / events))
                if e.HasField("tagged_run_metadata")]
        assert tags == ["step_2", "step_4"]

        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            prof = tf.profiler.Profiler(sess.graph)
            for step in range(2):
                md = tf.RunMetadata()
                sess.run(train, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                         run_metadata=md)
                prof.add_step(step, md)
        builder = tf.profiler.ProfileOptionBuilder
        r = prof.profile_name_scope(
            builder(builder.trainable_variables_parameter()).with_empty_output().build())
        assert (type(r).__name__, r.name, r.total_parameters, [c.name for c in r.children]) \
            == ("GraphNodeProto", "_TFProfRoot", 5, ["model"])
        tm = builder(builder.time_and_memory()).with_empty_output().build()
        ops = prof.profile_operations(tm)
        assert (type(ops).__name__, ops.total_exec_micros > 0,
                ops.total_requested_bytes > 0) == ("MultiGraphNodeProto", True, True)
        gr = prof.profile_graph(builder(builder.float_operation()).with_empty_output().build())
        assert type(gr).__name__ == "GraphNodeProto"
        with pytest.raises(TypeError):
            prof.advise()  # pylint: disable=no-value-for-parameter
        advice = prof.advise({"ExpensiveOperationChecker": {},
                              "AcceleratorUtilizationChecker": {}, "JobChecker": {},
                              "OperationChecker": {}})
        assert (type(advice).__name__, sorted(advice.checkers)) == (
            "AdviceProto", ["AcceleratorUtilizationChecker", "ExpensiveOperationChecker",
                            "OperationChecker"])
        one = tf.profiler.profile(g, run_meta=md, cmd="scope", options=tm)
        assert one.total_exec_micros > 0 and one.total_requested_bytes > 0
        assert one.total_run_count > 0
        for field in ("total_cpu_exec_micros", "total_accelerator_exec_micros",
                      "total_peak_bytes", "total_output_bytes", "total_residual_bytes",
                      "run_count", "total_definition_count", "input_shapes",
                      "tensor_value"):
            assert hasattr(one, field), field
        assert {"model", "gradients"} <= {c.name for c in one.children}


def test_time_and_memory_profile_filters_subtrees_and_counts_displayed_nodes():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [64, 64], name="x")
        with tf.name_scope("outer"):
            with tf.name_scope("inner"):
                y = tf.matmul(x, x, name="mm")
            z = tf.nn.relu(y, name="r")
        o = tf.reduce_sum(z, name="total")
        md = tf.RunMetadata()
        with tf.Session() as sess:
            sess.run(o, {x: np.ones((64, 64), np.float32)},
                     options=tf.RunOptions(trace_level=3), run_metadata=md)

    def rows(node, depth=0):
        out = [(depth, node.name, node.requested_bytes, node.total_requested_bytes,
                node.run_count, node.total_definition_count, node.total_float_ops)]
        for c in node.children:
            out += rows(c, depth + 1)
        return out

    tm = rows(tf.profiler.profile(g, run_meta=md, options=_quiet(
        tf.profiler.ProfileOptionBuilder.time_and_memory())))
    # TensorFlow (its Relu forwards its input: 0 bytes; a constant is a traced node):
    # _TFProfRoot 0 16396 0 6 / outer 0 16384 0 3 / outer/inner 0 16384 0 2 /
    # outer/inner/mm 16384 16384 1 1 / total 4 4 1 1 / Const 8 8 1 1
    assert [r[:2] for r in tm[:4]] == [(0, "_TFProfRoot"), (1, "outer"), (2, "outer/inner"),
                                       (3, "outer/inner/mm")]
    assert tm[3][2:] == (16384, 16384, 1, 1, 524288)
    assert tm[2][2:6] == (0, 16384, 0, 2)
    assert (1, "total", 4, 4, 1, 1, 4095) in tm
    fl = rows(tf.profiler.profile(g, run_meta=md, options=_flops_opts()))
    assert fl == [(0, "_TFProfRoot", 0, 16388, 0, 3, 528383),
                  (1, "outer/inner/mm", 16384, 16384, 1, 1, 524288),
                  (1, "total", 4, 4, 1, 1, 4095)]
    op = tf.profiler.profile(g, run_meta=md, cmd="op", options=_quiet(
        tf.profiler.ProfileOptionBuilder.time_and_memory()))
    assert op.children[0].name == "MatMul" and op.children[0].requested_bytes == 16384


def test_report_written_to_a_file_holds_the_analysis_only(tmp_path):
    g = tf.Graph()
    with g.as_default():
        x = tf.ones([8, 4])
        w = tf.Variable(tf.ones([4, 2]), name="w")
        with tf.name_scope("s"):
            tf.matmul(x, w) + 1.0
    opts = tf.profiler.ProfileOptionBuilder.float_operation()
    opts["output"] = f"file:outfile={tmp_path / 'flops.txt'}"
    tf.profiler.profile(g, cmd="scope", options=opts)
    assert (tmp_path / "flops.txt").read_text() == (
        "\nDoc:\n"
        "scope: The nodes in the model graph are organized by their names, which is "
        "hierarchical like filesystem.\n"
        "flops: Number of float operations. Note: Please read the implementation for "
        "the math behind it.\n\nProfile:\nnode name | # float_ops\n"
        "_TFProfRoot (--/144 flops)\n  s/MatMul (128/128 flops)\n  s/add (16/16 flops)\n")


def test_advise_reports_the_checkers_asked_for():
    g = tf.Graph()
    with g.as_default():
        tf.matmul(tf.ones([2, 2]), tf.ones([2, 2]))
    assert sorted(tf.profiler.advise(g).checkers) == [
        "AcceleratorUtilizationChecker", "ExpensiveOperationChecker", "OperationChecker"]
    assert sorted(tf.profiler.advise(g, options={"OperationChecker": {}}).checkers) == [
        "OperationChecker"]
    with pytest.raises(TypeError):
        tf.profiler.Profiler(g).advise()  # pylint: disable=no-value-for-parameter


# -- program 5: numerics checks and printing ---------------------------------------------
def test_check_numerics_print_and_registered_statistics(capsys):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [4, 3], name="x")
        with tf.variable_scope("net"):
            w = tf.get_variable("w", [3, 2], initializer=tf.constant_initializer(0.5))
            h = tf.matmul(x, w, name="h")
            lg = tf.log(h, name="lg")
        loss = tf.reduce_mean(lg, name="loss")
        chk = tf.add_check_numerics_ops()
        assert (chk.type, chk.name) == ("NoOp", "group_deps")
        assert sorted(op.name for op in g.get_operations() if op.type == "CheckNumerics") == [
            "CheckNumerics", "CheckNumerics_1", "CheckNumerics_2", "CheckNumerics_3",
            "CheckNumerics_4", "CheckNumerics_5"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            ones = np.ones((4, 3), np.float32)
            assert np.round(sess.run([loss, chk], {x: ones})[0], 5) == 0.40547
            with pytest.raises(tf.errors.InvalidArgumentError):
                sess.run([loss, chk], {x: -ones})
            v = tf.verify_tensor_all_finite(h, "h bad")
            assert (v.op.type, v.name) == ("Identity", "VerifyFinite/control_dependency:0")
            cn = tf.check_numerics(h, "h check", name="cn")
            assert (cn.op.type, cn.name, cn.op.get_attr("message")) == (
                "CheckNumerics", "cn:0", b"h check")
            with pytest.raises(tf.errors.InvalidArgumentError):
                sess.run(cn, {x: np.full((4, 3), np.inf, np.float32)})
            p = tf.Print(h, [h, tf.shape(h)], message="h=", summarize=3, first_n=2, name="pr")
            assert (p.op.type, p.name, p.shape.as_list()) == ("Print", "pr:0", [4, 2])
            capsys.readouterr()
            for _ in range(3):
                sess.run(p, {x: ones})
            assert capsys.readouterr().err.splitlines() == [
                "h=[[1.5 1.5][1.5...]...][4 2]", "h=[[1.5 1.5][1.5...]...][4 2]"]
            po = tf.print("loss:", loss, output_stream=sys.stdout, name="tp")
            assert (po.type, po.name) == ("PrintV2", "tp")
            sess.run(po, {x: ones})
            assert capsys.readouterr().out == "loss: 0.405465096\n"
        mm = g.get_operation_by_name("net/h")
        stats = tf_ops.get_stats_for_node_def(g, mm.node_def, "flops")
        assert (type(stats).__name__, stats.statistic_type, stats.value) == (
            "OpStats", "flops", 48)
        assert tf_ops.get_stats_for_node_def(g, lg.op.node_def, "flops").value == 8
        assert tf_ops.get_stats_for_node_def(
            g, g.get_operation_by_name("net/w").node_def, "flops").value is None


def test_register_statistics_feeds_get_stats_and_the_profiler():
    g = tf.Graph()
    with g.as_default():
        x = tf.ones([4, 2])
        r = tf.nn.elu(tf.matmul(x, tf.ones([2, 2])), name="act")

    @tf_ops.RegisterStatistics("Elu", "flops")
    def _elu_flops(graph, node):
        return tf_ops.OpStats("flops", 7)

    try:
        _check_registered_statistics(g, r, _elu_flops)
    finally:  # the registry is process-wide: leave Elu without a rule again
        op_statistics._REGISTRY.pop("Elu,flops")


def _check_registered_statistics(g, r, _elu_flops):
    assert tf_ops.get_stats_for_node_def(g, r.op.node_def, "flops").value == 7
    # 32 for the MatMul + the registered 7 (TensorFlow: 39)
    assert tf.profiler.profile(g, options=_flops_opts()).total_float_ops == 39
    with pytest.raises(KeyError, match="Registering two statistical functions"):
        tf_ops.RegisterStatistics("MatMul", "flops")(_elu_flops)
    with pytest.raises(TypeError, match="op_type must not contain a comma"):
        tf_ops.RegisterStatistics("A,B", "flops")
    with pytest.raises(TypeError, match="statistic_type must be a string"):
        tf_ops.RegisterStatistics("A", 3)
    total = tf_ops.OpStats("flops", 3)
    total += tf_ops.OpStats("flops", 4)
    assert total.value == 7
    with pytest.raises(ValueError, match="Can't add an OpStat of type flops to one of x"):
        total += tf_ops.OpStats("x", 2)
    assert tf_ops.get_stats_for_node_def(g, r.op.node_def, "weight_parameters").value \
        is None
    with g.as_default():
        unknown = tf.matmul(tf.placeholder(tf.float32, [None, 3]), tf.ones([3, 2]))
    with pytest.raises(ValueError, match=r"Shape \(\?, 3\) is not fully defined"):
        tf_ops.get_stats_for_node_def(g, unknown.op.node_def, "flops")


# -- program 6: inspecting a graph -------------------------------------------------------
def test_graph_inspection_of_a_small_autoencoder():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        with tf.name_scope("enc"):
            h = tf.nn.relu(tf.layers.dense(x, 4, name="d1"))
        with tf.name_scope("dec"):
            y = tf.layers.dense(h, 2, name="d2")
        ops = g.get_operations()
        assert sorted(o.name for o in ops if o.name.startswith("enc/")) == [
            "enc/Relu", "enc/d1/BiasAdd", "enc/d1/MatMul"]
        assert sorted(c.name for c in h.consumers()) == ["dec/d2/MatMul"]
        assert [t.name for t in y.op.inputs] == ["dec/d2/MatMul:0", "d2/bias/read:0"]
        assert [t.name for t in g.get_operation_by_name("enc/d1/MatMul").outputs] == [
            "enc/d1/MatMul:0"]
        assert g.get_tensor_by_name("dec/d2/BiasAdd:0").shape.as_list() == [None, 2]
        gd = g.as_graph_def()
        assert (len(gd.node), gd.node[0].name, gd.node[0].op) == (len(ops), "x", "Placeholder")
        assert sorted(gd.node[0].attr.keys()) == ["dtype", "shape"]
        assert (g.unique_name("enc"), g.unique_name("foo")) == ("enc_1", "foo")
        assert [n.name for n in gd.node if n.op == "MatMul"] == ["enc/d1/MatMul",
                                                                 "dec/d2/MatMul"]
        assert y.op.colocation_groups() == [b"loc:@dec/d2/BiasAdd"]
        assert g.get_operation_by_name("enc/d1/MatMul").get_attr("transpose_a") is False
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(y, {x: np.ones((2, 3))}).shape == (2, 2)


# -- programs 7 and 8: tfdbg dumps without a terminal ------------------------------------
def test_dumping_wrapper_session_and_dump_dir_find_the_nan(tmp_path):
    from flowgraph.python import debug as tf_debug

    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        w = tf.Variable([1.0, 2.0], name="w")
        y = tf.log(x * w, name="y")
        with tf.Session() as s:
            s.run(w.initializer)
            sess = tf_debug.DumpingDebugWrapperSession(s, str(tmp_path))
            assert all(hasattr(sess, a) for a in ("run", "graph", "sess_str", "close"))
            out = sess.run(y, {x: [1.0, -1.0]})
    assert np.isnan(out[1]) and out[0] == 0.0
    runs = sorted(os.listdir(tmp_path))
    assert len(runs) == 1 and runs[0].startswith("run_")
    run_dir = tmp_path / runs[0]
    assert any(n.startswith("_tfdbg_core_metadata_sessionrun") for n in os.listdir(run_dir))
    assert "_tfdbg_device_,job_localhost,replica_0,task_0,device_CPU_0" in os.listdir(run_dir)
    dump = tf_debug.DebugDumpDir(str(run_dir))
    # TensorFlow 2.15 dumps the feed as its _Arg node '_arg_x_0_0'
    assert dump.size == 5
    assert sorted({d.node_name for d in dump.dumped_tensor_data}) == [
        "mul", "w", "w/read", "x", "y"]
    assert {d.debug_op for d in dump.dumped_tensor_data} == {"DebugIdentity"}
    np.testing.assert_array_equal(dump.get_tensors("y", 0, "DebugIdentity")[0],
                                  np.array([0.0, np.nan], np.float32))
    assert [(d.node_name, d.output_slot) for d in dump.find(tf_debug.has_inf_or_nan)] == [
        ("y", 0)]
    datum = dump.dumped_tensor_data[0]
    for field in ("node_name", "output_slot", "debug_op", "timestamp", "file_path",
                  "dump_size_bytes", "device_name", "watch_key", "tensor_name"):
        assert hasattr(datum, field), field
    assert dump.devices() == ["/job:localhost/replica:0/task:0/device:CPU:0"]
    assert dump.run_fetches_info == "<tf.Tensor 'y:0' shape=(2,) dtype=float32>"
    assert dump.run_feed_keys_info == \
        "dict_keys([<tf.Tensor 'x:0' shape=(2,) dtype=float32>])"
    assert (dump.node_op_type("y"), dump.node_inputs("y")) == ("Log", ["mul"])


def test_dumping_debug_hook_under_monitored_session(tmp_path):
    from flowgraph.python import debug as tf_debug
    from flowgraph.python.debug.lib import debug_data

    g = tf.Graph()
    with g.as_default():
        x = tf.constant([[1.0, 2.0], [3.0, 4.0]], name="x")
        with tf.variable_scope("lin"):
            w = tf.get_variable("w", [2, 1], initializer=tf.ones_initializer())
            pred = tf.matmul(x, w, name="pred")
        loss = tf.reduce_mean(tf.square(pred - 1.0), name="loss")
        gs = tf.train.get_or_create_global_step()
        train = tf.train.GradientDescentOptimizer(0.01).minimize(loss, global_step=gs)
        losses = []
        with tf.train.MonitoredSession(hooks=[tf_debug.DumpingDebugHook(str(tmp_path))]) \
                as sess:
            for _ in range(2):
                losses.append(round(float(sess.run([loss, train])[0]), 5))
    assert losses == [20.0, 9.928]
    runs = sorted(os.listdir(tmp_path))
    assert len(runs) == 2
    dump = debug_data.DebugDumpDir(str(tmp_path / runs[-1]))
    names = {d.node_name for d in dump.dumped_tensor_data}
    assert {"loss", "lin/pred", "lin/w", "x", "global_step"} <= names
    # TensorFlow: [2.240000009536743, 5.28000020980835] (float32)
    assert dump.get_tensors("lin/pred", 0, "DebugIdentity")[0].ravel().tolist() == [
        2.240000009536743, 5.28000020980835]
    assert np.isclose(dump.get_tensors("loss", 0, "DebugIdentity")[0], 9.928)
    assert dump.find(tf_debug.has_inf_or_nan) == []
    with pytest.raises(debug_data.WatchKeyDoesNotExistInDebugDumpDirError,
                       match='Watch key "nope:0:DebugIdentity" does not exist'):
        dump.get_tensors("nope", 0, "DebugIdentity")
    with pytest.raises(OSError):
        tf_debug.DebugDumpDir(str(tmp_path / "missing"))
    (tmp_path / "afile").write_text("")
    with pytest.raises(ValueError, match="session_root path points to a file"):
        tf_debug.DumpingDebugWrapperSession(None, str(tmp_path / "afile"))
