"""Partitioned variables in TensorFlow's checkpoint format: slice keys and slice specs.

TensorFlow saves a partitioned variable ``w`` of shape ``[10, 3]`` (three parts along
axis 0) as ONE named entry plus one hidden entry per part::

    index key                                   BundleEntryProto
    "w"                                         dtype, shape [10, 3], slices: 3 extents
    "\\x00w\\x00\\x01" + dims + (start, length)*    dtype, shape [4, 3], offset, size, crc

The named entry holds no bytes, only the list of slices (``TensorSliceProto``: per axis
a start and a length, no length meaning the whole axis). Each part's key is the
"ordered code" of ``(0, name, number of axes, start_0, length_0, ...)``: a leading NUL
(so every part key sorts before the names and never decodes as one), the name with NUL
and 0xFF bytes escaped and ``\\x00\\x01`` after it, then the numbers, each in a
self-delimiting big-endian form whose first bits give its length (`_signed`). A whole
axis is written as start 0, length -1.

Readers list only the named entries (``tf.train.list_variables`` shows ``w [10, 3]``)
and assemble any region of a tensor (the whole, or one part of a differently partitioned
variable) from the saved slices that overlap it; a part's key is computed from the slice
list, never decoded. The slices need not cover the whole tensor: TensorFlow saves the
slot of each part of a partitioned variable as that part's slice of a full-shaped entry,
and a region is readable exactly when the saved slices tile it (`region_overlaps`).

Example
-------
>>> slice_key("w", [4, 0], [3, 3])
b'\\x00w\\x00\\x01\\x01\\x02\\x84\\x83\\x80\\x83'
>>> parse_slice(write_slice([4, 0], [3, -1]), [10, 3])
([4, 0], [3, 3], [3, -1])
>>> parse_slice_spec("10 3 4,3:-")
([10, 3], [4, 0], [3, 3])
"""

from __future__ import annotations

from flowgraph.framework.proto_codec import iter_fields, write_varint

__all__ = ["format_region", "parse_slice", "parse_slice_spec", "region_overlaps", "slice_key",
           "write_slice"]


