"""Registry-wide cases for the v1 stateful and data-flow op types (state_v1_ops,
tensor_array_v1_ops, barrier_ops, map_staging_ops): `GRADIENT_CASES` merge into
`test_gradient_registry.CASES`, `CONTRACT_CASES` are contract-only ``(inputs, build,
options)`` cases, in the format of `misc_names_cases`.

A v1 handle's value is the resource itself (a queue, a table, ...), not TensorFlow's
vector of two strings, so the ops that make handles are run, not fetched (`_RUN`); the
outputs whose static shape TensorFlow leaves unknown are `value_dependent`.
"""

from __future__ import annotations

import os
import tempfile

import numpy as np

import flowgraph as tf
from flowgraph.ops.op_util import make_op, make_tensor

R = np.random.RandomState(1717)
SETUP = "op_contract_setup"
_RUN = {"fetch": lambda op: []}
_VD = {"value_dependent": True}
r = tf.raw_ops

VALUE_DEPENDENT = {"QueueDequeue", "QueueDequeueMany", "QueueDequeueUpTo", "LookupTableFind",
                   "LookupTableExport", "ReaderReadUpTo", "AccumulatorTakeGradient",
                   "StackPop", "BarrierTakeMany", "RecordInput", "TensorArrayGather",
                   "TensorArrayGatherV2", "TensorArrayPack", "TensorArrayReadV2",
                   "TensorArrayRead", "TensorArrayConcat", "TensorArrayConcatV2",
                   "MapUnstage", "MapPeek", "MapUnstageNoKey",
                   "OrderedMapUnstage", "OrderedMapPeek", "OrderedMapUnstageNoKey"}
_DIR = tempfile.mkdtemp(prefix="fg_raw_state_cases_")
_TEXT = os.path.join(_DIR, "words.txt")
with open(_TEXT, "w") as _f:
    _f.write("apple\t1\nbanana\t2\n")


def _u(*shape):
    return R.uniform(-2.0, 2.0, size=shape)


# -- TensorArray v1/v2 --------------------------------------------------------------------
def _name(base: str, v1: bool) -> str:
    return f"TensorArray{base}" if v1 else f"TensorArray{base}V2"


def _array(x, size, v1, **attrs):
    return make_tensor("TensorArray" if v1 else "TensorArrayV2", [tf.constant(size)],
                       {"dtype": x.dtype.base_dtype, **attrs})


def _flow():
    return tf.constant(0.0)


def _scatter(h, indices, value, flow, v1):
    return make_tensor(_name("Scatter", v1), [h, tf.constant(indices), value, flow])


def _gather(h, indices, flow, x, v1):
    return make_tensor(_name("Gather", v1), [h, tf.constant(indices), flow],
                       {"dtype": x.dtype.base_dtype})


def _read(h, i, flow, x, v1):
    return make_tensor(_name("Read", v1), [h, tf.constant(i), flow],
                       {"dtype": x.dtype.base_dtype})


def _write(h, i, value, flow, v1):
    return make_tensor(_name("Write", v1), [h, tf.constant(i), value, flow])


def _ta_read(v1):
    def build(x):
        h = _array(x, 3, v1)
        f = _scatter(h, [0, 1, 2], x, _flow(), v1)
        return _read(h, 0, f, x, v1) * tf.sin(_read(h, 2, f, x, v1))
    return build


def _ta_write(v1):
    def build(x, y):
        h = _array(x, 2, v1)
        f = _write(h, 1, x * y, _write(h, 0, tf.sin(x), _flow(), v1), v1)
        return _gather(h, [0, 1], f, x, v1)
    return build


def _ta_gather(v1):
    def build(x):
        h = _array(x, 3, v1)
        return _gather(h, [2, 0], _scatter(h, [0, 1, 2], x * x, _flow(), v1), x, v1)
    return build


def _ta_scatter(v1):
    def build(x):
        h = _array(x, 4, v1)
        return _gather(h, [0, 1, 2, 3], _scatter(h, [3, 0, 1, 2], tf.tanh(x), _flow(), v1),
                       x, v1)
    return build


