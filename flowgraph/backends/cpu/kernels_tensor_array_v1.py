"""CPU kernels of the TensorArray v1/v2 op types (`flowgraph/ops/tensor_array_v1_ops.py`).

Their arrays are `RunTensorArray` objects, as ``TensorArrayV3``'s: the creating ops
return the handle alone (no flow output), ``TensorArrayPack``/``Unpack`` gather or
scatter every element, and everything else is the ``V3`` kernel under the v1 and v2
names.
"""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import backend, cpu_kernel
from flowgraph.backends.cpu import kernels_tensor_array as _v3
from flowgraph.ops.tensor_array_v1_ops import _FAMILY

for _later, _names in _FAMILY.items():
    for _k in backend.kernels().get(_later, ()):
        for _name in _names:
            backend.register_kernel(_name, _k.fn, dtypes=_k.dtypes, needs_step=_k.needs_step,
                                    is_async=_k.is_async, fresh=_k.fresh,
                                    host_inputs=_k.host_inputs)


def _create(size, *, dtype, element_shape, dynamic_size, clear_after_read, tensor_array_name):
    handle, _ = _v3.tensor_array_v3(
        size, dtype=dtype, element_shape=element_shape, dynamic_size=dynamic_size,
        clear_after_read=clear_after_read, identical_element_shapes=False,
        tensor_array_name=tensor_array_name)
    return handle


cpu_kernel("TensorArray")(_create)
cpu_kernel("TensorArrayV2")(_create)


def _grad(handle, flow_in, *, source):
    return _v3.tensor_array_grad_v3(handle, flow_in, source=source)[0]


cpu_kernel("TensorArrayGrad")(_grad)
cpu_kernel("TensorArrayGradV2")(_grad)


@cpu_kernel("TensorArrayGradWithShape")
def tensor_array_grad_with_shape(handle, flow_in, shape_to_prepend, *, source):
    """The gradient array, its element shape `shape_to_prepend` + the array's own (for
    gradients of batched elements)."""
    ta = _v3._array(handle, "TensorArrayGradWithShape")
    fresh = source not in ta.grads
    g, flow = _v3.tensor_array_grad_v3(handle, flow_in, source=source)
    if fresh and ta.element_shape is not None:
        prefix = tuple(int(d) for d in np.asarray(shape_to_prepend).reshape(-1))
        g.element_shape = (*prefix, *ta.element_shape)
    return g, flow


@cpu_kernel("TensorArrayPack")
def tensor_array_pack(handle, flow_in, *, element_shape):
    ta = _v3._array(handle, "TensorArrayPack")
    return _v3._gather(ta, np.arange(ta.size()), "TensorArrayPack", element_shape)


@cpu_kernel("TensorArrayUnpack")
def tensor_array_unpack(handle, value, flow_in):
    value = np.asarray(value)
    n = value.shape[0] if value.ndim else 0
    return _v3.tensor_array_scatter_v3(handle, np.arange(n), value, flow_in)
