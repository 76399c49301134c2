"""TF1 feature-column programs, sweep 14 (area ``fc``), run under TensorFlow 2.15
``tf.compat.v1`` and flowgraph with the tf-oracle; TensorFlow's printed values are inline.

The programs (census / wide & deep / recommender tutorials, 2016-2019 style): census
hashed and crossed columns through ``indicator_column`` (exact Fingerprint64 ids of
strings and int64s, crosses of strings, bucketized columns and ints, ``hash_key``, the
hash-bucket-in-a-cross error, the uninitialized-table error); a deep tower over
multi-valent SparseTensor input (vocabulary list with OOV buckets, identity with a
default, int64 vocabulary with a default, ``embedding_column`` with mean/sqrtn/sum and
``max_norm``, ``cols_to_vars``); ``linear_model`` with a normalized 2-wide numeric
column, a weighted categorical column, a cross and FTRL steps; ``make_parse_example_spec``
+ ``tf.parse_example`` over serialized Examples with a vocabulary file (``tmp_path``),
defaults of missing fixed-length features and weighted indicators; embeddings warm-started
with ``ckpt_to_load_from``/``tensor_name_in_ckpt``, ``shared_embedding_columns`` (names,
collections), ``weight_collections`` and ``trainable``; canned ``LinearClassifier`` /
``DNNLinearCombinedClassifier`` variable names; a hand-built wide & deep model fed from
placeholders (FTRL + Adagrad, Saver, summaries); ``linear_model(units=3)`` with an int64
vocabulary file, a 2x3 numeric column and ``weight_collections``/``trainable=False``;
constructor errors of every column; and ``tf.contrib.feature_column.sequence_*`` with
``sequence_input_layer`` (checked against TF 2.15's ``SequenceFeatures``, same math) and
``concatenate_context_input``.

Classes of discrepancy found and fixed (one focused test each below):

* ``bucketized_column`` kept its ``boundaries`` as floats: TensorFlow keeps them as given
  (``boundaries=(1, 2)`` in the repr; ``Bucketize`` casts them).
* ``sequence_input_layer`` failed on ``[batch, steps, k]`` ids (several ids per step):
  TensorFlow combines them per step (indicator: counts; embedding: its combiner).
* ``tf.contrib.feature_column.concatenate_context_input`` was missing.

Left as is: flowgraph's vocabulary columns look up through one ``VocabLookup`` op (the
table is built with the op), so there is no ``table_initializer`` collection entry and no
``FailedPreconditionError`` before ``tf.tables_initializer()`` runs (TensorFlow raises
"Table not initialized"); TensorFlow's shape inference folds small constant subgraphs, so a
cross with a bucketized column over *constant* features has a static batch size (3) where
flowgraph gives ``?`` (fed features give ``?`` in both).
"""

import os

import numpy as np
import pytest

import flowgraph as tf

fc = tf.feature_column


def _ids(dense):
    return [np.nonzero(r)[0].tolist() for r in dense]


# -- program 1: census hashed and crossed ids ------------------------------------------------
def test_census_hashed_and_crossed_ids_exact():
    feats = {
        "occupation": tf.constant([["Tech-support"], ["Craft-repair"], ["Sales"]]),
        "native_country": tf.constant([["United-States"], ["India"], [""]]),
        "zip": tf.constant([[94043], [10001], [7]], dtype=tf.int64),
        "age": tf.constant([[25.], [47.], [63.]]),
        "edu": tf.constant([["Bachelors"], ["HS-grad"], ["Masters"]]),
    }
    occ = fc.categorical_column_with_hash_bucket("occupation", hash_bucket_size=1000)
    country = fc.categorical_column_with_hash_bucket("native_country", 1000)
    zipc = fc.categorical_column_with_hash_bucket("zip", 1000, dtype=tf.int64)
    age_b = fc.bucketized_column(fc.numeric_column("age"),
                                 boundaries=[18, 25, 30, 35, 40, 45, 50, 55, 60, 65])
    edu = fc.categorical_column_with_vocabulary_list("edu", ["Bachelors", "HS-grad", "Masters"])
    with pytest.raises(ValueError, match="categorical_column_with_hash_bucket is not supported"):
        fc.crossed_column([occ, country], 777)
    cols = [occ, country, zipc,
            fc.crossed_column(["edu", "occupation"], hash_bucket_size=10000),
            fc.crossed_column([age_b, "edu", "occupation"], hash_bucket_size=10000),
            fc.crossed_column(["zip", age_b], hash_bucket_size=5000, hash_key=12345),
            fc.crossed_column(["occupation", "native_country"], 777)]
    assert [(c.name, c._num_buckets) for c in cols] == [
        ("occupation", 1000), ("native_country", 1000), ("zip", 1000),
        ("edu_X_occupation", 10000), ("age_bucketized_X_edu_X_occupation", 10000),
        ("age_bucketized_X_zip", 5000), ("native_country_X_occupation", 777)]
    outs = [fc.input_layer(feats, [fc.indicator_column(c)]) for c in cols]
    dense = fc.input_layer(feats, [fc.indicator_column(age_b), fc.indicator_column(edu),
                                   fc.numeric_column("age")])
    assert dense.name == "input_layer_7/concat:0" and dense.shape.as_list() == [3, 15]
    with tf.Session() as s:
        s.run(tf.tables_initializer())
        got = [_ids(v) for v in s.run(outs)]
        d = s.run(dense)
    assert got == [[[413], [466], [631]], [[587], [250], []], [[788], [276], [88]],
                   [[4242], [5406], [5858]], [[728], [258], [3624]],
                   [[4789], [703], [2649]], [[152], [618], [197]]]
    assert d[:, 0].tolist() == [25., 47., 63.]
    assert _ids(d[:, 1:12]) == [[2], [6], [9]] and _ids(d[:, 12:]) == [[0], [1], [2]]


