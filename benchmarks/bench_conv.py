"""Convolution and pooling, forward + backward: flowgraph vs NumPy (and TensorFlow).

Usage::

    python benchmarks/bench_conv.py                 # every workload, batch 128
    python benchmarks/bench_conv.py conv_same       # one of them
    python benchmarks/bench_conv.py --batch 4       # a quick smoke run
    python benchmarks/bench_conv.py --tf            # also time TensorFlow 2.15
    python benchmarks/bench_conv.py --kernels       # each kernel alone (see below)
    python benchmarks/bench_conv.py --rounds 5      # more rounds (default 3)

Workloads (float32, NHWC, one training step's worth of kernels, nothing else):

* ``conv_valid`` / ``conv_same``: a 28x28x32 -> 64 3x3 convolution layer at batch 128,
  padding VALID / SAME: ``Conv2D``, ``Conv2DBackpropInput`` and
  ``Conv2DBackpropFilter`` (the forward output and both gradients, for a given
  output gradient);
* ``max_pool`` / ``avg_pool``: 2x2 windows, stride 2, on 28x28x64 at batch 128: the pool
  and its gradient;
* ``cnn``: one SGD step of the TF1 "deep MNIST" network (`build_cnn`), where dense
  layers' matrix products run between the convolutions; no NumPy reference and no
  target, only the comparison with TensorFlow.

Each line has ``flowgraph`` (one ``Session.run`` of the step: the kernels read
variables, nothing is fed, one element of each result is fetched), ``reference`` (the same
results computed by plain NumPy in this process: an im2col copy of the padded input
through `sliding_window_view`, the matrix products, a per-tap col2im; window reductions
for the pools), and ``ratio`` = flowgraph / reference. With ``--tf``, a child process
runs the same TF1 program under the TensorFlow of the oracle environment
(``${TF_ORACLE_VENV:-/tmp/tf-oracle-venv}``, the one ``../shared/tools/tf-oracle``
creates; TensorFlow is not a flowgraph dependency) in a ``tf.compat.v1`` session; the
line then also has ``tensorflow``, ``ratio_tf`` = flowgraph / TensorFlow, and ``met``
against the target ``ratio_tf <= 1.5`` (issue 17). Each figure is the best over
``--rounds`` rounds (3) of 5 steps, and in every round flowgraph, TensorFlow and NumPy
take turns (TensorFlow's child waits, idle, while the others run), so a change in the
machine's load hits all three alike; still, run on a quiet machine.

Each turn is a block of back-to-back steps of one system after a pause (`quiet`) long
enough for OpenBLAS's idle workers to stop spinning, the way TensorFlow's steps always
ran. Interleaving single steps, as this script once did, timed every flowgraph step
right after a NumPy step: its multi-threaded whole-batch products left an OpenBLAS
worker spinning for ~0.1 s on one of the two cores, through all of flowgraph's conv
step (conv_valid on im2col: best 74 against 59 ms, same process, same load), and its
pool reference evicted the cache that flowgraph's next pool step would have found warm,
as TensorFlow's did.

With ``--kernels``, one line per kernel of each workload (``conv_same_Conv2D``, ...),
called directly, without a session: ``flowgraph`` is its best wall time on the default
threads and ``cpu_one_thread`` its best CPU time (``time.process_time``) with BLAS and
the kernel pool held to one thread, which other processes' load hardly changes: the
figure to compare kernels (SAME against VALID per output pixel, before and after a
change) on a shared machine.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

WORKLOADS = ("conv_valid", "conv_same", "max_pool", "avg_pool", "cnn")
TARGET_TF = 1.5
BATCH = 128


# -- the program (TF1 API: flowgraph or tensorflow.compat.v1) --------------------------------
def arrays(name: str, batch: int) -> dict:
    rng = np.random.default_rng(0)
    if name == "cnn":
        labels = np.eye(10, dtype=np.float32)[rng.integers(0, 10, batch)]
        return {"x": rng.random((batch, 28, 28, 1), dtype=np.float32), "labels": labels}
    if name.startswith("conv"):
        pad = "VALID" if name == "conv_valid" else "SAME"
        side = 26 if pad == "VALID" else 28
        return {"x": rng.standard_normal((batch, 28, 28, 32), dtype=np.float32),
                "f": rng.standard_normal((3, 3, 32, 64), dtype=np.float32) * 0.05,
                "dy": rng.standard_normal((batch, side, side, 64), dtype=np.float32),
                "padding": pad}
    return {"x": rng.standard_normal((batch, 28, 28, 64), dtype=np.float32),
            "dy": rng.standard_normal((batch, 14, 14, 64), dtype=np.float32)}


def build(tf, name: str, data: dict):
    """The step as a TF1 graph: returns (init op, step fetches, [output tensors]). The
    step fetches one element of each output: TensorFlow's graph optimizer drops
    computations that only a `tf.group` depends on, and fetching whole outputs would
    time TensorFlow's copies into NumPy."""
    if name == "cnn":
        return build_cnn(tf, data)
    x = tf.Variable(data["x"], name="x")
    dy = tf.Variable(data["dy"], name="dy", trainable=False)
    if name.startswith("conv"):
        f = tf.Variable(data["f"], name="f")
        y = tf.nn.conv2d(x, f, strides=[1, 1, 1, 1], padding=data["padding"])
        outputs = [y, *tf.gradients(y, [x, f], grad_ys=dy)]
    else:
        pool = tf.nn.max_pool if name == "max_pool" else tf.nn.avg_pool
        y = pool(x, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")
        outputs = [y, *tf.gradients(y, [x], grad_ys=dy)]
    corners = [o[0, 0, 0, :1] for o in outputs]
    return tf.global_variables_initializer(), corners, outputs


def build_cnn(tf, data: dict):
    """One SGD step of the TF1 "deep MNIST" network: two 5x5 SAME conv + ReLU + 2x2
    max pool layers (1 -> 32 -> 64 channels), a 3136 -> 1024 dense ReLU layer, 10
    logits, softmax cross-entropy. Its dense products run on BLAS's own threads (and
    wake its workers) between the convolutions."""
    rng = np.random.default_rng(1)

    def weight(*shape):
        return tf.Variable((rng.standard_normal(shape) * 0.05).astype(np.float32))

    def conv_pool(h, w):
        b = tf.Variable(np.full(w.shape.as_list()[-1], 0.1, np.float32))
        h = tf.nn.relu(tf.nn.conv2d(h, w, strides=[1, 1, 1, 1], padding="SAME") + b)
        return tf.nn.max_pool(h, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")

    x = tf.Variable(data["x"], trainable=False)
    labels = tf.Variable(data["labels"], trainable=False)
    h = conv_pool(conv_pool(x, weight(5, 5, 1, 32)), weight(5, 5, 32, 64))
    h = tf.nn.relu(tf.matmul(tf.reshape(h, [-1, 7 * 7 * 64]), weight(3136, 1024)) +
                   tf.Variable(np.full(1024, 0.1, np.float32)))
    logits = tf.matmul(h, weight(1024, 10)) + tf.Variable(np.zeros(10, np.float32))
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels,
                                                                     logits=logits))
    train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
    return tf.global_variables_initializer(), [train, loss], [loss]


