"""OpenBLAS's kernel set chosen at ``import flowgraph`` (`flowgraph/framework/openblas_env.py`)
and the BLAS contention policy (`flowgraph/backends/cpu/blas_threads.py`)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import flowgraph as tf
from flowgraph.backends.cpu import blas_threads, kernel_pool
from flowgraph.backends.cpu.blas_threads import ContentionPolicy, _runnable
from flowgraph.framework import openblas_env

AVX512 = set(openblas_env.AVX512)
HAS_AVX512 = AVX512 <= openblas_env.cpu_flags()


def _python(code: str, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items()
             if k not in ("OPENBLAS_CORETYPE", openblas_env.OPT_OUT)}
    return subprocess.run([sys.executable, "-W", "always", "-c", code], env={**clean, **env},
                          capture_output=True, text=True, check=True, timeout=120)


# -- OPENBLAS_CORETYPE -------------------------------------------------------------------
@pytest.mark.parametrize("environ, modules, flags, expected", [
    ({}, {}, AVX512, "set"),
    ({}, {}, AVX512 | {"avx2"}, "set"),
    ({}, {}, AVX512 - {"avx512bw"}, ""),  # SkylakeX's kernels need every subset
    ({}, {}, set(), ""),                  # not Linux, or no /proc/cpuinfo
    ({"OPENBLAS_CORETYPE": "Zen"}, {}, AVX512, ""),  # the user's choice wins
    ({openblas_env.OPT_OUT: "1"}, {}, AVX512, ""),
    ({openblas_env.OPT_OUT: ""}, {}, AVX512, "set"),
    ({}, {"numpy": object()}, AVX512, "check"),   # too late: check what NumPy loaded
])
def test_decide(environ, modules, flags, expected):
    assert openblas_env.decide(environ, modules, flags) == expected


def test_cpu_flags_reads_the_first_flags_line(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nflags\t\t: fpu avx512f avx2\nflags\t: other\n")
    assert openblas_env.cpu_flags(str(info)) == {"fpu", "avx512f", "avx2"}
    assert openblas_env.cpu_flags(str(tmp_path / "missing")) == set()


@pytest.mark.skipif(not HAS_AVX512, reason="the CPU lacks the AVX-512 subsets")
def test_import_flowgraph_selects_skylakex_kernels_before_numpy_loads():
    out = _python("import os, flowgraph\n"
                  "from threadpoolctl import threadpool_info\n"
                  "print(os.environ.get('OPENBLAS_CORETYPE'))\n"
                  "print(sorted({i['architecture'] for i in threadpool_info()\n"
                  "              if i['internal_api'] == 'openblas'}))")
    coretype, kernels = out.stdout.split("\n")[:2]
    assert coretype == "SkylakeX"
    assert kernels == "['SkylakeX']"
    assert "OpenBLAS" not in out.stderr


@pytest.mark.slow  # three fresh interpreters
def test_opt_out_and_user_choice_leave_the_variable_alone():
    code = "import os, flowgraph; print(os.environ.get('OPENBLAS_CORETYPE'))"
    assert _python(code, FLOWGRAPH_NO_CORETYPE="1").stdout.strip() == "None"
    assert _python(code, OPENBLAS_CORETYPE="Haswell").stdout.strip() == "Haswell"
    if not HAS_AVX512:
        assert _python(code).stdout.strip() == "None"


@pytest.mark.slow  # two fresh interpreters
@pytest.mark.skipif(not HAS_AVX512, reason="the CPU lacks the AVX-512 subsets")
def test_numpy_imported_first_with_avx2_kernels_warns_once_with_the_fix():
    # NumPy loads Haswell kernels; then the variable is gone, as if never set.
    code = ("import os\n"
            "os.environ['OPENBLAS_CORETYPE'] = 'Haswell'\n"
            "import numpy\n"
            "del os.environ['OPENBLAS_CORETYPE']\n"
            "import flowgraph\n"
            "import importlib\n"
            "importlib.reload(flowgraph)\n"
            "print(os.environ.get('OPENBLAS_CORETYPE'))\n")
    out = _python(code)
    assert out.stdout.strip() == "None"  # too late to change the kernels
    assert out.stderr.count("RuntimeWarning") == 1
    assert "Haswell (AVX2) kernels" in out.stderr
    assert "import flowgraph before numpy" in out.stderr
    assert "OPENBLAS_CORETYPE=SkylakeX" in out.stderr and "1.7x" in out.stderr
    assert "FLOWGRAPH_NO_CORETYPE=1" in out.stderr
    # NumPy first but already on AVX-512 kernels: nothing to say
    quiet = _python("import numpy, flowgraph", OPENBLAS_CORETYPE="SkylakeX")
    assert "RuntimeWarning" not in quiet.stderr


# -- contention policy -------------------------------------------------------------------
@pytest.mark.parametrize("cores, others, expected", [
    (2, 0.0, 2), (2, 0.6, 2), (2, 1.3, 2), (2, 2.0, 2), (2, 2.6, 1), (2, 5.0, 1),
    (16, 0.0, 16), (16, 15.9, 16), (16, 20.2, 12), (16, 40.0, 1),
])
def test_threads_for_the_cores_left_free(cores, others, expected):
    assert ContentionPolicy.threads_for(cores, others) == expected


def test_policy_is_off_where_the_user_fixed_the_threads():
    assert ContentionPolicy.enabled({})
    for env in ({"FLOWGRAPH_BLAS_POLICY": "off"}, {"FLOWGRAPH_BLAS_POLICY": "0"},
                {"OPENBLAS_NUM_THREADS": "2"}, {"OMP_NUM_THREADS": "1"}):
        assert not ContentionPolicy.enabled(env)


def test_runnable_reads_the_fourth_field_of_loadavg(tmp_path):
    loadavg = tmp_path / "loadavg"
    loadavg.write_text("9.32 10.14 8.60 9/609 24607\n")
    assert _runnable(str(loadavg)) == 9
    assert _runnable(str(tmp_path / "missing")) is None
    loadavg.write_text("garbage\n")
    assert _runnable(str(loadavg)) is None


def test_others_count_waiting_threads_beyond_the_cores(monkeypatch):
    """What CPU time could not show (other processes use at most the cores there are):
    a dozen runnable threads on 2 cores are others beyond the cores."""
    monkeypatch.setattr(blas_threads.os, "cpu_count", lambda: 2)
    policy = ContentionPolicy([_Controller(2)], {0, 1})
    assert policy.others(1.0, 0.0) == 0.0  # only the sampling thread
    assert policy.others(3.2, 0.2) == pytest.approx(2.0)  # one busy process per core
    assert policy.others(14.0, 1.0) == pytest.approx(12.0)
    assert policy.threads_for(2, policy.others(14.0, 1.0)) == 1
    monkeypatch.setattr(blas_threads.os, "cpu_count", lambda: 8)  # 2 of 8 cores ours
    assert policy.others(14.0, 1.0) == pytest.approx(3.0)


class _Controller:
    def __init__(self, n):
        self.num_threads = n

    def set_num_threads(self, n):
        self.num_threads = n


def test_others_update_and_the_step_limit(monkeypatch):
    """Two cores: 2.8 threads runnable on average (1 the sampler's), 0.5 of them ours."""
    monkeypatch.setattr(blas_threads.os, "cpu_count", lambda: 2)
    controller = _Controller(2)
    policy = ContentionPolicy([controller], {0, 1})
    others = policy.others(2.8, 0.5)
    assert others == pytest.approx(1.3)
    monkeypatch.setattr(ContentionPolicy, "current", policy)
    monkeypatch.setattr(kernel_pool, "_available", kernel_pool._available)
    monkeypatch.setattr(blas_threads, "_blas_controllers", lambda: [controller])

    assert policy.update(others) == 2  # two busy processes fit beside us: keep 2
    assert policy.split_products  # ... but products go to the kernel threads
    assert kernel_pool._available == 2
    assert policy.update(3.0) == 1  # more than the cores: one BLAS thread
    assert policy.split_products and kernel_pool._available == 2  # kernel threads block
    with blas_threads.contention_limited():
        assert controller.num_threads == 1 and blas_threads.products_split()
        # A plan compiled inside the limited step still sees BLAS as parallel.
        assert blas_threads.planned_blas_threads() == 2
    assert controller.num_threads == 2  # restored after the step
    assert blas_threads.planned_blas_threads() == 2
    with blas_threads.blas_threads_limited(1):  # a limit the user chose counts
        assert blas_threads.planned_blas_threads() == 1

    assert not blas_threads.products_split()
    controller.num_threads = 2
    policy.update(0.1)
    assert blas_threads.contention_limited() is None  # no contention: nothing to do
    assert not policy.split_products and kernel_pool._available == 2
    policy.update(3.5)
    controller.num_threads = 1  # the user's threadpool_limits(1) ... is left alone
    assert blas_threads.contention_limited() is None


def test_cpu_backend_intra_op_limit_uses_the_policy_for_zero(monkeypatch):
    from flowgraph.backends.cpu import backend as cpu

    monkeypatch.setattr(ContentionPolicy, "current", None)
    assert cpu.intra_op_limit(0) is None
    with cpu.intra_op_limit(1):
        assert blas_threads.blas_threads() == 1 and kernel_pool.threads() == 1


def test_intra_op_parallelism_threads_limits_the_kernel_pool():
    seen = tf.py_func(lambda: __import__("numpy").int64(kernel_pool.threads()), [],
                      tf.int64)
    with tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=1)) as sess:
        assert sess.run(seen) == 1


