"""Shared fixtures: every test starts with a fresh default graph."""

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
