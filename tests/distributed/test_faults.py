"""Faults: a ps killed and restarted, a worker killed and restarted, a ps that hangs,
and a peer that never starts. Every test is bounded in time; the ones with task
processes are marked slow."""

import json
import os
import pathlib
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest
from conftest import free_port

import flowgraph as tf
from flowgraph.distributed import replica_device_setter
from flowgraph.distributed.rpc import KEEPALIVE_S, KEEPALIVE_TIMEOUT_S, TaskClient
from flowgraph.framework import errors

TASK = pathlib.Path(__file__).with_name("fault_task.py")
ROOT = TASK.parents[2]
RECOVERY_S = 5.0  # the bound: training goes on within 5 s after the ps is back


class _Task:
    """A `fault_task.py` process; its JSON events are collected by a reader thread."""

    def __init__(self, cluster, role: str, index: int, tmp_path, env=None) -> None:
        env = dict(os.environ, **(env or {}), TF_CONFIG=json.dumps(
            {"cluster": cluster, "task": {"type": role, "index": index}}))
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        self.name = f"{role}:{index}"
        self._err_path = tmp_path / f"{role}{index}-{time.monotonic_ns()}.err"
        self._err = open(self._err_path, "w")  # closed in stop()
        self.proc = subprocess.Popen(
            [sys.executable, str(TASK), str(tmp_path / "model"), str(tmp_path / "stop")],
            env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=self._err, text=True)
        self.events: list = []
        self._changed = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            with self._changed:
                self.events.append(event)
                self._changed.notify_all()

    def wait_for(self, predicate, timeout_s: float, what: str) -> dict:
        deadline = time.monotonic() + timeout_s
        with self._changed:
            while True:
                found = next((e for e in self.events if predicate(e)), None)
                if found is not None:
                    return found
                left = deadline - time.monotonic()
                if left <= 0 or (self.proc.poll() is not None and not self._changed.wait(0.2)):
                    raise AssertionError(f"{self.name}: no {what} within {timeout_s} s "
                                         f"(exit code {self.proc.poll()}):\n{self.stderr()}")
                self._changed.wait(min(left, 0.2))

    def steps(self, after: float = 0.0, before: float = float("inf")) -> list:
        with self._changed:
            return [e["step"] for e in self.events
                    if e["event"] == "step" and after < e["t"] < before]

    def stderr(self) -> str:
        self._err.flush()
        return self._err_path.read_text()[-3000:]

    def finish(self, timeout_s: float = 30.0) -> int:
        try:
            return self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"{self.name} did not exit:\n{self.stderr()}") from None

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.kill()
        self.proc.wait(timeout=10)
        self._err.close()


def _step_after(t: float):
    return lambda e: e["event"] == "step" and e["t"] > t


def _serving_since(address: str, cluster: dict, timeout_s: float = 30.0) -> float:
    """The wall time at which the task at `address` first answers; it must be a task of
    `cluster` (not another process's server that holds the same port on ::1)."""
    client = TaskClient(address, address, timeout_s=1.0)
    deadline = time.monotonic() + timeout_s
    try:
        while True:
            try:
                status, _ = client.call("GetStatus", {}, timeout_s=0.5)
                break
            except errors.OpError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.02)
    finally:
        client.close()
    assert status["cluster"] == cluster, f"{address} is another cluster's task: {status}"
    return time.time()


def _wait_until_stopped(pid: int, timeout_s: float = 5.0) -> None:
    """Until the kernel reports process `pid` stopped (SIGSTOP is delivered
    asynchronously; a step sent before it takes hold could still be answered)."""
    stat = pathlib.Path(f"/proc/{pid}/stat")
    deadline = time.monotonic() + timeout_s
    while stat.exists() and time.monotonic() < deadline:
        if stat.read_text().rsplit(")", 1)[1].split()[0] in ("T", "t"):
            return
        time.sleep(0.01)


def _cluster(workers: int) -> dict:
    return {"chief": [f"localhost:{free_port()}"], "ps": [f"localhost:{free_port()}"],
            "worker": [f"localhost:{free_port()}" for _ in range(workers)]}


