"""``flowgraph launch``: start a whole TF_CONFIG cluster of one program on this machine.

``flowgraph launch --ps 1 --workers 2 --evaluator -- python train.py ARGS`` picks free
loopback ports, starts the program once per task with that task's ``TF_CONFIG`` (the
cluster plus ``{"type": ..., "index": ...}``), and prints every line the tasks write,
stdout and stderr, prefixed with the task's name (``[worker:0] ...``).

The tasks: ``--workers N`` trainers, of which the first is the ``chief`` and the others
``worker`` 0 .. N-2 (TensorFlow's Estimator layout), ``--ps M`` parameter servers, and
with ``--evaluator`` one ``evaluator`` (not in the cluster, as TensorFlow wants).

How it ends:

* a task exits non-zero: the others are stopped and ``launch`` exits with that task's
  code (after one line naming it);
* the chief exits 0: the workers and the evaluator get ``--grace`` seconds to finish
  on their own (the evaluator still has the final checkpoint to evaluate), then every
  task left, the ps tasks included (they serve forever), is stopped; exit 0;
* Ctrl-C stops every task.

With ``--ray`` the same cluster runs as Ray actors on a Ray cluster's nodes, with
resources per role and restarts of failed tasks (`flowgraph.distributed.ray`).

Stopping is SIGTERM, then SIGKILL after 5 s.

The tasks share this machine's cores, so each gets a BLAS thread count
(``OPENBLAS_NUM_THREADS``/``OMP_NUM_THREADS``) unless the environment sets one already:
ps and evaluator tasks 1, the trainers the cores divided among them (at least 1 each).
OpenBLAS's idle workers spin: three processes on two cores each with two BLAS threads
ran the small distributed MLP 4x slower than with one thread each, while a ps needs no
GEMM threads and a lone trainer needs all the cores (benchmarks/bench_distributed.py).

Example
-------
>>> layout(ps=1, workers=2, evaluator=True, host="localhost", ports=iter([1, 2, 3]))
... # doctest: +NORMALIZE_WHITESPACE
({'chief': ['localhost:1'], 'worker': ['localhost:2'], 'ps': ['localhost:3']},
 [('chief', 0), ('worker', 0), ('ps', 0), ('evaluator', 0)])
"""

from __future__ import annotations

import argparse
import collections
import errno
import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time

__all__ = ["add_parser", "free_port", "layout", "main", "program", "run_cluster"]

_STOP_GRACE_S = 5.0
_POLL_S = 0.05


_RNG = random.Random()
_GIVEN: collections.deque = collections.deque(maxlen=4096)  # ports `free_port` returned


def _ephemeral_low() -> int:
    """The lowest port the kernel hands out for outgoing connections and port 0 (Linux's
    ``ip_local_port_range``; 32768 elsewhere)."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _taken(host: str, port: int) -> bool:
    """Whether `port` cannot be bound on `host` because something holds it (an address
    the host lacks, e.g. ::1 without IPv6, counts as free)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.socket(family) as s:
            s.bind((host, port))
    except OSError as e:
        return e.errno in (errno.EADDRINUSE, errno.EACCES)
    return False


def free_port(host: str = "localhost") -> int:
    """A TCP port nobody listens on now, below the kernel's ephemeral range: a port the
    kernel picks for port 0 is one it may also give any outgoing connection before the
    task that was told to listen there starts (a test saw a server's port taken so).
    For ``localhost``, free on both loopbacks: a gRPC server on ``localhost:P`` is
    reached on 127.0.0.1 or ::1, whichever a client tries first.

    >>> 0 < free_port() < 65536
    True
    """
    low = _ephemeral_low()
    first = max(1024, low - 16384)
    addresses = ["127.0.0.1", "::1"] if host == "localhost" else [host]
    for _ in range(200 if low > first else 0):
        port = _RNG.randrange(first, low)
        # a port handed out here earlier is not bound yet, maybe: never twice in a row
        if port not in _GIVEN and not any(_taken(a, port) for a in addresses):
            _GIVEN.append(port)
            return port
    with socket.socket() as s:  # no room below the ephemeral range: the kernel's pick
        s.bind((addresses[0], 0))
        return s.getsockname()[1]


