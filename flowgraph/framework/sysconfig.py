"""``tf.sysconfig``: where flowgraph is installed and how it was built, for tools that
compile against it (flowgraph has no C++ API: its native parts are Cython extensions, so
`get_include` is the package directory holding their ``.pxd`` files).

Example
-------
>>> import os
>>> import flowgraph as tf
>>> os.path.isdir(tf.sysconfig.get_lib())
True
>>> tf.sysconfig.get_build_info()["is_cuda_build"]
False
"""

from __future__ import annotations

import os
import sysconfig as _py_sysconfig

__all__ = ["CXX11_ABI_FLAG", "CXX_VERSION", "MONOLITHIC_BUILD", "get_build_info",
           "get_compile_flags", "get_include", "get_lib", "get_link_flags"]

# How the native parts were compiled, with TensorFlow 2.15's names: the C++11 ABI
# (``-D_GLIBCXX_USE_CXX11_ABI=1``, GCC's default), C++17, and no monolithic shared library.
CXX11_ABI_FLAG = 1
CXX_VERSION = 201703
MONOLITHIC_BUILD = 0

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def get_include() -> str:
    """The directory of flowgraph's package (its Cython ``.pxd`` declarations)."""
    return _PACKAGE


def get_lib() -> str:
    """The directory of flowgraph's package, which holds its compiled extensions."""
    return _PACKAGE


def get_compile_flags() -> list[str]:
    """Flags to compile an extension against flowgraph and this Python."""
    return [f"-I{get_include()}", f"-I{_py_sysconfig.get_paths()['include']}"]


def get_link_flags() -> list[str]:
    """Flags to link an extension with this Python (flowgraph has no shared library)."""
    return [f"-L{_py_sysconfig.get_config_var('LIBDIR') or ''}"]


def get_build_info() -> dict:
    """How flowgraph was built: no CUDA or ROCm (devices come from backend plugins)."""
    from flowgraph.framework.versions import __version__

    return {"is_cuda_build": False, "is_rocm_build": False, "is_tensorrt_build": False,
            "flowgraph_version": __version__}
