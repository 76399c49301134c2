"""The shared `tf.linalg.LinearOperator` members: spectrum (`cholesky`, `eigvals`,
`cond`), the assert ops, `tensor_rank_tensor`, `parameters` and the `tf.Module` side.
Expected values, types and messages are TensorFlow 2.15's (tf.compat.v1, graph mode)."""

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework import errors
from tests.ops.module_examples import assert_examples_pass

LA = tf.linalg


def _spd():
    return LA.LinearOperatorFullMatrix([[4., 1.], [1., 3.]], is_self_adjoint=True,
                                       is_positive_definite=True)


def _hints(op):
    return (type(op).__name__, op.is_self_adjoint, op.is_positive_definite,
            op.is_non_singular, op.is_square)


def test_cholesky_operator_types_and_values():
    with tf.Graph().as_default(), tf.Session() as sess:
        diag = LA.LinearOperatorDiag([1., 4.], is_self_adjoint=True, is_positive_definite=True)
        scaled = LA.LinearOperatorScaledIdentity(3, 4., is_self_adjoint=True,
                                                 is_positive_definite=True)
        assert _hints(diag.cholesky()) == ("LinearOperatorDiag", True, True, True, True)
        assert _hints(LA.LinearOperatorIdentity(2).cholesky()) == \
            ("LinearOperatorIdentity", True, True, True, True)
        assert _hints(scaled.cholesky()) == \
            ("LinearOperatorScaledIdentity", True, True, True, True)
        assert _hints(_spd().cholesky()) == \
            ("LinearOperatorLowerTriangular", False, None, True, True)
        np.testing.assert_allclose(sess.run(diag.cholesky().to_dense()), [[1, 0], [0, 2]])
        np.testing.assert_allclose(sess.run(_spd().cholesky().to_dense()),
                                   [[2., 0.], [0.5, 1.6583124]], rtol=1e-6)
        np.testing.assert_allclose(sess.run(scaled.cholesky().to_dense()), 2 * np.eye(3))
        block = LA.LinearOperatorBlockDiag(
            [LA.LinearOperatorDiag([4., 9.], is_self_adjoint=True, is_positive_definite=True),
             LA.LinearOperatorFullMatrix([[4.]], is_self_adjoint=True,
                                         is_positive_definite=True)],
            is_self_adjoint=True, is_positive_definite=True)
        np.testing.assert_allclose(sess.run(block.cholesky().to_dense()), np.diag([2, 3, 2]))
        for op in (LA.LinearOperatorDiag([1., 4.]), LA.LinearOperatorFullMatrix([[4., 1.],
                                                                                 [2., 3.]])):
            with pytest.raises(ValueError, match="Not a positive definite self adjoint"):
                op.cholesky()


