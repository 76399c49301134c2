"""CSV and Example-file readers of `tf.data.experimental`: ``CsvDataset``,
``make_csv_dataset`` (column names from the header, column types inferred from the first
rows as TensorFlow infers them) and ``make_batched_features_dataset``.

``make_csv_dataset`` is TF's pipeline: the files (shuffled when ``shuffle``), read one
after the other, each a ``CsvDataset``; shuffle and repeat (``num_epochs``); batch
(dropping the last partial batch when it repeats forever); then each batch becomes an
``OrderedDict`` of columns (and the label, popped from it)::

    files ─interleave(CsvDataset)─> shuffle_and_repeat ─> batch ─> map(OrderedDict, label)

Example
-------
>>> import os, tempfile
>>> import flowgraph as tf
>>> import flowgraph.data
>>> path = os.path.join(tempfile.mkdtemp(), "d.csv")
>>> _ = open(path, "w").write("a,b\\n1,x\\n2,y\\n")
>>> ds = tf.data.experimental.make_csv_dataset(path, 2, shuffle=False, num_epochs=1)
>>> ds.output_types
OrderedDict([('a', tf.int32), ('b', tf.string)])
"""

from __future__ import annotations

import collections
import csv
import glob
import gzip
import os
import zlib

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant, convert_to_tensor
from flowgraph.framework.operation import Tensor

from .dataset import Dataset
from .dataset_ops_sources import TextLineDataset
from .dataset_ops_stateful import IgnoreErrorsDataset
from .dataset_ops_tfrecord import TFRecordDataset

__all__ = ["CsvDataset", "make_batched_features_dataset", "make_csv_dataset"]

_CSV_TYPES = (_dtypes.float32, _dtypes.float64, _dtypes.int32, _dtypes.int64,
              _dtypes.string)


def _record_default(d):
    """A record default: a dtype (a required column) or a value/tensor of one element."""
    if isinstance(d, _dtypes.DType) or (isinstance(d, type) and issubclass(d, np.generic)):
        dtype = _dtypes.as_dtype(d).base_dtype
        if dtype not in _CSV_TYPES:
            raise TypeError(f"CsvDataset: record_defaults dtypes must be float32, float64, "
                            f"int32, int64 or string, got {dtype.name}")
        return constant([], dtype=dtype)
    return d if isinstance(d, Tensor) else convert_to_tensor(d)


def CsvDataset(filenames, record_defaults, compression_type=None, buffer_size=None,
               header=False, field_delim=",", use_quote_delim=True, na_value="",
               select_cols=None, exclude_cols=None):
    """The records of CSV files as tuples of scalars, one per (selected) column.

    `record_defaults` gives each column's type and the value of an empty field: a
    one-element value or tensor, or a dtype (the column is then required). With `header`
    each file's first line is skipped. `exclude_cols` keeps the columns not listed
    (the total column count is that of `record_defaults` plus the excluded ones).

    Example
    -------
    >>> import flowgraph as tf
    >>> import flowgraph.data
    >>> tf.data.experimental.CsvDataset("a.csv", [tf.int32, ["?"]], header=True).output_types
    (tf.int32, tf.string)
    """
    from flowgraph.ops.parsing_ops import decode_csv

    if select_cols is not None and exclude_cols is not None:
        raise ValueError("CsvDataset: select_cols and exclude_cols are mutually exclusive")
    defaults = [_record_default(d) for d in record_defaults]
    cols = None if select_cols is None else sorted(int(c) for c in select_cols)
    if exclude_cols is not None:
        excluded = {int(c) for c in exclude_cols}
        total = len(defaults) + len(excluded)
        cols = [c for c in range(total) if c not in excluded]
    names = filenames if isinstance(filenames, Tensor) else convert_to_tensor(
        [os.fsdecode(f) for f in filenames] if isinstance(filenames, list | tuple)
        else filenames, dtype=_dtypes.string)
    if names.shape.ndims not in (0, 1):
        raise ValueError(f"CsvDataset: `filenames` must be a scalar or a vector of strings, "
                         f"got shape {names.shape}")
    names = Dataset.from_tensors(names) if names.shape.ndims == 0 else \
        Dataset.from_tensor_slices(names)

    def lines(name):
        ds = TextLineDataset(name, compression_type, buffer_size)
        return ds.skip(1) if header else ds

    def parse(line):
        return tuple(decode_csv(line, defaults, field_delim, use_quote_delim,
                                na_value=na_value, select_cols=cols))

    return names.flat_map(lines).map(parse)


