"""TF1 programs "from the wild", round 8: research and tutorial code of 2017-2020 (DQN
target networks, VAEs, ResNet blocks with batch norm and piecewise learning rates, a
Transformer encoder with masks, DCGAN, actor-critic and PPO with ``tf.distributions``,
char-level LSTMs, style transfer, capsule routing, PointNet, attention seq2seq, Deep &
Cross, MAML, word2vec with NCE, DANN's gradient reversal, spectral norm), and the classes
of discrepancy they found.

Each program was first run under TensorFlow 2.15's ``tf.compat.v1`` with the tf-oracle;
the values asserted here are the ones TensorFlow printed. Covered: ``tf.sequence_mask``'s
graph (Max and Maximum without ``maxlen``, a raw Range, ``lengths`` always cast, the
second Cast named ``Cast_1``); the ``probs``/``logits`` of ``Bernoulli`` and
``Categorical`` (the given tensor itself, the derived one named after the parameter) and
``Categorical``'s ``batch_rank``/``logits_shape``/``event_size``/``batch_shape``;
``tf.norm``'s graph (``x * conj(x)``, a ``Squeeze`` in the scope, complex results);
``tf.boolean_mask`` inside its own name scope; the candidate samplers' int64
``true_classes``; ``gradient_override_map``'s ``_gradient_op_type`` attribute and its
round trip through a GraphDef.
"""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf


@pytest.fixture(autouse=True)
def _fresh_graph():
    with tf.Graph().as_default() as g:
        yield g


def _ops(g, skip=0):
    return [(o.name, o.type) for o in g.get_operations()][skip:]


# -- tf.sequence_mask builds TensorFlow's graph (transformer / dynamic_rnn masks) --------
def test_sequence_mask_without_maxlen_takes_max_then_maximum_with_zero(_fresh_graph):
    lens = tf.placeholder(tf.int32, [None], name="l")
    m = tf.sequence_mask(lens)
    # TF 2.15: the lengths are always cast to maxlen's dtype, even int32 -> int32
    assert m.name == "SequenceMask/Less:0"
    assert _ops(_fresh_graph, 1) == [
        ("SequenceMask/Const", "Const"), ("SequenceMask/Max", "Max"),
        ("SequenceMask/Const_1", "Const"), ("SequenceMask/Maximum", "Maximum"),
        ("SequenceMask/Const_2", "Const"), ("SequenceMask/Const_3", "Const"),
        ("SequenceMask/Range", "Range"), ("SequenceMask/ExpandDims/dim", "Const"),
        ("SequenceMask/ExpandDims", "ExpandDims"), ("SequenceMask/Cast", "Cast"),
        ("SequenceMask/Less", "Less")]
    with tf.Session() as sess:
        assert sess.run(m, {lens: [1, 3]}).tolist() == [[True, False, False],
                                                        [True, True, True]]
        assert sess.run(m, {lens: []}).shape == (0, 0)


def test_sequence_mask_with_a_float_dtype_names_its_result_cast_1(_fresh_graph):
    lens = tf.placeholder(tf.int64, [None], name="l")
    x = tf.placeholder(tf.float32, [None, None, 8])
    m = tf.sequence_mask(lens, tf.shape(x)[1], dtype=tf.float32)
    # TF: SequenceMask/Cast_1:0, shape (?, ?), float32 (the transformer program's mask)
    assert m.name == "SequenceMask/Cast_1:0"
    assert m.dtype == tf.float32 and m.get_shape().as_list() == [None, None]
    m2 = tf.sequence_mask(lens, 4)
    types = [t for n, t in _ops(_fresh_graph) if n.startswith("SequenceMask_1/")]
    assert types == ["Const", "Const", "Const", "Range", "Const", "ExpandDims", "Cast", "Less"]
    with tf.Session() as sess:
        got = sess.run([m, m2], {lens: [3, 5], x: np.zeros((2, 5, 8))})
    assert got[0].tolist() == [[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]]
    assert got[1].tolist() == [[True, True, True, False], [True, True, True, True]]


