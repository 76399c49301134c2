"""A PNG encoder (8-bit grayscale, gray+alpha, RGB, RGBA) for image summaries and
``tf.image.encode_png``, writing the bytes TensorFlow's libpng writer does.

TensorFlow encodes with libpng's defaults, and so does this module:

- each row gets the filter (None, Sub, Up, Average, Paeth) whose filtered bytes have the
  smallest sum of ``min(v, 256 - v)``, the first one on a tie; a one-row image uses only
  None and Sub, a one-pixel-wide image only None and Up (the row above starts as zeros);
- zlib at the given level with the ``Z_FILTERED`` strategy, the header's window size
  (CINFO) lowered to the smallest that covers the filtered data (at most 16 KiB);
- the zlib stream cut into IDAT chunks of 8192 bytes.

An image of incompressible noise over 8 KiB may still differ in its stored-block sizes
(libpng feeds zlib row by row into an 8 KiB buffer); its pixels are the same.

Example
-------
>>> import numpy as np
>>> encode_png(np.zeros((2, 3, 1), np.uint8))[:8]
b'\\x89PNG\\r\\n\\x1a\\n'
"""

from __future__ import annotations

import struct
import zlib

import numpy as np

__all__ = ["encode_png"]
_PNG_COLOR_TYPE = {1: 0, 2: 4, 3: 2, 4: 6}
_IDAT_CHUNK = 8192  # libpng's zlib output buffer: one IDAT chunk each


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return (struct.pack(">I", len(data)) + kind + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))


def _filtered_rows(image: np.ndarray) -> np.ndarray:
    """The (height, 1 + row bytes) filtered scanlines, each led by its filter type."""
    height, width, channels = image.shape
    cur = image.reshape(height, width * channels).astype(np.int16)
    up = np.zeros_like(cur)
    up[1:] = cur[:-1]
    left = np.zeros_like(cur)
    left[:, channels:] = cur[:, :-channels]
    up_left = np.zeros_like(cur)
    up_left[:, channels:] = up[:, :-channels]
    p = left + up - up_left
    pa, pb, pc = np.abs(p - left), np.abs(p - up), np.abs(p - up_left)
    paeth = np.where((pa <= pb) & (pa <= pc), left, np.where(pb <= pc, up, up_left))
    candidates = np.stack([cur, cur - left, cur - up, cur - (left + up) // 2,
                           cur - paeth]).astype(np.uint8)  # filter types 0..4, mod 256
    allowed = np.ones(5, bool)
    if height == 1:
        allowed[[2, 3, 4]] = False
    if width == 1:
        allowed[[1, 3, 4]] = False
    cost = np.minimum(candidates, 256 - candidates.astype(np.int32)).sum(axis=2)
    cost[~allowed] = np.iinfo(cost.dtype).max
    best = np.argmin(cost, axis=0)  # the first of equal sums, as libpng
    rows = np.empty((height, 1 + width * channels), np.uint8)
    rows[:, 0] = best
    rows[:, 1:] = candidates[best, np.arange(height)]
    return rows


def _smallest_window(stream: bytearray, size: int) -> None:
    """Lower the zlib header's window size to the smallest covering `size` bytes."""
    if size > 16384 or stream[0] & 0x0F != 8:
        return
    cinfo = stream[0] >> 4
    while cinfo > 0 and size <= 1 << (cinfo + 7):
        cinfo -= 1
    stream[0] = (cinfo << 4) | 8
    flags = stream[1] & 0xE0
    stream[1] = flags + 0x1F - ((stream[0] << 8) + flags) % 0x1F


def encode_png(image: np.ndarray, compression: int = 6) -> bytes:
    """PNG bytes of a uint8 array of shape (height, width, channels), channels 1 to 4.

    >>> encode_png(np.zeros((2, 3, 1), np.uint8))[:8]
    b'\\x89PNG\\r\\n\\x1a\\n'
    """
    image = np.asarray(image)
    if image.ndim == 2:
        image = image[:, :, None]
    if image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] not in _PNG_COLOR_TYPE:
        raise ValueError(
            f"encode_png expects uint8 (height, width, 1|2|3|4); got {image.dtype} "
            f"{image.shape}"
        )
    height, width, channels = image.shape
    raw = _filtered_rows(image).tobytes() if height and width else b""
    # libpng deflates filtered rows with Z_FILTERED; a 1x1 image is only ever "None".
    strategy = zlib.Z_DEFAULT_STRATEGY if height == width == 1 else zlib.Z_FILTERED
    deflate = zlib.compressobj(compression, zlib.DEFLATED, 15, 8, strategy)
    stream = bytearray(deflate.compress(raw) + deflate.flush())
    _smallest_window(stream, len(raw))
    header = struct.pack(">IIBBBBB", width, height, 8, _PNG_COLOR_TYPE[channels], 0, 0, 0)
    idat = b"".join(_png_chunk(b"IDAT", bytes(stream[i:i + _IDAT_CHUNK]))
                    for i in range(0, len(stream), _IDAT_CHUNK))
    return (b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", header) + idat
            + _png_chunk(b"IEND", b""))
