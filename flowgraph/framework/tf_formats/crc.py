"""The checkpoint formats' CRC-32C (`bundle`, `table`): `flowgraph.framework.checksum`,
which computes it for every file format (a native library when one is installed).

Example
-------
>>> hex(crc32c(b"123456789"))
'0xe3069283'
"""

from __future__ import annotations

from flowgraph.framework.checksum import crc32c, masked_crc32c

__all__ = ["crc32c", "masked_crc32c"]
