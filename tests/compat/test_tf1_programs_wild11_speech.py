"""TF1 speech, audio and time-series programs, sweep 11 (area ``speech``), run under
TensorFlow 2.15 and flowgraph with the tf-oracle; every value below is what TensorFlow
printed for the same program (contrib parts through TF 1.15's definitions written out).

The programs: a DeepSpeech-style acoustic model (clipped-ReLU stack, time-major
bidirectional LSTMs with lengths, CTC loss, beam search with ``top_paths``, greedy
decoding, ``edit_distance``); the speech_commands input pipeline (WAV encode / write /
read / decode through ``contrib.framework``'s audio ops, time shift by pad + slice, noise
mix, ``audio_spectrogram``, ``mfcc``, a conv model); a tacotron-style ``tf.signal``
front end (stft, mel matrix, MFCCs, framing, windows, overlap-add, ``inverse_stft``,
Griffin-Lim, a spectral loss trained by Adam); a WaveNet (mu-law, causal dilated convs
by hand and by ``tf.layers.conv1d(padding="causal")``, gated units, skips); a GRU
seq2seq forecaster (``legacy_seq2seq``) on a windowed ``tf.data`` pipeline; WAV edge
cases; stacked bidirectional GRUs with CTC; an activity-recognition LSTM over
``tf.split`` steps.

Classes of discrepancy found and fixed (a focused test each below):

* ``from tensorflow.contrib.<pkg>.python.ops import <module>`` paths did not import
  (speech_commands' ``contrib_audio``): `flowgraph.python.tf_paths` now serves contrib's
  module paths too (``contrib.rnn`` is a package path now).
* ``tf.slice`` with size -1 lost every dimension unless all of ``begin`` was constant;
  TensorFlow resolves each dimension whose ``begin`` entry is known.
* Dilated 1-D convolutions (``tf.nn.convolution``, ``tf.layers.conv1d``) and dilated
  ``tf.layers.conv2d`` were one dilated ``Conv2D``; TensorFlow builds
  ``SpaceToBatchND`` -> convolution -> ``BatchToSpaceND``.
* ``tf.signal`` windows, ``overlap_and_add`` and ``linear_to_mel_weight_matrix``
  returned tensors named and typed unlike TensorFlow's (``hann_window/sub_2``,
  ``overlap_and_add/strided_slice_4`` or ``fast_path``, a ``Pad`` named after the scope).
* A one-shot iterator did not draw an op seed, so seedless initializers made after one
  differed from TensorFlow's.
* A ``window`` dataset's ``output_types`` / ``output_shapes`` / ``element_spec`` were
  its components' instead of a nested ``DatasetSpec``.
* ``tf.audio.decode_wav`` returned a bare tuple (not ``DecodeWav(audio, sample_rate)``),
  refused to widen stereo to more channels, accepted negative ``desired_*`` other than
  -1, and failed with an internal error on a cut-short chunk.
* Unnamed ``tf.layers`` layers and RNN cells were all labelled by their base name
  (``dense``, ``lstm_cell``); TensorFlow labels them ``dense_1``, ``lstm_cell_1``, ...
  with a per-graph counter shared with Keras (their scopes are unchanged).
* ``tf.nn.ctc_loss``: class ids >= the blank are null labels that end a sequence (a
  real label after one is an error), an all-null sequence gets TensorFlow's loss, and an
  empty one is TensorFlow's error (flowgraph crashed on both).
"""

from __future__ import annotations

import importlib
import os

import numpy as np
import pytest

import flowgraph as tf


def _names(graph, since: int, types: tuple[str, ...]) -> list[str]:
    return [o.name for o in graph.get_operations()[since:] if o.type in types]


