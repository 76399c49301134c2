"""Rerouting: making the consumers of some tensors consume others, in place.

``reroute_ts(ts0, ts1)`` makes the consumers of each ``ts1[i]`` read ``ts0[i]``;
``swap_ts`` exchanges the consumers of both. A session built before the edit
recompiles at its next run, so the edit takes effect there.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.contrib import graph_editor as ge
>>> with tf.Graph().as_default():
...     a, b = tf.constant(1.0, name="a"), tf.constant(2.0, name="b")
...     y = tf.identity(b, name="y")
...     n = ge.reroute_ts([a], [b])
...     with tf.Session() as sess:
...         value = sess.run(y)
>>> n, float(value)
(1, 1.0)
"""

from __future__ import annotations

from flowgraph.contrib.graph_editor import subgraph, util
from flowgraph.framework.operation import Operation

__all__ = [
    "add_control_inputs", "remove_control_inputs", "reroute_inputs", "reroute_ios",
    "reroute_outputs", "reroute_ts", "swap_inputs", "swap_ios", "swap_outputs", "swap_ts",
]

_A2B, _B2A, _SWAP = "a2b", "b2a", "swap"


def check_ts_compatibility(ts0, ts1) -> None:
    """ValueError unless `ts0` and `ts1` pair up by length, dtype and static shape."""
    ts0 = util.make_list_of_t(ts0)
    ts1 = util.make_list_of_t(ts1)
    if len(ts0) != len(ts1):
        raise ValueError(f"ts0 and ts1 have different sizes: {len(ts0)} != {len(ts1)}")
    for t0, t1 in zip(ts0, ts1):
        if not t0.dtype.base_dtype.is_compatible_with(t1.dtype.base_dtype):
            raise ValueError(f"Dtypes {t0.dtype.name} and {t1.dtype.name} are not "
                             f"compatible ('{t0.name}' and '{t1.name}').")
        if not t0.shape.is_compatible_with(t1.shape):
            raise ValueError(f"Shapes {t0.shape} and {t1.shape} are not compatible "
                             f"('{t0.name}' and '{t1.name}').")


def _rewire(new_t, old_t, consumers, can_modify, cannot_modify) -> int:
    """Make each of `consumers` that may be modified read `new_t` where it read `old_t`."""
    count = 0
    for op in consumers:
        if can_modify is not None and op not in can_modify:
            continue
        if cannot_modify is not None and op in cannot_modify:
            continue
        for i, t in enumerate(op.inputs):
            if t is old_t:
                op._update_input(i, new_t)
                count += 1
    return count


def _reroute_ts(ts0, ts1, mode, can_modify=None, cannot_modify=None) -> int:
    ts0 = util.make_list_of_t(ts0)
    ts1 = util.make_list_of_t(ts1)
    check_ts_compatibility(ts0, ts1)
    if can_modify is not None:
        can_modify = frozenset(util.make_list_of_op(can_modify))
    if cannot_modify is not None:
        cannot_modify = frozenset(util.make_list_of_op(cannot_modify))
    # the consumers before any change: a tensor may appear in several pairs
    before = [(list(dict.fromkeys(t0.consumers())), list(dict.fromkeys(t1.consumers())))
              for t0, t1 in zip(ts0, ts1)]
    count = 0
    for t0, t1, (consumers0, consumers1) in zip(ts0, ts1, before):
        if t0 is t1:
            continue
        if mode in (_A2B, _SWAP):
            count += _rewire(t0, t1, consumers1, can_modify, cannot_modify)
        if mode in (_B2A, _SWAP):
            count += _rewire(t1, t0, consumers0, can_modify, cannot_modify)
    return count


def swap_ts(ts0, ts1, can_modify=None, cannot_modify=None) -> int:
    """Exchange the consumers of ``ts0[i]`` and ``ts1[i]``; returns how many inputs
    changed. Only ops in `can_modify` (if given) and not in `cannot_modify` change."""
    return _reroute_ts(ts0, ts1, _SWAP, can_modify, cannot_modify)


def reroute_ts(ts0, ts1, can_modify=None, cannot_modify=None) -> int:
    """Make the consumers of ``ts1[i]`` consume ``ts0[i]``; returns how many inputs
    changed. Only ops in `can_modify` (if given) and not in `cannot_modify` change."""
    return _reroute_ts(ts0, ts1, _A2B, can_modify, cannot_modify)


