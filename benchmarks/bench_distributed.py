"""Distributed training on loopback: parameter-server clusters against one process.

    python benchmarks/bench_distributed.py [--steps N] [--only small,heavy,sync,estimator]
                                           [--transport direct|grpc]

One JSON line per measurement (issue 14's table; TensorFlow 2.15's figures on this
machine, from the issue, are in ``tf_2_15``):

| name | what | target |
| --- | --- | --- |
| ``dist_<model>_one_process`` | global steps/s of a plain ``Session`` loop | - |
| ``dist_<model>_1w_1ps`` | 1 trainer + 1 ps, async | small ≥ 0.6x, heavy ≥ 0.9x one process |
| ``dist_<model>_2w_1ps`` | 2 trainers + 1 ps, async | ≥ 1.8x one trainer (RPC-bound) |
| ``dist_launch_to_step`` | seconds from launch until every trainer stepped | ≤ 3 s |
| ``dist_sync_vs_async`` | SyncReplicasOptimizer vs async, 2 trainers, same global batch | ≥ 0.9x |
| ``dist_sync_vs_async_heavy`` | the same on the heavy MLP (compute-bound steps) | ≥ 0.9x |
| ``dist_estimator`` | DNNClassifier ps + chief + worker vs one process, wall time | ≤ 1.2x |
| ``scaling_inputs_<model>`` | compute s/step, bytes/step, RPC latency (scaling_model.py) | - |

Models: ``small`` is a 64-128-64-10 MLP on the digits (batch 64), ``heavy`` a
784-1024-1024-10 MLP on random data (batch 256); plain SGD, a placeholder feed per
step. Every cluster is started with `flowgraph.distributed.launch.run_cluster` (one
process per task, free loopback ports); this script is also the tasks' program
(``--task``). The trainers start stepping together (a counter on the ps, so that their
runs overlap however long each took to start). A trainer samples ``(time, global
step)`` and its process CPU time after each step (``trainer_cpu_us_per_step``: less
noisy than rates on shared cores), and the chief asks the ps for its process CPU time
after warm-up and at the end (``ps_cpu_us_per_step``, per global step;
`TaskService.GetStatus`); the global
rate is measured over the window in which every trainer had done its warm-up steps
and none had finished. "Same global batch" for sync vs async: every update averages the
model's batch (sync: 2 trainers x half of it, aggregated; async: each trainer's own).

Step calls travel on the data plane (`flowgraph.distributed.direct`) unless
``--transport grpc`` (``FLOWGRAPH_RPC_TRANSPORT=grpc`` for every task) sends them
through gRPC, as before it existed; every line names the transport.

The scaling model's inputs: compute = one process's step time; bytes per step = the
parameters pulled plus the gradients pushed (2 x float32 parameters); the per-step RPC
overhead of 1 trainer (its step time minus compute) is fitted to ``latency + bytes /
bandwidth`` over both models.
"""

from __future__ import annotations

import argparse
import io
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time

# flowgraph before NumPy: it picks OpenBLAS's kernel set (flowgraph/framework/openblas_env.py)
import flowgraph as tf

# isort: split
import numpy as np

from flowgraph.datasets import load_digits
from flowgraph.distributed import Server, replica_device_setter
from flowgraph.distributed.launch import run_cluster
from flowgraph.distributed.rpc import TaskClient

MODELS = {"small": {"layers": [64, 128, 64, 10], "batch": 64},
          "heavy": {"layers": [784, 1024, 1024, 10], "batch": 256}}
TF_2_15 = {"small": {"one_process": 1514, "1w_1ps": 223, "2w_1ps": 432},
           "heavy": {"one_process": 56.4, "1w_1ps": 26, "2w_1ps": 32.6},
           "estimator": {"one_process_s": 18, "distributed_s": 36},
           "launch_to_step": [8.9, 44]}
WARMUP = 0.2  # the fraction of a trainer's steps before its measurement window


# -- the model and its data -------------------------------------------------------------