# -- programs ------------------------------------------------------------------------------
def test_deepspeech_bi_lstm_with_ctc_beam_search_greedy_and_edit_distance():
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        batch_x = tf.placeholder(tf.float32, [None, None, 15], name="input_node")
        seq_length = tf.placeholder(tf.int32, [None], name="input_lengths")
        targets = tf.sparse_placeholder(tf.int32, name="targets")
        shape = tf.shape(batch_x)
        x = tf.reshape(tf.transpose(batch_x, [1, 0, 2]), [-1, 15])
        with tf.device("/cpu:0"):
            b1 = tf.get_variable("b1", [8], initializer=tf.random_normal_initializer(
                stddev=0.046875))
            h1 = tf.get_variable("h1", [15, 8], initializer=tf.glorot_normal_initializer(seed=2))
        layer_1 = tf.minimum(tf.nn.relu(tf.add(tf.matmul(x, h1), b1)), 20.0)
        layer_1 = tf.reshape(tf.nn.dropout(layer_1, keep_prob=0.95, seed=3), [-1, shape[0], 8])
        fw, bw = tf.nn.rnn_cell.LSTMCell(8), tf.nn.rnn_cell.LSTMCell(8)
        (out_fw, out_bw), _ = tf.nn.bidirectional_dynamic_rnn(
            fw, bw, layer_1, sequence_length=seq_length, dtype=tf.float32, time_major=True)
        outputs = tf.reshape(tf.concat([out_fw, out_bw], 2), [-1, 16])
        h5 = tf.get_variable("h5", [16, 5], initializer=tf.glorot_uniform_initializer())
        b5 = tf.get_variable("b5", [5], initializer=tf.zeros_initializer())
        logits = tf.reshape(tf.add(tf.matmul(outputs, h5), b5), [-1, shape[0], 5],
                            name="raw_logits")
        avg_loss = tf.reduce_mean(tf.nn.ctc_loss(targets, logits, seq_length))
        train = tf.train.AdamOptimizer(0.01).minimize(avg_loss)
        decoded, log_prob = tf.nn.ctc_beam_search_decoder(logits, seq_length, beam_width=4,
                                                          top_paths=2, merge_repeated=False)
        greedy, neg_sum = tf.nn.ctc_greedy_decoder(logits, seq_length)
        distance = tf.edit_distance(tf.cast(decoded[0], tf.int32), targets)
        assert (logits.shape.as_list(), log_prob.shape.as_list(), neg_sum.shape.as_list()) == (
            [None, None, 5], [None, 2], [None, 1])
        assert (decoded[0].indices.op.type, distance.op.name) == (
            "CTCBeamSearchDecoder", "edit_distance")
        feed = {batch_x: np.random.RandomState(0).randn(2, 7, 15).astype(np.float32),
                seq_length: [7, 5],
                targets: tf.SparseTensorValue([[0, 0], [0, 1], [0, 2], [1, 0], [1, 1]],
                                              np.array([1, 2, 2, 3, 1], np.int32), [2, 3])}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            losses = [sess.run([avg_loss, train], feed)[0] for _ in range(4)]
            d, lp, g, ns, dist = sess.run([decoded, log_prob, greedy, neg_sum, distance], feed)
    np.testing.assert_allclose(losses, [5.8795, 5.6218, 5.3931, 5.0964], atol=1e-4)
    assert d[0].indices.tolist() == [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1]]
    assert (d[0].values.tolist(), d[0].dense_shape.tolist()) == ([3, 1, 2, 3, 1], [2, 3])
    assert (d[1].values.tolist(), g[0].values.tolist()) == ([3, 1, 0, 3, 2], [3, 1])
    np.testing.assert_allclose(lp, [[-5.3803, -5.6093], [-3.6383, -4.0875]], atol=1e-4)
    np.testing.assert_allclose(ns, [[-1.7747], [-2.097]], atol=1e-4)
    np.testing.assert_allclose(dist, [2 / 3, 0.0], atol=1e-6)


def test_speech_commands_pipeline_through_contrib_audio_ops(tmp_path):
    contrib_audio = importlib.import_module("flowgraph.contrib.framework.python.ops.audio_ops")
    rate, samples = 8000, 1000
    path = str(tmp_path / "a.wav")
    rng = np.random.RandomState(3)
    clip = (0.5 * np.sin(np.arange(900) * 0.07) + 0.05 * rng.randn(900)).astype(np.float32)
    with tf.Graph().as_default(), tf.Session() as sess:
        name = tf.placeholder(tf.string, [])
        data = tf.placeholder(tf.float32, [None, 1])
        encoded = contrib_audio.encode_wav(data, rate)
        assert (encoded.op.type, encoded.op.name, encoded.shape.as_list()) == (
            "EncodeWav", "EncodeWav", [])
        sess.run(tf.io.write_file(name, encoded), {name: path, data: clip.reshape(-1, 1)})
    assert os.path.getsize(path) == 1844
    with tf.Graph().as_default():
        wav = contrib_audio.decode_wav(tf.io.read_file(tf.constant(path)), desired_channels=1,
                                       desired_samples=samples)
        assert (wav.audio.shape.as_list(), wav.audio.op.name) == ([1000, 1], "DecodeWav")
        padding = tf.placeholder(tf.int32, [2, 2])
        offset = tf.placeholder(tf.int32, [2])
        padded = tf.pad(tf.multiply(wav.audio, 0.8), padding, mode="CONSTANT")
        sliced = tf.slice(padded, offset, [samples, -1])
        assert (padded.shape.as_list(), sliced.shape.as_list()) == ([None, None], [1000, None])
        background = tf.placeholder(tf.float32, [samples, 1])
        mixed = tf.clip_by_value(tf.add(background * 0.3, sliced), -1.0, 1.0)
        spectrogram = contrib_audio.audio_spectrogram(mixed, window_size=240, stride=80,
                                                      magnitude_squared=True)
        mfcc = contrib_audio.mfcc(spectrogram, wav.sample_rate, dct_coefficient_count=10)
        assert (spectrogram.shape.as_list(), mfcc.shape.as_list(), mfcc.op.type) == (
            [None, 10, 129], [None, 10, 10], "Mfcc")
        feed = {padding: [[30, 0], [0, 0]], offset: [0, 0],
                background: (0.1 * rng.randn(samples, 1)).astype(np.float32)}
        with tf.Session() as sess:
            audio, sr, spec, coeffs = sess.run([wav.audio, wav.sample_rate, spectrogram, mfcc],
                                               feed)
    assert sr == 8000
    np.testing.assert_allclose(audio[:3, 0], [0.0894, 0.0568, 0.0746], atol=1e-4)
    np.testing.assert_allclose(audio[895:902, 0], [-0.0878, -0.001, -0.0479, -0.0565, 0.1216,
                                                   0.0, 0.0], atol=1e-4)
    np.testing.assert_allclose(spec[0, 0, :4], [0.0043, 1.6362, 256.011, 547.3494], rtol=1e-4,
                               atol=1e-4)
    np.testing.assert_allclose(spec.sum(), 9360.632, rtol=1e-5)
    np.testing.assert_allclose(coeffs[0, 0, :4], [2.8762, -0.7332, 3.0031, 1.6393], atol=2e-4)
    np.testing.assert_allclose(coeffs[0, -1, -2:], [0.7283, 0.4271], atol=2e-4)


