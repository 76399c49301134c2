"""TFRecord files (``tf.io.TFRecordWriter``, ``tf.python_io.tf_record_iterator``), in
TensorFlow's format, so that files written by either can be read by the other.

A file is a sequence of records, each framed as

    uint64 length (little-endian) | uint32 masked_crc32c(length) | data | uint32 masked_crc32c(data)

where ``masked_crc32c(x) = rotate_right(crc32c(x), 15) + 0xa282ead8`` (mod 2**32). With
``compression_type="GZIP"`` the whole framed stream is one gzip stream, with ``"ZLIB"``
one zlib stream (with its 2-byte header), as TensorFlow's compressed record writers do.

A record's declared length must fit in the file (`DataLossError` otherwise), and a
compressed file is inflated in bounded steps, to at most `MAX_DECOMPRESSED_BYTES`.

CRC32C comes from `flowgraph.framework.checksum`: the ``google-crc32c`` (extra
``crc``) or ``crc32c`` library when one is installed, else NumPy and pure Python (about
10 MB/s for small records; enough for test fixtures and small data sets).

Example
-------
>>> import os, tempfile
>>> import flowgraph as tf
>>> path = os.path.join(tempfile.mkdtemp(), "r.tfrecord")
>>> with tf.io.TFRecordWriter(path) as w:
...     w.write(b"first")
...     w.write(b"second")
>>> list(tf.io.tf_record_iterator(path))
[b'first', b'second']
"""

from __future__ import annotations

import gzip
import os
import struct
import zlib
from collections.abc import Iterator

from flowgraph.framework import checksum as _checksum
from flowgraph.framework import errors

__all__ = [
    "TFRecordCompressionType",
    "TFRecordOptions",
    "TFRecordWriter",
    "crc32c_backend",
    "tf_record_iterator",
]


def crc32c_backend() -> str:
    """Which CRC32C implementation TFRecord I/O uses: ``"google-crc32c"`` or ``"crc32c"``
    (native libraries), or ``"pure-python"`` (NumPy and Python); see
    `flowgraph.framework.checksum`.

    Example
    -------
    >>> crc32c_backend() in ("google-crc32c", "crc32c", "pure-python")
    True
    """
    return _checksum.crc32c_backend()


def masked_crc32c(data: bytes) -> int:
    """TFRecord's masked CRC32C of `data`.

    Example
    -------
    >>> hex(masked_crc32c(b""))
    '0xa282ead8'
    """
    return _checksum.masked_crc32c(data)


def encode_record(data: bytes) -> bytes:
    """One framed record: length, its masked CRC, the data, the data's masked CRC.

    Example
    -------
    >>> len(encode_record(b"abc"))
    19
    """
    header = struct.pack("<Q", len(data))
    return (header + struct.pack("<I", masked_crc32c(header)) + bytes(data)
            + struct.pack("<I", masked_crc32c(data)))


class TFRecordCompressionType:
    """The compression of a TFRecord file: ``NONE``, ``ZLIB`` or ``GZIP``.

    Example
    -------
    >>> TFRecordCompressionType.GZIP
    2
    """

    NONE = 0
    ZLIB = 1
    GZIP = 2


_NAMES = {TFRecordCompressionType.NONE: "", TFRecordCompressionType.ZLIB: "ZLIB",
          TFRecordCompressionType.GZIP: "GZIP"}


def compression_name(value, what: str = "TFRecord") -> str:
    """``""``, ``"ZLIB"`` or ``"GZIP"`` for an options object, a string, an enum or None.

    Example
    -------
    >>> compression_name(TFRecordOptions("GZIP")), compression_name(None)
    ('GZIP', '')
    """
    if isinstance(value, TFRecordOptions):
        value = value.compression_type
    if value is None:
        return ""
    if isinstance(value, bytes):
        value = value.decode("utf-8")
    if isinstance(value, int) and value in _NAMES:
        return _NAMES[value]
    if isinstance(value, str) and value.upper() in ("", "ZLIB", "GZIP"):
        return value.upper()
    raise ValueError(f"{what}: compression_type must be None, '', 'ZLIB', 'GZIP' or a "
                     f"TFRecordCompressionType, got {value!r}")


