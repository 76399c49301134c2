"""Optimizer slots of partitioned variables in TensorFlow's checkpoint layout, and reading
any region of a checkpoint entry from the slices that cover it.

Every expected key, slice and value was printed by TensorFlow 2.15 (`tensorflow.compat.v1`,
the tf-oracle) running the same graph. The fixtures tests/data/tf_formats/
partitioned_slots_{adam,ftrl} are TF's checkpoints of `_train_emb` (one step), and
tests/data/tf_formats/partitioned_linear_classifier is TF's
``LinearClassifier(partitioner=tf.fixed_size_partitioner(2))`` after 3 FTRL steps.
"""

from __future__ import annotations

import glob
import os
import shutil

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework.event_format import TensorShapeProto
from flowgraph.framework.tf_formats.bundle import BundleEntryProto, BundleReader
from flowgraph.framework.tf_formats.bundle_slices import slice_key, write_slice
from flowgraph.framework.tf_formats.meta_graph import read_meta_graph_file
from flowgraph.framework.tf_formats.meta_graph_messages import VariableDefProto
from flowgraph.framework.tf_formats.table import read_table, write_table

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "tf_formats")
OPTIMIZERS = {"Ftrl": lambda: tf.train.FtrlOptimizer(0.1),
              "Adagrad": lambda: tf.train.AdagradOptimizer(0.1),
              "Adam": lambda: tf.train.AdamOptimizer(0.1)}


def _emb_graph(optimizer: str, parts: int | None = 2, rows: int = 4):
    partitioner = tf.fixed_size_partitioner(parts) if parts else None
    emb = tf.get_variable("emb", [rows, 1], partitioner=partitioner,
                          initializer=tf.ones_initializer())
    weights = tf.constant(np.arange(1, rows + 1, dtype=np.float32).reshape(rows, 1))
    loss = tf.reduce_sum(tf.square(tf.convert_to_tensor(emb) - 0.5) * weights)
    return emb, OPTIMIZERS[optimizer]().minimize(loss)


def _train_emb(optimizer: str, directory: str) -> str:
    with tf.Graph().as_default():
        _, train = _emb_graph(optimizer)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train)
            return saver.save(sess, os.path.join(directory, "model.ckpt"))


def _slice_infos(variables) -> dict:
    return {v.op.name: (i.full_name, i.full_shape, i.var_offset, i.var_shape)
            for v in variables if (i := v._save_slice_info) is not None}


# -- slots get their primary's slice info, under the slot's full name ------------------------
def test_slots_of_parts_are_slices_of_one_entry_as_in_tensorflow():
    with tf.Graph().as_default():
        _emb_graph("Ftrl")
        assert _slice_infos(tf.global_variables()) == {  # TF 2.15
            "emb/part_0": ("emb", [4, 1], [0, 0], [2, 1]),
            "emb/part_1": ("emb", [4, 1], [2, 0], [2, 1]),
            "emb/part_0/Ftrl": ("emb/Ftrl", [4, 1], [0, 0], [2, 1]),
            "emb/part_0/Ftrl_1": ("emb/Ftrl_1", [4, 1], [0, 0], [2, 1]),
            "emb/part_1/Ftrl": ("emb/Ftrl", [4, 1], [2, 0], [2, 1]),
            "emb/part_1/Ftrl_1": ("emb/Ftrl_1", [4, 1], [2, 0], [2, 1])}


def test_slot_slices_under_a_variable_scope_get_tensorflows_names():
    with tf.Graph().as_default():
        w = tf.get_variable("w", [3], initializer=tf.ones_initializer())
        e = tf.get_variable("emb", [4, 1], partitioner=tf.fixed_size_partitioner(2))
        loss = tf.reduce_sum(w * w) + tf.reduce_sum(tf.convert_to_tensor(e))
        with tf.variable_scope("foo"), tf.name_scope("bar"):
            tf.train.AdamOptimizer(0.1).minimize(loss)
        with tf.variable_scope("foo"):
            tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss)
        infos = {n: i[0] for n, i in _slice_infos(tf.global_variables()).items()}
    # TF 2.15 names these slots foo/emb/part_0/Adam, ... (the enclosing variable scope
    # first) and takes the slice's name from that minus as many characters as the
    # primary's name has: "emb/t_0/Adam". Names and checkpoint keys are TF's.
    assert infos == {"emb/part_0": "emb", "emb/part_1": "emb",
                     "foo/emb/part_0/Adam": "emb/t_0/Adam",
                     "foo/emb/part_0/Adam_1": "emb/t_0/Adam_1",
                     "foo/emb/part_1/Adam": "emb/t_1/Adam",
                     "foo/emb/part_1/Adam_1": "emb/t_1/Adam_1",
                     "foo/emb/part_0/Momentum": "emb/t_0/Momentum",
                     "foo/emb/part_1/Momentum": "emb/t_1/Momentum"}