def test_tacotron_signal_front_end_names_values_and_spectral_loss():
    sig = tf.contrib.signal
    rng = np.random.RandomState(5)
    wav = (np.sin(np.arange(2, 802) * 0.2)[None] * np.array([[1.0], [0.5]])
           + 0.1 * rng.randn(2, 800)).astype(np.float32)
    with tf.Graph().as_default():
        signals = tf.placeholder(tf.float32, [None, None])
        stfts = sig.stft(signals, frame_length=128, frame_step=32, fft_length=128)
        spectrograms = tf.abs(stfts)
        mel = sig.linear_to_mel_weight_matrix(16, stfts.shape[-1].value, 4000, 80.0, 1800.0)
        mel_spec = tf.tensordot(spectrograms, mel, 1)
        mel_spec.set_shape(spectrograms.shape[:-1].concatenate(mel.shape[-1:]))
        mfccs = sig.mfccs_from_log_mel_spectrograms(tf.log(mel_spec + 1e-6))[..., :8]
        frames = sig.frame(signals, 64, 16, pad_end=True, pad_value=0.0, axis=-1)
        win, ham = sig.hann_window(64, periodic=True), sig.hamming_window(64, periodic=False)
        rec = sig.overlap_and_add(frames * win, 16)
        inv = sig.inverse_stft(stfts, 128, 32, 128, window_fn=sig.inverse_stft_window_fn(32))
        magnitudes = tf.cast(spectrograms, tf.complex64)
        y = sig.inverse_stft(magnitudes, 128, 32, 128)
        for _ in range(3):  # Griffin-Lim
            est = sig.stft(y, 128, 32, 128)
            y = sig.inverse_stft(
                magnitudes * (est / tf.cast(tf.maximum(1e-8, tf.abs(est)), tf.complex64)),
                128, 32, 128)
        assert (stfts.op.name, mel.op.name, mel.op.type) == (
            "stft/rfft", "linear_to_mel_weight_matrix", "Pad")
        assert (win.op.name, ham.op.name) == ("hann_window/sub_2", "hamming_window/sub_2")
        assert (inv.op.name, y.op.name) == ("inverse_stft/overlap_and_add/strided_slice_4",
                                            "inverse_stft_4/overlap_and_add/strided_slice_4")
        assert (mel_spec.shape.as_list(), mfccs.shape.as_list(), frames.shape.as_list()) == (
            [None, None, 16], [None, None, 8], [None, None, 64])
        tf.set_random_seed(2)
        v = tf.Variable(tf.random_normal([2, 800], stddev=0.1, seed=3))
        pred = tf.abs(sig.stft(v, 128, 64, pad_end=True))
        target = tf.abs(sig.stft(signals, 128, 64, pad_end=True))
        loss = tf.reduce_mean(tf.abs(tf.log(pred + 1e-3) - tf.log(target + 1e-3))) + \
            tf.losses.mean_squared_error(target, pred)
        train = tf.train.AdamOptimizer(0.05).minimize(loss)
        assert pred.shape.as_list() == [2, 13, 65]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            st, m, mf, rc, iv, g = sess.run([stfts, mel, mfccs, rec, inv, y], {signals: wav})
            losses = [sess.run([loss, train], {signals: wav})[0] for _ in range(3)]
    np.testing.assert_allclose(np.abs(st).sum(), 3772.2915, rtol=1e-5)
    np.testing.assert_allclose(m.sum(0)[:6], [1.8279, 1.9785, 2.1095, 2.2245, 2.4241, 2.5591],
                               atol=1e-4)
    np.testing.assert_allclose(mf[1, 2, :4], [3.3872, 0.6125, 1.6956, 0.7601], atol=1e-4)
    np.testing.assert_allclose(mf.mean(), 1.5240201, atol=1e-5)
    assert rc.shape == (2, 848)
    np.testing.assert_allclose(rc[0, 100:103], [2.1581, 2.002, 1.5068], atol=1e-4)
    np.testing.assert_allclose(iv[:, 100:600], wav[:, 100:600], atol=1e-6)
    np.testing.assert_allclose(g[0, 300:303], [-0.8946, -1.5388, -1.1374], atol=1e-4)
    np.testing.assert_allclose(losses, [13.98108, 12.27633, 10.785621], rtol=1e-5)


def _mu_law_encode(audio, channels):
    with tf.name_scope("encode"):
        mu = tf.to_float(channels - 1)
        magnitude = tf.log1p(mu * tf.minimum(tf.abs(audio), 1.0)) / tf.log1p(mu)
        return tf.to_int32((tf.sign(audio) * magnitude + 1) / 2 * mu + 0.5)


def _causal_conv(value, filter_, dilation):
    """ibab's causal_conv: time_to_batch, a VALID conv1d, batch_to_time, a slice."""
    with tf.name_scope("causal_conv"):
        width = tf.shape(filter_)[0]
        if dilation > 1:
            shape = tf.shape(value)
            pad = dilation - 1 - (shape[1] + dilation - 1) % dilation
            x = tf.pad(value, [[0, 0], [0, pad], [0, 0]])
            x = tf.transpose(tf.reshape(x, [-1, dilation, shape[2]]), perm=[1, 0, 2])
            x = tf.reshape(x, [shape[0] * dilation, -1, shape[2]])
            x = tf.nn.conv1d(x, filter_, stride=1, padding="VALID")
            shape = tf.shape(x)
            x = tf.transpose(tf.reshape(x, [dilation, -1, shape[2]]), perm=[1, 0, 2])
            x = tf.reshape(x, [tf.div(shape[0], dilation), -1, shape[2]])
        else:
            x = tf.nn.conv1d(value, filter_, stride=1, padding="VALID")
        out = tf.slice(x, [0, 0, 0], [-1, tf.shape(value)[1] - (width - 1) * dilation, -1])
        out.set_shape([value.shape[0], None, filter_.shape[-1]])
        return out


