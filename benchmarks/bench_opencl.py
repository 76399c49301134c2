"""The OpenCL backend's kernels and a small model against NumPy, on the first OpenCL device.

Usage::

    python benchmarks/bench_opencl.py            # every workload (about a minute on PoCL)
    python benchmarks/bench_opencl.py gemm_1024 add_16M

One JSON line per workload (the format of benchmarks/run.py). Each device figure is the
backend's kernel as an op calls it (argument checks, output from the device's pool,
enqueue) issued `number` times between two ``queue.finish()`` calls, so it includes
enqueueing and the device's work but no copy to or from the host; the reference is the
same work in NumPy in the same process (into preallocated outputs), the repeats of the
two interleaved and the best repeat of each kept (the machine is shared: other processes'
load only ever slows a repeat down).

* ``gemm_<n>``: MatMul of two n x n float32 matrices vs ``np.matmul(out=)`` (OpenBLAS);
  figures in GFLOP/s (higher is better, so ``ratio`` = flowgraph / NumPy in speed);
  target at 1024: >= 0.8 x OpenBLAS.
* ``add_<n>``: Add of two float32 vectors vs ``np.add(out=)``; GB/s moved (3 x 4n bytes);
  target at >= 1M elements: >= 1.0 x NumPy.
* ``sum_<n>``: Sum over all elements vs ``np.sum``; GB/s read.
* ``softmax_256x1000``: Softmax over the last axis vs the NumPy expression; ms.
* ``mlp_step_opencl``: one Adam training step of the same MLP built under
  ``tf.device('/gpu:0')`` (variables and updates on the device) vs the CPU backend; target
  on PoCL <= 1.5x the CPU backend's time, on a GPU >= 5x faster.
* ``placement_mixed``: a big MatMul feeding a chain of scalar ops, placed by the cost
  model vs all-CPU vs all-device; target: no slower than the better of the two. On PoCL
  the cost model leaves the CPU-type device out by default, so the line also reports
  the model with it opted in (``cost_opted_in``).
* ``host_per_node_opencl``: host time per launched device node: a chain of 200 Add/Mul
  ops on 64 floats under ``tf.device('/gpu:0')`` with fusion and arithmetic rewrites off
  (``RewriterConfig(remapping=OFF)``), so each op is one node and one kernel whose device
  work is negligible. ``flowgraph``: the median traced host time of a launched node (the
  executor thread's time in the node's kernel, from lookup to the enqueue returning; µs);
  ``reference``: the same chain on the CPU backend; ``wall_us_per_node``: (step time of
  the chain - step time of an empty chain) / 200 on the device, which on PoCL includes the
  device's own per-kernel cost on the same cores.
* ``mlp_forward_opencl``: ``sess.run`` of a 784-512-512-10 ReLU MLP's logits (batch 256, fed
  from NumPy) with the layers under ``tf.device('/gpu:0')`` vs the same graph on the CPU
  backend; ms per run, so ``ratio`` = OpenCL / CPU in time.
"""

from __future__ import annotations

import gc
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np
import run  # benchmarks/run.py: emit, blas_info

import flowgraph as tf

perf_counter = time.perf_counter
# After a call, OpenBLAS's worker threads spin for a while before sleeping; a device batch
# started then shares the cores with them (PoCL runs on the same CPU): measured at 1024,
# 150 GFLOP/s right after np.matmul against 210 after a 0.1 s pause. So the workloads where
# the reference uses BLAS sleep this long after each batch, on both sides.
SETTLE = 0.1


def _runtime():
    from flowgraph.backends.opencl._runtime import discover

    found = discover()
    return found[0] if found else None


def best_times(fns: dict, repeat: int, warmup: int = 2, settle: float = 0.0) -> dict:
    """Best time of one call of each batch callable; repeats interleaved across them, with
    `settle` seconds of sleep after each batch (see `SETTLE`)."""
    for fn in fns.values():
        for _ in range(warmup):
            fn()
    times: dict = {k: [] for k in fns}
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeat):
            for k, fn in fns.items():
                t0 = perf_counter()
                fn()
                times[k].append(perf_counter() - t0)
                if settle:
                    time.sleep(settle)
    finally:
        gc.enable()
    return {k: min(v) for k, v in times.items()}


