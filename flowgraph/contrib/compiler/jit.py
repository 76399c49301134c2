"""`tf.contrib.compiler.jit.experimental_jit_scope`: mark ops for XLA JIT compilation.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     with tf.contrib.compiler.jit.experimental_jit_scope(compile_ops=False):
...         y = tf.add(1.0, 2.0)
...     y.op.get_attr("_XlaCompile")
False
"""

from __future__ import annotations

import contextlib

from flowgraph.framework.graph import get_default_graph

__all__ = ["experimental_jit_scope"]

# The graph collection holding a graph's scope counter (TensorFlow's key).
_XLA_SCOPE_KEY = "__xla_scope"


class _ScopeCounter:
    """How many outermost JIT scopes a graph has had, and how deep the current one is."""

    def __init__(self):
        self.count = 0
        self.depth = 0


def _counter(graph) -> _ScopeCounter:
    found = graph.get_collection(_XLA_SCOPE_KEY)
    if found:
        return found[0]
    counter = _ScopeCounter()
    graph.add_to_collection(_XLA_SCOPE_KEY, counter)
    return counter


@contextlib.contextmanager
def experimental_jit_scope(compile_ops=True, separate_compiled_gradients=False):
    """Record TensorFlow's XLA attributes on the ops the block creates.

    ``_XlaCompile`` is `compile_ops` (or ``compile_ops(node_def)`` when it is callable),
    ``_XlaSeparateCompiledGradients`` is `separate_compiled_gradients`, and
    ``_XlaScope`` is ``b"jit_scope_N"``, numbered per graph by the outermost scope (a
    nested scope keeps its parent's). An inner scope's settings win for its own ops.
    flowgraph has no XLA: the attributes are kept (and exported) but change no result.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     with tf.contrib.compiler.jit.experimental_jit_scope():
    ...         y = tf.add(1.0, 2.0)
    ...     y.op.get_attr("_XlaCompile")
    True
    """
    graph = get_default_graph()
    counter = _counter(graph)
    scope = None
    if counter.depth == 0:
        scope = f"jit_scope_{counter.count}".encode()
        counter.count += 1
    counter.depth += 1
    before = len(graph.get_operations())
    try:
        yield
    finally:
        counter.depth -= 1
    # Ops get the attributes when the block ends; setdefault keeps an inner scope's.
    for op in graph.get_operations()[before:]:
        attrs = op._attrs
        if "_XlaCompile" not in attrs:
            value = compile_ops(op.node_def) if callable(compile_ops) else compile_ops
            attrs["_XlaCompile"] = bool(value)
        attrs.setdefault("_XlaSeparateCompiledGradients", bool(separate_compiled_gradients))
        if scope is not None:
            attrs.setdefault("_XlaScope", scope)
