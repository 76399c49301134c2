"""`CheckpointKeeper`: the recent checkpoints of a Saver and which are deleted
(flowgraph/train/saver_keep.py). The Saver's own tests (test_saver.py) check the files."""

from __future__ import annotations

import time

import pytest

from flowgraph.train.saver_keep import CheckpointKeeper


def _touch(prefix) -> None:
    for suffix in (".index", ".data-00000-of-00001", ".meta"):
        open(f"{prefix}{suffix}", "w").close()


def test_only_the_most_recent_are_kept_and_a_resave_moves_to_the_end(tmp_path):
    keeper = CheckpointKeeper(max_to_keep=2, keep_every_n_hours=10000.0)
    prefixes = [str(tmp_path / f"m-{i}") for i in range(3)]
    for p in prefixes:
        _touch(p)
    keeper.record(prefixes[0])
    keeper.record(prefixes[1])
    keeper.record(prefixes[0])  # saved again: now the most recent
    assert keeper.paths == [prefixes[1], prefixes[0]] and keeper.to_delete == []
    keeper.record(prefixes[2])
    assert keeper.paths == [prefixes[0], prefixes[2]]
    keeper.delete_old("meta")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        f"m-{i}{s}" for i in (0, 2) for s in (".index", ".data-00000-of-00001", ".meta"))


def test_max_to_keep_zero_tracks_nothing():
    keeper = CheckpointKeeper(max_to_keep=0, keep_every_n_hours=10000.0)
    keeper.record("m-1")
    assert keeper.paths == [] and keeper.to_delete == []


def test_one_per_n_hours_is_kept_for_good(tmp_path):
    keeper = CheckpointKeeper(max_to_keep=1, keep_every_n_hours=1e-9)
    old, new = str(tmp_path / "m-1"), str(tmp_path / "m-2")
    _touch(old)
    time.sleep(0.01)
    keeper.record(old)
    keeper.record(new)
    keeper.delete_old("meta")
    assert (tmp_path / "m-1.index").exists()  # past the n hours: preserved
    assert keeper.last_preserved_timestamp == pytest.approx(time.time(), abs=5)


def test_set_paths_checks_its_argument():
    keeper = CheckpointKeeper(max_to_keep=5, keep_every_n_hours=10000.0)
    keeper.set_paths_with_time([("a", 1.0), ("b", 2.0)])
    assert keeper.paths == ["a", "b"] and keeper.timestamps == [1.0, 2.0]
    keeper.set_paths(["c"])
    assert keeper.timestamps == []  # times unknown
    with pytest.raises(TypeError, match="must be a list"):
        keeper.set_paths("c")
