"""AutoGraph for graph mode: a function's Python ``if``, ``while`` and ``for``
statements rewritten so that a tensor condition builds `tf.cond` / `tf.while_loop`
(`autograph_runtime` decides at run time), as `tf.function` and `tf.autograph.to_graph`
do in TensorFlow.

`convert(f)` parses `f`'s source, turns each such statement into calls of nested
functions that update the statement's variables (``nonlocal``), and ``and`` / ``or`` /
``not`` in their conditions into calls that work on tensors, then compiles the result
with `f`'s globals and closure. A loop's ``break`` and ``continue`` become flags, as
TensorFlow's AutoGraph makes them: ``break`` sets a variable that joins the loop's
condition (``while not brk and test``; a ``for`` stops before its next item), ``continue``
one that is reset at the top of each iteration, and the statements that follow a
statement which may set either run under ``if not (brk or cont)``, so a tensor
condition anywhere builds `tf.cond` and `tf.while_loop` as usual. A statement containing
``return`` or ``yield``, a loop with an ``else``, and a ``break`` / ``continue`` inside
``try`` are left as written: Python semantics, so a tensor condition there raises as in
plain graph code. A function whose source is not available (a lambda in an expression,
a builtin) is returned as it is.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.compat.autograph_convert import convert
>>> def collatz_steps(n):
...     steps = 0
...     while n > 1:
...         if tf.equal(n % 2, 0):  # (== on tensors is identity in TF1 mode)
...             n = n // 2
...         else:
...             n = 3 * n + 1
...         steps += 1
...     return steps
>>> with tf.Graph().as_default():
...     print(tf.Session().run(convert(collatz_steps)(tf.constant(6))))
8
"""

from __future__ import annotations

import ast
import inspect
import logging
import textwrap

from flowgraph.compat import autograph_runtime
from flowgraph.compat.autograph_jumps import break_flag, lower_jumps
from flowgraph.compat.autograph_liveness import live_names

__all__ = ["convert"]

logger = logging.getLogger("tensorflow")

_AG = "__ag__"


def convert(func):
    """`func` with its control flow converted (see the module docstring); `func` itself
    when there is nothing to convert or its source is not available."""
    if getattr(func, "__ag_converted__", False) or getattr(func, "__ag_do_not_convert__", False):
        return func
    try:
        source = textwrap.dedent(inspect.getsource(func))
        tree = ast.parse(source)
    except OSError as e:
        logger.warning("AutoGraph could not transform %s and will run it as-is: its source "
                       "is not available (%s)", getattr(func, "__qualname__", func), e)
        return func
    except (TypeError, SyntaxError, IndentationError):
        return func  # a builtin, or a lambda inside a larger expression
    if not tree.body or not isinstance(tree.body[0], ast.FunctionDef):
        return func  # a lambda, or a decorator line the source cut
    fdef = tree.body[0]
    fdef.decorator_list = []
    fdef.body = lower_jumps(_fold_returns(fdef.body))
    rewriter = _Rewriter(fdef, live_names(fdef))
    fdef.body = rewriter.block(fdef.body, loops=())
    expressions = _ConditionalExpressions()
    fdef.body = [expressions.visit(statement) for statement in fdef.body]
    if not rewriter.count and not expressions.count:
        return func
    freevars = func.__code__.co_freevars
    factory = ast.FunctionDef(
        name="__ag_factory",
        args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=n) for n in (*freevars, _AG)],
                           kwonlyargs=[], kw_defaults=[], defaults=[]),
        body=[fdef, ast.Return(value=ast.Name(id=fdef.name, ctx=ast.Load()))],
        decorator_list=[], returns=None, type_params=[])
    module = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(module)  # new nodes take their parent's lines,
    ast.increment_lineno(module, func.__code__.co_firstlineno - 1)  # then the file's
    namespace: dict = {}
    code = compile(module, inspect.getsourcefile(func) or "<autograph>", "exec")
    exec(code, func.__globals__, namespace)
    cells = [c.cell_contents for c in func.__closure__ or ()]
    converted = namespace["__ag_factory"](*cells, autograph_runtime)
    converted.__defaults__ = func.__defaults__
    converted.__kwdefaults__ = func.__kwdefaults__
    converted.__ag_converted__ = True
    return converted


# -- analysis ---------------------------------------------------------------------------
class _Assigned(ast.NodeVisitor):
    """Names a block assigns (not inside nested functions or classes)."""

    def __init__(self) -> None:
        self.names: list = []

    def _add(self, name: str) -> None:
        if not name.startswith("__ag") and name not in self.names:
            self.names.append(name)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Store):
            self._add(node.id)

    def visit_FunctionDef(self, node) -> None:
        if not node.name.startswith("__ag"):
            self._add(node.name)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node) -> None:
        self._add(node.name)

    def visit_Lambda(self, node) -> None:
        return

    def visit_Global(self, node) -> None:
        self.names = [n for n in self.names if n not in node.names]


