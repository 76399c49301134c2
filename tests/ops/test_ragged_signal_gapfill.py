"""tf.ragged (boolean_mask, cross, cross_hashed, placeholder, range, stack,
stack_dynamic_partitions) and tf.signal / tf.spectral (fftnd, ifftnd, rfftnd, irfftnd,
rfft3d, irfft3d, Kaiser / KBD / Vorbis windows, mdct, inverse_mdct,
inverse_stft_window_fn) added in session 16. Expected values were recorded from
TensorFlow 2.15 (tf.compat.v1) with the tf-oracle, or computed with NumPy/SciPy where
TensorFlow's CPU build has no kernel (the N-dimensional FFTs)."""

from __future__ import annotations

import doctest

import numpy as np
import pytest
from scipy import signal as sp_signal

import flowgraph as tf
from flowgraph.math import signal_fft_nd, signal_mdct
from flowgraph.ops import ragged_array_ops, spectral_3d_ops


@pytest.mark.parametrize("module", [signal_fft_nd, signal_mdct, ragged_array_ops,
                                    spectral_3d_ops])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0


@pytest.fixture(autouse=True)
def _graph():
    with tf.Graph().as_default():
        yield


def _run(x, feed=None):
    with tf.Session() as sess:
        return sess.run(x, feed)


def _lists(rt, feed=None):
    return _run(rt, feed).to_list()


# -- tf.ragged ----------------------------------------------------------------------------------
def test_ragged_boolean_mask():
    rt = tf.ragged.constant([[1, 2, 3], [4], [5, 6]])
    m = tf.ragged.constant([[True, False, True], [False], [True, True]])
    assert _lists(tf.ragged.boolean_mask(rt, m)) == [[1, 3], [], [5, 6]]
    rows = tf.ragged.boolean_mask(rt, [True, False, True])
    assert _lists(rows) == [[1, 2, 3], [5, 6]]
    assert rows.shape.as_list() == [None, None] and rows.ragged_rank == 1
    dense = tf.ragged.boolean_mask(tf.constant([[1, 2], [3, 4]]),
                                   tf.constant([[True, False], [True, True]]))
    assert _lists(dense) == [[1], [3, 4]]
    nested = tf.ragged.constant([[[1], [2, 3]], [[4]], []])
    assert _lists(tf.ragged.boolean_mask(nested, [True, False, True])) == [[[1], [2, 3]], []]