# -- make_csv_dataset ------------------------------------------------------------------------
_INFER_ORDER = (_dtypes.int32, _dtypes.int64, _dtypes.float32, _dtypes.float64,
                _dtypes.string)


def _parses_as(text: str, dtype) -> bool:
    try:
        if dtype.is_integer:
            v = int(text)
            info = np.iinfo(dtype.as_numpy_dtype)
            return info.min <= v <= info.max
        if dtype.is_floating:
            v = float(text)
            return dtype == _dtypes.float64 or not np.isfinite(v) or \
                abs(v) <= np.finfo(np.float32).max
    except ValueError:
        return False
    return True


def _infer_type(text: str, na_value: str, prev):
    """TF's rule: the first of int32, int64, float32, float64, string (not before `prev`)
    that the field parses as; an empty field tells nothing."""
    if text in ("", na_value):
        return prev
    start = 0 if prev is None else _INFER_ORDER.index(prev)
    for dtype in _INFER_ORDER[start:]:
        if dtype == _dtypes.string or _parses_as(text, dtype):
            return dtype
    return _dtypes.string


def _open_text(name: str, compression: str | None):
    if compression == "GZIP":
        return gzip.open(name, "rt", newline="")
    if compression == "ZLIB":
        with open(name, "rb") as f:
            text = zlib.decompress(f.read()).decode("utf-8")
        import io

        return io.StringIO(text, newline="")
    return open(name, newline="")


def _rows(names, field_delim, use_quote_delim, header, compression):
    for name in names:
        with _open_text(name, compression) as f:
            reader = csv.reader(f, delimiter=field_delim,
                                quoting=csv.QUOTE_MINIMAL if use_quote_delim else csv.QUOTE_NONE)
            for i, row in enumerate(reader):
                if header and i == 0:
                    continue
                yield row


def _file_names(file_pattern) -> list[str]:
    patterns = [file_pattern] if isinstance(file_pattern, str | bytes | os.PathLike) \
        else list(file_pattern)
    names = []
    for p in patterns:
        p = os.fsdecode(p)
        found = sorted(glob.glob(p))
        if not found:
            raise ValueError(f"No files match `file_pattern` {p}.")
        names.extend(found)
    return names


