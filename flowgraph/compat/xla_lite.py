"""`tf.xla`, `tf.lite` and `tf.mlir`: TensorFlow's compiler and converter entry points.

- ``tf.xla.experimental.compile(computation, inputs)`` builds `computation` into the
  graph and returns its outputs as a list, and ``jit_scope()`` marks the ops made inside
  it (``_XlaCompile``, ``_XlaScope``, ... attributes) as TensorFlow 1.x graph mode does.
  flowgraph has no XLA: every plan is compiled by its own planner (fused elementwise kernels,
  docs/performance.md), so these change which graph is built, never the result.
- ``tf.lite``: flowgraph cannot write TFLite flatbuffers. The converter classes and
  ``Interpreter`` raise `NotImplementedError` naming the fix: export a SavedModel with
  flowgraph (TensorFlow's format) and convert it with TensorFlow's
  ``tf.lite.TFLiteConverter.from_saved_model``. The ``constants``, ``OpsSet`` and
  ``Optimize`` values are TensorFlow's.
- ``tf.mlir.experimental``: MLIR conversions need TensorFlow's compiler; they raise
  `NotImplementedError`.

Example
-------
>>> import flowgraph as tf
>>> x = tf.constant([1.0, 2.0])
>>> total, product = tf.xla.experimental.compile(lambda a, b: (a + b, a * b), [x, x])
>>> tf.Session().run(product).tolist()
[1.0, 4.0]
"""

from __future__ import annotations

import enum
import types

from flowgraph.contrib.compiler.jit import experimental_jit_scope as jit_scope
from flowgraph.contrib.compiler.xla import compile
from flowgraph.framework import dtypes as _dtypes

__all__ = ["lite", "mlir", "xla"]


xla = types.SimpleNamespace(
    experimental=types.SimpleNamespace(compile=compile, jit_scope=jit_scope))


_LITE_FIX = ("flowgraph cannot write TensorFlow Lite flatbuffers. Export the model with "
             "tf.saved_model.simple_save (or Estimator.export_saved_model), which writes "
             "TensorFlow's SavedModel format, then convert it with TensorFlow: "
             "tf.lite.TFLiteConverter.from_saved_model(export_dir).convert().")


class TFLiteConverter:
    """TensorFlow Lite's converter: not available in flowgraph (see `_LITE_FIX`)."""

    def __init__(self, graph_def=None, input_tensors=None, output_tensors=None,
                 input_arrays_with_shape=None, output_arrays=None,
                 experimental_debug_info_func=None):
        raise NotImplementedError(f"tf.lite.TFLiteConverter: {_LITE_FIX}")

    @classmethod
    def from_session(cls, sess, input_tensors, output_tensors):
        """Not available: see the class docstring."""
        raise NotImplementedError(f"tf.lite.TFLiteConverter.from_session: {_LITE_FIX}")

    @classmethod
    def from_frozen_graph(cls, graph_def_file, input_arrays, output_arrays,
                          input_shapes=None):
        """Not available: see the class docstring."""
        raise NotImplementedError(f"tf.lite.TFLiteConverter.from_frozen_graph: {_LITE_FIX}")

    @classmethod
    def from_saved_model(cls, saved_model_dir, input_arrays=None, input_shapes=None,
                         output_arrays=None, tag_set=None, signature_key=None):
        """Not available: see the class docstring."""
        raise NotImplementedError(f"tf.lite.TFLiteConverter.from_saved_model: {_LITE_FIX}")

    @classmethod
    def from_keras_model_file(cls, model_file, input_arrays=None, input_shapes=None,
                              output_arrays=None, custom_objects=None):
        """Not available: see the class docstring."""
        raise NotImplementedError(
            f"tf.lite.TFLiteConverter.from_keras_model_file: {_LITE_FIX}")


class TocoConverter(TFLiteConverter):
    """TensorFlow's deprecated name of `TFLiteConverter`."""


def _refuse(name: str, fix: str = _LITE_FIX):
    def refuse(*args, **kwargs):
        raise NotImplementedError(f"{name}: {fix}")

    refuse.__name__ = name.rsplit(".", 1)[-1]
    refuse.__doc__ = f"Not available in flowgraph: raises NotImplementedError ({name})."
    return refuse


