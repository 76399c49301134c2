"""TF1 staples that TF 2.15 no longer has, so they are checked against NumPy
references written from TF 1.x's documented behaviour:

- the beginner tutorials' MNIST reader (``from tensorflow.examples.tutorials.mnist
  import input_data``; `tf.contrib.learn.datasets.mnist`): files parsed without trusting
  their headers, TF 1.x's scaling, validation split, one-hot labels, `next_batch`'s
  epoch-wise reshuffles drawn from NumPy's generator seeded as TF 1.x seeded it, the
  download of a missing file (atomic; a ``file://`` source here), and the errors;
- `tf.contrib.losses.metric_learning` (triplet semi-hard, lifted structure, N-pairs,
  multi-label N-pairs, contrastive, pairwise distances) against loop-by-loop NumPy
  references, with gradients against finite differences;
- `tf.contrib.resampler.resampler` (spatial transformers' bilinear sampler) against a
  point-by-point reference of TF 1.x's kernel, its gradients for both inputs against
  finite differences, and an identity affine grid that must give the image back.
"""

import gzip
import os

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.examples.tutorials.mnist import input_data

ml = tf.contrib.losses.metric_learning


# -- MNIST files ------------------------------------------------------------------------
def _write_idx(path, magic, array):
    header = np.array([magic, *array.shape], ">u4").tobytes()
    with gzip.open(path, "wb") as f:
        f.write(header + array.astype(np.uint8).tobytes())


@pytest.fixture
def mnist_dir(tmp_path):
    rng = np.random.RandomState(0)
    train_images = rng.randint(0, 256, (60, 28, 28)).astype(np.uint8)
    train_labels = rng.randint(0, 10, 60).astype(np.uint8)
    test_images = rng.randint(0, 256, (12, 28, 28)).astype(np.uint8)
    test_labels = rng.randint(0, 10, 12).astype(np.uint8)
    _write_idx(tmp_path / "train-images-idx3-ubyte.gz", 2051, train_images)
    _write_idx(tmp_path / "train-labels-idx1-ubyte.gz", 2049, train_labels)
    _write_idx(tmp_path / "t10k-images-idx3-ubyte.gz", 2051, test_images)
    _write_idx(tmp_path / "t10k-labels-idx1-ubyte.gz", 2049, test_labels)
    return tmp_path, (train_images, train_labels, test_images, test_labels)


def test_read_data_sets_splits_scales_and_one_hots(mnist_dir):
    path, (train_images, train_labels, test_images, test_labels) = mnist_dir
    data = input_data.read_data_sets(str(path), one_hot=True, validation_size=10)
    assert (data.train.num_examples, data.validation.num_examples,
            data.test.num_examples) == (50, 10, 12)
    assert data.train.images.shape == (50, 784) and data.train.images.dtype == np.float32
    expected = train_images[10:].reshape(50, 784).astype(np.float32) * np.float32(1 / 255)
    np.testing.assert_array_equal(data.train.images, expected)
    assert data.validation.labels.dtype == np.float64
    np.testing.assert_array_equal(data.validation.labels.argmax(1), train_labels[:10])
    np.testing.assert_array_equal(data.test.labels.sum(1), np.ones(12))
    raw = input_data.read_data_sets(str(path), dtype=tf.uint8, reshape=False,
                                    validation_size=0)
    assert raw.train.images.shape == (60, 28, 28, 1) and raw.train.images.dtype == np.uint8
    np.testing.assert_array_equal(raw.test.labels, test_labels)
    np.testing.assert_array_equal(raw.test.images[..., 0], test_images)


def test_next_batch_shuffles_each_epoch_from_the_seeded_numpy_generator(mnist_dir):
    path, (train_images, train_labels, _, _) = mnist_dir
    data = input_data.read_data_sets(str(path), validation_size=20, seed=5)
    labels = train_labels[20:]
    # every DataSet seeds NumPy's global generator with `seed`; the first epoch's order
    # is drawn at the first batch (the reference draws the same from its own generator)
    reference = np.random.RandomState(5)
    first = np.arange(40)
    reference.shuffle(first)
    second = np.arange(40)
    reference.shuffle(second)
    got = [data.train.next_batch(16)[1] for _ in range(3)]  # 16 + 16 + (8 | 8)
    np.testing.assert_array_equal(got[0], labels[first[:16]])
    np.testing.assert_array_equal(got[1], labels[first[16:32]])
    np.testing.assert_array_equal(got[2], np.concatenate(
        [labels[first[32:]], labels[first][second[:8]]]))
    assert data.train.epochs_completed == 1
    images, _ = data.train.next_batch(4, shuffle=False)
    expected = train_images[20:][first][second][8:12].reshape(4, 784) / np.float32(255)
    np.testing.assert_allclose(images, expected, rtol=1e-7)