# -- tf.distributions: Bernoulli / Categorical parameters (actor-critic, PPO) ------------
def test_bernoulli_probs_and_logits_are_named_as_in_tensorflow(_fresh_graph):
    b = tf.distributions.Bernoulli(probs=0.3)
    # TF: the converted value itself is `probs`; logits = log(p) - log1p(-1. * p)
    assert b.probs.name == "Bernoulli/probs:0"
    assert b.logits.name == "Bernoulli/logits/sub:0"
    assert [n for n, _ in _ops(_fresh_graph)] == [
        "Bernoulli/probs", "Bernoulli/logits/Log", "Bernoulli/logits/mul/x",
        "Bernoulli/logits/mul", "Bernoulli/logits/Log1p", "Bernoulli/logits/sub"]
    p = tf.placeholder(tf.float32, [2], name="p")
    b2 = tf.distributions.Bernoulli(logits=p)
    assert b2.logits is p and b2.probs.name == "Bernoulli_1/probs:0"
    assert b2.probs.op.type == "Sigmoid"
    with tf.Session() as sess:
        # TF: -1.204 0.6109
        assert round(float(sess.run(b.log_prob(1.0))), 4) == -1.204
        assert round(float(sess.run(b.entropy())), 4) == 0.6109
        assert np.allclose(sess.run(b2.probs, {p: [0.0, 2.0]}), [0.5, 0.880797])


def test_categorical_builds_batch_rank_logits_shape_event_size_batch_shape(_fresh_graph):
    p = tf.placeholder(tf.float32, [2, 3], name="p")
    c = tf.distributions.Categorical(logits=p)
    assert c.logits is p and c.probs.name == "Categorical/probs:0"
    assert c.probs.op.type == "Softmax"
    assert [n for n, _ in _ops(_fresh_graph, 1)] == [
        "Categorical/probs", "Categorical/batch_rank", "Categorical/logits_shape",
        "Categorical/event_size", "Categorical/batch_shape"]
    c2 = tf.distributions.Categorical(probs=[[0.2, 0.3, 0.5]] * 2)
    assert c2.probs.name == "Categorical_1/probs:0"
    assert c2.logits.name == "Categorical_1/logits/Log:0"
    # unknown rank: event_size and batch_shape sliced from logits_shape
    c3 = tf.distributions.Categorical(logits=tf.placeholder(tf.float32))
    assert c3.event_size.name == "Categorical_2/event_size/strided_slice:0"
    assert c3.batch_shape_tensor().name == "Categorical_2/batch_shape_tensor/Identity:0"
    c4 = tf.distributions.Categorical(logits=tf.placeholder(tf.float32, [None, 3]))
    assert c4.sample().name == "Categorical_3/sample/Reshape_1:0"
    c5 = tf.distributions.Categorical(probs=[[0.2, 0.8], [0.5, 0.5]])
    with tf.Session() as sess:
        bs, es, draws = sess.run([c5.batch_shape_tensor(), c5.event_size,
                                  c5.sample(4, seed=1)])
        assert bs.tolist() == [2] and es == 2 and draws.shape == (4, 2)
        lp = sess.run(c4.log_prob([0, 2]), {c4.logits: np.zeros((2, 3))})
        assert np.allclose(lp, np.log(1 / 3))


