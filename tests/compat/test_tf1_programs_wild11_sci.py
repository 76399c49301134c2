"""TF1 programs "from the wild", round 11, area ``sci``: scientific and mathematical
models in the style of Kipf's ``gcn`` and Veličković's ``GAT``, Raissi's physics-informed
networks, Finn's ``maml``, Gaussian-process regression written by hand on
``tf.cholesky``/``cholesky_solve``, and the odd corners such programs reach for:
decompositions (``svd``, ``eigh``, ``qr``, ``matrix_solve_ls``, ``expm``), the FFT family
on complex tensors, ``tf.custom_gradient``, ``py_func`` with a gradient by
``gradient_override_map``, and an RK4 integrator in a ``tf.while_loop``. Rewritten small on
synthetic data, seeded.

Each program was first run under TensorFlow 2.15's ``tf.compat.v1`` with the tf-oracle;
the values asserted here are the ones TensorFlow printed. The classes of discrepancy
found and fixed:

* ``tf.sparse_placeholder(shape=<a Tensor>)`` (Kipf's features placeholder) raised; the
  tensor is now the dense shape's default, its constant value the static shape;
* ``tf.sparse_reshape``: TF's scope, ``Identity`` of the values and constant dense shape
  (only when the input's shape is fully known), and its build-time ``ValueError``s;
* ``tf.hessians`` of an unconnected or linear x gave None or zeros; TF raises;
* ``tf.linalg.logdet`` / ``tf.cholesky_solve`` outputs are named as TF names them, and
  ``tf.matrix_solve_ls`` is TF's graph (Cholesky of the regularized Gram matrix and
  ``cholesky_solve``; a ``tf.cond`` for matrices of unknown shape; ``MatrixSolveLs`` for
  ``fast=False`` and large batches; complex128 with a regularizer refused);
* ``SelfAdjointEigV2`` of a complex matrix gives complex eigenvalues (TF's op def);
  ``tf.angle``/``tf.imag`` of a real tensor are TF's ``Select``/``zeros_like`` graphs;
* ``LinearOperator`` hints: ``ScaledIdentity`` (real: self-adjoint), ``BlockDiag`` and
  ``Kronecker`` (what all factors share), ``Composition`` (``A @ A^H``: self-adjoint,
  square, positive definite) are set and checked with TF's messages;
* ``tf.while_loop(..., maximum_iterations=)`` accepted a tuple returned for a list of loop
  variables; TF compares them strictly there and raises;
* ``tf.contrib.opt.ScipyOptimizerInterface`` (L-BFGS-B for PINNs, SLSQP with constraints)
  was missing, and ``tf.contrib.distributions`` lacked the multivariate normals,
  ``TransformedDistribution``, ``bijectors`` and ``fill_triangular``. TF 2.15 has no
  contrib: they are checked against SciPy, and seeded draws against TF's
  ``random_normal`` stream.

Not matched: ``tf.linalg.expm``'s graph (TF builds a Padé approximation of ops; flowgraph
has one ``MatrixExponential`` op with the same values); ``tf.while_loop`` given one bare
tensor as ``loop_vars`` (TF fails testing it as a bool; flowgraph runs the loop);
``tf.contrib.integrate.odeint``; the contrib bijectors beyond those listed in
docs/distributions.md.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.optimize

import flowgraph as tf


@pytest.fixture(autouse=True)
def _fresh_graph():
    with tf.Graph().as_default() as g:
        yield g


def _close(actual, expected, tol=2e-5):
    np.testing.assert_allclose(np.asarray(actual, np.float64), expected, rtol=tol, atol=tol)


# -- Kipf's GCN: sparse placeholders, sparse dropout, sparse matmul ---------------------
def _to_tuple(m):
    idx = np.vstack(np.nonzero(m)).T.astype(np.int64)
    return idx, m[np.nonzero(m)].astype(np.float32), np.array(m.shape, np.int64)


def _sparse_dropout(x, keep_prob, noise_shape):
    random_tensor = keep_prob
    random_tensor += tf.random_uniform(noise_shape)
    dropout_mask = tf.cast(tf.floor(random_tensor), dtype=tf.bool)
    return tf.sparse_retain(x, dropout_mask) * (1. / keep_prob)


def _glorot(shape, name=None):
    r = np.sqrt(6.0 / (shape[0] + shape[1]))
    return tf.Variable(tf.random_uniform(shape, minval=-r, maxval=r, dtype=tf.float32),
                       name=name)


def test_kipf_gcn_with_sparse_dropout_trains_as_tensorflow():
    rng = np.random.RandomState(0)
    n, f, h, c = 7, 6, 5, 3
    adj = (rng.rand(n, n) < 0.35).astype(np.float32)
    adj = np.maximum(adj, adj.T)
    np.fill_diagonal(adj, 1)
    d = adj.sum(1)
    feat = _to_tuple((rng.rand(n, f) < 0.4).astype(np.float32))
    sup = _to_tuple(adj / np.sqrt(np.outer(d, d)))
    y = np.eye(c, dtype=np.float32)[rng.randint(0, c, n)]
    mask = np.array([1, 1, 1, 0, 1, 0, 0], bool)
    tf.set_random_seed(3)
    ph = {
        "support": [tf.sparse_placeholder(tf.float32)],
        "features": tf.sparse_placeholder(tf.float32,
                                          shape=tf.constant(feat[2], dtype=tf.int64)),
        "labels": tf.placeholder(tf.float32, shape=(None, c)),
        "labels_mask": tf.placeholder(tf.int32),
        "dropout": tf.placeholder_with_default(0., shape=()),
        "num_features_nonzero": tf.placeholder(tf.int32),
    }
    sp = ph["features"]
    assert (sp.indices.shape.as_list(), sp.values.shape.as_list()) == ([None, 2], [None])
    assert sp.dense_shape.shape.as_list() == [2] and sp.get_shape().as_list() == [7, 6]
    assert sp.dense_shape.op.type == "PlaceholderWithDefault"
    assert ph["support"][0].get_shape().ndims is None

    def layer(x, din, dout, act, sparse, scope):
        with tf.variable_scope(scope + "_vars"):
            w = _glorot([din, dout], name="weights_0")
        if sparse:
            x = _sparse_dropout(x, 1 - ph["dropout"], ph["num_features_nonzero"])
            pre = tf.sparse_tensor_dense_matmul(x, w)
        else:
            pre = tf.matmul(tf.nn.dropout(x, 1 - ph["dropout"]), w)
        return act(tf.sparse_tensor_dense_matmul(ph["support"][0], pre)), w

    hidden, w1 = layer(sp, f, h, tf.nn.relu, True, "gc1")
    out, _ = layer(hidden, h, c, lambda x: x, False, "gc2")
    assert hidden.name == "Relu:0" and hidden.shape.as_list() == [None, 5]
    labels_mask = tf.cast(ph["labels_mask"], tf.float32)
    labels_mask /= tf.reduce_mean(labels_mask)
    xent = tf.nn.softmax_cross_entropy_with_logits(logits=out, labels=ph["labels"])
    loss = 5e-4 * tf.nn.l2_loss(w1) + tf.reduce_mean(xent * labels_mask)
    correct = tf.cast(tf.equal(tf.argmax(out, 1), tf.argmax(ph["labels"], 1)), tf.float32)
    acc = tf.reduce_mean(correct * labels_mask)
    opt = tf.train.AdamOptimizer(learning_rate=0.05).minimize(loss)
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    fd = {ph["labels"]: y, ph["labels_mask"]: mask, sp: feat, ph["support"][0]: sup,
          ph["num_features_nonzero"]: feat[1].shape, ph["dropout"]: 0.5}
    got = [sess.run([opt, loss, acc], fd)[1:] for _ in range(5)]
    _close(got, [[1.418337, 0.5], [0.923889, 0.5], [0.888412, 0.75], [1.250047, 0.75],
                 [0.709151, 0.75]])
    fd[ph["dropout"]] = 0.
    _close(sess.run(tf.nn.softmax(out), fd)[[0, 3, 6]],
           [[0.808629, 0.097139, 0.094232], [0.774123, 0.122526, 0.103351],
            [0.946889, 0.029671, 0.02344]])


def test_sparse_placeholder_with_a_tensor_shape_defaults_to_it():
    named = tf.sparse_placeholder(tf.float32, shape=tf.constant([3, 4], dtype=tf.int64),
                                  name="sp")
    assert named.get_shape().as_list() == [3, 4]
    assert (named.dense_shape.name, named.values.name) == ("sp/shape:0", "sp/values:0")
    plain = tf.sparse_placeholder(tf.float32, shape=tf.constant([3, 4], dtype=tf.int64))
    assert plain.dense_shape.name == "PlaceholderWithDefault:0"
    assert plain.indices.shape.as_list() == [None, 2]
    with tf.Session() as s:
        dense = s.run(tf.sparse_tensor_to_dense(plain), {plain: ([[0, 1]], [2.], [3, 4])})
        assert dense[0, 1] == 2. and dense.shape == (3, 4)
        assert s.run(named.dense_shape, {named.indices: [[0, 1]],
                                         named.values: [2.]}).tolist() == [3, 4]


def test_sparse_reshape_is_named_and_checked_as_tensorflow():
    st = tf.SparseTensor([[0, 0], [1, 2], [2, 1]], [1., 2., 3.], [3, 4])
    got = []
    for shp in ([4, 3], [-1, 2], [2, -1, 3]):
        r = tf.sparse_reshape(st, shp)
        got.append((r.get_shape().as_list(), r.dense_shape.name, r.values.name,
                    r.indices.name))
    assert got == [
        ([4, 3], "SparseReshape/Const:0", "SparseReshape/Identity:0", "SparseReshape:0"),
        ([6, 2], "SparseReshape_1/Const:0", "SparseReshape_1/Identity:0",
         "SparseReshape_1:0"),
        ([2, 2, 3], "SparseReshape_2/Const:0", "SparseReshape_2/Identity:0",
         "SparseReshape_2:0")]
    unknown = tf.sparse_reshape(tf.sparse_placeholder(tf.float32), [6, 2])
    assert unknown.get_shape().as_list() == [None, None]
    assert unknown.dense_shape.name == "SparseReshape_3:1"
    with pytest.raises(ValueError, match=r"^Cannot reshape a tensor with 12 elements to "
                                         r"shape \[5, 2\] \(10 elements\)\.$"):
        tf.sparse_reshape(st, [5, 2])
    with pytest.raises(ValueError, match=r"^At most one dimension can be inferred \(-1\)\. "
                                         r"Found: \[-1 -1\]$"):
        tf.sparse_reshape(st, [-1, -1])


# -- GAT: sparse attention heads, dense heads, segment softmax over an edge list --------
def test_gat_sparse_and_dense_attention_heads_and_segment_softmax():
    rng = np.random.RandomState(1)
    nb, fdim, out_sz = 5, 4, 3
    a = (rng.rand(nb, nb) < 0.5).astype(np.float32)
    np.fill_diagonal(a, 1)
    idx = np.vstack(np.nonzero(a)).T.astype(np.int64)
    x = rng.randn(1, nb, fdim).astype(np.float32)
    tf.set_random_seed(7)
    adj = tf.sparse_placeholder(dtype=tf.float32)
    seq = tf.placeholder(tf.float32, shape=(1, nb, fdim))
    bias_in = tf.placeholder(tf.float32, shape=(1, nb, nb))
    with tf.name_scope("sp_attn"):
        seq_fts = tf.layers.conv1d(seq, out_sz, 1, use_bias=False)
        f_1 = tf.reshape(tf.layers.conv1d(seq_fts, 1, 1), (nb, 1))
        f_2 = tf.reshape(tf.layers.conv1d(seq_fts, 1, 1), (nb, 1))
        logits = tf.sparse_add(adj * f_1, adj * tf.transpose(f_2, [1, 0]))
        assert logits.get_shape().ndims is None
        lrelu = tf.SparseTensor(indices=logits.indices, values=tf.nn.leaky_relu(logits.values),
                                dense_shape=logits.dense_shape)
        coefs = tf.sparse_reshape(tf.sparse_softmax(lrelu), [nb, nb])
        assert coefs.get_shape().as_list() == [None, None]  # (TF: the input's is unknown)
        vals = tf.expand_dims(tf.sparse_tensor_dense_matmul(coefs, tf.squeeze(seq_fts)), 0)
        vals.set_shape([1, nb, out_sz])
        o_sp = tf.nn.elu(vals)
    with tf.name_scope("my_attn"):
        seq_fts = tf.layers.conv1d(seq, out_sz, 1, use_bias=False)
        f_1, f_2 = tf.layers.conv1d(seq_fts, 1, 1), tf.layers.conv1d(seq_fts, 1, 1)
        coefs = tf.nn.softmax(tf.nn.leaky_relu(f_1 + tf.transpose(f_2, [0, 2, 1])) + bias_in)
        o_d = tf.nn.elu(tf.matmul(coefs, seq_fts))
    assert (o_sp.name, o_d.name) == ("sp_attn/Elu:0", "my_attn/Elu:0")
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    got_sp, got_d = sess.run([o_sp, o_d], {seq: x, bias_in: -1e9 * (1.0 - a[None]),
                                           adj: (idx, np.ones(len(idx), np.float32), a.shape)})
    _close(got_sp[0, [0, 3]], [[-0.785439, 0.886924, 1.023268],
                               [-0.843787, 0.830052, 1.325377]])
    _close(got_d[0, [0, 3]], [[0.541217, -0.420898, 0.637564],
                              [1.106218, -0.438017, -0.151481]])

    src, dst = tf.constant(idx[:, 1]), tf.constant(idx[:, 0])
    tf.layers.dense(seq[0], 1, name="att")
    e = tf.gather(tf.squeeze(tf.layers.dense(seq[0], 1, name="att", reuse=True), 1), src)
    emax = tf.math.unsorted_segment_max(e, dst, nb)
    ex = tf.exp(e - tf.gather(emax, dst))
    alpha = ex / tf.gather(tf.unsorted_segment_sum(ex, dst, num_segments=nb), dst)
    agg = tf.math.unsorted_segment_sum(alpha[:, None] * tf.gather(seq[0], src), dst, nb)
    umean = tf.math.unsorted_segment_mean(e, dst, nb)
    usq = tf.math.unsorted_segment_sqrt_n(e, dst, nb)
    uprod = tf.math.unsorted_segment_prod(e, dst, nb)
    umin = tf.math.unsorted_segment_min(e, dst, nb)
    assert (umean.name, usq.name) == ("UnsortedSegmentMean/truediv:0",
                                      "UnsortedSegmentSqrtN/truediv:0")
    assert tf.segment_sum(alpha, dst).shape.as_list() == [None]
    target = (tf.reduce_sum(agg ** 2) + tf.reduce_sum(umean * usq) + tf.reduce_sum(uprod)
              + tf.reduce_sum(umin))
    g = tf.gradients(target, tf.trainable_variables()[-2:])
    sess.run(tf.global_variables_initializer())
    got = sess.run([agg, tf.segment_sum(alpha, dst), tf.math.segment_max(e, dst), umean,
                    usq, uprod, umin, *g], {seq: x})
    _close(got[0][0], [-0.47777, -0.79337, -0.05476, 0.28297], 1e-4)
    _close(got[1], [1., 1., 1., 1., 1.])
    _close(got[2], [0.61262, 1.94908, -0.42252, 1.94908, -0.55325], 1e-4)
    _close(got[3], [-0.26054, 0.36504, -0.5516, 0.66948, -0.61614], 1e-4)
    _close(got[4], [-0.52108, 0.73009, -0.95539, 1.15958, -0.87135], 1e-4)
    _close(got[5], [-0.09724, 0.34257, -0.15873, -0.66061, 0.37567], 1e-4)
    _close(got[6], [-0.67902, -0.67902, -0.67902, -0.55325, -0.67902], 1e-4)
    _close(got[7].ravel(), [2.31165, -5.41805, -3.95766, 1.33078], 1e-4)
    _close(got[8], [3.33456], 1e-4)


# -- Raissi's PINN: derivatives of derivatives, Hessians --------------------------------
def _pinn():
    tf.set_random_seed(1234)
    layers = [2, 8, 8, 1]
    weights, biases = [], []
    for i in range(len(layers) - 1):
        std = np.sqrt(2 / (layers[i] + layers[i + 1]))
        weights.append(tf.Variable(tf.truncated_normal([layers[i], layers[i + 1]], stddev=std),
                                   dtype=tf.float32))
        biases.append(tf.Variable(tf.zeros([1, layers[i + 1]], dtype=tf.float32),
                                  dtype=tf.float32))
    lb, ub = np.array([-1., 0.]), np.array([1., 1.])

    def net_u(x, t):
        h = 2.0 * (tf.concat([x, t], 1) - lb) / (ub - lb) - 1.0
        for w, b in zip(weights[:-1], biases[:-1]):
            h = tf.tanh(tf.add(tf.matmul(h, w), b))
        return tf.add(tf.matmul(h, weights[-1]), biases[-1])

    def net_f(x, t):
        u = net_u(x, t)
        u_t = tf.gradients(u, t)[0]
        u_x = tf.gradients(u, x)[0]
        u_xx = tf.gradients(u_x, x)[0]
        return u_t + u * u_x - (0.01 / np.pi) * u_xx

    x_tf, t_tf, u_tf = (tf.placeholder(tf.float32, shape=[None, 1]) for _ in range(3))
    u_pred, f_pred = net_u(x_tf, t_tf), net_f(x_tf, t_tf)
    loss = tf.reduce_mean(tf.square(u_tf - u_pred)) + tf.reduce_mean(tf.square(f_pred))
    rng = np.random.RandomState(0)
    xs = rng.uniform(-1, 1, (20, 1)).astype(np.float32)
    ts = rng.uniform(0, 1, (20, 1)).astype(np.float32)
    fd = {x_tf: xs, t_tf: ts, u_tf: -np.sin(np.pi * xs).astype(np.float32)}
    return net_u, u_pred, f_pred, loss, fd, xs


def test_raissi_pinn_with_second_derivatives_and_hessians_as_tensorflow():
    net_u, u_pred, f_pred, loss, fd, xs = _pinn()
    assert (u_pred.name, f_pred.name, f_pred.shape.as_list()) == ("Add_2:0", "sub_4:0",
                                                                   [None, 1])
    train = tf.train.AdamOptimizer().minimize(loss)
    sess = tf.Session(config=tf.ConfigProto(allow_soft_placement=True,
                                            log_device_placement=False))
    sess.run(tf.global_variables_initializer())
    losses = []
    for it in range(20):
        sess.run(train, fd)
        if it % 5 == 0:
            losses.append(sess.run(loss, fd))
    _close(losses, [0.39679965, 0.34697875, 0.30693144, 0.2753747])
    _close(sess.run(f_pred, fd)[:4].ravel(), [0.089816, 0.071695, -0.022034, 0.047832])
    x = tf.placeholder(tf.float32, [None, 1])
    y = net_u(x, tf.ones_like(x) * 0.5)
    g3 = tf.gradients(tf.gradients(tf.gradients(y, x)[0], x)[0], x)[0]
    _close(sess.run(g3, {x: xs[:3]}).ravel(), [0.420135, 0.154628, 0.354909])
    jac = tf.stack([tf.gradients(y[:, 0][i], x)[0] for i in range(2)])
    assert jac.shape.as_list() == [2, None, 1]

    v = tf.Variable([0.3, -0.2, 0.5])
    (h,) = tf.hessians(tf.reduce_sum(tf.sin(v) * tf.reduce_prod(v)) + tf.reduce_sum(v ** 3), v)
    assert (h.name, h.shape.as_list()) == ("Reshape_1:0", [3, 3])
    w = tf.Variable([[0.5, -1.0], [0.2, 0.3]])
    e2 = tf.reduce_sum(tf.tanh(tf.matmul(w, w)))
    (h2,) = tf.hessians(e2, [w])
    assert h2.shape.as_list() == [2, 2, 2, 2]
    sess.run(tf.variables_initializer([v, w]))
    _close(sess.run(h), [[1.617798, 0.333432, -0.260334], [0.333432, -0.91194, 0.245716],
                         [-0.260334, 0.245716, 2.909073]])
    _close(sess.run(h2).reshape(4, 4)[0], [2.625435, -0.054851, 1.025008, 0.730094])
    a, b = tf.constant(2.0), tf.constant(3.0)
    ga = tf.gradients(a * b * a, [a, b], grad_ys=tf.constant(0.5))
    assert sess.run(ga) == [6.0, 2.0]
    assert sess.run(tf.gradients(a * b + b, [a, b], stop_gradients=[b])) == [3.0, 3.0]
    assert sess.run(tf.gradients(ga[0], a)) == [3.0]


def test_hessians_of_an_unconnected_or_linear_x_raise_as_tensorflow():
    v = tf.Variable([0.3, -0.2, 0.5])
    with pytest.raises(ValueError, match=r"^None values not supported\.$"):
        tf.hessians(tf.reduce_sum(2. * v), v)
    with pytest.raises(ValueError, match=r"^Tried to convert 'tensor' to a tensor and "
                                         r"failed\. Error: None values not supported\.$"):
        tf.hessians(tf.constant(1.), v)


# -- ScipyOptimizerInterface (L-BFGS-B after Adam, as the PINN papers train) -------------
def test_pinn_lbfgs_through_scipy_optimizer_interface_is_scipys_minimize():
    _, _, _, loss, fd, _ = _pinn()
    variables = tf.trainable_variables()
    options = {"maxiter": 25, "maxfun": 50, "maxcor": 50, "maxls": 50,
               "ftol": 1.0 * np.finfo(float).eps}
    opt = tf.contrib.opt.ScipyOptimizerInterface(loss, method="L-BFGS-B", options=options)
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    start = sess.run(variables)
    seen, steps = [], []
    opt.minimize(sess, feed_dict=fd, fetches=[loss, variables[0]],
                 loss_callback=lambda val, w0: seen.append((val, w0.shape)),
                 step_callback=lambda x: steps.append(x.shape))
    after = sess.run(loss, fd)

    # the same minimization, SciPy on the packed vector with the variables fed
    grads = tf.gradients(loss, variables)
    sizes = [int(np.prod(s.shape)) for s in start]

    def unpack(x):
        parts = np.split(x, np.cumsum(sizes)[:-1])
        return {v: p.reshape(s.shape) for v, p, s in zip(variables, parts, start)}

    def fun(x):
        feed = {**unpack(x), **fd}
        val, gs = sess.run([loss, grads], feed)
        return val, np.concatenate([g.ravel() for g in gs]).astype("float64")

    x0 = np.concatenate([s.ravel() for s in start])
    ref = scipy.optimize.minimize(fun, x0, jac=True, method="L-BFGS-B", options=options)
    _close(after, ref.fun, 1e-6)
    assert after < 0.5 * sess.run(loss, {**unpack(x0), **fd})
    assert len(seen) == ref.nfev and seen[0][1] == (2, 8)
    assert len(steps) == ref.nit and steps[0] == (sum(sizes),)


def test_scipy_optimizer_interface_bounds_constraints_and_its_errors():
    x = tf.Variable([1.0, 2.0], name="x")
    y = tf.Variable(0.5, name="y")
    loss = tf.reduce_sum(tf.square(x - [3.0, -1.0])) + tf.square(y - 4.0)
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    tf.contrib.opt.ScipyOptimizerInterface(
        loss, var_to_bounds={x: ([0.0, -0.5], 2.5), y: (-np.inf, 1.0)}).minimize(sess)
    _close(sess.run([x, y])[0], [2.5, -0.5], 1e-6)
    _close(sess.run(y), 1.0, 1e-6)

    # SLSQP with an equality (x0 + x1 = 1) and an inequality (y >= 3) constraint
    sess.run(tf.global_variables_initializer())
    opt = tf.contrib.opt.ScipyOptimizerInterface(
        loss, var_list=[x, y], equalities=[tf.reduce_sum(x) - 1.0],
        inequalities=[y - 3.0, 10.0 - y], method="SLSQP")
    with sess.as_default():
        opt.minimize()
    _close(sess.run(x), [2.5, -1.5], 1e-3)  # (SLSQP's default ftol on a float32 loss)
    _close(sess.run(y), 4.0, 1e-3)

    with pytest.raises(ValueError, match=r"^No variables to optimize\.$"):
        tf.contrib.opt.ScipyOptimizerInterface(tf.constant(1.0), var_list=[])
    with pytest.raises(ValueError, match=r"^Bounds must be set using the var_to_bounds "):
        tf.contrib.opt.ScipyOptimizerInterface(loss, bounds=[(0, 1)]).minimize(sess)
    with pytest.raises(ValueError, match=r"^Optimizer keyword arg 'callback' is set "
                                         r"automatically and cannot be injected manually$"):
        tf.contrib.opt.ScipyOptimizerInterface(loss, callback=print).minimize(sess)


# -- Finn's MAML: second-order gradients through inner updates in a map_fn --------------
def test_maml_second_order_meta_gradients_in_a_map_fn_as_tensorflow():
    tf.set_random_seed(5)
    dims, update_lr, num_updates = [1, 10, 10, 1], 0.01, 2

    def forward(inp, w):
        h = tf.nn.relu(tf.matmul(inp, w["w1"]) + w["b1"])
        h = tf.nn.relu(tf.matmul(h, w["w2"]) + w["b2"])
        return tf.matmul(h, w["w3"]) + w["b3"]

    def loss_func(pred, label):
        return tf.reduce_mean(tf.square(tf.reshape(pred, [-1]) - tf.reshape(label, [-1])))

    inputa, inputb, labela, labelb = (tf.placeholder(tf.float32) for _ in range(4))
    with tf.variable_scope("model", reuse=None):
        weights = {}
        for i in range(3):
            weights[f"w{i + 1}"] = tf.Variable(
                tf.truncated_normal([dims[i], dims[i + 1]], stddev=0.01))
            weights[f"b{i + 1}"] = tf.Variable(tf.zeros([dims[i + 1]]))

        def task_metalearn(inp):
            ina, inb, la, lb = inp
            outputa = forward(ina, weights)
            lossa = loss_func(outputa, la)
            fast = weights
            outputbs, lossesb = [], []
            for _ in range(num_updates):
                loss = lossa if fast is weights else loss_func(forward(ina, fast), la)
                grads = dict(zip(fast.keys(), tf.gradients(loss, list(fast.values()))))
                fast = {k: fast[k] - update_lr * grads[k] for k in fast}
                outputbs.append(forward(inb, fast))
                lossesb.append(loss_func(outputbs[-1], lb))
            return [outputa, outputbs, lossa, lossesb]

        out_dtype = [tf.float32, [tf.float32] * num_updates, tf.float32,
                     [tf.float32] * num_updates]
        outputas, _, lossesa, lossesb = tf.map_fn(
            task_metalearn, elems=(inputa, inputb, labela, labelb), dtype=out_dtype,
            parallel_iterations=4)
    assert outputas.name == "model/map/TensorArrayStack/TensorArrayGatherV3:0"
    assert [t.name for t in lossesb] == ["model/map/TensorArrayStack_4/TensorArrayGatherV3:0",
                                         "model/map/TensorArrayStack_5/TensorArrayGatherV3:0"]
    total_loss1 = tf.reduce_sum(lossesa) / tf.cast(4, tf.float32)
    total_losses2 = [tf.reduce_sum(lossesb[j]) / tf.cast(4, tf.float32)
                     for j in range(num_updates)]
    optimizer = tf.train.AdamOptimizer(0.001)
    gvs = [(tf.clip_by_value(g, -10, 10), v)
           for g, v in optimizer.compute_gradients(total_losses2[-1])]
    metatrain_op = optimizer.apply_gradients(gvs)
    rng = np.random.RandomState(0)
    sess = tf.InteractiveSession()
    tf.global_variables_initializer().run()
    got = []
    for _ in range(4):
        amp, phase = rng.uniform(0.1, 5.0, [4]), rng.uniform(0, np.pi, [4])
        x = rng.uniform(-5, 5, [4, 10, 1]).astype(np.float32)
        y = (amp[:, None, None] * np.sin(x - phase[:, None, None])).astype(np.float32)
        fd = {inputa: x[:, :5], inputb: x[:, 5:], labela: y[:, :5], labelb: y[:, 5:]}
        got.append(sess.run([metatrain_op, total_loss1, *total_losses2], fd)[1:])
    sess.close()
    _close(got, [[5.627234, 3.158996, 3.148354], [2.317517, 2.927489, 2.926801],
                 [4.463244, 3.40933, 3.428039], [8.361362, 5.708268, 5.735574]])


# -- Gaussian-process regression by hand ------------------------------------------------
def test_gaussian_process_marginal_likelihood_and_posterior_as_tensorflow():
    rng = np.random.RandomState(0)
    xn = np.sort(rng.uniform(-3, 3, (12, 1)), 0)
    yn = np.sin(xn) + 0.1 * rng.randn(12, 1)
    x = tf.placeholder(tf.float64, [None, 1], name="X")
    y = tf.placeholder(tf.float64, [None, 1], name="Y")
    xs = tf.placeholder(tf.float64, [None, 1], name="Xs")
    log_ls = tf.Variable(np.log(1.0), name="log_lengthscale")
    log_sf = tf.Variable(0.0, dtype=tf.float64, name="log_sf")
    log_sn = tf.get_variable("log_sn", initializer=tf.constant(np.log(0.3)))

    def rbf(a, b):
        a, b = a / tf.exp(log_ls), b / tf.exp(log_ls)
        sq = (tf.reduce_sum(tf.square(a), 1)[:, None] - 2 * tf.matmul(a, b, transpose_b=True)
              + tf.reduce_sum(tf.square(b), 1)[None, :])
        return tf.exp(2 * log_sf) * tf.exp(-0.5 * sq)

    n = tf.shape(x)[0]
    k = rbf(x, x) + tf.eye(n, dtype=tf.float64) * tf.exp(2 * log_sn)
    chol = tf.cholesky(k)
    alpha = tf.cholesky_solve(chol, y)
    nlml = (0.5 * tf.reduce_sum(y * alpha) + tf.reduce_sum(tf.log(tf.matrix_diag_part(chol)))
            + 0.5 * tf.cast(n, tf.float64) * np.log(2 * np.pi))
    ks = rbf(x, xs)
    mu = tf.matmul(ks, alpha, transpose_a=True)
    var = tf.exp(2 * log_sf) - tf.reduce_sum(
        tf.square(tf.matrix_triangular_solve(chol, ks, lower=True)), 0)
    ld1, ld2 = tf.linalg.logdet(k), tf.linalg.slogdet(k)
    assert (alpha.name, ld1.name, ld1.op.type) == (
        "cholesky_solve/MatrixTriangularSolve_1:0", "logdet/mul:0", "Mul")
    assert (ld2[0].name, ld2[1].name) == ("LogMatrixDeterminant:0", "LogMatrixDeterminant:1")
    assert (alpha.shape.as_list(), var.shape.as_list()) == ([None, 1], [None])
    grads = tf.gradients(nlml, [log_ls, log_sf, log_sn])
    train = tf.train.AdamOptimizer(0.05).minimize(nlml)
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    fd = {x: xn, y: yn, xs: np.linspace(-3, 3, 4)[:, None]}
    got = sess.run([nlml, ld1, ld2.log_abs_determinant, ld2.sign, *grads], fd)
    _close(got, [4.415649770853115, -15.776446964982526, -15.776446964982528, 1.0,
                 -2.339250940016579, 2.7378507901738547, 6.7089275000495245], 1e-9)
    for _ in range(10):
        sess.run(train, fd)
    got = sess.run([nlml, mu, var], fd)
    _close(got[0], 0.5021223323075876, 1e-9)
    _close(got[1].ravel(), [-0.430978, -0.666607, 0.767018, 0.304979], 1e-6)
    _close(got[2], [0.348919, 0.029834, 0.007501, 0.031631], 1e-6)
    op = tf.linalg.LinearOperatorFullMatrix(k, is_self_adjoint=True, is_positive_definite=True)
    tri = tf.linalg.LinearOperatorLowerTriangular(chol)
    assert type(op.cholesky()).__name__ == "LinearOperatorLowerTriangular"
    _close(sess.run([tri.log_abs_determinant(), op.cholesky().log_abs_determinant()], fd),
           [-14.893257898426949] * 2, 1e-9)
    _close(sess.run(op.solve(y)[:3], fd).ravel(), [-1.758813, -2.608024, -1.27533], 1e-6)


# -- decompositions, least squares, the FFT family on complex tensors -------------------
def test_decompositions_least_squares_and_ffts_as_tensorflow():
    rng = np.random.RandomState(0)
    a_np = rng.randn(4, 3).astype(np.float32)
    a = tf.constant(a_np)
    sym = tf.constant((a_np.T @ a_np + np.eye(3)).astype(np.float32))
    s, u, v = tf.svd(a)
    s3, u3, _ = tf.svd(a, full_matrices=True)
    e, ev = tf.self_adjoint_eig(sym)
    _, r = tf.qr(a)
    q2, r2 = tf.linalg.qr(a, full_matrices=True)
    x_ls = tf.matrix_solve_ls(a, tf.ones([4, 1]))
    x_ls2 = tf.linalg.lstsq(a, tf.ones([4, 1]), l2_regularizer=0.1)
    layout = [(t.name, t.op.type, t.shape.as_list()) for t in (u, v, s3, u3, e, ev, q2, r2,
                                                                 x_ls, x_ls2)]
    assert layout == [
        ("Svd:1", "Svd", [4, 3]), ("Svd:2", "Svd", [3, 3]), ("Svd_1:0", "Svd", [3]),
        ("Svd_1:1", "Svd", [4, 4]), ("SelfAdjointEigV2:0", "SelfAdjointEigV2", [3]),
        ("SelfAdjointEigV2:1", "SelfAdjointEigV2", [3, 3]), ("Qr_1:0", "Qr", [4, 4]),
        ("Qr_1:1", "Qr", [4, 3]),
        ("matrix_solve_ls/cholesky_solve/MatrixTriangularSolve_1:0", "MatrixTriangularSolve",
         [3, 1]),
        ("matrix_solve_ls_1/cholesky_solve/MatrixTriangularSolve_1:0",
         "MatrixTriangularSolve", [3, 1])]
    sess = tf.Session()
    got = sess.run([s, e, tf.abs(r), x_ls, x_ls2, tf.linalg.expm([[0., 1.], [-1., 0.]])])
    _close(got[0], [3.46853, 2.07997, 0.76022], 1e-5)
    _close(got[1], [1.57794, 5.32626, 13.03067], 1e-5)
    _close(got[2][0], [3.03393, 1.58416, 0.01174], 1e-5)
    _close(got[3].ravel(), [0.67001, -0.16885, 0.27847], 1e-5)
    _close(got[4].ravel(), [0.63911, -0.12303, 0.28538], 1e-5)
    _close(got[5], [[0.5403, 0.84147], [-0.84147, 0.5403]], 1e-5)
    w = tf.Variable((a_np.T @ a_np + np.eye(3)).astype(np.float32))
    obj = (tf.reduce_sum(tf.linalg.svd(w, compute_uv=False))
           + tf.reduce_sum(tf.linalg.eigvalsh(w + tf.transpose(w)))
           + tf.reduce_sum(tf.linalg.qr(w)[1] ** 2) + tf.reduce_sum(tf.linalg.expm(0.1 * w))
           + tf.reduce_sum(tf.matrix_solve_ls(w, tf.ones([3, 2]))))
    sess.run(w.initializer)
    _close(sess.run(tf.gradients(obj, w)[0]), [[23.816, 9.9954, 0.3695],
                                               [9.9954, 12.3778, -2.4282],
                                               [0.3695, -2.4282, 13.0574]], 1e-4)

    c = tf.complex(tf.constant([1., 2., 3., 4.]), tf.constant([0.5, -1., 0., 2.]))
    assert (tf.conj(c).op.type, tf.abs(c).op.type, tf.angle(c).op.type) == (
        "Conj", "ComplexAbs", "Angle")
    ffts = [tf.fft(c), tf.spectral.fft2d(tf.reshape(c, [2, 2])), tf.spectral.rfft(tf.real(c)),
            tf.signal.rfft2d(tf.reshape(tf.real(c), [2, 2]))]
    assert [(t.name, t.shape.as_list()) for t in ffts] == [
        ("FFT:0", [4]), ("FFT2D:0", [2, 2]), ("rfft:0", [3]), ("rfft2d:0", [2, 2])]
    got = sess.run([*ffts, tf.spectral.irfft(ffts[2])])
    np.testing.assert_allclose(got[0], [10 + 1.5j, -5 + 2.5j, -2 - 0.5j, 1 - 1.5j], atol=1e-5)
    np.testing.assert_allclose(got[1], [[10 + 1.5j, -2 - 0.5j], [-4 - 2.5j, 3.5j]], atol=1e-5)
    np.testing.assert_allclose(got[2], [10, -2 + 2j, -2], atol=1e-5)
    np.testing.assert_allclose(got[4], [1, 2, 3, 4], atol=1e-5)
    z = tf.Variable(1.0)
    cz = tf.complex(z, 2 * z)
    lz = tf.real(tf.reduce_sum(tf.fft(tf.stack([cz, cz * cz]))
                               * tf.conj(tf.fft(tf.stack([cz, cz * cz])))))
    lz3 = tf.reduce_sum(tf.spectral.irfft(tf.spectral.rfft(tf.stack([z, z * z, 3.0, 4.0]))
                                          * tf.complex(2.0, 0.0)))
    sess.run(z.initializer)
    _close(sess.run([lz, tf.gradients(lz, z)[0], tf.abs(cz * cz),
                     tf.gradients(tf.abs(cz * cz), z)[0], lz3, tf.gradients(lz3, z)[0]]),
           [60.0, 220.0, 5.0, 10.0, 18.0, 6.0])
    with tf.Graph().as_default():
        real = tf.constant([0.3, -1.2])
        angle, imag = tf.angle(real), tf.imag(real)
        assert (angle.name, imag.name) == ("Angle/Select:0", "Imag/zeros_like:0")
        _close(tf.Session().run([angle, imag]), [[0.0, np.pi], [0.0, 0.0]])
    herm = tf.linalg.eigh(tf.constant([[2., 1j], [-1j, 2.]], tf.complex64))[0]
    assert herm.dtype == tf.complex64  # (TF's op def: the eigenvalues have T)
    np.testing.assert_allclose(sess.run(herm), [1, 3], atol=1e-6)


def test_matrix_solve_ls_is_tensorflows_graph():
    a = tf.constant([[1., 2.], [3., 4.], [5., 7.]])
    b = tf.constant([[1.], [2.], [2.]])
    x = tf.matrix_solve_ls(a, b)
    assert [(o.name, o.type) for o in tf.get_default_graph().get_operations()][2:] == [
        ("matrix_solve_ls/MatMul", "MatMul"), ("matrix_solve_ls/Cholesky", "Cholesky"),
        ("matrix_solve_ls/MatMul_1", "MatMul"),
        ("matrix_solve_ls/cholesky_solve/MatrixTriangularSolve", "MatrixTriangularSolve"),
        ("matrix_solve_ls/cholesky_solve/MatrixTriangularSolve_1", "MatrixTriangularSolve")]
    under = tf.matrix_solve_ls(tf.constant([[1., 2., 3.]]), tf.constant([[1.]]), 0.1, name="u")
    names = [o.name for o in tf.get_default_graph().get_operations()
             if o.name.startswith("u/")]
    assert names[:2] == ["u/MatMul", "u/Shape"] and names[-7:] == [
        "u/mul/x", "u/mul", "u/add", "u/Cholesky", "u/cholesky_solve/MatrixTriangularSolve",
        "u/cholesky_solve/MatrixTriangularSolve_1", "u/MatMul_1"]
    assert "u/eye/diag" in names and len(names) == 28
    assert under.name == "u/MatMul_1:0"
    p = tf.placeholder(tf.float32, [None, None])
    q = tf.placeholder(tf.float32, [None, 1])
    dyn = tf.matrix_solve_ls(p, q, l2_regularizer=0.1)
    assert (dyn.name, dyn.shape.as_list()) == ("matrix_solve_ls_1/cond/Merge:0", [None, 1])
    lam = tf.placeholder(tf.float32, [])
    reg = tf.linalg.lstsq(a, b, l2_regularizer=lam)
    slow = tf.matrix_solve_ls(a, b, fast=False)
    assert (slow.name, slow.op.type) == ("MatrixSolveLs:0", "MatrixSolveLs")
    v = tf.Variable([[1., 2.], [3., 4.], [5., 7.]])
    g = tf.gradients(tf.reduce_sum(tf.matrix_solve_ls(v, b, 0.1) ** 2), v)[0]
    sess = tf.Session()
    sess.run(v.initializer)
    _close(sess.run(x).ravel(), [-0.214286, 0.5], 1e-5)
    _close(sess.run(under).ravel(), [0.070922, 0.141844, 0.212766], 1e-5)
    _close(sess.run(dyn, {p: [[1., 2.], [3., 4.], [5., 7.]], q: [[1.], [2.], [2.]]}).ravel(),
           [-0.05326, 0.38509], 1e-5)
    _close(sess.run(reg, {lam: 0.2}).ravel(), [0.011478, 0.338693], 1e-5)
    _close(sess.run(g), [[-0.480674, 0.067881], [-1.158153, 0.917626],
                         [0.793828, -0.571584]], 1e-4)
    with pytest.raises(NotImplementedError, match=r"^matrix_solve_ls is currently disabled "
                                                  r"for complex128 and l2_regularizer != 0"):
        tf.matrix_solve_ls(tf.constant([[1., 2., 3.]], tf.complex128),
                           tf.constant([[1.]], tf.complex128), 0.1)


# -- custom gradients, py_func with an overridden gradient, an RK4 neural ODE -----------
def test_custom_gradients_py_func_gradient_override_and_rk4_ode_as_tensorflow():
    @tf.custom_gradient
    def clip_gradient_identity(x):
        return tf.identity(x), lambda dy: tf.clip_by_value(dy, -0.1, 0.1)

    @tf.custom_gradient
    def log1pexp(x):
        e = tf.exp(x)
        return tf.log(1 + e), lambda dy: dy * (1 - 1 / (1 + e))

    x = tf.constant([1., 50., -2.])
    y1, y2 = clip_gradient_identity(x * 3.0), log1pexp(x)
    g1 = tf.gradients(tf.reduce_sum(y1 * 10), x)[0]
    g2 = tf.gradients(tf.reduce_sum(y2), x)[0]
    assert (g1.name, g2.name) == ("gradients/mul_grad/Mul:0",
                                  "gradients_1/IdentityN_1_grad/mul:0")
    sess = tf.Session()
    got = sess.run([y2, g1, g2])
    _close(got, [[1.313262, 50., 0.126928], [0.3, 0.3, 0.3], [0.731059, 1., 0.119203]])

    def np_square(a):
        return np.square(a).astype(np.float32)

    tf.RegisterGradient("PyFuncGradSci")(lambda op, grad: grad * 2 * op.inputs[0])
    xv = tf.Variable([1., 2., 3.])
    with tf.get_default_graph().gradient_override_map({"PyFunc": "PyFuncGradSci",
                                                       "PyFuncStateless": "PyFuncGradSci"}):
        sq = tf.py_func(np_square, [xv], [tf.float32], name="MySquare")[0]
    assert (sq.name, sq.op.type, sq.shape.ndims) == ("MySquare:0", "PyFunc", None)
    sq.set_shape(xv.get_shape())
    nf = tf.numpy_function(lambda a: a[::-1].copy(), [xv], tf.float32)
    assert (nf.op.type, nf.name) == ("PyFunc", "PyFunc:0")
    assert tf.gradients(tf.reduce_sum(nf), xv) == [None]
    with tf.get_default_graph().gradient_override_map({"Sign": "Identity"}):
        sg = tf.sign(xv - 2.0)
    sess.run(xv.initializer)
    _close(sess.run([sq, tf.gradients(tf.reduce_sum(sq * sq), xv)[0], nf]),
           [[1., 4., 9.], [4., 32., 108.], [3., 2., 1.]])
    _close(sess.run(tf.gradients(tf.reduce_sum(sg * xv), xv))[0], [0., 2., 4.])

    tf.set_random_seed(2)
    w = tf.get_variable("W", [2, 2], initializer=tf.random_normal_initializer(stddev=0.5))

    def f(t, y):
        return tf.tanh(tf.matmul(y, w)) * (1.0 + 0.1 * t)

    def rk4_step(t, y, h):
        k1 = f(t, y)
        k2 = f(t + h / 2, y + h / 2 * k1)
        k3 = f(t + h / 2, y + h / 2 * k2)
        k4 = f(t + h, y + h * k3)
        return y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)

    y0 = tf.constant([[1.0, -0.5], [0.3, 0.2]])
    n_steps, h = tf.constant(10), 0.1
    ta = tf.TensorArray(tf.float32, size=n_steps, element_shape=[2, 2])

    def body(i, t, y, ta):
        y = rk4_step(t, y, h)
        return [i + 1, t + h, y, ta.write(i, y)]

    _, t_end, y_end, ta = tf.while_loop(lambda i, t, y, ta: i < n_steps, body,
                                        [tf.constant(0), tf.constant(0.0), y0, ta],
                                        back_prop=True, maximum_iterations=20)
    traj = ta.stack()
    assert (y_end.name, t_end.name, traj.shape.as_list()) == ("while/Exit_3:0",
                                                              "while/Exit_2:0", [10, 2, 2])
    loss = tf.reduce_sum(y_end ** 2) + tf.reduce_mean(traj)
    sess.run(w.initializer)
    got = sess.run([t_end, y_end, tf.gradients(loss, w)[0], traj[3]])
    _close(got[0], 1.0000001)
    _close(got[1], [[0.919041, -0.343769], [0.220529, 0.036679]])
    _close(got[2], [[2.003841, -0.496974], [-0.740637, 0.231239]])
    _close(got[3], [[0.971723, -0.423839], [0.261864, 0.115591]])
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    for _ in range(3):
        sess.run(train)
    _close(sess.run(loss), 0.5993568)
    ys = tf.scan(lambda y, t: y + 0.1 * f(t, y), tf.range(0., 1., 0.1), initializer=y0)
    assert (ys.name, ys.shape.as_list()) == ("scan/TensorArrayStack/TensorArrayGatherV3:0",
                                             [10, 2, 2])
    _close(sess.run(ys[-1]), [[0.568612, -0.245929], [0.14737, 0.049127]])


def test_while_loop_with_maximum_iterations_compares_structures_strictly():
    i0, x0 = tf.constant(0), tf.constant(1.)
    # TF 2.15 (tf-oracle): a plain loop takes a tuple back for a list of loop variables ...
    assert isinstance(tf.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2),
                                    [i0, x0]), tuple)
    # ... with maximum_iterations they are nested one level down and must match
    with pytest.raises(TypeError, match=r"^The two structures don't have the same nested"):
        tf.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2), [i0, x0],
                      maximum_iterations=2)
    with pytest.raises(TypeError, match=r"^The two structures don't have the same nested"):
        tf.while_loop(lambda i, x: i < 3, lambda i, x: [i + 1, x * 2], (i0, x0),
                      maximum_iterations=2)
    with pytest.raises(ValueError, match=r"^The two structures don't have the same nested"):
        tf.while_loop(lambda i: i < 3, lambda i: (i + 1,), [i0], maximum_iterations=2)
    out = tf.while_loop(lambda i, d: i < 3, lambda i, d: [i + 1, {"a": d["a"] * 2}],
                        [i0, {"a": x0}], maximum_iterations=5)
    with tf.Session() as sess:
        assert sess.run(out) == [3, {"a": 8.0}]


def test_linear_operator_hints_are_set_and_checked_as_tensorflow():
    lin = tf.linalg
    d = lin.LinearOperatorDiag([1., 2.], is_positive_definite=True)
    d2 = lin.LinearOperatorDiag([3.], is_positive_definite=True, is_non_singular=True)
    f = lin.LinearOperatorFullMatrix([[1., 2.], [3., 4.]], is_non_singular=True)

    def hints(op):
        return (op.is_non_singular, op.is_self_adjoint, op.is_positive_definite, op.is_square)

    # TF 2.15's hints (tf-oracle)
    assert hints(lin.LinearOperatorScaledIdentity(2, 3.)) == (None, True, None, True)
    assert hints(lin.LinearOperatorScaledIdentity(2, tf.cast(3., tf.complex64))) == (
        None, None, None, True)
    assert hints(lin.LinearOperatorBlockDiag([d, d2])) == (True, True, True, True)
    assert hints(lin.LinearOperatorKronecker([d, d2])) == (True, True, True, True)
    assert hints(lin.LinearOperatorComposition([d, d])) == (True, True, True, True)
    assert hints(lin.LinearOperatorComposition([f, f.H])) == (True, True, True, True)
    assert hints(lin.LinearOperatorComposition([f, f])) == (True, None, None, True)
    assert hints(lin.LinearOperatorComposition([d])) == (True, True, None, True)
    errors = [
        (lambda: lin.LinearOperatorScaledIdentity(2, 3., is_self_adjoint=False),
         "A real diagonal operator is always self adjoint."),
        (lambda: lin.LinearOperatorBlockDiag([d, d2], is_positive_definite=False),
         "The direct sum of positive definite operators is always positive definite."),
        (lambda: lin.LinearOperatorBlockDiag([d, d2], is_non_singular=False),
         "The direct sum of non-singular operators is always non-singular."),
        (lambda: lin.LinearOperatorKronecker([d, d2], is_self_adjoint=False),
         "The Kronecker product of self-adjoint operators is always self-adjoint. Expected "
         "argument `is_self_adjoint` to be True. Received: False."),
        (lambda: lin.LinearOperatorComposition([f, f.H], is_positive_definite=False),
         "The composition was determined to be non-singular and have the form A @ A.H, "
         "hence it must be positive-definite. The user provided an incorrect `False` hint."),
        (lambda: lin.LinearOperatorComposition([d, d], is_square=False),
         "The composition was determined have the form A @ A.H, hence it must be square. "
         "The user provided an incorrect `False` hint."),
        (lambda: lin.LinearOperatorIdentity(2, is_self_adjoint=False),
         "An identity operator is always self adjoint."),
        (lambda: lin.LinearOperatorIdentity(2, is_square=False, is_non_singular=False),
         "An identity operator is always non-singular."),
    ]
    for make, message in errors:
        with pytest.raises(ValueError) as info:
            make()
        assert str(info.value) == message


# -- tf.contrib.distributions: multivariate normals, bijectors, flows -------------------
# TF 2.15 has no contrib: densities are checked against SciPy, samples against TF's
# seeded ``random_normal`` stream (printed by the tf-oracle) pushed through ``loc + L @ eps``.
_EPS_11_5 = [1.864449, -2.442835, 0.027562, 1.742389, 0.767071, -1.587465, 0.809826,
             -0.995849]
_EPS_11_9 = [-0.789631, 0.336639, -0.910334, -0.069325, 0.295575, 0.00313, 1.119998,
             0.751292, -0.798762, 0.63431, 0.20445, -1.945355]


def test_multivariate_normals_match_scipy_and_tensorflows_seeded_draws():
    from scipy import stats

    tfd = tf.contrib.distributions
    loc = np.array([1.0, -1.0], np.float32)
    diag = np.array([0.5, 2.0], np.float32)
    tril = np.array([[1.0, 0.0], [0.6, 0.8]], np.float32)
    tf.set_random_seed(11)
    mvn_diag = tfd.MultivariateNormalDiag(loc=loc, scale_diag=diag)
    upper_ignored = (tril + np.triu(np.ones(2), 1)).astype(np.float32)
    mvn_tril = tfd.MultivariateNormalTriL(loc=loc, scale_tril=upper_ignored)
    mvn_full = tfd.MultivariateNormalFullCovariance(loc=loc, covariance_matrix=tril @ tril.T)
    batch = tfd.MultivariateNormalDiag(loc=np.zeros([3, 2], np.float32),
                                       scale_diag=[[1., 2.], [0.5, 0.5], [3., 1.]])
    assert (mvn_diag.batch_shape.as_list(), mvn_diag.event_shape.as_list()) == ([], [2])
    assert (batch.batch_shape.as_list(), batch.event_shape.as_list()) == ([3], [2])
    s_diag = mvn_diag.sample(4, seed=5)
    s_tril = mvn_tril.sample([2, 3], seed=9)
    assert s_diag.shape.as_list() == [4, 2] and s_tril.shape.as_list() == [2, 3, 2]
    x = np.array([[0.3, -0.2], [1.5, 0.5], [-1.0, -3.0]], np.float32)
    sess = tf.Session()
    got = sess.run({"sd": s_diag, "st": s_tril, "lpd": mvn_diag.log_prob(x),
                    "lpt": mvn_tril.log_prob(x), "lpf": mvn_full.log_prob(x),
                    "pb": batch.prob(x), "ent": [mvn_diag.entropy(), mvn_tril.entropy()],
                    "cov": mvn_tril.covariance(), "var": mvn_tril.variance(),
                    "std": mvn_diag.stddev(), "mean": batch.mean(),
                    "kl": tfd.kl_divergence(mvn_diag, mvn_tril)})
    eps = np.reshape(_EPS_11_5, [4, 2])
    _close(got["sd"], loc + diag * eps)
    _close(got["st"], loc + np.reshape(_EPS_11_9, [2, 3, 2]) @ tril.T)
    ref_d = stats.multivariate_normal(loc, np.diag(diag ** 2))
    ref_t = stats.multivariate_normal(loc, tril @ tril.T)
    _close(got["lpd"], ref_d.logpdf(x))
    _close(got["lpt"], ref_t.logpdf(x))
    _close(got["lpf"], ref_t.logpdf(x))
    _close(got["pb"], [stats.multivariate_normal(np.zeros(2), np.diag(np.square(d))).pdf(r)
                       for d, r in zip([[1., 2.], [0.5, 0.5], [3., 1.]], x)])
    _close(got["ent"], [ref_d.entropy(), ref_t.entropy()])
    _close(got["cov"], tril @ tril.T)
    _close(got["var"], np.diag(tril @ tril.T))
    _close(got["std"], diag)
    _close(got["mean"], np.zeros([3, 2]))
    sa, sb = np.diag(diag ** 2), tril @ tril.T
    kl = 0.5 * (np.trace(np.linalg.solve(sb, sa)) + (loc - loc) @ np.linalg.solve(sb, loc - loc)
                - 2 + np.log(np.linalg.det(sb) / np.linalg.det(sa)))
    _close(got["kl"], kl)
    # reparameterized: gradients reach the parameters through the draw
    scale = tf.Variable(diag)
    draw = tfd.MultivariateNormalDiag(loc=loc, scale_diag=scale).sample(4, seed=5)
    sess.run(scale.initializer)
    _close(sess.run(tf.gradients(tf.reduce_sum(draw), scale)[0]), eps.sum(0))


def test_bijectors_transformed_distributions_and_fill_triangular():
    tfd = tf.contrib.distributions
    tfb = tfd.bijectors
    x = np.array([0.2, -0.7, 1.3], np.float32)
    sess = tf.Session()
    for bij, fwd, fldj in [
            (tfb.Exp(), np.exp(x), x),
            (tfb.Softplus(), np.log1p(np.exp(x)), -np.log1p(np.exp(-x))),
            (tfb.Sigmoid(), 1 / (1 + np.exp(-x)),
             np.log(1 / (1 + np.exp(-x))) + np.log(1 - 1 / (1 + np.exp(-x)))),
            (tfb.AffineScalar(shift=1.0, scale=-2.0), 1 - 2 * x, np.log(2.0) * np.ones(3)),
            (tfb.Identity(), x, np.zeros(3))]:
        y = bij.forward(x)
        got = sess.run([y, bij.inverse(y), bij.forward_log_det_jacobian(x, event_ndims=0),
                        bij.inverse_log_det_jacobian(y, event_ndims=0),
                        bij.forward_log_det_jacobian(x, event_ndims=1)])
        _close(got[0], fwd, 1e-5)
        _close(got[1], x, 1e-5)
        _close(got[2], fldj, 1e-5)
        _close(got[3], -fldj, 1e-5)
        _close(got[4], fldj.sum(), 1e-5)

    tril = np.array([[2.0, 0.0, 0.0], [0.5, 1.0, 0.0], [-1.0, 0.3, 0.5]], np.float32)
    aff = tfb.Affine(shift=[1., 2., 3.], scale_tril=tril)
    y = aff.forward(x)
    chain = tfb.Chain([tfb.Exp(), tfb.Affine(shift=[1., 2., 3.], scale_diag=[1., 2., 3.])])
    inv = tfb.Invert(tfb.Exp())
    assert (chain.name, inv.name, aff.forward_min_event_ndims) == (
        "chain_of_exp_of_affine", "invert_exp", 1)
    got = sess.run([y, aff.inverse(y), aff.forward_log_det_jacobian(x, 1),
                    tfb.Affine(scale_identity_multiplier=3.).forward_log_det_jacobian(x, 1),
                    chain.forward(x), chain.forward_log_det_jacobian(x, 1),
                    chain.inverse_log_det_jacobian(chain.forward(x), 1),
                    inv.forward([1., np.e]), inv.forward_log_det_jacobian([1., np.e], 1)])
    _close(got[0], tril @ x + [1., 2., 3.], 1e-5)
    _close(got[1], x, 1e-5)
    _close(got[2], np.log(2 * 1 * 0.5), 1e-6)
    _close(got[3], 3 * np.log(3.0), 1e-6)
    inner = x * [1., 2., 3.] + [1., 2., 3.]
    _close(got[4], np.exp(inner), 1e-5)
    _close(got[5], np.log(6.0) + inner.sum(), 1e-5)
    _close(got[6], -(np.log(6.0) + inner.sum()), 1e-4)
    _close(got[7], [0., 1.], 1e-6)
    _close(got[8], -1.0, 1e-6)

    from scipy import stats

    log_normal = tfd.TransformedDistribution(distribution=tfd.Normal(loc=0.5, scale=2.0),
                                             bijector=tfb.Exp(), name="LogNormal")
    iid = tfd.TransformedDistribution(distribution=tfd.Normal(loc=0., scale=1.),
                                      bijector=tfb.Affine(shift=[1., 2.],
                                                          scale_diag=[2., 0.5]),
                                      event_shape=[2])
    assert (iid.batch_shape.as_list(), iid.event_shape.as_list()) == ([], [2])
    tf.set_random_seed(11)
    draws = iid.sample(4, seed=5)
    assert draws.shape.as_list() == [4, 2]
    pts = np.array([[0.5, 1.5], [2., 2.5]], np.float32)
    got = sess.run([log_normal.log_prob([0.5, 3.0]), log_normal.prob(2.0),
                    iid.log_prob(pts), draws])
    _close(got[0], stats.lognorm(s=2.0, scale=np.exp(0.5)).logpdf([0.5, 3.0]), 1e-5)
    _close(got[1], stats.lognorm(s=2.0, scale=np.exp(0.5)).pdf(2.0), 1e-5)
    _close(got[2], stats.multivariate_normal([1., 2.], np.diag([4., 0.25])).logpdf(pts), 1e-5)
    _close(got[3], np.reshape(_EPS_11_5, [4, 2]) * [2., 0.5] + [1., 2.])

    perm = tfb.Permute([2, 0, 1])
    pts3 = np.array([[1., 2., 3.], [4., 5., 6.]], np.float32)
    got = sess.run([perm.forward(pts3), perm.inverse(perm.forward(pts3)),
                    perm.forward_log_det_jacobian(pts3, 1)])
    assert got[0].tolist() == [[3., 1., 2.], [6., 4., 5.]] and got[1].tolist() == pts3.tolist()
    assert got[2].tolist() == [0., 0.]
    with pytest.raises(ValueError, match="must contain exactly one of each"):
        tfb.Permute([0, 0, 1])

    assert sess.run(tfd.fill_triangular([1, 2, 3, 4, 5, 6])).tolist() == [
        [4, 0, 0], [6, 5, 0], [3, 2, 1]]
    assert sess.run(tfd.fill_triangular([1, 2, 3, 4, 5, 6], upper=True)).tolist() == [
        [1, 2, 3], [0, 5, 6], [0, 0, 4]]
    with pytest.raises(ValueError, match=r"^Input right-most shape \(5\) does not "):
        tfd.fill_triangular([1, 2, 3, 4, 5])


def test_a_flow_of_affine_bijectors_on_a_multivariate_normal_trains():
    """A small normalizing flow (Eric Jang's tutorial's shape): a Chain of Affine and
    Softplus-free layers over a diagonal normal, fitted by maximum likelihood."""
    tfd = tf.contrib.distributions
    tfb = tfd.bijectors
    rng = np.random.RandomState(0)
    data = (rng.randn(64, 2) @ np.array([[1.0, 0.0], [0.8, 0.5]]) + [1.0, -1.0]) \
        .astype(np.float32)
    base = tfd.MultivariateNormalDiag(loc=tf.zeros([2]))
    shift = tf.Variable([0.0, 0.0])
    tril = tf.Variable(np.eye(2, dtype=np.float32))
    flow = tfd.TransformedDistribution(distribution=base, bijector=tfb.Chain([
        tfb.Affine(shift=shift, scale_tril=tril), tfb.Invert(tfb.Invert(tfb.Identity()))]))
    nll = -tf.reduce_mean(flow.log_prob(data))
    train = tf.train.AdamOptimizer(0.05).minimize(nll)
    samples = flow.sample(5, seed=3)
    assert samples.shape.as_list() == [5, 2]
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    first = sess.run(nll)
    for _ in range(300):
        sess.run(train)
    fitted_shift, fitted_tril = sess.run([shift, tril])
    cov = np.tril(fitted_tril) @ np.tril(fitted_tril).T
    np.testing.assert_allclose(fitted_shift, data.mean(0), atol=0.05)
    np.testing.assert_allclose(cov, np.cov(data.T, bias=True), atol=0.08)
    assert sess.run(nll) < first


# -- tf.contrib.integrate: adaptive Dormand-Prince and fixed-grid solvers ---------------
def test_odeint_and_odeint_fixed_match_scipys_solutions_and_differentiate():
    from scipy.integrate import solve_ivp

    a = np.array([[-0.1, 2.0], [-2.0, -0.1]])
    y0, ts = np.array([2.0, 0.0]), np.linspace(0.0, 10.0, 11)

    def rhs(y, t):  # (TF's order: y first)
        return tf.squeeze(tf.matmul(tf.constant(a), y[:, None]), 1) * (1 + 0.1 * tf.sin(t))

    y, info = tf.contrib.integrate.odeint(rhs, tf.constant(y0), tf.constant(ts),
                                          full_output=True)
    assert y.shape.as_list() == [11, 2]
    ref = solve_ivp(lambda t, v: (a @ v) * (1 + 0.1 * np.sin(t)), (0, 10), y0, t_eval=ts,
                    rtol=1e-11, atol=1e-12).y.T
    sess = tf.Session()
    got, points = sess.run([y, info["integrate_points"]])
    np.testing.assert_allclose(got, ref, atol=1e-5)
    assert points[0] == 0.0 and points[-1] >= 10.0 and len(points) > 20

    # a decay rate learned through the solver (float32, as a TF1 neural-ODE toy)
    k = tf.Variable(0.5)
    decay = tf.contrib.integrate.odeint(lambda y, t: -k * y, 1.0, [0.0, 1.0, 2.0])
    loss = tf.reduce_sum(tf.square(decay - np.exp(-1.5 * np.array([0.0, 1.0, 2.0]))))
    grad = tf.gradients(loss, k)[0]
    sess.run(k.initializer)
    _close(sess.run(decay), np.exp(-0.5 * np.array([0.0, 1.0, 2.0])), 1e-5)
    eps = 1e-3
    numeric = []
    for value in (0.5 + eps, 0.5 - eps):
        sess.run(k.assign(value))
        numeric.append(sess.run(loss))
    sess.run(k.assign(0.5))
    _close(sess.run(grad), (numeric[0] - numeric[1]) / (2 * eps), 2e-3)

    fixed = tf.contrib.integrate.odeint_fixed(
        lambda y, t: -y * t, tf.constant(1.0, tf.float64),
        tf.constant([0.0, 0.5, 1.0], tf.float64), dt=0.1)
    mid = tf.contrib.integrate.odeint_fixed(lambda y, t: -y, tf.constant(1.0, tf.float64),
                                            tf.constant([0.0, 0.5, 1.0], tf.float64),
                                            method="midpoint")
    _close(sess.run(fixed), np.exp(-np.array([0.0, 0.5, 1.0]) ** 2 / 2), 1e-6)
    _close(sess.run(mid), [1.0, 0.625, 0.625 ** 2], 1e-12)
    with pytest.raises(ValueError, match="method 'euler' is not supported"):
        tf.contrib.integrate.odeint_fixed(lambda y, t: -y, 1.0, [0.0, 1.0], method="euler")


def test_a_gaussian_policy_on_multivariate_normal_diag_with_a_broadcast_scale():
    """PPO/TRPO style: a batch of means with one learned log-std vector."""
    from scipy import stats

    tfd = tf.contrib.distributions
    rng = np.random.RandomState(0)
    means = rng.randn(4, 2).astype(np.float32)
    logstd = tf.Variable(np.array([-0.5, 0.3], np.float32))
    pi = tfd.MultivariateNormalDiag(tf.constant(means), tf.exp(logstd))
    old = tfd.MultivariateNormalDiag(tf.constant(means) + 0.1, tf.exp(logstd) * 1.2)
    action = pi.sample(seed=1)
    assert (pi.batch_shape.as_list(), pi.event_shape.as_list()) == ([4], [2])
    assert action.shape.as_list() == [4, 2]
    draws = pi.sample(3, seed=2)
    log_p, entropy, kl = pi.log_prob(action), pi.entropy(), tfd.kl_divergence(old, pi)
    assert pi.log_prob(draws).shape.as_list() == [3, 4]
    sess = tf.Session()
    sess.run(logstd.initializer)
    got = sess.run({"a": action, "lp": log_p, "h": entropy, "kl": kl})
    sd = np.exp([-0.5, 0.3])
    _close(got["lp"], [stats.multivariate_normal(m, np.diag(sd ** 2)).logpdf(a)
                       for m, a in zip(means, got["a"])])
    _close(got["h"], [stats.multivariate_normal(means[0], np.diag(sd ** 2)).entropy()] * 4)
    sa, sb, dm = np.diag((sd * 1.2) ** 2), np.diag(sd ** 2), -0.1 * np.ones(2)
    _close(got["kl"], [0.5 * (np.trace(np.linalg.solve(sb, sa)) + dm @ np.linalg.solve(sb, dm)
                              - 2 + np.log(np.linalg.det(sb) / np.linalg.det(sa)))] * 4)
