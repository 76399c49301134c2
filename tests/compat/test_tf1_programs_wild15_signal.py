"""TF1 complex-number and signal-processing programs, sweep 15 (area ``signal``), run
under TensorFlow 2.15 (``tf.compat.v1``) and flowgraph with the tf-oracle; every value
below is what TensorFlow printed for the same program.

The programs (2016-2019 style): complex tensors in a physics script (``tf.complex`` /
``real`` / ``imag`` / ``conj`` / ``angle`` / ``abs``, complex64 vs complex128, casts,
complex matmul, the dtype errors); the FFT family (``fft``/``ifft``/``fft2d``/``fft3d``,
``rfft``/``irfft``/``rfft2d``/``irfft2d``/``rfft3d`` with and without ``fft_length``,
static shapes, ``fftshift``, ``roll``); a speech front end (``stft``, mel matrix, log-mel,
MFCCs, ``inverse_stft`` with ``inverse_stft_window_fn``, ``frame`` with ``pad_end`` /
``pad_value`` / ``axis``, ``overlap_and_add``, windows, every DCT type); ``frame``
edge cases with a small training loop through it; gradients through complex ops and
FFTs (values agree with TensorFlow's); a learned Wiener filter in the rfft domain trained
by Adam with summaries, ``py_func`` on complex values, ``tf.Print`` and a checkpoint;
STFT variants (float64, ``window_fn=None``, ``pad_end``, ``fft_length`` shorter than the
frame); a complex-valued network (complex variables, modReLU, complex linear algebra).

Left as is: the gradient of ``tf.angle`` at 0 (TensorFlow -inf, flowgraph nan); gradient
op names inside the ``rfft`` gradients (TensorFlow ends in ``mul_4``, flowgraph in
``Slice_1``; the values agree); ``frame`` with a
``frame_length`` of 0 (TensorFlow returns empty frames, flowgraph raises a ValueError); the
gist of some op-level TypeErrors (the same types).

Classes of discrepancy found and fixed (one focused test each below):

* ``rfft``-family wrappers with an ``fft_length`` or inner dimensions unknown until run
  time kept static dimensions and did not pad: TensorFlow pads with a ``Pad`` computed
  at run time (so the result has no static dimensions), and a shorter input then runs.
* ``rfft``/``irfft`` of the wrong dtype raised TypeError; TensorFlow raises ValueError.
* ``dct``/``idct``: ``n`` (crop or zero-pad) was refused; ``idct`` opened an ``idct``
  scope (TensorFlow's ops are in ``dct``); the twiddles were constants, so the result was
  ``dct/mul_1`` rather than ``dct/mul_6``; an unknown inner dimension was refused; the
  argument errors had other messages and order.
* ``frame`` gathered samples directly (``frame/GatherV2``); TensorFlow cuts the axis into
  gcd-sized subframes and returns ``frame/Reshape_3`` (``Reshape_4`` when the shape is
  not fully known); an unknown rank was refused; an axis out of range is an IndexError.
* ``overlap_and_add`` of a fully known shape built shape ops (``strided_slice_4``);
  TensorFlow uses the static shape (``strided_slice_1``).
* ``linear_to_mel_weight_matrix`` argument errors: TensorFlow's checks, order and gist.
* ``mfccs_from_log_mel_spectrograms`` used a dynamic bin count for a known one.
* ``tf.Print`` / ``tf.print`` / ``Assert`` printed complex values; TensorFlow prints a
  flat run of ``?``.
* Initializers called with a complex or integer dtype raised ValueError; TensorFlow's
  random ops raise TypeError (a uniform draw of a complex type stays a ValueError), and
  ``identity`` initializes complex variables.
* ``stft`` / ``inverse_stft`` with ``window_fn=None`` applied the Hann window; in
  TensorFlow None means no window (Hann is the default argument).
* The ``ComplexAbs`` gradient was ``Cast * Sign`` (``Abs_grad/mul``); TensorFlow builds
  ``div_no_nan(complex(grad, 0) * x, complex(|x|, 0))`` (``Abs_grad/div_no_nan``).
* ``tf.linalg.adjoint`` was ``adjoint/transpose`` (TensorFlow:
  ``adjoint/matrix_transpose/transpose``).
* ``tf.spectral`` held all of ``tf.signal``; TF 1.x's holds only the 14 transforms.
  ``tf.audio`` listed its module's helpers (``TensorShape``, ``make_op``, ...); TensorFlow's
  holds ``decode_wav`` and ``encode_wav``.
"""

from __future__ import annotations

import functools
import sys

import numpy as np
import pytest

import flowgraph as tf


def _r(x, d=4):
    return np.round(np.asarray(x), d).tolist()


def _err(fn):
    try:
        fn()
    except Exception as e:  # the type is what the tests compare
        return type(e).__name__, str(e)
    return None, None


