"""The eigenvectors of TensorFlow's ``SelfAdjointEigV2`` kernel, signs included.

TensorFlow computes a symmetric matrix's eigenvectors with Eigen's
``SelfAdjointEigenSolver``; LAPACK (NumPy's ``eigh``) finds the same vectors up to a sign
per column (and another basis of a repeated eigenvalue's space), and programs that
project data on them (PCA) then print other numbers. This module replays Eigen's
algorithm in float64; the kernel keeps LAPACK's eigenvalues and returns the replayed
vectors.

Eigen's algorithm, as replayed here: take the lower triangle, scale it into [-1, 1] by
its largest magnitude; reduce it to tridiagonal form by Householder reflections (Q their
product); run implicit symmetric QR steps with Wilkinson shifts on the tridiagonal,
applying each Givens rotation to Q on the right and deflating subdiagonal entries below
epsilon times their diagonal neighbours; finally a selection sort of the eigenvalues,
ascending, swapping Q's columns along.

The replay costs O(n^2) Python-level steps (50 ms at 64x64), so `match_eigen_signs`
replays matrices up to `MAX_N` and batches up to ``MAX_N ** 3`` elements; beyond,
LAPACK's vectors are kept. Deflation uses the input dtype's epsilon (a float32 matrix
stops iterating where Eigen's float32 solver stops); the arithmetic itself is float64,
so a float32 matrix whose path hinges on rounding may still differ.
"""

from __future__ import annotations

import numpy as np

__all__ = ["MAX_N", "eigen_eigenvectors", "match_eigen_signs"]

MAX_N = 64
_TINY = np.finfo(np.float64).tiny


def _tridiagonalize(mat):
    """(diag, subdiag, Q) of the scaled lower-triangular `mat`, as Eigen builds them for
    a dynamic-size matrix (its closed form for 3x3 is for fixed sizes only)."""
    n = mat.shape[0]
    a = mat + np.tril(mat, -1).T  # the symmetric matrix of the lower triangle
    sub = np.empty(n - 1)
    reflections = []
    for i in range(n - 1):
        x = a[i + 1:, i]
        c0, tail = x[0], x[1:]
        tail_sq = float(tail @ tail)
        if tail_sq <= _TINY:
            h, beta, essential = 0.0, c0, np.zeros_like(tail)
        else:
            beta = np.sqrt(c0 * c0 + tail_sq)
            if c0 >= 0:
                beta = -beta
            essential = tail / (c0 - beta)
            h = (beta - c0) / beta
        v = np.concatenate([[1.0], essential])
        block = a[i + 1:, i + 1:]
        p = h * (block @ v)
        p += (h * -0.5 * float(p @ v)) * v
        block -= np.outer(v, p) + np.outer(p, v)
        sub[i] = beta
        reflections.append((i, h, v))
    q = np.eye(n)
    for i, h, v in reversed(reflections):  # Q = H_0 H_1 ... H_{n-2}
        rows = q[i + 1:, :]
        rows -= h * np.outer(v, v @ rows)
    return np.diagonal(a).copy(), sub, q


def _givens(p, z):
    """Eigen's ``JacobiRotation::makeGivens(p, q)`` (real): (c, s)."""
    if z == 0:
        return (-1.0 if p < 0 else 1.0), 0.0
    if p == 0:
        return 0.0, (1.0 if z < 0 else -1.0)
    if abs(p) > abs(z):
        t = z / p
        u = np.sqrt(1.0 + t * t)
        if p < 0:
            u = -u
        c = 1.0 / u
        return c, -t * c
    t = p / z
    u = np.sqrt(1.0 + t * t)
    if z < 0:
        u = -u
    s = -1.0 / u
    return -t * s, s


