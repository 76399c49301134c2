"""TensorFlow's internal import paths (``tensorflow.python.*``, ``tensorflow.core.*``) as
views of flowgraph's public API.

TF1 programs import from these paths as often as from the ``tf`` namespace::

    from tensorflow.python.framework import graph_util
    from tensorflow.python.platform import gfile
    from tensorflow.python.ops import rnn_cell_impl, gen_math_ops
    from tensorflow.core.framework import graph_pb2

With ``tensorflow`` replaced by ``flowgraph`` they work: each known TensorFlow module path
is a module whose attributes are looked up, on first use, in the flowgraph namespaces
that hold what TensorFlow's module holds (`ALIASES`: ``python.ops.array_ops`` searches
``tf``, ``tf.math``, ``tf.nn``...; ``core.framework.graph_pb2`` finds ``tf.GraphDef``).
The ``gen_*_ops`` modules call ``tf.raw_ops`` under TensorFlow's snake-case names, with
positional arguments in the op's input order, as TensorFlow's generated wrappers take
them. A path TensorFlow does not have, or a name no searched namespace holds, raises the
usual `ModuleNotFoundError` / `AttributeError`, naming where it looked.

Example
-------
>>> import flowgraph.python.framework.ops as ops
>>> from flowgraph.python.ops import gen_math_ops
>>> from flowgraph.core.framework import graph_pb2, types_pb2
>>> with ops.Graph().as_default() as g:
...     a = ops.convert_to_tensor([[1.0, 2.0]])
...     p = gen_math_ops.mat_mul(a, a, transpose_b=True)
>>> p.op.type, types_pb2.DT_FLOAT, isinstance(g.as_graph_def(), graph_pb2.GraphDef)
('MatMul', 1, True)
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types

__all__ = ["ALIASES", "TFPathFinder", "install", "snake_case"]

_T = ("tf",)
_OPS = ("tf", "tf.math", "tf.nn", "tf.linalg", "tf.image", "tf.strings", "tf.sparse",
        "tf.random", "tf.bitwise", "tf.sets", "tf.signal", "tf.dtypes", "tf.debugging",
        "tf.train", "tf.losses", "tf.metrics", "tf.lookup", "tf.io", "tf.initializers")
_PROTOS = ("tf", "tf.train", "tf.summary", "tf.compat.v1.saved_model")

# TensorFlow module path (under ``tensorflow.``) -> the flowgraph namespaces searched, in
# order, for its attributes ("tf" is flowgraph's top level; "module:NAME" a module;
# "gen" the generated raw-op wrappers; "enums" the DataType constants).
ALIASES: dict[str, tuple[str, ...]] = {
    # python.framework
    "python.framework.ops": ("tf", "module:flowgraph.framework.graph",
                             "module:flowgraph.framework.operation",
                             "module:flowgraph.framework.op_statistics"),
    "python.framework.dtypes": ("tf.dtypes", "tf"),
    "python.framework.tensor_shape": ("module:flowgraph.framework.tensor_shape", "tf"),
    "python.framework.constant_op": _T,
    "python.framework.errors": ("tf.errors",),
    "python.framework.errors_impl": ("tf.errors",),
    "python.framework.graph_util": ("tf.graph_util",),
    "python.framework.graph_util_impl": ("tf.graph_util",),
    "python.framework.graph_io": ("tf.train", "tf.io"),
    "python.framework.importer": _T,
    "python.framework.meta_graph": ("tf.train", "tf"),
    "python.framework.sparse_tensor": _T,
    "python.framework.tensor_util": _T,
    "python.framework.tensor_spec": ("tf",),
    "python.framework.random_seed": ("tf", "tf.random"),
    "python.framework.test_util": ("tf.test",),
    "python.framework.versions": ("tf", "tf.version"),
    "python.framework.device": ("tf",),
    "python.framework.load_library": ("tf",),
    "python.framework.function": ("module:flowgraph.ops.defun",),
    # python.ops
    **{f"python.ops.{name}": _OPS for name in (
        "array_ops", "math_ops", "nn_ops", "nn", "nn_impl", "init_ops", "init_ops_v2",
        "variable_scope", "control_flow_ops", "control_flow_util", "state_ops",
        "variables", "data_flow_ops", "embedding_ops", "lookup_ops",
        "resource_variable_ops", "tensor_array_ops", "clip_ops", "random_ops",
        "stateless_random_ops", "sparse_ops", "string_ops", "check_ops",
        "functional_ops", "gradients", "gradients_impl", "image_ops", "image_ops_impl",
        "io_ops", "logging_ops", "parsing_ops", "partitioned_variables", "script_ops",
        "special_math_ops", "linalg_ops", "bitwise_ops", "candidate_sampling_ops",
        "confusion_matrix", "ctc_ops", "histogram_ops", "manip_ops", "map_fn",
        "metrics", "numerics", "session_ops", "sort_ops", "spectral_ops",
        "summary_ops", "template", "weights_broadcast_ops", "while_v2", "cond_v2",
        "custom_gradient", "array_grad", "math_grad", "nn_grad", "ragged",
        "stateful_random_ops", "batch_ops", "list_ops", "sets", "sets_impl",
        "tensor_array_grad", "inplace_ops", "collective_ops")},
    "python.ops.control_flow_ops": (*_OPS, "module:flowgraph.ops.control_flow_ops"),
    "python.ops.lookup_ops": (*_OPS, "module:flowgraph.ops.lookup_index_tables"),
    "python.ops.rnn": ("tf.nn", "tf.nn.rnn_cell"),
    "python.ops.rnn_cell": ("tf.nn.rnn_cell", "tf.nn"),
    "python.ops.rnn_cell_impl": ("tf.nn.rnn_cell", "tf.nn"),
    "python.ops.losses.losses": ("tf.losses",),
    "python.ops.losses.losses_impl": ("tf.losses",),
    "python.ops.losses.util": ("tf.losses",),
    "python.ops.metrics_impl": ("tf.metrics",),
    "python.ops.distributions.distributions": ("tf.distributions",),
    "python.ops.linalg.linalg": ("tf.linalg",),
    "python.ops.signal.signal": ("tf.signal",),
    # contrib's own module paths (``from tensorflow.contrib.X.python.ops import Y``)
    "contrib.framework.python.ops.audio_ops": ("gen",),
    **{f"contrib.framework.python.ops.{name}": ("tf.contrib.framework",) for name in (
        "variables", "arg_scope", "ops", "checkpoint_ops")},
    # (importing these makes ``flowgraph.contrib.signal`` this view of ``tf.signal``)
    "contrib.signal": ("tf.signal",),
    **{f"contrib.signal.python.ops.{name}": ("tf.signal",) for name in (
        "spectral_ops", "shape_ops", "mel_ops", "mfcc_ops", "window_ops",
        "reconstruction_ops", "util_ops")},
    **{f"contrib.rnn.python.ops.{name}": ("tf.contrib.rnn", "tf.nn.rnn_cell", "tf.nn")
       for name in ("rnn", "rnn_cell", "core_rnn_cell", "lstm_ops", "gru_ops",
                    "fused_rnn_cell")},
    **{f"contrib.layers.python.layers.{name}": ("tf.contrib.layers",) for name in (
        "layers", "initializers", "regularizers", "optimizers", "feature_column", "utils")},
    **{f"contrib.seq2seq.python.ops.{name}": ("tf.contrib.seq2seq",) for name in (
        "attention_wrapper", "basic_decoder", "beam_search_decoder", "decoder", "helper",
        "loss")},
    "contrib.learn.python.learn.datasets.mnist": ("tf.contrib.learn.datasets.mnist",),
    "contrib.learn.python.learn.datasets.base": ("tf.contrib.learn.datasets",),
    "python.ops.ragged.ragged_tensor": ("tf.ragged", "tf"),
    **{f"python.ops.gen_{name}_ops": ("gen", *_OPS) for name in (
        "array", "math", "nn", "state", "control_flow", "data_flow", "io", "image",
        "string", "sparse", "random", "logging", "linalg", "parsing", "lookup",
        "resource_variable", "candidate_sampling", "ctc", "bitwise", "spectral",
        "set", "functional", "script", "summary", "user", "training", "audio",
        "dataset", "list", "stateless_random", "batch", "manip", "checkpoint")},
    # python.training
    **{f"python.training.{name}": ("tf.train", "tf") for name in (
        "training", "training_util", "session_run_hook", "moving_averages", "saver",
        "optimizer", "basic_session_run_hooks", "monitored_session", "checkpoint_utils",
        "learning_rate_decay", "adam", "adagrad", "adadelta", "gradient_descent",
        "momentum", "rmsprop", "ftrl", "proximal_gradient_descent",
        "proximal_adagrad", "queue_runner", "queue_runner_impl", "coordinator",
        "input", "slot_creator", "checkpoint_management", "server_lib",
        "device_setter", "sync_replicas_optimizer", "summary_io", "session_manager",
        "supervisor", "evaluation", "warm_starting_util", "py_checkpoint_reader",
        "training_ops", "distribute")},
    "python.training.slot_creator": ("module:flowgraph.train.slot_creator",),
    "python.training.moving_averages": ("tf.train", "module:flowgraph.train.moving_averages"),
    # python.platform and tools
    "python.platform.gfile": ("tf.gfile", "tf.io.gfile"),
    "python.platform.tf_logging": ("tf.logging",),
    "python.platform.flags": ("tf.flags", "tf.app.flags"),
    "python.platform.app": ("tf.app",),
    "python.platform.test": ("tf.test",),
    "python.platform.googletest": ("tf.test",),
    "python.platform.sysconfig": ("tf.sysconfig",),
    "python.platform.resource_loader": ("tf.resource_loader",),
    "python.tools.inspect_checkpoint": ("module:flowgraph.train.inspect_checkpoint",),
    # python.saved_model
    "python.saved_model.tag_constants": ("tf.saved_model.tag_constants",),
    "python.saved_model.signature_constants": ("tf.saved_model.signature_constants",),
    "python.saved_model.builder": ("tf.saved_model.builder", "tf.saved_model"),
    "python.saved_model.builder_impl": ("tf.saved_model.builder", "tf.saved_model"),
    "python.saved_model.loader": ("tf.saved_model.loader", "tf.saved_model"),
    "python.saved_model.loader_impl": ("tf.saved_model.loader", "tf.saved_model"),
    "python.saved_model.signature_def_utils": ("tf.saved_model.signature_def_utils",
                                                "tf.saved_model"),
    "python.saved_model.signature_def_utils_impl": ("tf.saved_model.signature_def_utils",
                                                     "tf.saved_model"),
    "python.saved_model.utils": ("tf.saved_model.utils", "tf.saved_model"),
    "python.saved_model.utils_impl": ("tf.saved_model.utils", "tf.saved_model"),
    "python.saved_model.saved_model": ("tf.saved_model",),
    "python.saved_model.simple_save": ("tf.saved_model",),
    "python.saved_model.constants": ("tf.saved_model", "tf.saved_model.constants"),
    # python.util, lib, client, summary
    "python.util.compat": ("tf.compat",),
    "python.util.nest": ("tf.nest",),
    "python.lib.io.file_io": ("module:flowgraph.io.file_io", "tf.gfile", "tf.io.gfile"),
    "python.lib.io.tf_record": ("tf.python_io", "tf.io"),
    "python.client.session": _T,
    "python.summary.summary": ("tf.summary",),
    "python.summary.summary_iterator": ("tf.train",),
    "python.summary.writer.writer": ("tf.summary",),
    "python.summary.writer.writer_cache": ("tf.summary",),
    # python.keras, layers, estimator, data, eager, feature columns
    "python.keras": ("tf.keras",),
    **{f"python.keras.{name}": (f"tf.keras.{name}",) for name in (
        "backend", "layers", "models", "optimizers", "losses", "metrics", "callbacks",
        "utils", "regularizers", "initializers", "activations", "constraints",
        "datasets", "preprocessing", "applications", "estimator", "mixed_precision")},
    "python.keras.engine.training": ("tf.keras", "tf.keras.models"),
    "python.keras.engine.base_layer": ("tf.keras.layers",),
    "python.layers.core": ("tf.layers",),
    "python.layers.base": ("tf.layers",),
    "python.layers.layers": ("tf.layers",),
    "python.layers.convolutional": ("tf.layers",),
    "python.layers.normalization": ("tf.layers",),
    "python.layers.pooling": ("tf.layers",),
    "python.feature_column.feature_column": ("tf.feature_column",),
    "python.feature_column.feature_column_lib": ("tf.feature_column",),
    "python.estimator.estimator": ("tf.estimator",),
    "python.estimator.estimator_lib": ("tf.estimator",),
    "python.estimator.run_config": ("tf.estimator",),
    "python.estimator.model_fn": ("tf.estimator",),
    "python.estimator.training": ("tf.estimator",),
    "python.estimator.export.export": ("tf.estimator.export",),
    "python.estimator.inputs.inputs": ("tf.estimator.inputs",),
    "python.data.ops.dataset_ops": ("tf.data",),
    "python.data.ops.iterator_ops": ("tf.data",),
    "python.data.ops.readers": ("tf.data",),
    "python.data.experimental": ("tf.data.experimental",),
    "python.eager.context": ("tf",),
    "python.eager.function": ("tf",),
    "python.eager.def_function": ("tf",),
    # core: the message classes
    **{f"core.{name}": _PROTOS for name in (
        "framework.graph_pb2", "framework.node_def_pb2", "framework.attr_value_pb2",
        "framework.tensor_pb2", "framework.tensor_shape_pb2", "framework.summary_pb2",
        "framework.variable_pb2", "framework.versions_pb2", "framework.function_pb2",
        "framework.op_def_pb2", "framework.step_stats_pb2", "protobuf.config_pb2",
        "protobuf.saver_pb2", "protobuf.meta_graph_pb2", "protobuf.rewriter_config_pb2",
        "protobuf.cluster_pb2", "protobuf.tensorflow_server_pb2",
        "protobuf.saved_model_pb2", "util.event_pb2", "example.example_pb2",
        "example.feature_pb2")},
    "core.framework.types_pb2": ("enums", "tf"),
}

# Names a searched namespace spells otherwise (TensorFlow module -> {name: flowgraph path}).
_RENAMED: dict[str, dict[str, str]] = {
    # the raw Switch/Merge wrappers (slim's inception preprocessing picks a branch with
    # them); tf.sparse.merge would shadow `merge` otherwise
    "python.ops.control_flow_ops": {"switch": "module:flowgraph.ops.control_flow_cond",
                                    "merge": "module:flowgraph.ops.control_flow_cond"},
    "core.framework.tensor_pb2": {"TensorProto": "module:flowgraph.framework.event_format"},
    "core.framework.tensor_shape_pb2": {
        "TensorShapeProto": "module:flowgraph.framework.event_format"},
    "core.framework.versions_pb2": {"VersionDef": "module:flowgraph.framework.event_format"},
    "core.framework.function_pb2": {
        "FunctionDefLibrary": "module:flowgraph.framework.event_format"},
    "core.framework.variable_pb2": {
        "VariableDef": "module:flowgraph.framework.tf_formats.meta_graph_messages.VariableDefProto",
        "SaveSliceInfoDef":
            "module:flowgraph.framework.tf_formats.meta_graph_messages.SaveSliceInfoDefProto"},
    "core.protobuf.meta_graph_pb2": {
        "CollectionDef":
            "module:flowgraph.framework.tf_formats.meta_graph_messages.CollectionDefProto"},
    "python.training.summary_io": {"SummaryWriter": "tf.summary.FileWriter",
                                   "SummaryWriterCache": "tf.summary.FileWriterCache"},
    "python.ops.init_ops": {
        "Constant": "tf.constant_initializer", "Zeros": "tf.zeros_initializer",
        "Ones": "tf.ones_initializer", "RandomNormal": "tf.random_normal_initializer",
        "RandomUniform": "tf.random_uniform_initializer",
        "TruncatedNormal": "tf.truncated_normal_initializer",
        "VarianceScaling": "tf.variance_scaling_initializer",
        "Orthogonal": "tf.orthogonal_initializer", "Identity": "tf.initializers.identity",
        "GlorotUniform": "tf.glorot_uniform_initializer",
        "GlorotNormal": "tf.glorot_normal_initializer",
        "UniformUnitScaling": "tf.uniform_unit_scaling_initializer"},
    "core.protobuf.rewriter_config_pb2": {
        "RewriterConfig": "module:flowgraph.runtime.config"},
    "python.framework.tensor_util": {"MakeNdarray": "tf.make_ndarray",
                                     "constant_value": "tf.get_static_value"},
    "python.util.nest": {"is_sequence": "tf.nest.is_nested",
                         "is_nested": "tf.nest.is_nested"},
    "python.summary.summary_iterator": {"summary_iterator": "tf.train.summary_iterator"},
    "python.framework.graph_io": {"write_graph": "tf.train.write_graph"},
    "python.training.device_setter": {"replica_device_setter": "tf.train.replica_device_setter"},
    "python.eager.context": {"executing_eagerly": "tf.executing_eagerly"},
    **{f"python.framework.{m}": {
        "InaccessibleTensorError": "module:flowgraph.framework.graph.InaccessibleTensorError"}
       for m in ("errors", "errors_impl")},
}


def snake_case(op_type: str) -> str:
    """TensorFlow's Python name of an op type's generated wrapper.

    >>> [snake_case(t) for t in ("MatMul", "Conv2D", "BatchMatMulV2", "LRN", "CTCLoss")]
    ['mat_mul', 'conv2d', 'batch_mat_mul_v2', 'lrn', 'ctc_loss']
    """
    out = []
    for i, c in enumerate(op_type):
        if c.isupper() and i > 0:
            before, after = op_type[i - 1], op_type[i + 1] if i + 1 < len(op_type) else ""
            if before.islower() or (before.isupper() and after.islower()):
                out.append("_")
        out.append(c.lower())
    return "".join(out)


_GEN: dict[str, str] | None = None  # snake-case name -> op type


def _gen_wrapper(name: str):
    """The generated wrapper ``name`` (``mat_mul``): positional arguments in the op's
    input order, then its attributes, as TensorFlow's wrappers take them."""
    global _GEN
    if _GEN is None:
        from flowgraph.ops.raw_op_signatures import SIGNATURES

        _GEN = {snake_case(op): op for op in SIGNATURES}
    op_type = _GEN.get(name)
    if op_type is None:
        return None
    import flowgraph as tf
    from flowgraph.ops.raw_op_signatures import SIGNATURES

    raw = getattr(tf.raw_ops, op_type, None)
    if raw is None:
        return None
    inputs, attrs = SIGNATURES[op_type]
    order = [p.split(":")[0].lstrip("*") for p in inputs.split(",") if p]
    order += [a.split("=")[0] for a in attrs.split(",") if a]

    def wrapper(*args, **kwargs):
        if len(args) > len(order):
            raise TypeError(f"{name}() takes at most {len(order)} positional arguments "
                            f"({', '.join(order)}); got {len(args)}")
        for key, value in zip(order, args):
            if key in kwargs:
                raise TypeError(f"{name}() got multiple values for argument {key!r}")
            kwargs[key] = value
        return raw(**kwargs)

    wrapper.__name__ = wrapper.__qualname__ = name
    wrapper.__doc__ = f"TensorFlow's generated wrapper of the {op_type} op (tf.raw_ops.{op_type})."
    return wrapper


