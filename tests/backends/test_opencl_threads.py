"""OpenCL kernels launched from several executor threads at once.

Kernel objects are cached per device and hold their arguments between setting them and
the launch, so every launch goes through `kernels_elementwise.launch`'s lock. These tests
run many batched products with different broadcast shapes back to back (buffers of the
pool reused between them) from several threads, with the interpreter switching threads
as often as it can, and compare each with NumPy. Before the per-matrix BatchMatMul form
wrote straight into its output, it copied each product into place with pyopencl's
``Array.__setitem__``, whose copy kernel ran outside the lock: one batch matrix in a few
hundred then held another product's values. (`test_opencl_parity` also fails any launch
outside the lock, deterministically.)
"""

from __future__ import annotations

import sys
import threading

import numpy as np
import pytest

import flowgraph as tf
from tests.backends.opencl_support import opencl_devices

opencl_devices()

# (a, b) shapes before adj_x/adj_y; broadcasting batch dimensions of different ranks
SHAPES = [((2, 1, 3, 4), (5, 4, 6)), ((3, 4), (2, 4, 5)), ((1, 3, 4), (2, 4, 5)),
          ((2, 5, 4), (2, 4, 7)), ((3, 1, 2, 9), (1, 4, 9, 3))]


def _operands(rng, sa, sb, adj_x, adj_y):
    a = rng.standard_normal((*sa[:-2], sa[-1], sa[-2]) if adj_x else sa).astype(np.float32)
    b = rng.standard_normal((*sb[:-2], sb[-1], sb[-2]) if adj_y else sb).astype(np.float32)
    want = np.matmul(np.swapaxes(a, -1, -2) if adj_x else a,
                     np.swapaxes(b, -1, -2) if adj_y else b)
    return a, b, want


@pytest.fixture
def _frequent_switches():
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)


@pytest.mark.usefixtures("_frequent_switches")
def test_batched_products_from_several_threads_match_numpy():
    from flowgraph.backends.opencl import kernels_nn
    from flowgraph.backends.opencl._runtime import discover

    rt = discover()[0]
    wrong, errors = [], []

    def work(seed):
        try:
            rng = np.random.default_rng(seed)
            results = []
            for it in range(120):  # enqueue all, wait once: the launches overlap
                sa, sb = SHAPES[(seed + it) % len(SHAPES)]
                adj_x, adj_y = bool(it % 2), bool(it // 2 % 2)
                a, b, want = _operands(rng, sa, sb, adj_x, adj_y)
                got = kernels_nn.batch_matmul_v2(rt.to_device(a), rt.to_device(b),
                                                 adj_x=adj_x, adj_y=adj_y)
                results.append((got, want, (sa, sb, adj_x, adj_y)))
            for got, want, what in results:
                if not np.allclose(got.get(), want, rtol=1e-4, atol=1e-4):
                    wrong.append((seed, what))
        except Exception as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert not wrong, f"{len(wrong)} of 480 batched products differ from NumPy: {wrong[:4]}"


@pytest.mark.usefixtures("_frequent_switches")
def test_parallel_batch_matmuls_in_one_session_match_numpy():
    """The same through the public API: independent BatchMatMulV2 nodes of one step,
    which the executor runs on several threads, repeated over steps."""
    rng = np.random.default_rng(7)
    graph = tf.Graph()
    with graph.as_default():
        feeds, fetches, wants = {}, [], []
        for i in range(16):
            sa, sb = SHAPES[i % len(SHAPES)]
            adj_x, adj_y = bool(i % 2), bool(i // 2 % 2)
            a, b, want = _operands(rng, sa, sb, adj_x, adj_y)
            pa, pb = tf.placeholder(tf.float32, a.shape), tf.placeholder(tf.float32, b.shape)
            with tf.device("/gpu:0"):
                fetches.append(tf.matmul(pa, pb, adjoint_a=adj_x, adjoint_b=adj_y))
            feeds.update({pa: a, pb: b})
            wants.append(want)
        config = tf.ConfigProto(inter_op_parallelism_threads=4)
        with tf.Session(graph=graph, config=config) as sess:
            for _ in range(6):
                for got, want in zip(sess.run(fetches, feeds), wants, strict=True):
                    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
