"""CRC-32C (Castagnoli), the checksum of every TensorFlow file flowgraph reads or writes:
event files and TFRecords (`flowgraph.framework.event_format`, `flowgraph.io.tf_record`)
and checkpoint bundles (`tf_formats.bundle`, `tf_formats.table`). This module is the one
place that computes it.

Three implementations, picked per call:

    implementation   speed       used for
    ---------------  ----------  ------------------------------------------------------
    native library   GB/s        everything, when ``google-crc32c`` (the ``crc`` extra)
                                 or ``crc32c`` is installed with its C code
    NumPy lanes      ~100 MB/s   buffers of 64 KiB and more, without a library
    Python table     ~10 MB/s    small buffers, without a library

`crc32c_backend` names the one in use. `crc32c_python` and `crc32c_numpy` stay callable
whatever is installed, so that tests compare them with the library.

The NumPy version uses that a CRC is linear over GF(2): a long buffer is cut into K equal
chunks whose CRCs are computed side by side (one vectorized table step per byte
position, K lanes at once) and then folded: ``raw(A + B) = shift(raw(A), len(B)) ^
raw(B)``, where ``shift(c, n)`` runs the register over n zero bytes. The shift over one
chunk length is the same linear map for every chunk, so it is tabulated once (four
256-entry tables, one per byte of the register). The initial register value is folded
into the first chunk; the final inversion is applied at the end.

Example
-------
>>> data = bytes(range(256)) * 1000
>>> crc32c(data) == crc32c_python(data) == crc32c_numpy(data)
True
>>> hex(masked_crc32c(b""))
'0xa282ead8'
"""

from __future__ import annotations

import numpy as np

__all__ = ["crc32c", "crc32c_backend", "crc32c_numpy", "crc32c_python", "masked_crc32c"]


def _make_table() -> list[int]:
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC_TABLE = _make_table()
_TABLE = np.array(_CRC_TABLE, dtype=np.uint32)
_LANES = 1 << 14
_SMALL = 1 << 16


def _run(c: int, data) -> int:
    table = _CRC_TABLE
    for b in data:
        c = table[(c ^ b) & 0xFF] ^ (c >> 8)
    return c


def crc32c_python(data) -> int:
    """CRC-32C of `data` (bytes-like), one table step per byte in Python.

    >>> hex(crc32c_python(b"123456789"))
    '0xe3069283'
    """
    return _run(0xFFFFFFFF, memoryview(data).cast("B")) ^ 0xFFFFFFFF


def _shift_tables(nbytes: int) -> list[list[int]]:
    # Image of each register bit after `nbytes` zero bytes, then per-byte lookup tables.
    basis = []
    for bit in range(32):
        c = 1 << bit
        for _ in range(nbytes):
            c = _CRC_TABLE[c & 0xFF] ^ (c >> 8)
        basis.append(c)
    tables = []
    for k in range(4):
        t = [0] * 256
        for v in range(1, 256):
            low = v & -v
            t[v] = t[v ^ low] ^ basis[8 * k + low.bit_length() - 1]
        tables.append(t)
    return tables


def crc32c_numpy(data) -> int:
    """CRC-32C of `data` (bytes-like) in NumPy lanes; under 64 KiB, `crc32c_python`.

    >>> hex(crc32c_numpy(b"123456789" * 10000))
    '0x7ad252a6'
    """
    buf = np.frombuffer(memoryview(data).cast("B"), dtype=np.uint8)
    n = buf.size
    if n < _SMALL:
        return crc32c_python(buf)
    length = n // _LANES
    lanes = np.ascontiguousarray(buf[:_LANES * length].reshape(_LANES, length).T)
    c = np.zeros(_LANES, dtype=np.uint32)
    c[0] = 0xFFFFFFFF  # the initial register, carried by the first chunk
    for row in lanes:
        c = _TABLE[(c ^ row) & 0xFF] ^ (c >> 8)
    t0, t1, t2, t3 = _shift_tables(length)
    total = 0
    for x in c.tolist():
        total = (t0[total & 0xFF] ^ t1[(total >> 8) & 0xFF] ^ t2[(total >> 16) & 0xFF]
                 ^ t3[total >> 24] ^ x)
    total = _run(total, buf[_LANES * length:].tobytes())
    return total ^ 0xFFFFFFFF


def _native():
    """(function, name) of an installed CRC-32C library with compiled code, or None.

    google-crc32c first (Apache-2.0, the ``crc`` extra); its pure-Python fallback (when
    its C extension is missing) is slower than `crc32c_numpy`, so it is not used."""
    try:
        import google_crc32c
    except ImportError:
        pass
    else:
        if getattr(google_crc32c, "implementation", "c") == "c":
            return google_crc32c.value, "google-crc32c"
    try:
        import crc32c as library  # the `crc32c` package (LGPL), when the user has it
    except ImportError:
        return None
    return library.crc32c, "crc32c"


_NATIVE = _native()


def crc32c_backend() -> str:
    """Which implementation `crc32c` uses: ``"google-crc32c"``, ``"crc32c"`` (native
    libraries) or ``"pure-python"`` (NumPy lanes for large buffers, Python for small ones).

    >>> crc32c_backend() in ("google-crc32c", "crc32c", "pure-python")
    True
    """
    return _NATIVE[1] if _NATIVE is not None else "pure-python"


if _NATIVE is not None:
    _native_fn = _NATIVE[0]

    def crc32c(data) -> int:
        """CRC-32C (Castagnoli) of `data` (bytes-like).

        >>> hex(crc32c(b"123456789"))
        '0xe3069283'
        """
        if type(data) is not bytes:
            data = memoryview(data).cast("B").tobytes()
        return _native_fn(data) & 0xFFFFFFFF
else:
    def crc32c(data) -> int:
        """CRC-32C (Castagnoli) of `data` (bytes-like).

        >>> hex(crc32c(b"123456789"))
        '0xe3069283'
        """
        return crc32c_numpy(data)


def masked_crc32c(data) -> int:
    """The CRC as TensorFlow's record, event and checkpoint files store it: rotated right
    by 15 bits, plus 0xa282ead8 (mod 2**32).

    >>> hex(masked_crc32c(b"123456789"))
    '0xc78ab0e5'
    """
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF
