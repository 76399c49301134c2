"""The event writer's background thread (flowgraph/summary/writer.py): started without
waiting for it to run, joined by `close`, and not holding up interpreter exit (open
writers are flushed then)."""

from __future__ import annotations

import glob
import os
import subprocess
import sys
import time

import pytest

from flowgraph.framework.event_format import summary_iterator
from flowgraph.summary.event_format import Summary
from flowgraph.summary.writer import FileWriter, FileWriterCache


def _scalars(logdir):
    (path,) = glob.glob(os.path.join(logdir, "events.out.tfevents.*"))
    return [(e.step, v.tag, v.simple_value) for e in summary_iterator(path)
            if e.HasField("summary") for v in e.summary.value]


def _all_scalars(logdir):
    return [(e.step, v.tag, v.simple_value)
            for path in glob.glob(os.path.join(logdir, "events.out.tfevents.*"))
            for e in summary_iterator(path) if e.HasField("summary") for v in e.summary.value]


def test_close_writes_everything_and_ends_the_thread(tmp_path):
    w = FileWriter(str(tmp_path), max_queue=2)
    first = w.event_writer._stopped
    assert not first.is_set()
    for step in range(5):  # more than max_queue: add_summary waits for the thread
        w.add_summary(Summary(value=[Summary.Value(tag="x", simple_value=step)]), step)
    w.close()
    assert first.is_set()  # close returned after the thread ended
    assert _scalars(str(tmp_path)) == [(s, "x", float(s)) for s in range(5)]
    w.reopen()  # a new file, a new thread
    assert not w.event_writer._stopped.is_set()
    w.close()
    assert w.event_writer._stopped.is_set()
    assert len(glob.glob(os.path.join(str(tmp_path), "events.out.tfevents.*"))) == 2


def test_an_open_writer_is_flushed_at_exit_without_holding_it_up(tmp_path):
    script = (
        "import sys\n"
        "from flowgraph.summary.writer import FileWriter\n"
        "from flowgraph.summary.event_format import Summary\n"
        "w = FileWriter(sys.argv[1], flush_secs=3600)\n"
        "w.add_summary(Summary(value=[Summary.Value(tag='y', simple_value=2.0)]), 7)\n")
    subprocess.run([sys.executable, "-c", script, str(tmp_path)], check=True, timeout=60,
                   env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert _scalars(str(tmp_path)) == [(7, "y", 2.0)]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_does_not_wait_for_its_parents_writer_thread(tmp_path):
    logdir = str(tmp_path)
    w = FileWriter(logdir)
    FileWriterCache.get(os.path.join(logdir, "child"))  # cached in the parent
    pid = os.fork()
    if pid == 0:  # the child: no writer thread here; its copy is closed, nothing hangs
        code = 1
        try:
            w.add_summary(Summary(value=[Summary.Value(tag="c", simple_value=0.0)]), 0)
            w.close()
            child = FileWriterCache.get(os.path.join(logdir, "child"))
            child.add_summary(Summary(value=[Summary.Value(tag="c", simple_value=2.0)]), 2)
            child.close()
            code = 0
        finally:
            os._exit(code)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.05)
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        pytest.fail("a forked child's FileWriter.close() waited for the parent's thread")
    assert os.waitstatus_to_exitcode(status) == 0
    w.add_summary(Summary(value=[Summary.Value(tag="z", simple_value=1.0)]), 1)
    w.close()  # the parent's writer still works
    assert _scalars(logdir) == [(1, "z", 1.0)]
    # the child wrote a file of its own beside the parent's cached writer's
    assert sorted(_all_scalars(os.path.join(logdir, "child"))) == [(2, "c", 2.0)]
    FileWriterCache.clear()
