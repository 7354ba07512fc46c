"""The functions a hook source offers, for the editor's function picker.

A hook reference names a module-level callable (``path:function``). This lists the functions a
module defines at its top level, including those defined inside top-level ``if``, ``try`` and
``with`` blocks and ``name = lambda ...`` assignments, since the runtime can call any of them.
A file being edited is often broken: a syntax error never raises here; the functions before
and after the broken statement are still listed, with where the error is.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
import warnings
from dataclasses import dataclass
from pathlib import Path

from studio.core.file_reads import read_bytes

# A line that can start a top-level statement: anything but blank, comment or indented lines
# and lines that only close a bracket (a form feed first does not indent, for Python).
_TOP_LEVEL_START = re.compile(r"\f*[^\s#)\]}]")
_MAX_BROKEN_PARTS = 200


@dataclass(frozen=True, slots=True)
class FunctionInfo:
    name: str
    line: int  # 1-based line of the ``def`` (not of a decorator)
    is_async: bool
    params: tuple[str, ...]  # as written: "request", "*args", "loop=...", "**options"

    @property
    def signature(self) -> str:
        return f"{'async ' if self.is_async else ''}{self.name}({', '.join(self.params)})"


@dataclass(frozen=True, slots=True)
class SourceProblem:
    """Why the file does not compile, and where (1-based; column None when unknown)."""

    message: str
    line: int
    column: int | None = None

    def __str__(self) -> str:
        where = f"line {self.line}" + (f", column {self.column}" if self.column else "")
        return f"{self.message} ({where})"


class FunctionList(list[FunctionInfo]):
    """The functions found, in file order (one per name: the last definition, as at run time),
    and ``syntax_error``: the first problem that keeps the file from compiling, or None.

    ``unchecked`` names the other top-level bindings: values (a call's result, an import, a
    class) that may or may not be callable when the hook runs, so their absence from the list
    proves nothing. ``open_ended`` says that the file may bind names no parse can see (a star
    import): then no name is known to be missing. ``listed`` is False when the studio could not
    read the file's functions at all (its parser could not be run): ``syntax_error`` then says
    why, and nothing is known about the file."""

    def __init__(
        self,
        functions: list[FunctionInfo] | None = None,
        syntax_error: SourceProblem | None = None,
        *,
        unchecked: tuple[str, ...] = (),
        open_ended: bool = False,
        listed: bool = True,
    ) -> None:
        super().__init__(functions or [])
        self.syntax_error = syntax_error
        self.unchecked = unchecked
        self.open_ended = open_ended
        self.listed = listed

    def names(self) -> list[str]:
        return [f.name for f in self]

    def get(self, name: str) -> FunctionInfo | None:
        return next((f for f in self if f.name == name), None)


def top_level_functions(source_text: str) -> FunctionList:
    """Every top-level function of a module's source; never raises on a broken file."""
    try:
        tree = _parse(source_text)
    except _BROKEN as exc:
        found: list[FunctionInfo] = []
        lines = io.StringIO(source_text, newline="").readlines()
        _salvage(lines, 0, found, [_MAX_BROKEN_PARTS])
        return FunctionList(_last_per_name(found), _problem(exc, source_text))
    found = []
    _collect(tree.body, found)
    functions = _last_per_name(found)
    others: dict[str, None] = {}
    open_ended = _other_bindings(tree.body, others)
    listed = {f.name for f in functions}
    unchecked = tuple(name for name in others if name not in listed)
    return FunctionList(functions, unchecked=unchecked, open_ended=open_ended)


def functions_in_file(path: str | Path) -> FunctionList:
    """The top-level functions of a Python file. A file that cannot be read raises ``OSError``;
    one that cannot be decoded gives no functions and the decoding problem."""
    data = read_bytes(path)
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        return FunctionList([], SourceProblem(str(exc.msg), exc.lineno or 1))
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        return FunctionList([], SourceProblem(f"the file is not valid {encoding}", line, column))
    if text.startswith("\ufeff"):
        text = text[1:]
    return top_level_functions(text)


_BROKEN = (SyntaxError, ValueError, RecursionError, MemoryError)


def _parse(text: str) -> ast.Module:
    # The compiler's warnings (an invalid escape in a string, say) are not the picker's business,
    # and must not turn into errors where warnings are errors.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(text)


