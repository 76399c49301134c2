"""Importing a TF-written meta graph with a while loop: its `while_context` collection
(WhileContextDef messages, not variables) is skipped without a warning."""

import logging
from pathlib import Path

import flowgraph as tf
from flowgraph.train import meta_graph_import

MODEL = Path(__file__).parents[1] / "data" / "tf_formats" / "tf215_models" / "while_loop"


def _import_logs(tmp_path, caplog) -> list:
    with tf.Graph().as_default(), tf.Session() as sess:
        mg = tf.saved_model.loader.load(sess, ["serve"], str(MODEL))
    meta = tmp_path / "loop.meta"
    meta.write_bytes(mg.SerializeToString())
    assert "while_context" in mg.collection_def
    caplog.clear()
    with caplog.at_level(logging.WARNING), tf.Graph().as_default():
        tf.train.import_meta_graph(str(meta))
    return [r.getMessage() for r in caplog.records if "left out" in r.getMessage()]


def test_loop_contexts_are_skipped_quietly(tmp_path, caplog):
    assert _import_logs(tmp_path, caplog) == []


def test_without_the_skip_the_contexts_would_be_reported(tmp_path, caplog, monkeypatch):
    monkeypatch.setattr(meta_graph_import, "_CONTROL_FLOW_CONTEXTS", frozenset())
    assert any("while_context" in m for m in _import_logs(tmp_path, caplog))
