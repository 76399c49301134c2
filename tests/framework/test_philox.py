"""The C Philox-4x32-10 rounds (`flowgraph.framework._philox`) against a NumPy reference
of the same rounds, including the 128-bit counter's wrap-around."""

import numpy as np
import pytest

from flowgraph.framework.philox import WordStream, philox_blocks


def _reference(key, counter, offsets):
    m0, m1, u32, sh = (np.uint64(0xD2511F53), np.uint64(0xCD9E8D57),
                       np.uint64(0xFFFFFFFF), np.uint64(32))
    start = np.uint64(counter[0] | (counter[1] << 32))
    with np.errstate(over="ignore"):
        lo = start + offsets
        hi = np.uint64(counter[2] | (counter[3] << 32)) + (lo < start).astype(np.uint64)
    c = [lo & u32, lo >> sh, hi & u32, hi >> sh]
    k0, k1 = key
    for _ in range(10):
        p0, p1 = m0 * c[0], m1 * c[2]
        c = [(p1 >> sh) ^ c[1] ^ np.uint64(k0), p1 & u32,
             (p0 >> sh) ^ c[3] ^ np.uint64(k1), p0 & u32]
        k0, k1 = (k0 + 0x9E3779B9) & 0xFFFFFFFF, (k1 + 0xBB67AE85) & 0xFFFFFFFF
    return np.stack(c, axis=1).astype(np.uint32)


@pytest.mark.parametrize("key, counter", [((1, 2), (0, 0, 3, 4)),
                                          ((0xFFFFFFFF, 7), (0xFFFFFFF0, 0xFFFFFFFF, 5, 6)),
                                          ((0, 0), (0, 0, 0, 0))])
def test_blocks_equal_the_numpy_reference(key, counter):
    offsets = np.array([0, 1, 2, 17, 255, 1 << 40], np.uint64)
    np.testing.assert_array_equal(philox_blocks(key, counter, 0, offsets),
                                  _reference(key, counter, offsets))
    np.testing.assert_array_equal(philox_blocks(key, counter, 300),
                                  _reference(key, counter, np.arange(300, dtype=np.uint64)))


def test_the_word_stream_reads_blocks_in_order_across_chunks():
    stream = WordStream(3, 9)
    words = [stream.next() for _ in range(4 * 300)]
    expected = _reference((3, 0), (0, 0, 9, 0), np.arange(300, dtype=np.uint64))
    assert words == expected.reshape(-1).tolist()
