"""MLP training step: flowgraph vs hand-written NumPy vs the bare GEMMs (the physical floor).

Usage::

    python benchmarks/bench_mlp.py                  # all four workloads (about a minute)
    python benchmarks/bench_mlp.py mlp_sgd_feed     # one of them
    python benchmarks/bench_mlp.py --blas-threads 1 mlp_adam_feed   # BLAS on one thread
    python benchmarks/bench_mlp.py --budget-mb 64 mlp_adam_feed     # under a memory budget
    python benchmarks/bench_mlp.py --background-load 2 mlp_sgd_feed # 2 busy processes beside
    python benchmarks/bench_mlp.py --pieces mlp_adam_feed           # where the step's time goes

The model is the classic MNIST-sized MLP: 784 -> 512 -> 512 -> 10, ReLU, softmax
cross-entropy, batch 256, float32, written as a TF1 user writes it (`tf.layers.dense`,
`tf.losses.sparse_softmax_cross_entropy`, `tf.train.GradientDescentOptimizer` /
`tf.train.AdamOptimizer`, a plain `tf.Session` loop fetching ``[train_op, loss]``).
Two ways to give it data:

* ``*_feed`` (the headline; what users do): placeholders fed from NumPy batches;
* ``*_ingraph``: the batch is a fixed non-trainable variable, nothing is fed.

Each line compares three things measured in this process, interleaved:

* ``flowgraph``: one training step (``sess.run([train_op, loss], feed)``);
* ``numpy``: the same forward + backward + in-place update written by hand in NumPy;
* ``reference`` (the *GEMM floor*): only the eight matrix products the step needs
  (3 forward, 3 weight gradients, 2 input gradients; the first layer's input gradient is
  not needed), as ``np.matmul(out=)`` into preallocated outputs. NumPy's BLAS is the only
  one in the process: flowgraph's MatMul calls it too. (A second OpenBLAS copy, such as
  SciPy's, would make both slower: its idle workers spin on the cores the other needs.)

``ratio`` is flowgraph's time per step over the floor's; targets: SGD <= 1.25, Adam <= 1.35.
``steps_per_s`` holds the three figures as steps per second. Before timing, flowgraph
and the NumPy step are run from the same weights on the same batches and must agree.

When PyTorch is installed, each ``*_feed`` line also has ``torch_ms``: the same model
trained by PyTorch on the CPU with its default threads, measured in a child process
(`torch_mlp_step.py`) at the start of the run, and ``ratio_torch`` = flowgraph / PyTorch
(issue 17 asks for a step faster than PyTorch's on a 16-core machine).

``--budget-mb N`` runs flowgraph's session with ``ConfigProto(memory_budget_bytes=N MiB)``
(docs/memory.md), for issue 13's check that a budget does not slow the step down; the
lines keep their format and name, with the budget in ``notes``. Compare with a run
without it on the same machine.

``--background-load N`` starts N processes that spin in a busy loop while the workloads
run (stopped at the end), to see how the step degrades when other work competes for the
cores (issue 17's target: at most 2x slower with one busy process per core). Every
line's ``blas`` field names the OpenBLAS kernel set that ran (``kernels``).

``--pieces`` measures the parts instead of the total (what to look at when other work
shares the cores and totals are noisy): per group of nodes (``gemm``, ``update``: the
``Apply*`` kernels, ``elementwise``: fused nodes, ``bias_grad``, ``loss``, ``other``), the
node count and the sums of the nodes' median and best times over traced steps (step stats;
tracing adds ~1 us per node), then each variable's update kernel alone against the same
update hand-written in NumPy (best per call, interleaved; for large variables also split
over two kernel threads, ``split_us``). One JSON line per workload.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import flowgraph as tf  # before NumPy: it picks OpenBLAS's kernel set

# isort: split
import json
import subprocess

import numpy as np
import run  # benchmarks/run.py: emit, compare, blas_info

SIZES = (784, 512, 512, 10)
BATCH = 256
N_BATCHES = 4  # batches cycled through, so that no step reuses the previous one's input
LR = {"sgd": 0.01, "adam": 1e-3}
TARGETS = {"sgd": 1.25, "adam": 1.35}
BUDGET_BYTES = 0  # flowgraph's memory budget (`--budget-mb`); 0: none, the default
BACKGROUND = 0  # busy processes running beside the benchmark (`--background-load`)
TORCH_MS: dict = {}  # PyTorch's step (ms) per optimizer, when torch is installed
BETA1, BETA2, EPS = 0.9, 0.999, 1e-8


def make_batches(seed: int = 0):
    rng = np.random.RandomState(seed)
    xs = [rng.rand(BATCH, SIZES[0]).astype(np.float32) for _ in range(N_BATCHES)]
    ys = [rng.randint(0, SIZES[-1], BATCH).astype(np.int64) for _ in range(N_BATCHES)]
    return xs, ys


# -- flowgraph ------------------------------------------------------------------------------
class FlowgraphMLP:
    """The TF1 program; `step()` runs one training step and returns the loss."""

    def __init__(self, optimizer: str, feed: bool, xs, ys, inter_op: int | None = None):
        self.graph = tf.Graph()
        with self.graph.as_default():
            tf.set_random_seed(0)
            if feed:
                x = tf.placeholder(tf.float32, [None, SIZES[0]], name="x")
                y = tf.placeholder(tf.int64, [None], name="y")
            else:
                x = tf.Variable(xs[0], trainable=False, name="x")
                y = tf.Variable(ys[0], trainable=False, name="y")
            h = tf.layers.dense(x, SIZES[1], activation=tf.nn.relu, name="hidden1")
            h = tf.layers.dense(h, SIZES[2], activation=tf.nn.relu, name="hidden2")
            logits = tf.layers.dense(h, SIZES[3], name="logits")
            self.loss = tf.losses.sparse_softmax_cross_entropy(labels=y, logits=logits)
            opt = (tf.train.GradientDescentOptimizer(LR["sgd"]) if optimizer == "sgd"
                   else tf.train.AdamOptimizer(LR["adam"], BETA1, BETA2, EPS))
            self.train_op = opt.minimize(self.loss)
            self.params = tf.trainable_variables()  # kernel, bias per layer
            init = tf.global_variables_initializer()
        config = None
        if inter_op or BUDGET_BYTES:
            config = tf.ConfigProto(inter_op_parallelism_threads=inter_op or 0,
                                    memory_budget_bytes=BUDGET_BYTES)
        self.sess = tf.Session(graph=self.graph, config=config)
        self.sess.run(init)
        self.fetches = [self.train_op, self.loss]
        self.feeds = [{x: bx, y: by} for bx, by in zip(xs, ys)] if feed else [None]
        self.i = 0

    def weights(self) -> list[np.ndarray]:
        return self.sess.run(self.params)

    def step(self):
        feed = self.feeds[self.i % len(self.feeds)]
        self.i += 1
        return self.sess.run(self.fetches, feed)[1]

    def close(self) -> None:
        self.sess.close()


# -- NumPy, by hand ---------------------------------------------------------------------------
class NumpyMLP:
    """The same step in plain NumPy (what one would write without a framework)."""

    def __init__(self, optimizer: str, weights, xs, ys):
        self.params = [np.array(w, dtype=np.float32) for w in weights]  # W1 b1 W2 b2 W3 b3
        self.adam = optimizer == "adam"
        self.lr = np.float32(LR[optimizer])
        self.m = [np.zeros_like(p) for p in self.params]
        self.v = [np.zeros_like(p) for p in self.params]
        self.t = 0
        self.xs, self.ys = xs, ys
        self.rows = np.arange(BATCH)
        self.i = 0

    def step(self):
        x, y = self.xs[self.i % len(self.xs)], self.ys[self.i % len(self.ys)]
        self.i += 1
        w1, b1, w2, b2, w3, b3 = self.params
        a1 = x @ w1
        a1 += b1
        h1 = np.maximum(a1, 0, out=a1)
        a2 = h1 @ w2
        a2 += b2
        h2 = np.maximum(a2, 0, out=a2)
        z = h2 @ w3
        z += b3
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        s = e.sum(axis=1, keepdims=True)
        loss = float(np.mean(np.log(s[:, 0]) - z[self.rows, y]))
        d3 = e
        d3 /= s
        d3[self.rows, y] -= 1
        d3 /= np.float32(len(y))
        d2 = d3 @ w3.T
        d2 *= h2 > 0
        d1 = d2 @ w2.T
        d1 *= h1 > 0
        grads = [x.T @ d1, d1.sum(axis=0), h1.T @ d2, d2.sum(axis=0), h2.T @ d3,
                 d3.sum(axis=0)]
        if not self.adam:
            for p, g in zip(self.params, grads):
                g *= self.lr
                p -= g
            return loss
        self.t += 1
        alpha = np.float32(self.lr * np.sqrt(1 - BETA2 ** self.t) / (1 - BETA1 ** self.t))
        for p, g, m, v in zip(self.params, grads, self.m, self.v):
            m *= np.float32(BETA1)
            m += np.float32(1 - BETA1) * g
            v *= np.float32(BETA2)
            g *= g
            g *= np.float32(1 - BETA2)
            v += g
            d = np.sqrt(v)
            d += np.float32(EPS)
            np.divide(m, d, out=d)
            d *= alpha
            p -= d
        return loss


# -- the GEMM floor -------------------------------------------------------------------------
class GemmFloor:
    """The eight matrix products of one step, into preallocated outputs."""

    def __init__(self, weights, xs):
        rng = np.random.RandomState(1)
        w1, _, w2, _, w3, _ = weights
        n, (_, d1, d2, d3) = BATCH, SIZES
        f32 = np.float32
        self.x = xs[0]
        self.w = (w1, w2, w3)
        self.h1, self.h2, self.z = (np.empty((n, d), f32) for d in (d1, d2, d3))
        self.g3 = rng.rand(n, d3).astype(f32)
        self.d2, self.d1 = np.empty((n, d2), f32), np.empty((n, d1), f32)
        self.gw = [np.empty(w.shape, f32) for w in self.w]

    def run(self) -> None:
        mm = np.matmul
        w1, w2, w3 = self.w
        mm(self.x, w1, out=self.h1)
        mm(self.h1, w2, out=self.h2)
        mm(self.h2, w3, out=self.z)
        mm(self.g3, w3.T, out=self.d2)
        mm(self.h2.T, self.g3, out=self.gw[2])
        mm(self.d2, w2.T, out=self.d1)
        mm(self.h1.T, self.d2, out=self.gw[1])
        mm(self.x.T, self.d1, out=self.gw[0])


# -- one workload -------------------------------------------------------------------------
def _models(optimizer: str, feed: bool, xs, ys):
    """flowgraph's model and the NumPy one started from its weights (and those weights);
    without feeds both train on the first batch only."""
    fg = FlowgraphMLP(optimizer, feed, xs, ys)
    weights = fg.weights()
    ref = NumpyMLP(optimizer, weights, xs, ys)
    if not feed:
        ref.xs, ref.ys = xs[:1], ys[:1]
    return fg, ref, weights


def check_agreement(optimizer: str, feed: bool, xs, ys, steps: int = 3) -> float:
    """Run flowgraph and NumPy from the same weights for a few steps; return the largest
    error of flowgraph's weight *changes*, relative to the largest change of that weight."""
    fg, ref, start = _models(optimizer, feed, xs, ys)
    try:
        for _ in range(steps):
            lf, lr = fg.step(), ref.step()
            np.testing.assert_allclose(lf, lr, rtol=1e-4)
        worst = 0.0
        for got, want, w0 in zip(fg.weights(), ref.params, start):
            moved, want_moved = got - w0, want - w0
            err = float(np.max(np.abs(moved - want_moved)) / np.max(np.abs(want_moved)))
            if not err < 1e-2:
                raise AssertionError(f"flowgraph's {optimizer} step differs from NumPy's: "
                                     f"relative error {err:.2e} in a weight update")
            worst = max(worst, err)
        return worst
    finally:
        fg.close()


