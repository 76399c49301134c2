"""CPU kernels for the per-run stacks of ``flowgraph/ops/stack_ops.py``.

The value of a stack handle is the stack itself (a `RunStack`), created anew each time
``StackV2`` runs: once per step, and once per frame instance inside a loop. It dies with
the handle, when the executor releases the handle's last use, so nothing outlives the
step. Kernels run under the GIL and each touches the stack with one list/dict operation,
so concurrent pushes and reads from overlapping iterations need no lock.
"""

from __future__ import annotations

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import errors
from flowgraph.framework.dead import DEAD


class RunStack:
    """One stack: a LIFO list (``StackPushV2``/``StackPopV2``) and indexed entries
    (``StackPushAt``/``StackReadAt``, keyed by ``(slot, index)``)."""

    __slots__ = ("entries", "items", "max_size", "name")

    def __init__(self, name: str, max_size: int) -> None:
        self.name = name
        self.max_size = max_size
        self.items: list = []
        self.entries: dict = {}

    def __repr__(self) -> str:
        return (f"<stack '{self.name}' items={len(self.items)} "
                f"entries={len(self.entries)}>")


def _stack(handle, op_type: str) -> RunStack:
    if not isinstance(handle, RunStack):
        raise errors.InvalidArgumentError(
            None, None, f"{op_type}: input 0 is not a stack handle (got "
            f"{type(handle).__name__}); feed stack ops only with a StackV2 output")
    return handle


@cpu_kernel("StackV2")
def stack_v2(max_size, *, stack_name):
    return RunStack(stack_name, int(max_size))


@cpu_kernel("StackPushV2")
def stack_push_v2(handle, elem):
    s = _stack(handle, "StackPushV2")
    if 0 <= s.max_size <= len(s.items):
        raise errors.InvalidArgumentError(
            None, None, f"Stack[{s.name}] overflowed its max_size ({s.max_size})")
    s.items.append(elem)
    return elem


@cpu_kernel("StackPopV2")
def stack_pop_v2(handle):
    s = _stack(handle, "StackPopV2")
    if not s.items:
        raise errors.InvalidArgumentError(
            None, None, f"Stack[{s.name}] is empty: it was popped more times than pushed")
    return s.items.pop()


@cpu_kernel("StackCloseV2")
def stack_close_v2(handle):
    s = _stack(handle, "StackCloseV2")
    s.items.clear()
    s.entries.clear()


@cpu_kernel("StackPushAt")
def stack_push_at(handle, elem, index, *, slot):
    # Called like a Merge: any input may be dead. A dead value (an untaken branch in this
    # iteration, or the loop's final test) is not recorded; the push still completes.
    if elem is DEAD or index is DEAD or handle is DEAD:
        return None
    _stack(handle, "StackPushAt").entries[(slot, int(index))] = elem
    return None


@cpu_kernel("StackReadAt")
def stack_read_at(handle, index, *, slot):
    # A value never recorded was dead in that forward iteration: replay the deadness.
    return _stack(handle, "StackReadAt").entries.get((slot, int(index)), DEAD)