def test_a_scalar_slot_of_a_part_is_saved_whole():
    with tf.Graph().as_default():
        emb = tf.get_variable("emb", [4, 1], partitioner=tf.fixed_size_partitioner(2))
        from flowgraph.train import slot_creator

        first, second = list(emb)
        s = slot_creator.create_slot_with_initializer(first, tf.zeros_initializer(),
                                                      [], tf.float32, "Count")
        v = slot_creator.create_slot_with_initializer(second, tf.zeros_initializer(),
                                                      [2], tf.float32, "Row")
        assert s._save_slice_info is None
        info = v._save_slice_info
        assert (info.full_name, info.full_shape, info.var_offset, info.var_shape) == (
            "emb/Row", [4], [2], [2])


# -- the checkpoint equals TensorFlow's ------------------------------------------------------
@pytest.mark.parametrize("optimizer", ["Adam", "Ftrl"])
def test_saved_checkpoint_equals_tensorflows(tmp_path, optimizer):
    prefix = _train_emb(optimizer, str(tmp_path))
    fixture = os.path.join(DATA, f"partitioned_slots_{optimizer.lower()}", "model.ckpt")
    with open(prefix + ".index", "rb") as ours, open(fixture + ".index", "rb") as theirs:
        assert read_table(ours.read()) == read_table(theirs.read())  # keys, slices, CRCs
    data = ".data-00000-of-00001"
    with open(prefix + data, "rb") as ours, open(fixture + data, "rb") as theirs:
        assert ours.read() == theirs.read()  # TF's order: by name, parts by offset
    slot = "Adam" if optimizer == "Adam" else "Ftrl"
    assert tf.train.list_variables(prefix)[-3:] == [
        ("emb", [4, 1]), (f"emb/{slot}", [4, 1]), (f"emb/{slot}_1", [4, 1])]


def test_meta_graph_slice_infos_equal_tensorflows(tmp_path):
    prefix = _train_emb("Adam", str(tmp_path))
    found = {}
    for raw in read_meta_graph_file(prefix + ".meta").collection_def[
            "variables"].bytes_list.value:
        vd = VariableDefProto.FromString(raw)
        if vd.save_slice_info_def is not None:
            found[vd.variable_name] = vd.save_slice_info_def.SerializeToString()
    found = {k: v for k, v in found.items() if v}
    assert found == {  # TF 2.15's .meta
        "emb/part_0:0": b'\n\x03emb\x12\x02\x04\x01\x1a\x02\x00\x00"\x02\x02\x01',
        "emb/part_1:0": b'\n\x03emb\x12\x02\x04\x01\x1a\x02\x02\x00"\x02\x02\x01',
        "emb/part_0/Adam:0": b'\n\x08emb/Adam\x12\x02\x04\x01\x1a\x02\x00\x00"\x02\x02\x01',
        "emb/part_0/Adam_1:0": b'\n\nemb/Adam_1\x12\x02\x04\x01\x1a\x02\x00\x00"\x02\x02\x01',
        "emb/part_1/Adam:0": b'\n\x08emb/Adam\x12\x02\x04\x01\x1a\x02\x02\x00"\x02\x02\x01',
        "emb/part_1/Adam_1:0": b'\n\nemb/Adam_1\x12\x02\x04\x01\x1a\x02\x02\x00"\x02\x02\x01'}


