"""`tf.contrib.compiler`: TF 1.x's XLA entry points, `jit.experimental_jit_scope` and
`xla.compile`.

flowgraph has no XLA (its planner fuses kernels itself, docs/performance.md): the JIT
scope only records TensorFlow's ``_XlaCompile``/``_XlaScope``/
``_XlaSeparateCompiledGradients`` attributes on the ops built inside it, and
`xla.compile` builds the computation into the graph as it is. Results never change.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     with tf.contrib.compiler.jit.experimental_jit_scope():
...         y = tf.add(1.0, 2.0)
...     y.op.get_attr("_XlaScope")
b'jit_scope_0'
"""

from flowgraph.contrib.compiler import jit, xla

__all__ = ["jit", "xla"]
