"""Fixtures for the distributed tests: free loopback ports, servers stopped after use."""


import pytest

from flowgraph.distributed import launch

pytest.importorskip("grpc")

__all__ = ["free_port"]  # the test modules import it from here


def free_port() -> int:
    """A port free on both loopback addresses that ``localhost`` names (127.0.0.1 and
    ::1): see `flowgraph.distributed.launch.free_port` (a port free on 127.0.0.1 only
    once led this test's clients to another process's server still on [::1]:P)."""
    return launch.free_port("localhost")


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