class TFRecordOptions:
    """Options of a TFRecord reader or writer; only the compression type and level change
    what flowgraph writes (the buffer and zlib tuning arguments are accepted and ignored).

    Example
    -------
    >>> TFRecordOptions.get_compression_type_string(TFRecordOptions("ZLIB"))
    'ZLIB'
    """

    def __init__(self, compression_type=None, flush_mode=None, input_buffer_size=None,
                 output_buffer_size=None, window_bits=None, compression_level=None,
                 compression_method=None, mem_level=None, compression_strategy=None) -> None:
        self.compression_type = compression_name(compression_type, "TFRecordOptions")
        self.flush_mode = flush_mode
        self.input_buffer_size = input_buffer_size
        self.output_buffer_size = output_buffer_size
        self.window_bits = window_bits
        self.compression_level = compression_level
        self.compression_method = compression_method
        self.mem_level = mem_level
        self.compression_strategy = compression_strategy

    @classmethod
    def get_compression_type_string(cls, options) -> str:
        """``""``, ``"ZLIB"`` or ``"GZIP"`` for `options` (an options object, a string or
        None)."""
        return compression_name(options)


class TFRecordWriter:
    """Writes records to a TFRecord file (``tf.io.TFRecordWriter``).

    Parameters
    ----------
    path : str
        The file to create (an existing file is overwritten).
    options : TFRecordOptions, str or None
        The compression (``"GZIP"``, ``"ZLIB"`` or none).

    Example
    -------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "z.tfrecord")
    >>> w = TFRecordWriter(path, options="ZLIB")
    >>> w.write(b"x" * 100)
    >>> w.close()
    >>> [len(r) for r in tf_record_iterator(path, options="ZLIB")]
    [100]
    """

    def __init__(self, path, options=None) -> None:
        self._path = os.fspath(path)
        self._compression = compression_name(options, "TFRecordWriter")
        level = getattr(options, "compression_level", None)
        level = -1 if level is None else int(level)
        try:
            raw = open(self._path, "wb")
        except OSError as e:
            raise errors.NotFoundError(None, None, f"TFRecordWriter: cannot create "
                                       f"{self._path}: {e.strerror}") from None
        if self._compression == "GZIP":
            self._file = gzip.GzipFile(fileobj=raw, mode="wb", mtime=0,
                                       compresslevel=9 if level < 0 else level)
            self._raw = raw
            self._zlib = None
        else:
            self._file = raw
            self._raw = None
            self._zlib = zlib.compressobj(level) if self._compression == "ZLIB" else None

    def write(self, record) -> None:
        """Append one record (bytes; a str is written UTF-8 encoded)."""
        if self._file is None:
            raise ValueError(f"TFRecordWriter for {self._path} is closed; create a new one")
        data = record.encode("utf-8") if isinstance(record, str) else bytes(record)
        framed = encode_record(data)
        self._file.write(self._zlib.compress(framed) if self._zlib else framed)

    def flush(self) -> None:
        """Push buffered records to the file."""
        if self._file is None:
            return
        if self._zlib is not None:
            self._file.write(self._zlib.flush(zlib.Z_SYNC_FLUSH))
        self._file.flush()

    def close(self) -> None:
        """Finish the file (writes the compressed stream's trailer); idempotent."""
        if self._file is None:
            return
        if self._zlib is not None:
            self._file.write(self._zlib.flush())
        self._file.close()
        if self._raw is not None:
            self._raw.close()
        self._file = None

    def __enter__(self) -> TFRecordWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


# Decompressed bytes one compressed TFRecord file may expand to (a gzip or zlib bomb
# stops here instead of exhausting memory); uncompressed files are bounded by their size.
MAX_DECOMPRESSED_BYTES = 1 << 32