def _assigned(statements) -> list:
    finder = _Assigned()
    for statement in statements:
        finder.visit(statement)
    return finder.names


class _Escapes(ast.NodeVisitor):
    """Whether a block returns, yields, or breaks / continues an enclosing loop."""

    def __init__(self) -> None:
        self.found = False
        self.loop_depth = 0

    def visit_Return(self, node) -> None:
        self.found = True

    visit_Yield = visit_YieldFrom = visit_Await = visit_Global = visit_Nonlocal = visit_Return

    def visit_Break(self, node) -> None:
        if self.loop_depth == 0:
            self.found = True

    visit_Continue = visit_Break

    def _loop(self, node) -> None:
        self.loop_depth += 1
        self.generic_visit(node)
        self.loop_depth -= 1

    visit_For = visit_While = _loop

    def visit_FunctionDef(self, node) -> None:
        return

    visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_FunctionDef


def _escapes(statements) -> bool:
    finder = _Escapes()
    for statement in statements:
        finder.visit(statement)
    return finder.found


# -- returns inside an if ---------------------------------------------------------------
_RETVAL = "retval__ag"


def _returns_only_last(statements) -> bool:
    """`statements` end in ``return VALUE`` and return nowhere else."""
    if not statements or not isinstance(statements[-1], ast.Return) or \
            statements[-1].value is None:
        return False
    return not _escapes(statements[:-1])


def _fold_returns(statements) -> list:
    """``if c: ...; return a`` followed by ``...; return b`` (or an ``else`` ending in a
    return) becomes one ``if`` assigning both values to one variable, then one
    ``return``: the form a tensor condition can convert."""
    for i, statement in enumerate(statements):
        if not isinstance(statement, ast.If) or not (_escapes(statement.body)
                                                     or _escapes(statement.orelse)):
            continue
        body = _fold_returns(statement.body)
        rest = statement.orelse if statement.orelse else statements[i + 1:]
        rest = _fold_returns(rest)
        if not (_returns_only_last(body) and _returns_only_last(rest)):
            return statements
        for branch in (body, rest):
            branch[-1] = ast.copy_location(
                ast.Assign(targets=[ast.copy_location(_name(_RETVAL, store=True),
                                                      branch[-1])],
                           value=branch[-1].value), branch[-1])
        statement.body, statement.orelse = body, rest
        # the one return reads the value after the if (its line, for the liveness test)
        after = {"lineno": statement.end_lineno + 1, "end_lineno": statement.end_lineno + 1,
                 "col_offset": 0, "end_col_offset": 0}
        value = ast.Name(id=_RETVAL, ctx=ast.Load(), **after)
        return [*statements[:i], statement, ast.Return(value=value, **after)]
    return statements


class _ConditionalExpressions(ast.NodeTransformer):
    """``a if c else b`` -> ``__ag__.if_exp(c, lambda: a, lambda: b)``."""

    def __init__(self) -> None:
        self.count = 0

    def visit_IfExp(self, node: ast.IfExp):
        self.generic_visit(node)
        self.count += 1
        return ast.copy_location(_call(_ag("if_exp"), node.test, _thunk(node.body),
                                       _thunk(node.orelse)), node)


def _thunk(expression) -> ast.Lambda:
    return ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[],
                                         kw_defaults=[], defaults=[]), body=expression)


# -- the rewrite ------------------------------------------------------------------------
def _name(id_: str, store: bool = False) -> ast.Name:
    return ast.Name(id=id_, ctx=ast.Store() if store else ast.Load())


def _ag(attr: str) -> ast.Attribute:
    return ast.Attribute(value=_name(_AG), attr=attr, ctx=ast.Load())


def _call(func, *args) -> ast.Call:
    return ast.Call(func=func, args=list(args), keywords=[])


def _strings(names) -> ast.Tuple:
    return ast.Tuple(elts=[ast.Constant(value=n) for n in names], ctx=ast.Load())


def _names(names, store: bool = False) -> ast.Tuple:
    return ast.Tuple(elts=[_name(n, store) for n in names],
                     ctx=ast.Store() if store else ast.Load())


def _def(name: str, args: list, body: list) -> ast.FunctionDef:
    return ast.FunctionDef(
        name=name, args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=a) for a in args],
                                      kwonlyargs=[], kw_defaults=[], defaults=[]),
        body=body or [ast.Pass()], decorator_list=[], returns=None, type_params=[])


