"""The fused one-pass ReLU kernels (flowgraph/backends/cpu/_nn.pyx) behind Relu/ReluGrad."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from flowgraph.backends.cpu import kernels_grad, kernels_nn
from tests.ops.module_spy import ModuleSpy

_nn = pytest.importorskip("flowgraph.backends.cpu._nn")

RNG = np.random.default_rng(7)
DTYPES = [np.float32, np.float64]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (1,), (7,), (33, 17), (2, 3, 5)])
def test_relu_and_relu_grad_match_numpy(dtype, shape):
    x = RNG.standard_normal(shape).astype(dtype)
    g = RNG.standard_normal(shape).astype(dtype)
    y = _nn.relu(x)
    assert y.dtype == dtype and y.shape == x.shape and y is not x
    np.testing.assert_array_equal(y, np.maximum(x, 0))
    dx = _nn.relu_grad(g, x)
    assert dx.dtype == dtype and dx.shape == x.shape
    np.testing.assert_array_equal(dx, g * (x > 0))


@pytest.mark.parametrize("dtype", DTYPES)
def test_special_values_follow_tensorflow(dtype):
    x = np.array([np.nan, -np.inf, np.inf, 0.0, -0.0, -1.0, 2.0], dtype)
    np.testing.assert_array_equal(_nn.relu(x), [np.nan, 0, np.inf, 0, 0, 0, 2])
    # TF computes ReluGrad as g * (x > 0): a NaN in x gives 0, a NaN in g stays NaN.
    g = np.array([1.0, 1.0, 1.0, 1.0, 1.0, np.nan, np.nan], dtype)
    np.testing.assert_array_equal(_nn.relu_grad(g, x), [0, 0, 1, 0, 0, np.nan, np.nan])


@pytest.mark.parametrize("dtype", DTYPES)
def test_kernels_take_the_fast_path_and_never_write_inputs(dtype, monkeypatch):
    calls = []
    monkeypatch.setattr(kernels_nn, "_nn", ModuleSpy(_nn, calls))
    monkeypatch.setattr(kernels_grad, "_nn", ModuleSpy(_nn, calls))
    x = RNG.standard_normal((4, 6)).astype(dtype)
    g = RNG.standard_normal((4, 6)).astype(dtype)
    x0, g0 = x.copy(), g.copy()
    np.testing.assert_array_equal(kernels_nn.relu(x), np.maximum(x0, 0))
    np.testing.assert_array_equal(kernels_grad.relu_grad(g, x), np.where(x0 > 0, g0, 0))
    assert calls == ["relu", "relu_grad"]
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_array_equal(g, g0)


def test_other_layouts_and_dtypes_fall_back_to_numpy(monkeypatch):
    calls = []
    monkeypatch.setattr(kernels_nn, "_nn", ModuleSpy(_nn, calls))
    monkeypatch.setattr(kernels_grad, "_nn", ModuleSpy(_nn, calls))
    x = RNG.standard_normal((5, 4)).astype(np.float32)
    g = RNG.standard_normal((5, 4)).astype(np.float32)
    np.testing.assert_array_equal(kernels_nn.relu(x.T), np.maximum(x.T, 0))  # F-order
    np.testing.assert_array_equal(kernels_grad.relu_grad(g.T, x.T), np.where(x.T > 0, g.T, 0))
    ints = np.array([-2, 3], np.int32)
    np.testing.assert_array_equal(kernels_nn.relu(ints), [0, 3])
    np.testing.assert_array_equal(kernels_grad.relu_grad(ints, ints), [0, 3])
    half = x.astype(np.float16)
    assert kernels_grad.relu_grad(half, half).dtype == np.float16
    mixed = kernels_grad.relu_grad(g, x.astype(np.float64))
    assert mixed.dtype == np.float32
    assert calls == []


def test_kernels_release_the_gil():
    """Two threads run relu_grad on large arrays concurrently and get the right answer."""
    x = RNG.standard_normal(1 << 20).astype(np.float32)
    g = RNG.standard_normal(1 << 20).astype(np.float32)
    want = g * (x > 0)
    results = [None, None]

    def work(k):
        for _ in range(5):
            results[k] = _nn.relu_grad(g, x)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        np.testing.assert_array_equal(r, want)
