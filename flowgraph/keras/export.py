"""`tf.keras.export` (TF 1.x mode): ``ExportArchive``, which needs TF2.

Keras' ``ExportArchive`` traces ``tf.function``s eagerly into a TF2 SavedModel; graph
mode has no such tracing. Export a graph-mode Keras model with
``tf.keras.estimator.model_to_estimator(model).export_saved_model(...)`` or
``tf.saved_model.simple_save(sess, path, inputs, outputs)`` instead.

Example
-------
>>> import flowgraph as tf
>>> try:
...     tf.keras.export.ExportArchive()
... except NotImplementedError as e:
...     print("simple_save" in str(e))
True
"""

from __future__ import annotations

__all__ = ["ExportArchive"]


class ExportArchive:
    """Not available in graph mode (see the module docstring); constructing one raises
    `NotImplementedError` saying what to use."""

    def __init__(self, *args, **kwargs) -> None:
        raise NotImplementedError(
            "tf.keras.export.ExportArchive traces TF2 tf.functions eagerly, which "
            "flowgraph's graph mode does not do. Export the model with "
            "tf.keras.estimator.model_to_estimator(model).export_saved_model(dir, "
            "serving_input_receiver_fn) or tf.saved_model.simple_save(sess, dir, inputs, "
            "outputs).")