# -- program 1: complex tensors --------------------------------------------------------------
def test_complex_tensors_names_dtypes_values():
    g = tf.Graph()
    with g.as_default():
        with tf.variable_scope("phys"):
            re = tf.placeholder(tf.float32, [None, 4], name="re")
            im = tf.placeholder(tf.float32, [None, 4], name="im")
            z = tf.complex(re, im)
            zd = tf.complex(tf.cast(re, tf.float64), tf.cast(im, tf.float64), name="zd")
            r, i, r2, i2 = tf.real(z), tf.imag(z), tf.math.real(z), tf.math.imag(zd)
            c, c2 = tf.conj(z), tf.math.conj(re)
            a, ab, ab2 = tf.angle(z), tf.abs(z), tf.math.abs(zd)
            ar = tf.angle(re)
            rr, ir = tf.real(re), tf.imag(re)
            w = tf.constant(np.arange(12, dtype=np.float32).reshape(4, 3) / 10.0)
            m = tf.matmul(z, tf.complex(w, tf.zeros_like(w)))
            ca, cb, cc = tf.cast(z, tf.float32), tf.cast(re, tf.complex64), \
                tf.cast(z, tf.complex128)
            s, mn = tf.reduce_sum(z, axis=1), tf.reduce_mean(z)
        assert (z.name, z.dtype, z.shape.as_list()) == ("phys/Complex:0", tf.complex64,
                                                        [None, 4])
        assert (zd.name, zd.dtype) == ("phys/zd:0", tf.complex128)
        assert [t.name for t in (r, i, r2, i2)] == ["phys/Real:0", "phys/Imag:0",
                                                     "phys/Real_1:0", "phys/Imag_1:0"]
        assert i2.dtype == tf.float64
        assert (c.name, c2.name, c2.dtype) == ("phys/Conj:0", "phys/re:0", tf.float32)
        assert (a.name, a.dtype, ab.name, ab.dtype, ab2.dtype) == (
            "phys/Angle:0", tf.float32, "phys/Abs:0", tf.float32, tf.float64)
        assert ab.op.type == "ComplexAbs"
        assert ar.name == "phys/Angle_1/Select:0"
        assert (rr.name, ir.name) == ("phys/re:0", "phys/Imag_2/zeros_like:0")
        assert (m.name, m.dtype, m.shape.as_list()) == ("phys/MatMul:0", tf.complex64,
                                                        [None, 3])
        assert [t.name for t in (ca, cb, cc)] == ["phys/Cast_2:0", "phys/Cast_3:0",
                                                  "phys/Cast_4:0"]
        assert (s.name, s.dtype, mn.name) == ("phys/Sum:0", tf.complex64, "phys/Mean:0")
        assert tf.constant([1 + 2j, 3j]).dtype == tf.complex128
        assert tf.complex(1.0, 2.0).dtype == tf.complex64
        fd = {re: np.array([[1., -2., 0.5, 3.], [0., 1., -1., 2.]], np.float32),
              im: np.array([[0., 1., -0.5, 2.], [1., 0., 1., -3.]], np.float32)}
        with tf.Session() as sess:
            out = sess.run([a, ab, c, ca, s, mn, ar, ir], fd)
    np.testing.assert_allclose(out[0], [[0.0, 2.6779, -0.7854, 0.588],
                                        [1.5708, 0.0, 2.3562, -0.9828]], atol=1e-4)
    np.testing.assert_allclose(out[1], [[1.0, 2.2361, 0.7071, 3.6056],
                                        [1.0, 1.0, 1.4142, 3.6056]], atol=1e-4)
    assert _r(out[2]) == [[1 - 0j, -2 - 1j, 0.5 + 0.5j, 3 - 2j], [-1j, 1 - 0j, -1 - 1j, 2 + 3j]]
    assert _r(out[3]) == [[1.0, -2.0, 0.5, 3.0], [0.0, 1.0, -1.0, 2.0]]
    assert _r(out[4]) == [2.5 + 2.5j, 2 - 1j]
    assert _r(out[5]) == 0.5625 + 0.1875j
    np.testing.assert_allclose(out[6], [[0, np.pi, 0, 0], [0, 0, np.pi, 0]], atol=1e-6)
    assert _r(out[7]) == [[0.0] * 4] * 2


def test_complex_dtype_errors():
    with tf.Graph().as_default():
        re = tf.placeholder(tf.float32, [None, 4])
        z = tf.complex(re, re)
        zd = tf.complex(tf.cast(re, tf.float64), tf.cast(re, tf.float64))
        w = tf.zeros([4, 3])
        # TensorFlow: TypeError for each (mixed or integer parts, mixed complex widths,
        # complex + real, complex @ real, ordered comparisons and relu of complex).
        for fn in (lambda: tf.complex(re, tf.cast(re, tf.float64)),
                   lambda: tf.complex(tf.constant([1]), tf.constant([2])),
                   lambda: z + zd, lambda: z + re, lambda: tf.matmul(z, w),
                   lambda: tf.greater(z, z), lambda: tf.maximum(z, z),
                   lambda: tf.nn.relu(z), lambda: tf.angle(tf.constant([1, 2])),
                   lambda: tf.reduce_max(zd), lambda: tf.argmax(zd, 1),
                   lambda: tf.nn.softmax(zd), lambda: zd % zd):
            assert _err(fn)[0] == "TypeError"
        assert tf.cast(z, tf.int32).dtype == tf.int32
        assert tf.sign(z).dtype == tf.complex64


# -- program 2: the FFT family -----------------------------------------------------------------
def test_fft_family_shapes_names_values():
    xv = np.random.RandomState(0).randn(2, 3, 8).astype(np.float32)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3, 8], name="x")
        xc = tf.cast(x, tf.complex64)
        with tf.name_scope("spec"):
            F, F2, F3 = tf.fft(xc), tf.fft2d(xc), tf.fft3d(xc)
            I3 = tf.spectral.ifft3d(F3)
            R = tf.spectral.rfft(x)
            R6 = tf.signal.rfft(x, fft_length=[6])
            R12 = tf.signal.rfft(x, fft_length=[12])
            IR = tf.spectral.irfft(R)
            IR10 = tf.signal.irfft(R, fft_length=[10])
            R2 = tf.signal.rfft2d(x)
            R2b = tf.signal.rfft2d(x, fft_length=[4, 6])
            IR2b = tf.signal.irfft2d(R2b, fft_length=[4, 6])
            R3 = tf.signal.rfft3d(x)
            Rdd = tf.signal.rfft(tf.cast(x, tf.float64))
            sh = tf.signal.fftshift(x)
        assert (F.name, F2.name, F3.name, I3.name) == (
            "spec/FFT:0", "spec/FFT2D:0", "spec/FFT3D:0", "spec/IFFT3D:0")
        shapes = {t.name: t.shape.as_list() for t in (R, R6, R12, IR, IR10, R2, R2b, IR2b, R3)}
        assert shapes == {
            "spec/rfft:0": [None, 3, 5], "spec/rfft_1:0": [None, 3, 4],
            "spec/rfft_2:0": [None, 3, 7], "spec/irfft:0": [None, 3, 8],
            "spec/irfft_1:0": [None, 3, 10], "spec/rfft2d:0": [None, 3, 5],
            "spec/rfft2d_1:0": [None, 4, 4], "spec/irfft2d:0": [None, 4, 6],
            "spec/rfft3d:0": [None, None, None]}
        assert (R.dtype, IR.dtype, Rdd.dtype) == (tf.complex64, tf.float32, tf.complex128)
        assert sh.name == "spec/fftshift:0"
        assert tf.signal.fft(xc, name="myfft").name == "myfft:0"
        assert tf.roll(x, shift=2, axis=2).name == "Roll:0"
        with tf.Session() as sess:
            out = sess.run([F, F2, F3, R, R6, R12, IR10, R2b, IR2b, sh,
                            tf.roll(x, shift=[2, -1], axis=[2, 1])], {x: xv})
    sums = [round(float(np.abs(o).sum()), 3) for o in out[:9]]
    np.testing.assert_allclose(sums, [137.526, 240.826, 357.053, 87.236, 64.714, 121.24,
                                      45.379, 144.603, 37.135], rtol=2e-5, atol=2e-3)
    np.testing.assert_allclose(out[0].ravel()[1], -0.8211 - 2.6942j, atol=1e-4)
    np.testing.assert_allclose(out[4].ravel()[:2], [6.2741, -2.1885 - 0.4232j], atol=1e-4)
    np.testing.assert_allclose(out[5].ravel()[1], 1.6935 - 4.493j, atol=1e-4)
    np.testing.assert_allclose(out[6].ravel()[:3], [1.816, 0.2978, 0.4208], atol=1e-4)
    np.testing.assert_allclose(out[9].ravel()[:2], [-0.5097, -0.4381], atol=1e-4)
    np.testing.assert_allclose(out[10][0, 0], [0.4439, 0.3337, -0.1032, 0.4106, 0.144,
                                               1.4543, 0.761, 0.1217], atol=1e-4)