def test_ragged_range():
    r = tf.ragged.range([3, 0, 2])
    assert _lists(r) == [[0, 1, 2], [], [0, 1]]
    assert r.shape.as_list() == [3, None]
    assert (r.dtype, r.row_splits.dtype, r.values.op.type) == (tf.int32, tf.int64,
                                                               "RaggedRange")
    assert _lists(tf.ragged.range([1, 2], [4, 6], 2)) == [[1, 3], [2, 4]]
    assert _lists(tf.ragged.range(3, dtype=tf.int64)) == [[0, 1, 2]]
    assert _lists(tf.ragged.range([0.5], 2.0, 0.5)) == [[0.5, 1.0, 1.5]]
    assert _lists(tf.ragged.range([5], [1], [-2])) == [[5, 3]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Requires delta != 0"):
        _run(tf.ragged.range([1], [2], [0]))
    x = tf.constant([3.0])
    assert tf.gradients(tf.ragged.range(x).values, x) == [None]  # as TensorFlow


def test_ragged_stack():
    rt = tf.ragged.constant([[1, 2, 3], [4], [5, 6]])
    st = tf.ragged.stack([rt, tf.ragged.constant([[7]])], axis=0)
    assert _lists(st) == [[[1, 2, 3], [4], [5, 6]], [[7]]]
    assert st.ragged_rank == 2
    assert _lists(tf.ragged.stack([rt, tf.ragged.constant([[7], [8, 9], []])], axis=1)) == [
        [[1, 2, 3], [7]], [[4], [8, 9]], [[5, 6], []]]
    assert _lists(tf.ragged.stack([tf.constant([1, 2]), tf.constant([3, 4])])) == [
        [1, 2], [3, 4]]
    mixed = tf.ragged.stack([rt, tf.constant([[0, 0], [1, 1], [2, 2]])], axis=1)
    assert _lists(mixed) == [[[1, 2, 3], [0, 0]], [[4], [1, 1]], [[5, 6], [2, 2]]]


def test_ragged_stack_dynamic_partitions():
    data, parts = tf.constant([1, 2, 3, 4, 5]), tf.constant([2, 0, 2, 1, 0])
    assert _lists(tf.ragged.stack_dynamic_partitions(data, parts, 3)) == [[2, 5], [4], [1, 3]]
    four = tf.ragged.stack_dynamic_partitions(data, parts, 4)
    assert _lists(four) == [[2, 5], [4], [1, 3], []]
    with pytest.raises(tf.errors.InvalidArgumentError):
        _run(tf.ragged.stack_dynamic_partitions(data, parts, 2))


def test_ragged_cross_and_cross_hashed():
    a = tf.ragged.constant([["a"], ["b", "c"]])
    d = tf.ragged.constant([["d"], ["e"]])
    assert _lists(tf.ragged.cross([a, d, tf.constant([["f"], ["g"]])])) == [
        [b"a_X_d_X_f"], [b"b_X_e_X_g", b"c_X_e_X_g"]]
    assert _lists(tf.ragged.cross([tf.ragged.constant([[1, 2], [3]]),
                                   tf.constant([["x"], ["y"]])])) == [
        [b"1_X_x", b"2_X_x"], [b"3_X_y"]]
    # TensorFlow's fingerprints
    assert _lists(tf.ragged.cross_hashed([a, d], num_buckets=100)) == [[82], [61, 41]]
    assert _lists(tf.ragged.cross_hashed([a, d])) == [
        [1584069791037555375], [4171697120956746554, 1746051686049959641]]
    assert _lists(tf.ragged.cross_hashed([a, d], num_buckets=10, hash_key=123)) == [
        [4], [6, 7]]
    with pytest.raises(ValueError, match="rank 2"):
        tf.ragged.cross([tf.constant([1, 2])])


def test_ragged_placeholder_feeds_a_ragged_value():
    p = tf.ragged.placeholder(tf.float32, 1, [3])
    assert p.shape.as_list() == [None, None, 3] and p.ragged_rank == 1
    assert (p.flat_values.name, p.row_splits.name) == ("RaggedPlaceholder/flat_values:0",
                                                       "RaggedPlaceholder/row_splits_0:0")
    value = tf.ragged.constant_value([[[1, 2, 3.0]], [[4, 5, 6.0]], []], ragged_rank=1)
    assert _run(p.row_lengths(), {p: value}).tolist() == [1, 1, 0]
    p2 = tf.ragged.placeholder(tf.int32, 2)
    assert p2.ragged_rank == 2
    v2 = tf.ragged.constant_value([[[1], [2, 3]], []])
    assert _lists(p2, {p2: v2}) == [[[1], [2, 3]], []]
    with pytest.raises(ValueError, match="ragged_rank"):
        tf.ragged.placeholder(tf.int32, 0)


# -- tf.signal ------------------------------------------------------------------------------
_X = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 7
_XC = (_X + 1j * _X[::-1]).astype(np.complex64)


@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_nd_ffts_match_numpy(norm):
    np_norm = norm or "backward"
    got = _run([tf.signal.fftnd(_XC, norm=norm),
                tf.signal.fftnd(_XC, fft_length=[2, 4], axes=[1, 2], norm=norm),
                tf.signal.ifftnd(_XC, axes=[0, 2], norm=norm),
                tf.signal.rfftnd(_X, fft_length=[3, 4], axes=[-2, -1], norm=norm),
                tf.signal.irfftnd(np.fft.rfftn(_X, axes=(-2, -1)).astype(np.complex64),
                                  fft_length=[3, 4], axes=[-2, -1], norm=norm)])
    want = [np.fft.fftn(_XC, norm=np_norm),
            np.fft.fftn(_XC, s=[2, 4], axes=[1, 2], norm=np_norm),
            np.fft.ifftn(_XC, axes=[0, 2], norm=np_norm),
            np.fft.rfftn(_X, s=[3, 4], axes=[-2, -1], norm=np_norm),
            np.fft.irfftn(np.fft.rfftn(_X, axes=(-2, -1)), s=[3, 4], axes=[-2, -1],
                          norm=np_norm)]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)
    assert tf.signal.fftnd(_XC).op.type in ("FFTND", "Mul")


