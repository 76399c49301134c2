"""Shared fixtures: every test starts with a fresh default graph.

The BLAS contention policy (`flowgraph.backends.cpu.blas_threads`) is off in the test
processes (and the processes they start): it changes BLAS's thread count and splits
matrix products when other processes keep the cores busy, which changes a product's
last bits, so tests comparing two runs bit for bit would depend on the host's load.
tests/backends/test_blas_policy.py and test_matmul_split.py build their policies
explicitly.
"""

import os

os.environ.setdefault("FLOWGRAPH_BLAS_POLICY", "off")

import pytest

import flowgraph as tf


@pytest.fixture(autouse=True)
def _fresh_default_graph():
    tf.reset_default_graph()
    yield
    tf.reset_default_graph()


@pytest.fixture
def sess():
    """A session on the (fresh) default graph, closed after the test."""
    with tf.Session() as s:
        yield s
