"""JSON pointers to places in JSON text: exact spans, the nearest ancestor, malformed text."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from studio.core.findings import pointer
from studio.core.json.locate import (
    JsonTextError,
    line_column,
    line_columns,
    locate,
    locate_all,
    parse_json,
    parse_json_in_pieces,
    parse_pointer,
)
from tests.support.hypothesis_profiles import examples
from tests.support.json_strategies import json_values

TEXT = """{
  "description": "a [tricky] {string} with \\"quotes\\"",
  "request": {
    "messages": [
      {"role": "user", "content": "hi"},
      {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}
    ],
    "tools": [],
    "options": {"maxTokens": 1024, "a/b": true, "m~n": null}
  }
}
"""


def span(text: str, where: Any) -> str:
    place = locate(text, where)
    return text[place.start : place.end]


def test_pointer_parsing_unescapes_and_accepts_a_missing_slash():
    assert parse_pointer("") == ()
    assert parse_pointer("/a~1b/0/m~0n") == ("a/b", "0", "m~n")
    assert parse_pointer("messages/0") == ("messages", "0")
    assert parse_pointer("/") == ("",)


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        ("", TEXT.strip()),
        ("/description", '"a [tricky] {string} with \\"quotes\\""'),
        ("/request/messages/0", '{"role": "user", "content": "hi"}'),
        ("/request/messages/1/content/0/text", '"ok"'),
        ("/request/tools", "[]"),
        ("/request/options/maxTokens", "1024"),
        ("/request/options/a~1b", "true"),
        ("/request/options/m~0n", "null"),
        (("request", "messages", 1, "role"), '"assistant"'),
    ],
)
def test_a_present_path_gives_the_exact_value(where: Any, expected: str):
    place = locate(TEXT, where)
    assert place.exact
    assert TEXT[place.start : place.end] == expected


def test_a_member_also_gives_its_key():
    place = locate(TEXT, "/request/options/maxTokens")
    assert TEXT[place.key_start : place.key_end] == '"maxTokens"'
    assert locate(TEXT, "/request/messages/0").key_start == -1


@pytest.mark.parametrize(
    ("where", "ancestor", "depth"),
    [
        ("/request/system", "/request", 1),
        ("/request/messages/7/role", "/request/messages", 2),
        ("/request/messages/0/missing/deeper", "/request/messages/0", 3),
        ("/request/tools/0", "/request/tools", 2),
        ("/request/options/maxTokens/x", "/request/options/maxTokens", 3),
        ("/nothing", "", 0),
    ],
)
def test_a_missing_path_gives_its_deepest_ancestor(where: str, ancestor: str, depth: int):
    place = locate(TEXT, where)
    assert not place.exact
    assert place.depth == depth
    assert (place.start, place.end) == (locate(TEXT, ancestor).start, locate(TEXT, ancestor).end)


def test_an_index_is_not_a_key_and_a_key_is_not_an_index():
    assert not locate(TEXT, "/request/messages/role").exact
    assert not locate('{"0": 1}', "/x").exact
    assert span('{"0": 1}', "/0") == "1"
    assert not locate("[1, 2]", "/01").exact


def test_the_last_of_duplicate_keys_is_the_one_that_counts():
    text = '{"a": 1, "b": {"c": 2}, "a": {"d": 3}}'
    assert json.loads(text)["a"] == {"d": 3}
    assert span(text, "/a") == '{"d": 3}'
    assert span(text, "/a/d") == "3"


def test_escaped_keys_are_compared_by_their_value():
    text = '{"caf\\u00e9": 1, "tab\\tkey": [true], "quote\\"d": 2}'
    assert span(text, "/café") == "1"
    assert span(text, ["tab\tkey", 0]) == "true"
    assert span(text, '/quote"d') == "2"


def test_many_paths_at_once_come_back_in_order():
    paths = ["/request/options/maxTokens", "/description", "/request/messages/1/role", "/x"]
    places = locate_all(TEXT, paths)
    assert [p.exact for p in places] == [True, True, True, False]
    assert [TEXT[p.start : p.end] for p in places[:3]] == [
        "1024",
        span(TEXT, "/description"),
        '"assistant"',
    ]


def test_malformed_text_never_raises():
    for text in [
        "",
        "   ",
        "{",
        '{"a": ',
        '{"a": [1, 2',
        '{"a": "never ends',
        "[1, }",
        "{1: 2}",
        "nul",
    ]:
        for where in ["", "/a", "/a/1", "/0"]:
            place = locate(text, where)
            assert 0 <= place.start <= place.end <= len(text)
    assert span('{"a": [1, 2', "/a/1") == "2"


def test_line_and_column_are_one_based_and_count_characters():
    text = 'ab\n"é😀"\n  x'
    assert line_column(text, 0) == (1, 1)
    assert line_column(text, 3) == (2, 1)
    assert line_column(text, 6) == (2, 4)
    assert line_column(text, len(text) - 1) == (3, 3)
    assert line_columns(text, [len(text) - 1, 0, 4]) == [(3, 3), (1, 1), (2, 2)]


def test_parse_json_reports_where_the_syntax_breaks():
    with pytest.raises(JsonTextError) as caught:
        parse_json('{\n  "a": 1\n  "b": 2\n}')
    error = caught.value
    assert (error.line, error.column) == (3, 3)
    assert "delimiter" in error.message


def test_an_unterminated_string_is_said_once_with_its_place():
    with pytest.raises(JsonTextError) as caught:
        parse_json('{"a": "cut')
    assert str(caught.value) == "Unterminated string starting at line 1, column 7"


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_parse_json_refuses_nan_and_infinity_with_their_place(constant: str):
    text = '{"s": "NaN Infinity",\n "n": ' + constant + "}"
    with pytest.raises(JsonTextError) as caught:
        parse_json(text)
    assert (caught.value.line, caught.value.column) == (2, 7)
    assert constant in caught.value.message


def test_a_large_document_is_located_in_one_scan():
    doc = {"request": {"messages": [{"role": "user", "content": "x [y] {z} " * 20}] * 20_000}}
    text = json.dumps(doc, indent=2)
    paths = [("request", "messages", i, "role") for i in range(0, 20_000, 97)]
    places = locate_all(text, paths)
    assert all(text[p.start : p.end] == '"user"' for p in places)


def _paths(value: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [at]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*at, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*at, i))
    return out


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        value = value[part]
    return value


@settings(max_examples=examples(150), deadline=None)
@given(json_values, st.sampled_from([None, 0, 2, "\t"]), st.data())
def test_every_path_of_any_value_locates_that_value(value: Any, indent: Any, data: Any):
    text = json.dumps(value, indent=indent, ensure_ascii=data.draw(st.booleans()))
    parsed = json.loads(text)  # duplicate keys collapse as the parser reads them
    paths = _paths(parsed)
    chosen = data.draw(st.lists(st.sampled_from(paths), min_size=1, max_size=6))
    for path, place in zip(chosen, locate_all(text, chosen), strict=True):
        assert place.exact
        assert json.loads(text[place.start : place.end]) == _at(parsed, path)
    one = chosen[0]
    assert locate(text, pointer(one)) == locate(text, one)


@settings(max_examples=examples(300), deadline=None)
@given(json_values, st.sampled_from([None, 0, 2]), st.integers(min_value=0, max_value=4))
def test_parsing_in_pieces_gives_the_same_value(value: Any, indent: Any, depth: int):
    text = json.dumps(value, indent=indent)
    assert parse_json_in_pieces(text, depth) == parse_json(text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "{",
        '{"a": 1,}',
        '{"a" 1}',
        "[1 2]",
        '{"a": [1, NaN]}',
        '{"a": 1} x',
        "\ufeff{}",
        "{1: 2}",
        '["a\x01"]',
        '{"a": {"b": [1, 2}}',
    ],
)
def test_parsing_in_pieces_fails_exactly_as_parse_json(text: str):
    with pytest.raises(JsonTextError) as whole:
        parse_json(text)
    with pytest.raises(JsonTextError) as pieces:
        parse_json_in_pieces(text)
    assert (pieces.value.offset, pieces.value.message) == (whole.value.offset, whole.value.message)


def test_parsing_in_pieces_keeps_the_last_of_duplicate_keys_and_surrounding_space():
    text = ' \n{"a": 1, "b": {"c": [1, {"d": 2}]}, "a": {"x": -0.5e3}}\t\n'
    assert parse_json_in_pieces(text, 5) == json.loads(text)
    assert parse_json_in_pieces(text, 5)["a"] == {"x": -500.0}