def _ta_concat(v1):
    def build(x, y):
        h = _array(x, 2, v1)
        f = _write(h, 1, x * y, _write(h, 0, x, _flow(), v1), v1)
        return make_op(_name("Concat", v1), [h, f], {"dtype": x.dtype.base_dtype}).outputs[0]
    return build


def _ta_split(v1):
    def build(x):
        h = _array(x, 2, v1)
        f = make_tensor(_name("Split", v1), [h, tf.exp(x), tf.constant([1, 2], tf.int64),
                                             _flow()])
        return _read(h, 1, f, x, v1) * 2.0
    return build


def _pack(h, flow, x):
    return make_tensor("TensorArrayPack", [h, flow], {"dtype": x.dtype.base_dtype})


def _unpack(h, value):
    return make_tensor("TensorArrayUnpack", [h, value, _flow()])


GRADIENT_CASES = {"RefIdentity": [([_u(2, 3)], lambda x: make_tensor("RefIdentity", [x]) * x)],
                  # (the RefSwitch's live output reaches the merge: its gradient too)
                  "RefMerge": [([_u(2, 3), _u(2, 3)], lambda x, y: make_op("RefMerge", list(
                      make_op("RefSwitch", [x, tf.constant(True)]).outputs)).outputs[0] * y)],
                  "TensorArrayPack": [([_u(3, 2)], lambda x: (lambda h: _pack(
                      h, _unpack(h, x * x), x))(_array(x, 3, True)))],
                  "TensorArrayUnpack": [([_u(3, 2)], lambda x: (lambda h: _pack(
                      h, _unpack(h, tf.tanh(x)), x) * x)(_array(x, 3, True)))]}
for _v1 in (True, False):
    for _base, _make, _n in (("Read", _ta_read, 1), ("Write", _ta_write, 2),
                             ("Gather", _ta_gather, 1), ("Scatter", _ta_scatter, 1),
                             ("Concat", _ta_concat, 2), ("Split", _ta_split, 1)):
        _shape = {"Scatter": (4, 2), "Split": (3, 2)}.get(_base, (3, 2) if _n == 1 else (2, 3))
        GRADIENT_CASES[_name(_base, _v1)] = [([_u(*_shape) for _ in range(_n)], _make(_v1))]


def _ta_lifecycle(v1):
    def build(x):
        h = _array(x, 3, v1)
        f = _scatter(h, [0, 1, 2], x, _flow(), v1)
        size = make_tensor(_name("Size", v1), [h, f])
        g = make_tensor(_name("Grad", v1), [h, f], {"source": "gradients"})
        make_op("TensorArrayGradWithShape", [make_op("TensorArrayV3", [tf.constant(2)], {
            "dtype": x.dtype.base_dtype}).outputs[0], _flow(), tf.constant([2])],
            {"source": "gradients"})
        with tf.control_dependencies([size, g]):
            make_op(_name("Close", v1), [h])
    return build


# -- queues, tables, readers --------------------------------------------------------------
def _queue_program(x):
    q = r.FIFOQueue(component_types=[x.dtype.base_dtype], shapes=[[3]], capacity=5)
    one = r.QueueEnqueue(handle=q, components=[x[0]])
    with tf.control_dependencies([one]):
        many = r.QueueEnqueueMany(handle=q, components=[x])
    with tf.control_dependencies([many]):
        size = r.QueueSize(handle=q)
        first = r.QueueDequeue(handle=q, component_types=[x.dtype.base_dtype])
    with tf.control_dependencies(first):  # a list of components, as TF's wrapper gives
        two = r.QueueDequeueMany(handle=q, n=2, component_types=[x.dtype.base_dtype])
    with tf.control_dependencies([size, *two]):
        close = r.QueueClose(handle=q)
    with tf.control_dependencies([close]):
        r.QueueDequeueUpTo(handle=q, n=5, component_types=[x.dtype.base_dtype])
        r.QueueIsClosed(handle=q)


def _table_program(keys):
    t = r.HashTable(key_dtype=tf.string, value_dtype=tf.int64)
    init = r.InitializeTable(table_handle=t, keys=tf.constant(["a", "b"]),
                             values=tf.constant([1, 2], tf.int64))
    tf.add_to_collection(SETUP, init)
    r.LookupTableFind(table_handle=t, keys=keys, default_value=tf.constant(-1, tf.int64))
    r.LookupTableSize(table_handle=t)


