"""Build the Cython extension modules; metadata lives in pyproject.toml."""

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

extensions = [
    Extension(
        "flowgraph.runtime._executor",
        ["flowgraph/runtime/_executor.pyx"],
        extra_compile_args=["-O2"],
    ),
]

setup(
    ext_modules=cythonize(
        extensions,
        compiler_directives={"language_level": "3"},
        quiet=True,
    ),
    include_dirs=[numpy.get_include()],
)
