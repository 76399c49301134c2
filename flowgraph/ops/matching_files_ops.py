"""``MatchingFiles``: the file names matching glob patterns, sorted (`tf.matching_files`),
the op behind `tf.train.match_filenames_once`.

Example
-------
>>> import flowgraph as tf
>>> names = tf.matching_files("/nonexistent-dir/*.csv")
>>> names.shape.as_list(), names.dtype.name
([None], 'string')
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.registry import OpCost, not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.op_util import fixed_dtype, make_tensor, op_scope

__all__ = ["matching_files"]


@register_op("MatchingFiles", dtype_fn=fixed_dtype(_dtypes.string), stateful=True,
             cost=OpCost.EXPENSIVE)
def _matching_files_shape(op, pattern):
    if pattern.ndims not in (None, 0, 1):
        raise op.shape_error(f"pattern must be a scalar or a vector of strings, got shape "
                             f"{pattern}")
    return [TensorShape([None])]


not_differentiable("MatchingFiles")


def matching_files(pattern, name=None):
    """The sorted names of the files matching the glob `pattern` (a string, or a vector
    of patterns whose matches are merged); no match gives an empty vector. Wildcards
    (``*``, ``?``, ``[...]``) may appear in any path component.

    Example
    -------
    >>> import os, tempfile
    >>> import flowgraph as tf
    >>> d = tempfile.mkdtemp()
    >>> for n in ("b.csv", "a.csv"):
    ...     open(os.path.join(d, n), "w").close()
    >>> with tf.Session() as sess:
    ...     print([os.path.basename(f) for f in sess.run(
    ...         tf.matching_files(os.path.join(d, "*.csv"))).astype(str)])
    ['a.csv', 'b.csv']
    """
    with op_scope(name, "MatchingFiles", (pattern,)) as scope:
        p = convert_to_tensor(pattern, dtype=_dtypes.string, name="pattern")
        return make_tensor("MatchingFiles", [p], name=scope)
