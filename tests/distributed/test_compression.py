"""Lossy 16-bit transfers between tasks (whitepaper 5.5; TensorFlow's
``GraphOptions.enable_bfloat16_sendrecv``): float32 values arrive truncated to their top
16 bits, and the bytes on the wire halve."""

import numpy as np
import pytest
from conftest import free_port

import flowgraph as tf
from flowgraph.distributed import wire
from flowgraph.distributed.rpc import TaskClient


def _truncated(x: np.ndarray) -> np.ndarray:
    return (x.view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32)


def _values(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.RandomState(seed)
    x = (rng.randn(n) * 10.0 ** rng.randint(-40, 38, n)).astype(np.float32)
    x[:3] = [0.0, -0.0, 1e-45]  # zeros and a subnormal
    return x


def test_float32_travels_as_its_top_16_bits_and_other_dtypes_exactly():
    x = _values(1000)
    others = {"f64": np.linspace(0, 1, 7), "i32": np.arange(5, dtype=np.int32)}
    blob = wire.encode({}, {"x": x, **others}, bfloat16=True)
    _, out = wire.decode(blob)
    assert out["x"].dtype == np.float32 and out["x"].shape == x.shape
    np.testing.assert_array_equal(out["x"].view(np.uint32), _truncated(x).view(np.uint32))
    for name, value in others.items():
        assert out[name].dtype == value.dtype
        np.testing.assert_array_equal(out[name], value)
    plain, compressed = wire.encode({}, {"x": x}), wire.encode({}, {"x": x}, bfloat16=True)
    # half the tensor's bytes, less the longer dtype name, give or take the header's
    # padding to wire.ALIGN bytes
    longer_dtype_name = len("bfloat16") - len("<f4")
    saved = len(plain) - len(compressed)
    assert abs(saved - (2 * x.size - longer_dtype_name)) < wire.ALIGN
    special = np.array([np.nan, -np.inf, np.inf, 3.0e38], np.float32)
    nan_low_bits = np.array([0x7F800001], np.uint32).view(np.float32)  # NaN, top bits = inf
    _, out = wire.decode(wire.encode({}, {"s": special, "n": nan_low_bits}, bfloat16=True))
    assert np.isnan(out["s"][0]) and np.isnan(out["n"][0])
    np.testing.assert_array_equal(out["s"][1:], _truncated(special[1:]))


def test_a_truncated_bfloat16_buffer_is_data_loss():
    blob = bytearray(wire.encode({}, {"x": np.ones(4, np.float32)}, bfloat16=True))
    with pytest.raises(tf.errors.DataLossError):
        wire.decode(bytes(blob[:-2]))


@pytest.fixture
def ps_and_worker(servers):
    cluster = {"ps": [f"localhost:{free_port()}"], "worker": [f"localhost:{free_port()}"]}
    return servers(cluster, "ps", 0), servers(cluster, "worker", 0)


def _recv_bytes_sent(server) -> int:
    status, _ = TaskClient(server.target, "ps").call("GetStatus", {})
    return status["traffic"].get("RecvTensor", (0, 0, 0))[2]


def test_a_session_with_bfloat16_sendrecv_truncates_task_to_task_transfers(ps_and_worker):
    ps, worker = ps_and_worker
    x = _values(50_000, seed=1)
    compress = tf.ConfigProto(graph_options=tf.GraphOptions(enable_bfloat16_sendrecv=True))
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(x, name="v")
        with tf.device("/job:worker/task:0"):
            on_worker = tf.identity(v.value()) * 1.0  # v travels ps -> worker
        sent = []
        results = {}
        for name, config in [("exact", None), ("bfloat16", compress)]:
            with tf.Session(worker.target, config=config) as sess:
                sess.run(v.initializer)
                before = _recv_bytes_sent(ps)
                results[name] = sess.run(on_worker)
                sent.append(_recv_bytes_sent(ps) - before)
                np.testing.assert_array_equal(sess.run(v), x)  # fetches stay exact
    np.testing.assert_array_equal(results["exact"], x)
    np.testing.assert_array_equal(results["bfloat16"].view(np.uint32),
                                  _truncated(x).view(np.uint32))
    exact, halved = sent
    assert exact >= 4 * x.size
    assert abs(halved - exact / 2) < 0.01 * exact, sent  # half, up to the headers
