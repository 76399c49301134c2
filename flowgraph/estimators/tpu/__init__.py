"""`tf.estimator.tpu` (also `tf.compat.v1.estimator.tpu`): TPUEstimator run on the CPU.

See `flowgraph.estimators.tpu.tpu_estimator` for what the CPU path does and
docs/tpu.md for a BERT-style program.

Example
-------
>>> import flowgraph as tf
>>> tf.estimator.tpu.TPUConfig().iterations_per_loop
2
"""

import types as _types

from flowgraph.estimators.tpu.tpu_config import InputPipelineConfig, RunConfig, TPUConfig
from flowgraph.estimators.tpu.tpu_estimator import (
    ExamplesPerSecondHook,
    ExportSavedModelApiVersion,
    TPUEstimator,
    TPUEstimatorSpec,
)


class EmbeddingConfigSpec:
    """TPU embedding settings (TPU-only; `TPUEstimator` on the CPU records them)."""

    def __init__(self, feature_columns=None, optimization_parameters=None, clipping_limit=None,
                 pipeline_execution_with_tensor_core=False,
                 experimental_gradient_multiplier_fn=None, feature_to_config_dict=None,
                 table_to_config_dict=None, partition_strategy="div", profile_data_directory=None):
        self.feature_columns = feature_columns
        self.optimization_parameters = optimization_parameters
        self.clipping_limit = clipping_limit
        self.pipeline_execution_with_tensor_core = pipeline_execution_with_tensor_core
        self.experimental_gradient_multiplier_fn = experimental_gradient_multiplier_fn
        self.feature_to_config_dict = feature_to_config_dict
        self.table_to_config_dict = table_to_config_dict
        self.partition_strategy = partition_strategy
        self.profile_data_directory = profile_data_directory


experimental = _types.ModuleType(__name__ + ".experimental",
                                 "`tf.estimator.tpu.experimental`: EmbeddingConfigSpec.")
experimental.EmbeddingConfigSpec = EmbeddingConfigSpec
experimental.__all__ = ["EmbeddingConfigSpec"]

__all__ = ["ExamplesPerSecondHook", "ExportSavedModelApiVersion", "InputPipelineConfig",
           "RunConfig", "TPUConfig", "TPUEstimator", "TPUEstimatorSpec", "experimental"]
