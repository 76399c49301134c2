"""Where graph-building code stands with respect to a distribution strategy.

`tf.distribute` strategies (`flowgraph/strategies/`) live above the training library,
yet the optimizer, the Saver and variable reads must know whether they are being built
for one replica of a multi-replica strategy. This module is the meeting point; it keeps
two pieces of state and imports nothing above the framework:

- the *scope stack*: the strategies whose ``scope()`` is open (process-wide, so the
  replica threads of ``call_for_each_replica`` see the scope their caller opened);
- per thread, the *replica state*: ``(strategy, replica id, context)`` while a thread
  builds the graph of one replica, and the *update index* while cross-replica code
  updates the copy of a mirrored variable on one device.

::

    main thread        strategy.scope()            stack = [s]
      replica thread 0   call_for_each_replica     replica = (s, 0, ctx0)
      replica thread 1                             replica = (s, 1, ctx1)
    main thread        merge_call / update(v, fn)  replica = None, update index = i
"""

from __future__ import annotations

import contextlib
import threading

__all__ = ["current_replica", "current_strategy", "pop_strategy", "push_strategy",
           "replica_index", "replica_scope", "update_index", "update_scope"]

_stack: list = []
_state = threading.local()


def push_strategy(strategy) -> None:
    _stack.append(strategy)


def pop_strategy() -> None:
    _stack.pop()


def current_strategy():
    """The innermost strategy whose scope is open, or None."""
    return _stack[-1] if _stack else None


def current_replica():
    """``(strategy, replica id, replica context)`` inside a replica's function, else None."""
    return getattr(_state, "replica", None)


@contextlib.contextmanager
def replica_scope(strategy, replica_id: int, context):
    """Mark this thread as building replica `replica_id` of `strategy` (None: as
    cross-replica code, e.g. a merge function)."""
    saved = getattr(_state, "replica", None)
    _state.replica = None if strategy is None else (strategy, replica_id, context)
    try:
        yield
    finally:
        _state.replica = saved


def update_index():
    """The device index a cross-replica update is writing, or None."""
    return getattr(_state, "update", None)


@contextlib.contextmanager
def update_scope(index: int | None):
    """Mark this thread as updating (and reading) the copies on device `index`."""
    saved = getattr(_state, "update", None)
    _state.update = index
    try:
        yield
    finally:
        _state.update = saved


def replica_index():
    """The copy of a mirrored value this thread reads: its replica's, the update's, or
    None (the primary copy, as cross-replica code reads)."""
    index = update_index()
    if index is not None:
        return index
    replica = current_replica()
    return None if replica is None else replica[1]
