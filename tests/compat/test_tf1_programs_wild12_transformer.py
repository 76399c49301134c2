"""TF1 Transformer / BERT / seq2seq-era NLP programs, sweep 12 (area ``transformer``), run
under TensorFlow 2.15 and flowgraph with the tf-oracle; TensorFlow's printed values are
inline.

The programs (2017-2019 style): a one-layer BERT in the style of the original
``modeling.py``/``optimization.py`` (one-hot embedding lookup, position embeddings,
``tf.contrib.layers.layer_norm``, reshape/transpose multi-head attention with a
``-10000`` mask, tanh and erf gelu, ``tf.layers.dense`` with truncated_normal(0.02),
seeded dropout, a pooler, an ``AdamWeightDecayOptimizer`` subclassing
``tf.train.Optimizer`` with ``_get_variable_name`` and ``tf.get_variable`` slots, warmup
plus ``polynomial_decay``, ``clip_by_global_norm``); a tensor2tensor-style encoder block
(sinusoidal positional encoding, ``sequence_mask`` attention bias, ``tf.einsum`` heads,
``tf.keras.layers.LayerNormalization``, label-smoothed one-hot cross entropy and
``tf.losses.softmax_cross_entropy(label_smoothing=)``, ``tf.gather(batch_dims=)``, a Noam
learning rate, summaries and a Saver); BERT's ``get_assignment_map_from_checkpoint`` with
``tf.train.list_variables``/``load_checkpoint``/``init_from_checkpoint`` over ref and
resource variables and ``embedding_lookup(max_norm=)``; greedy and beam decoding with
``tf.while_loop``, ``TensorArray``, ``tf.nn.top_k`` and shape invariants; a LAMB-like
optimizer overriding ``_prepare``/``_create_slots``/``_apply_dense``/
``_resource_apply_dense``/``_apply_sparse``/``_resource_apply_sparse`` over ref and
resource variables; a bidirectional-LSTM seq2seq with teacher forcing through
``dynamic_rnn`` and Luong attention; the contrib layer norm next to Keras'; and a
run_classifier-style Estimator fine-tuning from a pre-trained checkpoint
(``init_from_checkpoint`` inside ``model_fn``, seeded dropout, clipped Adam, eval
metrics, predictions).

Left as is (TensorFlow's executor order, which flowgraph does not reproduce):

* BERT's own ``tf.group(train_op, [global_step.assign(global_step + 1)])`` gives the
  step increment no order against the learning-rate read; TensorFlow 2.15 reads the
  ``int64`` step after the increment (the first step sees ``lr = 0.00333``, not ``0``),
  flowgraph before it. The programs below order the increment after the update
  (``control_dependencies``), as most forks of ``optimization.py`` do.
* A seeded random op inside a loop draws its stream in TensorFlow's run order, which
  TensorFlow's thread timing decides: a ``random_uniform([2], seed=4)`` next to an
  accumulator in a ``while_loop`` drew in step order in two TF runs and newest-first in
  one (flowgraph: newest-first). The ``DropoutWrapper`` in the seq2seq program below
  matches (session 22's executor change, ``FLAG_IN_ORDER``).
* ``tf.gradients`` followed by ``apply_gradients`` (BERT's ``optimization.py``) does not
  gate: TensorFlow may update a ref variable in place before the backward pass has read
  it for a lower layer's gradient (one Adam step moved ``dense/kernel[0, 0]`` to
  ``0.04022`` under TensorFlow, ``-0.01667`` under both once the gradients are gated or
  the variable is fetched in the same run). flowgraph always orders the updates after
  the gradients they are given; the Estimator program uses ``compute_gradients``.

Classes of discrepancy found and fixed (one focused test each below):

* ``tf.train.Optimizer`` subclasses: flowgraph sent every variable to ``_apply_dense``/
  ``_apply_sparse``; TensorFlow sends resource variables to ``_resource_apply_dense`` and
  ``_resource_apply_sparse_duplicate_indices`` (values, handle, indices), and a program's
  own ``_apply_sparse``/``_resource_apply_sparse`` gets the repeated rows summed first
  (``Unique`` + ``UnsortedSegmentSum`` in the update scope). A subclass without
  ``_resource_apply_dense`` raises ``NotImplementedError`` for a resource variable;
  subclasses of flowgraph's own optimizers keep their fused updates.
* ``init_from_checkpoint``: a ref variable's ``initializer`` is the ``Assign`` output
  tensor (``Assign:0``) as in TensorFlow; the "scope only" error names the scope part of
  the current name.
* ``TensorArray.concat`` asks for the array's size (a ``Const`` for a fixed size, a
  ``TensorArraySizeV3`` op for a dynamic one) to set dim 0, as TensorFlow does, so the
  ops after it are numbered as TensorFlow numbers them; with a rank-known element shape
  the static shape is ``(?, ...)`` for dynamic arrays.
* An incompatible ``shape_invariants`` entry raised flowgraph's own wording; it now reads
  as TensorFlow's ("The shape invariant specified for Tile:0 is not compatible with the
  initial shape of the loop variable. It enters the loop with shape (?, 6), ...").
"""

from __future__ import annotations

import collections
import math
import os
import re

import numpy as np
import pytest

import flowgraph as tf


def _ti(r=0.02):
    return tf.truncated_normal_initializer(stddev=r)


def _layer_norm(x, name=None):
    return tf.contrib.layers.layer_norm(inputs=x, begin_norm_axis=-1, begin_params_axis=-1,
                                        scope=name)


class AdamWeightDecayOptimizer(tf.train.Optimizer):
    """BERT's optimizer, as programs copied it from ``optimization.py``."""

    def __init__(self, learning_rate, weight_decay_rate=0.0, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-6, exclude_from_weight_decay=None,
                 name="AdamWeightDecayOptimizer"):
        super().__init__(False, name)
        self.learning_rate = learning_rate
        self.weight_decay_rate = weight_decay_rate
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon
        self.exclude_from_weight_decay = exclude_from_weight_decay

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        assignments = []
        for grad, param in grads_and_vars:
            if grad is None or param is None:
                continue
            param_name = self._get_variable_name(param.name)
            m = tf.get_variable(name=param_name + "/adam_m", shape=param.shape.as_list(),
                                dtype=tf.float32, trainable=False,
                                initializer=tf.zeros_initializer())
            v = tf.get_variable(name=param_name + "/adam_v", shape=param.shape.as_list(),
                                dtype=tf.float32, trainable=False,
                                initializer=tf.zeros_initializer())
            next_m = tf.multiply(self.beta_1, m) + tf.multiply(1.0 - self.beta_1, grad)
            next_v = tf.multiply(self.beta_2, v) + tf.multiply(1.0 - self.beta_2,
                                                               tf.square(grad))
            update = next_m / (tf.sqrt(next_v) + self.epsilon)
            if self._do_use_weight_decay(param_name):
                update += self.weight_decay_rate * param
            assignments.extend([param.assign(param - self.learning_rate * update),
                                m.assign(next_m), v.assign(next_v)])
        return tf.group(*assignments, name=name)

    def _do_use_weight_decay(self, param_name):
        if not self.weight_decay_rate:
            return False
        return not any(re.search(r, param_name) for r in self.exclude_from_weight_decay or [])

    def _get_variable_name(self, param_name):
        m = re.match("^(.*):\\d+$", param_name)
        return m.group(1) if m is not None else param_name


