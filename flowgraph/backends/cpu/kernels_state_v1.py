"""CPU kernels of the v1 stateful op types (`flowgraph/ops/state_v1_ops.py`).

A v1 op's resource is the resource of its later form: the value of a ``string_ref``
queue handle is the same `FIFOQueue` object a ``FIFOQueueV2`` handle carries, so most
v1 op types register the later form's kernel under their own name (`ALIASES`). The few
whose signature differs adapt it here: ``Stack`` (no ``max_size``: unbounded),
``MutableDenseHashTable`` (no ``deleted_key``), ``LookupTableFind`` (the value type of its default),
``InitializeTable``/``InitializeTableV2`` (a one-time fill), ``TemporaryVariable`` and
``DestroyTemporaryVariable`` (a variable that lives for one step), and the ref forms of
the control-flow ops, which forward their input as it is (the executor does the rest).
Also here: ``ReaderSerializeState``/``ReaderRestoreState`` (TensorFlow's
``ReaderBaseState`` bytes) and ``RecordInput`` (shuffled TFRecord batches).
"""

from __future__ import annotations

import glob
import threading

import numpy as np

from flowgraph.backends.cpu import (  # noqa: F401  (the later forms register first)
    backend,
    cpu_kernel,
    kernels_accumulator,
    kernels_control_flow,
    kernels_data_flow,
    kernels_lookup,
    kernels_lookup_mutable,
    kernels_reader,
    kernels_session_handle,
    kernels_stack,
    kernels_state,
)
from flowgraph.backends.cpu.kernels_lookup import HashTableState, _key
from flowgraph.backends.cpu.kernels_lookup_mutable import MutableTableState, _table_op
from flowgraph.backends.cpu.kernels_stack import RunStack
from flowgraph.framework import errors
from flowgraph.framework.proto_codec import Message
from flowgraph.framework.resources import VariableState
from flowgraph.ops.state_v1_ops import ALIASES


def _alias(v1: str, later: str) -> None:
    for k in backend.kernels().get(later, ()):
        backend.register_kernel(v1, k.fn, dtypes=k.dtypes, needs_step=k.needs_step,
                                is_async=k.is_async, fresh=k.fresh,
                                host_inputs=k.host_inputs)


for _v1, (_later, _, _) in ALIASES.items():
    _alias(_v1, _later)
_alias("FixedLengthRecordReader", "FixedLengthRecordReaderV2")
_alias("AccumulatorTakeGradient", "ResourceAccumulatorTakeGradient")
_alias("GetSessionHandleV2", "GetSessionHandle")


class _DenseTableV1(_table_op("MutableDenseHashTable", True)):
    """The v1 dense table: an ``empty_key`` only (it cannot remove keys)."""

    def __call__(self, empty_key):
        empty_key = np.asarray(empty_key)
        if self.types[0] is None:  # (key_dtype is the type of empty_key)
            self.types = (empty_key.dtype, self.types[1])
        key = _key(empty_key.reshape(()).item())
        return self.table(lambda name: MutableTableState(name, *self.types, reserved=(key,)),
                          MutableTableState)


cpu_kernel("MutableDenseHashTable")(_DenseTableV1)


@cpu_kernel("LookupTableFind")
def lookup_table_find(table, keys, default_value):
    return kernels_lookup.lookup_table_find(table, keys, default_value,
                                            value_dtype=np.asarray(default_value).dtype)


def _initialize(table, keys, values, what: str) -> None:
    if not isinstance(table, HashTableState):
        raise errors.InvalidArgumentError(
            None, None, f"{what}: '{getattr(table, 'name', table)}' is not an initializable "
            "lookup table (a HashTable); a mutable table is filled with LookupTableInsert")
    keys, values = np.asarray(keys), np.asarray(values)
    if keys.shape != values.shape:
        raise errors.InvalidArgumentError(
            None, None, f"{what}: table '{table.name}': keys and values must have the same "
            f"shape, got {list(keys.shape)} and {list(values.shape)}")
    ks, vs = keys.reshape(-1).tolist(), values.reshape(-1).tolist()
    entries = table.entries
    if entries is not None:
        # As TensorFlow: initializing again is a no-op when every pair is already there.
        if any(entries.get(_key(k), _MISSING) != v for k, v in zip(ks, vs)):
            raise errors.FailedPreconditionError(
                None, None, f"{what}: Table was already initialized with different data "
                f"(table '{table.name}')")
        return
    table.fill(ks, vs, what)


_MISSING = object()


@cpu_kernel("InitializeTable")
def initialize_table(table, keys, values):
    _initialize(table, keys, values, "InitializeTable")


@cpu_kernel("InitializeTableV2")
def initialize_table_v2(table, keys, values):
    _initialize(table, keys, values, "InitializeTableV2")


@cpu_kernel("InitializeTableFromTextFile")
def initialize_table_from_text_file(table, filename, *, key_index, value_index, vocab_size,
                                    delimiter, offset=0):
    kernels_lookup.initialize_table_from_text_file(
        table, filename, key_index=key_index, value_index=value_index,
        vocab_size=vocab_size, delimiter=delimiter, offset=offset)


@cpu_kernel("Stack")
def stack(*, elem_type, stack_name):
    return RunStack(stack_name, -1)


@cpu_kernel("TemporaryVariable")
def temporary_variable(*, shape, dtype, var_name, op):
    # As TensorFlow's: storage of the given shape that the step's ops assign before use
    # (zeros here rather than whatever memory held).
    state = VariableState(var_name or op.name)
    dims = [int(d) for d in (shape.as_list() if hasattr(shape, "as_list") else shape)]
    state.value = np.zeros(dims, dtype=dtype.as_numpy_dtype)
    return state


