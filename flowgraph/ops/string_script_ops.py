"""``tf.strings.unicode_script``: the ICU script code (``UScriptCode``, int32) of each
Unicode code point, TensorFlow's ``UnicodeScript`` op. The codes come from a table of
the whole code space (`flowgraph/ops/string_script_table.py`, equal to TensorFlow
2.15's ICU data); the kernel is in `flowgraph/backends/cpu/kernels_string_ngrams.py`.

Common codes: 0 Common, 1 Inherited, 2 Arabic, 8 Cyrillic, 10 Devanagari, 14 Greek,
17 Han, 18 Hangul, 19 Hebrew, 20 Hiragana, 22 Katakana, 25 Latin, 38 Thai,
103 Unknown (unassigned, private use); -1 for values outside ``[0, 0x10FFFF]``.

Example
-------
>>> import flowgraph as tf
>>> tf.Session().run(tf.strings.unicode_script([0x41, 0x416, 0x4E2D, -1])).tolist()
[25, 8, 17, -1]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.ops.op_util import fixed_dtype, make_tensor

__all__ = ["unicode_script"]


@register_op("UnicodeScript", dtype_fn=fixed_dtype(_dtypes.int32))
def _script_shape(op, x):
    return [x]


not_differentiable("UnicodeScript")


def unicode_script(input, name=None):
    """The ICU script code of each code point of the int32 tensor `input` (same shape).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.strings.unicode_script([0x3B1, 0x20])).tolist()
    [14, 0]
    """
    with name_scope(name, "UnicodeScript", [input]):
        x = convert_to_tensor(input, dtype_hint=_dtypes.int32, name="input")
        if x.dtype.base_dtype != _dtypes.int32:
            raise TypeError(f"Input 'input' of 'UnicodeScript' Op has type "
                            f"{x.dtype.base_dtype.name} that does not match expected type of "
                            "int32.")
        return make_tensor("UnicodeScript", [x], name="UnicodeScript")
