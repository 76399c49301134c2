"""Input of a multi-replica strategy, split over the replicas as TensorFlow splits it.

- `experimental_distribute_dataset(dataset)` / `make_dataset_iterator(dataset)`: each
  element is a *global* batch; replica *i* gets rows ``[i*p, (i+1)*p)`` with
  ``p = ceil(B / replicas)`` (so 10 rows over 4 replicas: 3, 3, 3, 1; a short last
  batch can leave replicas empty), TF's rebatching.
- `distribute_datasets_from_function(fn)` / `make_input_fn_iterator(fn)`: `fn` gets an
  `InputContext` and returns a dataset of *per-replica* batches; replica *i* of a
  step gets the step's *i*-th consecutive element (TF's multi-device iterator).
"""

from __future__ import annotations

from flowgraph.framework.graph import get_default_graph
from flowgraph.strategies import base
from flowgraph.strategies.values import regroup

__all__ = ["DistributedDataset", "DistributedDatasetsFromFunction", "DistributedIterator",
           "flatten", "pack"]


def flatten(structure) -> list:
    if isinstance(structure, dict):
        return [x for k in structure for x in flatten(structure[k])]
    if isinstance(structure, list | tuple):
        return [x for v in structure for x in flatten(v)]
    return [structure]


def pack(structure, flat: list):
    it = iter(flat)

    def walk(s):
        if isinstance(s, dict):
            return {k: walk(s[k]) for k in s}
        if isinstance(s, list | tuple):
            items = [walk(v) for v in s]
            return type(s)(*items) if hasattr(s, "_fields") else type(s)(items)
        return next(it)

    return walk(structure)


def _split_rows(tensor, n: int, i: int):
    """Rows ``[i*p, (i+1)*p)`` of `tensor`, ``p = ceil(rows / n)``, clipped to the rows."""
    from flowgraph.ops import array_ops, math_ops

    rows = array_ops.shape(tensor)[0]
    per = math_ops.floordiv(rows + (n - 1), n)
    start = math_ops.minimum(per * i, rows)
    stop = math_ops.minimum(per * (i + 1), rows)
    return tensor[start:stop]


class DistributedIterator:
    """An iterator whose `get_next` gives one value per replica (`PerReplica`)."""

    def __init__(self, iterator, strategy, split: bool) -> None:
        self._iterator = iterator
        self._strategy = strategy
        self._split = split

    @property
    def initializer(self):
        return self._iterator.initializer

    def initialize(self):
        """The ops initializing the iterator (TF's V1 list)."""
        return [self._iterator.initializer]

    output_types = property(lambda self: self._iterator.output_types)
    output_shapes = property(lambda self: self._iterator.output_shapes)
    output_classes = property(lambda self: self._iterator.output_classes)

    def get_next(self, name=None):
        n = self._strategy.num_replicas_in_sync
        graph = get_default_graph()
        devices = self._strategy.extended.worker_devices
        if self._split:
            element = self._iterator.get_next(name=name)
            if n == 1:
                return element
            flat = flatten(element)
            parts = []
            for i in range(n):
                with graph.device(devices[i]):
                    parts.append(pack(element, [_split_rows(t, n, i) for t in flat]))
            return regroup(parts)
        parts = []
        previous = []
        for _ in range(n):
            with graph.control_dependencies(previous):
                element = self._iterator.get_next(name=name)
            previous = [t.op for t in flatten(element)][:1]
            parts.append(element)
        return parts[0] if n == 1 else regroup(parts)


class DistributedDataset:
    """A dataset of global batches, split over the replicas when iterated."""

    def __init__(self, dataset, strategy) -> None:
        self._dataset = dataset
        self._strategy = strategy

    _split = True  # each element is a global batch, cut into one slice per replica

    def make_initializable_iterator(self):
        return DistributedIterator(self._dataset.make_initializable_iterator(),
                                   self._strategy, split=self._split)

    def make_one_shot_iterator(self, _draw_seed: bool = True):
        """(`_draw_seed=False`: an Estimator's input, which TensorFlow reads through an
        initializable iterator that draws no op seed; see `make_one_shot_iterator`.)"""
        from flowgraph.data.iterator import make_one_shot_iterator

        return DistributedIterator(make_one_shot_iterator(self._dataset, _draw_seed),
                                   self._strategy, split=self._split)

    _make_initializable_iterator = make_initializable_iterator
    _make_one_shot_iterator = make_one_shot_iterator

    element_spec = property(lambda self: getattr(self._dataset, "element_spec", None))


class DistributedDatasetsFromFunction(DistributedDataset):
    """The dataset `dataset_fn(InputContext)` returns; consecutive elements go to
    consecutive replicas."""

    def __init__(self, dataset_fn, strategy) -> None:
        n = strategy.num_replicas_in_sync
        dataset = dataset_fn(base.InputContext(1, 0, n))
        if not hasattr(dataset, "make_initializable_iterator"):
            raise ValueError("input_fn must return a tf.data.Dataset; got "
                             f"{type(dataset).__name__}.")
        super().__init__(dataset, strategy)

    _split = False  # each replica takes whole elements in turn

