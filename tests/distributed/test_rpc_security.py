"""Faults and security, part 1: shared-secret tokens, TLS, and servers that bind only the
address their cluster entry names."""

import dataclasses
import logging
import pathlib
import shutil
import socket
import subprocess

import numpy as np
import pytest
from conftest import free_port
from test_faults import tasks  # noqa: F401 (a fixture, used by name below)

import flowgraph as tf
from flowgraph.distributed import Server, replica_device_setter
from flowgraph.distributed.rpc import Security, TaskClient
from flowgraph.framework import errors


def _config(**rpc_options):
    return tf.ConfigProto(rpc_options=rpc_options)


@pytest.fixture
def no_security_env(monkeypatch):
    for name in ("FLOWGRAPH_AUTH_TOKEN", "FLOWGRAPH_TLS_CERT_FILE", "FLOWGRAPH_TLS_KEY_FILE",
                 "FLOWGRAPH_TLS_CA_FILE"):
        monkeypatch.delenv(name, raising=False)


def _ps_and_worker(config_ps, config_worker):
    cluster = {"ps": [f"localhost:{free_port()}"], "worker": [f"localhost:{free_port()}"]}
    return (Server(cluster, "ps", 0, config=config_ps),
            Server(cluster, "worker", 0, config=config_worker), cluster)


def test_settings_come_from_the_config_then_the_environment_then_the_fallback():
    env = {"FLOWGRAPH_AUTH_TOKEN": "from-env", "FLOWGRAPH_TLS_CA_FILE": "/env/ca.pem"}
    sec = Security.from_config(_config(auth_token="from-config"), environ=env)
    assert sec.auth_token == "from-config" and sec.tls_ca_file == "/env/ca.pem" and sec.tls
    fallback = Security(auth_token="local")
    assert Security.from_config(None, fallback, environ={}).auth_token == "local"
    assert Security.from_config(tf.ConfigProto(), environ={}) == Security()
    with pytest.raises(ValueError, match='has no "auth_tokn" field'):  # protobuf's
        Security.from_config(_config(auth_tokn="x"), environ={})
    Security.from_config(_config(compression_algorithm="gzip"), environ={})  # TF's field


def test_a_call_with_a_wrong_or_missing_token_is_refused_and_logged(no_security_env, caplog):
    server = Server({"local": [f"localhost:{free_port()}"]},
                    config=_config(auth_token="s3cret"))
    try:
        address = server.target
        assert TaskClient(address, "t", security=Security("s3cret")).call(
            "GetStatus", {})[0]["job"] == "local"
        for security, found in [(Security("guess"), "a wrong token"), (Security(), "no token")]:
            client = TaskClient(address, "/job:local/task:0", security=security)
            with caplog.at_level(logging.WARNING, logger="tensorflow"):
                with pytest.raises(errors.UnauthenticatedError,
                                   match=f"GetStatus refused: the call carried {found}.*"
                                         "auth_token"):
                    client.call("GetStatus", {})
            assert "refused GetStatus from ipv" in caplog.text and found in caplog.text
            client.close()
        with pytest.raises(errors.UnauthenticatedError):  # sessions too (explicit config)
            tf.Session(address, config=_config(auth_token="nope"))
        status, _ = TaskClient(address, "t", security=Security("s3cret")).call(
            "GetStatus", {})
        assert status["traffic"]["Refused"][0] == 3
    finally:
        server.stop()


def test_a_cluster_with_a_token_trains_and_a_session_uses_its_servers_token(no_security_env):
    token = _config(auth_token="t0ken")
    ps, worker, cluster = _ps_and_worker(token, token)
    try:
        with tf.Graph().as_default():
            with tf.device(replica_device_setter(cluster=cluster)):
                v = tf.Variable([1.0, 2.0])
                bump = v.assign_add([1.0, 1.0])
            with tf.Session(worker.target) as sess:  # the in-process server's token
                sess.run(v.initializer)
                np.testing.assert_allclose(sess.run(bump), [2.0, 3.0])  # worker -> ps too
        status, _ = TaskClient(ps.target, "ps", security=Security("t0ken")).call(
            "GetStatus", {})
        assert "Refused" not in status["traffic"]
    finally:
        ps.stop()
        worker.stop()


def test_the_token_also_comes_from_the_environment(monkeypatch, no_security_env):
    monkeypatch.setenv("FLOWGRAPH_AUTH_TOKEN", "env-token")
    server = Server.create_local_server()
    try:
        with pytest.raises(errors.UnauthenticatedError):
            TaskClient(server.target, "t", security=Security()).call("GetStatus", {})
        assert TaskClient(server.target, "t").call("GetStatus", {})[0]["task"] == 0
        with tf.Graph().as_default(), tf.Session(server.target) as sess:
            assert sess.run(tf.constant(2.0) * 3.0) == 6.0
    finally:
        server.stop()


