"""TF1 programs "from the wild", round 2 (graph-level programs): the classes of
discrepancy a second fidelity sweep found and fixed.

Each program was first run under TensorFlow 2.15's ``tf.compat.v1`` with the tf-oracle;
the values asserted here are the ones TensorFlow printed. Covered: known `Dimension`s as
int arguments (`tf.constant(..., dtype=tf.int32)`, `tf.range`), the resize family
(`resize_bicubic`, `resize_area`, nearest-neighbour `align_corners` rounding,
`resize_image_with_pad`, `random_contrast`, `random_crop`'s run-time check), Python
protocol errors on tensors, `gradient_override_map` naming an op type's gradient
(straight-through estimators), `tf.custom_gradient` with variables, `tf.cast` of a
`SparseTensor`, `tf.debugging.assert_near` / `assert_shapes` /
`assert_same_float_dtype` and `TensorShape.as_proto`.
"""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf


def _run(fetches, feed_dict=None):
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        return sess.run(fetches, feed_dict)


# -- a known Dimension is an int -----------------------------------------------------------
def test_known_dimensions_convert_where_tf_accepts_them():
    x = tf.placeholder(tf.float32, [None, 3, 4])
    assert tf.constant(x.shape[1], dtype=tf.int32).dtype == tf.int32
    assert _run(tf.constant([x.shape[1], x.shape[2]], dtype=tf.int32)).tolist() == [3, 4]
    assert tf.range(x.shape[1]).shape.as_list() == [3]
    assert tf.convert_to_tensor(x.shape[1]).dtype == tf.int32
    with pytest.raises(TypeError):  # TF 2.15: no dtype, a Dimension does not convert
        tf.constant(x.shape[1])
    with pytest.raises(TypeError):
        tf.constant(x.shape[1], dtype=tf.float32)


# -- the resize family -----------------------------------------------------------------------
def _image():
    return tf.constant(np.arange(2 * 3 * 4 * 2, dtype=np.float32).reshape(2, 3, 4, 2))


def test_resize_bicubic_area_and_nearest_rounding_match_tf():
    img = _image()
    bic, area, nn_ac, m_bic, m_area = _run([
        tf.image.resize_bicubic(img, [4, 5])[0, :, :, 0],
        tf.image.resize_area(img, [2, 2])[0, :, :, 0],
        tf.image.resize_nearest_neighbor(img, [5, 5], align_corners=True)[1, :, :, 0],
        tf.image.resize_images(img, [2, 3], method=tf.image.ResizeMethod.BICUBIC)[1, :, :, 1],
        tf.image.resize_images(img, [2, 3], method=tf.image.ResizeMethod.AREA)[1, :, :, 1]])
    np.testing.assert_allclose(bic, [
        [0.0, 1.4555, 3.1514, 4.9928, 6.1921], [5.3438, 6.7993, 8.4951, 10.3365, 11.5358],
        [12.75, 14.2055, 15.9014, 17.7428, 18.9421],
        [16.8438, 18.2993, 19.9951, 21.8365, 23.0358]], atol=1e-4)
    np.testing.assert_allclose(area, [[3.6667, 7.6667], [14.3333, 18.3333]], atol=1e-4)
    np.testing.assert_array_equal(nn_ac, [  # halves round away from zero (roundf)
        [24, 26, 28, 28, 30], [32, 34, 36, 36, 38], [32, 34, 36, 36, 38],
        [40, 42, 44, 44, 46], [40, 42, 44, 44, 46]])
    np.testing.assert_allclose(m_bic, [[25.0, 27.7402, 30.482], [37.75, 40.4902, 43.232]],
                               atol=1e-4)
    np.testing.assert_allclose(m_area, [[28.1667, 30.6667, 33.1667],
                                        [38.8333, 41.3333, 43.8333]], atol=1e-4)
    assert tf.image.resize_bicubic(tf.zeros([1, 3, 3, 1], tf.uint8), [2, 2]).dtype == tf.float32
    g = tf.gradients(tf.reduce_sum(tf.image.resize_bicubic(img, [5, 7])), img)[0]
    assert g.shape.as_list() == [2, 3, 4, 2]


