"""`GradientDescentOptimizer`: ``var -= learning_rate * grad``.

Example
-------
>>> import flowgraph as tf
>>> w = tf.Variable([1.0, 2.0])
>>> train = tf.train.GradientDescentOptimizer(0.5).minimize(tf.reduce_sum(w * w))
>>> with tf.Session() as sess:
...     sess.run(tf.global_variables_initializer())
...     sess.run(train)
...     print(sess.run(w))
[0. 0.]
"""

from __future__ import annotations

from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.indexed_slices import IndexedSlices
from flowgraph.ops import training_ops
from flowgraph.train.optimizer import Optimizer

__all__ = ["GradientDescentOptimizer"]


class GradientDescentOptimizer(Optimizer):
    """Plain gradient descent. A sparse gradient updates only its rows (duplicate rows
    add up), in place.

    Parameters
    ----------
    learning_rate : float, Tensor or callable
        The step size (a callable is called once per `apply_gradients`).
    use_locking : bool
        Hold the variable's lock during the update.
    name : str
        Default ``"GradientDescent"``.
    """

    def __init__(self, learning_rate, use_locking: bool = False,
                 name: str = "GradientDescent") -> None:
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._learning_rate_tensor = None

    def _prepare(self) -> None:
        lr = self._call_if_callable(self._learning_rate)
        self._learning_rate_tensor = convert_to_tensor(lr, name="learning_rate")

    def _apply_dense(self, grad, var):
        return training_ops.apply_gradient_descent(
            var, self._cast(self._learning_rate_tensor, var), grad,
            use_locking=self._use_locking)

    def _apply_sparse_duplicate_indices(self, grad, var):
        # As in TF, a sparse gradient is scattered straight into the variable: a
        # subclass's `_apply_sparse` (e.g. contrib's decoupled weight decay) never runs.
        return GradientDescentOptimizer._apply_sparse(self, grad, var)

    def _resource_apply_sparse_duplicate_indices(self, grad, handle, indices):
        return GradientDescentOptimizer._apply_sparse(
            self, IndexedSlices(grad, indices, None), handle)

    def _apply_sparse(self, grad, var):
        return training_ops.sparse_apply_gradient_descent(
            var, self._cast(self._learning_rate_tensor, var), grad.values, grad.indices,
            use_locking=self._use_locking)
