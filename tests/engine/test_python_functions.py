"""The function picker's source: top-level functions of a hook file, even while it is broken."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from studio.engine.python_functions import (
    FunctionInfo,
    FunctionList,
    functions_in_file,
    top_level_functions,
)
from tests.support.paths import BUNDLED_WORKSPACE as SAMPLE_WORKSPACE


def source(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def test_functions_with_lines_kind_and_parameters() -> None:
    found = top_level_functions(
        source(
            """
            import json

            def main(request):
                return request

            @decorated
            async def rewrite(request, loop=None, *, strict=False, **options):
                def inner():
                    pass
                return request

            class Helper:
                def method(self):
                    pass

            def positional(a, b=1, /, c=2, *args, d):
                pass
            """
        )
    )
    assert found == [
        FunctionInfo("main", 3, False, ("request",)),
        FunctionInfo("rewrite", 7, True, ("request", "loop=...", "*", "strict=...", "**options")),
        FunctionInfo("positional", 16, False, ("a", "b=...", "/", "c=...", "*args", "d")),
    ]
    assert found.syntax_error is None
    assert found.names() == ["main", "rewrite", "positional"]
    assert found[1].signature == "async rewrite(request, loop=..., *, strict=..., **options)"
    assert found.get("main") == found[0]
    assert found.get("inner") is None


def test_functions_the_module_defines_in_top_level_blocks_and_lambdas() -> None:
    found = top_level_functions(
        source(
            """
            try:
                import fast
                def speed(x): ...
            except ImportError:
                def speed(x, y): ...
            if True:
                def conditional(): ...
            else:
                def fallback(): ...
            with context():
                def inside(): ...
            short = lambda request: request
            def main(): ...
            def main(request): ...
            """
        )
    )
    assert found.names() == ["speed", "conditional", "fallback", "inside", "short", "main"]
    assert found.get("speed") == FunctionInfo("speed", 5, False, ("x", "y"))
    assert found.get("main") == FunctionInfo("main", 14, False, ("request",))


def test_a_syntax_error_keeps_the_functions_around_it() -> None:
    found = top_level_functions(
        source(
            """
            def before(request):
                return request

            def broken(request:
                return request

            async def after(request):
                return request
            """
        )
    )
    assert found.names() == ["before", "after"]
    assert found.get("after") == FunctionInfo("after", 7, True, ("request",))
    assert found.syntax_error is not None
    assert found.syntax_error.line == 4
    assert "never closed" in found.syntax_error.message


def test_errors_inside_a_body_and_several_errors() -> None:
    found = top_level_functions(
        source(
            """
            def one():
                pass

            def two():
                x = = 1

            def three():
                return )

            @decorator
            def four(a):
                pass
            def five(:
            """
        )
    )
    assert found.names() == ["one", "four"]
    assert found.get("four") == FunctionInfo("four", 11, False, ("a",))
    assert found.syntax_error is not None
    # The compiler reports the unmatched bracket first, as running the file would.
    assert (found.syntax_error.line, found.syntax_error.column) == (8, 12)
    assert found.syntax_error.message == "unmatched ')'"


def test_a_file_that_is_only_half_typed() -> None:
    found = top_level_functions("def main(request):\n    return request\n\ndef next_one(")
    assert found.names() == ["main"]
    assert found.syntax_error is not None
    assert found.syntax_error.line == 4


@pytest.mark.parametrize(
    "text",
    [
        "",
        "x = 1\n",
        "def\n",
        "\x00",
        "(" * 1000,
        "'''unterminated",
        "\tdef main(): pass",
        "def main(): pass\r\ndef other(): pass\rdef third(\n",
    ],
)
def test_never_raises(text: str) -> None:
    found = top_level_functions(text)
    assert isinstance(found, FunctionList)
    if found.syntax_error is not None:
        assert found.syntax_error.line >= 1
        assert str(found.syntax_error)


def test_line_numbers_count_carriage_returns_as_python_does() -> None:
    found = top_level_functions("def a(): pass\r\ndef b(): pass\rdef c(\n\x0cdef d(): pass\n")
    assert [(f.name, f.line) for f in found] == [("a", 1), ("b", 2), ("d", 4)]


def test_compiler_warnings_are_not_errors() -> None:
    # An invalid escape warns when compiled; with warnings as errors it must still list main.
    found = top_level_functions('PATTERN = "\\d+"\ndef main(request): return request\n')
    assert found.names() == ["main"]
    assert found.syntax_error is None


def test_functions_in_file(tmp_path: Path) -> None:
    path = tmp_path / "hook.py"
    path.write_text("# -*- coding: latin-1 -*-\nNAME = 'café'\ndef main(request): ...\n", "latin-1")
    assert functions_in_file(path).names() == ["main"]
    path.write_bytes(b"\xef\xbb\xbfdef main(request): ...\n")
    assert functions_in_file(path).names() == ["main"]


def test_a_file_that_is_not_text(tmp_path: Path) -> None:
    path = tmp_path / "hook.py"
    path.write_bytes(b"def main(): ...\nx = '\xff'\n")
    found = functions_in_file(path)
    assert found == []
    assert found.syntax_error is not None
    assert (found.syntax_error.line, found.syntax_error.column) == (2, 6)
    path.write_bytes(b"# coding: no-such-codec\ndef main(): ...\n")
    assert functions_in_file(path).syntax_error is not None


def test_a_missing_file_raises(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        functions_in_file(tmp_path / "missing.py")


def test_the_sample_workspace_hooks() -> None:
    found = functions_in_file(SAMPLE_WORKSPACE / "lib" / "policy.py")
    assert "transform" in found.names()
    assert found.syntax_error is None