def test_wavenet_with_causal_dilated_convs_gated_units_and_skips():
    with tf.Graph().as_default() as g:
        tf.set_random_seed(3)
        audio = tf.placeholder(tf.float32, [1, None, 1])
        onehot = tf.reshape(tf.one_hot(_mu_law_encode(audio, 16), 16), [1, -1, 16])
        w0 = tf.get_variable("w0", [2, 16, 8], initializer=tf.glorot_uniform_initializer(seed=1))
        x = _causal_conv(onehot, w0, 1)
        skips = []
        for i, d in enumerate([1, 2, 4]):
            with tf.variable_scope(f"layer{i}"):
                wf = tf.get_variable("filter", [2, 8, 8],
                                     initializer=tf.glorot_uniform_initializer(seed=10 + i))
                wg = tf.get_variable("gate", [2, 8, 8],
                                     initializer=tf.glorot_uniform_initializer(seed=20 + i))
                out = tf.tanh(_causal_conv(x, wf, d)) * tf.sigmoid(_causal_conv(x, wg, d))
                dense = tf.layers.conv1d(out, 8, 1, padding="same", name="dense",
                                         kernel_initializer=tf.glorot_uniform_initializer(
                                             seed=30 + i))
                skips.append(tf.layers.conv1d(
                    out, 8, 1, name="skip", use_bias=False,
                    kernel_initializer=tf.glorot_uniform_initializer(seed=40 + i)))
                cut = tf.shape(x)[1] - tf.shape(dense)[1]
                x = tf.slice(x, [0, cut, 0], [-1, -1, -1]) + dense
                assert x.shape.as_list() == [1, None, 8]  # begin [0, cut, 0] keeps batch 1
        width = tf.shape(skips[-1])[1]
        total = sum(tf.slice(s, [0, tf.shape(s)[1] - width, 0], [-1, -1, -1]) for s in skips)
        n = len(g.get_operations())
        logits = tf.layers.conv1d(tf.nn.relu(total), 16, 2, padding="causal", dilation_rate=2,
                                  name="postprocess",
                                  kernel_initializer=tf.glorot_uniform_initializer(seed=5))
        assert _names(g, n, ("Pad", "SpaceToBatchND", "Conv2D", "BatchToSpaceND")) == [
            "postprocess/Pad", "postprocess/Conv1D/SpaceToBatchND", "postprocess/Conv1D",
            "postprocess/Conv1D/BatchToSpaceND"]
        conv = tf.nn.convolution(total, tf.ones([3, 8, 2]) * 0.1, padding="VALID",
                                 dilation_rate=[2])
        assert (conv.op.name, conv.shape.as_list()) == ("convolution/BatchToSpaceND", [1, None, 2])
        target = tf.slice(onehot, [0, tf.shape(onehot)[1] - tf.shape(logits)[1], 0],
                          [-1, -1, -1])
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(
            logits=tf.reshape(logits, [-1, 16]), labels=tf.reshape(target, [-1, 16])))
        train = tf.train.AdamOptimizer(0.01).minimize(loss)
        wav = np.clip(0.6 * np.sin(np.arange(40) * 0.3)
                      + 0.05 * np.random.RandomState(2).randn(40), -1, 1)
        feed = {audio: wav.astype(np.float32).reshape(1, -1, 1)}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            c = sess.run(conv, feed)
            losses = [sess.run([loss, train], feed)[0] for _ in range(4)]
    assert c.shape == (1, 28, 2)
    np.testing.assert_allclose(losses, [2.803923, 2.7017972, 2.6190894, 2.5354555], rtol=1e-5)


def test_seq2seq_forecaster_on_a_windowed_dataset_after_a_one_shot_iterator():
    series = (np.sin(np.arange(40, dtype=np.float32) * 0.35)
              + 0.1 * np.cos(np.arange(40, dtype=np.float32) * 1.3))
    with tf.Graph().as_default():
        tf.set_random_seed(11)
        ds = tf.data.Dataset.from_tensor_slices(series).window(9, shift=2, drop_remainder=True)
        ds = ds.flat_map(lambda w: w.batch(9))
        ds = ds.map(lambda w: (tf.reshape(w[:6], [6, 1]), tf.reshape(w[6:], [3, 1])))
        xb, yb = tf.data.make_one_shot_iterator(
            ds.batch(4, drop_remainder=True).repeat()).get_next()
        assert (xb.shape.as_list(), yb.shape.as_list()) == ([4, 6, 1], [4, 3, 1])
        enc = tf.unstack(xb, axis=1)
        expected = tf.unstack(yb, axis=1)
        dec = [tf.zeros_like(enc[0], dtype=np.float32, name="GO"), *expected[:-1]]
        cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.GRUCell(8) for _ in range(2)])
        outputs, _ = tf.contrib.legacy_seq2seq.basic_rnn_seq2seq(enc, dec, cell)
        assert outputs[-1].op.name == \
            "basic_rnn_seq2seq/rnn_decoder/rnn_decoder/multi_rnn_cell/cell_1/gru_cell/add_2"
        w_out = tf.Variable(tf.random_normal([8, 1], seed=1))
        b_out = tf.Variable(tf.random_normal([1], seed=2))
        scale = tf.Variable(1.0, name="Output_ScaleFactor")
        preds = [scale * (tf.matmul(o, w_out) + b_out) for o in outputs]
        output_loss = tf.reduce_mean([tf.reduce_mean(tf.nn.l2_loss(p - e))
                                      for p, e in zip(preds, expected)])
        reg = sum(tf.reduce_mean(tf.nn.l2_loss(v)) for v in tf.trainable_variables()
                  if "Output_" not in v.name)
        loss = output_loss + 0.003 * reg
        train = tf.train.RMSPropOptimizer(0.01, decay=0.92, momentum=0.5).minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            losses = [sess.run([loss, train])[0] for _ in range(5)]
    # the GRUs' seedless initializers come after the iterator's op seed, as in TensorFlow
    np.testing.assert_allclose(losses, [0.94546, 1.12274, 1.18321, 0.98385, 0.95271],
                               atol=2e-5)


