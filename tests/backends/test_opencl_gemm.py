"""The GPU-form GEMM (`flowgraph.backends.opencl.gemm`): every tile candidate against
NumPy on whatever OpenCL device there is, and the tuner's on-disk cache."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.backends.opencl_support import opencl_devices

opencl_devices()

from flowgraph.backends.opencl import gemm, kernels_nn  # noqa: E402
from flowgraph.backends.opencl._runtime import discover  # noqa: E402
from flowgraph.backends.opencl.kernels_elementwise import launch, operand  # noqa: E402

_rng = np.random.default_rng(7)


@pytest.mark.parametrize("name", sorted(gemm.CANDIDATES))
def test_every_tile_matches_numpy(name):
    tile = gemm.CANDIDATES[name]
    assert tile.valid()
    rt = discover()[0]
    # shapes below, at and above one tile, not multiples of 4, K smaller than bk
    for m, k, n in [(1, 1, 1), (5, 3, 7), (tile.bm, tile.bk, tile.bn),
                    (tile.bm + 3, 2 * tile.bk + 5, tile.bn + 9), (70, 33, 130)]:
        for ta in (False, True):
            for tb in (False, True):
                a = _rng.standard_normal((k, m) if ta else (m, k)).astype(np.float32)
                b = _rng.standard_normal((n, k) if tb else (k, n)).astype(np.float32)
                got = gemm.run_tiled(rt, tile, rt.to_device(a), rt.to_device(b), m, n, k,
                                     ta, tb, launch, operand).get()
                want = (a.T if ta else a) @ (b.T if tb else b)
                np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * k,
                                           err_msg=f"{name} M={m} K={k} N={n} ta={ta} tb={tb}")


def test_a_view_with_an_offset():
    rt = discover()[0]
    big = _rng.standard_normal((9, 20)).astype(np.float32)
    dev = rt.to_device(big)
    a = dev[3:8]  # rows 3..7: a view with an element offset
    b = rt.to_device(_rng.standard_normal((20, 6)).astype(np.float32))
    got = gemm.run_tiled(rt, gemm.CANDIDATES["64x64x16/4x4"], kernels_nn.contiguous(rt, a), b,
                         5, 6, 20, False, False, launch, operand).get()
    np.testing.assert_allclose(got, big[3:8] @ b.get(), rtol=1e-4, atol=1e-4)


def test_size_classes():
    assert gemm.size_class(64, 64, 64) == "small"
    assert gemm.size_class(256, 784, 512) == "medium"
    assert gemm.size_class(2048, 2048, 2048) == "large"
    assert gemm.size_class(4096, 4096, 4096) == "huge"


def test_tuner_measures_once_and_caches_on_disk(tmp_path, monkeypatch):
    rt = discover()[0]
    monkeypatch.setenv("FLOWGRAPH_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(gemm, "_choices", {})
    monkeypatch.setattr(rt, "gemm_choice", None)
    monkeypatch.setattr(gemm, "_tunable", lambda rt: True)
    monkeypatch.setattr(gemm, "SIZE_CLASSES", (("small", 2 ** 21, (8, 8, 8)),
                                               ("medium", 2 ** 28, (16, 16, 16)),
                                               ("large", 2 ** 34, (24, 24, 24)),
                                               ("huge", None, (32, 32, 32))))
    calls = []
    real_tune = gemm.tune

    def counting_tune(rt, run_direct, repeats=3):
        calls.append(1)
        return real_tune(rt, run_direct, repeats=1)

    monkeypatch.setattr(gemm, "tune", counting_tune)

    def direct(a, b, m, n, k):
        return kernels_nn._matmul_direct(rt, a, b, m, n, k, 0, 0)

    first = gemm.choose(rt, "medium", direct)
    assert first == gemm.DIRECT or first in gemm.CANDIDATES
    saved = json.loads((tmp_path / "opencl_gemm.json").read_text())
    assert saved[gemm.device_key(rt)]["medium"] == first
    monkeypatch.setattr(gemm, "_choices", {})
    monkeypatch.setattr(rt, "gemm_choice", None)  # a new process: read from the file
    assert gemm.choose(rt, "medium", direct) == first
    assert calls == [1]
    # a damaged file is measured again, not trusted
    (tmp_path / "opencl_gemm.json").write_text('{"' + gemm.device_key(rt) + '": {"small": 3}}')
    monkeypatch.setattr(gemm, "_choices", {})
    monkeypatch.setattr(rt, "gemm_choice", None)
    gemm.choose(rt, "small", direct)
    assert calls == [1, 1]


def test_tuning_off_takes_the_defaults(monkeypatch):
    rt = discover()[0]
    monkeypatch.setenv("FLOWGRAPH_OPENCL_TUNE", "0")
    monkeypatch.setattr(gemm, "_tunable", lambda rt: True)
    monkeypatch.setattr(gemm, "_choices", {})
    monkeypatch.setattr(rt, "gemm_choice", None)
    assert gemm.choose(rt, "large", None) == gemm.DEFAULT["large"]


def test_the_choice_belongs_to_its_runtime(monkeypatch):
    """A new runtime (another context on the same device) asks again instead of taking a
    collected runtime's choice through a reused id()."""
    from flowgraph.backends.opencl._runtime import DeviceRuntime

    rt = discover()[0]
    monkeypatch.setenv("FLOWGRAPH_OPENCL_TUNE", "0")
    monkeypatch.setattr(gemm, "_choices", {})
    monkeypatch.setattr(rt, "gemm_choice", {"small": "64x64x16/4x4", "medium": gemm.DIRECT,
                                            "large": gemm.DIRECT, "huge": gemm.DIRECT})
    assert gemm.choose(rt, "small", None) == "64x64x16/4x4"
    fresh = DeviceRuntime(rt.cl, rt.device)
    assert fresh.gemm_choice is None
    assert gemm.choose(fresh, "small", None) == gemm.DEFAULT["small"]
    assert fresh.gemm_choice == gemm.DEFAULT