def _inflate(data: bytes, compression: str, limit: int) -> bytes:
    """`data` decompressed, in bounded steps, refusing more than `limit` bytes."""
    out = bytearray()
    wbits = 16 + zlib.MAX_WBITS if compression == "GZIP" else zlib.MAX_WBITS
    rest = data
    while True:
        d = zlib.decompressobj(wbits)
        chunk = d.decompress(rest, 1 << 20)
        while True:
            out += chunk
            if len(out) > limit:
                raise ValueError(f"it expands to more than {limit} bytes "
                                 "(flowgraph.io.tf_record.MAX_DECOMPRESSED_BYTES)")
            if d.eof or not d.unconsumed_tail:
                break
            chunk = d.decompress(d.unconsumed_tail, 1 << 20)
        if not d.eof:
            raise EOFError("compressed stream ended before the end-of-stream marker")
        rest = d.unused_data
        if compression != "GZIP" or not rest.strip(b"\0"):
            return bytes(out)


def read_file_bytes(path: str, compression: str, what: str,
                    max_bytes: int | None = None) -> bytes:
    """The decompressed content of a TFRecord file, with TensorFlow's errors; a
    compressed file may expand to at most `max_bytes` (default `MAX_DECOMPRESSED_BYTES`)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise errors.NotFoundError(None, None, f"{path}; No such file or directory") from None
    except IsADirectoryError:
        raise errors.FailedPreconditionError(None, None, f"{path}; Is a directory") from None
    if compression not in ("GZIP", "ZLIB"):
        return data
    try:
        return _inflate(data, compression, MAX_DECOMPRESSED_BYTES if max_bytes is None
                        else max_bytes)
    except (OSError, zlib.error, EOFError, ValueError) as e:
        raise errors.DataLossError(None, None, f"{what}: {path} is not a valid "
                                   f"{compression} stream ({e}); check compression_type") \
            from None


def iter_records(data: bytes, path: str, what: str) -> Iterator[bytes]:
    """The records of a decompressed TFRecord stream; a torn or corrupt record raises
    `DataLossError` naming the file and offset."""
    pos, n = 0, len(data)
    while pos < n:
        if pos + 12 > n:
            raise errors.DataLossError(None, None, f"{what}: truncated record header in "
                                       f"{path} at offset {pos}")
        header = data[pos:pos + 8]
        (length,) = struct.unpack("<Q", header)
        (hcrc,) = struct.unpack("<I", data[pos + 8:pos + 12])
        if hcrc != masked_crc32c(header):
            raise errors.DataLossError(None, None, f"{what}: corrupted record at offset {pos} "
                                       f"of {path} (length CRC mismatch); is it a TFRecord "
                                       "file, and is compression_type right?")
        end = pos + 12 + length + 4
        if end > n:
            raise errors.DataLossError(None, None, f"{what}: truncated record at offset {pos} "
                                       f"of {path} ({length} bytes announced, "
                                       f"{max(n - pos - 16, 0)} present)")
        record = data[pos + 12:pos + 12 + length]
        (dcrc,) = struct.unpack("<I", data[end - 4:end])
        if dcrc != masked_crc32c(record):
            raise errors.DataLossError(None, None, f"{what}: corrupted record at offset {pos} "
                                       f"of {path} (data CRC mismatch)")
        yield record
        pos = end


def tf_record_iterator(path, options=None) -> Iterator[bytes]:
    """The records of a TFRecord file, as bytes (``tf.python_io.tf_record_iterator``).

    Parameters
    ----------
    path : str
        The file.
    options : TFRecordOptions, str or None
        Its compression.

    Raises
    ------
    NotFoundError
        The file does not exist.
    DataLossError
        A record is truncated or its CRC does not match.

    Example
    -------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "g.tfrecord.gz")
    >>> with TFRecordWriter(path, TFRecordOptions(TFRecordCompressionType.GZIP)) as w:
    ...     w.write(b"a")
    >>> list(tf_record_iterator(path, "GZIP"))
    [b'a']
    """
    path = os.fspath(path)
    compression = compression_name(options, "tf_record_iterator")
    data = read_file_bytes(path, compression, "tf_record_iterator")
    yield from iter_records(data, path, "tf_record_iterator")