def bench(optimizer: str, feed: bool, blas, number: int = 3, repeat: int = 15) -> dict:
    xs, ys = make_batches()
    err = check_agreement(optimizer, feed, xs, ys)
    fg, ref, weights = _models(optimizer, feed, xs, ys)
    try:
        floor = GemmFloor(weights, xs)
        t = run.compare({"fg": fg.step, "numpy": ref.step, "floor": floor.run},
                        number=number, repeat=repeat)
    finally:
        fg.close()
    fg_ms, np_ms, floor_ms = t["fg"] * 1e3, t["numpy"] * 1e3, t["floor"] * 1e3
    target = TARGETS[optimizer]
    ratio = fg_ms / floor_ms
    opt_name = "GradientDescentOptimizer" if optimizer == "sgd" else "AdamOptimizer"
    notes = [
        f"MLP 784-512-512-10 ReLU, batch {BATCH}, float32, tf.layers.dense + "
        f"tf.losses.sparse_softmax_cross_entropy + tf.train.{opt_name}; "
        + ("placeholders fed from NumPy" if feed else "batch held in a variable, no feed")
        + "; sess.run([train_op, loss])",
        "reference: the 8 GEMMs of the step, np.matmul(out=) on NumPy's BLAS (flowgraph's "
        "MatMul uses the same library)",
        f"numpy: the same step hand-written in NumPy, {np_ms:.3g} ms",
        f"flowgraph's weight updates match the NumPy step's over 3 steps (max rel. err "
        f"{err:.1e})",
        f"best of {repeat} x {number} steps, interleaved",
        f"OpenBLAS kernels: {', '.join(blas.get('kernels') or ['unknown'])}",
    ]
    if BACKGROUND:
        notes.append(f"with {BACKGROUND} busy-loop processes running beside it on "
                     f"{len(os.sched_getaffinity(0))} cores (--background-load)")
    extra = {}
    if feed and optimizer in TORCH_MS:
        torch_ms = TORCH_MS[optimizer]
        notes.append(f"torch: the same model in PyTorch {TORCH_MS['version']} on the CPU "
                     f"({TORCH_MS['threads']} threads), {torch_ms:.3g} ms, measured in a "
                     "child process (benchmarks/torch_mlp_step.py) in this run")
        extra = {"torch_ms": run._round(torch_ms), "ratio_torch": run._round(fg_ms / torch_ms)}
    if BUDGET_BYTES:
        notes.append(f"flowgraph under a memory budget of {BUDGET_BYTES / 2**20:g} MiB "
                     f"(ConfigProto.memory_budget_bytes)")
    return run.emit(
        f"mlp_{optimizer}_{'feed' if feed else 'ingraph'}", "ms/step", fg_ms, floor_ms,
        f"ratio <= {target}", ratio <= target, notes, blas,
        steps_per_s={"flowgraph": run._round(1e3 / fg_ms), "numpy": run._round(1e3 / np_ms),
                     "gemm_floor": run._round(1e3 / floor_ms)},
        numpy_ms=run._round(np_ms), ratio_vs_numpy=run._round(fg_ms / np_ms), **extra)


