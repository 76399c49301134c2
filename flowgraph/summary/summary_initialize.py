"""``tf.summary.initialize``: TF1's graph-mode setup of the default TF-2-style summary
writer (``tf.contrib.summary``). flowgraph writes summaries with TF1's ops and
``FileWriter`` only, so there is never a default writer to initialize: in graph mode,
as in TensorFlow without one, the call raises ``RuntimeError``.

Example
-------
>>> import flowgraph as tf
>>> try:
...     tf.summary.initialize()
... except RuntimeError as e:
...     print(str(e).split(";")[0])
No default tf.contrib.summary.SummaryWriter found
"""

from __future__ import annotations

__all__ = ["initialize"]


def initialize(graph=None, session=None):
    """Initialize the default TF-2-style summary writer in `session` (TF1 graph mode).

    There is none in flowgraph (see the module docstring), so this raises
    ``RuntimeError`` as TensorFlow does when no writer was made the default. Use
    ``tf.summary.FileWriter`` with ``tf.summary.scalar`` and ``tf.summary.merge_all``.

    Example
    -------
    >>> import flowgraph as tf
    >>> try:
    ...     tf.summary.initialize(session=None)
    ... except RuntimeError:
    ...     print("no default writer")
    no default writer
    """
    raise RuntimeError("No default tf.contrib.summary.SummaryWriter found; flowgraph has no "
                       "TF-2-style summary writers: write summaries with tf.summary.FileWriter "
                       "and tf.summary.scalar/merge_all instead")
