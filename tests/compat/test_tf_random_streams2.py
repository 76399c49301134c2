"""Seeded TF1 programs print TensorFlow's numbers, part 2: ``tf.multinomial`` /
``tf.random.categorical`` (and the stateless categorical on large inputs, which
TensorFlow splits over its intra-op threads), ``tf.RandomShuffleQueue``'s dequeue order,
the candidate samplers behind ``sampled_softmax_loss`` / ``nce_loss`` and
``compute_accidental_hits``. Every value below is what TensorFlow 2.15 printed for the
same program (tf-oracle, a 2-core machine), as printed."""

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.backends.cpu import random_tf_streams


@pytest.fixture(autouse=True)
def _fresh_graph():
    with tf.Graph().as_default() as g:
        yield g


_LOGITS = np.log(np.array([[0.1, 0.2, 0.3, 0.4], [0.5, 0.25, 0.125, 0.125]], np.float32))
_BIG = np.random.RandomState(0).randn(256, 1000).astype(np.float32)


def test_multinomial_and_categorical_match_tensorflow():
    tf.set_random_seed(7)
    a = tf.multinomial(_LOGITS, 6)
    b = tf.random.categorical(tf.constant(_LOGITS, tf.float64), 5, seed=3, dtype=tf.int64)
    c = tf.multinomial([[1.0, -np.inf, 2.0, np.nan, 0.5]], 7, seed=11)
    f = tf.random.stateless_categorical(_LOGITS, 9, seed=[1, 2])
    with tf.Session() as sess:
        assert sess.run(a).tolist() == [[0, 3, 3, 3, 3, 1], [0, 0, 1, 0, 3, 0]]
        assert sess.run(a).tolist() == [[2, 3, 0, 2, 0, 0], [0, 2, 3, 3, 2, 0]]
        bv = sess.run(b)
        assert bv.dtype == np.int64
        assert bv.tolist() == [[1, 2, 3, 0, 2], [2, 1, 2, 3, 1]]
        assert sess.run(c).tolist() == [[0, 2, 2, 2, 0, 2, 2]]  # never a non-finite class
        assert sess.run(f).tolist() == [[3, 3, 1, 3, 2, 3, 3, 1, 3],
                                        [2, 1, 0, 0, 0, 1, 0, 2, 0]]
    with tf.Session() as sess:  # a new session restarts the stream
        assert sess.run(a).tolist() == [[0, 3, 3, 3, 3, 1], [0, 0, 1, 0, 3, 0]]


def test_large_multinomial_draws_as_tensorflow_splits_its_rows(monkeypatch):
    """256 rows of 1000 classes are split over the intra-op threads (2 here, as on the
    machine that ran TensorFlow); each block of rows starts its own run of the stream."""
    monkeypatch.setattr(random_tf_streams, "default_threads", lambda: 2)
    tf.set_random_seed(7)
    d = tf.multinomial(_BIG, 10, seed=5)
    e = tf.random.stateless_categorical(_BIG, 10, seed=[4, 2])
    g = tf.multinomial(_BIG[:40], 3, seed=6)
    config = tf.ConfigProto(intra_op_parallelism_threads=2)
    with tf.Session(config=config) as sess:
        dv, ev, gv = sess.run([d, e, g])
    assert dv[:3, :5].tolist() == [[943, 336, 532, 187, 952], [645, 666, 117, 749, 297],
                                   [975, 787, 211, 740, 326]]
    assert int(dv.sum()) == 1265674 and int((dv * np.arange(10)).sum()) == 5655164
    assert dv[100].tolist() == [699, 434, 798, 335, 467, 305, 384, 792, 205, 690]
    assert int(ev.sum()) == 1290491
    assert ev[200].tolist() == [404, 366, 917, 319, 443, 328, 95, 369, 78, 499]
    assert int(gv.sum()) == 56108 and gv[37].tolist() == [930, 97, 9]


def test_thread_blocks_follow_eigen():
    blocks = random_tf_streams.parallel_for_blocks
    assert blocks(2, 1330, 2) == [(0, 2)]  # too little work to split
    assert blocks(256, 50_498, 2) == [(i, i + 32) for i in range(0, 256, 32)]
    assert blocks(40, 50_149, 2) == [(i, i + 5) for i in range(0, 40, 5)]
    assert blocks(7, 10**6, 1) == [(0, 7)]