def test_overlapping_limits_with_different_counts_restore_blas_in_any_order(monkeypatch):
    """Two threads' blocks with different counts, closed in either order: BLAS follows
    the newest open block and ends at its count from before the first. (A fake BLAS
    handle: OpenBLAS 0.3.31 ignores a raise from a thread while another thread's lower
    count stands, which is not what this checks.)"""
    import threading

    class FakeBlas:
        num_threads = 4

        def set_num_threads(self, n):
            self.num_threads = n

    fake = FakeBlas()
    monkeypatch.setattr(blas_threads, "_blas_controllers", lambda: [fake])
    for close_first in ("outer", "inner"):
        outer_in, inner_in = threading.Event(), threading.Event()
        release = {"outer": threading.Event(), "inner": threading.Event()}

        def block(name, n, entered, wait_for=None, release=release):
            if wait_for is not None:
                wait_for.wait(5)
            with blas_threads.blas_threads_limited(n):
                entered.set()
                release[name].wait(5)

        a = threading.Thread(target=block, args=("outer", 1, outer_in))
        b = threading.Thread(target=block, args=("inner", 2, inner_in, outer_in))
        a.start()
        b.start()
        inner_in.wait(5)
        assert fake.num_threads == 2
        release[close_first].set()
        (a if close_first == "outer" else b).join(5)
        assert fake.num_threads == (2 if close_first == "outer" else 1)
        release["inner" if close_first == "outer" else "outer"].set()
        a.join(5)
        b.join(5)
        assert fake.num_threads == 4, close_first


def test_a_session_run_on_another_thread_limits_blas_after_the_main_thread_did():
    """threadpoolctl 3.8 lets only the first thread that set a limit change OpenBLAS's
    count (it silently ignored the others): `intra_op_parallelism_threads=1` of a
    session run on a second thread left BLAS on every core."""
    import threading

    import numpy as np

    if blas_threads.blas_threads() < 2:
        pytest.skip("BLAS runs on one thread here already")
    with blas_threads.blas_threads_limited(1):  # the main thread takes threadpoolctl's control
        pass
    seen = tf.py_func(lambda: np.int64(blas_threads.blas_threads()), [], tf.int64)
    out = {}

    def run():
        with tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=1)) as sess:
            out["blas"] = sess.run(seen)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(30)
    assert out == {"blas": 1}
    assert blas_threads.blas_threads() >= 2  # and back after the run