def test_rfft3d_irfft3d():
    r3 = tf.signal.rfft3d(_X)
    assert r3.shape.as_list() == [2, 3, 3] and r3.dtype == tf.complex64
    assert r3.op.type == "RFFT3D" and tf.spectral.rfft3d is tf.signal.rfft3d
    assert tf.spectral.irfft3d is tf.signal.irfft3d
    got = _run(r3)
    np.testing.assert_allclose(got, np.fft.rfftn(_X), rtol=1e-4, atol=1e-4)
    # TensorFlow: [-6.857+3.959j, 0, 0] for got[0, 1]
    np.testing.assert_allclose(got[0, 1], [-6.857 + 3.959j, 0, 0], atol=1e-3)
    assert _run(tf.signal.rfft3d(_X, fft_length=[2, 2, 6])).shape == (2, 2, 4)
    i3 = tf.signal.irfft3d(r3)
    assert i3.shape.as_list() == [2, 3, 4] and i3.op.type == "IRFFT3D"
    np.testing.assert_allclose(_run(i3), _X, atol=1e-5)
    np.testing.assert_allclose(_run(tf.signal.irfft3d(r3, fft_length=[2, 3, 5]))[0, 0],
                               [-0.057, 0.12, 0.161, 0.296, 0.337], atol=1e-3)
    x = tf.constant(_X)
    with pytest.raises(LookupError, match="RFFT3D"):  # as TensorFlow: no gradient
        tf.gradients(tf.reduce_sum(tf.abs(tf.signal.rfft3d(x))), x)