def test_rfft_with_lengths_known_only_at_run_time_pads_dynamically():
    xv = np.arange(6, dtype=np.float32).reshape(2, 3)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3, 8])
        fl = tf.placeholder(tf.int32, [1])
        y = tf.signal.rfft(x, fft_length=fl)
        assert y.shape.as_list() == [None, None, None]  # TensorFlow: (?, ?, ?)
        assert tf.signal.rfft3d(x).shape.as_list() == [None, None, None]
        u = tf.placeholder(tf.float32, [None, None])
        longer = tf.signal.rfft(u, fft_length=[8])
        back = tf.signal.irfft(tf.signal.rfft(u), fft_length=fl)
        assert (longer.shape.as_list(), back.shape.as_list()) == ([None, 5], [None, None])
        with tf.Session() as sess:
            assert sess.run(y, {x: np.ones((2, 3, 8)), fl: [5]}).shape == (2, 3, 3)
            np.testing.assert_allclose(sess.run(y, {x: np.ones((1, 3, 8)), fl: [12]})[0, 0, :3],
                                       [8, -0.866 - 3.2321j, 1.5 - 0.866j], atol=1e-4)
            out = sess.run(longer, {u: xv})
            np.testing.assert_allclose(np.abs(out[0]), np.abs(np.fft.rfft(xv[0], 8)), atol=1e-5)
            out = sess.run(back, {u: xv, fl: [6]})
            np.testing.assert_allclose(out, np.fft.irfft(np.fft.rfft(xv), 6), atol=1e-5)


def test_rfft_family_dtype_errors_are_value_errors():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3, 8])
        kind, msg = _err(lambda: tf.signal.rfft(tf.cast(x, tf.complex64)))
        assert kind == "ValueError" and "RFFT requires tf.float32 or tf.float64" in msg
        assert _err(lambda: tf.signal.rfft(tf.constant([1, 2, 3])))[0] == "ValueError"
        kind, msg = _err(lambda: tf.signal.irfft(x))
        assert kind == "ValueError" and "IRFFT requires tf.complex64 or tf.complex128" in msg
        assert _err(lambda: tf.fft(x))[0] == "TypeError"
        assert _err(lambda: tf.fft2d(tf.constant([1 + 0j, 2], tf.complex64)))[0] == \
            "ValueError"
        assert _err(lambda: tf.signal.rfft(x, fft_length=[4, 4]))[0] == "ValueError"


# -- DCT ---------------------------------------------------------------------------------------
_XV = np.array([[1., 2., -1., 0.5, 3.], [0., 1., 4., -2., 1.]], np.float32)


def test_dct_n_argument_names_and_values():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 5], name="x")
        xd = tf.placeholder(tf.float64, [None, None], name="xd")
        outs = {}
        for t in (1, 2, 3, 4):
            for norm in ((None, "ortho") if t != 1 else (None,)):
                for n in (None, 3, 8):
                    outs[t, norm, n] = (tf.signal.dct(x, type=t, norm=norm, n=n),
                                        tf.signal.idct(x, type=t, norm=norm, n=n))
        names = {k: (a.name, b.name, a.shape.as_list()) for k, (a, b) in outs.items()}
        assert names[1, None, None] == ("dct/Real:0", "dct_1/Real:0", [None, 5])
        assert names[2, None, 3] == ("dct_8/Real:0", "dct_9/strided_slice_1:0", [None, 3])
        assert names[2, "ortho", None] == ("dct_12/mul_6:0", "dct_13/strided_slice:0",
                                           [None, 5])
        assert names[3, None, 8] == ("dct_22/strided_slice:0", "dct_23/Real:0", [None, 8])
        assert names[3, "ortho", 3] == ("dct_26/strided_slice_1:0", "dct_27/mul_6:0", [None, 3])
        assert names[4, None, 8] == ("dct_34/strided_slice:0", "dct_35/strided_slice:0",
                                     [None, 8])
        assert names[4, "ortho", 3] == ("dct_38/mul_1:0", "dct_39/mul_1:0", [None, 3])
        yd = tf.signal.dct(xd, norm="ortho")
        yd3 = tf.signal.idct(xd, n=3)
        yd4 = tf.signal.dct(xd, type=4, n=7)
        assert (yd.name, yd.shape.as_list(), yd.dtype) == ("dct_42/mul_7:0", [None, None],
                                                           tf.float64)
        assert yd4.name == "dct_44/strided_slice_2:0"
        m = tf.signal.mfccs_from_log_mel_spectrograms(x)
        md = tf.signal.mfccs_from_log_mel_spectrograms(xd)
        assert (m.name, md.name) == ("mfccs_from_log_mel_spectrograms/mul_1:0",
                                     "mfccs_from_log_mel_spectrograms_1/mul_1:0")
        keys = [(1, None, 3), (1, None, 8), (2, None, 8), (2, "ortho", 3), (4, None, 3)]
        with tf.Session() as sess:
            got = sess.run([outs[k] for k in keys], {x: _XV})
            dyn = sess.run([yd, yd3, yd4, m], {xd: _XV.astype(np.float64), x: _XV})
    assert _r(got[0][0]) == [[4.0, 2.0, -4.0], [6.0, -4.0, 2.0]]
    np.testing.assert_allclose(got[1][0][0], [10.0, 2.2443, -2.3678, 6.8095, 6.2763, -5.5538,
                                              -5.4085, 0.0], atol=1e-3)
    np.testing.assert_allclose(got[2][0][1], [8.0, 4.937, -0.4483, -4.903, -8.4853, -5.3897,
                                              6.3086, 11.4253], atol=1e-3)
    np.testing.assert_allclose(got[3][1], [[1.5833, 1.3938, -1.2451], [2.3401, -3.266, 0.9259]],
                               atol=1e-4)
    np.testing.assert_allclose(got[4][0], [[4.2426, 0.0, -4.2426], [3.4848, -7.0711, 6.3132]],
                               atol=1e-4)
    np.testing.assert_allclose(dyn[0], [[2.4597, -0.6454, 2.1905, -1.6457, -1.1299],
                                        [1.7889, 0.5137, -1.8227, -2.1763, 3.2369]], atol=1e-4)
    np.testing.assert_allclose(dyn[1], [[3.4641, 3.0, -3.4641], [5.7321, -8.0, 2.2679]],
                               atol=1e-4)
    np.testing.assert_allclose(dyn[2], [[7.9688, -2.4296, 4.4079, 4.9497, -8.5275, -4.7491,
                                         2.212], [6.8972, 1.0094, -4.286, -8.4853, -4.0614,
                                                  9.3086, 8.1176]], atol=1e-4)
    np.testing.assert_allclose(dyn[3][0], [3.4785, -0.6454, 2.1905, -1.6457, -1.1299],
                               atol=1e-4)


