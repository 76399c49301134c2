"""A server refuses a port another process holds on any of its host's addresses."""

import socket

import pytest

import flowgraph as tf


def _listen(family, address):
    sock = socket.socket(family, socket.SOCK_STREAM)
    if family == socket.AF_INET6:
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    sock.bind(address)
    sock.listen()
    return sock


@pytest.mark.parametrize("family,address", [(socket.AF_INET6, ("::1", 0)),
                                            (socket.AF_INET, ("127.0.0.1", 0))])
def test_localhost_port_held_on_one_loopback_is_refused(family, address):
    """gRPC would start on the free loopback alone, and a client trying the other one
    first would talk to the stranger's server."""
    try:
        holder = _listen(family, address)
    except OSError:
        pytest.skip("this host has no such loopback")
    with holder:
        port = holder.getsockname()[1]
        with pytest.raises(tf.errors.UnavailableError, match=f"port {port} is in use on"):
            tf.train.Server({"worker": [f"localhost:{port}"]}, "worker", 0)
