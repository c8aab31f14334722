"""Compiling and running one cell in the persistent namespace.

A cell is compiled with top-level ``await`` allowed. When its last statement is an expression,
that expression is compiled apart and evaluated after the rest, so its ``repr`` becomes the
``result`` record and ``_`` keeps the last non-None value. ``from __future__`` imports persist
across cells. A cell's source is registered with ``linecache`` so tracebacks show its lines.

A one-line cell that may be a lone expression (``1+1``, ``df.head()``) is first compiled in
``eval`` mode straight from its text, which skips the AST round trip (about half of the cost).
That gives the same code as the general path. Only when it fails is the general path taken, so
the attempt is made only for text that can neither emit a compile-time warning before failing
(which the general path would then emit a second time) nor differ in outcome: no backslash, no
digit run into a letter (the tokenizer's two warnings), nothing the compiler rejects after it
parsed (``yield``, ``lambda``, ``async``, ``:=``, ``__debug__``, keyword ``=``, ``await`` in a
comprehension).

The code of such an expression is remembered per (text, flags) and handed out again with the new
cell's filename (``code.replace``, nested code objects too), which is what compiling it again
gives, unless compiling it could have warned (a warning must be shown for every cell): text
with ``is``, or a literal that is called or subscripted, is compiled every time.
"""

from __future__ import annotations

import __future__
import ast
import linecache
import os
import re
import sys
import traceback
import types
from typing import Any

__all__ = [
    "CO_COROUTINE",
    "CellCompiler",
    "CompiledCell",
    "format_error",
    "make_namespace",
    "run_compiled",
]

_FUTURE_FLAGS = 0
for _name in __future__.all_feature_names:
    _FUTURE_FLAGS |= getattr(__future__, _name).compiler_flag
del _name

_WORKER_DIR = os.path.dirname(os.path.abspath(__file__))


#: The code flag of a code object that must be awaited (``inspect.CO_COROUTINE``).
CO_COROUTINE = 0x0080

# Text for which no eval-mode attempt is made (see the module docstring): it could warn, or fail
# only after parsing. Matching too much only costs the fast path, never correctness.
_NOT_EVAL_FIRST = re.compile(
    r"[\\\r\n]|\d\.?[A-Za-z_]|yield|lambda|async|__debug__|:=|(?<![=!<>])=(?!=)|await.*\bfor\b|\bfor\b.*await"
)

# Text whose compilation may warn (check_compare, check_caller, check_subscripter, check_index in
# CPython's compiler): ``is``, or a literal (number, string, bracketed display, ``...``, ``None``,
# ``True``, ``False``) followed by ``(`` or ``[``. Matching too much only costs the cache.
_MAY_WARN = re.compile(r"\bis\b|(?:[)\]}\"'\d.]|\bNone|\bTrue|\bFalse)\s*[(\[]")
#: Lone-expression code objects kept, at most; the cache is emptied when it is full.
_CACHE_SIZE = 256
#: Longest cell text whose code is kept.
_CACHE_TEXT = 512


def _renamed(code: types.CodeType, filename: str) -> types.CodeType:
    """``code`` (and the code objects it holds) as compiled from ``filename``."""
    consts = code.co_consts
    for const in consts:  # a loop, not any(genexpr): this runs for every cached cell
        if type(const) is types.CodeType:
            consts = tuple(_renamed(c, filename) if type(c) is types.CodeType else c for c in consts)
            return code.replace(co_filename=filename, co_consts=consts)
    return code.replace(co_filename=filename)


class CompiledCell:
    """A compiled cell: the statements, then (optionally) the final expression."""

    __slots__ = ("filename", "body", "expression")

    def __init__(
        self, filename: str, body: types.CodeType | None, expression: types.CodeType | None
    ) -> None:
        #: None when the cell is one expression (there are no statements to run first).
        self.filename = filename
        self.body = body
        self.expression = expression


class CellCompiler:
    """Compiles cells; remembers ``from __future__`` flags across cells like the REPL does."""

    def __init__(self) -> None:
        self.flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
        self._expressions: dict[tuple[str, int], types.CodeType] = {}

    def compile(self, source: str, cell_id: str) -> CompiledCell:
        """Compile ``source``; raises SyntaxError (with the cell's filename) when it does not parse."""
        filename = f"<cell {cell_id}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        key = (source, self.flags)
        known = self._expressions.get(key)
        if known is not None:
            return CompiledCell(filename, None, _renamed(known, filename))
        text = source.rstrip("\n")
        if not _NOT_EVAL_FIRST.search(text):
            try:
                expression = compile(source, filename, "eval", self.flags, dont_inherit=True)
            except (SyntaxError, ValueError, OverflowError, MemoryError, RecursionError):
                pass  # not a lone expression: the general path compiles it (or reports its error)
            else:
                if len(source) <= _CACHE_TEXT and not _MAY_WARN.search(text):
                    if len(self._expressions) >= _CACHE_SIZE:
                        self._expressions.clear()
                    self._expressions[key] = expression
                return CompiledCell(filename, None, expression)
        return self.compile_general(source, filename)

    def compile_general(self, source: str, filename: str) -> CompiledCell:
        """Compile ``source`` through its AST (any cell; :meth:`compile` does the linecache part)."""
        tree = compile(source, filename, "exec", self.flags | ast.PyCF_ONLY_AST, dont_inherit=True)
        expression = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = tree.body.pop()
            expression = ast.Expression(last.value)
        body = compile(tree, filename, "exec", self.flags, dont_inherit=True)
        self.flags |= body.co_flags & _FUTURE_FLAGS
        expr_code = None
        if expression is not None:
            expr_code = compile(expression, filename, "eval", self.flags, dont_inherit=True)
        return CompiledCell(filename, body, expr_code)


async def _evaluate(code: types.CodeType, namespace: dict) -> Any:
    value = eval(code, namespace)  # noqa: S307 - evaluating the cell is the point
    if code.co_flags & CO_COROUTINE:
        value = await value
    return value


async def run_compiled(cell: CompiledCell, namespace: dict) -> Any:
    """Run ``cell`` in ``namespace``; return the final expression's value (None when there is none)."""
    if cell.body is not None:
        await _evaluate(cell.body, namespace)
    if cell.expression is None:
        return None
    value = await _evaluate(cell.expression, namespace)
    if value is not None:
        namespace["_"] = value
    return value


def make_namespace(**bindings: Any) -> dict:
    """A fresh ``__main__`` namespace (installed as ``sys.modules["__main__"]``) with ``bindings``."""
    module = types.ModuleType("__main__", "The klbr workbench namespace.")
    module.__dict__["__builtins__"] = __builtins__
    module.__dict__.update(bindings)
    sys.modules["__main__"] = module
    return module.__dict__


def _is_worker_frame(tb: types.TracebackType) -> bool:
    filename = os.path.abspath(tb.tb_frame.f_code.co_filename)
    return os.path.dirname(filename) == _WORKER_DIR


def format_error(exc: BaseException) -> str:
    """The traceback of ``exc`` as text, starting at the first cell frame (the worker's are hidden)."""
    tb = exc.__traceback__
    walk = tb
    while walk is not None and not walk.tb_frame.f_code.co_filename.startswith("<cell "):
        walk = walk.tb_next
    if walk is not None:
        tb = walk
    else:
        while tb is not None and _is_worker_frame(tb):
            tb = tb.tb_next
    if isinstance(exc, SyntaxError) and tb is None:
        return "".join(traceback.format_exception_only(type(exc), exc))
    return "".join(traceback.format_exception(type(exc), exc, tb))