def test_one_part_covering_the_whole_is_saved_whole(tmp_path):
    with tf.Graph().as_default():
        _emb_graph("Adagrad", parts=1)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            prefix = saver.save(sess, str(tmp_path / "m"))
    with open(prefix + ".index", "rb") as f:
        keys = [k for k, _ in read_table(f.read())]
    assert keys == [b"", b"emb", b"emb/Adagrad"]  # no slice keys, as TF writes it


# -- restoring any partitioning from any other -----------------------------------------------
TF_ADAM = {  # TF 2.15's values in the partitioned_slots_adam fixture
    "emb": [[0.9], [0.9], [0.9], [0.9]],
    "emb/Adam": [[0.1], [0.2], [0.3], [0.4]],
    "emb/Adam_1": [[0.001], [0.004], [0.009], [0.016]]}


@pytest.mark.parametrize("parts", [None, 1, 3, 4])
def test_tensorflows_partitioned_slots_restore_into_any_partitioning(parts):
    prefix = os.path.join(DATA, "partitioned_slots_adam", "model.ckpt")
    with tf.Graph().as_default():
        emb, _ = _emb_graph("Adam", parts)
        opt_vars = [v for v in tf.global_variables() if "Adam" in v.op.name]
        saver = tf.train.Saver()
        with tf.Session() as sess:
            saver.restore(sess, prefix)
            np.testing.assert_allclose(sess.run(tf.convert_to_tensor(emb)), TF_ADAM["emb"],
                                       rtol=1e-6)
            for slot in ("Adam", "Adam_1"):
                values = [sess.run(v) for v in opt_vars if v.op.name.endswith("/" + slot)]
                np.testing.assert_allclose(np.concatenate(values), TF_ADAM[f"emb/{slot}"],
                                           rtol=1e-4)


def test_a_partitioned_slot_restores_into_a_whole_variable_and_back(tmp_path):
    prefix = os.path.join(DATA, "partitioned_slots_adam", "model.ckpt")
    with tf.Graph().as_default():
        whole = tf.get_variable("m", [4, 1])
        with tf.Session() as sess:
            tf.train.Saver({"emb/Adam": whole}).restore(sess, prefix)
            np.testing.assert_allclose(sess.run(whole), TF_ADAM["emb/Adam"], rtol=1e-6)
            saved = tf.train.Saver({"emb/Adam": whole}).save(sess, str(tmp_path / "whole"))
    with tf.Graph().as_default():
        parts = tf.get_variable("p", [4, 1], partitioner=tf.fixed_size_partitioner(3))
        with tf.Session() as sess:
            tf.train.Saver({"emb/Adam": parts}).restore(sess, saved)
            np.testing.assert_allclose(sess.run(tf.convert_to_tensor(parts)),
                                       TF_ADAM["emb/Adam"], rtol=1e-6)


def test_get_slice_assembles_a_region_across_saved_slices():
    reader = BundleReader(os.path.join(DATA, "partitioned_slots_adam", "model.ckpt"))
    np.testing.assert_allclose(reader.get_slice("emb/Adam_1", [1, 0], [2, 1]),
                               [[0.004], [0.009]], rtol=1e-4)
    assert reader.get_slice("emb/Adam", [3, 0], [0, 1]).shape == (0, 1)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"region 3,2:0,1 does not fit"):
        reader.get_slice("emb/Adam", [3, 0], [2, 1])


# -- slices that do not cover a region are refused -------------------------------------------
LINEAR = os.path.join(DATA, "partitioned_linear_classifier", "model.ckpt-3")
PART_SLOT = "linear/linear_model/c/weights/part_1/Ftrl"  # [4, 1], only rows 2-3 saved


def test_a_region_the_saved_slices_miss_is_refused_naming_file_key_and_region():
    with tf.Graph().as_default():
        v = tf.get_variable("v", [4, 1])
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError) as info:
            tf.train.Saver({PART_SLOT: v}).restore(sess, LINEAR)
    message = str(info.value)
    assert "does not have sufficient slices" in message and PART_SLOT in message
    assert "model.ckpt-3" in message and "0,4:0,1" in message and "2,2:0,1" in message
    # the part that was saved restores; TF's reader refuses the whole with a ValueError
    np.testing.assert_allclose(BundleReader(LINEAR).get_slice(PART_SLOT, [2, 0], [2, 1]),
                               [[0.6876267], [0.1]], rtol=1e-6)
    with pytest.raises(ValueError, match="sufficient slices"):
        tf.train.load_variable(LINEAR, PART_SLOT)