def _collect(body: list[ast.stmt], found: list[FunctionInfo], offset: int = 0) -> None:
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found.append(
                FunctionInfo(
                    node.name,
                    node.lineno + offset,
                    isinstance(node, ast.AsyncFunctionDef),
                    _params(node.args),
                )
            )
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found.append(
                        FunctionInfo(
                            target.id, node.lineno + offset, False, _params(node.value.args)
                        )
                    )
        elif isinstance(node, ast.If | ast.With | ast.AsyncWith):
            _collect(node.body, found, offset)
            if isinstance(node, ast.If):
                _collect(node.orelse, found, offset)
        elif isinstance(node, ast.Try | ast.TryStar):
            for block in (node.body, node.orelse, node.finalbody):
                _collect(block, found, offset)
            for handler in node.handlers:
                _collect(handler.body, found, offset)


def _other_bindings(body: list[ast.stmt], names: dict[str, None]) -> bool:
    """Add to ``names`` every top-level name bound by anything but a ``def`` or a lambda; True
    when a star import may bind names that cannot be seen."""
    open_ended = False
    for node in body:
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, ast.AnnAssign | ast.AugAssign | ast.For | ast.AsyncFor):
            targets = [node.target]
        elif isinstance(node, ast.ClassDef):
            names[node.name] = None  # a class is callable: the runtime would call it
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                if alias.name == "*":
                    open_ended = True
                else:
                    names[alias.asname or alias.name.split(".")[0]] = None
        if isinstance(node, ast.With | ast.AsyncWith):
            targets = [item.optional_vars for item in node.items if item.optional_vars]
        for target in targets:
            for part in ast.walk(target):
                if isinstance(part, ast.Name):
                    names[part.id] = None
        if isinstance(node, ast.With | ast.AsyncWith):
            open_ended |= _other_bindings(node.body, names)
        elif isinstance(node, ast.If | ast.For | ast.AsyncFor | ast.While):
            open_ended |= _other_bindings(node.body, names)
            open_ended |= _other_bindings(node.orelse, names)
        elif isinstance(node, ast.Try | ast.TryStar):
            for block in (node.body, node.orelse, node.finalbody):
                open_ended |= _other_bindings(block, names)
            for handler in node.handlers:
                if handler.name:
                    names[handler.name] = None
                open_ended |= _other_bindings(handler.body, names)
    return open_ended


def _params(args: ast.arguments) -> tuple[str, ...]:
    out: list[str] = []
    positional = [*args.posonlyargs, *args.args]
    first_default = len(positional) - len(args.defaults)
    for index, arg in enumerate(positional):
        out.append(arg.arg + ("=..." if index >= first_default else ""))
        if args.posonlyargs and index == len(args.posonlyargs) - 1:
            out.append("/")
    if args.vararg is not None:
        out.append("*" + args.vararg.arg)
    elif args.kwonlyargs:
        out.append("*")
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        out.append(arg.arg + ("=..." if default is not None else ""))
    if args.kwarg is not None:
        out.append("**" + args.kwarg.arg)
    return tuple(out)


def _last_per_name(found: list[FunctionInfo]) -> list[FunctionInfo]:
    """One entry per name: the definition that is in force after the module runs."""
    last = {f.name: f for f in found}
    return [f for f in found if last[f.name] is f]


def _problem(exc: BaseException, text: str) -> SourceProblem:
    if isinstance(exc, SyntaxError):
        return SourceProblem(str(exc.msg), exc.lineno or 1, exc.offset or None)
    if isinstance(exc, ValueError) and "\x00" in text:
        before = text[: text.index("\x00")]
        line = before.count("\n") + 1
        return SourceProblem(
            "the file contains a NUL character", line, len(before) - before.rfind("\n")
        )
    return SourceProblem(f"the file cannot be compiled ({type(exc).__name__})", 1)


def _salvage(lines: list[str], offset: int, found: list[FunctionInfo], budget: list[int]) -> None:
    """Collect the functions of the parts of ``lines`` that compile, skipping each top-level
    statement that does not: parse what comes before it and go on after it."""
    while lines and budget[0] > 0:
        budget[0] -= 1
        try:
            tree = _parse("".join(lines))
        except _BROKEN as exc:
            bad = _error_line(exc, lines)
            starts = [i for i, line in enumerate(lines) if _TOP_LEVEL_START.match(line)]
            head = max((i for i in starts if i <= bad), default=0)
            tail = min((i for i in starts if i > bad), default=len(lines))
            if head > 0:
                _salvage(lines[:head], offset, found, budget)
            offset += tail
            lines = lines[tail:]
            continue
        _collect(tree.body, found, offset)
        return


def _error_line(exc: BaseException, lines: list[str]) -> int:
    """The 0-based line of the error within ``lines``."""
    if isinstance(exc, SyntaxError) and exc.lineno:
        return min(max(exc.lineno - 1, 0), len(lines) - 1)
    for index, line in enumerate(lines):
        if "\x00" in line:
            return index
    return 0
