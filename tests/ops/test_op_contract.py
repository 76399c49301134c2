"""The op contract, checked for every registered op type with a CPU kernel: the dtype and
the static shape that the op's dtype and shape functions infer while the graph is built
agree with what the CPU kernel returns when the op runs.

Each case builds the op on placeholders fed with the case's arrays, whose static shapes
are fully known ("static"), have an unknown first dimension ("batch"), unknown dimensions
("dims") or an unknown rank ("rank"); floating cases also run in float32 ("static32").
For every output of every op of the checked type in the graph:

- ``tensor.dtype`` is the dtype of the value the kernel returns;
- ``tensor.shape`` is compatible with the value's shape;
- in the "static" runs, unless the op's output shape depends on input values (Where,
  Unique, a shape fed through a placeholder, ...: `VALUE_DEPENDENT` or the case's
  ``value_dependent``), ``tensor.shape`` is fully defined.

Cases come from the gradient check's table (`test_gradient_registry.CASES`, reused as it
is), from the tables below (element-wise families over ranks 0 to 3 with size-0
dimensions and several dtypes, attribute variants of the shape-heavy ops) and from small
programs for stateful ops (variables, optimizers, stacks, queues, iterators, summaries).
An op type with a CPU kernel needs a case or a `SKIP` entry with its reason:
`test_every_op_is_covered` fails otherwise, so coverage cannot shrink silently.
"""

from __future__ import annotations

import importlib
import os
import tempfile
from dataclasses import dataclass
from typing import Any

import cf_cases
import contrib2_cases
import dx_cases
import fractional_pool_cases
import image_random_cases
import image_transform_cases
import issue15_cases
import issue15_cov_cases
import issue15_math_cases
import linalg_complete_cases
import misc_names_cases
import missing_names_cases
import numpy as np
import pytest
import quantize_cases
import raw_img_cases
import raw_math_cases
import raw_parse_cases
import raw_rnn_cases
import raw_sparse_cases
import raw_state_cases
import raw_tlist_cases
import raw_train_cases
import resource_variable_cases
import tensor_array_cases
import test_gradient_registry as grad_cases
import top_names_cases

import flowgraph as tf
import flowgraph.ops
from flowgraph.backends.cpu import backend as cpu_backend
from flowgraph.backends.cpu.kernels_tensor_list import TensorList, TensorMap
from flowgraph.framework.registry import registered_ops
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.io_ops import restore_v2
from flowgraph.ops.math_ops import fused_tensordot
from flowgraph.ops.nn_ops import fused_l2_normalize
from flowgraph.ops.op_util import make_op, make_tensor
from flowgraph.serving.server import encode_example

if hasattr(flowgraph.ops, "load_all"):
    flowgraph.ops.load_all()
else:  # until every op-registering module lives under flowgraph/ops
    for _module in ("flowgraph.data", "flowgraph.estimators", "flowgraph.summary",
                    "flowgraph.train"):
        importlib.import_module(_module)

R = np.random.RandomState(11)
MODES = ("static", "batch", "dims", "rank", "static32")
# Ops that `check_contract` runs before the checked ones (iterator initializers, ...): a
# case's builder adds them to this graph collection.
SETUP = "op_contract_setup"


@dataclass
class Case:
    """`build(*placeholders)` makes one or more ops of the checked type from placeholders
    fed with `inputs`. `value_dependent`: some output shape depends on input values, so
    it need not be fully defined even when every input shape is. `modes` narrows the
    placeholder shapes the case is run with."""

    inputs: list
    build: Any
    value_dependent: bool = False
    modes: tuple = MODES
    init: bool = False  # run the graph's variable initializers first
    xfail: str | None = None  # a known contract violation, with its reason
    fetch: Any = None  # fetch(op) -> the outputs to check (default: all)


def f64(*shape, low=-2.0, high=2.0):
    return R.uniform(low, high, size=shape)


def i32(*shape, high=3):
    return R.randint(0, high, size=shape).astype(np.int32)


def op(op_type, inputs, attrs=None, dtypes=None):
    """Build `op_type` from placeholders (None entries of `inputs`) and constants."""

    def build(*xs):
        it = iter(xs)
        ins = [next(it) if v is None else tf.constant(v) for v in inputs]
        return make_op(op_type, ins, attrs, dtypes=dtypes)

    return build


# Op types whose output shapes depend on input values in every case (in others the case
# says so with ``value_dependent=True``).
VALUE_DEPENDENT = {
    "BroadcastGradientArgs",  # the reduction indices for the two shapes' values
    "SafeSparseLookup",  # one row per dense_shape[0] (a value)
    "SparseFillEmptyRows",  # nnz plus the number of empty rows
    # the number of segments is the last segment id + 1
    "SparseSegmentSum", "SparseSegmentMean", "SparseSegmentSqrtN",
    # as TF: the element shape is the one the array was created with (here unknown)
    "TensorArrayGatherV3",
    # as TF: the lengths output of a concat is a vector of unknown size
    "TensorArrayConcatV3",
}

# -- the check ---------------------------------------------------------------------------

def _placeholder_shape(a: np.ndarray, mode: str):
    if mode in ("static", "static32"):
        return a.shape
    if mode == "batch":
        return [None, *a.shape[1:]] if a.ndim else a.shape
    if mode == "dims":
        return [None] * a.ndim
    return None


def _as_float32(a: np.ndarray) -> np.ndarray:
    if a.dtype == np.float64:
        return a.astype(np.float32)
    if a.dtype == np.complex128:
        return a.astype(np.complex64)
    return a


def _runtime_dtype(value):
    arr = np.asarray(value)
    if arr.dtype.kind == "O" and arr.size and isinstance(arr.flat[0], TensorList | TensorMap):
        return tf.variant
    if arr.dtype.kind in "OSU":
        return tf.string
    return tf.as_dtype(arr.dtype)


def check_contract(op_type: str, case: Case, mode: str) -> int:
    """Build and run `case` with placeholders shaped by `mode`; returns how many outputs
    were compared."""
    inputs = [np.asarray(a) for a in case.inputs]
    if mode == "static32":
        inputs = [_as_float32(a) for a in inputs]
    graph = tf.Graph()
    with graph.as_default():
        phs = [tf.placeholder(tf.as_dtype(a.dtype), _placeholder_shape(a, mode), name=f"x{i}")
               for i, a in enumerate(inputs)]
        case.build(*phs)
        ops = [o for o in graph.get_operations() if o.type == op_type]
        assert ops, f"the case builds no {op_type} op"
        init = tf.global_variables_initializer() if case.init else None
        setup = graph.get_collection(SETUP)
    feed = dict(zip(phs, inputs))
    fetches = [t for o in ops for t in (case.fetch(o) if case.fetch else o.outputs)]
    with tf.Session(graph=graph) as sess:
        if init is not None:
            sess.run(init, feed)
        if setup:
            sess.run(setup, feed)
        values = sess.run(fetches, feed) if fetches else sess.run(ops, feed)
    if not fetches:
        return 0
    problems = []
    for t, v in zip(fetches, values):
        static_dtype = t.dtype.base_dtype
        got = _runtime_dtype(v)
        if static_dtype.is_quantized and got == tf.as_dtype(
                static_dtype.as_numpy_dtype[0]):
            got = static_dtype  # fetched as the plain integer type, as in TensorFlow
        if got != static_dtype:
            problems.append(f"{t.name}: static dtype {static_dtype.name}, kernel "
                            f"returned {got.name}")
        shape = np.shape(v)
        if not t.shape.is_compatible_with(shape):
            problems.append(f"{t.name}: static shape {t.shape} is not compatible with the "
                            f"kernel's {shape}")
        elif (mode in ("static", "static32") and not case.value_dependent
              and op_type not in VALUE_DEPENDENT
              and not t.shape.is_fully_defined()):
            problems.append(f"{t.name}: static shape {t.shape} is not fully defined "
                            f"(kernel returned {shape})")
    assert not problems, f"{op_type} ({mode}): " + "; ".join(problems)
    return len(fetches)


# -- cases ------------------------------------------------------------------------------

CASES: dict[str, list[Case]] = {}


def _add(op_type: str, *cases: Case) -> None:
    CASES.setdefault(op_type, []).extend(cases)


def _add_cases(module) -> None:
    """Add a cases module's ``CONTRACT_CASES``: ``{op_type: [(inputs, build, options)]}``."""
    for op_type, cases in module.CONTRACT_CASES.items():
        for inputs, build, options in cases:
            _add(op_type, Case(list(inputs), build, **options))


for _name, _cases in grad_cases.CASES.items():
    if _name in ("Switch", "RefSwitch", "Enter", "RefEnter", "NextIteration"):
        continue  # their gradient cases fetch dead or in-loop values: see below
    for _inputs, _build in _cases:
        _add(_name, Case(list(_inputs), _build))