def torch_reference(optimizers) -> dict:
    """PyTorch's CPU step per optimizer from benchmarks/torch_mlp_step.py in a child
    process, plus its version and threads; {} when torch is not installed."""
    import importlib.util

    if importlib.util.find_spec("torch") is None:
        return {}
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_mlp_step.py")
    out = subprocess.run([sys.executable, script, *optimizers], capture_output=True,
                         text=True, check=True).stdout
    found: dict = {}
    for line in out.splitlines():
        row = json.loads(line)
        found[row["optimizer"]] = row["ms_per_step"]
        found["version"], found["threads"] = row["torch"], row["threads"]
    return found


_GROUPS = {"MatMul": "gemm", "Fused": "elementwise", "BiasAddGrad": "bias_grad",
           "SparseSoftmaxCrossEntropyWithLogits": "loss"}


def _group(label: str) -> str:
    """The piece a node belongs to, from its timeline label ``name = Type(...)``."""
    op_type = label.partition(" = ")[2].partition("(")[0]
    return "update" if op_type.startswith("Apply") else _GROUPS.get(op_type, "other")


def _node_pieces(fg: FlowgraphMLP, steps: int) -> dict:
    """Per group: nodes, and the sum of their median (``us``) and best (``us_best``: what
    a busy machine's preemptions inflate least) microseconds over `steps` traced steps."""
    from collections import defaultdict

    times: dict = defaultdict(list)
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    for k in range(steps):
        md = tf.RunMetadata()
        fg.sess.run(fg.fetches, fg.feeds[k % len(fg.feeds)], options=options,
                    run_metadata=md)
        for dev in md.step_stats.dev_stats:
            for node in dev.node_stats:
                times[(node.node_name, node.timeline_label)].append(
                    node.all_end_rel_nanos / 1e3)
    groups: dict = {}
    for (_, label), t in times.items():
        g = groups.setdefault(_group(label), {"nodes": 0, "us": 0.0, "us_best": 0.0})
        g["nodes"] += 1
        g["us"] += float(np.median(t))
        g["us_best"] += float(np.min(t))
    return {k: {"nodes": v["nodes"], "us": run._round(v["us"]),
                "us_best": run._round(v["us_best"])} for k, v in groups.items()}