def _table_v2_init(keys):
    t = r.HashTableV2(key_dtype=tf.string, value_dtype=tf.int64)
    init = r.InitializeTableV2(table_handle=t, keys=keys,
                               values=tf.constant([1, 2, 3], tf.int64))
    with tf.control_dependencies([init]):
        r.LookupTableSizeV2(table_handle=t)


def _text_init(keys):
    t = r.HashTable(key_dtype=tf.string, value_dtype=tf.int64)
    init = r.InitializeTableFromTextFile(table_handle=t, filename=_TEXT, key_index=0,
                                         value_index=1)
    with tf.control_dependencies([init]):
        r.LookupTableSize(table_handle=t)


def _mutable_program(keys):
    m = r.MutableHashTable(key_dtype=tf.string, value_dtype=tf.float32)
    ins = r.LookupTableInsert(table_handle=m, keys=keys, values=tf.constant([1., 2., 3.]))
    with tf.control_dependencies([ins]):
        imp = r.LookupTableImport(table_handle=m, keys=keys, values=tf.constant([4., 5., 6.]))
    with tf.control_dependencies([imp]):
        r.LookupTableExport(table_handle=m, Tkeys=tf.string, Tvalues=tf.float32)
    d = r.MutableDenseHashTable(empty_key=tf.constant(-1, tf.int64), value_dtype=tf.float32)
    r.LookupTableInsert(table_handle=d, keys=tf.constant([3], tf.int64),
                        values=tf.constant([1.0]))


def _tensor_table(v1):
    def build(x):
        make = r.MutableHashTableOfTensors if v1 else r.MutableHashTableOfTensorsV2
        t = make(key_dtype=tf.int64, value_dtype=x.dtype.base_dtype, value_shape=[3])
        keys = tf.constant([4, 9], tf.int64)
        ins = (r.LookupTableInsert if v1 else r.LookupTableInsertV2)(
            table_handle=t, keys=keys, values=x)
        with tf.control_dependencies([ins]):
            r.LookupTableFindV2(table_handle=t, keys=tf.constant([[9], [1]], tf.int64),
                                default_value=tf.zeros([3], x.dtype))
    return build


def _reader_program():
    q = r.FIFOQueue(component_types=[tf.string], capacity=4)
    enq = r.QueueEnqueueMany(handle=q, components=[tf.constant([_TEXT, _TEXT])])
    reader = r.TextLineReader()
    with tf.control_dependencies([enq]):
        key, _ = r.ReaderRead(reader_handle=reader, queue_handle=q)
    with tf.control_dependencies([key]):
        keys, _ = r.ReaderReadUpTo(reader_handle=reader, queue_handle=q,
                                   num_records=tf.constant(5, tf.int64))
    with tf.control_dependencies([keys]):
        counts = [r.ReaderNumRecordsProduced(reader_handle=reader),
                  r.ReaderNumWorkUnitsCompleted(reader_handle=reader)]
    with tf.control_dependencies(counts):
        r.ReaderReset(reader_handle=reader)


def _reader_state(v2):
    suffix = "V2" if v2 else ""

    def build():
        q = r.FIFOQueue(component_types=[tf.string], capacity=4)
        enq = r.QueueEnqueueMany(handle=q, components=[tf.constant(["w1", "w2"])])
        reader = r.IdentityReaderV2() if v2 else r.IdentityReader()
        with tf.control_dependencies([enq]):
            key = make_op("ReaderReadV2" if v2 else "ReaderRead", [reader, q]).outputs[0]
        with tf.control_dependencies([key]):
            state = make_tensor(f"ReaderSerializeState{suffix}", [reader])
        make_op(f"ReaderRestoreState{suffix}", [reader, state])
    return build


def _readers():
    r.TFRecordReader()
    r.FixedLengthRecordReader(record_bytes=4)
    r.WholeFileReader()
    r.IdentityReader()


def _record_input():
    path = os.path.join(_DIR, "records.tfrecord")
    if not os.path.exists(path):
        with tf.io.TFRecordWriter(path) as w:
            for i in range(3):
                w.write(b"r%d" % i)
    r.RecordInput(file_pattern=path, batch_size=2)


