"""The `AttributeError` for a TensorFlow 1.x name that flowgraph does not have.

`tf.<name>` (and `tf.nn.<name>`, `tf.layers.<name>`, `tf.linalg.<name>`) that do not
exist raise `missing_attribute(module, name)`: an `AttributeError`, so ``hasattr`` and
``getattr(tf, name, default)`` keep working, whose message says the name is not
implemented in flowgraph and, where there is one, what to use instead. The coverage
table in docs/tf1-compatibility.md lists every missing TF 1.x name
(``python tools/coverage.py``).

Example
-------
>>> import flowgraph as tf
>>> try:
...     tf.LMDBReader
... except AttributeError as e:
...     print(str(e).split(":")[0])
module 'flowgraph' has no attribute 'LMDBReader'
"""

from __future__ import annotations

__all__ = ["missing_attribute"]


# "module.name" (module "" for the top level) -> what to use instead. Only names that
# are still missing: tests/framework/test_missing_api_hints.py checks that none of
# them has been implemented since.
_HINTS = {
    "LMDBReader": "LMDB files are not supported; read records with tf.data "
                  "(TFRecordDataset, TextLineDataset, from_tensor_slices)",
}


def missing_attribute(module: str, name: str) -> AttributeError:
    """The error for ``tf.<module>.<name>`` (module "" for the top level)."""
    where = "flowgraph" + (f".{module}" if module else "")
    message = f"module '{where}' has no attribute '{name}'"
    if name.startswith("__"):
        return AttributeError(message)
    tf_name = "tf." + (f"{module}." if module else "") + name
    hint = _HINTS.get(f"{module}.{name}" if module else name)
    if hint is not None:
        message += f": {tf_name} is not implemented in flowgraph; {hint}."
    else:
        message += (f": if {tf_name} is a TensorFlow 1.x name, it is not implemented in "
                    f"flowgraph (docs/tf1-compatibility.md lists the missing names).")
    return AttributeError(message)