def test_dct_argument_errors():
    with tf.Graph().as_default():
        x = tf.zeros([3, 5])
        cases = [(lambda: tf.signal.dct(x, n=0), "ValueError", "n should be a positive"),
                 (lambda: tf.signal.idct(x, type=5), "ValueError", "Types I, II, III and IV"),
                 (lambda: tf.signal.dct(tf.zeros([3, 1]), type=1), "ValueError",
                  "Type-I DCT requires the dimension"),
                 (lambda: tf.signal.dct(x, type=1, norm="ortho"), "ValueError",
                  "Normalization is not supported"),
                 (lambda: tf.signal.dct(x, axis=0), "NotImplementedError", "axis must be -1"),
                 (lambda: tf.signal.dct(x, norm="bad"), "ValueError",
                  "Unknown normalization"),
                 (lambda: tf.signal.dct(tf.constant([1, 2, 3])), "TypeError", ""),
                 (lambda: tf.signal.mfccs_from_log_mel_spectrograms(tf.zeros([2, 0])),
                  "ValueError", "num_mel_bins must be positive")]
        for fn, kind, gist in cases:
            got, msg = _err(fn)
            assert got == kind and gist in msg, (kind, gist, got, msg)
        assert tf.signal.dct([1.0, 2.0, 3.0]).name == "dct_1/Real:0"


# -- program 3: a speech front end -------------------------------------------------------------
def test_speech_frontend_program():
    sr = 8000
    t = np.arange(4000) / sr
    wav = np.stack([np.sin(2 * np.pi * 440 * t), 0.5 * np.sin(2 * np.pi * 1000 * t)
                    + 0.1 * np.cos(2 * np.pi * 200 * t)]).astype(np.float32)
    with tf.Graph().as_default():
        signals = tf.placeholder(tf.float32, [None, 4000], name="audio")
        with tf.variable_scope("frontend"):
            stfts = tf.signal.stft(signals, frame_length=256, frame_step=128, fft_length=256)
            stfts2 = tf.contrib.signal.stft(
                signals, 200, 80, pad_end=True,
                window_fn=functools.partial(tf.signal.hamming_window, periodic=False))
            power = tf.square(tf.abs(stfts))
            mel_w = tf.signal.linear_to_mel_weight_matrix(40, stfts.shape[-1].value, sr, 80.0,
                                                          3800.0)
            mel = tf.tensordot(power, mel_w, 1)
            mel.set_shape(power.shape[:-1].concatenate(mel_w.shape[-1:]))
            log_mel = tf.log(mel + 1e-6)
            mfccs = tf.signal.mfccs_from_log_mel_spectrograms(log_mel)[..., :13]
            inv = tf.signal.inverse_stft(stfts, 256, 128, 256,
                                         window_fn=tf.signal.inverse_stft_window_fn(128))
            fr = tf.signal.frame(signals, 400, 160, pad_end=True, pad_value=-1.0)
            fr2 = tf.signal.frame(signals, 400, 160, axis=0)
            fr3 = tf.signal.frame(tf.transpose(signals), 100, 50, axis=0, pad_end=True)
            ola = tf.signal.overlap_and_add(fr, 160)
            hw = tf.signal.hann_window(8, periodic=False)
            hm = tf.signal.hamming_window(7)
            d2 = tf.signal.dct(log_mel, type=2, norm="ortho")
            d3 = tf.signal.idct(d2, type=2, norm="ortho")
        got = [(v.name, v.shape.as_list()) for v in (stfts, stfts2, mel_w, mel, mfccs, inv, fr,
                                                     fr2, fr3, ola)]
        assert got == [
            ("frontend/stft/rfft:0", [None, 30, 129]), ("frontend/stft_1/rfft:0", [None, 50, 129]),
            ("frontend/linear_to_mel_weight_matrix:0", [129, 40]),
            ("frontend/Tensordot:0", [None, 30, 40]), ("frontend/strided_slice:0", [None, 30, 13]),
            ("frontend/inverse_stft/overlap_and_add/strided_slice_4:0", [None, 3968]),
            ("frontend/frame/Reshape_4:0", [None, 25, 400]),
            ("frontend/frame_1/Reshape_4:0", [None, 400, 4000]),
            ("frontend/frame_2/Reshape_4:0", [80, 100, None]),
            ("frontend/overlap_and_add/strided_slice_4:0", [None, 4240])]
        assert (hw.name, hm.name) == ("frontend/hann_window/sub_2:0",
                                      "frontend/hamming_window/sub_2:0")
        assert (d2.name, d3.name) == ("frontend/dct/mul_6:0", "frontend/dct_1/strided_slice:0")
        with tf.Session() as sess:
            out = sess.run([stfts, stfts2, mel_w, mel, mfccs, inv, fr, fr2, fr3, ola, hw, hm,
                            d2, d3], {signals: wav})
    sums = [float(np.abs(o).astype(np.float64).sum()) for o in out]
    np.testing.assert_allclose(sums, [6235.87, 11123.19, 115.47, 232243.11, 11626.54, 3665.34,
                                      9880.26, 0.0, 7589.05, 9880.26, 3.5, 3.32, 12652.69,
                                      26560.6], rtol=2e-5, atol=0.02)
    assert out[7].shape == (0, 400, 4000) and out[8].shape == (80, 100, 2)
    np.testing.assert_allclose(out[4][0, 0, :4], [-89.4916, 25.7132, 7.1659, -9.0672],
                               rtol=2e-5)
    np.testing.assert_allclose(out[10][:4], [0.0, 0.1883, 0.6113, 0.9505], atol=1e-4)
    np.testing.assert_allclose(out[6][0, 0, :4], [0.0, 0.3387, 0.6374, 0.8607], atol=1e-4)
    assert np.max(np.abs(out[5][:, 256:-256] - wav[:, 256:3712])) < 1e-5


def test_linear_to_mel_argument_errors():
    cases = [((40, 129, 8000, 100.0, 5000.0), "upper_edge_hertz must not be larger than the "
                                                "Nyquist frequency"),
             ((40, 129, 8000, 3000.0, 1000.0), "lower_edge_hertz 3000.0 >= upper_edge_hertz "
                                                 "1000.0"),
             ((0, 129, 8000, 100.0, 1000.0), "num_mel_bins must be positive"),
             ((4, 129, 8000, -1.0, 1000.0), "lower_edge_hertz must be non-negative"),
             ((4, 129, -8000, 10.0, 1000.0), "sample_rate must be positive")]
    with tf.Graph().as_default():
        for args, gist in cases:
            kind, msg = _err(functools.partial(tf.signal.linear_to_mel_weight_matrix, *args))
            assert kind == "ValueError" and gist in msg, (args, msg)
        kind, msg = _err(lambda: tf.signal.linear_to_mel_weight_matrix(dtype=tf.int32))
        assert kind == "ValueError" and "floating point" in msg
        m = tf.signal.linear_to_mel_weight_matrix(8, 33, 16000, 20.0, 7000.0,
                                                  dtype=tf.float64)
        assert m.dtype == tf.float64