def _update_calls(optimizer: str, w: np.ndarray, grad: np.ndarray):
    """(flowgraph's update kernel, NumPy's update) of one variable, as zero-argument calls,
    then the variable each updates (flowgraph's `VariableState`, NumPy's array). Adam runs
    at step 1's bias correction each call, on both sides."""
    from flowgraph.backends.cpu import kernels_training
    from flowgraph.framework.resources import VariableState

    f32 = np.float32
    states = []
    for value in (w, np.zeros_like(w), np.zeros_like(w))[:3 if optimizer == "adam" else 1]:
        states.append(VariableState("v"))
        states[-1].value = np.array(value, dtype=f32)
    ref = NumpyMLP(optimizer, [w], [], [])
    p, m, v = ref.params[0], ref.m[0], ref.v[0]
    if optimizer == "sgd":
        lr = np.asarray(f32(LR["sgd"]))

        def fg_sgd():
            kernels_training.apply_gradient_descent(*states, lr, grad, use_locking=False,
                                                    op=None)

        def np_sgd():
            p.__isub__(lr * grad)

        return fg_sgd, np_sgd, states[0], p
    kernel = kernels_training._make_kernel("ApplyAdam", "Adam", False)
    scalars = [np.asarray(f32(x)) for x in (BETA1, BETA2, LR["adam"], BETA1, BETA2, EPS)]
    alpha = f32(f32(LR["adam"]) * np.sqrt(f32(1 - BETA2)) / f32(1 - BETA1))

    def fg_adam():
        kernel(*states, *scalars, grad, use_locking=False, use_nesterov=False, op=None)

    def np_adam():  # NumpyMLP.step's update of one parameter
        m.__imul__(f32(BETA1))
        m.__iadd__(f32(1 - BETA1) * grad)
        v.__imul__(f32(BETA2))
        gg = grad * grad
        gg *= f32(1 - BETA2)
        v.__iadd__(gg)
        d = np.sqrt(v)
        d += f32(EPS)
        np.divide(m, d, out=d)
        d *= alpha
        p.__isub__(d)

    return fg_adam, np_adam, states[0], p


