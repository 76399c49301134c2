"""TF1 programs "from the wild" (tutorial, book and Stack Overflow style), run unchanged
under ``import flowgraph as tf``.

Each program was first run under real TensorFlow 2.15's ``tf.compat.v1`` with the
tf-oracle; the values asserted here are the ones TensorFlow printed, not flowgraph's.
They pin the classes of discrepancy a fidelity sweep found and fixed: named-tuple results
of multi-output ops, string components in ``padded_batch``, ``tf.strings.format``,
``tf.keras.regularizers`` / ``initializers`` / ``utils``, a built Keras model's
``input_shape`` / ``output_shape``, static reshape checks on partly known shapes, and the
``tf.image`` crop/pad/rotate/convert family.
"""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf


def _run(fetches, feed_dict=None):
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        return sess.run(fetches, feed_dict)


# -- multi-output ops return TF's named tuples --------------------------------------------
def test_multi_output_ops_return_named_tuples():
    labels = tf.constant([[1]], tf.int64)
    x = tf.constant([[3.0, 1.0], [2.0, 5.0]])
    # TF 2.15: type name and _fields of each result
    expected = {
        "ListDiff": ("out", "idx"),
        "UniqueWithCounts": ("y", "idx", "count"),
        "Qr": ("q", "r"),
        "LogMatrixDeterminant": ("sign", "log_abs_determinant"),
        "MaxPoolWithArgmax": ("output", "argmax"),
        "LogUniformCandidateSampler": ("sampled_candidates", "true_expected_count",
                                       "sampled_expected_count"),
        "UniformCandidateSampler": ("sampled_candidates", "true_expected_count",
                                    "sampled_expected_count"),
        "LearnedUnigramCandidateSampler": ("sampled_candidates", "true_expected_count",
                                           "sampled_expected_count"),
        "FixedUnigramCandidateSampler": ("sampled_candidates", "true_expected_count",
                                         "sampled_expected_count"),
        "ComputeAccidentalHits": ("indices", "ids", "weights"),
    }
    results = [
        tf.setdiff1d([1, 2, 3, 4], [2, 4]),
        tf.unique_with_counts([4, 2, 4, 1]),
        tf.qr(x),
        tf.linalg.slogdet(x),
        tf.nn.max_pool_with_argmax(tf.ones([1, 2, 2, 1]), [1, 2, 2, 1], [1, 1, 1, 1], "VALID"),
        tf.nn.log_uniform_candidate_sampler(labels, 1, 2, True, 5),
        tf.nn.uniform_candidate_sampler(labels, 1, 2, True, 5),
        tf.nn.learned_unigram_candidate_sampler(labels, 1, 2, True, 5),
        tf.nn.fixed_unigram_candidate_sampler(labels, 1, 2, True, 5, unigrams=[1.0] * 5),
        tf.nn.compute_accidental_hits(labels, tf.constant([1, 2], tf.int64), 1),
    ]
    assert {type(r).__name__: r._fields for r in results} == expected
    out, counts, sign = _run([results[0].out, results[1].count, results[3].sign])
    assert out.tolist() == [1, 3]          # TF: [1, 3]
    assert counts.tolist() == [2, 1, 1]    # TF: [2, 1, 1]
    assert sign == 1.0                     # det = 13


# -- tf.data: strings in padded_batch -------------------------------------------------------
def test_padded_batch_of_generator_strings():
    def gen():
        for i in range(1, 5):
            yield list(range(i)), f"s{i}"

    ds = tf.data.Dataset.from_generator(gen, (tf.int32, tf.string),
                                        (tf.TensorShape([None]), tf.TensorShape([])))
    nxt = ds.padded_batch(2, padded_shapes=([None], []), padding_values=(-1, "")) \
        .make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        first, second = sess.run(nxt), sess.run(nxt)
    # TF 2.15: ([[0, -1], [0, 1]], [b's1', b's2']), ([[0, 1, 2, -1], [0, 1, 2, 3]], [b's3', b's4'])
    assert first[0].tolist() == [[0, -1], [0, 1]]
    assert first[1].tolist() == [b"s1", b"s2"]
    assert second[0].tolist() == [[0, 1, 2, -1], [0, 1, 2, 3]]
    assert second[1].tolist() == [b"s3", b"s4"]


def test_padded_batch_pads_strings_with_padding_value():
    ds = tf.data.Dataset.from_tensor_slices(["a", "b", "c"]).map(lambda s: tf.stack([s]))
    nxt = ds.padded_batch(2, [2], padding_values="<pad>").make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        assert sess.run(nxt).tolist() == [[b"a", b"<pad>"], [b"b", b"<pad>"]]


# -- string formatting ----------------------------------------------------------------------
def test_strings_format():
    s = tf.strings.format("x={} y={}", (tf.constant(1), tf.constant([1.5, 2.0])))
    assert s.shape.as_list() == [] and s.dtype == tf.string
    assert _run(s) == b"x=1 y=[1.5 2]"  # TF 2.15: b'x=1 y=[1.5 2]'
    with pytest.raises(ValueError):
        tf.strings.format("{} {}", tf.constant(1))