# -- program 2: deep tower over multi-valent sparse input -------------------------------------
def test_input_layer_embeddings_multivalent_sparse():
    tf.set_random_seed(42)
    movie = fc.categorical_column_with_vocabulary_list("movie", ["a", "b", "c", "d"],
                                                       num_oov_buckets=2)
    user = fc.categorical_column_with_identity("user", num_buckets=5, default_value=0)
    genre = fc.categorical_column_with_vocabulary_list("genre", [10, 20, 30], dtype=tf.int64,
                                                       default_value=1)
    cols = [fc.embedding_column(genre, 4, combiner="sum", max_norm=0.1),
            fc.indicator_column(movie), fc.embedding_column(movie, 3),
            fc.embedding_column(user, 2, combiner="sqrtn",
                                initializer=tf.truncated_normal_initializer(stddev=0.5, seed=3))]
    feats = {
        "movie": tf.SparseTensor([[0, 0], [0, 1], [1, 0], [2, 0], [2, 1], [2, 2]],
                                 ["a", "c", "zz", "b", "b", "q"], [3, 3]),
        "user": tf.SparseTensor([[0, 0], [1, 0], [1, 1], [2, 0]],
                                tf.constant([1, 4, 9, 2], tf.int64), [3, 2]),
        "genre": tf.constant([[10, 30], [40, 20], [20, 20]], tf.int64)}
    ctv = {}
    with tf.variable_scope("deep"):
        net = fc.input_layer(feats, cols, cols_to_vars=ctv)
    assert net.name == "deep/input_layer/concat:0" and net.shape.as_list() == [3, 15]
    assert {k.name: [(v.name, v.shape.as_list()) for v in vs] for k, vs in ctv.items()} == {
        "genre_embedding": [("deep/input_layer/genre_embedding/embedding_weights:0", [3, 4])],
        "movie_embedding": [("deep/input_layer/movie_embedding/embedding_weights:0", [6, 3])],
        "movie_indicator": [],
        "user_embedding": [("deep/input_layer/user_embedding/embedding_weights:0", [5, 2])]}
    assert [v.name for v in tf.trainable_variables()] == [
        "deep/input_layer/genre_embedding/embedding_weights:0",
        "deep/input_layer/movie_embedding/embedding_weights:0",
        "deep/input_layer/user_embedding/embedding_weights:0"]
    with tf.Session() as s:
        s.run([tf.global_variables_initializer(), tf.tables_initializer()])
        got = np.round(s.run(net), 5)
    np.testing.assert_allclose(got, [
        [0.02243, 0.04431, -0.08487, -0.03746, -0.52533, -0.45937, -0.10728,
         1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.90601, -0.01595],
        [0.16354, 0.04819, -0.04219, -0.09567, 0.66578, 0.20509, -0.66875,
         0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.4627, 0.28893],
        [0.16354, 0.04819, -0.04219, -0.09567, 0.11165, 0.46719, -0.76159,
         0.0, 2.0, 0.0, 0.0, 0.0, 1.0, 0.18181, -0.17983]], atol=2e-5)


