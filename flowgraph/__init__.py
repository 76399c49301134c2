"""flowgraph: TensorFlow 1.x's graph programming model on NumPy/SciPy.

Use it as ``import flowgraph as tf``. This module only re-exports; logic lives in the
subpackages (see ARCHITECTURE.md at the project root).

Example
-------
>>> import flowgraph as tf
>>> g = tf.Graph()
>>> with g.as_default():
...     c = tf.constant([1.0, 2.0]) * 3.0
>>> with tf.Session(graph=g) as sess:
...     print(sess.run(c))
[3. 6.]
"""

# First, before anything imports NumPy: NumPy's OpenBLAS picks its CPU kernels when it
# loads, and on some AVX-512 CPUs picks AVX2 ones (GEMMs ~1.7x slower) unless
# OPENBLAS_CORETYPE names better ones. This sets it when unset and the CPU has AVX-512,
# or warns once if NumPy was imported first (flowgraph/framework/openblas_env.py;
# FLOWGRAPH_NO_CORETYPE=1 opts out).
import os as _os

from flowgraph.framework import openblas_env as _openblas_env

_os.environ.update(_openblas_env.coretype_setting())

from flowgraph import debugging, distributions, linalg, math, nn, random, sparse, strings
from flowgraph import ops as _ops
from flowgraph.backends import list_local_devices
from flowgraph.framework import errors
from flowgraph.framework.constant_op import constant, convert_to_tensor
from flowgraph.framework.device_spec import DeviceSpec
from flowgraph.framework.dtypes import (
    QUANTIZED_DTYPES,
    DType,
    as_dtype,
    bfloat16,
    bool,
    complex64,
    complex128,
    double,
    float16,
    float32,
    float64,
    half,
    int8,
    int16,
    int32,
    int64,
    qint8,
    qint16,
    qint32,
    quint8,
    quint16,
    resource,
    string,
    uint8,
    uint16,
    uint32,
    uint64,
    variant,
)
from flowgraph.framework.event_format import AttrValue, GraphDef, NodeDef  # TF's messages
from flowgraph.framework.graph import (
    Graph,
    GraphKeys,
    add_to_collection,
    add_to_collections,
    colocate_with,
    control_dependencies,
    device,
    get_collection,
    get_collection_ref,
    get_default_graph,
    get_default_session,
    name_scope,
    reset_default_graph,
    set_random_seed,
)
from flowgraph.framework.importer import import_graph_def
from flowgraph.framework.indexed_slices import IndexedSlices
from flowgraph.framework.operation import Operation, Tensor
from flowgraph.framework.sparse_tensor import SparseTensor, SparseTensorValue
from flowgraph.framework.tensor_shape import Dimension, TensorShape
from flowgraph.framework.tf_formats import graph_util
from flowgraph.framework.versions import __version__
from flowgraph.ops.array_ops import *
from flowgraph.ops.check_ops import *
from flowgraph.ops.clip_ops import *
from flowgraph.ops.control_flow_cond import *
from flowgraph.ops.control_flow_loops import *
from flowgraph.ops.control_flow_ops import *
from flowgraph.ops.control_flow_ops import tuple_ as tuple
from flowgraph.ops.data_flow_ops import *
from flowgraph.ops.functional_ops import foldl, foldr, map_fn, scan
from flowgraph.ops.gradients import *
from flowgraph.ops.init_ops import *
from flowgraph.ops.linalg_basic import eye, matrix_transpose
from flowgraph.ops.linalg_funcs import matrix_square_root
from flowgraph.ops.linalg_norm import norm
from flowgraph.ops.logging_ops import *
from flowgraph.ops.lookup_compat import *
from flowgraph.ops.math_ops import *
from flowgraph.ops.math_reduce import *
from flowgraph.ops.math_tensordot import tensordot
from flowgraph.ops.nn_extra_ops import depth_to_space, space_to_depth
from flowgraph.ops.nn_ops import *
from flowgraph.ops.parsing_ops import *
from flowgraph.ops.random_ops import *
from flowgraph.ops.script_ops import *
from flowgraph.ops.sparse_ops import *
from flowgraph.ops.state_ops import assign, assign_add, assign_sub
from flowgraph.ops.string_hash_ops import *
from flowgraph.ops.string_ops import *
from flowgraph.ops.string_split_ops import string_split  # result_type RaggedTensor
from flowgraph.ops.tensor_array import TensorArray
from flowgraph.ops.variable_scope import *
from flowgraph.ops.variables import (
    Variable,
    global_variables,
    global_variables_initializer,
    initialize_all_variables,
    is_variable_initialized,
    local_variables,
    local_variables_initializer,
    model_variables,
    moving_average_variables,
    report_uninitialized_variables,
    trainable_variables,
    variables_initializer,
)
from flowgraph.runtime import timeline
from flowgraph.runtime.config import (
    ConfigProto,
    GPUOptions,
    GraphOptions,
    OptimizerOptions,
    RPCOptions,
    RunMetadata,
    RunOptions,
)
from flowgraph.runtime.session import InteractiveSession, Session, register_target_scheme


