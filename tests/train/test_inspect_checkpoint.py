"""``flowgraph inspect_checkpoint`` in a subprocess: names, one tensor, all tensors."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from flowgraph.train.checkpoint_utils import write_checkpoint


def _inspect(*argv):
    return subprocess.run([sys.executable, "-m", "flowgraph", "inspect_checkpoint", *argv],
                          capture_output=True, text=True, timeout=120)


def _checkpoint(tmp_path):
    path = str(tmp_path / "model.ckpt-7")
    write_checkpoint(path, {"dense/kernel": np.arange(6, dtype=np.float32).reshape(2, 3),
                            "global_step": np.array(7, np.int64),
                            "vocab": np.array([b"a", b"bc"], dtype=object)})
    return path


def test_lists_names_dtypes_and_shapes(tmp_path):
    r = _inspect("--file_name", _checkpoint(tmp_path))
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["dense/kernel (DT_FLOAT) [2,3]", "global_step (DT_INT64) []",
                                     "vocab (DT_STRING) [2]", "", "# Total number of params: 9"]


def test_one_tensor_and_all_tensors(tmp_path):
    path = _checkpoint(tmp_path)
    r = _inspect("--file_name", path, "--tensor_name", "dense/kernel")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["tensor:", "dense/kernel", "(float32)", "[2,", "3]", "[[0.",
                                "1.", "2.]", "[3.", "4.", "5.]]", "#", "Total", "number", "of",
                                "params:", "9"]
    r = _inspect("--file_name", path, "--all_tensors")
    assert "tensor: global_step (int64) []\n7" in r.stdout and "[b'a' b'bc']" in r.stdout
    r = _inspect("--file_name", str(tmp_path), "--all_tensor_names")  # a directory: latest
    assert r.returncode == 1 and "checkpoint" in r.stderr  # no 'checkpoint' state file


def test_missing_tensor_and_corrupt_file_are_one_line(tmp_path):
    path = _checkpoint(tmp_path)
    r = _inspect("--file_name", path, "--tensor_name", "nope")
    assert r.returncode == 1 and "Key nope not found" in r.stderr
    with open(path, "r+b") as f:
        f.truncate(100)
    r = _inspect("--file_name", path)
    assert r.returncode == 1 and "DataLossError" in r.stderr
    assert "Traceback" not in r.stderr
