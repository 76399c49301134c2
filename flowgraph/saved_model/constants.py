"""SavedModel constants: ``tf.saved_model.tag_constants`` and ``signature_constants``.

The values are TensorFlow's, so a signature or tag written by flowgraph means what it
means to TensorFlow Serving clients.

Example
-------
>>> tag_constants.SERVING, signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY
('serve', 'serving_default')
"""

from __future__ import annotations

import types

__all__ = ["signature_constants", "tag_constants"]

# -- tags of a meta graph ----------------------------------------------------------------------
SERVING = "serve"
TRAINING = "train"
EVAL = "eval"
GPU = "gpu"
TPU = "tpu"

# -- signature keys and method names -----------------------------------------------------------
DEFAULT_SERVING_SIGNATURE_DEF_KEY = "serving_default"

CLASSIFY_INPUTS = "inputs"
CLASSIFY_METHOD_NAME = "tensorflow/serving/classify"
CLASSIFY_OUTPUT_CLASSES = "classes"
CLASSIFY_OUTPUT_SCORES = "scores"

PREDICT_INPUTS = "inputs"
PREDICT_METHOD_NAME = "tensorflow/serving/predict"
PREDICT_OUTPUTS = "outputs"

REGRESS_INPUTS = "inputs"
REGRESS_METHOD_NAME = "tensorflow/serving/regress"
REGRESS_OUTPUTS = "outputs"

SUPERVISED_TRAIN_METHOD_NAME = "tensorflow/supervised/training"
SUPERVISED_EVAL_METHOD_NAME = "tensorflow/supervised/eval"

# -- names inside the export directory ---------------------------------------------------------
SAVED_MODEL_FILENAME_JSON = "saved_model.json"
SAVED_MODEL_FILENAME_PB = "saved_model.pb"  # TensorFlow's binary SavedModel
SAVED_MODEL_FILENAME_PBTXT = "saved_model.pbtxt"  # ... and its text form
VARIABLES_DIRECTORY = "variables"
VARIABLES_FILENAME = "variables"
ASSETS_DIRECTORY = "assets"
EXTRA_ASSETS_DIRECTORY = "assets.extra"
SAVED_MODEL_SCHEMA_VERSION = 1
DEBUG_DIRECTORY = "debug"
DEBUG_INFO_FILENAME_PB = "saved_model_debug_info.pb"
# TensorFlow's collection keys of a SavedModel's meta graph
ASSETS_KEY = "saved_model_assets"
LEGACY_INIT_OP_KEY = "legacy_init_op"
MAIN_OP_KEY = "saved_model_main_op"

# The two TF namespaces, as module-like objects (``tf.saved_model.tag_constants.SERVING``).
tag_constants = types.SimpleNamespace(SERVING=SERVING, TRAINING=TRAINING, EVAL=EVAL, GPU=GPU,
                                      TPU=TPU)
signature_constants = types.SimpleNamespace(
    DEFAULT_SERVING_SIGNATURE_DEF_KEY=DEFAULT_SERVING_SIGNATURE_DEF_KEY,
    CLASSIFY_INPUTS=CLASSIFY_INPUTS,
    CLASSIFY_METHOD_NAME=CLASSIFY_METHOD_NAME,
    CLASSIFY_OUTPUT_CLASSES=CLASSIFY_OUTPUT_CLASSES,
    CLASSIFY_OUTPUT_SCORES=CLASSIFY_OUTPUT_SCORES,
    PREDICT_INPUTS=PREDICT_INPUTS,
    PREDICT_METHOD_NAME=PREDICT_METHOD_NAME,
    PREDICT_OUTPUTS=PREDICT_OUTPUTS,
    REGRESS_INPUTS=REGRESS_INPUTS,
    REGRESS_METHOD_NAME=REGRESS_METHOD_NAME,
    REGRESS_OUTPUTS=REGRESS_OUTPUTS,
    SUPERVISED_TRAIN_METHOD_NAME=SUPERVISED_TRAIN_METHOD_NAME,
    SUPERVISED_EVAL_METHOD_NAME=SUPERVISED_EVAL_METHOD_NAME,
)
