"""The sorted-table file TensorFlow uses for a checkpoint's ``.index`` (LevelDB's layout).

A table is a run of blocks, then a 48-byte footer::

    data block | ... | metaindex block | index block | footer
    footer = varint handle of metaindex | varint handle of index | zero padding to 40
             bytes | magic 0xdb4775248b80fb57 (little-endian)

A handle is ``varint offset, varint size``. Each block is followed by a 5-byte trailer:
one compression byte (0: none) and the masked CRC32C of the block plus that byte. Inside
a block, entries share key prefixes with the previous entry::

    varint shared | varint unshared | varint value length | key suffix | value

and the block ends with the offsets of its restart points (uint32 each) and their count.
The index block maps a key at least as large as the last key of each data block to that
block's handle. Only uncompressed tables are read (TensorFlow writes checkpoint indexes
uncompressed); anything malformed raises ValueError, which callers turn into
DataLossError naming the file.

Example
-------
>>> data = write_table([(b"a", b"1"), (b"b", b"22")])
>>> read_table(data)
[(b'a', b'1'), (b'b', b'22')]
"""

from __future__ import annotations

import struct

from flowgraph.framework.checksum import masked_crc32c
from flowgraph.framework.event_format import read_varint, write_varint

__all__ = ["read_table", "write_table"]

MAGIC = 0xDB4775248B80FB57
_FOOTER = 48
_RESTART_INTERVAL = 16


# -- reading ---------------------------------------------------------------------------
def _handle(buf: bytes, pos: int) -> tuple[int, int, int]:
    offset, pos = read_varint(buf, pos)
    size, pos = read_varint(buf, pos)
    return offset, size, pos


def _block(data: bytes, offset: int, size: int) -> bytes:
    end = offset + size
    if offset < 0 or end + 5 > len(data):
        raise ValueError(f"block at offset {offset} (size {size}) runs past the end of "
                         f"the file ({len(data)} bytes)")
    contents, kind = data[offset:end], data[end]
    (stored,) = struct.unpack_from("<I", data, end + 1)
    if masked_crc32c(data[offset:end + 1]) != stored:
        raise ValueError(f"checksum mismatch in the block at offset {offset}")
    if kind != 0:
        raise ValueError(f"block at offset {offset} is compressed (type {kind}); only "
                         "uncompressed tables are supported")
    return contents


def _entries(block: bytes) -> list[tuple[bytes, bytes]]:
    if len(block) < 4:
        raise ValueError("block shorter than its restart count")
    (restarts,) = struct.unpack_from("<I", block, len(block) - 4)
    limit = len(block) - 4 - 4 * restarts
    if limit < 0:
        raise ValueError(f"block claims {restarts} restart points but holds "
                         f"{len(block)} bytes")
    out, pos, key = [], 0, b""
    while pos < limit:
        shared, pos = read_varint(block, pos)
        unshared, pos = read_varint(block, pos)
        vlen, pos = read_varint(block, pos)
        if shared > len(key) or pos + unshared + vlen > limit:
            raise ValueError(f"corrupt entry at byte {pos} of a block")
        key = key[:shared] + block[pos:pos + unshared]
        pos += unshared
        out.append((key, block[pos:pos + vlen]))
        pos += vlen
    return out


def read_table(data: bytes) -> list[tuple[bytes, bytes]]:
    """All ``(key, value)`` pairs of a table held in `data`, in key order.

    Raises ValueError when `data` is not a well-formed uncompressed table.
    """
    data = bytes(data)
    if len(data) < _FOOTER:
        raise ValueError(f"file of {len(data)} bytes is shorter than a table footer")
    footer = data[-_FOOTER:]
    (magic,) = struct.unpack_from("<Q", footer, 40)
    if magic != MAGIC:
        raise ValueError("bad magic number: this is not a TensorFlow table (.index) file")
    _, _, pos = _handle(footer, 0)
    index_offset, index_size, _ = _handle(footer, pos)
    out = []
    for _, handle in _entries(_block(data, index_offset, index_size)):
        offset, size, _ = _handle(handle, 0)
        out.extend(_entries(_block(data, offset, size)))
    return out


# -- writing ---------------------------------------------------------------------------
def _build_block(items: list[tuple[bytes, bytes]]) -> bytes:
    out, restarts, prev = bytearray(), [], b""
    for i, (key, value) in enumerate(items):
        shared = 0
        if i % _RESTART_INTERVAL == 0:
            restarts.append(len(out))
        else:
            limit = min(len(prev), len(key))
            while shared < limit and prev[shared] == key[shared]:
                shared += 1
        out += write_varint(shared) + write_varint(len(key) - shared) + write_varint(len(value))
        out += key[shared:] + value
        prev = key
    restarts = restarts or [0]
    out += b"".join(struct.pack("<I", r) for r in restarts) + struct.pack("<I", len(restarts))
    return bytes(out)


def _with_trailer(block: bytes) -> bytes:
    return block + b"\x00" + struct.pack("<I", masked_crc32c(block + b"\x00"))


def write_table(items) -> bytes:
    """The bytes of an uncompressed table of ``(key, value)`` pairs (sorted here).

    One data block holds every entry; TensorFlow's reader accepts any block size.
    """
    items = sorted((bytes(k), bytes(v)) for k, v in items)
    keys = [k for k, _ in items]
    if len(set(keys)) != len(keys):
        raise ValueError("duplicate keys in a table")
    data = _build_block(items)
    out = bytearray(_with_trailer(data))
    meta_offset = len(out)
    meta = _build_block([])
    out += _with_trailer(meta)
    index_offset = len(out)
    last = keys[-1] if keys else b""
    index = _build_block([(last, write_varint(0) + write_varint(len(data)))])
    out += _with_trailer(index)
    footer = (write_varint(meta_offset) + write_varint(len(meta)) + write_varint(index_offset)
              + write_varint(len(index)))
    out += footer.ljust(40, b"\x00") + struct.pack("<Q", MAGIC)
    return bytes(out)
