"""`tf.contrib.opt`, `tf.contrib.learn.preprocessing`, `tf.contrib.predictor`,
`tf.contrib.estimator` and `tf.contrib.data`: each checked against a NumPy reference or
TF1's documented behaviour (TF 2.15 has no contrib to run)."""

import json
import subprocess
import sys

import numpy as np
import pytest

import flowgraph as tf


def _adam_reference(w, grads, lr, wd, b1=0.9, b2=0.999, eps=1e-8, rows=None, lazy=False):
    """AdamW (decay, then Adam on the decayed value), LazyAdam when `lazy` (only `rows`)."""
    w = w.astype(np.float64).copy()
    m, v = np.zeros_like(w), np.zeros_like(w)
    for t, g in enumerate(grads, start=1):
        g = g.astype(np.float64)
        lr_t = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        if lazy:
            idx = rows
            m[idx] = b1 * m[idx] + (1 - b1) * g[idx]
            v[idx] = b2 * v[idx] + (1 - b2) * g[idx] ** 2
            w[idx] -= lr_t * m[idx] / (np.sqrt(v[idx]) + eps)
            continue
        w -= wd * w
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        w -= lr_t * m / (np.sqrt(v) + eps)
    return w


def test_adamw_matches_reference_and_respects_decay_var_list():
    init = np.array([[1.0, -2.0], [0.5, 3.0]], np.float32)
    target = np.array([[0.0, 1.0], [1.0, 0.0]], np.float32)
    with tf.Graph().as_default():
        w = tf.Variable(init)
        b = tf.Variable([1.0, 1.0])
        loss = tf.reduce_sum(tf.square(w - target)) + tf.reduce_sum(b)
        opt = tf.contrib.opt.AdamWOptimizer(weight_decay=0.01, learning_rate=0.1)
        step = opt.minimize(loss, decay_var_list=[w])
        grads = []
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                grads.append(2 * (sess.run(w) - target))
                sess.run(step)
            got_w, got_b = sess.run([w, b])
    np.testing.assert_allclose(got_w, _adam_reference(init, grads, 0.1, 0.01), rtol=2e-6)
    # b is not in decay_var_list: plain Adam (gradient 1 each step)
    np.testing.assert_allclose(got_b, _adam_reference(np.ones(2, np.float32),
                                                      [np.ones(2)] * 3, 0.1, 0.0), rtol=2e-6)


def test_momentumw_decays_then_steps():
    with tf.Graph().as_default():
        w = tf.Variable([2.0])
        step = tf.contrib.opt.MomentumWOptimizer(0.5, learning_rate=0.1,
                                                 momentum=0.9).minimize(tf.reduce_sum(w))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(step)
            # decay: 2 - 0.5 * 2 = 1; momentum step: 1 - 0.1 * 1
            np.testing.assert_allclose(sess.run(w), [0.9], rtol=1e-6)


def test_lazy_adam_touches_only_gradient_rows():
    init = np.arange(8, dtype=np.float32).reshape(4, 2)
    with tf.Graph().as_default():
        emb = tf.Variable(init)
        loss = tf.reduce_sum(tf.nn.embedding_lookup(emb, [1, 3, 1]) * 2.0)
        opt = tf.contrib.opt.LazyAdamOptimizer(0.05)
        step = opt.minimize(loss)
        plain = tf.Variable(init)
        plain_step = tf.train.AdamOptimizer(0.05).minimize(
            tf.reduce_sum(tf.nn.embedding_lookup(plain, [1, 3, 1]) * 2.0))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(2):
                sess.run([step, plain_step])
            got, m_slot = sess.run([emb, opt.get_slot(emb, "m")])
    grad = np.zeros_like(init)
    grad[1], grad[3] = 4.0, 2.0  # row 1 looked up twice
    want = _adam_reference(init, [grad, grad], 0.05, 0.0, rows=[1, 3], lazy=True)
    np.testing.assert_allclose(got, want, rtol=2e-6)
    assert (got[[0, 2]] == init[[0, 2]]).all() and (m_slot[[0, 2]] == 0).all()


