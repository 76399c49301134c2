"""Registry-wide cases for TensorFlow's further optimizer updates (``ApplyAdaMax``,
``ApplyAdagradV2``, ``ApplyAdagradDA``, ``ApplyAddSign``, ``ApplyPowerSign``, the proximal
updates; their ``Sparse``/``Resource`` forms; ``ResourceApplyKerasMomentum``,
``ResourceApplyAdamWithAmsgrad``) and the saver ops (``SaveV2``, ``MergeV2Checkpoints``,
``ShardedFilename``, ``ShardedFilespec``), and the vocabulary remapping ops, in the
format of `misc_names_cases`. None of them has a gradient."""

from __future__ import annotations

import os
import tempfile

import numpy as np

import flowgraph as tf
from flowgraph.ops import training_ops
from flowgraph.ops.op_util import make_op

VALUE_DEPENDENT: set[str] = set()
GRADIENT_CASES: dict = {}

_INIT = {"init": True}
_NO_FETCH = {"init": True, "fetch": lambda o: []}

# the hyperparameters of each update (the slots start at 0.5)
_HYPER = {
    "AdaMax": {"beta1_power": 0.9, "lr": 0.01, "beta1": 0.9, "beta2": 0.999, "epsilon": 1e-7},
    "AdagradV2": {"lr": 0.1, "epsilon": 1e-7},
    "AdagradDA": {"lr": 0.1, "l1": 0.01, "l2": 0.02},
    "AddSign": {"lr": 0.1, "alpha": 1.0, "sign_decay": 0.9, "beta": 0.9},
    "PowerSign": {"lr": 0.1, "logbase": 1.0, "sign_decay": 0.9, "beta": 0.9},
    "ProximalAdagrad": {"lr": 0.1, "l1": 0.01, "l2": 0.02},
    "ProximalGradientDescent": {"alpha": 0.1, "l1": 0.01, "l2": 0.02},
    "KerasMomentum": {"lr": 0.1, "momentum": 0.9},
    "AdamWithAmsgrad": {"beta1_power": 0.9, "beta2_power": 0.999, "lr": 0.01, "beta1": 0.9,
                        "beta2": 0.999, "epsilon": 1e-7},
}
DENSE = ("AdaMax", "AdagradV2", "AdagradDA", "AddSign", "PowerSign", "ProximalAdagrad",
         "ProximalGradientDescent")
SPARSE = ("AdagradV2", "AdagradDA", "ProximalAdagrad", "ProximalGradientDescent")


def _update(op_type: str, resource: bool):
    """A case building `op_type` on variables of x's dtype, with x as the gradient (its
    rows 0, 2 and 0 of a 4-row variable for a sparse update)."""
    sparse = "Sparse" in op_type
    names, num_refs, _ = (training_ops._SIGNATURES.get(op_type)
                          or training_ops._RESOURCE_ONLY[op_type])
    kind = op_type.replace("Sparse", "").replace("Apply", "")

    def build(x):
        dt = x.dtype.as_numpy_dtype
        shape = [4, 3] if sparse else [2, 3]
        inputs = {n: tf.Variable(np.full(shape, 0.5, dt), use_resource=resource)
                  for n in names[:num_refs]}
        inputs.update({k: tf.constant(v, x.dtype) for k, v in _HYPER[kind].items()})
        if "global_step" in names:
            inputs["global_step"] = tf.constant(3, tf.int64)
        if sparse:
            inputs["grad"] = tf.concat([x, x[:1]], 0)
            inputs["indices"] = tf.constant([0, 2, 0])
        else:
            inputs["delta" if "delta" in names else "grad"] = x
        training_ops.apply_op(op_type, inputs)

    return build


def _save_program(x):
    """ShardedFilename -> two SaveV2 -> MergeV2Checkpoints, in a fresh directory."""
    root = tempfile.mkdtemp()
    base = os.path.join(root, "tmp", "part")
    names = [tf.raw_ops.ShardedFilename(basename=base, shard=k, num_shards=2) for k in (0, 1)]
    saves = [tf.raw_ops.SaveV2(prefix=names[k], tensor_names=[f"t{k}"], shape_and_slices=[""],
                               tensors=[x * (k + 1)]) for k in (0, 1)]
    with tf.control_dependencies(saves):
        tf.raw_ops.MergeV2Checkpoints(checkpoint_prefixes=names,
                                      destination_prefix=os.path.join(root, "model"))
    tf.raw_ops.ShardedFilespec(basename=base, num_shards=2)