def test_graph_seed_seeds_the_shuffle_when_no_seed_is_given(mnist_dir):
    path, (_, train_labels, _, _) = mnist_dir
    with tf.Graph().as_default():
        tf.set_random_seed(11)
        data = input_data.read_data_sets(str(path), validation_size=0)
    order = np.arange(60)
    np.random.RandomState(11).shuffle(order)
    np.testing.assert_array_equal(data.train.next_batch(7)[1], train_labels[order[:7]])


def test_softmax_regression_tutorial_trains_on_the_reader(mnist_dir):
    path, _ = mnist_dir
    mnist = input_data.read_data_sets(str(path), one_hot=True, validation_size=0, seed=1)
    x = tf.placeholder(tf.float32, [None, 784])
    y_ = tf.placeholder(tf.float32, [None, 10])
    W = tf.Variable(tf.zeros([784, 10]))
    b = tf.Variable(tf.zeros([10]))
    y = tf.matmul(x, W) + b
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y_, logits=y))
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        feed = {x: mnist.train.images, y_: mnist.train.labels}
        before = sess.run(loss, feed)
        for _ in range(30):
            batch_xs, batch_ys = mnist.train.next_batch(20)
            sess.run(train, {x: batch_xs, y_: batch_ys})
        after = sess.run(loss, feed)
    assert before == pytest.approx(np.log(10), rel=1e-6) and after < 0.9 * before


def test_fake_data_and_import_paths():
    data = input_data.read_data_sets("/nonexistent", fake_data=True, one_hot=False)
    images, labels = data.train.next_batch(3, fake_data=True)
    assert len(images[0]) == 784 and labels == [0, 0, 0]
    from flowgraph.contrib.learn.python.learn.datasets.mnist import read_data_sets

    assert read_data_sets is input_data.read_data_sets
    assert tf.contrib.learn.datasets.mnist.DataSet is input_data.DataSet
    with tf.Session() as sess:  # contrib.framework's sort aliases
        assert sess.run(tf.contrib.framework.sort([3, 1, 2])).tolist() == [1, 2, 3]
        assert sess.run(tf.contrib.framework.argsort([3, 1, 2])).tolist() == [1, 2, 0]
    with pytest.raises(TypeError, match="Invalid image dtype"):
        input_data.DataSet(np.zeros((1, 2, 2, 1)), np.zeros(1), dtype=tf.float64)


def test_bad_files_and_arguments_get_clear_errors(mnist_dir):
    path, _ = mnist_dir
    with pytest.raises(ValueError, match="Validation size should be between 0 and 60"):
        input_data.read_data_sets(str(path), validation_size=61)
    images = path / "train-images-idx3-ubyte.gz"
    _write_idx(images, 2049, np.zeros((2, 28, 28)))
    with pytest.raises(ValueError, match="Invalid magic number 2049"):
        input_data.read_data_sets(str(path))
    # a header declaring far more images than the file holds: refused, not allocated
    with gzip.open(images, "wb") as f:
        f.write(np.array([2051, 1 << 30, 28, 28], ">u4").tobytes() + bytes(784))
    with pytest.raises(ValueError, match="the file holds 784"):
        input_data.read_data_sets(str(path))
    images.write_bytes(b"not gzip at all")
    with pytest.raises(ValueError, match="not a readable gzip file"):
        input_data.read_data_sets(str(path))


