"""`tf.contrib.opt.LazyAdamOptimizer`: Adam that, for a sparse gradient (an embedding's),
updates the moment estimates and the variable only on the rows the gradient touches
(plain Adam decays every row's moments). Dense gradients update as Adam.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     emb = tf.Variable([[1.0], [2.0], [3.0]])
...     loss = tf.reduce_sum(tf.nn.embedding_lookup(emb, [0]))
...     step = LazyAdamOptimizer(0.1).minimize(loss)
...     with tf.Session() as sess:
...         sess.run(tf.global_variables_initializer())
...         sess.run(step)
...         print(sess.run(emb).ravel().round(4))
[0.9 2.  3. ]
"""

from __future__ import annotations

from flowgraph.ops import array_index_ops, control_flow_ops, math_ops, scatter_ops
from flowgraph.train.adam import AdamOptimizer

__all__ = ["LazyAdamOptimizer"]


class LazyAdamOptimizer(AdamOptimizer):
    """Adam whose sparse updates touch only the gradient's rows."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 use_locking: bool = False, name: str = "Adam") -> None:
        # TF1's LazyAdam keeps Adam's constructor, so its slots are ``<var>/Adam``
        super().__init__(learning_rate, beta1, beta2, epsilon, use_locking, name)

    def _apply_sparse(self, grad, var):
        inputs = self._inputs(var)
        beta1, beta2 = inputs["beta1"], inputs["beta2"]
        lr = (inputs["lr"] * math_ops.sqrt(1 - inputs["beta2_power"])
              / (1 - inputs["beta1_power"]))
        # the base optimizer has summed the rows of repeated indices
        rows, values = grad.indices, grad.values
        m, v = inputs["m"], inputs["v"]
        m_rows = beta1 * array_index_ops.gather(m, rows) + (1 - beta1) * values
        m_new = scatter_ops.scatter_update(m, rows, m_rows, use_locking=self._use_locking)
        v_rows = (beta2 * array_index_ops.gather(v, rows)
                  + (1 - beta2) * math_ops.square(values))
        v_new = scatter_ops.scatter_update(v, rows, v_rows, use_locking=self._use_locking)
        step = lr * m_rows / (math_ops.sqrt(v_rows) + inputs["epsilon"])
        var_new = scatter_ops.scatter_sub(var, rows, step, use_locking=self._use_locking)
        return control_flow_ops.group(var_new, m_new, v_new)
