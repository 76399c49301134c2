"""The fused update loops of `flowgraph/backends/cpu/_training.pyx` (`_training_loops.h`),
called directly: every dense rule against a NumPy re-implementation of its published
formula, on lengths that leave a vector tail (1037 = 129 * 8 + 5), on misaligned slices of
a larger buffer, lane by lane against one-element (scalar) calls, and with aliased
arguments."""

import numpy as np
import pytest

from flowgraph.backends.cpu import _training

N = 1037  # not a multiple of any vector width: the loops end with a scalar tail


# -- NumPy references: one step in float64 from the dtype-rounded inputs -----------------
# Each takes (var, slots, g, hp, flag) as float64 arrays/floats and returns the new
# (var, slots). `hp` is rounded to the variable's dtype first, as the kernels do.
def ref_sgd(var, s, g, hp, flag):
    return var - hp[0] * g, s


def ref_momentum(var, s, g, hp, flag):
    lr, mom = hp[:2]
    (accum,) = s
    accum = mom * accum + g
    step = lr * g + lr * mom * accum if flag else lr * accum  # flag: Nesterov
    return var - step, [accum]


def ref_adagrad(var, s, g, hp, flag):
    (accum,) = s
    if flag:  # update_slots
        accum = accum + g * g
    return var - hp[0] * g / np.sqrt(accum), [accum]


def ref_adam(var, s, g, hp, flag):
    alpha, b1, b2, eps = hp[:4]  # alpha = lr * sqrt(1 - beta2^t) / (1 - beta1^t)
    m, v = s
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    m_hat = b1 * m + (1 - b1) * g if flag else m  # flag: Nesterov
    return var - alpha * m_hat / (np.sqrt(v) + eps), [m, v]


def ref_rmsprop(var, s, g, hp, flag):
    lr, rho, momentum, eps = hp[:4]
    ms, mom = s[:2]
    ms = rho * ms + (1 - rho) * g * g
    denom = ms + eps
    out = [ms, mom]
    if len(s) == 3:  # centered
        mg = rho * s[2] + (1 - rho) * g
        denom = denom - mg * mg
        out.append(mg)
    out[1] = momentum * mom + lr * g / np.sqrt(denom)
    return var - out[1], out


def ref_ftrl(var, s, g, hp, flag):
    lr, l1, l2, shrink, lr_power = hp[:5]
    accum, linear = s
    g_shrunk = g + 2 * shrink * var if flag else g
    new_accum = accum + g * g
    sigma = (new_accum ** -lr_power - accum ** -lr_power) / lr
    linear = linear + g_shrunk - sigma * var
    quadratic = new_accum ** -lr_power / lr + 2 * l2
    new_var = np.where(np.abs(linear) > l1, (np.sign(linear) * l1 - linear) / quadratic, 0.0)
    return new_var, [new_accum, linear]


def ref_adadelta(var, s, g, hp, flag):
    lr, rho, eps = hp[:3]
    accum, accum_update = s
    accum = rho * accum + (1 - rho) * g * g
    update = np.sqrt(accum_update + eps) / np.sqrt(accum + eps) * g
    accum_update = rho * accum_update + (1 - rho) * update * update
    return var - lr * update, [accum, accum_update]


# case -> (rule, flag, hyperparameters, reference, initial slots(rng, n))
def _positive(k):
    return lambda rng, n: [rng.uniform(0.1, 1.0, n) for _ in range(k)]


CASES = {
    "sgd": (_training.SGD, 0, (0.1,), ref_sgd, lambda rng, n: []),
    "momentum": (_training.MOMENTUM, 0, (0.1, 0.9), ref_momentum, _positive(1)),
    "nesterov": (_training.MOMENTUM, 1, (0.1, 0.9), ref_momentum, _positive(1)),
    "adagrad": (_training.ADAGRAD, 1, (0.1,), ref_adagrad, _positive(1)),
    "adagrad_frozen_slots": (_training.ADAGRAD, 0, (0.1,), ref_adagrad, _positive(1)),
    "adam": (_training.ADAM, 0, (0.01, 0.9, 0.999, 1e-8), ref_adam, _positive(2)),
    "adam_nesterov": (_training.ADAM, 1, (0.01, 0.9, 0.999, 1e-8), ref_adam, _positive(2)),
    "rmsprop": (_training.RMSPROP, 0, (0.01, 0.9, 0.5, 1e-10), ref_rmsprop, _positive(2)),
    "centered_rmsprop": (
        _training.CENTERED_RMSPROP, 0, (0.01, 0.9, 0.5, 1e-10), ref_rmsprop,
        lambda rng, n: [rng.uniform(0.5, 1.0, n), rng.uniform(0, 1, n),
                        rng.uniform(-0.1, 0.1, n)]),
    "ftrl": (_training.FTRL, 0, (0.5, 0.05, 0.2, 0.0, -0.5), ref_ftrl, _positive(2)),
    "ftrl_pow_shrinkage": (_training.FTRL, 1, (0.5, 0.05, 0.0, 0.3, -0.7), ref_ftrl,
                           _positive(2)),
    "adadelta": (_training.ADADELTA, 0, (1.0, 0.95, 1e-6), ref_adadelta, _positive(2)),
}


