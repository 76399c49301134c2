"""tf.keras.preprocessing (sequence, text, image) against TF 2.15's Keras: expected
values recorded with the tf-oracle (tf.compat.v1.keras.preprocessing)."""

from __future__ import annotations

import os
import random

import numpy as np
import pytest

import flowgraph as tf

P = tf.keras.preprocessing
S, T, IMG = P.sequence, P.text, P.image
SEQS = [[1, 2, 3, 4], [5], [], [6, 7]]


# -- sequence ---------------------------------------------------------------------------
def test_pad_sequences_options():
    out = S.pad_sequences(SEQS)
    assert out.dtype == np.int32
    assert out.tolist() == [[1, 2, 3, 4], [0, 0, 0, 5], [0, 0, 0, 0], [0, 0, 6, 7]]
    assert S.pad_sequences(SEQS, maxlen=3, padding="post", truncating="post",
                           value=-1).tolist() == [[1, 2, 3], [5, -1, -1], [-1, -1, -1],
                                                  [6, 7, -1]]
    f = S.pad_sequences(SEQS, maxlen=2, dtype="float32", value=0.5)
    assert f.dtype == np.float32
    assert f.tolist() == [[3.0, 4.0], [0.5, 5.0], [0.5, 0.5], [6.0, 7.0]]
    assert S.pad_sequences([[[1, 2], [3, 4]], [[5, 6]]], maxlen=3).tolist() == [
        [[0, 0], [1, 2], [3, 4]], [[0, 0], [0, 0], [5, 6]]]
    assert S.pad_sequences([["a", "b"], ["c"]], dtype=object, value="x").tolist() == [
        ["a", "b"], ["x", "c"]]
    assert S.pad_sequences([["a", "b"], ["c"]], dtype="<U3", value="x").tolist() == [
        ["a", "b"], ["x", "c"]]


@pytest.mark.parametrize("kwargs, message", [
    (dict(sequences=[[1]], value="x"), "`dtype` int32 is not compatible with `value`'s type"),
    (dict(sequences=[[1, 2]], maxlen=1, truncating="mid"), 'Truncating type "mid"'),
    (dict(sequences=[[1, 2]], maxlen=3, padding="mid"), 'Padding type "mid"'),
    (dict(sequences=[1, 2]), "must be a list of iterables. Found non-iterable: 1"),
    (dict(sequences=[[[1, 2]], [[1, 2, 3]]]),
     r"shape of sample \(3,\) of sequence at position 1 is different from expected shape"),
])
def test_pad_sequences_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        S.pad_sequences(**kwargs)


def test_timeseries_generator():
    gen = S.TimeseriesGenerator(np.arange(20).reshape(10, 2), np.arange(10), length=3,
                                sampling_rate=2, stride=2, batch_size=2)
    assert len(gen) == 2
    x, y = gen[0]
    assert x.tolist() == [[[0, 1], [4, 5]], [[4, 5], [8, 9]]] and y.tolist() == [3, 5]
    x, y = gen[1]
    assert x.tolist() == [[[8, 9], [12, 13]], [[12, 13], [16, 17]]] and y.tolist() == [7, 9]
    gen = S.TimeseriesGenerator(np.arange(10), np.arange(10) * 10, length=2, start_index=1,
                                end_index=8, reverse=True, batch_size=3)
    assert len(gen) == 2
    x, y = gen[1]
    assert x.tolist() == [[5, 4], [6, 5], [7, 6]] and y.tolist() == [60, 70, 80]
    assert gen.get_config() == {
        "data": "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]",
        "targets": "[0, 10, 20, 30, 40, 50, 60, 70, 80, 90]", "length": 2,
        "sampling_rate": 1, "stride": 1, "start_index": 3, "end_index": 8, "shuffle": False,
        "reverse": True, "batch_size": 3}
    with pytest.raises(ValueError, match=r"`start_index\+length=5 > end_index=2`"):
        S.TimeseriesGenerator(np.arange(3), np.arange(3), length=5)
    with pytest.raises(ValueError, match="Data length is 3 while target length is 4"):
        S.TimeseriesGenerator(np.arange(3), np.arange(4), length=1)


