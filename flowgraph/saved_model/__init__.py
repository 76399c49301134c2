"""The ``tf.saved_model`` namespace (TensorFlow 1.x names): re-exports only.

``tf.saved_model.load`` is both of TensorFlow's: with a session first
(``load(sess, tags, export_dir)``) it is the TF1 loader; with an export directory first
(``load(export_dir, tags=("serve",))``) it returns a callable model (`predictor.load`).
"""

import types as _types

from flowgraph.saved_model import builder, constants, format, loader, predictor
from flowgraph.saved_model import signature_def_utils as _sig_utils
from flowgraph.saved_model.builder import SavedModelBuilder
from flowgraph.saved_model.constants import (
    ASSETS_DIRECTORY,
    CLASSIFY_INPUTS,
    CLASSIFY_METHOD_NAME,
    CLASSIFY_OUTPUT_CLASSES,
    CLASSIFY_OUTPUT_SCORES,
    DEFAULT_SERVING_SIGNATURE_DEF_KEY,
    EXTRA_ASSETS_DIRECTORY,
    GPU,
    PREDICT_INPUTS,
    PREDICT_METHOD_NAME,
    PREDICT_OUTPUTS,
    REGRESS_INPUTS,
    REGRESS_METHOD_NAME,
    REGRESS_OUTPUTS,
    SAVED_MODEL_FILENAME_JSON,
    SERVING,
    TPU,
    TRAINING,
    VARIABLES_DIRECTORY,
    VARIABLES_FILENAME,
    signature_constants,
    tag_constants,
)
from flowgraph.saved_model.constants_tf import (
    ASSETS_KEY,
    DEBUG_DIRECTORY,
    DEBUG_INFO_FILENAME_PB,
    LEGACY_INIT_OP_KEY,
    MAIN_OP_KEY,
    SAVED_MODEL_FILENAME_PB,
    SAVED_MODEL_FILENAME_PBTXT,
    SAVED_MODEL_SCHEMA_VERSION,
    main_op_with_restore,
)
from flowgraph.saved_model.format import SavedModelFormatError, SignatureDef, TensorInfo
from flowgraph.saved_model.loader import contains_saved_model, maybe_saved_model_directory
from flowgraph.saved_model.predictor import LoadedModel
from flowgraph.saved_model.signature_def_utils import (
    build_signature_def,
    build_tensor_info,
    classification_signature_def,
    get_tensor_from_tensor_info,
    is_valid_signature,
    predict_signature_def,
    regression_signature_def,
    utils,
)
from flowgraph.saved_model.tf_export import export_format, get_export_format, set_export_format

Builder = SavedModelBuilder
signature_def_utils = _sig_utils


def load(*args, **kwargs):
    """``load(sess, tags, export_dir, import_scope=None)`` (TF1: import into `sess`,
    returns the MetaGraphDef) or ``load(export_dir, tags=("serve",))`` (returns a
    `LoadedModel` whose ``signatures[key]`` are callables on NumPy values)."""
    first = args[0] if args else kwargs.get("sess", kwargs.get("export_dir"))
    if hasattr(first, "run") and hasattr(first, "graph"):
        return loader.load(*args, **kwargs)
    return predictor.load(*args, **kwargs)


def simple_save(session, export_dir, inputs, outputs, legacy_init_op=None,
                format=None) -> None:  # noqa: F811 (the `format` module is not used here)
    """Save `session` for serving: one ``serving_default`` predict signature from the
    `inputs` and `outputs` dicts, tag ``serve``, assets of ``ASSET_FILEPATHS``, devices
    cleared. `format` ("flowgraph" or "tensorflow", a flowgraph extension) is the
    builder's: "tensorflow" (the default unless `set_export_format` changed it) writes
    ``saved_model.pb``, which TensorFlow loads; "flowgraph" ``saved_model.json``."""
    from flowgraph.framework.graph import GraphKeys

    signature_def_map = {DEFAULT_SERVING_SIGNATURE_DEF_KEY: predict_signature_def(inputs,
                                                                                  outputs)}
    b = SavedModelBuilder(export_dir, format=format)
    b.add_meta_graph_and_variables(
        session, tags=[SERVING], signature_def_map=signature_def_map,
        assets_collection=session.graph.get_collection(GraphKeys.ASSET_FILEPATHS),
        main_op=legacy_init_op, clear_devices=True)
    b.save()


def _main_op():
    """``group(local_variables_initializer(), <table initializers>)``."""
    from flowgraph.framework.graph import GraphKeys, get_default_graph
    from flowgraph.ops import variables
    from flowgraph.ops.control_flow_ops import group

    tables = get_default_graph().get_collection(GraphKeys.TABLE_INITIALIZERS)
    return group(variables.local_variables_initializer(), *tables)


main_op = _types.SimpleNamespace(main_op=_main_op, main_op_with_restore=main_op_with_restore)

from flowgraph.saved_model.save_v2 import Asset, SaveOptions, experimental, load_v2, save  # noqa: E402
