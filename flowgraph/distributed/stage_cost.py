"""How many threads a task gives a stage: by the stage's cost, decided on its first run.

Why: a task started by `flowgraph launch` (or `run_cluster`) gets its share of the cores
(`flowgraph.distributed.server.stage_threads`: 1 of 2 cores for the trainer of a 1-worker
cluster beside its ps). Most stages are light (a small MLP's step: a few MFLOP, tens of
ops): handing their ops to pool threads costs two thread switches per hand-off on a core
the other task needs, so they run inline, on the calling thread. A GEMM-heavy stage (the
backward pass of a 784-1024-1024-10 MLP at batch 256: about 3 GFLOP) loses the overlap
of its independent matrix products on one thread, while its ps sits idle waiting for the
gradients; it gets a pool thread per core.

More threads here means more executor threads (``inter_op_parallelism_threads``), never
more BLAS threads: the executor's pool threads block when idle, while OpenBLAS's spin for
a while after each call, on cores another task needs (with every stage on every core and
BLAS threads to match, the small step got slower). Each product runs on the launcher's
BLAS share; independent products run side by side.

The cost is the stage's matrix-product flops (`flowgraph.runtime.cost_model.CostModel`:
``2·M·N·K`` for MatMul, BatchMatMul and the convolutions), with a dimension the graph left
unknown taken as the batch size of the first call's feeds.

Example
-------
>>> threads_for_stage(flops=6e6, share=1, pinned=False, cores=2)    # small MLP step
1
>>> threads_for_stage(flops=3e9, share=1, pinned=False, cores=2)    # heavy MLP step
2
>>> threads_for_stage(flops=3e9, share=1, pinned=True, cores=2)     # the config's choice
1
"""

from __future__ import annotations

import os

from flowgraph.runtime.cost_model import CostModel

__all__ = ["HEAVY_STAGE_FLOPS", "stage_flops", "threads_for_stage", "usable_cores"]

# A stage with at least this many matrix-product flops runs on every core: ~5 ms of
# single-core GEMM here, where a pool hand-off (~20-50 µs) is noise.
HEAVY_STAGE_FLOPS = 5e7


def usable_cores() -> int:
    """The cores this process may run on (its affinity mask where the OS has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def stage_flops(operations, feed_shapes: list) -> float:
    """The matrix-product flops of a stage whose ops are `operations`, fed values of
    `feed_shapes` (in feed order: the first one's leading dimension stands for every
    dimension the graph left unknown).

    >>> import flowgraph as tf
    >>> with tf.Graph().as_default() as g:
    ...     x = tf.placeholder(tf.float32, [None, 64])
    ...     y = tf.matmul(x, tf.ones([64, 128]))
    >>> stage_flops(g.get_operations(), [(32, 64)])   # 2 * 32 * 64 * 128
    524288.0
    """
    model = CostModel()
    model.set_feed_shapes(dict(enumerate(feed_shapes)))
    total = 0.0
    for op in operations:
        try:
            total += model.flops(op)
        except (TypeError, ValueError):  # a shape the model cannot read: no estimate
            continue
    return total


def threads_for_stage(flops: float, share: int, pinned: bool, cores: int | None = None
                      ) -> int:
    """The executor threads of a stage costing `flops`: `share` when the server's config
    chose it (`pinned`), else 1 (inline, on the calling thread) for a light stage and
    every core (at least `share`) for one of `HEAVY_STAGE_FLOPS` or more. 0 would mean
    the session's default."""
    if pinned and share > 0:
        return share
    if flops < HEAVY_STAGE_FLOPS:
        return 1
    return max(share, cores or usable_cores())
