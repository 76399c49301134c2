"""TensorFlow 1.0-era ("v1") forms of the stateful op types: queues, lookup tables,
readers, accumulators, stacks, variables and the ref forms of the control-flow ops.

Graphs written by TensorFlow 1.0-1.3 (and graphs built today with ``tf.raw_ops.FIFOQueue``
and friends) hold these op types. Each passes its resource as a *ref* to a ``string``
handle (``string_ref``) where the later ``*V2`` forms pass a ``string`` or ``resource``
handle; the resource itself is the same, so each v1 op here takes the definition of
its later form (attributes, shape and dtype functions) with the handle made a ref, and
the CPU kernels are those of the later form (`flowgraph/backends/cpu/kernels_state_v1.py`).
An op whose inputs or outputs differ from its later form's (``Stack`` has no
``max_size``, ``MutableDenseHashTable`` no ``deleted_key``, ``LookupTableFind`` names its
value type ``Tout``) says so in its own registration below.

Beside them: reader state (``ReaderSerializeState``/``ReaderRestoreState`` and their V2
forms) and ``RecordInput``, which have no later form. TensorArray v1/v2 ops are in
`flowgraph/ops/tensor_array_v1_ops.py`, barriers in `flowgraph/ops/barrier_ops.py`, the
keyed staging areas in `flowgraph/ops/map_staging_ops.py`.

Example
-------
>>> import flowgraph as tf
>>> q = tf.raw_ops.FIFOQueue(component_types=[tf.float32], capacity=3)
>>> q.dtype.name
'string_ref'
>>> enq = tf.raw_ops.QueueEnqueue(handle=q, components=[tf.constant(2.5)])
>>> deq = tf.raw_ops.QueueDequeue(handle=q, component_types=[tf.float32])
>>> with tf.Session() as sess:
...     sess.run(enq)
...     print(sess.run(deq))
2.5
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.registry import (
    get_op_def,
    not_differentiable,
    register_gradient,
    register_op,
)
from flowgraph.framework.tensor_shape import TensorShape, as_shape
from flowgraph.ops import (  # noqa: F401  (the later forms register first)
    accumulator_ops,
    control_flow_cond,
    control_flow_grad,
    control_flow_loops,
    data_flow_ops,
    lookup_mutable,
    lookup_ops,
    reader_ops,
    session_handle_ops,
    stack_ops,
    state_ops,
)
from flowgraph.ops.control_flow_cond import most_specific_compatible_shape
from flowgraph.ops.lookup_common import TABLE_ATTRS, check_keys_values
from flowgraph.ops.op_util import attr_dtype, fixed_dtype

__all__: list[str] = []

# v1 op type -> (its later form, handle input positions, handle output positions).
ALIASES: dict[str, tuple[str, tuple[int, ...], tuple[int, ...]]] = {
    "FIFOQueue": ("FIFOQueueV2", (), (0,)),
    "PaddingFIFOQueue": ("PaddingFIFOQueueV2", (), (0,)),
    "PriorityQueue": ("PriorityQueueV2", (), (0,)),
    "RandomShuffleQueue": ("RandomShuffleQueueV2", (), (0,)),
    "QueueEnqueue": ("QueueEnqueueV2", (0,), ()),
    "QueueEnqueueMany": ("QueueEnqueueManyV2", (0,), ()),
    "QueueDequeue": ("QueueDequeueV2", (0,), ()),
    "QueueDequeueMany": ("QueueDequeueManyV2", (0,), ()),
    "QueueDequeueUpTo": ("QueueDequeueUpToV2", (0,), ()),
    "QueueClose": ("QueueCloseV2", (0,), ()),
    "QueueSize": ("QueueSizeV2", (0,), ()),
    "QueueIsClosed": ("QueueIsClosedV2", (0,), ()),
    "HashTable": ("HashTableV2", (), (0,)),
    "MutableHashTable": ("MutableHashTableV2", (), (0,)),
    "MutableHashTableOfTensors": ("MutableHashTableOfTensorsV2", (), (0,)),
    "LookupTableInsert": ("LookupTableInsertV2", (0,), ()),
    "LookupTableImport": ("LookupTableImportV2", (0,), ()),
    "LookupTableSize": ("LookupTableSizeV2", (0,), ()),
    "LookupTableExport": ("LookupTableExportV2", (0,), ()),
    "TextLineReader": ("TextLineReaderV2", (), (0,)),
    "TFRecordReader": ("TFRecordReaderV2", (), (0,)),
    "IdentityReader": ("IdentityReaderV2", (), (0,)),
    "WholeFileReader": ("WholeFileReaderV2", (), (0,)),
    "ReaderRead": ("ReaderReadV2", (0, 1), ()),
    "ReaderReadUpTo": ("ReaderReadUpToV2", (0, 1), ()),
    "ReaderReset": ("ReaderResetV2", (0,), ()),
    "ReaderNumRecordsProduced": ("ReaderNumRecordsProducedV2", (0,), ()),
    "ReaderNumWorkUnitsCompleted": ("ReaderNumWorkUnitsCompletedV2", (0,), ()),
    "ConditionalAccumulator": ("ResourceConditionalAccumulator", (), (0,)),
    "AccumulatorApplyGradient": ("ResourceAccumulatorApplyGradient", (0,), ()),
    "StackPush": ("StackPushV2", (0,), ()),
    "StackPop": ("StackPopV2", (0,), ()),
    "StackClose": ("StackCloseV2", (0,), ()),
    "Variable": ("VariableV2", (), (0,)),
}


# Outputs whose static shape TensorFlow leaves unknown for the v1 form (its handle
# carries no element shapes): v1 op type -> output positions.
_UNKNOWN_OUTPUTS = {"QueueDequeue": "all", "QueueDequeueMany": "all",
                    "QueueDequeueUpTo": "all", "LookupTableExport": (1,)}


def check_handle(op, shape, pos: int) -> None:
    """A v1 handle is a vector of two strings (container and name)."""
    if not shape.is_compatible_with(TensorShape([2])):
        raise op.shape_error(f"input {pos} must be a v1 handle, a vector of 2 strings, "
                             f"got shape {shape}")


def _handle_shape(op, *inputs):
    return [TensorShape([2])]


def alias_shape_fn(later_fn, ref_in, unknown=()):
    """The shape function of a v1 op reading handles at `ref_in`: the later form's, with
    each v1 handle (a 2-vector) passed as the later form's scalar handle."""

    def fn(op, *shapes):
        for i in ref_in:
            check_handle(op, shapes[i], i)
        out = later_fn(op, *[TensorShape([]) if i in ref_in else s
                             for i, s in enumerate(shapes)])
        return [TensorShape(None) if unknown == "all" or k in unknown else s
                for k, s in enumerate(out)]

    return fn


