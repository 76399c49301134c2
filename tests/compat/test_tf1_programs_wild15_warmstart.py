"""TF1 programs that move weights between models, sweep 15 (area ``warmstart``), run under
TensorFlow 2.15 and flowgraph with the tf-oracle; TensorFlow's printed values are inline.

The programs (2016-2019 style): an Adam-trained regressor saved with a global step and
inspected with ``list_variables``, ``load_variable``, ``load_checkpoint`` /
``NewCheckpointReader`` (shape and dtype maps, ``has_tensor``, ``get_tensor``,
``debug_string``) and their missing-key / missing-file errors; ``init_from_checkpoint``
with every dict form (``'scope/'`` -> ``'scope/'``, single names, a Variable value, a
partitioned target, the ``'/'`` root, sub-scope into scope) and its errors (missing tensor,
shape mismatch, scope mapped to a name); ``tf.train.warm_start`` with ``VocabInfo``
remapping rows (an OOV bucket, a seeded backup initializer) and columns (``axis=1``),
``var_name_to_prev_var_name``, a regex over a partitioned variable, and a partitioned
remapped embedding whose last partition holds only OOV rows; a canned ``DNNClassifier``
warm-started through ``WarmStartSettings`` (regex and a vocabulary-file embedding) and from
a plain path; a partitioned ``LinearClassifier`` warm-started into more OOV buckets with a
truncated old vocabulary; ``PartitionedVariable`` (partitioners, ``as_tensor``,
save-slice specs, ``embedding_lookup`` ``mod``/``div``) saved and restored into 4, 1 and no
partitions; a V1 Saver, ``export_meta_graph``/``import_meta_graph`` (with an
``import_scope``), ``recover_last_checkpoints``, ``generate_checkpoint_state_proto``, a
padded deferred Saver, ``reshape=True`` restores and ``MonitoredTrainingSession``
checkpoints; a BERT-style assignment map built from ``list_variables`` inside an
Estimator ``model_fn``; Saver options (``max_to_keep``, ``sharded``, a var_list dict,
``save_relative_paths``, ``filename``, ``latest_filename``, checkpoint-state helpers,
``remove_checkpoint``, restoring a subset) and Saver errors; ``tf.train.Checkpoint`` in
graph mode (``save``, ``restore``, ``initialize_or_restore``, ``assert_consumed``,
``assert_existing_objects_matched``, ``restore(None)``).

Classes of discrepancy found and fixed (one focused test each below):

* ``VocabInfo.backup_initializer`` values: flowgraph drew the backup initializer once at
  the variable's full shape and picked the missing rows out of it, so a seeded
  initializer gave other values than TensorFlow, which draws it as its remapping
  initializer does: one call of shape ``[missing cells, 1]`` for the loaded block
  (row-major), then separate calls for the OOV rows and OOV columns (so with a seeded
  initializer the OOV bucket repeats the first new word's row), and a whole call for a
  partition holding only OOV rows.
* ``VocabInfo(axis=1)`` ignores ``old_vocab_size`` in TensorFlow (the column remapping
  reads the whole old vocabulary file); flowgraph truncated the old vocabulary.
* A remapped variable with fewer rows than ``new_vocab_size + num_oov_buckets`` is
  initialized from the first words of the new vocabulary in TensorFlow (only a longer one
  is an error); flowgraph raised ValueError.

Left as is (checked with the oracle): with a resource variable of another shape,
``Checkpoint.restore(...).run_restore_ops`` in TensorFlow silently assigns the
checkpoint's value (the variable keeps its static shape); flowgraph raises
InvalidArgumentError naming the variable and both shapes, as TensorFlow does for a ref
variable. Error messages of ``warm_start`` (missing tensor) and ``assert_consumed`` are
worded differently from TensorFlow's (same types, naming the same tensors).
``load_checkpoint`` returns a reader whose class is not named ``CheckpointReader``.
``init_from_checkpoint`` also accepts a PartitionedVariable object as a map value
(TensorFlow raises TypeError); ``warm_start`` remaps a 1-D or float64 variable with a
``VocabInfo`` (TensorFlow fails with IndexError / TypeError); ``Saver.export_meta_graph``
returns an object whose class is named ``MetaGraphDefProto``, not ``MetaGraphDef``.
"""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework import errors


@pytest.fixture(autouse=True)
def _quiet_estimators():
    # the estimators' INFO lines, without leaking a verbosity into later tests
    before = tf.logging.get_verbosity()
    tf.logging.set_verbosity(tf.logging.ERROR)
    yield
    tf.logging.set_verbosity(before)


def _r(x, n=4):
    return np.round(np.asarray(x, dtype=np.float64), n).tolist()


def _write_vocab(path, words):
    path.write_text("".join(w + "\n" for w in words))
    return str(path)


# -- checkpoint readers ----------------------------------------------------------------------

def test_adam_regressor_checkpoint_inspected_with_readers(tmp_path):
    d = str(tmp_path)
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        y = tf.placeholder(tf.float32, [None, 1], name="y")
        with tf.variable_scope("model"):
            w = tf.get_variable("w", [4, 3], initializer=tf.glorot_uniform_initializer())
            b = tf.get_variable("b", [3], initializer=tf.zeros_initializer())
            h = tf.nn.relu(tf.matmul(x, w) + b)
            w2 = tf.get_variable("w2", [3, 1])
            step = tf.train.get_or_create_global_step()
            tf.get_variable("cnt", [], dtype=tf.int64, initializer=tf.zeros_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(h, w2) - y))
        opt = tf.train.AdamOptimizer(0.01).minimize(loss, global_step=step)
        saver = tf.train.Saver()
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            rng = np.random.RandomState(0)
            X, Y = rng.randn(8, 4).astype(np.float32), rng.randn(8, 1).astype(np.float32)
            for _ in range(3):
                s.run(opt, {x: X, y: Y})
            p = saver.save(s, os.path.join(d, "model.ckpt"), global_step=step)
    assert os.path.basename(p) == "model.ckpt-3"
    assert sorted(os.listdir(d)) == ["checkpoint", "model.ckpt-3.data-00000-of-00001",
                                     "model.ckpt-3.index", "model.ckpt-3.meta"]
    shapes = [("beta1_power", []), ("beta2_power", []), ("model/b", [3]), ("model/b/Adam", [3]),
              ("model/b/Adam_1", [3]), ("model/cnt", []), ("model/global_step", []),
              ("model/w", [4, 3]), ("model/w/Adam", [4, 3]), ("model/w/Adam_1", [4, 3]),
              ("model/w2", [3, 1]), ("model/w2/Adam", [3, 1]), ("model/w2/Adam_1", [3, 1])]
    assert [tuple(e) for e in tf.train.list_variables(d)] == shapes
    assert _r(tf.train.load_variable(d, "model/w"), 5) == [
        [0.54906, -0.75034, 0.69532], [-0.58259, -0.83898, 0.11373],
        [-0.02303, 0.75667, 0.28402], [0.76278, -0.66923, 0.6241]]
    assert tf.train.load_variable(p, "model/global_step") == 3
    r = tf.train.load_checkpoint(d)
    assert sorted(r.get_variable_to_shape_map().items()) == shapes
    dtypes = r.get_variable_to_dtype_map()
    assert dtypes["model/cnt"] == tf.int64 and dtypes["model/global_step"] == tf.int64
    assert {k for k, v in dtypes.items() if v == tf.float32} == \
        {k for k, _ in shapes} - {"model/cnt", "model/global_step"}
    assert (r.has_tensor("model/b"), r.has_tensor("model/nope")) == (True, False)
    assert _r(r.get_tensor("model/b/Adam_1"), 6) == [0.059703, 0.008091, 0.055638]
    r2 = tf.train.NewCheckpointReader(p)
    cnt = r2.get_tensor("model/cnt")
    assert cnt == 0 and type(cnt) is np.int64
    ds = r2.debug_string()
    assert isinstance(ds, bytes)
    assert sorted(ds.decode().strip().split("\n"))[:4] == [
        "beta1_power (DT_FLOAT) []", "beta2_power (DT_FLOAT) []", "model/b (DT_FLOAT) [3]",
        "model/b/Adam (DT_FLOAT) [3]"]
    with pytest.raises(errors.NotFoundError, match="Key model/nope not found in checkpoint"):
        r2.get_tensor("model/nope")
    with pytest.raises(errors.NotFoundError, match="Key zzz not found in checkpoint"):
        tf.train.load_variable(d, "zzz")
    with pytest.raises(errors.NotFoundError, match="Failed to find any matching files for"):
        tf.train.load_checkpoint(os.path.join(d, "nothere"))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match="Couldn't find 'checkpoint' file or checkpoints"):
        tf.train.list_variables(str(empty))