def test_missing_files_are_fetched_atomically_from_source_url(mnist_dir, tmp_path_factory):
    source, (_, _, test_images, _) = mnist_dir
    target = tmp_path_factory.mktemp("fresh")
    data = input_data.read_data_sets(str(target), source_url=source.as_uri() + "/",
                                     validation_size=0, reshape=False, dtype=tf.uint8)
    np.testing.assert_array_equal(data.test.images[..., 0], test_images)
    assert sorted(os.listdir(target)) == sorted(os.listdir(source))
    empty = tmp_path_factory.mktemp("nowhere")
    with pytest.raises(OSError, match=r"train-images-idx3-ubyte\.gz is not in .* Put the four"):
        input_data.read_data_sets(str(target / "other"), source_url=empty.as_uri() + "/")
    assert os.listdir(target / "other") == []  # no partial file left behind


# -- metric learning losses -------------------------------------------------------------
def _np_distances(x, squared):
    d2 = ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)
    return d2 if squared else np.sqrt(d2)


def _np_triplet(labels, x, margin):
    d = _np_distances(x, squared=True)
    total, count = 0.0, 0
    for a in range(len(x)):
        negatives = [d[a, k] for k in range(len(x)) if labels[k] != labels[a]]
        for p in range(len(x)):
            if p == a or labels[p] != labels[a]:
                continue
            beyond = [v for v in negatives if v > d[a, p]]
            hard = min(beyond) if beyond else max(negatives)
            total += max(margin + d[a, p] - hard, 0.0)
            count += 1
    return total / count


def _np_lifted(labels, x, margin):
    d = _np_distances(x, squared=False)
    n = len(x)
    total, count = 0.0, 0
    for i in range(n):
        for j in range(n):
            if i == j or labels[i] != labels[j]:
                continue
            s = sum(np.exp(margin - d[i, k]) for k in range(n) if labels[k] != labels[i])
            s += sum(np.exp(margin - d[j, k]) for k in range(n) if labels[k] != labels[j])
            total += max(np.log(s) + d[i, j], 0.0) ** 2
            count += 1
    return 0.25 * total / (count / 2)


def _np_npairs(agreement, anchors, positives, reg_lambda):
    targets = agreement / agreement.sum(1, keepdims=True)
    logits = anchors @ positives.T
    logits = logits - logits.max(1, keepdims=True)
    log_softmax = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    xent = -(targets * log_softmax).sum(1).mean()
    penalty = 0.25 * reg_lambda * ((anchors ** 2).sum(1).mean() + (positives ** 2).sum(1).mean())
    return xent + penalty


@pytest.fixture
def embeddings():
    rng = np.random.RandomState(3)
    return rng.randn(10, 4), np.array([0, 1, 2, 0, 1, 2, 0, 1, 3, 3])


def test_pairwise_distance_matches_numpy_and_has_a_zero_diagonal(embeddings):
    x, _ = embeddings
    with tf.Session() as sess:
        plain, squared = sess.run([ml.pairwise_distance(tf.constant(x)),
                                   ml.pairwise_distance(tf.constant(x), squared=True)])
    np.testing.assert_allclose(plain, _np_distances(x, False), atol=1e-7)
    np.testing.assert_allclose(squared, _np_distances(x, True), atol=1e-7)
    assert np.all(np.diag(plain) == 0)


@pytest.mark.parametrize("margin", [0.2, 1.0, 4.0])
def test_triplet_and_lifted_losses_match_numpy(embeddings, margin):
    x, labels = embeddings
    xf = x.astype(np.float32)
    triplet = ml.triplet_semihard_loss(tf.constant(labels), tf.constant(xf), margin=margin)
    lifted = ml.lifted_struct_loss(tf.constant(labels), tf.constant(xf), margin=margin)
    assert triplet.op.name == "triplet_semihard_loss" and lifted.op.name == "liftedstruct_loss"
    with tf.Session() as sess:
        got_triplet, got_lifted = sess.run([triplet, lifted])
    assert got_triplet == pytest.approx(_np_triplet(labels, xf.astype(np.float64), margin),
                                        rel=1e-5)
    assert got_lifted == pytest.approx(_np_lifted(labels, xf.astype(np.float64), margin),
                                       rel=1e-5)


