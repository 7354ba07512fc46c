"""A JSON text laid out again changes only the whitespace between its tokens."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from studio.core.json.reindent import longest_line, reindent

_STRING_OR_SPACE = re.compile(r'"(?:[^"\\]|\\.)*"|[ \t\r\n]+')


def without_layout(text: str) -> str:
    """``text`` with the whitespace outside its strings removed."""
    return _STRING_OR_SPACE.sub(lambda m: m.group() if m.group().startswith('"') else "", text)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=25,
)


@given(json_values, st.booleans())
def test_a_compact_text_is_laid_out_as_json_dumps_indents_it(value: Any, ascii_only: bool):
    compact = json.dumps(value, separators=(",", ":"), ensure_ascii=ascii_only)
    expected = json.dumps(value, indent=2, ensure_ascii=ascii_only)
    assert reindent(compact) == expected
    # Already laid out, it stays as it is.
    assert reindent(expected) == expected


def test_tokens_are_kept_exactly_as_written():
    text = (
        '{"a":1.10,"b":1e400,"c":-0.0,"a":"dup","d":"\\u00e9\\n\\"x\\"","e":[],"f":{},'
        '"g":[true,false,null,12345678901234567890]}'
    )
    laid_out = reindent(text)
    assert laid_out == (
        "{\n"
        '  "a": 1.10,\n'
        '  "b": 1e400,\n'
        '  "c": -0.0,\n'
        '  "a": "dup",\n'
        '  "d": "\\u00e9\\n\\"x\\"",\n'
        '  "e": [],\n'
        '  "f": {},\n'
        '  "g": [\n'
        "    true,\n"
        "    false,\n"
        "    null,\n"
        "    12345678901234567890\n"
        "  ]\n"
        "}"
    )
    assert without_layout(laid_out) == without_layout(text)


def test_a_final_line_break_is_kept():
    assert reindent("[1, 2]\n") == "[\n  1,\n  2\n]\n"
    assert reindent("[1,2]") == "[\n  1,\n  2\n]"
    assert reindent(' "only" ') == '"only"'


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "{",
        "[1,2",
        '{"a":1}}',
        "[1 2]",  # two values side by side would become one
        '["a" "b"]',
        '{"a" 1}',
        '{"a":1,}',
        "[,1]",
        "[1:2]",
        "{} {}",
        "01",
        "1.",
        "nul",
        "truex",
        "[1,2] // a comment",
        '"a line\nbreak in a string"',
        '"unterminated',
        "[NaN]",
    ],
)
def test_a_text_that_is_not_one_json_value_is_not_laid_out(text: str):
    assert reindent(text) is None


@pytest.mark.parametrize(
    ("text", "longest"),
    [("", 0), ("abc", 3), ("a\nbcd\nef", 3), ("abcd\n", 4), ("\n\nxy\n", 2)],
)
def test_the_longest_line(text: str, longest: int):
    assert longest_line(text) == longest