# -- program 3: linear_model with FTRL ---------------------------------------------------------
def test_linear_model_weighted_cross_ftrl_steps():
    price = fc.numeric_column("price", shape=(2,), default_value=0.,
                              normalizer_fn=lambda x: (x - 3.) / 2.)
    cat = fc.categorical_column_with_vocabulary_list("cat", ["x", "y", "z"])
    feats = {"price": tf.placeholder(tf.float32, [None, 2], name="price"),
             "cat": tf.SparseTensor([[0, 0], [0, 1], [1, 0]], ["x", "z", "y"], [2, 2]),
             "cat_w": tf.SparseTensor([[0, 0], [0, 1], [1, 0]], [0.5, 2.0, 3.0], [2, 2]),
             "tag": tf.constant([["t1"], ["t2"]])}
    cols = [price, fc.weighted_categorical_column(cat, "cat_w"),
            fc.crossed_column(["tag", cat], 20), fc.categorical_column_with_hash_bucket("tag", 10)]
    with tf.variable_scope("wide"):
        ctv = {}
        logits = fc.linear_model(feats, cols, units=2, sparse_combiner="sqrtn", cols_to_vars=ctv)
    assert logits.name == "wide/linear_model_1/linear_model/weighted_sum:0"
    assert logits.shape.as_list() == [2, 2]
    assert sorted((k if isinstance(k, str) else k.name, v[0].name, v[0].shape.as_list())
                  for k, v in ctv.items()) == [
        ("bias", "wide/linear_model/bias_weights:0", [2]),
        ("cat_X_tag", "wide/linear_model/cat_X_tag/weights:0", [20, 2]),
        ("cat_weighted_by_cat_w", "wide/linear_model/cat_weighted_by_cat_w/weights:0", [3, 2]),
        ("price", "wide/linear_model/price/weights:0", [2, 2]),
        ("tag", "wide/linear_model/tag/weights:0", [10, 2])]
    labels = tf.constant([[1.], [0.]])
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(
        labels=tf.tile(labels, [1, 2]), logits=logits))
    train = tf.train.FtrlOptimizer(0.1).minimize(loss)
    assert "wide/linear_model/bias_weights/Ftrl_1:0" in [v.name for v in tf.global_variables()]
    fd = {feats["price"]: np.array([[1., 5.], [3., 4.]], np.float32)}
    with tf.Session() as s:
        s.run([tf.global_variables_initializer(), tf.tables_initializer()])
        losses = [round(float(s.run([train, loss], fd)[1]), 5) for _ in range(3)]
        out = s.run(logits, fd)
        w = s.run(ctv[cols[1]][0])
    assert losses == [0.69315, 0.6457, 0.60522]
    np.testing.assert_allclose(out, [[0.34695] * 2, [-0.18372] * 2], atol=2e-5)
    np.testing.assert_allclose(w[:, 0], [0.02674, -0.10117, 0.0961], atol=2e-5)


# -- program 4: parse_example with a vocabulary file -------------------------------------------
def _example(color, size, kw, item, w, rating=None):
    f = {"color": tf.train.Feature(bytes_list=tf.train.BytesList(value=color)),
         "kw": tf.train.Feature(bytes_list=tf.train.BytesList(value=kw)),
         "item": tf.train.Feature(int64_list=tf.train.Int64List(value=item)),
         "item_w": tf.train.Feature(float_list=tf.train.FloatList(value=w))}
    if size is not None:
        f["size"] = tf.train.Feature(float_list=tf.train.FloatList(value=size))
    if rating is not None:
        f["rating"] = tf.train.Feature(int64_list=tf.train.Int64List(value=rating))
    return tf.train.Example(features=tf.train.Features(feature=f)).SerializeToString()


def test_parse_example_spec_and_vocabulary_file(tmp_path):
    vf = tmp_path / "vocab.txt"
    vf.write_text("red\ngreen\nblue\nyellow\n")
    color = fc.categorical_column_with_vocabulary_file("color", str(vf), vocabulary_size=3,
                                                       num_oov_buckets=1)
    color2 = fc.categorical_column_with_vocabulary_file("color", str(vf), default_value=0)
    ids = fc.categorical_column_with_identity("item", 8)
    cols = [fc.indicator_column(color),
            fc.embedding_column(fc.categorical_column_with_hash_bucket("kw", 50), 2,
                                initializer=tf.ones_initializer()),
            fc.numeric_column("size", shape=[2], default_value=[1., 2.]),
            fc.numeric_column("rating", dtype=tf.int64, default_value=3),
            fc.indicator_column(fc.weighted_categorical_column(ids, "item_w"))]
    spec = fc.make_parse_example_spec([*cols, fc.indicator_column(color2)])
    assert {k: str(v) for k, v in spec.items()} == {
        "color": "VarLenFeature(dtype=tf.string)", "item": "VarLenFeature(dtype=tf.int64)",
        "item_w": "VarLenFeature(dtype=tf.float32)", "kw": "VarLenFeature(dtype=tf.string)",
        "rating": "FixedLenFeature(shape=(1,), dtype=tf.int64, default_value=(3,))",
        "size": "FixedLenFeature(shape=(2,), dtype=tf.float32, default_value=(1.0, 2.0))"}
    serialized = tf.placeholder(tf.string, [None], name="examples")
    parsed = tf.parse_example(serialized, spec)
    assert parsed["size"].shape.as_list() == [None, 2]
    net = fc.input_layer(parsed, cols)
    assert net.name == "input_layer/concat:0" and net.shape.as_list() == [None, 17]
    c2 = fc.input_layer(parsed, [fc.indicator_column(color2)])
    batch = [_example([b"green", b"purple"], [0.5, 1.5], [b"a", b"b"], [1, 3, 3], [1., 2., .5],
                      [5]),
             _example([b"yellow"], None, [], [7], [4.])]
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        s.run(tf.tables_initializer())
        got, got2 = s.run([net, c2], {serialized: batch})
    np.testing.assert_allclose(got, [
        [0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 2.5, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 5.0, 0.5, 1.5],
        [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 4.0, 0.0, 0.0, 3.0, 1.0, 2.0]])
    assert got2.tolist() == [[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]]