# -- tf.norm (capsule lengths, word2vec normalisation) -------------------------------------
def test_norm_is_x_times_conj_x_and_a_squeeze_inside_its_scope(_fresh_graph):
    x = tf.placeholder(tf.float32, [2, 3], name="x")
    n = tf.norm(x, axis=-1)
    # TF: norm/Squeeze:0 (2,) from Mul, Sum, Sqrt, Squeeze
    assert n.name == "norm/Squeeze:0" and n.get_shape().as_list() == [2]
    assert _ops(_fresh_graph, 1) == [
        ("norm/mul", "Mul"), ("norm/Sum/reduction_indices", "Const"), ("norm/Sum", "Sum"),
        ("norm/Sqrt", "Sqrt"), ("norm/Squeeze", "Squeeze")]
    assert tf.norm(x, axis=1, keepdims=True).name == "norm_1/Sqrt:0"
    assert tf.norm(x, ord=1).name == "norm_2/Squeeze:0"
    assert tf.norm(x, ord=3, axis=0).get_shape().as_list() == [3]
    c = tf.constant([[3 + 4j, 0j], [1j, 1 + 0j]], tf.complex64)
    nc = tf.norm(c)
    assert nc.dtype == tf.complex64  # TF keeps the complex dtype
    assert [t for _, t in _ops(_fresh_graph) if _.startswith("norm_4/")] == [
        "Conj", "Mul", "Const", "Sum", "Sqrt", "Squeeze"]
    y = tf.constant([[3.0, 4.0], [1.0, 0.0]])
    grad = tf.gradients(tf.norm(y, axis=1, keepdims=True), y)[0]
    with tf.Session() as sess:
        assert np.allclose(sess.run(nc), 5.196152 + 0j)
        assert np.allclose(sess.run(tf.norm(c, axis=1)), [5.0, 1.4142135])
        assert np.allclose(sess.run(grad), [[0.6, 0.8], [1.0, 0.0]])
        assert sess.run(n, {x: [[3, 4, 0], [0, 0, 0]]}).tolist() == [5.0, 0.0]


# -- tf.boolean_mask works inside its own scope (masked sequence losses) -------------------
def test_boolean_mask_ops_live_in_its_scope_and_end_in_gatherv2(_fresh_graph):
    x = tf.placeholder(tf.float32, [None, 4, 5], name="x")
    m = tf.placeholder(tf.bool, [None], name="m")
    r = tf.boolean_mask(x, m)
    # TF 2.15: boolean_mask/GatherV2:0, every op under boolean_mask/
    assert r.name == "boolean_mask/GatherV2:0" and r.get_shape().as_list() == [None, 4, 5]
    names = [n for n, _ in _ops(_fresh_graph, 2)]
    assert all(n.startswith("boolean_mask/") for n in names)
    assert [t for _, t in _ops(_fresh_graph, 2)][-8:] == [
        "ConcatV2", "Reshape", "Const", "Reshape", "Where", "Squeeze", "Const", "GatherV2"]
    assert ("boolean_mask/Prod", "Prod") in _ops(_fresh_graph)
    assert ("boolean_mask/concat/values_1", "Pack") in _ops(_fresh_graph)
    named = tf.boolean_mask(x, m, name="sel")
    assert named.name == "sel/GatherV2:0"
    m2 = tf.placeholder(tf.bool, [None, 4])
    assert tf.boolean_mask(x, m2).get_shape().as_list() == [None, 5]
    m3 = tf.placeholder(tf.bool, [4])
    assert tf.boolean_mask(x, m3, axis=1).get_shape().as_list() == [None, None, 5]
    with tf.Session() as sess:
        assert sess.run(tf.boolean_mask([[1, 2], [3, 4], [5, 6]],
                                        [True, False, True])).tolist() == [[1, 2], [5, 6]]
        assert sess.run(tf.boolean_mask([[1, 2], [3, 4]],
                                        [[True, False], [False, True]])).tolist() == [1, 4]
    with pytest.raises(ValueError, match="mask cannot be scalar"):
        tf.boolean_mask(x, True)


# -- candidate samplers take int64 true classes (word2vec) ---------------------------------
def test_candidate_samplers_reject_int32_tensors_as_tensorflow_does():
    labels32 = tf.constant([[1]], tf.int32)
    # TF: TypeError: Input 'true_classes' of 'LogUniformCandidateSampler' Op has type
    # int32 that does not match expected type of int64.
    with pytest.raises(TypeError, match="Input 'true_classes' of 'LogUniformCandidateSampler' "
                                        "Op has type int32 that does not match expected "
                                        "type of int64"):
        tf.nn.log_uniform_candidate_sampler(labels32, 1, 2, True, 10)
    with pytest.raises(TypeError, match="Input 'sampled_candidates' of "
                                        "'ComputeAccidentalHits' Op has type int32"):
        tf.nn.compute_accidental_hits(tf.constant([[1]], tf.int64),
                                      tf.constant([1, 2], tf.int32), 1)
    with pytest.raises(TypeError, match="Expected int64 passed to parameter 'true_classes'"):
        tf.nn.uniform_candidate_sampler([[1.0]], 1, 2, True, 10)
    # Python and NumPy integers become int64 constants; the losses cast their labels
    s = tf.nn.uniform_candidate_sampler(np.array([[1]], np.int32), 1, 2, True, 10)
    assert s.sampled_candidates.dtype == tf.int64
    loss = tf.nn.nce_loss(tf.ones([10, 3]), tf.zeros([10]), labels32, tf.ones([1, 3]), 2, 10)
    assert loss.get_shape().as_list() == [1]


