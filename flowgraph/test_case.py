"""`tf.test`: a `unittest.TestCase` for graph code, and `tf.test.main`.

Each test starts on a fresh default graph with a fixed graph-level seed. Sessions come
from `test_session`/`cached_session` (one session per graph, kept for the test and
closed in tearDown) or `session` (a new one per block); each is the default session
inside its block, so ``tensor.eval()`` and `evaluate` work there.
"""

from __future__ import annotations

import contextlib
import random
import tempfile
import types
import unittest
from unittest import mock

import numpy as np

from flowgraph.framework.graph import (
    get_default_graph,
    get_default_session,
    reset_default_graph,
    set_random_seed,
)
from flowgraph.framework.operation import Operation, Tensor
from flowgraph.ops.variables import Variable
from flowgraph.runtime.session import Session
from flowgraph.test_assertions import AssertionsMixin
from flowgraph.test_util import (
    Benchmark,
    StubOutForTesting,
    assert_equal_graph_def,
    compute_gradient,
    compute_gradient_error,
    gpu_device_name,
    is_built_with_cuda,
    is_built_with_gpu_support,
    is_built_with_rocm,
    is_built_with_xla,
    is_gpu_available,
)

__all__ = ["Benchmark", "StubOutForTesting", "TestCase", "assert_equal_graph_def",
           "benchmark_config", "compute_gradient", "compute_gradient_error",
           "create_local_cluster", "disable_with_predicate", "experimental", "get_temp_dir",
           "gpu_device_name", "is_built_with_cuda", "is_built_with_gpu_support",
           "is_built_with_rocm", "is_built_with_xla", "is_gpu_available", "main", "mock",
           "test_src_dir_path", "with_eager_op_as_function"]

_SEED = 87654321
_TEMP_DIR = None


def main(argv=None):
    """Run the tests of the calling ``__main__`` module (as ``unittest.main``)."""
    return unittest.main(argv=argv)


def benchmark_config():
    """The `ConfigProto` benchmarks run with: rewrites on, except dependency optimization
    (which would prune the benchmarked ops' control edges)."""
    from flowgraph.runtime.config import ConfigProto, RewriterConfig

    config = ConfigProto()
    config.graph_options.rewrite_options.dependency_optimization = RewriterConfig.OFF
    return config


def _free_port() -> int:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def create_local_cluster(num_workers: int, num_ps: int, protocol: str = "grpc",
                         worker_config=None, ps_config=None):
    """Start `num_workers` worker and `num_ps` parameter-server `tf.train.Server`s on
    loopback ports, one cluster, and return ``(workers, ps_servers)``.

    Needs the distributed runtime (``pip install 'flowgraph[distributed]'``).

    Example
    -------
    >>> import flowgraph as tf
    >>> workers, ps = tf.test.create_local_cluster(1, 1)
    >>> with tf.device("/job:ps/task:0"):
    ...     v = tf.Variable(2.0)
    >>> with tf.Session(workers[0].target) as sess:
    ...     sess.run(v.initializer)
    ...     print(sess.run(v * 3.0))
    6.0
    """
    from flowgraph.distributed.cluster_spec import ClusterSpec
    from flowgraph.distributed.server import Server

    cluster = {"worker": [f"localhost:{_free_port()}" for _ in range(num_workers)]}
    if num_ps > 0:
        cluster["ps"] = [f"localhost:{_free_port()}" for _ in range(num_ps)]
    spec = ClusterSpec(cluster)
    workers = [Server(spec, job_name="worker", protocol=protocol, task_index=i,
                      config=worker_config, start=True) for i in range(num_workers)]
    ps_servers = [Server(spec, job_name="ps", protocol=protocol, task_index=i,
                         config=ps_config, start=True) for i in range(num_ps)]
    return workers, ps_servers


