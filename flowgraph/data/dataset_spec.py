"""``tf.data.DatasetSpec``: the `TypeSpec` of a `Dataset`, its element spec (a nested
structure of specs) and the dataset's own shape (``[]`` for a plain dataset).

Example
-------
>>> import flowgraph as tf
>>> tf.data.DatasetSpec.from_value(tf.data.Dataset.range(3))
DatasetSpec(TensorSpec(shape=(), dtype=tf.int64, name=None), TensorShape([]))
"""

from __future__ import annotations

from flowgraph.framework.tensor_shape import as_shape
from flowgraph.ops.type_spec import TypeSpec

__all__ = ["DatasetSpec"]


def _leaves_compatible(mine, theirs) -> bool:
    if isinstance(mine, dict):
        return isinstance(theirs, dict) and mine.keys() == theirs.keys() and all(
            _leaves_compatible(mine[k], theirs[k]) for k in mine)
    if isinstance(mine, (list, tuple)):
        return isinstance(theirs, (list, tuple)) and len(mine) == len(theirs) and all(
            _leaves_compatible(a, b) for a, b in zip(mine, theirs))
    return isinstance(mine, TypeSpec) and mine.is_compatible_with(theirs)


def _element_spec(dataset):
    """The element spec of `dataset`, from its output types, shapes and classes."""
    from flowgraph.data.iterator import (
        get_output_classes,
        get_output_shapes,
        get_output_types,
    )
    from flowgraph.framework.sparse_tensor import SparseTensor
    from flowgraph.ops.type_spec import SparseTensorSpec, TensorSpec

    def build(types, shapes, classes):
        if isinstance(types, DatasetSpec):  # a window: an element that is a dataset
            return types
        if isinstance(types, dict):
            return {k: build(types[k], shapes[k], classes[k]) for k in types}
        if isinstance(types, (list, tuple)):
            return type(types)(build(*parts) for parts in zip(types, shapes, classes))
        if isinstance(classes, type) and issubclass(classes, SparseTensor):
            return SparseTensorSpec(shapes, types)
        return TensorSpec(shapes, types)

    return build(get_output_types(dataset), get_output_shapes(dataset),
                 get_output_classes(dataset))


def _from_dataset(value):
    from flowgraph.data.dataset import Dataset

    return DatasetSpec.from_value(value) if isinstance(value, Dataset) else None


class DatasetSpec(TypeSpec):
    """The spec of a `tf.data.Dataset`: ``element_spec`` and ``dataset_shape``.

    Example
    -------
    >>> import flowgraph as tf
    >>> spec = tf.data.DatasetSpec(tf.TensorSpec([None], tf.int64))
    >>> spec.is_compatible_with(tf.data.Dataset.range(4).batch(2))
    True
    """

    _fields = ("element_spec", "dataset_shape")

    def __init__(self, element_spec, dataset_shape=()) -> None:
        self._element_spec = element_spec
        self._dataset_shape = as_shape(dataset_shape)

    element_spec = property(lambda self: self._element_spec,
                            doc="The spec of one element (a nested structure of specs).")
    dataset_shape = property(lambda self: self._dataset_shape)

    @property
    def value_type(self):
        from flowgraph.data.dataset import Dataset

        return Dataset

    @staticmethod
    def from_value(value) -> DatasetSpec:
        """The spec of the dataset `value`."""
        spec = getattr(value, "element_spec", None)
        return DatasetSpec(_element_spec(value) if spec is None else spec)

    def __eq__(self, other) -> bool:
        return (type(other) is DatasetSpec and self._element_spec == other._element_spec
                and self._dataset_shape.as_list() == other._dataset_shape.as_list())

    def __hash__(self) -> int:
        return hash(("DatasetSpec", repr(self._element_spec)))

    def __repr__(self) -> str:
        shape = self._dataset_shape
        dims = "None" if shape.ndims is None else repr(shape.as_list())
        return f"DatasetSpec({self._element_spec!r}, TensorShape({dims}))"

    def is_compatible_with(self, spec_or_value) -> bool:
        other = spec_or_value if isinstance(spec_or_value, DatasetSpec) else \
            _from_dataset(spec_or_value)
        return (other is not None
                and self._dataset_shape.is_compatible_with(other._dataset_shape)
                and _leaves_compatible(self._element_spec, other._element_spec))

    def most_specific_compatible_type(self, other):
        raise NotImplementedError("DatasetSpec.most_specific_compatible_type is not "
                                  "supported by flowgraph")


