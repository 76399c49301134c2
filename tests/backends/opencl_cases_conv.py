"""Parity cases for the OpenCL convolution and pooling kernels
(`flowgraph/backends/opencl/kernels_conv.py`); gathered by `test_opencl_parity`.

Shapes are never square and never multiples of a GEMM tile; they cover batch 1, one and
odd channel counts, strides 2 (and unequal strides), SAME/VALID/EXPLICIT padding,
dilations, NHWC and NCHW, 1x1 filters (the kernel's no-im2col path) and an empty batch.
Gradient ops get their upstream gradient and the forward output from the CPU kernels.
Pooling inputs are rounded to halves so that windows hold ties; one MaxPool(Grad) case
holds NaN and -inf.
"""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import kernels_conv as cpu_conv
from tests.backends.opencl_cases import F32, F64, I32, Case, _rand

# (input NHWC, filter [kh, kw, in, out], strides (h, w), padding, format, dilations (h, w))
_CONVS = [
    ((1, 5, 7, 1), (3, 3, 1, 2), (1, 1), "SAME", "NHWC", (1, 1)),
    ((2, 9, 6, 3), (3, 2, 3, 5), (2, 2), "VALID", "NHWC", (1, 1)),
    ((3, 10, 11, 5), (5, 3, 5, 7), (2, 2), "SAME", "NCHW", (1, 1)),
    ((2, 8, 7, 3), (3, 3, 3, 4), (1, 1), "SAME", "NHWC", (2, 2)),
    ((2, 9, 8, 3), (2, 3, 3, 2), (1, 2), "VALID", "NCHW", (2, 1)),
    ((2, 6, 5, 4), (1, 1, 4, 3), (1, 1), "VALID", "NHWC", (1, 1)),
    ((2, 6, 5, 4), (1, 1, 4, 3), (2, 2), "SAME", "NCHW", (1, 1)),
    ((2, 7, 8, 3), (3, 3, 3, 2), (2, 1), [[0, 0], [1, 2], [0, 3], [0, 0]], "NHWC", (1, 1)),
    ((1, 7, 6, 2), (2, 2, 2, 3), (1, 1), [[0, 0], [0, 0], [2, 0], [1, 1]], "NCHW", (1, 1)),
    ((1, 33, 35, 3), (3, 3, 3, 33), (1, 1), "SAME", "NHWC", (1, 1)),
    ((0, 5, 5, 2), (2, 2, 2, 3), (1, 1), "SAME", "NHWC", (1, 1)),
    ((0, 5, 5, 2), (2, 2, 2, 3), (2, 2), "VALID", "NCHW", (1, 1)),
]

# (input NHWC, window (h, w), strides (h, w), padding, format)
_POOLS = [
    ((1, 5, 7, 1), (2, 2), (2, 2), "VALID", "NHWC"),
    ((2, 9, 6, 3), (3, 3), (2, 2), "SAME", "NHWC"),
    ((3, 10, 11, 5), (3, 2), (1, 1), "SAME", "NCHW"),
    ((2, 7, 7, 3), (3, 3), (2, 2), "VALID", "NCHW"),
    ((2, 6, 5, 4), (1, 1), (1, 1), "VALID", "NHWC"),
    ((2, 5, 6, 3), (5, 4), (1, 2), "SAME", "NHWC"),
    ((2, 5, 6, 3), (2, 3), (3, 1), "SAME", "NCHW"),
    ((1, 17, 19, 33), (3, 3), (2, 2), "SAME", "NHWC"),
    ((0, 4, 4, 2), (2, 2), (2, 2), "SAME", "NHWC"),
    ((0, 4, 4, 2), (2, 2), (1, 1), "VALID", "NCHW"),
]


def _four(hw, fmt):
    h, w = hw
    return [1, 1, h, w] if fmt == "NCHW" else [1, h, w, 1]


def _layout(shape, fmt):
    n, h, w, c = shape
    return (n, c, h, w) if fmt == "NCHW" else (n, h, w, c)


def _conv_attrs(strides, padding, fmt, dilations):
    attrs = {"strides": _four(strides, fmt), "dilations": _four(dilations, fmt),
             "data_format": fmt, "padding": padding}
    if not isinstance(padding, str):
        pairs = [padding[i] for i in ((0, 3, 1, 2) if fmt == "NCHW" else range(4))]
        attrs["padding"], attrs["explicit_paddings"] = "EXPLICIT", [v for p in pairs for v in p]
    return attrs


def _conv_cases(op_type):
    cases = []
    for k, (shape, fshape, strides, padding, fmt, dil) in enumerate(_CONVS):
        dtype = F64 if k == 1 else F32
        attrs = _conv_attrs(strides, padding, fmt, dil)
        x = _rand(_layout(shape, fmt), dtype)
        f = _rand(fshape, dtype)
        y = cpu_conv.conv2d(x, f, **attrs)
        dy = _rand(y.shape, dtype)
        inputs = {"Conv2D": [x, f],
                  "Conv2DBackpropInput": [np.array(x.shape, I32), f, dy],
                  "Conv2DBackpropFilter": [x, np.array(f.shape, I32), dy]}[op_type]
        cases.append(Case(inputs, attrs, rtol=1e-4))
    return cases


def _pool_input(shape, dtype, special=False):
    x = np.round(_rand(shape, dtype) * 2) / 2  # halves: windows with ties
    if special and x.size:
        flat = x.reshape(-1)
        flat[::7] = -np.inf
        flat[3::11] = np.nan
    return x.astype(dtype)


def _pool_cases(op_type):
    cases = []
    for k, (shape, ksize, strides, padding, fmt) in enumerate(_POOLS):
        dtype = F64 if k == 1 else F32
        attrs = {"ksize": _four(ksize, fmt), "strides": _four(strides, fmt),
                 "padding": padding, "data_format": fmt}
        x = _pool_input(_layout(shape, fmt), dtype, special=k == 2)
        y = cpu_conv.max_pool(x, **attrs)
        dy = _rand(y.shape, dtype)
        inputs = {"MaxPool": [x], "AvgPool": [np.nan_to_num(x, posinf=0, neginf=0)],
                  "MaxPoolGrad": [x, y, dy],
                  "AvgPoolGrad": [np.array(x.shape, I32), dy]}[op_type]
        cases.append(Case(inputs, attrs))
    return cases


CASES = {
    **{op: _conv_cases(op) for op in ("Conv2D", "Conv2DBackpropInput",
                                      "Conv2DBackpropFilter")},
    **{op: _pool_cases(op) for op in ("MaxPool", "AvgPool", "MaxPoolGrad", "AvgPoolGrad")},
}
