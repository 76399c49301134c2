"""`tf.train.Checkpoint` and `tf.train.CheckpointManager` in graph mode.

Expected keys, status behaviour and manager numbering were checked against TensorFlow
2.15 with the tf-oracle; `data/tf_object_checkpoint/` holds a checkpoint TensorFlow wrote
(its script beside it), restored here. The other direction (TensorFlow restoring a
flowgraph checkpoint, Sequential model and Adam slots included) was checked with the
oracle too: it needs TensorFlow, so it is not a test.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework import errors

HERE = os.path.dirname(os.path.abspath(__file__))
TF_CHECKPOINT = os.path.join(HERE, "data", "tf_object_checkpoint", "ck-1")


@pytest.fixture(autouse=True)
def _fresh_graph():
    with tf.Graph().as_default():
        yield


def _program(kernel_name="dense"):
    """Variables, a Dense layer and Adam, as the oracle's program built them."""
    v = tf.Variable([1.0, 2.0], name="v")
    dense = tf.keras.layers.Dense(2, name=kernel_name)
    y = dense(tf.constant([[1.0, 2.0, 3.0]]))
    opt = tf.train.AdamOptimizer(0.1)
    train = opt.minimize(tf.reduce_sum(y * y) + tf.reduce_sum(v * v))
    ckpt = tf.train.Checkpoint(model=dense, optimizer=opt, inner=tf.train.Checkpoint(v=v))
    return v, dense, opt, train, ckpt


# oracle: the keys TensorFlow writes for _program() plus step=tf.Variable(3)
TF_KEYS = [
    "_CHECKPOINTABLE_OBJECT_GRAPH",
    "inner/v/.ATTRIBUTES/VARIABLE_VALUE",
    "inner/v/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE",
    "inner/v/.OPTIMIZER_SLOT/optimizer/v/.ATTRIBUTES/VARIABLE_VALUE",
    "model/bias/.ATTRIBUTES/VARIABLE_VALUE",
    "model/bias/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE",
    "model/bias/.OPTIMIZER_SLOT/optimizer/v/.ATTRIBUTES/VARIABLE_VALUE",
    "model/kernel/.ATTRIBUTES/VARIABLE_VALUE",
    "model/kernel/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE",
    "model/kernel/.OPTIMIZER_SLOT/optimizer/v/.ATTRIBUTES/VARIABLE_VALUE",
    "optimizer/beta1_power/.ATTRIBUTES/VARIABLE_VALUE",
    "optimizer/beta2_power/.ATTRIBUTES/VARIABLE_VALUE",
    "save_counter/.ATTRIBUTES/VARIABLE_VALUE",
    "step/.ATTRIBUTES/VARIABLE_VALUE",
]


def test_save_writes_tensorflows_keys_and_numbers_saves(tmp_path):
    _v, _dense, _opt, train, ckpt = _program()
    ckpt.step = tf.Variable(3, name="step")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        p1 = ckpt.save(str(tmp_path / "ck"), session=sess)
        p2 = ckpt.save(str(tmp_path / "ck"), session=sess)
        w = ckpt.write(str(tmp_path / "written"), session=sess)
        assert sess.run(ckpt.save_counter) == 2
    assert [os.path.basename(p) for p in (p1, p2, w)] == ["ck-1", "ck-2", "written"]
    assert sorted(os.listdir(tmp_path)) == [
        "checkpoint", "ck-1.data-00000-of-00001", "ck-1.index", "ck-2.data-00000-of-00001",
        "ck-2.index", "written.data-00000-of-00001", "written.index"]
    assert tf.train.latest_checkpoint(str(tmp_path)) == p2
    assert (tmp_path / "checkpoint").read_text().splitlines() == [
        'model_checkpoint_path: "ck-2"', 'all_model_checkpoint_paths: "ck-2"']
    assert sorted(k for k, _ in tf.train.list_variables(p2)) == TF_KEYS
    assert tf.train.load_variable(p2, "save_counter/.ATTRIBUTES/VARIABLE_VALUE") == 2
    assert "save_counter/.ATTRIBUTES/VARIABLE_VALUE" not in dict(tf.train.list_variables(w)) \
        or tf.train.load_variable(w, "save_counter/.ATTRIBUTES/VARIABLE_VALUE") == 2


