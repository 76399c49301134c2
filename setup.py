"""Build the Cython extension modules (every .pyx under flowgraph/); metadata lives in
pyproject.toml, except the license (see there)."""

import glob
import os

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup


def _extensions():
    for path in sorted(glob.glob("flowgraph/**/*.pyx", recursive=True)):
        module = os.path.splitext(path)[0].replace(os.sep, ".")
        # C headers beside a .pyx (included from it): a changed header rebuilds it
        headers = sorted(glob.glob(os.path.join(os.path.dirname(path), "*.h")))
        yield Extension(module, [path], include_dirs=[numpy.get_include()],
                        depends=headers, extra_compile_args=["-O3"])


setup(
    license="Apache-2.0",
    ext_modules=cythonize(
        list(_extensions()),
        compiler_directives={"language_level": "3"},
        quiet=True,
    ),
)
