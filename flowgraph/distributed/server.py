"""`tf.train.Server`: one task of a cluster, serving the ``flowgraph.Task`` gRPC service.

A server binds exactly the address its cluster entry names (``localhost:2222`` listens on
the loopback interface only; TensorFlow listens on every interface) and serves from a
thread pool; the process stays free to build graphs and run sessions, e.g. against its
own `target`. A parameter-server process typically calls `join` and serves until it is
killed.

With ``config=ConfigProto(rpc_options={...})`` (or the ``FLOWGRAPH_*`` environment
variables, `flowgraph.distributed.rpc.Security`) a server serves TLS only and refuses
calls without the cluster's shared token; its own calls to other tasks carry the same
settings, and so do sessions of this process on its `target` that set none.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.distributed import Server
>>> server = Server.create_local_server()
>>> with tf.Graph().as_default():
...     total = tf.add(tf.constant(2.0), 3.0)
...     with tf.Session(server.target) as sess:
...         print(sess.run(total))
5.0
>>> server.stop()
"""

from __future__ import annotations

import concurrent.futures
import errno
import logging
import os
import socket

from flowgraph.distributed import direct
from flowgraph.distributed.cluster_protos import ClusterDef, ServerDef
from flowgraph.distributed.cluster_spec import ClusterSpec
from flowgraph.distributed.rpc import (
    SERVER_OPTIONS,
    Security,
    import_grpc,
    method_handlers,
    register_in_process,
    register_local_security,
    traffic_counter,
)
from flowgraph.distributed.worker import TaskService
from flowgraph.framework import errors

__all__ = ["Server", "stage_threads"]

logger = logging.getLogger("tensorflow")

_THREADS = 16


def _pick_task(cluster: ClusterSpec, job_name, task_index) -> tuple[str, int]:
    """The server's job and task, checked with TensorFlow's error types and words (then
    what flowgraph found)."""
    if job_name is None:
        if len(cluster.jobs) != 1:
            raise ValueError(f"Must specify an explicit `job_name`. (tf.train.Server: the "
                             f"cluster has jobs {cluster.jobs}; pass job_name= to say which "
                             "one this server is a task of.)")
        job_name = cluster.jobs[0]
    if job_name not in cluster.jobs:
        if task_index is None:  # TF looks the job's tasks up first: a ValueError then
            raise ValueError(f"No such job in cluster: {job_name!r} (tf.train.Server: its "
                             f"jobs are {cluster.jobs})")
        raise errors.InternalError(None, None, f'Job "{job_name}" was not defined in '
                                   f"cluster (tf.train.Server: its jobs are {cluster.jobs})")
    if task_index is None:
        if cluster.num_tasks(job_name) != 1:
            raise ValueError(f"Must specify an explicit `task_index`. (tf.train.Server: job "
                             f"{job_name!r} has {cluster.num_tasks(job_name)} tasks; pass "
                             "task_index=.)")
        task_index = cluster.task_indices(job_name)[0]
    if int(task_index) not in cluster.task_indices(job_name):
        raise errors.InternalError(
            None, None, f'Task {int(task_index)} was not defined in job "{job_name}" '
            f"(tf.train.Server: its tasks are {cluster.task_indices(job_name)})")
    return job_name, int(task_index)


def stage_threads(config=None, environ=None) -> int:
    """The threads a task runs each stage on (the executor's inter-op threads, the
    calling one included): the server config's ``inter_op_parallelism_threads``, else
    this process's share of the cores when a launcher gave it one (``OMP_NUM_THREADS``,
    else ``OPENBLAS_NUM_THREADS``: `flowgraph launch` and `run_cluster` set both), else
    0, a session's default (every core). A task with one core's share that handed the
    ops of a step to a pool thread would pay two thread switches per hand-off, on a core
    the other tasks need (the small MLP's trainer spent ~30 % more CPU per step so).

    >>> stage_threads(environ={"OMP_NUM_THREADS": "1"}), stage_threads(environ={})
    (1, 0)
    """
    threads = int(getattr(config, "inter_op_parallelism_threads", 0) or 0)
    if threads > 0:
        return threads
    environ = os.environ if environ is None else environ
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        value = environ.get(name, "").strip()
        if value.isdigit() and int(value) > 0:
            return int(value)
    return 0