# -- program 4: frame --------------------------------------------------------------------------
def test_frame_is_a_reshape_of_subframes():
    with tf.Graph().as_default():
        s = tf.constant(np.arange(24, dtype=np.float32).reshape(2, 12))
        p = tf.placeholder(tf.float32, [2, None])
        q = tf.placeholder(tf.float32, None)
        ints = tf.range(10)
        cases = [tf.signal.frame(s, 4, 2),
                 tf.signal.frame(s, 4, 3, pad_end=True, pad_value=-1),
                 tf.signal.frame(s, 3, 3, axis=0, pad_end=True),
                 tf.signal.frame(s, 5, 2, axis=-2),
                 tf.signal.frame(ints, 3, 2),
                 tf.signal.frame(ints, 4, 4, pad_end=True, pad_value=7),
                 tf.signal.frame(s, 20, 2),
                 tf.signal.frame(tf.reshape(s, [2, 3, 4]), 2, 1, axis=1),
                 tf.signal.frame(p, 4, 2), tf.signal.frame(p, 6, 4, pad_end=True)]
        assert [(c.name, c.shape.as_list()) for c in cases] == [
            ("frame/Reshape_3:0", [2, 5, 4]), ("frame_1/Reshape_3:0", [2, 4, 4]),
            ("frame_2/Reshape_3:0", [1, 3, 12]), ("frame_3/Reshape_3:0", [0, 5, 12]),
            ("frame_4/Reshape_3:0", [4, 3]), ("frame_5/Reshape_3:0", [3, 4]),
            ("frame_6/Reshape_3:0", [2, 0, 20]), ("frame_7/Reshape_3:0", [2, 2, 2, 4]),
            ("frame_8/Reshape_4:0", [2, None, 4]), ("frame_9/Reshape_4:0", [2, None, 6])]
        assert cases[4].dtype == tf.int32
        unknown = tf.signal.frame(q, 2, 1)
        assert unknown.shape.ndims is None  # TensorFlow: <unknown>
        assert _err(lambda: tf.signal.frame(tf.constant(1.0), 2, 1))[0] == "ValueError"
        assert _err(lambda: tf.signal.frame(s, 2, 1, axis=3))[0] == "IndexError"
        with tf.Session() as sess:
            out = sess.run(cases[:8])
            dyn = sess.run(cases[8:], {p: np.arange(22, dtype=np.float32).reshape(2, 11)})
            short = sess.run(cases[8], {p: np.zeros((2, 2), np.float32)})
            unk = sess.run(unknown, {q: np.arange(4.0)})
    sums = [float(o.sum()) for o in out + dyn]
    assert sums == [460.0, 346.0, 276.0, 0.0, 48, 59, 0.0, 368.0, 320.0, 327.0]
    assert out[1].ravel()[:12].tolist() == [0, 1, 2, 3, 3, 4, 5, 6, 6, 7, 8, 9]
    assert out[5].ravel().tolist() == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 7, 7]
    assert dyn[1].ravel()[:12].tolist() == [0, 1, 2, 3, 4, 5, 4, 5, 6, 7, 8, 9]
    assert out[7].ravel()[:12].tolist() == [0, 1, 2, 3, 4, 5, 6, 7, 4, 5, 6, 7]
    assert short.shape == (2, 0, 4)
    assert unk.tolist() == [[0, 1], [1, 2], [2, 3]]


def test_frame_gradients_and_a_training_loop():
    with tf.Graph().as_default():
        v = tf.get_variable("sig", initializer=tf.constant(
            np.sin(np.arange(16) / 3.0).astype(np.float32)))
        fr = tf.signal.frame(v, 6, 4, pad_end=True)
        loss = tf.reduce_sum(tf.square(fr) * tf.range(1.0, 7.0))
        gr = tf.gradients(loss, v)[0]
        st = tf.signal.stft(v, 8, 4)
        gs = tf.gradients(tf.reduce_sum(tf.abs(st)), v)[0]
        assert (gr.name, gr.shape.as_list()) == ("gradients/frame/PadV2_grad/Slice_1:0", [16])
        assert (st.name, gs.name) == ("stft/rfft:0",
                                      "gradients_1/stft/frame/StridedSlice_grad/"
                                      "StridedSliceGrad:0")
        train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            g1, g2 = sess.run([gr, gs])
            for _ in range(3):
                sess.run(train)
            final_loss, final_v = sess.run([loss, v])
    np.testing.assert_allclose(g1, [0.0, 1.3088, 3.7102, 6.7318, 11.6633, 15.9265, 5.4558,
                                    5.7847, 5.4873, 2.2579, -1.1434, -4.0102, -9.0816, -14.8642,
                                    -5.9937, -7.6714], atol=1e-3)
    np.testing.assert_allclose(g2, [0.0, -0.1245, 0.2673, 1.0173, 3.009, 1.0357, 2.4778, 0.9807,
                                    2.7044, -0.1114, -0.0703, -0.3749, -2.9534, -1.3183, -1.3285,
                                    0.3042], atol=1e-3)
    np.testing.assert_allclose(final_loss, 20.7128, rtol=1e-5)
    np.testing.assert_allclose(final_v[:6], [0.0, 0.2895, 0.5136, 0.6552, 0.6623, 0.59],
                               atol=1e-4)


def test_overlap_and_add_of_a_known_shape_uses_static_dimensions():
    with tf.Graph().as_default():
        known = tf.signal.overlap_and_add(tf.ones([3, 5, 4]), 2)
        unknown = tf.signal.overlap_and_add(tf.placeholder(tf.float32, [None, 5, 4]), 2)
        fast = tf.signal.overlap_and_add(tf.ones([5, 4]), 4)
        assert (known.name, known.shape.as_list()) == ("overlap_and_add/strided_slice_1:0",
                                                       [3, 12])
        assert (unknown.name, unknown.shape.as_list()) == (
            "overlap_and_add_1/strided_slice_4:0", [None, 12])
        assert (fast.name, fast.shape.as_list()) == ("overlap_and_add_2/fast_path:0", [20])
        with tf.Session() as sess:
            assert sess.run(known)[0].tolist() == [1, 1] + [2] * 8 + [1, 1]