def test_wav_encoding_decoding_channels_spectrogram_and_mfcc_attributes():
    st = np.clip(np.random.RandomState(7).randn(50, 2) * 0.7, -1.5, 1.5).astype(np.float32)
    with tf.Graph().as_default():
        with tf.Session() as sess:
            data = sess.run(tf.audio.encode_wav(st, 16000))
        assert (len(data), data[20:24].hex(), data[40:44].hex()) == (244, "01000200", "c8000000")
        blob = tf.constant(data)
        d1 = tf.audio.decode_wav(blob)
        d2 = tf.audio.decode_wav(blob, desired_channels=1, desired_samples=60)
        d3 = tf.audio.decode_wav(blob, desired_channels=3, desired_samples=20)
        assert (type(d1).__name__, d1._fields) == ("DecodeWav", ("audio", "sample_rate"))
        assert (d1.audio.shape.as_list(), d2.audio.shape.as_list(), d3.audio.shape.as_list()) \
            == ([None, None], [60, 1], [20, 3])
        spec = tf.raw_ops.AudioSpectrogram(input=d2.audio, window_size=16, stride=8,
                                           magnitude_squared=False)
        mfcc = tf.raw_ops.Mfcc(spectrogram=spec, sample_rate=d2.sample_rate,
                               upper_frequency_limit=6000.0, lower_frequency_limit=40.0,
                               filterbank_channel_count=12, dct_coefficient_count=5)
        with tf.Session() as sess:
            a1, a2, a3, sp, mm = sess.run([d1.audio, d2.audio, d3.audio, spec, mfcc])
    np.testing.assert_allclose(a1[:2], [[1.0, -0.3261], [0.023, 0.2852]], atol=1e-4)
    assert (a1.max(), a1.min()) == (np.float32(32767 / 32768), -1.0)
    np.testing.assert_allclose(a2[-12:-8, 0], [1.0, -0.2395, 0.0, 0.0], atol=1e-4)
    np.testing.assert_allclose(a3[:2], [[1.0, -0.3261, -0.3261], [0.023, 0.2852, 0.2852]],
                               atol=1e-4)
    np.testing.assert_allclose(sp[0, 0, :4], [1.3353, 1.1115, 0.8937, 1.1876], atol=1e-4)
    np.testing.assert_allclose(mm[0, :2], [[-47.3914, -31.9719, -10.2101, -5.7832, -8.951],
                                           [-46.143, -32.31, -10.6901, -5.4856, -9.2844]],
                               atol=2e-3)


