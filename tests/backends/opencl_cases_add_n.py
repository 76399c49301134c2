"""Parity cases for the OpenCL AddN kernel: two to 40 inputs (more than one launch takes),
an empty shape, a scalar, views, int32 and float64."""

from __future__ import annotations

import flowgraph as tf
from flowgraph.ops.op_util import make_op
from tests.backends.opencl_cases import F64, I32, Case, _rand


class AddNCase(Case):
    """`inputs` summed by one AddN."""

    def build(self, op_type, placeholders):
        op = make_op(op_type, list(placeholders), {"N": len(placeholders)})
        return op, list(op.outputs)


class TransposedAddNCase(Case):
    """AddN of transposed views (inputs that are not contiguous on the device)."""

    def build(self, op_type, placeholders):
        views = [tf.transpose(p) for p in placeholders]
        op = make_op(op_type, views, {"N": len(views)})
        return op, list(op.outputs)


def _add_n():
    cases = [AddNCase([_rand((3, 5)) for _ in range(n)]) for n in (2, 3, 16, 17, 40)]
    cases += [AddNCase([_rand((0, 4)), _rand((0, 4))]), AddNCase([_rand(()), _rand(())]),
              AddNCase([_rand((1000,))]), AddNCase([_rand((4, 6), F64) for _ in range(3)]),
              AddNCase([_rand((2, 7), I32) for _ in range(5)]),
              TransposedAddNCase([_rand((5, 3)) for _ in range(3)])]
    return cases


CASES = {"AddN": _add_n()}
