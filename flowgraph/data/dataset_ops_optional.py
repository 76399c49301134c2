"""``tf.data.experimental.Optional`` and ``get_next_as_optional`` (a value that may be
absent, e.g. the next element past the end), and ``make_saveable_from_iterator`` (an
iterator's position, saved and restored by a `tf.train.Saver`).

Ops: `flowgraph/ops/dataset_optional_ops.py`; kernels:
`flowgraph/backends/cpu/kernels_data_experimental.py`.

Example
-------
>>> import flowgraph as tf
>>> it = tf.data.make_initializable_iterator(tf.data.Dataset.range(1))
>>> opt = tf.data.experimental.get_next_as_optional(it)
>>> has = opt.has_value()
>>> with tf.Session() as sess:
...     sess.run(it.initializer)
...     print(sess.run(has), sess.run(has))
True False
"""

from __future__ import annotations

from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import GraphKeys, name_scope
from flowgraph.framework.operation import Tensor
from flowgraph.ops.op_util import make_op, make_tensor
from flowgraph.ops.type_spec import OptionalSpec

from .dataset_ops_structure import ComponentSpec, flatten, map_structure, pack_graph
from .iterator import _flat_attrs

__all__ = ["Optional", "get_next_as_optional", "make_saveable_from_iterator"]


def _tensor_spec(spec):
    from flowgraph.ops.type_spec import SparseTensorSpec, TensorSpec

    return SparseTensorSpec(spec.shape, spec.dtype) if spec.sparse else \
        TensorSpec(spec.shape, spec.dtype)


def structure_from_element_spec(element_spec):
    """The internal structure (nested `ComponentSpec`) of a nested `TensorSpec`."""
    from flowgraph.ops.type_spec import TensorSpec

    def leaf(s):
        if not isinstance(s, TensorSpec):
            raise TypeError(f"expected a nested structure of tf.TensorSpec, got {s!r}")
        return ComponentSpec(s.dtype, s.shape)

    return map_structure(leaf, element_spec)


class Optional:
    """A value that is either a nested structure of tensors or absent.

    Make one with `Optional.from_value`, `Optional.empty` or `get_next_as_optional`;
    ``has_value()`` is a bool tensor and ``get_value()`` the tensors (running it on an
    empty optional raises InvalidArgumentError).
    """

    def __init__(self, variant: Tensor, structure) -> None:
        self._variant_tensor = variant
        self._structure = structure

    @staticmethod
    def from_value(value) -> Optional:
        """An optional holding `value` (a nested structure of tensors or values)."""
        with name_scope("optional") as scope:
            tensors = map_structure(lambda v: v if isinstance(v, Tensor)
                                    else convert_to_tensor(v), value)
            flat = flatten(tensors)
            structure = map_structure(lambda t: ComponentSpec(t.dtype.base_dtype, t.shape),
                                      tensors)
            variant = make_tensor("OptionalFromValue", flat,
                                  {"Toutput_types": [t.dtype.base_dtype for t in flat]},
                                  name=scope.rstrip("/") if scope else None)
        return Optional(variant, structure)

    @staticmethod
    def empty(element_spec) -> Optional:
        """An empty optional whose value would have `element_spec` (nested `TensorSpec`)."""
        return Optional(make_tensor("OptionalNone", [], name="OptionalNone"),
                        structure_from_element_spec(element_spec))

    @property
    def element_spec(self):
        """The nested `TensorSpec` of the value."""
        return map_structure(_tensor_spec, self._structure)

    @property
    def _type_spec(self):
        return OptionalSpec(self.element_spec)

    def has_value(self, name=None) -> Tensor:
        """A bool scalar: whether this optional holds a value."""
        return make_tensor("OptionalHasValue", [self._variant_tensor],
                           name=name or "OptionalHasValue")

    def get_value(self, name=None):
        """The value's tensors; running them on an empty optional raises
        InvalidArgumentError ("The given optional does not have a value.")."""
        op = make_op("OptionalGetValue", [self._variant_tensor], _flat_attrs(self._structure),
                     name=name or "OptionalGetValue")
        return pack_graph(self._structure, op.outputs)

    def __repr__(self) -> str:
        return f"<tf.data.experimental.Optional element_spec={self.element_spec!r}>"


def get_next_as_optional(iterator) -> Optional:
    """The iterator's next element as an `Optional`: empty once the iterator is at its
    end, instead of the `OutOfRangeError` of ``get_next()``."""
    if not hasattr(iterator, "_handle"):
        raise TypeError(f"get_next_as_optional expects a tf.data Iterator, got "
                        f"{type(iterator).__name__}")
    variant = make_tensor("IteratorGetNextAsOptional", [iterator._handle],
                          _flat_attrs(iterator._structure), name="IteratorGetNextAsOptional")
    return Optional(variant, iterator._structure)


class _IteratorSaveable:
    """The saveable of an iterator: its state tensor (``SerializeIterator``) is saved
    under ``name``; restoring runs ``DeserializeIterator`` with the saved value.

    A `tf.train.Saver` takes it in its ``var_list`` or from the ``SAVEABLE_OBJECTS``
    collection.
    """

    def __init__(self, iterator_resource: Tensor, name: str, policy: int) -> None:
        self.name = name
        self._handle = iterator_resource
        self.op = iterator_resource.op
        self.state = make_tensor("SerializeIterator", [iterator_resource],
                                 {"external_state_policy": int(policy)},
                                 name="SerializeIterator")
        self.specs = [_SaveSpec(self.state, name + "_STATE", self.state.device)]

    def _saveable_tensor(self) -> Tensor:
        return self.state

    def restore(self, restored_tensors, restored_shapes=None):
        """The op putting the iterator back at the saved position."""
        return make_op("DeserializeIterator", [self._handle, restored_tensors[0]],
                       name="DeserializeIterator")


class _SaveSpec:
    def __init__(self, tensor, name, device) -> None:
        self.tensor, self.name, self.device = tensor, name, device


def make_saveable_from_iterator(iterator, external_state_policy=None):
    """A saveable for `iterator`'s position. Add it to the ``SAVEABLE_OBJECTS``
    collection (or a Saver's ``var_list``) so that checkpoints hold the input pipeline
    too; restoring restarts the dataset and skips the elements already produced."""
    if not hasattr(iterator, "_handle"):
        raise TypeError(f"make_saveable_from_iterator expects a tf.data Iterator, got "
                        f"{type(iterator).__name__}")
    policy = 0 if external_state_policy is None else getattr(
        external_state_policy, "value", external_state_policy)
    return _IteratorSaveable(iterator._handle, iterator._handle.name, policy)


def iterator_saveables(graph) -> list:
    """The iterator saveables of `graph`'s ``SAVEABLE_OBJECTS`` collection."""
    return [s for s in graph.get_collection(GraphKeys.SAVEABLE_OBJECTS)
            if isinstance(s, _IteratorSaveable)]