def test_resize_image_with_pad_random_contrast_and_random_crop_match_tf():
    img = _image()
    pad = _run(tf.image.resize_image_with_pad(img, 4, 6))[0, :, :, 0]
    np.testing.assert_allclose(pad, [[0.0, 1.6, 3.2, 4.8, 6.0, 0.0],
                                     [6.0, 7.6, 9.2, 10.8, 12.0, 0.0],
                                     [12.0, 13.6, 15.2, 16.8, 18.0, 0.0],
                                     [16.0, 17.6, 19.2, 20.8, 22.0, 0.0]], atol=1e-4)
    assert tf.image.random_contrast(img[0], 0.5, 1.5).shape.as_list() == [3, 4, 2]
    with pytest.raises(ValueError, match="upper must be > lower"):
        tf.image.random_contrast(img[0], 1.5, 0.5)
    crop = tf.random_crop(img[0], [5, 2, 2])  # too large: fails when run, as in TF
    with pytest.raises(tf.errors.InvalidArgumentError):
        _run(crop)


# -- Python protocol errors --------------------------------------------------------------------
def test_iterating_or_testing_a_tensor_raises_type_error_as_tf():
    c = tf.constant([1, 2, 3])
    x = tf.placeholder(tf.float32, [None, 3])
    for bad in (lambda: list(c), lambda: list(x), lambda: 1 in c, lambda: bool(c),
                lambda: len(c), lambda: [0, 1][c[0]], lambda: int(c[0])):
        with pytest.raises(TypeError):
            bad()
    with pytest.raises(TypeError):
        _, _b = tf.constant([[1, 2], [3, 4]])
    assert [d.size for d in tf.TensorShape([None, 3]).as_proto().dim] == [-1, 3]
    assert tf.TensorShape(None).as_proto().unknown_rank


# -- gradients ---------------------------------------------------------------------------------
def test_gradient_override_map_may_name_an_op_types_gradient():
    x = tf.placeholder(tf.float32, [None, 3])
    g = tf.get_default_graph()
    with g.gradient_override_map({"Floor": "Identity"}):  # the straight-through estimator
        fl = tf.floor(x * 2.0)
    dfl = tf.gradients(tf.reduce_sum(fl), x)[0]
    np.testing.assert_array_equal(_run(dfl, {x: np.ones([2, 3])}), np.full([2, 3], 2.0))
    with g.gradient_override_map({"Floor": "NoSuchGradient"}):
        fl2 = tf.floor(x)
    with pytest.raises(LookupError, match="NoSuchGradient"):
        tf.gradients(fl2, x)


def test_custom_gradient_with_variables_gives_their_gradients():
    v = tf.Variable(1.5, name="v")

    @tf.custom_gradient
    def scale_var(x):
        out = x * v

        def grad(dy, variables=None):
            assert variables == [v]
            return dy * v, [dy * x * 100.]
        return out, grad

    x = tf.constant(2.)
    gv, gx = tf.gradients(scale_var(x), [v, x])
    assert _run([gv, gx]) == [200.0, 1.5]  # TF 2.15: [200.0] for v

    @tf.custom_gradient
    def no_kwarg(x):
        return x * v, lambda dy: dy
    with pytest.raises(TypeError, match="keyword argument 'variables'"):
        no_kwarg(x)


# -- sparse and debugging --------------------------------------------------------------------
def test_cast_of_a_sparse_tensor_and_sparse_to_indicator():
    sp = tf.sparse_placeholder(tf.float32, shape=[3, 4])
    val = tf.SparseTensorValue([[0, 0], [1, 2], [2, 3]], [1., 2., 3.], [3, 4])
    cast = tf.cast(sp, tf.int64)
    assert isinstance(cast, tf.SparseTensor) and cast.dtype == tf.int64
    assert _run(tf.sparse_to_indicator(cast, 5), {sp: val}).shape == (3, 5)  # TF: [3, 5]


def test_debugging_assert_near_shapes_and_same_float_dtype():
    with pytest.raises(tf.errors.InvalidArgumentError):
        _run(tf.debugging.assert_near(tf.constant(1.), tf.constant(1.0001)))
    _run(tf.debugging.assert_near(tf.constant(1.), tf.constant(1.0 + 1e-7)))
    x = tf.placeholder(tf.float32, [None])
    op = tf.debugging.assert_shapes([(x, ("N",))])
    assert op.type == "NoOp" and op.name == "group_deps"  # TF 2.15's name
    with pytest.raises(ValueError, match="must have rank 2"):
        tf.debugging.assert_shapes([(x, ("N", 3))])
    m = tf.placeholder(tf.float32, [None, 3])
    check = tf.debugging.assert_shapes([(m, ("N", 3)), (x, ("N",))])
    with tf.Session() as sess:
        sess.run(check, {m: np.zeros([2, 3]), x: np.zeros([2])})
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(check, {m: np.zeros([2, 3]), x: np.zeros([4])})
    assert tf.debugging.assert_same_float_dtype([x, tf.constant(1.)]) == tf.float32
    with pytest.raises(ValueError):
        tf.debugging.assert_same_float_dtype([x, tf.constant(1., tf.float64)])


