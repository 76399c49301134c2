"""Turn step statistics into a Chrome trace (``chrome://tracing``, Perfetto).

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.runtime.timeline import Timeline
>>> g = tf.Graph()
>>> with g.as_default():
...     y = tf.sin(tf.constant(1.0)) * 2.0
>>> md = tf.RunMetadata()
>>> with tf.Session(graph=g) as sess:
...     _ = sess.run(y, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
...                  run_metadata=md)
>>> '"traceEvents"' in Timeline(md.step_stats).generate_chrome_trace_format()
True
"""

from __future__ import annotations

import json

from flowgraph.runtime.config import StepStats


class Timeline:
    """A Chrome-trace view of one step: one process per device, one row per thread."""

    def __init__(self, step_stats: StepStats, graph=None) -> None:
        self._step_stats = step_stats
        self._graph = graph

    def generate_chrome_trace_format(self, show_dataflow: bool = True,
                                     show_memory: bool = False) -> str:
        events: list[dict] = []
        starts = [n.all_start_nanos for d in self._step_stats.dev_stats for n in d.node_stats]
        origin = min(starts, default=0)
        threads: dict[int, int] = {}
        for pid, dev in enumerate(self._step_stats.dev_stats):
            events.append({"name": "process_name", "ph": "M", "pid": pid,
                           "args": {"name": f"{dev.device} Compute"}})
            for node in dev.node_stats:
                tid = threads.setdefault(node.thread_id, len(threads))
                events.append({
                    "name": node.op_type or node.node_name,
                    "cat": "Op",
                    "ph": "X",
                    "pid": pid,
                    "tid": tid,
                    "ts": (node.all_start_nanos - origin) / 1000.0,
                    "dur": max(node.all_end_rel_nanos / 1000.0, 0.001),
                    "args": {"name": node.node_name, "op": node.op_type,
                             "output_bytes": node.output_bytes},
                })
                if show_memory:
                    events.append({
                        "name": "live bytes", "ph": "C", "pid": pid,
                        "ts": (node.all_start_nanos - origin) / 1000.0,
                        "args": {"bytes": node.live_bytes_after},
                    })
        return json.dumps({"traceEvents": events, "displayTimeUnit": "ns"})
