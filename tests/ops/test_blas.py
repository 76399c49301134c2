"""The Cython BLAS wrapper (flowgraph/backends/cpu/_blas.pyx) behind the MatMul kernel."""

from __future__ import annotations

import threading

import numpy as np
import pytest

_blas = pytest.importorskip("flowgraph.backends.cpu._blas")
gemm, gemm_into = _blas.gemm, _blas.gemm_into

RNG = np.random.default_rng(3)
DTYPES = [np.float32, np.float64]
TOL = {np.float32: 1e-5, np.float64: 1e-12}


def _mat(shape, dtype):
    return RNG.standard_normal(shape).astype(dtype)


def _ref(a, b, ta, tb):
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    return (a64.T if ta else a64) @ (b64.T if tb else b64)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("ta", "tb"), [(False, False), (True, False), (False, True),
                                        (True, True)])
@pytest.mark.parametrize(("m", "k", "n"), [(2, 3, 4), (7, 1, 5), (1, 6, 1), (33, 17, 9)])
def test_gemm_matches_numpy(dtype, ta, tb, m, k, n):
    a = _mat((k, m) if ta else (m, k), dtype)
    b = _mat((n, k) if tb else (k, n), dtype)
    out = gemm(a, b, ta, tb)
    assert out.dtype == dtype and out.shape == (m, n) and out.flags.c_contiguous
    np.testing.assert_allclose(out, _ref(a, b, ta, tb), rtol=TOL[dtype], atol=TOL[dtype] * k)


@pytest.mark.parametrize("dtype", DTYPES)
def test_gemm_non_contiguous_inputs(dtype):
    base_a, base_b = _mat((8, 10), dtype), _mat((12, 9), dtype)
    cases = [
        (base_a[::2, 1:7], base_b[:6, ::2]),            # strided views
        (np.asfortranarray(base_a[:4, :6]), base_b[:6, :5]),  # Fortran order
        (base_a[::-1, :6], np.asfortranarray(base_b[:6, :3])),  # negative strides
        (base_a[:5, :6].T.copy().T, base_b[:6, :7]),   # F-ordered copy via transposes
    ]
    for a, b in cases:
        for ta, tb in ((False, False), (True, True)):
            a_, b_ = (a.T, b.T) if (ta and tb) else (a, b)
            before = (a_.copy(), b_.copy())
            out = gemm(a_, b_, ta, tb)
            np.testing.assert_allclose(out, _ref(a_, b_, ta, tb), rtol=TOL[dtype],
                                       atol=TOL[dtype] * 10)
            np.testing.assert_array_equal(a_, before[0])  # inputs untouched
            np.testing.assert_array_equal(b_, before[1])


def test_gemm_accepts_read_only_and_byte_swapped_inputs():
    a = _mat((3, 4), np.float64)
    a.setflags(write=False)
    b = _mat((4, 2), np.float64).astype(">f8")
    np.testing.assert_allclose(gemm(a, b), _ref(a, b, False, False), rtol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
def test_gemm_empty_dimensions(dtype):
    assert gemm(np.ones((0, 3), dtype), np.ones((3, 4), dtype)).shape == (0, 4)
    assert gemm(np.ones((2, 3), dtype), np.ones((3, 0), dtype)).shape == (2, 0)
    z = gemm(np.ones((2, 0), dtype), np.ones((0, 4), dtype))
    assert z.shape == (2, 4) and not z.any()


def test_gemm_errors():
    f32 = np.ones((2, 3), np.float32)
    with pytest.raises(ValueError, match="Matrix size-incompatible"):
        gemm(f32, np.ones((4, 5), np.float32))
    with pytest.raises(ValueError, match="rank 2"):
        gemm(np.ones(3, np.float32), f32)
    with pytest.raises(TypeError, match="one dtype"):
        gemm(f32, np.ones((3, 2), np.float64))
    with pytest.raises(TypeError, match="float32 or float64"):
        gemm(np.ones((2, 3), np.int32), np.ones((3, 2), np.int32))


@pytest.mark.parametrize("dtype", DTYPES)
def test_gemm_into(dtype):
    a, b = _mat((3, 5), dtype), _mat((4, 5), dtype)
    out = _mat((3, 4), dtype)
    start = out.copy()
    res = gemm_into(a, b, out, False, True, alpha=2.0, beta=0.5)
    assert res is out
    np.testing.assert_allclose(out, 2.0 * _ref(a, b, False, True) + 0.5 * start,
                               rtol=TOL[dtype] * 10, atol=TOL[dtype] * 10)
    gemm_into(a, b, out, transpose_b=True)
    np.testing.assert_allclose(out, _ref(a, b, False, True), rtol=TOL[dtype] * 10,
                               atol=TOL[dtype] * 10)
    z = np.full((3, 4), 7.0, dtype)
    gemm_into(np.ones((3, 0), dtype), np.ones((0, 4), dtype), z, beta=0.5)
    assert (z == 3.5).all()


def test_gemm_into_rejects_bad_outputs():
    a, b = np.ones((2, 3)), np.ones((3, 4))
    with pytest.raises(ValueError, match="shape"):
        gemm_into(a, b, np.empty((4, 2)))
    with pytest.raises(ValueError, match="float64"):
        gemm_into(a, b, np.empty((2, 4), np.float32))
    with pytest.raises(ValueError, match="C-contiguous"):
        gemm_into(a, b, np.empty((4, 2)).T)
    frozen = np.empty((2, 4))
    frozen.setflags(write=False)
    with pytest.raises(ValueError, match="writeable"):
        gemm_into(a, b, frozen)
    square = np.ones((3, 3))
    with pytest.raises(ValueError, match="share memory"):
        gemm_into(square, np.ones((3, 3)), square)


def test_gemm_runs_concurrently_in_threads():
    """Two threads run large products at once (the GIL is released inside BLAS); both
    finish with correct results."""
    a, b = _mat((400, 300), np.float64), _mat((300, 500), np.float64)
    want = a @ b
    results, errors = {}, []
    start = threading.Barrier(3)

    def work(i):
        try:
            start.wait()
            for _ in range(3):
                results[i] = gemm(a, b)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    start.wait()
    ticks = 0
    while any(t.is_alive() for t in threads):
        ticks += 1  # the main thread keeps running Python meanwhile
        threads[0].join(0.001)
    for t in threads:
        t.join()
    assert not errors
    for i in range(2):
        np.testing.assert_allclose(results[i], want, rtol=1e-12)
    assert ticks > 0
