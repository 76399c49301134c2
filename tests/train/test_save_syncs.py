"""How many fsyncs a `Saver.save` costs, and in which order (flowgraph/train/saver.py,
checkpoint_state.py): each new file is fsynced before its rename, the checkpoint's files
share one directory fsync, and only then is the state file written (fsync, rename,
directory fsync). A regression in the count or the order fails here."""

from __future__ import annotations

import os
import stat

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


def _graph(fmt="flowgraph"):
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


def test_a_new_checkpoint_costs_five_syncs_in_a_safe_order(tmp_path, monkeypatch):
    g, v, _, saver = _graph()
    with tf.Session(graph=g) as sess:
        sess.run(v.initializer)
        events = _trace(monkeypatch)
        path = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=1)
    syncs = [e for e in events if e[0] != "rename"]
    # data, .meta, one directory fsync; the state file and its directory
    assert [k for k, _ in syncs] == ["fsync", "fsync", "dirsync", "fsync", "dirsync"], events
    _check_order(events, ["model.ckpt-1", "model.ckpt-1.meta"])
    assert tf.train.latest_checkpoint(str(tmp_path)) == path


def test_files_this_process_made_durable_are_not_synced_again(tmp_path, monkeypatch):
    g, v, _, saver = _graph()
    prefix = str(tmp_path / "model.ckpt")
    with tf.Session(graph=g) as sess:
        sess.run(v.initializer)
        saver.save(sess, prefix, global_step=2)
        events = _trace(monkeypatch)
        saver.save(sess, prefix, global_step=2)  # same step, same values: files kept
    assert [k for k, _ in events] == ["fsync", "rename", "dirsync"], events


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
        assert [k for k, _ in events if k != "rename"] == [
            "fsync", "fsync", "dirsync", "fsync", "dirsync"], events
        _check_order(events, ["model.ckpt-2", "model.ckpt-2.meta"])
        st = os.stat(path)  # touched since it was made durable: synced again
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1000))
        events.clear()
        saver.save(sess, prefix, global_step=2)
    assert ("fsync", "model.ckpt-2") in events
    assert ("fsync", "model.ckpt-2.meta") not in events


def test_tensorflow_format_files_are_synced_before_the_state(tmp_path, monkeypatch):
    g, v, _, saver = _graph("tensorflow")
    with tf.Session(graph=g) as sess:
        sess.run(v.initializer)
        events = _trace(monkeypatch)
        saver.save(sess, str(tmp_path / "model.ckpt"), global_step=1)
    assert [k for k, _ in events if k != "rename"] == [
        "fsync", "fsync", "fsync", "dirsync", "fsync", "dirsync"], events
    _check_order(events, ["model.ckpt-1.data-00000-of-00001", "model.ckpt-1.index",
                          "model.ckpt-1.meta"])


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