# Shapes for the element-wise families: scalars, size-0 dimensions, ranks 1 to 3.
SHAPES = [(), (0,), (3,), (2, 0, 3), (2, 3, 4)]
PAIRS = [((2, 3), (2, 3)), ((2, 1), (1, 3)), ((), (2, 0)), ((0, 3), (3,)),
         ((4, 1, 3), (2, 1))]


def _unary_family(op_type, fn, gen, shapes=SHAPES, dtypes=(np.float64,)):
    for shape in shapes:
        for dt in dtypes:
            _add(op_type, Case([np.asarray(gen(*shape)).astype(dt)], fn))


def _pos(*shape):
    return R.uniform(0.5, 2.0, size=shape)


def _ints(*shape):
    return R.randint(-5, 6, size=shape)


def _nonzero_ints(*shape):
    return R.randint(1, 5, size=shape) * R.choice([-1, 1], size=shape)


def _bools(*shape):
    return R.rand(*shape) > 0.5


_FLOAT_UNARY = {
    "Neg": tf.negative, "Sign": tf.sign, "Square": tf.square, "Exp": tf.exp,
    "Expm1": tf.expm1, "Tanh": tf.tanh, "Sigmoid": tf.sigmoid, "Sin": tf.sin, "Cos": tf.cos,
    "Tan": tf.tan, "Erf": tf.erf, "Floor": tf.floor, "Ceil": tf.ceil, "Round": tf.round,
    "Abs": tf.abs, "Relu": tf.nn.relu, "Relu6": tf.nn.relu6, "Elu": tf.nn.elu,
    "Selu": tf.nn.selu, "Softplus": tf.nn.softplus, "Softsign": tf.nn.softsign,
    "LeakyRelu": tf.nn.leaky_relu, "IsFinite": tf.is_finite, "IsInf": tf.is_inf,
    "IsNan": tf.is_nan,
    "ZerosLike": lambda x: tf.zeros_like(x, optimize=False),  # a static shape: a Const
    "OnesLike": lambda x: make_tensor("OnesLike", [x]),  # tf.ones_like builds a Fill
    "StopGradient": tf.stop_gradient, "Identity": tf.identity, "L2Loss": tf.nn.l2_loss,
    # TF folds a known static shape into a Const; optimize=False builds the op itself
    "Rank": lambda x: tf.rank(x, optimize=False),
    "Shape": lambda x: tf.shape(x, optimize=False),
    "Size": lambda x: tf.size(x, optimize=False),
    "CheckNumerics": lambda x: make_tensor("CheckNumerics", [x], {"message": "m"}),
}
for _name, _fn in _FLOAT_UNARY.items():
    _unary_family(_name, _fn, f64)
for _name, _fn in {"Reciprocal": tf.reciprocal, "Sqrt": tf.sqrt, "Rsqrt": tf.rsqrt,
                   "Log": tf.log, "Log1p": tf.log1p}.items():
    _unary_family(_name, _fn, _pos)
for _name in ("Neg", "Sign", "Square", "Abs", "Relu", "OnesLike", "ZerosLike", "Identity",
              "Rank", "Shape", "Size"):
    _unary_family(_name, _FLOAT_UNARY[_name], _ints, shapes=[(), (0,), (2, 3)],
                  dtypes=(np.int32, np.int64))
_add("Shape", Case([f64(2, 0, 3)], lambda x: tf.shape(x, out_type=tf.int64, optimize=False)))
_add("Size", Case([f64(2, 3)], lambda x: tf.size(x, out_type=tf.int64, optimize=False)))
_unary_family("LogicalNot", tf.logical_not, _bools, dtypes=(np.bool_,))
_unary_family("Identity", tf.identity, _bools, shapes=[(2, 0), (3,)], dtypes=(np.bool_,))
for _name, _fn in {"Softmax": tf.nn.softmax, "LogSoftmax": tf.nn.log_softmax,
                   "L2Normalize": lambda x: fused_l2_normalize(x, -1)}.items():
    _unary_family(_name, _fn, f64, shapes=[(3,), (2, 0), (0, 3), (2, 3, 4)])

_FLOAT_BINARY = {
    "Add": lambda x, y: make_tensor("Add", [x, y]), "Sub": tf.subtract,
    "Mul": tf.multiply, "RealDiv": tf.realdiv,
    "DivNoNan": tf.div_no_nan, "Pow": tf.pow, "Maximum": tf.maximum, "Minimum": tf.minimum,
    "SquaredDifference": tf.squared_difference, "FloorDiv": tf.floordiv,
    "FloorMod": tf.floormod, "TruncateMod": tf.truncatemod,
    "AddV2": tf.add,
    "Equal": tf.equal, "NotEqual": tf.not_equal, "Less": tf.less,
    "LessEqual": tf.less_equal, "Greater": tf.greater, "GreaterEqual": tf.greater_equal,
}
_INT_BINARY = ("Add", "Sub", "Mul", "Maximum", "Minimum", "SquaredDifference", "FloorDiv",
               "FloorMod", "TruncateMod", "AddV2", "Equal", "NotEqual", "Less",
               "GreaterEqual")
for _name, _fn in _FLOAT_BINARY.items():
    for _sx, _sy in PAIRS:
        _add(_name, Case([_pos(*_sx), _pos(*_sy)], _fn))
for _name in _INT_BINARY:
    for _dt in (np.int32, np.int64):
        for _sx, _sy in PAIRS[:4]:
            _add(_name, Case([_ints(*_sx).astype(_dt), _nonzero_ints(*_sy).astype(_dt)],
                             _FLOAT_BINARY[_name]))
for _sx, _sy in PAIRS:
    _add("TruncateDiv", Case([_ints(*_sx).astype(np.int32),
                              _nonzero_ints(*_sy).astype(np.int32)], tf.truncatediv))
    _add("LogicalAnd", Case([_bools(*_sx), _bools(*_sy)], tf.logical_and))
    _add("LogicalOr", Case([_bools(*_sx), _bools(*_sy)], tf.logical_or))
    _add("Select", Case([_bools(*_sy), f64(*_sy), f64(*_sy)], tf.where))
    _add("SelectV2", Case([_bools(*_sx), f64(*_sy), f64(*_sx)], tf.where_v2))
_add("AddN", Case([f64(2, 0), f64(2, 0)], lambda a, b: tf.add_n([a, b])),
     Case([_ints(3).astype(np.int32)] * 3, lambda *xs: tf.add_n(list(xs))),
     Case([f64()], lambda a: tf.add_n([a, a, a])))

# -- reductions, over several axes, with keepdims and size-0 dimensions
_REDUCE = {"Sum": tf.reduce_sum, "Mean": tf.reduce_mean, "Prod": tf.reduce_prod,
           "Max": tf.reduce_max, "Min": tf.reduce_min}
for _name, _fn in _REDUCE.items():
    for _axis in (None, 0, -1, [0, 2], []):
        for _keep in (False, True):
            _add(_name, Case([f64(2, 3, 4)],
                             lambda x, a=_axis, k=_keep, fn=_fn: fn(x, a, keepdims=k)))
    _add(_name, Case([f64(2, 0, 3)], lambda x, fn=_fn: fn(x, 2)),
         Case([f64()], lambda x, fn=_fn: fn(x)),
         Case([_ints(2, 3).astype(np.int32)], lambda x, fn=_fn: fn(x, 1)),
         Case([_ints(2, 3).astype(np.int64)], lambda x, fn=_fn: fn(x)))
    _add(_name, Case([f64(2, 3)], lambda x, fn=_fn: fn(x, tf.constant(1, tf.int64))))
for _name in ("Sum", "Prod"):
    _add(_name, Case([f64(2, 0, 3)], lambda x, fn=_REDUCE[_name]: fn(x, 1)))
for _name, _fn in {"All": tf.reduce_all, "Any": tf.reduce_any}.items():
    for _axis in (None, 0, [0, 2], -1):
        _add(_name, Case([_bools(2, 3, 4)], lambda x, a=_axis, fn=_fn: fn(x, a)),
             Case([_bools(2, 0, 4)], lambda x, a=_axis, fn=_fn: fn(x, a, keepdims=True)))
for _name, _fn in {"ArgMax": tf.argmax, "ArgMin": tf.argmin}.items():
    _add(_name, Case([f64(2, 3, 4)], lambda x, fn=_fn: fn(x, 1)),
         Case([f64(5)], lambda x, fn=_fn: fn(x, 0)),
         Case([f64(0, 3)], lambda x, fn=_fn: fn(x, -1)),
         Case([_ints(2, 3).astype(np.int32)], lambda x, fn=_fn: fn(x, 0, output_type=tf.int32)))