# -- accumulators, stacks, variables -----------------------------------------------------
def _accumulator(x):
    ca = r.ConditionalAccumulator(dtype=x.dtype.base_dtype, shape=[3])
    apply = r.AccumulatorApplyGradient(handle=ca, local_step=tf.constant(0, tf.int64),
                                       gradient=x)
    with tf.control_dependencies([apply]):
        r.AccumulatorTakeGradient(handle=ca, num_required=1, dtype=x.dtype.base_dtype)


def _stack(x):
    s = r.Stack(elem_type=x.dtype.base_dtype)
    push = r.StackPush(handle=s, elem=x)
    with tf.control_dependencies([push]):
        pop = r.StackPop(handle=s, elem_type=x.dtype.base_dtype)
    with tf.control_dependencies([pop]):
        r.StackClose(handle=s)


def _variable(x):
    v = r.Variable(shape=[2, 3], dtype=x.dtype.base_dtype)
    tf.add_to_collection(SETUP, r.Assign(ref=v, value=tf.ones([2, 3], x.dtype), 
                                         validate_shape=False))
    return v


def _temporary(x):
    tv = r.TemporaryVariable(shape=[3], dtype=x.dtype.base_dtype, var_name="t")
    ref = r.AssignAdd(ref=r.Assign(ref=tv, value=x[0]), value=x[1])
    r.DestroyTemporaryVariable(ref=ref, var_name="t")


def _ref_select(x):
    v = _variable(x)
    r.RefSelect(index=tf.constant(0), inputs=[v, v])


# -- barriers and keyed staging areas ----------------------------------------------------
def _barrier(x):
    b = r.Barrier(component_types=[x.dtype.base_dtype], shapes=[[3]])
    put = r.BarrierInsertMany(handle=b, keys=tf.constant(["a", "b"]), values=x[:2],
                              component_index=0)
    with tf.control_dependencies([put]):
        sizes = [r.BarrierReadySize(handle=b), r.BarrierIncompleteSize(handle=b)]
        take = r.BarrierTakeMany(handle=b, num_elements=2,
                                 component_types=[x.dtype.base_dtype])
    with tf.control_dependencies([*sizes, take.indices, take.keys, *take.values]):
        r.BarrierClose(handle=b)


def _map_area(prefix):
    def build(x):
        area = {"dtypes": [x.dtype.base_dtype, tf.int32], "shared_name": f"{prefix}area"}
        key = tf.constant(3, tf.int64)
        op = {n: getattr(r, f"{prefix}Map{n}") for n in (
            "Stage", "Unstage", "UnstageNoKey", "Peek", "Size", "IncompleteSize", "Clear")}
        part = op["Stage"](key=key, indices=[0], values=[x], **area)
        with tf.control_dependencies([part]):
            inc = op["IncompleteSize"](**area)
        with tf.control_dependencies([inc]):
            full = op["Stage"](key=key, indices=[1], values=[tf.constant(4)], **area)
        with tf.control_dependencies([full]):
            other = op["Stage"](key=tf.constant(8, tf.int64), indices=[0, 1],
                                values=[x, tf.constant(5)], **area)
        with tf.control_dependencies([other]):
            size = op["Size"](**area)
            peek = op["Peek"](key=key, indices=[0, 1], **area)
        with tf.control_dependencies([size, *peek]):
            got = op["Unstage"](key=key, indices=[0, 1], **area)
        with tf.control_dependencies(list(got)):
            rest = op["UnstageNoKey"](indices=[0, 1], **area)
        with tf.control_dependencies([rest.key, *rest.values]):
            op["Clear"](**area)
    return build


