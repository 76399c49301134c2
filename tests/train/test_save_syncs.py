"""How many fsyncs a `Saver.save` costs, and in which order (flowgraph/train/saver.py,
checkpoint_state.write_durably): every temporary file (the checkpoint's and the state
file's) is written and fsynced, all at once, before any rename; the checkpoint's files are
renamed and share one directory fsync; only then is the state file renamed and its
directory fsynced. A regression in the count or the order fails here."""

from __future__ import annotations

import os
import stat
import threading
import time

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.train import checkpoint_state


def _trace(monkeypatch) -> list[tuple[str, str]]:
    """("fsync", path) / ("dirsync", path) / ("rename", target) events, in order."""
    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("names synced files through /proc/self/fd (Linux)")
    events: list[tuple[str, str]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        path = os.readlink(f"/proc/self/fd/{fd}")
        kind = "dirsync" if stat.S_ISDIR(os.fstat(fd).st_mode) else "fsync"
        events.append((kind, os.path.basename(path)))
        return real_fsync(fd)

    def replace(src, dst, **kwargs):
        events.append(("rename", os.path.basename(os.fspath(dst))))
        return real_replace(src, dst, **kwargs)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    return events


def _graph(fmt="tensorflow"):
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="v")
        bump = tf.assign_add(v, tf.ones_like(v))
        saver = tf.train.Saver(format=fmt)
    return g, v, bump, saver


def _check_order(events, files):
    """Every file is fsynced before the directory fsync that precedes the state file's
    rename; the state file is fsynced before its rename and its directory after it."""
    state_rename = events.index(("rename", "checkpoint"))
    before = events[:state_rename]
    last_dirsync = max(i for i, e in enumerate(before) if e[0] == "dirsync")
    for name in files:
        synced = [i for i, e in enumerate(before) if e == ("fsync", name)
                  or (e[0] == "fsync" and e[1].startswith(f".{name}.tmp-"))
                  or (e[0] == "fsync" and e[1].startswith(f"{name}.tmp"))]
        assert synced and max(synced) < last_dirsync, (name, events)
    assert any(e[0] == "fsync" and ".checkpoint.tmp-" in e[1] for e in before), events
    assert events[state_rename + 1:] == [("dirsync", os.path.basename(events[-1][1]))]


_FILES = ["model.ckpt-{}.data-00000-of-00001", "model.ckpt-{}.index", "model.ckpt-{}.meta"]


def test_a_new_checkpoint_syncs_all_files_before_any_rename(tmp_path, monkeypatch):
    g, v, _, saver = _graph()
    with tf.Session(graph=g) as sess:
        sess.run(v.initializer)
        events = _trace(monkeypatch)
        path = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=1)
    # data, index, .meta and the state file's temporary (concurrently), then the
    # checkpoint's renames and one directory fsync, then the state file's rename + dirsync
    assert [k for k, _ in events] == ["fsync"] * 4 + ["rename"] * 3 + [
        "dirsync", "rename", "dirsync"], events
    assert sorted(n for k, n in events[4:7]) == sorted(f.format(1) for f in _FILES)
    _check_order(events, [f.format(1) for f in _FILES])
    assert tf.train.latest_checkpoint(str(tmp_path)) == path


def test_the_fsyncs_of_one_save_overlap(tmp_path, monkeypatch):
    g, v, _, saver = _graph()
    lock, state = threading.Lock(), {"now": 0, "most": 0}
    real = os.fsync

    def slow_fsync(fd):
        with lock:
            state["now"] += 1
            state["most"] = max(state["most"], state["now"])
        time.sleep(0.1)
        try:
            return real(fd)
        finally:
            with lock:
                state["now"] -= 1

    with tf.Session(graph=g) as sess:
        sess.run(v.initializer)
        saver.save(sess, str(tmp_path / "model.ckpt"), global_step=0)  # lazy imports
        monkeypatch.setattr(os, "fsync", slow_fsync)
        start = time.perf_counter()
        saver.save(sess, str(tmp_path / "model.ckpt"), global_step=1)
        elapsed = time.perf_counter() - start
    assert state["most"] >= 2, state
    # serial, 6 fsyncs would take 0.6 s: 4 overlapping file fsyncs + 2 directory ones 0.3
    assert elapsed < 0.5, elapsed


