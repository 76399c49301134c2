"""pytest-benchmark version of `bench_mlp.py` (no ratios or targets; see that script).

Not part of the default test run (pytest's testpaths is ``tests/``)::

    python -m pytest benchmarks/test_bench_mlp.py --benchmark-only

Per optimizer, one group holds the flowgraph training step (fed batches), the same step
hand-written in NumPy, and the bare GEMMs of the step (NumPy and Cython BLAS), so the
table pytest-benchmark prints compares them directly.
"""

import bench_mlp
import pytest

OPTIMIZERS = ["sgd", "adam"]


@pytest.fixture(scope="module")
def batches():
    return bench_mlp.make_batches()


@pytest.fixture(scope="module", params=OPTIMIZERS)
def models(request, batches):
    xs, ys = batches
    fg = bench_mlp.FlowgraphMLP(request.param, True, xs, ys)
    weights = fg.weights()
    yield (request.param, fg, bench_mlp.NumpyMLP(request.param, weights, xs, ys),
           bench_mlp.GemmFloor(weights, xs))
    fg.close()


def _bench(benchmark, opt, fn):
    benchmark.group = f"mlp_{opt}"
    benchmark.pedantic(fn, rounds=20, warmup_rounds=3)


def test_mlp_flowgraph(benchmark, models):
    opt, fg, _, _ = models
    _bench(benchmark, opt, fg.step)


def test_mlp_numpy(benchmark, models):
    opt, _, ref, _ = models
    _bench(benchmark, opt, ref.step)


def test_mlp_gemm_floor(benchmark, models):
    opt, _, _, floor = models
    _bench(benchmark, opt, floor.run)


@pytest.mark.parametrize("opt", OPTIMIZERS)
def test_mlp_flowgraph_agrees_with_numpy(opt, batches):
    """The benchmark measures the right thing: flowgraph's step is the NumPy step."""
    xs, ys = batches
    assert bench_mlp.check_agreement(opt, True, xs, ys) < 1e-2