def test_make_sampling_table_and_skipgrams():
    np.testing.assert_allclose(S.make_sampling_table(6, sampling_factor=0.01),
                               [0.0997, 0.0997, 0.1732, 0.2345, 0.2887, 0.3379], atol=1e-4)
    np.testing.assert_allclose(S.make_sampling_table(5),
                               [0.0032, 0.0032, 0.0055, 0.0074, 0.0091], atol=1e-4)
    couples, labels = S.skipgrams([1, 2, 0, 3, 4], 5, window_size=2, negative_samples=0,
                                  shuffle=False)
    assert couples == [[1, 2], [2, 1], [2, 3], [3, 2], [3, 4], [4, 3]]
    assert labels == [1] * 6
    # Seeded like the Keras program, the pairs are Keras' own.
    random.seed(3)
    couples, labels = S.skipgrams([1, 2, 3, 4], 6, window_size=1, negative_samples=1.0,
                                  shuffle=True, seed=7)
    assert couples == [[2, 1], [2, 3], [3, 2], [3, 4], [3, 5], [3, 4], [4, 1], [2, 1],
                       [1, 2], [1, 5], [2, 3], [4, 3]]
    assert labels == [0, 0, 1, 0, 0, 1, 0, 1, 1, 0, 1, 1]
    random.seed(3)
    couples, labels = S.skipgrams([1, 2, 3, 4, 5], 6, window_size=1, negative_samples=0.5,
                                  categorical=True,
                                  sampling_table=S.make_sampling_table(6, 0.5), seed=1)
    assert couples == [[5, 4], [2, 5], [1, 2], [5, 2], [4, 3], [4, 5], [3, 2], [4, 5],
                       [3, 4], [2, 1], [4, 4], [2, 3]]
    assert labels == [[0, 1], [1, 0], [0, 1], [1, 0], [0, 1], [0, 1], [0, 1], [1, 0],
                      [0, 1], [0, 1], [1, 0], [0, 1]]


# -- text -------------------------------------------------------------------------------
TEXTS = ["The cat sat on the mat.", "The dog ate my homework!", "cat and dog", "a b b c c c"]


def test_word_sequences_and_hashing():
    assert T.text_to_word_sequence("Hello, World!  It's\tme...A-B") == [
        "hello", "world", "it's", "me", "a", "b"]
    assert T.text_to_word_sequence("Hello, World", filters="", lower=False, split=",") == [
        "Hello", " World"]
    assert T.hashing_trick("The quick brown fox, the end", 100, hash_function="md5") == [
        51, 13, 19, 11, 51, 34]
    assert T.hashing_trick("a b c", 3, hash_function=lambda w: len(w) * 7) == [2, 2, 2]
    codes = T.one_hot("a b c a", 10)
    assert all(1 <= c < 10 for c in codes) and codes[0] == codes[3]


def test_tokenizer_counts_and_index_order():
    tok = T.Tokenizer()
    tok.fit_on_texts(TEXTS)
    # Ties keep first-seen order: 'the' (3) and 'c' (3), then the 2-counts in order.
    assert sorted(tok.word_index.items(), key=lambda kv: kv[1]) == [
        ("the", 1), ("c", 2), ("cat", 3), ("dog", 4), ("b", 5), ("sat", 6), ("on", 7),
        ("mat", 8), ("ate", 9), ("my", 10), ("homework", 11), ("and", 12), ("a", 13)]
    assert list(tok.word_counts.items())[:6] == [("the", 3), ("cat", 2), ("sat", 1),
                                                 ("on", 1), ("mat", 1), ("dog", 2)]
    assert tok.word_docs["the"] == 2 and tok.word_docs["cat"] == 2
    assert dict(tok.index_docs)[1] == 2 and dict(tok.index_docs)[13] == 1
    assert tok.document_count == 4
    assert tok.texts_to_sequences(["the cat ate unknown words", "c b a"]) == [[1, 3, 9],
                                                                             [2, 5, 13]]


@pytest.mark.parametrize("mode, row0, row1", [
    ("binary", {1: 1.0, 3: 1.0}, {2: 1.0, 5: 1.0}),
    ("count", {1: 2.0, 3: 1.0}, {2: 2.0, 5: 1.0}),
    ("freq", {1: 2 / 3, 3: 1 / 3}, {2: 2 / 3, 5: 1 / 3}),
    ("tfidf", {1: 1.4346, 3: 0.8473}, {2: 1.8601, 5: 1.0986}),
])
def test_tokenizer_matrix_modes(mode, row0, row1):
    tok = T.Tokenizer()
    tok.fit_on_texts(TEXTS)
    m = tok.texts_to_matrix(["the cat the", "c c b zz", ""], mode=mode)
    assert m.shape == (3, 14) and m.dtype == np.float64
    expected = np.zeros((3, 14))
    for j, v in row0.items():
        expected[0, j] = v
    for j, v in row1.items():
        expected[1, j] = v
    np.testing.assert_allclose(m, expected, atol=1e-4)