@pytest.fixture
def tasks(tmp_path):
    started = []

    def start(cluster, role, index=0, env=None):
        task = _Task(cluster, role, index, tmp_path, env)
        started.append(task)
        return task

    yield start
    for task in started:
        task.stop()


@pytest.mark.slow
def test_a_killed_ps_is_restarted_and_training_resumes_from_the_checkpoint(tasks, tmp_path):
    cluster = _cluster(workers=1)
    ps = tasks(cluster, "ps")
    chief, worker = tasks(cluster, "chief"), tasks(cluster, "worker")
    chief.wait_for(lambda e: e["event"] == "step" and e["step"] >= 40, 60, "step 40")
    worker.wait_for(_step_after(0), 30, "worker step")
    ps.proc.send_signal(signal.SIGKILL)
    ps.proc.wait(timeout=10)
    killed = time.time()
    time.sleep(1.0)  # the trainers fail their steps and keep retrying
    restarted = time.time()
    # With the ps down nothing can be saved: the newest checkpoint now is the one the
    # chief must restore (a save that read its values before the kill had 1 s to land).
    from flowgraph.train import latest_checkpoint, load_variable

    saved = latest_checkpoint(str(tmp_path / "model"))
    # (the value inside, not the file's name: the other trainer may step between the
    # saver's read of the step for the name and its read of the variables, as in TF)
    saved_step = int(load_variable(saved, "global_step")) if saved else None
    tasks(cluster, "ps")
    back = _serving_since(cluster["ps"][0], cluster)
    created = chief.wait_for(lambda e: e["event"] == "created" and e["t"] > killed,
                             30, "a new session after the ps restart")
    for trainer in (chief, worker):
        first = trainer.wait_for(_step_after(back), 30, "a step after the ps restart")
        assert first["t"] - back <= RECOVERY_S, (trainer.name, first["t"] - back)
    # Restored from the newest checkpoint (a re-initialized model would start at 0).
    # Bounding the step by the trainers' reports instead was flaky: the chief saves
    # inside its run, before its report is printed, and the other trainer's steps during
    # the save went unreported when the kill came right after (43 restored, 40 reported).
    # The other trainer may already step once the chief has restored the variables and
    # before its hooks read the step (the saver's step-0 save runs first): a few steps.
    assert saved_step is not None and 0 < saved_step <= created["step"] <= saved_step + 5
    last_before = max(chief.steps(before=restarted) + worker.steps(before=restarted))
    assert created["step"] >= last_before - 15  # a checkpoint every 10 steps (or a few more)
    (tmp_path / "stop").touch()
    assert chief.finish() == 0, chief.stderr()
    assert worker.finish() == 0, worker.stderr()


@pytest.mark.slow
def test_a_killed_worker_does_not_stop_the_others_and_rejoins_when_restarted(tasks, tmp_path):
    cluster = _cluster(workers=2)
    tasks(cluster, "ps")
    chief = tasks(cluster, "chief")
    workers = [tasks(cluster, "worker", i) for i in range(2)]
    for task in [chief, *workers]:
        task.wait_for(_step_after(0), 60, "a first step")
    workers[1].proc.send_signal(signal.SIGKILL)
    workers[1].proc.wait(timeout=10)
    killed = time.time()
    for task in (chief, workers[0]):  # they go on
        task.wait_for(_step_after(killed + 1.0), 15, "steps after the kill")
    again = tasks(cluster, "worker", 1)
    joined = again.wait_for(lambda e: e["event"] == "created", 60, "a session")
    assert joined["step"] > max(chief.steps(before=killed))  # the shared model, not a new one
    again.wait_for(_step_after(0), 15, "a step after rejoining")
    (tmp_path / "stop").touch()
    for task in (chief, workers[0], again):
        assert task.finish() == 0, task.stderr()


