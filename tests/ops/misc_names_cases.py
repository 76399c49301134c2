"""Registry-wide cases for the TF1 misc-names ops (n-grams, scripts, segment joins, the
bincount family, dense set operations, ``tf.math.special``, ``SobolSample`` and the
mutable lookup tables): `GRADIENT_CASES` merge into `test_gradient_registry.CASES`,
`CONTRACT_CASES` are contract-only ``(inputs, build, options)`` cases for ops without a
gradient, in the format of `issue15_math_cases`."""

from __future__ import annotations

import numpy as np

import flowgraph as tf
from flowgraph.ops.op_util import make_op, make_tensor

R = np.random.RandomState(2026)
SETUP = "op_contract_setup"
_VD = {"value_dependent": True}


def _pos(*shape, low=0.3, high=2.5):
    return R.uniform(low, high, size=shape)


def _strings(*values):
    return np.array([v.encode() for v in values], dtype=object)


_SPECIAL = ("bessel_i0", "bessel_i1", "bessel_j0", "bessel_j1", "bessel_k0", "bessel_k0e",
            "bessel_k1", "bessel_k1e", "bessel_y0", "bessel_y1", "dawsn", "expint",
            "fresnel_cos", "fresnel_sin", "spence")
_TYPES = {"dawsn": "Dawsn", "expint": "Expint", "fresnel_cos": "FresnelCos",
          "fresnel_sin": "FresnelSin", "spence": "Spence"}

VALUE_DEPENDENT = {"StringNGrams", "DenseCountSparseOutput", "SparseCountSparseOutput",
                   "RaggedCountSparseOutput", "DenseToDenseSetOperation",
                   "DenseToSparseSetOperation", "LookupTableExportV2"}

GRADIENT_CASES = {
    _TYPES.get(n) or "Bessel" + n.split("_")[1].upper().replace("E", "e"): [
        ([_pos(3, 2)], getattr(tf.math.special, n))] for n in _SPECIAL}


def _ngrams(tokens):
    rt = tf.RaggedTensor.from_row_splits(tokens, tf.constant([0, 2, 2, 3], tf.int64))
    return tf.strings.ngrams(rt, (1, 2), pad_values="#", padding_width=1).flat_values


def _dense_bincount(x):
    return make_tensor("DenseBincount", [x, tf.constant(4), tf.zeros([0], tf.float32)])


def _sparse_bincount(x):
    sp = tf.sparse.from_dense(x)
    return make_tensor("SparseBincount", [sp.indices, sp.values, sp.dense_shape,
                                          tf.constant(6), tf.zeros([0], tf.int32)],
                       {"binary_output": True})


def _ragged_bincount(x):
    splits = tf.constant([0, 1, 4, 6], tf.int64)
    return make_tensor("RaggedBincount", [splits, tf.reshape(x, [-1]), tf.constant(7),
                                          tf.zeros([0], tf.float64)])


def _set_op(op_type):
    def build(a):
        other = tf.constant([[1, 9, 1], [3, 1, 7]])
        if op_type == "DenseToDenseSetOperation":
            return make_op(op_type, [a, other], {"set_operation": "a-b"}).outputs
        sp = tf.sparse.from_dense(other)
        return make_op(op_type, [a, sp.indices, sp.values, sp.dense_shape],
                       {"set_operation": "union"}).outputs

    return build


def _mutable(x, dense: bool):
    if dense:
        t = tf.lookup.experimental.DenseHashTable(tf.int64, tf.float32, -1.0, empty_key=-5,
                                                  deleted_key=-6)
    else:
        t = tf.lookup.experimental.MutableHashTable(tf.int64, tf.float32, -1.0)
    tf.add_to_collection(SETUP, t.insert(tf.constant([1, 2, 3], tf.int64),
                                         tf.constant([0.5, 1.5, 2.5])))
    return t


def _removed(x):
    t = _mutable(x, False)
    remove = t.remove(tf.constant([2], tf.int64))
    with tf.control_dependencies([remove]):
        return t.lookup(x)


_IDS = np.array([[1, 2, 2], [0, 3, 1]], np.int32)

CONTRACT_CASES = {
    "StringNGrams": [([_strings("a", "b", "c")], _ngrams, _VD)],
    "UnsortedSegmentJoin": [([_strings("a", "b", "c", "d")], lambda s: tf.strings.
                             unsorted_segment_join(s, [1, 0, 1, 2], 3, separator="-"), {})],
    "UnicodeScript": [([np.array([[0x41, 0x416], [-1, 0x4E2D]], np.int32)],
                       tf.strings.unicode_script, {})],
    "DenseBincount": [([_IDS], _dense_bincount, {}),
                      ([_IDS[0]], _dense_bincount, {})],
    "SparseBincount": [([_IDS], _sparse_bincount, _VD)],
    "RaggedBincount": [([_IDS], _ragged_bincount, _VD)],
    "DenseCountSparseOutput": [([_IDS], lambda x: tf.sparse.bincount(x, axis=-1).values, _VD)],
    "SparseCountSparseOutput": [([_IDS], lambda x: tf.sparse.bincount(
        tf.sparse.from_dense(x), axis=-1).values, _VD)],
    "RaggedCountSparseOutput": [([_IDS.reshape(-1)], lambda x: tf.sparse.bincount(
        tf.RaggedTensor.from_row_splits(x, [0, 2, 6]), axis=-1).values, _VD)],
    "DenseToDenseSetOperation": [([_IDS], _set_op("DenseToDenseSetOperation"), _VD)],
    "DenseToSparseSetOperation": [([_IDS], _set_op("DenseToSparseSetOperation"), _VD)],
    "SobolSample": [([], lambda: tf.math.sobol_sample(3, 5, skip=2), {})],
    "MutableHashTableV2": [([], lambda: _mutable(None, False).resource_handle, {})],
    "MutableDenseHashTableV2": [([], lambda: _mutable(None, True).resource_handle, {})],
    "LookupTableInsertV2": [([np.array([2, 7], np.int64)],
                             lambda k: _mutable(k, True).lookup(k), {})],
    "LookupTableRemoveV2": [([np.array([1, 2], np.int64)], _removed, {})],
    "LookupTableExportV2": [([], lambda: _mutable(None, False).export(), _VD)],
}