def on_device(rt, fn, number: int):
    """A batch callable: `fn` enqueued `number` times between two queue.finish() calls;
    its time divided by `number` is the per-call figure."""

    def batch():
        rt.queue.finish()
        for _ in range(number):
            fn()
        rt.queue.finish()

    return batch


def on_host(fn, number: int):
    def batch():
        for _ in range(number):
            fn()

    return batch


def _number(seconds_per_call: float, budget: float = 0.05) -> int:
    return max(1, int(budget / max(seconds_per_call, 1e-7)))


def _pair(rt, dev_fn, np_fn, repeat: int, budget: float = 0.05, settle: float = 0.0):
    """(device, NumPy) best seconds per call."""
    t0 = perf_counter()
    np_fn()
    est = perf_counter() - t0
    dev_fn()
    rt.queue.finish()
    n = _number(est, budget)
    t = best_times({"dev": on_device(rt, dev_fn, n), "np": on_host(np_fn, n)}, repeat,
                   settle=settle)
    return t["dev"] / n, t["np"] / n, n


def _notes(rt, n, repeat, *more, settle: float = 0.0):
    pause = f", {settle} s pause after each batch (OpenBLAS's spinning workers)" if settle \
        else ""
    return [*more, f"device: {rt.name} ({rt.platform}); best of {repeat} repeats x {n} calls, "
            f"interleaved with NumPy{pause} (shared machine: best repeat kept)"]


# -- workloads ---------------------------------------------------------------------------
def bench_gemm(rt, blas, n: int, repeat: int = 7):
    from flowgraph.backends.opencl import kernels_nn

    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((n, n), dtype=np.float32) for _ in range(2))
    da, db = rt.to_device(a), rt.to_device(b)
    got = kernels_nn.matmul(da, db).get()
    want = np.empty((n, n), np.float32)
    np.matmul(a, b, out=want)
    err = float(np.max(np.abs(got - want)) / np.max(np.abs(want)))
    if not err < 1e-4:
        raise AssertionError(f"gemm_{n}: OpenCL MatMul differs from NumPy (rel. err {err:.1e})")
    dev, ref, number = _pair(rt, lambda: kernels_nn.matmul(da, db),
                             lambda: np.matmul(a, b, out=want), repeat, 0.1, SETTLE)
    flops = 2.0 * n ** 3
    fg, np_ = flops / dev / 1e9, flops / ref / 1e9
    target = 0.8 if n == 1024 else None
    form = ("packed panels (CPU form)" if kernels_nn._cpu_shaped(rt, np.dtype(np.float32))
            else "tiled (GPU form)")
    return run.emit(
        f"gemm_{n}", "GFLOP/s", fg, np_, "ratio >= 0.8 (OpenBLAS)" if target else None,
        (fg / np_ >= target) if target else None,
        _notes(rt, number, repeat, f"float32 {n}x{n} @ {n}x{n}, MatMul kernel ({form}, "
               "packing included) vs np.matmul(out=)", f"max rel. err {err:.1e}",
               settle=SETTLE),
        blas, ms={"flowgraph": run._round(dev * 1e3), "numpy": run._round(ref * 1e3)})


def _kernel(op_type):
    from flowgraph.backends.opencl import backend

    return backend.find_kernel(op_type, tf.float32).fn


def bench_add(rt, blas, n: int, label: str, repeat: int = 7):
    add = _kernel("Add")
    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal(n, dtype=np.float32) for _ in range(2))
    out = np.empty_like(x)
    dx, dy = rt.to_device(x), rt.to_device(y)
    np.testing.assert_array_equal(add(dx, dy).get(), x + y)
    dev, ref, number = _pair(rt, lambda: add(dx, dy), lambda: np.add(x, y, out=out), repeat)
    moved = 3 * 4 * n / 1e9
    target = 1.0 if n >= 1 << 20 else None
    fg, np_ = moved / dev, moved / ref
    return run.emit(
        f"add_{label}", "GB/s", fg, np_, "ratio >= 1.0 (NumPy)" if target else None,
        (fg / np_ >= target) if target else None,
        _notes(rt, number, repeat, f"float32 x + y, {n} elements, Add kernel (output from "
               "the device pool) vs np.add(out=); GB/s = 12 bytes per element / time"),
        blas, us={"flowgraph": run._round(dev * 1e6), "numpy": run._round(ref * 1e6)})


