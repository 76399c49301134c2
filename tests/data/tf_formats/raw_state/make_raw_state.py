"""Generate the raw_state GraphDef fixture under TensorFlow (run it with the tf-oracle's
Python: ``/tmp/tf-oracle-venv/bin/python tests/data/tf_formats/raw_state/make_raw_state.py``).

A TF 1.0-era input pipeline and the stateful op types of that time, in their v1 forms
(resources passed as refs to 2-vectors of strings):

    files -> FIFOQueue (v1) -> TextLineReader / ReaderRead -> LookupTableFind (HashTable,
    InitializeTable) -> QueueEnqueue into a FIFOQueue of (line, id) -> QueueDequeueMany

beside a ``Variable`` with ``RefSwitch``/``RefMerge``/``RefSelect``/``RefIdentity``, a
while loop over a variable's ref (``RefEnter``/``RefNextIteration``/``RefExit``), an
accumulate_n-style ``TemporaryVariable``, a v1 ``Stack``, ``TensorArrayV2`` and v1
``TensorArray`` ops, a ``Barrier``, keyed staging areas (``MapStage``,
``OrderedMapStage``) and a v1 ``ConditionalAccumulator``.

TensorFlow 2.15 builds most of these with ``tf.raw_ops``; the reader and TensorArray
op types are deprecated at GraphDef versions 16 and 26, so the script adds their nodes
by hand and marks the GraphDef as written by producer version 15, as graphs of that
time were, then imports it back into TensorFlow to compute the expected values.
Writes ``graph.pb``, ``steps.json`` (the runs, in order: fetches and feeds) and
``expected.npz`` (TensorFlow's values for each run).
"""

import json
import os

import numpy as np
import tensorflow.compat.v1 as tf
from tensorflow.core.framework import attr_value_pb2

tf.disable_v2_behavior()
HERE = os.path.dirname(os.path.abspath(__file__))
r = tf.raw_ops
F32, I64, STR = tf.float32, tf.int64, tf.string