def _enum(name: str):
    """``types_pb2`` constants: ``DT_FLOAT`` and the rest, and ``DataType``."""
    from flowgraph.framework import dtypes
    from flowgraph.framework.proto_text import datatype_name

    table = {}
    for value in range(1, 200):
        try:
            table[datatype_name(value)] = value
        except (KeyError, ValueError):
            continue
    for dtype in vars(dtypes).values():  # the _REF variants too
        if isinstance(dtype, dtypes.DType):
            try:
                table.setdefault(datatype_name(dtype.as_datatype_enum), dtype.as_datatype_enum)
            except (KeyError, ValueError):
                pass
    if name == "DataType":
        return _DataTypeEnum(table)
    return table.get(name)


class _DataTypeEnum:
    """``types_pb2.DataType``: ``Name(value)``, ``Value(name)``, ``keys()``, ``values()``."""

    def __init__(self, table: dict) -> None:
        self._by_name = dict(table)
        self._by_value = {v: k for k, v in table.items()}

    def Name(self, value: int) -> str:
        if value not in self._by_value:
            raise ValueError(f"Enum DataType has no name defined for value {value!r}")
        return self._by_value[value]

    def Value(self, name: str) -> int:
        if name not in self._by_name:
            raise ValueError(f"Enum DataType has no value defined for name {name!r}")
        return self._by_name[name]

    def keys(self) -> list:
        return list(self._by_name)

    def values(self) -> list:
        return list(self._by_name.values())


