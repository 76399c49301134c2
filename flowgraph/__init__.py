"""flowgraph: TensorFlow 1.x's graph programming model on NumPy/SciPy.

Use it as ``import flowgraph as tf``. This module only re-exports; logic lives in the
subpackages (see DESIGN.md).

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

from flowgraph import (
    contrib,
    data,
    debugging,
    feature_column,
    io,
    keras,
    layers,
    linalg,
    losses,
    math,
    metrics,
    nn,
    random,
    saved_model,
    sparse,
    strings,
    summary,
    train,
)
from flowgraph import estimators as estimator
from flowgraph import ops as _ops
from flowgraph.backends import list_local_devices
from flowgraph.framework import errors
from flowgraph.framework.constant_op import constant, convert_to_tensor
from flowgraph.framework.device_spec import DeviceSpec
from flowgraph.framework.dtypes import (
    DType,
    as_dtype,
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
    string,
    uint8,
    uint16,
    uint32,
    uint64,
)
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
from flowgraph.framework.indexed_slices import IndexedSlices
from flowgraph.framework.operation import Operation, Tensor
from flowgraph.framework.serialization import import_graph_def
from flowgraph.framework.sparse_tensor import SparseTensor, SparseTensorValue, sparse_placeholder
from flowgraph.framework.tensor_shape import Dimension, TensorShape
from flowgraph.io import gfile
from flowgraph.ops.array_ops import *
from flowgraph.ops.check_ops import *
from flowgraph.ops.clip_ops import *
from flowgraph.ops.control_flow_cond import *
from flowgraph.ops.control_flow_loops import *
from flowgraph.ops.control_flow_ops import *
from flowgraph.ops.control_flow_ops import tuple_ as tuple
from flowgraph.ops.data_flow_ops import *
from flowgraph.ops.gradients import *
from flowgraph.ops.init_ops import *
from flowgraph.ops.math_ops import *
from flowgraph.ops.math_reduce import *
from flowgraph.ops.nn_ops import *
from flowgraph.ops.parsing_ops import *
from flowgraph.ops.random_ops import *
from flowgraph.ops.sparse_ops import *
from flowgraph.ops.state_ops import assign, assign_add, assign_sub
from flowgraph.ops.string_hash_ops import *
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
    RunMetadata,
    RunOptions,
)
from flowgraph.runtime.session import InteractiveSession, Session
from flowgraph.summary.event_format import (
    Event,
    HistogramProto,
    SessionLog,
    Summary,
    SummaryMetadata,
)

__version__ = "0.1.0"