def _remote_session_class():
    try:
        from flowgraph.distributed.remote_session import RemoteSession
    except ImportError as e:
        raise ImportError(
            f"tf.Session('grpc://...') needs the distributed runtime's dependencies ({e}); "
            "install them with: pip install 'flowgraph[distributed]'") from e
    return RemoteSession


register_target_scheme("grpc://", _remote_session_class)

# TF 1.x's deprecated spellings.
from flowgraph.framework.gradient_override import NotDifferentiable  # noqa: E402

NoGradient = no_gradient = NotDifferentiable
all_variables = global_variables
initialize_variables = variables_initializer
initialize_local_variables = local_variables_initializer

# The harness, Keras, data, export and compat layers load on first use, so that
# ``import flowgraph`` stays fast (heavy optional modules are imported lazily).
_LAZY_MODULES = {
    "app": "flowgraph.app",
    "compat": "flowgraph.compat",
    "contrib": "flowgraph.contrib",
    "data": "flowgraph.data",
    "estimator": "flowgraph.estimators",
    "estimators": "flowgraph.estimators",
    "feature_column": "flowgraph.feature_column",
    "flags": "flowgraph.flags",
    "gfile": "flowgraph.io.gfile",
    "io": "flowgraph.io",
    "keras": "flowgraph.keras",
    "layers": "flowgraph.layers",
    "logging": "flowgraph.logging_compat",
    "losses": "flowgraph.losses",
    "metrics": "flowgraph.metrics",
    "saved_model": "flowgraph.saved_model",
    "serving": "flowgraph.serving",
    "summary": "flowgraph.summary",
    "train": "flowgraph.train",
}
_LAZY_NAMES = {
    **{name: "flowgraph.compat" for name in (
        "disable_control_flow_v2", "disable_eager_execution", "disable_resource_variables",
        "disable_tensor_equality", "disable_v2_behavior", "disable_v2_tensorshape",
        "enable_eager_execution", "enable_v2_behavior", "executing_eagerly")},
    "get_logger": "flowgraph.logging_compat",
    **{name: "flowgraph.summary.event_format" for name in (
        "Event", "HistogramProto", "SessionLog", "Summary", "SummaryMetadata")},
}


def __getattr__(name: str):
    import importlib

    if name in _LAZY_MODULES:
        value = importlib.import_module(_LAZY_MODULES[name])
        if name == "data":  # tf.data.experimental's Estimator hook, a layer above tf.data
            importlib.import_module("flowgraph.estimators.input_pipeline_hook")
    elif name in _LAZY_NAMES:
        value = getattr(importlib.import_module(_LAZY_NAMES[name]), name)
    else:
        from flowgraph.framework.missing_api import missing_attribute

        raise missing_attribute("", name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY_MODULES) | set(_LAZY_NAMES))


# TFRecord files, lookup tables and image ops (issue 15).
_LAZY_MODULES.update({
    "image": "flowgraph.ops.image_ops",
    "lookup": "flowgraph.ops.lookup_ops",
    "python_io": "flowgraph.io.tf_record",
    "raw_ops": "flowgraph.ops.raw_ops",
})

