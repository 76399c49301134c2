"""CPU kernels for ``tf.data.experimental.Optional`` and for saving an iterator's
position (ops declared in `flowgraph/ops/dataset_optional_ops.py`).

An optional is a scalar object array holding a tuple of arrays, or None when empty.
An iterator's state is JSON ``{"produced": n}``: the elements it handed out since its
dataset started; restoring restarts the dataset with the captured values of its last
initialization and skips `n` elements.

Example
-------
>>> import numpy as np
>>> opt = optional_from_value(np.int64(3))
>>> bool(optional_has_value(opt)), optional_get_value(opt)
(True, array(3))
"""

from __future__ import annotations

import json

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import errors
from flowgraph.ops.iterator_ops import lookup_dataset

from .kernels_data import IteratorResource


def _box(value) -> np.ndarray:
    out = np.empty((), dtype=object)
    out[()] = value
    return out


def _unbox(optional):
    return optional.item() if isinstance(optional, np.ndarray) else optional


@cpu_kernel("OptionalFromValue")
def optional_from_value(*components, Toutput_types=()):
    return _box(tuple(np.array(c, copy=True) for c in components))


@cpu_kernel("OptionalNone")
def optional_none():
    return _box(None)


@cpu_kernel("OptionalHasValue")
def optional_has_value(optional):
    return np.asarray(_unbox(optional) is not None)


@cpu_kernel("OptionalGetValue")
def optional_get_value(optional, *, output_types=(), output_shapes=()):
    value = _unbox(optional)
    if value is None:
        raise errors.InvalidArgumentError(None, None,
                                          "The given optional does not have a value.")
    out = [np.asarray(v) for v in value]
    return out[0] if len(out) == 1 else tuple(out)


@cpu_kernel("IteratorGetNextAsOptional")
def iterator_get_next_as_optional(resource, *, output_types=(), output_shapes=()):
    try:
        element = resource.get_next()
    except errors.OutOfRangeError:
        return _box(None)
    return _box(tuple(np.array(c, copy=True) for c in element))


def _check_resource(resource, what: str) -> IteratorResource:
    if not isinstance(resource, IteratorResource):
        raise errors.InvalidArgumentError(None, None, f"{what} expects an iterator handle, "
                                          f"got {type(resource).__name__}")
    return resource


@cpu_kernel("SerializeIterator")
def serialize_iterator(resource, *, external_state_policy=0):
    res = _check_resource(resource, "SerializeIterator")
    with res.lock:
        if res.pipeline is None:
            raise errors.FailedPreconditionError(
                None, None, "SerializeIterator: the iterator has not been initialized; run "
                "its initializer before saving it.")
        state = {"format": "flowgraph-iterator-state", "produced": res.produced}
    out = np.empty((), dtype=object)
    out[()] = json.dumps(state).encode("utf-8")
    return out


@cpu_kernel("DeserializeIterator")
def deserialize_iterator(resource, state):
    res = _check_resource(resource, "DeserializeIterator")
    text = state.item() if isinstance(state, np.ndarray) else state
    try:
        parsed = json.loads(text.decode("utf-8") if isinstance(text, bytes) else text)
        produced = int(parsed["produced"])
    except (ValueError, KeyError, TypeError, AttributeError):
        raise errors.InvalidArgumentError(
            None, None, f"DeserializeIterator: expected a saved iterator state (JSON with "
            f"'produced'), got {text!r:.80}") from None
    old = res.pipeline
    if old is None:
        raise errors.FailedPreconditionError(
            None, None, "DeserializeIterator: the iterator has not been initialized; run "
            "its initializer before restoring its state.")
    fresh = type(old)(old.dataset, old.rc.values)  # the same dataset, from its start
    for i in range(produced):
        try:
            fresh.next()
        except errors.OutOfRangeError:
            fresh.close()
            raise errors.FailedPreconditionError(
                None, None, f"DeserializeIterator: the saved state is {produced} elements "
                f"in, but the dataset ends after {i}") from None
    res.reset(fresh)
    with res.lock:
        res.produced = produced


@cpu_kernel("DatasetToTFRecord")
class DatasetToTFRecordOp:
    """``TFRecordWriter.write(dataset)``: the registered job (`flowgraph.data`) reads the
    dataset with the captured values and writes its records."""

    def __init__(self, ctx, *, dataset_id) -> None:
        self.op = ctx.op
        self.dataset_id = dataset_id

    def __call__(self, *inputs):
        job = lookup_dataset(self.op, self.dataset_id)
        *captured, filename, compression = inputs
        job.run(list(captured), _text(filename), _text(compression))


@cpu_kernel("SaveDataset")
class SaveDatasetOp:
    """``Dataset.save(path)``: the registered job (`flowgraph.data`) reads the dataset with
    the captured values and writes TensorFlow's saved-dataset directory."""

    def __init__(self, ctx, *, dataset_id) -> None:
        self.op = ctx.op
        self.dataset_id = dataset_id

    def __call__(self, *inputs):
        job = lookup_dataset(self.op, self.dataset_id)
        *captured, path, compression = inputs
        job.run(list(captured), _text(path), _text(compression))


def _text(x) -> str:
    x = x.item() if isinstance(x, np.ndarray) else x
    return x.decode("utf-8") if isinstance(x, bytes) else str(x)


@cpu_kernel("DatasetVariant")
class DatasetVariantOp:
    """``to_variant``: the registered dataset itself, boxed."""

    def __init__(self, ctx, *, dataset_id) -> None:
        self.op = ctx.op
        self.dataset_id = dataset_id

    def __call__(self, *captured):
        return _box(lookup_dataset(self.op, self.dataset_id))