def layout(ps: int, workers: int, evaluator: bool, host: str, ports) -> tuple[dict, list]:
    """The cluster dict and the ``(type, index)`` of every task to start."""
    if workers < 1:
        raise ValueError(f"flowgraph launch: --workers must be >= 1 (the first is the "
                         f"chief); got {workers}")
    if ps < 0:
        raise ValueError(f"flowgraph launch: --ps must be >= 0; got {ps}")
    cluster = {"chief": [f"{host}:{next(ports)}"]}
    if workers > 1:
        cluster["worker"] = [f"{host}:{next(ports)}" for _ in range(workers - 1)]
    if ps:
        cluster["ps"] = [f"{host}:{next(ports)}" for _ in range(ps)]
    tasks = [(job, i) for job, addresses in cluster.items() for i in range(len(addresses))]
    if evaluator:
        tasks.append(("evaluator", 0))
    return cluster, tasks


class _Task:
    def __init__(self, job: str, index: int, command: list, env: dict, out, lock) -> None:
        self.name = f"{job}:{index}"
        self.job = job
        self.stopped = False
        self.proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     start_new_session=True)
        self._reader = threading.Thread(target=self._pump, args=(out, lock), daemon=True)
        self._reader.start()

    def _pump(self, out, lock) -> None:
        prefix = f"[{self.name}] ".encode()
        for line in iter(self.proc.stdout.readline, b""):
            with lock:
                out.write(prefix + line if line.endswith(b"\n") else prefix + line + b"\n")
                out.flush()

    def stop(self) -> None:
        """SIGTERM the task's process group now (see `finish_stop`)."""
        if self.proc.poll() is None:
            self.stopped = True
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    def finish_stop(self, deadline: float) -> None:
        try:
            self.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()
        self._reader.join(timeout=2)


def _stop_all(tasks) -> None:
    for task in tasks:
        task.stop()
    deadline = time.monotonic() + _STOP_GRACE_S
    for task in tasks:
        task.finish_stop(deadline)


_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


_SERVING_JOBS = ("ps", "evaluator")


