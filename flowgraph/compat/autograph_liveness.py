"""Which variables are live after each ``if`` / ``while`` / ``for`` of a function, for
AutoGraph (`autograph_convert`): a variable first assigned inside a statement converted
to `tf.cond` / `tf.while_loop` must come out of it (be carried) only when some later
code may read it before assigning it again.

A variable is *live* after a statement when a path from there reads it before a
definite assignment: the rest of the enclosing block, then, inside a loop, the loop's
condition and its next iteration from the top, then what follows the loop, out to the
end of the function. For a loop itself, live also means read in its condition or body
before being assigned in that iteration (the value crosses from one iteration to the
next). The analysis is conservative where it cannot see: a read inside a nested
function or lambda counts as a read; an assignment inside a loop body or one branch of
an ``if`` does not count as definite::

    for i in tf.range(n):
        j = 0            <- j is assigned first in every iteration,
        while j < i:        so the ``for`` does not carry it, and it
            j += 1          need not be defined before the loop
        total += j

It runs before conversion (the converter's own code reads every variable it carries)
and keys its answers by statement identity.

Example
-------
>>> import ast
>>> fn = ast.parse("def f(x):\\n    if x:\\n        y = 1\\n        z = 2\\n"
...                "    else:\\n        y = 3\\n    return y\\n").body[0]
>>> sorted(live_names(fn)[id(fn.body[0])])
['y']
"""

from __future__ import annotations

import ast

from flowgraph.compat.autograph_jumps import break_flag

__all__ = ["live_names"]

_READ, _WRITE = "read", "write"  # None: neither (the variable passes through)


def _reads(node, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
               for n in ast.walk(node))


def _stores(node, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
               for n in ast.walk(node))


def _effect(statement, name: str):
    """What `statement` does first with `name`: read it, assign it for sure, or neither."""
    if isinstance(statement, ast.If):
        if _reads(statement.test, name):
            return _READ
        body, orelse = _sequence(statement.body, name), _sequence(statement.orelse, name)
        if _READ in (body, orelse):
            return _READ
        return _WRITE if body == orelse == _WRITE else None
    if isinstance(statement, ast.While):
        if _reads(statement.test, name) or _sequence(statement.body, name) == _READ:
            return _READ
        return _READ if _sequence(statement.orelse, name) == _READ else None
    if isinstance(statement, ast.For | ast.AsyncFor):
        if _reads(statement.iter, name):
            return _READ
        if not _stores(statement.target, name) and _sequence(statement.body, name) == _READ:
            return _READ
        return _READ if _sequence(statement.orelse, name) == _READ else None
    if isinstance(statement, ast.With | ast.AsyncWith):
        if any(_reads(item, name) for item in statement.items):
            return _READ
        return _sequence(statement.body, name)
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        if _reads(statement, name):
            return _READ  # a closure may read it whenever it is called
        return _WRITE if statement.name == name else None
    if isinstance(statement, ast.AugAssign):
        return _READ if _reads(statement, name) or _stores(statement.target, name) else None
    if isinstance(statement, ast.Return):
        return _READ if statement.value is not None and _reads(statement.value, name) \
            else _WRITE  # nothing after it reads anything
    if isinstance(statement, ast.Break | ast.Continue):
        return None
    # assignments, expressions, try, ...: any read first, then a store
    if _reads(statement, name):
        return _READ
    if isinstance(statement, ast.Assign | ast.AnnAssign) and _stores(statement, name):
        return _WRITE
    return None


def _sequence(statements, name: str):
    for statement in statements:
        effect = _effect(statement, name)
        if effect is not None:
            return effect
        if isinstance(statement, ast.Break | ast.Continue):
            return None  # the rest of the block does not run
    return None


def _live_after(chain: list, name: str) -> bool:
    """Whether `name` may be read after the statement at the innermost position of
    `chain` ([(block, index, owner)], innermost first) before being assigned."""
    for block, index, owner in chain:
        effect = _sequence(block[index + 1:], name)
        if effect is not None:
            return effect == _READ
        if isinstance(owner, ast.While) and block is owner.body:
            if _reads(owner.test, name) or _sequence(owner.body, name) == _READ:
                return True  # the next iteration reads it
        elif isinstance(owner, ast.For) and block is owner.body:
            if name == break_flag(owner):
                return True  # read before each item
            if not _stores(owner.target, name) and _sequence(owner.body, name) == _READ:
                return True
    return False


def _live_in(loop, name: str) -> bool:
    """Whether an iteration of `loop` may read `name` before assigning it."""
    if isinstance(loop, ast.While):
        return _reads(loop.test, name) or _sequence(loop.body, name) == _READ
    if name == break_flag(loop):
        return True
    return not _stores(loop.target, name) and _sequence(loop.body, name) == _READ


def _names(fn) -> list:
    return sorted({n.id for n in ast.walk(fn) if isinstance(n, ast.Name)
                   and isinstance(n.ctx, ast.Store)})


def live_names(fn: ast.FunctionDef) -> dict:
    """``{id(statement): frozenset of names}`` for every ``if`` / ``while`` / ``for`` of
    `fn` (not inside nested functions): the variables assigned in `fn` that are live
    after it (for a loop: also into its next iteration)."""
    names = _names(fn)
    out: dict = {}

    def walk(block: list, owner, outer: list) -> None:
        for index, statement in enumerate(block):
            if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            # (block, index, owner): `owner` is the statement `block` belongs to
            here = [(block, index, owner), *outer]
            if isinstance(statement, ast.If | ast.While | ast.For):
                live = {n for n in names if _live_after(here, n)}
                if not isinstance(statement, ast.If):
                    live |= {n for n in names if _live_in(statement, n)}
                out[id(statement)] = frozenset(live)
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(statement, field, None)
                if isinstance(inner, list):
                    walk(inner, statement, here)
            for handler in getattr(statement, "handlers", []):
                walk(handler.body, statement, here)

    walk(fn.body, None, [])
    return out