# -- program 5: warm-started and shared embeddings ---------------------------------------------
def test_ckpt_embeddings_shared_columns_collections(tmp_path):
    with tf.Graph().as_default():
        tf.set_random_seed(7)
        with tf.variable_scope("pretrained"):
            tf.get_variable("word_emb", [6, 3],
                                initializer=tf.random_uniform_initializer(-1, 1))
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            path = tf.train.Saver().save(s, str(tmp_path / "emb.ckpt"))
    tf.set_random_seed(11)
    word = fc.categorical_column_with_identity("word", 6)
    q = fc.categorical_column_with_identity("query", 6)
    doc = fc.categorical_column_with_identity("doc", 6)
    e = fc.embedding_column(word, 3, ckpt_to_load_from=path,
                            tensor_name_in_ckpt="pretrained/word_emb", trainable=False)
    e_norm = fc.embedding_column(word, 3, combiner="sum", max_norm=0.5, ckpt_to_load_from=path,
                                 tensor_name_in_ckpt="pretrained/word_emb")
    shared = fc.shared_embedding_columns([q, doc], 4, combiner="sqrtn",
                                         initializer=tf.truncated_normal_initializer(seed=5))
    shared2 = fc.shared_embedding_columns([doc, q], 2, shared_embedding_collection_name="qd_small")
    assert [(c.name, c.dimension, c.shared_embedding_collection_name) for c in shared + shared2] \
        == [("query_shared_embedding", 4, "doc_query_shared_embedding"),
            ("doc_shared_embedding", 4, "doc_query_shared_embedding"),
            ("doc_shared_embedding", 2, "qd_small"), ("query_shared_embedding", 2, "qd_small")]
    feats = {"word": tf.constant([[1, 2], [5, 5]], tf.int64),
             "query": tf.constant([[0], [3]], tf.int64),
             "doc": tf.constant([[2, 4], [1, -1]], tf.int64)}
    ctv = {}
    out = fc.input_layer(feats, [e, *shared], cols_to_vars=ctv, weight_collections=["my_weights"])
    out2 = fc.input_layer(feats, [e_norm, *shared2], trainable=False)
    assert out.shape.as_list() == [2, 11] and out2.shape.as_list() == [2, 7]
    assert {k.name: [v.name for v in vs] for k, vs in ctv.items()} == {
        "doc_shared_embedding": ["input_layer/doc_query_shared_embedding/embedding_weights:0"],
        "query_shared_embedding": [],
        "word_embedding": ["input_layer/word_embedding/embedding_weights:0"]}
    assert [(v.name, v.shape.as_list()) for v in tf.global_variables()] == [
        ("input_layer/doc_query_shared_embedding/embedding_weights:0", [6, 4]),
        ("input_layer/word_embedding/embedding_weights:0", [6, 3]),
        ("input_layer_1/qd_small/embedding_weights:0", [6, 2]),
        ("input_layer_1/word_embedding/embedding_weights:0", [6, 3])]
    assert [v.name for v in tf.trainable_variables()] == [
        "input_layer/doc_query_shared_embedding/embedding_weights:0"]
    assert [v.name for v in tf.get_collection("my_weights")] == [
        "input_layer/doc_query_shared_embedding/embedding_weights:0",
        "input_layer/word_embedding/embedding_weights:0"]
    assert [v.name for v in tf.get_collection("qd_small")] == [
        "input_layer_1/qd_small/embedding_weights:0"]
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        got, got2 = s.run([out, out2])
    np.testing.assert_allclose(got, [
        [0.06687, -1.06683, 0.76492, 1.13518, 1.86445, 0.02756, 1.74239, 0.76707, 0.81775,
         -0.21493, -0.70411],
        [0.81098, 0.14849, 0.46742, -0.80742, -0.27677, 0.52373, 1.81059, -0.02907, -0.63821,
         -0.11309, 0.34368]], atol=2e-5)
    np.testing.assert_allclose(got2, [
        [0.34595, 1.06908, 0.67704, 0.12282, 0.73924, -0.20232, -0.6379],
        [-0.69355, -0.06813, 0.59203, 0.0567, -0.86993, -0.15415, 0.46846]], atol=2e-5)