# -- tf.raw_ops ---------------------------------------------------------------------------------
def test_raw_ops_take_tensorflows_keyword_arguments():
    x = tf.constant([[1., -2.], [3., 4.]])
    got = _run([tf.raw_ops.MatMul(a=x, b=x, transpose_a=True),
                tf.raw_ops.AddV2(x=x, y=1.0),
                tf.raw_ops.AddN(inputs=[x, x, x]),
                tf.raw_ops.ConcatV2(values=[x, x], axis=1),
                tf.raw_ops.Cast(x=x, DstT=tf.int32),
                tf.raw_ops.Sum(input=x, axis=[1], keep_dims=True),
                tf.raw_ops.Reshape(tensor=x, shape=[4]),
                tf.raw_ops.Range(start=0, limit=5, delta=2)])
    assert got[0].tolist() == [[10.0, 10.0], [10.0, 20.0]]  # TF 2.15's values
    assert got[1].tolist() == [[2.0, -1.0], [4.0, 5.0]]
    assert got[2].tolist() == [[3.0, -6.0], [9.0, 12.0]]
    assert got[3].shape == (2, 4) and got[4].dtype == np.int32
    assert got[5].tolist() == [[-1.0], [7.0]] and got[6].tolist() == [1.0, -2.0, 3.0, 4.0]
    assert got[7].tolist() == [0, 2, 4]
    _values, indices = tf.raw_ops.TopKV2(input=x, k=1)
    assert _run(indices).tolist() == [[0], [1]]
    parts = tf.raw_ops.Split(axis=0, value=x, num_split=2)
    assert [p.shape.as_list() for p in parts] == [[1, 2], [1, 2]]
    relu = tf.raw_ops.Relu(features=x, name="myrelu")
    assert relu.name == "myrelu:0" and relu.op.type == "Relu"
    assert tf.raw_ops.NoOp().type == "NoOp"
    with pytest.raises(TypeError, match="only takes keyword args"):
        tf.raw_ops.Relu(x)
    with pytest.raises(TypeError, match="'b'"):
        tf.raw_ops.MatMul(a=x)
    with pytest.raises(TypeError, match="foo"):
        tf.raw_ops.Relu(features=x, foo=1)
    assert not hasattr(tf.raw_ops, "NoSuchOpAtAll")
    assert "MatMul" in dir(tf.raw_ops)
    g = tf.gradients(tf.reduce_sum(tf.raw_ops.Square(x=x)), x)[0]
    assert _run(g).tolist() == [[2.0, -4.0], [6.0, 8.0]]


def test_raw_ops_group_their_outputs_as_tensorflow():
    # TF 2.15: named tuples of the output arguments, lists for list-valued ones
    top = tf.raw_ops.TopKV2(input=[3.0, 1.0, 2.0], k=2)
    assert type(top).__name__ == "TopKV2" and top._fields == ("values", "indices")
    assert _run(top.indices).tolist() == [0, 2]
    unpacked = tf.raw_ops.Unpack(value=[[1, 2], [3, 4]], num=2)
    assert isinstance(unpacked, list) and len(unpacked) == 2
    split = tf.raw_ops.SparseSplit(split_dim=0, indices=[[0, 0], [1, 1]], values=[1.0, 2.0],
                                   shape=[2, 2], num_split=2)
    assert split._fields == ("output_indices", "output_values", "output_shape")
    assert [type(x).__name__ for x in split] == ["list"] * 3
    assert [_run(v).tolist() for v in split.output_values] == [[1.0], [2.0]]
    assert tf.raw_ops.Unique(x=[1, 1, 2])._fields == ("y", "idx")
    assert isinstance(tf.raw_ops.IdentityN(input=[tf.constant(1.0), tf.constant([1])]), list)