def test_restore_matches_objects_not_graph_names(tmp_path):
    v, dense, opt, train, ckpt = _program()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        path = ckpt.save(str(tmp_path / "ck"), session=sess)
        expected = sess.run([v, dense.kernel, opt.get_slot(dense.kernel, "m")])
    with tf.Graph().as_default():
        # other graph names (a name scope, another layer name): same attribute paths
        with tf.name_scope("elsewhere"):
            v2, dense2, opt2, _train2, ckpt2 = _program(kernel_name="renamed")
        with tf.Session() as sess:
            status = ckpt2.restore(path)
            status.assert_consumed().run_restore_ops(sess)
            got = sess.run([v2, dense2.kernel, opt2.get_slot(dense2.kernel, "m")])
            assert sess.run(ckpt2.save_counter) == 1
    for a, b in zip(got, expected):
        np.testing.assert_array_equal(a, b)


def test_restores_a_checkpoint_tensorflow_wrote():
    v, dense, opt, _train, ckpt = _program()
    with tf.Session() as sess:
        status = ckpt.restore(TF_CHECKPOINT)
        status.assert_consumed()
        status.run_restore_ops(sess)
        # the values make_checkpoint.py printed
        np.testing.assert_allclose(sess.run(v), [0.9, 1.9], rtol=1e-6)
        np.testing.assert_allclose(sess.run(dense.kernel),
                                   [[-0.1, 0.0], [0.1, 0.2], [0.3, 0.4]], rtol=1e-6)
        np.testing.assert_allclose(sess.run(dense.bias), [0.4, -0.6], rtol=1e-6)
        np.testing.assert_allclose(sess.run(opt.get_slot(dense.kernel, "m")),
                                   [[0.42, 0.34], [0.84, 0.68], [1.26, 1.02]], rtol=1e-5)
        assert sess.run(ckpt.save_counter) == 1


def test_object_graph_message_round_trips(tmp_path):
    from flowgraph.train.checkpoint_object_graph import _TrackableObjectGraph

    _v, _dense, _opt, _train, ckpt = _program()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = ckpt.write(str(tmp_path / "w"))
    def graph(p):
        raw = np.asarray(tf.train.load_variable(p, "_CHECKPOINTABLE_OBJECT_GRAPH")).item()
        return _TrackableObjectGraph.FromString(raw)

    ours, theirs = graph(path), graph(TF_CHECKPOINT)

    def keys(graph):
        return sorted(a.checkpoint_key for n in graph.nodes for a in n.attributes
                      if not a.checkpoint_key.startswith("save_counter"))

    assert keys(ours) == keys(theirs)
    root = ours.nodes[0]
    assert sorted(c.local_name for c in root.children) == ["inner", "model", "optimizer"]