# -- tf.keras helpers used in graph-mode programs -------------------------------------------
def test_keras_regularizer_in_variable_scope():
    with tf.variable_scope("reg", regularizer=tf.keras.regularizers.l2(0.5)):
        tf.get_variable("r", [2], initializer=tf.ones_initializer())
    with tf.variable_scope("fc"):
        tf.get_variable("w", [2], initializer=tf.keras.initializers.Constant(0.1),
                        regularizer=tf.keras.regularizers.l1_l2(l1=1.0, l2=1.0))
    losses = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    values = _run(losses)
    # TF 2.15: the keras l2 penalty has no 1/2 factor: 0.5 * (1 + 1) = 1.0
    assert np.allclose(values, [1.0, 0.2 + 0.02])
    assert np.isclose(_run(tf.losses.get_regularization_loss()), 1.22)


def test_keras_initializers_and_to_categorical():
    assert tf.keras.utils.to_categorical([0, 2, 1], 3).tolist() == \
        [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]]  # TF 2.15
    v = tf.get_variable("v", [200], initializer=tf.keras.initializers.RandomNormal(seed=1))
    t = tf.get_variable("t", [200], initializer=tf.keras.initializers.TruncatedNormal(seed=2))
    u = tf.get_variable("u", [200], initializer=tf.keras.initializers.RandomUniform(seed=3))
    vv, tv, uv = _run([v, t, u])
    assert 0.03 < vv.std() < 0.07 and np.abs(tv).max() <= 0.1 and np.abs(uv).max() <= 0.05


def test_keras_sequential_and_functional_shapes():
    model = tf.keras.Sequential([
        tf.keras.layers.Dense(4, activation="relu", input_shape=(2,), name="h"),
        tf.keras.layers.Dropout(0.0),
        tf.keras.layers.Dense(1, activation="sigmoid", name="o"),
    ])
    # TF 2.15: ['h', 'dropout', 'o'] (None, 1) (None, 2)
    assert [la.name for la in model.layers] == ["h", "dropout", "o"]
    assert model.output_shape == (None, 1) and model.input_shape == (None, 2)
    assert model.layers[0].input_shape == (None, 2)
    inp = tf.keras.Input(shape=(3,), name="in")
    a = tf.keras.layers.Dense(2, kernel_initializer="ones", name="a")(inp)
    b = tf.keras.layers.Dense(2, kernel_initializer="zeros", name="b")(inp)
    fm = tf.keras.Model(inputs=inp, outputs=tf.keras.layers.Concatenate()([a, b]))
    assert fm.output_shape == (None, 4) and fm.input_shape == (None, 3)  # TF 2.15: (None, 4)
    m2 = tf.keras.Sequential()
    m2.add(tf.keras.layers.Conv2D(2, 3, padding="same", input_shape=(5, 5, 1)))
    m2.add(tf.keras.layers.MaxPooling2D())
    m2.add(tf.keras.layers.Flatten())
    m2.add(tf.keras.layers.Dense(3, activation="softmax"))
    # TF 2.15: (None, 3) [(None, 5, 5, 2), (None, 2, 2, 2), (None, 8), (None, 3)]
    assert m2.output_shape == (None, 3)
    assert [la.output_shape for la in m2.layers] == [(None, 5, 5, 2), (None, 2, 2, 2),
                                                     (None, 8), (None, 3)]


# -- static shape checks --------------------------------------------------------------------
def test_reshape_of_partly_known_shape_checks_divisibility():
    x = tf.placeholder(tf.float32, [None, 3])
    assert tf.reshape(x, [6]).shape.as_list() == [6]
    with pytest.raises(ValueError):  # TF 2.15: ValueError at graph construction
        tf.reshape(x, [4])