def _split_in_two(fn):
    """`fn` run with the kernel pool's update grain lowered so that it splits in two."""
    from flowgraph.backends.cpu import kernel_pool

    def call():
        grain = kernel_pool.GRAIN["update"]
        kernel_pool.GRAIN["update"] = 1 << 14
        try:
            fn()
        finally:
            kernel_pool.GRAIN["update"] = grain

    return call


def _update_pieces(optimizer: str, weights, number: int = 20, repeat: int = 15) -> list:
    """Each variable's update kernel alone vs the NumPy step's update of it (us/call);
    for large variables also the kernel split over two kernel threads (``split_us``: what
    a lower `kernel_pool.GRAIN["update"]` would give)."""
    rng = np.random.RandomState(2)
    out = []
    for w in weights:
        grad = rng.standard_normal(w.shape).astype(np.float32)
        fg_call, np_call, _, _ = _update_calls(optimizer, w, grad)
        calls = {"fg": fg_call, "numpy": np_call}
        if w.size >= 1 << 17:
            calls["split"] = _split_in_two(_update_calls(optimizer, w, grad)[0])
        t = run.compare(calls, number=number, repeat=repeat)
        line = {"shape": list(w.shape), "flowgraph_us": run._round(t["fg"] * 1e6),
                "numpy_us": run._round(t["numpy"] * 1e6)}
        if "split" in t:
            line["split_us"] = run._round(t["split"] * 1e6)
        out.append(line)
    return out