def _forged(tmp_path, full: int, start: int, length: int, part_rows: int) -> str:
    prefix = str(tmp_path / "forged")
    data = np.zeros(part_rows, np.float32).tobytes()
    part = BundleEntryProto(dtype=1, shape=TensorShapeProto(dim=[TensorShapeProto.Dim(
        size=part_rows)]), size=len(data))
    entry = BundleEntryProto(dtype=1, shape=TensorShapeProto(dim=[TensorShapeProto.Dim(
        size=full)]), slices=[write_slice([start], [length])])
    with open(os.path.join(DATA, "partitioned_slots_adam", "model.ckpt.index"), "rb") as f:
        header = read_table(f.read())[0]  # TF's header entry
    table = write_table([header, (b"w", entry.SerializeToString()),
                         (slice_key("w", [start], [length]), part.SerializeToString())])
    with open(prefix + ".index", "wb") as f:
        f.write(table)
    with open(prefix + ".data-00000-of-00001", "wb") as f:
        f.write(data)
    return prefix


def test_declared_sizes_are_checked_before_anything_is_allocated(tmp_path):
    # a slice past the end of the full shape
    with pytest.raises(tf.errors.DataLossError, match="does not fit shape"):
        BundleReader(_forged(tmp_path, 4, 3, 4, 4)).get_tensor("w")
    # a full shape of 10**12 "covered" by a slice whose part holds 2 values: refused
    # when the part is checked, never allocated
    with pytest.raises(tf.errors.DataLossError, match="slice's shape"):
        BundleReader(_forged(tmp_path, 10**12, 0, 10**12, 2)).get_tensor("w")


def test_older_flowgraph_checkpoints_with_whole_slot_entries_still_restore(tmp_path):
    from flowgraph.framework.tf_formats.bundle import write_bundle

    prefix = str(tmp_path / "old")
    write_bundle(prefix, {"emb/part_0/Adagrad": np.full((2, 1), 3.0, np.float32),
                          "emb/part_1/Adagrad": np.full((2, 1), 4.0, np.float32)},
                 {"emb": ([4, 1], [([0, 0], np.ones((2, 1), np.float32)),
                                   ([2, 0], np.ones((2, 1), np.float32))])})
    with tf.Graph().as_default():
        _emb_graph("Adagrad")
        slots = [v for v in tf.global_variables() if v.op.name.endswith("Adagrad")]
        with tf.Session() as sess:
            tf.train.Saver().restore(sess, prefix)
            assert [sess.run(v).ravel().tolist() for v in slots] == [[3, 3], [4, 4]]


# -- the canned linear model: TF's layout, and training continues across frameworks ----------
def _columns():
    fc = tf.feature_column
    return [fc.numeric_column("x", shape=[2]),
            fc.categorical_column_with_vocabulary_list("c", ["a", "b", "c", "d"])]


X = np.arange(12, dtype=np.float32).reshape(6, 2) / 10.0
C = np.array(["a", "b", "c", "a", "b", "z"])
Y = np.array([0, 1, 0, 1, 1, 0])


def _linear(model_dir, partitioner=None):
    return tf.estimator.LinearClassifier(_columns(), model_dir=model_dir,
                                         partitioner=partitioner,
                                         optimizer=tf.train.FtrlOptimizer(0.3))


def _train(est, steps):
    est.train(tf.estimator.inputs.numpy_input_fn({"x": X, "c": C}, Y, batch_size=6,
                                                 num_epochs=None, shuffle=False), steps=steps)


def _loss(est):
    return est.evaluate(tf.estimator.inputs.numpy_input_fn(
        {"x": X, "c": C}, Y, batch_size=6, num_epochs=1, shuffle=False))["loss"]


def _layout(prefix):
    with open(prefix + ".index", "rb") as f:
        out = {}
        for key, raw in read_table(f.read())[1:]:
            e = BundleEntryProto.FromString(raw)
            out[key] = ([d.size for d in e.shape.dim], list(e.slices))
        return out