def test_eigvals_and_cond():
    with tf.Graph().as_default(), tf.Session() as sess:
        full = LA.LinearOperatorFullMatrix([[4., 1.], [2., 3.]])
        tril = LA.LinearOperatorLowerTriangular([[2., 0.], [1., 3.]])
        with pytest.raises(NotImplementedError, match="Only self-adjoint matrices"):
            full.eigvals()
        with pytest.raises(NotImplementedError, match="Only self-adjoint matrices"):
            tril.eigvals()
        assert _spd().eigvals().op.type == "SelfAdjointEigV2"
        cond = _spd().cond()
        assert (cond.dtype, cond.shape.ndims) == (tf.float32, 0)
        complex_full = LA.LinearOperatorFullMatrix(tf.constant([[1., 1j], [0., 2.]],
                                                               tf.complex64))
        # TensorFlow: the real dtype, except Identity/ScaledIdentity's own dtype
        assert [complex_full.cond().dtype,
                LA.LinearOperatorDiag(tf.constant([1., 2j], tf.complex64)).cond().dtype,
                LA.LinearOperatorIdentity(2, dtype=tf.complex64).cond().dtype] == \
            [tf.float32, tf.float32, tf.complex64]
        values = sess.run({
            "spd_eig": _spd().eigvals(), "spd_cond": _spd().cond(), "full_cond": full.cond(),
            "diag_cond": LA.LinearOperatorDiag([1., 4.]).cond(),
            "diag_eig": LA.LinearOperatorDiag([1., 4.]).eigvals(),
            "ident_cond": LA.LinearOperatorIdentity(2).cond(),
            "ident_eig": LA.LinearOperatorIdentity(2).eigvals(),
            "tril_cond": tril.cond(), "adj_cond": LA.LinearOperatorFullMatrix(
                [[1., 2.], [3., 4.]]).adjoint().cond(),
            "scaled_eig": LA.LinearOperatorScaledIdentity(3, 4., is_self_adjoint=True).eigvals(),
            "scaled0_cond": LA.LinearOperatorScaledIdentity(2, 0.).cond(),
            "inv_eig": LA.LinearOperatorDiag([2., 4.]).inverse().eigvals(),
            "hh_eig": LA.LinearOperatorHouseholder([1., 0., 0.],
                                                   is_self_adjoint=True).eigvals(),
            "perm_cond": LA.LinearOperatorPermutation([1, 0]).cond(),
            "block_eig": LA.LinearOperatorBlockDiag(
                [LA.LinearOperatorDiag([4., 9.]), LA.LinearOperatorDiag([1.])],
                is_self_adjoint=True).eigvals(),
            "circ_eig": LA.LinearOperatorCirculant(tf.constant([3., 1., 1.], tf.complex64),
                                                   is_self_adjoint=True).eigvals(),
            "complex_cond": LA.LinearOperatorFullMatrix(
                tf.constant([[1., 1j], [0., 2.]], tf.complex64)).cond(),
        })
    expected = {"spd_eig": [2.3819664, 4.6180344], "spd_cond": 1.9387488,
                "full_cond": 2.6180341, "diag_cond": 4.0, "diag_eig": [1., 4.],
                "ident_cond": 1.0, "ident_eig": [1., 1.], "tril_cond": 1.7675917,
                "adj_cond": 14.933036, "scaled_eig": [4., 4., 4.], "scaled0_cond": np.nan,
                "inv_eig": [0.5, 0.25], "hh_eig": [-1., 1., 1.], "perm_cond": 1.0,
                "block_eig": [4., 9., 1.], "circ_eig": [3., 1., 1.],
                "complex_cond": 2.618034}
    for key, want in expected.items():
        np.testing.assert_allclose(values[key], want, rtol=1e-5, err_msg=key)


def test_assert_ops_types():
    with tf.Graph().as_default():
        ident = LA.LinearOperatorIdentity(2)
        assert [ident.assert_non_singular().type, ident.assert_positive_definite().type,
                ident.assert_self_adjoint().type] == ["NoOp", "NoOp", "NoOp"]
        assert LA.LinearOperatorDiag([1., 4.]).assert_self_adjoint().type == "NoOp"
        assert LA.LinearOperatorPermutation([1, 0]).assert_non_singular().type == "NoOp"
        with pytest.raises(NotImplementedError, match="assert_positive_definite is not "):
            LA.LinearOperatorFullMatrix([[4., 1.], [2., 3.]]).assert_positive_definite()
        with pytest.raises(errors.InvalidArgumentError, match="always non-invertible"):
            LA.LinearOperatorZeros(2).assert_non_singular()
        with pytest.raises(errors.InvalidArgumentError, match="always non-positive definite"):
            LA.LinearOperatorZeros(2).assert_positive_definite()
        with pytest.raises(errors.InvalidArgumentError, match="Householder operators are"):
            LA.LinearOperatorHouseholder([1., 0.]).assert_positive_definite()
        # a constant argument fails as the op is built, as in TensorFlow
        with pytest.raises(errors.InvalidArgumentError, match="Real diagonal operator had "
                           "non-positive diagonal entries"):
            LA.LinearOperatorDiag([1., -2.]).assert_positive_definite()


@pytest.mark.parametrize("make, message", [
    (lambda: LA.LinearOperatorDiag([1., 0.]).assert_non_singular(),
     r"Singular operator:  Diagonal contained zero values."),
    (lambda: LA.LinearOperatorFullMatrix([[1., 2.], [2., 4.]]).assert_non_singular(),
     r"Singular matrix up to precision epsilon."),
    (lambda: LA.LinearOperatorFullMatrix([[1., 2.], [3., 4.]]).assert_self_adjoint(),
     r"Matrix was not equal to its adjoint."),
    (lambda: LA.LinearOperatorFullMatrix([[1., 2.], [2., 1.]],
                                         is_self_adjoint=True).assert_positive_definite(),
     r"Matrix was not positive definite."),
    (lambda: LA.LinearOperatorScaledIdentity(2, 0.).assert_non_singular(),
     r"LinearOperator was singular"),
    (lambda: LA.LinearOperatorLowerTriangular([[1., 0.], [1., 0.]]).assert_non_singular(),
     r"Singular operator:  Diagonal contained zero values."),
    (lambda: LA.LinearOperatorCirculant(
        tf.constant([3., 1j, 1.], tf.complex64)).assert_hermitian_spectrum(),
     r"Spectrum was not Hermitian"),
])
def test_assert_ops_fail_when_run(make, message):
    with tf.Graph().as_default(), tf.Session() as sess:
        with pytest.raises(errors.InvalidArgumentError, match=message):
            sess.run(make())


