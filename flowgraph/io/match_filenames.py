"""`tf.io.match_filenames_once`: the files matching a glob, read once into a local
variable; `tf.train.match_filenames_once` is this function (the train layer imports
it from here)."""

from __future__ import annotations

from flowgraph.framework.graph import GraphKeys, name_scope
from flowgraph.ops.matching_files_ops import matching_files
from flowgraph.ops.variables import Variable

__all__ = ["match_filenames_once"]


def match_filenames_once(pattern, name=None):
    """A local variable holding the sorted file names that match the glob `pattern`,
    computed when the local variables are initialized.

    Example
    -------
    >>> import flowgraph as tf
    >>> names = tf.io.match_filenames_once("/nonexistent-dir/*.csv")
    >>> with tf.Session() as sess:
    ...     sess.run(tf.local_variables_initializer())
    ...     print(sess.run(names).shape)
    (0,)
    """
    # As TensorFlow: the MatchingFiles op inside the variable's own scope.
    with name_scope(name, "matching_filenames", [pattern]) as scope:
        return Variable(matching_files(pattern), trainable=False, validate_shape=False,
                        name=scope, collections=[GraphKeys.LOCAL_VARIABLES])
