"""Parity cases for the OpenCL kernels on variables: `VariableV2`, assignments,
`IsVariableInitialized` and the optimizer updates (``Apply*``, ``SparseApply*``).

These ops take variables (refs), which placeholders cannot stand for: a `VarCase` turns
its first `refs` inputs into variables initialized from the fed values (the harness runs
``tf.global_variables_initializer()`` with the feeds before the compared run), passes the
other inputs as fed tensors, and fetches the op's outputs and then every variable after
the op ran (the slots of an optimizer update included).
"""

from __future__ import annotations

import numpy as np

import flowgraph as tf
from flowgraph.ops.op_util import make_op
from tests.backends.opencl_cases import F32, F64, I32, Case, _pos, _rand

I64 = np.int64


class VarCase(Case):
    """`inputs[:refs]` become variables (left uninitialized with ``initialized=False``:
    they are kept out of the global collection)."""

    def __init__(self, inputs, refs=1, attrs=None, outputs=1, rtol=1e-5, initialized=True):
        super().__init__(inputs, attrs, outputs=outputs, rtol=rtol)
        self.refs, self.initialized = refs, initialized

    def build(self, op_type, placeholders):
        collections = None if self.initialized else []
        variables = [tf.Variable(ph, collections=collections, validate_shape=False)
                     for ph in placeholders[:self.refs]]
        refs = [v._ref() for v in variables]
        if op_type == "VariableV2":
            return refs[0].op, refs
        op = make_op(op_type, refs + list(placeholders[self.refs:]), dict(self.attrs))
        # Fetched refs are read when the step ends: the values after the update.
        return op, list(op.outputs[:self.outputs]) + refs[1:]


def _scalars(*values, dtype=F32):
    return [np.asarray(v, dtype) for v in values]


# op type (dense form) -> (slot generators, scalar values, extra attrs variants)
_HYPER = {
    "ApplyGradientDescent": ([], [0.3], [{}]),
    "ApplyMomentum": ([_rand], [0.1, 0.9], [{"use_nesterov": False},
                                            {"use_nesterov": True}]),
    "ApplyAdagrad": ([_pos], [0.2], [{"update_slots": True}, {"update_slots": False}]),
    "ApplyAdam": ([_rand, _pos], [0.9 ** 3, 0.999 ** 3, 0.01, 0.9, 0.999, 1e-7],
                  [{"use_nesterov": False}, {"use_nesterov": True}]),
    "ApplyRMSProp": ([_pos, _rand], [0.05, 0.9, 0.5, 1e-6], [{}]),
    "ApplyCenteredRMSProp": ([lambda s, d=F32: _rand(s, d, -0.1, 0.1), _pos, _rand],
                             [0.05, 0.9, 0.5, 1e-6], [{}]),
    "ApplyFtrl": ([_pos, _rand], [0.1, 0.5, 0.2, -0.5], [{}]),
    "ApplyFtrlV2": ([_pos, _rand], [0.1, 0.5, 0.2, 0.3, -0.5], [{}]),
    "ApplyAdadelta": ([_pos, _pos], [1.0, 0.95, 1e-6], [{}]),
}
# FTRL with lr_power != -0.5 takes the pow path.
_OTHER_SCALARS = {"ApplyFtrl": [0.1, 0.5, 0.2, -0.7], "ApplyFtrlV2": [0.1, 0.5, 0.2, 0.3, -0.7]}


def _inputs(op_type, var, slots, grad, scalars, indices=None):
    """Inputs in the op's order (`flowgraph.ops.training_ops._SIGNATURES`)."""
    from flowgraph.ops.training_ops import _SIGNATURES

    names, num_refs, _ = _SIGNATURES[op_type]
    refs = [var, *slots]
    rest = iter(scalars)
    out = []
    for k, name in enumerate(names):
        if k < num_refs:
            out.append(refs[k])
        elif name in ("grad", "delta"):
            out.append(grad)
        elif name == "indices":
            out.append(indices)
        else:
            out.append(next(rest))
    return out, num_refs


def _apply_cases(op_type):
    gens, scalars, variants = _HYPER[op_type]
    cases = []
    shapes = [(7,), (3, 5), (1000,), ()]
    for shape in shapes:
        for attrs in variants:
            slots = [g(shape) for g in gens]
            inputs, refs = _inputs(op_type, _rand(shape), slots, _rand(shape),
                                         _scalars(*scalars))
            cases.append(VarCase(inputs, refs, attrs))
    if op_type in _OTHER_SCALARS:
        inputs, refs = _inputs(op_type, _rand((4, 3)), [g((4, 3)) for g in gens],
                                     _rand((4, 3)), _scalars(*_OTHER_SCALARS[op_type]))
        cases.append(VarCase(inputs, refs, variants[0]))
    inputs, refs = _inputs(op_type, _rand((4, 3), F64), [g((4, 3), F64) for g in gens],
                                 _rand((4, 3), F64), _scalars(*scalars, dtype=F64))
    cases.append(VarCase(inputs, refs, variants[-1]))
    return cases


def _sparse_cases(op_type):
    dense = op_type.removeprefix("Sparse")
    gens, scalars, variants = _HYPER[dense]
    cases = []
    for var_shape, indices, dtype, idx_dtype in [
            ((6, 4), [3, 0, 3, 5], F32, I32),        # a duplicate: summed once
            ((10,), [9, 2, 2, 2, 0], F32, I64),       # 1-D variable, three duplicates
            ((5, 2, 3), [4, 1], F32, I32),            # rows of several dimensions
            ((6, 4), [], F32, I32),                   # no indices
            ((7, 3), [6, 6, 1], F64, I64)]:
        for attrs in variants:
            idx = np.asarray(indices, idx_dtype)
            grad = _rand((idx.size, *var_shape[1:]), dtype)
            slots = [g(var_shape, dtype) for g in gens]
            inputs, refs = _inputs(op_type, _rand(var_shape, dtype), slots, grad,
                                   _scalars(*scalars, dtype=dtype), idx)
            cases.append(VarCase(inputs, refs, attrs))
    return cases


def _assign_cases():
    return [VarCase([_rand((3, 5)), _rand((3, 5))]),
            VarCase([_rand((3, 5)), _rand((4, 2))], attrs={"validate_shape": False}),
            VarCase([_rand((1000,), F64), _rand((1000,), F64)]),
            VarCase([_rand((3, 4), I32), _rand((3, 4), I32)]),
            VarCase([_rand((), F32), _rand((), F32)])]


def _update_cases():
    return [VarCase([_rand((3, 5)), _rand((3, 5))]), VarCase([_rand((7,), F64),
                                                              _rand((7,), F64)]),
            VarCase([_rand((2, 3), I32), _rand((2, 3), I32)]),
            VarCase([_rand(()), _rand(())])]


CASES = {
    "VariableV2": [VarCase([_rand((3, 5))], outputs=0), VarCase([_rand((), F64)], outputs=0),
                   VarCase([_rand((4,), I32)], outputs=0), VarCase([_rand((2, 2), I64)],
                                                                   outputs=0)],
    "Assign": _assign_cases(),
    "AssignAdd": _update_cases(),
    "AssignSub": _update_cases(),
    "IsVariableInitialized": [VarCase([_rand((3,))]),
                              VarCase([_rand((3,))], initialized=False, outputs=1)],
}
for _op in _HYPER:
    CASES[_op] = _apply_cases(_op)
    CASES["Sparse" + _op] = _sparse_cases("Sparse" + _op)