# -- init_from_checkpoint --------------------------------------------------------------------

def _pretrained(tmp_path):
    ck = str(tmp_path / "pre.ckpt")
    with tf.Graph().as_default():
        with tf.variable_scope("encoder"):
            tf.get_variable("kernel", [3, 2],
                            initializer=tf.constant_initializer(np.arange(6).reshape(3, 2)))
            tf.get_variable("bias", [2], initializer=tf.constant_initializer([7., 8.]))
        with tf.variable_scope("head"):
            tf.get_variable("emb", [6, 2], initializer=tf.constant_initializer(
                np.arange(12).reshape(6, 2) * 0.5))
        tf.get_variable("c", [], initializer=tf.constant_initializer(3.5))
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            tf.train.Saver().save(s, ck)
    return ck


KERNEL = [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]


def test_init_from_checkpoint_every_assignment_map_form(tmp_path):
    ck = _pretrained(tmp_path)
    with tf.Graph().as_default():
        with tf.variable_scope("new_enc"):
            k = tf.get_variable("kernel", [3, 2], initializer=tf.zeros_initializer())
            b = tf.get_variable("bias", [2], initializer=tf.zeros_initializer())
        tf.train.init_from_checkpoint(ck, {"encoder/": "new_enc/"})
        assert (k.initializer.name, k.initializer.op.type) == ("Assign_1:0", "Assign")
        assert [i.name for i in k.initializer.op.inputs] == ["new_enc/kernel:0",
                                                             "checkpoint_initializer_1:0"]
        assert (k.initial_value.op.type, k.initial_value.name) == \
            ("RestoreV2", "checkpoint_initializer_1:0")
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            assert _r(s.run(k)) == KERNEL and _r(s.run(b)) == [7.0, 8.0]
    with tf.Graph().as_default():
        with tf.variable_scope("m"):
            k = tf.get_variable("k", [3, 2])
            e = tf.get_variable("emb", [6, 2], partitioner=tf.fixed_size_partitioner(3))
            cc = tf.get_variable("cc", [])
        tf.train.init_from_checkpoint(ck, {"encoder/kernel": "m/k", "head/emb": "m/emb",
                                           "c": cc})
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            assert _r(s.run(k)) == KERNEL and _r(s.run(cc)) == 3.5
            assert [_r(s.run(p)) for p in e] == [[[0.0, 0.5], [1.0, 1.5]],
                                                 [[2.0, 2.5], [3.0, 3.5]],
                                                 [[4.0, 4.5], [5.0, 5.5]]]
    with tf.Graph().as_default():
        with tf.variable_scope("outer"):
            with tf.variable_scope("encoder"):
                k = tf.get_variable("kernel", [3, 2])
            c2 = tf.get_variable("c", [])
        tf.train.init_from_checkpoint(ck, {"/": "outer/"})
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            assert _r(s.run(k)) == KERNEL and _r(s.run(c2)) == 3.5


@pytest.mark.parametrize("amap,shape,message", [
    ({"encoder/nope": "x/k"}, [3, 2], "Tensor encoder/nope is not found in .*pre.ckpt checkpoint"),
    ({"encoder/kernel": "x/k"}, [2, 2], r"Shape of variable x/k:0 \(\(2, 2\)\) doesn't match "
     r"with shape of tensor encoder/kernel \(\[3, 2\]\) from checkpoint reader."),
    ({"encoder/kernel": "y/k"}, [3, 2], "Assignment map with scope only name y should map to "
     "scope only encoder/kernel. Should be 'scope/': 'other_scope/'."),
    ({"encoder/": "x/k"}, [3, 2], "Tensor encoder/ is not found in"),
])
def test_init_from_checkpoint_errors_match_tensorflow(tmp_path, amap, shape, message):
    ck = _pretrained(tmp_path)
    with tf.Graph().as_default():
        with tf.variable_scope("x"):
            tf.get_variable("k", shape)
        with pytest.raises(ValueError, match=message):
            tf.train.init_from_checkpoint(ck, amap)


def test_init_from_checkpoint_partitioned_source_resource_target_and_root(tmp_path):
    ck = str(tmp_path / "m.ckpt")
    with tf.Graph().as_default():
        with tf.variable_scope("tower"):
            e = tf.get_variable("emb", [7, 2], partitioner=tf.fixed_size_partitioner(3),
                                initializer=tf.random_uniform_initializer(0, 1, seed=5))
            r = tf.get_variable("r", [2], use_resource=True,
                                initializer=tf.constant_initializer([3., 4.]))
        sv = tf.train.Saver({"embedding": e, "res": r})
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            full = s.run(e.as_tensor())
            sv.save(s, ck)
        with pytest.raises(ValueError, match="At least two variables have the same name: "
                                             "tower/r"):
            tf.train.Saver([r, r])
        with pytest.raises(ValueError, match="The same saveable will be restored with two "
                                             "names: b"):
            tf.train.Saver({"a": r, "b": r})
        with pytest.raises(TypeError):
            tf.train.Saver([tf.constant(1.)])
    # TF 2.15: each part draws the same seeded stream
    assert _r(full) == [[0.3883, 0.6637], [0.1919, 0.7061], [0.9632, 0.3263], [0.3883, 0.6637],
                        [0.1919, 0.7061], [0.3883, 0.6637], [0.1919, 0.7061]]
    assert [tuple(x) for x in tf.train.list_variables(ck)] == [("embedding", [7, 2]),
                                                               ("res", [2])]
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="No variables to save"):
            tf.train.Saver()
        assert tf.train.Saver(allow_empty=True).saver_def is None
        a = tf.get_variable("a", [7, 2])
        b = tf.get_variable("b", [7, 2], partitioner=tf.fixed_size_partitioner(2))
        rr = tf.get_variable("rr", [2], use_resource=True)
        tf.train.init_from_checkpoint(ck, {"embedding": "a", "res": rr})
        tf.train.init_from_checkpoint(ck, {"embedding": "b"})
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            np.testing.assert_allclose(s.run(a), full)
            np.testing.assert_allclose(s.run(b.as_tensor()), full)
            assert _r(s.run(rr)) == [3.0, 4.0]
    ck2 = str(tmp_path / "n.ckpt")
    with tf.Graph().as_default():
        with tf.variable_scope("net"):
            tf.get_variable("k", [2], initializer=tf.constant_initializer([1., 2.]))
            with tf.variable_scope("sub"):
                tf.get_variable("k", [2], initializer=tf.constant_initializer([3., 4.]))
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            tf.train.Saver().save(s, ck2)
    with tf.Graph().as_default():
        with tf.variable_scope("net"):
            tf.get_variable("k", [2])
        tf.get_variable("extra", [1], initializer=tf.zeros_initializer())
        with pytest.raises(ValueError, match=r"Tensor extra \(xtra in /\) is not found in "):
            tf.train.init_from_checkpoint(ck2, {"/": "/"})
    with tf.Graph().as_default():
        with tf.variable_scope("x"):
            k2 = tf.get_variable("k", [2])
        tf.train.init_from_checkpoint(ck2, {"net/sub/": "x/"})
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            assert _r(s.run(k2)) == [3.0, 4.0]
    with tf.Graph().as_default():
        k = tf.get_variable("k", [2])
        tf.train.init_from_checkpoint(ck2, {"net/": "/"})
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            assert _r(s.run(k)) == [1.0, 2.0]