# -- program 6: canned estimators' variable names ------------------------------------------------
def test_canned_linear_and_wide_deep_variable_names(tmp_path):
    age = fc.numeric_column("age")
    edu = fc.categorical_column_with_vocabulary_list(
        "education", ["Bachelors", "HS-grad", "Masters", "Doctorate"])
    occ = fc.categorical_column_with_hash_bucket("occupation", 20)
    age_b = fc.bucketized_column(age, [30, 40, 50])
    wide = [edu, occ, age_b, fc.crossed_column(["education", "occupation"], 50),
            fc.crossed_column([age_b, "education"], 30)]
    deep = [age, fc.numeric_column("hours"), fc.indicator_column(edu), fc.embedding_column(occ, 3)]
    rng = np.random.RandomState(0)
    data = {"age": rng.randint(18, 70, 16).astype(np.float32),
            "hours": rng.randint(10, 60, 16).astype(np.float32),
            "education": np.array(["Bachelors", "HS-grad", "Masters", "Doctorate"] * 4),
            "occupation": np.array(["Sales", "Tech", "Craft", "Exec"] * 2 + ["Sales"] * 8)}
    labels = (data["age"] > 40).astype(np.int32)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices((data, labels)).batch(8)

    cfg = tf.estimator.RunConfig(tf_random_seed=3)
    lin = tf.estimator.LinearClassifier(wide, model_dir=str(tmp_path / "lin"), config=cfg)
    lin.train(input_fn, steps=2)
    names = lin.get_variable_names()
    assert "linear/linear_model/age_bucketized_X_education/weights/part_0/Ftrl_1" in names
    assert lin.get_variable_value("linear/linear_model/education_X_occupation/weights").shape \
        == (50, 1)
    np.testing.assert_allclose(lin.get_variable_value("linear/linear_model/bias_weights"),
                               [-0.02696], atol=2e-5)
    dl = tf.estimator.DNNLinearCombinedClassifier(
        linear_feature_columns=wide, dnn_feature_columns=deep, dnn_hidden_units=[4, 2],
        model_dir=str(tmp_path / "wd"), config=cfg, linear_sparse_combiner="mean")
    dl.train(input_fn, steps=2)
    got = {n: dl.get_variable_value(n).shape for n in dl.get_variable_names()}
    assert got["dnn/hiddenlayer_0/kernel/Adagrad"] == (9, 4)
    assert got["dnn/input_from_feature_columns/input_layer/occupation_embedding/"
               "embedding_weights/Adagrad"] == (20, 3)
    assert got["linear/linear_model/education_X_occupation/weights/Ftrl_1"] == (50, 1)
    assert got["dnn/logits/kernel"] == (2, 1) and got["linear/linear_model/bias_weights"] == (1,)


# -- program 7: hand-built wide & deep, placeholders, FTRL + Adagrad, Saver ---------------------
def test_wide_deep_placeholders_training_and_checkpoint(tmp_path):
    tf.set_random_seed(2019)
    gender = fc.categorical_column_with_vocabulary_list("gender", ["F", "M"])
    age = fc.numeric_column("age", normalizer_fn=lambda x: (x - 40.) / 10.)
    age_b = fc.bucketized_column(fc.numeric_column("age"), [25, 35, 45, 55])
    item = fc.categorical_column_with_identity("item", 20, default_value=0)
    tags = fc.categorical_column_with_vocabulary_list("tags", [101, 202, 303, 404], dtype=tf.int64,
                                                      num_oov_buckets=2)
    ph = {"gender": tf.placeholder(tf.string, [None, 1], name="gender"),
          "age": tf.placeholder(tf.float32, [None, 1], name="age"),
          "item": tf.placeholder(tf.int64, [None, 2], name="item"),
          "tags": tf.sparse_placeholder(tf.int64, name="tags")}
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    deep_cols = [age, fc.indicator_column(gender), fc.embedding_column(item, 4, combiner="sqrtn"),
                 fc.embedding_column(tags, 3, combiner="sum",
                                     initializer=tf.random_uniform_initializer(-0.1, 0.1, seed=9))]
    with tf.variable_scope("deep"):
        net = fc.input_layer(ph, deep_cols)
        h = tf.layers.dense(net, 8, activation=tf.nn.relu, name="h1")
        deep_logit = tf.layers.dense(h, 1, name="logit")
    with tf.variable_scope("wide"):
        wide_logit = fc.linear_model(ph, [gender, age_b, tags,
                                          fc.crossed_column([age_b, "gender"], 16)],
                                     sparse_combiner="sum")
    assert net.name == "deep/input_layer/concat:0" and net.shape.as_list() == [None, 10]
    logit = deep_logit + wide_logit
    loss = tf.losses.sigmoid_cross_entropy(y, logit)
    gs = tf.train.get_or_create_global_step()
    train = tf.group(
        tf.train.FtrlOptimizer(0.05, l1_regularization_strength=0.01).minimize(
            loss, var_list=tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="wide")),
        tf.train.AdagradOptimizer(0.1).minimize(
            loss, var_list=tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="deep"),
            global_step=gs))
    assert [(v.name, v.shape.as_list()) for v in tf.global_variables()][:11] == [
        ("deep/input_layer/item_embedding/embedding_weights:0", [20, 4]),
        ("deep/input_layer/tags_embedding/embedding_weights:0", [6, 3]),
        ("deep/h1/kernel:0", [10, 8]), ("deep/h1/bias:0", [8]),
        ("deep/logit/kernel:0", [8, 1]), ("deep/logit/bias:0", [1]),
        ("wide/linear_model/age_bucketized/weights:0", [5, 1]),
        ("wide/linear_model/age_bucketized_X_gender/weights:0", [16, 1]),
        ("wide/linear_model/gender/weights:0", [2, 1]),
        ("wide/linear_model/tags/weights:0", [6, 1]),
        ("wide/linear_model/bias_weights:0", [1])]
    fd = {ph["gender"]: [["F"], ["M"], ["M"], ["X"]], ph["age"]: [[23.], [37.], [51.], [64.]],
          ph["item"]: [[1, 5], [7, 25], [3, 3], [-1, 2]],
          ph["tags"]: tf.SparseTensorValue([[0, 0], [1, 0], [1, 1], [3, 0]],
                                           [101, 999, 404, 202], [4, 2]),
          y: [[1.], [0.], [1.], [0.]]}
    saver = tf.train.Saver(max_to_keep=2)
    with tf.Session() as s:
        s.run([tf.global_variables_initializer(), tf.tables_initializer()])
        losses = [round(float(s.run([train, loss], fd)[1]), 5) for _ in range(4)]
        n, lg = s.run([net, logit], fd)
        p = saver.save(s, str(tmp_path / "model"), global_step=gs)
    assert losses == [0.63567, 0.55617, 0.49365, 0.43974]
    np.testing.assert_allclose(n[2], [1.1, 0.0, 1.0, 0.00677, 0.05891, 0.41209, 0.36551,
                                      0.0, 0.0, 0.0], atol=2e-5)
    np.testing.assert_allclose(n[0, 3:], [-0.63529, 0.41426, 0.16882, -0.26996, -0.07701,
                                          -0.01757, -0.05052], atol=2e-5)
    np.testing.assert_allclose(lg.ravel(), [0.58143, -1.10901, 0.33957, -1.01547], atol=2e-5)
    assert os.path.basename(p) == "model-4"
    assert "wide/linear_model/tags/weights/Ftrl_1" in [k for k, _ in tf.train.list_variables(p)]