def test_vocabulary_processor_tokenizes_pads_and_trims():
    vp_cls = tf.contrib.learn.preprocessing.VocabularyProcessor
    docs = ["I love TF's graphs", "NASA likes CamelCase words", "graphs graphs love"]
    tokens = list(tf.contrib.learn.preprocessing.tokenizer(docs))
    assert tokens == [["I", "love", "TF", "'s", "graphs"],
                      ["NASA", "likes", "Camel", "Case", "words"],
                      ["graphs", "graphs", "love"]]
    vp = vp_cls(max_document_length=4)
    rows = np.array(list(vp.fit_transform(docs)))
    assert rows.dtype == np.int64 and rows.tolist() == [[1, 2, 3, 4], [6, 7, 8, 9],
                                                        [5, 5, 2, 0]]
    assert next(vp.transform(["love unseen"])).tolist() == [2, 0, 0, 0]
    assert list(vp.reverse([[5, 2, 0, 0]])) == ["graphs love <UNK> <UNK>"]
    trimmed = vp_cls(max_document_length=3, min_frequency=1)
    trimmed.fit(docs)
    # seen more than once, by decreasing count: graphs (3), love (2)
    assert len(trimmed.vocabulary_) == 3
    assert next(trimmed.transform(["love graphs NASA"])).tolist() == [2, 1, 0]


def test_vocabulary_processor_saves_json_and_restores_in_a_fresh_process(tmp_path):
    vp = tf.contrib.learn.preprocessing.VocabularyProcessor(max_document_length=5)
    vp.fit(["the quick brown fox", "the lazy dog"])
    path = tmp_path / "vocab"
    vp.save(str(path))
    state = json.loads(path.read_text())
    assert state["categories"][:3] == ["the", "quick", "brown"]
    code = ("import flowgraph as tf; vp = tf.contrib.learn.preprocessing.VocabularyProcessor"
            f".restore({str(path)!r}); print(next(vp.transform(['the lazy cat'])).tolist())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[1, 5, 0, 0, 0]"
    path.write_text("not json")
    with pytest.raises(ValueError, match="is not a saved VocabularyProcessor"):
        tf.contrib.learn.preprocessing.VocabularyProcessor.restore(str(path))


def test_predictor_from_saved_model_and_from_estimator(tmp_path):
    export_dir = str(tmp_path / "simple")
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        with tf.Session() as sess:
            tf.saved_model.simple_save(sess, export_dir, {"x": x},
                                       {"y": tf.reduce_sum(x, axis=1), "z": x * 2.0})
    predict_fn = tf.contrib.predictor.from_saved_model(export_dir, output_names=["y"])
    assert sorted(predict_fn.feed_tensors) == ["x"] and sorted(predict_fn.fetch_tensors) == ["y"]
    assert predict_fn({"x": [[1.0, 2.0]]})["y"].tolist() == [3.0]
    with pytest.raises(ValueError, match="Missing inputs"):
        predict_fn({})
    with pytest.raises(ValueError, match="Could not find signature def 'nope'"):
        tf.contrib.predictor.from_saved_model(export_dir, signature_def_key="nope")

    cols = [tf.feature_column.numeric_column("x", shape=[2])]
    est = tf.estimator.LinearRegressor(cols, model_dir=str(tmp_path / "est"))
    xs = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], np.float32)
    est.train(tf.estimator.inputs.numpy_input_fn({"x": xs}, np.array([1.0, 2.0, 3.0]),
                                                 shuffle=False, num_epochs=50), steps=50)

    def receiver():
        features = {"x": tf.placeholder(tf.float32, [None, 2], name="x")}
        return tf.estimator.export.ServingInputReceiver(features, features)

    # a regression head's default signature takes serialized examples: use "predict"
    from_est = tf.contrib.predictor.from_estimator(est, receiver, output_key="predict")
    got = from_est({"x": xs})["predictions"]
    want = np.array([p["predictions"] for p in est.predict(
        tf.estimator.inputs.numpy_input_fn({"x": xs}, shuffle=False))])
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_contrib_estimator_heads_forward_features_and_clipping(tmp_path):
    head = tf.contrib.estimator.multi_class_head(n_classes=3)
    assert head.logits_dimension == 3
    with pytest.raises(ValueError, match="Invalid loss_reduction"):
        tf.contrib.estimator.regression_head(loss_reduction=tf.losses.Reduction.MEAN)
    cols = [tf.feature_column.numeric_column("x", shape=[2])]
    opt = tf.contrib.estimator.clip_gradients_by_norm(tf.train.GradientDescentOptimizer(0.1),
                                                      1.0)
    est = tf.estimator.DNNEstimator(head=tf.contrib.estimator.regression_head(),
                                    hidden_units=[4], feature_columns=cols, optimizer=opt,
                                    model_dir=str(tmp_path))
    xs = np.array([[1.0, 0.0], [0.0, 1.0]], np.float32)
    data = {"x": xs, "id": np.array([7, 9])}
    est.train(tf.estimator.inputs.numpy_input_fn(data, np.array([1.0, 2.0]), shuffle=False,
                                                 num_epochs=5), steps=5)
    forwarded = tf.contrib.estimator.forward_features(est, "id")
    preds = list(forwarded.predict(tf.estimator.inputs.numpy_input_fn(data, shuffle=False)))
    assert [int(p["id"]) for p in preds] == [7, 9] and "predictions" in preds[0]


