"""Fixtures for the distributed tests: free loopback ports, servers stopped after use."""

import socket

import pytest

pytest.importorskip("grpc")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


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