def test_windows_match_tensorflow_and_scipy():
    got = _run([tf.signal.kaiser_window(6), tf.signal.kaiser_window(5, 3.0, tf.float64),
                tf.signal.kaiser_bessel_derived_window(6),
                tf.signal.kaiser_bessel_derived_window(7, beta=2.0),
                tf.signal.vorbis_window(6), tf.signal.vorbis_window(5),
                tf.signal.kaiser_window(1), tf.signal.vorbis_window(0)])
    np.testing.assert_allclose(got[0], np.kaiser(6, 12.0), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(got[1], [0.204885, 0.726926, 1.0, 0.726926, 0.204885],
                               atol=1e-6)
    np.testing.assert_allclose(got[2], sp_signal.windows.kaiser_bessel_derived(6, 12.0),
                               atol=1e-5)
    np.testing.assert_allclose(got[3], [0.40115, 0.70711, 0.91601, 0.91601, 0.70711,
                                        0.40115], atol=1e-5)  # TF: 6 points for 7
    np.testing.assert_allclose(got[4], [0.10503, 0.70711, 0.99447, 0.99447, 0.70711,
                                        0.10503], atol=1e-5)
    np.testing.assert_allclose(got[5], [0.14944, 0.85632, 1.0, 0.85632, 0.14944], atol=1e-5)
    assert got[6].tolist() == [1.0] and got[7].shape == (0,)
    assert tf.signal.kaiser_window(6).op.type == "Mul"
    assert tf.signal.vorbis_window(6).op.type == "Sin"


_SIG = np.sin(np.arange(32, dtype=np.float32) / 3)


def test_mdct_and_inverse():
    m = tf.signal.mdct(_SIG, 8)
    assert m.shape.as_list() == [7, 4] and m.dtype == tf.float32
    got = _run([m, tf.signal.mdct(_SIG, 8, norm="ortho"), tf.signal.inverse_mdct(m),
                tf.signal.inverse_mdct(tf.signal.mdct(_SIG, 8, norm="ortho"), norm="ortho")])
    np.testing.assert_allclose(got[0][1], [-1.6503, 1.7868, -0.0288, 0.0242], atol=1e-4)
    np.testing.assert_allclose(got[1][1], [-0.5835, 0.6317, -0.0102, 0.0085], atol=1e-4)
    np.testing.assert_allclose(got[2][:12], [-0.0502, -0.1839, 0.3491, 0.8385, 0.9719,
                                             0.9954, 0.9093, 0.7231, 0.4573, 0.1411,
                                             -0.1906, -0.5013], atol=1e-4)
    np.testing.assert_allclose(got[3][4:28], _SIG[4:28], atol=1e-5)  # exact reconstruction
    assert _run(tf.signal.mdct(_SIG, 8, pad_end=True)).shape == (8, 4)
    assert tf.signal.mdct(_SIG[None, :], 8, window_fn=None).shape.as_list() == [1, 7, 4]
    with pytest.raises(ValueError, match=r"The frame length must be a multiple of 4\."):
        tf.signal.mdct(_SIG, 7)


def test_mdct_gradient_matches_tensorflow_and_finite_differences():
    x = tf.constant(_SIG)
    y = tf.reduce_sum(tf.signal.mdct(x, 8) ** 2)
    g = _run(tf.gradients(y, x)[0])  # dense, as TensorFlow
    np.testing.assert_allclose(g[:6], [-0.803, -2.943, 5.586, 13.415, 15.551, 15.927],
                               atol=2e-3)
    xd = tf.constant(_SIG.astype(np.float64))
    yd = tf.reduce_sum(tf.signal.mdct(xd, 8) ** 2)
    gd = _run(tf.convert_to_tensor(tf.gradients(yd, xd)[0]))
    direction = np.random.RandomState(0).randn(32)
    eps = 1e-6
    plus = _run(tf.reduce_sum(tf.signal.mdct(tf.constant(_SIG + eps * direction), 8) ** 2))
    minus = _run(tf.reduce_sum(tf.signal.mdct(tf.constant(_SIG - eps * direction), 8) ** 2))
    assert abs((plus - minus) / (2 * eps) - gd @ direction) < 1e-4


def test_inverse_stft_window_fn():
    fn = tf.signal.inverse_stft_window_fn(4)
    np.testing.assert_allclose(_run(fn(16, tf.float32)), [
        0.0, 0.02537, 0.09763, 0.20577, 0.33333, 0.46089, 0.56904, 0.64129, 0.66667,
        0.64129, 0.56904, 0.46089, 0.33333, 0.20577, 0.09763, 0.02537], atol=1e-5)
    ham = tf.signal.inverse_stft_window_fn(3, forward_window_fn=tf.signal.hamming_window)
    np.testing.assert_allclose(_run(ham(8, tf.float32)), [
        0.07643, 0.1966, 0.51909, 0.82667, 0.91557, 0.83176, 0.51591, 0.1966], atol=1e-5)
    st = tf.signal.stft(_SIG, 16, 4)
    rec = tf.signal.inverse_stft(st, 16, 4, window_fn=tf.signal.inverse_stft_window_fn(4))
    np.testing.assert_allclose(_run(rec)[12:20], [-0.7568, -0.929, -0.999, -0.9589,
                                                  -0.8133, -0.5782, -0.2794, 0.0501],
                               atol=1e-4)