# -- gradient_override_map: the _gradient_op_type attribute (DANN gradient reversal) ------
def test_gradient_override_sets_gradient_op_type_and_survives_a_graph_def(_fresh_graph):
    @tf.RegisterGradient("RcFlipGradient8")
    def _flip(op, grad):
        return [tf.negative(grad) * 2.0]

    x = tf.placeholder(tf.float32, [None, 3], name="x")
    with _fresh_graph.gradient_override_map({"Identity": "RcFlipGradient8"}):
        y = tf.identity(x)
    # TF: op.get_attr("_gradient_op_type") == b'FlipGradient0'; NodeDef attrs T and it
    assert y.op.get_attr("_gradient_op_type") == b"RcFlipGradient8"
    assert sorted(y.op.node_def.attr.keys()) == ["T", "_gradient_op_type"]
    with pytest.raises(ValueError):
        tf.identity(x).op.get_attr("_gradient_op_type")
    gd = _fresh_graph.as_graph_def()
    with tf.Graph().as_default() as g2:
        tf.import_graph_def(gd, name="imp")
        yy = g2.get_tensor_by_name("imp/Identity:0")
        xx = g2.get_tensor_by_name("imp/x:0")
        assert yy.op.get_attr("_gradient_op_type") == b"RcFlipGradient8"
        g = tf.gradients(tf.reduce_sum(yy), xx)[0]
        with tf.Session() as sess:
            assert sess.run(g, {xx: np.ones((1, 3))}).tolist() == [[-2.0, -2.0, -2.0]]


# -- whole programs that matched from the start, kept as regression checks ---------------
def test_dqn_target_network_hard_and_soft_updates():
    def qnet(x, scope):
        with tf.variable_scope(scope):
            h = tf.layers.dense(x, 16, activation=tf.nn.relu, name="fc1")
            return tf.layers.dense(h, 3, name="q")
    s = tf.placeholder(tf.float32, [None, 4])
    qnet(s, "online")
    qnet(s, "target")
    online, target = tf.trainable_variables("online"), tf.get_collection(
        tf.GraphKeys.TRAINABLE_VARIABLES, scope="target")
    assert [v.name for v in target] == ["target/fc1/kernel:0", "target/fc1/bias:0",
                                        "target/q/kernel:0", "target/q/bias:0"]
    hard = [tf.assign(t, o) for t, o in zip(target, online)]
    soft = tf.group(*[t.assign(0.1 * o + 0.9 * t) for t, o in zip(target, online)],
                    name="soft_update")
    # TF: Assign:0 Assign (4, 16); soft_update NoOp 4
    assert (hard[0].name, hard[0].op.type) == ("Assign:0", "Assign")
    assert (soft.name, soft.type, len(soft.control_inputs)) == ("soft_update", "NoOp", 4)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(hard)
        a, b = sess.run([online[0], target[0]])
        assert np.allclose(a, b)