def test_sequential_models_use_layer_with_weights_keys(tmp_path):
    model = tf.keras.Sequential([tf.keras.layers.Dense(3, input_shape=(2,)),
                                 tf.keras.layers.Dropout(0.5), tf.keras.layers.Dense(1)])
    y = model(tf.constant([[1.0, 2.0]]))
    step = tf.train.get_or_create_global_step()
    opt = tf.train.MomentumOptimizer(0.1, 0.9)
    train = opt.minimize(tf.reduce_sum(y), global_step=step)
    ckpt = tf.train.Checkpoint(model=model, opt=opt, global_step=step)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        path = ckpt.save(str(tmp_path / "ck"))
    # oracle
    assert sorted(k for k, _ in tf.train.list_variables(path)) == [
        "_CHECKPOINTABLE_OBJECT_GRAPH", "global_step/.ATTRIBUTES/VARIABLE_VALUE",
        "model/layer_with_weights-0/bias/.ATTRIBUTES/VARIABLE_VALUE",
        "model/layer_with_weights-0/bias/.OPTIMIZER_SLOT/opt/momentum/.ATTRIBUTES/VARIABLE_VALUE",
        "model/layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE",
        "model/layer_with_weights-0/kernel/.OPTIMIZER_SLOT/opt/momentum/.ATTRIBUTES/"
        "VARIABLE_VALUE",
        "model/layer_with_weights-1/bias/.ATTRIBUTES/VARIABLE_VALUE",
        "model/layer_with_weights-1/bias/.OPTIMIZER_SLOT/opt/momentum/.ATTRIBUTES/VARIABLE_VALUE",
        "model/layer_with_weights-1/kernel/.ATTRIBUTES/VARIABLE_VALUE",
        "model/layer_with_weights-1/kernel/.OPTIMIZER_SLOT/opt/momentum/.ATTRIBUTES/"
        "VARIABLE_VALUE",
        "save_counter/.ATTRIBUTES/VARIABLE_VALUE"]


def test_partial_restore_and_the_assertions(tmp_path):
    v, _dense, _opt, _train, ckpt = _program()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = ckpt.save(str(tmp_path / "ck"))
        sess.run(v.assign([7.0, 7.0]))
        partial = tf.train.Checkpoint(inner=tf.train.Checkpoint(v=v)).restore(path)
        partial.run_restore_ops(sess)
        np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])
        assert partial.assert_existing_objects_matched() is partial
        assert partial.expect_partial() is partial
        with pytest.raises(AssertionError, match="Unresolved object in checkpoint"):
            partial.assert_consumed()
        extra = tf.train.Checkpoint(inner=tf.train.Checkpoint(v=v),
                                    other=tf.Variable(0.0, name="other"))
        status = extra.restore(path)
        with pytest.raises(AssertionError, match=r"not assigned a value.*other"):
            status.assert_existing_objects_matched()
        sess.run(tf.variables_initializer([extra.other]))
        sess.run(extra.other.assign(5.0))
        status.initialize_or_restore(sess)  # restores v, initializes `other`
        assert sess.run(extra.other) == 0.0
        written = tf.train.Checkpoint(v=v).write(str(tmp_path / "written"))  # no counter
        with pytest.raises(AssertionError, match="no key is shared"):
            tf.train.Checkpoint(x=tf.Variable(1.0)).restore(written).assert_nontrivial_match()


def test_restore_none_only_initializes():
    v = tf.Variable([1.0, 2.0], name="v")
    ckpt = tf.train.Checkpoint(v=v)
    status = ckpt.restore(None)
    with tf.Session() as sess:
        status.run_restore_ops(sess)
        status.initialize_or_restore(sess)
        np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])
    with pytest.raises(AssertionError, match="No checkpoint specified"):
        status.assert_consumed()


def test_errors(tmp_path):
    with pytest.raises(ValueError, match="expecting a trackable object"):
        tf.train.Checkpoint(x=3)
    w = tf.Variable(1.0, name="w")
    ckpt = tf.train.Checkpoint(w=w)
    with pytest.raises(ValueError, match="needs a session"):
        ckpt.save(str(tmp_path / "c"))
    with pytest.raises(errors.NotFoundError):
        ckpt.restore(str(tmp_path / "missing"))
    with tf.Session() as sess:
        sess.run(w.initializer)
        path = ckpt.write(str(tmp_path / "c"))
    wide = tf.train.Checkpoint(w=tf.Variable([1.0, 2.0], name="wide"))
    with tf.Session() as sess, pytest.raises(errors.InvalidArgumentError,
                                             match=r"has shape \(2,\) but checkpoint"):
        wide.restore(path).run_restore_ops(sess)