# -- tf.image crops, pads, rotations, conversions -------------------------------------------
def test_image_crop_pad_rotate_convert():
    img = tf.constant((np.arange(3 * 4 * 1) % 5).reshape(3, 4, 1).astype(np.float32))
    ops = {
        "crop_pad": tf.image.resize_image_with_crop_or_pad(img, 2, 6)[..., 0],
        "crop_bb": tf.image.crop_to_bounding_box(img, 1, 1, 2, 2)[..., 0],
        "pad_bb": tf.image.pad_to_bounding_box(img, 1, 0, 4, 5)[..., 0],
        "central": tf.image.central_crop(img, 0.5)[..., 0],
        "rot1": tf.image.rot90(img)[..., 0], "rot2": tf.image.rot90(img, 2)[..., 0],
        "transpose": tf.image.transpose_image(img)[..., 0],
        "gray": tf.image.rgb_to_grayscale(tf.constant([[[0.2, 0.4, 0.6]]]))[..., 0],
        "gray_u8": tf.image.rgb_to_grayscale(tf.constant([[[10, 200, 30]]], tf.uint8))[..., 0],
        "to_f": tf.image.convert_image_dtype(tf.constant([0, 128, 255], tf.uint8), tf.float32),
        "to_u8": tf.image.convert_image_dtype(tf.constant([0.2, 1.5, -0.1]), tf.uint8,
                                              saturate=True),
        "contrast": tf.image.adjust_contrast(img, 2.0)[..., 0],
        "bright": tf.image.adjust_brightness(img, 0.25)[0, :, 0],
        "gray2rgb": tf.image.grayscale_to_rgb(tf.ones([1, 1, 1])),
    }
    got = {k: np.round(v.astype(np.float64), 4).tolist() for k, v in _run(ops).items()}
    assert got == {  # TF 2.15
        "crop_pad": [[0.0, 0.0, 1.0, 2.0, 3.0, 0.0], [0.0, 4.0, 0.0, 1.0, 2.0, 0.0]],
        "crop_bb": [[0.0, 1.0], [4.0, 0.0]],
        "pad_bb": [[0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 1.0, 2.0, 3.0, 0.0],
                   [4.0, 0.0, 1.0, 2.0, 0.0], [3.0, 4.0, 0.0, 1.0, 0.0]],
        "central": [[1.0, 2.0], [0.0, 1.0], [4.0, 0.0]],
        "rot1": [[3.0, 2.0, 1.0], [2.0, 1.0, 0.0], [1.0, 0.0, 4.0], [0.0, 4.0, 3.0]],
        "rot2": [[1.0, 0.0, 4.0, 3.0], [2.0, 1.0, 0.0, 4.0], [3.0, 2.0, 1.0, 0.0]],
        "transpose": [[0.0, 4.0, 3.0], [1.0, 0.0, 4.0], [2.0, 1.0, 0.0], [3.0, 2.0, 1.0]],
        "gray": [[0.363]],
        "gray_u8": [[124.0]],
        "to_f": [0.0, 0.502, 1.0],
        "to_u8": [51.0, 255.0, 0.0],
        "contrast": [[-1.75, 0.25, 2.25, 4.25], [6.25, -1.75, 0.25, 2.25],
                     [4.25, 6.25, -1.75, 0.25]],
        "bright": [0.25, 1.25, 2.25, 3.25],
        "gray2rgb": [[[1.0, 1.0, 1.0]]],
    }
    assert tf.image.resize_image_with_crop_or_pad(tf.zeros([2, 5, 5, 2]), 3, 7).shape \
        .as_list() == [2, 3, 7, 2]


# -- whole programs that already matched, kept as regressions -------------------------------
def test_greedy_decoding_with_while_loop_and_tensor_arrays():
    vocab, hid, max_len = 6, 4, 5
    W = tf.constant(np.linspace(-1, 1, hid * vocab).reshape(hid, vocab).astype(np.float32))
    E = tf.constant(np.linspace(-0.5, 0.5, vocab * hid).reshape(vocab, hid).astype(np.float32))
    h0 = tf.placeholder(tf.float32, [None, hid])
    batch = tf.shape(h0)[0]

    def cond(t, h, tok, ta, la, done):
        return tf.logical_and(t < max_len, tf.logical_not(tf.reduce_all(done)))

    def body(t, h, tok, ta, la, done):
        h = tf.tanh(h + tf.nn.embedding_lookup(E, tok))
        logits = tf.matmul(h, W)
        nxt = tf.argmax(logits, axis=1, output_type=tf.int32)
        la = la.write(t, tf.reduce_max(tf.nn.log_softmax(logits), axis=1))
        return t + 1, h, nxt, ta.write(t, nxt), la, tf.logical_or(done, tf.equal(nxt, 0))

    ta = tf.TensorArray(tf.int32, size=0, dynamic_size=True, element_shape=[None])
    la = tf.TensorArray(tf.float32, size=max_len)
    t, _, _, ta, la, _ = tf.while_loop(
        cond, body, [0, h0, tf.fill([batch], 1), ta, la, tf.zeros([batch], tf.bool)],
        shape_invariants=[tf.TensorShape([]), tf.TensorShape([None, hid]),
                          tf.TensorShape([None]), tf.TensorShape(None), tf.TensorShape(None),
                          tf.TensorShape([None])])
    toks = tf.transpose(ta.stack())
    assert toks.shape.as_list() == [None, None]  # TF 2.15: [None, None]
    x = tf.Variable(2.0)
    _, y = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * x), [0, tf.constant(1.0)])
    fd = {h0: np.array([[0.1, 0.2, -0.1, 0.3], [0.5, -0.5, 0.2, 0.0]], np.float32)}
    got_toks, got_t, lp, (yv, gv) = _run([toks, t, la.gather(tf.range(t)),
                                          [y, tf.gradients(y, x)[0]]], fd)
    assert got_toks.tolist() == [[0], [0]] and got_t == 1        # TF 2.15
    assert np.allclose(lp, [[-1.6802, -1.6421]], atol=1e-4)      # TF 2.15
    assert (yv, gv) == (8.0, 12.0)                               # TF 2.15