def _qr_step(diag, sub, start, end, q):
    td = (diag[end - 1] - diag[end]) * 0.5
    e = sub[end - 1]
    mu = diag[end]
    if td == 0:
        mu -= abs(e)
    elif e != 0:
        h = np.hypot(td, e)
        e2 = e * e
        if e2 == 0:
            mu -= e / ((td + (h if td > 0 else -h)) / e)
        else:
            mu -= e2 / (td + (h if td > 0 else -h))
    x = diag[start] - mu
    z = sub[start]
    k = start
    while k < end and z != 0:
        c, s = _givens(x, z)
        sdk = s * diag[k] + c * sub[k]
        dkp1 = s * sub[k] + c * diag[k + 1]
        diag[k] = c * (c * diag[k] - s * sub[k]) - s * (c * sub[k] - s * diag[k + 1])
        diag[k + 1] = s * sdk + c * dkp1
        sub[k] = c * sdk - s * dkp1
        if k > start:
            sub[k - 1] = c * sub[k - 1] - s * z
        x = sub[k]
        if k < end - 1:
            z = -s * sub[k + 1]
            sub[k + 1] = c * sub[k + 1]
        # Q = Q G: columns k and k+1 rotate by the transposed rotation
        qk, qk1 = q[:, k].copy(), q[:, k + 1].copy()
        q[:, k] = c * qk - s * qk1
        q[:, k + 1] = s * qk + c * qk1
        k += 1


def eigen_eigenvectors(matrix) -> np.ndarray | None:
    """The eigenvectors Eigen's solver returns for the lower triangle of a real
    symmetric `matrix`, or None if its QR iterations did not converge. The arithmetic is
    float64; deflation uses the epsilon of `matrix`'s dtype, as Eigen does in it (float32
    stops iterating sooner, which can leave other signs)."""
    eps = np.finfo(matrix.dtype if matrix.dtype.kind == "f" else np.float64).eps
    n = matrix.shape[0]
    if n == 1:
        return np.ones((1, 1))
    mat = np.tril(np.asarray(matrix, np.float64))
    scale = np.abs(mat).max()
    mat = mat / (scale if scale != 0 else 1.0)
    diag, sub, q = _tridiagonalize(mat)
    end, iters = n - 1, 0
    while end > 0:
        for i in range(end):
            if abs(sub[i]) < _TINY:
                sub[i] = 0.0
            else:
                scaled = sub[i] / eps
                if scaled * scaled <= abs(diag[i]) + abs(diag[i + 1]):
                    sub[i] = 0.0
        while end > 0 and sub[end - 1] == 0:
            end -= 1
        if end <= 0:
            break
        iters += 1
        if iters > 30 * n:
            return None
        start = end - 1
        while start > 0 and sub[start - 1] != 0:
            start -= 1
        _qr_step(diag, sub, start, end, q)
    for i in range(n - 1):  # Eigen's selection sort, ascending
        k = int(np.argmin(diag[i:]))
        if k > 0:
            diag[[i, i + k]] = diag[[i + k, i]]
            q[:, [i, i + k]] = q[:, [i + k, i]]
    return q


def match_eigen_signs(x: np.ndarray, v: np.ndarray) -> np.ndarray:
    """LAPACK's eigenvectors `v` of the real symmetric (batch of) `x`, each column's sign
    replaced by Eigen's own; `v` as is for matrices over `MAX_N`, batches of more than
    ``MAX_N ** 3`` elements, complex or non-finite input."""
    n = x.shape[-1]
    if (n > MAX_N or n == 0 or x.size > MAX_N ** 3 or np.iscomplexobj(x)
            or not np.all(np.isfinite(x))):
        return v
    out = np.array(v, copy=True)
    flat_x = x.reshape(-1, n, n)
    flat_v = out.reshape(-1, n, n)
    for b in range(flat_x.shape[0]):
        ref = eigen_eigenvectors(flat_x[b])
        if ref is None:
            continue
        # Eigen's own vectors: the signs, and within a repeated eigenvalue's space the
        # same basis as TensorFlow's
        flat_v[b] = ref
    return out
