"""`tf.data.TFRecordDataset`: the records of TFRecord files, as scalar strings.

Files are read one after the other; with ``num_parallel_reads=N``, N files give one
record each in turn, in TensorFlow's order. Framing, CRCs and compression are
`flowgraph.io.tf_record`'s.

Example
-------
>>> import os, tempfile
>>> import flowgraph as tf
>>> import flowgraph.data
>>> path = os.path.join(tempfile.mkdtemp(), "d.tfrecord")
>>> with tf.io.TFRecordWriter(path) as w:
...     for i in range(3):
...         w.write(b"r%d" % i)
>>> it = tf.data.make_one_shot_iterator(tf.data.TFRecordDataset(path).batch(3))
>>> with tf.Session() as sess:
...     print(sess.run(it.get_next()))
[b'r0' b'r1' b'r2']
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import errors
from flowgraph.framework.operation import Tensor
from flowgraph.io.tf_record import compression_name, iter_records, read_file_bytes

from .dataset import Dataset
from .dataset_ops_sources import (
    _STRING_SCALAR,
    _names,
    _source_inputs,
    _source_tensors,
    _string_scalar,
    _string_source,
    interleave_files,
    parallel_reads,
)

__all__ = ["TFRecordDataset"]


class TFRecordDataset(Dataset):
    """The records of one or more TFRecord files, as scalar ``tf.string`` elements.

    Parameters
    ----------
    filenames : str, list of str, string Tensor, or Dataset of scalar strings
        The files, read one after the other.
    compression_type : {None, '', 'GZIP', 'ZLIB'}
        How the files are compressed.
    buffer_size : int, optional
        Read buffer size in bytes (accepted; files are read whole).
    num_parallel_reads : int, optional
        How many files give records in turn (one record each), as TensorFlow's reader
        interleaves them; None reads the files one after the other.
    name : str, optional
        Accepted for TensorFlow compatibility.

    Example
    -------
    >>> import flowgraph as tf
    >>> import flowgraph.data
    >>> tf.data.TFRecordDataset(["a.tfrecord", "b.tfrecord"], "GZIP").output_types
    tf.string
    """

    def __init__(self, filenames, compression_type=None, buffer_size=None,
                 num_parallel_reads=None, name=None) -> None:
        del buffer_size, name
        self._filenames = _string_source(filenames, "TFRecordDataset")
        self._parallel = parallel_reads(num_parallel_reads, "TFRecordDataset")
        ctype = compression_type
        self._compression_tensor = None
        if isinstance(ctype, Tensor):
            from flowgraph.framework.constant_op import constant_value

            value = constant_value(ctype)
            if value is None:  # fed (a placeholder): read when the iterator starts
                self._compression_tensor = ctype
            ctype = None if value is None else value.item()
        self._compression = compression_name(ctype, "TFRecordDataset")
        self._structure = _STRING_SCALAR

    def _inputs(self):
        return _source_inputs(self._filenames)

    def _tensors(self):
        extra = [] if self._compression_tensor is None else [self._compression_tensor]
        return _source_tensors(self._filenames) + extra

    def _iter(self, rc):
        compression = self._compression
        if self._compression_tensor is not None:
            value = np.asarray(rc.resolve(self._compression_tensor)).item()
            try:
                compression = compression_name(value, "TFRecordDataset")
            except ValueError as e:
                raise errors.InvalidArgumentError(None, None, str(e)) from None
        yield from interleave_files(_names(self._filenames, rc, "TFRecordDataset"),
                                    lambda name: self._records(name, compression),
                                    self._parallel)

    def _records(self, name: str, compression: str):
        data = read_file_bytes(name, compression, "TFRecordDataset")
        for record in iter_records(data, name, "TFRecordDataset"):
            yield (_string_scalar(record),)