def test_tokenizer_num_words_oov_char_level_and_json():
    tok = T.Tokenizer(num_words=4, oov_token="<OOV>")
    tok.fit_on_texts(TEXTS)
    assert sorted(tok.word_index.items(), key=lambda kv: kv[1])[:6] == [
        ("<OOV>", 1), ("the", 2), ("c", 3), ("cat", 4), ("dog", 5), ("b", 6)]
    assert tok.texts_to_sequences(["the cat ate unknown words", "c b a"]) == [
        [2, 1, 1, 1, 1], [3, 1, 1]]
    assert tok.sequences_to_texts([[1, 2, 3, 4, 5, 99]]) == ["<OOV> the c <OOV> <OOV> <OOV>"]
    assert tok.texts_to_matrix(["the cat ate"], mode="count").tolist() == [[0.0, 2.0, 1.0,
                                                                            0.0]]
    back = T.tokenizer_from_json(tok.to_json())
    assert back.texts_to_sequences(["the cat ate"]) == [[2, 1, 1]]
    assert back.word_index["cat"] == 4 and back.index_word[4] == "cat"
    assert sorted(tok.get_config()) == [
        "char_level", "document_count", "filters", "index_docs", "index_word", "lower",
        "num_words", "oov_token", "split", "word_counts", "word_docs", "word_index"]
    assert tok.get_config()["word_counts"].startswith('{"the": 3, "cat": 2, "sat": 1, ')
    chars = T.Tokenizer(char_level=True)
    chars.fit_on_texts(["abca", "Bd"])
    assert list(chars.word_index.items()) == [("a", 1), ("b", 2), ("c", 3), ("d", 4)]
    assert chars.texts_to_sequences(["dab"]) == [[4, 1, 2]]
    lists = T.Tokenizer()
    lists.fit_on_texts([["Foo", "bar"], ["bar"]])
    assert list(lists.word_index.items()) == [("bar", 1), ("foo", 2)]
    seqs = T.Tokenizer()
    seqs.fit_on_sequences([[1, 2, 2], [2, 3]])
    assert sorted(seqs.index_docs.items()) == [(1, 1), (2, 2), (3, 1)]
    assert seqs.document_count == 2


def test_tokenizer_errors():
    with pytest.raises(ValueError, match="Specify a dimension"):
        T.Tokenizer().texts_to_matrix(["a"])
    assert T.Tokenizer(num_words=3).sequences_to_matrix([[1, 2, 5]]).tolist() == [[0.0, 1.0,
                                                                                   1.0]]
    with pytest.raises(ValueError, match="Fit the Tokenizer on some data before using tfidf"):
        T.Tokenizer(num_words=3).sequences_to_matrix([[1]], mode="tfidf")
    with pytest.raises(ValueError, match="Unknown vectorization mode"):
        T.Tokenizer(num_words=3).sequences_to_matrix([[1]], mode="nope")
    with pytest.raises(TypeError, match="Unrecognized keyword arguments"):
        T.Tokenizer(foo=1)


# -- image ------------------------------------------------------------------------------
X = np.arange(2 * 3 * 3 * 2, dtype=np.float32).reshape(2, 3, 3, 2)


def test_img_to_array_and_array_to_img():
    pytest.importorskip("PIL")
    arr = np.arange(24, dtype=np.float32).reshape(2, 4, 3)
    img = IMG.array_to_img(arr)
    assert (img.mode, img.size) == ("RGB", (4, 2))
    back = IMG.img_to_array(img)
    assert back.dtype == np.float32 and back.shape == (2, 4, 3)
    np.testing.assert_array_equal(back, np.floor(arr / 23 * 255))  # scaled to 0..255
    assert IMG.img_to_array(img, data_format="channels_first").shape == (3, 2, 4)
    assert IMG.img_to_array(IMG.array_to_img(arr, scale=False), dtype="int32").tolist() == \
        arr.astype(int).tolist()
    assert IMG.array_to_img(np.arange(6.0).reshape(2, 3, 1)).mode == "L"
    assert IMG.array_to_img(np.arange(6.0).reshape(2, 3, 1) * 100, scale=False).mode == "I"
    with pytest.raises(ValueError, match="Unsupported channel number: 2"):
        IMG.array_to_img(np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="Expected image array to have rank 3"):
        IMG.array_to_img(np.zeros((2, 2)))
    assert IMG.img_to_array(np.ones((2, 3))).shape == (2, 3, 1)
    with pytest.raises(ValueError, match="Unknown data_format"):
        IMG.img_to_array(np.zeros((2, 2)), data_format="nchw")