# -- warm_start with VocabInfo ---------------------------------------------------------------

def _vocab_checkpoint(tmp_path):
    old = _write_vocab(tmp_path / "old.txt", ["apple", "banana", "cherry", "date"])
    new = _write_vocab(tmp_path / "new.txt", ["banana", "fig", "apple", "grape", "date"])
    ck = str(tmp_path / "m.ckpt")
    with tf.Graph().as_default():
        with tf.variable_scope("lin"):
            tf.get_variable("emb", [4, 3], initializer=tf.constant_initializer(
                np.arange(12).reshape(4, 3).astype(np.float32)))
            tf.get_variable("w", [3, 1], initializer=tf.constant_initializer([1., 2., 3.]))
            tf.get_variable("b", [1], initializer=tf.constant_initializer(9.))
            tf.get_variable("out", [2, 4], initializer=tf.constant_initializer(
                np.arange(8).reshape(2, 4) + 100.))
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            tf.train.Saver().save(s, ck)
    return ck, old, new


def test_vocab_backup_initializer_is_drawn_as_tensorflow_draws_it(tmp_path):
    ck, old, new = _vocab_checkpoint(tmp_path)
    vi = tf.estimator.VocabInfo(new_vocab=new, new_vocab_size=5, num_oov_buckets=1,
                                old_vocab=old,
                                backup_initializer=tf.random_uniform_initializer(-1., 1., seed=3))
    assert (vi.new_vocab_size, vi.num_oov_buckets, vi.old_vocab_size, vi.axis) == (5, 1, -1, 0)
    with tf.Graph().as_default():
        emb = tf.get_variable("embedding", [6, 3], initializer=tf.zeros_initializer())
        keep = tf.get_variable("keep", [2], initializer=tf.ones_initializer())
        tf.train.warm_start(ck, vars_to_warm_start=["embedding"],
                            var_name_to_vocab_info={"embedding": vi},
                            var_name_to_prev_var_name={"embedding": "lin/emb"})
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            # TF 2.15: fig and grape take one [6, 1] draw; the OOV row a [1, 3] draw
            assert _r(s.run(emb)) == [[3.0, 4.0, 5.0], [-0.2261, -0.2799, 0.9538],
                                      [0.0, 1.0, 2.0], [-0.827, 0.0076, -0.283],
                                      [9.0, 10.0, 11.0], [-0.2261, -0.2799, 0.9538]]
            assert _r(s.run(keep)) == [1.0, 1.0]


def test_column_vocab_remapping_reads_the_whole_old_vocabulary(tmp_path):
    ck, old, new = _vocab_checkpoint(tmp_path)
    vi = tf.estimator.VocabInfo(new_vocab=new, new_vocab_size=5, num_oov_buckets=0,
                                old_vocab=old, old_vocab_size=3,
                                backup_initializer=tf.zeros_initializer(), axis=1)
    assert (vi.old_vocab_size, vi.axis) == (3, 1)
    with tf.Graph().as_default():
        with tf.variable_scope("net"):
            out = tf.get_variable("out", [2, 5], initializer=tf.ones_initializer())
            w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
            b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
        tf.train.warm_start(ck, vars_to_warm_start=["net/out", "net/w"],
                            var_name_to_vocab_info={"net/out": vi},
                            var_name_to_prev_var_name={"net/out": "lin/out", "net/w": "lin/w"})
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            # TF 2.15: "date" (old column 3) is found although old_vocab_size is 3
            assert _r(s.run(out)) == [[101.0, 0.0, 100.0, 0.0, 103.0],
                                      [105.0, 0.0, 104.0, 0.0, 107.0]]
            assert _r(s.run(w)) == [[1.0], [2.0], [3.0]] and _r(s.run(b)) == [0.0]


def test_a_variable_shorter_than_the_new_vocabulary_takes_its_first_words(tmp_path):
    old = _write_vocab(tmp_path / "o.txt", list("abc"))
    new = _write_vocab(tmp_path / "n.txt", ["c", "a", "z", "b", "extra"])
    ck = str(tmp_path / "m.ckpt")
    with tf.Graph().as_default():
        tf.get_variable("e", [3, 2], use_resource=True,
                        initializer=tf.constant_initializer([[1, 2], [3, 4], [5, 6]]))
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            tf.train.Saver().save(s, ck)
    with tf.Graph().as_default():
        short = tf.get_variable("short", [3, 2])
        full = tf.get_variable("full", [4, 2], use_resource=True)
        tf.train.warm_start(ck, vars_to_warm_start=["short", "full"],
                            var_name_to_vocab_info={
                                "short": tf.estimator.VocabInfo(new, 4, 0, old),
                                "full": tf.estimator.VocabInfo(new, 4, 0, old)},
                            var_name_to_prev_var_name={"short": "e", "full": "e"})
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            # TF 2.15: the 3-row variable takes c, a, z of the 4-word vocabulary
            assert _r(s.run(short)) == [[5.0, 6.0], [1.0, 2.0], [0.0, 0.0]]
            assert _r(s.run(full)) == [[5.0, 6.0], [1.0, 2.0], [0.0, 0.0], [3.0, 4.0]]
    with tf.Graph().as_default():
        tf.get_variable("long", [6, 2])
        with pytest.raises(ValueError, match=r"'long'.*shape \[6, 2\], expected at most 5"):
            tf.train.warm_start(ck, vars_to_warm_start=["long"],
                                var_name_to_vocab_info={
                                    "long": tf.estimator.VocabInfo(new, 4, 1, old)},
                                var_name_to_prev_var_name={"long": "e"})


