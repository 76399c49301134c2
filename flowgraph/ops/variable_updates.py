"""The scatter and counting methods of a reference `tf.Variable` (``v.scatter_add``,
``v.scatter_nd_update``, ``v.count_up_to``, ...): TensorFlow 1's ref ops (``ScatterAdd``,
``ScatterNdUpdate``, ``CountUpTo``), each returning the variable's ref after the write. A
resource variable overrides them with the ``Resource*`` ops
(`flowgraph.ops.resource_variables`).
"""

from __future__ import annotations

from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.ops.op_util import make_tensor

__all__ = ["RefScatterMethods"]


class RefScatterMethods:
    """Mixed into `tf.Variable`; uses its ``_variable`` (the ref), ``graph``, ``dtype``
    and ``op``."""

    def _scatter(self, kind: str, sparse_delta, use_locking, name):
        from flowgraph.framework.indexed_slices import IndexedSlices
        from flowgraph.ops import scatter_ops

        if not isinstance(sparse_delta, IndexedSlices):
            raise TypeError(f"sparse_delta is not IndexedSlices: {sparse_delta!r} (variable "
                            f"'{self.op.name}')")
        fn = getattr(scatter_ops, f"scatter_{kind}")
        with self.graph.as_default():
            return fn(self._variable, sparse_delta.indices, sparse_delta.values,
                      use_locking=use_locking, name=name)

    def scatter_add(self, sparse_delta, use_locking=False, name=None):
        """``ScatterAdd``: add the `IndexedSlices` `sparse_delta`'s rows; the new ref."""
        return self._scatter("add", sparse_delta, use_locking, name)

    def scatter_sub(self, sparse_delta, use_locking=False, name=None):
        """``ScatterSub``: subtract `sparse_delta`'s rows; the new ref."""
        return self._scatter("sub", sparse_delta, use_locking, name)

    def scatter_mul(self, sparse_delta, use_locking=False, name=None):
        """``ScatterMul``: multiply by `sparse_delta`'s rows; the new ref."""
        return self._scatter("mul", sparse_delta, use_locking, name)

    def scatter_div(self, sparse_delta, use_locking=False, name=None):
        """``ScatterDiv``: divide by `sparse_delta`'s rows; the new ref."""
        return self._scatter("div", sparse_delta, use_locking, name)

    def scatter_min(self, sparse_delta, use_locking=False, name=None):
        """``ScatterMin``: the minimum with `sparse_delta`'s rows; the new ref."""
        return self._scatter("min", sparse_delta, use_locking, name)

    def scatter_max(self, sparse_delta, use_locking=False, name=None):
        """``ScatterMax``: the maximum with `sparse_delta`'s rows; the new ref."""
        return self._scatter("max", sparse_delta, use_locking, name)

    def scatter_update(self, sparse_delta, use_locking=False, name=None):
        """``ScatterUpdate``: write `sparse_delta`'s rows; the new ref.

        Example
        -------
        >>> import flowgraph as tf
        >>> with tf.Graph().as_default():
        ...     v = tf.Variable([1.0, 2.0, 3.0])
        ...     up = v.scatter_update(tf.IndexedSlices(tf.constant([9.0]), tf.constant([1])))
        ...     with tf.Session() as sess:
        ...         sess.run(v.initializer)
        ...         print(sess.run(up))
        [1. 9. 3.]
        """
        return self._scatter("update", sparse_delta, use_locking, name)

    def batch_scatter_update(self, sparse_delta, use_locking=False, name=None):
        """`tf.batch_scatter_update` of this variable with `sparse_delta`."""
        from flowgraph.ops.scatter_ops import batch_scatter_update

        with self.graph.as_default():
            return batch_scatter_update(self, sparse_delta.indices, sparse_delta.values,
                                        use_locking=use_locking, name=name)

    def _scatter_nd(self, kind: str, indices, updates, name):
        from flowgraph.ops import scatter_ops

        with self.graph.as_default():
            if kind in ("max", "min"):
                return make_tensor(f"ScatterNd{kind.capitalize()}",
                                   [self._variable, convert_to_tensor(indices),
                                    convert_to_tensor(updates, dtype=self.dtype.base_dtype)],
                                   {"use_locking": True},
                                   name=name or f"ScatterNd{kind.capitalize()}")
            return getattr(scatter_ops, f"scatter_nd_{kind}")(
                self._variable, indices, updates, use_locking=True, name=name)

    def scatter_nd_update(self, indices, updates, name=None):
        """``ScatterNdUpdate``: write `updates` at the index tuples `indices`."""
        return self._scatter_nd("update", indices, updates, name)

    def scatter_nd_add(self, indices, updates, name=None):
        """``ScatterNdAdd``: add `updates` at the index tuples `indices`."""
        return self._scatter_nd("add", indices, updates, name)

    def scatter_nd_sub(self, indices, updates, name=None):
        """``ScatterNdSub``: subtract `updates` at the index tuples `indices`."""
        return self._scatter_nd("sub", indices, updates, name)

    def scatter_nd_max(self, indices, updates, name=None):
        """``ScatterNdMax``: the maximum with `updates` at the index tuples `indices`."""
        return self._scatter_nd("max", indices, updates, name)

    def scatter_nd_min(self, indices, updates, name=None):
        """``ScatterNdMin``: the minimum with `updates` at the index tuples `indices`."""
        return self._scatter_nd("min", indices, updates, name)

    def count_up_to(self, limit: int):
        """``CountUpTo``: add 1 and return the value from before, until `limit`."""
        from flowgraph.ops.state_count_ops import count_up_to

        with self.graph.as_default():
            return count_up_to(self._variable, limit)
