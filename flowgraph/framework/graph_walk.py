"""The one depth-first graph walk: dependencies before dependents, loops allowed.

Every pass that needs "the nodes these roots depend on, producers first" uses
`depth_first_order`: run pruning (ops, following inputs and control inputs) and graph
import (GraphDef node dicts, following input names). The caller says what a node depends
on; the walk says in which order to visit them.

A while loop's `NextIteration` -> `Merge` edge points backwards (the merge consumes a
value of the previous iteration), so a plain walk would call it a cycle. The caller marks
such edges with `is_back_edge`; the walk then visits the edge's source after everything
reachable without back edges, as a root of its own. The order is topological for every
edge but the back edges::

    Enter ──> Merge ──> Switch ──> body ──> NextIteration
                ^                                │
                └──────────── back edge ─────────┘

    order: Enter, Merge, Switch, body, NextIteration

Any other cycle raises `GraphCycleError` naming a node on it.

>>> deps = {"c": ["a", "b"], "b": ["a"], "a": []}
>>> depth_first_order(["c"], lambda n: deps[n])
['a', 'b', 'c']
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable

_VISITING, _DONE = 1, 2


class GraphCycleError(ValueError):
    """The graph has a cycle that is not a marked back edge; `node` lies on it."""

    def __init__(self, node) -> None:
        super().__init__(f"the graph has a cycle through {node!r}")
        self.node = node


def depth_first_order(roots: Iterable[Hashable],
                      deps: Callable[[Hashable], Iterable[Hashable]],
                      is_back_edge: Callable[[Hashable, Hashable], bool] | None = None,
                      ) -> list:
    """Every node reachable from `roots` through `deps`, each after its dependencies.

    `deps(node)` yields the nodes `node` depends on (it may filter: a fed tensor's
    producer is not a dependency). `is_back_edge(node, dep)` marks loop back edges, which
    are walked last (see the module docstring). Roots are visited in the order given.
    """
    order: list = []
    state: dict = {}
    deferred: list = []

    def expand(node):
        for d in deps(node):
            if is_back_edge is not None and is_back_edge(node, d):
                deferred.append(d)
            else:
                yield d

    pending = list(roots)
    pending.reverse()
    while pending:
        root = pending.pop()
        if root not in state:
            state[root] = _VISITING
            stack = [(root, expand(root))]
            while stack:
                node, it = stack[-1]
                nxt = next(it, None)
                if nxt is None:
                    stack.pop()
                    state[node] = _DONE
                    order.append(node)
                    continue
                mark = state.get(nxt)
                if mark is None:
                    state[nxt] = _VISITING
                    stack.append((nxt, expand(nxt)))
                elif mark == _VISITING:
                    raise GraphCycleError(nxt)
        if not pending and deferred:
            pending = deferred[::-1]
            deferred = []
    return order
