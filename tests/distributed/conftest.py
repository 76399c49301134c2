"""Fixtures for the distributed tests: free loopback ports, servers stopped after use."""

import pytest

from flowgraph.distributed.launch import free_port

pytest.importorskip("grpc")

__all__ = ["free_port"]  # the test modules import it from here


@pytest.fixture
def servers():
    """Start `flowgraph.distributed.Server`s with ``servers(cluster, job, task)``; all are
    stopped at the end of the test."""
    from flowgraph.distributed import Server

    started = []

    def start(cluster, job, task):
        server = Server(cluster, job, task)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()