def test_char_rnn_multi_cell_with_sequence_length():
    vocab, hidden = 8, 5
    x = tf.placeholder(tf.int32, [None, None])
    lens = tf.placeholder(tf.int32, [None])
    init = tf.constant_initializer(0.1)
    cells = [tf.nn.rnn_cell.LSTMCell(hidden, initializer=init),
             tf.nn.rnn_cell.GRUCell(hidden, kernel_initializer=init)]
    multi = tf.nn.rnn_cell.MultiRNNCell(
        [tf.nn.rnn_cell.DropoutWrapper(c, output_keep_prob=1.0) for c in cells])
    out, state = tf.nn.dynamic_rnn(multi, tf.one_hot(x, vocab), sequence_length=lens,
                                   dtype=tf.float32)
    logits = tf.layers.dense(out, vocab, kernel_initializer=init, name="proj")
    targets = tf.placeholder(tf.int32, [None, None])
    mask = tf.sequence_mask(lens, tf.shape(x)[1], dtype=tf.float32)
    loss = tf.losses.sparse_softmax_cross_entropy(targets, logits, weights=mask)
    data = np.array([[1, 2, 3, 4], [2, 3, 0, 0], [5, 0, 0, 0]])
    h1, lv = _run([state[1], loss], {x: data, lens: [4, 2, 1], targets: np.roll(data, -1, 1)})
    # TF 2.15: every unit equal; 0.0274 / 0.0099 / 0.0037 for lengths 4 / 2 / 1; loss 2.0794
    assert np.allclose(h1[:, 0], [0.0274, 0.0099, 0.0037], atol=1e-4)
    assert np.allclose(h1, h1[:, :1])
    assert abs(lv - 2.0794) < 1e-4


# -- word2vec with a partitioned embedding ----------------------------------------------------
def test_word2vec_partitioned_embedding_nce_and_sampled_softmax():
    vocab, dim, batch = 20, 6, 4
    init = np.random.RandomState(0).randn(vocab, dim).astype(np.float32) * 0.1
    with tf.variable_scope("w2v"):
        emb = tf.get_variable("emb", [vocab, dim], initializer=tf.zeros_initializer(),
                              partitioner=tf.fixed_size_partitioner(3))
        nce_w = tf.get_variable("nce_w", [vocab, dim],
                                initializer=tf.constant_initializer(init[::-1].copy()))
        nce_b = tf.get_variable("nce_b", [vocab], initializer=tf.zeros_initializer())
    # TF 2.15: a PartitionedVariable of three shards, 7 + 7 + 6 rows
    assert type(emb).__name__ == "PartitionedVariable" and len(emb) == 3
    assert [v.name for v in tf.global_variables()] == [
        "w2v/emb/part_0:0", "w2v/emb/part_1:0", "w2v/emb/part_2:0", "w2v/nce_w:0",
        "w2v/nce_b:0"]
    assert [v.get_shape().as_list() for v in emb] == [[7, 6], [7, 6], [6, 6]]
    inputs = tf.placeholder(tf.int32, [batch])
    labels = tf.placeholder(tf.int64, [batch, 1])
    embed = tf.nn.embedding_lookup(emb, inputs)
    embed_div = tf.nn.embedding_lookup(emb, inputs, partition_strategy="div")
    sv = (tf.constant([1, 5, 7], tf.int64), tf.ones([batch, 1]) * 0.5, tf.ones([3]) * 0.25)
    nce = tf.nn.nce_loss(nce_w, nce_b, labels, embed, num_sampled=3, num_classes=vocab,
                         sampled_values=sv)
    ssl = tf.nn.sampled_softmax_loss(nce_w, nce_b, labels, embed, num_sampled=3,
                                     num_classes=vocab, sampled_values=sv)
    loss = tf.reduce_mean(nce)
    train = tf.train.GradientDescentOptimizer(1.0).minimize(loss)
    fd = {inputs: [1, 2, 7, 3], labels: [[2], [1], [5], [9]]}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        off = 0
        for part in emb:  # the shards hold rows 0-6, 7-13, 14-19
            n = part.get_shape().as_list()[0]
            sess.run(part.assign(init[off:off + n]))
            off += n
        got_embed, got_div, got_nce, got_ssl = sess.run([embed, embed_div, nce, ssl], fd)
        for _ in range(3):
            sess.run(train, fd)
        after = sess.run(loss, fd)
        full = sess.run(tf.convert_to_tensor(emb))
    # TF 2.15 ("mod" maps id i to shard i % 3, row i // 3; "div" to contiguous rows)
    assert np.allclose(got_embed[0], [-0.1706, 0.1951, -0.051, -0.0438, -0.1253, 0.0777],
                       atol=1e-4)
    assert np.allclose(got_div[0], [0.095, -0.0151, -0.0103, 0.0411, 0.0144, 0.1454],
                       atol=1e-4)
    assert np.allclose(got_nce, [5.2217, 5.3644, 5.2457, 5.2937], atol=1e-4)
    assert np.allclose(got_ssl, [1.9142, 1.5645, 1.6041, 1.9805], atol=1e-4)
    assert abs(after - 2.3245) < 1e-4
    assert full.shape == (20, 6)
    assert np.allclose(full[1], [-0.1515, -0.0513, -0.205, -0.0003, 0.1083, 0.0761], atol=1e-4)