def batches(model: str, batch: int, seed: int = 0, count: int = 8) -> list:
    """`count` (x, y) batches: digits rows for ``small``, random data for ``heavy``."""
    rng = np.random.RandomState(seed)
    width = MODELS[model]["layers"][0]
    if model == "small":
        x, y = load_digits()
        x = (x / 16.0).astype(np.float32)
    else:
        x = rng.rand(batch * count, width).astype(np.float32)
        y = rng.randint(0, 10, batch * count)
    rows = [rng.randint(0, len(x), batch) for _ in range(count)]
    return [(x[r], y[r].astype(np.int64)) for r in rows]


def build(model: str, sync_replicas: int = 0):
    """The MLP's placeholders, train op and global step in the default graph."""
    layers = MODELS[model]["layers"]
    step = tf.train.get_or_create_global_step()
    x = tf.placeholder(tf.float32, [None, layers[0]])
    y = tf.placeholder(tf.int64, [None])
    net = x
    for i, units in enumerate(layers[1:]):
        last = i == len(layers) - 2
        net = tf.layers.dense(net, units, activation=None if last else tf.nn.relu)
    loss = tf.losses.sparse_softmax_cross_entropy(labels=y, logits=net)
    opt = tf.train.GradientDescentOptimizer(0.05)
    if sync_replicas:
        opt = tf.train.SyncReplicasOptimizer(opt, replicas_to_aggregate=sync_replicas,
                                             total_num_replicas=sync_replicas)
    return x, y, opt.minimize(loss, global_step=step), step, opt


def param_bytes(model: str) -> int:
    layers = MODELS[model]["layers"]
    return 4 * sum(a * b + b for a, b in itertools.pairwise(layers))


def largest_share(model: str) -> float:
    """The largest variable's share of the parameter bytes (one ps holds it whole)."""
    layers = MODELS[model]["layers"]
    return 4 * max(a * b for a, b in itertools.pairwise(layers)) / param_bytes(model)


def one_process(model: str, steps: int) -> float:
    """Steps/s of a plain Session loop (after WARMUP of the steps)."""
    feeds = batches(model, MODELS[model]["batch"])
    with tf.Graph().as_default():
        x, y, train, _, _ = build(model)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            warm = max(1, int(steps * WARMUP))
            for i in range(warm):
                sess.run(train, {x: feeds[i % 8][0], y: feeds[i % 8][1]})
            start = time.perf_counter()
            for i in range(steps - warm):
                sess.run(train, {x: feeds[i % 8][0], y: feeds[i % 8][1]})
            return (steps - warm) / (time.perf_counter() - start)


# -- one task of a cluster (``--task``) --------------------------------------------------