def bench_sum(rt, blas, n: int, label: str, repeat: int = 7):
    from flowgraph.backends.opencl import kernels_reduce

    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, n).astype(np.float32)
    dx = rt.to_device(x)

    def dev_sum():
        return kernels_reduce.reduce(rt, dx, (0,), "sum", False, False, "Sum")

    got, want = float(dev_sum().get()), float(np.sum(x, dtype=np.float64))
    if not abs(got - want) <= 1e-5 * want:
        raise AssertionError(f"sum_{label}: {got} vs {want}")
    dev, ref, number = _pair(rt, dev_sum, lambda: np.sum(x), repeat)
    fg, np_ = 4 * n / 1e9 / dev, 4 * n / 1e9 / ref
    return run.emit(
        f"sum_{label}", "GB/s", fg, np_, None, None,
        _notes(rt, number, repeat, f"float32 Sum over all {n} elements (reduction passes) vs "
               "np.sum; GB/s = 4 bytes per element / time"),
        blas, us={"flowgraph": run._round(dev * 1e6), "numpy": run._round(ref * 1e6)})


def bench_softmax(rt, blas, repeat: int = 7):
    from flowgraph.backends.opencl import kernels_softmax

    rng = np.random.default_rng(0)
    x = rng.standard_normal((256, 1000), dtype=np.float32) * 4
    dx = rt.to_device(x)

    def np_softmax():
        z = x - x.max(axis=1, keepdims=True)
        np.exp(z, out=z)
        z /= z.sum(axis=1, keepdims=True)
        return z

    np.testing.assert_allclose(kernels_softmax.softmax(dx).get(), np_softmax(), rtol=1e-5,
                               atol=1e-7)
    dev, ref, number = _pair(rt, lambda: kernels_softmax.softmax(dx), np_softmax, repeat)
    return run.emit(
        "softmax_256x1000", "ms", dev * 1e3, ref * 1e3, None, None,
        _notes(rt, number, repeat, "float32 [256, 1000], last axis; NumPy: max, subtract, "
               "exp, sum, divide; ratio = time / NumPy's time"), blas)