def _register_alias(v1: str, later: str, ref_in, ref_out, attrs=None) -> None:
    d = get_op_def(later)
    dtype_fn = d.dtype_fn
    if ref_out and v1 != "Variable":  # a handle: a ref to a vector of two strings
        shape_fn, dtype_fn = _handle_shape, fixed_dtype(_dtypes.string)
    else:
        shape_fn = alias_shape_fn(d.shape_fn, ref_in, _UNKNOWN_OUTPUTS.get(v1, ()))
    register_op(v1, attrs=d.attrs if attrs is None else attrs, num_outputs=d.num_outputs,
                dtype_fn=dtype_fn, stateful=d.stateful or bool(ref_in or ref_out),
                cost=d.cost, ref_inputs=ref_in, ref_outputs=ref_out,
                control_flow=d.control_flow)(shape_fn)
    if d.differentiable:
        register_gradient(v1)(d.gradient)
    elif d.differentiable is False:
        not_differentiable(v1)


for _v1, (_later, _in, _out) in ALIASES.items():
    _register_alias(_v1, _later, _in, _out)

# TensorFlow's FixedLengthRecordReader predates the ``encoding`` attribute.
_register_alias("FixedLengthRecordReader", "FixedLengthRecordReaderV2", (), (0,),
                attrs={"header_bytes": 0, "record_bytes": None, "footer_bytes": 0,
                       "hop_bytes": 0, "container": "", "shared_name": ""})


# -- ops whose signature differs from their later form's --------------------------------
register_op("MutableDenseHashTable",
            attrs={**TABLE_ATTRS, "value_shape": [], "initial_num_buckets": 131072,
                   "max_load_factor": 0.8},
            dtype_fn=fixed_dtype(_dtypes.string), stateful=True, ref_outputs=(0,))(
    _handle_shape)


@register_op("LookupTableFind", dtype_fn=lambda op: [op.inputs[2].dtype.base_dtype],
             stateful=True, ref_inputs=(0,))
def _find_shape(op, handle, keys, default_value):
    check_handle(op, handle, 0)
    return [TensorShape(None)]


def _initialize_shape(op, handle, keys, values):
    if op.type == "InitializeTable":
        check_handle(op, handle, 0)
    check_keys_values(op, keys, values)
    if keys.ndims not in (None, 1):
        raise op.shape_error(f"keys must be a vector, got shape {keys}")
    return []


register_op("InitializeTable", num_outputs=0,
            dtype_fn=lambda op: [], stateful=True, ref_inputs=(0,))(_initialize_shape)
register_op("InitializeTableV2", num_outputs=0,
            dtype_fn=lambda op: [], stateful=True)(_initialize_shape)

_text_file = get_op_def("InitializeTableFromTextFileV2")
register_op("InitializeTableFromTextFile", attrs={**_text_file.attrs, "offset": 0},
            num_outputs=0, dtype_fn=lambda op: [], stateful=True, ref_inputs=(0,))(
    alias_shape_fn(_text_file.shape_fn, (0,)))


