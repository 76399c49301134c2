"""Resource containers: where variables, queues and other session state live.

A `ResourceMgr` maps ``(container, name)`` to a resource object. Sessions on the same
named target (``"local://NAME"`` or a server address) share one manager, so state
outlives a session and `Session.reset(target, containers)` clears it; a session on the
default target ``''`` owns a private manager, as TensorFlow's direct session does.

Example
-------
>>> mgr = ResourceMgr()
>>> var = mgr.lookup_or_create("", "w", VariableState)
>>> var.is_initialized()
False
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from flowgraph.framework import errors


class VariableState:
    """The storage of one variable: a NumPy array, or None while uninitialized."""

    __slots__ = ("lock", "name", "value")

    def __init__(self, name: str = "") -> None:
        self.name = name
        self.value: np.ndarray | None = None
        self.lock = threading.Lock()

    def is_initialized(self) -> bool:
        return self.value is not None

    def read(self, op_name: str = "") -> np.ndarray:
        value = self.value
        if value is None:
            raise errors.FailedPreconditionError(
                None, None,
                f"Attempting to use uninitialized value {self.name}"
                + (f" (read by op '{op_name}')" if op_name else "")
                + ". Run its initializer (e.g. tf.global_variables_initializer()) or "
                "restore it from a checkpoint first.",
            )
        return value

    def __repr__(self) -> str:
        shape = None if self.value is None else self.value.shape
        return f"<VariableState {self.name} shape={shape}>"


class ResourceMgr:
    """Thread-safe ``(container, name) -> resource`` registry."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._containers: dict[str, dict[str, Any]] = {}

    def lookup(self, container: str, name: str):
        with self._lock:
            return self._containers.get(container, {}).get(name)

    def lookup_or_create(self, container: str, name: str, factory: Callable[[str], Any]):
        with self._lock:
            box = self._containers.setdefault(container, {})
            res = box.get(name)
            if res is None:
                res = factory(name)
                box[name] = res
            return res

    def create(self, container: str, name: str, resource: Any) -> None:
        with self._lock:
            box = self._containers.setdefault(container, {})
            if name in box:
                raise errors.AlreadyExistsError(
                    None, None, f"Resource {container}/{name} already exists"
                )
            box[name] = resource

    def delete(self, container: str, name: str) -> None:
        with self._lock:
            self._containers.get(container, {}).pop(name, None)

    def clear(self, containers: list[str] | None = None) -> None:
        with self._lock:
            if not containers:
                for box in self._containers.values():
                    _close_all(box)
                self._containers.clear()
            else:
                for c in containers:
                    _close_all(self._containers.pop(c, {}))

    def names(self) -> list[tuple[str, str]]:
        with self._lock:
            return [(c, n) for c, box in self._containers.items() for n in box]


def _close_all(box: dict[str, Any]) -> None:
    for res in box.values():
        close = getattr(res, "close_resource", None)
        if close is not None:
            close()


_shared_lock = threading.Lock()
_shared_managers: dict[str, ResourceMgr] = {}


def manager_for_target(target: str) -> ResourceMgr:
    """The resource manager of `target`: shared for named targets, private for ''."""
    if not target:
        return ResourceMgr()
    with _shared_lock:
        mgr = _shared_managers.get(target)
        if mgr is None:
            mgr = _shared_managers[target] = ResourceMgr()
        return mgr


def reset_target(target: str, containers: list[str] | None = None) -> None:
    """Clear the containers of a named target (all of them by default)."""
    if not target:
        raise errors.InvalidArgumentError(
            None, None,
            "Session.reset() needs a named target (e.g. 'local://shared' or a server "
            "address); sessions on the default target '' own their state privately."
        )
    with _shared_lock:
        mgr = _shared_managers.get(target)
    if mgr is not None:
        mgr.clear(containers)