def test_stacked_bidirectional_grus_with_ctc_and_a_null_label():
    with tf.Graph().as_default():
        tf.set_random_seed(21)
        feats = tf.placeholder(tf.float32, [None, None, 6])
        lens = tf.placeholder(tf.int32, [None])
        labels = tf.sparse_placeholder(tf.int32)
        fw = [tf.nn.rnn_cell.GRUCell(5, kernel_initializer=tf.orthogonal_initializer(seed=i))
              for i in range(2)]
        bw = [tf.nn.rnn_cell.GRUCell(5) for _ in range(2)]
        out, _, sbw = tf.contrib.rnn.stack_bidirectional_dynamic_rnn(
            fw, bw, feats, sequence_length=lens, dtype=tf.float32)
        assert (out.op.name, out.shape.as_list(), sbw[0].shape.as_list()) == (
            "stack_bidirectional_rnn/cell_1/concat", [None, None, 10], [None, 5])
        logits = tf.layers.dense(out, 4, name="proj")
        loss = tf.reduce_mean(tf.nn.ctc_loss(labels, tf.transpose(logits, [1, 0, 2]), lens,
                                             preprocess_collapse_repeated=True))
        loss_bm = tf.reduce_mean(tf.nn.ctc_loss(labels, logits, lens, time_major=False))
        train = tf.train.MomentumOptimizer(0.05, 0.9, use_nesterov=True).minimize(loss)
        decoded, _ = tf.nn.ctc_greedy_decoder(tf.transpose(logits, [1, 0, 2]), lens)
        ler = tf.reduce_mean(tf.edit_distance(tf.cast(decoded[0], tf.int32), labels))
        # sequence 1's labels are [3, 3]: 3 is the blank, a null label ending the sequence
        feed = {feats: np.random.RandomState(4).randn(3, 8, 6).astype(np.float32),
                lens: [8, 6, 3],
                labels: tf.SparseTensorValue([[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [2, 0]],
                                             [1, 1, 2, 3, 3, 2], [3, 3])}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            steps = [sess.run([loss, loss_bm, train], feed)[:2] for _ in range(3)]
            o, rate = sess.run([out, ler], feed)
    np.testing.assert_allclose(steps, [[5.2350955, 5.2254004], [3.8492146, 4.0389857],
                                       [2.5857756, 3.0497167]], rtol=1e-5)
    np.testing.assert_allclose(o[2, 2, :5], [-0.0665, 0.336, 0.1157, 0.1322, 0.2662], atol=1e-4)
    assert not o[2, 3:].any()  # past its length
    assert rate == 1.0


def test_activity_recognition_lstm_on_split_static_rnn_steps():
    rng = np.random.RandomState(1)
    data = rng.randn(12, 6, 9).astype(np.float32)
    onehot = np.eye(4, dtype=np.float32)[rng.randint(0, 4, 12)]
    with tf.Graph().as_default():
        tf.set_random_seed(8)
        x = tf.placeholder(tf.float32, [None, 6, 9])
        y = tf.placeholder(tf.float32, [None, 4])
        w_hidden = tf.Variable(tf.random_normal([9, 8]))
        w_out = tf.Variable(tf.random_normal([8, 4], mean=1.0))
        b_hidden = tf.Variable(tf.random_normal([8]))
        b_out = tf.Variable(tf.random_normal([4]))
        steps = tf.reshape(tf.transpose(x, [1, 0, 2]), [-1, 9])
        steps = tf.split(tf.nn.relu(tf.matmul(steps, w_hidden) + b_hidden), 6, 0)
        cells = tf.nn.rnn_cell.MultiRNNCell(
            [tf.nn.rnn_cell.BasicLSTMCell(8, forget_bias=1.0) for _ in range(2)])
        outputs, states = tf.nn.static_rnn(cells, steps, dtype=tf.float32)
        assert outputs[-1].op.name == states[1].h.op.name == \
            "rnn/rnn/multi_rnn_cell/cell_1/basic_lstm_cell/Mul_17"
        pred = tf.matmul(outputs[-1], w_out) + b_out
        l2 = 0.0015 * sum(tf.nn.l2_loss(v) for v in tf.trainable_variables())
        cost = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=pred)) + l2
        train = tf.train.AdamOptimizer(learning_rate=0.0025).minimize(cost)
        accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(pred, 1), tf.argmax(y, 1)),
                                          tf.float32))
        with tf.Session() as sess:
            tf.global_variables_initializer().run()
            runs = [sess.run([train, cost, accuracy], {x: data[i % 3 * 4:i % 3 * 4 + 4],
                                                       y: onehot[i % 3 * 4:i % 3 * 4 + 4]})[1:]
                    for i in range(4)]
            final = sess.run([accuracy, cost], {x: data, y: onehot})
    np.testing.assert_allclose(runs, [[3.13498, 0.0], [2.40847, 0.25], [2.74374, 0.0],
                                      [2.93848, 0.0]], atol=1e-5)
    np.testing.assert_allclose(final, [1 / 12, 2.5960255], rtol=1e-6)


# -- focused regressions -----------------------------------------------------------------
def test_contrib_module_paths_import_as_views_of_the_namespace():
    from flowgraph.contrib.framework.python.ops import audio_ops
    from flowgraph.contrib.layers.python.layers import initializers
    from flowgraph.contrib.rnn.python.ops.rnn import stack_bidirectional_dynamic_rnn
    from flowgraph.contrib.signal.python.ops import mel_ops, spectral_ops

    assert audio_ops.decode_wav is not None and audio_ops.mfcc is not None
    assert spectral_ops.stft is tf.signal.stft and tf.contrib.signal.stft is tf.signal.stft
    assert mel_ops.linear_to_mel_weight_matrix is tf.signal.linear_to_mel_weight_matrix
    assert initializers.xavier_initializer is tf.contrib.layers.xavier_initializer
    assert stack_bidirectional_dynamic_rnn is tf.contrib.rnn.stack_bidirectional_dynamic_rnn
    gru = tf.nn.rnn_cell.GRUCell(2)
    wrapped = tf.nn.rnn_cell.DropoutWrapper(gru)
    assert wrapped.cell is wrapped.wrapped_cell is gru  # TF 2.15's wrappers have both
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("flowgraph.contrib.framework.python.ops.no_such_ops")


def test_unnamed_layers_and_cells_are_labelled_as_tensorflow_labels_them():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 4])
        layer = tf.layers.Dense(3)
        y = layer(x)
        assert (layer.name, layer.scope_name, y.name) == ("dense_1", "dense", "dense/BiasAdd:0")
        tf.layers.dense(x, 3)  # its layer takes dense_2
        names = [tf.layers.Dense(3).name, tf.layers.Dense(3, name="d").name,
                 tf.layers.BatchNormalization().name, tf.layers.Conv2D(2, 3).name,
                 tf.keras.layers.Dense(3).name, tf.layers.Dense(2).name,
                 tf.keras.layers.Dense(3).name]  # one counter, Keras zero-based
        assert names == ["dense_3", "d", "batch_normalization_1", "conv2d_1", "dense_3",
                         "dense_5", "dense_5"]
        rc = tf.nn.rnn_cell
        cells = [rc.LSTMCell(3), rc.LSTMCell(3), rc.GRUCell(2), rc.LSTMCell(3, name="fw")]
        multi = rc.MultiRNNCell([rc.GRUCell(2), rc.GRUCell(2)])
        dropout = rc.DropoutWrapper(rc.GRUCell(2))
        assert [c.name for c in cells] == ["lstm_cell_1", "lstm_cell_2", "gru_cell_1", "fw"]
        assert (multi.name, dropout.name, dropout.cell.name) == (
            "multi_rnn_cell_1", "dropout_wrapper_1", "gru_cell_4")
        with tf.variable_scope("enc"):
            cell = rc.GRUCell(2)
            tf.nn.dynamic_rnn(cell, tf.zeros([1, 2, 2]), dtype=tf.float32)
        assert cell.name == "gru_cell_5"
        assert cell.variables[0].name == "enc/rnn/gru_cell/gates/kernel:0"
    with tf.Graph().as_default():  # counters are per graph
        assert tf.nn.rnn_cell.LSTMCell(3).name == "lstm_cell_1"