def test_column_remapping_of_a_partitioned_kernel_with_oov_columns(tmp_path):
    old = _write_vocab(tmp_path / "o.txt", list("abc"))
    new = _write_vocab(tmp_path / "n.txt", list("cza"))
    ck = str(tmp_path / "m.ckpt")
    with tf.Graph().as_default():
        tf.get_variable("k", [3, 3], initializer=tf.constant_initializer(
            np.arange(9).reshape(3, 3)))
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            tf.train.Saver().save(s, ck)
    with tf.Graph().as_default():
        k = tf.get_variable("k", [3, 5], partitioner=tf.fixed_size_partitioner(2))
        tf.train.warm_start(ck, var_name_to_vocab_info={"k": tf.estimator.VocabInfo(
            new, 3, 2, old, axis=1, backup_initializer=tf.random_uniform_initializer(seed=4))})
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            # TF 2.15: per part, a [missing, 1] draw for column z, then [rows, 2] OOV columns
            assert [_r(s.run(p)) for p in k] == [
                [[2.0, 0.9566, 0.0, 0.9566, 0.2668], [5.0, 0.2668, 3.0, 0.9978, 0.8459]],
                [[8.0, 0.9566, 6.0, 0.9566, 0.2668]]]


def test_warm_start_regex_over_a_partitioned_variable_and_errors(tmp_path):
    ck, old, new = _vocab_checkpoint(tmp_path)
    with tf.Graph().as_default():
        with tf.variable_scope("lin"):
            emb = tf.get_variable("emb", [4, 3], partitioner=tf.fixed_size_partitioner(2),
                                  initializer=tf.zeros_initializer())
            w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
            b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
        tf.train.warm_start(ck, vars_to_warm_start="lin/[ew].*")
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            assert [_r(p) for p in s.run(list(emb))] == [
                [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], [[6.0, 7.0, 8.0], [9.0, 10.0, 11.0]]]
            assert _r(s.run(w)) == [[1.0], [2.0], [3.0]] and _r(s.run(b)) == [0.0]
    with tf.Graph().as_default():
        with tf.variable_scope("lin"):
            tf.get_variable("w", [3, 1])
            tf.get_variable("zz", [3, 1])
        for kw in [dict(vars_to_warm_start=["lin/zz"]), dict(vars_to_warm_start=[".*"])]:
            with pytest.raises(ValueError, match="lin/zz"):
                tf.train.warm_start(ck, **kw)
        with pytest.raises(ValueError, match=r"You provided the following variables in "
                           r"var_name_to_prev_var_name that were not used: \{'lin/q'\}"):
            tf.train.warm_start(ck, vars_to_warm_start=["lin/w"],
                                var_name_to_prev_var_name={"lin/q": "x"})
        with pytest.raises(ValueError, match="vars_to_warm_start"):
            tf.train.warm_start(ck, vars_to_warm_start=5)
    with pytest.raises(ValueError, match=re.escape(
            "The only supported values for the axis argument are 0 and 1.  Provided axis: 2")):
        tf.estimator.VocabInfo(new_vocab=new, new_vocab_size=5, num_oov_buckets=0,
                               old_vocab=old, axis=2)


def test_partitioned_remapped_embedding_with_an_oov_only_partition(tmp_path):
    old = _write_vocab(tmp_path / "old.txt", list("abcde"))
    new = _write_vocab(tmp_path / "new.txt", list("exbyaz"))
    ck = str(tmp_path / "m.ckpt")
    with tf.Graph().as_default():
        emb = tf.get_variable("emb", [5, 2], initializer=tf.ones_initializer(),
                              partitioner=tf.fixed_size_partitioner(2))
        parts = emb._get_variable_list()
        s0 = tf.assign(parts[0], np.arange(6).reshape(3, 2).astype(np.float32))
        s1 = tf.assign(parts[1], np.arange(6, 10).reshape(2, 2).astype(np.float32))
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            s.run([s0, s1])
            tf.train.Saver().save(s, ck)
    expected = {
        (3, 2): [[[8.0, 9.0], [0.0945, -0.0967], [2.0, 3.0]],
                 [[-0.0438, -0.1753], [0.0, 1.0], [-0.1114, -0.1478]],
                 [[0.0097, -0.076], [-0.0978, 0.1316]]],
        (4, 3): [[[8.0, 9.0], [-0.0438, -0.1753], [2.0, 3.0]],
                 [[0.0007, 0.0534], [0.0, 1.0]],
                 [[0.0097, -0.076], [-0.0415, -0.1526]],
                 [[-0.1422, -0.0789], [0.0769, -0.1332]]],
    }
    for (nparts, oov), want in expected.items():
        with tf.Graph().as_default():
            tf.set_random_seed(7)
            e2 = tf.get_variable("emb2", [6 + oov, 2],
                                 partitioner=tf.fixed_size_partitioner(nparts))
            vi = tf.estimator.VocabInfo(
                new, 6, oov, old, backup_initializer=tf.truncated_normal_initializer(stddev=0.1))
            tf.train.warm_start(ck, vars_to_warm_start=".*", var_name_to_vocab_info={"emb2": vi},
                                var_name_to_prev_var_name={"emb2": "emb"})
            with tf.Session() as s:
                s.run(tf.global_variables_initializer())
                assert [_r(s.run(p)) for p in e2] == want


# -- canned estimators -----------------------------------------------------------------------

def test_dnn_classifier_warm_started_with_settings_and_from_a_path(tmp_path):
    v1 = _write_vocab(tmp_path / "v1.txt", ["red", "green", "blue"])
    v2 = _write_vocab(tmp_path / "v2.txt", ["blue", "red", "black", "white"])
    rng = np.random.RandomState(0)
    X = rng.randn(32).astype(np.float32)
    C1 = np.array(["red", "green", "blue", "red"] * 8)
    C2 = np.array(["blue", "black", "red", "white"] * 8)
    Y = (X > 0).astype(np.int32)

    def input_fn(colors):
        return lambda: tf.data.Dataset.from_tensor_slices(
            ({"x": X, "color": colors}, Y)).batch(8).repeat()

    def cols(vocab):
        c = tf.feature_column.categorical_column_with_vocabulary_file("color", vocab)
        return [tf.feature_column.numeric_column("x"),
                tf.feature_column.embedding_column(c, 3, initializer=tf.zeros_initializer())]

    cfg = tf.estimator.RunConfig(tf_random_seed=42)
    e1 = tf.estimator.DNNClassifier([4], cols(v1), model_dir=str(tmp_path / "m1"), config=cfg)
    e1.train(input_fn(C1), steps=5)
    emb = "dnn/input_from_feature_columns/input_layer/color_embedding/embedding_weights"
    assert [n for n in e1.get_variable_names() if "Adagrad" not in n] == [
        "dnn/hiddenlayer_0/bias", "dnn/hiddenlayer_0/kernel", emb, "dnn/logits/bias",
        "dnn/logits/kernel", "global_step"]
    assert _r(e1.get_variable_value(emb)) == [[-0.0613, 0.053, -0.0902],
                                              [-0.0626, 0.08, -0.0642],
                                              [-0.0423, -0.043, -0.0176]]
    ws = tf.estimator.WarmStartSettings(
        ckpt_to_initialize_from=str(tmp_path / "m1"),
        vars_to_warm_start=".*(hiddenlayer|input_from_feature_columns).*",
        var_name_to_vocab_info={emb: tf.estimator.VocabInfo(
            new_vocab=v2, new_vocab_size=4, num_oov_buckets=0, old_vocab=v1,
            backup_initializer=tf.ones_initializer())})
    assert sorted(ws.var_name_to_prev_var_name) == []
    e2 = tf.estimator.DNNClassifier([4], cols(v2), model_dir=str(tmp_path / "m2"), config=cfg,
                                    warm_start_from=ws)
    e2.train(input_fn(C2), steps=1)
    assert _r(e2.get_variable_value(emb)) == [[-0.0423, -0.043, -0.0176],
                                              [-0.0613, 0.053, -0.0902],
                                              [0.9701, 0.9803, 0.9655], [0.9701, 0.9787, 0.9696]]
    assert _r(e2.get_variable_value("dnn/hiddenlayer_0/kernel"))[0] == [0.5344, 0.7269,
                                                                       0.0051, 0.0368]
    assert _r(e2.get_variable_value("dnn/logits/kernel")).__len__() == 4
    assert np.ravel(_r(e2.get_variable_value("dnn/logits/kernel"))).tolist() == [
        -0.7174, 0.3066, 0.6964, -0.3502]
    e3 = tf.estimator.DNNClassifier([4], cols(v1), model_dir=str(tmp_path / "m3"), config=cfg,
                                    warm_start_from=str(tmp_path / "m1"))
    e3.train(input_fn(C1), steps=1)
    assert _r(e3.get_variable_value("dnn/logits/bias")) == [0.1814]
    assert e3.get_variable_value("global_step") == 1
    ws2 = tf.estimator.WarmStartSettings(str(tmp_path / "m1"))
    assert (ws2.vars_to_warm_start, ws2.var_name_to_vocab_info,
            ws2.var_name_to_prev_var_name) == (".*", {}, {})