def test_files_this_process_made_durable_are_not_synced_again(tmp_path, monkeypatch):
    g, v, _, saver = _graph()
    prefix = str(tmp_path / "model.ckpt")
    with tf.Session(graph=g) as sess:
        sess.run(v.initializer)
        saver.save(sess, prefix, global_step=2)
        events = _trace(monkeypatch)
        saver.save(sess, prefix, global_step=2)  # same step, same values: files kept
    # The state file is the same too (TensorFlow's Saver writes no timestamps in it).
    assert events == [], events


def test_kept_files_of_unknown_durability_are_synced_first(tmp_path, monkeypatch):
    """Files found on disk but not made durable by this process (another process wrote
    them, or they changed since) are fsynced, then their directory, before the state."""
    g, v, _, saver = _graph()
    prefix = str(tmp_path / "model.ckpt")
    with tf.Session(graph=g) as sess:
        sess.run(v.initializer)
        path = saver.save(sess, prefix, global_step=2)
        monkeypatch.setattr(checkpoint_state, "_durable", {})  # as a new process sees it
        events = _trace(monkeypatch)
        saver.save(sess, prefix, global_step=2)
        assert [k for k, _ in events] == [
            "fsync", "fsync", "fsync", "fsync", "dirsync", "dirsync"], events
        # every file (the unchanged state file too) before the directories
        assert ("fsync", "checkpoint") in events and ("fsync", "model.ckpt-2.meta") in events
        data = path + ".data-00000-of-00001"
        st = os.stat(data)  # touched since it was made durable: synced again
        os.utime(data, ns=(st.st_atime_ns, st.st_mtime_ns + 1000))
        events.clear()
        saver.save(sess, prefix, global_step=2)
    assert ("fsync", "model.ckpt-2.data-00000-of-00001") in events
    assert ("fsync", "model.ckpt-2.meta") not in events


def test_flowgraph_format_files_are_synced_before_the_state(tmp_path, monkeypatch):
    g, v, _, saver = _graph("flowgraph")
    with tf.Session(graph=g) as sess:
        sess.run(v.initializer)
        events = _trace(monkeypatch)
        saver.save(sess, str(tmp_path / "model.ckpt"), global_step=1)
    assert [k for k, _ in events if k != "rename"] == [
        "fsync", "fsync", "fsync", "dirsync", "dirsync"], events
    _check_order(events, ["model.ckpt-1", "model.ckpt-1.meta"])


def test_a_failed_write_renames_nothing(tmp_path, monkeypatch):
    (tmp_path / "old").write_bytes(b"old")

    def failing_fsync(fd):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fsync", failing_fsync)
    with pytest.raises(OSError):
        checkpoint_state.write_durably([(str(tmp_path / "old"), b"new")],
                                       then=[(str(tmp_path / "state"), b"s")])
    assert sorted(os.listdir(tmp_path)) == ["old"]  # no temporary left, no rename
    assert (tmp_path / "old").read_bytes() == b"old"


def test_a_failed_write_syncs_no_directory(tmp_path, monkeypatch):
    events = _trace(monkeypatch)
    with pytest.raises(RuntimeError), checkpoint_state.deferred_directory_syncs():
        checkpoint_state.atomic_write(str(tmp_path / "a"), lambda f: f.write(b"1"))
        raise RuntimeError("interrupted")
    assert [k for k, _ in events] == ["fsync", "rename"]
    events.clear()
    with checkpoint_state.deferred_directory_syncs():  # one directory fsync for both
        checkpoint_state.atomic_write(str(tmp_path / "b"), lambda f: f.write(b"2"))
        checkpoint_state.atomic_write(str(tmp_path / "c"), lambda f: f.write(b"3"))
    assert [k for k, _ in events] == ["fsync", "rename", "fsync", "rename", "dirsync"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_saves_with_its_own_fsync_threads(tmp_path):
    """The fsync pool's threads do not survive a fork: a child that saves must not wait
    on them forever."""
    g, v, _, saver = _graph()
    with tf.Session(graph=g) as sess:
        sess.run(v.initializer)
        saver.save(sess, str(tmp_path / "m"), global_step=1)  # the parent's pool exists
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            try:
                saver.save(sess, str(tmp_path / "m"), global_step=2)
            finally:
                os._exit(0)
        deadline = time.time() + 30
        while time.time() < deadline:
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            time.sleep(0.02)
        else:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            pytest.fail("the forked child's save hung")
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("m-2")