@cpu_kernel("DestroyTemporaryVariable")
def destroy_temporary_variable(ref, *, var_name):
    if not isinstance(ref, VariableState):
        raise errors.InvalidArgumentError(
            None, None, f"DestroyTemporaryVariable '{var_name}': input is not a temporary "
            f"variable (got {type(ref).__name__})")
    with ref.lock:
        value, ref.value = ref.value, None
    return value


def _forward(x):
    return x


for _op in ("RefIdentity", "RefExit", "RefNextIteration"):
    cpu_kernel(_op)(_forward)
cpu_kernel("RefMerge")(kernels_control_flow.merge)


@cpu_kernel("RefSelect")
def ref_select(index, *inputs):
    i = int(index)
    if not 0 <= i < len(inputs):
        raise errors.InvalidArgumentError(
            None, None, f"RefSelect: index {i} is out of range: there are {len(inputs)} "
            "inputs")
    return inputs[i]


# -- reader state -----------------------------------------------------------------------
class ReaderBaseState(Message):
    """TensorFlow's ``ReaderBaseState`` message: a reader's progress."""

    FIELDS = ((1, "work_started", "int64", False), (2, "work_finished", "int64", False),
              (3, "num_records_produced", "int64", False), (4, "current_work", "bytes", False))


# As TensorFlow's: only readers whose state is the base state's (one record per work
# item) can save and restore it.
_STATEFUL_READERS = ("IdentityReaderV2", "WholeFileReaderV2")


def _check_reader(reader, what: str):
    if not isinstance(reader, kernels_reader._Reader):
        raise errors.InvalidArgumentError(
            None, None, f"{what}: input 0 is not a reader handle (got {type(reader).__name__})")
    if reader.kind not in _STATEFUL_READERS:
        raise errors.UnimplementedError(
            None, None, f"{what}: {reader.kind.removesuffix('V2')} does not implement "
            f"Reader {what.removeprefix('Reader').removesuffix('V2')} (only IdentityReader "
            "and WholeFileReader do)")
    return reader


def reader_serialize_state(reader):
    reader = _check_reader(reader, "ReaderSerializeState")
    with reader.lock:
        fields = {"work_started": reader.completed + int(reader.active),
                  "work_finished": reader.completed,
                  "num_records_produced": reader.produced,
                  "current_work": reader.work.encode()}
    state = ReaderBaseState(**{k: v for k, v in fields.items() if v})
    out = np.empty((), dtype=object)
    out[()] = state.SerializeToString()
    return out


def reader_restore_state(reader, state):
    reader = _check_reader(reader, "ReaderRestoreState")
    data = np.asarray(state, dtype=object).reshape(())[()]
    data = data if isinstance(data, bytes) else str(data).encode()
    try:
        msg = ReaderBaseState.FromString(data)
    except ValueError:
        raise errors.InvalidArgumentError(
            None, None, f"Could not parse state for {reader.kind}: {data[:40]!r}") from None
    started, finished = int(msg.work_started), int(msg.work_finished)
    produced = int(msg.num_records_produced)
    if not 0 <= finished <= started or produced < 0 or started - finished > 1:
        raise errors.InvalidArgumentError(
            None, None, f"Unexpected state for {reader.kind}: work_started={started}, "
            f"work_finished={finished}, num_records_produced={produced}")
    work = msg.current_work.decode("utf-8", errors="replace") if msg.current_work else ""
    with reader.lock:
        reader.reset()
        if started > finished:
            reader.start(work)
        reader.work = work
        reader.completed, reader.produced = finished, produced


for _name in ("ReaderSerializeState", "ReaderSerializeStateV2"):
    cpu_kernel(_name)(reader_serialize_state)
for _name in ("ReaderRestoreState", "ReaderRestoreStateV2"):
    cpu_kernel(_name)(reader_restore_state)


# -- RecordInput ------------------------------------------------------------------------
@cpu_kernel("RecordInput")
class RecordInputOp:
    """Yields `batch_size` records per run from the TFRecord files matching
    `file_pattern`, epoch after epoch: each epoch reads the files in a shuffled order and
    hands out their records in a shuffled order (seeded by `file_random_seed` and the
    epoch; TensorFlow's order, from parallel readers and a shuffle buffer, differs)."""

    def __init__(self, ctx, *, file_pattern, file_random_seed=301, batch_size=32,
                 compression_type="", **_) -> None:
        self.pattern = file_pattern
        self.seed = int(file_random_seed)
        self.batch_size = int(batch_size)
        self.compression = compression_type or ""
        self.epoch = 0
        self.pending: list = []
        self.lock = threading.Lock()

    def _next_epoch(self) -> list:
        from flowgraph.io.tf_record import iter_records, read_file_bytes

        files = sorted(glob.glob(self.pattern))
        if not files:
            raise errors.NotFoundError(
                None, None, f"RecordInput: no files match file_pattern '{self.pattern}'")
        rng = np.random.RandomState([self.seed & 0x7FFFFFFF, self.epoch])
        self.epoch += 1
        records = []
        for i in rng.permutation(len(files)):
            data = read_file_bytes(files[i], self.compression, "RecordInput")
            records.extend(iter_records(data, files[i], "RecordInput"))
        if not records:
            raise errors.OutOfRangeError(
                None, None, f"RecordInput: the files matching '{self.pattern}' hold no "
                "records")
        return [records[j] for j in rng.permutation(len(records))]

    def __call__(self):
        with self.lock:
            while len(self.pending) < self.batch_size:
                self.pending.extend(self._next_epoch())
            batch, self.pending = (self.pending[:self.batch_size],
                                   self.pending[self.batch_size:])
        out = np.empty(len(batch), dtype=object)
        out[:] = batch
        return out
