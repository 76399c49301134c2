"""The value of a tensor on an untaken control-flow branch.

A `Switch` sends its input to one output and `DEAD` to the other; every node reached only
through dead inputs outputs `DEAD` too, until a `Merge` picks the live value (see
`flowgraph/runtime/_executor.pyx`). Kernels of control-flow ops (stacks, loop exits)
compare against it, so it lives in the framework layer that every other layer may import.

>>> from flowgraph.framework.dead import DEAD
>>> DEAD
<dead>
"""


class _Dead:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<dead>"

    def __reduce__(self):
        return "DEAD"


DEAD = _Dead()