@register_op("AccumulatorTakeGradient", attrs={"dtype": None}, dtype_fn=attr_dtype("dtype"),
             stateful=True, ref_inputs=(0,))
def _take_shape(op, handle, num_required):
    check_handle(op, handle, 0)
    return [TensorShape(None)]


@register_op("Stack", attrs={"elem_type": None, "stack_name": ""},
             dtype_fn=fixed_dtype(_dtypes.string), stateful=True, ref_outputs=(0,))
def _stack_shape(op):
    return [TensorShape([2])]


register_op("TemporaryVariable", attrs={"shape": None, "dtype": None, "var_name": ""},
            dtype_fn=attr_dtype("dtype"), stateful=True, ref_outputs=(0,))(
    lambda op: [as_shape(op.attrs["shape"])])
register_op("DestroyTemporaryVariable", attrs={"var_name": ""},
            dtype_fn=lambda op: [op.inputs[0].dtype.base_dtype], stateful=True,
            ref_inputs=(0,))(lambda op, ref: [ref])

# Reader state (a serialized ReaderBaseState); the V2 forms take a plain string handle.
for _name, _ref in (("ReaderSerializeState", True), ("ReaderSerializeStateV2", False)):
    register_op(_name, dtype_fn=fixed_dtype(_dtypes.string), stateful=True,
                ref_inputs=(0,) if _ref else ())(lambda op, reader: [TensorShape([])])
for _name, _ref in (("ReaderRestoreState", True), ("ReaderRestoreStateV2", False)):
    register_op(_name, num_outputs=0, dtype_fn=lambda op: [], stateful=True,
                ref_inputs=(0,) if _ref else ())(
        lambda op, reader, state: _check_scalar(op, state, "state") or [])


def _check_scalar(op, shape, what: str) -> None:
    if shape.ndims not in (None, 0):
        raise op.shape_error(f"{what} must be a scalar, got shape {shape}")


@register_op("RecordInput", attrs={"file_pattern": None, "file_random_seed": 301,
                                   "file_shuffle_shift_ratio": 0.0, "file_buffer_size": 10000,
                                   "file_parallelism": 16, "batch_size": 32,
                                   "compression_type": ""},
             dtype_fn=fixed_dtype(_dtypes.string), stateful=True)
def _record_input_shape(op):
    return [TensorShape(None)]  # (TensorFlow's: unknown)


register_op("GetSessionHandleV2", dtype_fn=fixed_dtype(_dtypes.resource), stateful=True)(
    lambda op, value: [TensorShape([])])

not_differentiable("ReaderSerializeState", "ReaderSerializeStateV2", "ReaderRestoreState",
                   "ReaderRestoreStateV2", "RecordInput")
not_differentiable("MutableDenseHashTable", "LookupTableFind", "InitializeTable",
                   "InitializeTableV2", "InitializeTableFromTextFile",
                   "AccumulatorTakeGradient", "Stack", "TemporaryVariable",
                   "DestroyTemporaryVariable", "GetSessionHandleV2")


# -- ref forms of the control-flow ops --------------------------------------------------
def _ref_dtype(op):
    return [op.inputs[0].dtype]


def _same_shape(op, x):
    return [x]


register_op("RefIdentity", dtype_fn=_ref_dtype, ref_inputs=(0,), ref_outputs=(0,))(
    _same_shape)
register_op("RefExit", dtype_fn=_ref_dtype, ref_inputs=(0,), ref_outputs=(0,),
            control_flow="exit")(_same_shape)
register_op("RefNextIteration", dtype_fn=_ref_dtype, ref_inputs=(0,), ref_outputs=(0,),
            control_flow="next_iteration")(_same_shape)
_merge = get_op_def("Merge")
register_op("RefMerge", attrs={"N": None}, num_outputs=2,
            dtype_fn=lambda op: [op.inputs[0].dtype, _dtypes.int32], ref_inputs="all",
            ref_outputs=(0,), control_flow="merge")(_merge.shape_fn)


@register_op("RefSelect", attrs={"N": None}, dtype_fn=lambda op: [op.inputs[1].dtype],
             ref_inputs="all", ref_outputs=(0,))
def _ref_select_shape(op, index, *inputs):
    if index.ndims not in (None, 0):
        raise op.shape_error(f"index must be a scalar, got shape {index}")
    if not inputs:
        raise op.shape_error("RefSelect needs at least one input")
    return [most_specific_compatible_shape(list(inputs))]


register_gradient("RefIdentity")(lambda op, grad: [grad])
register_gradient("RefMerge")(_merge.gradient)
# A loop is differentiated as a whole from its WhileContext (`backprop_loop`), which
# flowgraph's while_loop records and builds of Enter/Exit/NextIteration; the ref forms
# only come from imported TF1 graphs, whose loops carry no such context here, so they
# declare no gradient (TensorFlow's pass the gradient through). RefSelect has none in TF.
not_differentiable("RefExit", "RefNextIteration", "RefSelect")
