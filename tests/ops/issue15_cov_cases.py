"""Registry-wide cases for the scatter, linear-algebra and diagonal ops added for TF1 API
coverage (issue 15): `GRADIENT_CASES` merge into `test_gradient_registry.CASES` (and
through it into the op contract); `CONTRACT_CASES` are contract-only
``(inputs, build, options)`` cases for the ops without a gradient.

Matrix cases reshape their input to a constant shape first, so the gradients (which need
the matrix rank) also build in the checker's unknown-shape runs; the contract test builds
the forward ops on unknown shapes through its own cases.
"""

from __future__ import annotations

import os
import tempfile
import zlib

import numpy as np

import flowgraph as tf
from flowgraph.ops.linalg_expm import expm as _raw_expm

R = np.random.RandomState(1516)
SETUP = "op_contract_setup"


def _u(*shape, low=-1.0, high=1.0):
    return R.uniform(low, high, size=shape)


def _f32(x):
    return tf.cast(x, tf.float32)


def _c(*shape):
    return _u(*shape) + 1j * _u(*shape)


def _spd(x, n):
    """A symmetric positive-definite n x n matrix built from the n*n entries of x."""
    a = tf.reshape(x, [n, n])
    return tf.matmul(a, a, transpose_b=True) + n * tf.eye(n, dtype=x.dtype)


def _well(x, shape):
    """x reshaped to `shape` plus a multiple of the identity: well conditioned."""
    n = shape[-1]
    return tf.reshape(x, shape) + 3.0 * tf.eye(n, dtype=x.dtype)


def _sym(x, n):
    a = tf.reshape(x, [n, n])
    return a + tf.transpose(a)


def _spread(x):
    """A symmetric 3 x 3 matrix with well-separated eigenvalues."""
    return _sym(x, 3) + tf.diag(tf.constant([0.0, 3.0, 6.0], x.dtype))


_IDX = np.array([[0, 1], [2, 0]], np.int32)