def make_csv_dataset(file_pattern, batch_size, column_names=None, column_defaults=None,
                     label_name=None, select_columns=None, field_delim=",",
                     use_quote_delim=True, na_value="", header=True, num_epochs=None,
                     shuffle=True, shuffle_buffer_size=10000, shuffle_seed=None,
                     prefetch_buffer_size=None, num_parallel_reads=None, sloppy=False,
                     num_rows_for_inference=100, compression_type=None,
                     ignore_errors=False):
    """Batches of CSV rows as ``(OrderedDict of columns, label)`` (or just the dict when
    `label_name` is None). See the module docstring for the pipeline.

    Column names come from the first file's header unless given; column types from
    `column_defaults`, else inferred from the first `num_rows_for_inference` rows (int32,
    int64, float32, float64, then string: the first every value fits), empty fields
    defaulting to 0 or "".

    Example
    -------
    >>> import flowgraph as tf
    >>> import flowgraph.data
    >>> callable(tf.data.experimental.make_csv_dataset)
    True
    """
    del sloppy
    names = _file_names(file_pattern)
    compression = (compression_type or "").upper() or None
    if column_names is None:
        if not header:
            raise ValueError("Expected `column_names` or `header` arguments. Neither was "
                             "provided.")
        first = next(_rows(names[:1], field_delim, use_quote_delim, False, compression), None)
        if first is None:
            raise ValueError(f"make_csv_dataset: the file {names[0]} is empty; pass "
                             "column_names")
        column_names = list(first)
    column_names = list(column_names)
    if len(set(column_names)) != len(column_names):
        raise ValueError("Expected `column_names` to be a list of unique column names. "
                         f"Received: {column_names}")
    select_idx = None
    if select_columns is not None:
        if all(isinstance(c, int) for c in select_columns):
            select_idx = sorted(select_columns)
        else:
            unknown = [c for c in select_columns if c not in column_names]
            if unknown:
                raise ValueError(f"Value(s) {unknown} in `select_columns` not in column "
                                 f"names {column_names}")
            select_idx = sorted(column_names.index(c) for c in select_columns)
        column_names = [column_names[i] for i in select_idx]
    if label_name is not None and label_name not in column_names:
        raise ValueError(f"`label_name` provided must be one of the columns: "
                         f"{column_names}. Received: {label_name}.")
    if column_defaults is None:
        n_all = max(select_idx) + 1 if select_idx else len(column_names)
        types = [None] * n_all
        rows = _rows(names, field_delim, use_quote_delim, header, compression)
        for k, row in enumerate(rows):
            if k >= num_rows_for_inference:
                break
            for i, text in enumerate(row[:n_all]):
                types[i] = _infer_type(text, na_value, types[i])
        if select_idx is not None:
            types = [types[i] for i in select_idx]
        types = [t or _dtypes.string for t in types]
        column_defaults = [constant(["" if t == _dtypes.string else 0], dtype=t)
                           for t in types]
    elif len(column_defaults) != len(column_names):
        raise ValueError(f"The lengths of `column_defaults` and `column_names` do not "
                         f"match: {len(column_defaults)} vs {len(column_names)}")
    files = Dataset.from_tensor_slices(names)
    if shuffle:
        files = files.shuffle(len(names), shuffle_seed)

    def reader(name):
        ds = CsvDataset(name, column_defaults, compression_type, None, header, field_delim,
                        use_quote_delim, na_value, select_idx)
        if ignore_errors:
            ds = IgnoreErrorsDataset(ds)
        return ds

    ds = files.interleave(reader, cycle_length=num_parallel_reads or 1)
    if num_epochs != 1 and shuffle:
        ds = ds.shuffle(shuffle_buffer_size, shuffle_seed).repeat(num_epochs)
    elif shuffle:
        ds = ds.shuffle(shuffle_buffer_size, shuffle_seed)
    elif num_epochs != 1:
        ds = ds.repeat(num_epochs)
    ds = ds.batch(batch_size, drop_remainder=num_epochs is None)
    keys = list(column_names)

    def to_features(*columns):
        features = collections.OrderedDict(zip(keys, columns))
        if label_name is None:
            return features
        label = features.pop(label_name)
        return features, label

    ds = ds.map(to_features)
    return ds.prefetch(prefetch_buffer_size if prefetch_buffer_size else 1)


def make_batched_features_dataset(file_pattern, batch_size, features,
                                  reader=TFRecordDataset, label_key=None, reader_args=None,
                                  num_epochs=None, shuffle=True, shuffle_buffer_size=10000,
                                  shuffle_seed=None, prefetch_buffer_size=None,
                                  reader_num_threads=None, parser_num_threads=None,
                                  sloppy_ordering=False, drop_final_batch=False):
    """Batches of ``Example`` records of the files matching `file_pattern`, parsed with
    `features` (a dict as for ``tf.io.parse_example``); with `label_key`, ``(features,
    label)``. The files are listed (shuffled when `shuffle`), read with `reader`, the
    records shuffled and repeated `num_epochs` times, batched, then parsed.

    Example
    -------
    >>> import flowgraph as tf
    >>> import flowgraph.data
    >>> callable(tf.data.experimental.make_batched_features_dataset)
    True
    """
    from flowgraph.ops.parsing_ops import parse_example

    del sloppy_ordering, parser_num_threads
    names = _file_names(file_pattern)
    files = Dataset.from_tensor_slices(names)
    if shuffle:
        files = files.shuffle(len(names), shuffle_seed)
    args = list(reader_args or [])
    ds = files.interleave(lambda name: reader(name, *args),
                          cycle_length=reader_num_threads or 1)
    if shuffle:
        ds = ds.shuffle(shuffle_buffer_size, shuffle_seed)
    if num_epochs != 1:
        ds = ds.repeat(num_epochs)
    ds = ds.batch(batch_size, drop_remainder=drop_final_batch)

    def parse(serialized):
        parsed = parse_example(serialized, features)
        if label_key is None:
            return parsed
        if label_key not in parsed:
            raise ValueError(f"The `label_key` provided ({label_key}) must be one of the "
                             f"`features` keys.")
        return parsed, parsed.pop(label_key)

    return ds.map(parse).prefetch(prefetch_buffer_size if prefetch_buffer_size else 1)