def test_image_generator_featurewise_statistics_and_flow():
    gen = IMG.ImageDataGenerator(featurewise_center=True, featurewise_std_normalization=True,
                               rescale=0.5)
    gen.fit(X)
    np.testing.assert_allclose(gen.mean, [[[8.5, 9.0]]])
    np.testing.assert_allclose(gen.std, [[[5.1881, 5.1881]]], atol=1e-4)
    it = gen.flow(X, np.array([0, 1]), batch_size=1, shuffle=False)
    assert len(it) == 2
    images, labels = next(it)
    assert images.dtype == np.float32 and labels.tolist() == [0]
    np.testing.assert_allclose(images[0, :, :, 0], [[-1.6384, -1.4456, -1.2529],
                                                    [-1.0601, -0.8674, -0.6746],
                                                    [-0.4819, -0.2891, -0.0964]], atol=1e-4)
    np.testing.assert_allclose(gen.standardize(X[1].copy())[2, 2], [1.6384, 1.6384],
                               atol=1e-4)


def test_image_generator_samplewise_zca_and_transforms():
    sw = IMG.ImageDataGenerator(samplewise_center=True, samplewise_std_normalization=True)
    np.testing.assert_allclose(sw.standardize(X[0].copy())[0], [[-1.6384, -1.4456],
                                                                [-1.2529, -1.0601],
                                                                [-0.8674, -0.6746]], atol=1e-4)
    zca = IMG.ImageDataGenerator(zca_whitening=True)
    zca.fit(X)
    assert zca.zca_whitening_matrix.shape == (18, 18)
    out = zca.standardize(X.copy())
    assert out.dtype == np.float32
    np.testing.assert_allclose(out[0, 0], [[-0.6009, -0.6009], [-0.5096, -0.5096],
                                           [-0.4183, -0.4183]], atol=1e-4)
    gen = IMG.ImageDataGenerator()
    assert gen.apply_transform(X[0], {"flip_horizontal": True})[:, :, 0].tolist() == [
        [4.0, 2.0, 0.0], [10.0, 8.0, 6.0], [16.0, 14.0, 12.0]]
    # Keras' 'tx' (height shift) moves along the columns: its matrix is in (x, y) order.
    assert gen.apply_transform(X[0], {"tx": 1})[:, :, 0].tolist() == [
        [2.0, 4.0, 4.0], [8.0, 10.0, 10.0], [14.0, 16.0, 16.0]]
    np.testing.assert_allclose(gen.apply_transform(X[0], {"theta": 90})[:, :, 0],
                               [[4.0, 10.0, 16.0], [2.0, 8.0, 14.0], [0.0, 6.0, 12.0]],
                               atol=1e-5)
    zoom = IMG.ImageDataGenerator(fill_mode="constant").apply_transform(X[0], {"zx": 2, "zy": 2})
    assert zoom[:, :, 1].tolist() == [[0.0, 0.0, 0.0], [0.0, 9.0, 0.0], [0.0, 0.0, 0.0]]
    split = IMG.ImageDataGenerator(validation_split=0.5)
    assert next(split.flow(X, batch_size=4, subset="validation", shuffle=False)).shape == (
        1, 3, 3, 2)
    assert len(next(IMG.ImageDataGenerator().flow(X, np.arange(2), sample_weight=np.ones(2)))) == 3


def test_seeded_transforms_and_flow_follow_keras_draws():
    x = np.arange(2 * 4 * 4, dtype=np.float32).reshape(2, 4, 4)
    np.random.seed(0)
    np.testing.assert_allclose(IMG.random_rotation(x, 30)[0, 0],
                               [0.0786, 1.0773, 2.186, 3.3144], atol=1e-4)
    np.random.seed(0)
    np.testing.assert_allclose(IMG.random_shift(x, 0.3, 0.3)[0, 3],
                               [12.1172, 13.1172, 14.1172, 15.0], atol=1e-4)
    np.random.seed(0)
    np.testing.assert_allclose(IMG.random_shear(x, 20)[1, 1],
                               [20.0182, 21.0182, 22.0182, 23.0012], atol=1e-4)
    np.random.seed(0)
    np.testing.assert_allclose(IMG.random_zoom(x, (0.7, 1.3))[0, 1],
                               [3.7418, 4.7271, 5.7564, 6.7418], atol=1e-4)
    np.random.seed(0)
    np.testing.assert_allclose(IMG.random_channel_shift(x, 5.0)[1, 3],
                               [28.4881, 29.4881, 30.4881, 31.0], atol=1e-4)
    np.testing.assert_array_equal(IMG.apply_channel_shift(x, 5.0)[1, 2], [29, 30, 31, 31])
    with pytest.raises(ValueError, match="`zoom_range` should be a tuple or list of two"):
        IMG.random_zoom(x, (0.7, 1.3, 1))
    images = np.arange(5 * 4 * 4, dtype=np.float32).reshape(5, 4, 4, 1)
    gen = IMG.ImageDataGenerator(rotation_range=30, horizontal_flip=True,
                                 width_shift_range=0.2)
    it = gen.flow(images, np.arange(5), batch_size=2, shuffle=True, seed=3)
    labels = [next(it)[1].tolist() for _ in range(3)]
    batch, y = next(it)
    assert labels == [[3, 4], [1, 0], [2]] and y.tolist() == [3, 4]
    np.testing.assert_allclose(batch[1, 0, :, 0], [67.912, 66.62, 65.173, 64.174], atol=1e-3)
    batch, y = it[1]
    assert y.tolist() == [0, 1]
    np.testing.assert_allclose(batch[0, 0, :, 0], [2.403, 2.84, 3.654, 4.775], atol=1e-3)


