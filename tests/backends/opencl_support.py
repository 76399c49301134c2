"""Shared by the OpenCL test modules: skip without a device, except in CI."""

from __future__ import annotations

import os

import pytest

from flowgraph.backends import list_devices


def opencl_devices() -> list:
    """The OpenCL (GPU-type) devices; skips the calling module when there are none,
    except in CI (CI=true installs PoCL), where that is an error."""
    found = [d for d in list_devices() if d.device_type == "GPU"]
    if not found:
        if os.environ.get("CI"):
            raise RuntimeError("CI must run the OpenCL tests, but no OpenCL device was "
                               "found: install pyopencl (flowgraph[opencl]) and "
                               "pocl-opencl-icd")
        pytest.skip("no OpenCL device (pip install 'flowgraph[opencl]' and an OpenCL "
                    "driver)", allow_module_level=True)
    return found
