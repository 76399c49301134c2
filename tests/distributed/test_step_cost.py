"""What a step's calls cost per step: fixed header parts encoded and parsed once
(wire.Base), one read per frame into an aligned buffer (direct.py), and the threads a
task runs its stages on (server.stage_threads)."""

import socket
import struct

import numpy as np
import pytest
from conftest import free_port

import flowgraph as tf
from flowgraph.distributed import Server, direct, replica_device_setter, wire
from flowgraph.distributed.rpc import register_in_process, to_grpc_address
from flowgraph.distributed.server import stage_threads
from flowgraph.framework import errors


def test_a_base_travels_under_the_header_and_is_parsed_once():
    base = wire.Base({"handle": "h", "fetches": [["a:0", "a:0"]], "step_id": 0})
    first, tensors = wire.decode(wire.encode({"step_id": 7}, {"x": np.ones(3)}, base=base))
    second, _ = wire.decode(wire.encode({"step_id": 8}, base=base))
    assert first == {"handle": "h", "fetches": [["a:0", "a:0"]], "step_id": 7}
    assert second["step_id"] == 8 and tensors["x"].tolist() == [1.0, 1.0, 1.0]
    # The fixed part was parsed once: both headers hold the same lists (what lets a
    # task resolve a call's lists once, stage_graph.StageGraph.layout), in fresh dicts.
    assert second["fetches"] is first["fetches"] and second is not first


def test_a_base_that_is_not_a_json_object_is_data_loss():
    head = b"[1, 2]\x1e{}"
    blob = wire.MAGIC + struct.pack("<II", len(head), 2) + head + b"[]"
    with pytest.raises(errors.DataLossError, match="header base is not a JSON object"):
        wire.decode(blob)


class _CountingSocket:
    def __init__(self, sock):
        self.sock, self.reads = sock, 0

    def recv_into(self, view):
        self.reads += 1
        return self.sock.recv_into(view)


def test_a_frame_is_read_whole_into_an_aligned_buffer_when_its_size_is_known():
    parts, size = direct._frame(0, *wire.encode_message(
        {"n": 1}, {"w": np.arange(5000, dtype=np.float32)}))
    a, b = socket.socketpair()
    with a, b:
        for hint, most_reads in [(0, None), (size, 1)]:
            direct._send_parts(b, parts, size)
            counted = _CountingSocket(a)
            kind, body, seen = direct._read_frame(counted, hint=hint)
            assert (kind, seen) == (0, size)
            assert most_reads is None or counted.reads <= most_reads
            out = wire.decode(body)[1]["w"]
            assert out.ctypes.data % wire.ALIGN == 0 and out[-1] == 4999


def test_two_frames_at_once_are_refused():
    parts, size = direct._frame(0, *wire.encode_message({}))
    a, b = socket.socketpair()
    with a, b:
        b.sendall(b"".join(parts) * 2)
        with pytest.raises(EOFError, match="two frames"):
            direct._read_frame(a, hint=4 * size)


def test_stages_run_on_the_server_configs_threads_else_the_launchers_share():
    assert stage_threads(tf.ConfigProto(inter_op_parallelism_threads=3),
                         environ={"OMP_NUM_THREADS": "1"}) == 3
    assert stage_threads(None, environ={"OPENBLAS_NUM_THREADS": "2"}) == 2
    assert stage_threads(None, environ={"OMP_NUM_THREADS": "x"}) == 0
    server = Server({"local": [f"localhost:{free_port()}"]}, "local", 0,
                    config=tf.ConfigProto(inter_op_parallelism_threads=1))
    try:
        with tf.Graph().as_default():
            with tf.Session(server.target) as sess:
                assert sess.run(tf.constant(2.0) * 3.0) == 6.0
                (graph,) = server._service._graphs.values()
                assert graph._sessions[0]._pool is None  # the calling thread runs all
    finally:
        server.stop()


def test_remote_steps_send_the_fixed_header_once_encoded_and_train_as_one_process():
    cluster = {"ps": [f"localhost:{free_port()}"], "worker": [f"localhost:{free_port()}"]}
    ps, worker = Server(cluster, "ps", 0), Server(cluster, "worker", 0)
    # This process's sessions reach the ps through the data plane.
    register_in_process(to_grpc_address(ps.target), ps._service, None, forget=True)
    rng = np.random.RandomState(0)
    batches = [(rng.randn(4, 3).astype(np.float32), rng.randn(4, 1).astype(np.float32))
               for _ in range(5)]
    results = []
    try:
        for target in (worker.target, ""):
            with tf.Graph().as_default():
                with tf.device(replica_device_setter(cluster=cluster,
                                                     worker_device="/job:worker/task:0")
                               if target else "/cpu:0"):
                    w = tf.Variable(np.ones((3, 1), np.float32), name="w")
                    x = tf.placeholder(tf.float32, [None, 3])
                    y = tf.placeholder(tf.float32, [None, 1])
                    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
                    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
                with tf.Session(target) as sess:
                    sess.run(w.initializer)
                    for bx, by in batches:
                        sess.run(train, {x: bx, y: by})
                    results.append(sess.run(w))
                    if target:
                        plan = next(p for p in sess._plans.values()
                                    if getattr(p, "prefetch", None) is not None)
                        bases = plan.prefetch.bases
                        assert True in bases and "worker" in bases
                        # The call that reads runs apply and read as one stage graph.
                        assert b'"read_epoch":true' in bases[True].json
                        assert b"step_id" not in bases[True].json  # per step: not fixed
        np.testing.assert_allclose(results[0], results[1], rtol=1e-6)
    finally:
        worker.stop()
        ps.stop()


def test_a_client_on_the_same_machine_reaches_the_data_plane_by_a_local_socket():
    from flowgraph.distributed.rpc import TaskClient

    server = Server.create_local_server()
    try:
        client = TaskClient(server.target, "/job:local/replica:0/task:0")
        assert client.call("CleanupStep", {"step_ids": []}) == ({}, {})
        (conn,) = client._direct._idle
        assert conn.sock.family == socket.AF_UNIX
        assert client.call("GetStatus", {})[0]["traffic"]["CleanupStep"][0] == 1
        client.close()
    finally:
        server.stop()
