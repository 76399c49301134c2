"""CPU kernel of ``MatchingFiles`` (`flowgraph/ops/matching_files_ops.py`): `glob`."""

from __future__ import annotations

import glob

import numpy as np

from flowgraph.backends.cpu import cpu_kernel


@cpu_kernel("MatchingFiles", fresh=True)
def matching_files(pattern):
    names = set()
    for p in np.asarray(pattern, dtype=object).reshape(-1):
        text = p.decode() if isinstance(p, bytes) else str(p)
        names.update(glob.glob(text))
    return np.array([n.encode() for n in sorted(names)], dtype=object).reshape(-1)