# -- program 8: linear_model with units, int64 vocabulary file, weight_collections ---------------
def test_linear_model_units_int_vocab_file_weight_collections(tmp_path):
    vf = tmp_path / "ids.txt"
    vf.write_text("1001\n1002\n1003\n1004\n1005\n")
    shop = fc.categorical_column_with_vocabulary_file("shop", str(vf), vocabulary_size=4,
                                                      dtype=tf.int64, num_oov_buckets=3)
    w = fc.weighted_categorical_column(fc.categorical_column_with_identity("kw", 6), "kw_w")
    city = fc.categorical_column_with_hash_bucket("city", 9, dtype=tf.int32)
    cross = fc.crossed_column(["city", "shop"], 13, hash_key=7)
    feats = {"shop": tf.constant([[1003, 1005], [1001, -1], [42, 1004]], tf.int64),
             "mat": tf.reshape(tf.range(18, dtype=tf.float32), [3, 2, 3]) / 10.,
             "kw": tf.constant([[0, 5], [2, 2], [4, 1]], tf.int64),
             "kw_w": tf.constant([[1., 3.], [0.5, 0.5], [2., 9.]]),
             "city": tf.constant([[17], [4], [-1]], tf.int32)}
    ctv = {}
    with tf.variable_scope("lr", initializer=tf.constant_initializer(0.1)):
        out = fc.linear_model(feats, [shop, fc.numeric_column("mat", shape=(2, 3)), w, city, cross],
                              units=3, sparse_combiner="mean", cols_to_vars=ctv,
                              weight_collections=["wide_w"], trainable=False)
        out2 = fc.linear_model(feats, [shop, w], sparse_combiner="sqrtn")
    assert (out.name, out2.name) == ("lr/linear_model_1/linear_model/weighted_sum:0",
                                     "lr/linear_model_1_1/linear_model_1/weighted_sum:0")
    assert sorted((k if isinstance(k, str) else k.name, v[0].shape.as_list())
                  for k, v in ctv.items()) == [
        ("bias", [3]), ("city", [9, 3]), ("city_X_shop", [13, 3]), ("kw_weighted_by_kw_w", [6, 3]),
        ("mat", [6, 3]), ("shop", [7, 3])]
    assert [v.name for v in tf.trainable_variables()] == [
        "lr/linear_model_1/kw_weighted_by_kw_w_1/weights:0", "lr/linear_model_1/shop_1/weights:0",
        "lr/linear_model_1/bias_weights:0"]
    assert [v.name for v in tf.get_collection("wide_w")] == [
        "lr/linear_model/city/weights:0", "lr/linear_model/city_X_shop/weights:0",
        "lr/linear_model/kw_weighted_by_kw_w/weights:0", "lr/linear_model/mat/weights:0",
        "lr/linear_model/shop/weights:0", "lr/linear_model/bias_weights:0"]
    ind = fc.input_layer(feats, [fc.indicator_column(c) for c in (shop, w, city, cross)])
    assert ind.shape.as_list() == [3, 35]
    with tf.Session() as s:
        s.run([tf.global_variables_initializer(), tf.tables_initializer()])
        for v in tf.model_variables():
            shape = v.shape.as_list()
            s.run(v.assign(np.linspace(-1., 1., int(np.prod(shape))).reshape(shape)
                           .astype(np.float32)))
        got, got2, dense = s.run([out, out2, ind])
    np.testing.assert_allclose(got, [[-0.30088, 1.22279, 2.74646], [-3.10441, -1.1572, 0.79],
                                     [-1.31043, 0.98338, 3.27719]], atol=2e-5)
    np.testing.assert_allclose(got2.ravel(), [-0.36754, -2.28284, -1.21985], atol=2e-5)
    assert [[(int(i), float(r[i])) for i in np.nonzero(r)[0]] for r in dense] == [
        [(8, 1.0), (9, 1.0), (16, 1.0), (22, 1.0), (27, 3.0), (30, 1.0), (32, 1.0)],
        [(0, 1.0), (9, 1.0), (15, 1.0), (24, 1.0), (28, 1.0)],
        [(7, 1.0), (12, 1.0), (23, 9.0), (26, 2.0), (31, 1.0), (32, 1.0)]]