# Segment reductions, partition/stitch, special math and bitwise ops (issue 15).
from flowgraph.ops import bitwise_ops as bitwise  # noqa: E402
from flowgraph.ops.matching_files_ops import matching_files  # noqa: E402
from flowgraph.ops.math_composite import (  # noqa: E402
    confusion_matrix,
    count_nonzero,
    is_non_decreasing,
    is_strictly_increasing,
    lbeta,
    log_sigmoid,
    scalar_mul,
)
from flowgraph.ops.math_special import (  # noqa: E402
    acos,
    acosh,
    asin,
    asinh,
    atan,
    atan2,
    atanh,
    betainc,
    cosh,
    digamma,
    erfc,
    igamma,
    igammac,
    lgamma,
    polygamma,
    rint,
    sinh,
    zeta,
)
from flowgraph.ops.segment_ops import *  # noqa: E402
from flowgraph.ops.state_count_ops import count_up_to  # noqa: E402

# Sorting/broadcasting, templates, named gradients and tf.test (issue 15).
_LAZY_MODULES["test"] = "flowgraph.test_case"
from flowgraph.framework.gradient_override import RegisterGradient  # noqa: E402
from flowgraph.ops.sort_ops import argsort, broadcast_to, meshgrid, sort  # noqa: E402
from flowgraph.ops.template import make_template  # noqa: E402

# Scatter updates, dense linear algebra, more array ops and build constants (issue 15).
_LAZY_MODULES.update({
    "audio": "flowgraph.ops.audio_namespace",
    "config": "flowgraph.backends.config_compat",
    "manip": "flowgraph.ops.manip_namespace",
    "nest": "flowgraph.framework.nest",
    "quantization": "flowgraph.ops.quantization_namespace",
    "sets": "flowgraph.ops.sets_namespace",
    "queue": "flowgraph.ops.queue_namespace",
    "ragged": "flowgraph.ops.ragged_namespace",
    "resource_loader": "flowgraph.framework.resource_loader",
    "signal": "flowgraph.math.signal",
    "spectral": "flowgraph.math.spectral",
    "sysconfig": "flowgraph.framework.sysconfig",
    "version": "flowgraph.framework.build_info",
})
from flowgraph.framework.build_info import *  # noqa: E402
from flowgraph.framework.constant_op import register_tensor_conversion_function  # noqa: E402
from flowgraph.framework.errors import OpError  # noqa: E402
from flowgraph.framework.graph import get_seed  # noqa: E402
from flowgraph.framework.tf_messages import LogMessage, NameAttrList  # noqa: E402
from flowgraph.ops import dtypes_namespace as dtypes  # noqa: E402
from flowgraph.ops import ragged_dispatch as _ragged_dispatch  # noqa: E402
from flowgraph.ops.array_compat_ops import *  # noqa: E402
from flowgraph.ops.array_extra_ops import *  # noqa: E402
from flowgraph.ops.check_compat_ops import *  # noqa: E402
from flowgraph.ops.fake_quant_ops import *  # noqa: E402
from flowgraph.ops.gradient_compat import *  # noqa: E402
from flowgraph.ops.gradient_shortcuts import *  # noqa: E402
from flowgraph.ops.gradient_tape import GradientTape, UnconnectedGradients  # noqa: E402
from flowgraph.ops.image_ops import random_crop  # noqa: E402
from flowgraph.ops.linalg_diag_ops import *  # noqa: E402
from flowgraph.ops.linalg_ops import *  # noqa: E402
from flowgraph.ops.misc_compat_ops import *  # noqa: E402
from flowgraph.ops.module import Module  # noqa: E402
from flowgraph.ops.nn_compat_ops import conv2d_backprop_filter_v2, conv2d_backprop_input_v2  # noqa: E402
from flowgraph.ops.parsing_sequence_ops import parse_single_sequence_example  # noqa: E402
from flowgraph.ops.quantize_ops import *  # noqa: E402
from flowgraph.ops.ragged_tensor import RaggedTensor  # noqa: E402
from flowgraph.ops.random_extra_ops import random_gamma  # noqa: E402
from flowgraph.ops.reader_ops import *  # noqa: E402
from flowgraph.ops.scatter_ops import *  # noqa: E402
from flowgraph.ops.scope_compat import *  # noqa: E402
from flowgraph.ops.set_ops import edit_distance  # noqa: E402
from flowgraph.ops.sparse_extra_ops import *  # noqa: E402
from flowgraph.ops.sparse_serialize_ops import *  # noqa: E402
from flowgraph.ops.spectral_ops import *  # noqa: E402
from flowgraph.ops.string_extra_ops import *  # noqa: E402
from flowgraph.ops.string_legacy_hash_ops import *  # noqa: E402
from flowgraph.ops.tensor_compat import *  # noqa: E402
from flowgraph.ops.type_spec import *  # noqa: E402

