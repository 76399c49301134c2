"""Summary-writer resource ops: TF 1.x's ``tf.contrib.summary`` writes through these.

``SummaryWriter`` outputs a handle to a writer in the session's resource container
(shared by ``shared_name``); ``CreateSummaryFileWriter`` opens its event file (once: a
second run is a no-op); the ``Write*Summary`` ops append one event each, at the step
they are given; ``FlushSummaryWriter`` and ``CloseSummaryWriter`` flush and close it.
Kernels: `flowgraph/backends/cpu/kernels_summary_writer.py`; the Python API:
`flowgraph/summary/summary_v2_graph.py`.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.framework.registry import get_op_def
>>> get_op_def("WriteScalarSummary").stateful
True
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.registry import OpCost, not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.op_util import fixed_dtype

__all__: list[str] = []

_WRITE_OPS = {
    # op type: (attrs, input names after the writer)
    "CreateSummaryFileWriter": ({}, ("logdir", "max_queue", "flush_millis",
                                     "filename_suffix")),
    "CreateSummaryDbWriter": ({}, ("db_uri", "experiment_name", "run_name", "user_name")),
    "WriteScalarSummary": ({"T": None}, ("step", "tag", "value")),
    "WriteHistogramSummary": ({"T": _dtypes.float32}, ("step", "tag", "values")),
    "WriteImageSummary": ({"max_images": 3, "T": _dtypes.float32},
                          ("step", "tag", "tensor", "bad_color")),
    "WriteAudioSummary": ({"max_outputs": 3}, ("step", "tag", "tensor", "sample_rate")),
    "WriteSummary": ({"T": None}, ("step", "tensor", "tag", "summary_metadata")),
    "WriteGraphSummary": ({}, ("step", "tensor")),
    "ImportEvent": ({}, ("event",)),
    "FlushSummaryWriter": ({}, ()),
    "CloseSummaryWriter": ({}, ()),
}

register_op("SummaryWriter", attrs={"shared_name": "", "container": ""},
            dtype_fn=fixed_dtype(_dtypes.resource), stateful=True,
            cost=OpCost.CHEAP)(lambda op: [TensorShape([])])


def _writer_op_shape(op_type: str, names: tuple[str, ...]):
    def shape(op, writer, *inputs):
        if len(inputs) != len(names):
            raise op.shape_error(f"{op_type} takes a writer and {len(names)} inputs "
                                 f"({', '.join(names)}), got {len(inputs)}")
        for name, s in zip(names, inputs):
            scalar = name not in ("value", "values", "tensor", "bad_color")
            if scalar and s.ndims not in (None, 0):
                raise op.shape_error(f"{op_type}: '{name}' must be a scalar, got shape {s}")
        return []

    return shape


for _type, (_attrs, _names) in _WRITE_OPS.items():
    register_op(_type, attrs=_attrs, num_outputs=0, dtype_fn=lambda op: [], stateful=True,
                cost=OpCost.CHEAP)(_writer_op_shape(_type, _names))

not_differentiable("SummaryWriter", *_WRITE_OPS)