# -- color augmentation (CIFAR-style input pipelines) ------------------------------------------
def test_hsv_conversions_and_hue_saturation_match_tf():
    rng = np.random.RandomState(0)
    img = tf.constant(rng.rand(2, 3, 4, 3).astype(np.float32))
    u8 = tf.constant((rng.rand(3, 4, 3) * 255).astype(np.uint8))
    hsv, h2r, hue, sat, hue_u8, sat_u8 = _run([
        tf.image.rgb_to_hsv(img)[0, 0],
        tf.image.hsv_to_rgb(tf.constant([[0.0, 1., 1.], [0.9999, 0.5, 0.5], [1.0, 1., 1.],
                                         [0.5, 0., 0.3]])),
        tf.image.adjust_hue(img, -0.3)[0, 0],
        tf.image.adjust_saturation(img, 2.0)[1, 2],
        tf.image.adjust_hue(u8, 0.2)[0],
        tf.image.adjust_saturation(u8, 1.5)[0]])
    # TF 2.15's values
    np.testing.assert_allclose(hsv, [[0.3874, 0.2326, 0.7152], [0.7576, 0.3441, 0.6459],
                                     [0.5228, 0.5459, 0.9637], [0.3927, 0.5157, 0.7917]],
                               atol=1e-4)
    np.testing.assert_allclose(h2r, [[1.0, 0.0, 0.0], [0.5, 0.25, 0.2501], [1.0, 0.0, 0.0],
                                     [0.3, 0.3, 0.3]], atol=1e-4)
    np.testing.assert_allclose(hue, [[0.7152, 0.636, 0.5488], [0.4237, 0.6459, 0.5893],
                                     [0.7866, 0.9637, 0.4376], [0.7917, 0.6106, 0.3834]],
                               atol=1e-4)
    np.testing.assert_allclose(sat, [[0.0584, 0.0, 0.6563], [0.0, 0.0934, 0.3687],
                                     [0.8188, 0.0, 0.8379], [0.0, 0.9765, 0.4132]], atol=1e-4)
    np.testing.assert_array_equal(hue_u8, [[249, 234, 154], [9, 38, 72], [81, 34, 30],
                                           [176, 16, 55]])
    np.testing.assert_array_equal(sat_u8, [[249, 106, 157], [0, 72, 24], [72, 4, 81],
                                           [98, 0, 176]])
    assert tf.image.random_hue(img[0], 0.2).shape.as_list() == [3, 4, 3]
    assert tf.image.random_saturation(img[0], 0.5, 1.5).shape.as_list() == [3, 4, 3]
    with pytest.raises(ValueError, match=r"max_delta must be <= 0\.5"):
        tf.image.random_hue(img[0], 0.7)
    with pytest.raises(TypeError):
        tf.image.rgb_to_hsv(tf.constant([[1, 2, 3]]))


# -- tf.linalg.LinearOperator* -----------------------------------------------------------------
def test_linear_operators_match_tf():
    a = tf.constant([[4., 2., 0.6], [2., 5., 1.], [0.6, 1., 3.]])
    b = tf.constant([[1., 2.], [3., 4.], [5., 6.]])
    full = tf.linalg.LinearOperatorFullMatrix(a, is_self_adjoint=True,
                                              is_positive_definite=True)
    assert (full.shape.as_list(), full.batch_shape.as_list(), full.tensor_rank) == ([3, 3], [], 2)
    assert full.is_square and full.is_non_singular and full.name == "LinearOperatorFullMatrix"
    diag = tf.linalg.LinearOperatorDiag([1., 2., 4.])
    assert diag.is_self_adjoint and diag.shape.as_list() == [3, 3]
    tril = tf.linalg.LinearOperatorLowerTriangular(tf.cholesky(a))
    ident = tf.linalg.LinearOperatorIdentity(2, batch_shape=[4])
    scaled = tf.linalg.LinearOperatorScaledIdentity(3, 2.)
    got = _run([full.matvec([1., 0., 2.]), full.solve(b), full.determinant(),
                full.log_abs_determinant(), full.trace(), diag.matmul(b), diag.solve(b),
                diag.log_abs_determinant(), tril.solve(b), tril.determinant(),
                tril.log_abs_determinant(), ident.determinant(), scaled.determinant(),
                tf.gradients(full.log_abs_determinant(), a)[0]])
    want = [[5.2, 4.0, 6.6], [[-0.1614, 0.009], [0.348, 0.4251], [1.583, 1.8565]], 44.6,
            3.7977, 12.0, [[1.0, 2.0], [6.0, 8.0], [20.0, 24.0]],
            [[1.0, 2.0], [1.5, 2.0], [1.25, 1.5]], 2.0794,
            [[0.5, 1.0], [1.25, 1.5], [2.6429, 3.0996]], 6.6783, 1.8989, [1.0] * 4, 8.0,
            [[0.3139, -0.1211, -0.0224], [-0.1211, 0.261, -0.0628],
             [-0.0224, -0.0628, 0.3587]]]
    for g, w in zip(got, want):  # TF 2.15's values
        np.testing.assert_allclose(g, w, atol=1e-3, rtol=1e-4)
    assert ident.shape.as_list() == [4, 2, 2]
    with pytest.raises(ValueError):
        tf.linalg.LinearOperatorFullMatrix([1., 2.])
