# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Philox-4x32-10 blocks in C (`flowgraph.framework.philox.philox_blocks` calls it): the
NumPy form of the same rounds took ~75 ns a block, which made every dropout mask of a
training step several times slower than NumPy's own generator.

`gamma_samples` is TensorFlow's gamma sampler (Marsaglia and Tsang's transformation-
rejection) on its stream layout: output ``i`` (alpha-major) reads its own run of blocks
from ``256 * i`` on, taking a block of normals or of uniforms whenever the last one is
used up, each block's values from the last to the first (alpha 1 is one exponential
draw from the first block); all in float64 with C's
``log``, ``sin``, ``cos``, ``pow``, as TensorFlow 2.15 computes it for every dtype.
`poisson_samples` is its Poisson sampler on the same layout (Knuth's product of
uniforms below rate 10, Hormann's transformed rejection from 10 on), and
`binomial_samples` its binomial sampler (inversion below a mean of 10, Hormann's BTRS
from 10 on)."""

from libc.stdint cimport uint32_t, uint64_t
from libc.string cimport memcpy

cdef extern from "<math.h>" nogil:
    double log(double)
    double exp(double)
    double floor(double)
    double fabs(double)
    double lgamma(double)
    double ceil(double)
    double log1p(double)
    const double NAN
    float log1pf(float)
    float expm1f(float)
    float powf(float, float)
    double sqrt(double)
    double pow(double, double)
    double sin(double)
    double cos(double)

cdef double _TWO_PI = 6.283185307179586  # 2 * M_PI


cdef inline void _block(uint64_t key0, uint64_t key1, uint64_t lo, uint64_t hi,
                        uint64_t offset, uint32_t* out) noexcept nogil:
    """The block of counter ``(hi << 64 | lo) + offset`` under the key (wrapping)."""
    cdef uint64_t clo = lo + offset
    cdef uint64_t chi = hi + (1 if clo < lo else 0)
    cdef uint64_t p0, p1
    cdef uint32_t c0 = <uint32_t>clo, c1 = <uint32_t>(clo >> 32)
    cdef uint32_t c2 = <uint32_t>chi, c3 = <uint32_t>(chi >> 32)
    cdef uint32_t k0 = <uint32_t>key0, k1 = <uint32_t>key1, t0, t2
    cdef int _
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
    out[0] = c0
    out[1] = c1
    out[2] = c2
    out[3] = c3


def fill_blocks(uint32_t[:, ::1] out, uint64_t key0, uint64_t key1, uint64_t lo,
                uint64_t hi, const uint64_t[::1] offsets):
    """Row i of `out`: the block of counter ``(hi << 64 | lo) + offsets[i]`` under the
    key ``(key0, key1)`` (the 128-bit counter wraps)."""
    cdef Py_ssize_t i, n = out.shape[0]
    with nogil:
        for i in range(n):
            _block(key0, key1, lo, hi, offsets[i], &out[i, 0])


cdef inline double _double(uint32_t hi, uint32_t lo) noexcept nogil:
    cdef uint64_t bits = ((<uint64_t>(hi & 0xFFFFF)) << 32) | lo | <uint64_t>0x3FF0000000000000ULL
    cdef double f
    memcpy(&f, &bits, 8)
    return f - 1.0


def gamma_samples(double[::1] out, const double[::1] alphas, Py_ssize_t num_samples,
                  uint64_t key0, uint64_t key1, uint64_t lo, uint64_t hi):
    """Unit-rate gamma samples into `out` (``num_samples * len(alphas)``, sample-major
    as TensorFlow lays them out) from the stream at counter ``(hi << 64 | lo)``."""
    cdef Py_ssize_t num_alphas = alphas.shape[0], a, s
    cdef uint64_t pos
    cdef uint32_t w[4]
    cdef double uni[2]
    cdef double alpha, d, c, x, v, u, res, r, u1, v1
    cdef int norm_left, uni_left, less
    with nogil:
        for a in range(num_alphas):
            alpha = alphas[a]
            less = alpha < 1.0
            d = alpha + ((2.0 / 3) if less else (-1.0 / 3))
            c = (1.0 / 3) / sqrt(d)
            for s in range(num_samples):
                pos = <uint64_t>256 * <uint64_t>(a * num_samples + s)
                if alpha == 1.0:  # exponential: -log(1 - u), u the block's second double
                    _block(key0, key1, lo, hi, pos, w)
                    out[s * num_alphas + a] = -log(1.0 - _double(w[2], w[3]))
                    continue
                norm_left = 0
                uni_left = 0
                while True:
                    if norm_left == 0:  # a block of two Box-Muller normals
                        _block(key0, key1, lo, hi, pos, w)
                        pos += 1
                        u1 = _double(w[0], w[1])
                        if u1 < 1.0e-7:
                            u1 = 1.0e-7
                        v1 = _TWO_PI * _double(w[2], w[3])
                        r = sqrt(-2.0 * log(u1))
                        norm_left = 2
                    norm_left -= 1
                    # the block's second normal first (r cos), its first (r sin) if needed
                    x = (cos(v1) if norm_left else sin(v1)) * r
                    v = 1.0 + c * x
                    if v <= 0.0:
                        continue
                    v = v * v * v
                    if uni_left == 0:  # a block of two uniforms
                        _block(key0, key1, lo, hi, pos, w)
                        pos += 1
                        uni[0] = _double(w[0], w[1])
                        uni[1] = _double(w[2], w[3])
                        uni_left = 2
                    uni_left -= 1
                    u = uni[uni_left]
                    if not (u < 1.0 - 0.0331 * (x * x) * (x * x) or
                            log(u) < 0.5 * x * x + d * (1.0 - v + log(v))):
                        continue
                    res = d * v
                    if less:  # alpha < 1: boost, times uniform ** (1 / alpha)
                        if uni_left == 0:
                            _block(key0, key1, lo, hi, pos, w)
                            pos += 1
                            uni[0] = _double(w[0], w[1])
                            uni[1] = _double(w[2], w[3])
                            uni_left = 2
                        uni_left -= 1
                        res = res * pow(uni[uni_left], 1.0 / alpha)
                    out[s * num_alphas + a] = res
                    break


cdef inline int _uniform_pair(double* uni, uint64_t key0, uint64_t key1, uint64_t lo,
                              uint64_t hi, uint64_t pos) noexcept nogil:
    cdef uint32_t w[4]
    _block(key0, key1, lo, hi, pos, w)
    uni[0] = _double(w[0], w[1])
    uni[1] = _double(w[2], w[3])
    return 2


def poisson_samples(double[::1] out, const double[::1] rates, Py_ssize_t num_samples,
                    double highest, uint64_t key0, uint64_t key1, uint64_t lo,
                    uint64_t hi):
    """Poisson samples into `out` (``num_samples * len(rates)``, sample-major) from the
    stream at counter ``(hi << 64 | lo)``; `highest` is the output dtype's largest value
    (a larger draw is rejected, as TensorFlow does)."""
    cdef Py_ssize_t num_rates = rates.shape[0], r, s
    cdef uint64_t pos
    cdef double uni[2]
    cdef double rate, exp_neg, prod, x, log_rate, b, a, inv_alpha, u, v, us, k
    cdef int left
    with nogil:
        for r in range(num_rates):
            rate = rates[r]
            exp_neg = exp(-rate)
            log_rate = log(rate)
            b = 0.931 + 2.53 * sqrt(rate)
            a = -0.059 + 0.02483 * b
            inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
            for s in range(num_samples):
                pos = <uint64_t>256 * <uint64_t>(r * num_samples + s)
                left = 0
                if rate < 10.0:  # Knuth: count uniforms until their product drops
                    prod = 1.0
                    x = 0.0
                    while True:
                        if left == 0:
                            left = _uniform_pair(uni, key0, key1, lo, hi, pos)
                            pos += 1
                        left -= 1
                        prod = prod * uni[left]
                        if prod <= exp_neg and x <= highest:
                            out[s * num_rates + r] = x
                            break
                        x += 1.0
                    continue
                while True:  # Hormann's transformed rejection
                    if left == 0:
                        left = _uniform_pair(uni, key0, key1, lo, hi, pos)
                        pos += 1
                    left -= 1
                    u = uni[left] - 0.5
                    if left == 0:
                        left = _uniform_pair(uni, key0, key1, lo, hi, pos)
                        pos += 1
                    left -= 1
                    v = uni[left]
                    us = 0.5 - fabs(u)
                    k = floor((2.0 * a / us + b) * u + rate + 0.43)
                    if k > highest:
                        continue
                    if us >= 0.07 and v <= 0.9277 - 3.6224 / (b - 2.0):
                        out[s * num_rates + r] = k
                        break
                    if k < 0 or (us < 0.013 and v > us):
                        continue
                    if (log(v * inv_alpha / (a / (us * us) + b)) <=
                            -rate + k * log_rate - lgamma(k + 1.0)):
                        out[s * num_rates + r] = k
                        break


cdef double[10] _STIRLING_TAIL = [0.0810614667953272, 0.0413406959554092,
                                  0.0276779256849983, 0.02079067210376509,
                                  0.0166446911898211, 0.0138761288230707,
                                  0.0118967099458917, 0.0104112652619720,
                                  0.00925546218271273, 0.00833056343336287]


cdef inline double _stirling_tail(double k) noexcept nogil:
    """The error of Stirling's approximation of log(k!): tabulated up to 9."""
    cdef double kp1sq
    if k <= 9:
        return _STIRLING_TAIL[<int>k]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


cdef double _inversion(double count, double prob, uint64_t key0, uint64_t key1,
                       uint64_t lo, uint64_t hi, uint64_t pos) noexcept nogil:
    """Geometric waiting times summed until they pass `count`: how many fit."""
    cdef double uni[2]
    cdef double geom_sum = 0.0
    cdef double num = 0.0
    cdef int left = 0
    while True:
        if left == 0:
            left = _uniform_pair(uni, key0, key1, lo, hi, pos)
            pos += 1
        left -= 1
        geom_sum += ceil(log(uni[left]) / log1p(-prob))
        if geom_sum > count:
            return num
        num += 1.0


cdef double _btrs(double count, double prob, uint64_t key0, uint64_t key1, uint64_t lo,
                  uint64_t hi, uint64_t pos) noexcept nogil:
    """Hormann's transformed rejection for a binomial (TensorFlow's variant)."""
    cdef double uni[2]
    cdef double stddev = sqrt(count * prob * (1 - prob))
    cdef double b = 1.15 + 2.53 * stddev
    cdef double a = -0.0873 + 0.0248 * b + 0.01 * prob
    cdef double c = count * prob + 0.5
    cdef double v_r = 0.92 - 4.2 / b
    cdef double r = prob / (1 - prob)
    cdef double alpha = (2.83 + 5.1 / b) * stddev
    cdef double m = floor((count + 1) * prob)
    cdef double u, v, us, k, bound
    cdef int left = 0
    while True:
        if left == 0:
            left = _uniform_pair(uni, key0, key1, lo, hi, pos)
            pos += 1
        left -= 1
        u = uni[left]
        if left == 0:
            left = _uniform_pair(uni, key0, key1, lo, hi, pos)
            pos += 1
        left -= 1
        v = uni[left]
        u = u - 0.5
        us = 0.5 - fabs(u)
        k = floor((2 * a / us + b) * u + c)
        if us >= 0.07 and v <= v_r:
            return k
        if k < 0 or k > count:
            continue
        v = log(v * alpha / (a / (us * us) + b))
        bound = ((m + 0.5) * log((m + 1) / (r * (count - m + 1))) +
                 (count + 1) * log((count - m + 1) / (count - k + 1)) +
                 (k + 0.5) * log(r * (count - k + 1) / (k + 1)) +
                 _stirling_tail(m) + _stirling_tail(count - m) -
                 _stirling_tail(k) - _stirling_tail(count - k))
        if v <= bound:
            return k


def binomial_samples(double[::1] out, const double[::1] counts, const double[::1] probs,
                     const signed char[::1] methods, Py_ssize_t num_samples,
                     uint64_t inversion_stride, uint64_t key0, uint64_t key1, uint64_t lo,
                     uint64_t hi):
    """Binomial samples into `out` (``num_samples * len(counts)``, sample-major) from the
    stream at counter ``(hi << 64 | lo)``. Per batch member, `methods`: 0 draws by
    inversion, 1 by BTRS, with `probs` the probability used (for p > 0.5, 1 - p, and
    methods 6 and 2 take the draw from the count); 3 is all 0, 4 all `count`, 5 NaN.
    Inversion reads `inversion_stride` blocks per output, BTRS 256."""
    cdef Py_ssize_t num_batches = counts.shape[0], bi, s
    cdef uint64_t idx
    cdef double count, p, res
    cdef signed char how
    with nogil:
        for bi in range(num_batches):
            count = counts[bi]
            p = probs[bi]
            how = methods[bi]
            for s in range(num_samples):
                idx = <uint64_t>(bi * num_samples + s)
                if how == 3:
                    res = 0.0
                elif how == 4:
                    res = count
                elif how == 5:
                    res = NAN
                elif how == 0 or how == 6:
                    res = _inversion(count, p, key0, key1, lo, hi, inversion_stride * idx)
                    if how == 6:
                        res = count - res
                else:
                    res = _btrs(count, p, key0, key1, lo, hi, <uint64_t>256 * idx)
                    if how == 2:
                        res = count - res
                out[s * num_batches + bi] = res


def c_float_math(str name, const float[::1] x, const float[::1] y, float[::1] out):
    """C's float32 ``log1pf`` / ``expm1f`` of `x`, or ``powf(x, y)``, into `out`: the
    last bit TensorFlow's float kernels get from the C library."""
    cdef Py_ssize_t i, n = x.shape[0]
    cdef int which = 0 if name == "log1pf" else (1 if name == "expm1f" else 2)
    if which == 2 and y.shape[0] != n:
        raise ValueError(f"powf: {n} bases but {y.shape[0]} exponents")
    with nogil:
        for i in range(n):
            if which == 0:
                out[i] = log1pf(x[i])
            elif which == 1:
                out[i] = expm1f(x[i])
            else:
                out[i] = powf(x[i], y[i])


cdef inline float _float_of(uint32_t x) noexcept nogil:
    """A uniform float32 in [0, 1) from a word's low 23 bits (TF's layout)."""
    cdef uint32_t bits = (x & 0x7FFFFF) | 0x3F800000
    cdef float f
    memcpy(&f, &bits, 4)
    return f - 1.0


cdef inline void _box_muller_f32(uint32_t x0, uint32_t x1, float* f0,
                                 float* f1) noexcept nogil:
    # float32 results of the double-precision C functions rounded once, as the NumPy
    # reference (`kernels_random_stateless._box_muller32`) computes them
    cdef float u1 = _float_of(x0)
    cdef float v1, r
    if u1 < <float>1e-7:
        u1 = <float>1e-7
    v1 = <float>(_TWO_PI * <double>_float_of(x1))
    r = <float>sqrt(<double>(<float>-2.0 * <float>log(<double>u1)))
    f0[0] = <float>sin(<double>v1) * r
    f1[0] = <float>cos(<double>v1) * r


cdef inline void _box_muller_f64(uint32_t* w, double* f0, double* f1) noexcept nogil:
    cdef double u1 = _double(w[0], w[1])
    cdef double v1 = _TWO_PI * _double(w[2], w[3])
    cdef double r
    if u1 < 1e-7:
        u1 = 1e-7
    r = sqrt(-2.0 * log(u1))
    f0[0] = sin(v1) * r
    f1[0] = cos(v1) * r


ctypedef fused real_t:
    float
    double


cdef inline int _block_normals(uint32_t* w, real_t* f) noexcept nogil:
    """The normals one block's four words give, into `f`: four float32 values (one pair
    from words 0-1, one from 2-3) or two float64 values (one pair from all four)."""
    if real_t is float:
        _box_muller_f32(w[0], w[1], &f[0], &f[1])
        _box_muller_f32(w[2], w[3], &f[2], &f[3])
        return 4
    else:
        _box_muller_f64(w, &f[0], &f[1])
        return 2


def normal(real_t[::1] out, uint64_t key0, uint64_t key1, uint64_t lo, uint64_t hi):
    """Standard normals into `out` (float32 or float64), block after block."""
    cdef Py_ssize_t n = out.shape[0], i = 0, b = 0
    cdef uint32_t w[4]
    cdef real_t f[4]
    cdef int j, k
    with nogil:
        while i < n:
            _block(key0, key1, lo, hi, <uint64_t>b, w)
            b += 1
            k = _block_normals(w, f)
            for j in range(k):
                if i < n:
                    out[i] = f[j]
                    i += 1


def truncated_normal(real_t[::1] out, uint64_t key0, uint64_t key1, uint64_t lo,
                     uint64_t hi, uint64_t reserved):
    """Normals within (-2, 2): output group g (as many values as one block gives: 4 in
    float32, 2 in float64) takes the first accepted candidates of its own run of blocks,
    from block ``g * reserved`` on."""
    cdef int group = 4 if real_t is float else 2
    cdef Py_ssize_t n = out.shape[0], g, n_groups = (n + group - 1) // group, filled, i
    cdef uint64_t b
    cdef uint32_t w[4]
    cdef real_t f[4]
    cdef int j
    with nogil:
        for g in range(n_groups):
            filled = 0
            b = <uint64_t>g * reserved
            while filled < group:
                _block(key0, key1, lo, hi, b, w)
                b += 1
                _block_normals(w, f)
                for j in range(group):
                    if filled < group and fabs(f[j]) < 2.0:
                        i = g * group + filled
                        if i < n:
                            out[i] = f[j]
                        filled += 1
