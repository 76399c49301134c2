"""`tf.data.FixedLengthRecordDataset`: the fixed-size records of binary files (CIFAR-10's
format, for one), each a scalar string of `record_bytes` bytes.

Each file is an optional header, a body of whole records and an optional footer; a body
that is not a whole number of records is an InvalidArgumentError naming the file.

Example
-------
>>> import os, tempfile
>>> import flowgraph as tf
>>> import flowgraph.data
>>> path = os.path.join(tempfile.mkdtemp(), "d.bin")
>>> with open(path, "wb") as f:
...     _ = f.write(b"HDRaabbcc")
>>> ds = tf.data.FixedLengthRecordDataset(path, record_bytes=2, header_bytes=3)
>>> it = tf.data.make_one_shot_iterator(ds.batch(3))
>>> with tf.Session() as sess:
...     print(sess.run(it.get_next()))
[b'aa' b'bb' b'cc']
"""

from __future__ import annotations

from flowgraph.framework import errors
from flowgraph.io.tf_record import compression_name, read_file_bytes

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

__all__ = ["FixedLengthRecordDataset"]


def _nonnegative(value, what: str, allow_zero: bool = True) -> int:
    n = 0 if value is None else int(value)
    if n < 0 or (n == 0 and not allow_zero):
        raise ValueError(f"FixedLengthRecordDataset: {what} must be "
                         f"{'non-negative' if allow_zero else 'positive'}, got {value}")
    return n


class FixedLengthRecordDataset(Dataset):
    """The records of `record_bytes` bytes each in one or more files.

    Parameters
    ----------
    filenames : str, list of str, string Tensor, or Dataset of scalar strings
        The files, read one after the other.
    record_bytes : int
        The size of each record.
    header_bytes, footer_bytes : int, optional
        Bytes to skip at the start and at the end of each file.
    buffer_size : int, optional
        Accepted for TensorFlow's signature; files are read whole.
    compression_type : {None, '', 'GZIP', 'ZLIB'}
        How the files are compressed.
    num_parallel_reads : int, optional
        How many files give records in turn (one record each), as TensorFlow's reader
        interleaves them; None reads the files one after the other.
    name : str, optional
        Accepted for TensorFlow compatibility.

    Example
    -------
    >>> import flowgraph as tf
    >>> import flowgraph.data
    >>> tf.data.FixedLengthRecordDataset(["a.bin"], record_bytes=3073).output_types
    tf.string
    """

    def __init__(self, filenames, record_bytes, header_bytes=None, footer_bytes=None,
                 buffer_size=None, compression_type=None, num_parallel_reads=None,
                 name=None) -> None:
        del buffer_size, name
        self._filenames = _string_source(filenames, "FixedLengthRecordDataset")
        self._parallel = parallel_reads(num_parallel_reads, "FixedLengthRecordDataset")
        self._record = _nonnegative(record_bytes, "record_bytes", allow_zero=False)
        self._header = _nonnegative(header_bytes, "header_bytes")
        self._footer = _nonnegative(footer_bytes, "footer_bytes")
        self._compression = compression_name(compression_type, "FixedLengthRecordDataset")
        self._structure = _STRING_SCALAR

    def _inputs(self):
        return _source_inputs(self._filenames)

    def _tensors(self):
        return _source_tensors(self._filenames)

    def _iter(self, rc):
        yield from interleave_files(_names(self._filenames, rc, "FixedLengthRecordDataset"),
                                    self._records, self._parallel)

    def _records(self, name: str):
        data = read_file_bytes(name, self._compression, "FixedLengthRecordDataset")
        body = len(data) - self._header - self._footer
        if body < 0 or body % self._record:
            raise errors.InvalidArgumentError(
                None, None,
                f"FixedLengthRecordDataset: excluding the header ({self._header} bytes) "
                f"and footer ({self._footer} bytes), file \"{name}\" has a body of "
                f"{body} bytes, which is not a whole number of {self._record}-byte "
                "records; check record_bytes, header_bytes and footer_bytes")
        for start in range(self._header, self._header + body, self._record):
            yield (_string_scalar(data[start:start + self._record]),)