for _name, _fn in {"Cumsum": tf.cumsum, "Cumprod": tf.cumprod}.items():
    _add(_name, Case([f64(2, 0, 3)], lambda x, fn=_fn: fn(x, 2)),
         Case([f64(4)], lambda x, fn=_fn: fn(x, 0, exclusive=True)),
         Case([_ints(2, 3).astype(np.int32)], lambda x, fn=_fn: fn(x, 1)))

# -- matrix products with size-0 and integer operands
_add("MatMul", Case([f64(0, 3), f64(3, 4)], tf.matmul),
     Case([f64(2, 0), f64(0, 4)], tf.matmul),
     Case([_ints(2, 3).astype(np.int32), _ints(3, 2).astype(np.int32)], tf.matmul))
_add("BatchMatMulV2", Case([f64(0, 2, 3), f64(3, 4)], tf.matmul),
     Case([f64(3, 1, 2, 0), f64(4, 0, 2)], tf.matmul))

# -- array ops on more shapes
_add("Reshape", Case([f64(2, 0, 3)], lambda x: tf.reshape(x, [3, 0])),
     Case([f64(6)], lambda x: tf.reshape(x, [2, 3])),
     Case([f64(1)], lambda x: tf.reshape(x, [])),
     Case([f64(2, 3), np.array([3, 2], np.int32)], tf.reshape, value_dependent=True))
_add("ExpandDims", Case([f64()], lambda x: tf.expand_dims(x, 0)),
     Case([f64(2, 0)], lambda x: tf.expand_dims(x, -1)))
_add("Squeeze", Case([f64(1, 3, 1)], tf.squeeze, modes=("static", "static32")),
     Case([f64(1, 0, 1)], lambda x: tf.squeeze(x, [0])))
_add("Transpose", Case([f64(2, 0, 3)], tf.transpose),
     Case([_ints(2, 3).astype(np.int32)], lambda x: tf.transpose(x, [1, 0])))
_add("ConcatV2", Case([f64(2, 0), f64(2, 3)], lambda a, b: tf.concat([a, b], 1)),
     Case([f64(3), f64(0)], lambda a, b: tf.concat([a, b], 0)),
     Case([f64(0, 3), f64(0, 3), f64(0, 3)], lambda *xs: tf.concat(list(xs), 0)))
_add("Pack", Case([f64(), f64()], lambda a, b: tf.stack([a, b])),
     Case([f64(2, 0), f64(2, 0)], lambda a, b: tf.stack([a, b], axis=-1)))
_add("Unpack", Case([f64(2, 0)], lambda x: tf.unstack(x), modes=("static", "static32")),
     Case([f64(3, 2)], lambda x: tf.unstack(x, axis=-1), modes=("static", "static32")))
_add("Tile", Case([f64(2, 0)], lambda x: tf.tile(x, [3, 2])),
     Case([f64(2, 3)], lambda x: tf.tile(x, [0, 1])))
_add("Pad", Case([f64(0, 2)], lambda x: tf.pad(x, [[1, 1], [0, 2]])),
     Case([f64()], lambda x: tf.pad(x, np.zeros((0, 2), np.int32))))
_add("Slice", Case([f64(4, 3)], lambda x: tf.slice(x, [1, 0], [0, -1])),
     Case([f64(4, 3), np.array([1, 1], np.int32)],
          lambda x, b: tf.slice(x, b, [2, 2])))
_add("StridedSlice", Case([f64(4, 3)], lambda x: x[5:]),
     Case([f64(4, 3)], lambda x: x[1, 2]),
     Case([f64(4, 3, 2)], lambda x: x[..., 0]),
     Case([f64(4, 3)], lambda x: x[::-1, tf.newaxis]),
     Case([f64(4)], lambda x: x[-3:-1]))
_add("GatherV2", Case([f64(4, 3)], lambda p: tf.gather(p, np.zeros((0, 2), np.int32))),
     Case([f64(4, 3)], lambda p: tf.gather(p, 2)),
     Case([f64(4, 3), np.array([[1, 0]], np.int64)], lambda p, i: tf.gather(p, i, axis=1)))
_add("GatherNd", Case([f64(3, 4), np.array([[0], [2]], np.int32)], tf.gather_nd),
     Case([f64(3, 4), np.zeros((0, 2), np.int32)], tf.gather_nd))
_add("ScatterNd", Case([f64(0, 4)], lambda v: tf.scatter_nd(np.zeros((0, 1), np.int32), v,
                                                            [5, 4])))
_add("Fill", Case([np.int32(3)], lambda v: tf.fill([0, 2], v)),
     Case([f64(), np.array([2, 3], np.int32)], lambda v, d: tf.fill(d, v),
          value_dependent=True))
_add("ReverseV2", Case([f64(2, 0)], lambda x: tf.reverse_v2(x, [1])))
_add("Split", Case([f64(4, 0)], lambda x: tf.split(x, 2)))
_add("SplitV", Case([f64(5, 2)], lambda x: tf.split(x, [2, -1])),
     Case([f64(5, 2)], lambda x: tf.split(x, [5, 0])))
_add("Cast", *[Case([f64(2, 0)], lambda x, d=d: tf.cast(x, d), modes=MODES[:3])
               for d in (tf.float32, tf.int32, tf.int64, tf.bool, tf.uint8, tf.float16)],
     Case([_ints(3).astype(np.int64)], lambda x: tf.cast(x, tf.float64)),
     Case([_bools(3)], lambda x: tf.cast(x, tf.float32)))
_add("OneHot", Case([i32(3)], lambda i: tf.one_hot(i, 4)),
     Case([i32(2, 0)], lambda i: tf.one_hot(i, 3, axis=0)),
     Case([i32()], lambda i: tf.one_hot(i, 3, on_value=2.0, off_value=-1.0,
                                        dtype=tf.float64)),
     Case([i32(3).astype(np.int64)], lambda i: tf.one_hot(i, 3, axis=0, dtype=tf.int32)))
_add("Range", Case([], lambda: tf.range(5)), Case([], lambda: tf.range(1.0, 2.0, 0.25)),
     Case([], lambda: tf.range(3, 3)), Case([], lambda: tf.range(5, 0, -2)),
     Case([np.int32(4)], tf.range, value_dependent=True),
     Case([], lambda: tf.range(tf.constant(1, tf.int64), 4)))
_add("LinSpace", Case([], lambda: tf.lin_space(0.0, 1.0, 5)),
     Case([f64(), f64()], lambda a, b: tf.lin_space(a, b, 3)),
     Case([np.float32(0.0), np.float32(1.0), np.int32(4)], tf.lin_space,
          value_dependent=True))
_add("Where", *[Case([_bools(*s)], tf.where, value_dependent=True)
                for s in [(5,), (2, 3), (0, 2), ()]])
_add("Unique", Case([_ints(6).astype(np.int32)], tf.unique, value_dependent=True),
     Case([f64(0)], tf.unique, value_dependent=True),
     Case([_ints(6).astype(np.int64)], lambda x: tf.unique(x, out_idx=tf.int64),
          value_dependent=True))
_add("InvertPermutation", Case([np.array([2, 0, 1], np.int32)], tf.invert_permutation),
     Case([np.array([], np.int64)], tf.invert_permutation))
_add("ShapeN", Case([f64(2, 0), _ints(3).astype(np.int32)], lambda a, b: tf.shape_n([a, b])),
     Case([f64(2)], lambda a: tf.shape_n([a, a], out_type=tf.int64)))
_add("BroadcastGradientArgs",
     Case([], lambda: make_op("BroadcastGradientArgs", [tf.constant([2, 1, 3]),
                                                         tf.constant([4, 3])])),
     Case([np.array([2, 1, 3], np.int32), np.array([3], np.int32)],
          lambda a, b: make_op("BroadcastGradientArgs", [a, b]), value_dependent=True))
_add("ConcatOffset",
     Case([np.array(1, np.int32), np.array([2, 3], np.int32), np.array([2, 4], np.int32)],
          lambda d, a, b: make_op("ConcatOffset", [d, a, b], {"N": 2})),
     Case([np.array(-2, np.int32), np.array([2, 3], np.int64), np.array([5, 3], np.int64),
           np.array([1, 3], np.int64)],
          lambda d, a, b, c: make_op("ConcatOffset", [d, a, b, c], {"N": 3})))
_add("TopKV2", Case([f64(2, 5)], lambda x: tf.nn.top_k(x, 0)),
     Case([_ints(6).astype(np.int32)], lambda x: tf.nn.top_k(x, 2)),
     Case([f64(0, 4)], lambda x: tf.nn.top_k(x, 3)))
_add("InTopKV2", Case([f64(3, 4).astype(np.float32), np.array([0, 3, 1], np.int32)],
                      lambda p, t: tf.nn.in_top_k(p, t, 2)),
     Case([f64(0, 4).astype(np.float32), np.zeros(0, np.int64)],
          lambda p, t: tf.nn.in_top_k(p, t, 1)))