def _self_signed(directory: pathlib.Path, name: str) -> tuple[str, str]:
    """A throwaway certificate for localhost/127.0.0.1 (EC P-256, one day)."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed (needed to make a test certificate)")
    cert, key = directory / f"{name}.pem", directory / f"{name}.key"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj",
         f"/CN={name}", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
        check=True, capture_output=True, timeout=30)
    return str(cert), str(key)


def test_tls_with_a_self_signed_certificate(tmp_path, no_security_env):
    cert, key = _self_signed(tmp_path, "cluster")
    tls = _config(tls_cert_file=cert, tls_key_file=key, tls_ca_file=cert)  # mutual TLS
    ps, worker, cluster = _ps_and_worker(tls, tls)
    try:
        with tf.Graph().as_default():
            with tf.device(replica_device_setter(cluster=cluster)):
                v = tf.Variable(np.arange(4, dtype=np.float32))
                total = tf.reduce_sum(v * 2.0)
            with tf.Session(worker.target) as sess:
                sess.run(v.initializer)
                assert sess.run(total) == 12.0
            with tf.Session(ps.target, config=tls) as sess:
                assert sess.run(total) == 12.0
        # A plain-text client, and a client that trusts another CA, cannot talk to it.
        with pytest.raises(errors.UnavailableError, match=r"needs rpc_options\.tls_ca_file"):
            TaskClient(ps.target, "ps", timeout_s=5).call("GetStatus", {})
        other, other_key = _self_signed(tmp_path, "other")
        stranger = Security(tls_cert_file=other, tls_key_file=other_key, tls_ca_file=other)
        with pytest.raises(errors.UnavailableError, match="This client uses TLS"):
            TaskClient(ps.target, "ps", timeout_s=5, security=stranger).call("GetStatus", {})
        # Server-only TLS: a client with the CA alone is refused by a mutual-TLS server.
        ca_only = Security(tls_ca_file=cert)
        with pytest.raises(errors.UnavailableError):
            TaskClient(ps.target, "ps", timeout_s=5, security=ca_only).call("GetStatus", {})
    finally:
        ps.stop()
        worker.stop()


def test_server_only_tls_and_bad_tls_settings(tmp_path, no_security_env):
    cert, key = _self_signed(tmp_path, "server")
    server = Server({"local": [f"localhost:{free_port()}"]},
                    config=_config(tls_cert_file=cert, tls_key_file=key))
    try:
        client = TaskClient(server.target, "t", security=Security(tls_ca_file=cert))
        assert client.call("GetStatus", {})[0]["task"] == 0
    finally:
        server.stop()
    with pytest.raises(errors.InvalidArgumentError, match=r"both rpc_options\.tls_cert_file"):
        Server({"local": [f"localhost:{free_port()}"]}, config=_config(tls_cert_file=cert))
    with pytest.raises(errors.InvalidArgumentError, match="cannot be read"):
        Server({"local": [f"localhost:{free_port()}"]},
               config=_config(tls_cert_file=str(tmp_path / "missing.pem"), tls_key_file=key))


def _accepts(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def _other_local_address() -> str | None:
    """A non-loopback address of this machine, if it has one."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("10.255.255.255", 1))  # no packet is sent
            address = s.getsockname()[0]
    except OSError:
        return None
    return None if address.startswith("127.") else address


def test_a_server_binds_only_the_address_its_cluster_entry_names(no_security_env):
    port = free_port()
    server = Server({"local": [f"127.0.0.1:{port}"]})
    try:
        assert _accepts("127.0.0.1", port)
        assert not _accepts("127.0.0.2", port)  # also loopback, but not the named address
        other = _other_local_address()
        if other is not None:
            assert not _accepts(other, port)
    finally:
        server.stop()


@pytest.mark.slow
def test_tasks_started_with_the_environment_variables_use_token_and_tls(tasks, tmp_path):  # noqa: F811
    """What `flowgraph launch` does when FLOWGRAPH_AUTH_TOKEN and FLOWGRAPH_TLS_* are
    set: every task inherits them."""
    cert, key = _self_signed(tmp_path, "cluster")
    env = {"FLOWGRAPH_AUTH_TOKEN": "launch-secret", "FLOWGRAPH_TLS_CERT_FILE": cert,
           "FLOWGRAPH_TLS_KEY_FILE": key, "FLOWGRAPH_TLS_CA_FILE": cert}
    cluster = {"chief": [f"localhost:{free_port()}"], "ps": [f"localhost:{free_port()}"]}
    tasks(cluster, "ps", env=env)
    chief = tasks(cluster, "chief", env=env)
    chief.wait_for(lambda e: e["event"] == "step" and e["step"] >= 20, 60, "step 20")
    secure = Security(**{name.lower().removeprefix("flowgraph_"): value
                         for name, value in env.items()})
    status, _ = TaskClient(cluster["ps"][0], "ps", security=secure).call("GetStatus", {})
    assert status["traffic"]["RunStage"][0] > 20 and "Refused" not in status["traffic"]
    with pytest.raises(errors.UnauthenticatedError):
        TaskClient(cluster["ps"][0], "ps", security=dataclasses.replace(
            secure, auth_token="")).call("GetStatus", {})
    (tmp_path / "stop").touch()
    assert chief.finish() == 0, chief.stderr()
