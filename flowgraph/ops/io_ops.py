"""Checkpoint reading and writing inside a graph: TensorFlow's saver ops.

``RestoreV2(prefix, tensor_names, shape_and_slices)`` has one output per name, of the
dtypes in its ``dtypes`` attribute, read from the checkpoint file `prefix` (see
`flowgraph.framework.checkpoint_file`) when the op runs. `tf.train.init_from_checkpoint`
builds it. ``SaveV2(prefix, tensor_names, shape_and_slices, tensors)`` writes TensorFlow's
tensor-bundle files (``prefix.index``, ``prefix.data-00000-of-00001``; a non-empty
``shape_and_slices`` entry saves its tensor as that slice of a larger one);
``MergeV2Checkpoints`` merges the bundles of a sharded save into one prefix;
``ShardedFilename``/``ShardedFilespec`` name the shards. These are the nodes of a
TensorFlow-written saver graph (``save/SaveV2``, ``save/MergeV2Checkpoints``). The V1
format's ``Save``/``SaveSlices`` and ``Restore``/``RestoreSlice`` write and read
TensorFlow's older one-file checkpoints. Kernels: `flowgraph/backends/cpu/kernels_io.py`.

Example
-------
>>> import flowgraph as tf
>>> (w,) = restore_v2("/tmp/model.ckpt-1", ["w"], [tf.float32])
>>> w.op.type, w.dtype.name
('RestoreV2', 'float32')
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant, constant_value
from flowgraph.framework.graph import get_default_graph
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.framework.tf_formats.bundle_slices import parse_slice_spec

__all__ = ["restore_v2"]


@register_op("RestoreV2", attrs={"dtypes": ()}, stateful=True,
             num_outputs=lambda op: len(op.attrs["dtypes"]),
             dtype_fn=lambda op: [_dtypes.as_dtype(d) for d in op.attrs["dtypes"]])
def _restore_v2_shape(op, prefix, tensor_names, shape_and_slices):
    return [TensorShape(None)] * len(op.attrs["dtypes"])


not_differentiable("RestoreV2")


def _check_rank(op, shape: TensorShape, name: str, rank: int, at_most: bool = False) -> None:
    ok = shape.ndims is None or (shape.ndims <= rank if at_most else shape.ndims == rank)
    if not ok:
        want = f"at most rank {rank}" if at_most else f"rank {rank}"
        raise op.shape_error(f"'{name}' must have {want}, got shape {shape}")


@register_op("SaveV2", attrs={"dtypes": ()}, stateful=True, num_outputs=0,
             dtype_fn=lambda op: [])
def _save_v2_shape(op, prefix, tensor_names, shape_and_slices, *tensors):
    _check_rank(op, prefix, "prefix", 0)
    _check_rank(op, tensor_names, "tensor_names", 1)
    _check_rank(op, shape_and_slices, "shape_and_slices", 1)
    n = len(tensors)
    for name, shape in (("tensor_names", tensor_names), ("shape_and_slices", shape_and_slices)):
        if shape.ndims == 1 and shape[0].value is not None and shape[0].value != n:
            raise op.shape_error(f"'{name}' has {shape[0].value} entries but {n} tensors "
                                 "are saved")
    return []


@register_op("MergeV2Checkpoints", attrs={"delete_old_dirs": True,
                                          "allow_missing_files": False},
             stateful=True, num_outputs=0, dtype_fn=lambda op: [])
def _merge_v2_shape(op, checkpoint_prefixes, destination_prefix):
    _check_rank(op, checkpoint_prefixes, "checkpoint_prefixes", 1, at_most=True)
    _check_rank(op, destination_prefix, "destination_prefix", 0)
    return []


@register_op("ShardedFilename", dtype_fn=lambda op: [_dtypes.string])
def _sharded_filename_shape(op, basename, shard, num_shards):
    for name, shape in (("basename", basename), ("shard", shard), ("num_shards", num_shards)):
        _check_rank(op, shape, name, 0)
    return [TensorShape([])]


@register_op("ShardedFilespec", dtype_fn=lambda op: [_dtypes.string])
def _sharded_filespec_shape(op, basename, num_shards):
    _check_rank(op, basename, "basename", 0)
    _check_rank(op, num_shards, "num_shards", 0)
    return [TensorShape([])]


# The V1 format's ops (`flowgraph.framework.tf_formats.tensor_slices`): one file per call.
@register_op("Save", attrs={"T": ()}, stateful=True, num_outputs=0, dtype_fn=lambda op: [])
def _save_shape(op, filename, tensor_names, *data):
    _check_rank(op, filename, "filename", 0)
    _check_rank(op, tensor_names, "tensor_names", 1)
    if tensor_names.ndims == 1 and tensor_names[0].value not in (None, len(data)):
        raise op.shape_error(f"'tensor_names' has {tensor_names[0].value} entries but "
                             f"{len(data)} tensors are saved")
    return []


@register_op("SaveSlices", attrs={"T": ()}, stateful=True, num_outputs=0,
             dtype_fn=lambda op: [])
def _save_slices_shape(op, filename, tensor_names, shapes_and_slices, *data):
    _save_shape(op, filename, tensor_names, *data)
    _check_rank(op, shapes_and_slices, "shapes_and_slices", 1)
    return []


def _restore_dtype(op):
    return [_dtypes.as_dtype(op.attrs["dt"])]


@register_op("Restore", attrs={"dt": None, "preferred_shard": -1}, stateful=True,
             dtype_fn=_restore_dtype)
def _restore_shape(op, file_pattern, tensor_name):
    _check_rank(op, file_pattern, "file_pattern", 0)
    _check_rank(op, tensor_name, "tensor_name", 0)
    return [TensorShape(None)]


@register_op("RestoreSlice", attrs={"dt": None, "preferred_shard": -1}, stateful=True,
             dtype_fn=_restore_dtype)
def _restore_slice_shape(op, file_pattern, tensor_name, shape_and_slice):
    _restore_shape(op, file_pattern, tensor_name)
    _check_rank(op, shape_and_slice, "shape_and_slice", 0)
    spec = constant_value(op.inputs[2])
    if spec is None:
        return [TensorShape(None)]
    spec = spec.item() if hasattr(spec, "item") else spec
    if isinstance(spec, bytes):
        spec = spec.decode("utf-8", "replace")
    if not spec:
        return [TensorShape(None)]
    try:
        _, _, lengths = parse_slice_spec(spec)
    except ValueError as e:
        raise op.shape_error(str(e)) from None
    return [TensorShape(lengths)]  # a constant spec: the slice's shape, as in TF


not_differentiable("SaveV2", "MergeV2Checkpoints", "ShardedFilename", "ShardedFilespec",
                   "Save", "SaveSlices", "Restore", "RestoreSlice")


def restore_v2(prefix: str, tensor_names, dtypes, name: str = "RestoreV2"):
    """The tensors `tensor_names` of checkpoint `prefix`, read when the op runs.

    Example
    -------
    >>> import flowgraph as tf
    >>> a, b = restore_v2("/tmp/ckpt", ["a", "b"], [tf.float32, tf.int64])
    >>> b.dtype.name
    'int64'
    """
    graph = get_default_graph()
    with graph.name_scope(name) as scope:
        inputs = [constant(prefix, name="prefix"),
                  constant(list(tensor_names), name="tensor_names"),
                  constant([""] * len(tensor_names), name="shape_and_slices")]
        op = graph.create_op("RestoreV2", inputs, {"dtypes": list(dtypes)}, name=scope)
    return op.outputs