def _chain_session(device: str | None, length: int, config):
    """A chain of `length` alternating Add/Mul ops of float32[64] values on `device`."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [64], name="x")
        with tf.device(device):
            a = tf.identity(x) * 0.5
            y = a
            for i in range(length):
                y = (y + a) if i % 2 == 0 else (y * a)
    return tf.Session(graph=graph, config=config), x, y


def _traced_host_us(sess, x, y, xs, runs: int = 5) -> float:
    """Median traced time (µs, from the nanosecond fields) of the chain's Add/Mul nodes,
    over `runs` traced steps."""
    durations = []
    for _ in range(runs):
        md = tf.RunMetadata()
        sess.run(y, {x: xs}, run_metadata=md,
                 options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE))
        durations += [n.all_end_rel_nanos / 1e3 for d in md.step_stats.dev_stats
                      for n in d.node_stats if n.op_type in ("Add", "Mul")]
    return float(np.median(durations))


def bench_host_per_node(rt, blas, length: int = 200, number: int = 10, repeat: int = 7):
    from flowgraph.runtime.config import GraphOptions, RewriterConfig

    rw = RewriterConfig(remapping=RewriterConfig.OFF,
                        arithmetic_optimization=RewriterConfig.OFF)
    unfused = tf.ConfigProto(allow_soft_placement=True,
                             graph_options=GraphOptions(rewrite_options=rw))
    cpu_only = tf.ConfigProto(device_count={"GPU": 0},
                              graph_options=GraphOptions(rewrite_options=rw))
    xs = np.random.default_rng(0).uniform(1, 2, 64).astype(np.float32)
    sessions = {"gpu": _chain_session("/gpu:0", length, unfused),
                "gpu_empty": _chain_session("/gpu:0", 0, unfused),
                "cpu": _chain_session(None, length, cpu_only)}
    try:
        got, want = (sessions[k][0].run(sessions[k][2], {sessions[k][1]: xs})
                     for k in ("gpu", "cpu"))
        np.testing.assert_allclose(got, want, rtol=1e-4)
        host = {k: _traced_host_us(*sessions[k], xs) for k in ("gpu", "cpu")}
        t = best_times({k: on_host(lambda v=v: v[0].run(v[2], {v[1]: xs}), number)
                        for k, v in sessions.items()}, repeat)
    finally:
        for v in sessions.values():
            v[0].close()
    wall = (t["gpu"] - t["gpu_empty"]) / number / length * 1e6
    return run.emit(
        "host_per_node_opencl", "us/node", host["gpu"], host["cpu"], None, None,
        _notes(rt, number, repeat,
               f"a chain of {length} Add/Mul ops on float32[64] under tf.device('/gpu:0'), "
               "fusion and arithmetic rewrites off: median traced host time of a launched "
               "node (kernel lookup to the enqueue returning) vs the same chain on the CPU "
               f"backend; wall time per device node {wall:.2f} us (step minus an empty "
               "chain's step, over the nodes)"), blas,
        wall_us_per_node=run._round(wall))


def _mlp_graph(device: str):
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(0)
        x = tf.placeholder(tf.float32, [None, 784], name="x")
        init = tf.glorot_uniform_initializer(seed=0)
        weights = [(tf.Variable(init([i, o]), name=f"w{k}"),
                    tf.Variable(tf.zeros([o]), name=f"b{k}"))
                   for k, (i, o) in enumerate([(784, 512), (512, 512), (512, 10)])]
        h = x
        with tf.device(device):
            for k, (w, b) in enumerate(weights):
                h = tf.nn.bias_add(tf.matmul(h, w), b)
                if k < 2:
                    h = tf.nn.relu(h)
        init_op = tf.global_variables_initializer()
    sess = tf.Session(graph=graph, config=tf.ConfigProto(allow_soft_placement=True))
    sess.run(init_op)
    return sess, x, h


def bench_mlp_forward(rt, blas, number: int = 5, repeat: int = 7):
    xs = np.random.default_rng(0).uniform(0, 1, (256, 784)).astype(np.float32)
    gpu_sess, gx, glogits = _mlp_graph("/gpu:0")
    cpu_sess, cx, clogits = _mlp_graph("/cpu:0")
    try:
        md = tf.RunMetadata()
        got = gpu_sess.run(glogits, {gx: xs}, run_metadata=md,
                           options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE))
        on_gpu = sum(1 for d in md.step_stats.dev_stats if "GPU:0" in d.device
                     for n in d.node_stats if not n.node_name.startswith("_"))
        want = cpu_sess.run(clogits, {cx: xs})
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
        t = best_times({"gpu": on_host(lambda: gpu_sess.run(glogits, {gx: xs}), number),
                        "cpu": on_host(lambda: cpu_sess.run(clogits, {cx: xs}), number)},
                       repeat, settle=SETTLE)
    finally:
        gpu_sess.close()
        cpu_sess.close()
    fg, ref = t["gpu"] / number * 1e3, t["cpu"] / number * 1e3
    return run.emit(
        "mlp_forward_opencl", "ms/run", fg, ref, None, None,
        _notes(rt, number, repeat,
               "sess.run(logits) of a 784-512-512-10 ReLU MLP, batch 256 fed from NumPy, "
               "float32; MatMul/BiasAdd/Relu under tf.device('/gpu:0') (variables stay on "
               f"the CPU and are copied in each run; {on_gpu} nodes ran on GPU:0) vs the "
               "same graph on the CPU backend; ratio = OpenCL time / CPU time",
               "outputs agree (rtol 1e-4)", settle=SETTLE), blas)


def _mlp_step_graph(device: str | None, config):
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(0)
        x = tf.placeholder(tf.float32, [None, 784], name="x")
        y = tf.placeholder(tf.int64, [None], name="y")
        with tf.device(device):
            h = tf.layers.dense(x, 512, tf.nn.relu)
            h = tf.layers.dense(h, 512, tf.nn.relu)
            logits = tf.layers.dense(h, 10)
            loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
            train = tf.train.AdamOptimizer(1e-3).minimize(loss)
        init = tf.global_variables_initializer()
    sess = tf.Session(graph=graph, config=config)
    sess.run(init)
    return sess, x, y, train, loss


def bench_mlp_step(rt, blas, number: int = 5, repeat: int = 7):
    rng = np.random.default_rng(0)
    xs = rng.uniform(0, 1, (256, 784)).astype(np.float32)
    ys = rng.integers(0, 10, 256)
    soft = tf.ConfigProto(allow_soft_placement=True)
    gpu = _mlp_step_graph("/gpu:0", soft)
    cpu = _mlp_step_graph(None, tf.ConfigProto(device_count={"GPU": 0}))
    try:
        for sess, x, y, train, _ in (gpu, cpu):
            for _ in range(3):
                sess.run(train, {x: xs, y: ys})
        sess, x, y, train, _ = gpu
        host, placed = _traced_step_host(lambda **kw: sess.run(train, {x: xs, y: ys}, **kw))
        t = best_times({name: on_host(lambda s=s: s[0].run(s[3], {s[1]: xs, s[2]: ys}), number)
                        for name, s in (("gpu", gpu), ("cpu", cpu))}, repeat, settle=SETTLE)
    finally:
        gpu[0].close()
        cpu[0].close()
    fg, ref = t["gpu"] / number * 1e3, t["cpu"] / number * 1e3
    top = ", ".join(f"{op} {us:.1f}x{n}" for op, us, n in host["top"])
    target = "ratio <= 1.5 (CPU backend)" if not rt.is_gpu else "ratio <= 0.2 (5x faster)"
    met = fg / ref <= (1.5 if not rt.is_gpu else 0.2)
    return run.emit(
        "mlp_step_opencl", "ms/step", fg, ref, target, met,
        _notes(rt, number, repeat,
               "one Adam training step of a 784-512-512-10 ReLU MLP (tf.layers, sparse "
               "softmax cross-entropy), batch 256 fed from NumPy, float32, built under "
               f"tf.device('/gpu:0') (nodes per device: {placed}) vs the same model on the "
               "CPU backend; ratio = OpenCL time / CPU time",
               "traced_host_us: median over traced steps of the summed host time of the "
               "device's nodes, transfers (_Send/_Recv) left out; top_host_nodes: op, median "
               f"us per node x nodes per step: {top}; transfer nodes per step: "
               f"{host['moves']}", settle=SETTLE), blas,
        traced_host_us=run._round(host["total"]))


def _traced_step_host(step, runs: int = 7):
    """({"total": median traced host µs per step of the GPU's nodes without transfers,
    "top": the 6 costliest op types as (op, median µs, nodes per step), "moves": the
    transfer nodes of a step as {op type: count}}, nodes placed per device) over `runs`
    traced calls of ``step(run_metadata=, options=)``."""
    totals, per_op, placed, moves = [], {}, {}, {}
    for _ in range(runs):
        md = tf.RunMetadata()
        step(run_metadata=md, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE))
        total = 0.0
        moves = {}
        for d in md.step_stats.dev_stats:
            for n in d.node_stats:
                if n.op_type in ("_Send", "_Recv", "_ToDevice"):
                    moves[n.op_type] = moves.get(n.op_type, 0) + 1
            device = d.device.rsplit("device:", 1)[-1]
            placed[device] = sum(1 for n in d.node_stats if not n.node_name.startswith("_"))
            if not device.startswith("GPU"):
                continue
            for n in d.node_stats:
                if n.op_type in ("_Send", "_Recv"):
                    continue
                us = n.all_end_rel_nanos / 1e3
                total += us
                per_op.setdefault(n.op_type, []).append(us)
        totals.append(total)
    top = sorted(((op, float(np.median(v)), len(v) // runs) for op, v in per_op.items()),
                 key=lambda r: -r[1] * r[2])[:6]
    return {"total": float(np.median(totals)), "top": top, "moves": moves}, placed


def _mixed_graph(mode: str):
    """A 1024-square MatMul feeding a chain of 40 scalar ops; placed all on the CPU,
    all on the device, or by the cost model."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 1024], name="x")
        w = tf.constant(np.random.default_rng(1).standard_normal((1024, 1024), np.float32)
                        / 32)
        with tf.device("/gpu:0" if mode == "device" else None):
            s = tf.reduce_mean(tf.matmul(tf.nn.relu(tf.matmul(x, w)), w))
            for _ in range(40):
                s = tf.sin(s) * 0.5 + 0.25
    config = tf.ConfigProto(allow_soft_placement=True, device_count={"GPU": 0} if
                            mode == "cpu" else None)
    return tf.Session(graph=graph, config=config), x, s