def test_partitioned_variable_in_scope_reuse_and_layers():
    with tf.variable_scope("d", partitioner=tf.fixed_size_partitioner(2)):
        y = tf.layers.dense(tf.ones([3, 4]), 5, kernel_initializer=tf.ones_initializer())
        pv = tf.get_variable("pv", [5, 2], initializer=tf.ones_initializer())
    # TF 2.15: every get_variable of the scope is partitioned, bias included
    assert [(v.name, v.shape.as_list()) for v in tf.trainable_variables()] == [
        ("d/dense/kernel/part_0:0", [2, 5]), ("d/dense/kernel/part_1:0", [2, 5]),
        ("d/dense/bias/part_0:0", [3]), ("d/dense/bias/part_1:0", [2]),
        ("d/pv/part_0:0", [3, 2]), ("d/pv/part_1:0", [2, 2])]
    assert (pv.name, pv.get_shape().as_list(), pv.dtype) == ("d/pv", [5, 2], tf.float32)
    assert [(v._save_slice_info.var_offset, v._save_slice_info.var_shape) for v in pv] == [
        ([0, 0], [3, 2]), ([3, 0], [2, 2])]
    with tf.variable_scope("d", reuse=True, partitioner=tf.fixed_size_partitioner(2)):
        assert tf.get_variable("pv", [5, 2]) is pv
    with pytest.raises(ValueError):
        with tf.variable_scope("d", partitioner=tf.fixed_size_partitioner(2)):
            tf.get_variable("pv", [5, 2])
    whole = tf.convert_to_tensor(pv)
    assert whole.op.type == "Identity" and whole.shape.as_list() == [5, 2]  # TF 2.15
    yv, wv = _run([y, whole])
    assert yv.tolist() == [[4.0] * 5] * 3 and wv.tolist() == [[1.0, 1.0]] * 5


# -- tf.data with SparseTensor components ---------------------------------------------------
def test_dataset_sparse_components_slice_map_and_batch():
    st = tf.SparseTensor([[0, 0], [1, 2], [2, 1]], [1.0, 2.0, 3.0], [3, 4])
    ds = tf.data.Dataset.from_tensor_slices(st)
    assert ds.output_classes is tf.SparseTensor and ds.output_shapes.as_list() == [4]
    nxt = ds.make_one_shot_iterator().get_next()
    dense = tf.data.Dataset.from_tensors(tf.SparseTensorValue([[0, 1]], [5], [2, 3])) \
        .map(tf.sparse_tensor_to_dense).make_one_shot_iterator().get_next()
    pairs = tf.data.Dataset.from_tensor_slices((st, [1, 2, 3])).batch(2)
    assert pairs.output_shapes[0].as_list() == [None, 4]
    pair = pairs.make_one_shot_iterator().get_next()
    ragged = tf.data.Dataset.range(4).map(lambda i: tf.SparseTensor(
        tf.reshape(tf.range(i), [-1, 1]), tf.ones([i]), tf.reshape(i, [1]))).batch(2)
    rag = ragged.make_one_shot_iterator().get_next()

    def v(x):
        return x.indices.tolist(), x.values.tolist(), x.dense_shape.tolist()

    with tf.Session() as sess:
        rows = [v(sess.run(nxt)) for _ in range(3)]
        d = sess.run(dense)
        p1, p2 = sess.run(pair), sess.run(pair)
        r1, r2 = sess.run(rag), sess.run(rag)
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(rag)
    # TF 2.15
    assert rows == [([[0]], [1.0], [4]), ([[2]], [2.0], [4]), ([[1]], [3.0], [4])]
    assert d.tolist() == [[0, 5, 0], [0, 0, 0]]
    assert v(p1[0]) == ([[0, 0], [1, 2]], [1.0, 2.0], [2, 4]) and p1[1].tolist() == [1, 2]
    assert v(p2[0]) == ([[0, 1]], [3.0], [1, 4]) and p2[1].tolist() == [3]
    assert v(r1) == ([[1, 0]], [1.0], [2, 1])
    assert v(r2) == ([[0, 0], [0, 1], [1, 0], [1, 1], [1, 2]], [1.0] * 5, [2, 3])


def test_tfrecord_var_len_features_through_parse_example_in_map(tmp_path):
    path = str(tmp_path / "d.tfrecord")
    with tf.python_io.TFRecordWriter(path) as w:
        for i in range(5):
            ex = tf.train.Example(features=tf.train.Features(feature={
                "y": tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 2])),
                "var": tf.train.Feature(int64_list=tf.train.Int64List(value=list(range(i)))),
            }))
            w.write(ex.SerializeToString())
    spec = {"y": tf.FixedLenFeature([], tf.int64), "var": tf.VarLenFeature(tf.int64)}
    batched = tf.data.TFRecordDataset([path]).batch(2).map(lambda s: tf.parse_example(s, spec))
    assert batched.output_classes["var"] is tf.SparseTensor
    single = tf.data.TFRecordDataset(path).map(lambda s: tf.parse_single_example(s, spec)) \
        .map(lambda d: (d["var"], d["y"])).filter(lambda v, y: y >= 0).batch(3)
    b = batched.make_one_shot_iterator().get_next()
    s = single.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        first = sess.run(b)
        var, y = sess.run(s)
        dense = sess.run(tf.sparse_tensor_to_dense(s[0], default_value=-1))
    # TF 2.15
    assert first["var"].indices.tolist() == [[1, 0]] and first["var"].values.tolist() == [0]
    assert first["var"].dense_shape.tolist() == [2, 1]
    assert var.indices.tolist() == [[1, 0], [2, 0], [2, 1]] and y.tolist() == [0, 1, 0]
    assert var.dense_shape.tolist() == [3, 2]
    assert dense.tolist() == [[0, 1, 2, -1], [0, 1, 2, 3]]