def test_attributes_lists_and_modules_are_tracked(tmp_path):
    class Block(tf.Module):
        def __init__(self):
            super().__init__()
            self.scale = tf.Variable(2.0, name="scale")
            self.parts = [tf.Variable(1.0, name="p0"), tf.Variable(3.0, name="p1")]

    ckpt = tf.train.Checkpoint()
    ckpt.block = Block()
    ckpt.not_tracked = 42
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = ckpt.write(str(tmp_path / "m"))
    assert sorted(k for k, _ in tf.train.list_variables(path)) == [
        "_CHECKPOINTABLE_OBJECT_GRAPH", "block/parts/0/.ATTRIBUTES/VARIABLE_VALUE",
        "block/parts/1/.ATTRIBUTES/VARIABLE_VALUE", "block/scale/.ATTRIBUTES/VARIABLE_VALUE"]


def test_checkpoint_manager_keeps_the_newest(tmp_path):
    ckpt = tf.train.Checkpoint(w=tf.Variable(1.0, name="w"))
    manager = tf.train.CheckpointManager(ckpt, str(tmp_path / "m"), max_to_keep=2)
    assert manager.latest_checkpoint is None and manager.checkpoints == []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        paths = [manager.save() for _ in range(3)]
        numbered = manager.save(checkpoint_number=10)
    assert [os.path.basename(p) for p in paths] == ["ckpt-1", "ckpt-2", "ckpt-3"]  # oracle
    assert manager.checkpoints == [paths[2], numbered]
    assert manager.latest_checkpoint == numbered == tf.train.latest_checkpoint(
        str(tmp_path / "m"))
    assert sorted(os.listdir(tmp_path / "m")) == [
        "checkpoint", "ckpt-10.data-00000-of-00001", "ckpt-10.index",
        "ckpt-3.data-00000-of-00001", "ckpt-3.index"]
    again = tf.train.CheckpointManager(ckpt, str(tmp_path / "m"), max_to_keep=2)
    assert again.checkpoints == manager.checkpoints
    assert again.latest_checkpoint == numbered
    with tf.Session() as sess:
        assert again.restore_or_initialize(sess) == numbered
        assert sess.run(ckpt.w) == 1.0


def test_checkpoint_manager_interval_and_keep_hours(tmp_path, monkeypatch):
    step = tf.Variable(0, name="step", dtype=tf.int64)
    ckpt = tf.train.Checkpoint(step=step)
    manager = tf.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=1,
                                         step_counter=step, checkpoint_interval=5)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert manager.save() is not None
        sess.run(step.assign(3))
        assert manager.save() is None
        sess.run(step.assign(5))
        assert manager.save() is not None
    import flowgraph.train.checkpoint_object_manager as m

    clock = [1000.0]
    monkeypatch.setattr(m.time, "time", lambda: clock[0])
    hourly = tf.train.CheckpointManager(ckpt, str(tmp_path / "h"), max_to_keep=1,
                                        keep_checkpoint_every_n_hours=1)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = hourly.save()
        clock[0] += 2 * 3600
        second = hourly.save()
        clock[0] += 60
        third = hourly.save()
    # TensorFlow's rule: a checkpoint leaving the kept list survives when it is an hour
    # or more newer than the last one preserved (at first: the manager's creation)
    assert not tf.train.checkpoint_exists(first)
    assert tf.train.checkpoint_exists(second)
    assert hourly.checkpoints == [third]


def test_a_saver_checkpoint_restores_by_graph_names(tmp_path):
    v = tf.Variable([1.0, 2.0], name="v")
    with tf.Session() as sess:
        sess.run(v.initializer)
        path = tf.train.Saver([v]).save(sess, str(tmp_path / "model.ckpt"))
        sess.run(v.assign([0.0, 0.0]))
        status = tf.train.Checkpoint(anything=v).restore(path)
        status.run_restore_ops(sess)
        np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])
    with pytest.raises(AssertionError, match="name-based checkpoint"):
        status.assert_consumed()
