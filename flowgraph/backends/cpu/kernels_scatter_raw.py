"""CPU kernels of `flowgraph/ops/scatter_raw_ops.py`: each reuses the kernel of the op
it generalizes (the scatter kernels' `_scatter_nd`, the slice assignment's `assigned`,
``GatherNd`` and ``DynamicStitch``)."""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.backends.cpu import kernels_scatter as _scatter
from flowgraph.backends.cpu import kernels_slice_assign as _slice_assign
from flowgraph.backends.cpu.kernels_array_index import gather_nd
from flowgraph.backends.cpu.kernels_resource_variable import _read
from flowgraph.backends.cpu.kernels_segment import dynamic_stitch

for _kind in ("Max", "Min"):
    cpu_kernel(f"ScatterNd{_kind}")(_scatter._nd_kernel(_kind))
cpu_kernel("ScatterNdNonAliasingAdd", fresh=True)(_scatter._tensor_kernel("Add"))
cpu_kernel("ParallelDynamicStitch")(dynamic_stitch)


@cpu_kernel("ResourceGatherNd", fresh=True)
def resource_gather_nd(handle, indices, *, op, **attrs):
    return np.array(gather_nd(_read(handle, op), indices))


@cpu_kernel("TensorStridedSliceUpdate", fresh=True)
def tensor_strided_slice_update(x, begin, end, strides, value, *, op, **attrs):
    masks = {m: attrs.get(m, 0) for m in _slice_assign.MASKS}
    return _slice_assign.assigned(op, "input", np.asarray(x), begin, end, strides, value,
                                  masks)
