"""pytest-benchmark versions of `run.py`'s workloads (fewer repeats; no ratios or targets).

Not part of the default test run (pytest's testpaths is ``tests/``)::

    python -m pytest benchmarks --benchmark-only

Each flowgraph benchmark has its NumPy reference beside it (same group), so the table
pytest-benchmark prints compares them directly.
"""

import concurrent.futures
import subprocess
import sys

import numpy as np
import pytest
import workloads


def _session_bench(benchmark, w, inter_op=1, rounds=20):
    with w.session(inter_op) as sess:
        w.run(sess)  # compile the plan
        benchmark.pedantic(w.run, args=(sess,), rounds=rounds, warmup_rounds=2)


@pytest.mark.benchmark(group="import")
@pytest.mark.parametrize("module", ["flowgraph", "numpy"])
def test_import_time(benchmark, module):
    cmd = [sys.executable, "-c", f"import {module}"]
    benchmark.pedantic(subprocess.run, args=(cmd,), kwargs={"check": True}, rounds=3)


@pytest.mark.benchmark(group="session_overhead")
def test_session_overhead(benchmark):
    w = workloads.one_op()
    with w.session() as sess:
        w.run(sess)  # compile the plan
        benchmark(w.run, sess)


@pytest.mark.benchmark(group="session_overhead")
def test_session_overhead_reference(benchmark):
    benchmark(workloads.one_op().reference)


@pytest.fixture(scope="module")
def chain():
    return workloads.chain(1000)


@pytest.fixture(scope="module")
def wide():
    return workloads.wide(1000)


@pytest.mark.benchmark(group="chain_1000")
def test_chain(benchmark, chain):
    _session_bench(benchmark, chain)


@pytest.mark.benchmark(group="chain_1000")
def test_chain_reference(benchmark, chain):
    benchmark(chain.reference)


@pytest.mark.benchmark(group="chain_1000")
def test_chain_reference_ndarray(benchmark, chain):
    benchmark(chain.ndarray_reference)


@pytest.mark.benchmark(group="wide_1000")
def test_wide(benchmark, wide):
    _session_bench(benchmark, wide)


@pytest.mark.benchmark(group="wide_1000")
def test_wide_reference(benchmark, wide):
    benchmark(wide.reference)


@pytest.fixture(scope="module")
def gathers():
    return workloads.gathers()


@pytest.fixture(scope="module")
def matmuls():
    return workloads.matmuls()


@pytest.mark.benchmark(group="parallel")
@pytest.mark.parametrize("threads", [1, 2])
def test_parallel(benchmark, gathers, threads):
    _session_bench(benchmark, gathers.workload, threads, rounds=3)


@pytest.mark.benchmark(group="parallel")
@pytest.mark.parametrize("threads", [1, 2])
def test_parallel_reference(benchmark, gathers, threads):
    _pool_bench(benchmark, gathers, threads)


@pytest.mark.benchmark(group="parallel_matmul")
@pytest.mark.parametrize("threads", [1, 2])
def test_parallel_matmul(benchmark, matmuls, threads):
    _session_bench(benchmark, matmuls.workload, threads, rounds=3)


@pytest.mark.benchmark(group="parallel_matmul")
@pytest.mark.parametrize("threads", [1, 2])
def test_parallel_matmul_reference(benchmark, matmuls, threads):
    _pool_bench(benchmark, matmuls, threads)


def _pool_bench(benchmark, pw, threads):
    if threads == 1:
        benchmark.pedantic(pw.serial, rounds=3, warmup_rounds=1)
        return
    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        benchmark.pedantic(pw.pooled, args=(pool,), rounds=3, warmup_rounds=1)


def test_workloads_agree_with_their_references(chain, wide):
    """The benchmarks measure the right thing: flowgraph computes what NumPy does."""
    for w in (workloads.one_op(), chain, wide):
        with w.session() as sess:
            np.testing.assert_allclose(w.run(sess), w.reference(), rtol=1e-6)
