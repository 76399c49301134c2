"""The ``queue_runners`` and ``savers`` collections of a ``.meta`` file, as TensorFlow
writes and reads them: QueueRunnerDef and SaverDef messages, rebuilt on import so that a
queue-fed program restored with `import_meta_graph` goes on training after
`tf.train.start_queue_runners`.

The fixture in tests/data/tf_formats/queue_meta was written by TensorFlow 2.15
(`make_fixture.py` there); the expected values are TensorFlow's, from the tf-oracle.
"""

from __future__ import annotations

import logging
import os

import pytest

import flowgraph as tf
from flowgraph.framework.tf_formats.meta_graph_messages import (
    QueueRunnerDefProto,
    SaverDefProto,
)

TF_WRITTEN = os.path.join(os.path.dirname(__file__), "..", "data", "tf_formats", "queue_meta")


def _counter_pipeline():
    queue = tf.FIFOQueue(10, tf.float32, shapes=[[]], name="fq")
    counter = tf.Variable(0.0, name="counter")
    runner = tf.train.QueueRunner(queue, [queue.enqueue([tf.assign_add(counter, 1.0)])])
    tf.train.add_queue_runner(runner)
    return queue.dequeue(name="x")


def test_export_writes_tensorflows_queue_runner_and_saver_messages(tmp_path):
    with tf.Graph().as_default():
        _counter_pipeline()
        saver = tf.train.Saver(max_to_keep=3)
        tf.add_to_collection(tf.GraphKeys.SAVERS, saver)
        mg = tf.train.export_meta_graph(str(tmp_path / "m.meta"), saver_def=saver.saver_def)
    assert sorted(mg.collection_def) == ["queue_runners", "savers", "trainable_variables",
                                         "variables"]
    # TensorFlow 2.15's bytes for the same runner (tf-oracle)
    assert list(mg.collection_def["queue_runners"].bytes_list.value) == [
        b"\n\x02fq\x12\nfq_enqueue\x1a\x08fq_Close\"\nfq_Close_1*\x01\x0b"]
    saver_def = SaverDefProto.FromString(mg.collection_def["savers"].bytes_list.value[0])
    # the names of the TensorFlow saver nodes the file holds, as the file's own SaverDef
    assert (saver_def.filename_tensor_name, saver_def.save_tensor_name,
            saver_def.restore_op_name, saver_def.max_to_keep) == (
        "save/Const:0", "save/control_dependency:0", "save/restore_all", 3)
    assert saver_def.SerializeToString() == mg.saver_def.SerializeToString()


def test_import_rebuilds_runners_and_saver_and_the_queue_feeds_again(tmp_path):
    with tf.Graph().as_default():
        _counter_pipeline()
        saver = tf.train.Saver(max_to_keep=3)
        tf.add_to_collection(tf.GraphKeys.SAVERS, saver)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            saver.save(sess, str(tmp_path / "m"))
    with tf.Graph().as_default():
        restored = tf.train.import_meta_graph(str(tmp_path / "m.meta"))
        (runner,) = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)
        assert (runner.queue.name, type(runner.queue).__name__) == ("fq", "Operation")
        assert [op.name for op in runner.enqueue_ops] == ["fq_enqueue"]
        assert (runner.close_op.name, runner.cancel_op.name) == ("fq_Close", "fq_Close_1")
        assert runner.queue_closed_exception_types == (tf.errors.OutOfRangeError,)
        (listed,) = tf.get_collection(tf.GraphKeys.SAVERS)
        assert listed.saver_def.max_to_keep == 3 and restored.saver_def.max_to_keep == 3
        with tf.Session() as sess:
            restored.restore(sess, str(tmp_path / "m"))
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            values = [float(sess.run("x:0")) for _ in range(3)]
            coord.request_stop()
            coord.join(threads)
    assert values == [1.0, 2.0, 3.0]  # the counter restarts from the restored 0


def test_import_scope_prefixes_the_runner_names(tmp_path):
    with tf.Graph().as_default():
        _counter_pipeline()
        tf.add_to_collection(tf.GraphKeys.SAVERS, tf.train.Saver())
        tf.train.export_meta_graph(str(tmp_path / "m.meta"),
                                   saver_def=tf.get_collection("savers")[0].saver_def)
    with tf.Graph().as_default():
        tf.train.import_meta_graph(str(tmp_path / "m.meta"), import_scope="imp")
        (runner,) = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)
        assert runner.queue.name == "imp/fq"
        assert [op.name for op in runner.enqueue_ops] == ["imp/fq_enqueue"]
        assert [s.saver_def.restore_op_name for s in tf.get_collection("savers")] == [
            "imp/save/restore_all"]


def test_queue_runner_to_proto_from_proto_and_export_scope():
    with tf.Graph().as_default():
        with tf.name_scope("inputs"):
            queue = tf.FIFOQueue(2, tf.float32, name="q")
            runner = tf.train.QueueRunner(queue, [queue.enqueue([1.0])] * 2,
                                          queue_closed_exception_types=(
                                              tf.errors.OutOfRangeError,
                                              tf.errors.CancelledError))
        proto = runner.to_proto()
        assert isinstance(proto, QueueRunnerDefProto)
        assert list(proto.enqueue_op_name) == ["inputs/q_enqueue", "inputs/q_enqueue"]
        assert list(proto.queue_closed_exception_types) == [11, 1]
        scoped = runner.to_proto(export_scope="inputs")
        assert (scoped.queue_name, scoped.close_op_name) == ("q", "q_Close")
        assert runner.to_proto(export_scope="elsewhere") is None
        back = tf.train.QueueRunner.from_proto(proto)
        assert back.queue is queue.queue_ref.op
        assert back.queue_closed_exception_types == (tf.errors.OutOfRangeError,
                                                     tf.errors.CancelledError)
        with pytest.raises(ValueError, match="mutually exclusive"):
            tf.train.QueueRunner(queue, queue_runner_def=proto)


def test_a_tensorflow_written_queue_program_goes_on_training(caplog):
    caplog.set_level(logging.WARNING)
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(os.path.join(TF_WRITTEN, "model.ckpt-2.meta"))
        (runner,) = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)
        assert (runner.name, [op.name for op in runner.enqueue_ops]) == (
            "input_queue", ["input_queue_EnqueueMany"])
        assert [s.saver_def.max_to_keep for s in tf.get_collection(tf.GraphKeys.SAVERS)] == [2]
        train = tf.get_collection("train_op")[0]
        with tf.Session() as sess:
            saver.restore(sess, os.path.join(TF_WRITTEN, "model.ckpt-2"))
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            for _ in range(3):
                sess.run(train)
            w, step = sess.run(["w:0", "global_step:0"])
            coord.request_stop()
            coord.join(threads)
    # TensorFlow 2.15, the same three steps after the restore
    assert [round(float(v), 6) for v in w.ravel()] == [0.729131, 0.136932] and step == 5
    assert not [r for r in caplog.records if "left out" in r.getMessage()]