def _placed_types(sess, x, s, xs) -> dict:
    md = tf.RunMetadata()
    sess.run(s, {x: xs}, run_metadata=md,
             options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE))
    return {d.device.rsplit("device:", 1)[-1]: sorted({
        sess.graph.get_operation_by_name(n.node_name).type for n in d.node_stats
        if not n.node_name.startswith("_")}) for d in md.step_stats.dev_stats}


def bench_placement(rt, blas, number: int = 5, repeat: int = 7):
    """On a CPU-type device (PoCL) the cost model leaves the device out by default (see
    runtime/placement.py), so "cost" equals all-CPU there, and "cost_opted_in" is the
    model with `OpenCLBackend.auto_place_cpu_devices` on; on a GPU both decide by cost."""
    from flowgraph.backends.opencl import OpenCLBackend

    xs = np.random.default_rng(0).standard_normal((1024, 1024)).astype(np.float32)
    sessions = {}
    try:
        for mode in ("cpu", "device", "cost", "cost_opted_in"):
            OpenCLBackend.auto_place_cpu_devices = mode == "cost_opted_in"
            sess, x, s = _mixed_graph(mode)  # devices are listed when the session starts
            sessions[mode] = (sess, x, s)
        values = {m: float(v[0].run(v[2], {v[1]: xs})) for m, v in sessions.items()}
        for m in values:
            if abs(values[m] - values["cpu"]) > 1e-3 * max(1.0, abs(values["cpu"])):
                raise AssertionError(f"placement {m}: {values[m]} vs all-CPU {values['cpu']}")
        placed = {m: _placed_types(*sessions[m], xs) for m in ("cost", "cost_opted_in")}
        t = best_times({m: on_host(lambda v=v: v[0].run(v[2], {v[1]: xs}), number)
                        for m, v in sessions.items()}, repeat, settle=SETTLE)
    finally:
        OpenCLBackend.auto_place_cpu_devices = False
        for v in sessions.values():
            v[0].close()
    ms = {m: t[m] / number * 1e3 for m in t}
    best = min(ms["cpu"], ms["device"])
    return run.emit(
        "placement_mixed", "ms/run", ms["cost"], best,
        "ratio <= 1.0 (the better of all-CPU and all-device)", ms["cost"] <= best * 1.05,
        _notes(rt, number, repeat,
               "x[1024,1024] @ W, relu, @ W, mean, then 40 scalar sin/mul/add ops: placed "
               f"by the cost model ({placed['cost']}) vs all-CPU ({ms['cpu']:.3f} ms) and "
               f"all-device ({ms['device']:.3f} ms); ratio = cost / better of the two "
               "(met within 5 %: the host's noise); with CPU-type OpenCL devices opted in "
               f"({placed['cost_opted_in']}): {ms['cost_opted_in']:.3f} ms",
               settle=SETTLE), blas,
        ms={k: run._round(v) for k, v in ms.items()})


