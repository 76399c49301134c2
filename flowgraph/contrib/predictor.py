"""`tf.contrib.predictor`: a SavedModel (or an Estimator) as a callable that takes a dict of
input values by signature key and returns a dict of NumPy outputs, in one long-lived
session, as TF1 serving code used it.

Example
-------
>>> import os, tempfile, flowgraph as tf
>>> export_dir = os.path.join(tempfile.mkdtemp(), "1")
>>> with tf.Graph().as_default():
...     x = tf.placeholder(tf.float32, [None, 2], name="x")
...     with tf.Session() as sess:
...         tf.saved_model.simple_save(sess, export_dir, {"x": x},
...                                    {"y": tf.reduce_sum(x, axis=1)})
>>> predict_fn = from_saved_model(export_dir)
>>> predict_fn({"x": [[1.0, 2.0], [3.0, 4.0]]})["y"].tolist()
[3.0, 7.0]
"""

from __future__ import annotations

import os
import shutil
import tempfile

from flowgraph.framework.graph import Graph
from flowgraph.runtime.session import Session
from flowgraph.saved_model import loader, signature_constants, tag_constants

__all__ = ["Predictor", "from_estimator", "from_saved_model"]


class Predictor:
    """Feeds the signature's inputs by key and fetches its outputs by key; ``session``,
    ``graph``, ``feed_tensors`` and ``fetch_tensors`` are public as in TF1."""

    def __init__(self, graph, session, feed_tensors: dict, fetch_tensors: dict) -> None:
        self.graph = graph
        self.session = session
        self.feed_tensors = feed_tensors
        self.fetch_tensors = fetch_tensors

    def __call__(self, input_dict: dict) -> dict:
        missing = set(self.feed_tensors) - set(input_dict)
        if missing:
            raise ValueError(f"Missing inputs {sorted(missing)}; the predictor takes "
                             f"{sorted(self.feed_tensors)}.")
        feed = {self.feed_tensors[k]: v for k, v in input_dict.items()
                if k in self.feed_tensors}
        return self.session.run(self.fetch_tensors, feed_dict=feed)

    def __repr__(self) -> str:
        return (f"SavedModelPredictor with feed tensors {self.feed_tensors} and fetch_tensors "
                f"{self.fetch_tensors}")


def _named(graph, tensors_info, names, what: str) -> dict:
    keys = list(tensors_info) if names is None else list(names)
    out = {}
    for key in keys:
        if key not in tensors_info:
            raise ValueError(f"{what} key {key!r} is not in the signature; it has "
                             f"{sorted(tensors_info)}.")
        out[key] = graph.get_tensor_by_name(tensors_info[key].name)
    return out


def from_saved_model(export_dir, signature_def_key=None, signature_def=None,
                     input_names=None, output_names=None, tags=None, graph=None,
                     config=None) -> Predictor:
    """A `Predictor` for the SavedModel in `export_dir`: the MetaGraph with `tags` (default
    ``serve``) and its signature `signature_def_key` (default ``serving_default``), or the
    given `signature_def`; `input_names` / `output_names` limit the keys."""
    if signature_def_key is not None and signature_def is not None:
        raise ValueError("Cannot specify both signature_def_key and signature_def.")
    tags = [tag_constants.SERVING] if tags is None else \
        ([tags] if isinstance(tags, str) else list(tags))
    graph = graph or Graph()
    with graph.as_default():
        session = Session(config=config, graph=graph)
        meta = loader.load(session, tags, export_dir)
    if signature_def is None:
        key = signature_def_key or signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY
        if key not in meta.signature_def:
            raise ValueError(f"Could not find signature def {key!r}. Available signatures "
                             f"are {sorted(meta.signature_def)}.")
        signature_def = meta.signature_def[key]
    feeds = _named(graph, signature_def.inputs, input_names, "Input")
    fetches = _named(graph, signature_def.outputs, output_names, "Output")
    return Predictor(graph, session, feeds, fetches)


def from_estimator(estimator, serving_input_receiver_fn, output_key=None, graph=None,
                   config=None) -> Predictor:
    """A `Predictor` for `estimator`'s latest checkpoint, fed through
    `serving_input_receiver_fn`'s receiver tensors; `output_key` picks the export output
    (default: the serving default)."""
    workdir = tempfile.mkdtemp(prefix="predictor-")
    try:
        export_dir = estimator.export_saved_model(workdir, serving_input_receiver_fn)
        export_dir = export_dir.decode() if isinstance(export_dir, bytes) else export_dir
        return from_saved_model(os.fspath(export_dir), signature_def_key=output_key,
                                graph=graph, config=config)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