def test_capsule_routing_while_loop_structure_and_lengths():
    rng = np.random.RandomState(0)
    u_hat = tf.constant(rng.randn(2, 6, 3, 4).astype(np.float32))

    def squash(s):
        sq = tf.reduce_sum(tf.square(s), axis=-1, keepdims=True)
        return sq / (1. + sq) * s / tf.sqrt(sq + 1e-7)

    def body(i, b, v):
        c = tf.nn.softmax(b, axis=2)
        v = squash(tf.reduce_sum(c * u_hat, axis=1, keepdims=True))
        return i + 1, b + tf.reduce_sum(u_hat * v, axis=-1, keepdims=True), v

    i, _b, v = tf.while_loop(lambda i, b, v: i < 3, body,
                            [tf.constant(0), tf.zeros([2, 6, 3, 1]), tf.zeros([2, 1, 3, 4])],
                            name="routing")
    lengths = tf.norm(tf.squeeze(v, 1), axis=-1)
    # TF: routing/Exit_2:0 (2, 1, 3, 4); norm/Squeeze:0 (2, 3)
    assert v.name == "routing/Exit_2:0" and lengths.name == "norm/Squeeze:0"
    with tf.Session() as sess:
        iv, lv = sess.run([i, lengths])
    assert iv == 3
    np.testing.assert_allclose(lv, [[0.9376, 0.9388, 0.8963], [0.9668, 0.8093, 0.9496]],
                               atol=1e-4)


# -- learning-rate schedules build TF 2.15's graphs (Transformer / ResNet schedules) ------
def test_cosine_decay_result_is_a_mul_inside_its_scope(_fresh_graph):
    gs = tf.train.get_or_create_global_step()
    n0 = len(_fresh_graph.get_operations())
    lr = tf.train.cosine_decay(0.1, gs, 10, alpha=0.1)
    # TF 2.15: CosineDecay/Mul_3:0, pi a Const of its own, alpha left a Python number
    assert lr.name == "CosineDecay/Mul_3:0"
    assert _ops(_fresh_graph, n0) == [
        ("CosineDecay/initial_learning_rate", "Const"), ("CosineDecay/Cast/x", "Const"),
        ("CosineDecay/Cast", "Cast"), ("CosineDecay/Cast_1", "Cast"),
        ("CosineDecay/Minimum", "Minimum"), ("CosineDecay/truediv", "RealDiv"),
        ("CosineDecay/Const", "Const"), ("CosineDecay/mul", "Mul"), ("CosineDecay/Cos", "Cos"),
        ("CosineDecay/add/x", "Const"), ("CosineDecay/add", "AddV2"),
        ("CosineDecay/mul_1/x", "Const"), ("CosineDecay/mul_1", "Mul"),
        ("CosineDecay/mul_2/x", "Const"), ("CosineDecay/mul_2", "Mul"),
        ("CosineDecay/add_1/y", "Const"), ("CosineDecay/add_1", "AddV2"),
        ("CosineDecay/Mul_3", "Mul")]
    with tf.Session() as sess:
        sess.run(gs.initializer)
        got = []
        for step in (0, 3, 7, 12):
            sess.run(tf.assign(gs, step))
            got.append(round(float(sess.run(lr)), 6))
    assert got == [0.1, 0.08145, 0.02855, 0.01]  # TF's values


