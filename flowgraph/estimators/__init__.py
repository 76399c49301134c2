"""The `tf.estimator` namespace (tensorflow_estimator 2.15 names): re-exports only.

Also importable as ``flowgraph.estimator`` (TF's spelling): this package registers
itself, and its submodules, under that name too.

Example
-------
>>> import flowgraph.estimators as estimator
>>> estimator.ModeKeys.PREDICT, estimator.RunConfig().save_checkpoints_secs
('infer', 600)
"""

import sys as _sys
import types as _types

from flowgraph.estimators import experimental_extras as _extras
from flowgraph.estimators import export, inputs, tpu
from flowgraph.estimators.canned import *
from flowgraph.estimators.canned import __all__ as _canned_names
from flowgraph.estimators.early_stopping import (
    make_early_stopping_hook,
    read_eval_metrics,
    stop_if_higher_hook,
    stop_if_lower_hook,
    stop_if_no_decrease_hook,
    stop_if_no_increase_hook,
)
from flowgraph.estimators.estimator import Estimator
from flowgraph.estimators.exporter import BestExporter, Exporter, FinalExporter, LatestExporter
from flowgraph.estimators.extenders import add_metrics
from flowgraph.estimators.head import *
from flowgraph.estimators.head import __all__ as _head_names
from flowgraph.estimators.in_memory_eval import InMemoryEvaluatorHook
from flowgraph.estimators.model_fn import EstimatorSpec, ModeKeys
from flowgraph.estimators.run_config import RunConfig, TaskType
from flowgraph.estimators.training import EvalSpec, TrainSpec, train_and_evaluate
from flowgraph.estimators.warm_starting import VocabInfo, WarmStartSettings

experimental = _types.ModuleType(
    __name__ + ".experimental",
    "`tf.estimator.experimental`: early-stopping hooks, InMemoryEvaluatorHook, logit fns, "
    "LinearSDCA, supervised receivers.")
for _fn in (make_early_stopping_hook, stop_if_higher_hook, stop_if_lower_hook,
            stop_if_no_decrease_hook, stop_if_no_increase_hook, InMemoryEvaluatorHook,
            _extras.LinearSDCA, _extras.build_raw_supervised_input_receiver_fn,
            _extras.call_logit_fn, _extras.dnn_logit_fn_builder,
            _extras.linear_logit_fn_builder, _extras.make_stop_at_checkpoint_step_hook):
    setattr(experimental, _fn.__name__, _fn)
export.EvalOutput = _extras.EvalOutput
from flowgraph.estimators.canned.kmeans import KMeansClustering as _KMeans  # noqa: E402

experimental.KMeans = _KMeans  # TF's tf.compat.v1.estimator.experimental.KMeans
experimental.__all__ = sorted(n for n in vars(experimental) if not n.startswith("_"))

__all__ = [
    "Estimator",
    "EstimatorSpec",
    "EvalSpec",
    "ModeKeys",
    "RunConfig",
    "TaskType",
    "TrainSpec",
    "VocabInfo",
    "WarmStartSettings",
    "add_metrics",
    "experimental",
    "inputs",
    "train_and_evaluate",
    "export",
    "tpu",
    "Exporter",
    "LatestExporter",
    "BestExporter",
    "FinalExporter",
    *_head_names,
    *_canned_names,
]

# `flowgraph.estimator` is this package (TF's name); submodules follow.
_sys.modules[__name__ + ".experimental"] = experimental
_alias = __name__[: -len("estimators")] + "estimator"
_sys.modules.setdefault(_alias, _sys.modules[__name__])
if _sys.modules.get(_alias) is _sys.modules[__name__]:  # what `import` would have bound
    _sys.modules[__name__.rpartition(".")[0]].estimator = _sys.modules[__name__]
for _name, _mod in list(_sys.modules.items()):
    if _name.startswith(__name__ + "."):
        _sys.modules.setdefault(_alias + _name[len(__name__):], _mod)
del _fn, _name, _mod

# TF 1.x's tf.estimator also names tf.train's session hooks and their helpers.
from flowgraph.train import (  # noqa: E402
    CheckpointSaverHook,
    CheckpointSaverListener,
    FeedFnHook,
    FinalOpsHook,
    GlobalStepWaiterHook,
    LoggingTensorHook,
    NanLossDuringTrainingError,
    NanTensorHook,
    ProfilerHook,
    SecondOrStepTimer,
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
    StepCounterHook,
    StopAtStepHook,
    SummarySaverHook,
)

__all__ += ["CheckpointSaverHook", "CheckpointSaverListener", "FeedFnHook", "FinalOpsHook",
            "GlobalStepWaiterHook", "LoggingTensorHook", "NanLossDuringTrainingError",
            "NanTensorHook", "ProfilerHook", "SecondOrStepTimer", "SessionRunArgs",
            "SessionRunContext", "SessionRunHook", "SessionRunValues", "StepCounterHook",
            "StopAtStepHook", "SummarySaverHook"]

# Parse specs of canned estimators' features and labels (TF1 misc names).
from flowgraph.estimators.parse_spec import (  # noqa: E402
    classifier_parse_example_spec,
    regressor_parse_example_spec,
)

__all__ += ["classifier_parse_example_spec", "regressor_parse_example_spec"]