# -- program 9: constructor and input errors -----------------------------------------------------
@pytest.mark.parametrize("make, exc, msg", [
    (lambda a, c: fc.numeric_column("n", shape=[0]), ValueError, "shape dimensions must be"),
    (lambda a, c: fc.numeric_column("n", shape=[2], default_value=[1.]), ValueError,
     "The shape of default_value must be equal to given shape"),
    (lambda a, c: fc.numeric_column("n", dtype=tf.string), ValueError,
     "dtype must be convertible to float"),
    (lambda a, c: fc.numeric_column("n", normalizer_fn=3), TypeError,
     "normalizer_fn must be a callable"),
    (lambda a, c: fc.bucketized_column(a, [3, 1]), ValueError, "boundaries must be a sorted list"),
    (lambda a, c: fc.bucketized_column(c, [1]), ValueError, "source_column must be a column"),
    (lambda a, c: fc.categorical_column_with_vocabulary_list("c", ["x", "x"]), ValueError,
     "Duplicate keys in vocabulary_list"),
    (lambda a, c: fc.categorical_column_with_vocabulary_list("c", ["x"], default_value=0,
                                                             num_oov_buckets=2), ValueError,
     "Can't specify both num_oov_buckets and default_value"),
    (lambda a, c: fc.categorical_column_with_vocabulary_file("c", "/nonexistent/v.txt"),
     ValueError, "vocabulary_file in c does not exist"),
    (lambda a, c: fc.categorical_column_with_hash_bucket("h", 0), ValueError,
     "hash_bucket_size must be at least 1"),
    (lambda a, c: fc.embedding_column(c, 0), ValueError, "Invalid dimension 0"),
    (lambda a, c: fc.embedding_column(c, 2, ckpt_to_load_from="x"), ValueError,
     "Must specify both `ckpt_to_load_from` and `tensor_name_in_ckpt`"),
    (lambda a, c: fc.indicator_column(a), ValueError, "Input must be a CategoricalColumn"),
    (lambda a, c: fc.crossed_column(["a"], 10), ValueError, "keys must be a list with length > 1"),
    (lambda a, c: fc.shared_embedding_columns(
        [c, fc.categorical_column_with_identity("i", 5)], 2), ValueError,
     "all categorical_columns must have the same"),
    (lambda a, c: fc.input_layer({"c": tf.constant([["x"]])}, [c]), ValueError,
     "Items of feature_columns must be a _DenseColumn"),
    (lambda a, c: fc.input_layer({"a": tf.constant([[1.]])}, []), ValueError,
     "feature_columns must not be empty"),
    (lambda a, c: fc.input_layer({"a": tf.constant([[1.]])}, [a, a]), ValueError,
     "Duplicate feature column name found"),
    (lambda a, c: fc.input_layer({"a": tf.constant([[1.]])}, {"a": a}), ValueError,
     "Expected feature_columns to be iterable, found dict"),
    (lambda a, c: fc.make_parse_example_spec([a, fc.numeric_column("a", shape=[2])]), ValueError,
     "feature_columns contain different parse_spec for key a"),
])
def test_column_errors_match_tensorflow(make, exc, msg):
    a = fc.numeric_column("a")
    c = fc.categorical_column_with_vocabulary_list("c", ["x", "y"])
    with pytest.raises(exc, match=msg):
        make(a, c)


# -- fixed class: bucketized boundaries kept as given ---------------------------------------------
def test_bucketized_boundaries_kept_as_given():
    a = fc.numeric_column("a")
    b = fc.bucketized_column(a, [1, 2])
    assert b.boundaries == (1, 2) and isinstance(b.boundaries[0], int)
    assert repr(b) == ("BucketizedColumn(source_column=NumericColumn(key='a', shape=(1,), "
                       "default_value=None, dtype=tf.float32, normalizer_fn=None), "
                       "boundaries=(1, 2))")
    out = fc.input_layer({"a": tf.constant([[0.5], [1.0], [2.5]])}, [b])
    with tf.Session() as s:
        assert s.run(out).argmax(1).tolist() == [0, 1, 2]