def disable_with_predicate(pred, skip_message: str):
    """Decorate a test method: skip it (with `skip_message`) when ``pred()`` is true at
    run time."""
    import functools

    def decorator(func):
        @functools.wraps(func)
        def wrapper(self, *args, **kwargs):
            if pred():
                self.skipTest(skip_message)
            return func(self, *args, **kwargs)

        return wrapper

    return decorator


def test_src_dir_path(relative_path: str) -> str:
    """`relative_path` under ``$TEST_SRCDIR`` (Bazel's runfiles; KeyError when unset,
    as in TensorFlow)."""
    import os

    return os.path.join(os.environ["TEST_SRCDIR"], relative_path)


test_src_dir_path.__test__ = False  # a helper, not a test for pytest to collect


def with_eager_op_as_function(cls=None, only_as_function: bool = False):
    """Class decorator of TensorFlow's eager test variants: graph tests run unchanged."""
    if cls is not None:
        return cls
    return lambda c: c


def _sync_devices():
    raise RuntimeError("sync_devices() must only be called in Eager mode, outside "
                       "tf.functions")


experimental = types.SimpleNamespace(sync_devices=_sync_devices)


def get_temp_dir() -> str:
    """A temporary directory for this process's tests."""
    global _TEMP_DIR
    if _TEMP_DIR is None:
        _TEMP_DIR = tempfile.mkdtemp(prefix="flowgraph_test_")
    return _TEMP_DIR


def _as_array(value):
    """`value` as an array, or None for a ragged nest (compared element by element)."""
    try:
        return np.asarray(value)
    except ValueError:
        return None


def _array_close(testcase, a, b, rtol, atol, msg) -> None:
    """TensorFlow's array comparison of `assertAllClose`: exact shapes, then the
    positions, values, differences and tolerances of the elements that are not close."""
    shown = f" with contents {b}." if b.ndim <= 3 or b.size < 500 else "."
    testcase.assertEqual(a.shape, b.shape,
                         f"Shape mismatch: expected {a.shape}, got {b.shape}{shown}")
    if np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True):
        return
    lines = [msg]
    with np.errstate(invalid="ignore"):
        bad = np.logical_or(np.abs(a - b) > atol + rtol * np.abs(b), np.isnan(a) != np.isnan(b))
    x, y = a, b
    if a.ndim:
        x, y = a[np.where(bad)], b[np.where(bad)]
        lines.append(f"not close where = {np.where(bad)}")
    lines += [f"not close lhs = {x}", f"not close rhs = {y}",
              f"not close dif = {np.abs(x - y)}", f"not close tol = {atol + rtol * np.abs(y)}",
              f"dtype = {a.dtype}, shape = {a.shape}"]
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg="\n".join(lines),
                               equal_nan=True)


def _as_bytes_if_mixed(arr):
    """Unicode strings as UTF-8 bytes, so that 'a' equals b'a' (TF compares them so)."""
    if arr.dtype.kind == "U":
        return np.vectorize(lambda t: t.encode("utf-8"), otypes=[object])(arr) \
            if arr.size else arr.astype(object)
    if arr.dtype == object and arr.size:
        return np.vectorize(lambda t: t.encode("utf-8") if isinstance(t, str) else t,
                            otypes=[object])(arr)
    if arr.dtype.kind == "S":
        return arr.astype(object)
    return arr


try:  # TensorFlow's TestCase is absl's (create_tempdir, assertJsonEqual, ...) when present
    from absl.testing.absltest import TestCase as _BaseTestCase
except ImportError:  # pragma: no cover - absl-py is optional
    _BaseTestCase = unittest.TestCase