# -- scalar kernels keep scalar shapes --------------------------------------------------------
def test_scalar_bitcast_real_imag_stay_scalars():
    c = tf.complex(1.0, 2.0)
    out = _run([tf.real(c), tf.imag(c), tf.bitcast(tf.constant(1.0), tf.int32)])
    # TF 2.15: 1.0, 2.0, 1065353216, all of shape ()
    assert [np.shape(v) for v in out] == [(), (), ()]
    assert [v.item() for v in out] == [1.0, 2.0, 1065353216]


# -- tf.keras recurrent and 1-D layers in graph mode ------------------------------------------
def test_keras_embedding_lstm_gru_names_shapes_and_forward():
    K = tf.keras
    const = K.initializers.Constant
    m = K.Sequential([
        K.layers.Embedding(6, 3, input_length=4, name="emb"),
        K.layers.LSTM(5, return_sequences=True, kernel_initializer=const(0.1),
                      recurrent_initializer=const(-0.05), name="lstm"),
        K.layers.GRU(2, kernel_initializer=const(0.2), recurrent_initializer=const(0.1),
                     name="gru"),
        K.layers.Dense(1, kernel_initializer="ones", name="out"),
    ])
    # TF 2.15 (tf.compat.v1 Keras, v1 LSTM/GRU)
    assert [w.name for w in m.weights] == [
        "emb/embeddings:0", "lstm/lstm_cell/kernel:0", "lstm/lstm_cell/recurrent_kernel:0",
        "lstm/lstm_cell/bias:0", "gru/gru_cell/kernel:0", "gru/gru_cell/recurrent_kernel:0",
        "gru/gru_cell/bias:0", "out/kernel:0", "out/bias:0"]
    assert m.output_shape == (None, 1) and m.count_params() == 249
    assert [la.output_shape for la in m.layers] == [(None, 4, 3), (None, 4, 5), (None, 2),
                                                    (None, 1)]
    m.layers[0].set_weights([np.linspace(-1, 1, 18).reshape(6, 3).astype(np.float32)])
    assert m.layers[1].get_weights()[2].tolist() == [0.0] * 5 + [1.0] * 5 + [0.0] * 10
    pred = m.predict(np.array([[1, 2, 3, 0], [4, 4, 1, 2]], np.int32))
    assert np.allclose(pred, [[-0.08], [0.0223]], atol=1e-4)


def test_keras_functional_recurrent_conv1d_and_merge_layers():
    K, L = tf.keras, tf.keras.layers
    const = K.initializers.Constant
    x = K.Input((4, 3))
    seq, h, c = L.LSTM(2, return_sequences=True, return_state=True,
                       kernel_initializer=const(0.3), recurrent_initializer=const(0.2),
                       recurrent_activation="sigmoid", name="l2")(x)
    s_rnn = L.SimpleRNN(3, kernel_initializer=const(0.5), recurrent_initializer=const(-0.5),
                        go_backwards=True, name="srnn")(x)
    bi = L.Bidirectional(L.LSTM(2, kernel_initializer=const(0.3),
                                recurrent_initializer=const(0.2)), name="bi")(x)
    td = L.TimeDistributed(L.Dense(2, kernel_initializer="ones"), name="td")(x)
    c1 = L.Conv1D(2, 2, padding="causal", kernel_initializer="ones", name="c1")(x)
    c1v = L.Conv1D(3, 3, kernel_initializer=const(0.1), name="c1v")(x)
    lam = L.Lambda(lambda t: t * 2 + 1)(x)
    outs = {"seq": seq, "h": h, "c": c, "s_rnn": s_rnn, "bi": bi, "td": td, "c1": c1,
            "c1v": c1v, "mp": L.MaxPooling1D(2)(x), "gmp": L.GlobalMaxPooling1D()(x),
            "rep": L.RepeatVector(2)(L.GlobalAveragePooling1D()(x)),
            "lr": L.LeakyReLU()(lam - 3), "sub": L.subtract([x, lam]),
            "mx": L.maximum([x, lam])}
    # TF 2.15: static shapes and weight names
    assert {k: v.shape.as_list() for k, v in outs.items()} == {
        "seq": [None, 4, 2], "h": [None, 2], "c": [None, 2], "s_rnn": [None, 3],
        "bi": [None, 4], "td": [None, 4, 2], "c1": [None, 4, 2], "c1v": [None, 2, 3],
        "mp": [None, 2, 3], "gmp": [None, 3], "rep": [None, 2, 3], "lr": [None, 4, 3],
        "sub": [None, 4, 3], "mx": [None, 4, 3]}
    names = [w.name for w in tf.global_variables()]
    assert "bi/backward_lstm/lstm_cell/recurrent_kernel:0" in names and "td/kernel:0" in names
    xv = np.linspace(-1, 1, 24).reshape(2, 4, 3).astype(np.float32)
    sess = K.backend.get_session()
    sess.run(tf.global_variables_initializer())
    r = sess.run(outs, {x: xv})
    expected = {  # TF 2.15
        "seq": [[[-0.0622] * 2, [-0.1072] * 2, [-0.1371] * 2, [-0.1435] * 2],
                [[0.0327] * 2, [0.1478] * 2, [0.3466] * 2, [0.5664] * 2]],
        "h": [[-0.1435] * 2, [0.5664] * 2], "c": [[-0.3249] * 2, [1.0536] * 2],
        "s_rnn": [[-0.5541] * 3, [-0.7586] * 3],
        "bi": [[-0.1466, -0.1466, -0.1222, -0.1222], [0.5283, 0.5283, 0.3826, 0.3826]],
        "td": [[[-2.7391] * 2, [-1.9565] * 2, [-1.1739] * 2, [-0.3913] * 2],
               [[0.3913] * 2, [1.1739] * 2, [1.9565] * 2, [2.7391] * 2]],
        "c1": [[[-2.7391] * 2, [-4.6957] * 2, [-3.1304] * 2, [-1.5652] * 2],
               [[0.3913] * 2, [1.5652] * 2, [3.1304] * 2, [4.6957] * 2]],
        "c1v": [[[-0.587] * 3, [-0.3522] * 3], [[0.3522] * 3, [0.587] * 3]],
        "gmp": [[-0.2174, -0.1304, -0.0435], [0.8261, 0.913, 1.0]],
        "rep": [[[-0.6087, -0.5217, -0.4348]] * 2, [[0.4348, 0.5217, 0.6087]] * 2],
    }
    for k, want in expected.items():
        assert np.allclose(r[k], want, atol=1e-4), k
    assert np.allclose(r["lr"][0, 0], [-1.2, -1.1478, -1.0957], atol=1e-4)
    assert np.allclose(r["sub"], xv - (xv * 2 + 1)) and np.allclose(r["mx"], xv * 2 + 1)