_LAZY_NAMES.update({"MetaGraphDef": "flowgraph.saved_model.tf_messages",
                    "TensorInfo": "flowgraph.saved_model.tf_messages"})

# Accumulators, session tensor handles, critical sections, creator scopes and the
# TF1/TF2 behaviour switches (docs/sessions-advanced.md).
from flowgraph.ops.accumulator_ops import *  # noqa: E402
from flowgraph.ops.accumulator_ops import SparseConditionalAccumulator as _SparseAcc  # noqa: E402
from flowgraph.ops.critical_section_ops import CriticalSection  # noqa: E402
from flowgraph.ops.random_index_shuffle_ops import random_index_shuffle  # noqa: E402
from flowgraph.ops.session_handle_ops import *  # noqa: E402

sparse.SparseConditionalAccumulator = _SparseAcc
_LAZY_NAMES.update({name: "flowgraph.compat" for name in (
    "enable_control_flow_v2", "enable_resource_variables", "enable_tensor_equality",
    "enable_v2_tensorshape")})
_LAZY_MODULES["mixed_precision"] = "flowgraph.train.mixed_precision"
_LAZY_NAMES.update({name: "flowgraph.compat.top_names" for name in (
    "container", "function", "load_file_system_library", "load_library",
    "load_op_library", "nondifferentiable_batch_function", "to_bfloat16",
    "variable_creator_scope", "wrap_function")})

# Namespaces TF 1.x programs touch (session 14): tf.distribute's default strategy,
# tf.autograph's entry points, tf.profiler's counts, tf.experimental, tf.types.
_LAZY_MODULES.update({
    "autograph": "flowgraph.compat.autograph",
    "distribute": "flowgraph.compat.distribute",
    "experimental": "flowgraph.compat.experimental",
    "profiler": "flowgraph.compat.profiler",
    "types": "flowgraph.compat.tf_types",
})
_LAZY_MODULES["tpu"] = "flowgraph.compat.tpu"
from flowgraph.ops.ragged_fill_ops import ragged_fill_empty_rows, ragged_fill_empty_rows_grad  # noqa: E402
from flowgraph.ops.ragged_spec import RaggedTensorSpec  # noqa: E402

# tf.xla / tf.lite / tf.mlir entry points (flowgraph/compat/xla_lite.py).
_LAZY_NAMES.update({name: "flowgraph.compat.xla_lite" for name in ("lite", "mlir", "xla")})
_LAZY_NAMES["user_ops"] = "flowgraph.ops.user_ops"

# TensorFlow gives the "tensorflow" logger its stderr handler when it is imported (unless
# the root logger already has handlers), so hook and Estimator lines read
# ``INFO:tensorflow:...`` even when the program never calls `tf.logging` itself.
from flowgraph import logging_compat as _logging_compat  # noqa: E402

_logging_compat.get_logger()

# TensorFlow's internal and contrib module paths (`from tensorflow.contrib.framework.python
# .ops import audio_ops`) as views of this namespace: importing flowgraph.python installs
# their finder (by name: that package's views look names up in this module, lazily).
import importlib as _importlib  # noqa: E402

_importlib.import_module("flowgraph.python")
