"""``tf.summary.initialize``: TF1's graph-mode setup of the default TF-2-style summary
writer (``tf.contrib.summary``); implemented in `flowgraph/summary/summary_v2_state.py`.

Example
-------
>>> import flowgraph as tf
>>> try:
...     tf.summary.initialize()
... except RuntimeError as e:
...     print(e)
No default tf.contrib.summary.SummaryWriter found
"""

from __future__ import annotations

from flowgraph.summary.summary_v2_state import initialize

__all__ = ["initialize"]