def test_assert_ops_pass_when_run():
    with tf.Graph().as_default(), tf.Session() as sess:
        sess.run([LA.LinearOperatorFullMatrix([[1., 2.], [3., 4.]]).assert_non_singular(),
                  _spd().assert_non_singular(), _spd().assert_positive_definite(),
                  _spd().assert_self_adjoint(),
                  LA.LinearOperatorDiag([1., 2.]).assert_non_singular()])


def test_tensor_rank_tensor():
    with tf.Graph().as_default(), tf.Session() as sess:
        rank = _spd().tensor_rank_tensor()
        assert (rank.op.type, rank.dtype) == ("Const", tf.int32)
        p = tf.placeholder(tf.float32, None)
        unknown = LA.LinearOperatorFullMatrix(p).tensor_rank_tensor()
        assert unknown.op.type == "Size"
        assert sess.run(unknown, {p: np.zeros((3, 2, 2))}) == 3


def test_parameters_and_module_members():
    with tf.Graph().as_default():
        assert LA.LinearOperatorDiag([1., 4.]).parameters == {
            "diag": [1.0, 4.0], "is_non_singular": None, "is_self_adjoint": None,
            "is_positive_definite": None, "is_square": None, "name": "LinearOperatorDiag"}
        assert LA.LinearOperatorIdentity(2).parameters == {
            "num_rows": 2, "batch_shape": None, "dtype": None, "is_non_singular": True,
            "is_self_adjoint": True, "is_positive_definite": True, "is_square": True,
            "assert_proper_shapes": False, "name": "LinearOperatorIdentity"}
        a = LA.LinearOperatorFullMatrix([[1., 2.], [3., 4.]])
        adjoint = a.adjoint().parameters
        assert adjoint["operator"] is a
        assert (adjoint["is_square"], adjoint["name"]) == (True, None)
        v = tf.Variable([[1., 0.], [0., 2.]], name="vv")
        fv = LA.LinearOperatorFullMatrix(v)
        assert [x.name for x in fv.variables] == ["vv:0"]
        assert [x.name for x in fv.trainable_variables] == ["vv:0"]
        assert fv.non_trainable_variables == () and fv.submodules == ()
        comp = LA.LinearOperatorComposition([a, fv])
        assert [m.name for m in comp.submodules] == ["LinearOperatorFullMatrix"] * 2
        assert [x.name for x in comp.variables] == ["vv:0"]
        assert isinstance(comp, tf.Module)


def test_attribute_members():
    with tf.Graph().as_default():
        assert LA.LinearOperatorFullMatrix([[1., 2.], [3., 4.]]).matrix.shape == (2, 2)
        assert LA.LinearOperatorLowerTriangular([[1., 5.], [1., 2.]]).tril.shape == (2, 2)
        base = LA.LinearOperatorDiag([1., 2.])
        with_diag = LA.LinearOperatorLowRankUpdate(base, [[1.], [2.]], diag_update=[3.])
        assert type(with_diag.diag_operator).__name__ == "LinearOperatorDiag"
        plain = LA.LinearOperatorLowRankUpdate(base, [[1.], [2.]])
        assert type(plain.diag_operator).__name__ == "LinearOperatorIdentity"
        # the old import path of LinearOperatorLowerTriangular still works
        from flowgraph.linalg.linear_operator_basic import LinearOperatorLowerTriangular
        assert LinearOperatorLowerTriangular is LA.LinearOperatorLowerTriangular


@pytest.mark.parametrize("module", ["flowgraph.linalg.linear_operator_checks",
                                    "flowgraph.linalg.linear_operator"])
def test_module_examples_run(module):
    assert_examples_pass(module)