# -- program 5: gradients through complex ops and FFTs -----------------------------------------
def test_gradients_through_complex_ops_and_ffts():
    xv = np.random.RandomState(1).randn(2, 8).astype(np.float32)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 8])
        y = tf.placeholder(tf.float32, [2, 8])
        z = tf.complex(x, y)
        losses = {
            "abs_fft_sq": tf.reduce_sum(tf.abs(tf.fft(z)) ** 2),
            "rfft_power": tf.reduce_sum(tf.square(tf.abs(tf.signal.rfft(x)))),
            "rfft_pad": tf.reduce_sum(tf.real(tf.signal.rfft(x, fft_length=[12]))
                                      * tf.range(7.0)),
            "irfft": tf.reduce_sum(tf.signal.irfft(tf.signal.rfft(x)
                                                   * tf.complex(tf.range(5.0), 0.0)) ** 2),
            "fft2d": tf.reduce_sum(tf.real(tf.fft2d(z)) * x),
            "angle": tf.reduce_sum(tf.angle(z)),
            "dct_n": tf.reduce_sum(tf.signal.dct(x, n=10) ** 2),
            "mfcc": tf.reduce_sum(tf.signal.mfccs_from_log_mel_spectrograms(x) ** 2),
            "matmul_adj": tf.reduce_sum(tf.real(tf.matmul(z, z, adjoint_b=True))),
            "div": tf.reduce_sum(tf.abs(z / (z + 3.0))),
        }
        grads = {k: tf.gradients(v, [x, y]) for k, v in losses.items()}
        assert grads["dct_n"][0].name == "gradients_6/dct/Pad_grad/Slice_1:0"
        assert grads["rfft_pad"][0].name == "gradients_2/rfft_1/Pad_grad/Slice_1:0"
        assert grads["abs_fft_sq"][1].name == "gradients/Complex_grad/Imag:0"
        assert grads["rfft_power"][1] is None
        gz = tf.gradients(tf.reduce_sum(tf.abs(z)), z)[0]
        assert gz.dtype == tf.complex64
        fd = {x: xv, y: xv[::-1] * 0.7}
        with tf.Session() as sess:
            vals = sess.run({k: (losses[k], grads[k][0]) for k in losses}, fd)
            gy = sess.run(grads["div"][1], fd)
    expect = {
        "abs_fft_sq": (278.992, [25.99, -9.788, -8.451, -17.167, 13.847, -36.825]),
        "rfft_power": (151.009, [20.408, -14.389, 3.187, -18.079, 14.336, -27.907]),
        "rfft_pad": (91.498, [21.0, -10.464, 3.0, -4.0, 3.0, -3.536]),
        "irfft": (269.151, [34.495, -23.242, 16.007, -24.64, 38.228, -48.705]),
        "fft2d": (20.887, [-4.484, 6.092, -1.639, 0.056, 29.68, -3.213]),
        "angle": (-13.548, [-0.083, 0.431, -0.772, 0.446, 0.282, 0.05]),
        "dct_n": (473.159, [60.81, -28.635, -25.291, -47.083, 30.452, -96.226]),
        "mfcc": (23.721, [2.988, -1.484, -1.317, -2.406, 1.471, -4.863]),
        "matmul_adj": (51.351, [3.887, -1.722, 1.868, -6.266, 1.086, -5.371]),
        "div": (10.449, [0.138, -0.512, -0.32, -0.496, 0.19, -5.188]),
    }
    for k, (loss, head) in expect.items():
        np.testing.assert_allclose(vals[k][0], loss, atol=2e-3, err_msg=k)
        np.testing.assert_allclose(vals[k][1].ravel()[:6], head, atol=2e-3, err_msg=k)
    np.testing.assert_allclose(gy.ravel()[:3], [0.026, -0.106, 0.271], atol=2e-3)


