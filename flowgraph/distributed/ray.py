"""Run a TF_CONFIG cluster of one program on a Ray cluster: one Ray actor per task.

``flowgraph launch --ray`` (or ``python -m flowgraph.distributed.ray``, the same
arguments) does on a Ray cluster what plain ``flowgraph launch`` does on this machine.
Ray places the actors, flowgraph only tells each one what to run:

1. **reserve**: one actor per task (chief, workers, ps, evaluator), created with the
   Ray resources of its role (``resources={"ps": {"num_cpus": 2}, ...}``) and Ray's
   ``max_restarts``. Each answers its node's address and a port free there now.
2. **start**: every actor gets the same cluster dict, built from those answers, and
   its own ``{"type", "index"}`` in ``TF_CONFIG``; it starts the program as a
   subprocess (its own process group, killed with the actor).
3. **supervise**: the driver polls the actors, prints every line of output prefixed
   with the task's name (``[worker:0] ...``), and every ``progress_s`` seconds one
   ``[ray]`` line saying which task runs on which node for how long.

A task whose program exits non-zero is restarted while its restarts last: the driver
kills the actor, Ray restarts it (on a node with the role's resources, counted against
``max_restarts``), and the new actor starts the program again with the same
``TF_CONFIG``, so the others find it at the same address. An actor that dies by itself
(its node lost, the OOM killer) is restarted by Ray the same way. Restarted on another
node, a task could not listen at its address; it then fails with a message saying so.
Out of restarts, the cluster stops and the driver exits with the task's code.

The end is ``flowgraph launch``'s: the chief exiting 0 gives the workers and the
evaluator ``grace_s`` seconds, then every task left (the ps tasks serve forever) is
stopped; Ctrl-C stops every task.

State kept by the driver, per task: its actor, the address it was given, when the
current run started and how many restarts it used. The invariant: a task's address
never changes after step 1, whichever actor incarnation serves it.

Example
-------
>>> parse_resources(["ps:num_cpus=2", "worker:num_gpus=1,memory=2e9"])
{'ps': {'num_cpus': 2.0}, 'worker': {'num_gpus': 1.0, 'memory': 2000000000.0}}
"""

from __future__ import annotations

import collections
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

__all__ = ["DEFAULT_RESOURCES", "main", "parse_resources", "run_on_ray"]

DEFAULT_RESOURCES = {"chief": {"num_cpus": 1}, "worker": {"num_cpus": 1},
                     "ps": {"num_cpus": 1}, "evaluator": {"num_cpus": 1}}
_ROLES = tuple(DEFAULT_RESOURCES)
_STOP_GRACE_S = 5.0
_POLL_S = 0.1
_RESTART_WAIT_S = 60.0
_PLACE_TIMEOUT_S = 120.0


def _die_with_parent() -> None:
    """In the child before exec: get SIGKILL when the actor process dies (Linux)."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class _TaskHost:
    """The body of one task's Ray actor: runs the program, buffers its output lines."""

    def __init__(self) -> None:
        self._proc = None
        self._lines = collections.deque()
        self._lock = threading.Lock()

    def reserve(self) -> tuple[str, int]:
        """This node's address and a port free on it now."""
        import ray

        host = ray.util.get_node_ip_address()
        with socket.socket() as s:
            s.bind((host, 0))
            return host, s.getsockname()[1]

    def start(self, command: list, tf_config: dict, env: dict, cwd: str | None) -> int:
        """Start the program with this TF_CONFIG; returns its pid."""
        import ray

        mine = tf_config["cluster"].get(tf_config["task"]["type"])
        host = ray.util.get_node_ip_address()
        if mine is not None:
            address = mine[tf_config["task"]["index"]]
            if address.rsplit(":", 1)[0] != host:
                raise RuntimeError(
                    f"flowgraph launch --ray: task {tf_config['task']} must listen at "
                    f"{address}, but Ray restarted its actor on node {host}; give the "
                    "role resources only that node has, or restart the whole cluster.")
        full_env = dict(os.environ, **env, TF_CONFIG=json.dumps(tf_config))
        run_in = cwd if cwd and os.path.isdir(cwd) else None
        self._proc = subprocess.Popen(
            command, env=full_env, cwd=run_in, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
            preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None)
        threading.Thread(target=self._pump, args=(self._proc,), daemon=True).start()
        return self._proc.pid

    def _pump(self, proc) -> None:
        for line in iter(proc.stdout.readline, b""):
            with self._lock:
                self._lines.append(line.rstrip(b"\n"))

    def poll(self) -> tuple[bool, list, int | None]:
        """(started, new output lines, exit code or None while running)."""
        if self._proc is None:
            return False, [], None
        code = self._proc.poll()
        if code is not None:
            time.sleep(0.05)  # let the reader drain what the program wrote last
        with self._lock:
            lines = list(self._lines)
            self._lines.clear()
        return True, lines, code

    def stop(self, grace_s: float = _STOP_GRACE_S) -> None:
        """SIGTERM the program's process group, SIGKILL after `grace_s`."""
        if self._proc is None or self._proc.poll() is not None:
            return
        try:
            os.killpg(self._proc.pid, signal.SIGTERM)
            self._proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            os.killpg(self._proc.pid, signal.SIGKILL)
            self._proc.wait()
        except ProcessLookupError:
            pass


