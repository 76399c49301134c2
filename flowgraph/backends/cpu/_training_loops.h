/* The optimizer update rules of _training.pyx: one pass over n elements, in C.
 *
 * Why C: GCC's target_clones attribute (which Cython cannot attach) compiles
 * fg_update_f32/_f64 twice, once for AVX2 and once for baseline x86-64 (SSE2), and
 * picks one when the module is loaded (an ifunc, by CPUID).  The built module thus runs
 * on any x86-64 CPU, and on an AVX2 one the vectorized loops handle 8 floats (4 doubles)
 * per instruction, which matters for the rules bound by sqrt and division (Adam, Adagrad,
 * RMSProp, FTRL, Adadelta).  Elsewhere (other CPUs or compilers, or a libc without
 * ifuncs) the same loops are compiled once, plainly.
 *
 * Both clones compute the same bits: every element goes through the same IEEE
 * operations in the same order, and vector sqrt and division round exactly as scalar
 * ones.  That is why the clone is "avx2" and not "arch=x86-64-v3": the latter enables FMA,
 * and GCC would then contract a*b + c into one rounding, so results would depend on the
 * machine.  The expressions are written exactly as the earlier Cython loops compiled
 * them, down to the double constants ("1.0 - rho") that make some float32 steps round
 * through double; keep it that way, so that updates stay bit-identical across versions.
 *
 * Vectorizing needs __restrict pointers (the caller, _training.pyx, makes sure that the
 * arrays a rule touches do not overlap) and two flags _training.pyx compiles with:
 * -fno-math-errno (sqrt without errno) and -fno-trapping-math (so that FTRL's "x / y if
 * |lin| > l1 else 0" may divide in every lane).  Neither changes a result (nor does its
 * third flag, -falign-loops=32, which is about speed: see _training.pyx).  powf/pow
 * (FTRL with lr_power != -0.5) stay scalar: a vector pow would round differently.
 *
 * This file includes itself once per element type: the first pass (FG_T undefined) sets
 * up the shared declarations, then defines FG_T as float and as double and includes the
 * second pass, the loops, which are written in terms of FG_T.
 */

#ifndef FG_T /* ---- first pass -------------------------------------------------------- */
#ifndef FLOWGRAPH_TRAINING_LOOPS_H
#define FLOWGRAPH_TRAINING_LOOPS_H

#include <math.h>

/* Rule ids (exported to Python by _training.pyx). */
enum {
    FG_SGD, FG_MOMENTUM, FG_ADAGRAD, FG_ADAM, FG_RMSPROP, FG_CENTERED_RMSPROP, FG_FTRL,
    FG_ADADELTA,
    FG_ADAM_DECAY /* internal: Adam on a row with no gradient (sparse TF1 Adam) */
};

/* Six rule-specific hyperparameters (see each rule) and a rule-specific switch. */
typedef struct {
    double h0, h1, h2, h3, h4, h5;
    int flag;
} fg_hyper;

#if defined(__GNUC__) || defined(_MSC_VER)
#define FG_RESTRICT __restrict
#else
#define FG_RESTRICT
#endif

#if defined(__GNUC__)
#define FG_INLINE static inline __attribute__((always_inline))
#else
#define FG_INLINE static inline
#endif

/* ifuncs need an ELF target and a libc that resolves them (glibc; not musl). */
#define FG_CLONES
#if defined(__GNUC__) && defined(__x86_64__) && defined(__ELF__) && defined(__GLIBC__) \
    && defined(__has_attribute)
#if __has_attribute(target_clones)
#undef FG_CLONES
#define FG_CLONES __attribute__((target_clones("avx2", "default")))
#endif
#endif

#define FG_T float
#define FG_FN(name) name##_f32
#define FG_SQRT sqrtf
#define FG_POW powf
#define FG_ABS fabsf
#include "_training_loops.h"
#undef FG_T
#undef FG_FN
#undef FG_SQRT
#undef FG_POW
#undef FG_ABS

