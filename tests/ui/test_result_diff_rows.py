"""The request diff's rows and the selected row in full, without a window: long runs of
unchanged messages fold into one row, long sections come in ranges, and a row finds what it
stands for on each side."""

from __future__ import annotations

from typing import Any

from studio.core.pre_llm.diff import diff_request
from studio.ui.result_diff_detail import MISSING, row_values
from studio.ui.result_diff_rows import DIFF_CHUNK, DiffRow, build_rows
from studio.ui.result_diff_sides import DiffSides


def messages(count: int) -> list[dict[str, Any]]:
    return [{"role": "user", "content": f"m{k}"} for k in range(count)]


def rows_of(node: DiffRow) -> list[tuple[str, str, str]]:
    return [(c.kind, c.left, c.right) for c in (node.child(k) for k in range(node.count))]


def message_rows(original: Any, transformed: Any, changes_only: bool = False) -> DiffRow:
    sides = DiffSides(original, transformed)
    return build_rows(diff_request(original, transformed), sides, changes_only).child(1)


def test_unchanged_runs_fold_around_a_change_and_open_to_their_messages():
    original = messages(20)
    transformed = [dict(m) for m in original]
    transformed[10]["content"] = "changed"

    section = message_rows({"messages": original}, {"messages": transformed})

    rows = rows_of(section)
    gap = "⋯ 7 unchanged messages (#0 … #6)"
    assert rows[0] == ("same", gap, gap)
    assert rows[1:4] == [
        ("same", f"#{k} user · text — m{k}", f"#{k} user · text — m{k}") for k in (7, 8, 9)
    ]
    assert rows[4] == ("changed", "#10 user · text — m10", "#10 user · text — changed")
    gap = "⋯ 6 unchanged messages (#14 … #19)"
    assert rows[-1] == ("same", gap, gap)
    assert len(rows_of(section.child(0))) == 7
    assert rows_of(section.child(4)) == [("changed", "[0] text — m10", "[0] text — changed")]
    assert section.first_change() == 4


def test_a_long_section_comes_in_ranges_labelled_by_message_number():
    original = messages(1200)
    transformed = [{"role": "user", "content": f"n{k}"} for k in range(1200)]

    section = message_rows({"messages": original}, {"messages": transformed}, changes_only=True)

    assert DIFF_CHUNK == 500
    assert rows_of(section) == [
        ("changed", "#0 … #499", "#0 … #499  · 500 changed"),
        ("changed", "#500 … #999", "#500 … #999  · 500 changed"),
        ("changed", "#1000 … #1199", "#1000 … #1199  · 200 changed"),
    ]
    assert section.child(2).count == 200
    assert section.child(2).child(0).payload == ("message", 1000, 1000)


def test_a_row_finds_what_it_stands_for_on_each_side():
    original = {
        "system": "s",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "x"}, "y"]}],
        "tools": [{"name": "t"}],
        "options": {"temperature": 0.1},
    }
    transformed = {
        "messages": [{"role": "user", "content": "just text"}],
        "tools": [{"name": "t", "description": "d"}],
        "options": {"temperature": 0.1, "top_p": None},
    }
    sides = DiffSides(original, transformed)

    assert row_values(sides, ("system",)) == ("s", MISSING, "System")
    assert row_values(sides, ("block", 0, 0, 1, 0)) == (
        "y",
        {"type": "text", "text": "just text"},
        "Message #0, block #1 → #0",
    )
    assert row_values(sides, ("tool", 0, None)) == ({"name": "t"}, MISSING, "Tool #0 → —")
    assert row_values(sides, ("option", "top_p")) == (MISSING, None, "top_p")
    assert row_values(sides, ("range",)) == (MISSING, MISSING, "")
