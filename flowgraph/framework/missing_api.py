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
...     tf.GradientTape
... except AttributeError as e:
...     print(str(e).split(":")[0])
module 'flowgraph' has no attribute 'GradientTape'
"""

from __future__ import annotations

__all__ = ["missing_attribute"]

_PY_FUNC = "wrap a NumPy function with tf.py_func (not differentiable)"
_TF_DATA = "read files with tf.data (TFRecordDataset, TextLineDataset, from_tensor_slices)"
_TF1_ONLY = "flowgraph has TensorFlow 1.x graph behaviour only, so there is nothing to enable"

# "module.name" (module "" for the top level) -> what to use instead.
_HINTS = {
    "GradientTape": "flowgraph builds graphs: use tf.gradients(ys, xs) or "
                    "optimizer.compute_gradients",
    "RaggedTensor": "use tf.SparseTensor or padded dense tensors",
    "make_template": "use tf.variable_scope(name, reuse=tf.AUTO_REUSE) around the function",
    "enable_resource_variables": _TF1_ONLY,
    "enable_control_flow_v2": _TF1_ONLY,
    "enable_tensor_equality": _TF1_ONLY,
    "enable_v2_tensorshape": _TF1_ONLY,
    "TFRecordReader": _TF_DATA,
    "TextLineReader": _TF_DATA,
    "WholeFileReader": _TF_DATA,
    "FixedLengthRecordReader": _TF_DATA,
    "IdentityReader": _TF_DATA,
    "LMDBReader": _TF_DATA,
    "ReaderBase": _TF_DATA,
    **{n: "there are no dense linear-algebra decompositions yet; " + _PY_FUNC for n in (
        "matrix_inverse", "matrix_determinant", "matrix_solve", "matrix_solve_ls",
        "matrix_triangular_solve", "matrix_square_root", "cholesky", "cholesky_solve",
        "svd", "qr", "self_adjoint_eig", "self_adjoint_eigvals", "linalg.inv",
        "linalg.det", "linalg.slogdet", "linalg.logdet", "linalg.solve", "linalg.cholesky",
        "linalg.svd", "linalg.qr", "linalg.eigh", "linalg.eigvalsh", "linalg.lstsq",
        "linalg.pinv", "linalg.expm", "linalg.triangular_solve")},
    **{n: "there are no FFT ops; " + _PY_FUNC for n in (
        "fft", "fft2d", "fft3d", "ifft", "ifft2d", "ifft3d", "spectral")},
    "nn.nce_loss": "sampled losses are not implemented; use "
                   "tf.nn.sparse_softmax_cross_entropy_with_logits over the full vocabulary",
    "nn.sampled_softmax_loss": "sampled losses are not implemented; use "
                               "tf.nn.sparse_softmax_cross_entropy_with_logits over the "
                               "full vocabulary",
    "nn.raw_rnn": "use tf.nn.dynamic_rnn or tf.while_loop with a tf.TensorArray",
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