def test_partitioned_linear_classifier_warm_started_into_more_oov_buckets(tmp_path):
    v1 = _write_vocab(tmp_path / "v1.txt", list("abcd"))
    v2 = _write_vocab(tmp_path / "v2.txt", list("dqbar"))
    Y = np.array([0, 1, 2, 1] * 4, dtype=np.int32)

    def input_fn(c):
        return lambda: tf.data.Dataset.from_tensor_slices(({"w": c}, Y)).batch(4).repeat()

    def cols(v, oov):
        return [tf.feature_column.categorical_column_with_vocabulary_file(
            "w", v, num_oov_buckets=oov)]

    cfg = tf.estimator.RunConfig(tf_random_seed=1)
    e1 = tf.estimator.LinearClassifier(cols(v1, 1), n_classes=3, model_dir=str(tmp_path / "a"),
                                       config=cfg, partitioner=tf.fixed_size_partitioner(3))
    e1.train(input_fn(np.array(list("abcd") * 4)), steps=4)
    weights = "linear/linear_model/w/weights"
    assert [n for n in e1.get_variable_names() if "Ftrl" not in n] == [
        "global_step", "linear/linear_model/bias_weights", weights]
    assert _r(e1.get_variable_value(weights)) == [
        [0.5025, -0.4628, -0.3946], [-0.3796, 0.4504, -0.3796], [-0.3946, -0.4628, 0.5025],
        [-0.3796, 0.4504, -0.3796], [0.0, 0.0, 0.0]]
    ws = tf.estimator.WarmStartSettings(
        str(tmp_path / "a"), vars_to_warm_start=".*linear_model.*",
        var_name_to_vocab_info={weights: tf.estimator.VocabInfo(
            v2, 5, 2, v1, old_vocab_size=3,
            backup_initializer=tf.random_normal_initializer(seed=2))})
    e2 = tf.estimator.LinearClassifier(cols(v2, 2), n_classes=3, model_dir=str(tmp_path / "b"),
                                       config=cfg, partitioner=tf.fixed_size_partitioner(3),
                                       warm_start_from=ws)
    e2.train(input_fn(np.array(list("dqbr") * 4)), steps=1)
    assert _r(e2.get_variable_value(weights)) == [
        [-0.5279, 0.229, 0.3537], [0.8848, 0.3827, 0.1725], [-0.138, 0.0763, -0.0578],
        [0.5025, -0.4628, -0.3946], [-0.0387, 0.5499, 0.3537], [-1.0468, 0.8397, 1.2358],
        [2.0638, 0.3037, 1.2963]]
    assert _r(e2.get_variable_value("linear/linear_model/bias_weights")) == [0.0661, 0.1069,
                                                                            -0.2123]


# -- partitioned variables -------------------------------------------------------------------

def test_partitioned_embedding_trained_saved_and_restored_into_other_partitionings(tmp_path):
    ck = str(tmp_path / "p.ckpt")
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        with tf.variable_scope("emb", partitioner=tf.fixed_size_partitioner(3)):
            E = tf.get_variable("table", [10, 3], initializer=tf.random_normal_initializer(seed=1))
        assert (type(E).__name__, E.name) == ("PartitionedVariable", "emb/table")
        assert (E.get_shape().as_list(), E.dtype, len(E)) == ([10, 3], tf.float32, 3)
        assert [v.name for v in E] == ["emb/table/part_0:0", "emb/table/part_1:0",
                                       "emb/table/part_2:0"]
        assert [v.shape.as_list() for v in E] == [[4, 3], [3, 3], [3, 3]]
        assert list(E._get_partitions()) == [3, 1]
        assert [v._save_slice_info.spec for v in E] == ["10 3 0,4:0,3", "10 3 4,3:0,3",
                                                       "10 3 7,3:0,3"]
        assert list(E._get_variable_list()[1]._save_slice_info.var_offset) == [4, 0]
        t = E.as_tensor()
        assert (t.name, t.shape.as_list(), t.op.type) == ("emb/table:0", [10, 3], "Identity")
        assert tf.convert_to_tensor(E).name == "emb/table_1:0"
        ids = tf.placeholder(tf.int64, [None])
        lm = tf.nn.embedding_lookup(E, ids, partition_strategy="mod", name="lk_mod")
        ld = tf.nn.embedding_lookup(E, ids, partition_strategy="div", name="lk_div")
        assert (lm.name, lm.shape.as_list(), ld.name) == ("lk_mod/Reshape_1:0", [None, 3],
                                                          "lk_div/Reshape_1:0")
        w = tf.get_variable("w", [3, 1],
                            partitioner=tf.variable_axis_size_partitioner(max_shard_bytes=4))
        assert [v.name for v in w] == ["w/part_0:0", "w/part_1:0", "w/part_2:0"]
        with tf.variable_scope("mm", partitioner=tf.min_max_variable_partitioner(
                max_partitions=4, min_slice_size=8)):
            m = tf.get_variable("m", [20, 4])
            m2 = tf.get_variable("m2", [3, 2])
        assert len(list(m)) == 4 and len(list(m2)) == 3
        loss = tf.reduce_sum(tf.square(lm)) + tf.reduce_sum(tf.square(ld))
        opt = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        saver = tf.train.Saver()
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            q = np.array([0, 4, 9, 5])
            assert _r(s.run(lm, {ids: q})) == [[-0.0235, -0.708, 0.7907], [0.561, -1.4705, -1.61],
                                               [1.0707, 0.4071, 1.7242], [0.561, -1.4705, -1.61]]
            assert _r(s.run(ld, {ids: q})) == [[-0.0235, -0.708, 0.7907],
                                               [-0.0235, -0.708, 0.7907],
                                               [1.1, -1.0208, -0.68], [0.561, -1.4705, -1.61]]
            s.run(opt, {ids: q})
            full = s.run(t)
            saver.save(s, ck)
    assert _r(full)[:2] == [[-0.0141, -0.4248, 0.4744], [0.561, -1.4705, -1.61]]
    assert _r(full)[7:] == [[-0.0235, -0.708, 0.7907], [0.4488, -1.1764, -1.288],
                            [0.88, -0.8167, -0.544]]
    assert sorted(tf.train.NewCheckpointReader(ck).get_variable_to_shape_map().items()) == [
        ("emb/table", [10, 3]), ("mm/m", [20, 4]), ("mm/m2", [3, 2]), ("w", [3, 1])]
    for parts in [4, 1, None]:
        with tf.Graph().as_default():
            pt = tf.fixed_size_partitioner(parts) if parts else None
            with tf.variable_scope("emb", partitioner=pt):
                E2 = tf.get_variable("table", [10, 3], initializer=tf.zeros_initializer())
            sv = tf.train.Saver([E2] if parts else {"emb/table": E2})
            with tf.Session() as s:
                sv.restore(s, ck)
                np.testing.assert_allclose(s.run(E2.as_tensor() if parts else E2), full)


