"""What code converted by `autograph_convert` calls at run time: each Python ``if``,
``while`` and ``for`` statement becomes one call here, which runs it as Python when its
condition (or iterable) is a Python value and builds `tf.cond` / `tf.while_loop` when
it is a tensor.

The state of a statement is the variables it assigns. For a tensor condition, a
variable holding a tensor or a Python number is carried through the cond or loop (the
number as a constant); one that is first assigned inside both branches of an ``if``
comes out of it; a variable holding any other Python object must not change.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.compat import autograph_runtime as ag
>>> with tf.Graph().as_default():
...     x = tf.constant(3)
...     out = ag.if_stmt(x > 2, lambda: (x * 10,), lambda: (x,), lambda v: None, ("x",),
...                      (x,))
...     print(tf.Session().run(out[0]))
30
"""

from __future__ import annotations

import numbers

from flowgraph.framework import dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.operation import Tensor
from flowgraph.ops import array_ops, math_ops
from flowgraph.ops.control_flow_cond import cond
from flowgraph.ops.control_flow_loops import while_loop

__all__ = ["UNDEFINED", "and_", "for_stmt", "if_exp", "if_stmt", "ld", "not_", "or_",
           "range_", "while_stmt"]


class _Undefined:
    """The value of a variable not assigned yet when a converted statement starts."""

    def __repr__(self) -> str:
        return "<undefined>"


UNDEFINED = _Undefined()


def ld(name: str, scope: dict):
    """The current value of `name` in `scope` (a ``locals()``), or `UNDEFINED`."""
    return scope.get(name, UNDEFINED)


def _is_tensor(value) -> bool:
    return isinstance(value, Tensor) or hasattr(value, "_as_graph_element") or (
        hasattr(value, "op") and hasattr(value, "dtype") and hasattr(value, "value"))


def _carried(value) -> bool:
    return _is_tensor(value) or isinstance(value, numbers.Number)


def _as_tensor(value):
    return convert_to_tensor(value)


# -- boolean operators -----------------------------------------------------------------
def and_(*operands):
    """``a and b``: `tf.logical_and` once an operand is a tensor, else Python's."""
    value = operands[0]()
    for operand in operands[1:]:
        if _is_tensor(value):
            value = math_ops.logical_and(value, operand())
        elif not value:
            return value
        else:
            value = operand()
    return value


def or_(*operands):
    """``a or b``: `tf.logical_or` once an operand is a tensor, else Python's."""
    value = operands[0]()
    for operand in operands[1:]:
        if _is_tensor(value):
            value = math_ops.logical_or(value, operand())
        elif value:
            return value
        else:
            value = operand()
    return value


def not_(value):
    """``not a``: `tf.logical_not` of a tensor, else Python's."""
    return math_ops.logical_not(value) if _is_tensor(value) else not value


def if_exp(test, if_true, if_false):
    """``a if test else b``: `tf.cond` when `test` is a tensor, else Python's."""
    if _is_tensor(test):
        return cond(test, if_true, if_false)
    return if_true() if test else if_false()


def range_(*args):
    """``range(...)``: `tf.range` when an argument is a tensor, else Python's."""
    if any(_is_tensor(a) for a in args):
        return math_ops.range(*args)
    return range(*args)


# -- statements ------------------------------------------------------------------------
def _check_unchanged(statement: str, names, init, values) -> None:
    for name, before, after in zip(names, init, values, strict=True):
        if not _carried(before) and before is not UNDEFINED and after is not before:
            raise ValueError(
                f"AutoGraph: '{name}' holds a {type(before).__name__} and is reassigned "
                f"inside {statement} on a tensor; only tensors and Python numbers can "
                "change there (build the value before the statement, or use a tensor)")


def if_stmt(test, if_true, if_false, set_state, names: tuple, init: tuple,
            live: tuple = ()):
    """Run an ``if`` statement: `if_true`/`if_false` run a branch and return the
    statement's variables `names` (whose values before it are `init`); `set_state` sets
    them; `live` names those read after it. Returns their values after it."""
    if not _is_tensor(test):
        return if_true() if test else if_false()
    carried = [i for i, v in enumerate(init)
               if _carried(v) or (v is UNDEFINED and names[i] in live)]
    seen: dict = {}

    def branch(side, fn):
        def run():
            set_state(init)
            values = fn()
            _check_unchanged("an `if`", names, init, values)
            seen[side] = values
            out = []
            for i in carried:
                if values[i] is UNDEFINED:
                    raise ValueError(
                        f"AutoGraph: '{names[i]}' must also be assigned in the "
                        f"{'if' if side == 'true' else 'else'} branch of an `if` on a "
                        "tensor (it is used after the statement), or before the `if`")
                out.append(_as_tensor(values[i]))
            return tuple(out)
        return run

    if not carried:  # only side effects: give the cond an output to build on
        carried_fns = [branch(side, fn) for side, fn in (("true", if_true),
                                                          ("false", if_false))]
        cond(test, lambda: (carried_fns[0](), convert_to_tensor(True))[1],
             lambda: (carried_fns[1](), convert_to_tensor(False))[1])
        set_state(init)
        return tuple(init)
    results = cond(test, branch("true", if_true), branch("false", if_false))
    if not isinstance(results, list | tuple):
        results = (results,)
    final = _with_carried(init, carried, results)
    set_state(final)
    return final