def _unsigned(n: int) -> bytes:
    # ordered code of a non-negative number: its byte count, then its bytes big-endian
    raw = n.to_bytes((n.bit_length() + 7) // 8, "big") if n else b""
    return bytes([len(raw)]) + raw


def _escaped(name: str) -> bytes:
    escapes = {0: b"\x00\xff", 0xFF: b"\xff\x00"}
    raw = b"".join(escapes.get(c, bytes([c])) for c in name.encode("utf-8"))
    return raw + b"\x00\x01"


def _signed(n: int) -> bytes:
    """Ordered code of a signed 64-bit number: one byte holds -64..63; each further byte
    adds 7 bits of magnitude, the count marked by leading 1 bits (then 0) of the first."""
    x = ~n if n < 0 else n
    length = x.bit_length() // 7 + 1
    raw = bytearray(n.to_bytes(10, "big", signed=True)[10 - length:])
    header = (0xFFFF << (16 - length)) & 0xFFFF  # `length` one bits from the top
    raw[0] ^= header >> 8
    if length > 1:
        raw[1] ^= header & 0xFF
    return bytes(raw)


def slice_key(name: str, starts, lengths) -> bytes:
    """The index key of the part of tensor `name` at `starts` with `lengths` (-1: the
    whole axis)."""
    out = bytearray(b"\x00") + _escaped(name) + _unsigned(len(starts))
    for start, length in zip(starts, lengths):
        out += _signed(int(start)) + _signed(int(length))
    return bytes(out)


def write_slice(starts, lengths) -> bytes:
    """A serialized ``TensorSliceProto``: one extent per axis (start left out when 0,
    as protobuf does; length -1 left out, meaning the whole axis)."""
    out = bytearray()
    for start, length in zip(starts, lengths):
        extent = (b"\x08" + write_varint(int(start)) if start else b"")
        if length >= 0:
            extent += b"\x10" + write_varint(int(length))
        out += b"\x0a" + write_varint(len(extent)) + extent
    return bytes(out)


def parse_slice(raw: bytes, shape) -> tuple[list[int], list[int], list[int]]:
    """``(starts, lengths, key_lengths)`` of a serialized ``TensorSliceProto`` within
    `shape`: a whole axis has its full length in `lengths` and -1 in `key_lengths` (as
    the part's key spells it). Raises ValueError for a slice that does not fit."""
    starts, lengths, key_lengths = [], [], []
    for number, wire, value in iter_fields(raw):
        if number != 1 or wire != 2:
            continue
        start, length = 0, -1
        for n, w, v in iter_fields(value):
            if n == 1 and w == 0:
                start = v
            elif n == 2 and w == 0:
                length = v
        starts.append(start)
        key_lengths.append(length)
    if len(starts) != len(shape):
        raise ValueError(f"a slice of {len(starts)} axes for a tensor of shape {list(shape)}")
    for axis, dim in enumerate(shape):
        length = key_lengths[axis]
        if length == -1 and starts[axis] != 0:
            raise ValueError(f"a whole-axis extent starting at {starts[axis]}")
        lengths.append(dim if length == -1 else length)
        if starts[axis] < 0 or lengths[axis] < 0 or starts[axis] + lengths[axis] > dim:
            raise ValueError(f"extent {starts[axis]}+{lengths[axis]} of axis {axis} does "
                             f"not fit shape {list(shape)}")
    return starts, lengths, key_lengths


def parse_slice_spec(spec: str) -> tuple[list[int], list[int], list[int]]:
    """``(full_shape, starts, lengths)`` of TensorFlow's slice spec string, the form a
    saver's ``shape_and_slices`` uses: the full shape's dimensions, then one
    ``start,length`` extent per axis joined by ``:`` (``-`` is the whole axis), e.g.
    ``"200 3 67,67:0,3"``. Raises ValueError for a spec that does not parse or whose
    extents do not fit the full shape.

    Example
    -------
    >>> parse_slice_spec("200 3 67,67:0,3")
    ([200, 3], [67, 0], [67, 3])
    """
    dims, _, extents = spec.strip().rpartition(" ")
    try:
        full = [int(d) for d in dims.split()]
        starts, lengths = [], []
        for axis, extent in enumerate(extents.split(":")):
            if extent == "-":
                starts.append(0)
                lengths.append(full[axis])
                continue
            start, sep, length = extent.partition(",")
            if not sep:
                raise ValueError(f"extent {extent!r} is neither 'start,length' nor '-'")
            starts.append(int(start))
            lengths.append(int(length))
    except (ValueError, IndexError) as e:
        raise ValueError(f"slice spec {spec!r} does not parse: {e}") from None
    if not full or len(starts) != len(full):
        raise ValueError(f"slice spec {spec!r}: {len(starts)} extents for a full shape of "
                         f"{len(full)} axes")
    for axis, (dim, start, length) in enumerate(zip(full, starts, lengths)):
        if dim < 0 or start < 0 or length < 0 or start + length > dim:
            raise ValueError(f"slice spec {spec!r}: extent {start},{length} of axis {axis} "
                             f"does not fit the full shape {full}")
    return full, starts, lengths


def format_region(starts, lengths) -> str:
    """A region in TensorFlow's slice spec form: ``start,length`` per axis, ``:``-joined
    (``-`` for a scalar's empty list).

    Example
    -------
    >>> format_region([2, 0], [2, 1])
    '2,2:0,1'
    """
    return ":".join(f"{s},{n}" for s, n in zip(starts, lengths)) or "-"


def _volume(lengths) -> int:
    out = 1
    for n in lengths:
        out *= int(n)
    return out


def _intersect(starts_a, lengths_a, starts_b, lengths_b):
    starts, lengths = [], []
    for a, n, b, m in zip(starts_a, lengths_a, starts_b, lengths_b):
        lo, hi = max(a, b), min(a + n, b + m)
        if hi <= lo:
            return None
        starts.append(lo)
        lengths.append(hi - lo)
    return starts, lengths


def region_overlaps(starts, lengths, slices) -> tuple[list, str | None]:
    """Which of the saved `slices` (``[(starts, lengths)]``, already checked to fit the
    tensor) a region needs: ``([(index, overlap starts, overlap lengths)], problem)``.
    `problem` is None when the overlaps tile the region exactly once, else says why not
    ("overlap" when two saved slices share elements, "short" when some are not saved).
    Nothing is allocated: only the extents are compared.

    Example
    -------
    >>> region_overlaps([2, 0], [2, 1], [([0, 0], [2, 1]), ([2, 0], [2, 1])])
    ([(1, [2, 0], [2, 1])], None)
    >>> region_overlaps([0, 0], [4, 1], [([0, 0], [2, 1])])[1]
    'short'
    """
    needed = []
    for index, (s, n) in enumerate(slices):
        box = _intersect(starts, lengths, s, n) if _volume(lengths) else None
        if box is not None:
            needed.append((index, *box))
    for i, (_, s, n) in enumerate(needed):
        if any(_intersect(s, n, t, m) is not None for _, t, m in needed[i + 1:]):
            return needed, "overlap"
    covered = sum(_volume(n) for _, _, n in needed)
    return needed, None if covered == _volume(lengths) else "short"