def test_contrib_data_transformations():
    with tf.Graph().as_default():
        ds = tf.data.Dataset.range(7).apply(tf.contrib.data.batch_and_drop_remainder(3))
        nxt = ds.make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            batches = [sess.run(nxt).tolist() for _ in range(2)]
            with pytest.raises(tf.errors.OutOfRangeError):
                sess.run(nxt)
    assert batches == [[0, 1, 2], [3, 4, 5]]
    assert tf.contrib.data.map_and_batch is tf.data.experimental.map_and_batch


def test_legacy_seq2seq_decoder_and_losses_match_an_unrolled_cell():
    seq2seq = tf.contrib.legacy_seq2seq
    rs = np.random.RandomState(1)
    with tf.Graph().as_default():
        steps = [tf.constant(rs.rand(2, 3).astype(np.float32)) for _ in range(3)]
        cell = tf.nn.rnn_cell.BasicRNNCell(4)
        outputs, state = seq2seq.rnn_decoder(steps, cell.zero_state(2, tf.float32), cell)
        assert [v.op.name for v in tf.trainable_variables()] == [
            "rnn_decoder/basic_rnn_cell/kernel", "rnn_decoder/basic_rnn_cell/bias"]
        kernel, bias = tf.trainable_variables()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got, final, k, b, xs = sess.run([outputs, state, kernel, bias, steps])
        h = np.zeros((2, 4), np.float32)
        for x, out in zip(xs, got):
            h = np.tanh(np.concatenate([x, h], 1) @ k + b)
            np.testing.assert_allclose(out, h, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(final, h, rtol=1e-5, atol=1e-6)

    with tf.Graph().as_default():
        enc = [tf.ones([2, 3])] * 2
        dec = [tf.zeros([2, 3])] * 2
        outs, _ = seq2seq.basic_rnn_seq2seq(enc, dec, tf.nn.rnn_cell.GRUCell(5))
        names = sorted(v.op.name for v in tf.trainable_variables())
        assert len(outs) == 2 and outs[0].shape == (2, 5)
        assert names[0].startswith("basic_rnn_seq2seq/rnn/gru_cell/")
        assert any(n.startswith("basic_rnn_seq2seq/rnn_decoder/gru_cell/") for n in names)

    logit_values = [rs.randn(2, 4).astype(np.float32) for _ in range(3)]
    target_values = [np.array([1, 3]), np.array([0, 2]), np.array([2, 2])]
    weight_values = [np.array([1.0, 1.0], np.float32), np.array([1.0, 0.5], np.float32),
                     np.array([0.0, 1.0], np.float32)]
    with tf.Graph().as_default():
        logits = [tf.constant(v) for v in logit_values]
        targets = [tf.constant(v) for v in target_values]
        weights = [tf.constant(v) for v in weight_values]
        per_example = seq2seq.sequence_loss_by_example(logits, targets, weights)
        total = seq2seq.sequence_loss(logits, targets, weights)
        with tf.Session() as sess:
            got_per_example, got_total = sess.run([per_example, total])
        with pytest.raises(ValueError, match="Lengths of logits, weights, and targets"):
            seq2seq.sequence_loss(logits, targets[:2], weights)

    def xent(lg, t):
        lse = np.log(np.exp(lg - lg.max(1, keepdims=True)).sum(1)) + lg.max(1)
        return lse - lg[np.arange(len(t)), t]

    want = sum(xent(lg, t) * w for lg, t, w in zip(logit_values, target_values, weight_values))
    want = want / (sum(weight_values) + 1e-12)
    np.testing.assert_allclose(got_per_example, want, rtol=1e-5)
    np.testing.assert_allclose(got_total, want.sum() / 2, rtol=1e-5)