class _Task:
    """The driver's view of one task."""

    def __init__(self, job: str, index: int, actor) -> None:
        self.job, self.index, self.actor = job, index, actor
        self.name = f"{job}:{index}"
        self.address = None
        self.node = None
        self.started_at = 0.0
        self.restarts = 0
        self.code = None       # the program's exit code once it ended for good
        self.restarting = False  # killed by the driver, waiting for Ray's restart


def parse_resources(specs: list[str]) -> dict:
    """``ROLE:KEY=VALUE[,KEY=VALUE]`` strings (``--ray-resources``) as a dict per role.

    Keys are Ray actor options (``num_cpus``, ``num_gpus``, ``memory``) or custom
    resource names, which go to the actor's ``resources``. ``workers`` means both the
    chief and the workers.
    """
    out: dict = {}
    for spec in specs:
        role, _, pairs = spec.partition(":")
        roles = ("chief", "worker") if role == "workers" else (role,)
        if not pairs or any(r not in _ROLES for r in roles):
            raise ValueError(f"flowgraph launch --ray-resources: expected "
                             f"ROLE:KEY=VALUE[,KEY=VALUE] with ROLE one of "
                             f"{[*_ROLES, 'workers']}; got {spec!r}")
        for pair in pairs.split(","):
            key, eq, value = pair.partition("=")
            try:
                amount = float(value)
            except ValueError:
                amount = None
            if not eq or amount is None:
                raise ValueError(f"flowgraph launch --ray-resources: {pair!r} in {spec!r} "
                                 "is not KEY=NUMBER, e.g. num_cpus=2")
            for r in roles:
                out.setdefault(r, {})[key.strip()] = amount
    return out


def _actor_options(role: str, resources: dict | None, max_restarts: int,
                   runtime_env: dict | None) -> dict:
    wanted = dict(DEFAULT_RESOURCES[role], **(resources or {}).get(role, {}))
    options = {"max_restarts": max_restarts, "max_task_retries": 0}
    custom = {}
    for key, value in wanted.items():
        if key in ("num_cpus", "num_gpus", "memory"):
            options[key] = value
        else:
            custom[key] = value
    if custom:
        options["resources"] = custom
    if runtime_env:
        options["runtime_env"] = runtime_env
    return options