class _Rewriter:
    def __init__(self, fdef: ast.FunctionDef, live: dict) -> None:
        self.live = live
        self.count = 0

    def _live(self, statement, names, loops) -> list:
        """Of `names`, those read after `statement` before being assigned again (for a
        loop: also in its next iteration), from `autograph_liveness`."""
        live = self.live.get(id(statement), ())
        return [n for n in names if n in live]

    def block(self, statements, loops) -> list:
        out = []
        for statement in statements:
            out.extend(self.statement(statement, loops))
        return out

    def statement(self, node, loops) -> list:
        if isinstance(node, ast.If):
            node.body = self.block(node.body, loops)
            node.orelse = self.block(node.orelse, loops)
            if _escapes(node.body) or _escapes(node.orelse):
                return [node]
            return self._if(node, loops)
        if isinstance(node, ast.While):
            inner = (*loops, node)
            node.body = self.block(node.body, inner)
            if node.orelse or _escapes(node.body):
                return [node]
            return self._while(node, loops)
        if isinstance(node, ast.For):
            inner = (*loops, node)
            node.body = self.block(node.body, inner)
            if node.orelse or _escapes(node.body) or not isinstance(node.target, ast.Name):
                return [node]
            return self._for(node, loops)
        if isinstance(node, ast.With | ast.Try):
            node.body = self.block(node.body, loops)
            for handler in getattr(node, "handlers", []):
                handler.body = self.block(handler.body, loops)
            if isinstance(node, ast.Try):
                node.orelse = self.block(node.orelse, loops)
                node.finalbody = self.block(node.finalbody, loops)
        return [node]

    def _prologue(self, names, suffix: str) -> list:
        """Bind each of `names` here (its value, or UNDEFINED), and a setter for them."""
        lines = [ast.Assign(targets=[_name(n, store=True)],
                            value=_call(_ag("ld"), ast.Constant(value=n),
                                        _call(_name("locals"))))
                 for n in names]
        setter = _def(f"__ag_set{suffix}", ["__ag_values"], [
            ast.Nonlocal(names=list(names)),
            ast.Assign(targets=[_names(names, store=True)], value=_name("__ag_values"))]
            if names else [ast.Pass()])
        return [*lines, setter]

    def _state_fn(self, name: str, args: list, names, body: list) -> ast.FunctionDef:
        head = [ast.Nonlocal(names=list(names))] if names else []
        return _def(name, args, [*head, *body, ast.Return(value=_names(names))])

    def _finish(self, names, call) -> list:
        if names:
            return [ast.Assign(targets=[_names(names, store=True)], value=call)]
        return [ast.Expr(value=call)]

    def _if(self, node: ast.If, loops) -> list:
        self.count += 1
        k = self.count
        names = _assigned([*node.body, *node.orelse])
        call = _call(_ag("if_stmt"), self._test(node.test), _name(f"__ag_true{k}"),
                     _name(f"__ag_false{k}"), _name(f"__ag_set{k}"), _strings(names),
                     _names(names), _strings(self._live(node, names, loops)))
        return [*self._prologue(names, str(k)),
                self._state_fn(f"__ag_true{k}", [], names, node.body),
                self._state_fn(f"__ag_false{k}", [], names, node.orelse),
                *self._finish(names, call)]

    def _while(self, node: ast.While, loops) -> list:
        self.count += 1
        k = self.count
        names = _assigned(node.body)
        call = _call(_ag("while_stmt"), _name(f"__ag_test{k}"), _name(f"__ag_body{k}"),
                     _name(f"__ag_set{k}"), _strings(names), _names(names),
                     _strings(self._live(node, names, (*loops, node))))
        test = _def(f"__ag_test{k}", [], [ast.Return(value=self._test(node.test))])
        return [*self._prologue(names, str(k)), test,
                self._state_fn(f"__ag_body{k}", [], names, node.body),
                *self._finish(names, call)]

    def _for(self, node: ast.For, loops) -> list:
        self.count += 1
        k = self.count
        target = node.target.id
        names = [n for n in _assigned(node.body) if n != target]
        bind = ast.Assign(targets=[_name(target, store=True)], value=_name("__ag_item"))
        body = _def(f"__ag_body{k}", ["__ag_item"], [
            ast.Nonlocal(names=[target, *names]), bind, *node.body,
            ast.Return(value=_names(names))])
        iterable = node.iter
        if (isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name)
                and iterable.func.id == "range"):
            iterable = ast.Call(func=_ag("range_"), args=iterable.args,
                                keywords=iterable.keywords)
        call = _call(_ag("for_stmt"), iterable, _name(f"__ag_body{k}"),
                     _name(f"__ag_set{k}"), _strings(names), _names(names),
                     _strings(self._live(node, names, (*loops, node))))
        broken = break_flag(node)
        if broken is not None:  # a `break`: stop before the next item once it is set
            call.keywords.append(ast.keyword(arg="extra_test", value=_thunk(
                _call(_ag("not_"), _name(broken)))))
        target_bind = ast.Assign(targets=[_name(target, store=True)],
                                 value=_call(_ag("ld"), ast.Constant(value=target),
                                             _call(_name("locals"))))
        return [target_bind, *self._prologue(names, str(k)), body,
                *self._finish(names, call)]

    def _test(self, node):
        """A condition with ``and`` / ``or`` / ``not`` as calls that accept tensors."""
        if isinstance(node, ast.BoolOp):
            operands = [_thunk(self._test(v)) for v in node.values]
            return _call(_ag("and_" if isinstance(node.op, ast.And) else "or_"), *operands)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return _call(_ag("not_"), self._test(node.operand))
        return node
