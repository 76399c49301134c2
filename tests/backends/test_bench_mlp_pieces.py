"""`benchmarks/bench_mlp.py --pieces` at tiny sizes: nodes land in the right groups,
each update kernel timed against NumPy changes the weights as NumPy's update does, and
the forced two-thread split restores the pool's grain and computes the same bits."""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest

from flowgraph.backends.cpu import kernel_pool

BENCHMARKS = pathlib.Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import bench_mlp

        yield bench_mlp
    finally:
        sys.path.remove(str(BENCHMARKS))


def test_groups_from_timeline_labels(bench):
    assert bench._group("dense/MatMul = MatMul(x, w)") == "gemm"
    assert bench._group("Adam/update_w/ApplyAdam = ApplyAdam(w, m, v)") == "update"
    assert bench._group("sgd/ApplyGradientDescent = ApplyGradientDescent(w)") == "update"
    assert bench._group("h/Relu = Fused(h/BiasAdd:BiasAdd, h/Relu:Relu)") == "elementwise"
    assert bench._group("g/BiasAddGrad = BiasAddGrad(d)") == "bias_grad"
    assert bench._group("xent = SparseSoftmaxCrossEntropyWithLogits(z, y)") == "loss"
    assert bench._group("w/read = Identity(w)") == "other"


@pytest.mark.parametrize("optimizer", ["adam", "sgd"])
def test_update_calls_agree_with_numpys_update(bench, optimizer):
    rng = np.random.default_rng(0)
    w = rng.standard_normal((33, 17)).astype(np.float32)
    grad = rng.standard_normal(w.shape).astype(np.float32)
    fg_call, np_call, fg_var, np_var = bench._update_calls(optimizer, w, grad)
    for _ in range(3):
        fg_call()
        np_call()
    assert np.abs(fg_var.value - w).min() > 0
    np.testing.assert_allclose(fg_var.value - w, np_var - w, rtol=1e-4, atol=1e-7)


def test_split_in_two_restores_the_grain_and_the_bits(bench):
    rng = np.random.default_rng(1)
    w = rng.standard_normal((64, 1024)).astype(np.float32)  # 2**16 elements
    grad = rng.standard_normal(w.shape).astype(np.float32)
    one, _, var_one, _ = bench._update_calls("adam", w, grad)
    two, _, var_two, _ = bench._update_calls("adam", w, grad)
    grain = kernel_pool.GRAIN["update"]
    one()
    with kernel_pool.threads_limited(2):
        bench._split_in_two(two)()
    assert kernel_pool.GRAIN["update"] == grain
    np.testing.assert_array_equal(var_one.value, var_two.value)


def test_node_pieces_of_the_adam_step(bench):
    xs, ys = bench.make_batches()
    fg = bench.FlowgraphMLP("adam", True, xs[:1], ys[:1])
    try:
        fg.step()
        nodes = bench._node_pieces(fg, 2)
    finally:
        fg.close()
    assert nodes["gemm"]["nodes"] == 8  # 3 forward, 3 weight and 2 input gradients
    assert nodes["update"]["nodes"] == 6 and nodes["loss"]["nodes"] == 1
    assert nodes["bias_grad"]["nodes"] == 3
    assert all(0 < g["us_best"] <= g["us"] for g in nodes.values())