def test_random_shuffle_queue_dequeues_in_tensorflows_order():
    q = tf.RandomShuffleQueue(50, 0, [tf.int32, tf.float32], shapes=[[], [2]], seed=3)
    enq = q.enqueue_many([tf.range(20), tf.reshape(tf.range(40.0), [20, 2])])
    deq = q.dequeue_many(7)
    one = q.dequeue()
    tf.set_random_seed(99)  # seeds from the graph seed
    q2 = tf.RandomShuffleQueue(20, 2, tf.int64, shapes=[[]])
    enq2 = q2.enqueue_many([tf.range(10, dtype=tf.int64)])
    deq2 = q2.dequeue_up_to(5)
    with tf.Session() as sess:
        sess.run(enq)
        ints, floats = sess.run(deq)
        assert ints.tolist() == [7, 4, 10, 11, 15, 16, 18]
        assert floats[:, 0].tolist() == [14.0, 8.0, 20.0, 22.0, 30.0, 32.0, 36.0]
        assert sess.run(one)[0] == 14
        sess.run(enq)
        assert sess.run(deq)[0].tolist() == [9, 7, 0, 17, 8, 5, 11]
        sess.run(enq2)
        assert sess.run(deq2).tolist() == [4, 7, 1, 9, 2]
        sess.run(enq2)
        assert sess.run(deq2).tolist() == [3, 5, 9, 3, 6]
    with tf.Session() as sess:
        sess.run(enq)
        assert sess.run(deq)[0].tolist() == [7, 4, 10, 11, 15, 16, 18]


_LABELS = [[1, 5], [7, 0], [3, 3]]
_UNIGRAMS = [5.0, 1, 2, 3, 9, 4, 1, 1, 2, 7]


def _run_twice(sampler):
    with tf.Session() as sess:
        return [[v.tolist() for v in sess.run(sampler)] for _ in range(2)]


def test_uniform_and_log_uniform_samplers_match_tensorflow():
    labels = tf.constant(_LABELS, tf.int64)
    u = _run_twice(tf.nn.uniform_candidate_sampler(labels, 2, 6, True, 10, seed=3))
    assert [r[0] for r in u] == [[5, 0, 3, 8, 7, 4], [2, 1, 3, 8, 7, 0]]
    assert u[0][1] == [[0.6000000238418579] * 2] * 3
    assert u[1][2] == [0.5695328116416931] * 6  # 1 - (1 - p)^tries, tries > 6
    big = _run_twice(tf.nn.uniform_candidate_sampler(labels, 2, 8, False, 1000003, seed=4))
    assert big[0][0] == [123371, 999511, 845886, 513755, 37321, 57480, 638705, 783559]
    assert big[1][0] == [390836, 793688, 791509, 117218, 152594, 628387, 859451, 61157]
    assert big[0][1][0] == [7.999976332939696e-06] * 2
    lu = _run_twice(tf.nn.log_uniform_candidate_sampler(labels, 2, 7, True, 50, seed=5))
    assert lu[0][0] == [0, 7, 15, 13, 8, 2, 34]
    assert lu[0][1] == [[0.5813417434692383, 0.2738226652145386],
                        [0.21597427129745483, 0.788071870803833],
                        [0.373382031917572, 0.373382031917572]]
    assert lu[1][0] == [7, 6, 27, 0, 43, 2, 38]
    assert lu[1][2][:3] == [0.2096942514181137, 0.2377317249774933, 0.062474604696035385]
    lu2 = _run_twice(tf.nn.log_uniform_candidate_sampler(labels, 2, 9, False, 100000,
                                                         seed=6))
    assert lu2[0][0] == [4, 5, 242, 107, 7103, 1601, 56558, 11698, 68]
    assert lu2[1][0] == [1, 339, 733, 2, 425, 2082, 5, 190, 1599]
    assert lu2[1][2][:2] == [0.31696397066116333, 0.0022958293557167053]


