"""TensorFlow's warm-start remapping ops and ``SdcaOptimizerV2``.

``GenerateVocabRemapping(new_vocab_file, old_vocab_file)`` maps lines
``[new_vocab_offset, new_vocab_offset + num_new_vocab)`` of a new vocabulary file to their
line numbers in the old one (-1 when absent; the old file's first `old_vocab_size` lines,
all with -1): ``(remapping int64 [num_new_vocab], num_present int32)``.
``LoadAndRemapMatrix(ckpt_path, old_tensor_name, row_remapping, col_remapping,
initializing_values)`` builds a ``[num_rows, num_cols]`` float32 matrix whose row i,
column j is the checkpoint tensor's ``[row_remapping[i], col_remapping[j]]`` (an empty
`col_remapping` keeps the columns), the cells with a -1 taken in order from
`initializing_values`. ``tf.train.warm_start`` with a ``VocabInfo`` builds both in TF.

``SdcaOptimizerV2`` is ``SdcaOptimizer`` (`flowgraph.ops.sdca_ops`) with its attribute
``adaptative`` renamed ``adaptive``, as TF's later linear estimators write it.

Kernels: `flowgraph/backends/cpu/kernels_training_raw.py`.

Example
-------
>>> import os, tempfile
>>> import flowgraph as tf
>>> d = tempfile.mkdtemp()
>>> _ = open(os.path.join(d, "old.txt"), "w").write("a\\nb\\nc\\n")
>>> _ = open(os.path.join(d, "new.txt"), "w").write("c\\nz\\na\\n")
>>> remap, present = tf.raw_ops.GenerateVocabRemapping(
...     new_vocab_file=os.path.join(d, "new.txt"), old_vocab_file=os.path.join(d, "old.txt"),
...     new_vocab_offset=0, num_new_vocab=3)
>>> with tf.Session() as sess:
...     print(*sess.run([remap, present]))
[ 2 -1  0] 2
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops import sdca_ops

__all__: list[str] = []  # raw ops: tf.raw_ops and imported graphs reach them


def _rank(op, shape: TensorShape, name: str, rank: int) -> None:
    if shape.ndims is not None and shape.ndims != rank:
        raise op.shape_error(f"'{name}' must have rank {rank}, got shape {shape}")


def _non_negative(op, *names: str) -> None:
    for name in names:
        if int(op.attrs[name]) < 0:
            raise op.shape_error(f"attribute {name} must be >= 0, got {op.attrs[name]}")


@register_op("GenerateVocabRemapping",
             attrs={"new_vocab_offset": None, "num_new_vocab": None, "old_vocab_size": -1},
             num_outputs=2, dtype_fn=lambda op: [_dtypes.int64, _dtypes.int32],
             stateful=True)
def _generate_vocab_remapping_shape(op, new_vocab_file, old_vocab_file):
    _rank(op, new_vocab_file, "new_vocab_file", 0)
    _rank(op, old_vocab_file, "old_vocab_file", 0)
    _non_negative(op, "new_vocab_offset", "num_new_vocab")
    if int(op.attrs["old_vocab_size"]) < -1:
        raise op.shape_error(f"attribute old_vocab_size must be >= -1, got "
                             f"{op.attrs['old_vocab_size']}")
    return [TensorShape([int(op.attrs["num_new_vocab"])]), TensorShape([])]


@register_op("LoadAndRemapMatrix",
             attrs={"num_rows": None, "num_cols": None, "max_rows_in_memory": -1},
             dtype_fn=lambda op: [_dtypes.float32], stateful=True)
def _load_and_remap_matrix_shape(op, ckpt_path, old_tensor_name, row_remapping,
                                 col_remapping, initializing_values):
    _rank(op, ckpt_path, "ckpt_path", 0)
    _rank(op, old_tensor_name, "old_tensor_name", 0)
    _rank(op, row_remapping, "row_remapping", 1)
    _rank(op, col_remapping, "col_remapping", 1)
    _non_negative(op, "num_rows", "num_cols")
    return [TensorShape([int(op.attrs["num_rows"]), int(op.attrs["num_cols"])])]


# SdcaOptimizerV2: SdcaOptimizer's inputs, outputs and shape function, ``adaptive``.
register_op("SdcaOptimizerV2",
            attrs={"loss_type": "logistic_loss", "adaptive": False,
                   "num_sparse_features": 0, "num_sparse_features_with_values": 0,
                   "num_dense_features": 0, "l1": 0.0, "l2": 0.0,
                   "num_loss_partitions": 1, "num_inner_iterations": 1},
            num_outputs=sdca_ops._sdca_outputs,
            dtype_fn=lambda op: [_dtypes.float32] * sdca_ops._sdca_outputs(op),
            cost="expensive")(sdca_ops._sdca_optimizer_shape)

not_differentiable("GenerateVocabRemapping", "LoadAndRemapMatrix", "SdcaOptimizerV2")