CONTRACT_CASES = {
    **{_name(b, v1): [([_u(3, 2)], _ta_lifecycle(v1), {} if b == "Size" else _RUN)]
       for b in ("Size", "Close", "Grad") for v1 in (True, False)},
    "TensorArray": [([_u(3, 2)], _ta_lifecycle(True), _RUN)],
    "TensorArrayV2": [([_u(3, 2)], _ta_lifecycle(False), _RUN)],
    "TensorArrayGradWithShape": [([_u(3, 2)], _ta_lifecycle(True), _RUN)],
    **{n: [([_u(4, 3)], _queue_program, {})] for n in (
        "QueueEnqueue", "QueueEnqueueMany", "QueueDequeue", "QueueDequeueMany",
        "QueueDequeueUpTo", "QueueSize", "QueueClose", "QueueIsClosed")},
    "FIFOQueue": [([_u(4, 3)], _queue_program, _RUN)],
    **{n: [([], lambda n=n: getattr(r, n)(component_types=[tf.float32], shapes=[[2]]), _RUN)]
       for n in ("PaddingFIFOQueue", "PriorityQueue", "RandomShuffleQueue")},
    "HashTable": [([np.array(["a", "z"], object)], _table_program, _RUN)],
    "InitializeTable": [([np.array(["a", "z"], object)], _table_program, {})],
    "LookupTableFind": [([np.array(["a", "z"], object)], _table_program, {})],
    "LookupTableSize": [([np.array(["a", "z"], object)], _table_program, {})],
    "InitializeTableV2": [([np.array(["a", "b", "c"], object)], _table_v2_init, {})],
    "InitializeTableFromTextFile": [([np.array(["a"], object)], _text_init, {})],
    "MutableHashTable": [([np.array(["a", "b", "c"], object)], _mutable_program, _RUN)],
    "MutableHashTableOfTensors": [([_u(2, 3)], _tensor_table(True), _RUN)],
    "MutableHashTableOfTensorsV2": [([_u(2, 3)], _tensor_table(False), _RUN)],
    "MutableDenseHashTable": [([np.array(["a", "b", "c"], object)], _mutable_program, _RUN)],
    **{n: [([np.array(["a", "b", "c"], object)], _mutable_program, {})] for n in (
        "LookupTableInsert", "LookupTableImport", "LookupTableExport")},
    "TextLineReader": [([], _reader_program, _RUN)],
    **{n: [([], _reader_program, {})] for n in (
        "ReaderRead", "ReaderReadUpTo", "ReaderNumRecordsProduced",
        "ReaderNumWorkUnitsCompleted", "ReaderReset")},
    **{n: [([], _readers, _RUN)] for n in (
        "TFRecordReader", "FixedLengthRecordReader", "WholeFileReader", "IdentityReader")},
    "ReaderSerializeState": [([], _reader_state(False), {})],
    "ReaderRestoreState": [([], _reader_state(False), {})],
    "ReaderSerializeStateV2": [([], _reader_state(True), {})],
    "ReaderRestoreStateV2": [([], _reader_state(True), {})],
    "RecordInput": [([], _record_input, {})],
    "ConditionalAccumulator": [([_u(3)], _accumulator, _RUN)],
    "AccumulatorApplyGradient": [([_u(3)], _accumulator, {})],
    "AccumulatorTakeGradient": [([_u(3)], _accumulator, {})],
    "Stack": [([_u(2, 3)], _stack, _RUN)],
    **{n: [([_u(2, 3)], _stack, {})] for n in ("StackPush", "StackPop", "StackClose")},
    "Variable": [([_u(2, 3)], _variable, {})],
    "TemporaryVariable": [([_u(2, 3)], _temporary, _RUN)],
    "DestroyTemporaryVariable": [([_u(2, 3)], _temporary, {})],
    "RefSelect": [([_u(2, 3)], _ref_select, {})],
    "GetSessionHandleV2": [([_u(2, 3)], lambda x: r.GetSessionHandleV2(value=x), _RUN)],
    "Barrier": [([_u(2, 3)], _barrier, _RUN)],
    **{n: [([_u(2, 3)], _barrier, {})] for n in (
        "BarrierInsertMany", "BarrierReadySize", "BarrierIncompleteSize", "BarrierTakeMany",
        "BarrierClose")},
    **{f"{p}Map{n}": [([_u(2, 3)], _map_area(p), {})] for p in ("", "Ordered") for n in (
        "Stage", "Unstage", "UnstageNoKey", "Peek", "Size", "IncompleteSize", "Clear")},
}

SKIP = {
    "RefExit": "an in-loop value (imported TF1 loops; tests/ops/test_raw_state.py)",
    "RefNextIteration": "an in-loop value, cannot be fetched",
}