# `tf.bincount` builds DenseBincount (as TF 2.15); Bincount stays for graphs that have it.
_add("Bincount", Case([np.array([1, 3, 1, 0], np.int32)],
                      lambda x: make_tensor("Bincount", [x, tf.constant(4),
                                                         tf.constant([], tf.int32)]),
                      value_dependent=True),
     Case([np.array([1, 3, 1], np.int32), f64(3)],
          lambda x, w: make_tensor("Bincount", [x, tf.constant(5), w]), value_dependent=True))
_add("Bucketize", Case([f64(2, 3)], lambda x: make_tensor("Bucketize", [x],
                                                         {"boundaries": [-1.0, 0.0, 1.5]})),
     Case([_ints(0, 2).astype(np.int32)],
          lambda x: make_tensor("Bucketize", [x], {"boundaries": [0.0]})))
_add("AsString", Case([f64(2, 3)], tf.as_string), Case([_ints(0).astype(np.int32)],
                                                      tf.as_string),
     Case([_bools(2)], tf.as_string))
_add("StringToHashBucketFast",
     Case([np.array([b"a", b"bc", b""], object)],
          lambda s: tf.string_to_hash_bucket_fast(s, 7)),
     Case([np.array([[b"x"]], object)], lambda s: tf.string_to_hash_bucket_fast(s, 3)))

# -- ops whose shape functions read attributes or constant inputs: more variants
for _b, _e, _st, _masks in [
        ([0, 1], [3, 3], [1, 1], {}), ([1, 0], [0, 0], [1, 1], {"end_mask": 3}),
        ([-1, 0], [-4, 3], [-1, 2], {}), ([0, 0], [9, 9], [2, 3], {}),
        ([1, 2], [2, 3], [1, 1], {"shrink_axis_mask": 1}),
        ([0], [1], [1], {"ellipsis_mask": 1}), ([0, 1], [1, 2], [1, 1], {"new_axis_mask": 1}),
        ([0, 2, 0], [0, 3, 0], [1, 1, 1], {"new_axis_mask": 5, "shrink_axis_mask": 2}),
        ([0, -1], [0, 0], [1, 1], {"begin_mask": 1, "end_mask": 1, "shrink_axis_mask": 2}),
        ([3, 0], [0, 3], [1, 1], {}), ([2], [0], [-1], {"end_mask": 1})]:
    _add("StridedSlice", Case([f64(4, 3)], lambda x, b=_b, e=_e, st=_st, m=_masks:
                              tf.strided_slice(x, b, e, st, **m)))
_add("StridedSlice", Case([f64(4, 3), np.array([1, 0], np.int32)],
                          lambda x, b: tf.strided_slice(x, b, [3, 2]), value_dependent=True),
     Case([f64(0, 3)], lambda x: x[1:, 1]))

for _pad in ("SAME", "VALID"):
    for _strides, _fmt, _shape in [([1, 2, 3, 1], "NHWC", (2, 5, 7, 3)),
                                   ([1, 1, 3, 2], "NCHW", (1, 3, 7, 5)),
                                   ([1, 1, 1, 1], "NHWC", (0, 4, 4, 3))]:
        _fshape = (2, 3, 3, 2)
        _add("Conv2D", Case([f64(*_shape), f64(*_fshape)], lambda x, f, s=_strides, p=_pad,
                            d=_fmt: tf.nn.conv2d(x, f, s, p, data_format=d)))
        _add("MaxPool", Case([f64(*_shape)], lambda x, s=_strides, p=_pad, d=_fmt:
                             tf.nn.max_pool(x, [1, 2, 3, 1] if d == "NHWC" else [1, 1, 2, 3], s,
                                            p, data_format=d)))
        _add("AvgPool", Case([f64(*_shape)], lambda x, s=_strides, p=_pad, d=_fmt:
                             tf.nn.avg_pool(x, [1, 3, 2, 1] if d == "NHWC" else [1, 1, 3, 2], s,
                                            p, data_format=d)))
        if _fmt == "NHWC":
            _add("DepthwiseConv2dNative", Case([f64(*_shape), f64(*_fshape[:2], 3, 2)],
                                               lambda x, f, s=_strides, p=_pad:
                                               tf.nn.depthwise_conv2d(x, f, s, p)))
_add("Conv2D", Case([f64(1, 6, 6, 2), f64(3, 3, 2, 4)], lambda x, f: tf.nn.conv2d(
    x, f, [1, 2, 2, 1], "SAME", dilations=[1, 2, 2, 1])))

_add("Reshape", Case([f64(4, 6)], lambda x: tf.reshape(x, [-1, 3])),
     Case([f64(4, 6)], lambda x: tf.reshape(x, [2, -1, 3])),
     Case([f64(4, 6)], lambda x: tf.reshape(x, [-1])),
     Case([f64(3, 0)], lambda x: tf.reshape(x, [0, 5])))
_add("Tile", Case([f64(2, 3), np.array([2, 1], np.int32)], tf.tile, value_dependent=True))
_add("BroadcastTo", Case([f64(3, 1), np.array([2, 3, 4], np.int32)], tf.broadcast_to,
                         value_dependent=True),
     Case([f64(3, 1)], lambda x: tf.broadcast_to(x, [2, 3, 0])),
     Case([f64()], lambda x: tf.broadcast_to(x, tf.constant([2, 3], tf.int64))))
_add("Transpose", Case([f64(2, 3, 4), np.array([1, 2, 0], np.int32)], tf.transpose,
                       value_dependent=True),
     Case([f64(2, 3, 4)], lambda x: tf.transpose(x, [0, 2, 1])))
_add("Squeeze", Case([f64(1, 3, 1)], lambda x: tf.squeeze(x, [-1])),
     Case([f64(1, 1)], lambda x: tf.squeeze(x, [0, 1])))
_add("ExpandDims", Case([f64(2, 3)], lambda x: tf.expand_dims(x, -3)),
     Case([f64(2, 3), np.int32(1)], tf.expand_dims, value_dependent=True))
_add("Pack", Case([f64(2, 3), f64(2, 3), f64(2, 3)], lambda *xs: tf.stack(list(xs), -2)))
_add("Unpack", Case([f64(2, 3, 0)], lambda x: tf.unstack(x, axis=-2),
                    modes=("static", "static32")))
_add("ConcatV2", Case([f64(2, 3), f64(2, 1), f64(2, 0)], lambda *xs: tf.concat(list(xs), -1)),
     Case([f64(2, 3), f64(2, 1), np.int32(1)], lambda a, b, ax: tf.concat([a, b], ax),
          value_dependent=True))
_add("Split", Case([f64(2, 6)], lambda x: tf.split(x, 3, axis=-1)),
     Case([f64(2, 6), np.int32(1)], lambda x, ax: tf.split(x, 2, axis=ax),
          value_dependent=True))
_add("SplitV", Case([f64(2, 6)], lambda x: tf.split(x, [-1, 2, 1], axis=1)),
     Case([f64(2, 6), np.array([3, 3], np.int32)], lambda x, s: tf.split(x, s, axis=1,
                                                                        num=2),
          value_dependent=True))
_add("Slice", Case([f64(4, 3, 2)], lambda x: tf.slice(x, [1, 1, 0], [-1, 2, -1])),
     Case([f64(4, 3), np.array([2, 1], np.int32)], lambda x, s: tf.slice(x, [0, 0], s),
          value_dependent=True))
_add("Pad", Case([f64(2, 3), np.array([[1, 0], [0, 2]], np.int32)], tf.pad,
                 value_dependent=True))
_add("MirrorPad", Case([f64(3, 4, 2)], lambda x: tf.pad(x, [[0, 2], [1, 1], [0, 0]],
                                                        mode="SYMMETRIC")))
_add("OneHot", Case([i32(2, 3)], lambda i: tf.one_hot(i, 4, axis=1)),
     Case([i32(2), np.int32(5)], lambda i, d: tf.one_hot(i, d), value_dependent=True))
_add("GatherV2", Case([f64(2, 4, 3), np.array([[1, 0], [3, 3]], np.int32)],
                      lambda p, i: tf.gather(p, i, axis=1, batch_dims=1)),
     Case([f64(4, 3), np.array([0, 1], np.int32), np.int32(1)],
          lambda p, i, a: tf.gather(p, i, axis=a), value_dependent=True))
_add("GatherNd", Case([f64(2, 3, 4), np.array([[[0, 1, 2]], [[1, 2, 3]]], np.int32)],
                      tf.gather_nd))
_add("ScatterNd", Case([f64(2, 3)], lambda v: tf.scatter_nd([[0, 1], [1, 0]], v, [2, 2, 3])),
     Case([f64(2), np.array([4], np.int32)], lambda v, s: tf.scatter_nd([[1], [3]], v, s),
          value_dependent=True))