# -- Saver options and checkpoint state ------------------------------------------------------

def test_saver_options_files_and_checkpoint_state_helpers(tmp_path):
    d = str(tmp_path)
    for sub in ["m1", "m2", "m3"]:
        os.makedirs(os.path.join(d, sub))

    def state(p):
        with open(os.path.join(p, "checkpoint")) as f:
            return [line.replace(d, "D") for line in f.read().strip().split("\n")]

    with tf.Graph().as_default():
        with tf.device("/cpu:0"):  # two devices: two shards
            a = tf.get_variable("a", [2], initializer=tf.ones_initializer())
        b = tf.get_variable("b", [], initializer=tf.constant_initializer(5.))
        step = tf.train.get_or_create_global_step()
        inc, upd = tf.assign_add(a, [1., 2.]), tf.assign_add(step, 1)
        s1 = tf.train.Saver(max_to_keep=2)
        sd = s1.saver_def
        assert (sd.filename_tensor_name, sd.save_tensor_name, sd.restore_op_name, sd.max_to_keep,
                sd.sharded, sd.version, sd.keep_checkpoint_every_n_hours) == (
            "save/Const:0", "save/control_dependency:0", "save/restore_all", 2, False, 2, 10000.0)
        s2 = tf.train.Saver({"alpha": a, "beta": b}, sharded=True, name="sh")
        sd = s2.saver_def
        assert (sd.filename_tensor_name, sd.save_tensor_name, sd.restore_op_name, sd.sharded) == (
            "sh/Const:0", "sh/Identity:0", "sh/restore_all", True)
        s3 = tf.train.Saver([b], save_relative_paths=True, filename="custom")
        assert (s3.saver_def.filename_tensor_name, s3.saver_def.max_to_keep) == (
            "save_1/Const:0", 5)
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            paths = []
            for _ in range(4):
                s.run([inc, upd])
                paths.append(s1.save(s, os.path.join(d, "m1", "model"), global_step=step))
            assert [os.path.basename(p) for p in paths] == ["model-1", "model-2", "model-3",
                                                            "model-4"]
            assert sorted(os.listdir(os.path.join(d, "m1"))) == [
                "checkpoint", "model-3.data-00000-of-00001", "model-3.index", "model-3.meta",
                "model-4.data-00000-of-00001", "model-4.index", "model-4.meta"]
            assert state(os.path.join(d, "m1")) == [
                'model_checkpoint_path: "D/m1/model-4"',
                'all_model_checkpoint_paths: "D/m1/model-3"',
                'all_model_checkpoint_paths: "D/m1/model-4"']
            assert [os.path.basename(p) for p in s1.last_checkpoints] == ["model-3", "model-4"]
            st = tf.train.get_checkpoint_state(os.path.join(d, "m1"))
            assert type(st).__name__ == "CheckpointState"
            assert [os.path.basename(p) for p in st.all_model_checkpoint_paths] == ["model-3",
                                                                                    "model-4"]
            assert tf.train.latest_checkpoint(os.path.join(d, "m1")) == paths[-1]
            assert (tf.train.checkpoint_exists(paths[-1]), tf.train.checkpoint_exists(paths[0])) \
                == (True, False)
            mt = tf.train.get_checkpoint_mtimes(paths)
            assert len(mt) == 2 and all(isinstance(x, float) for x in mt)
            p2 = s2.save(s, os.path.join(d, "m2", "sh.ckpt"), global_step=7)
            assert sorted(os.listdir(os.path.join(d, "m2"))) == [
                "checkpoint", "sh.ckpt-7.data-00000-of-00002", "sh.ckpt-7.data-00001-of-00002",
                "sh.ckpt-7.index", "sh.ckpt-7.meta"]
            assert [tuple(x) for x in tf.train.list_variables(p2)] == [("alpha", [2]),
                                                                       ("beta", [])]
            s3.save(s, os.path.join(d, "m3", "rel"), write_meta_graph=False)
            assert sorted(os.listdir(os.path.join(d, "m3"))) == [
                "checkpoint", "rel.data-00000-of-00001", "rel.index"]
            assert state(os.path.join(d, "m3")) == ['model_checkpoint_path: "rel"',
                                                    'all_model_checkpoint_paths: "rel"']
            s3.save(s, os.path.join(d, "m3", "rel2"), latest_filename="other")
            assert "other" in os.listdir(os.path.join(d, "m3"))
            assert os.path.basename(tf.train.latest_checkpoint(os.path.join(d, "m3"), "other")) \
                == "rel2"
            tf.train.update_checkpoint_state(os.path.join(d, "m1"), paths[-2],
                                             all_model_checkpoint_paths=paths[-2:])
            assert state(os.path.join(d, "m1")) == [
                'model_checkpoint_path: "D/m1/model-3"',
                'all_model_checkpoint_paths: "D/m1/model-3"',
                'all_model_checkpoint_paths: "D/m1/model-4"',
                'all_model_checkpoint_paths: "D/m1/model-3"']
            tf.train.update_checkpoint_state(os.path.join(d, "m1"), "rel-x")
            assert state(os.path.join(d, "m1")) == ['model_checkpoint_path: "rel-x"',
                                                    'all_model_checkpoint_paths: "rel-x"']
            tf.train.remove_checkpoint(paths[-1])
            assert sorted(os.listdir(os.path.join(d, "m1"))) == [
                "checkpoint", "model-3.data-00000-of-00001", "model-3.index", "model-3.meta"]
            s.run(tf.assign(a, [0., 0.]))
            s.run(tf.assign(b, 0.))
            tf.train.Saver([a]).restore(s, paths[-2])
            assert _r(s.run(a)) == [4.0, 7.0] and _r(s.run(b)) == 0.0
            s2.restore(s, p2)
            assert _r(s.run(a)) == [5.0, 9.0] and _r(s.run(b)) == 5.0
            with pytest.raises(ValueError, match=r"The passed save_path is not a valid "
                                                 r"checkpoint: .*nope/x"):
                s1.restore(s, os.path.join(d, "nope", "x"))
            with pytest.raises(ValueError, match=r"Can't load save_path when it is None\."):
                s1.restore(s, None)
    assert tf.train.latest_checkpoint(os.path.join(d, "nowhere")) is None
    assert tf.train.get_checkpoint_state(os.path.join(d, "nowhere")) is None


