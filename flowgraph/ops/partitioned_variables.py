"""Partitioned variables: one logical variable stored as several shard variables.

`tf.get_variable(..., partitioner=p)` (or a `variable_scope` with a partitioner) asks
``p(shape=..., dtype=...)`` how many parts each axis gets (at most one axis may be
split) and creates one `Variable` per part, named ``<name>/part_<i>``. The split follows
TensorFlow: a dimension of ``n`` rows in ``k`` parts gives the first ``n % k`` parts one
extra row::

    shape [20, 6], 3 parts on axis 0  ->  part_0 [7, 6]  part_1 [7, 6]  part_2 [6, 6]

The shards are ordinary variables: they are in the global (and trainable) collections,
optimizers update them one by one, `tf.nn.embedding_lookup` reads them as a list of
shards. The `PartitionedVariable` returned to the caller iterates over them and converts
to the full tensor (their concatenation) wherever a tensor is expected.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     emb = tf.get_variable("emb", [10, 4], partitioner=tf.fixed_size_partitioner(3))
...     print([v.name for v in emb], emb.get_shape().as_list())
['emb/part_0:0', 'emb/part_1:0', 'emb/part_2:0'] [10, 4]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor, register_tensor_conversion_function
from flowgraph.framework.graph import name_scope
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.array_identity_ops import identity
from flowgraph.ops.array_index_ops import slice as _slice
from flowgraph.ops.array_join_ops import concat

__all__ = ["PartitionInfo", "PartitionedVariable", "SaveSliceInfo", "create_partitioned",
           "partition_sizes"]


class SaveSliceInfo:
    """Where a shard sits in its full variable: ``full_name``, ``full_shape``,
    ``var_offset`` and ``var_shape`` (per axis)."""

    def __init__(self, full_name: str | None = None, full_shape=None, var_offset=None,
                 var_shape=None, save_slice_info_def=None, import_scope=None) -> None:
        if save_slice_info_def is not None:  # a SaveSliceInfoDef message (as TF reads it)
            d = save_slice_info_def
            full_name = (import_scope.rstrip("/") + "/" + d.full_name if import_scope
                         else d.full_name)
            full_shape, var_offset, var_shape = (
                [int(x) for x in d.full_shape], [int(x) for x in d.var_offset],
                [int(x) for x in d.var_shape])
        self.full_name = full_name
        self.full_shape = None if full_shape is None else list(full_shape)
        self.var_offset = None if var_offset is None else list(var_offset)
        self.var_shape = None if var_shape is None else list(var_shape)

    @property
    def spec(self) -> str:
        """TensorFlow's slice spec string: ``"20 6 0,7:0,6"``."""
        full = " ".join(str(d) for d in self.full_shape)
        sl = ":".join(f"{o},{s}" for o, s in zip(self.var_offset, self.var_shape))
        return f"{full} {sl}"


class PartitionInfo:
    """What `get_variable` passes an initializer as ``partition_info`` when it creates
    one shard: the ``full_shape`` of the partitioned variable and the shard's
    ``var_offset`` in it. Initializers that scale by fan (variance scaling, uniform unit
    scaling) compute the fans of ``full_shape``, as TensorFlow does.

    Example
    -------
    >>> info = PartitionInfo([10, 4], [7, 0])
    >>> info.single_slice_dim([3, 4]), info.single_offset([3, 4])
    (0, 7)
    """

    def __init__(self, full_shape, var_offset) -> None:
        self.full_shape = [int(d) for d in full_shape]
        self.var_offset = [int(d) for d in var_offset]
        if len(self.full_shape) != len(self.var_offset):
            raise ValueError(f"PartitionInfo: full_shape {self.full_shape} and var_offset "
                             f"{self.var_offset} have different ranks.")

    def single_slice_dim(self, shape):
        """The one axis on which a shard of `shape` differs from the full shape (None
        when it is the whole variable)."""
        shape = [int(d) for d in shape]
        if len(shape) != len(self.full_shape):
            raise ValueError(f"Expected a shard shape of rank {len(self.full_shape)} for "
                             f"full shape {self.full_shape}, got {shape}.")
        if any(n + o > full for n, o, full in zip(shape, self.var_offset, self.full_shape,
                                                   strict=True)):
            raise ValueError(f"A shard of shape {shape} at offset {self.var_offset} does "
                             f"not fit in the full shape {self.full_shape}.")
        axes = [i for i, (n, full) in enumerate(zip(shape, self.full_shape, strict=True))
                if n != full]
        if len(axes) > 1:
            raise ValueError(f"Cannot use single_slice_dim() with shard shape {shape} and "
                             f"full shape {self.full_shape}: more than one axis is sliced.")
        return axes[0] if axes else None

    def single_offset(self, shape) -> int:
        """The shard's offset along its sliced axis (0 when nothing is sliced)."""
        axis = self.single_slice_dim(shape)
        return 0 if axis is None else self.var_offset[axis]


def partition_sizes(dim: int, parts: int) -> list[int]:
    """The sizes of `parts` shards of a dimension of `dim`: the first ``dim % parts``
    get one more.

    Example
    -------
    >>> partition_sizes(20, 3)
    [7, 7, 6]
    """
    base, extra = divmod(dim, parts)
    return [base + 1 if i < extra else base for i in range(parts)]