_add("SparseToDense", Case([f64(2), np.array([3, 4], np.int64)], lambda v, s: tf.sparse_to_dense(
    np.array([[0, 1], [2, 3]], np.int64), s, v), value_dependent=True),
     Case([f64()], lambda v: tf.sparse_to_dense(np.array([1, 3], np.int64), [5], v)))
_add("TopKV2", Case([f64(2, 5), np.int32(2)], tf.nn.top_k, value_dependent=True))
for _name, _fn in _REDUCE.items():
    _add(_name, Case([f64(2, 3, 4), np.array([0, 2], np.int32)],
                     lambda x, a, fn=_fn: fn(x, a), value_dependent=True),
         Case([f64(2, 3, 4), np.array([1], np.int32)],
              lambda x, a, fn=_fn: fn(x, a, keepdims=True), value_dependent=True))
_add("ArgMax", Case([f64(2, 3), np.int32(1)], tf.argmax, value_dependent=True))
_add("Cumsum", Case([f64(2, 3), np.int32(0)], tf.cumsum))
_add("Einsum", Case([f64(2, 3), f64(4, 3)], lambda a, b: tf.einsum("ij,kj->ik", a, b)),
     Case([f64(2, 3)], lambda a: tf.einsum("ij->ji", a)),
     Case([f64(3), f64(4)], lambda a, b: tf.einsum("i,j->ij", a, b)),
     Case([f64(3, 3)], lambda a: tf.einsum("ii->i", a)),
     Case([f64(5, 2, 3), f64(5, 3, 4)], lambda a, b: tf.einsum("...ij,...jk->...ik", a, b)))
_add("Tensordot", Case([f64(2, 3), f64(4, 5)], lambda a, b: fused_tensordot(a, b, 0)),
     Case([f64(2, 3, 4), f64(3, 4)], lambda a, b: fused_tensordot(a, b, 2)))
_add("BatchMatMulV2", Case([f64(2, 1, 3, 4), f64(5, 4, 2)], tf.matmul),
     Case([f64(2, 0, 3), f64(2, 3, 4)], lambda a, b: tf.matmul(a, b)))
_add("MatMul", Case([f64(3, 2), f64(4, 3)], lambda a, b: tf.matmul(a, b, True, True)))
_add("BiasAdd", Case([f64(2, 3, 4, 5), f64(3)], lambda x, b: tf.nn.bias_add(x, b, "NCHW")),
     Case([f64(0, 4), f64(4)], tf.nn.bias_add))
_add("BiasAddGrad", Case([f64(2, 3, 4, 5)], lambda g: make_tensor("BiasAddGrad", [g], {
    "data_format": "NCHW"})))
_add("L2Normalize", Case([f64(2, 3, 4)], lambda x: fused_l2_normalize(x, [0, 2])))
_add("Softmax", Case([f64(2, 3)], lambda x: tf.nn.softmax(x, axis=0)))
_add("SoftmaxCrossEntropyWithLogits", Case([f64(0, 4), f64(0, 4)], lambda x, y:
                                           tf.nn.softmax_cross_entropy_with_logits_v2(
                                               labels=y, logits=x)))
_add("SparseSoftmaxCrossEntropyWithLogits", Case(
    [f64(3, 4), np.array([0, 3, 1], np.int64)], lambda x, i:
    tf.nn.sparse_softmax_cross_entropy_with_logits(labels=i, logits=x)))
_add("ReverseSequence", Case([f64(3, 4, 2), np.array([1, 2], np.int64)], lambda x, s:
                             tf.reverse_sequence(x, s, seq_axis=1, batch_axis=2)))
_add("SelectV2", Case([_bools(2, 1, 3), f64(4, 1), f64()], tf.where_v2))
_add("Range", Case([], lambda: tf.range(0.0, 1.0, 0.3)), Case([], lambda: tf.range(2, -5, -3)),
     Case([], lambda: tf.range(0, 10, 4, dtype=tf.float64)))
_add("LinSpace", Case([], lambda: tf.lin_space(1.0, 1.0, 1)))
_add("Fill", Case([_bools()], lambda v: tf.fill([3, 1], v)))

# -- size-0 inputs for the backward, sparse and contraction ops
_GRAD_ZERO = {"ReluGrad": {}, "Relu6Grad": {}, "EluGrad": {}, "SeluGrad": {},
              "SoftplusGrad": {}, "SoftsignGrad": {}, "LeakyReluGrad": {"alpha": 0.2},
              "TanhGrad": {}, "SigmoidGrad": {}, "SqrtGrad": {}, "RsqrtGrad": {},
              "ReciprocalGrad": {}}
for _name, _attrs in _GRAD_ZERO.items():
    _add(_name, Case([f64(0, 3), f64(0, 3)], op(_name, [None, None], _attrs)),
         Case([f64(), f64()], op(_name, [None, None], _attrs)))
_add("BiasAddGrad", Case([f64(0, 3)], op("BiasAddGrad", [None])))
_add("Conv2DBackpropInput", Case([f64(3, 2, 3, 2), f64(0, 3, 4, 2)], op(
    "Conv2DBackpropInput", [np.array([0, 5, 4, 3], np.int32), None, None],
    grad_cases.CONV)))
_add("Conv2DBackpropFilter", Case([f64(0, 5, 4, 3), f64(0, 3, 4, 2)], op(
    "Conv2DBackpropFilter", [None, np.array([3, 2, 3, 2], np.int32), None], grad_cases.CONV)))
_add("MaxPoolWithArgmax",
     Case([f64(2, 5, 4, 3)], lambda x: tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1],
                                                                   [1, 2, 1, 1], "SAME")),
     Case([f64(1, 5, 6, 2)], lambda x: tf.nn.max_pool_with_argmax(
         x, [1, 3, 2, 1], [1, 2, 2, 1], "VALID", output_dtype=tf.int32,
         include_batch_in_index=True)))
_add("MaxPoolGradWithArgmax",
     Case([f64(2, 5, 4, 3), f64(2, 3, 4, 3), np.tile(np.arange(24, dtype=np.int64) * 2 % 60,
                                                     3).reshape(2, 3, 4, 3)],
          lambda x, g, a: make_op("MaxPoolGradWithArgmax", [x, g, a], {
              "ksize": [1, 2, 2, 1], "strides": [1, 2, 1, 1], "padding": "SAME",
              "Targmax": tf.int64, "include_batch_in_index": False})))
_add("MaxPoolGrad", Case([f64(0, 5, 4, 3), f64(0, 3, 4, 3), f64(0, 3, 4, 3)],
                         op("MaxPoolGrad", [None, None, None], grad_cases.POOL)))
_add("AvgPoolGrad", Case([f64(0, 3, 4, 3)], op("AvgPoolGrad", [
    np.array([0, 5, 4, 3], np.int32), None], grad_cases.POOL)))
_add("Einsum", Case([f64(0, 3), f64(3, 4)], lambda a, b: tf.einsum("ij,jk->ik", a, b),
                    modes=("static", "static32")),
     Case([f64(2, 0), f64(0, 4)], lambda a, b: tf.einsum("ij,jk->ik", a, b),
          modes=("static", "static32")))
_add("Tensordot", Case([f64(2, 0), f64(0, 4)], lambda a, b: fused_tensordot(a, b, 1)))
_add("GatherV2", Case([f64(0, 3), np.zeros(0, np.int32)], tf.gather))
_add("SplitV", Case([f64(0, 4)], lambda x: tf.split(x, [1, 3], axis=1)))
_add("PadV2", Case([f64(0, 3), f64()], lambda x, c: make_tensor(
    "PadV2", [x, tf.constant([[1, 0], [0, 2]]), c])))
_add("SparseToDense", Case([np.zeros(0), f64()], op("SparseToDense", [
    np.zeros((0, 2), np.int64), np.array([3, 4], np.int64), None, None])))
_add("SparseTensorDenseMatMul", Case([np.zeros(0), f64(3, 4)], op("SparseTensorDenseMatMul", [
    np.zeros((0, 2), np.int64), None, np.array([2, 3], np.int64), None])))
_add("SparseReduceSum", Case([np.zeros(0)], op("SparseReduceSum", [
    np.zeros((0, 2), np.int64), None, np.array([2, 3], np.int64), np.array([1], np.int32)])))
_add("SparseSoftmaxCrossEntropyWithLogits", Case(
    [f64(0, 4), np.zeros(0, np.int32)],
    lambda x, i: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=i, logits=x)))
_add("Multinomial", Case([f64(0, 3)], lambda x: tf.multinomial(x, 2)))
_add("Slice", Case([f64(0, 3)], lambda x: tf.slice(x, [0, 1], [0, 2])))
_add("ReverseSequence", Case([f64(0, 4), np.zeros(0, np.int64)], lambda x, s:
                             tf.reverse_sequence(x, s, seq_axis=1, batch_axis=0)))