#define FG_T double
#define FG_FN(name) name##_f64
#define FG_SQRT sqrt
#define FG_POW pow
#define FG_ABS fabs
#include "_training_loops.h"
#undef FG_T
#undef FG_FN
#undef FG_SQRT
#undef FG_POW
#undef FG_ABS

#endif /* FLOWGRAPH_TRAINING_LOOPS_H */
#else /* ---- second pass: the rules for one element type FG_T --------------------------- */

/* h0 = lr */
FG_INLINE void FG_FN(fg_sgd)(FG_T *FG_RESTRICT var, const FG_T *FG_RESTRICT g,
                             Py_ssize_t n, const fg_hyper *h)
{
    const FG_T lr = (FG_T)h->h0;
    for (Py_ssize_t i = 0; i < n; i++)
        var[i] = var[i] - lr * g[i];
}

/* h0 = lr, h1 = momentum, flag = use_nesterov */
FG_INLINE void FG_FN(fg_momentum)(FG_T *FG_RESTRICT var, FG_T *FG_RESTRICT acc,
                                  const FG_T *FG_RESTRICT g, Py_ssize_t n, const fg_hyper *h)
{
    const FG_T lr = (FG_T)h->h0, mom = (FG_T)h->h1;
    if (h->flag) {
        for (Py_ssize_t i = 0; i < n; i++) {
            const FG_T gi = g[i], a = acc[i] * mom + gi;
            acc[i] = a;
            var[i] = var[i] - (gi * lr + a * mom * lr);
        }
    } else {
        for (Py_ssize_t i = 0; i < n; i++) {
            const FG_T a = acc[i] * mom + g[i];
            acc[i] = a;
            var[i] = var[i] - a * lr;
        }
    }
}

/* h0 = lr, flag = update_slots */
FG_INLINE void FG_FN(fg_adagrad)(FG_T *FG_RESTRICT var, FG_T *FG_RESTRICT acc,
                                 const FG_T *FG_RESTRICT g, Py_ssize_t n, const fg_hyper *h)
{
    const FG_T lr = (FG_T)h->h0;
    if (h->flag) {
        for (Py_ssize_t i = 0; i < n; i++) {
            const FG_T gi = g[i], a = acc[i] + gi * gi;
            acc[i] = a;
            var[i] = var[i] - lr * gi / FG_SQRT(a);
        }
    } else {
        for (Py_ssize_t i = 0; i < n; i++)
            var[i] = var[i] - lr * g[i] / FG_SQRT(acc[i]);
    }
}

/* h0 = alpha (the bias-corrected lr), h1 = beta1, h2 = beta2, h3 = epsilon,
 * flag = use_nesterov */
FG_INLINE void FG_FN(fg_adam)(FG_T *FG_RESTRICT var, FG_T *FG_RESTRICT m,
                              FG_T *FG_RESTRICT v, const FG_T *FG_RESTRICT g, Py_ssize_t n,
                              const fg_hyper *h)
{
    const FG_T alpha = (FG_T)h->h0, b1 = (FG_T)h->h1, b2 = (FG_T)h->h2, eps = (FG_T)h->h3;
    const FG_T one_b1 = (FG_T)(1.0 - b1), one_b2 = (FG_T)(1.0 - b2);
    if (h->flag) {
        for (Py_ssize_t i = 0; i < n; i++) {
            const FG_T gi = g[i];
            const FG_T mi = m[i] + (gi - m[i]) * one_b1;
            const FG_T vi = v[i] + (gi * gi - v[i]) * one_b2;
            m[i] = mi;
            v[i] = vi;
            var[i] = var[i] - (gi * one_b1 + b1 * mi) * alpha / (FG_SQRT(vi) + eps);
        }
    } else {
        for (Py_ssize_t i = 0; i < n; i++) {
            const FG_T gi = g[i];
            const FG_T mi = m[i] + (gi - m[i]) * one_b1;
            const FG_T vi = v[i] + (gi * gi - v[i]) * one_b2;
            m[i] = mi;
            v[i] = vi;
            var[i] = var[i] - mi * alpha / (FG_SQRT(vi) + eps);
        }
    }
}