def test_training_continues_from_tensorflows_partitioned_linear_checkpoint(tmp_path):
    model_dir = str(tmp_path / "m")
    shutil.copytree(os.path.dirname(LINEAR), model_dir)
    est = _linear(model_dir, tf.fixed_size_partitioner(2))
    _train(est, 1)  # restores TF's partitioned slots
    assert est.get_variable_value("global_step") == 4
    # TF 2.15, one more step from the same checkpoint
    assert _loss(est) == pytest.approx(3.23959, abs=1e-5)
    np.testing.assert_allclose(est.get_variable_value("linear/linear_model/c/weights").ravel(),
                               [0.03245, 0.748031, -0.688001, 0.0], atol=1e-5)
    np.testing.assert_allclose(est.get_variable_value("linear/linear_model/x/weights").ravel(),
                               [0.075997, 0.04422], atol=1e-5)


def test_canned_linear_checkpoint_has_tensorflows_keys_and_slices(tmp_path):
    est = _linear(str(tmp_path), tf.fixed_size_partitioner(2))
    _train(est, 3)
    assert _layout(est.latest_checkpoint()) == _layout(LINEAR)  # TF's keys, shapes, slices
    assert _loss(est) == pytest.approx(3.3757, abs=1e-4)
    slots = [v for v in est.get_variable_names() if v.endswith("Ftrl")]
    assert slots == ["linear/linear_model/bias_weights/part_0/Ftrl",
                     "linear/linear_model/c/weights/part_0/Ftrl",
                     "linear/linear_model/c/weights/part_1/Ftrl",
                     "linear/linear_model/x/weights/part_0/Ftrl",
                     "linear/linear_model/x/weights/part_1/Ftrl"]


def test_unpartitioned_canned_linear_uses_tensorflows_default_partitioner(tmp_path):
    est = _linear(str(tmp_path))
    _train(est, 3)
    shapes = dict(tf.train.list_variables(str(tmp_path)))
    # TF 2.15: one part per variable, saved whole, slots keyed by the part
    assert sorted(shapes) == [
        "global_step", "linear/linear_model/bias_weights",
        "linear/linear_model/bias_weights/part_0/Ftrl",
        "linear/linear_model/bias_weights/part_0/Ftrl_1", "linear/linear_model/c/weights",
        "linear/linear_model/c/weights/part_0/Ftrl",
        "linear/linear_model/c/weights/part_0/Ftrl_1", "linear/linear_model/x/weights",
        "linear/linear_model/x/weights/part_0/Ftrl", "linear/linear_model/x/weights/part_0/Ftrl_1"]
    assert not any(k.startswith(b"\x00") for k in _layout(est.latest_checkpoint()))
    assert glob.glob(str(tmp_path / "*.meta"))


def test_slots_saved_at_the_root_restore_into_a_scoped_optimizer(tmp_path):
    """Before session 15 flowgraph named a slot made inside a variable scope at the root
    (``dense/kernel/Adam``); TF's name, now flowgraph's, has the scope
    (``opt/dense/kernel/Adam``). Such checkpoints still restore."""
    path = str(tmp_path / "model.ckpt")
    with tf.Graph().as_default():
        w = tf.get_variable("dense/kernel", initializer=tf.constant([[1.0, 2.0]]))
        with tf.variable_scope("opt"):
            train = tf.train.AdamOptimizer(0.1).minimize(tf.reduce_sum(w * w))
        slots = {v.op.name: v for v in tf.global_variables() if v.op.name.endswith("Adam")
                 or v.op.name.endswith("Adam_1")}
        assert sorted(slots) == ["opt/dense/kernel/Adam", "opt/dense/kernel/Adam_1"]
        # the old layout: slots keyed at the root
        legacy = {name.split("/", 1)[1]: v for name, v in slots.items()}
        others = {v.op.name: v for v in tf.global_variables() if v.op.name not in slots}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train)
            want = sess.run(slots["opt/dense/kernel/Adam"])
            tf.train.Saver({**legacy, **others}).save(sess, path)
        with tf.Session() as sess:
            tf.train.Saver().restore(sess, path)
            np.testing.assert_array_equal(sess.run(slots["opt/dense/kernel/Adam"]), want)
