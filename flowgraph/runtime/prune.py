"""Pass 1, prune: the ops a run needs, walking backwards from fetches and targets.

The walk stops at fed tensors (a fed tensor's producer runs only if something else needs
it) and at `cut` tensors (constants folded at plan time), follows control inputs, and
sees every input through `replace` (common subexpressions merged by the rewrite pass).
The result is in topological order but for while loops' back edges (see
`flowgraph.framework.graph_walk`), so later passes process producers first::

    a ──> b ──> c (fetched)       feeding b: only c runs
          d ──> e                  d, e never run: nothing fetched needs them
"""

from __future__ import annotations

from flowgraph.framework.graph_walk import GraphCycleError, depth_first_order
from flowgraph.framework.operation import Operation, Tensor


def needed_ops(fetch_tensors: list[Tensor], target_ops: list[Operation],
               fed: set[Tensor], cut: set[Tensor] | frozenset = frozenset(),
               done: set[Operation] | None = None,
               replace: dict[Tensor, Tensor] | None = None) -> list[Operation]:
    """Ops needed to compute `fetch_tensors` and run `target_ops`, producers first.

    Tensors in `fed` and `cut` are available; ops in `done` (already run by an earlier
    partial-run call) are never walked into; `replace` maps a tensor to the one that
    stands for it.

    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     a = tf.constant(1.0, name="a")
    ...     b = tf.negative(a, name="b")
    ...     [op.name for op in needed_ops([b], [], fed=set())]
    ['a', 'b']
    """
    done = done or frozenset()
    replace = replace or {}

    def deps(op: Operation):
        for t in op._inputs:
            if t in fed:
                continue
            t = replace.get(t, t)
            if t not in cut and t._op not in done:
                yield t._op
        for c in op._control_inputs:
            # A control input whose outputs are all available is satisfied: it does not run.
            if c not in done and not (c._outputs and all(
                    t in fed or t in cut for t in c._outputs)):
                yield c

    roots = [op for op in target_ops if op not in done]
    for t in fetch_tensors:
        if t not in fed:
            t = replace.get(t, t)
            if t not in cut and t._op not in done:
                roots.append(t._op)
    try:
        return depth_first_order(roots, deps, _is_loop_back_edge)
    except GraphCycleError as e:
        op = e.node
        raise ValueError(
            f"The graph has a cycle through op '{op.name}' ({op.type}) that is not a while "
            "loop; a run cannot be scheduled.") from None


def _is_loop_back_edge(op: Operation, dep: Operation) -> bool:
    return (op.op_def.control_flow == "merge"
            and dep.op_def.control_flow == "next_iteration")