/* Adam with g = 0, on rows that sparse TF1 Adam decays without a gradient; h as fg_adam */
FG_INLINE void FG_FN(fg_adam_decay)(FG_T *FG_RESTRICT var, FG_T *FG_RESTRICT m,
                                    FG_T *FG_RESTRICT v, Py_ssize_t n, const fg_hyper *h)
{
    const FG_T alpha = (FG_T)h->h0, b1 = (FG_T)h->h1, b2 = (FG_T)h->h2, eps = (FG_T)h->h3;
    for (Py_ssize_t i = 0; i < n; i++) {
        const FG_T mi = m[i] * b1, vi = v[i] * b2;
        m[i] = mi;
        v[i] = vi;
        var[i] = var[i] - (h->flag ? b1 * mi : mi) * alpha / (FG_SQRT(vi) + eps);
    }
}

/* h0 = lr, h1 = rho, h2 = momentum, h3 = epsilon; mg is NULL unless centered */
FG_INLINE void FG_FN(fg_rmsprop)(FG_T *FG_RESTRICT var, FG_T *FG_RESTRICT ms,
                                 FG_T *FG_RESTRICT mom, FG_T *FG_RESTRICT mg,
                                 const FG_T *FG_RESTRICT g, Py_ssize_t n, const fg_hyper *h)
{
    const FG_T lr = (FG_T)h->h0, one_rho = (FG_T)(1.0 - (FG_T)h->h1);
    const FG_T momentum = (FG_T)h->h2, eps = (FG_T)h->h3;
    if (mg == NULL) {
        for (Py_ssize_t i = 0; i < n; i++) {
            const FG_T gi = g[i];
            const FG_T si = ms[i] + (gi * gi - ms[i]) * one_rho;
            ms[i] = si;
            const FG_T mi = mom[i] * momentum + lr * gi / FG_SQRT(si + eps);
            mom[i] = mi;
            var[i] = var[i] - mi;
        }
    } else {
        for (Py_ssize_t i = 0; i < n; i++) {
            const FG_T gi = g[i];
            const FG_T si = ms[i] + (gi * gi - ms[i]) * one_rho;
            const FG_T mgi = mg[i] + (gi - mg[i]) * one_rho;
            ms[i] = si;
            mg[i] = mgi;
            const FG_T mi = mom[i] * momentum + lr * gi / FG_SQRT(si - mgi * mgi + eps);
            mom[i] = mi;
            var[i] = var[i] - mi;
        }
    }
}

/* FTRL on element i; `shrinkage` and `half` (lr_power = -0.5: sqrt, not pow) are
 * constants at each call site, so each of the four loops below is branch-free. */
FG_INLINE void FG_FN(fg_ftrl_at)(FG_T *FG_RESTRICT var, FG_T *FG_RESTRICT accum,
                                 FG_T *FG_RESTRICT linear, const FG_T *FG_RESTRICT g,
                                 Py_ssize_t i, FG_T lr, FG_T l1, FG_T l2, FG_T shrink,
                                 FG_T lr_power, int shrinkage, int half)
{
    const FG_T gi = g[i], wi = var[i], a = accum[i];
    const FG_T gs = shrinkage ? (FG_T)(gi + 2.0 * shrink * wi) : gi;
    const FG_T na = a + gi * gi;
    const FG_T sig_new = half ? FG_SQRT(na) : FG_POW(na, -lr_power);
    const FG_T sig_old = half ? FG_SQRT(a) : FG_POW(a, -lr_power);
    const FG_T lin = linear[i] + gs - (sig_new - sig_old) / lr * wi;
    linear[i] = lin;
    accum[i] = na;
    const FG_T x = (lin > 0.0 ? l1 : -l1) - lin;
    const FG_T y = (FG_T)(sig_new / lr + 2.0 * l2);
    var[i] = FG_ABS(lin) > l1 ? x / y : (FG_T)0.0;
}