def test_saver_restore_of_a_missing_key_or_another_shape(tmp_path):
    ck = str(tmp_path / "s.ckpt")
    with tf.Graph().as_default():
        tf.get_variable("a", [2, 3], initializer=tf.ones_initializer())
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            tf.train.Saver().save(s, ck)
    with tf.Graph().as_default():
        a = tf.get_variable("a", [3, 2])
        b = tf.get_variable("b", [1])
        with tf.Session() as s:
            with pytest.raises(errors.NotFoundError, match=r"Restoring from checkpoint failed\. "
                               r"This is most likely due to a Variable name or other graph key"):
                tf.train.Saver([b]).restore(s, ck)
            with pytest.raises(errors.InvalidArgumentError, match=r"Restoring from checkpoint "
                               r"failed\. This is most likely due to a mismatch between the "
                               r"current graph and the grap"):
                tf.train.Saver([a]).restore(s, ck)


# -- tf.train.Checkpoint in graph mode -------------------------------------------------------

def test_object_checkpoint_in_graph_mode(tmp_path):
    d = str(tmp_path / "ck")
    with tf.Graph().as_default():
        v = tf.Variable([1., 2.], name="v", use_resource=True)
        w = tf.get_variable("w", [2, 2], initializer=tf.ones_initializer(), use_resource=True)
        step = tf.Variable(0, dtype=tf.int64, name="step", use_resource=True)
        opt = tf.train.AdamOptimizer(0.1)
        train = opt.minimize(tf.reduce_sum(tf.matmul(tf.reshape(v, [1, 2]), w)),
                             global_step=step)
        ck = tf.train.Checkpoint(v=v, w=w, step=step, optimizer=opt)
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            s.run(train)
            s.run(train)
            p = ck.save(os.path.join(d, "ckpt"), session=s)
            assert os.path.basename(p) == "ckpt-1"
            assert sorted(os.listdir(d)) == ["checkpoint", "ckpt-1.data-00000-of-00001",
                                             "ckpt-1.index"]
            assert _r(s.run(v)) == [0.8004, 1.8004] and s.run(step) == 2
            p2 = ck.save(os.path.join(d, "ckpt"), session=s)
            assert os.path.basename(p2) == "ckpt-2" and tf.train.latest_checkpoint(d) == p2
    assert sorted(n for n, _ in tf.train.list_variables(p)) == [
        "_CHECKPOINTABLE_OBJECT_GRAPH", "optimizer/beta1_power/.ATTRIBUTES/VARIABLE_VALUE",
        "optimizer/beta2_power/.ATTRIBUTES/VARIABLE_VALUE",
        "save_counter/.ATTRIBUTES/VARIABLE_VALUE", "step/.ATTRIBUTES/VARIABLE_VALUE",
        "v/.ATTRIBUTES/VARIABLE_VALUE", "v/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE",
        "v/.OPTIMIZER_SLOT/optimizer/v/.ATTRIBUTES/VARIABLE_VALUE", "w/.ATTRIBUTES/VARIABLE_VALUE",
        "w/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE",
        "w/.OPTIMIZER_SLOT/optimizer/v/.ATTRIBUTES/VARIABLE_VALUE"]
    with tf.Graph().as_default():
        v = tf.Variable([0., 0.], name="vv", use_resource=True)
        w = tf.get_variable("w2", [2, 2], initializer=tf.zeros_initializer(), use_resource=True)
        step = tf.Variable(0, dtype=tf.int64, name="s", use_resource=True)
        st = tf.train.Checkpoint(v=v, w=w, step=step).restore(p)
        assert type(st).__name__ == "CheckpointLoadStatus"
        with tf.Session() as s:
            st.initialize_or_restore(s)
            assert _r(s.run(v)) == [0.8004, 1.8004] and s.run(step) == 2
            assert _r(s.run(w)) == [[0.8004, 0.8004], [0.8002, 0.8002]]
            with pytest.raises(AssertionError, match="Unresolved object in checkpoint"):
                st.assert_consumed()
            st.assert_existing_objects_matched()
            st.run_restore_ops(s)
    with tf.Graph().as_default():
        v = tf.Variable([0., 0.], name="v", use_resource=True)
        st = tf.train.Checkpoint(v=v).restore(None)
        assert type(st).__name__ == "InitializationOnlyStatus"
        with tf.Session() as s:
            st.initialize_or_restore(s)
            assert _r(s.run(v)) == [0.0, 0.0]


def test_saver_v1_meta_graph_export_import_and_last_checkpoint_bookkeeping(tmp_path):
    d = str(tmp_path)
    with tf.Graph().as_default():
        with tf.variable_scope("enc"):
            tf.get_variable("E", [6, 2], partitioner=tf.fixed_size_partitioner(2),
                            initializer=tf.ones_initializer())
            W = tf.get_variable("W", [2, 2],
                                initializer=tf.constant_initializer([[1., 2.], [3., 4.]]))
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        tf.add_to_collection("outputs", tf.matmul(x, W, name="y"))
        sv = tf.train.Saver(max_to_keep=None, keep_checkpoint_every_n_hours=0.5)
        assert (sv.saver_def.max_to_keep, sv.saver_def.keep_checkpoint_every_n_hours) == (0, 0.5)
        sv1 = tf.train.Saver([W], write_version=tf.train.SaverDef.V1)
        assert (sv1.saver_def.version, sv1.saver_def.save_tensor_name) == (
            1, "save_1/control_dependency:0")
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            for i in range(3):
                sv.save(s, os.path.join(d, "m"), global_step=i)
            assert sorted(f for f in os.listdir(d) if f.endswith("index")) == [
                "m-0.index", "m-1.index", "m-2.index"]
            assert sv.last_checkpoints == []
            p1 = sv1.save(s, os.path.join(d, "v1.ckpt"))
            assert sorted(f for f in os.listdir(d) if f.startswith("v1")) == ["v1.ckpt",
                                                                              "v1.ckpt.meta"]
            assert tf.train.checkpoint_exists(p1)
            assert [tuple(x) for x in tf.train.list_variables(p1)] == [("enc/W", [2, 2])]
            mg = sv.export_meta_graph(os.path.join(d, "exp.meta"), collection_list=["outputs"])
            assert sorted(mg.collection_def.keys()) == ["outputs"]
    with tf.Graph().as_default():
        sv = tf.train.import_meta_graph(os.path.join(d, "m-2.meta"))
        assert sorted(v.op.name for v in tf.global_variables()) == [
            "enc/E/part_0", "enc/E/part_1", "enc/W"]
        y = tf.get_collection("outputs")[0]
        with tf.Session() as s:
            sv.restore(s, os.path.join(d, "m-2"))
            assert y.name == "y:0" and _r(s.run(y, {"x:0": [[1., 1.]]})) == [[4.0, 6.0]]
        sv.recover_last_checkpoints([os.path.join(d, "m-0"), os.path.join(d, "m-2"),
                                     os.path.join(d, "nope")])
        assert [os.path.basename(p) for p in sv.last_checkpoints] == ["m-0", "m-2"]
        sv.set_last_checkpoints_with_time([(os.path.join(d, "m-1"), 1.0)])
        assert [os.path.basename(p) for p in sv.last_checkpoints] == ["m-1"]
        st = tf.train.generate_checkpoint_state_proto(d, os.path.join(d, "m-2"),
                                                      [os.path.join(d, "m-1")])
        assert str(st).replace(d, "D").strip().split("\n") == [
            'model_checkpoint_path: "D/m-2"', 'all_model_checkpoint_paths: "D/m-1"',
            'all_model_checkpoint_paths: "D/m-2"']
        st2 = tf.train.generate_checkpoint_state_proto(d, "m-2")
        assert str(st2).strip().split("\n") == ['model_checkpoint_path: "m-2"',
                                                'all_model_checkpoint_paths: "m-2"']
    with tf.Graph().as_default():
        sv = tf.train.import_meta_graph(os.path.join(d, "exp.meta"), import_scope="imp")
        assert tf.global_variables() == [] and sv.saver_def.restore_op_name == \
            "imp/save/restore_all"
        with tf.Session() as s:
            sv.restore(s, os.path.join(d, "m-1"))
            assert _r(s.run("imp/enc/W:0")) == [[1.0, 2.0], [3.0, 4.0]]