_add("ComplexAbs", Case([np.zeros((2, 0), np.complex128)], tf.abs))
_add("Conj", Case([np.zeros((0, 3), np.complex64)], tf.conj))

# -- random ops (shapes from constants, and from a placeholder: value-dependent)
_add("RandomUniform", Case([], lambda: tf.random_uniform([2, 0, 3])),
     Case([], lambda: tf.random_uniform([3], dtype=tf.float64)),
     Case([np.array([2, 3], np.int32)], tf.random_uniform, value_dependent=True))
_add("RandomStandardNormal", Case([], lambda: tf.random_normal([2, 3], dtype=tf.float64)),
     Case([], lambda: tf.random_normal([])))
_add("TruncatedNormal", Case([], lambda: tf.truncated_normal([4, 1])),
     Case([], lambda: tf.truncated_normal([0], dtype=tf.float64)))
_add("RandomUniformInt",
     Case([], lambda: tf.random_uniform([2, 3], minval=0, maxval=5, dtype=tf.int32)),
     Case([], lambda: tf.random_uniform([4], minval=-3, maxval=5, dtype=tf.int64)))
_add("RandomShuffle", Case([f64(5, 2)], tf.random_shuffle), Case([f64(0)], tf.random_shuffle),
     Case([_ints(3).astype(np.int32)], tf.random_shuffle))
_add("Multinomial", Case([f64(2, 3)], lambda x: tf.multinomial(x, 4)),
     Case([f64(2, 3)], lambda x: tf.multinomial(x, 0, output_dtype=tf.int32)))

# -- control flow: only outputs that carry a value are fetched (an untaken Switch output
# is dead; values inside a while loop cannot be fetched).
def _switch(pred, ref=False):
    def build(x):
        data = tf.Variable(f64(3).astype(x.dtype.as_numpy_dtype)).op.outputs[0] if ref else x
        make_op("RefSwitch" if ref else "Switch", [data, tf.constant(pred)])
    return build


def _live_switch_output(pred):
    return lambda o: [o.outputs[1 if pred else 0]]


for _pred in (True, False):
    _add("Switch", Case([f64(2, 3)], _switch(_pred), fetch=_live_switch_output(_pred)),
         Case([_ints(0, 2).astype(np.int32)], _switch(_pred),
              fetch=_live_switch_output(_pred)))
    _add("RefSwitch", Case([f64(3)], _switch(_pred, ref=True), init=True,
                           fetch=_live_switch_output(_pred)))
_add("Merge", Case([f64(2, 0), _bools()], lambda x, p: tf.cond(p, lambda: x * 2.0,
                                                                 lambda: x)))
_add("Exit", Case([f64(0, 3)], lambda x: tf.while_loop(lambda i, a: i < 2,
                                                       lambda i, a: (i + 1, a * 2.0),
                                                       [0, x])))

# -- variables and training ops (state lives in variables, initialized first)
_add("VariableV2", Case([], lambda: tf.Variable(f64(2, 3)), init=True),
     Case([], lambda: tf.Variable(np.zeros((0, 2), np.int32)), init=True),
     Case([], lambda: tf.Variable(np.float32(1.5)), init=True))
for _name, _fn in {"Assign": tf.assign, "AssignAdd": tf.assign_add,
                   "AssignSub": tf.assign_sub}.items():
    _add(_name, Case([f64(2, 3)], lambda x, fn=_fn: fn(
        tf.Variable(f64(2, 3).astype(x.dtype.as_numpy_dtype)), x), init=True),
         Case([_ints(0).astype(np.int32)],
              lambda x, fn=_fn: fn(tf.Variable(np.zeros(0, np.int32)), x), init=True))
_add("IsVariableInitialized",
     Case([], lambda: tf.is_variable_initialized(tf.Variable(f64(2))), init=True))
_add("ReportUninitializedVariables",
     Case([], lambda: (tf.Variable(f64(2)), tf.report_uninitialized_variables()),
          value_dependent=True))
_add("ReadVariableOrDefault", Case([f64(2, 3)], lambda d: flowgraph.ops.state_ops
                                   .read_variable_or_default(tf.Variable(
                                       f64(2, 3).astype(d.dtype.as_numpy_dtype)), d)))

_OPTIMIZERS = {
    "GradientDescent": lambda: tf.train.GradientDescentOptimizer(0.1),
    "Momentum": lambda: tf.train.MomentumOptimizer(0.1, 0.9),
    "Adagrad": lambda: tf.train.AdagradOptimizer(0.1),
    "Adadelta": lambda: tf.train.AdadeltaOptimizer(0.1),
    "Adam": lambda: tf.train.AdamOptimizer(0.1),
    "RMSProp": lambda: tf.train.RMSPropOptimizer(0.1),
    "CenteredRMSProp": lambda: tf.train.RMSPropOptimizer(0.1, centered=True),
    "Ftrl": lambda: tf.train.FtrlOptimizer(0.1),
    "FtrlV2": lambda: tf.train.FtrlOptimizer(0.1, l2_shrinkage_regularization_strength=0.1),
}


def _minimize(make_opt, sparse):
    def build(x):
        var = tf.Variable(f64(4, 3).astype(x.dtype.as_numpy_dtype))
        used = tf.gather(var, [0, 2]) if sparse else var[:2]
        make_opt().minimize(tf.reduce_sum(used * x))
    return build


for _name, _make in _OPTIMIZERS.items():
    _add(f"Apply{_name}", Case([f64(2, 3)], _minimize(_make, False), init=True))
    _add(f"SparseApply{_name}", Case([f64(2, 3)], _minimize(_make, True), init=True))


# -- stacks and queues: one program per family, checked once per op type in it
def _stack_program(x):
    h = make_tensor("StackV2", [tf.constant(4)], {"elem_type": x.dtype.base_dtype})
    push = make_tensor("StackPushV2", [h, x])
    at = make_op("StackPushAt", [h, x, tf.constant(3)], {"slot": 1})
    with tf.control_dependencies([push]):
        pop = make_tensor("StackPopV2", [h], {"elem_type": x.dtype.base_dtype})
    with tf.control_dependencies([at]):
        read = make_tensor("StackReadAt", [h, tf.constant(3)],
                           {"slot": 1, "elem_type": x.dtype.base_dtype})
    with tf.control_dependencies([pop, read]):
        make_op("StackCloseV2", [h])


for _name in ("StackV2", "StackPushV2", "StackPopV2", "StackCloseV2", "StackPushAt",
              "StackReadAt"):
    _add(_name, Case([f64(2, 3)], _stack_program,
                     # a popped or read element's shape is only known at run time
                     value_dependent=_name in ("StackPopV2", "StackReadAt")))


def _queue_program(make_queue, many=True):
    def build(x):
        q = make_queue(x.dtype.base_dtype)
        enq = q.enqueue_many([x]) if many else q.enqueue([x[0]])
        with tf.control_dependencies([enq]):
            size = q.size()
            one = q.dequeue()
        with tf.control_dependencies([one]):
            rest = q.dequeue_many(1) if many else None
        with tf.control_dependencies([one, size] + ([rest] if many else [])):
            close = q.close()  # before dequeue_up_to, which would wait for 5 elements
        with tf.control_dependencies([close]):
            q.dequeue_up_to(5)
            q.is_closed()
    return build


_QUEUES = {
    "FIFOQueueV2": lambda d: tf.FIFOQueue(5, [d], shapes=[[3]]),
    "PaddingFIFOQueueV2": lambda d: tf.PaddingFIFOQueue(5, [d], shapes=[[None]]),
    "RandomShuffleQueueV2": lambda d: tf.RandomShuffleQueue(5, 0, [d], shapes=[[3]]),
}
for _qname, _make in _QUEUES.items():
    _add(_qname, Case([f64(4, 3)], _queue_program(_make)))
# A PaddingFIFOQueue's element shape [None] is only known once an element is dequeued.
for _name in ("QueueEnqueueManyV2", "QueueDequeueV2", "QueueDequeueManyV2",
              "QueueDequeueUpToV2", "QueueSizeV2", "QueueCloseV2", "QueueIsClosedV2"):
    _add(_name, *[Case([f64(4, 3)], _queue_program(_make),
                       # the number of elements dequeue_up_to returns depends on the queue
                       value_dependent=(_name == "QueueDequeueUpToV2"
                                        or _qname == "PaddingFIFOQueueV2"))
                  for _qname, _make in _QUEUES.items()])
_add("QueueEnqueueV2", Case([f64(4, 3)], _queue_program(_QUEUES["FIFOQueueV2"], many=False)))
_add("PriorityQueueV2", Case([_ints(3).astype(np.int64), f64(3, 2)], lambda p, x: (
    lambda q: q.enqueue_many([p, x]))(tf.PriorityQueue(4, [x.dtype], shapes=[[2]]))))