def session_step(tf, name: str, data: dict):
    """A callable running one step; checks nothing (see `check`)."""
    graph = tf.Graph()
    with graph.as_default():
        init, step, outputs = build(tf, name, data)
    sess = tf.Session(graph=graph)
    sess.run(init)
    return (lambda: sess.run(step)), (lambda: sess.run(outputs))


# -- the NumPy reference ------------------------------------------------------------------------
def numpy_step(name: str, data: dict):
    """The workload in plain NumPy, or None (`cnn`: no reference)."""
    if name == "cnn":
        return None
    x, dy = data["x"], data["dy"]
    if not name.startswith("conv"):
        return lambda: numpy_pool(name, x, dy)
    f2 = data["f"].reshape(-1, 64)
    p = 1 if data["padding"] == "SAME" else 0

    def step():
        xp = np.pad(x, ((0, 0), (p, p), (p, p), (0, 0))) if p else x
        win = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(1, 2))
        n, oh, ow = win.shape[:3]
        cols = win.transpose(0, 1, 2, 4, 5, 3).reshape(n * oh * ow, -1)  # the im2col copy
        y = (cols @ f2).reshape(n, oh, ow, 64)
        dy2 = dy.reshape(-1, 64)
        df = (cols.T @ dy2).reshape(3, 3, 32, 64)
        dcols = (dy2 @ f2.T).reshape(n, oh, ow, 3, 3, 32)
        dxp = np.zeros(xp.shape, x.dtype)
        for i in range(3):
            for j in range(3):
                dxp[:, i:i + oh, j:j + ow] += dcols[:, :, :, i, j]
        dx = dxp[:, p:p + x.shape[1], p:p + x.shape[2]]
        return y, dx, df

    return step