def test_padded_deferred_saver_reshape_restore_and_monitored_session_checkpoints(tmp_path):
    d = str(tmp_path)
    with tf.Graph().as_default():
        tf.get_variable("a", [2, 3], initializer=tf.constant_initializer(
            np.arange(6).reshape(2, 3)))
        sv = tf.train.Saver(pad_step_number=True, defer_build=True)
        assert sv.saver_def is None
        sv.build()
        assert sv.saver_def.restore_op_name == "save/restore_all"
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            assert os.path.basename(sv.save(s, os.path.join(d, "m"), global_step=12)) == \
                "m-00000012"
            assert os.path.basename(sv.save(s, os.path.join(d, "m"),
                                            global_step=tf.constant(3))) == "m-00000003"
            sd = sv.as_saver_def()
            assert (type(sd).__name__, sd.filename_tensor_name) == ("SaverDef", "save/Const:0")
            tf.train.Saver(saver_def=sd).restore(s, os.path.join(d, "m-00000012"))
    with tf.Graph().as_default():
        a = tf.get_variable("a", [3, 2])
        b = tf.get_variable("b", [6])
        with tf.Session() as s:
            tf.train.Saver([a], reshape=True).restore(s, os.path.join(d, "m-00000012"))
            tf.train.Saver({"a": b}, reshape=True).restore(s, os.path.join(d, "m-00000012"))
            assert _r(s.run(a)) == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
            assert _r(s.run(b)) == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    mts = os.path.join(d, "mts")
    quiet = dict(save_summaries_steps=None, save_summaries_secs=None, log_step_count_steps=None)
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        w = tf.get_variable("w", [2], initializer=tf.ones_initializer())
        train = tf.group(tf.assign_add(w, [0.5, -0.5]), tf.assign_add(step, 1))
        with tf.train.MonitoredTrainingSession(checkpoint_dir=mts, save_checkpoint_steps=2,
                                               **quiet) as s:
            for _ in range(5):
                s.run(train)
    assert sorted(f for f in os.listdir(mts) if "index" in f or f == "checkpoint") == [
        "checkpoint", "model.ckpt-0.index", "model.ckpt-2.index", "model.ckpt-4.index",
        "model.ckpt-5.index"]
    assert _r(tf.train.load_variable(mts, "w")) == [3.5, -1.5]
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        w = tf.get_variable("w", [2], initializer=tf.zeros_initializer())
        with tf.train.MonitoredTrainingSession(checkpoint_dir=mts, save_checkpoint_secs=None,
                                               **quiet) as s:
            wv, sv_ = s.run([w, step])
            assert _r(wv) == [3.5, -1.5] and sv_ == 5


def test_bert_style_assignment_map_inside_an_estimator_model_fn(tmp_path):
    ck = str(tmp_path / "bert_model.ckpt")
    with tf.Graph().as_default():
        with tf.variable_scope("bert"):
            with tf.variable_scope("embeddings"):
                tf.get_variable("word_embeddings", [5, 4], initializer=tf.constant_initializer(
                    np.arange(20).reshape(5, 4) / 10.))
            with tf.variable_scope("pooler/dense"):
                tf.get_variable("kernel", [4, 4], initializer=tf.constant_initializer(np.eye(4)))
                tf.get_variable("bias", [4], initializer=tf.constant_initializer(0.5))
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            tf.train.Saver().save(s, ck)
    printed = []

    def model_fn(features, labels, mode, params):
        with tf.variable_scope("bert"):
            with tf.variable_scope("embeddings"):
                emb = tf.get_variable("word_embeddings", [5, 4])
            x = tf.reduce_mean(tf.nn.embedding_lookup(emb, features["ids"]), axis=1)
            with tf.variable_scope("pooler"):
                pooled = tf.layers.dense(x, 4, activation=tf.tanh, name="dense")
        logits = tf.layers.dense(pooled, 2, name="cls", kernel_initializer=(
            tf.truncated_normal_initializer(stddev=0.02, seed=1)))
        loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
        tvars = {v.name.split(":")[0]: v for v in tf.trainable_variables()}
        amap = {name: name for name, _ in tf.train.list_variables(params["ckpt"])
                if name in tvars}
        tf.train.init_from_checkpoint(params["ckpt"], amap)
        printed.append([(n, v.shape.as_list(), n in amap) for n, v in tvars.items()])
        train_op = tf.train.AdamOptimizer(1e-3).minimize(loss,
                                                          global_step=tf.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    def input_fn():
        ids = np.array([[0, 1], [2, 3], [4, 0], [1, 1]], dtype=np.int32)
        return tf.data.Dataset.from_tensor_slices(
            ({"ids": ids}, np.array([0, 1, 1, 0], dtype=np.int32))).batch(4).repeat()

    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path / "out"),
                                 params={"ckpt": ck},
                                 config=tf.estimator.RunConfig(tf_random_seed=3))
    est.train(input_fn, steps=2)
    assert printed[0] == [("bert/embeddings/word_embeddings", [5, 4], True),
                          ("bert/pooler/dense/kernel", [4, 4], True),
                          ("bert/pooler/dense/bias", [4], True),
                          ("cls/kernel", [4, 2], False), ("cls/bias", [2], False)]
    assert _r(est.get_variable_value("bert/pooler/dense/bias"), 5) == [0.50199, 0.50195,
                                                                      0.498, 0.498]
    assert _r(est.get_variable_value("bert/embeddings/word_embeddings"))[0] == [
        0.002, 0.1019, 0.198, 0.298]
    assert _r(est.get_variable_value("cls/kernel"), 5) == [
        [-0.00247, -0.01216], [0.01381, 0.01322], [-0.01915, 0.03015], [-0.01132, 0.00792]]
    est.train(input_fn, steps=1)  # resumes from its own checkpoint, not the pretrained one
    assert _r(est.get_variable_value("bert/pooler/dense/bias"), 5) == [0.50297, 0.50275,
                                                                      0.497, 0.497]
    assert est.get_variable_value("global_step") == 3