def _hp(values):
    return (*map(float, values), *(0.0,) * (6 - len(values)))


def _apply(rule, flag, hp, var, slots, g):
    args = [*slots, *[var] * (3 - len(slots))]  # unused slots: pass var
    _training.apply_dense(rule, var, *args, g, _hp(hp), flag)


def _grads(rng, n, steps, dtype):
    return [rng.uniform(-1, 1, n).astype(dtype) for _ in range(steps)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", list(CASES))
def test_dense_rule_matches_published_formula(case, dtype):
    rule, flag, hp, ref, init = CASES[case]
    rng = np.random.default_rng(1037)
    var = rng.uniform(-1, 1, N).astype(dtype)
    slots = [s.astype(dtype) for s in init(rng, N)]
    hp_t = [float(dtype(x)) for x in hp]  # the kernel rounds hyperparameters to dtype
    expect_var, expect_slots = var.astype(np.float64), [s.astype(np.float64) for s in slots]
    rtol, atol = (1e-12, 1e-14) if dtype == np.float64 else (2e-5, 1e-6)
    for t, g in enumerate(_grads(rng, N, 3, dtype)):
        expect_var, expect_slots = ref(expect_var, expect_slots, g.astype(np.float64), hp_t,
                                       flag)
        _apply(rule, flag, hp, var, slots, g)
        np.testing.assert_allclose(var, expect_var, rtol=rtol, atol=atol,
                                   err_msg=f"{case} var, step {t}")
        for k, (got, want) in enumerate(zip(slots, expect_slots)):
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol,
                                       err_msg=f"{case} slot {k}, step {t}")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", list(CASES))
def test_misaligned_slice_matches_contiguous_copy_and_stays_in_bounds(case, dtype):
    """Arrays that start 3 elements into a buffer (not vector-aligned) with an odd length:
    the same bits as fresh arrays, and the guard elements around them are not written."""
    rule, flag, hp, _, init = CASES[case]
    rng = np.random.default_rng(3)
    n, lo, hi = N - 8, 3, 5
    fresh = [rng.uniform(-1, 1, n).astype(dtype), *(s.astype(dtype) for s in init(rng, n))]
    bufs = [np.full(lo + n + hi, 7.0, dtype) for _ in fresh]
    views = [b[lo:lo + n] for b in bufs]
    for view, value in zip(views, fresh):
        view[...] = value
    assert all(v.flags.c_contiguous for v in views)
    for g in _grads(rng, n, 2, dtype):
        g_view = np.full(lo + n + hi, 7.0, dtype)[lo:lo + n]
        g_view[...] = g
        _apply(rule, flag, hp, views[0], views[1:], g_view)
        _apply(rule, flag, hp, fresh[0], fresh[1:], g)
    for k, (buf, want) in enumerate(zip(bufs, fresh)):
        assert buf[lo:lo + n].tobytes() == want.tobytes(), f"{case} array {k}"
        assert (buf[:lo] == 7).all() and (buf[lo + n:] == 7).all(), f"{case} array {k} guard"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", list(CASES))
def test_vector_lanes_equal_scalar_elements(case, dtype):
    """One call over 1037 elements (vector body + tail) gives the same bits as 1037 calls
    over one element each (scalar code only): lanes compute exactly the scalar formula."""
    rule, flag, hp, _, init = CASES[case]
    rng = np.random.default_rng(5)
    whole = [rng.uniform(-1, 1, N).astype(dtype), *(s.astype(dtype) for s in init(rng, N))]
    single = [a.copy() for a in whole]
    g = _grads(rng, N, 1, dtype)[0]
    _apply(rule, flag, hp, whole[0], whole[1:], g)
    for i in range(N):
        arrays = [a[i:i + 1] for a in single]
        _apply(rule, flag, hp, arrays[0], arrays[1:], g[i:i + 1])
    for k, (a, b) in enumerate(zip(whole, single)):
        assert a.tobytes() == b.tobytes(), f"{case} array {k}"


def test_gradient_sharing_the_variables_memory_is_read_before_it_is_written():
    var = np.linspace(-1, 1, N)
    expect = var.copy()
    _apply(_training.SGD, 0, (0.25,), expect, [], var.copy())
    _apply(_training.SGD, 0, (0.25,), var, [], var)  # grad is var itself
    assert var.tobytes() == expect.tobytes()


def test_overlapping_accumulators_and_unknown_rule_raise_before_writing():
    buf = np.ones(N + 1)
    var, g = np.ones(N), np.ones(N)
    with pytest.raises(ValueError, match=r"ADAM.*s0 and s1 share memory"):
        _training.apply_dense(_training.ADAM, var, buf[:N], buf[1:], var, g,
                              _hp((0.1, 0.9, 0.999, 1e-8)), 0)
    with pytest.raises(ValueError, match="unknown rule 99"):
        _training.apply_dense(99, var, var, var, var, g, _hp((0.1,)), 0)
    assert (var == 1).all() and (buf == 1).all()