class TestCase(AssertionsMixin, _BaseTestCase):
    """A `unittest.TestCase` with graph sessions and NumPy-aware assertions.

    Example
    -------
    >>> import flowgraph as tf
    >>> class SquareTest(tf.test.TestCase):
    ...     def testSquare(self):
    ...         with self.cached_session():
    ...             self.assertAllEqual(tf.square([2, 3]).eval(), [4, 9])
    >>> import unittest, io
    >>> suite = unittest.defaultTestLoader.loadTestsFromTestCase(SquareTest)
    >>> unittest.TextTestRunner(stream=io.StringIO()).run(suite).wasSuccessful()
    True
    """

    def setUp(self):
        super().setUp()
        if self.id().endswith(".test_session"):
            # unittest collects the session helper as a test: skipped before any setUp
            # work (so the subclass's setUp and tearDown do not run), as in TensorFlow
            self.skipTest("Not a test.")
        reset_default_graph()
        set_random_seed(_SEED)
        random.seed(_SEED)
        np.random.seed(_SEED)
        self._cached_sessions: dict = {}

    def tearDown(self):
        for sess in getattr(self, "_cached_sessions", {}).values():
            sess.close()
        self._cached_sessions = {}
        super().tearDown()

    def get_temp_dir(self) -> str:
        """A fresh temporary directory of this test (inside `tf.test.get_temp_dir()`),
        the same for every call within the test, as in TensorFlow."""
        if getattr(self, "_tempdir", None) is None:
            self._tempdir = tempfile.mkdtemp(dir=get_temp_dir())
        return self._tempdir

    # -- sessions ----------------------------------------------------------------------
    @contextlib.contextmanager
    def session(self, graph=None, config=None, use_gpu=False, force_gpu=False):
        """A new session on `graph` (default: the default graph), default inside."""
        del use_gpu, force_gpu  # device placement follows the graph's own device scopes
        graph = graph if graph is not None else get_default_graph()
        with Session(graph=graph, config=config) as sess, graph.as_default(), \
                sess.as_default():
            yield sess

    @contextlib.contextmanager
    def cached_session(self, graph=None, config=None, use_gpu=False, force_gpu=False):
        """This test's session on `graph`, created on first use and reused afterwards."""
        del use_gpu, force_gpu
        graph = graph if graph is not None else get_default_graph()
        if not hasattr(self, "_cached_sessions"):
            self._cached_sessions = {}
        sess = self._cached_sessions.get(graph)
        if sess is None:
            sess = self._cached_sessions[graph] = Session(graph=graph, config=config)
        with graph.as_default(), sess.as_default():
            yield sess

    def test_session(self, graph=None, config=None, use_gpu=False, force_gpu=False):
        """TF 1.x's older name of `cached_session`."""
        if self.id().endswith(".test_session"):
            # unittest collects this method as a test because of its name
            self.skipTest("Not a test.")
        return self.cached_session(graph, config, use_gpu, force_gpu)

    def evaluate(self, tensors):
        """Run `tensors` (any nest of tensors) in the default or the cached session."""
        sess = get_default_session()
        if sess is not None:
            return sess.run(tensors)
        with self.cached_session() as sess:
            return sess.run(tensors)

    # -- assertions --------------------------------------------------------------------
    def _value(self, a):
        if isinstance(a, (Tensor, Operation, Variable)):
            return self.evaluate(a)
        return a

    def assertAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):
        """Assert that `a` and `b` (arrays, tensors, or nests of them) are elementwise close.

        Shapes must match exactly (no broadcasting); dicts must have the same keys. A
        failure names the path of the value (``a[key][0]``) and lists, as TensorFlow's
        message does, where the values are not close, both sides, their difference and
        the tolerance there.
        """
        self._all_close(a, b, rtol, atol, [], msg or "")

    def _all_close(self, a, b, rtol, atol, path, msg):
        a, b = self._value(a), self._value(b)  # tensors anywhere in the nests are run
        at = "[" + "][".join(str(p) for p in path) + "]" if path else ""
        # a namedtuple compares as the dict of its fields, as in TF
        a = a._asdict() if hasattr(a, "_asdict") else a
        b = b._asdict() if hasattr(b, "_asdict") else b
        if isinstance(a, dict) != isinstance(b, dict):
            raise ValueError(f"Can't compare dict to non-dict, a{at} vs b{at}. {msg}")
        if isinstance(a, dict):
            self.assertItemsEqual(a.keys(), b.keys(), f"mismatched keys: a{at} has keys "
                                  f"{a.keys()}, but b{at} has keys {b.keys()}. {msg}")
            for key in a:
                self._all_close(a[key], b[key], rtol, atol, [*path, key], msg)
            return
        a_arr, b_arr = _as_array(a), _as_array(b)
        if a_arr is None or b_arr is None or a_arr.dtype == object or b_arr.dtype == object:
            self.assertEqual(len(a), len(b), f"Length of a{at} is {len(a)}, but b{at} is "
                                             f"{len(b)}. {msg}")
            for i, (x, y) in enumerate(zip(a, b)):
                self._all_close(x, y, rtol, atol, [*path, i], msg)
            return
        _array_close(self, a_arr, b_arr, rtol, atol,
                     f"Mismatched value: a{at} is different from b{at}. {msg}")

    def assertAllEqual(self, a, b, msg=None):
        """Assert that `a` and `b` have the same shape and the same elements; a failure
        lists where they differ and both sides' values there, as TensorFlow's does."""
        msg = msg or ""
        a_arr, b_arr = np.asarray(self._value(a)), np.asarray(self._value(b))
        a_arr, b_arr = _as_bytes_if_mixed(a_arr), _as_bytes_if_mixed(b_arr)
        shown = f" Contents: {b_arr!r}. \n{msg}." if b_arr.ndim <= 3 or b_arr.size < 500 \
            else f" {msg}"
        self.assertEqual(a_arr.shape, b_arr.shape,
                         f"Shape mismatch: expected {a_arr.shape}, got {b_arr.shape}.{shown}")
        same = a_arr == b_arr
        if a_arr.dtype.kind == "f" and b_arr.dtype.kind == "f":
            same = np.logical_or(same, np.logical_and(np.isnan(a_arr), np.isnan(b_arr)))
        if np.all(same):
            return
        lines = [msg]
        diff = np.logical_not(same)
        x, y = a_arr, b_arr
        if a_arr.ndim:
            x, y = a_arr[np.where(diff)], b_arr[np.where(diff)]
            lines.append(f"not equal where = {np.where(diff)}")
        lines += [f"not equal lhs = {x!r}", f"not equal rhs = {y!r}"]
        np.testing.assert_array_equal(a_arr, b_arr, err_msg="\n".join(lines))

    def assertNear(self, f1, f2, err, msg=None):
        """Assert that ``abs(f1 - f2) <= err``."""
        self.assertTrue(f1 == f2 or abs(f1 - f2) <= err,
                        f"{f1:f} != {f2:f} +/- {err:f}" + (f" ({msg})" if msg is not None
                                                           else ""))

    def assertArrayNear(self, farray1, farray2, err, msg=None):
        """Assert that two float lists have the same length and are elementwise near."""
        self.assertEqual(len(farray1), len(farray2), msg)
        for f1, f2 in zip(farray1, farray2):
            self.assertNear(float(f1), float(f2), err, msg)

    def assertShapeEqual(self, input_a, input_b, msg=None):
        """Assert that two NumPy arrays (or scalars) or Tensors have the same shape (a
        Tensor's static shape); TypeError for anything else, a Variable included."""
        shapes = []
        for which, value in (("input_a", input_a), ("input_b", input_b)):
            if isinstance(value, Tensor):
                shapes.append(value.get_shape().as_list())
            elif isinstance(value, np.ndarray | np.generic):
                shapes.append(list(value.shape))
            else:
                raise TypeError(f"{which} must be a Numpy ndarray, Numpy scalar, or a "
                                f"Tensor.Instead received {type(value)}")
        self.assertAllEqual(shapes[0], shapes[1], msg)