def task_thread_env(tasks, environ=None) -> dict:
    """The BLAS thread variables of each ``(job, index)`` in `tasks`, all started on this
    machine: every ps and evaluator task gets 1 thread (a ps's work is elementwise
    updates and transfers, an evaluator runs now and then), and the trainers divide the
    cores left among them (at least 1 each), so that the threads never outnumber the
    cores. Nothing when the environment already sets a thread count: the user's choice
    wins.

    >>> task_thread_env([("chief", 0), ("ps", 0)], {"OMP_NUM_THREADS": "4"})
    {}
    >>> env = task_thread_env([("chief", 0), ("worker", 0), ("ps", 0)], {})
    >>> env[("ps", 0)]["OPENBLAS_NUM_THREADS"]
    '1'
    """
    env = os.environ if environ is None else environ
    if any(env.get(name) for name in _THREAD_VARS):
        return {}
    serving = sum(1 for job, _ in tasks if job in _SERVING_JOBS)
    trainers = len(tasks) - serving
    trainer_share = str(max(1, (_cores() - serving) // max(1, trainers)))
    return {(job, index): dict.fromkeys(("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"),
                                        "1" if job in _SERVING_JOBS else trainer_share)
            for job, index in tasks}


def run_cluster(command: list, ps: int = 1, workers: int = 1, evaluator: bool = False,
                host: str = "localhost", grace_s: float = 30.0, out=None) -> int:
    """Start the cluster, stream its output to `out` (bytes; default stdout) and return
    the exit code (see the module docstring)."""
    if not command:
        raise ValueError("flowgraph launch: give the program after '--', e.g. "
                         "flowgraph launch --ps 1 --workers 2 -- python train.py")
    out = out if out is not None else sys.stdout.buffer
    lock = threading.Lock()
    ports = iter(lambda: free_port(host), None)
    cluster, layout_tasks = layout(ps, workers, evaluator, host, ports)

    def note(text: str) -> None:
        with lock:
            out.write(f"[launch] {text}\n".encode())
            out.flush()

    note(f"cluster {json.dumps(cluster)}")
    threads = task_thread_env(layout_tasks)
    if threads:
        shares = ", ".join(f"{job}:{index} {env['OPENBLAS_NUM_THREADS']}"
                           for (job, index), env in threads.items())
        note(f"{len(layout_tasks)} tasks share {_cores()} cores; BLAS threads: {shares}")
    tasks = []
    try:
        for job, index in layout_tasks:
            env = dict(os.environ, **threads.get((job, index), {}), TF_CONFIG=json.dumps(
                {"cluster": cluster, "task": {"type": job, "index": index}}))
            tasks.append(_Task(job, index, command, env, out, lock))
        return _supervise(tasks, grace_s, note)
    except KeyboardInterrupt:
        note("interrupted: stopping every task")
        return 130
    finally:
        _stop_all(tasks)


def _supervise(tasks, grace_s: float, note) -> int:
    chief = next(t for t in tasks if t.job == "chief")
    finish_by = None
    while True:
        for task in tasks:
            code = task.proc.poll()
            if code not in (None, 0) and not task.stopped:
                note(f"task {task.name} exited with code {code}: stopping the cluster")
                return code if code > 0 else 128 - code
        if finish_by is None and chief.proc.poll() == 0:
            note(f"the chief finished; waiting up to {grace_s:g} s for the other trainers "
                 "and the evaluator")
            finish_by = time.monotonic() + grace_s
        if finish_by is not None:
            left = [t for t in tasks if t.job != "ps" and t.proc.poll() is None]
            if not left:
                return 0
            if time.monotonic() > finish_by:
                note(f"stopping {[t.name for t in left]} after the grace period")
                return 0
        time.sleep(_POLL_S)


def add_parser(subparsers=None) -> argparse.ArgumentParser:
    """The ``launch`` arguments (a sub-command parser, or a parser of its own)."""
    kwargs = {"description": __doc__.split("\n\n")[1],
              "formatter_class": argparse.RawDescriptionHelpFormatter}
    if subparsers is None:
        parser = argparse.ArgumentParser(prog="flowgraph launch", **kwargs)
    else:
        parser = subparsers.add_parser("launch", help="run a TF_CONFIG cluster locally",
                                       **kwargs)
    parser.add_argument("--ps", type=int, default=1, help="parameter servers (default 1)")
    parser.add_argument("--workers", type=int, default=1,
                        help="trainers, the first being the chief (default 1)")
    parser.add_argument("--evaluator", action="store_true", help="add an evaluator task")
    parser.add_argument("--host", default="localhost",
                        help="the address every task listens on (default localhost; with "
                             "--ray each task's node address instead)")
    parser.add_argument("--grace", type=float, default=30.0,
                        help="seconds the others get to finish after the chief (default 30)")
    ray = parser.add_argument_group(
        "Ray", "run the tasks as actors on a Ray cluster (flowgraph.distributed.ray)")
    ray.add_argument("--ray", action="store_true",
                     help="start the tasks as Ray actors instead of local processes")
    ray.add_argument("--ray-address", default=None,
                     help="the Ray cluster, e.g. auto or ray://head:10001 (default: "
                          "start a local one)")
    ray.add_argument("--ray-resources", action="append", default=[],
                     metavar="ROLE:KEY=N[,KEY=N]",
                     help="Ray resources of a role (chief, worker, workers, ps, "
                          "evaluator), e.g. ps:num_cpus=2 or workers:num_gpus=1; "
                          "default num_cpus=1 each")
    ray.add_argument("--max-restarts", type=int, default=2,
                     help="restarts per task after a failure (Ray's max_restarts; "
                          "default 2)")
    ray.add_argument("--progress", type=float, default=30.0,
                     help="seconds between progress lines (default 30; 0 for none)")
    parser.add_argument("command", nargs=argparse.REMAINDER,
                        help="-- then the program and its arguments")
    return parser


def program(args) -> list[str]:
    """The command after ``--`` in parsed `add_parser` arguments."""
    return args.command[1:] if args.command[:1] == ["--"] else args.command


def main(argv: list[str] | None = None) -> int:
    """``flowgraph launch ARGS`` without ``--ray``; returns the exit code."""
    parser = add_parser()
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    command = program(args)
    if args.ray:  # flowgraph.distributed.ray sits above this module (it uses `layout`)
        parser.error("--ray is run by flowgraph.distributed.ray.main: use the flowgraph "
                     "command or python -m flowgraph.distributed.ray")
    try:
        return run_cluster(command, args.ps, args.workers, args.evaluator, args.host,
                           args.grace)
    except ValueError as e:
        parser.error(str(e))
        return 2
