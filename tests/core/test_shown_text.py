"""Text cut to what a text view lays out at once: long lines cut and marked, a long text kept at
its two ends."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from studio.core.shown_text import LINE_CHARS_SHOWN, cut_long_lines, keep_ends


def test_a_text_of_short_lines_is_shown_as_it_is():
    text = "a\n" + "b" * LINE_CHARS_SHOWN + "\n"
    shown = cut_long_lines(text)
    assert shown.text == text
    assert shown.cut == ()


def test_each_long_line_is_cut_and_says_how_long_it_was():
    long = "x" * (LINE_CHARS_SHOWN + 1)
    longer = "y" * 3_000_000
    shown = cut_long_lines(f"first\n{long}\nmiddle\n{longer}")
    assert shown.cut == ((1, LINE_CHARS_SHOWN + 1), (3, 3_000_000))
    lines = shown.text.split("\n")
    assert lines[0] == "first"
    assert lines[1] == "x" * LINE_CHARS_SHOWN + f" … (cut: {LINE_CHARS_SHOWN + 1:,} characters)"
    assert lines[2] == "middle"
    assert lines[3] == "y" * LINE_CHARS_SHOWN + " … (cut: 3,000,000 characters)"


def test_a_text_within_the_bound_is_kept_whole():
    assert keep_ends("abc\n" * 10, 40) == ("abc\n" * 10, 0)


def test_a_long_text_keeps_its_start_and_end_at_line_breaks():
    lines = [f"line {n:06}" for n in range(100_000)]  # 11 characters with its break
    text = "\n".join(lines) + "\n"
    shown, left_out = keep_ends(text, 100_000)
    head, mark, tail = shown.partition(f"… ({left_out:,} characters not shown) …\n")
    assert mark
    assert head.startswith("line 000000\n") and head.endswith("\n")
    assert tail.endswith("line 099999\n")
    assert text.startswith(head)
    assert text.endswith(tail)
    assert len(head) + left_out + len(tail) == len(text)
    assert 45_000 <= len(head) <= 50_000
    assert 45_000 <= len(tail) <= 50_000
    # whole lines on each side of the mark
    assert tail.split("\n", 1)[0].startswith("line ")
    assert len(tail.split("\n", 1)[0]) == 11


def test_a_long_text_without_line_breaks_is_cut_in_the_middle_of_its_line():
    text = "a" * 300 + "b" * 300
    shown, left_out = keep_ends(text, 200)
    assert left_out == 400
    assert shown == "a" * 100 + "\n… (400 characters not shown) …\n" + "b" * 100


@given(st.text(alphabet="ab\n", max_size=400), st.integers(min_value=2, max_value=300))
def test_the_ends_kept_are_the_texts_own(text, most):
    shown, left_out = keep_ends(text, most)
    if len(text) <= most:
        assert (shown, left_out) == (text, 0)
        return
    mark = f"… ({left_out:,} characters not shown) …\n"
    tail = shown.rpartition(mark)[2]
    head = text[: len(text) - left_out - len(tail)]
    assert shown == head + ("" if head.endswith("\n") else "\n") + mark + tail
    assert text.endswith(tail)
    assert len(head) <= most // 2 and len(tail) <= most // 2