# -- program 10: sequence columns ----------------------------------------------------------------
def test_sequence_input_layer_values_and_lengths():
    tf.set_random_seed(5)
    sfc = tf.contrib.feature_column
    tokens = sfc.sequence_categorical_column_with_identity("tokens", num_buckets=10)
    words = sfc.sequence_categorical_column_with_vocabulary_list("words", ["the", "cat", "sat"],
                                                                 num_oov_buckets=1)
    price = sfc.sequence_numeric_column("price", shape=(2,))
    feats = {
        "tokens": tf.SparseTensor([[0, 0], [0, 1], [1, 0], [1, 1], [1, 2]],
                                  tf.constant([1, 2, 3, 4, 5], tf.int64), [2, 3]),
        "words": tf.SparseTensor([[0, 0], [0, 1], [1, 0], [1, 1], [1, 2]],
                                 ["cat", "sat", "dog", "the", "the"], [2, 3]),
        "price": tf.SparseTensor([[0, i] for i in range(4)] + [[1, i] for i in range(6)],
                                 [1., 2., 3., 4., 5., 6., 7., 8., 9., 10.], [2, 6])}
    cols = [fc.embedding_column(tokens, 3, initializer=tf.truncated_normal_initializer(seed=1),
                                combiner="sum"), fc.indicator_column(words), price]
    x, n = sfc.sequence_input_layer(feats, cols)
    assert x.shape.as_list() == [2, 3, 9] and (x.dtype, n.dtype) == (tf.float32, tf.int64)
    with tf.Session() as s:
        s.run([tf.global_variables_initializer(), tf.tables_initializer()])
        xv, nv = s.run([x, n])
    assert nv.tolist() == [2, 3]
    np.testing.assert_allclose(xv, [
        [[1.0, 2.0, 1.08241, -0.10623, -0.13065, 0.0, 1.0, 0.0, 0.0],
         [3.0, 4.0, -0.19806, -0.75382, 0.26628, 0.0, 0.0, 1.0, 0.0],
         [0.0] * 9],
        [[5.0, 6.0, -0.03119, -1.07348, -1.0529, 0.0, 0.0, 0.0, 1.0],
         [7.0, 8.0, 0.38684, -0.46372, -0.87967, 1.0, 0.0, 0.0, 0.0],
         [9.0, 10.0, 0.19641, -0.34233, 0.83652, 1.0, 0.0, 0.0, 0.0]]], atol=2e-5)


def _multi_id_features():
    return {"price": tf.SparseTensor([[0, 0], [0, 1], [1, 0]], [1., 2., 3.], [2, 2]),
            "tok": tf.SparseTensor([[0, 0, 0], [0, 0, 1], [0, 1, 0], [1, 0, 0], [1, 0, 1],
                                    [1, 0, 2]], tf.constant([1, 2, 3, 0, 0, 3], tf.int64),
                                   [2, 2, 3])}


_TABLE = [[1., 2.], [3., 4.], [5., 6.], [7., 8.]]


# -- fixed class: several ids per step are combined per step --------------------------------------
def test_sequence_input_layer_multiple_ids_per_step():
    sfc = tf.contrib.feature_column
    price = sfc.sequence_numeric_column("price", normalizer_fn=lambda x: x * 10.)
    tok = sfc.sequence_categorical_column_with_identity("tok", 4)
    emb = fc.embedding_column(tok, 2, initializer=tf.constant_initializer(_TABLE),
                              combiner="sqrtn")
    x, n = sfc.sequence_input_layer(_multi_id_features(),
                                    [price, fc.indicator_column(tok), emb])
    assert x.shape.as_list() == [2, 2, 7]
    means = [sfc.sequence_input_layer(_multi_id_features(), [fc.embedding_column(
        tok, 2, initializer=tf.constant_initializer(_TABLE), combiner=c)])[0]
        for c in ("mean", "sum")]
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        xv, nv, mean, total = s.run([x, n, *means])
    assert nv.tolist() == [2, 1]
    # TensorFlow 2.15 (SequenceFeatures over the same columns):
    np.testing.assert_allclose(xv, [
        [[10.0, 5.65685, 7.07107, 0.0, 1.0, 1.0, 0.0], [20.0, 7.0, 8.0, 0.0, 0.0, 0.0, 1.0]],
        [[30.0, 5.19615, 6.9282, 2.0, 0.0, 0.0, 1.0], [0.0] * 7]], atol=2e-5)
    np.testing.assert_allclose(mean, [[[4., 5.], [7., 8.]], [[3., 4.], [0., 0.]]], atol=1e-6)
    np.testing.assert_allclose(total, [[[8., 10.], [7., 8.]], [[9., 12.], [0., 0.]]], atol=1e-6)


# -- fixed class: concatenate_context_input -------------------------------------------------------
def test_concatenate_context_input():
    sfc = tf.contrib.feature_column
    tok = sfc.sequence_categorical_column_with_identity("tok", 4)
    x, _ = sfc.sequence_input_layer(_multi_id_features(), [fc.indicator_column(tok)])
    c = sfc.concatenate_context_input(tf.constant([[0.5, -0.5], [1.5, 2.5]]), x)
    assert c.name == "concat_1:0" and c.shape.as_list() == [2, 2, 6]
    with tf.Session() as s:
        got = s.run(c)
    np.testing.assert_allclose(got, [
        [[0.0, 1.0, 1.0, 0.0, 0.5, -0.5], [0.0, 0.0, 0.0, 1.0, 0.5, -0.5]],
        [[2.0, 0.0, 0.0, 1.0, 1.5, 2.5], [0.0, 0.0, 0.0, 0.0, 1.5, 2.5]]])
    with pytest.raises(ValueError, match="context_input must have rank 2"):
        sfc.concatenate_context_input(tf.zeros([2]), x)
    with pytest.raises(TypeError, match="sequence_input must have dtype float32"):
        sfc.concatenate_context_input(tf.zeros([2, 2]), tf.zeros([2, 2, 2], tf.int32))