def test_graph_seeded_log_uniform_sampler_of_a_sampled_softmax_size():
    tf.set_random_seed(17)
    labels = tf.constant(_LABELS, tf.int64)
    s = _run_twice(tf.nn.log_uniform_candidate_sampler(labels, 2, 64, True, 1000))
    assert s[0][0][:12] == [27, 71, 209, 24, 10, 14, 812, 647, 59, 95, 17, 479]
    assert s[0][0][-4:] == [22, 23, 83, 11] and len(set(s[0][0])) == 64
    assert s[0][1] == [[0.9954051971435547, 0.8657819628715515],
                       [0.7835482954978943, 0.9999180436134338],
                       [0.9461755752563477, 0.9461755752563477]]
    assert s[1][0][:6] == [7, 702, 0, 14, 111, 720]
    assert s[1][2][:2] == [0.8047667145729065, 0.01935826987028122]


def test_unigram_samplers_match_tensorflow():
    labels = tf.constant(_LABELS, tf.int64)
    learned = _run_twice(tf.nn.learned_unigram_candidate_sampler(labels, 2, 5, True, 12,
                                                                  seed=7))
    assert learned[0] == [[3, 7, 1, 10, 4], [[0.4166666865348816] * 2] * 3,
                          [0.4166666865348816] * 5]
    # the counts learned from the first batch's classes shape the second draw
    assert learned[1][0] == [6, 5, 0, 9, 3]
    assert learned[1][1][2] == [0.8333333730697632] * 2
    assert learned[1][2] == [0.2777777910232544, 0.5555555820465088, 0.5555555820465088,
                             0.2777777910232544, 0.8333333730697632]
    multi = _run_twice(tf.nn.learned_unigram_candidate_sampler(labels, 2, 6, False, 13,
                                                                seed=8))
    assert [r[0] for r in multi] == [[1, 7, 7, 6, 8, 0], [3, 12, 3, 0, 8, 10]]
    fixed = _run_twice(tf.nn.fixed_unigram_candidate_sampler(
        labels, 2, 4, True, 10, unigrams=_UNIGRAMS, seed=9))
    assert [r[0] for r in fixed] == [[5, 8, 2, 0], [4, 9, 2, 7]]
    assert fixed[0][1] == [[0.15964026749134064, 0.5172059535980225],
                           [0.15964026749134064, 0.6034305691719055],
                           [0.41589412093162537, 0.41589412093162537]]
    assert fixed[0][2] == [0.5172059535980225, 0.29745304584503174, 0.29745304584503174,
                           0.6034305691719055]
    distorted = _run_twice(tf.nn.fixed_unigram_candidate_sampler(
        labels, 2, 6, False, 10, unigrams=_UNIGRAMS, distortion=0.75, seed=10))
    assert [r[0] for r in distorted] == [[2, 7, 2, 4, 0, 3], [9, 5, 4, 3, 0, 0]]
    assert distorted[1][2][:2] == [1.0619460344314575, 0.6979493498802185]
    reserved = _run_twice(tf.nn.fixed_unigram_candidate_sampler(
        labels, 2, 3, True, 12, num_reserved_ids=2, unigrams=_UNIGRAMS, seed=11))
    assert [r[0] for r in reserved] == [[6, 11, 5], [7, 10, 11]]
    assert reserved[0][1][0] == [0.0, 0.3012405037879944]  # reserved ids: weight 0
    assert reserved[0][2] == [0.6954762935638428, 0.5904000401496887, 0.3012405037879944]
    # shard 1 of 2 keeps ids 1, 3, 5, 7, 9 and numbers them 0..4
    shard = _run_twice(tf.nn.fixed_unigram_candidate_sampler(
        tf.constant([[1, 2]], tf.int64), 2, 3, True, 5, num_shards=2, shard=1,
        unigrams=_UNIGRAMS, seed=12))
    assert shard == [[[4, 2, 1], [[0.5641937255859375, 0.68359375]],
                      [0.8998870849609375, 0.68359375, 0.5641937255859375]],
                     [[3, 2, 4], [[0.5625, 0.75]], [0.1875, 0.75, 1.3125]]]