GRADIENT_CASES = {
    "TensorScatterUpdate": [([_u(3, 2), _u(2, 2)],
                             lambda t, u: tf.tensor_scatter_nd_update(t, [[2], [0]], u))],
    "TensorScatterAdd": [([_u(3, 2), _u(2)],
                          lambda t, u: tf.tensor_scatter_nd_add(t, _IDX, u * u))],
    "TensorScatterSub": [([_u(4), _u(3)],
                          lambda t, u: tf.tensor_scatter_nd_sub(t, [[3], [1], [3]], u))],
    "TensorScatterMax": [([np.array([0.1, -0.5, 0.7]), np.array([0.4, -0.9])],
                          lambda t, u: tf.tensor_scatter_nd_max(t, [[0], [1]], u))],
    "TensorScatterMin": [([np.array([0.1, -0.5, 0.7]), np.array([0.4, -0.9])],
                          lambda t, u: tf.tensor_scatter_nd_min(t, [[2], [1]], u))],
    "Cholesky": [([_u(9)], lambda x: tf.cholesky(_spd(x, 3)))],
    # the raw op: tf.linalg.expm is TensorFlow's Padé graph of ordinary ops
    "MatrixExponential": [([_u(2, 3, 3) * 0.5],
                           lambda x: _raw_expm(tf.reshape(x, [2, 3, 3])))],
    "MatrixInverse": [([_u(2, 3, 3) * 0.5], lambda x: tf.matrix_inverse(_well(x, [2, 3, 3]))),
                      ([_u(9) * 0.5], lambda x: tf.matrix_inverse(_well(x, [3, 3]),
                                                                  adjoint=True))],
    "MatrixDeterminant": [([_u(2, 3, 3) * 0.5],
                           lambda x: tf.matrix_determinant(_well(x, [2, 3, 3])))],
    "LogMatrixDeterminant": [([_u(9) * 0.5],
                              lambda x: tf.linalg.slogdet(_well(x, [3, 3]))[1])],
    "MatrixSolve": [([_u(9) * 0.5, _u(3, 2)],
                     lambda a, b: tf.matrix_solve(_well(a, [3, 3]), tf.reshape(b, [3, 2]))),
                    ([_u(9) * 0.5, _u(3, 2)],
                     lambda a, b: tf.matrix_solve(_well(a, [3, 3]), tf.reshape(b, [3, 2]),
                                                  adjoint=True))],
    "MatrixTriangularSolve": [
        ([_u(9) * 0.5, _u(3, 2)], lambda a, b: tf.matrix_triangular_solve(
            _well(a, [3, 3]), tf.reshape(b, [3, 2]))),
        ([_u(9) * 0.5, _u(3, 2)], lambda a, b: tf.matrix_triangular_solve(
            _well(a, [3, 3]), tf.reshape(b, [3, 2]), lower=False, adjoint=True))],
    "Qr": [([_u(12)], lambda x: tf.qr(tf.reshape(x, [4, 3]))[0]),
           ([_u(9)], lambda x: tf.qr(tf.reshape(x, [3, 3]))[1])],
    "Svd": [([_u(12)], lambda x: tf.svd(tf.reshape(x, [4, 3]), compute_uv=False))],
    "SelfAdjointEigV2": [
        ([_u(9)], lambda x: tf.self_adjoint_eigvals(_spread(x))),
        ([_u(9)], lambda x: tf.abs(tf.self_adjoint_eig(_spread(x))[1]))],
    "MatrixBandPart": [([_u(2, 3, 4)], lambda x: tf.matrix_band_part(x, 1, 0))],
    # the V1 op types (tf.matrix_diag and its kin emit the V3 ones, as TensorFlow 2.15)
    "MatrixDiag": [([_u(2, 3)], lambda d: tf.raw_ops.MatrixDiag(diagonal=d))],
    "MatrixDiagPart": [([_u(2, 3, 4)], lambda x: tf.raw_ops.MatrixDiagPart(input=x))],
    "MatrixSetDiag": [([_u(2, 4, 3), _u(2, 3)], lambda x, d: tf.raw_ops.MatrixSetDiag(
        input=x, diagonal=d))],
    "Diag": [([_u(2, 3)], tf.diag)],
    "DiagPart": [([_u(2, 3, 2, 3)], tf.diag_part)],
    "Cross": [([_u(2, 3), _u(2, 3)], tf.cross)],
    "Roll": [([_u(3, 4)], lambda x: tf.roll(x, [1, -2], [0, 1]))],
    "SpaceToBatchND": [([_u(2, 3, 4, 1)], lambda x: tf.space_to_batch_nd(
        x, [2, 2], [[1, 0], [0, 0]]))],
    "BatchToSpaceND": [([_u(4, 2, 3, 1)], lambda x: tf.batch_to_space_nd(
        x, [2, 2], [[0, 1], [1, 0]]))],
    "Complex": [([_u(2, 3), _u(3)], lambda a, b: tf.abs(tf.complex(a, b)) ** 2)],
    "Real": [([_c(2, 3)], lambda z: tf.real(z * z))],
    "Imag": [([_c(2, 3)], lambda z: tf.imag(z * z))],
    "Angle": [([_c(4) + 2.0], tf.angle)],
    "FFT": [([_c(2, 4)], lambda z: tf.abs(tf.fft(z)))],
    "IFFT": [([_c(3)], lambda z: tf.real(tf.ifft(z * z)))],
    "FFT2D": [([_c(2, 3, 2)], lambda z: tf.real(tf.fft2d(z)) + tf.imag(tf.fft2d(z)))],
    "IFFT2D": [([_c(3, 2)], lambda z: tf.abs(tf.ifft2d(z)))],
    "FFT3D": [([_c(2, 2, 3)], lambda z: tf.imag(tf.fft3d(z)))],
    "IFFT3D": [([_c(1, 2, 2, 2)], lambda z: tf.real(tf.ifft3d(z)))],
    # The straight-through gradient of fake quantization equals the derivative only where
    # the output is flat outside the range (zero); the oracle test checks the rest.
    "FakeQuantWithMinMaxArgs": [([np.array([-3.0, 2.5, -2.2])],
                                 lambda x: tf.fake_quant_with_min_max_args(_f32(x), -1.0, 1.0))],
    "FakeQuantWithMinMaxVars": [([np.array([-3.0, 2.5])], lambda x: tf.
                                 fake_quant_with_min_max_vars(_f32(x), -1.0, 1.0))],
    "FakeQuantWithMinMaxVarsPerChannel": [
        ([np.array([[-3.0, 2.5], [4.0, -1.5]])],
         lambda x: tf.fake_quant_with_min_max_vars_per_channel(_f32(x), [-1.0, -1.0],
                                                               [1.0, 1.0]))],
    "IdentityN": [([_u(2), _u(3, 1)], lambda a, b: tf.identity_n([a * 2.0, b])[0]
                   + tf.reduce_sum(tf.identity_n([a, b * b])[1]))],
}