def pieces(optimizer: str, feed: bool, blas, steps: int = 40) -> dict:
    """The ``--pieces`` line of one workload (see the module docstring)."""
    xs, ys = make_batches()
    fg = FlowgraphMLP(optimizer, feed, xs, ys)
    try:
        for _ in range(10):
            fg.step()
        nodes = _node_pieces(fg, steps)
        weights = fg.weights()
    finally:
        fg.close()
    line = {"name": f"mlp_{optimizer}_{'feed' if feed else 'ingraph'}_pieces",
            "unit": "us", "nodes": nodes,
            "non_gemm_us": run._round(sum(v["us"] for k, v in nodes.items() if k != "gemm")),
            "non_gemm_us_best": run._round(sum(v["us_best"] for k, v in nodes.items()
                                               if k != "gemm")),
            "updates": _update_pieces(optimizer, weights),
            "notes": f"node groups: median over {steps} traced steps; updates: best per "
                     "call, interleaved with NumPy's",
            "blas": blas}
    print(json.dumps(line), flush=True)
    return line


WORKLOADS = {
    "mlp_sgd_feed": ("sgd", True),
    "mlp_adam_feed": ("adam", True),
    "mlp_sgd_ingraph": ("sgd", False),
    "mlp_adam_ingraph": ("adam", False),
}


def busy_processes(n: int) -> list[subprocess.Popen]:
    """`n` processes that each keep one core busy until killed."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def main(argv: list[str]) -> int:
    global BUDGET_BYTES, BACKGROUND
    blas_threads = None
    measure = bench
    options = (["--blas-threads"], ["--budget-mb"], ["--background-load"])
    while argv[:1] == ["--pieces"] or (argv[:1] in options and len(argv) >= 2):
        if argv[0] == "--pieces":
            measure = pieces
            argv = argv[1:]
            continue
        if argv[0] == "--blas-threads":  # a diagnostic for busy machines
            blas_threads = int(argv[1])
        elif argv[0] == "--budget-mb":
            BUDGET_BYTES = int(float(argv[1]) * 2**20)
        else:
            BACKGROUND = int(argv[1])
        argv = argv[2:]
    load = busy_processes(BACKGROUND)
    try:
        return _run(argv, blas_threads, measure)
    finally:
        for p in load:
            p.kill()
            p.wait()


def _run(argv: list[str], blas_threads: int | None, measure=bench) -> int:
    names = argv or list(WORKLOADS)
    unknown = [n for n in names if n not in WORKLOADS]
    if unknown:
        print(f"unknown workload(s) {unknown}; choose from {list(WORKLOADS)}", file=sys.stderr)
        return 2
    if measure is bench and blas_threads is None:
        TORCH_MS.update(torch_reference(sorted({WORKLOADS[n][0] for n in names
                                                if WORKLOADS[n][1]})))
    np.matmul(np.ones((64, 64)), np.ones((64, 64)))  # load BLAS before blas_info
    blas = run.blas_info()
    if blas_threads is None:
        for name in names:
            measure(*WORKLOADS[name], blas)
        return 0
    from threadpoolctl import threadpool_limits

    with threadpool_limits(blas_threads, user_api="blas"):
        blas = run.blas_info()
        for name in names:
            measure(*WORKLOADS[name], blas)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