@pytest.mark.slow
def test_a_hung_ps_fails_the_step_with_unavailable_within_seconds(servers, tasks):
    cluster = {"ps": [f"localhost:{free_port()}"], "chief": [f"localhost:{free_port()}"]}
    ps = tasks(cluster, "ps")
    chief = servers(cluster, "chief", 0)
    _serving_since(cluster["ps"][0], cluster)
    with tf.Graph().as_default():
        with tf.device(replica_device_setter(cluster=cluster, worker_device="/job:chief")):
            v = tf.Variable([1.0, 2.0], name="v")
            bump = v.assign_add([1.0, 1.0])
        config = tf.ConfigProto(operation_timeout_in_ms=30_000)
        with tf.Session(chief.target, config=config) as sess:
            sess.run(v.initializer)
            sess.run(bump)
            ps.proc.send_signal(signal.SIGSTOP)  # alive, connected, but never answers
            _wait_until_stopped(ps.proc.pid)
            start = time.monotonic()
            with pytest.raises(errors.UnavailableError, match="/job:ps/replica:0/task:0"):
                sess.run(bump)
            assert time.monotonic() - start < KEEPALIVE_S + KEEPALIVE_TIMEOUT_S + 3.0


@pytest.mark.parametrize("is_chief", [True, False])
def test_a_peer_that_never_starts_is_a_clear_error_after_the_deadline(servers, is_chief):
    cluster = {"chief": [f"localhost:{free_port()}"], "ps": [f"localhost:{free_port()}"]}
    chief = servers(cluster, "chief", 0)  # nothing ever listens on the ps's port
    with tf.Graph().as_default():
        with tf.device(replica_device_setter(cluster=cluster, worker_device="/job:chief")):
            step = tf.train.get_or_create_global_step()
            step.assign_add(1)
        start = time.monotonic()
        with pytest.raises(errors.DeadlineExceededError,
                           match=r"within max_wait_secs=0.5 s .*UnavailableError: "
                                 r"Task /job:ps/replica:0/task:0"):
            tf.train.MonitoredTrainingSession(master=chief.target, is_chief=is_chief,
                                              max_wait_secs=0.5)
        assert 0.5 <= time.monotonic() - start < 5


def test_a_session_on_a_restarted_task_is_aborted_not_run_on_fresh_variables(servers):
    cluster = {"ps": [f"localhost:{free_port()}"], "worker": [f"localhost:{free_port()}"]}
    ps = servers(cluster, "ps", 0)
    worker = servers(cluster, "worker", 0)
    with tf.Graph().as_default():
        with tf.device(replica_device_setter(cluster=cluster)):
            v = tf.Variable([10.0], name="v")
            bump = v.assign_add([1.0])
        sess = tf.Session(worker.target)
        sess.run(v.initializer)
        assert sess.run(bump) == 11.0
        ps.stop()
        servers(cluster, "ps", 0)  # the ps "restarts" on the same address
        with tf.Session(worker.target) as other:  # registers the very same stage graphs
            other.run(v.initializer)
            assert other.run(bump) == 11.0
        deadline = time.monotonic() + 5
        while True:
            try:
                sess.run(bump)
            except errors.UnavailableError:  # the old channel has not reconnected yet
                assert time.monotonic() < deadline
                time.sleep(0.05)
                continue
            except errors.AbortedError as e:
                assert "/job:ps/replica:0/task:0 restarted" in str(e)
                break
            pytest.fail("the step ran on the restarted task's new variables")
        sess.close()


def test_test_ports_are_free_on_both_loopback_addresses(monkeypatch):
    # A port taken on ::1 by another process would route this suite's localhost clients
    # there (the flaky "hung ps that kept answering"): free_port must skip it.
    from flowgraph.distributed import launch

    squatter = socket.socket(socket.AF_INET6)
    try:
        squatter.bind(("::1", 0))
    except OSError:
        squatter.close()
        pytest.skip("no IPv6 loopback here")
    taken = squatter.getsockname()[1]
    picks = iter([taken])
    real = launch.free_port
    monkeypatch.setattr(launch, "free_port", lambda host="localhost": (
        next(picks, None) or real(host)) if host == "127.0.0.1" else real(host))
    try:
        port = launch.free_port("localhost")  # what the suite's conftest.free_port returns
    finally:
        squatter.close()
    assert port != taken