def test_decay_schedules_cast_their_arguments_in_tensorflows_order(_fresh_graph):
    gs = tf.train.get_or_create_global_step()
    n0 = len(_fresh_graph.get_operations())
    tf.train.exponential_decay(0.1, gs, 5, 0.5)
    assert _ops(_fresh_graph, n0) == [
        ("ExponentialDecay/initial_learning_rate", "Const"),
        ("ExponentialDecay/Cast/x", "Const"), ("ExponentialDecay/Cast", "Cast"),
        ("ExponentialDecay/Cast_1/x", "Const"), ("ExponentialDecay/Cast_2", "Cast"),
        ("ExponentialDecay/truediv", "RealDiv"), ("ExponentialDecay/Pow", "Pow"),
        ("ExponentialDecay", "Mul")]
    n0 = len(_fresh_graph.get_operations())
    nat = tf.train.natural_exp_decay(0.1, gs, 5, 0.5)
    # TF: exp(-decay_rate) built before the ExponentialDecay scope
    assert [n for n, _ in _ops(_fresh_graph, n0)][:3] == ["Neg/x", "Neg", "Exp"]
    assert nat.name == "ExponentialDecay_1:0"
    n0 = len(_fresh_graph.get_operations())
    inv = tf.train.inverse_time_decay(0.1, gs, 5, 0.5, staircase=True)
    assert [t for _, t in _ops(_fresh_graph, n0)][-6:] == [
        "Floor", "Const", "Cast", "Mul", "AddV2", "RealDiv"]
    n0 = len(_fresh_graph.get_operations())
    poly = tf.train.polynomial_decay(0.1, gs, 10, 0.01, cycle=True)
    assert ("PolynomialDecay/SelectV2", "SelectV2") in _ops(_fresh_graph, n0)
    assert [n for n, _ in _ops(_fresh_graph, n0)][:6] == [
        "PolynomialDecay/initial_learning_rate", "PolynomialDecay/Cast/x",
        "PolynomialDecay/Cast_1/x", "PolynomialDecay/Cast_2", "PolynomialDecay/Cast_3/x",
        "PolynomialDecay/Cast_3"]
    n0 = len(_fresh_graph.get_operations())
    pw = tf.train.piecewise_constant(gs, [5, 10], [0.1, 0.01, 0.001])
    names = [n for n, _ in _ops(_fresh_graph, n0)]
    assert "PiecewiseConstant/and" in names and "PiecewiseConstant/case/num_true_conds" in names
    assert ("PiecewiseConstant/case/n_true_conds", "Const") in _ops(_fresh_graph, n0)
    with tf.Session() as sess:
        sess.run(gs.initializer)
        got = []
        for step in (0, 3, 7, 12):
            sess.run(tf.assign(gs, step))
            got.append([round(float(v), 6) for v in sess.run([nat, inv, poly, pw])])
    # TF 2.15's values, per step: natural_exp, inverse_time, polynomial(cycle), piecewise
    assert [g[0] for g in got] == [0.1, 0.074082, 0.049659, 0.030119]
    assert [g[1] for g in got] == [0.1, 0.1, 0.066667, 0.05]
    assert [g[2] for g in got] == [0.1, 0.073, 0.037, 0.046]
    assert [g[3] for g in got] == [0.1, 0.1, 0.01, 0.001]


def test_noisy_linear_cosine_decay_noise_uses_the_clipped_step():
    # TF computes the noise variance from min(step, decay_steps): past decay_steps it
    # stays initial_variance / (1 + decay_steps) ** variance_decay.
    lr = tf.train.noisy_linear_cosine_decay(1.0, tf.constant(10000), 1, num_periods=1.0,
                                            beta=0.0)
    with tf.Session() as sess:
        draws = np.array([sess.run(lr) for _ in range(300)])
    expected_std = np.sqrt(1.0 / 2.0 ** 0.55)  # 0.826; unclipped it would be 0.079
    assert abs(draws.std() - expected_std) < 0.15


# -- slots and moving averages made under a variable scope (optimizer in a scope) ---------
def test_slots_and_averages_made_in_a_variable_scope_are_named_under_it():
    w = tf.get_variable("w", [2])
    with tf.variable_scope("train"):
        ema = tf.train.ExponentialMovingAverage(0.9)
        ema.apply([w])
        tf.train.AdamOptimizer(0.1).minimize(tf.reduce_sum(w * w))
        t = tf.reduce_sum(w, name="t")
        ema.apply([t])
    with tf.name_scope("ns"):  # a name scope alone changes nothing
        tf.train.ExponentialMovingAverage(0.5, name="E2").apply([w])
    # TF 2.15's names
    assert [v.name for v in tf.global_variables()] == [
        "w:0", "train/w/ExponentialMovingAverage:0", "train/beta1_power:0",
        "train/beta2_power:0", "train/w/Adam:0", "train/w/Adam_1:0",
        "train/train/t/ExponentialMovingAverage:0", "w/E2:0"]
    assert ema.average(w).name == "train/w/ExponentialMovingAverage:0"
    assert ema.average_name(t) == "train/train/t/ExponentialMovingAverage"
    # averages of tensors made inside a tf.cond (the classic batch-norm wrapper)
    x = tf.placeholder(tf.float32, [None, 2])
    phase = tf.placeholder(tf.bool)
    with tf.variable_scope("bn"):
        mean, _ = tf.nn.moments(x, [0], name="moments")
        ema2 = tf.train.ExponentialMovingAverage(decay=0.5)

        def update():
            with tf.control_dependencies([ema2.apply([mean])]):
                return tf.identity(mean)

        m = tf.cond(phase, update, lambda: ema2.average(mean))
    assert ema2.average(mean).name == "bn/bn/moments/Squeeze/ExponentialMovingAverage:0"
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(m, {x: [[1.0, 2.0], [3.0, 4.0]], phase: True})
        assert sess.run(ema2.average(mean)).tolist() == [1.0, 1.5]