# -- the synchronous push (flowgraph/ops/sync_replicas_ops.py): a push that accumulates
# has only its count live, one that aggregates its flag and means.
def _sync_push(aggregating):
    from flowgraph.ops.sync_replicas_ops import sync_replicas_push

    def build(x):
        acc = tf.Variable(f64(2, 3).astype(x.dtype.as_numpy_dtype))
        step, local = tf.Variable(np.int64(4)), tf.Variable(np.int64(4))
        lock = tf.Variable(np.zeros(2, np.int64))
        sync_replicas_push(tf.constant(int(aggregating)), tf.constant(9, tf.int64), lock, step,
                           local, [acc], [x], 2)
    return build


def _sync_finish():
    from flowgraph.ops.sync_replicas_ops import sync_replicas_finish

    sync_replicas_finish(tf.Variable(np.int64(3)), [tf.Variable(f64(2, 3))], 4)


for _aggregating in (True, False):
    _add("SyncReplicasPush", Case(
        [f64(2, 3)], _sync_push(_aggregating), init=True,
        fetch=lambda o, a=_aggregating: [o.outputs[0], *o.outputs[2:]] if a else [o.outputs[1]]))
_add("SyncReplicasFinish", Case([], _sync_finish, init=True))

# -- logging, assertions, no-ops, constants, placeholders, Python functions
_add("PrintV2", Case([f64(2, 0)], lambda x: tf.print(x)))
_add("StringFormat", Case([f64(2, 3)], lambda x: tf.strings.format("v={}", x)))
_add("RandomGamma", Case([], lambda: tf.random_gamma([2, 3], [1.0, 2.5], dtype=tf.float64)))
_add("RandomGammaGrad", Case([np.array([1.0, 2.5]), np.array([[0.5, 2.0], [1.5, 3.0]])],
                             op("RandomGammaGrad", [None, None])))
_add("CTCLoss", Case([f64(4, 2, 3)], lambda x: tf.nn.ctc_loss(
    tf.SparseTensor([[0, 0], [1, 0]], tf.constant([1, 0], tf.int32), [2, 1]), x, [4, 3])))
_add("Assert", Case([f64(2)], lambda x: tf.Assert(tf.constant(True), [x])))
_add("NoOp", Case([], tf.no_op))
_add("ControlTrigger", Case([], lambda: tf.raw_ops.ControlTrigger()))
_add("Const", *[Case([], lambda v=v: tf.constant(v)) for v in (
    1.5, np.zeros((2, 0), np.float32), np.array([b"a", b"b"], object), True,
    np.arange(6, dtype=np.int64).reshape(2, 3), np.uint8(3), np.complex64(1 + 2j))])
_add("Placeholder", Case([f64(2, 0)], lambda x: None), Case([_ints(3).astype(np.int32)],
                                                            lambda x: None),
     Case([np.array([b"x"], object)], lambda x: None), Case([_bools()], lambda x: None))
_add("PlaceholderWithDefault", Case([], lambda: tf.placeholder_with_default(f64(0, 2),
                                                                            [None, 2]),
                                    value_dependent=True))  # the shape given is (?, 2)
# A Python function's result is whatever it returns: its shape is unknown statically.
_add("PyFunc", Case([f64(2, 3)], lambda x: tf.py_func(lambda a: a * 2, [x], x.dtype),
                    value_dependent=True))
_add("PyFuncStateless", Case([f64(2, 3)], lambda x: tf.py_func(
    lambda a: (a > 0).astype(np.int32), [x], tf.int32, stateful=False),
    value_dependent=True))

# -- summaries
_add("ScalarSummary", Case([f64()], lambda x: tf.summary.scalar("s", x)))
_add("HistogramSummary", Case([f64(2, 3)], lambda x: tf.summary.histogram("h", x)),
     Case([f64(0)], lambda x: tf.summary.histogram("h", x)))
_add("ImageSummary", Case([R.uniform(0, 1, (2, 4, 4, 3))], lambda x: tf.summary.image("i", x)))
_add("TensorSummaryV2", Case([f64(2, 3)], lambda x: tf.summary.tensor_summary("t", x)))
_add("MergeSummary", Case([f64(), f64(3)], lambda a, b: tf.summary.merge(
    [tf.summary.scalar("a", a), tf.summary.histogram("b", b)])))

# -- sparse and string helpers
_add("SparseReshape", Case([np.array([[0, 1], [1, 2]], np.int64)], lambda i: make_op(
    "SparseReshape", [i, tf.constant(np.array([2, 3], np.int64)),
                      tf.constant(np.array([3, -1], np.int64))])))
_add("SparseFillEmptyRowsGrad", Case([np.array([0, 2, 3], np.int64), f64(5)],
                                     lambda r, g: make_op("SparseFillEmptyRowsGrad", [r, g])))
_add("SparseSegmentGradRows", Case([f64(3, 2), np.array([0, 0, 2, 1], np.int32)],
                                   lambda g, s: make_op("SparseSegmentGradRows", [g, s])))
_add("SparseCross", Case([np.array([[1, 2], [3, 4]], np.int64),
                          np.array([[b"a"], [b"b"]], object)],
                         lambda a, b: flowgraph.ops.sparse_ops.sparse_cross_hashed([a, b], 10),
                         value_dependent=True))
_add("VocabLookup", Case([np.array([b"a", b"z", b"b"], object)],
                         lambda k: flowgraph.ops.string_hash_ops.vocab_lookup(
                             k, vocabulary=["a", "b"], num_oov_buckets=1)))
_add("LabelVocabLookup", Case([np.array([[b"a"], [b"b"]], object)], lambda k: make_op(
    "LabelVocabLookup", [k], {"vocabulary": ["a", "b"]})))
_add("ClassIdToString", Case([np.array([[0], [1]], np.int64)], lambda k: make_op(
    "ClassIdToString", [k], {"vocabulary": ["a", "b"]})))
_add("HeadAssertRange", Case([np.array([[0.2], [1.0]])], lambda x: make_op(
    "HeadAssertRange", [x], {"low": 0.0, "high": 1.0})))
_add("HeadAssertShape", Case([np.array([[0.2], [1.0]]), f64(2, 1)], lambda x, y: make_op(
    "HeadAssertShape", [x, y], {"last_dims": [1]})))
_add("DecodeCSV", Case([np.array([b"1.5,2", b"3,4"], object)], lambda r: tf.decode_csv(
    r, [[0.0], [0]])), Case([np.array([b"x"], object)], lambda r: tf.decode_csv(r, [[""]])))

# -- input pipelines
_add("OneShotIterator", Case([], lambda: tf.data.Dataset.from_tensor_slices(
    f64(4, 3)).make_one_shot_iterator().get_next()))
_add("IteratorGetNext", Case([], lambda: tf.data.Dataset.from_tensor_slices(
    f64(4, 3)).batch(2).make_one_shot_iterator().get_next(),
    value_dependent=True))  # the last batch may be smaller: (?, 3)



def _initializable(x):
    it = tf.data.Dataset.from_tensor_slices(x).make_initializable_iterator()
    tf.add_to_collection(SETUP, it.initializer)
    it.get_next()


def _from_string_handle(x):
    it = tf.data.Dataset.from_tensor_slices(x).make_initializable_iterator()
    tf.add_to_collection(SETUP, it.initializer)
    again = tf.data.Iterator.from_string_handle(it.string_handle(), it.output_types,
                                                it.output_shapes)
    again.get_next()


_add("IteratorV2", Case([f64(4, 3)], _initializable))
_add("MakeIterator", Case([f64(4, 3)], _initializable))
_add("IteratorToStringHandle", Case([f64(4, 3)], _from_string_handle))
_add("IteratorFromStringHandleV2", Case([f64(4, 3)], _from_string_handle))
_add("NumpyBatchSource", Case([], lambda: tf.estimator.inputs.numpy_input_fn(
    {"a": f64(5, 3)}, f64(5), batch_size=2, shuffle=False)(),
    value_dependent=True))  # the last batch may be smaller: (?, 3)
_add("ParseExampleV2", Case([np.array([
    encode_example({"n": [1], "f": [0.5, 1.5], "s": ["a", "b"]}),
    encode_example({"n": [2], "f": [2.0, 3.0], "s": ["c"]})], object)],
    lambda s: tf.parse_example(s, {"n": tf.FixedLenFeature([], tf.int64),
                                   "f": tf.FixedLenFeature([2], tf.float32),
                                   "s": tf.VarLenFeature(tf.string)}),
    value_dependent=True))  # a VarLenFeature's entries

_CHECKPOINTS = tempfile.TemporaryDirectory(prefix="op_contract_")