/* h0 = lr, h1 = l1, h2 = l2, h3 = l2_shrinkage, h4 = lr_power; flag = use shrinkage */
FG_INLINE void FG_FN(fg_ftrl)(FG_T *FG_RESTRICT var, FG_T *FG_RESTRICT accum,
                              FG_T *FG_RESTRICT linear, const FG_T *FG_RESTRICT g,
                              Py_ssize_t n, const fg_hyper *h)
{
    const FG_T lr = (FG_T)h->h0, l1 = (FG_T)h->h1, l2 = (FG_T)h->h2, shrink = (FG_T)h->h3;
    const FG_T lr_power = (FG_T)h->h4;
#define FG_FTRL_LOOP(shrinkage, half)                                                      \
    for (Py_ssize_t i = 0; i < n; i++)                                                     \
        FG_FN(fg_ftrl_at)(var, accum, linear, g, i, lr, l1, l2, shrink, lr_power,          \
                          shrinkage, half)
    if (lr_power == (FG_T)-0.5) {
        if (h->flag) FG_FTRL_LOOP(1, 1); else FG_FTRL_LOOP(0, 1);
    } else {
        if (h->flag) FG_FTRL_LOOP(1, 0); else FG_FTRL_LOOP(0, 0);
    }
#undef FG_FTRL_LOOP
}

/* h0 = lr, h1 = rho, h2 = epsilon */
FG_INLINE void FG_FN(fg_adadelta)(FG_T *FG_RESTRICT var, FG_T *FG_RESTRICT acc,
                                  FG_T *FG_RESTRICT upd, const FG_T *FG_RESTRICT g,
                                  Py_ssize_t n, const fg_hyper *h)
{
    const FG_T lr = (FG_T)h->h0, rho = (FG_T)h->h1, eps = (FG_T)h->h2;
    for (Py_ssize_t i = 0; i < n; i++) {
        const FG_T gi = g[i], ui = upd[i];
        const FG_T a = (FG_T)(acc[i] * rho + gi * gi * (1.0 - rho));
        acc[i] = a;
        const FG_T d = FG_SQRT(ui + eps) / FG_SQRT(a + eps) * gi;
        upd[i] = (FG_T)(ui * rho + d * d * (1.0 - rho));
        var[i] = var[i] - d * lr;
    }
}

/* Apply `rule` to n elements.  Slots a rule does not use may be any pointer (they are
 * not accessed); the ones it uses must not overlap each other, `var` or `g`. */
FG_CLONES static void FG_FN(fg_update)(int rule, FG_T *FG_RESTRICT var,
                                       FG_T *FG_RESTRICT s0, FG_T *FG_RESTRICT s1,
                                       FG_T *FG_RESTRICT s2, const FG_T *FG_RESTRICT g,
                                       Py_ssize_t n, const fg_hyper *h)
{
    switch (rule) {
    case FG_SGD: FG_FN(fg_sgd)(var, g, n, h); break;
    case FG_MOMENTUM: FG_FN(fg_momentum)(var, s0, g, n, h); break;
    case FG_ADAGRAD: FG_FN(fg_adagrad)(var, s0, g, n, h); break;
    case FG_ADAM: FG_FN(fg_adam)(var, s0, s1, g, n, h); break;
    case FG_ADAM_DECAY: FG_FN(fg_adam_decay)(var, s0, s1, n, h); break;
    case FG_RMSPROP: FG_FN(fg_rmsprop)(var, s0, s1, NULL, g, n, h); break;
    case FG_CENTERED_RMSPROP: FG_FN(fg_rmsprop)(var, s0, s1, s2, g, n, h); break;
    case FG_FTRL: FG_FN(fg_ftrl)(var, s0, s1, g, n, h); break;
    case FG_ADADELTA: FG_FN(fg_adadelta)(var, s0, s1, g, n, h); break;
    default: break;
    }
}

#endif /* FG_T */
