"""Text cut to what a text view can lay out without holding the window.

Qt lays a line out whole, on the window's thread: a line of 1 MB takes it about 0.4 s, one of
20 MB about fifteen. Many short lines cost about 30 ms a megabyte."""

from __future__ import annotations

from dataclasses import dataclass

LINE_CHARS_SHOWN = 10_000
"""Lines are shown up to this many characters."""


@dataclass(frozen=True)
class CutLines:
    text: str
    """The text, each line longer than :data:`LINE_CHARS_SHOWN` cut there and marked."""
    cut: tuple[tuple[int, int], ...] = ()
    """Each cut line's index (from 0) and its length before the cut."""


def cut_long_lines(text: str) -> CutLines:
    # Split, not searched by a pattern of a line's length: a pattern is tried from every
    # character of a line, which costs the square of the line's length.
    lines = text.split("\n")
    if max(map(len, lines)) <= LINE_CHARS_SHOWN:
        return CutLines(text)
    cut = tuple((n, len(line)) for n, line in enumerate(lines) if len(line) > LINE_CHARS_SHOWN)
    for n, length in cut:
        lines[n] = lines[n][:LINE_CHARS_SHOWN] + f" … (cut: {length:,} characters)"
    return CutLines("\n".join(lines), cut)


def keep_ends(text: str, most: int) -> tuple[str, int]:
    """``text`` when it has at most ``most`` characters; else its first and last ``most // 2``
    (each side ending at a line break when one is in its last tenth) around a line saying how
    many were left out, and that count."""
    if len(text) <= most:
        return text, 0
    half = most // 2
    head_end = text.rfind("\n", half - half // 10, half)
    head_end = half if head_end < 0 else head_end + 1
    tail_start = text.find("\n", len(text) - half, len(text) - half + half // 10)
    tail_start = len(text) - half if tail_start < 0 else tail_start + 1
    left_out = tail_start - head_end
    head = text[:head_end]
    mark = f"… ({left_out:,} characters not shown) …\n"
    return head + ("" if head.endswith("\n") else "\n") + mark + text[tail_start:], left_out