# -- program 6: a learned Wiener filter --------------------------------------------------------
def test_wiener_filter_training_program(tmp_path, capsys):
    rng = np.random.RandomState(3)
    n = 16
    clean = np.sin(2 * np.pi * 3 * np.arange(n) / n).astype(np.float32)
    noisy = (clean[None] + 0.3 * rng.randn(4, n)).astype(np.float32)
    with tf.Graph().as_default():
        tf.set_random_seed(42)
        x = tf.placeholder(tf.float32, [None, n], name="noisy")
        t = tf.placeholder(tf.float32, [None, n], name="clean")
        with tf.variable_scope("wiener"):
            gain_re = tf.get_variable("gain_re", [n // 2 + 1],
                                      initializer=tf.ones_initializer())
            gain_im = tf.get_variable("gain_im", [n // 2 + 1],
                                      initializer=tf.random_normal_initializer(stddev=0.1))
            gain = tf.complex(gain_re, gain_im, name="gain")
            spec = tf.signal.rfft(x, name="analysis")
            out = tf.signal.irfft(spec * gain, name="synthesis")
        assert (gain.name, spec.name, out.name, out.shape.as_list()) == (
            "wiener/gain:0", "wiener/analysis:0", "wiener/synthesis:0", [None, 16])
        loss = tf.reduce_mean(tf.square(out - t), name="mse")
        total = loss + 0.1 * tf.reduce_mean(tf.abs(tf.signal.rfft(out) - tf.signal.rfft(t)))
        gstep = tf.train.get_or_create_global_step()
        train = tf.train.AdamOptimizer(0.05).minimize(total, global_step=gstep)
        tf.summary.scalar("mse", loss)
        tf.summary.histogram("gain_mag", tf.abs(gain))
        assert _err(lambda: tf.summary.histogram("gain_c", gain))[0] == "TypeError"
        merged = tf.summary.merge_all()
        assert [s.name for s in tf.get_collection(tf.GraphKeys.SUMMARIES)] == ["mse_1:0",
                                                                               "gain_mag:0"]
        pw = tf.py_func(lambda z: (np.abs(z) ** 2).astype(np.float32), [gain], tf.float32)
        pc = tf.py_func(np.conj, [gain], tf.complex64)
        pr = tf.Print(gain, [gain[:2]], message="gain: ")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            writer = tf.summary.FileWriter(str(tmp_path), sess.graph)
            losses = []
            for i in range(5):
                _, value, s = sess.run([train, total, merged],
                                       {x: noisy, t: clean[None].repeat(4, 0)})
                writer.add_summary(s, i)
                losses.append(value)
            writer.close()
            g, p, c = sess.run([gain, pw, pc])
            sess.run(pr)
            path = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=gstep)
    np.testing.assert_allclose(losses, [0.22522, 0.20147, 0.18617, 0.17381, 0.16189],
                               atol=2e-5)
    np.testing.assert_allclose(g[:4], [0.7509 - 0.0301j, 0.7509 - 0.006j, 0.7509 - 0.0183j,
                                       0.9484 + 0.0368j], atol=1e-4)
    np.testing.assert_allclose(p[:4], [0.5647, 0.5638, 0.5643, 0.9008], atol=1e-4)
    np.testing.assert_allclose(c[:2], [0.7509 + 0.0301j, 0.7509 + 0.006j], atol=1e-4)
    assert "gain: [? ?]" in capsys.readouterr().err
    assert path.endswith("model.ckpt-5")
    reader = tf.train.NewCheckpointReader(path)
    assert sorted(reader.get_variable_to_shape_map().items()) == [
        ("beta1_power", []), ("beta2_power", []), ("global_step", []), ("wiener/gain_im", [9]),
        ("wiener/gain_im/Adam", [9]), ("wiener/gain_im/Adam_1", [9]), ("wiener/gain_re", [9]),
        ("wiener/gain_re/Adam", [9]), ("wiener/gain_re/Adam_1", [9])]


def test_complex_values_print_as_question_marks(capsys):
    with tf.Graph().as_default():
        z = tf.complex(tf.range(8.0), 1.0)
        z2 = tf.reshape(z, [2, 4])
        p = tf.Print(z, [z, z2, z[0]], message="P: ")
        p2 = tf.Print(z, [z2], message="S: ", summarize=10)
        pp = tf.print("v2:", z, z2, z[0], output_stream=sys.stdout)
        pp2 = tf.print("v2s:", z2, summarize=1, output_stream=sys.stdout)
        a = tf.Assert(tf.reduce_all(tf.abs(z) > 1.0), [z[:3], z2[:, :1]])
        with tf.Session() as sess:
            sess.run([p, p2])
            sess.run(pp)
            sess.run(pp2)
            kind, msg = _err(lambda: sess.run(a))
    captured = capsys.readouterr()
    assert "P: [? ? ?...][? ? ?...][?]" in captured.err
    assert "S: [? ? ? ? ? ? ? ?]" in captured.err
    assert "v2: [? ? ?...] [? ? ?...] ?" in captured.out
    assert "v2s: [?...]" in captured.out
    assert kind == "InvalidArgumentError" and "[? ? ?] [? ?]" in msg


# -- program 7: STFT variants ------------------------------------------------------------------
def test_stft_variants_program():
    wav = np.random.RandomState(7).randn(3, 1000).astype(np.float32)
    hann = functools.partial(tf.signal.hann_window, periodic=False)
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32, [None, None])
        b = tf.placeholder(tf.float32, [3, 1000])
        c = tf.placeholder(tf.float64, [1000])
        specs = [tf.signal.stft(a, 128, 64), tf.signal.stft(b, 100, 40),
                 tf.signal.stft(b, 100, 40, fft_length=128, pad_end=True),
                 tf.signal.stft(b, 64, 32, window_fn=None),
                 tf.signal.stft(c, 64, 16, window_fn=hann),
                 tf.signal.stft(b, 50, 25, fft_length=40)]
        assert [(s.name, s.shape.as_list()) for s in specs] == [
            ("stft/rfft:0", [None, None, 65]), ("stft_1/rfft:0", [3, 23, 65]),
            ("stft_2/rfft:0", [3, 25, 65]), ("stft_3/rfft:0", [3, 30, 33]),
            ("stft_4/rfft:0", [59, 33]), ("stft_5/rfft:0", [3, 39, 21])]
        assert specs[4].dtype == tf.complex128
        invs = [tf.signal.inverse_stft(specs[0], 128, 64),
                tf.signal.inverse_stft(specs[1], 100, 40, fft_length=128,
                                       window_fn=tf.signal.inverse_stft_window_fn(40)),
                tf.signal.inverse_stft(specs[4], 64, 16, window_fn=tf.signal.inverse_stft_window_fn(
                    16, forward_window_fn=hann)),
                tf.signal.inverse_stft(specs[3], 64, 32, window_fn=None)]
        assert [(s.name, s.shape.as_list()) for s in invs] == [
            ("inverse_stft/overlap_and_add/strided_slice_4:0", [None, None]),
            ("inverse_stft_1/overlap_and_add/strided_slice_1:0", [3, 980]),
            ("inverse_stft_2/overlap_and_add/strided_slice_1:0", [992]),
            ("inverse_stft_3/overlap_and_add/strided_slice_1:0", [3, 992])]
        assert invs[2].dtype == tf.float64
        w = tf.signal.inverse_stft_window_fn(32)(64, dtype=tf.float32)
        with tf.Session() as sess:
            vals = sess.run(specs[1:] + invs[1:] + [w], {b: wav, c: wav[0].astype(np.float64)})
            v0 = sess.run(specs[0], {a: wav})
    sums = [float(np.abs(v).sum()) for v in vals[:-1]]
    np.testing.assert_allclose(sums, [24232.93, 25707.52, 20876.0, 8048.06, 9229.84, 2191.97,
                                      730.57, 4575.96], rtol=2e-6, atol=0.01)
    np.testing.assert_allclose(v0.shape, (3, 14, 65))
    np.testing.assert_allclose(np.abs(v0).sum(), 16776.49, atol=0.01)
    # window_fn=None: TensorFlow applies no window at all (not the default Hann).
    np.testing.assert_allclose(vals[2].ravel()[:2], [-3.1183, 4.2447 + 3.0254j], atol=1e-4)
    np.testing.assert_allclose(vals[7].ravel()[100:103], [-1.729, 0.7487, 0.7831], atol=1e-4)
    np.testing.assert_allclose(vals[6][100:103], [-0.8645, 0.3744, 0.3915], atol=1e-4)
    np.testing.assert_allclose(vals[-1][:6], [0.0, 0.0024, 0.0098, 0.0225, 0.0411, 0.0664],
                               atol=1e-4)