def test_keras_image_helper_layers():
    L = tf.keras.layers
    img = tf.keras.Input((3, 3, 2))
    up, zp = L.UpSampling2D((2, 1))(img), L.ZeroPadding2D(((1, 0), (0, 2)))(img)
    cr, sm = L.Cropping2D(((1, 0), (0, 1)))(img), L.Softmax()(L.GlobalAveragePooling2D()(img))
    # TF 2.15
    assert [t.shape.as_list() for t in (up, zp, cr, sm)] == [
        [None, 6, 3, 2], [None, 4, 5, 2], [None, 2, 2, 2], [None, 2]]
    iv = np.arange(36).reshape(2, 3, 3, 2).astype(np.float32) / 10
    upv, zpv, crv, smv = _run([up, zp, cr, sm], {img: iv})
    assert np.allclose(upv[0, :2, 0], [[0.0, 0.1], [0.0, 0.1]])
    assert np.allclose(zpv[0, 1], [[0.0, 0.1], [0.2, 0.3], [0.4, 0.5], [0, 0], [0, 0]])
    assert np.allclose(crv[0], [[[0.6, 0.7], [0.8, 0.9]], [[1.2, 1.3], [1.4, 1.5]]])
    assert np.allclose(smv[0], [0.475, 0.525], atol=1e-3)


# -- SparseTensor arithmetic and static shapes --------------------------------------------------
def test_sparse_ops_static_shapes_and_dense_multiply():
    a = tf.SparseTensor(indices=[[0, 0], [1, 2], [2, 1]], values=[1.0, 2.0, 3.0],
                        dense_shape=[3, 4])
    ops = {
        "reshape": tf.sparse_tensor_to_dense(tf.sparse_reshape(a, [4, 3])),
        "reshape_infer": tf.sparse_tensor_to_dense(tf.sparse_reshape(a, [-1, 3])),
        "transpose": tf.sparse_tensor_to_dense(tf.sparse_transpose(a)),
        "fill_ind": tf.sparse_fill_empty_rows(tf.SparseTensor([[1, 0]], [4.0], [3, 2]),
                                              -1.0)[1],
        "mul": tf.sparse_tensor_to_dense(a * tf.constant(2.0)),
        "mul_dense": tf.sparse_tensor_to_dense(a * tf.reshape(tf.range(1.0, 5.0), [1, 4])),
        "div": tf.sparse_tensor_to_dense(a / tf.constant(2.0)),
    }
    # TF 2.15: static shapes [4, 3], [4, 3], [4, 3], [3], [3, 4], [3, 4], [3, 4]
    assert {k: v.shape.as_list() for k, v in ops.items()} == {
        "reshape": [4, 3], "reshape_infer": [4, 3], "transpose": [4, 3], "fill_ind": [3],
        "mul": [3, 4], "mul_dense": [3, 4], "div": [3, 4]}
    r = _run(ops)
    assert r["reshape"].tolist() == [[1, 0, 0], [0, 0, 0], [2, 0, 0], [3, 0, 0]]  # TF 2.15
    assert r["transpose"].tolist() == [[1, 0, 0], [0, 0, 3], [0, 2, 0], [0, 0, 0]]
    assert r["fill_ind"].tolist() == [True, False, True]
    assert r["mul"].tolist() == [[2, 0, 0, 0], [0, 0, 4, 0], [0, 6, 0, 0]]
    assert r["mul_dense"].tolist() == [[1, 0, 0, 0], [0, 0, 6, 0], [0, 6, 0, 0]]
    assert r["div"].tolist() == [[0.5, 0, 0, 0], [0, 0, 1, 0], [0, 1.5, 0, 0]]
    grad = tf.gradients(tf.sparse_reduce_sum(a * tf.Variable(3.0)), tf.global_variables())[0]
    assert _run(grad) == 6.0  # d/dw sum(values * w) = sum(values)


