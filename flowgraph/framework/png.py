"""A minimal PNG encoder (8-bit grayscale, gray+alpha, RGB, RGBA) for image summaries.

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


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return (struct.pack(">I", len(data)) + kind + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))


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
    rows = np.zeros((height, 1 + width * channels), dtype=np.uint8)  # filter byte 0
    rows[:, 1:] = image.reshape(height, width * channels)
    header = struct.pack(">IIBBBBB", width, height, 8, _PNG_COLOR_TYPE[channels], 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", header)
            + _png_chunk(b"IDAT", zlib.compress(rows.tobytes(), compression))
            + _png_chunk(b"IEND", b""))