def test_slice_with_size_minus_one_resolves_the_dimensions_whose_begin_is_known():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3, None, 8])
        y = tf.placeholder(tf.float32, [3, 5, 8])
        t = tf.placeholder(tf.int32, [])
        cases = {  # TensorFlow's static shapes
            (0, "a"): (tf.slice(x, [0, t, 0], [-1, -1, -1]), [3, None, 8]),
            (1, "b"): (tf.slice(x, [1, t, 2], [-1, -1, -1]), [2, None, 6]),
            (2, "c"): (tf.slice(x, [1, 0, 2], [-1, t, -1]), [None, None, None]),
            (3, "e"): (tf.slice(x, [1, t, 2], [t, -1, 3]), [None, None, 3]),
            (4, "f"): (tf.slice(x, tf.stack([1, t, 2]), [-1, 4, -1]), [2, 4, 6]),
            (5, "g"): (tf.slice(y, [1, t + 1, 2], [-1, -1, -1]), [2, None, 6]),
            (6, "i"): (tf.slice(y, tf.placeholder(tf.int32, [3]), [-1, 2, -1]),
                       [None, 2, None]),
        }
        for key, (sliced, shape) in cases.items():
            assert sliced.shape.as_list() == shape, key
        with tf.Session() as sess:
            value = sess.run(cases[(1, "b")][0], {x: np.ones([3, 4, 8]), t: 1})
    assert value.shape == (2, 3, 6)


def test_dilated_convolutions_go_through_space_to_batch_as_tensorflow():
    with tf.Graph().as_default() as g:
        xs = tf.placeholder(tf.float32, [2, 9, 3])
        n = len(g.get_operations())
        same = tf.nn.convolution(xs, tf.ones([3, 3, 4]) * 0.5, "SAME", dilation_rate=[2])
        assert _names(g, n, ("SpaceToBatchND", "Conv2D", "Squeeze", "BatchToSpaceND")) == [
            "convolution/SpaceToBatchND", "convolution", "convolution/Squeeze",
            "convolution/BatchToSpaceND"]
        plain = tf.nn.conv1d(xs, tf.ones([3, 3, 4]), 1, "SAME", dilations=2)
        assert plain.op.name == "conv1d/Squeeze"  # tf.nn.conv1d keeps the dilated Conv2D
        layer = tf.layers.conv1d(xs, 4, 3, dilation_rate=3, padding="same")
        assert layer.op.inputs[0].op.name == "conv1d_1/Conv1D/BatchToSpaceND"
        img = tf.layers.conv2d(tf.placeholder(tf.float32, [2, 9, 7, 3]), 4, 3, dilation_rate=2,
                               padding="same")
        assert (img.op.inputs[0].op.name, img.shape.as_list()) == (
            "conv2d/Conv2D/BatchToSpaceND", [2, 9, 7, 4])
        data = np.arange(54, dtype=np.float32).reshape(2, 9, 3)
        grad = tf.gradients(tf.reduce_sum(same * same), xs)[0]
        with tf.Session() as sess:
            value, g1, dense = sess.run([same, grad, plain], {xs: data})
    np.testing.assert_allclose(value[0, :, 0], [12.0, 21.0, 31.5, 45.0, 58.5, 72.0, 85.5, 57.0,
                                                66.0])
    np.testing.assert_allclose(value, dense * 0.5, rtol=1e-6)
    assert g1.shape == (2, 9, 3)


def test_windows_overlap_and_add_and_mel_matrix_are_built_as_tensorflow():
    with tf.Graph().as_default() as g:
        n = len(g.get_operations())
        hann = tf.signal.hann_window(8)
        assert [o.name for o in g.get_operations()[n:n + 6]] == [
            "hann_window/window_length", "hann_window/periodic", "hann_window/Cast",
            "hann_window/mod/y", "hann_window/mod", "hann_window/sub/x"]
        one = tf.signal.hann_window(1)
        length = tf.placeholder(tf.int32, [])
        dynamic = tf.signal.hamming_window(length, periodic=False)
        frames = tf.placeholder(tf.float32, [None, 5, 7])
        ola = tf.signal.overlap_and_add(frames, 3)
        fast = tf.signal.overlap_and_add(tf.ones([3, 8]), 8)
        assert (one.op.name, ola.op.name, fast.op.name) == (
            "hann_window_1/ones", "overlap_and_add/strided_slice_4", "overlap_and_add_1/fast_path")
        assert (ola.shape.as_list(), fast.shape.as_list()) == ([None, 19], [24])
        with pytest.raises(ValueError, match="floating point"):
            tf.signal.hann_window(4, dtype=tf.int32)
        mfccs = tf.signal.mfccs_from_log_mel_spectrograms(tf.ones([2, 11, 9]))
        assert mfccs.op.name == "mfccs_from_log_mel_spectrograms/mul_1"
        x = np.random.RandomState(0).randn(2, 5, 7).astype(np.float32)
        grad = tf.gradients(tf.reduce_sum(ola * tf.range(19, dtype=tf.float32)), frames)[0]
        with tf.Session() as sess:
            h, w, o, gr = sess.run([hann, dynamic, ola, grad], {length: 5, frames: x})
    np.testing.assert_allclose(h, 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(8) / 8), atol=1e-6)
    np.testing.assert_allclose(w, 0.54 - 0.46 * np.cos(2 * np.pi * np.arange(5) / 4), atol=1e-6)
    ref = np.zeros((2, 19), np.float32)
    for f in range(5):
        ref[:, 3 * f:3 * f + 7] += x[:, f]
    np.testing.assert_allclose(o, ref, atol=1e-5)
    np.testing.assert_allclose(gr, np.broadcast_to(
        [np.arange(3 * f, 3 * f + 7) for f in range(5)], (2, 5, 7)))