def _call(ray, method, *args, deadline: float):
    """Call an actor method, waiting while Ray restarts the actor (until `deadline`)."""
    while True:
        try:
            return ray.get(method.remote(*args))
        except ray.exceptions.ActorUnavailableError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def run_on_ray(command: list, ps: int = 1, workers: int = 1, evaluator: bool = False, *,
               address: str | None = None, resources: dict | None = None,
               max_restarts: int = 2, grace_s: float = 30.0, env: dict | None = None,
               cwd: str | None = None, runtime_env: dict | None = None,
               progress_s: float = 30.0, out=None) -> int:
    """Run `command` once per task of a TF_CONFIG cluster, each as a Ray actor.

    Parameters
    ----------
    command : list of str
        The program, e.g. ``["python", "train.py"]``; it must exist on the nodes.
    ps, workers, evaluator
        The tasks, as for ``flowgraph launch`` (the first trainer is the chief).
    address : str, optional
        The Ray cluster (``"auto"``, ``"ray://head:10001"``); None connects to the
        one this process already initialized, else starts a local one.
    resources : dict, optional
        Ray resources per role over `DEFAULT_RESOURCES`, e.g. ``{"worker":
        {"num_gpus": 1}}`` (see `parse_resources`).
    max_restarts : int
        How often each task may be restarted after its program failed or its actor
        died (Ray's ``max_restarts``).
    env, cwd, runtime_env
        Extra environment variables and the working directory of the program (used
        where it exists on the node), and a Ray ``runtime_env`` for the actors.
    progress_s : float
        Seconds between progress lines; 0 for none.
    out : binary file, optional
        Where the output goes (default stdout).

    Returns
    -------
    int
        0 when the chief finished with 0, else the failing task's exit code.

    Example
    -------
    >>> import ray                                               # doctest: +SKIP
    >>> ray.init(num_cpus=2)                                     # doctest: +SKIP
    >>> run_on_ray(["python", "train.py"], ps=1, workers=2,      # doctest: +SKIP
    ...            resources={"ps": {"num_cpus": 0.5}})
    0
    """
    from flowgraph.distributed.launch import layout

    if not command:
        raise ValueError("flowgraph launch --ray: give the program after '--', e.g. "
                         "flowgraph launch --ray --ps 1 --workers 2 -- python train.py")
    try:
        import ray
    except ImportError as e:
        raise ImportError("flowgraph launch --ray needs Ray: pip install "
                          "'flowgraph[ray]'") from e
    out = out if out is not None else sys.stdout.buffer
    lock = threading.Lock()

    def note(text: str) -> None:
        with lock:
            out.write(f"[ray] {text}\n".encode())
            out.flush()

    # Only the task list: the addresses come from the actors once Ray placed them.
    _, layout_tasks = layout(ps, workers, evaluator, "unplaced", iter(range(10**6)))
    for role in resources or {}:
        if role not in _ROLES:
            raise ValueError(f"flowgraph launch --ray: resources for unknown role {role!r};"
                             f" the roles are {list(_ROLES)}")
    started_ray = not ray.is_initialized()
    if started_ray:
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    host_cls = ray.remote(_TaskHost)
    tasks = [_Task(job, index, host_cls.options(
        **_actor_options(job, resources, max_restarts, runtime_env)).remote())
        for job, index in layout_tasks]
    try:
        try:
            reserved = ray.get([t.actor.reserve.remote() for t in tasks],
                               timeout=_PLACE_TIMEOUT_S)
        except ray.exceptions.GetTimeoutError:
            wanted = {t.name: _actor_options(t.job, resources, 0, None) for t in tasks}
            raise RuntimeError(
                f"flowgraph launch --ray: Ray could not place every task within "
                f"{_PLACE_TIMEOUT_S:g} s; the Ray cluster has {ray.cluster_resources()} "
                f"and the tasks ask for {wanted}. Add nodes or lower --ray-resources."
            ) from None
        for task, (host, port) in zip(tasks, reserved):
            task.node, task.address = host, f"{host}:{port}"
        cluster: dict = {}
        for task in tasks:
            if task.job != "evaluator":
                cluster.setdefault(task.job, []).append(task.address)
        note(f"cluster {json.dumps(cluster)}")
        run = (command, dict(env or {}), cwd or os.getcwd())

        def start(task: _Task) -> None:
            tf_config = {"cluster": cluster, "task": {"type": task.job, "index": task.index}}
            _call(ray, task.actor.start, run[0], tf_config, run[1], run[2],
                  deadline=time.monotonic() + _RESTART_WAIT_S)
            task.started_at = time.monotonic()

        for task in tasks:
            start(task)
        note("started " + ", ".join(f"{t.name} on {t.node}" for t in tasks))
        return _supervise(ray, tasks, start, max_restarts, grace_s, progress_s, note,
                          out, lock)
    except KeyboardInterrupt:
        note("interrupted: stopping every task")
        return 130
    finally:
        _stop_all(ray, tasks)
        if started_ray:
            ray.shutdown()