def _resolve(source: str, name: str):
    """`name` in one source of `ALIASES` (a `_MISSING` marker when absent)."""
    if source == "gen":
        found = _gen_wrapper(name)
        return _MISSING if found is None else found
    if source == "enums":
        found = _enum(name)
        return _MISSING if found is None else found
    if source.startswith("module:"):
        holder = importlib.import_module(source[len("module:"):])
        return getattr(holder, name, _MISSING)
    import flowgraph

    holder = flowgraph
    for part in source.split(".")[1:]:
        holder = getattr(holder, part, None)
        if holder is None:
            return _MISSING
    return getattr(holder, name, _MISSING)


_MISSING = object()


class _AliasModule(types.ModuleType):
    """One TensorFlow module path: attributes resolved from its sources on first use."""

    def __init__(self, name: str, key: str, package: bool) -> None:
        super().__init__(name, f"TensorFlow's tensorflow.{key} as a view of flowgraph "
                               "(flowgraph.python.tf_paths).")
        self._fg_key = key
        self._fg_sources = ALIASES.get(key, ())
        if package:
            self.__path__ = []

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        renamed = _RENAMED.get(self._fg_key, {}).get(name)
        if renamed is not None:
            if renamed.startswith("module:") and renamed.count(".") and renamed.rsplit(
                    ".", 1)[1][:1].isupper():  # "module:pkg.mod.Class"
                head, _, attr = renamed.rpartition(".")
                value = _resolve(head, attr)
            elif renamed.startswith("module:"):
                value = _resolve(renamed, name)
            else:
                head, _, attr = renamed.rpartition(".")
                value = _resolve(head, attr)
            if value is not _MISSING:
                setattr(self, name, value)
                return value
        for source in self._fg_sources:
            value = _resolve(source, name)
            if value is not _MISSING:
                setattr(self, name, value)
                return value
        child = f"{self.__name__}.{name}"
        if self._fg_key + "." + name in _PACKAGES or self._fg_key + "." + name in ALIASES:
            return importlib.import_module(child)
        where = ", ".join(self._fg_sources) or "its submodules"
        raise AttributeError(f"module 'tensorflow.{self._fg_key}' (flowgraph's view "
                             f"{self.__name__}) has no attribute {name!r}: flowgraph has "
                             f"no such name in {where}")

    def __dir__(self) -> list:
        names = set(super().__dir__()) | set(_RENAMED.get(self._fg_key, ()))
        for source in self._fg_sources:
            if source.startswith("tf"):
                holder = importlib.import_module("flowgraph")
                for part in source.split(".")[1:]:
                    holder = getattr(holder, part, None)
                if holder is not None:
                    names.update(n for n in dir(holder) if not n.startswith("_"))
        return sorted(names)


# Every package prefix of a known path (``python``, ``python.framework`` ...).
_PACKAGES = {".".join(key.split(".")[:i]) for key in ALIASES
             for i in range(1, key.count(".") + 1)}


class TFPathFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``flowgraph.python.X`` / ``flowgraph.core.X`` / ``flowgraph.contrib.X`` for
    the TensorFlow paths of `ALIASES` that no real flowgraph module provides (it is
    consulted last)."""

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith(("flowgraph.python.", "flowgraph.core.",
                                    "flowgraph.contrib.")):
            return None
        key = fullname[len("flowgraph."):]
        if key not in ALIASES and key not in _PACKAGES:
            return None
        return importlib.machinery.ModuleSpec(fullname, self,
                                              is_package=key in _PACKAGES)

    def create_module(self, spec):
        key = spec.name[len("flowgraph."):]
        return _AliasModule(spec.name, key, key in _PACKAGES)

    def exec_module(self, module) -> None:
        return None


def install() -> None:
    """Put the finder at the end of `sys.meta_path` (once)."""
    if not any(isinstance(f, TFPathFinder) for f in sys.meta_path):
        sys.meta_path.append(TFPathFinder())