def _with_carried(init: tuple, carried: list, values) -> tuple:
    """`init` with the positions `carried` replaced by `values` (a cond's or loop's
    results)."""
    full = list(init)
    for i, value in zip(carried, values, strict=True):
        full[i] = value
    return tuple(full)


def _loop_state(statement: str, names, init, live) -> list:
    carried = []
    for i, value in enumerate(init):
        if value is UNDEFINED and names[i] not in live:
            continue  # a temporary of the body
        if value is UNDEFINED:
            raise ValueError(f"AutoGraph: '{names[i]}' must be defined before {statement} "
                             "on a tensor (its value is carried from one iteration to the "
                             "next)")
        if _carried(value):
            carried.append(i)
    return carried


def while_stmt(test, body, set_state, names: tuple, init: tuple, live: tuple = ()):
    """Run a ``while`` statement: `test` evaluates the condition, `body` runs one
    iteration and returns the variables `names` (initially `init`); `set_state` sets
    them; `live` names those read after it or in a later iteration. Returns their values
    after the loop."""
    first = test()
    if not _is_tensor(first):
        values, going = init, first
        while going:
            values = body()
            going = test()
            if _is_tensor(going):
                raise NotImplementedError(
                    "AutoGraph: the condition of a `while` loop started as a Python value "
                    "and became a tensor (a `break` or a variable of the condition that "
                    "depends on a tensor): make the condition a tensor from the start, "
                    "e.g. `while i < n` with a tensor `n` instead of `while True`")
        return values
    carried = _loop_state("a `while`", names, init, live)

    def state(loop_values):
        return _with_carried(init, carried, loop_values)

    def loop_test(*loop_values):
        set_state(state(loop_values))
        return test()

    def loop_body(*loop_values):
        set_state(state(loop_values))
        values = body()
        _check_unchanged("a `while`", names, init, values)
        return [_as_tensor(values[i]) for i in carried]

    start = [_as_tensor(init[i]) for i in carried]
    results = while_loop(loop_test, loop_body, start)
    if not isinstance(results, list | tuple):
        results = [results]
    final = state(results)
    set_state(final)
    return final


def for_stmt(iterable, body, set_state, names: tuple, init: tuple, live: tuple = (),
             extra_test=None):
    """Run a ``for`` statement: `body(item)` runs one iteration on `item` and returns
    the variables `names` (initially `init`; `live` as for `while_stmt`). A tensor is
    iterated along its first dimension (`tf.range` too) in a `tf.while_loop`. The loop
    stops early once `extra_test()` (a ``break``'s flag, negated) is false. Returns
    their values after it."""
    if not _is_tensor(iterable):
        values = init
        items = iter(iterable)
        while True:
            if extra_test is not None:
                going = extra_test()
                if _is_tensor(going):
                    raise NotImplementedError(
                        "AutoGraph: a `break` of a `for` over a Python iterable depends "
                        "on a tensor; iterate over a tensor (`tf.range`) instead")
                if not going:
                    break
            try:
                item = next(items)
            except StopIteration:
                break
            values = body(item)
        return values
    carried = _loop_state("a `for`", names, init, live)
    count = array_ops.shape(iterable, out_type=dtypes.int32)[0]

    def state(loop_values):
        return _with_carried(init, carried, loop_values)

    def loop_body(index, *loop_values):
        set_state(state(loop_values))
        values = body(array_ops.gather(iterable, index))
        _check_unchanged("a `for`", names, init, values)
        return [index + 1, *(_as_tensor(values[i]) for i in carried)]

    def loop_test(index, *loop_values):
        if extra_test is None:
            return index < count
        set_state(state(loop_values))
        return and_(lambda: index < count, extra_test)

    start = [convert_to_tensor(0, dtype=dtypes.int32),
             *(_as_tensor(init[i]) for i in carried)]
    results = while_loop(loop_test, loop_body, start)
    final = state(list(results)[1:])
    set_state(final)
    return final