# -- Keras callbacks and weight files ------------------------------------------------------------
def test_keras_fit_callbacks_early_stopping_checkpoints_and_weights(tmp_path):
    K = tf.keras
    X = np.linspace(-1, 1, 40).reshape(20, 2).astype(np.float32)
    Y = (X[:, :1] * 3 - X[:, 1:]).astype(np.float32)
    m = K.Sequential([K.layers.Dense(1, input_shape=(2,), kernel_initializer="zeros")])
    m.compile(K.optimizers.SGD(0.1), "mse")
    events = []
    lam = K.callbacks.LambdaCallback(
        on_epoch_begin=lambda e, logs: events.append(("eb", e)),
        on_epoch_end=lambda e, logs: events.append(("ee", e, sorted(logs))),
        on_batch_end=lambda b, logs: events.append(("be", b, sorted(logs))),
        on_train_begin=lambda logs: events.append("tb"),
        on_train_end=lambda logs: events.append("te"))
    es = K.callbacks.EarlyStopping(monitor="loss", patience=1, min_delta=10.0)
    ck = K.callbacks.ModelCheckpoint(str(tmp_path / "w-{epoch:02d}"), save_weights_only=True)
    csv_path = tmp_path / "log.csv"
    h = m.fit(X, Y, batch_size=10, epochs=6, verbose=0, shuffle=False,
              callbacks=[lam, es, ck, K.callbacks.CSVLogger(str(csv_path))])
    # TF 2.15: stops after 2 epochs; hooks in this order, logs passed as logs=
    assert (len(h.history["loss"]), h.epoch, es.stopped_epoch, m.stop_training) == \
        (2, [0, 1], 1, True)
    assert events[:6] == ["tb", ("eb", 0), ("be", 0, ["batch", "loss", "size"]),
                          ("be", 1, ["batch", "loss", "size"]), ("ee", 0, ["loss"]), ("eb", 1)]
    assert events[-1] == "te"
    assert sorted(h.params)[:5] == ["batch_size", "do_validation", "epochs", "metrics",
                                    "samples"]
    lines = csv_path.read_text().splitlines()
    assert lines[0] == "epoch,loss,val_loss" and len(lines) == 3
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("w-02")
    before = m.get_weights()[0].copy()
    m.save_weights(str(tmp_path / "final"))
    m.fit(X, Y, batch_size=10, epochs=2, verbose=0, shuffle=False)
    assert not np.allclose(m.get_weights()[0], before)
    m.load_weights(str(tmp_path / "final"))
    assert np.allclose(m.get_weights()[0], before)
    m.save_weights(str(tmp_path / "w.h5"))
    m.fit(X, Y, batch_size=10, epochs=1, verbose=0, shuffle=False)
    m.load_weights(str(tmp_path / "w.h5"))
    assert np.allclose(m.get_weights()[0], before)


# -- speech-style CTC loss and decoders ------------------------------------------------------------
def test_ctc_loss_and_decoders():
    labels = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], tf.constant([1, 2, 1], tf.int32), [2, 2])
    logits = tf.constant(np.linspace(-1, 1, 4 * 2 * 4).reshape(4, 2, 4).astype(np.float32))
    loss = tf.nn.ctc_loss(labels, logits, [4, 3])
    grad = tf.gradients(tf.reduce_sum(loss), logits)[0]
    beam, beam_lp = tf.nn.ctc_beam_search_decoder(logits, [4, 3], beam_width=3, top_paths=1)
    lv, gv, bv, blp = _run([loss, grad, beam[0], beam_lp])
    # TF 2.15
    assert np.allclose(lv, [2.7283, 2.2951], atol=1e-4)
    assert bv.values.tolist() == [2, 1, 2] and np.allclose(blp.ravel(), [-2.9396, -2.191],
                                                           atol=1e-3)
    assert gv.shape == (4, 2, 4) and np.allclose(gv[3, 1], 0.0)  # past sequence_length 3
    assert np.allclose(gv.sum(axis=2), 0.0, atol=1e-5)  # softmax minus occupancy per frame
    with pytest.raises(tf.errors.InvalidArgumentError):
        _run(tf.nn.ctc_loss(labels, logits, [1, 1]))
