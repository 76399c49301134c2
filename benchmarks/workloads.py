"""The benchmark workloads, built once and shared by `run.py` and `test_bench_engine.py`.

Each builder returns a `Workload`: a flowgraph graph with what to feed and fetch, plus a
reference that makes the same NumPy calls without flowgraph (straight-line Python code
generated once, so the reference pays no loop or lookup overhead per call).

Example
-------
>>> w = chain(10)                               # doctest: +SKIP
>>> with w.session() as sess:                   # doctest: +SKIP
...     w.run(sess)
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import flowgraph as tf

# Sizes of the parallel workloads (see docs/benchmarks.md).
N_BRANCHES = 4
OPS_PER_BRANCH = 8
GATHER_TABLE = 4_000_000
GATHER_INDICES = 1_000_000
MATMUL_SHAPE = (384, 512)  # each branch: m <- m @ w_b, w_b of shape (512, 512)


@dataclass
class Workload:
    """A graph, its feeds and fetches, and the NumPy reference doing the same work."""

    name: str
    graph: tf.Graph
    fetches: Any
    feed_dict: dict
    reference: Callable[[], Any]
    nodes: int
    notes: list[str] = field(default_factory=list)
    # The same calls keeping 0-d ndarrays (``out=...``), as flowgraph's kernels must.
    ndarray_reference: Callable[[], Any] | None = None

    def session(self, inter_op: int = 1, intra_op: int = 0) -> tf.Session:
        config = tf.ConfigProto(inter_op_parallelism_threads=inter_op,
                                intra_op_parallelism_threads=intra_op)
        return tf.Session(graph=self.graph, config=config)

    def run(self, sess: tf.Session):
        return sess.run(self.fetches, self.feed_dict)


def _straight_line(lines: list[str], args: str, env: dict) -> Callable:
    """Compile ``def f(<args>): <lines>`` with `env` as its globals."""
    src = f"def f({args}):\n" + "".join(f"    {line}\n" for line in lines)
    namespace = dict(env)
    exec(compile(src, "<benchmark reference>", "exec"), namespace)
    return namespace["f"]


# -- session overhead --------------------------------------------------------------------
def one_op(size: int = 16) -> Workload:
    """``y = sin(x)`` on a fed float32 vector: the fixed cost of one `Session.run`."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [size], name="x")
        y = tf.sin(x)
    v = np.linspace(0.0, 1.0, size, dtype=np.float32)
    sin = np.sin
    return Workload("session_overhead", g, y, {x: v}, lambda: sin(v), 1)


