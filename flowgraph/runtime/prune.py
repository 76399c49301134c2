"""Pruning: the ops a run needs, walking backwards from fetches and targets.

The walk stops at fed tensors (a fed tensor's producer runs only if something else needs
it) and follows control inputs. The result is in topological order, so later passes can
process producers before consumers::

    a ──> b ──> c (fetched)       feeding b: only c runs
          d ──> e                  d, e never run: nothing fetched needs them
"""

from __future__ import annotations

from flowgraph.framework.operation import Operation, Tensor


def needed_ops(fetch_tensors: list[Tensor], target_ops: list[Operation],
               fed: set[Tensor], cut: set[Tensor] | None = None,
               done: set[Operation] | None = None) -> list[Operation]:
    """Ops needed to compute `fetch_tensors` and run `target_ops`, in topological order.

    Tensors in `fed` (and in `cut`, e.g. folded constants) are treated as available; ops
    in `done` (already run by an earlier partial-run call) are never walked into.
    """
    cut = fed if not cut else (fed | cut)
    done = done or frozenset()
    roots: list[Operation] = [op for op in target_ops if op not in done]
    roots.extend(t.op for t in fetch_tensors if t not in cut and t.op not in done)
    state: dict[Operation, int] = {}
    order: list[Operation] = []
    for root in roots:
        if root in state:
            continue
        state[root] = 1
        stack = [(root, _deps(root, cut, done))]
        while stack:
            op, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                stack.pop()
                state[op] = 2
                order.append(op)
                continue
            mark = state.get(nxt)
            if mark is None:
                state[nxt] = 1
                stack.append((nxt, _deps(nxt, cut, done)))
            elif mark == 1:
                raise ValueError(
                    f"The graph has a cycle through op '{nxt.name}' ({nxt.type}) that is "
                    "not a while loop; a run cannot be scheduled."
                )
    return order


def _deps(op: Operation, cut: set[Tensor], done):
    for t in op._inputs:
        if t not in cut and t._op not in done:
            yield t._op
    for c in op._control_inputs:
        # A control input whose outputs are all fed is satisfied: it does not run.
        if c not in done and not (c._outputs and all(t in cut for t in c._outputs)):
            yield c