# -- one-layer BERT with BERT's optimizer ------------------------------------------------
def test_bert_layer_with_adam_weight_decay_warmup_and_global_norm_clipping():
    batch, seq, hid, heads, vocab = 2, 6, 8, 2, 20

    def gelu(x):
        return x * (0.5 * (1.0 + tf.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * tf.pow(x, 3)))))

    tf.set_random_seed(42)
    ids = tf.placeholder(tf.int32, [None, seq], name="input_ids")
    mask = tf.placeholder(tf.int32, [None, seq], name="input_mask")
    labels = tf.placeholder(tf.int32, [None], name="labels")
    with tf.variable_scope("bert"):
        with tf.variable_scope("embeddings"):
            table = tf.get_variable("word_embeddings", [vocab, hid], initializer=_ti())
            emb = tf.reshape(tf.matmul(tf.one_hot(tf.reshape(ids, [-1]), depth=vocab), table),
                             [-1, seq, hid])
            pos = tf.get_variable("position_embeddings", [16, hid], initializer=_ti())
            emb += tf.expand_dims(tf.slice(pos, [0, 0], [seq, -1]), 0)
            emb = tf.nn.dropout(_layer_norm(emb, name="LayerNorm"), rate=0.1, seed=1)
        assert (emb.name, emb.shape.as_list()) == ("bert/embeddings/dropout/SelectV2:0",
                                                   [None, 6, 8])
        am = tf.cast(tf.reshape(mask, [-1, 1, seq]), tf.float32)
        am = tf.ones([tf.shape(ids)[0], seq, 1]) * am
        with tf.variable_scope("encoder/layer_0/attention/self"):
            x2 = tf.reshape(emb, [-1, hid])
            q, k, v = (tf.layers.dense(x2, hid, name=n, kernel_initializer=_ti())
                       for n in ("query", "key", "value"))

            def heads_first(t):
                return tf.transpose(tf.reshape(t, [-1, seq, heads, hid // heads]),
                                    [0, 2, 1, 3])

            sc = tf.matmul(heads_first(q), heads_first(k), transpose_b=True) * (
                1.0 / math.sqrt(hid // heads))
            sc += (1.0 - tf.expand_dims(am, 1)) * -10000.0
            p = tf.nn.dropout(tf.nn.softmax(sc), keep_prob=0.9, seed=2)
            ctx = tf.reshape(tf.transpose(tf.matmul(p, heads_first(v)), [0, 2, 1, 3]),
                             [-1, hid])
        assert (ctx.name, sc.name, sc.shape.as_list()) == (
            "bert/encoder/layer_0/attention/self/Reshape_4:0",
            "bert/encoder/layer_0/attention/self/add:0", [None, 2, 6, 6])
        with tf.variable_scope("encoder/layer_0/attention/output"):
            ao = _layer_norm(tf.layers.dense(ctx, hid, kernel_initializer=_ti()) + x2)
        with tf.variable_scope("encoder/layer_0/intermediate"):
            it = tf.layers.dense(ao, 16, activation=gelu, kernel_initializer=_ti())
            it = it * 0.5 * (1.0 + tf.erf(it / tf.sqrt(2.0)))
        with tf.variable_scope("encoder/layer_0/output"):
            o = _layer_norm(tf.layers.dense(it, hid, kernel_initializer=_ti()) + ao)
        with tf.variable_scope("pooler"):
            first = tf.squeeze(tf.reshape(o, [-1, seq, hid])[:, 0:1, :], axis=1)
            pooled = tf.layers.dense(first, hid, activation=tf.tanh, kernel_initializer=_ti())
    ow = tf.get_variable("output_weights", [3, hid], initializer=_ti())
    ob = tf.get_variable("output_bias", [3], initializer=tf.zeros_initializer())
    logits = tf.nn.bias_add(tf.matmul(pooled, ow, transpose_b=True), ob)
    lp = tf.nn.log_softmax(logits, axis=-1)
    loss = tf.reduce_mean(-tf.reduce_sum(tf.one_hot(labels, 3, dtype=tf.float32) * lp, -1))
    assert (logits.name, lp.name) == ("BiasAdd:0", "LogSoftmax:0")

    global_step = tf.train.get_or_create_global_step()
    lr = tf.train.polynomial_decay(tf.constant(value=1e-2, shape=[], dtype=tf.float32),
                                   global_step, 10, end_learning_rate=0.0, power=1.0,
                                   cycle=False)
    gs_int, wi = tf.cast(global_step, tf.int32), tf.constant(3, dtype=tf.int32)
    warm_lr = 1e-2 * (tf.cast(gs_int, tf.float32) / tf.cast(wi, tf.float32))
    is_w = tf.cast(gs_int < wi, tf.float32)
    lr = (1.0 - is_w) * lr + is_w * warm_lr
    opt = AdamWeightDecayOptimizer(lr, weight_decay_rate=0.01,
                                   exclude_from_weight_decay=["LayerNorm", "layer_norm",
                                                              "bias"])
    tvars = tf.trainable_variables()
    grads, gn = tf.clip_by_global_norm(tf.gradients(loss, tvars), clip_norm=1.0)
    assert (lr.name, gn.name, grads[0].name) == (
        "add:0", "global_norm/global_norm:0", "clip_by_global_norm/clip_by_global_norm/_0:0")
    train_op = opt.apply_gradients(zip(grads, tvars), global_step=global_step)
    with tf.control_dependencies([train_op]):
        train_op = tf.group(train_op, [global_step.assign(global_step + 1)])
    assert (train_op.name, train_op.type) == ("group_deps_1", "NoOp")
    assert len(tf.global_variables()) == 73
    assert [v.name for v in tf.global_variables()][-4:] == [
        "output_weights/adam_m:0", "output_weights/adam_v:0", "output_bias/adam_m:0",
        "output_bias/adam_v:0"]
    rng = np.random.RandomState(0)
    feed = {ids: rng.randint(0, vocab, (batch, seq)),
            mask: np.array([[1] * 6, [1] * 4 + [0] * 2]), labels: np.array([0, 2])}
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        got = np.array([s.run([train_op, loss, gn, lr], feed)[1:] for _ in range(4)])
        np.testing.assert_allclose(got, [[1.09902, 0.42526, 0.0],
                                         [1.09967, 0.42598, 0.003333],
                                         [1.08131, 0.42814, 0.006667],
                                         [1.03255, 0.48629, 0.007]], atol=2e-5)
        np.testing.assert_allclose(
            s.run(pooled, feed)[0], [-0.23844, -0.52838, 0.57609, -0.09927, 0.31867,
                                     -0.43584, -0.28303, -0.25063], atol=2e-5)


# -- tensor2tensor-style encoder block with einsum heads --------------------------------
def _positional_encoding(length, depth):
    pos = tf.cast(tf.range(length), tf.float32)
    num_timescales = depth // 2
    log_inc = math.log(10000.0) / (tf.cast(num_timescales, tf.float32) - 1)
    inv = 1.0 * tf.exp(tf.cast(tf.range(num_timescales), tf.float32) * -log_inc)
    scaled = tf.expand_dims(pos, 1) * tf.expand_dims(inv, 0)
    signal = tf.concat([tf.sin(scaled), tf.cos(scaled)], axis=1)
    signal = tf.pad(signal, [[0, 0], [0, tf.mod(depth, 2)]])
    return tf.reshape(signal, [1, length, depth])


def test_t2t_encoder_block_with_einsum_heads_label_smoothing_and_noam_schedule(tmp_path):
    d, nh, vocab = 8, 2, 11
    tf.set_random_seed(7)
    src = tf.placeholder(tf.int32, [None, None], name="src")
    src_len = tf.placeholder(tf.int32, [None], name="src_len")
    tgt = tf.placeholder(tf.int32, [None, None], name="tgt")
    emb = tf.get_variable("emb", [vocab, d],
                          initializer=tf.random_normal_initializer(0., d ** -0.5, seed=3))
    length = tf.shape(src)[1]
    pe = _positional_encoding(length, d)
    x = tf.gather(emb, src) * d ** 0.5 + pe
    mask = tf.sequence_mask(src_len, maxlen=length, dtype=tf.float32)
    bias = (1.0 - mask)[:, tf.newaxis, tf.newaxis, :] * -1e9
    assert (pe.name, pe.shape.as_list(), mask.name, mask.dtype, bias.shape.as_list()) == (
        "Reshape:0", [1, None, 8], "SequenceMask/Cast_1:0", tf.float32, [None, 1, 1, None])
    with tf.variable_scope("self_attention"):
        wq, wk, wv = (tf.get_variable(n, [d, nh, d // nh]) for n in ("wq", "wk", "wv"))
        wo = tf.get_variable("wo", [nh, d // nh, d])
        q, k, v = (tf.einsum("btd,dhk->bhtk", x, w) for w in (wq, wk, wv))
        att_logits = tf.einsum("bhqk,bhtk->bhqt", q, k) * (d // nh) ** -0.5
        w = tf.nn.softmax(att_logits + bias, name="attention_weights")
        out = tf.einsum("bqhk,hkd->bqd", tf.einsum("bhqt,bhtk->bqhk", w, v), wo)
    assert (q.name, q.shape.as_list(), att_logits.name, w.name, out.name,
            out.shape.as_list()) == (
        "self_attention/einsum/Einsum:0", [None, 2, None, 4], "self_attention/mul:0",
        "self_attention/attention_weights:0", "self_attention/einsum_5/Einsum:0",
        [None, None, 8])
    ln = tf.keras.layers.LayerNormalization(epsilon=1e-6, name="ln1")
    h = ln(x + out)
    assert (h.name, [v.name for v in ln.weights]) == ("ln1/batchnorm/add_1:0",
                                                      ["ln1/gamma:0", "ln1/beta:0"])
    ff = tf.layers.dense(h, 16, activation=tf.nn.relu, name="ffn/conv1")
    ff = tf.layers.dense(tf.layers.dropout(ff, 0.1, training=True, seed=5), d,
                         name="ffn/conv2")
    h = tf.keras.layers.LayerNormalization(epsilon=1e-6, name="ln2")(h + ff)
    logits = tf.layers.dense(h, vocab, name="logits")
    onehot = tf.one_hot(tgt, vocab, on_value=0.9, off_value=0.1 / (vocab - 1))
    xent = tf.nn.softmax_cross_entropy_with_logits_v2(labels=onehot, logits=logits)
    loss = tf.reduce_sum(xent * mask) / tf.reduce_sum(mask)
    ls_loss = tf.losses.softmax_cross_entropy(tf.one_hot(tgt, vocab), logits, weights=mask,
                                              label_smoothing=0.1)
    picked = tf.gather(logits, tgt, batch_dims=2)
    last = tf.gather_nd(h, tf.stack([tf.range(tf.shape(tgt)[0]), src_len - 1], axis=1))
    last2 = tf.gather(h, src_len - 1, batch_dims=1)
    assert (xent.name, ls_loss.name, picked.name, picked.shape.as_list(), last2.name,
            last2.shape.as_list()) == (
        "softmax_cross_entropy_with_logits/Reshape_2:0", "softmax_cross_entropy_loss/value:0",
        "GatherV2_1:0", [None, None], "GatherV2_2:0", [None, 8])
    assert tf.get_collection(tf.GraphKeys.LOSSES) == [ls_loss]
    gs = tf.train.get_or_create_global_step()
    step = tf.cast(gs + 1, tf.float32)
    lr = d ** -0.5 * tf.minimum(step * 4.0 ** -1.5, tf.rsqrt(step))
    train = tf.train.AdamOptimizer(lr, beta1=0.9, beta2=0.98, epsilon=1e-9).minimize(
        loss, global_step=gs)
    tf.summary.scalar("loss", loss)
    tf.summary.scalar("lr", lr)
    tf.summary.histogram("attn", w)
    merged = tf.summary.merge_all()
    assert (merged.name, [t.name for t in tf.get_collection(tf.GraphKeys.SUMMARIES)]) == (
        "Merge/MergeSummary:0", ["loss:0", "lr:0", "attn:0"])
    rng = np.random.RandomState(1)
    feed = {src: rng.randint(1, vocab, (3, 5)), tgt: rng.randint(1, vocab, (3, 5)),
            src_len: np.array([5, 3, 4])}
    saver = tf.train.Saver(max_to_keep=2)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        np.testing.assert_allclose(s.run(pe, feed)[0, 1], [0.84147, 0.0464, 0.00215, 0.0001,
                                                           0.5403, 0.99892, 1.0, 1.0],
                                   atol=1e-5)
        got = np.array([s.run([train, loss, lr, ls_loss], feed)[1:] for _ in range(3)])
        np.testing.assert_allclose(got, [[3.21841, 0.044194, 3.2231],
                                         [2.24475, 0.088388, 2.24026],
                                         [1.68061, 0.132583, 1.66788]], atol=2e-5)
        np.testing.assert_allclose(s.run(picked, feed)[1],
                                   [0.5405, 2.6519, 0.5435, -0.0668, -0.1122], atol=1e-4)
        a, b = s.run([last, last2], feed)
        np.testing.assert_allclose(a[2], [-0.6398, 1.2997, -1.1809, -1.7649, 0.5496, -0.1717,
                                          0.2486, 0.8084], atol=1e-4)
        np.testing.assert_allclose(a, b)
        np.testing.assert_allclose(s.run(w, feed)[1, 0, 0], [0.0389, 0.7189, 0.2422, 0, 0],
                                   atol=1e-4)
        path = saver.save(s, str(tmp_path / "model"), global_step=gs)
    assert os.path.basename(path) == "model-3"
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "model-3.data-00000-of-00001",
                                            "model-3.index", "model-3.meta"]
    assert tf.train.latest_checkpoint(str(tmp_path)) == path


# -- BERT's checkpoint warm start ---------------------------------------------------------
def _get_assignment_map_from_checkpoint(tvars, init_checkpoint):
    name_to_variable = collections.OrderedDict()
    for var in tvars:
        m = re.match("^(.*):\\d+$", var.name)
        name_to_variable[m.group(1) if m else var.name] = var
    assignment_map, initialized = collections.OrderedDict(), {}
    for name, _ in tf.train.list_variables(init_checkpoint):
        if name not in name_to_variable:
            continue
        assignment_map[name] = name
        initialized[name] = initialized[name + ":0"] = 1
    return assignment_map, initialized


def test_bert_warm_start_from_checkpoint_with_assignment_map_and_max_norm_lookup(tmp_path):
    ckdir = str(tmp_path)
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        with tf.variable_scope("bert"):
            e = tf.get_variable("embeddings/word_embeddings", [10, 4], initializer=_ti())
            k = tf.get_variable("encoder/layer_0/kernel", [4, 4], use_resource=True)
            b = tf.get_variable("encoder/layer_0/bias", [4],
                                initializer=tf.constant_initializer(0.5))
        tf.get_variable("cls/predictions/output_bias", [10], initializer=tf.zeros_initializer())
        tf.train.get_or_create_global_step()
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            ref = s.run([e, k, b])
            tf.train.Saver().save(s, ckdir + "/bert_model.ckpt")
    listed = [("bert/embeddings/word_embeddings", [10, 4]), ("bert/encoder/layer_0/bias", [4]),
              ("bert/encoder/layer_0/kernel", [4, 4]), ("cls/predictions/output_bias", [10]),
              ("global_step", [])]
    assert tf.train.list_variables(ckdir) == listed
    reader = tf.train.load_checkpoint(ckdir)
    assert sorted(reader.get_variable_to_shape_map().items()) == listed
    assert reader.get_variable_to_dtype_map()["global_step"] == tf.int64
    np.testing.assert_allclose(tf.train.load_variable(ckdir, "bert/encoder/layer_0/bias"),
                               [0.5] * 4)
    with tf.variable_scope("bert"):
        e2 = tf.get_variable("embeddings/word_embeddings", [10, 4])
        k2 = tf.get_variable("encoder/layer_0/kernel", [4, 4])
        b2 = tf.get_variable("encoder/layer_0/bias", [4], use_resource=True)
    head = tf.get_variable("output_weights", [2, 4], initializer=tf.zeros_initializer())
    tvars = tf.trainable_variables()
    amap, inames = _get_assignment_map_from_checkpoint(tvars, ckdir + "/bert_model.ckpt")
    assert list(amap) == [n for n, _ in listed[:3]]
    tf.train.init_from_checkpoint(ckdir + "/bert_model.ckpt", amap)
    assert [(v.name in inames, v.initializer.name, v.initial_value.name) for v in tvars] == [
        (True, "Assign:0", "checkpoint_initializer:0"),
        (True, "Assign_1:0", "checkpoint_initializer_2:0"),
        (True, "AssignVariableOp", "checkpoint_initializer_1:0"),
        (False, "output_weights/Assign", "output_weights/Initializer/zeros:0")]
    tf.train.init_from_checkpoint(ckdir, {"bert/encoder/": "bert/encoder/"})
    ids = tf.constant([[1, 2], [3, 9]])
    lk = tf.nn.embedding_lookup(e2, ids, max_norm=0.01)
    lk2 = tf.nn.embedding_lookup([e2], ids, max_norm=0.01, name="emb_mn")
    assert (lk.name, lk.shape.as_list(), lk2.name) == ("embedding_lookup/Identity:0",
                                                       [2, 2, 4], "emb_mn/Identity:0")
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        for got, want in zip(s.run([e2, k2, b2]), ref, strict=True):
            np.testing.assert_allclose(got, want)
        np.testing.assert_allclose(np.linalg.norm(s.run(lk2), axis=-1), np.full((2, 2), 0.01),
                                   atol=1e-6)
        assert np.allclose(s.run(lk), s.run(lk2))
        np.testing.assert_array_equal(s.run(head), np.zeros((2, 4)))
    with pytest.raises(ValueError, match="Shape of variable output_weights:0 \\(\\(2, 4\\)\\) "
                                         "doesn't match with shape of tensor "
                                         "bert/encoder/layer_0/bias \\(\\[4\\]\\)"):
        tf.train.init_from_checkpoint(ckdir, {"bert/encoder/layer_0/bias": "output_weights"})


# -- greedy and beam decoding --------------------------------------------------------------
def test_greedy_and_beam_decoding_with_while_loop_tensor_array_and_top_k():
    vocab, d, maxlen, k = 7, 6, 5, 3
    tf.set_random_seed(11)
    emb = tf.get_variable("dec/emb", [vocab, d], initializer=tf.random_normal_initializer(seed=1))
    wout = tf.get_variable("dec/out", [d, vocab],
                           initializer=tf.glorot_uniform_initializer(seed=2))
    cell = tf.nn.rnn_cell.GRUCell(d, name="gru",
                                  kernel_initializer=tf.glorot_uniform_initializer(seed=3))
    start = tf.placeholder(tf.int32, [None], name="start")
    batch = tf.shape(start)[0]

    def step_logits(tok, state):
        out, st = cell(tf.nn.embedding_lookup(emb, tok), state)
        return tf.matmul(out, wout), st

    def body(i, tok, state, ta, fin):
        lg, st = step_logits(tok, state)
        nxt = tf.argmax(lg, axis=-1, output_type=tf.int32)
        nxt = tf.where(fin, tf.zeros_like(nxt), nxt)
        return i + 1, nxt, st, ta.write(i, nxt), tf.logical_or(fin, tf.equal(nxt, 0))

    res = tf.while_loop(
        lambda i, tok, state, ta, fin: tf.logical_and(i < maxlen,
                                                      tf.logical_not(tf.reduce_all(fin))),
        body, [tf.constant(0), start, cell.zero_state(batch, tf.float32),
               tf.TensorArray(tf.int32, size=0, dynamic_size=True, name="greedy_ids"),
               tf.zeros([batch], tf.bool)], name="greedy")
    ids = tf.transpose(res[3].stack(), [1, 0])
    assert (res[0].name, ids.name, ids.shape.as_list(), res[2].shape.as_list()) == (
        "greedy/Exit:0", "transpose:0", [None, None], [None, 6])

    def bbody(t, seqs, scores, st):
        lg, st2 = step_logits(seqs[:, -1], st)
        tot = tf.reshape(scores[:, None] + tf.nn.log_softmax(lg), [-1])
        top, idx = tf.nn.top_k(tot, k=k, sorted=True)
        seqs = tf.concat([tf.gather(seqs, idx // vocab), (idx % vocab)[:, None]], axis=1)
        return t + 1, seqs, top, tf.gather(st2, idx // vocab)

    _, bseqs, bscores, _ = tf.while_loop(
        lambda t, *_: t < maxlen, bbody,
        [tf.constant(0), tf.fill([k, 1], tf.constant(1)), tf.constant([0.0] + [-1e9] * (k - 1)),
         tf.zeros([k, d])],
        shape_invariants=[tf.TensorShape([]), tf.TensorShape([k, None]), tf.TensorShape([k]),
                          tf.TensorShape([None, d])], back_prop=False, name="beam")
    assert (bseqs.name, bseqs.shape.as_list(), bscores.name) == ("beam/Exit_1:0", [3, None],
                                                                 "beam/Exit_2:0")
    with pytest.raises(ValueError, match="Input tensor 'ones:0' enters the loop with shape "
                                         "\\(1,\\), but has shape \\(2,\\) after one "
                                         "iteration"):
        tf.while_loop(lambda s: tf.shape(s)[0] < 4, lambda s: tf.concat([s, s], 0),
                      [tf.ones([1])])
    vals, inds = tf.nn.top_k(tf.constant([[1., 3., 2., 3.]]), k=2)
    assert (vals.name, inds.name, inds.dtype) == ("TopKV2:0", "TopKV2:1", tf.int32)
    ta2 = tf.TensorArray(tf.float32, size=3, element_shape=[2], clear_after_read=False)
    ta2 = ta2.unstack(tf.constant([[1., 2.], [3., 4.], [5., 6.]]))
    g, c, r = ta2.gather([2, 0]), ta2.concat(), ta2.read(1)
    assert [t.shape.as_list() for t in (g, c, r)] == [[2, 2], [6], [2]]
    assert ta2.size().name == "Const_7:0"
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        n, got = s.run([res[0], ids], {start: [1, 2, 3]})
        assert n == 5
        np.testing.assert_array_equal(got, np.full((3, 5), 3))
        a, b = s.run([bseqs, bscores])
        np.testing.assert_array_equal(a, [[1, 3, 3, 3, 3, 3], [1, 3, 3, 3, 3, 6],
                                          [1, 3, 3, 3, 6, 3]])
        np.testing.assert_allclose(b, [-7.0194, -7.5315, -7.5547], atol=1e-4)
        out = s.run([vals, inds, g, c, r])
        np.testing.assert_array_equal(out[0], [[3., 3.]])
        np.testing.assert_array_equal(out[1], [[1, 3]])
        np.testing.assert_array_equal(out[2], [[5., 6.], [1., 2.]])
        np.testing.assert_array_equal(out[3], [1., 2., 3., 4., 5., 6.])
        np.testing.assert_array_equal(out[4], [3., 4.])


# -- an Optimizer subclass over ref and resource variables --------------------------------
class _LambLike(tf.train.Optimizer):
    def __init__(self, learning_rate=0.01, beta=0.9, use_locking=False, name="LAMBLike"):
        super().__init__(use_locking, name)
        self._lr, self._beta = learning_rate, beta
        self._lr_t = self._beta_t = None

    def _prepare(self):
        self._lr_t = tf.convert_to_tensor(self._lr, name="learning_rate")
        self._beta_t = tf.convert_to_tensor(self._beta, name="beta")

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "m", self._name)
            self._get_or_make_slot_with_initializer(v, tf.constant_initializer(0.5), v.shape,
                                                    v.dtype.base_dtype, "scale", self._name)

    def _apply_dense(self, grad, var):
        lr = tf.cast(self._lr_t, var.dtype.base_dtype)
        beta = tf.cast(self._beta_t, var.dtype.base_dtype)
        m = self.get_slot(var, "m")
        m_t = tf.assign(m, beta * m + (1. - beta) * grad, use_locking=self._use_locking)
        wn, un = tf.norm(var), tf.norm(m_t)
        ratio = tf.where(tf.greater(wn, 0), tf.where(tf.greater(un, 0), wn / un, 1.0), 1.0)
        return tf.group(tf.assign_sub(var, lr * ratio * m_t, use_locking=self._use_locking),
                        m_t)

    def _resource_apply_dense(self, grad, var):
        m = self.get_slot(var, "m")
        m_t = m.assign(self._beta_t * m + (1. - self._beta_t) * grad)
        with tf.control_dependencies([m_t]):
            return var.assign_sub(self._lr_t * m_t).op

    def _apply_sparse(self, grad, var):
        return self._apply_dense(tf.convert_to_tensor(grad), var)

    def _resource_apply_sparse(self, grad, var, indices):
        return tf.raw_ops.ResourceScatterSub(resource=var.handle, indices=indices,
                                             updates=self._lr_t * grad)


def test_optimizer_subclass_with_prepare_slots_and_resource_apply_methods():
    tf.set_random_seed(5)
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.placeholder(tf.float32, [None, 1])
    with tf.variable_scope("model"):
        w_ref = tf.get_variable("w_ref", [3, 1], initializer=tf.truncated_normal_initializer(
            stddev=0.02, seed=1))
        w_res = tf.get_variable("w_res", [3, 1], initializer=tf.truncated_normal_initializer(
            stddev=0.02, seed=2), use_resource=True)
        emb = tf.get_variable("emb", [5, 3], initializer=tf.ones_initializer())
        emb_r = tf.get_variable("emb_r", [5, 3], initializer=tf.ones_initializer(),
                                use_resource=True)
    ids = tf.constant([0, 2, 2])
    pred = (tf.matmul(x, w_ref) + tf.matmul(x, w_res) + tf.reduce_sum(tf.gather(emb, ids)) * 0.01
            + tf.reduce_sum(tf.gather(emb_r, ids)) * 0.01)
    loss = tf.reduce_mean(tf.square(pred - y))
    opt = _LambLike(0.1)
    gs = tf.train.get_or_create_global_step()
    train = opt.minimize(loss, global_step=gs, name="train_step")
    assert (train.name, train.type) == ("train_step", "AssignAdd")
    assert (opt.get_slot_names(), opt.get_slot(w_ref, "m").name,
            opt.get_slot(w_res, "scale").name) == (
        ["m", "scale"], "model/w_ref/LAMBLike:0", "model/w_res/LAMBLike_1:0")
    assert len(opt.variables()) == 8
    assert tf.get_default_graph().get_tensor_by_name(
        "train_step/learning_rate:0").op.type == "Const"
    rng = np.random.RandomState(0)
    feed = {x: rng.randn(8, 3).astype(np.float32), y: rng.randn(8, 1).astype(np.float32)}
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        got = [s.run([train, loss], feed)[1] for _ in range(3)]
        np.testing.assert_allclose(got, [1.35722, 1.33566, 1.30729], atol=2e-5)
        np.testing.assert_allclose(s.run(w_ref).ravel(), [-0.02504, -0.00031, 0.00424],
                                   atol=2e-5)
        np.testing.assert_allclose(s.run(w_res).ravel(), [0.05118, -0.00388, 0.03117],
                                   atol=2e-5)
        np.testing.assert_allclose(s.run(emb)[:3, 0], [1.31988, 1.0, 1.63977], atol=2e-5)
        np.testing.assert_allclose(s.run(emb_r)[:3, 0], [1.00192, 1.0, 1.00383], atol=2e-5)
        np.testing.assert_allclose(s.run(opt.get_slot(w_ref, "m")).ravel(),
                                   [-0.07353, 0.00507, -0.23646], atol=2e-5)
        assert s.run(gs) == 3


# -- seq2seq with teacher forcing and Luong attention ---------------------------------------
def test_bilstm_seq2seq_teacher_forcing_with_luong_attention_and_clipped_adam():
    vocab, e, hid, batch = 9, 5, 6, 3
    tf.set_random_seed(21)
    enc_in = tf.placeholder(tf.int32, [None, None], "encoder_inputs")
    enc_len = tf.placeholder(tf.int32, [None], "encoder_lengths")
    dec_in = tf.placeholder(tf.int32, [None, None], "decoder_inputs")
    dec_out = tf.placeholder(tf.int32, [None, None], "decoder_targets")
    dec_len = tf.placeholder(tf.int32, [None], "decoder_lengths")
    with tf.variable_scope("embedding"):
        emb = tf.get_variable("emb", [vocab, e],
                              initializer=tf.random_uniform_initializer(-0.1, 0.1, seed=1))
        ee, de = tf.nn.embedding_lookup(emb, enc_in), tf.nn.embedding_lookup(emb, dec_in)
    with tf.variable_scope("encoder"):
        fw = tf.nn.rnn_cell.LSTMCell(hid, initializer=tf.glorot_uniform_initializer(seed=2))
        bw = tf.nn.rnn_cell.LSTMCell(hid, initializer=tf.glorot_uniform_initializer(seed=3))
        (ofw, obw), (sfw, sbw) = tf.nn.bidirectional_dynamic_rnn(
            fw, bw, ee, sequence_length=enc_len, dtype=tf.float32)
        enc_out = tf.concat([ofw, obw], -1)
        c = tf.layers.dense(tf.concat([sfw.c, sbw.c], -1), hid, name="bridge_c")
        h = tf.layers.dense(tf.concat([sfw.h, sbw.h], -1), hid, name="bridge_h")
    assert (enc_out.name, enc_out.shape.as_list(), sfw.c.name, c.name) == (
        "encoder/concat:0", [None, None, 12], "encoder/bidirectional_rnn/fw/fw/while/Exit_3:0",
        "encoder/bridge_c/BiasAdd:0")
    with tf.variable_scope("decoder"):
        cell = tf.nn.rnn_cell.LSTMCell(hid, initializer=tf.glorot_uniform_initializer(seed=4))
        cell = tf.nn.rnn_cell.DropoutWrapper(cell, output_keep_prob=0.8, seed=9)
        dout, dst = tf.nn.dynamic_rnn(cell, de, sequence_length=dec_len,
                                      initial_state=tf.nn.rnn_cell.LSTMStateTuple(c, h),
                                      scope="rnn")
        keys = tf.layers.dense(enc_out, hid, use_bias=False, name="memory_layer")
        score = tf.matmul(dout, keys, transpose_b=True)
        emask = tf.sequence_mask(enc_len, tf.shape(enc_in)[1])
        score = tf.where(tf.tile(emask[:, None, :], [1, tf.shape(dout)[1], 1]), score,
                         tf.ones_like(score) * -1e9)
        align = tf.nn.softmax(score, name="alignments")
        att = tf.layers.dense(tf.concat([dout, tf.matmul(align, enc_out)], -1), hid,
                              activation=tf.tanh, use_bias=False, name="attention_layer")
        logits = tf.layers.dense(att, vocab, name="output_projection")
    assert (dout.name, dst.h.name, align.name, align.shape.as_list(), logits.name) == (
        "decoder/rnn/transpose_1:0", "decoder/rnn/while/Exit_4:0", "decoder/alignments:0",
        [None, None, None], "decoder/output_projection/BiasAdd:0")
    assert [v.name for v in tf.trainable_variables()][9:] == [
        "decoder/rnn/lstm_cell/kernel:0", "decoder/rnn/lstm_cell/bias:0",
        "decoder/memory_layer/kernel:0", "decoder/attention_layer/kernel:0",
        "decoder/output_projection/kernel:0", "decoder/output_projection/bias:0"]
    w = tf.sequence_mask(dec_len, tf.shape(dec_out)[1], dtype=tf.float32)
    ce = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=dec_out, logits=logits)
    loss = tf.reduce_sum(ce * w) / tf.cast(batch, tf.float32)
    params = tf.trainable_variables()
    grads = tf.gradients(loss, params)
    clipped, norm = tf.clip_by_global_norm(grads, 1.0)
    assert (type(grads[0]).__name__, type(clipped[0]).__name__, clipped[1].name) == (
        "IndexedSlices", "IndexedSlices", "clip_by_global_norm/clip_by_global_norm/_1:0")
    upd = tf.train.AdamOptimizer(0.01).apply_gradients(
        zip(clipped, params), global_step=tf.train.get_or_create_global_step())
    assert upd.name == "Adam"
    rng = np.random.RandomState(3)
    feed = {enc_in: rng.randint(1, vocab, (batch, 4)), enc_len: [4, 2, 3],
            dec_in: rng.randint(1, vocab, (batch, 4)), dec_out: rng.randint(1, vocab, (batch, 4)),
            dec_len: [3, 4, 1]}
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        got = np.array([s.run([upd, loss, norm], feed)[1:] for _ in range(3)])
        np.testing.assert_allclose(got, [[5.86463, 0.96893], [5.81833, 0.92768],
                                         [5.78311, 0.92146]], atol=2e-5)
        np.testing.assert_allclose(s.run(align, feed)[1, 0], [0.4998, 0.5002, 0, 0], atol=1e-4)
        np.testing.assert_allclose(s.run(dst.c, feed)[2], [-0.0775, 0.0815, 0.024, 0.0841,
                                                           -0.0371, 0.0028], atol=1e-4)


# -- contrib layer norm next to Keras' ---------------------------------------------------
def test_contrib_layer_norm_names_and_keras_layer_normalization():
    x = tf.placeholder(tf.float32, [None, 4, 6])
    with tf.variable_scope("enc"):
        a = _layer_norm(x)
        b = _layer_norm(a)
        c = _layer_norm(x, name="ln_named")
    assert [t.name for t in (a, b, c)] == ["enc/LayerNorm/batchnorm/add_1:0",
                                           "enc/LayerNorm_1/batchnorm/add_1:0",
                                           "enc/ln_named/batchnorm/add_1:0"]
    assert a.shape.as_list() == [None, 4, 6]
    names = ["enc/LayerNorm/beta:0", "enc/LayerNorm/gamma:0", "enc/LayerNorm_1/beta:0",
             "enc/LayerNorm_1/gamma:0", "enc/ln_named/beta:0", "enc/ln_named/gamma:0"]
    assert [v.name for v in tf.model_variables()] == names
    assert [v.name for v in tf.trainable_variables()] == names
    ops = [o.name for o in tf.get_default_graph().get_operations()
           if o.name.startswith("enc/LayerNorm/")]
    assert ops[8:] == [
        "enc/LayerNorm/moments/mean/reduction_indices", "enc/LayerNorm/moments/mean",
        "enc/LayerNorm/moments/StopGradient", "enc/LayerNorm/moments/SquaredDifference",
        "enc/LayerNorm/moments/variance/reduction_indices", "enc/LayerNorm/moments/variance",
        "enc/LayerNorm/batchnorm/add/y", "enc/LayerNorm/batchnorm/add",
        "enc/LayerNorm/batchnorm/Rsqrt", "enc/LayerNorm/batchnorm/mul",
        "enc/LayerNorm/batchnorm/mul_1", "enc/LayerNorm/batchnorm/mul_2",
        "enc/LayerNorm/batchnorm/sub", "enc/LayerNorm/batchnorm/add_1"]
    k = tf.keras.layers.LayerNormalization(axis=-1, epsilon=1e-12)
    y = k(x)
    assert (y.name, k.name, [w.name for w in k.weights]) == (
        "layer_normalization/batchnorm/add_1:0", "layer_normalization",
        ["layer_normalization/gamma:0", "layer_normalization/beta:0"])
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        f = np.arange(48, dtype=np.float32).reshape(2, 4, 6) ** 1.5
        r1, r2 = s.run([b, y], {x: f})
    np.testing.assert_allclose(r1[1, 2], [-1.45106, -0.88088, -0.30294, 0.28265, 0.8758,
                                          1.47641], atol=2e-5)
    np.testing.assert_allclose(r2[1, 2], [-1.45105, -0.88088, -0.30294, 0.28265, 0.8758,
                                          1.47642], atol=2e-5)


# -- focused: the classes fixed ------------------------------------------------------------
class _ScatterSGD(tf.train.Optimizer):
    def __init__(self):
        super().__init__(False, "SGDOnly")

    def _apply_dense(self, grad, var):
        return tf.assign_sub(var, 0.1 * grad)

    def _apply_sparse(self, grad, var):
        return tf.scatter_update(var, grad.indices,
                                 tf.gather(var, grad.indices) - 0.1 * grad.values)

    def _resource_apply_sparse(self, grad, var, indices):
        return tf.raw_ops.ResourceScatterUpdate(resource=var.handle, indices=indices,
                                                updates=tf.gather(var, indices) - grad)


@pytest.mark.parametrize("use_resource", [False, True])
def test_optimizer_subclass_gets_resource_dispatch_and_summed_duplicate_rows(use_resource):
    e = tf.get_variable("e", [4, 2], initializer=tf.ones_initializer(),
                        use_resource=use_resource)
    w = tf.get_variable("w", [2], initializer=tf.ones_initializer(), use_resource=use_resource)
    loss = tf.reduce_sum(tf.gather(e, [1, 1, 3]) * w)
    opt = _ScatterSGD()
    if use_resource:  # no _resource_apply_dense: TF raises NotImplementedError
        with pytest.raises(NotImplementedError):
            opt.minimize(loss)
        op = opt.minimize(loss, var_list=[e])
    else:
        op = opt.minimize(loss)
    scope = "SGDOnly_1" if use_resource else "SGDOnly"
    ops = [(o.name, o.type) for o in tf.get_default_graph().get_operations()
           if o.name.startswith(scope + "/update_e/")]
    assert ops[:7] == [(f"{scope}/update_e/{n}", t) for n, t in [
        ("Unique", "Unique"), ("Shape", "Shape"), ("strided_slice/stack", "Const"),
        ("strided_slice/stack_1", "Const"), ("strided_slice/stack_2", "Const"),
        ("strided_slice", "StridedSlice"), ("UnsortedSegmentSum", "UnsortedSegmentSum")]]
    assert ops[-1] == ((f"{scope}/update_e/ResourceScatterUpdate", "ResourceScatterUpdate")
                       if use_resource else (f"{scope}/update_e/ScatterUpdate",
                                             "ScatterUpdate"))
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        s.run(op)
        # the repeated row 1 is updated once with the summed gradient
        want = [[1, 1], [-1, -1], [1, 1], [0, 0]] if use_resource else \
            [[1, 1], [0.8, 0.8], [1, 1], [0.9, 0.9]]
        np.testing.assert_allclose(s.run(e), want, atol=1e-6)


@pytest.mark.parametrize("use_resource", [False, True])
def test_subclass_of_a_library_optimizer_keeps_its_updates_for_both_variable_kinds(
        use_resource):
    class MyAdam(tf.train.AdamOptimizer):
        def _apply_dense(self, grad, var):
            raise RuntimeError("not called for an IndexedSlices gradient")

    e = tf.get_variable("e", [4, 2], initializer=tf.ones_initializer(),
                        use_resource=use_resource)
    v = tf.get_variable("v", [2], initializer=tf.ones_initializer(), use_resource=use_resource)
    if use_resource:  # TF routes a resource variable to Adam's own _resource_apply_dense
        op = MyAdam(0.1).minimize(tf.reduce_sum(tf.gather(e, [1, 1, 3])) + tf.reduce_sum(v))
    else:
        op = MyAdam(0.1).minimize(tf.reduce_sum(tf.gather(e, [1, 1, 3])))
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        s.run(op)
        np.testing.assert_allclose(s.run(e)[1], [0.9, 0.9], atol=1e-6)
        if use_resource:
            np.testing.assert_allclose(s.run(v), [0.9, 0.9], atol=1e-6)


def test_init_from_checkpoint_initializer_of_ref_variables_and_scope_message(tmp_path):
    with tf.Graph().as_default():
        tf.get_variable("bert/a", [2], initializer=tf.ones_initializer())
        tf.get_variable("bert/b", [2], initializer=tf.ones_initializer(), use_resource=True)
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            tf.train.Saver().save(s, str(tmp_path / "m.ckpt"))
    a = tf.get_variable("bert/a", [2])
    b = tf.get_variable("bert/b", [2], use_resource=True)
    tf.train.init_from_checkpoint(str(tmp_path), {"bert/": "bert/"})
    assert isinstance(a.initializer, tf.Tensor)
    assert (a.initializer.name, a.initializer.op.type) == ("Assign:0", "Assign")
    assert (b.initializer.name, b.initializer.type) == ("AssignVariableOp", "AssignVariableOp")
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(s.run([a, b]), np.ones((2, 2)))
    with pytest.raises(ValueError, match=re.escape(
            "Assignment map with scope only name bert should map to scope only bert/missing. "
            "Should be 'scope/': 'other_scope/'.")):
        tf.train.init_from_checkpoint(str(tmp_path), {"bert/missing": "bert/xx"})
    with pytest.raises(ValueError, match=re.escape(
            "Assignment map with scope only name  should map to scope only bert/a.")):
        tf.train.init_from_checkpoint(str(tmp_path), {"bert/a": "a_scope"})


@pytest.mark.parametrize("kwargs, shape, last_op", [
    (dict(size=3, element_shape=[2]), [6], "Const"),
    (dict(size=0, dynamic_size=True, element_shape=[2, 3]), [None, 3], "TensorArraySizeV3"),
    (dict(size=2), None, "TensorArrayConcatV3"),
    (dict(size=2, infer_shape=False, element_shape=[2, 3]), [None, 3], "TensorArrayConcatV3"),
])
def test_tensor_array_concat_asks_for_the_size_like_tensorflow(kwargs, shape, last_op):
    c = tf.TensorArray(tf.float32, **kwargs).concat()
    assert c.shape.as_list() == shape if shape is not None else c.shape.ndims is None
    assert tf.get_default_graph().get_operations()[-1].type == last_op
    assert c.op.outputs[1].shape.as_list() == [None]


# -- fine-tuning as an Estimator from a pre-trained checkpoint ------------------------------
def test_bert_style_fine_tuning_estimator_warm_started_from_checkpoint(tmp_path):
    vocab, seq, hid = 12, 5, 8
    os.makedirs(tmp_path / "pre")
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        init = tf.truncated_normal_initializer(stddev=0.5)
        tf.get_variable("bert/embeddings/word_embeddings", [vocab, hid], initializer=init)
        tf.get_variable("bert/encoder/dense/kernel", [hid, hid], initializer=init)
        tf.get_variable("bert/encoder/dense/bias", [hid], initializer=tf.zeros_initializer())
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            tf.train.Saver().save(s, str(tmp_path / "pre" / "bert_model.ckpt"))

    def model_fn(features, labels, mode, params):
        with tf.variable_scope("bert"):
            with tf.variable_scope("embeddings"):
                x = tf.nn.embedding_lookup(tf.get_variable("word_embeddings", [vocab, hid]),
                                           features["input_ids"])
            with tf.variable_scope("encoder"):
                h = tf.layers.dense(x, hid, activation=tf.tanh, name="dense")
                if mode == tf.estimator.ModeKeys.TRAIN:
                    h = tf.nn.dropout(h, rate=0.1, seed=3)
                m = tf.cast(features["input_mask"], tf.float32)[:, :, None]
                pooled = tf.reduce_sum(h * m, 1) / tf.reduce_sum(m, 1)
        logits = tf.layers.dense(pooled, 2, name="cls", kernel_initializer=(
            tf.truncated_normal_initializer(stddev=0.5, seed=4)))
        tvars = tf.trainable_variables()
        names = {n for n, _ in tf.train.list_variables(params["init_checkpoint"])}
        tf.train.init_from_checkpoint(params["init_checkpoint"],
                                      {v.op.name: v.op.name for v in tvars if v.op.name in names})
        preds = tf.argmax(logits, -1, output_type=tf.int32)
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tf.estimator.EstimatorSpec(mode, predictions={
                "probabilities": tf.nn.softmax(logits), "pred": preds})
        loss = tf.reduce_mean(-tf.reduce_sum(tf.one_hot(labels, 2) * tf.nn.log_softmax(logits),
                                             -1))
        if mode == tf.estimator.ModeKeys.EVAL:
            return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={
                "eval_accuracy": tf.metrics.accuracy(labels, preds),
                "eval_loss": tf.metrics.mean(loss)})
        gs = tf.train.get_global_step()
        opt = tf.train.AdamOptimizer(tf.train.polynomial_decay(0.05, gs, 10,
                                                               end_learning_rate=0.0))
        grads, _ = tf.clip_by_global_norm([g for g, _ in opt.compute_gradients(loss, tvars)],
                                          1.0)
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=opt.apply_gradients(
            zip(grads, tvars), global_step=gs))

    rng = np.random.RandomState(0)
    fi = rng.randint(0, vocab, (8, seq)).astype(np.int32)
    fm = (rng.rand(8, seq) > 0.2).astype(np.int32)
    fm[:, 0] = 1
    fl = rng.randint(0, 2, 8).astype(np.int32)

    def data():
        return tf.data.Dataset.from_tensor_slices(({"input_ids": fi, "input_mask": fm}, fl))

    model_dir = str(tmp_path / "ft")
    est = tf.estimator.Estimator(
        model_fn, params={"init_checkpoint": str(tmp_path / "pre" / "bert_model.ckpt")},
        config=tf.estimator.RunConfig(model_dir=model_dir, tf_random_seed=7,
                                      save_checkpoints_steps=3, keep_checkpoint_max=2,
                                      log_step_count_steps=100))
    est.train(lambda: data().repeat().batch(4), max_steps=6)
    assert sorted(f for f in os.listdir(model_dir) if f.startswith(("model", "checkpoint"))) == [
        "checkpoint", "model.ckpt-3.data-00000-of-00001", "model.ckpt-3.index",
        "model.ckpt-3.meta", "model.ckpt-6.data-00000-of-00001", "model.ckpt-6.index",
        "model.ckpt-6.meta"]
    r = est.evaluate(lambda: data().batch(4))
    assert sorted(r) == ["eval_accuracy", "eval_loss", "global_step", "loss"]
    np.testing.assert_allclose([r["eval_accuracy"], r["eval_loss"], r["loss"]],
                               [0.75, 0.47478, 0.47478], atol=2e-5)
    assert r["global_step"] == 6
    p = list(est.predict(lambda: tf.data.Dataset.from_tensor_slices(
        {"input_ids": fi[:3], "input_mask": fm[:3]}).batch(2)))
    assert [x["pred"] for x in p] == [0, 1, 0]
    np.testing.assert_allclose([x["probabilities"][0] for x in p], [0.80064, 0.49229, 0.56732],
                               atol=2e-5)
    assert len(est.get_variable_names()) == 18
    np.testing.assert_allclose(est.get_variable_value("bert/encoder/dense/bias"),
                               [0.12614, 0.11793, -0.11562, -0.00086, -0.08877, 0.01538,
                                0.00821, 0.11854], atol=2e-5)


def test_incompatible_shape_invariant_error_reads_as_tensorflow_words_it():
    batch = tf.shape(tf.placeholder(tf.int32, [None]))[0]
    state = tf.tile(tf.zeros([1, 6]), [batch, 1])
    with pytest.raises(ValueError, match=re.escape(
            "The shape invariant specified for Tile:0 is not compatible with the initial "
            "shape of the loop variable. It enters the loop with shape (?, 6), but the "
            "specified shape invariant is (3, 6).")):
        tf.while_loop(lambda t, s: t < 3, lambda t, s: (t + 1, s), [tf.constant(0), state],
                      shape_invariants=[tf.TensorShape([]), tf.TensorShape([3, 6])])