def numpy_pool(name: str, x, dy):
    n, h, w, c = x.shape
    win = x.reshape(n, h // 2, 2, w // 2, 2, c)
    if name == "avg_pool":
        y = win.mean(axis=(2, 4))
        dx = np.repeat(np.repeat(dy * 0.25, 2, axis=1), 2, axis=2)
        return y, dx
    y = win.max(axis=(2, 4))
    flat = win.transpose(0, 1, 3, 5, 2, 4).reshape(n, h // 2, w // 2, c, 4)
    first = flat.argmax(axis=-1)
    dx = np.zeros((n, h // 2, w // 2, c, 4), x.dtype)
    np.put_along_axis(dx, first[..., None], dy[..., None], axis=-1)
    dx = dx.reshape(n, h // 2, w // 2, c, 2, 2).transpose(0, 1, 4, 2, 5, 3).reshape(x.shape)
    return y, dx


# -- one kernel at a time -----------------------------------------------------------------------
def kernel_calls(name: str, data: dict) -> dict:
    """``{op type: callable}`` calling each CPU kernel of the workload directly."""
    from flowgraph.backends.cpu import kernels_conv as kc

    if name == "cnn":  # a whole network: no kernels of its own
        return {}
    x, dy, one = data["x"], data["dy"], [1, 1, 1, 1]
    if name.startswith("conv"):
        f, pad = data["f"], data["padding"]
        return {
            "Conv2D": lambda: kc.conv2d(x, f, strides=one, padding=pad),
            "Conv2DBackpropInput": lambda: kc.conv2d_backprop_input(
                np.array(x.shape), f, dy, strides=one, padding=pad),
            "Conv2DBackpropFilter": lambda: kc.conv2d_backprop_filter(
                x, np.array(f.shape), dy, strides=one, padding=pad),
        }
    win = {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "VALID"}
    if name == "avg_pool":
        return {"AvgPool": lambda: kc.avg_pool(x, **win),
                "AvgPoolGrad": lambda: kc.avg_pool_grad(np.array(x.shape), dy, **win)}
    y = kc.max_pool(x, **win)
    return {"MaxPool": lambda: kc.max_pool(x, **win),
            "MaxPoolGrad": lambda: kc.max_pool_grad(x, y, dy, **win)}


def kernel_times(names: list[str], batch: int, blas: str) -> None:
    """`--kernels`: best wall time on the default threads and best one-thread CPU time
    of each kernel (see the module docstring)."""
    import run

    from flowgraph.backends.cpu.blas_threads import intra_op_limited

    rep = 3 * repeats(batch)
    for name in names:
        for op, fn in kernel_calls(name, arrays(name, batch)).items():
            with intra_op_limited(1):
                cpu = best_times({op: fn}, rep, clock=time.process_time)[op]
            wall = best_times({op: fn}, rep)[op]
            run.emit(f"{name}_{op}", "s", wall, None, None, None,
                     [f"batch {batch}, kernel called directly, best of {rep}"], blas,
                     cpu_one_thread=run._round(cpu))


# -- timing -------------------------------------------------------------------------------------
def best_times(fns: dict, repeat: int, clock=time.perf_counter) -> dict:
    """Best time (`clock`: wall by default) of one call of each callable, repeats
    interleaved across them."""
    for fn in fns.values():
        fn()
    times: dict = {k: [] for k in fns}
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeat):
            for k, fn in fns.items():
                t = clock()
                fn()
                times[k].append(clock() - t)
    finally:
        gc.enable()
    return {k: min(v) for k, v in times.items()}


def repeats(batch: int) -> int:
    return 5 if batch >= 64 else 20


def quiet_seconds() -> float:
    """How long OpenBLAS's idle workers spin after a multi-threaded product (2**T
    cycles, ``T = OPENBLAS_THREAD_TIMEOUT``, 28 by default, clamped to 4..30 as OpenBLAS
    does), at a 1 GHz clock or faster, plus a margin."""
    raw = os.environ.get("OPENBLAS_THREAD_TIMEOUT") or os.environ.get("GOTO_THREAD_TIMEOUT")
    try:
        t = min(max(int(raw), 4), 30) if raw else 28
    except ValueError:
        t = 28
    return 2.0 ** t / 1e9 + 0.02


def quiet() -> None:
    """Pause until the threads the previous block woke (OpenBLAS's, TensorFlow's) sleep."""
    time.sleep(quiet_seconds())


def as_tensorflow(names: list[str], batch: int) -> int:
    """Child mode (`--as-tf`): build every workload's TF session, print ``ready``, then
    for each ``NAME REPEATS`` line on stdin print ``{"name", "seconds", "version"}``
    (best of REPEATS steps), until stdin closes."""
    import importlib

    tf = importlib.import_module("tensorflow.compat.v1")
    tf.disable_v2_behavior()
    steps = {}
    for name in names:
        steps[name], _ = session_step(tf, name, arrays(name, batch))
        steps[name]()  # warm: TensorFlow's first run optimizes the graph
    print("ready", flush=True)
    for line in sys.stdin:
        name, rep = line.split()
        seconds = best_times({"tf": steps[name]}, int(rep))["tf"]
        print(json.dumps({"name": name, "seconds": seconds,
                          "version": tf.version.VERSION}), flush=True)
    return 0


class TensorFlowChild:
    """TensorFlow 2.15 in a child process of the oracle's environment
    (``${TF_ORACLE_VENV:-/tmp/tf-oracle-venv}``), timing a workload on request, so its
    repeats interleave with flowgraph's in the same minute. `error` says why there is
    none (then `time` returns None)."""

    def __init__(self, names: list[str], batch: int) -> None:
        self.proc, self.error = None, ""
        self.log = tempfile.TemporaryFile(mode="w+")  # a pipe could fill up and block
        venv = os.environ.get("TF_ORACLE_VENV", "/tmp/tf-oracle-venv")
        python = os.path.join(venv, "bin", "python")
        if not os.access(python, os.X_OK):
            self.error = (f"no TensorFlow environment at {venv}: run ../shared/tools/tf-oracle "
                          f"once to create it, or set TF_ORACLE_VENV")
            return
        env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
        env.pop("TF_MODULE", None)
        self.proc = subprocess.Popen(
            [python, os.path.abspath(__file__), "--as-tf", "--batch", str(batch), *names],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True,
            env=env)
        if self._read() != "ready":
            self._fail("did not start")

    def _read(self) -> str:
        while True:
            line = self.proc.stdout.readline()
            if not line or line.strip() in ("ready",) or line.startswith("{"):
                return line.strip()

    def _fail(self, what: str) -> None:
        self.proc.kill()
        self.log.seek(0)
        self.error = f"TensorFlow run {what}: {self.log.read()[-300:]}"
        self.proc = None

    def time(self, name: str, repeat: int) -> dict | None:
        """``{"seconds", "version"}``: TensorFlow's best of `repeat` steps of `name`."""
        if self.proc is None:
            return None
        self.proc.stdin.write(f"{name} {repeat}\n")
        self.proc.stdin.flush()
        line = self._read()
        if not line.startswith("{"):
            self._fail("failed")
            return None
        return json.loads(line)

    def close(self) -> None:
        if self.proc is not None:
            self.proc.stdin.close()
            self.proc.wait(timeout=60)


def check(name: str, fg_outputs, np_outputs) -> None:
    for got, want in zip(fg_outputs, np_outputs):
        np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3 * np.abs(want).max(),
                                   err_msg=f"{name}: flowgraph and NumPy disagree")


def measure(tf, name: str, batch: int, rounds: int, tf_child, blas) -> None:
    """One workload's line: flowgraph's session step, the NumPy reference and (with
    `tf_child`) TensorFlow's step, each the best over `rounds` rounds of
    `repeats(batch)` steps, the three taking turns in every round: a block of
    back-to-back steps each, after a pause (`quiet`)."""
    import run  # benchmarks/run.py (on sys.path from `main`)

    data = arrays(name, batch)
    fg_step, fg_outputs = session_step(tf, name, data)
    np_step = numpy_step(name, data)
    if np_step is not None:
        check(name, fg_outputs(), np_step())
    best = {"flowgraph": float("inf"), "numpy": float("inf"), "tensorflow": float("inf")}
    version = None
    for _ in range(rounds):  # one block of steps per system, each after a pause
        quiet()
        best["flowgraph"] = min(best["flowgraph"], best_times(
            {"flowgraph": fg_step}, repeats(batch))["flowgraph"])
        quiet()
        found = tf_child.time(name, repeats(batch)) if tf_child is not None else None
        if found is not None:
            best["tensorflow"] = min(best["tensorflow"], found["seconds"])
            version = found["version"]
        if np_step is not None:
            quiet()
            best["numpy"] = min(best["numpy"], best_times(
                {"numpy": np_step}, repeats(batch))["numpy"])
    notes = [f"batch {batch}, forward + backward, best of {rounds} x {repeats(batch)} "
             f"(flowgraph, TensorFlow and NumPy take turns each round: a block of steps "
             f"each, after a {quiet_seconds():.2f} s pause)",
             f"OPENBLAS_THREAD_TIMEOUT={os.environ.get('OPENBLAS_THREAD_TIMEOUT')}"]
    extra, met = {}, None
    if version is not None:
        seconds = best["tensorflow"]
        extra = {"tensorflow": run._round(seconds),
                 "ratio_tf": run._round(best["flowgraph"] / seconds),
                 "tensorflow_version": version}
        met = best["flowgraph"] / seconds <= TARGET_TF if name != "cnn" else None
    elif tf_child is not None:
        notes.append(tf_child.error)
    reference = best["numpy"] if np_step is not None else None
    run.emit(f"{name}_step", "s", best["flowgraph"], reference,
             TARGET_TF if name != "cnn" else None, met, notes, blas, **extra)


def main(argv: list[str]) -> int:
    batch, with_tf, child, kernels, rounds = BATCH, False, False, False, 3
    names = []
    while argv:
        arg = argv.pop(0)
        if arg == "--batch":
            batch = int(argv.pop(0))
        elif arg == "--tf":
            with_tf = True
        elif arg == "--as-tf":
            child = True
        elif arg == "--kernels":
            kernels = True
        elif arg == "--rounds":
            rounds = int(argv.pop(0))
        else:
            names.append(arg)
    names = names or list(WORKLOADS)
    unknown = [n for n in names if n not in WORKLOADS]
    if unknown:
        print(f"unknown workload(s) {unknown}; choose from {list(WORKLOADS)}", file=sys.stderr)
        return 2
    if child:
        return as_tensorflow(names, batch)

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import run  # benchmarks/run.py: emit, blas_info

    import flowgraph as tf

    np.matmul(np.ones((64, 64)), np.ones((64, 64)))  # load BLAS before blas_info
    blas = run.blas_info()
    if kernels:
        kernel_times(names, batch, blas)
        return 0
    tf_child = TensorFlowChild(names, batch) if with_tf else None
    try:
        for name in names:
            measure(tf, name, batch, rounds, tf_child, blas)
    finally:
        if tf_child is not None:
            tf_child.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