def test_image_generator_random_augmentation_statistics():
    rng = np.random.RandomState(0)
    images = rng.rand(64, 8, 8, 1).astype(np.float32)
    gen = IMG.ImageDataGenerator(horizontal_flip=True, rotation_range=20,
                               width_shift_range=0.1)
    batch = next(gen.flow(images, batch_size=64, shuffle=False, seed=3))
    assert batch.shape == images.shape and batch.dtype == np.float32
    assert not np.allclose(batch, images)
    # Flips, small rotations and shifts (nearest fill) keep the pixel distribution.
    assert abs(batch.mean() - images.mean()) < 0.05
    assert batch.min() >= images.min() - 1e-6 and batch.max() <= images.max() + 1e-6
    flips = IMG.ImageDataGenerator(horizontal_flip=True)
    params = [flips.get_random_transform((8, 8, 1)) for _ in range(200)]
    share = np.mean([p["flip_horizontal"] for p in params])
    assert 0.35 < share < 0.65


def test_flow_from_directory(tmp_path, capsys):
    pytest.importorskip("PIL")
    colors = {"cats": 10.0, "dogs": 200.0}
    for label, value in colors.items():
        (tmp_path / label / "sub").mkdir(parents=True)
        for i, where in enumerate(["b.png", "a.jpg", "sub/c.png", "notes.txt"]):
            if where.endswith(".txt"):
                (tmp_path / label / where).write_text("not an image")
                continue
            IMG.save_img(str(tmp_path / label / where), np.full((6, 8, 3), value + i),
                         scale=False)
    gen = IMG.ImageDataGenerator(rescale=1.0, validation_split=1 / 3)
    it = gen.flow_from_directory(str(tmp_path), target_size=(3, 4), batch_size=4,
                                 shuffle=False)
    assert "Found 6 images belonging to 2 classes." in capsys.readouterr().out
    assert it.class_indices == {"cats": 0, "dogs": 1}
    assert it.filenames == [os.path.join("cats", "a.jpg"), os.path.join("cats", "b.png"),
                            os.path.join("cats", "sub", "c.png"),
                            os.path.join("dogs", "a.jpg"), os.path.join("dogs", "b.png"),
                            os.path.join("dogs", "sub", "c.png")]
    assert it.classes.tolist() == [0, 0, 0, 1, 1, 1] and len(it) == 2
    x, y = next(it)
    assert x.shape == (4, 3, 4, 3) and x.dtype == np.float32
    assert y.tolist() == [[1, 0], [1, 0], [1, 0], [0, 1]]
    assert x[1, 0, 0].tolist() == [10.0, 10.0, 10.0]      # cats/b.png, a lossless PNG
    assert x[2, 0, 0].tolist() == [12.0, 12.0, 12.0]
    sparse = gen.flow_from_directory(str(tmp_path), target_size=(3, 4), class_mode="sparse",
                                     color_mode="grayscale", subset="validation",
                                     shuffle=False)
    x, y = next(sparse)
    assert x.shape == (2, 3, 4, 1) and y.tolist() == [0, 1]
    assert next(gen.flow_from_directory(str(tmp_path), class_mode="binary", batch_size=6,
                                        subset="training", target_size=(3, 4)))[1].shape == (4,)
    only = gen.flow_from_directory(str(tmp_path), classes=["dogs"], class_mode=None,
                                   target_size=(3, 4))
    assert only.samples == 3 and next(only).shape == (3, 3, 4, 3)
    with pytest.raises(ValueError, match="Invalid class_mode"):
        gen.flow_from_directory(str(tmp_path), class_mode="nope")