WORKLOADS = {
    **{f"gemm_{n}": (bench_gemm, (n,)) for n in (256, 512, 1024, 2048)},
    **{f"add_{k}": (bench_add, (n, k)) for k, n in
       (("1K", 1 << 10), ("64K", 1 << 16), ("1M", 1 << 20), ("16M", 1 << 24),
        ("64M", 1 << 26))},
    **{f"sum_{k}": (bench_sum, (n, k)) for k, n in (("1M", 1 << 20), ("16M", 1 << 24))},
    "softmax_256x1000": (bench_softmax, ()),
    "host_per_node_opencl": (bench_host_per_node, ()),
    "mlp_forward_opencl": (bench_mlp_forward, ()),
    "mlp_step_opencl": (bench_mlp_step, ()),
    "placement_mixed": (bench_placement, ()),
}


def main(argv: list[str]) -> int:
    names = argv or list(WORKLOADS)
    unknown = [n for n in names if n not in WORKLOADS]
    if unknown:
        print(f"unknown workload(s) {unknown}; choose from {list(WORKLOADS)}", file=sys.stderr)
        return 2
    rt = _runtime()
    if rt is None:  # a line saying so, not a failure (run.py all runs every suite)
        print(json.dumps({"name": "opencl", "skipped": "no usable OpenCL device (install "
                          "pyopencl and an OpenCL driver such as PoCL)"}), flush=True)
        return 0
    np.matmul(np.ones((64, 64)), np.ones((64, 64)))  # load BLAS before blas_info
    blas = run.blas_info()
    for name in names:
        fn, args = WORKLOADS[name]
        fn(rt, blas, *args)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
