"""``graph.pbtxt`` beside the checkpoints (train/graph_pbtxt.py), as TensorFlow's
CheckpointSaverHook writes it when a monitored session is created (oracle: the same file
names in a MonitoredTrainingSession's and an Estimator's model_dir)."""

import os

import numpy as np

import flowgraph as tf
from flowgraph.framework.event_format import GraphDef
from flowgraph.framework.tf_formats.text_parse import parse_text


def _train(model_dir, scale=1.0, save_graph_def=True, steps=3):
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        w = tf.Variable(scale, name="w")
        train = tf.group(w.assign_add(1.0), step.assign_add(1))
        hooks = [tf.train.CheckpointSaverHook(model_dir, save_steps=100,
                                              save_graph_def=save_graph_def),
                 tf.train.StopAtStepHook(num_steps=steps)]
        with tf.train.SingularMonitoredSession(hooks=hooks) as sess:
            while not sess.should_stop():
                sess.run(train)


def test_monitored_training_session_writes_graph_pbtxt_that_parses(tmp_path):
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        w = tf.Variable(1.0, name="w")
        train = tf.group(w.assign_add(1.0), step.assign_add(1))
        with tf.train.MonitoredTrainingSession(
                checkpoint_dir=str(tmp_path),
                hooks=[tf.train.StopAtStepHook(last_step=3)]) as sess:
            while not sess.should_stop():
                sess.run(train)
    names = sorted(f for f in os.listdir(tmp_path) if not f.startswith("events"))
    assert names == ["checkpoint", "graph.pbtxt",
                     "model.ckpt-0.data-00000-of-00001", "model.ckpt-0.index",
                     "model.ckpt-0.meta", "model.ckpt-3.data-00000-of-00001",
                     "model.ckpt-3.index", "model.ckpt-3.meta"]
    graph_def = parse_text((tmp_path / "graph.pbtxt").read_text(), GraphDef)
    ops = {node.name: node.op for node in graph_def.node}
    assert ops["w"] == "VariableV2" and ops["global_step"] == "VariableV2"


def test_estimator_model_dir_has_graph_pbtxt(tmp_path):
    def model_fn(features, labels, mode):
        w = tf.get_variable("w", [], initializer=tf.zeros_initializer())
        loss = tf.reduce_mean(tf.square(features["x"] * w - labels))
        opt = tf.train.GradientDescentOptimizer(0.1)
        return tf.estimator.EstimatorSpec(
            mode, loss=loss, train_op=opt.minimize(loss, tf.train.get_global_step()))

    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path))
    inp = tf.estimator.inputs.numpy_input_fn(
        {"x": np.ones(8, np.float32)}, np.ones(8, np.float32), batch_size=4,
        num_epochs=None, shuffle=False)
    est.train(inp, steps=2)
    assert (tmp_path / "graph.pbtxt").is_file()


def test_same_graph_is_not_rewritten_and_a_changed_one_is(tmp_path):
    path = tmp_path / "graph.pbtxt"
    _train(str(tmp_path))
    first = path.stat().st_mtime_ns
    _train(str(tmp_path))  # the same graph again: the file is kept
    assert path.stat().st_mtime_ns == first
    _train(str(tmp_path), scale=2.0)  # another initial value: new content
    assert path.stat().st_mtime_ns != first
    assert 'float_val: 2' in path.read_text()


def test_a_file_changed_by_someone_else_is_written_again(tmp_path):
    path = tmp_path / "graph.pbtxt"
    _train(str(tmp_path))
    good = path.read_text()
    path.write_text("garbage")
    _train(str(tmp_path))
    assert path.read_text() == good


def test_save_graph_def_false_writes_no_graph_pbtxt(tmp_path):
    _train(str(tmp_path), save_graph_def=False)
    assert not (tmp_path / "graph.pbtxt").exists()
    assert tf.train.latest_checkpoint(str(tmp_path)) is not None


def test_graph_pbtxt_records_output_shapes_as_tensorflow_does(tmp_path):
    # TF's CheckpointSaverHook writes as_graph_def(add_shapes=True): in TF 2.15 the node
    # "y" (Identity of a [1, 2] constant) carries _output_shapes [[1, 2]].
    with tf.Graph().as_default():
        x = tf.constant([[1.0, 2.0]], name="x")
        tf.identity(x, name="y")
        step = tf.train.get_or_create_global_step()
        with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path)) as sess:
            sess.run(step)
    graph_def = parse_text((tmp_path / "graph.pbtxt").read_text(), GraphDef)
    y = next(n for n in graph_def.node if n.name == "y")
    shapes = y.attr["_output_shapes"].list.shape
    assert [[d.size for d in s.dim] for s in shapes] == [[1, 2]]
    step_node = next(n for n in graph_def.node if n.name == "global_step")
    assert [len(s.dim) for s in step_node.attr["_output_shapes"].list.shape] == [0]