def task_main(args) -> None:
    config = tf.estimator.RunConfig()
    server = Server(config.cluster_spec, job_name=config.task_type,
                    task_index=config.task_id)
    if config.task_type == "ps":
        server.join()
        return
    launched = float(os.environ["BENCH_LAUNCH_T0"])
    trainers = config.num_worker_replicas
    worker = f"/job:{config.task_type}/task:{config.task_id}"
    batch = MODELS[args.task]["batch"] // (trainers if args.sync else 1)
    feeds = batches(args.task, batch, seed=1 + config.task_id + 10 * config.is_chief)
    with tf.Graph().as_default(), tf.device(
            replica_device_setter(worker_device=worker, cluster=config.cluster_spec)):
        x, y, train, step, opt = build(args.task, trainers if args.sync else 0)
        joined = tf.Variable(0, name="bench_trainers_joined", trainable=False)
        join = joined.assign_add(1)
        if not config.is_chief:
            ready = tf.report_uninitialized_variables(tf.global_variables())
            with tf.Session(server.target) as probe:
                while len(probe.run(ready)):
                    time.sleep(0.02)
        hooks = [tf.train.StopAtStepHook(last_step=args.steps)]
        if args.sync:
            hooks.append(opt.make_session_run_hook(config.is_chief, num_tokens=0))
        samples, first, cpu = [], None, []
        ps_cpu = []  # the chief's samples of the ps's (global step, process CPU seconds)
        ps_at = max(int(args.steps * WARMUP), 1)
        options = tf.RunOptions(timeout_in_ms=10_000) if args.sync else None
        with tf.train.MonitoredTrainingSession(
                master=server.target, is_chief=config.is_chief, hooks=hooks,
                log_step_count_steps=None, save_summaries_steps=None,
                save_checkpoint_secs=None) as sess:
            _start_together(server.target, join, joined, trainers)
            i, g = 0, 0
            while not sess.should_stop():
                try:
                    _, g = sess.run([train, step], {x: feeds[i % 8][0], y: feeds[i % 8][1]},
                                    options=options if g >= args.steps - 2 else None)
                except tf.errors.DeadlineExceededError:
                    # Sync: the other trainer stopped at the last step while this one
                    # waits for an aggregation that will not come.
                    if g >= args.steps - 2:
                        break
                    raise
                samples.append((time.time(), int(g)))
                cpu.append(time.process_time())
                if config.is_chief and (not ps_cpu and g >= ps_at):
                    ps_cpu.append(_ps_cpu(config.cluster_spec, g))
                first = first if first is not None else time.time() - launched
                i += 1
            if ps_cpu:
                ps_cpu.append(_ps_cpu(config.cluster_spec, g))
    warm = int(len(cpu) * WARMUP)
    cpu_us = (cpu[-1] - cpu[warm]) / max(len(cpu) - 1 - warm, 1) * 1e6 if cpu else 0.0
    report = {"task": worker, "first_step_after_launch_s": first, "samples": samples,
              "cpu_us_per_step": cpu_us}
    if len(ps_cpu) == 2 and ps_cpu[1][0] > ps_cpu[0][0]:
        (g0, c0), (g1, c1) = ps_cpu
        report["ps_cpu_us_per_step"] = (c1 - c0) / (g1 - g0) * 1e6
    print(json.dumps(report), flush=True)


def _start_together(target: str, join, joined, trainers: int, limit_s: float = 60.0):
    """Wait until every trainer got here (a counter on the ps), so that their runs overlap:
    a chief that ran its share of a short run while a worker was still starting left no
    window where both stepped ("the trainers never ran at the same time")."""
    with tf.Session(target) as probe:
        probe.run(join)
        give_up = time.monotonic() + limit_s
        while probe.run(joined) < trainers and time.monotonic() < give_up:
            time.sleep(0.005)


def _ps_cpu(cluster_spec, global_step) -> tuple:
    """``(global step, the ps's process CPU seconds)``, asked of ps task 0."""
    address = cluster_spec.as_dict()["ps"][0]
    client = TaskClient(address, "/job:ps/replica:0/task:0")
    try:
        return int(global_step), client.call("GetStatus", {})[0]["process_cpu_s"]
    finally:
        client.close()


def _global_rate(reports: list) -> float:
    """Global steps/s over the window where every trainer is past warm-up, not done."""
    starts = [r["samples"][int(len(r["samples"]) * WARMUP)][0] for r in reports]
    ends = [r["samples"][-1][0] for r in reports]
    t0, t1 = max(starts), min(ends)
    merged = sorted(s for r in reports for s in r["samples"])

    def step_at(t):
        return max((g for when, g in merged if when <= t), default=0)

    if t1 <= t0:
        raise RuntimeError("bench_distributed: the trainers never ran at the same time; "
                           "raise --steps")
    return (step_at(t1) - step_at(t0)) / (t1 - t0)


def cluster_run(model: str, workers: int, steps: int, sync: bool = False) -> dict:
    """Run ps + `workers` trainers through run_cluster; the trainers' reports."""
    out = io.BytesIO()
    os.environ["BENCH_LAUNCH_T0"] = repr(time.time())
    command = [sys.executable, os.path.abspath(__file__), "--task", model,
               "--steps", str(steps)] + (["--sync"] if sync else [])
    code = run_cluster(command, ps=1, workers=workers, grace_s=120, out=out)
    text = out.getvalue().decode()
    if code != 0:
        raise RuntimeError(f"bench_distributed: the {model} cluster failed (code "
                           f"{code}):\n{text[-3000:]}")
    reports = [json.loads(line.split("] ", 1)[1]) for line in text.splitlines()
               if '] {"task"' in line]
    if len(reports) != workers:
        raise RuntimeError(f"bench_distributed: {len(reports)} of {workers} trainers "
                           f"reported:\n{text[-3000:]}")
    ps = [r["ps_cpu_us_per_step"] for r in reports if "ps_cpu_us_per_step" in r]
    return {"steps_per_s": _global_rate(reports),
            "launch_to_step_s": max(r["first_step_after_launch_s"] for r in reports),
            "trainer_cpu_us_per_step": round(
                sum(r["cpu_us_per_step"] for r in reports) / len(reports), 1),
            "ps_cpu_us_per_step": round(ps[0], 1) if ps else None}


