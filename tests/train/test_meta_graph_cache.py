"""The process-wide cache of serialized ``.meta`` files (train/meta_graph_export.py,
`meta_graph_bytes`): bytes reused for a graph of the same content, never for another."""

import pytest

import flowgraph as tf


def test_meta_bytes_of_a_graph_built_again_come_from_the_cache():
    """Each Estimator.train call builds its graph again and writes it with every
    checkpoint: a graph with the same content reuses the bytes; another one does not."""
    from flowgraph.train import meta_graph_export as export_lib

    def build(scale):
        with tf.Graph().as_default() as g:
            v = tf.Variable([1.0, 2.0], name="v")
            tf.add_to_collection("outputs", tf.multiply(v, scale, name="y"))
            saver = tf.train.Saver()
        return g, saver

    g1, s1 = build(2.0)
    first = export_lib.meta_graph_bytes(g1, s1.saver_def)
    assert first == export_lib.export_meta_graph(graph=g1,
                                                 saver_def=s1.saver_def).SerializeToString()
    before = export_lib.meta_graph_cache_stats()
    g2, s2 = build(2.0)
    assert export_lib.meta_graph_bytes(g2, s2.saver_def) == first
    after = export_lib.meta_graph_cache_stats()
    assert after["hits"] == before["hits"] + 1
    g3, s3 = build(3.0)  # another constant: other bytes
    third = export_lib.meta_graph_bytes(g3, s3.saver_def)
    assert third != first
    assert third == export_lib.export_meta_graph(graph=g3,
                                                 saver_def=s3.saver_def).SerializeToString()
    with g3.as_default():  # a collection item more: other bytes
        tf.add_to_collection("outputs", tf.constant(1.0, name="z"))
    assert export_lib.meta_graph_bytes(g3, s3.saver_def) != third


def test_estimator_checkpoints_write_the_meta_graph_once_per_content(tmp_path, monkeypatch):
    from flowgraph import estimators
    from flowgraph.train import meta_graph_export as export_lib

    exports = []
    real = export_lib.export_meta_graph
    monkeypatch.setattr(export_lib, "export_meta_graph",
                        lambda *a, **k: exports.append(1) or real(*a, **k))

    def model_fn(features, labels, mode):
        w = tf.Variable(1.0, name="w")
        loss = tf.square(w - 3.0)
        step = tf.train.get_or_create_global_step()
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
        return estimators.EstimatorSpec(mode, loss=loss, train_op=train)

    def input_fn():
        return tf.constant([1.0]), tf.constant([1.0])

    est = estimators.Estimator(model_fn, model_dir=str(tmp_path))
    est.train(input_fn, steps=3)  # two checkpoints (steps 0 and 3), one export
    est.train(input_fn, steps=3)  # a new graph, the same content: no export
    assert len(exports) == 1
    metas = sorted(p.name for p in tmp_path.glob("*.meta"))
    assert metas == ["model.ckpt-0.meta", "model.ckpt-3.meta", "model.ckpt-6.meta"]
    assert len({(tmp_path / m).read_bytes() for m in metas}) == 1


@pytest.mark.slow
def test_numpy_input_fn_graphs_built_again_hit_both_caches(tmp_path, monkeypatch):
    """`numpy_input_fn` registers its arrays under a key kept in the graph: the smallest
    free key, so each `train` call's graph has the same content as the last one and
    neither the `.meta` file nor the graph event is serialized again."""
    import gc

    import numpy as np

    from flowgraph import estimators
    from flowgraph.summary import writer as writer_lib
    from flowgraph.train import meta_graph_export as export_lib

    exports, events = [], []
    real_export, real_proto = export_lib.export_meta_graph, writer_lib.graph_def_proto
    monkeypatch.setattr(export_lib, "export_meta_graph",
                        lambda *a, **k: exports.append(1) or real_export(*a, **k))
    monkeypatch.setattr(writer_lib, "graph_def_proto",
                        lambda *a, **k: events.append(1) or real_proto(*a, **k))

    x = np.arange(8, dtype=np.float32).reshape(8, 1)
    input_fn = estimators.inputs.numpy_input_fn({"x": x}, x * 2.0, batch_size=4,
                                                num_epochs=None, shuffle=False)

    def model_fn(features, labels, mode):
        w = tf.Variable([[0.5]], name="w")
        loss = tf.reduce_mean(tf.square(tf.matmul(features["x"], w) - labels))
        step = tf.train.get_or_create_global_step()
        train = tf.train.GradientDescentOptimizer(0.01).minimize(loss, global_step=step)
        return estimators.EstimatorSpec(mode, loss=loss, train_op=train)

    est = estimators.Estimator(model_fn, model_dir=str(tmp_path))
    gc.collect()  # earlier tests' graphs gone: both calls find the same free key
    est.train(input_fn, steps=2)
    gc.collect()
    est.train(input_fn, steps=2)
    # The first call serializes two graph events, as TensorFlow writes them: the cached
    # FileWriter's (made in a hook's begin) and the CheckpointSaverHook's finished graph;
    # the second call, none.
    assert (len(exports), len(events)) == (1, 2)
    assert est.get_variable_value("global_step") == 4


def test_a_finalized_graph_changed_in_place_gets_new_bytes():
    """After `finalize()` a collection can still be changed through its reference and a
    tensor's shape refined: the bytes are always those of a fresh export (the key is
    the content, never stale)."""
    from flowgraph.train import meta_graph_export as export_lib

    with tf.Graph().as_default() as g:
        v = tf.Variable([1.0, 2.0], name="v")
        x = tf.placeholder(tf.float32, None, name="x")
        y = tf.multiply(v, 2.0, name="y")
        tf.add_to_collection("outputs", y)
        saver = tf.train.Saver()
    g.finalize()
    first = export_lib.meta_graph_bytes(g, saver.saver_def)
    g.get_collection_ref("outputs")[0] = v.initializer  # same length, another item
    second = export_lib.meta_graph_bytes(g, saver.saver_def)
    assert second != first
    assert second == export_lib.export_meta_graph(
        graph=g, saver_def=saver.saver_def).SerializeToString()
    x.set_shape([2])
    assert export_lib.meta_graph_bytes(g, saver.saver_def) == export_lib.export_meta_graph(
        graph=g, saver_def=saver.saver_def).SerializeToString()


def test_saver_meta_follows_a_collection_item_replaced_on_a_finalized_graph(tmp_path):
    """The same number of collection items, one of them another tensor: the next save's
    `.meta` names the new one (a saver-level cache keyed by counts served stale bytes)."""
    with tf.Graph().as_default() as g:
        v = tf.Variable([1.0, 2.0], name="v")
        first, second = tf.multiply(v, 2.0, name="first"), tf.multiply(v, 3.0, name="second")
        tf.add_to_collection("outputs", first)
        saver = tf.train.Saver()
        init = tf.global_variables_initializer()
    g.finalize()
    with tf.Session(graph=g) as sess:
        sess.run(init)
        path1 = saver.save(sess, str(tmp_path / "a"), global_step=1)
        g.get_collection_ref("outputs")[0] = second
        path2 = saver.save(sess, str(tmp_path / "a"), global_step=2)
    names = []
    for path in (path1, path2):
        with tf.Graph().as_default():
            tf.train.import_meta_graph(path + ".meta")
            names.append([t.name for t in tf.get_collection("outputs")])
    assert names == [["first:0"], ["second:0"]]