# -- tf.sparse_placeholder and the CTC ops (speech recognition programs) -------------------
def test_sparse_placeholder_parts_are_plain_placeholders_without_a_name(_fresh_graph):
    a = tf.sparse_placeholder(tf.float32)
    b = tf.sparse_placeholder(tf.float32, shape=[3, 4])
    c = tf.sparse_placeholder(tf.int32, shape=[None, 5], name="sp")
    # TF 2.15: the dense shape first, then values, then indices
    assert (a.indices.name, a.values.name, a.dense_shape.name) == (
        "Placeholder_2:0", "Placeholder_1:0", "Placeholder:0")
    assert (b.indices.name, b.dense_shape.name) == ("Placeholder_4:0",
                                                    "PlaceholderWithDefault:0")
    assert b.get_shape().as_list() == [3, 4] and b.indices.get_shape().as_list() == [None, 2]
    assert [n for n, _ in _ops(_fresh_graph)][7:] == [
        "sp/shape_default", "sp/shape", "sp/values", "sp/indices"]
    assert c.get_shape().as_list() == [None, 5]
    with tf.Session() as sess:
        got = sess.run(tf.sparse_tensor_to_dense(c), {
            c: tf.SparseTensorValue([[0, 4], [1, 0]], [7, 8], [2, 5])})
        assert got.tolist() == [[0, 0, 0, 0, 7], [8, 0, 0, 0, 0]]
        assert sess.run(b.dense_shape).tolist() == [3, 4]


def test_ctc_loss_and_beam_search_ops_are_named_after_their_type(_fresh_graph):
    logits = tf.zeros([2, 1, 3])
    labels = tf.SparseTensor([[0, 0]], [1], [1, 1])
    loss = tf.nn.ctc_loss(labels, logits, [2])
    decoded, log_prob = tf.nn.ctc_beam_search_decoder(logits, [2], beam_width=2, top_paths=1)
    # TF: CTCLoss:0, CTCBeamSearchDecoder:0 / :3, each input converted inside the scope
    assert loss.name == "CTCLoss:0" and decoded[0].indices.name == "CTCBeamSearchDecoder:0"
    assert log_prob.name == "CTCBeamSearchDecoder:3"
    assert ("CTCLoss/sequence_length", "Const") in _ops(_fresh_graph)
    batch_major = tf.nn.ctc_loss(labels, tf.zeros([1, 2, 3]), [2], time_major=False)
    assert batch_major.op.inputs[0].name == "transpose:0"  # transposed before the scope
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(loss), [1.0986], atol=1e-4)  # TF's value
        np.testing.assert_allclose(sess.run(batch_major), [1.0986], atol=1e-4)


def test_model_fn_with_its_optimizer_in_a_variable_scope_writes_tensorflows_keys(tmp_path):
    def model_fn(features, labels, mode):
        logits = tf.layers.dense(features["x"], 3)
        loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
        with tf.variable_scope("optimizer"):
            train_op = tf.train.AdamOptimizer(0.05).minimize(
                loss, global_step=tf.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    x = np.random.RandomState(0).randn(20, 4).astype(np.float32)
    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path))
    est.train(tf.estimator.inputs.numpy_input_fn({"x": x}, np.zeros(20, np.int32),
                                                 batch_size=10, shuffle=False), steps=2)
    # TF 2.15's checkpoint keys for this model_fn
    assert sorted(n for n, _ in tf.train.list_variables(str(tmp_path))) == [
        "dense/bias", "dense/kernel", "global_step", "optimizer/beta1_power",
        "optimizer/beta2_power", "optimizer/dense/bias/Adam", "optimizer/dense/bias/Adam_1",
        "optimizer/dense/kernel/Adam", "optimizer/dense/kernel/Adam_1"]