# -- the distributed Estimator -----------------------------------------------------------

def estimator_main(model_dir: str, steps: int) -> None:
    x, y = load_digits()
    x = (x / 16.0).astype(np.float32)
    y = y.astype(np.int64)

    def input_fn():  # graph constants, as every earlier figure was measured with
        rows = tf.random_uniform([64], 0, len(x), dtype=tf.int64, seed=0)
        return {"x": tf.gather(tf.constant(x), rows)}, tf.gather(tf.constant(y), rows)

    estimator = tf.estimator.DNNClassifier(
        hidden_units=[128, 64], n_classes=10,
        feature_columns=[tf.feature_column.numeric_column("x", shape=[64])],
        config=tf.estimator.RunConfig(model_dir=model_dir, log_step_count_steps=None,
                                      save_checkpoints_steps=max(steps // 2, 1)))
    tf.estimator.train_and_evaluate(
        estimator, tf.estimator.TrainSpec(input_fn, max_steps=steps),
        tf.estimator.EvalSpec(input_fn, steps=1, throttle_secs=10**6))


def estimator_walls(steps: int) -> dict:
    command = [sys.executable, os.path.abspath(__file__), "--estimator", "--steps",
               str(steps)]
    env = {k: v for k, v in os.environ.items() if k != "TF_CONFIG"}
    with tempfile.TemporaryDirectory() as one, tempfile.TemporaryDirectory() as many:
        start = time.perf_counter()
        subprocess.run([*command, "--model_dir", one], env=env, check=True,
                       capture_output=True)
        single = time.perf_counter() - start
        out = io.BytesIO()
        start = time.perf_counter()
        code = run_cluster([*command, "--model_dir", many], ps=1, workers=2, grace_s=120,
                           out=out)
        distributed = time.perf_counter() - start
    if code != 0:
        raise RuntimeError(f"bench_distributed: the Estimator cluster failed:\n"
                           f"{out.getvalue().decode()[-3000:]}")
    return {"one_process_s": single, "distributed_s": distributed}


# -- the table ---------------------------------------------------------------------------

def _line(name: str, value: float, unit: str, **extra) -> dict:
    row = {"name": name, "unit": unit, "flowgraph": round(value, 4), **extra,
           "transport": os.environ.get("FLOWGRAPH_RPC_TRANSPORT") or "direct"}
    print(json.dumps(row), flush=True)
    return row


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000,
                        help="global steps of each small-MLP run (heavy: a tenth)")
    parser.add_argument("--estimator-steps", type=int, default=6000)
    parser.add_argument("--only", default="small,heavy,sync,estimator")
    parser.add_argument("--transport", choices=["direct", "grpc"], default=None,
                        help="how step calls travel (default: the data plane, direct)")
    parser.add_argument("--task", choices=list(MODELS), help=argparse.SUPPRESS)
    parser.add_argument("--sync", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--estimator", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--model_dir", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.task:
        return task_main(args)
    if args.estimator:
        return estimator_main(args.model_dir, args.steps)
    if args.transport:  # the cluster tasks inherit the environment
        os.environ["FLOWGRAPH_RPC_TRANSPORT"] = args.transport
    only = set(args.only.split(","))
    overhead = {}
    for model in ("small", "heavy"):
        if model not in only:
            continue
        steps = args.steps if model == "small" else max(args.steps // 10, 20)
        ref = TF_2_15[model]
        alone = one_process(model, steps)
        _line(f"dist_{model}_one_process", alone, "steps/s", tf_2_15=ref["one_process"])
        one = cluster_run(model, 1, steps)
        _line(f"dist_{model}_1w_1ps", one["steps_per_s"], "steps/s",
              tf_2_15=ref["1w_1ps"], ratio=round(one["steps_per_s"] / alone, 3),
              target=0.6 if model == "small" else 0.9,
              trainer_cpu_us_per_step=one["trainer_cpu_us_per_step"],
              ps_cpu_us_per_step=one["ps_cpu_us_per_step"],
              notes="ratio: against flowgraph's one process; trainer CPU: its process "
                    "time per step after warm-up; ps CPU: the ps process's per global "
                    "step, over the chief's steps after warm-up")
        two = cluster_run(model, 2, steps)
        _line(f"dist_{model}_2w_1ps", two["steps_per_s"], "steps/s",
              tf_2_15=ref["2w_1ps"], ratio=round(two["steps_per_s"] / one["steps_per_s"], 3),
              trainer_cpu_us_per_step=two["trainer_cpu_us_per_step"],
              ps_cpu_us_per_step=two["ps_cpu_us_per_step"],
              target=1.8, notes="ratio: against 1 worker (target when RPC-bound)")
        if model == "small":
            _line("dist_launch_to_step", two["launch_to_step_s"], "s",
                  tf_2_15=TF_2_15["launch_to_step"], target=3.0,
                  notes="launch until every trainer finished its first step")
        compute = 1.0 / alone
        overhead[model] = (max(1.0 / one["steps_per_s"] - compute, 0.0),
                           2 * param_bytes(model), compute)
    if len(overhead) == 2:
        (o_s, b_s, _), (o_h, b_h, _) = overhead["small"], overhead["heavy"]
        bandwidth = (b_h - b_s) / max(o_h - o_s, 1e-9)
        latency = max(o_s - b_s / bandwidth, 0.0)
        for model, (_, nbytes, compute) in overhead.items():
            print(json.dumps({"name": f"scaling_inputs_{model}", "compute_s": compute,
                              "bytes_per_step": nbytes, "rpc_latency_s": latency,
                              "bandwidth_bytes_per_s": bandwidth,
                              "largest_share": round(largest_share(model), 4)}), flush=True)
    if "sync" in only:
        # The small MLP's step is round trips (the worst case for a barrier); the heavy
        # one's is compute, as in the models the Estimators paper scales.
        for model, name in (("small", "dist_sync_vs_async"),
                            ("heavy", "dist_sync_vs_async_heavy")):
            steps = args.steps // 2 if model == "small" else max(args.steps // 10, 20)
            sync = cluster_run(model, 2, steps, sync=True)
            asyn = cluster_run(model, 2, steps)
            _line(name, sync["steps_per_s"] / asyn["steps_per_s"], "ratio",
                  sync_steps_per_s=round(sync["steps_per_s"], 2),
                  async_steps_per_s=round(asyn["steps_per_s"], 2), target=0.9,
                  sync_trainer_cpu_us_per_step=sync["trainer_cpu_us_per_step"],
                  async_trainer_cpu_us_per_step=asyn["trainer_cpu_us_per_step"],
                  sync_ps_cpu_us_per_step=sync["ps_cpu_us_per_step"],
                  async_ps_cpu_us_per_step=asyn["ps_cpu_us_per_step"],
                  notes=f"{model} MLP, 2 trainers, {MODELS[model]['batch']} examples "
                        "per update; trainer CPU: per trainer step (a sync global step "
                        "is one step of each trainer, an async one of either)")
    if "estimator" in only:
        walls = estimator_walls(args.estimator_steps)
        _line("dist_estimator", walls["distributed_s"] / walls["one_process_s"], "ratio",
              target=1.2, tf_2_15=TF_2_15["estimator"],
              **{k: round(v, 2) for k, v in walls.items()},
              notes=f"DNNClassifier {args.estimator_steps} steps: ps + chief + worker "
                    "against one process, wall time incl. start-up")
    return None


if __name__ == "__main__":
    main()