def test_accidental_hits_name_the_last_position_of_a_repeated_sample():
    labels = tf.constant(_LABELS, tf.int64)
    hits = tf.nn.compute_accidental_hits(labels, tf.constant([3, 5, 3, 1, 0], tf.int64), 2)
    with tf.Session() as sess:
        rows, ids, weights = sess.run(hits)
    assert rows.tolist() == [0, 0, 1, 2, 2] and ids.tolist() == [3, 1, 4, 2, 2]
    assert weights.tolist() == [-3.4028234663852886e+38] * 5


def test_sampler_errors_name_the_op():
    labels = tf.constant([[1], [12]], tf.int64)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"UniformCandidateSampler: `true_candidate` out of range "
                                 r"\[0, 10\), received 12"):
            sess.run(tf.nn.uniform_candidate_sampler(labels, 1, 3, True, 10, seed=1))
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="range is 9 must be equal to weights size  10"):
            sess.run(tf.nn.fixed_unigram_candidate_sampler(
                tf.constant([[1]], tf.int64), 1, 2, True, 9, unigrams=_UNIGRAMS, seed=1))


def test_random_gamma_matches_tensorflow():
    """TensorFlow 2.15 samples in float64 for every dtype (alpha 1: one exponential)."""
    tf.set_random_seed(3)
    a = tf.random_gamma([5], 2.5)
    b = tf.random_gamma([3, 2], [0.5, 4.0], dtype=tf.float64, seed=4)
    c = tf.random_gamma([4], [[0.1], [1.0], [30.0]], beta=2.0, dtype=tf.float16, seed=5)
    d = tf.random_gamma([10000], 0.7, seed=6)
    e = tf.random_gamma([2000], [1.5, 0.2, 9.0], dtype=tf.float64, seed=7)
    with tf.Session() as sess:
        assert sess.run(a).tolist() == [4.352511882781982, 2.3300628662109375,
                                        0.4807683825492859, 2.6064021587371826,
                                        2.356910228729248]
        assert sess.run(a).tolist() == [0.030117370188236237, 2.016981363296509,
                                        2.5825672149658203, 3.5075089931488037,
                                        2.075934648513794]
        assert sess.run(b).tolist() == [
            [[0.030098978607101822, 1.7353096468824127], [0.358395496536684, 2.4988507549818553]],
            [[0.15078957071898044, 3.920118165545469], [0.8172507152364755, 6.0351441492509466]],
            [[0.00178257670591158, 4.594045294990657], [0.5937836290652547, 3.323038723731894]]]
        cv = sess.run(c)
        assert cv.dtype == np.float16
        assert cv[:, :, 0].tolist() == [
            [0.00032901763916015625, 0.5986328125, 15.671875],
            [0.061981201171875, 0.07879638671875, 15.25],
            [0.0050048828125, 1.2724609375, 13.609375],
            [6.103515625e-05, 0.343505859375, 18.265625]]
        dv = sess.run(d)
        assert dv[-3:].tolist() == [0.877029299736023, 0.2564900517463684, 2.0503475666046143]
        assert round(float(dv.astype(np.float64).sum()), 1) == 7030.9
        ev = sess.run(e)
        assert ev.sum(axis=0).tolist() == [2936.6520750846644, 409.45002415294186,
                                           18050.973360364263]
        assert ev[1234].tolist() == [2.7603598168350976, 0.0005940462883047299,
                                     7.401449164067404]
        assert sess.run(tf.random_gamma([0], [1.0, 2.0], seed=1)).shape == (0, 2)
        odd = sess.run(tf.random_gamma([3], [0.0, -1.0, float("nan")], seed=1))
        assert odd[:, 0].tolist() == [1.1754943508222875e-38] * 3  # tiny, not 0
        assert np.isnan(odd[:, 1:]).all()