class OpsSet(enum.Enum):
    """The op sets a TFLite model may use (TensorFlow's values)."""

    TFLITE_BUILTINS = "TFLITE_BUILTINS"
    SELECT_TF_OPS = "SELECT_TF_OPS"
    TFLITE_BUILTINS_INT8 = "TFLITE_BUILTINS_INT8"
    EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8 = (
        "EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8")
    EXPERIMENTAL_STABLEHLO_OPS = "EXPERIMENTAL_STABLEHLO_OPS"


class Optimize(enum.Enum):
    """TFLite's optimization goals (TensorFlow's values)."""

    DEFAULT = "DEFAULT"
    OPTIMIZE_FOR_SIZE = "OPTIMIZE_FOR_SIZE"
    OPTIMIZE_FOR_LATENCY = "OPTIMIZE_FOR_LATENCY"
    EXPERIMENTAL_SPARSITY = "EXPERIMENTAL_SPARSITY"


class RepresentativeDataset:
    """A generator of sample inputs for quantization (stored; see `TFLiteConverter`)."""

    def __init__(self, input_gen):
        self.input_gen = input_gen


class TargetSpec:
    """The ops and types a converted model may use (stored; see `TFLiteConverter`)."""

    def __init__(self, supported_ops=None, supported_types=None,
                 experimental_select_user_tf_ops=None,
                 experimental_supported_backends=None):
        self.supported_ops = supported_ops if supported_ops is not None else {
            OpsSet.TFLITE_BUILTINS}
        self.supported_types = supported_types if supported_types is not None else set()
        self.experimental_select_user_tf_ops = experimental_select_user_tf_ops or set()
        self.experimental_supported_backends = experimental_supported_backends


lite = types.SimpleNamespace(
    Interpreter=_refuse("tf.lite.Interpreter", "flowgraph cannot run TFLite flatbuffers; "
                        "use TensorFlow's tf.lite.Interpreter or the tflite-runtime package."),
    OpHint=_refuse("tf.lite.OpHint"),
    OpsSet=OpsSet, Optimize=Optimize, RepresentativeDataset=RepresentativeDataset,
    TFLiteConverter=TFLiteConverter, TargetSpec=TargetSpec, TocoConverter=TocoConverter,
    toco_convert=_refuse("tf.lite.toco_convert"),
    constants=types.SimpleNamespace(
        FLOAT=_dtypes.float32, FLOAT16=_dtypes.float16, INT16=_dtypes.int16,
        INT32=_dtypes.int32, INT64=_dtypes.int64, INT8=_dtypes.int8,
        QUANTIZED_UINT8=_dtypes.uint8, STRING=_dtypes.string, TFLITE=2, GRAPHVIZ_DOT=3),
    experimental=types.SimpleNamespace(
        Analyzer=_refuse("tf.lite.experimental.Analyzer"),
        OpResolverType=_refuse("tf.lite.experimental.OpResolverType"),
        QuantizationDebugOptions=_refuse("tf.lite.experimental.QuantizationDebugOptions"),
        QuantizationDebugger=_refuse("tf.lite.experimental.QuantizationDebugger"),
        authoring=types.SimpleNamespace(compatible=_refuse(
            "tf.lite.experimental.authoring.compatible")),
        convert_op_hints_to_stubs=_refuse("tf.lite.experimental.convert_op_hints_to_stubs"),
        load_delegate=_refuse("tf.lite.experimental.load_delegate")),
)

_MLIR_FIX = ("MLIR conversion needs TensorFlow's compiler, which flowgraph does not "
             "include; export a SavedModel (TensorFlow's format) and convert it with "
             "TensorFlow's tf.mlir.experimental.")

mlir = types.SimpleNamespace(experimental=types.SimpleNamespace(**{
    name: _refuse(f"tf.mlir.experimental.{name}", _MLIR_FIX)
    for name in ("convert_function", "convert_graph_def", "convert_saved_model",
                 "convert_saved_model_v1", "run_pass_pipeline", "tflite_to_tosa_bytecode",
                 "write_bytecode")}))