def test_structured_specialisations():
    with tf.Graph().as_default(), tf.Session() as sess:
        tril = LA.LinearOperatorLowerTriangular([[-2., 0.], [1., 3.]])
        llt = LA.LinearOperatorComposition([tril, tril.adjoint()], is_self_adjoint=True,
                                           is_positive_definite=True)
        factor = llt.cholesky()
        assert (type(factor).__name__, factor.is_positive_definite) == \
            ("LinearOperatorLowerTriangular", True)
        positive = LA.LinearOperatorLowerTriangular([[2., 0.], [1., 3.]],
                                                    is_positive_definite=True)
        assert LA.LinearOperatorComposition(
            [positive, positive.adjoint()], is_self_adjoint=True,
            is_positive_definite=True).cholesky() is positive
        full = LA.LinearOperatorFullMatrix([[4., 1.], [1., 3.]])
        square = LA.LinearOperatorComposition([full, full], is_self_adjoint=True,
                                              is_positive_definite=True)
        kron = LA.LinearOperatorKronecker(
            [LA.LinearOperatorDiag([1., 4.], is_positive_definite=True), _spd()],
            is_self_adjoint=True, is_positive_definite=True)
        assert type(kron.cholesky()).__name__ == "LinearOperatorKronecker"
        blt = LA.LinearOperatorBlockLowerTriangular(
            [[LA.LinearOperatorDiag([2., 3.])],
             [LA.LinearOperatorFullMatrix([[1., 1.]]), LA.LinearOperatorDiag([5.])]],
            is_self_adjoint=True)
        assert blt.assert_non_singular().type == "NoOp"  # a group of the blocks' asserts
        got = sess.run({"llt": factor.to_dense(), "square": square.cholesky().to_dense(),
                        "kron": kron.cholesky().to_dense(), "kron_eig": kron.eigvals(),
                        "blt_eig": blt.eigvals()})
        np.testing.assert_allclose(got["llt"], [[2., 0.], [-1., 3.]])
        np.testing.assert_allclose(got["square"], [[4.1231055, 0.], [1.6977494, 2.667892]],
                                   rtol=1e-5)
        np.testing.assert_allclose(got["kron"], [[2., 0., 0., 0.], [0.5, 1.6583124, 0., 0.],
                                                 [0., 0., 4., 0.], [0., 0., 1., 3.3166249]],
                                   rtol=1e-5)
        np.testing.assert_allclose(got["kron_eig"], [2.3819664, 4.6180344, 9.527865,
                                                     18.472137], rtol=1e-5)
        np.testing.assert_allclose(got["blt_eig"], [2., 3., 5.])
        sess.run([kron.assert_non_singular(),
                  LA.LinearOperatorLowRankUpdate(LA.LinearOperatorDiag([1., 2.]),
                                                 [[1.], [2.]]).assert_self_adjoint(),
                  LA.LinearOperatorTridiag([[1., 2., 0.], [4., 4., 4.],
                                            [0., 1., 2.]]).assert_self_adjoint()])


@pytest.mark.parametrize("make, message", [
    (lambda: LA.LinearOperatorTridiag(tf.placeholder_with_default(
        [[1., 3., 0.], [4., 4., 4.], [0., 1., 2.]], [3, 3])).assert_self_adjoint(),
     "This tridiagonal operator has non-conjugate subdiagonal and superdiagonal."),
    (lambda: LA.LinearOperatorTridiag([[4., 1., 0.], [1., 4., 3.], [0., 2., 4.]],
                                      diagonals_format="matrix").assert_self_adjoint(),
     "Matrix was not equal to its adjoint."),
    (lambda: LA.LinearOperatorToeplitz(tf.placeholder_with_default([1., 2.], [2]),
                                       [1., 3.]).assert_self_adjoint(),
     "row and col are not the same, and so this operator is not self-adjoint."),
    (lambda: LA.LinearOperatorCirculant(tf.constant([3., -2., -2.], tf.complex64))
     .assert_positive_definite(),
     "Not positive definite:  Real part of spectrum was not all positive."),
])
def test_structured_asserts_fail(make, message):
    with tf.Graph().as_default(), tf.Session() as sess:
        with pytest.raises(errors.InvalidArgumentError, match=message):
            sess.run(make())


def test_assert_non_singular_with_unknown_dimensions():
    with tf.Graph().as_default(), tf.Session() as sess:
        p = tf.placeholder(tf.float32, [None, None])
        check = LA.LinearOperatorFullMatrix(p).assert_non_singular()
        sess.run(check, {p: np.eye(3)})
        with pytest.raises(errors.InvalidArgumentError, match="Singular matrix up to"):
            sess.run(check, {p: np.ones((3, 3))})
