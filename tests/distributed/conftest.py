"""Fixtures for the distributed tests: free loopback ports, servers stopped after use."""

import errno
import socket

import pytest

from flowgraph.distributed import launch

pytest.importorskip("grpc")

__all__ = ["free_port"]  # the test modules import it from here


def free_port() -> int:
    """A port free on both loopback addresses that ``localhost`` names (127.0.0.1 and
    ::1). A gRPC server on ``localhost:P`` starts when it binds either one, and clients
    try ::1 first: a port free on 127.0.0.1 only could lead this test's clients to
    another process's server still on [::1]:P (seen as a "hung" ps that kept answering
    while other test runs shared the machine)."""
    for _ in range(50):
        port = launch.free_port("127.0.0.1")
        try:
            with socket.socket(socket.AF_INET6) as s:
                s.bind(("::1", port))
        except OSError as e:
            if e.errno == errno.EADDRINUSE:
                continue  # taken on ::1: another one
        return port  # (a machine without IPv6 has only the IPv4 side to check)
    raise RuntimeError("no loopback port free on both 127.0.0.1 and ::1 in 50 tries")


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