def _vocab_remap(x):
    d = tempfile.mkdtemp()
    for name, words in (("old", "a\nb\nc\n"), ("new", "c\nz\na\nb\n")):
        with open(os.path.join(d, f"{name}.txt"), "w") as f:
            f.write(words)
    tf.raw_ops.GenerateVocabRemapping(new_vocab_file=os.path.join(d, "new.txt"),
                                      old_vocab_file=os.path.join(d, "old.txt"),
                                      new_vocab_offset=1, num_new_vocab=3)


def _load_remap(x):
    """A checkpoint of x written by SaveV2, read back remapped (rows 1, -1; cols 2, 0)."""
    prefix = os.path.join(tempfile.mkdtemp(), "ckpt")
    save = tf.raw_ops.SaveV2(prefix=prefix, tensor_names=["m"], shape_and_slices=[""],
                             tensors=[tf.cast(x, tf.float32)])
    with tf.control_dependencies([save]):
        tf.raw_ops.LoadAndRemapMatrix(
            ckpt_path=prefix, old_tensor_name="m", row_remapping=tf.constant([1, -1], tf.int64),
            col_remapping=tf.constant([2, 0], tf.int64), initializing_values=[7.0, 8.0],
            num_rows=2, num_cols=2)


def _sdca_v2(x):
    """As TF's linear estimators write it (tf.raw_ops cannot infer the list lengths)."""
    i64 = tf.int64
    inputs = [tf.constant([0, 1], i64), tf.constant([1, 0], i64), tf.constant([1.0, 2.0]),
              tf.constant([[0.5], [1.5]]), tf.constant([1.0, 2.0]), tf.constant([1.0, 0.0]),
              tf.constant([7, 9], i64), tf.constant([0.1, 0.2]), tf.constant([0.3]),
              tf.zeros([2, 4])]
    make_op("SdcaOptimizerV2", inputs, {
        "loss_type": "logistic_loss", "adaptive": False, "num_sparse_features": 1,
        "num_sparse_features_with_values": 1, "num_dense_features": 1, "l1": 0.0, "l2": 1.0,
        "num_loss_partitions": 1, "num_inner_iterations": 1})


def _v1_program(x):
    """Save, SaveSlices, then Restore and RestoreSlice of what they wrote."""
    d = tempfile.mkdtemp()
    whole = os.path.join(d, "a.ckpt")
    part = os.path.join(d, "b.ckpt")
    saves = [tf.raw_ops.Save(filename=whole, tensor_names=["x"], data=[x]),
             tf.raw_ops.SaveSlices(filename=part, tensor_names=["y"],
                                   shapes_and_slices=["4 3 1,2:-"], data=[x])]
    with tf.control_dependencies(saves):
        tf.raw_ops.Restore(file_pattern=whole, tensor_name="x", dt=x.dtype)
        tf.raw_ops.RestoreSlice(file_pattern=part, tensor_name="y",
                                shape_and_slice="4 3 1,2:-", dt=x.dtype)


VALUE_DEPENDENT |= {"Restore"}  # the shape is the file's

CONTRACT_CASES: dict = {
    **{name: [([np.full((2, 3), 0.3)], _v1_program, {})]
       for name in ("Restore", "RestoreSlice")},
    **{name: [([np.full((2, 3), 0.3)], _v1_program, _NO_FETCH)]
       for name in ("Save", "SaveSlices")},
    "GenerateVocabRemapping": [([np.zeros(2)], _vocab_remap, {})],
    "LoadAndRemapMatrix": [([np.arange(6.0).reshape(2, 3)], _load_remap, {})],
    "SdcaOptimizerV2": [([np.zeros(2)], _sdca_v2, {})],
    **{f"Apply{k}": [([np.full((2, 3), 0.3)], _update(f"Apply{k}", False), _INIT)]
       for k in DENSE},
    **{f"ResourceApply{k}": [([np.full((2, 3), 0.3)], _update(f"Apply{k}", True), _NO_FETCH)]
       for k in (*DENSE, "KerasMomentum", "AdamWithAmsgrad")},
    **{f"SparseApply{k}": [([np.full((2, 3), 0.3)], _update(f"SparseApply{k}", False),
                            _INIT)] for k in SPARSE},
    **{f"ResourceSparseApply{k}": [([np.full((2, 3), 0.3)],
                                    _update(f"SparseApply{k}", True), _NO_FETCH)]
       for k in (*SPARSE, "KerasMomentum")},
    **{name: [([np.full((2, 3), 0.3)], _save_program, _NO_FETCH)]
       for name in ("SaveV2", "MergeV2Checkpoints")},
    **{name: [([np.full((2, 3), 0.3)], _save_program, {})]
       for name in ("ShardedFilename", "ShardedFilespec")},
}
