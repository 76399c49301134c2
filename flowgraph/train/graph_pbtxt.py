"""``graph.pbtxt`` beside the checkpoints, as TensorFlow's `CheckpointSaverHook` writes it.

TensorFlow writes the training graph as a text GraphDef into the checkpoint directory each
time a monitored session is created (programs and tools look for ``model_dir/graph.pbtxt``).
The text form is slow to make (10-25 ms for a small Estimator's graph here), and an
Estimator builds the same graph again on every `train` call, so the text is kept
process-wide by the graph def's content digest, and a file this process wrote with the
same content (same size and modification time since) is not written again.

Example
-------
>>> import os, tempfile, flowgraph as tf
>>> model_dir = tempfile.mkdtemp()
>>> with tf.Graph().as_default() as g:
...     _ = tf.constant(1.0, name="c")
>>> path = write_graph_pbtxt(g, model_dir)
>>> os.path.basename(path), open(path).read().splitlines()[:2]
('graph.pbtxt', ['node {', '  name: "c"'])
"""

from __future__ import annotations

import os
import threading

from flowgraph.framework.content_cache import ContentCache, graph_def_snapshot
from flowgraph.framework.tf_formats.graph_def import graph_def_from_dict
from flowgraph.framework.tf_formats.text_format import message_to_text

__all__ = ["write_graph_pbtxt"]

_texts = ContentCache(max_entries=8, max_bytes=64 << 20)
_written: dict[str, tuple[bytes, int, int]] = {}  # path -> (digest, size, mtime_ns)
_written_lock = threading.Lock()


def write_graph_pbtxt(graph, logdir: str, name: str = "graph.pbtxt") -> str:
    """Write `graph` as a text GraphDef to ``logdir/name`` (atomically), unless this
    process already wrote the same content there and the file is unchanged since.
    Returns the file's path."""
    graph_def, digest = graph_def_snapshot(graph, add_shapes=True)
    path = os.path.join(os.fspath(logdir), name)
    with _written_lock:
        known = _written.get(path)
    if known is not None and known[0] == digest:
        try:
            st = os.stat(path)
        except OSError:
            st = None
        if st is not None and (st.st_size, st.st_mtime_ns) == known[1:]:
            return path
    data = _texts.get(digest)
    if data is None:
        data = message_to_text(graph_def_from_dict(graph_def, add_shapes=True)).encode("utf-8")
        _texts.put(digest, data)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = f"{path}.tmp{os.getpid()}.{threading.get_ident()}"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)
    st = os.stat(path)
    with _written_lock:
        _written[path] = (digest, st.st_size, st.st_mtime_ns)
    return path
