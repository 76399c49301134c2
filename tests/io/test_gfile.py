"""tf.io.gfile / tf.gfile on the local file system."""

import os

import pytest

import flowgraph as tf
from flowgraph.io import gfile


def test_write_read_readline_iterate(tmp_path):
    name = str(tmp_path / "a.txt")
    with gfile.GFile(name, "w") as f:
        f.write("one\n")
        f.write(b"two\nthree")
    assert gfile.exists(name) and not gfile.isdir(name)
    with gfile.GFile(name) as f:
        assert f.readline() == "one\n"
        assert f.read(3) == "two"
        assert f.read() == "\nthree"
        assert f.readline() == ""
    assert list(gfile.GFile(name, "r")) == ["one\n", "two\n", "three"]
    with gfile.Open(name, "rb") as f:
        assert f.read() == b"one\ntwo\nthree"
        assert f.size() == 13
    with gfile.GFile(name, "a") as f:
        f.write("!")
    assert gfile.GFile(name).read().endswith("three!")


def test_missing_files_raise_not_found(tmp_path):
    missing = str(tmp_path / "nope")
    assert not gfile.exists(missing)
    with pytest.raises(tf.errors.NotFoundError, match="nope"):
        gfile.GFile(missing).read()
    with pytest.raises(tf.errors.NotFoundError):
        gfile.remove(missing)
    with pytest.raises(tf.errors.NotFoundError):
        gfile.rmtree(missing)
    with pytest.raises(tf.errors.NotFoundError):
        gfile.stat(missing)
    with pytest.raises(tf.errors.NotFoundError):
        gfile.listdir(missing)


def test_directories_glob_listdir_walk(tmp_path):
    root = str(tmp_path / "r")
    gfile.makedirs(os.path.join(root, "x", "y"))
    gfile.makedirs(os.path.join(root, "x", "y"))  # no error when it exists
    gfile.mkdir(os.path.join(root, "z"))
    gfile.mkdir(os.path.join(root, "z"))  # TF 2.15: no error when it exists
    for n in ("b.csv", "a.csv", "c.txt"):
        with gfile.GFile(os.path.join(root, n), "w") as f:
            f.write(n)
    assert gfile.isdir(root)
    assert gfile.listdir(root) == ["a.csv", "b.csv", "c.txt", "x", "z"]
    assert [os.path.basename(p) for p in gfile.glob(os.path.join(root, "*.csv"))] == [
        "a.csv", "b.csv"]
    walked = {os.path.relpath(d, root): (sorted(s), sorted(f)) for d, s, f in gfile.walk(root)}
    assert walked["."] == (["x", "z"], ["a.csv", "b.csv", "c.txt"])
    assert walked[os.path.join("x", "y")] == ([], [])
    st = gfile.stat(os.path.join(root, "a.csv"))
    assert st.length == 5 and not st.is_directory and st.mtime_nsec > 0
    assert list(gfile.walk(os.path.join(root, "missing"))) == []
    gfile.rmtree(os.path.join(root, "x"))
    assert not gfile.exists(os.path.join(root, "x"))


def test_copy_rename_remove_overwrite(tmp_path):
    a, b, c = (str(tmp_path / n) for n in ("a", "b", "c"))
    with gfile.GFile(a, "wb") as f:
        f.write(b"data")
    gfile.copy(a, b)
    with pytest.raises(tf.errors.AlreadyExistsError):
        gfile.copy(a, b)
    gfile.copy(a, b, overwrite=True)
    gfile.rename(b, c)
    assert not gfile.exists(b) and gfile.GFile(c, "rb").read() == b"data"
    with gfile.GFile(b, "w") as f:
        f.write("other")
    with pytest.raises(tf.errors.AlreadyExistsError):
        gfile.rename(b, c)
    gfile.rename(b, c, overwrite=True)
    assert gfile.GFile(c).read() == "other"
    gfile.remove(c)
    assert not gfile.exists(c)


def test_tf1_capitalized_aliases_and_schemes(tmp_path):
    d = str(tmp_path / "m" / "n")
    gfile.MakeDirs(d)
    assert gfile.IsDirectory(d) and gfile.Exists("file://" + d)
    with gfile.Open(os.path.join(d, "f.txt"), "w") as f:
        f.write("x")
    assert gfile.ListDirectory(d) == ["f.txt"] and len(gfile.Glob(d + "/*")) == 1
    gfile.DeleteRecursively(str(tmp_path / "m"))
    assert not gfile.Exists(d)
    with pytest.raises(tf.errors.UnimplementedError, match="gs"):
        gfile.exists("gs://bucket/x")
    assert tf.io.gfile is gfile if hasattr(tf, "io") else True