def _check_every_family_free(address: str, where: str) -> None:
    """Raise UnavailableError when another process holds `address`'s port on one of the
    host's addresses (``localhost``: 127.0.0.1 and ::1). gRPC starts when it can bind
    only some of them, and a client that tries the other one first then talks to that
    other process's server."""
    host, _, port = address.rpartition(":")
    if not port.isdigit() or int(port) == 0:
        return
    try:
        infos = [(f, a) for f, _, _, _, a in socket.getaddrinfo(
            host.strip("[]"), int(port), type=socket.SOCK_STREAM)]
    except OSError:
        return  # gRPC reports an unresolvable host itself
    if host == "localhost":  # gRPC resolves it to both loopbacks whatever /etc/hosts says
        infos += [(socket.AF_INET, ("127.0.0.1", int(port))),
                  (socket.AF_INET6, ("::1", int(port), 0, 0))]
    for family, sockaddr in infos:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                probe.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                probe.bind(sockaddr)
            except OSError as e:
                if e.errno == errno.EADDRINUSE:
                    raise errors.UnavailableError(
                        None, None, f"{where} could not bind {address}: port {port} is in "
                        f"use on {sockaddr[0]} by another process (clients of {host} may "
                        "reach either address). Free the port or pick another one.") from e
                # an address family this host does not offer: gRPC skips it too

