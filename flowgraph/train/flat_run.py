"""The flat path of a monitored session's `run`: a quiet step goes from the outermost
`run` straight to the hooked session's `run_quiet`, without passing through the
recoverable and coordinated layers, and with the same semantics as the layers.

A training loop repeats one call, ``sess.run(fetches)``, and on almost every step no
hook is due (`hook_schedule`). The layered path walks four frames for it:

    MonitoredSession.run -> _RecoverableSession.run -> _CoordinatedSession.run
        -> _HookedSession.run (requests, merge checks, schedule) -> Session.run

The flat path is two frames and the same work on the way back:

    MonitoredSession.run -> FlatPath.run -> _HookedSession.run_quiet -> Session.run

When it applies: no feeds, options or run metadata; the very same fetches object (a
flat tuple of tensors/operations, or one of them) as a quiet layered run recorded
(`_HookedSession._quiet`); no scheduled hook due before the run (by runs, steps or
seconds), and no hook with a `before_run` of its own (hooks with only an `after_run`
are called as usual). Anything else, a closed or stopped session included, answers
`LAYERED` before calling anything, and the layered path runs the step.

What the skipped layers do is done here, in the same order:

- the coordinator's: an error from the run that is not a preemption raises a
  preemption error a queue-runner thread reported instead (`raise_thread_preemption`);
- the recoverable session's: a preemption error closes the session stack and runs the
  same call again through the layered path, which creates a new session first.

Hooks due after the run, `run_context.request_stop()` and the schedule's record of the
run go through the hooked session's own `_finish_due`, as on the layered path; and
`should_stop` answers as before (its shortcut reads the same state).

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     step = tf.train.get_or_create_global_step()
...     fetches = (step.assign_add(1),)
...     with tf.train.MonitoredSession(
...             hooks=[tf.train.StopAtStepHook(last_step=20)]) as sess:
...         while not sess.should_stop():
...             (value,) = sess.run(fetches)  # flat from the second step on
>>> int(value)
20
"""

from __future__ import annotations

from flowgraph.train.hooked_session import LAYERED
from flowgraph.train.session_wrappers import _PREEMPTION_ERRORS, raise_thread_preemption

__all__ = ["LAYERED", "FlatPath"]


class FlatPath:
    """The flat path of one monitored session (see the module docstring).

    Parameters
    ----------
    creator : _CoordinatedSessionCreator
        Holds the current hooked session and coordinator (replaced on recovery).
    recoverable : _RecoverableSession or None
        The layer that recovers from preemption errors; None without recovery.
    """

    __slots__ = ("_creator", "_recoverable")

    def __init__(self, creator, recoverable) -> None:
        self._creator = creator
        self._recoverable = recoverable

    def run(self, fetches):
        """``run(fetches)`` of a quiet step, or `LAYERED` (nothing called)."""
        creator = self._creator
        hooked = creator.hooked_session
        if hooked is None or hooked._quiet is None:  # closed, or no quiet run yet
            return LAYERED
        try:
            try:
                return hooked.run_quiet(fetches)
            except _PREEMPTION_ERRORS:
                raise
            except Exception:  # as _CoordinatedSession.run
                raise_thread_preemption(creator.coord)
                raise
        except _PREEMPTION_ERRORS as e:  # as _RecoverableSession.run
            recoverable = self._recoverable
            if recoverable is None:
                raise
            recoverable._on_preemption(e)
            return recoverable.run(fetches)