def check_partitions(name: str, shape: TensorShape, partitions) -> tuple[list[int], int]:
    """Validate a partitioner's answer; returns it as a list and the split axis."""
    parts = [int(p) for p in partitions]
    if len(parts) != shape.ndims:
        raise ValueError(f"Variable {name}: the partitioner returned {parts}, which does not "
                         f"have one entry per dimension of shape {shape}.")
    if any(p < 1 for p in parts):
        raise ValueError(f"Variable {name}: partitions must all be >= 1, got {parts}.")
    split = [i for i, p in enumerate(parts) if p > 1]
    if len(split) > 1:
        raise ValueError(f"Variable {name}: can only partition one axis, but the partitioner "
                         f"returned {parts}.")
    axis = split[0] if split else 0
    if parts[axis] > shape.as_list()[axis]:
        raise ValueError(f"Variable {name}: cannot split axis {axis} of shape {shape} into "
                         f"{parts[axis]} parts.")
    return parts, axis


class PartitionedVariable:
    """A variable stored as shards along one axis; iterate for the shards, convert to a
    tensor (``tf.convert_to_tensor`` or any op taking it) for the whole value."""

    def __init__(self, name: str, shape, dtype, variable_list: list, partitions) -> None:
        self._name = name
        self._shape = TensorShape(shape)
        self._dtype = _dtypes.as_dtype(dtype)
        self._variable_list = list(variable_list)
        self._partitions = list(partitions)
        self._axis = next((i for i, p in enumerate(self._partitions) if p > 1), 0)

    def __iter__(self):
        return iter(self._variable_list)

    def __len__(self) -> int:
        return len(self._variable_list)

    def __repr__(self) -> str:
        return (f"<PartitionedVariable '{self._name}' shape={self._shape} "
                f"dtype={self._dtype.name} parts={len(self._variable_list)}>")

    @property
    def name(self) -> str:
        return self._name

    @property
    def dtype(self):
        return self._dtype

    @property
    def shape(self) -> TensorShape:
        return self._shape

    @property
    def graph(self):
        return self._variable_list[0].graph

    def get_shape(self) -> TensorShape:
        return self._shape

    def _get_variable_list(self) -> list:
        return list(self._variable_list)

    def _get_partitions(self) -> list:
        return list(self._partitions)

    def _concat(self):
        if len(self._variable_list) == 1:
            whole = self._variable_list[0].value()
        else:
            with name_scope(f"{self._name}/ConcatPartitions/"):
                whole = concat([v.value() for v in self._variable_list], self._axis,
                               name="concat")
        with name_scope(None):  # as TensorFlow: the full value is named like the variable
            return identity(whole, name=self._name)

    def as_tensor(self):
        """The full value: the shards concatenated along the split axis."""
        return self._concat()

    def assign(self, value, use_locking=None, name=None, read_value=True):
        """Assign `value` (of the full shape) shard by shard; returns the assign ops."""
        value = convert_to_tensor(value, dtype=self._dtype)
        ops, offset = [], 0
        for var in self._variable_list:
            size = var.get_shape().as_list()[self._axis]
            begin = [0] * self._shape.ndims
            begin[self._axis] = offset
            part = _slice(value, begin, var.get_shape().as_list())
            ops.append(var.assign(part, use_locking=bool(use_locking)))
            offset += size
        return ops


def create_partitioned(name: str, shape: TensorShape, dtype, partitioner, make_part):
    """Create the shards of variable `name` as `partitioner` asks, each by
    ``make_part(part_name, part_shape, partition_info)``; returns the
    `PartitionedVariable`."""
    if not shape.is_fully_defined():
        raise ValueError(f"Shape of a new partitioned variable ({name}) must be fully "
                         f"defined, but instead was {shape}.")
    parts, axis = check_partitions(name, shape, partitioner(shape=shape, dtype=dtype))
    full = shape.as_list()
    variables, offset = [], 0
    for i, size in enumerate(partition_sizes(full[axis], parts[axis])):
        part_shape = list(full)
        part_shape[axis] = size
        var_offset = [0] * len(full)
        var_offset[axis] = offset
        var = make_part(f"{name}/part_{i}", TensorShape(part_shape),
                        PartitionInfo(full, var_offset))
        var._save_slice_info = SaveSliceInfo(name, full, var_offset, part_shape)
        variables.append(var)
        offset += size
    return PartitionedVariable(name, shape, dtype, variables, parts)


def _convert(value, dtype=None, name=None, as_ref=False):
    if as_ref:
        raise NotImplementedError(f"a PartitionedVariable ({value.name}) has no single "
                                  "reference; use its shards (iterate over it)")
    if dtype is not None and not _dtypes.as_dtype(dtype).is_compatible_with(value.dtype):
        raise ValueError(f"Incompatible type conversion requested to type "
                         f"'{_dtypes.as_dtype(dtype).name}' for variable of type "
                         f"'{value.dtype.name}' ({value.name})")
    return value._concat()


register_tensor_conversion_function(PartitionedVariable, _convert)
