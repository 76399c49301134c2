# cython: language_level=3, boundscheck=False, wraparound=False
"""Philox-4x32-10 blocks in C (`flowgraph.framework.philox.philox_blocks` calls it): the
NumPy form of the same rounds took ~75 ns a block, which made every dropout mask of a
training step several times slower than NumPy's own generator."""

from libc.stdint cimport uint32_t, uint64_t


def fill_blocks(uint32_t[:, ::1] out, uint64_t key0, uint64_t key1, uint64_t lo,
                uint64_t hi, const uint64_t[::1] offsets):
    """Row i of `out`: the block of counter ``(hi << 64 | lo) + offsets[i]`` under the
    key ``(key0, key1)`` (the 128-bit counter wraps)."""
    cdef Py_ssize_t i, n = out.shape[0]
    cdef uint64_t clo, chi, p0, p1
    cdef uint32_t c0, c1, c2, c3, k0, k1, t0, t2
    cdef int _
    with nogil:
        for i in range(n):
            clo = lo + offsets[i]
            chi = hi + (1 if clo < lo else 0)
            c0 = <uint32_t>clo
            c1 = <uint32_t>(clo >> 32)
            c2 = <uint32_t>chi
            c3 = <uint32_t>(chi >> 32)
            k0 = <uint32_t>key0
            k1 = <uint32_t>key1
            for _ in range(10):
                p0 = <uint64_t>0xD2511F53 * c0
                p1 = <uint64_t>0xCD9E8D57 * c2
                t0 = <uint32_t>(p1 >> 32) ^ c1 ^ k0
                t2 = <uint32_t>(p0 >> 32) ^ c3 ^ k1
                c1 = <uint32_t>p1
                c3 = <uint32_t>p0
                c0 = t0
                c2 = t2
                k0 = k0 + <uint32_t>0x9E3779B9
                k1 = k1 + <uint32_t>0xBB67AE85
            out[i, 0] = c0
            out[i, 1] = c1
            out[i, 2] = c2
            out[i, 3] = c3
