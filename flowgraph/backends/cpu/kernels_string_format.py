"""The CPU kernel of ``StringFormat`` (ops/string_format_ops.py)."""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel


@cpu_kernel("StringFormat")
def string_format(*values, template, placeholder, summarize):
    from flowgraph.ops.logging_ops import summarize_v2

    pieces = template.split(placeholder)
    out = [pieces[0]]
    for value, text in zip(values, pieces[1:]):
        out.append(summarize_v2(value, summarize))
        out.append(text)
    return np.array("".join(out).encode("utf-8"), dtype=object)