def test_random_poisson_matches_tensorflow():
    tf.set_random_seed(2)
    a = tf.random_poisson([3.0, 25.0], [6])
    b = tf.random_poisson([0.5, 9.99, 10.0, 1000.0], [3], dtype=tf.int32, seed=3)
    c = tf.random_poisson(tf.constant([[4.0], [150.0]], tf.float64), [4], dtype=tf.int64,
                          seed=4)
    d = tf.random_poisson(7.5, [10000], seed=5)
    e = tf.random_poisson([30.0, 6e4], [5000], dtype=tf.float16, seed=6)
    f = tf.random_poisson(tf.constant([2, 40], tf.int32), [3], dtype=tf.float64, seed=7)
    with tf.Session() as sess:
        assert sess.run(a).tolist() == [[3.0, 30.0], [3.0, 25.0], [2.0, 21.0], [3.0, 21.0],
                                        [2.0, 23.0], [1.0, 25.0]]
        assert sess.run(a).tolist() == [[3.0, 25.0], [4.0, 34.0], [5.0, 18.0], [2.0, 26.0],
                                        [2.0, 31.0], [3.0, 25.0]]
        bv = sess.run(b)
        assert bv.dtype == np.int32
        assert bv.tolist() == [[0, 8, 9, 986], [0, 12, 7, 999], [1, 11, 8, 924]]
        assert sess.run(c).tolist() == [[[2], [134]], [[2], [126]], [[4], [143]],
                                        [[6], [139]]]
        dv = sess.run(d)
        assert float(dv.sum()) == 74906.0 and dv[-5:].tolist() == [5.0, 8.0, 15.0, 6.0, 11.0]
        ev = sess.run(e)
        assert ev.dtype == np.float16
        assert ev.astype(np.float64).sum(axis=0).tolist() == [149819.0, 300003008.0]
        assert ev[:3].tolist() == [[26.0, 59616.0], [34.0, 59872.0], [35.0, 59968.0]]
        assert sess.run(f).tolist() == [[1.0, 31.0], [4.0, 39.0], [1.0, 45.0]]
        assert sess.run(tf.random_poisson([1.0, -1.0, 0.0], [3], seed=8)).tolist() == [
            [1.0, 0.0, 0.0], [2.0, 0.0, 0.0], [2.0, 0.0, 0.0]]


def test_stateless_poisson_matches_tensorflow():
    with tf.Session() as sess:
        assert sess.run(tf.random.stateless_poisson([5, 2], seed=[1, 2], lam=[0.5, 30.0])
                        ).tolist() == [[3, 35], [2, 30], [1, 29], [3, 23], [0, 33]]
        v = sess.run(tf.random.stateless_poisson([3], seed=[3, 4], lam=4.0, dtype=tf.int64))
        assert v.dtype == np.int64 and v.tolist() == [6, 5, 5]
        assert sess.run(tf.random.stateless_poisson(
            [2, 3, 2], seed=[5, 6], lam=[[1.0, 20.0], [3.0, 12.0], [9.0, 100.0]],
            dtype=tf.float64)).tolist() == [[[0.0, 21.0], [1.0, 18.0], [10.0, 94.0]],
                                            [[2.0, 23.0], [5.0, 11.0], [14.0, 109.0]]]


def test_sample_distorted_bounding_box_matches_tensorflow():
    """TF1's op takes `seed`/`seed2` as given (the graph seed plays no part)."""
    tf.set_random_seed(4)
    boxes = tf.constant([[[0.1, 0.2, 0.6, 0.7], [0.3, 0.3, 0.9, 0.8]]])
    b = tf.image.sample_distorted_bounding_box(
        tf.constant([100, 57, 1], tf.int64), tf.zeros([1, 0, 4]),
        use_image_if_no_bounding_boxes=True, aspect_ratio_range=(0.5, 2.0),
        area_range=(0.1, 0.9), seed=9)
    c = tf.image.sample_distorted_bounding_box(
        tf.constant([32, 32, 3], tf.int32), boxes, min_object_covered=0.95,
        area_range=(0.05, 0.2), max_attempts=5, seed=2)
    d = tf.image.sample_distorted_bounding_box(
        tf.constant([224, 224, 3], tf.uint8), [[[0.0, 0.0, 1.0, 1.0]]],
        min_object_covered=0.1, aspect_ratio_range=(0.75, 1.33), area_range=(0.08, 1.0),
        seed=3)
    with tf.Session() as sess:
        got = [[v.tolist() for v in sess.run(t)] for t in (b, b, c, d, d, d)]
    assert got == [
        [[46, 1, 0], [46, 29, -1], [[[0.46000000834465027, 0.017543859779834747,
                                      0.9200000166893005, 0.5263158082962036]]]],
        [[34, 8, 0], [20, 30, -1], [[[0.3400000035762787, 0.14035087823867798,
                                      0.5400000214576721, 0.6666666865348816]]]],
        [[0, 0, 0], [32, 32, -1], [[[0.0, 0.0, 1.0, 1.0]]]],  # every attempt failed
        [[96, 133, 0], [98, 81, 255], [[[0.4285714328289032, 0.59375, 0.8660714030265808,
                                         0.9553571343421936]]]],  # uint8: -1 wraps
        [[17, 8, 0], [186, 211, 255], [[[0.0758928582072258, 0.0357142873108387, 0.90625,
                                         0.9776785969734192]]]],
        [[92, 70, 0], [108, 140, 255], [[[0.4107142984867096, 0.3125, 0.8928571343421936,
                                          0.9375]]]]]