def _variable_case(fn, indices, updates, value=None):
    def build():
        v = tf.Variable(np.arange(12.0).reshape(4, 3) + 1.0 if value is None else value,
                        name="scattered")
        tf.add_to_collection(SETUP, v.initializer)
        return fn(v, indices, updates)

    return build


_ROWS = np.array([3, 0, 3], np.int64)
_ROW_UPD = R.uniform(1.0, 2.0, size=(3, 3))

VALUE_DEPENDENT = {"ListDiff", "UniqueWithCounts", "BroadcastArgs", "ComputeAccidentalHits",
                   "CTCBeamSearchDecoder", "DecodeRaw", "ParseTensor", "ReaderReadUpToV2",
                   "SparseToSparseSetOperation", "SetSize", "EditDistance", "DecodeWav",
                   "SerializeManySparse", "DeserializeManySparse"}
_S = np.array([[b" Ab1 ", b"x"], [b"yZ", b"22 "]], object)
_FILES = tempfile.mkdtemp(prefix="issue15_cov_cases_")
with open(os.path.join(_FILES, "f.bin"), "wb") as _f:
    _f.write(b"\x00\x01")
_LABELS = np.array([[1, 4], [7, 0]], np.int64)

with open(os.path.join(_FILES, "lines.txt"), "w") as _f:
    _f.write("a\nbb\nccc\n")


def _reader_case(make, read="read"):
    def build():
        path = os.path.join(_FILES, "lines.txt")
        queue = tf.FIFOQueue(8, tf.string)
        tf.add_to_collection(SETUP, queue.enqueue_many([[path, path]]))
        reader = make()
        if read == "read":
            return reader.read(queue)
        if read == "up_to":
            return reader.read_up_to(queue, 2)
        key, _ = reader.read(queue)
        with tf.control_dependencies([key]):
            return [reader.num_records_produced(), reader.num_work_units_completed(),
                    reader.reset()]

    return build