def _restore():
    prefix = os.path.join(_CHECKPOINTS.name, "ckpt")
    if not os.path.exists(prefix + ".index"):
        with tf.Graph().as_default():
            v = tf.Variable(f64(2, 3), name="v")
            w = tf.Variable(np.arange(4, dtype=np.int64), name="w")
            saver = tf.train.Saver([v, w])
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                saver.save(sess, prefix, write_meta_graph=False)
    restore_v2(prefix, ["v", "w"], [tf.float64, tf.int64])


# A restored tensor's shape is in the checkpoint, read at run time.
_add("RestoreV2", Case([], _restore, value_dependent=True))

# -- TensorArray ops without a gradient (tests/ops/tensor_array_cases.py)
for _name, _build in tensor_array_cases.CONTRACT_CASES.items():
    _add(_name, Case([f64(3, 2)], _build))

# -- lookup, string, image and sequence-parsing ops (tests/ops/issue15_cases.py)
_add_cases(issue15_cases)

# -- segment, special-math and counter ops (tests/ops/issue15_math_cases.py)
VALUE_DEPENDENT |= issue15_math_cases.VALUE_DEPENDENT
_add_cases(issue15_math_cases)

# -- scatter, linear-algebra and diagonal ops (tests/ops/issue15_cov_cases.py)
VALUE_DEPENDENT |= issue15_cov_cases.VALUE_DEPENDENT
_add_cases(issue15_cov_cases)

# -- box, image-codec and stateless random ops (tests/ops/image_random_cases.py)
VALUE_DEPENDENT |= image_random_cases.VALUE_DEPENDENT
_add_cases(image_random_cases)

# -- connected components (tests/ops/image_transform_cases.py)
_add_cases(image_transform_cases)

# -- LU and matrix logarithm, which have no gradient (tests/ops/linalg_complete_cases.py)
_add_cases(linalg_complete_cases)

# -- n-grams, scripts, bincounts, set operations, special math (tests/ops/misc_names_cases.py)
VALUE_DEPENDENT |= misc_names_cases.VALUE_DEPENDENT
_add_cases(misc_names_cases)

# -- fractional pooling gradients (tests/ops/fractional_pool_cases.py)
_add_cases(fractional_pool_cases)

# -- quantization ops (tests/ops/quantize_cases.py)
_add_cases(quantize_cases)

# -- accumulators, session handles, mutexes, N-d FFTs, index shuffle (top_names_cases.py)
_add_cases(top_names_cases)

# -- generator RNG ops, ragged fill, SDCA helpers, proto codecs (missing_names_cases.py)
VALUE_DEPENDENT |= missing_names_cases.VALUE_DEPENDENT
_add_cases(missing_names_cases)

# -- resource variables and their updates (resource_variable_cases.py)
_add_cases(resource_variable_cases)

# -- staging areas, summary writers, k-means (tests/ops/contrib2_cases.py)
_add_cases(contrib2_cases)

# -- tf.data optionals / iterator state, RFFT3D, RaggedRange (tests/ops/dx_cases.py)
_add_cases(dx_cases)

# -- Fact, stateless_shuffle (tests/ops/cf_cases.py)
_add_cases(cf_cases)

# -- math, array and linear-algebra raw-op gap-fill (tests/ops/raw_math_cases.py)
VALUE_DEPENDENT |= raw_math_cases.VALUE_DEPENDENT
_add_cases(raw_math_cases)

# -- optimizer updates and saver ops (tests/ops/raw_train_cases.py)
VALUE_DEPENDENT |= raw_train_cases.VALUE_DEPENDENT
_add_cases(raw_train_cases)

# -- TensorList and TensorMap ops (tests/ops/raw_tlist_cases.py)
VALUE_DEPENDENT |= raw_tlist_cases.VALUE_DEPENDENT
_add_cases(raw_tlist_cases)

# -- image, layout and TF1 normalization ops (tests/ops/raw_img_cases.py)
VALUE_DEPENDENT |= raw_img_cases.VALUE_DEPENDENT
_add_cases(raw_img_cases)

# -- fused LSTM / GRU ops and their gradient ops (tests/ops/raw_rnn_cases.py)
VALUE_DEPENDENT |= raw_rnn_cases.VALUE_DEPENDENT
_add_cases(raw_rnn_cases)

# -- sparse, segment-gradient, scatter and random raw ops (tests/ops/raw_sparse_cases.py)
VALUE_DEPENDENT |= raw_sparse_cases.VALUE_DEPENDENT
_add_cases(raw_sparse_cases)

# -- Example parsing, regex, v1 summary and py-function ops (tests/ops/raw_parse_cases.py)
VALUE_DEPENDENT |= raw_parse_cases.VALUE_DEPENDENT
_add_cases(raw_parse_cases)

# -- v1 queues, tables, readers, TensorArrays, barriers, map staging (raw_state_cases.py)
VALUE_DEPENDENT |= raw_state_cases.VALUE_DEPENDENT
_add_cases(raw_state_cases)

SKIP: dict[str, str] = {
    # The values of these ops exist only inside a while loop's frame, one per iteration:
    # a session cannot fetch them (tf.while_loop's tests run them; Exit is checked above).
    "Enter": "in-loop value, cannot be fetched",
    "RefEnter": "in-loop value, cannot be fetched",
    "NextIteration": "in-loop value, cannot be fetched",
    "LoopCond": "in-loop value, cannot be fetched",
    **contrib2_cases.SKIP,
    **raw_math_cases.SKIP,
    **raw_state_cases.SKIP,
}


# -- the tests --------------------------------------------------------------------------

def _is_test_op(name: str) -> bool:
    return "Test" in name  # ops that tests register (TestFoo, DataTestSleep, ...)


def _cpu_ops():
    kernels = cpu_backend.kernels()
    return sorted(n for n in registered_ops() if n in kernels and not _is_test_op(n))


@pytest.mark.parametrize("op_type", _cpu_ops())
def test_every_op_is_covered(op_type):
    assert (op_type in CASES) != (op_type in SKIP), (
        f"op {op_type} has a CPU kernel: give it a case in CASES of {__name__} or a SKIP "
        f"entry with the reason (not both)")


def _accepts_float32(op_type: str) -> bool:
    return any(k.accepts(tf.float32) for k in cpu_backend.kernels().get(op_type, ()))


def _params():
    out = []
    for name in sorted(CASES):
        for k, case in enumerate(CASES[name]):
            for mode in case.modes:
                if mode in ("batch", "dims") and name in grad_cases.NEEDS_STATIC_DIMS:
                    continue  # the wrapper needs static dimensions to build the op
                if mode == "rank" and name in grad_cases.NEEDS_RANK:
                    continue  # the wrapper needs a known rank to pick or build the op
                if mode == "static32" and (
                        not any(np.asarray(a).dtype.kind in "fc" for a in case.inputs)
                        or not _accepts_float32(name)):
                    continue
                marks = [pytest.mark.xfail(reason=case.xfail, strict=True)] if case.xfail else []
                out.append(pytest.param(name, k, mode, id=f"{name}-{k}-{mode}", marks=marks))
    return out


@pytest.mark.parametrize(("op_type", "k", "mode"), _params())
def test_static_shape_and_dtype_match_kernel(op_type, k, mode):
    check_contract(op_type, CASES[op_type][k], mode)


def test_coverage_count(capsys):
    """Prints the contract's coverage; every op not skipped is covered."""
    covered = [n for n in _cpu_ops() if n in CASES]
    assert covered == [n for n in _cpu_ops() if n not in SKIP]
    with capsys.disabled():
        print(f"\nop contract: {len(covered)} of {len(_cpu_ops())} CPU op types checked "
              f"({sum(len(c) for c in CASES.values())} cases), {len(SKIP)} skipped")


def _lying(monkeypatch, op_type, **fns):
    opdef = registered_ops()[op_type]
    for attr, fn in fns.items():
        monkeypatch.setattr(opdef, attr, fn)


@pytest.mark.parametrize(("fns", "message"), [
    ({"dtype_fn": lambda op: [tf.float32]}, "static dtype float32, kernel returned float64"),
    ({"shape_fn": lambda op, x: [TensorShape([5])]}, "is not compatible"),
    ({"shape_fn": lambda op, x: [TensorShape([None, 3])]}, "is not fully defined"),
])
def test_the_check_catches_a_wrong_shape_or_dtype_function(monkeypatch, fns, message):
    _lying(monkeypatch, "Neg", **fns)
    with pytest.raises(AssertionError, match=message):
        check_contract("Neg", Case([f64(2, 3)], tf.negative), "static")


def test_the_check_allows_unknown_dims_only_where_values_decide(monkeypatch):
    _lying(monkeypatch, "Neg", shape_fn=lambda op, x: [TensorShape([None, 3])])
    check_contract("Neg", Case([f64(2, 3)], tf.negative), "dims")
    check_contract("Neg", Case([f64(2, 3)], tf.negative, value_dependent=True), "static")