# -- program 8: a complex-valued network -------------------------------------------------------
def test_complex_valued_network_program():
    with tf.Graph().as_default():
        tf.set_random_seed(5)
        with tf.variable_scope("cplx"):
            wc = tf.get_variable("wc", [4, 2], dtype=tf.complex64,
                                 initializer=tf.zeros_initializer())
            wr = tf.get_variable("wr", [4, 2], initializer=tf.glorot_uniform_initializer())
            wi = tf.get_variable("wi", [4, 2], initializer=tf.glorot_uniform_initializer())
        assert (wc.name, wc.initializer.name) == ("cplx/wc:0", "cplx/wc/Assign")
        assert tf.get_variable("c1", [2], dtype=tf.complex64,
                               initializer=tf.constant_initializer(1.0)).dtype.base_dtype == \
            tf.complex64
        kind, msg = _err(lambda: tf.get_variable("c3", [2], dtype=tf.complex64))
        assert kind == "ValueError" and "initializer for variable c3" in msg
        x = tf.placeholder(tf.complex64, [None, 4])
        w = tf.complex(wr, wi)
        h = tf.matmul(x, w) + wc[0]
        assert (h.name, h.dtype) == ("add:0", tf.complex64)
        act = tf.complex(tf.nn.relu(tf.real(h)), tf.nn.relu(tf.imag(h)))
        out = tf.abs(act * tf.cast(tf.abs(h) > 0.5, tf.complex64))
        loss = tf.reduce_mean(tf.squared_difference(out, tf.constant([[1.0, 0.0], [0.0, 1.0],
                                                                      [1.0, 1.0]])))
        opt = tf.train.GradientDescentOptimizer(0.1)
        gv = opt.compute_gradients(loss, var_list=[wr, wi])
        assert [gg.name for gg, _ in gv] == ["gradients/Complex_grad/tuple/control_dependency:0",
                                             "gradients/Complex_grad/tuple/control_dependency_1:0"]
        train = opt.apply_gradients(gv)
        kind, msg = _err(lambda: tf.train.AdamOptimizer(0.1).minimize(
            tf.reduce_sum(tf.abs(h)), var_list=[wc]))
        assert kind == "ValueError" and "Invalid type tf.complex64 for cplx/wc:0" in msg
        d = tf.constant([[1 + 2j, 3 - 1j]], dtype=tf.complex128)
        ops = {"adjoint": tf.linalg.adjoint(d), "trans": tf.transpose(d, conjugate=True),
               "tensordot": tf.tensordot(d, tf.conj(d), [[1], [1]]),
               "det": tf.matrix_determinant(tf.constant([[1 + 1j, 1], [0, 2j]], tf.complex64)),
               "norm": tf.norm(d), "roll": tf.roll(d, 1, 1), "cumsum": tf.cumsum(d, axis=1),
               "l2n": tf.nn.l2_normalize(tf.constant([3 + 4j, 0j], tf.complex64), 0)}
        assert ops["adjoint"].name == "adjoint/matrix_transpose/transpose:0"
        assert ops["adjoint"].op.type == "ConjugateTranspose"
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            fd = {x: np.array([[1 + 1j, 0, 1, -1j], [0.5, 2j, -1, 1], [1, 1, 1, 1]],
                              np.complex64)}
            losses = [sess.run([train, loss], fd)[1] for _ in range(4)]
            vals = sess.run(ops)
    np.testing.assert_allclose(losses, [0.92511, 0.68057, 0.52028, 0.41441], atol=1e-5)
    assert _r(vals["adjoint"]) == [[1 - 2j], [3 + 1j]] == _r(vals["trans"])
    assert _r(vals["tensordot"]) == [[15 + 0j]]
    assert _r(vals["det"]) == -2 + 2j
    assert _r(vals["norm"], 3) == 3.873 + 0j
    assert _r(vals["roll"]) == [[3 - 1j, 1 + 2j]]
    assert _r(vals["cumsum"]) == [[1 + 2j, 4 + 1j]]
    np.testing.assert_allclose(vals["l2n"], [0.6 + 0.8j, 0j], atol=1e-6)


def test_initializers_called_with_a_non_float_dtype():
    inits = {"rn": tf.random_normal_initializer(), "tn": tf.truncated_normal_initializer(),
             "gn": tf.glorot_normal_initializer(), "vs": tf.variance_scaling_initializer(),
             "orth": tf.orthogonal_initializer(), "glorot": tf.glorot_uniform_initializer(),
             "ru": tf.random_uniform_initializer(), "ident": tf.initializers.identity()}
    # TensorFlow 2.15's tf.compat.v1, get_variable(dtype=..., initializer=...):
    expect = {("rn", "complex64"): "TypeError", ("rn", "int32"): "TypeError",
              ("tn", "complex64"): "TypeError", ("tn", "int32"): "TypeError",
              ("gn", "complex64"): "TypeError", ("gn", "int32"): "TypeError",
              ("vs", "complex64"): "TypeError", ("vs", "int32"): "TypeError",
              ("orth", "complex64"): "TypeError", ("orth", "int32"): "TypeError",
              ("glorot", "complex64"): "ValueError", ("glorot", "int32"): "TypeError",
              ("ru", "complex64"): "ValueError", ("ident", "int32"): "TypeError",
              ("ident", "complex64"): None}
    with tf.Graph().as_default():
        for (k, dt), kind in expect.items():
            got = _err(functools.partial(tf.get_variable, k + dt, [2, 2],
                                         dtype=tf.as_dtype(dt), initializer=inits[k]))[0]
            assert got == kind, (k, dt, got)
        with pytest.raises(ValueError):
            tf.random_normal_initializer(dtype=tf.complex64)
        ident = tf.get_variable("ident_c", [2, 2], dtype=tf.complex64,
                                initializer=tf.initializers.identity())
        with tf.Session() as sess:
            sess.run(ident.initializer)
            assert _r(sess.run(ident)) == [[1 + 0j, 0j], [0j, 1 + 0j]]


def test_spectral_namespace_holds_the_transforms_only():
    names = sorted(n for n in dir(tf.spectral) if not n.startswith("_") and n != "annotations")
    assert names == ["dct", "fft", "fft2d", "fft3d", "idct", "ifft", "ifft2d", "ifft3d", "irfft",
                     "irfft2d", "irfft3d", "rfft", "rfft2d", "rfft3d"]
    assert tf.spectral.rfft is tf.signal.rfft and tf.spectral.dct is tf.signal.dct
    assert not hasattr(tf.spectral, "stft")
    # TensorFlow's tf.audio holds the two WAV ops only.
    assert sorted(n for n in dir(tf.audio) if not n.startswith("_")) == ["decode_wav",
                                                                         "encode_wav"]


def test_complex_abs_gradient_is_tensorflows_div_no_nan():
    with tf.Graph().as_default():
        a = tf.constant([0.0, 3.0, -1.0])
        b = tf.constant([0.0, 4.0, 0.0])
        z = tf.complex(a, b)
        ga, gb, gz = tf.gradients(tf.reduce_sum(tf.abs(z)), [a, b, z])
        assert gz.name == "gradients/Abs_grad/div_no_nan:0" and gz.dtype == tf.complex64
        zd = tf.complex(tf.cast(a, tf.float64), tf.cast(b, tf.float64))
        gd = tf.gradients(tf.reduce_sum(tf.abs(zd)), zd)[0]
        assert gd.dtype == tf.complex128
        with tf.Session() as sess:
            va, vb, vd = sess.run([ga, gb, gd])
    np.testing.assert_allclose(va, [0.0, 0.6, -1.0], atol=1e-6)
    np.testing.assert_allclose(vb, [0.0, 0.8, 0.0], atol=1e-6)
    np.testing.assert_allclose(vd, [0j, 0.6 + 0.8j, -1 + 0j], atol=1e-12)
