"""`tf.CriticalSection`: subgraphs that never run at the same time.

``MutexV2`` makes a mutex in the session's resource container; ``MutexLock`` waits for
it (asynchronously: a waiting lock holds no executor thread) and outputs the held lock;
the ops of the protected function depend on the lock, and ``ConsumeMutexLock``, which
depends on their outputs, releases it. Kernels:
`flowgraph/backends/cpu/kernels_critical_section.py`.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     cs = tf.CriticalSection(name="cs")
...     out = cs.execute(lambda: tf.constant(1) + 1)
...     print(tf.Session().run(out))
2
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.graph import get_default_graph
from flowgraph.framework.nest import flatten, pack_sequence_as
from flowgraph.framework.operation import Operation, Tensor
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.array_ops import identity
from flowgraph.ops.op_util import fixed_dtype, make_op

__all__ = ["CriticalSection"]

register_op("MutexV2", attrs={"container": "", "shared_name": ""},
            dtype_fn=fixed_dtype(_dtypes.resource), stateful=True)(
    lambda op: [TensorShape([])])
register_op("MutexLock", dtype_fn=fixed_dtype(_dtypes.variant), stateful=True)(
    lambda op, mutex: [TensorShape([])])
register_op("ConsumeMutexLock", num_outputs=0, dtype_fn=lambda op: [], stateful=True)(
    lambda op, lock: [])
not_differentiable("MutexV2", "MutexLock", "ConsumeMutexLock")


class CriticalSection:
    """Runs subgraphs one at a time: `execute(fn)` builds ``fn()``'s ops behind this
    section's lock, so no two of its executions overlap, within a run or across runs.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     v = tf.Variable(0)
    ...     cs = tf.CriticalSection()
    ...     inc = cs.execute(lambda: v.assign_add(1))
    ...     with tf.Session() as sess:
    ...         sess.run(v.initializer)
    ...         print([int(sess.run(inc)) for _ in range(3)])
    [1, 2, 3]
    """

    def __init__(self, name: str | None = None, shared_name: str | None = None,
                 critical_section_def=None, import_scope=None) -> None:
        if critical_section_def is not None:
            raise ValueError("critical_section_def is not supported by flowgraph: create "
                             "the CriticalSection in the graph that uses it")
        self._handle = make_op("MutexV2", [], {"shared_name": shared_name or ""},
                               name=name or "CriticalSection").outputs[0]

    @property
    def name(self) -> str:
        """The name of the mutex op."""
        return self._handle.op.name

    def execute(self, fn, exclusive_resource_access: bool = True, name: str | None = None):
        """``fn()``'s outputs (tensors come back as identities, ops as one op), computed
        while holding this section's lock; the lock is released once they are done."""
        graph = get_default_graph()
        with graph.name_scope(name or "critical_section_execute"):
            lock = make_op("MutexLock", [self._handle]).outputs[0]
            with graph.control_dependencies([lock]):
                result = fn()
            flat = flatten(result)
            deps = [t for t in flat if isinstance(t, Tensor | Operation)]
            with graph.control_dependencies(deps):
                release = make_op("ConsumeMutexLock", [lock])
            with graph.control_dependencies([release]):
                out = [identity(t) if isinstance(t, Tensor) else
                       release if isinstance(t, Operation) else t for t in flat]
        return pack_sequence_as(result, out) if flat else release
