/* C helpers shared by the CPU convolution and pooling loops (_conv.pyx, _pool2x2.pyx). */
#ifndef FG_POOL_STEPS_H
#define FG_POOL_STEPS_H

/* Wider vectors where the CPU has them (one copy per instruction set, picked when the
   module loads), as NumPy's own loops do; the build itself targets baseline x86-64. */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
#define FG_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define FG_CLONES
#endif

/* One tap (number t) of a running first-argmax over c contiguous channels. Written in C
   with `restrict` and selects so that the compiler vectorizes it (Cython's conditional
   expressions become branches, which random data mispredicts half the time: 20x
   slower). The first NaN wins, as np.argmax. ATTRS: FG_CLONES for a function called
   from Cython, inline for one called from other cloned C loops. */
#define FG_ARGMAX_STEP(NAME, T, ATTRS)                                                 \
ATTRS static void NAME(const T* restrict px, T* restrict best, T* restrict tap, T t,   \
                       Py_ssize_t c) {                                                 \
    for (Py_ssize_t k = 0; k < c; k++) {                                               \
        T v = px[k], o = best[k];                                                      \
        int better = (v > o) | ((v != v) & (o == o));                                  \
        best[k] = better ? v : o;                                                      \
        tap[k] = better ? t : tap[k];                                                  \
    }                                                                                  \
}

#endif
