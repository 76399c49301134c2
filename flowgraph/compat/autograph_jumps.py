"""AutoGraph's first pass: each loop's ``break`` and ``continue`` become flag variables,
so that the loop is plain statements `autograph_convert` can turn into `tf.while_loop`
(and its ``if`` statements into `tf.cond`), as TensorFlow's AutoGraph does::

    while i < n:                      break1__ag = False
        i += 1                        continue1__ag = False
        if x[i] < 0:                  while not break1__ag and i < n:
            break                         continue1__ag = False
        if x[i] == 0:                     i += 1
            continue                      if x[i] < 0:
        total += x[i]                         break1__ag = True
                                          if not break1__ag and not continue1__ag:
                                              if x[i] == 0:
                                                  continue1__ag = True
                                              if not break1__ag and not continue1__ag:
                                                  total += x[i]

A ``for`` loop gets no new condition: the converter passes its break flag to
`autograph_runtime.for_stmt` as ``extra_test``, checked before each item. Statements
after a jump in the same block are dropped (they never run). Loops are lowered inner
first; a jump of a nested loop's ``else`` leaves the outer loop, as in Python.

Left as written (Python semantics; a tensor condition there raises as in plain graph
code): a loop with an ``else`` (TensorFlow's AutoGraph does not convert those either), a
loop whose body returns or yields, a ``for`` whose target is not a plain name, and a jump
inside ``try``.

Example
-------
>>> import ast
>>> tree = ast.parse("while a:\\n    if b:\\n        break\\n    c()\\n")
>>> print(ast.unparse(lower_jumps(tree.body)))
break1__ag = False
while not break1__ag and a:
    if b:
        break1__ag = True
    if not break1__ag:
        c()
"""

from __future__ import annotations

import ast

__all__ = ["lower_jumps"]

_BREAK_FLAG = "extra_test__ag"  # the attribute naming a `for` loop's break flag


class _Jumps(ast.NodeVisitor):
    """The kinds of jump ("break", "continue") in one loop's body, not counting those of
    loops nested in it (but counting those of their ``else``), nor nested functions'."""

    def __init__(self) -> None:
        self.kinds: set = set()
        self.returns = False

    def visit_Break(self, node) -> None:
        self.kinds.add("break")

    def visit_Continue(self, node) -> None:
        self.kinds.add("continue")

    def visit_Return(self, node) -> None:
        self.returns = True

    visit_Yield = visit_YieldFrom = visit_Await = visit_Return

    def _loop(self, node) -> None:
        for statement in node.orelse:
            self.visit(statement)
        inner = _Jumps()
        for statement in node.body:
            inner.visit(statement)
        self.returns |= inner.returns

    visit_For = visit_While = visit_AsyncFor = _loop

    def visit_FunctionDef(self, node) -> None:
        return

    visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_FunctionDef


def _jumps(statements) -> _Jumps:
    finder = _Jumps()
    for statement in statements:
        finder.visit(statement)
    return finder


def _name(name: str, store: bool = False) -> ast.Name:
    return ast.Name(id=name, ctx=ast.Store() if store else ast.Load())


def _set(name: str, value: bool, where) -> ast.Assign:
    return ast.copy_location(ast.Assign(targets=[_name(name, store=True)],
                                        value=ast.Constant(value=value)), where)


def _not_jumped(flags: dict, where) -> ast.expr:
    tests = [ast.UnaryOp(op=ast.Not(), operand=_name(n)) for n in flags.values()]
    test = tests[0] if len(tests) == 1 else ast.BoolOp(op=ast.And(), values=tests)
    return ast.copy_location(test, where)


class _Lowering:
    def __init__(self) -> None:
        self.loops = 0

    def block(self, statements) -> list:
        """`statements` with the loops in them (at any depth) lowered, inner first."""
        out = []
        for statement in statements:
            if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                out.append(statement)  # converted when it is called, if at all
                continue
            for field in ("body", "orelse", "finalbody"):
                if isinstance(getattr(statement, field, None), list):
                    setattr(statement, field, self.block(getattr(statement, field)))
            for handler in getattr(statement, "handlers", []):
                handler.body = self.block(handler.body)
            if isinstance(statement, ast.While | ast.For):
                out.extend(self.loop(statement))
            out.append(statement)
        return out

    def loop(self, loop) -> list:
        """Lower `loop`'s jumps in place; returns the statements setting its flags, to
        go before it (none when it has no jumps or is left as written)."""
        found = _jumps(loop.body)
        if not found.kinds or found.returns or loop.orelse or (
                isinstance(loop, ast.For) and not isinstance(loop.target, ast.Name)):
            return []
        self.loops += 1
        flags = {kind: f"{kind}{self.loops}__ag" for kind in ("break", "continue")
                 if kind in found.kinds}
        body = self.guarded(loop.body, flags)
        if body is None:
            return []
        if "continue" in flags:
            body = [_set(flags["continue"], False, loop.body[0]), *body]
        loop.body = body
        if "break" in flags:
            not_broken = ast.UnaryOp(op=ast.Not(), operand=_name(flags["break"]))
            if isinstance(loop, ast.While):
                loop.test = ast.copy_location(
                    ast.BoolOp(op=ast.And(), values=[not_broken, loop.test]), loop.test)
            else:
                setattr(loop, _BREAK_FLAG, flags["break"])
        return [_set(name, False, loop) for name in flags.values()]

    def guarded(self, statements, flags: dict) -> list | None:
        """`statements` with each jump replaced by setting its flag, and the statements
        after one that may jump under ``if not <flags>``; None for a jump inside a
        statement other than ``if`` / ``with``."""
        out = []
        for i, statement in enumerate(statements):
            if isinstance(statement, ast.Break | ast.Continue):
                kind = "break" if isinstance(statement, ast.Break) else "continue"
                out.append(_set(flags[kind], True, statement))
                return out  # what follows a jump never runs
            if not _jumps([statement]).kinds:
                out.append(statement)
                continue
            if isinstance(statement, ast.If):
                body = self.guarded(statement.body, flags)
                orelse = self.guarded(statement.orelse, flags)
                if body is None or orelse is None:
                    return None
                statement.body, statement.orelse = body, orelse
            elif isinstance(statement, ast.With):
                body = self.guarded(statement.body, flags)
                if body is None:
                    return None
                statement.body = body
            else:
                return None
            out.append(statement)
            rest = statements[i + 1:]
            if rest:
                guarded = self.guarded(rest, flags)
                if guarded is None:
                    return None
                out.append(ast.copy_location(
                    ast.If(test=_not_jumped(flags, rest[0]), body=guarded, orelse=[]),
                    rest[0]))
            return out
        return out


def lower_jumps(statements) -> list:
    """`statements` (a function's body) with the ``break`` / ``continue`` of its loops
    lowered to flags (the module docstring); changes the loops in place."""
    return _Lowering().block(statements)


def break_flag(loop) -> str | None:
    """The name of the flag a lowered ``for`` loop's ``break`` sets, or None."""
    return getattr(loop, _BREAK_FLAG, None)