def build():
    files = tf.placeholder(STR, [None], name="files")
    fq = r.FIFOQueue(component_types=[STR], capacity=8, name="filename_queue")
    r.QueueEnqueueMany(handle=fq, components=[files], name="filename_queue_enqueue")
    r.QueueClose(handle=fq, name="filename_queue_close")
    vocab = r.HashTable(key_dtype=STR, value_dtype=I64, name="vocab")
    r.InitializeTable(table_handle=vocab, keys=tf.constant(["apple", "banana", "cherry"]),
                      values=tf.constant([10, 20, 30], I64), name="vocab_init")
    r.LookupTableSize(table_handle=vocab, name="vocab_size")
    tf.constant(-1, I64, name="oov")
    bq = r.FIFOQueue(component_types=[STR, I64], shapes=[[], []], capacity=16,
                     name="batch_queue")
    r.QueueDequeueMany(handle=bq, n=2, component_types=[STR, I64], name="batch")
    r.QueueDequeueUpTo(handle=bq, n=5, component_types=[STR, I64], name="batch_up_to")
    r.QueueSize(handle=bq, name="batch_queue_size")
    r.QueueClose(handle=bq, name="batch_queue_close")
    r.QueueIsClosed(handle=bq, name="batch_queue_closed")

    # variables and ref control flow
    pred = tf.placeholder(tf.bool, [], name="pred")
    v = r.Variable(shape=[2], dtype=F32, name="v")
    w = r.Variable(shape=[2], dtype=F32, name="w")
    r.Assign(ref=v, value=tf.constant([1.0, 2.0]), name="v_init")
    r.Assign(ref=w, value=tf.constant([5.0, 7.0]), name="w_init")
    counter = r.Variable(shape=[], dtype=F32, name="counter")
    r.Assign(ref=counter, value=tf.constant(1.0), name="counter_init")
    r.AssignAdd(ref=r.RefIdentity(input=v, name="v_ref"), value=tf.constant([0.5, 0.5]),
                name="v_bump")
    f, t = r.RefSwitch(data=v, pred=pred, name="ref_switch")
    merged, index = r.RefMerge(inputs=[f, t], name="ref_merge")
    tf.identity(merged, name="merged_value")
    tf.identity(index, name="merged_index")
    tf.identity(r.RefSelect(index=tf.constant(1), inputs=[v, w], name="ref_select"),
                name="selected")
    # tf.accumulate_n of TF 1.0: a temporary variable summed into
    x = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], name="addends")
    acc = r.TemporaryVariable(shape=[2], dtype=F32, var_name="acc_tmp", name="acc")
    ref = r.Assign(ref=acc, value=tf.zeros([2]), name="acc_zero")
    for i in range(3):
        ref = r.AssignAdd(ref=ref, value=x[i], name=f"acc_add{i}")
    r.DestroyTemporaryVariable(ref=ref, var_name="acc_tmp", name="acc_sum")

    # a v1 stack
    s = r.Stack(elem_type=F32, stack_name="stk", name="stack")
    p1 = r.StackPush(handle=s, elem=tf.constant([1.5, 2.5]), name="push1")
    with tf.control_dependencies([p1]):
        p2 = r.StackPush(handle=s, elem=tf.constant([3.5, 4.5]), name="push2")
    with tf.control_dependencies([p2]):
        pop1 = r.StackPop(handle=s, elem_type=F32, name="pop1")
    with tf.control_dependencies([pop1]):
        pop2 = r.StackPop(handle=s, elem_type=F32, name="pop2")
    with tf.control_dependencies([pop2]):
        r.StackClose(handle=s, name="stack_close")

    # a barrier
    b = r.Barrier(component_types=[F32, tf.int32], shapes=[[2], []], name="barrier")
    r.BarrierInsertMany(handle=b, keys=["k1", "k2", "k3"], values=tf.constant(
        [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), component_index=0, name="barrier_put0")
    r.BarrierInsertMany(handle=b, keys=["k3", "k1"], values=tf.constant([30, 10]),
                        component_index=1, name="barrier_put1")
    r.BarrierReadySize(handle=b, name="barrier_ready")
    r.BarrierIncompleteSize(handle=b, name="barrier_incomplete")
    r.BarrierTakeMany(handle=b, num_elements=2, component_types=[F32, tf.int32],
                      name="barrier_take")
    r.BarrierClose(handle=b, name="barrier_close")

    # keyed staging areas
    for prefix in ("", "Ordered"):
        area = {"dtypes": [F32, tf.int32], "shared_name": f"{prefix}area"}
        low = prefix.lower()
        for key, vals in ((5, ([1.0, 2.0], 3)), (2, ([4.0, 5.0], 6))):
            getattr(r, f"{prefix}MapStage")(
                key=tf.constant(key, I64), indices=[0, 1],
                values=[tf.constant(vals[0]), tf.constant(vals[1])],
                name=f"{low}map_put{key}", **area)
        getattr(r, f"{prefix}MapStage")(key=tf.constant(9, I64), indices=[1],
                                         values=[tf.constant(7)], name=f"{low}map_part",
                                         **area)
        getattr(r, f"{prefix}MapSize")(name=f"{low}map_size", **area)
        getattr(r, f"{prefix}MapIncompleteSize")(name=f"{low}map_incomplete", **area)
        getattr(r, f"{prefix}MapPeek")(key=tf.constant(5, I64), indices=[0, 1],
                                        name=f"{low}map_peek", **area)
        getattr(r, f"{prefix}MapUnstage")(key=tf.constant(5, I64), indices=[1],
                                           dtypes=[tf.int32], shared_name=area["shared_name"],
                                           name=f"{low}map_take5")
    r.OrderedMapUnstageNoKey(indices=[0, 1], dtypes=[F32, tf.int32],
                             shared_name="Orderedarea", name="orderedmap_take_first")

    # a v1 conditional accumulator
    ca = r.ConditionalAccumulator(dtype=F32, shape=[2], name="accumulator")
    for i, g in enumerate(([1.0, 2.0], [3.0, 6.0])):
        r.AccumulatorApplyGradient(handle=ca, local_step=tf.constant(0, I64),
                                   gradient=tf.constant(g), name=f"acc_apply{i}")
    r.AccumulatorNumAccumulated(handle=ca, name="acc_count")
    r.AccumulatorTakeGradient(handle=ca, num_required=2, dtype=F32, name="acc_take")
    return tf.get_default_graph().as_graph_def()


def _attr(value):
    a = attr_value_pb2.AttrValue()
    if isinstance(value, attr_value_pb2.AttrValue):
        return value
    if isinstance(value, tf.DType):
        a.type = value.as_datatype_enum
    elif isinstance(value, bool):
        a.b = value
    elif isinstance(value, int):
        a.i = value
    elif isinstance(value, str):
        a.s = value.encode()
    elif isinstance(value, tf.TensorShape):
        a.shape.CopyFrom(value.as_proto())
    elif type(value).__name__ == "TensorProto":
        a.tensor.CopyFrom(value)
    else:
        raise TypeError(value)
    return a


def add_legacy_nodes(gd):
    """The nodes TensorFlow 2.15 no longer builds (deprecated op types)."""

    def node(name, op, inputs, **attrs):
        n = gd.node.add()
        n.name, n.op = name, op
        n.input.extend(inputs)
        for k, v in attrs.items():
            n.attr[k].CopyFrom(_attr(v))

    def const(name, value, dtype):
        n = gd.node.add()
        n.name, n.op = name, "Const"
        n.attr["dtype"].CopyFrom(_attr(dtype))
        n.attr["value"].tensor.CopyFrom(tf.make_tensor_proto(value, dtype))

    node("reader", "TextLineReader", [], skip_header_lines=0, container="", shared_name="")
    node("read", "ReaderRead", ["reader", "filename_queue"])
    node("read_ids", "LookupTableFind", ["vocab", "read:1", "oov"], Tin=STR, Tout=I64)
    node("batch_enqueue", "QueueEnqueue", ["batch_queue", "read:1", "read_ids"],
         Tcomponents=_types(STR, I64))
    node("records_read", "ReaderNumRecordsProduced", ["reader"])
    node("files_done", "ReaderNumWorkUnitsCompleted", ["reader"])

    unknown = tf.TensorShape(None)
    const("ta_size", 3, tf.int32)
    const("ta_flow", 0.0, F32)
    const("ta_rows", [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], F32)
    const("ta_indices", [0, 1, 2], tf.int32)
    const("ta_pick", [2, 0], tf.int32)
    const("ta_one", 1, tf.int32)
    node("ta2", "TensorArrayV2", ["ta_size"], dtype=F32, element_shape=unknown,
         dynamic_size=False, clear_after_read=False, tensor_array_name="ta2")
    node("ta2_scatter", "TensorArrayScatterV2", ["ta2", "ta_indices", "ta_rows", "ta_flow"],
         T=F32)
    node("ta2_read", "TensorArrayReadV2", ["ta2", "ta_one", "ta2_scatter"], dtype=F32)
    node("ta2_gather", "TensorArrayGatherV2", ["ta2", "ta_pick", "ta2_scatter"], dtype=F32,
         element_shape=unknown)
    node("ta2_concat", "TensorArrayConcatV2", ["ta2", "ta2_scatter"], dtype=F32,
         element_shape_except0=unknown)
    node("ta2_size", "TensorArraySizeV2", ["ta2", "ta2_scatter"])
    node("ta1", "TensorArray", ["ta_size"], dtype=F32, dynamic_size=False,
         clear_after_read=False, tensor_array_name="ta1", element_shape=unknown)
    node("ta1_unpack", "TensorArrayUnpack", ["ta1", "ta_rows", "ta_flow"], T=F32)
    node("ta1_read", "TensorArrayRead", ["ta1", "ta_one", "ta1_unpack"], dtype=F32)
    node("ta1_pack", "TensorArrayPack", ["ta1", "ta1_unpack"], dtype=F32,
         element_shape=unknown)
    node("ta1_size", "TensorArraySize", ["ta1", "ta1_unpack"])
    # a TF 1.0 while loop adding 2.0 to a variable three times, through its ref: RefEnter,
    # RefMerge, RefSwitch, RefNextIteration and RefExit (`loop_value` reads the exit)
    const("loop/i0", 0, tf.int32)
    node("loop/enter_i", "Enter", ["loop/i0"], T=tf.int32, frame_name="loop",
         is_constant=False, parallel_iterations=1)
    node("loop/enter_v", "RefEnter", ["counter"], T=F32, frame_name="loop",
         is_constant=False, parallel_iterations=1)
    node("loop/merge_i", "Merge", ["loop/enter_i", "loop/next_i"], T=tf.int32, N=2)
    node("loop/merge_v", "RefMerge", ["loop/enter_v", "loop/next_v"], T=F32, N=2)
    node("loop/limit", "Const", ["^loop/merge_i"], dtype=tf.int32,
         value=tf.make_tensor_proto(3, tf.int32))
    node("loop/less", "Less", ["loop/merge_i", "loop/limit"], T=tf.int32)
    node("loop/cond", "LoopCond", ["loop/less"])
    node("loop/switch_i", "Switch", ["loop/merge_i", "loop/cond"], T=tf.int32)
    node("loop/switch_v", "RefSwitch", ["loop/merge_v", "loop/cond"], T=F32)
    node("loop/body", "Identity", ["loop/switch_i:1"], T=tf.int32)
    node("loop/one", "Const", ["^loop/body"], dtype=tf.int32,
         value=tf.make_tensor_proto(1, tf.int32))
    node("loop/two", "Const", ["^loop/body"], dtype=F32, value=tf.make_tensor_proto(2.0, F32))
    node("loop/add_i", "Add", ["loop/body", "loop/one"], T=tf.int32)
    node("loop/add_v", "AssignAdd", ["loop/switch_v:1", "loop/two"], T=F32, use_locking=False)
    node("loop/next_i", "NextIteration", ["loop/add_i"], T=tf.int32)
    node("loop/next_v", "RefNextIteration", ["loop/add_v"], T=F32)
    node("loop/exit_i", "Exit", ["loop/switch_i:0"], T=tf.int32)
    node("loop/exit_v", "RefExit", ["loop/switch_v:0"], T=F32)
    node("loop_value", "Identity", ["loop/exit_v"], T=F32)
    node("loop_count", "Identity", ["loop/exit_i"], T=tf.int32)
    gd.versions.producer = 15
    gd.versions.min_consumer = 0


def _types(*dtypes):
    a = attr_value_pb2.AttrValue()
    a.list.type.extend(d.as_datatype_enum for d in dtypes)
    return a


# The runs of the test, in order: (fetches, feeds). "$files" is the two text files.
STEPS = [
    (["vocab_init", "v_init", "w_init"], {}),
    (["vocab_size"], {}),
    (["filename_queue_enqueue"], {"files:0": "$files"}),
    (["filename_queue_close"], {}),
    *[(["batch_enqueue"], {})] * 6,
    (["batch_queue_size:0", "records_read:0", "files_done:0"], {}),
    (["batch:0", "batch:1"], {}),
    (["batch:0", "batch:1"], {}),
    (["batch_queue_close"], {}),
    (["batch_up_to:0", "batch_up_to:1", "batch_queue_closed:0"], {}),
    (["merged_value:0", "merged_index:0"], {"pred:0": True}),
    (["merged_value:0", "merged_index:0"], {"pred:0": False}),
    (["v_bump"], {}),
    (["selected:0", "merged_value:0"], {"pred:0": True}),
    (["acc_sum:0"], {}),
    (["pop1:0", "pop2:0"], {}),
    (["barrier_put0"], {}),
    (["barrier_ready:0", "barrier_incomplete:0"], {}),
    (["barrier_put1"], {}),
    (["barrier_ready:0", "barrier_incomplete:0"], {}),
    (["barrier_take:1", "barrier_take:2", "barrier_take:3"], {}),
    (["map_put5", "map_put2", "map_part", "orderedmap_put5", "orderedmap_put2",
      "orderedmap_part"], {}),
    (["map_size:0", "map_incomplete:0", "orderedmap_size:0", "orderedmap_incomplete:0"], {}),
    (["map_peek:0", "map_peek:1", "orderedmap_peek:0", "orderedmap_peek:1"], {}),
    (["map_take5:0", "orderedmap_take5:0"], {}),
    (["orderedmap_take_first:0", "orderedmap_take_first:1", "orderedmap_take_first:2"], {}),
    (["map_size:0", "orderedmap_size:0"], {}),
    (["acc_apply0", "acc_apply1"], {}),
    (["acc_count:0"], {}),
    (["acc_take:0"], {}),
    (["ta2_read:0", "ta2_gather:0", "ta2_concat:0", "ta2_concat:1", "ta2_size:0"], {}),
    (["ta1_pack:0", "ta1_size:0", "ta1_read:0"], {}),
    (["counter_init"], {}),
    (["loop_value:0", "loop_count:0"], {}),
]


def run(gd, files):
    values = {}
    with tf.Graph().as_default() as g:
        tf.import_graph_def(gd, name="")
        with tf.Session(graph=g) as sess:
            for i, (fetches, feeds) in enumerate(STEPS):
                feed = {k: (files if v == "$files" else v) for k, v in feeds.items()}
                out = sess.run(fetches, feed)
                for j, (name, value) in enumerate(zip(fetches, out)):
                    if ":" in name:
                        value = np.asarray(value)
                        if value.dtype == object:  # (strings: no pickled arrays)
                            value = value.astype(bytes)
                        values[f"step{i}_{j}"] = value
    return values


def main():
    gd = build()
    add_legacy_nodes(gd)
    files = [os.path.join(HERE, "words_a.txt"), os.path.join(HERE, "words_b.txt")]
    values = run(gd, files)
    with open(os.path.join(HERE, "graph.pb"), "wb") as f:
        f.write(gd.SerializeToString())
    with open(os.path.join(HERE, "steps.json"), "w") as f:
        json.dump(STEPS, f, indent=0)
    np.savez(os.path.join(HERE, "expected.npz"), **values)
    print(f"{len(gd.node)} nodes, {len(values)} values")


if __name__ == "__main__":
    main()
