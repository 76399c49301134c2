"""The data plane (flowgraph/distributed/direct.py): step calls over plain TCP beside
gRPC, with the same errors, tokens, deadlines and health checks."""

import threading
import time

import numpy as np
import pytest
from conftest import free_port

import flowgraph as tf
from flowgraph.distributed import Server, direct, replica_device_setter
from flowgraph.distributed.rpc import TaskClient, register_in_process, to_grpc_address
from flowgraph.framework import errors


class _Service:
    """Echoes tensors doubled; `CancelStep` blocks until released; errors on request."""

    def __init__(self):
        self.release = threading.Event()
        self.traffic = {}

    def RunStage(self, header, tensors):
        if header.get("fail"):
            raise errors.InvalidArgumentError(None, None, "bad stage: " + header["fail"])
        if header.get("crash"):
            raise KeyError("oops")
        return {"n": len(tensors)}, {k: v if v.dtype == object else v * 2
                                     for k, v in tensors.items()}

    def RecvTensor(self, header, tensors):
        return {}, {"big": np.arange(header["count"], dtype=np.float32)}

    def CleanupStep(self, header, tensors):
        return {}, {}

    def CancelStep(self, header, tensors):
        self.release.wait(10)
        return {}, {}


@pytest.fixture
def pair():
    made = []

    def make(token="", peer_token=None, ping=None, ping_after_s=2.0):
        service = _Service()
        server = direct.DirectServer(service, "localhost", token=token,
                                     count=lambda m, i, o: service.traffic.__setitem__(
                                         m, service.traffic.get(m, 0) + 1))
        peer = direct.DirectPeer("localhost", server.port, "/job:t/task:0",
                                 token=token if peer_token is None else peer_token,
                                 ping=ping, ping_after_s=ping_after_s)
        made.append((server, peer, service))
        return server, peer, service

    yield make
    for server, peer, service in made:
        service.release.set()
        peer.close()
        server.stop()


def test_tensors_of_every_kind_come_back_exact(pair):
    _, peer, service = pair()
    sent = {"f": np.linspace(-1, 1, 7, dtype=np.float32).reshape(7, 1),
            "i": np.arange(6, dtype=np.int64).reshape(2, 3), "s": np.array(0.5),
            "b": np.array([True, False]), "str": np.array([b"a", b"bc"], dtype=object)}
    header, got = peer.call("RunStage", {}, sent, timeout_s=5)
    assert header == {"n": 5}
    for name, value in sent.items():
        want = value if value.dtype == object else value * 2
        assert got[name].shape == want.shape and got[name].dtype == want.dtype
        np.testing.assert_array_equal(got[name], want)
    assert service.traffic == {"RunStage": 1}


def test_a_large_reply_is_one_buffer_the_arrays_view(pair):
    _, peer, _ = pair()
    count = 3_000_000  # 12 MB: far above gRPC's message limit
    _, got = peer.call("RecvTensor", {"count": count}, None, timeout_s=30)
    np.testing.assert_array_equal(got["big"][-3:], [count - 3, count - 2, count - 1])
    assert not got["big"].flags.writeable and not got["big"].flags.owndata


def test_errors_keep_their_class_and_name_the_task(pair):
    _, peer, _ = pair()
    with pytest.raises(errors.InvalidArgumentError, match=r"\[/job:t/task:0 .*bad stage: x"):
        peer.call("RunStage", {"fail": "x"}, None, timeout_s=5)
    with pytest.raises(errors.InternalError, match="KeyError: 'oops'"):
        peer.call("RunStage", {"crash": True}, None, timeout_s=5)
    assert peer.call("RunStage", {}, None, timeout_s=5)[0] == {"n": 0}  # still usable


def test_a_wrong_token_is_refused_and_logged(pair, caplog):
    _, peer, service = pair(token="s3cret", peer_token="guess")
    with pytest.raises(errors.UnauthenticatedError, match="auth_token"):
        peer.call("RunStage", {}, None, timeout_s=5)
    deadline = time.monotonic() + 5
    while "Refused" not in service.traffic and time.monotonic() < deadline:
        time.sleep(0.01)
    assert service.traffic.get("Refused") == 1 and "RunStage" not in service.traffic
    assert "a wrong token" in caplog.text


def test_a_slow_call_meets_its_deadline_and_other_calls_go_on(pair):
    _, peer, _ = pair()
    start = time.monotonic()
    with pytest.raises(errors.DeadlineExceededError, match=r"CancelStep .* within 0.3 s"):
        peer.call("CancelStep", {}, None, timeout_s=0.3)
    assert time.monotonic() - start < 2
    # Its connection was dropped; a concurrent or later call uses another one.
    assert peer.call("RunStage", {}, None, timeout_s=5)[0] == {"n": 0}


def test_a_peer_that_stops_answering_pings_fails_the_call_at_once(pair):
    def ping(timeout_s):
        raise errors.UnavailableError(None, None, "ping timeout")

    _, peer, _ = pair(ping=ping, ping_after_s=0.2)
    start = time.monotonic()
    with pytest.raises(errors.UnavailableError, match="health-check pings"):
        peer.call("CancelStep", {}, None, timeout_s=30)
    assert time.monotonic() - start < 2


def test_a_peer_that_dies_during_a_call_fails_it_with_unavailable(pair):
    server, peer, _ = pair()
    peer.call("RunStage", {}, None, timeout_s=5)  # reached once: a failure is the task's
    threading.Timer(0.2, server.stop).start()
    start = time.monotonic()
    with pytest.raises(errors.UnavailableError, match="is unavailable"):
        peer.call("CancelStep", {}, None, timeout_s=30)
    assert time.monotonic() - start < 2
    with pytest.raises(errors.UnavailableError):  # and nothing listens any more
        peer.call("RunStage", {}, None, timeout_s=2)
    fresh = direct.DirectPeer("localhost", server.port, "/job:t/task:0")
    with pytest.raises(direct.Unreachable):  # never reached: the caller falls back to gRPC
        fresh.call("RunStage", {}, None, timeout_s=2)


