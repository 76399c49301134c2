"""``tf.dtypes``: the type objects of `flowgraph.framework.dtypes` plus the ops TensorFlow
files under this namespace (``cast``, ``saturate_cast``, ``complex``, ``as_string``) and
``tf.dtypes.experimental`` (float8 and 4-bit integer types: names and classification only,
no kernel computes in them, as in TensorFlow's CPU build).

Example
-------
>>> import flowgraph as tf
>>> tf.dtypes.cast(tf.constant([1.7]), tf.int32).op.type
'Cast'
>>> tf.dtypes.experimental.int4.is_integer
True
"""

import types as _types

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.dtypes import *  # noqa: F403
from flowgraph.ops.math_ops import cast
from flowgraph.ops.spectral_ops import complex
from flowgraph.ops.string_hash_ops import as_string
from flowgraph.ops.tensor_compat import saturate_cast

experimental = _types.SimpleNamespace(
    float8_e5m2=_dtypes.DType(24), float8_e4m3fn=_dtypes.DType(25),
    int4=_dtypes.DType(29), uint4=_dtypes.DType(30))

__all__ = [*_dtypes.__all__, "as_string", "cast", "complex", "experimental", "saturate_cast"]


def __getattr__(name: str):
    # everything else of the framework module (its private helpers too)
    return getattr(_dtypes, name)
