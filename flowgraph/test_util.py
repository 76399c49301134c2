"""The module-level helpers of `tf.test`: gradient checks, device queries, stubs.

``compute_gradient`` returns the Jacobians TF 1.x returns: for an input of ``n`` elements
and an output of ``m`` elements, a ``(n, m)`` array computed from the graph's gradients
(the "theoretical" one) and one from central differences (the "numerical" one).
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework.graph import get_default_session

__all__ = [
    "Benchmark",
    "StubOutForTesting",
    "assert_equal_graph_def",
    "compute_gradient",
    "compute_gradient_error",
    "gpu_device_name",
    "is_built_with_cuda",
    "is_built_with_gpu_support",
    "is_built_with_rocm",
    "is_built_with_xla",
    "is_gpu_available",
]


def is_gpu_available(cuda_only=False, min_cuda_compute_capability=None) -> bool:
    """Whether a CUDA GPU is available: flowgraph runs on CPU (and OpenCL), so False."""
    del cuda_only, min_cuda_compute_capability
    return False


def gpu_device_name() -> str:
    """The name of a GPU device, or '' when there is none (always '' here)."""
    return ""


def is_built_with_cuda() -> bool:
    """False: flowgraph has no CUDA kernels."""
    return False


def is_built_with_rocm() -> bool:
    """False: flowgraph has no ROCm kernels."""
    return False


def is_built_with_gpu_support() -> bool:
    """False: neither CUDA nor ROCm."""
    return False


def is_built_with_xla() -> bool:
    """False: flowgraph has no XLA compiler."""
    return False


def assert_equal_graph_def(actual, expected, checkpoint_v2=False, hash_table_shared_name=False):
    """Raise AssertionError unless two GraphDefs hold the same nodes (in any order).

    Example
    -------
    >>> import flowgraph as tf
    >>> g = tf.Graph()
    >>> with g.as_default():
    ...     _ = tf.constant(1.0, name="c")
    >>> tf.test.assert_equal_graph_def(g.as_graph_def(), g.as_graph_def())
    """
    del checkpoint_v2, hash_table_shared_name
    a = {n.name: str(n) for n in actual.node}
    e = {n.name: str(n) for n in expected.node}
    if a.keys() != e.keys():
        raise AssertionError(f"GraphDefs differ in their nodes: only in actual "
                             f"{sorted(a.keys() - e.keys())}, only in expected "
                             f"{sorted(e.keys() - a.keys())}")
    for name in sorted(a):
        if a[name] != e[name]:
            raise AssertionError(f"GraphDefs differ at node {name!r}:\n{a[name]}\nvs\n"
                                 f"{e[name]}")


def _session():
    sess = get_default_session()
    if sess is None:
        raise ValueError("tf.test.compute_gradient needs a default session: call it "
                         "inside `with tf.Session():` or `with self.cached_session():`")
    return sess


def _jacobians(x, x_shape, x_value, y, y_shape, delta, feed):
    from flowgraph.ops.array_ops import placeholder
    from flowgraph.ops.gradients import gradients

    sess = _session()
    x_size = int(np.prod(x_shape, dtype=np.int64))
    y_size = int(np.prod(y_shape, dtype=np.int64))
    y_dtype = y.dtype.base_dtype.as_numpy_dtype
    jac_dtype = x.dtype.base_dtype.as_numpy_dtype  # TF's Jacobians have x's dtype
    theoretical = np.zeros((x_size, y_size), jac_dtype)
    grad_ys = placeholder(y.dtype.base_dtype, list(y_shape), name="grad_ys")
    dy = gradients(y, x, grad_ys=grad_ys)
    if dy[0] is None:  # y does not depend on x; TF fails the same way
        raise AssertionError("dx = None")
    for j in range(y_size):
        seed = np.zeros(y_size, y_dtype)
        seed[j] = 1
        g = sess.run(dy[0], {**feed, x: x_value, grad_ys: seed.reshape(y_shape)})
        if hasattr(g, "indices"):  # IndexedSlices value: scatter into a dense gradient
            dense = np.zeros(x_shape, np.float64)
            np.add.at(dense, np.asarray(g.indices), np.asarray(g.values, np.float64))
            g = dense
        theoretical[:, j] = np.asarray(g, np.float64).reshape(-1)
    numerical = np.zeros((x_size, y_size), jac_dtype)
    flat = np.array(x_value, dtype=x.dtype.base_dtype.as_numpy_dtype).reshape(-1)
    for i in range(x_size):
        old = flat[i]
        flat[i] = old + delta
        y_pos = np.asarray(sess.run(y, {**feed, x: flat.reshape(x_shape)}), np.float64)
        flat[i] = old - delta
        y_neg = np.asarray(sess.run(y, {**feed, x: flat.reshape(x_shape)}), np.float64)
        flat[i] = old
        numerical[i, :] = ((y_pos - y_neg) / (2 * delta)).reshape(-1)
    return theoretical, numerical


def compute_gradient(x, x_shape, y, y_shape, x_init_value=None, delta=1e-3,
                     init_targets=None, extra_feed_dict=None):
    """The theoretical and numerical Jacobians of `y` with respect to `x`.

    `x` is a tensor (or a list of tensors) fed with `x_init_value` (random values in
    [0, 1) when None); each Jacobian has shape ``(x size, y size)``. Returns a tuple
    ``(theoretical, numerical)``, or a list of them when `x` is a list. Needs a
    default session.

    Example
    -------
    >>> import flowgraph as tf, numpy as np
    >>> x = tf.constant([1.0, 2.0])
    >>> with tf.Session():
    ...     th, nu = tf.test.compute_gradient(x, [2], x * x, [2],
    ...                                       x_init_value=np.array([1.0, 2.0]))
    >>> th.tolist()
    [[2.0, 0.0], [0.0, 4.0]]
    """
    if init_targets is not None:
        _session().run(init_targets)
    feed = dict(extra_feed_dict or {})
    if isinstance(x, (list, tuple)):
        values = x_init_value if x_init_value is not None else [None] * len(x)
        out = []
        for i, (xi, shape_i) in enumerate(zip(x, x_shape)):
            others = {xj: vj for j, (xj, vj) in enumerate(zip(x, values))
                      if j != i and vj is not None}
            out.append(compute_gradient(xi, shape_i, y, y_shape, values[i], delta,
                                        None, {**feed, **others}))
        return out
    if x_init_value is None:
        x_init_value = np.random.random_sample(x_shape)
    x_value = np.asarray(x_init_value, dtype=x.dtype.base_dtype.as_numpy_dtype)
    if list(x_value.shape) != list(x_shape):
        raise ValueError(f"compute_gradient: x_init_value has shape {x_value.shape}, "
                         f"but x_shape is {tuple(x_shape)}")
    return _jacobians(x, list(x_shape), x_value, y, list(y_shape), delta, feed)


def compute_gradient_error(x, x_shape, y, y_shape, x_init_value=None, delta=1e-3,
                           init_targets=None, extra_feed_dict=None) -> np.float64:
    """The largest absolute difference between the theoretical and numerical Jacobians.

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.constant([1.0, 2.0])
    >>> with tf.Session():
    ...     err = tf.test.compute_gradient_error(x, [2], tf.reduce_sum(x * x), [])
    >>> bool(err < 1e-2), type(err).__name__
    (True, 'float64')
    """
    result = compute_gradient(x, x_shape, y, y_shape, x_init_value, delta, init_targets,
                              extra_feed_dict)
    pairs = result if isinstance(result, list) else [result]
    err = 0.0
    for theoretical, numerical in pairs:
        if theoretical.size:
            err = max(err, float(np.max(np.abs(theoretical - numerical))))
    return np.float64(err)  # TensorFlow returns a NumPy float64, whatever x's dtype


class StubOutForTesting:
    """Replace attributes for a test and put them back with `UnsetAll`/`CleanUp`.

    Example
    -------
    >>> import math
    >>> stubs = StubOutForTesting()
    >>> stubs.Set(math, "pi", 3.0); math.pi
    3.0
    >>> stubs.CleanUp(); round(math.pi, 2)
    3.14
    """

    def __init__(self):
        self._saved = []

    def Set(self, parent, child_name, new_child):
        """Set ``parent.child_name = new_child``, remembering the old value."""
        self._saved.append((parent, child_name, getattr(parent, child_name)))
        setattr(parent, child_name, new_child)

    SmartSet = Set

    def UnsetAll(self):
        """Put back every attribute replaced by `Set`, newest first."""
        for parent, name, old in reversed(self._saved):
            setattr(parent, name, old)
        self._saved = []

    SmartUnsetAll = UnsetAll

    def CleanUp(self):
        """Same as `UnsetAll`."""
        self.UnsetAll()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.CleanUp()


class Benchmark:
    """Base class of benchmarks: `report_benchmark` records, `run_op_benchmark` times.

    Example
    -------
    >>> import flowgraph as tf
    >>> class B(tf.test.Benchmark):
    ...     pass
    >>> with tf.Session() as sess:
    ...     r = B().run_op_benchmark(sess, tf.constant(1.0), min_iters=2)
    >>> sorted(r)
    ['extras', 'iters', 'name', 'wall_time']
    """

    def report_benchmark(self, iters=None, cpu_time=None, wall_time=None, throughput=None,
                         extras=None, name=None, metrics=None):
        """Record one benchmark result (kept in ``self.reports``)."""
        entry = {"name": name or type(self).__name__, "iters": iters, "wall_time": wall_time,
                 "extras": extras or {}}
        if cpu_time is not None:
            entry["cpu_time"] = cpu_time
        if throughput is not None:
            entry["throughput"] = throughput
        if metrics is not None:
            entry["metrics"] = metrics
        self.__dict__.setdefault("reports", []).append(entry)
        return entry

    def run_op_benchmark(self, sess, op_or_tensor, feed_dict=None, burn_iters=2,
                         min_iters=10, store_trace=False, store_memory_usage=True,
                         name=None, extras=None, mbs=0):
        """Run `op_or_tensor` `burn_iters` + `min_iters` times; report the median time."""
        import time

        del store_trace, store_memory_usage, mbs
        for _ in range(burn_iters):
            sess.run(op_or_tensor, feed_dict=feed_dict)
        times = []
        for _ in range(min_iters):
            start = time.perf_counter()
            sess.run(op_or_tensor, feed_dict=feed_dict)
            times.append(time.perf_counter() - start)
        return self.report_benchmark(iters=min_iters, wall_time=float(np.median(times)),
                                     extras=extras, name=name)

    def evaluate(self, tensors):
        """Run `tensors` in the default session."""
        return _session().run(tensors)