# -- chain and wide ----------------------------------------------------------------------
def chain(n: int = 1000) -> Workload:
    """`n` dependent ``tf.sin`` ops on a fed float64 scalar (0-d array)."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float64, [], name="x")
        y = x
        for _ in range(n):
            y = tf.sin(y)
    v = np.asarray(0.5, dtype=np.float64)
    ref = _straight_line(["y = sin(x)"] + ["y = sin(y)"] * (n - 1) + ["return y"], "x",
                         {"sin": np.sin})
    ref_nd = _straight_line(["y = sin(x, out=...)"] + ["y = sin(y, out=...)"] * (n - 1)
                            + ["return y"], "x", {"sin": np.sin})
    notes = ["reference: NumPy turns the 0-d array into a float64 scalar after the first "
             "call; flowgraph's kernels return ndarrays (0-d included), so "
             "reference_ndarray makes the same calls with out=... to keep 0-d arrays"]
    return Workload(f"chain_{n}", g, y, {x: v}, lambda: ref(v), n, notes,
                    lambda: ref_nd(v))


def wide(n: int = 1000, size: int = 16) -> Workload:
    """`n` independent ``x + c_i`` on a fed vector (distinct constants), then summed."""
    consts = [np.asarray(1.0 + 1e-3 * i, dtype=np.float32) for i in range(n)]
    notes = []
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [size], name="x")
        terms = [tf.add(x, tf.constant(c)) for c in consts]
        add_n = getattr(tf, "add_n", None)
        if add_n is not None:
            total = add_n(terms)
            nodes = n + 1
            notes.append("summed with one tf.add_n node; the reference sums as the AddN "
                         "kernel does: np.add into one output buffer (out=)")
        else:
            total = terms[0]
            for t in terms[1:]:
                total = tf.add(total, t)
            nodes = 2 * n - 1
            notes.append(f"tf.add_n is not available: summed with a chain of {n - 1} adds")
    v = np.linspace(0.0, 1.0, size, dtype=np.float32)
    env = {"add": np.add}
    env.update({f"c{i}": c for i, c in enumerate(consts)})
    lines = [f"a{i} = add(x, c{i})" for i in range(n)]
    if nodes == n + 1:
        lines += ["s = empty(a0.shape, a0.dtype)", "add(a0, a1, out=s)"]
        lines += [f"add(s, a{i}, out=s)" for i in range(2, n)] + ["return s"]
        env["empty"] = np.empty
    else:
        lines += ["s = add(a0, a1)"] + [f"s = add(s, a{i})" for i in range(2, n)]
        lines += ["return s"]
    ref = _straight_line(lines, "x", env)
    return Workload(f"wide_{n}", g, total, {x: v}, lambda: ref(v), nodes, notes)


# -- parallel branches -------------------------------------------------------------------
def _gather_op():
    """``tf.gather`` if flowgraph has it, else a benchmark-local expensive gather op."""
    gather = getattr(tf, "gather", None)
    if gather is not None:
        with tf.Graph().as_default():
            probe = gather(tf.constant([1.0, 2.0]), [1])
        return gather, f"tf.gather (op {probe.op.type}, cost class {probe.op.op_def.cost.value})"
    from flowgraph.backends.cpu import cpu_kernel
    from flowgraph.framework.registry import OpCost, register_op
    from flowgraph.framework.tensor_shape import TensorShape
    from flowgraph.ops.op_util import make_tensor

    if not _has_op("BenchGather"):
        @register_op("BenchGather", cost=OpCost.EXPENSIVE)
        def _bench_gather_shape(op, table, indices):
            if indices.ndims is None or table.ndims is None:
                return [TensorShape(None)]
            return [TensorShape(list(indices.dims) + list(table.dims[1:]))]

        @cpu_kernel("BenchGather")
        def _bench_gather(table, indices):
            return np.take(table, indices, axis=0)

    def bench_gather(table, indices):
        return make_tensor("BenchGather", [table, indices], name="BenchGather")

    return bench_gather, "tf.gather not available: benchmark-local op BenchGather " \
                         "(cost='expensive', kernel np.take)"


def _has_op(name: str) -> bool:
    from flowgraph.framework.registry import has_op_def

    return has_op_def(name)


@dataclass
class ParallelWorkload:
    """Independent branches run by flowgraph, and the same NumPy work for a thread pool."""

    name: str
    workload: Workload
    branch_fns: list[Callable[[], Any]]
    notes: list[str]

    def serial(self):
        return [f() for f in self.branch_fns]

    def pooled(self, pool: concurrent.futures.ThreadPoolExecutor):
        return [f.result() for f in [pool.submit(fn) for fn in self.branch_fns]]


def gathers(seed: int = 0) -> ParallelWorkload:
    """4 branches; each sums 8 random gathers of 1M indices from a 4M float32 table."""
    rng = np.random.default_rng(seed)
    table_v = rng.standard_normal(GATHER_TABLE, dtype=np.float32)
    idx_v = [[rng.integers(0, GATHER_TABLE, GATHER_INDICES, dtype=np.int64)
              for _ in range(OPS_PER_BRANCH)] for _ in range(N_BRANCHES)]
    gather, gather_note = _gather_op()
    g = tf.Graph()
    feed = {}
    with g.as_default():
        table = tf.placeholder(tf.float32, [GATHER_TABLE], name="table")
        feed[table] = table_v
        outs = []
        for b in range(N_BRANCHES):
            acc = None
            for k in range(OPS_PER_BRANCH):
                idx = tf.placeholder(tf.int64, [GATHER_INDICES], name=f"idx_{b}_{k}")
                feed[idx] = idx_v[b][k]
                t = gather(table, idx)
                acc = t if acc is None else tf.add(acc, t)
            outs.append(acc)

    take, add = np.take, np.add

    def branch(b):
        def fn():
            acc = take(table_v, idx_v[b][0], axis=0)
            for k in range(1, OPS_PER_BRANCH):
                acc = add(acc, take(table_v, idx_v[b][k], axis=0))
            return acc

        return fn

    notes = [gather_note, "each branch: 8 gathers summed by a chain of 7 adds"]
    w = Workload("parallel", g, outs, feed, None, N_BRANCHES * (2 * OPS_PER_BRANCH - 1))
    return ParallelWorkload("parallel", w, [branch(b) for b in range(N_BRANCHES)], notes)


def matmuls(seed: int = 0) -> ParallelWorkload:
    """4 branches; each is a chain of 8 float32 matmuls ``m <- m @ w_b``."""
    rng = np.random.default_rng(seed)
    m, k = MATMUL_SHAPE
    m0 = rng.standard_normal((m, k), dtype=np.float32)
    ws = [(rng.standard_normal((k, k), dtype=np.float32) / np.sqrt(k)).astype(np.float32)
          for _ in range(N_BRANCHES)]
    g = tf.Graph()
    feed = {}
    with g.as_default():
        x = tf.placeholder(tf.float32, [m, k], name="m0")
        feed[x] = m0
        outs = []
        for b in range(N_BRANCHES):
            w = tf.placeholder(tf.float32, [k, k], name=f"w_{b}")
            feed[w] = ws[b]
            y = x
            for _ in range(OPS_PER_BRANCH):
                y = tf.matmul(y, w)
            outs.append(y)

    matmul = np.matmul

    def branch(b):
        def fn():
            y = m0
            for _ in range(OPS_PER_BRANCH):
                y = matmul(y, ws[b])
            return y

        return fn

    notes = [f"each branch: a chain of {OPS_PER_BRANCH} matmuls ({m}x{k} @ {k}x{k})"]
    w = Workload("parallel_matmul", g, outs, feed, None, N_BRANCHES * OPS_PER_BRANCH)
    return ParallelWorkload("parallel_matmul", w, [branch(b) for b in range(N_BRANCHES)],
                            notes)
