"""`tf.train.warm_start` and `tf.train.VocabInfo` (vocabulary remapping), with
TensorFlow 2.15's results recorded with the tf-oracle."""

import os

import numpy as np
import pytest

import flowgraph as tf


@pytest.fixture
def ckpt(tmp_path):
    (tmp_path / "old.txt").write_text("a\nb\nc\n")
    (tmp_path / "new.txt").write_text("c\na\nd\n")
    with tf.Graph().as_default():
        tf.Variable(np.array([[1.0, 10], [2, 20], [3, 30]], np.float32), name="emb")
        tf.Variable(np.array([[1.0, 2, 3]], np.float32), name="out")
        tf.Variable(np.float32(5.0), name="bias")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            return tf.train.Saver().save(sess, str(tmp_path / "m")), tmp_path


def _info(d, **kw):
    args = dict(new_vocab=str(d / "new.txt"), new_vocab_size=3, num_oov_buckets=0,
                old_vocab=str(d / "old.txt"))
    args.update(kw)
    return tf.train.VocabInfo(**args)


def test_rows_and_columns_are_remapped_to_the_new_vocabulary_as_in_tensorflow(ckpt):
    prefix, d = ckpt
    with tf.Graph().as_default():
        emb = tf.get_variable("emb", [4, 2], initializer=tf.ones_initializer())
        out = tf.get_variable("out", [1, 3], initializer=tf.ones_initializer())
        bias = tf.get_variable("bias", [], initializer=tf.zeros_initializer())
        tf.train.warm_start(prefix, var_name_to_vocab_info={
            "emb": _info(d, num_oov_buckets=1), "out": _info(d, axis=1)})
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            # TensorFlow 2.15: [[3, 30], [1, 10], [0, 0], [0, 0]] and [[3, 1, 0]].
            assert sess.run(emb).tolist() == [[3, 30], [1, 10], [0, 0], [0, 0]]
            assert sess.run(out).tolist() == [[3, 1, 0]]
            assert sess.run(bias) == 5.0


def test_backup_initializer_fills_new_words_and_oov_buckets(ckpt):
    prefix, d = ckpt
    with tf.Graph().as_default():
        emb = tf.get_variable("emb", [5, 2], initializer=tf.ones_initializer())
        info = _info(d, num_oov_buckets=2, backup_initializer=tf.constant_initializer(-1.0))
        tf.train.warm_start(prefix, vars_to_warm_start=["emb"],
                            var_name_to_vocab_info={"emb": info})
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(emb).tolist() == [[3, 30], [1, 10], [-1, -1], [-1, -1], [-1, -1]]


def test_partitioned_variable_is_remapped_and_old_oov_rows_are_skipped(tmp_path):
    (tmp_path / "old.txt").write_text("a\nb\nc\n")
    (tmp_path / "new.txt").write_text("c\na\nd\nb\n")
    with tf.Graph().as_default():
        # three words and one OOV row, as a canned model's embedding with num_oov_buckets=1
        tf.Variable(np.array([[1.0, 10], [2, 20], [3, 30], [4, 40]], np.float32), name="emb")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            prefix = tf.train.Saver().save(sess, str(tmp_path / "m"))
    with tf.Graph().as_default():
        emb = tf.get_variable("emb", [6, 2], initializer=tf.ones_initializer(),
                              partitioner=tf.fixed_size_partitioner(3))
        info = tf.train.VocabInfo(str(tmp_path / "new.txt"), 4, 2, str(tmp_path / "old.txt"))
        tf.train.warm_start(prefix, var_name_to_vocab_info={"emb": info})
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            # TensorFlow 2.15 prints exactly this
            assert sess.run(tf.convert_to_tensor(emb)).tolist() == [
                [3, 30], [1, 10], [0, 0], [2, 20], [0, 0], [0, 0]]


def test_vocab_errors_name_the_variable_and_the_sizes(ckpt):
    prefix, d = ckpt
    with tf.Graph().as_default():
        tf.get_variable("emb", [3, 2])
        with pytest.raises(ValueError, match=r"'emb'.*shape \[3, 2\], expected at most 2"):
            tf.train.warm_start(prefix, var_name_to_vocab_info={
                "emb": _info(d, new_vocab_size=2)})
        with pytest.raises(ValueError, match="var_name_to_vocab_info that were not used"):
            tf.train.warm_start(prefix, vars_to_warm_start=None,
                                var_name_to_vocab_info={"emb": _info(d)})
        with pytest.raises(ValueError, match="fewer than its declared size 9"):
            tf.train.warm_start(prefix, var_name_to_vocab_info={
                "emb": _info(d, new_vocab_size=9)})
    with pytest.raises(ValueError, match=r"are 0 and 1\.  Provided axis: 2"):
        _info(d, axis=2)


def test_estimator_names_are_the_train_ones():
    assert tf.estimator.VocabInfo is tf.train.VocabInfo
    from flowgraph.estimators import warm_starting

    assert warm_starting.warm_start is tf.train.warm_start
    assert os.fspath(tf.estimator.WarmStartSettings("d").ckpt_to_initialize_from) == "d"


def test_module_doctest():
    import doctest

    from flowgraph.train import warm_starting

    assert doctest.testmod(warm_starting).failed == 0