def test_npairs_contrastive_and_multilabel_match_numpy():
    rng = np.random.RandomState(8)
    anchors, positives = rng.randn(6, 5), rng.randn(6, 5)
    labels = np.array([0, 1, 0, 2, 1, 3])
    same = (labels[:, None] == labels[None, :]).astype(np.float64)
    classes = [[0, 2], [1], [2, 3], [0], [1, 3], [4]]
    indicator = np.zeros((6, 5))
    for i, c in enumerate(classes):
        indicator[i, c] = 1
    sparse = [tf.SparseTensor(indices=[[0, k] for k in c], values=np.ones(len(c), np.int64),
                              dense_shape=[1, 5]) for c in classes]
    pair_labels = np.array([1, 0, 1, 1, 0, 0], np.float32)
    with tf.Session() as sess:
        npairs, multi, contrastive = sess.run([
            ml.npairs_loss(labels, tf.constant(anchors), tf.constant(positives),
                           reg_lambda=0.01),
            ml.npairs_loss_multilabel(sparse, tf.constant(anchors), tf.constant(positives)),
            ml.contrastive_loss(pair_labels, tf.constant(anchors), tf.constant(positives),
                                margin=3.0)])
    assert npairs == pytest.approx(_np_npairs(same, anchors, positives, 0.01), rel=1e-9)
    assert multi == pytest.approx(
        _np_npairs(indicator @ indicator.T, anchors, positives, 0.002), rel=1e-9)
    d = np.sqrt(((anchors - positives) ** 2).sum(1))
    expected = np.mean(pair_labels * d ** 2 + (1 - pair_labels) * np.maximum(3.0 - d, 0) ** 2)
    assert contrastive == pytest.approx(expected, rel=1e-6)
    with pytest.raises(TypeError, match="must be a list of SparseTensors"):
        ml.npairs_loss_multilabel(sparse[0], anchors, positives)


@pytest.mark.parametrize("loss_fn", [ml.triplet_semihard_loss, ml.lifted_struct_loss])
def test_gradients_match_finite_differences(embeddings, loss_fn):
    x, labels = embeddings
    x = x * 0.5  # keep the hinges active and away from their kinks
    emb = tf.placeholder(tf.float64, x.shape)
    loss = loss_fn(tf.constant(labels), emb, margin=2.0)
    (grad,) = tf.gradients(loss, [emb])
    with tf.Session() as sess:
        analytic = sess.run(grad, {emb: x})
        numeric = np.zeros_like(x)
        h = 1e-6
        for idx in np.ndindex(*x.shape):
            up, down = x.copy(), x.copy()
            up[idx] += h
            down[idx] -= h
            numeric[idx] = (sess.run(loss, {emb: up}) - sess.run(loss, {emb: down})) / (2 * h)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-7)


def test_facenet_style_training_lowers_the_triplet_loss():
    rng = np.random.RandomState(0)
    labels = np.repeat(np.arange(4), 6)
    features = rng.randn(24, 8).astype(np.float32) + labels[:, None].astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 8])
    y = tf.placeholder(tf.int32, [None])
    dense = tf.layers.dense(x, 4, kernel_initializer=tf.glorot_uniform_initializer(seed=1))
    emb = tf.nn.l2_normalize(dense, axis=1)
    loss = ml.triplet_semihard_loss(y, emb, margin=0.5)
    train = tf.train.AdamOptimizer(0.05).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        before = sess.run(loss, {x: features, y: labels})
        for _ in range(60):
            sess.run(train, {x: features, y: labels})
        after = sess.run(loss, {x: features, y: labels})
    assert after < 0.7 * before


# -- resampler --------------------------------------------------------------------------
def _np_resampler(data, warp):
    """TF 1.x's bilinear resampler kernel, point by point."""
    batch, height, width, channels = data.shape
    points = warp.reshape(batch, -1, 2)
    out = np.zeros((batch, points.shape[1], channels), data.dtype)

    def pixel(b, px, py):
        if 0 <= px < width and 0 <= py < height:
            return data[b, py, px]
        return np.zeros(channels, data.dtype)

    for b in range(batch):
        for n, (x, y) in enumerate(points[b]):
            if not (x > -1 and y > -1 and x < width and y < height):
                continue
            fx, fy = int(np.floor(x)), int(np.floor(y))
            dx, dy = (fx + 1) - x, (fy + 1) - y
            out[b, n] = (dx * dy * pixel(b, fx, fy) + (1 - dx) * dy * pixel(b, fx + 1, fy)
                         + dx * (1 - dy) * pixel(b, fx, fy + 1)
                         + (1 - dx) * (1 - dy) * pixel(b, fx + 1, fy + 1))
    return out.reshape((*warp.shape[:-1], channels))