def test_a_one_shot_iterator_draws_an_op_seed_and_windows_are_nested_datasets():
    def first_init(make_iterator):
        with tf.Graph().as_default():
            tf.set_random_seed(11)
            ds = tf.data.Dataset.from_tensor_slices(np.arange(4.0))
            make_iterator(ds)
            v = tf.get_variable("v", [3], initializer=tf.glorot_uniform_initializer())
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                return sess.run(v)

    np.testing.assert_allclose(first_init(tf.data.make_one_shot_iterator),
                               [0.2457, -0.5571, 0.2306], atol=1e-4)
    np.testing.assert_allclose(first_init(tf.data.make_initializable_iterator),
                               [0.5531, 0.7976, -0.7962], atol=1e-4)
    windows = tf.data.Dataset.from_tensor_slices(np.arange(4.0, dtype=np.float32)).window(2)
    spec = tf.data.DatasetSpec(tf.TensorSpec([], tf.float32))
    assert windows.element_spec == spec
    assert tf.data.get_output_types(windows) == spec
    assert tf.data.get_output_shapes(windows) == spec


def test_ctc_null_labels_end_a_sequence_and_all_null_ones_get_tensorflows_loss():
    rng = np.random.RandomState(0)
    logits = tf.constant(rng.randn(6, 5, 4).astype(np.float32))

    def sparse(rows):
        idx = [[b, i] for b, r in enumerate(rows) for i in range(len(r))]
        vals = [v for r in rows for v in r]
        return tf.SparseTensor(idx, tf.constant(vals, tf.int32),
                               [len(rows), max(len(r) for r in rows)])

    rows = [[1, 1, 2], [3, 3], [3], [0, 3], [2, 3, 3]]  # 3 is the blank (4 classes)
    expected = {(False, True): [4.6147, 9.3461, 5.411, 5.082, 7.807],
                (False, False): [4.8874, 9.3461, 5.411, 5.9753, 8.8655],
                (True, True): [4.5129, 9.3461, 5.411, 5.082, 7.807],
                (True, False): [5.5436, 9.3461, 5.411, 5.9753, 8.8655]}
    with tf.Session() as sess:
        for (collapse, merge), want in expected.items():
            loss = tf.nn.ctc_loss(sparse(rows), logits, [6] * 5,
                                  preprocess_collapse_repeated=collapse,
                                  ctc_merge_repeated=merge)
            np.testing.assert_allclose(sess.run(loss), want, atol=1e-4)
        lg = tf.constant(np.random.RandomState(0).randn(6, 3, 4).astype(np.float32))
        nulls = tf.SparseTensor([[0, 0], [1, 0], [2, 0]], tf.constant([1, 5, 3], tf.int32),
                                [3, 1])
        loss = tf.nn.ctc_loss(nulls, lg, [6, 4, 6])
        value, grad = sess.run([loss, tf.gradients(tf.reduce_sum(loss), lg)[0]])
        np.testing.assert_allclose(value, [6.7524, 6.7228, 5.6281], atol=1e-4)
        np.testing.assert_allclose(grad[:, 2], [
            [0.115, 0.1922, 0.1472, -0.4543], [0.0161, 0.3964, 0.4894, -0.9018],
            [0.1697, 0.0569, 0.2912, -0.5178], [0.162, 0.174, 0.0771, -0.4131],
            [0.293, 0.3709, 0.1454, -0.8093], [0.0865, 0.2257, 0.4441, 0.0478]], atol=1e-4)
        np.testing.assert_allclose(grad[3, 1], [0.0449, 0.031, 0.0233, 0.427], atol=1e-4)
        assert not grad[4:, 1].any()
        with pytest.raises(tf.errors.InvalidArgumentError, match="after a null label"):
            sess.run(tf.nn.ctc_loss(sparse([[0, 3, 1]]), logits[:, :1], [6]))
        empty = tf.SparseTensor(np.zeros([0, 2], np.int64), tf.constant([], tf.int32), [1, 1])
        with pytest.raises(tf.errors.InvalidArgumentError, match="labels length is zero"):
            sess.run(tf.nn.ctc_loss(empty, logits[:, :1], [6]))


def test_decode_wav_checks_its_attributes_and_truncated_files():
    with tf.Graph().as_default():
        with tf.Session() as sess:
            data = sess.run(tf.audio.encode_wav(np.zeros([5, 2], np.float32), 8000))
        for kw, what in ((dict(desired_samples=-3), "desired_samples"),
                         (dict(desired_channels=-2), "desired_channels")):
            with pytest.raises(ValueError, match=f"{what} must be non-negative"):
                tf.audio.decode_wav(tf.constant(data), **kw)
        none = tf.audio.decode_wav(tf.constant(data), desired_channels=0)
        assert none.audio.shape.as_list() == [None, 0]
        with tf.Session() as sess:
            assert sess.run(none.audio).shape == (5, 0)
            for bad, message in ((data[:30], "cut short"), (data[:50], "cut short"),
                                 (data + b"xyz", "too few for a chunk header"),
                                 (b"RIFFxxxx", "not a RIFF/WAVE")):
                with pytest.raises(tf.errors.InvalidArgumentError, match=message):
                    sess.run(tf.audio.decode_wav(tf.constant(bad)))