def _remote_pair():
    cluster = {"ps": [f"localhost:{free_port()}"], "worker": [f"localhost:{free_port()}"]}
    ps, worker = Server(cluster, "ps", 0), Server(cluster, "worker", 0)
    # Sessions of this process reach the ps over the network, as one of another process.
    register_in_process(to_grpc_address(ps.target), ps._service, None, forget=True)
    return cluster, ps, worker


def test_a_training_step_goes_through_the_data_plane_with_values_in_both_directions():
    cluster, ps, worker = _remote_pair()
    try:
        status, _ = TaskClient(ps.target, "t").call("GetStatus", {})
        assert status["data_port"] > 0
        with tf.Graph().as_default():
            with tf.device(replica_device_setter(cluster=cluster,
                                                 worker_device="/job:worker/task:0")):
                w = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="w")
                x = tf.placeholder(tf.float32, [2])
                update = w.assign_sub(0.5 * x[:, None] * tf.ones([2, 3]))  # ps <- worker
                total = tf.reduce_sum(w.read_value() * 2.0)  # worker <- ps
            with tf.Session(worker.target) as sess:
                sess.run(w.initializer)
                assert sess.run(total) == 30.0
                sess.run(update, {x: [1.0, 2.0]})
                np.testing.assert_allclose(sess.run(w), [[-0.5, 0.5, 1.5], [2, 3, 4]])
        status, _ = TaskClient(ps.target, "t").call("GetStatus", {})
        # Step calls travelled on the data plane (counted the same way as gRPC's).
        assert status["traffic"]["RunStage"][0] >= 3
    finally:
        worker.stop()
        ps.stop()


def test_the_data_plane_can_be_switched_off(monkeypatch):
    monkeypatch.setenv(direct.TRANSPORT_ENV, "grpc")
    server = Server.create_local_server()
    try:
        status, _ = TaskClient(server.target, "t").call("GetStatus", {})
        assert "data_port" not in status
        with tf.Graph().as_default():
            with tf.Session(server.target) as sess:
                assert sess.run(tf.constant(2.0) * 3.0) == 6.0
    finally:
        server.stop()


def test_a_peer_that_dies_while_a_large_tensor_is_sent_fails_the_call_at_once():
    """The peer takes the hello and the first MiB of a 64 MiB request, then goes away:
    the send fails (reset), not the deadline, and the connection is not reused."""
    import socket
    import struct

    listener = socket.create_server(("localhost", 0))

    def die_midway():
        conn, _ = listener.accept()
        (size,) = struct.unpack("<Q", conn.recv(8, socket.MSG_WAITALL))
        conn.recv(size, socket.MSG_WAITALL)
        conn.sendall(struct.pack("<Q", 2) + b"ok")
        conn.recv(1 << 20, socket.MSG_WAITALL)
        conn.close()

    threading.Thread(target=die_midway, daemon=True).start()
    peer = direct.DirectPeer("localhost", listener.getsockname()[1], "/job:t/task:0")
    start = time.monotonic()
    with pytest.raises(errors.UnavailableError, match="is unavailable"):
        peer.call("RunStage", {}, {"big": np.zeros(16 << 20, np.float32)}, timeout_s=30)
    assert time.monotonic() - start < 5 and not peer._idle
    listener.close()


def test_a_data_port_that_cannot_be_reached_falls_back_to_grpc(caplog):
    server = Server.create_local_server()
    try:
        server._direct.stop()  # as if a firewall opened only the cluster spec's port
        client = TaskClient(server.target, "/job:local/replica:0/task:0")
        assert client.call("CleanupStep", {"step_ids": []}) == ({}, {})
        assert "go through gRPC" in caplog.text and client._direct is False
        status, _ = client.call("GetStatus", {})
        assert status["traffic"]["CleanupStep"][0] == 1
    finally:
        server.stop()


def test_garbage_on_the_data_port_drops_only_that_connection(pair):
    import socket
    import struct

    server, peer, _ = pair()
    for junk in [b"\xff" * 8, struct.pack("<Q", 4) + b"[1]x", struct.pack("<Q", 2) + b"{}"
                 + struct.pack("<Q", 0)]:
        with socket.create_connection(("localhost", server.port)) as raw:
            raw.sendall(junk)
            raw.settimeout(5)
            try:
                while raw.recv(1 << 16):
                    pass
            except OSError:
                pass
    assert peer.call("RunStage", {}, None, timeout_s=5)[0] == {"n": 0}


def test_a_frame_declaring_a_huge_size_allocates_only_what_arrives(monkeypatch):
    """A peer's declared length is not trusted: the buffer grows with the bytes that
    come, so a frame claiming a terabyte and then closing costs what it sent."""
    import socket
    import tracemalloc

    monkeypatch.setattr(direct, "_EAGER_BYTES", 1024)
    a, b = socket.socketpair()
    with a, b:
        b.sendall(b"x" * 5000)
        b.close()
        tracemalloc.start()
        try:
            with pytest.raises(EOFError):
                direct._recv_exact(a, 1 << 40)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert peak < 1 << 20
    c, d = socket.socketpair()
    with c, d:
        d.sendall(bytes(range(256)) * 40)
        assert bytes(direct._recv_exact(c, 10240)) == bytes(range(256)) * 40