def _supervise(ray, tasks, start, max_restarts, grace_s, progress_s, note, out,
               lock) -> int:
    chief = next(t for t in tasks if t.job == "chief")
    finish_by = None
    next_progress = time.monotonic() + progress_s if progress_s else None
    while True:
        for task in tasks:
            if task.code is not None:
                continue
            try:
                started, lines, code = ray.get(task.actor.poll.remote())
            except ray.exceptions.ActorUnavailableError:
                continue  # Ray is restarting it; the next poll sees a fresh actor
            except ray.exceptions.ActorDiedError as e:
                note(f"task {task.name} died and Ray will not restart it: "
                     f"{str(e).splitlines()[0]}; stopping the cluster")
                return 1
            if lines:
                with lock:
                    out.write(b"".join(f"[{task.name}] ".encode() + x + b"\n" for x in lines))
                    out.flush()
            if task.restarting:  # killed by us: wait for Ray's fresh actor
                if not started:
                    task.restarting = False
                    start(task)
                continue
            if not started:  # the actor died by itself and Ray restarted it
                task.restarts += 1
                note(f"task {task.name}'s actor was restarted by Ray "
                     f"({task.restarts}/{max_restarts}): starting it again")
                start(task)
            elif code == 0:
                task.code = 0
            elif code is not None:
                if task.restarts >= max_restarts:
                    note(f"task {task.name} exited with code {code} and has no restarts "
                         f"left: stopping the cluster")
                    return code if code > 0 else 128 - code
                task.restarts += 1
                note(f"task {task.name} exited with code {code}: restarting it "
                     f"({task.restarts}/{max_restarts})")
                ray.kill(task.actor, no_restart=False)
                task.restarting = True
        now = time.monotonic()
        if finish_by is None and chief.code == 0:
            note(f"the chief finished; waiting up to {grace_s:g} s for the other trainers "
                 "and the evaluator")
            finish_by = now + grace_s
        if finish_by is not None:
            left = [t for t in tasks if t.job != "ps" and t.code is None]
            if not left:
                return 0
            if now > finish_by:
                note(f"stopping {[t.name for t in left]} after the grace period")
                return 0
        if next_progress is not None and now >= next_progress:
            next_progress = now + progress_s
            note("progress: " + ", ".join(
                f"{t.name} {'done' if t.code == 0 else 'running'} on {t.node} "
                f"{now - t.started_at:.0f} s" + (f" ({t.restarts} restarts)"
                                                  if t.restarts else "") for t in tasks))
        time.sleep(_POLL_S)


def _stop_all(ray, tasks) -> None:
    refs = []
    for task in tasks:
        try:
            refs.append(task.actor.stop.remote())
        except ray.exceptions.RayActorError:
            pass
    try:
        ray.get(refs, timeout=_STOP_GRACE_S + 5)
    except (ray.exceptions.RayError, TimeoutError):
        pass
    for task in tasks:
        ray.kill(task.actor, no_restart=True)


def main(argv: list[str] | None = None) -> int:
    """``flowgraph launch --ray ARGS`` (the flowgraph command routes ``--ray`` here) and
    ``python -m flowgraph.distributed.ray ARGS`` (``--ray`` implied); the exit code."""
    from flowgraph.distributed.launch import add_parser, program

    parser = add_parser()
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    try:
        return run_on_ray(program(args), args.ps, args.workers, args.evaluator,
                          address=args.ray_address,
                          resources=parse_resources(args.ray_resources),
                          max_restarts=args.max_restarts, grace_s=args.grace,
                          progress_s=args.progress)
    except ValueError as e:
        parser.error(str(e))
        return 2
    except (ImportError, RuntimeError) as e:  # no Ray, or Ray could not place the tasks
        print(f"flowgraph launch --ray: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