_U = np.array([b"h\xc3\xa9", b"w"], object)
CONTRACT_CASES = {
    # the number of characters depends on the bytes; unicode_decode/encode need the rank
    "UnicodeDecode": [([_U], lambda s: tf.strings.unicode_decode(s, "UTF-8").values,
                       {"value_dependent": True, "modes": ("static", "batch", "dims")})],
    "UnicodeDecodeWithOffsets": [([_U], lambda s: tf.strings.unicode_decode_with_offsets(
        s, "UTF-8")[1].values, {"value_dependent": True,
                                "modes": ("static", "batch", "dims")})],
    "UnicodeEncode": [([np.array([[104, 233], [119, 120]], np.int32)],
                       lambda c: tf.strings.unicode_encode(c, "UTF-8"),
                       {"modes": ("static", "batch", "dims")})],
    "ReduceDataset": [([], lambda: tf.data.Dataset.from_tensor_slices(np.arange(4.0)).reduce(
        np.float64(0), lambda s, x: s + x), {})],
    "DatasetToSingleElement": [([], lambda: tf.data.experimental.get_single_element(
        tf.data.Dataset.from_tensors(np.arange(4.0))), {})],
    "DatasetCardinality": [([], lambda: tf.data.experimental.cardinality(
        tf.data.Dataset.range(5).batch(2)), {})],
    "UnicodeTranscode": [([_U], lambda s: tf.strings.unicode_transcode(s, "UTF-8",
                                                                       "UTF-16-BE"), {})],
    "StringToHashBucket": [([_S], lambda s: tf.string_to_hash_bucket(s, 10), {})],
    "StringToHashBucketStrong": [([_S], lambda s: tf.string_to_hash_bucket_strong(
        s, 10, key=[1, 2]), {})],
    "SerializeManySparse": [([], lambda: tf.serialize_many_sparse(
        tf.SparseTensor([[0, 1], [2, 0]], [1.5, 2.5], [3, 4])), {})],
    "DeserializeManySparse": [([], lambda: tf.deserialize_many_sparse(tf.serialize_many_sparse(
        tf.SparseTensor([[0, 1], [2, 0]], [1.5, 2.5], [3, 4])), tf.float32), {})],
    "DecodeJSONExample": [([np.array([b'{"features": {}}'], object)], tf.decode_json_example,
                           {})],
    "EncodeWav": [([_u(20, 2) * 0.5], lambda a: tf.audio.encode_wav(_f32(a), 8000), {})],
    "DecodeWav": [([_u(20, 2) * 0.5], lambda a: tf.audio.decode_wav(
        tf.audio.encode_wav(_f32(a), 8000)), {})],
    "SparseToSparseSetOperation": [([np.array([[1, 2], [3, 3]], np.int32),
                                     np.array([[2, 5], [4, 3]], np.int32)],
                                    lambda a, b: tf.sets.union(tf.sparse.from_dense(a),
                                                               tf.sparse.from_dense(b)), {})],
    "SetSize": [([], lambda: tf.sets.size(tf.SparseTensor([[0, 0], [0, 1]], [4, 4], [2, 2])),
                 {})],
    "EditDistance": [([], lambda: tf.edit_distance(
        tf.SparseTensor([[0, 0]], ["a"], [1, 1]), tf.SparseTensor([[0, 0]], ["b"], [1, 1])),
                      {})],
    "Fingerprint": [([np.arange(6, dtype=np.int32).reshape(2, 3)], tf.fingerprint, {}),
                    ([np.array([b"ab", b"c"], object)], tf.fingerprint, {})],
    "RandomPoissonV2": [([np.array([1.0, 4.0])], lambda r: tf.random_poisson(r, [3]), {})],
    "TFRecordReaderV2": [([], lambda: tf.TFRecordReader().reader_ref, {})],
    "TextLineReaderV2": [([], _reader_case(tf.TextLineReader), {})],
    "FixedLengthRecordReaderV2": [([], _reader_case(lambda: tf.FixedLengthRecordReader(2)),
                                   {})],
    "WholeFileReaderV2": [([], _reader_case(tf.WholeFileReader), {})],
    "IdentityReaderV2": [([], _reader_case(tf.IdentityReader), {})],
    "ReaderReadV2": [([], _reader_case(tf.TextLineReader), {})],
    "ReaderReadUpToV2": [([], _reader_case(tf.TextLineReader, "up_to"), {})],
    "ReaderNumRecordsProducedV2": [([], _reader_case(tf.TextLineReader, "counts"), {})],
    "ReaderNumWorkUnitsCompletedV2": [([], _reader_case(tf.TextLineReader, "counts"), {})],
    "ReaderResetV2": [([], _reader_case(tf.TextLineReader, "counts"), {})],
    "FakeQuantWithMinMaxArgsGradient": [([_u(2, 3), _u(2, 3)],
                                         lambda g, x: tf.fake_quant_with_min_max_args_gradient(
                                             _f32(g), _f32(x)), {})],
    "FakeQuantWithMinMaxVarsGradient": [
        ([_u(2, 3), _u(2, 3)],
         lambda g, x: tf.fake_quant_with_min_max_vars_gradient(_f32(g), _f32(x), -1.0, 1.0), {})],
    "FakeQuantWithMinMaxVarsPerChannelGradient": [
        ([_u(2, 3), _u(2, 3)], lambda g, x: tf.fake_quant_with_min_max_vars_per_channel_gradient(
            _f32(g), _f32(x), [-1.0] * 3, [1.0] * 3), {})],
    "StaticRegexReplace": [([_S], lambda s: tf.regex_replace(s, "[0-9]", "#"), {})],
    "StaticRegexFullMatch": [([_S], lambda s: tf.strings.regex_full_match(s, "[a-z]+"), {})],
    "StringStrip": [([_S], tf.string_strip, {})],
    "StringLower": [([_S], tf.strings.lower, {})],
    "StringUpper": [([_S], tf.strings.upper, {})],
    "EncodeBase64": [([_S], tf.encode_base64, {})],
    "DecodeBase64": [([np.array([b"aGk_", b""], object)], tf.decode_base64, {})],
    "DecodeCompressed": [([np.array([zlib.compress(b"ab")], object)],
                          lambda s: tf.decode_compressed(s, "ZLIB"), {})],
    "ReduceJoin": [([_S], lambda s: tf.reduce_join(s, axis=1), {}),
                   ([_S], lambda s: tf.reduce_join(s, axis=0, keep_dims=True), {})],
    "DecodeRaw": [([np.array([b"\x01\x00\x02\x00"], object)],
                   lambda s: tf.decode_raw(s, tf.int16), {})],
    "ReadFile": [([np.array(os.path.join(_FILES, "f.bin").encode(), object)], tf.read_file,
                  {})],
    "WriteFile": [([np.array(os.path.join(_FILES, "w.bin").encode(), object)],
                   lambda p: tf.write_file(p, "abc"), {})],
    "SerializeTensor": [([_u(2, 3)], tf.serialize_tensor, {})],
    "ParseTensor": [([], lambda: tf.parse_tensor(tf.serialize_tensor([1.5, 2.0]), tf.float32),
                     {})],
    "LowerBound": [([np.sort(_u(2, 5), axis=1), _u(2, 3)], tf.searchsorted, {})],
    "UpperBound": [([np.array([1, 3, 3, 5], np.int32), np.array([3, 0], np.int32)],
                    lambda s, v: tf.searchsorted(s, v, side="right"), {})],
    "ListDiff": [([np.array([1, 2, 3, 4], np.int64), np.array([2, 9], np.int64)],
                  tf.setdiff1d, {})],
    "UniqueWithCounts": [([np.array([3, 1, 3, 2], np.int32)], tf.unique_with_counts, {})],
    "UnravelIndex": [([np.array([1, 5], np.int32)], lambda i: tf.unravel_index(i, [2, 3]),
                      {}),
                     ([np.int64(4)], lambda i: tf.unravel_index(i, [2, 3]), {})],
    "Bitcast": [([np.arange(6, dtype=np.int32)], lambda x: tf.bitcast(x, tf.float32), {}),
                ([np.arange(6, dtype=np.int32).reshape(3, 2)],
                 lambda x: tf.bitcast(x, tf.float64), {}),
                ([np.arange(3, dtype=np.int32)], lambda x: tf.bitcast(x, tf.int16), {})],
    "BroadcastArgs": [([np.array([2, 1, 3], np.int32), np.array([4, 1], np.int32)],
                       tf.broadcast_dynamic_shape, {})],
    "Timestamp": [([], lambda: tf.timestamp(), {})],
    "UniformCandidateSampler": [([_LABELS], lambda t: tf.nn.uniform_candidate_sampler(
        t, 2, 5, True, 20), {})],
    "LogUniformCandidateSampler": [([_LABELS], lambda t: tf.nn.log_uniform_candidate_sampler(
        t, 2, 5, False, 20), {})],
    "LearnedUnigramCandidateSampler": [([_LABELS], lambda t: tf.nn.
                                        learned_unigram_candidate_sampler(t, 2, 3, True, 10),
                                        {})],
    "FixedUnigramCandidateSampler": [([_LABELS], lambda t: tf.nn.
                                      fixed_unigram_candidate_sampler(
                                          t, 2, 3, False, 10, unigrams=[1.0] * 10), {})],
    "AllCandidateSampler": [([_LABELS], lambda t: tf.nn.all_candidate_sampler(t, 2, 4, True),
                             {})],
    "ComputeAccidentalHits": [([_LABELS, np.array([4, 2, 7], np.int64)],
                               lambda t, s: tf.nn.compute_accidental_hits(t, s, 2), {})],
    "CTCBeamSearchDecoder": [([_u(5, 2, 4)], lambda x: tf.nn.ctc_beam_search_decoder(
        x, [5, 3], beam_width=3, top_paths=2), {})],
    "ScatterUpdate": [([], _variable_case(tf.scatter_update, _ROWS, _ROW_UPD), {})],
    "ScatterAdd": [([], _variable_case(tf.scatter_add, _ROWS, _ROW_UPD), {})],
    "ScatterSub": [([], _variable_case(tf.scatter_sub, [1], [[1.0, 2.0, 3.0]]), {})],
    "ScatterMul": [([], _variable_case(tf.scatter_mul, _ROWS, _ROW_UPD), {})],
    "ScatterDiv": [([], _variable_case(tf.scatter_div, _ROWS, _ROW_UPD), {})],
    "ScatterMin": [([], _variable_case(tf.scatter_min, _ROWS, _ROW_UPD), {})],
    "ScatterMax": [([], _variable_case(tf.scatter_max, _ROWS, _ROW_UPD), {})],
    "ScatterNdUpdate": [([], _variable_case(tf.scatter_nd_update, [[0, 1], [3, 2]],
                                            [5.0, 6.0]), {})],
    "ScatterNdAdd": [([], _variable_case(tf.scatter_nd_add, [[2]], [[5.0, 6.0, 7.0]]), {})],
    "ScatterNdSub": [([], _variable_case(tf.scatter_nd_sub, [[0, 1], [0, 1]],
                                         [5.0, 6.0]), {})],
    "AudioSummaryV2": [([_u(2, 40, 2)], lambda x: tf.summary.audio("clip", x, 8000), {})],
    "TensorScatterUpdate": [([np.arange(6, dtype=np.int32).reshape(3, 2)],
                             lambda t: tf.tensor_scatter_nd_update(t, [[1]], [[7, 8]]), {})],
}