class Server:
    """An in-process gRPC server for one task of a cluster.

    Parameters
    ----------
    server_or_cluster_def : ClusterSpec, dict, ClusterDef or ServerDef
        The cluster (a `RunConfig.cluster_spec` works too); a ``ServerDef`` also gives
        the job, task and protocol where the arguments leave them out.
    job_name, task_index : str, int, optional
        Which task this is; may be left out when the cluster (job) has one task.
    protocol : str, optional
        ``"grpc"`` (the default and only protocol).
    config : ConfigProto, optional
        ``rpc_options`` may set ``auth_token`` and ``tls_cert_file``/``tls_key_file``/
        ``tls_ca_file`` (see the module docstring); the rest is accepted for TensorFlow
        compatibility.
    start : bool
        Start serving now (else call `start`).
    """

    def __init__(self, server_or_cluster_def, job_name: str | None = None,
                 task_index: int | None = None, protocol: str | None = None, config=None,
                 start: bool = True) -> None:
        if isinstance(server_or_cluster_def, ServerDef):
            given = server_or_cluster_def
            server_or_cluster_def = given.cluster
            job_name = job_name if job_name is not None else (given.job_name or None)
            task_index = task_index if task_index is not None else given.task_index
            protocol = protocol if protocol is not None else (given.protocol or None)
        if protocol not in (None, "grpc"):  # (TensorFlow's type and first words)
            raise errors.NotFoundError(
                None, None, f"No server factory registered for the given ServerDef: "
                f"protocol {protocol!r} (flowgraph's servers speak 'grpc' only).")
        if not isinstance(server_or_cluster_def, (dict, ClusterSpec, ClusterDef)) and not (
                hasattr(server_or_cluster_def, "as_dict")):
            raise TypeError("Could not convert `server_or_cluster_def` to a "
                            "`tf.train.ServerDef` or `tf.train.ClusterSpec`; got "
                            f"{type(server_or_cluster_def).__name__}: "
                            f"{server_or_cluster_def!r}")
        grpc = import_grpc()
        cluster = ClusterSpec(server_or_cluster_def)
        self._job, self._task = _pick_task(cluster, job_name, task_index)
        address = cluster.task_address(self._job, self._task)
        where = f"tf.train.Server /job:{self._job}/task:{self._task}"
        self._security = Security.from_config(config)
        credentials = self._security.server_credentials(grpc, where)
        self._grpc = grpc.server(
            concurrent.futures.ThreadPoolExecutor(
                _THREADS, thread_name_prefix=f"fg-{self._job}{self._task}"),
            options=SERVER_OPTIONS)
        _check_every_family_free(address, where)
        try:
            port = (self._grpc.add_insecure_port(address) if credentials is None
                    else self._grpc.add_secure_port(address, credentials))
        except RuntimeError as e:
            port, detail = 0, str(e)
        else:
            detail = "the port is in use or the host is not a local interface"
        if not port:
            raise errors.UnavailableError(None, None, f"{where} could not bind {address}: "
                                          f"{detail}.")
        host = address.rsplit(":", 1)[0]
        self._address = f"{host}:{port}"
        jobs = cluster.as_dict()
        jobs[self._job][self._task] = self._address  # the real port when asked for :0
        self._cluster = ClusterSpec(jobs)
        self._service = TaskService(
            self._cluster, self._job, self._task, self._security,
            threads=stage_threads(config),
            pinned=int(getattr(config, "inter_op_parallelism_threads", 0) or 0) > 0)
        self._grpc.add_generic_rpc_handlers(
            (method_handlers(self._service, self._security, where),))
        self._started = self._stopped = False
        self._direct = None
        self._where = where
        self._config = config
        if start:
            self.start()

    @staticmethod
    def create_local_server(config=None, start: bool = True) -> Server:
        """A single-task server on a free loopback port (job ``localhost``, task 0, as
        TensorFlow names it).

        >>> Server.create_local_server(start=False).target.startswith("grpc://localhost:")
        True
        """
        return Server({"localhost": ["localhost:0"]}, job_name="localhost", task_index=0,
                      config=config, start=start)

    @property
    def target(self) -> str:
        """``grpc://host:port``: pass it to `tf.Session` to run graphs through this task."""
        return f"grpc://{self._address}"

    @property
    def server_def(self) -> ServerDef:
        """This server's ``tf.train.ServerDef``: its cluster, job, task and protocol.

        >>> s = Server.create_local_server(start=False)
        >>> s.server_def.job_name, s.server_def.task_index, s.server_def.protocol
        ('localhost', 0, 'grpc')
        """
        return ServerDef(cluster=self._cluster.as_cluster_def(), job_name=self._job,
                         task_index=self._task, protocol="grpc")

    def start(self) -> None:
        """Start serving (a no-op if already started)."""
        if not self._started:
            self._grpc.start()
            self._started = True
            if direct.enabled(self._security):  # the step calls' data plane
                try:
                    self._direct = direct.DirectServer(
                        self._service, self._address.rsplit(":", 1)[0],
                        self._security.auth_token, where=self._where,
                        count=traffic_counter(self._service))
                    self._service.data_port = self._direct.port
                    self._service.data_local = self._direct.local_name
                except OSError as e:  # gRPC still carries every call
                    logger.warning("%s: no data plane (%s); step calls go through gRPC.",
                                   self._where, e)
            register_local_security(self._address, self._security)
            register_in_process(self._address, self._service, self._security)

    def join(self) -> None:
        """Block until the server stops (for a ps task: until the process is killed)."""
        self.start()
        self._grpc.wait_for_termination()

    def __del__(self) -> None:
        # A server dropped without stop(): its port may serve another task later.
        service = getattr(self, "_service", None)
        if service is not None:
            register_in_process(self._address, service, None, forget=True)
        plane = getattr(self, "_direct", None)
        if plane is not None and not self._stopped:
            plane.stop()

    def stop(self, grace_s: float | None = None) -> None:
        """Stop serving and drop this task's state (flowgraph extension; TensorFlow 1.x
        servers stop only with their process)."""
        if not self._stopped:
            self._stopped = True
            register_local_security(self._address, None)
            register_in_process(self._address, self._service, None, forget=True)
            if self._direct is not None:
                self._direct.stop()
            self._grpc.stop(grace_s).wait()
            self._service.close()