def test_resampler_matches_the_kernel_inside_on_the_edges_and_outside():
    rng = np.random.RandomState(4)
    data = rng.randn(2, 4, 5, 3).astype(np.float32)
    # points inside, on pixel centres, in the last-pixel margin and beyond the image
    warp = rng.uniform(-1.6, 5.6, (2, 3, 7, 2)).astype(np.float32)
    warp[0, 0, :3] = [[0, 0], [4, 3], [2, 1]]
    warp[1, 2, :4] = [[-1.0, 0.5], [4.5, 3.5], [-0.5, -0.5], [5.0, 1.0]]
    out = tf.contrib.resampler.resampler(tf.constant(data), tf.constant(warp))
    assert out.shape.as_list() == [2, 3, 7, 3] and out.op.name.startswith("resampler/")
    with tf.Session() as sess:
        got = sess.run(out)
    np.testing.assert_allclose(got, _np_resampler(data, warp), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(got[0, 0, 1], data[0, 3, 4])  # a pixel centre: exact
    assert np.all(got[1, 2, 0] == 0) and np.all(got[1, 2, 3] == 0)  # x = -1, x = width


def test_resampler_gradients_match_finite_differences():
    rng = np.random.RandomState(5)
    data = rng.randn(1, 3, 4, 2)
    warp = rng.uniform(-0.7, 3.7, (1, 5, 2))
    d = tf.placeholder(tf.float64, data.shape)
    w = tf.placeholder(tf.float64, warp.shape)
    out = tf.contrib.resampler.resampler(d, w)
    weights = tf.constant(rng.randn(1, 5, 2))
    loss = tf.reduce_sum(out * weights)
    grads = tf.gradients(loss, [d, w])
    with tf.Session() as sess:
        analytic = sess.run(grads, {d: data, w: warp})
        for k, value in enumerate((data, warp)):
            numeric = np.zeros_like(value)
            for idx in np.ndindex(*value.shape):
                up, down = value.copy(), value.copy()
                up[idx] += 1e-6
                down[idx] -= 1e-6
                feeds = [{d: up, w: warp}, {d: down, w: warp}] if k == 0 else \
                    [{d: data, w: up}, {d: data, w: down}]
                numeric[idx] = (sess.run(loss, feeds[0]) - sess.run(loss, feeds[1])) / 2e-6
            np.testing.assert_allclose(analytic[k], numeric, rtol=1e-6, atol=1e-8)


def test_spatial_transformer_identity_grid_reproduces_the_image():
    image = np.arange(2 * 6 * 8 * 1, dtype=np.float32).reshape(2, 6, 8, 1)
    theta = tf.placeholder(tf.float32, [None, 2, 3])
    xs, ys = np.meshgrid(np.linspace(-1, 1, 8), np.linspace(-1, 1, 6))
    grid = np.stack([xs.ravel(), ys.ravel(), np.ones(48)]).astype(np.float32)  # [3, 48]
    source = tf.matmul(theta, tf.tile(tf.constant(grid)[None], [2, 1, 1]))  # [2, 2, 48]
    pixels = (tf.transpose(source, [0, 2, 1]) + 1.0) * tf.constant([3.5, 2.5])
    out = tf.reshape(tf.contrib.resampler.resampler(tf.constant(image), pixels),
                     [2, 6, 8, 1])
    identity = np.tile(np.array([[1, 0, 0], [0, 1, 0]], np.float32), (2, 1, 1))
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(out, {theta: identity}), image, atol=1e-4)
    with pytest.raises(ValueError, match="warp must be"):
        tf.contrib.resampler.resampler(tf.constant(image), tf.zeros([2, 4, 3]))


def test_a_malformed_source_url_leaves_no_partial_file(tmp_path):
    # urlopen raises ValueError (not OSError) for a URL without a scheme.
    with pytest.raises(OSError, match=r"could not be fetched from nowhere/"):
        input_data.read_data_sets(str(tmp_path), source_url="nowhere/")
    assert os.listdir(tmp_path) == []
