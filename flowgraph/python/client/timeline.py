"""``from tensorflow.python.client import timeline`` compatibility path: the Chrome-trace
view of a traced step (`flowgraph.runtime.timeline`).

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.python.client import timeline
>>> with tf.Graph().as_default():
...     y = tf.sin(tf.constant(1.0)) * 2.0
...     md = tf.RunMetadata()
...     with tf.Session() as sess:
...         _ = sess.run(y, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
...                      run_metadata=md)
>>> '"traceEvents"' in timeline.Timeline(md.step_stats).generate_chrome_trace_format()
True
"""

from flowgraph.runtime.timeline import AllocationMaximum, StepStatsAnalysis, Timeline

__all__ = ["AllocationMaximum", "StepStatsAnalysis", "Timeline"]