def _take(ds, n):
    x = tf.data.make_one_shot_iterator(ds).get_next()
    out = []
    with tf.Session() as sess:
        for _ in range(n):
            try:
                out.append(sess.run(x).tolist())
            except tf.errors.OutOfRangeError:
                break
    return out


def test_random_dataset_and_sample_from_datasets_match_tensorflow():
    assert _take(tf.data.experimental.RandomDataset(seed=5), 6) == [
        3568415791, 2798973839, 2476249224, 2816106479, 2507884952, 3643392934]
    tf.set_random_seed(3)
    assert _take(tf.data.experimental.RandomDataset(), 3) == [3507506551, 501761998,
                                                              2817715290]
    two = tf.data.experimental.sample_from_datasets(
        [tf.data.Dataset.range(5), tf.data.Dataset.range(100, 105)], seed=1)
    assert _take(two, 12) == [0, 100, 1, 101, 2, 3, 4, 102, 103, 104]
    weighted = tf.data.experimental.sample_from_datasets(
        [tf.data.Dataset.range(10), tf.data.Dataset.range(100, 110),
         tf.data.Dataset.range(200, 210)], weights=[0.7, 0.2, 0.1], seed=7)
    assert _take(weighted, 12) == [0, 1, 2, 3, 4, 100, 5, 6, 7, 200, 8, 9]


def test_binomial_samplers_match_tensorflow():
    with tf.Session() as sess:
        assert sess.run(tf.random.stateless_binomial(
            [5, 2], seed=[1, 2], counts=[10.0, 100.0], probs=[0.3, 0.9])).tolist() == [
            [5, 87], [5, 90], [5, 90], [4, 94], [4, 88]]  # inversion; BTRS on 1 - p
        v = sess.run(tf.random.stateless_binomial([4], seed=[3, 4], counts=50.,
                                                  probs=0.5, output_dtype=tf.int64))
        assert v.dtype == np.int64 and v.tolist() == [29, 27, 19, 26]
        assert sess.run(tf.random.stateless_binomial(
            [3, 4], seed=[5, 6], counts=tf.constant([20.0, 1000.0, 7.0, 3.0], tf.float64),
            probs=tf.constant([0.05, 0.5, 0.97, 1.0], tf.float64),
            output_dtype=tf.float32)).tolist() == [[0.0, 512.0, 7.0, 3.0],
                                                   [2.0, 506.0, 7.0, 3.0],
                                                   [1.0, 488.0, 7.0, 3.0]]
        odd = sess.run(tf.random.stateless_binomial([2, 3], seed=[7, 8],
                                                    counts=[0.0, 5.0, 12.0],
                                                    probs=[0.5, float("nan"), 0.9],
                                                    output_dtype=tf.float32))
        assert odd[:, 0].tolist() == [0.0, 0.0] and np.isnan(odd[:, 1]).all()
        assert odd[:, 2].tolist() == [11.0, 10.0]
        g = tf.random.Generator.from_seed(3)
        sess.run(tf.global_variables_initializer())
        assert sess.run(g.binomial([6], counts=30.0, probs=0.2)).tolist() == [
            6, 8, 6, 6, 7, 3]