def _reroute_sgv_inputs(sgv0, sgv1, mode):
    sgv0 = subgraph.make_view(sgv0)
    sgv1 = subgraph.make_view(sgv1)
    util.check_graphs(sgv0, sgv1)
    can_modify = list(sgv0.ops) + list(sgv1.ops)
    can_modify += util.get_consuming_ops(list(sgv0.passthroughs))
    can_modify += util.get_consuming_ops(list(sgv1.passthroughs))
    _reroute_ts(sgv0.inputs, sgv1.inputs, mode, can_modify=can_modify)
    sgv0_, sgv1_ = sgv0.copy(), sgv1.copy()
    if mode == _SWAP:
        sgv0_._input_ts, sgv1_._input_ts = list(sgv1._input_ts), list(sgv0._input_ts)
    elif mode == _A2B:
        sgv1_._input_ts = list(sgv0._input_ts)
    else:
        sgv0_._input_ts = list(sgv1._input_ts)
    return sgv0_, sgv1_


def _reroute_sgv_outputs(sgv0, sgv1, mode):
    sgv0 = subgraph.make_view(sgv0)
    sgv1 = subgraph.make_view(sgv1)
    util.check_graphs(sgv0, sgv1)
    cannot_modify = list(sgv0.ops) + list(sgv1.ops)
    _reroute_ts(sgv0.outputs, sgv1.outputs, mode, cannot_modify=cannot_modify)
    return sgv0, sgv1


def swap_inputs(sgv0, sgv1):
    """Exchange the inputs of two subgraph views (views, ops or tensors); returns the
    two views, remapped."""
    return _reroute_sgv_inputs(sgv0, sgv1, _SWAP)


def reroute_inputs(sgv0, sgv1):
    """Make the ops of `sgv1` read the inputs of `sgv0` in place of their own."""
    return _reroute_sgv_inputs(sgv0, sgv1, _A2B)


def swap_outputs(sgv0, sgv1):
    """Exchange the consumers (outside both views) of the outputs of two views."""
    return _reroute_sgv_outputs(sgv0, sgv1, _SWAP)


def reroute_outputs(sgv0, sgv1):
    """Make the consumers of `sgv1`'s outputs (outside both views) read `sgv0`'s."""
    return _reroute_sgv_outputs(sgv0, sgv1, _A2B)


def swap_ios(sgv0, sgv1):
    """`swap_inputs` then `swap_outputs`."""
    sgv0, sgv1 = swap_inputs(sgv0, sgv1)
    return swap_outputs(sgv0, sgv1)


def reroute_ios(sgv0, sgv1):
    """`reroute_inputs` then `reroute_outputs`."""
    sgv0, sgv1 = reroute_inputs(sgv0, sgv1)
    return reroute_outputs(sgv0, sgv1)


def _op_and_cops(op, cops, fn_name):
    if not isinstance(op, Operation):
        raise TypeError(f"{fn_name}: expected a tf.Operation, got {type(op).__name__}")
    return util.make_list_of_op(cops, allow_graph=False)


def remove_control_inputs(op, cops) -> None:
    """Remove the control inputs `cops` from `op` (ValueError if one is not there).

    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     a = tf.no_op(name="a")
    ...     with tf.control_dependencies([a]):
    ...         b = tf.no_op(name="b")
    ...     remove_control_inputs(b, [a])
    >>> b.control_inputs
    []
    """
    cops = _op_and_cops(op, cops, "remove_control_inputs")
    current = op.control_inputs
    for cop in cops:
        if cop not in current:
            raise ValueError(f"{cop.name} is not a control_input of {op.name}")
    keep = [c for c in current if c not in cops]
    op._remove_all_control_inputs()
    op._add_control_inputs(keep)


def add_control_inputs(op, cops) -> None:
    """Add the control inputs `cops` to `op` (ValueError if one is already there)."""
    cops = _op_and_cops(op, cops, "add_control_inputs")
    current = op.control_inputs
    for cop in cops:
        if cop in current:
            raise ValueError(f"{cop.name} is already a control_input of {op.name}")
        if cop.graph is not op.graph:
            raise ValueError(f"add_control_inputs: '{cop.name}' is not in the graph of "
                             f"'{op.name}'")
    if cops:
        op._add_control_inputs(cops)
        op.graph._note_edit()
