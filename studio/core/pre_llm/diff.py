"""The diff of an original pre-LLM request against the one a hook returned (spec/adf.md §3).

``diff_request(original, transformed)`` returns a ``RequestDiff``: plain data that a view shows
side by side; ``only_changes`` drops what is the same; ``summary`` says it in one line.

- **messages** are aligned with ``difflib.SequenceMatcher`` over equality classes of whole
  messages, after trimming the common head and tail. The classes use Python equality (C speed):
  key order and ``1`` against ``1.0`` are no change, as in JSON; so is ``true`` against ``1``
  inside an otherwise equal message, which JSON would call a change. A removed message that
  reappears elsewhere is marked as moved. Within a replaced run, messages of the same role are
  paired into ``changed`` entries (the most alike first when the run is small); a changed entry
  lists its blocks, each ``same``, ``added``, ``removed`` or ``changed``, with an inline word diff
  of the text of text, thinking and tool_result blocks.
- **tools** are matched by name; entries follow the transformed order, and a removed tool is shown
  where it was (after the nearest tool before it that is still there).
- **system** is ``same`` or ``changed``, with rows of a line diff (changed rows carry a word diff).
- **options** are compared key by key, in the same order rule as tools.

Any input is accepted: a side that is not an object, or a part of the wrong type, is read as empty
and described in ``problems``; nothing here raises on odd values or runs their code for display.

This module holds the diff's data, its text diff and its entry points; ``diff_align`` matches the
two sides, ``diff_labels`` names messages and blocks, ``diff_messages`` and ``diff_tools_options``
build the entries.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import rfc8785

from studio.core.json.values import MAX_SAFE_INTEGER, type_name
from studio.core.pre_llm.diff_align import json_equal, key_text, opcodes
from studio.core.pre_llm.diff_labels import Sides

Kind = Literal["same", "added", "removed", "changed"]
SegmentOp = Literal["equal", "delete", "insert"]

MINUS = "\u2212"
ARROW = "\u2192"
REQUEST_KEYS = ("system", "messages", "tools", "options")
TEXT_FIELDS = {"text": "text", "thinking": "thinking", "tool_result": "content"}
"""For each block type, the string field that gets an inline diff."""

# Limits that keep a diff fast on any input.
_WORD_DIFF_TOKENS = 1500
"""A changed stretch of more tokens than this on either side is shown as deleted and inserted."""
_SHOWN_STRING = 32


# ---------------------------------------------------------------------------------------------
# Data


@dataclass(frozen=True, slots=True)
class Segment:
    """A piece of an inline diff: ``equal`` text is on both sides, ``delete`` only in the original,
    ``insert`` only in the transformed text."""

    op: SegmentOp
    text: str


@dataclass(frozen=True, slots=True)
class LineRow:
    """One row of a side-by-side line diff; line numbers count from 0.

    A ``changed`` row pairs a removed line with an added one and carries their word diff.
    """

    kind: Kind
    original_line: int | None
    transformed_line: int | None
    original_text: str
    transformed_text: str
    segments: tuple[Segment, ...] = ()


@dataclass(frozen=True, slots=True)
class SystemDiff:
    kind: Literal["same", "changed"]
    original: str
    transformed: str
    lines: tuple[LineRow, ...]


@dataclass(frozen=True, slots=True)
class BlockChange:
    """One content block of a changed message.

    ``fields`` names the block keys whose values differ (for ``changed``); ``text_field`` is the
    key the inline ``segments`` are about (``text``, ``thinking`` or a tool result's ``content``).
    """

    kind: Kind
    original_index: int | None
    transformed_index: int | None
    block_type: str
    label: str
    fields: tuple[str, ...] = ()
    text_field: str | None = None
    segments: tuple[Segment, ...] = ()


@dataclass(slots=True)
class MessageEntry:
    """One row of the message diff (read-only by convention: not frozen, because a diff makes one
    per message and a frozen dataclass takes five times as long to build).

    ``original_index`` is set for same, removed and changed entries, ``transformed_index`` for
    same, added and changed ones. A removed message that the transformed request holds elsewhere
    has ``moved_to`` (its transformed index); the added one there has ``moved_from``. ``fields``
    (message keys other than ``content`` that differ), ``notes`` and ``blocks`` are for changed
    entries only. The messages themselves, their labels and the blocks are read on demand.
    """

    kind: Kind
    original_index: int | None
    transformed_index: int | None
    role: str
    fields: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    moved_to: int | None = None
    moved_from: int | None = None
    sides: Sides | None = field(default=None, repr=False, compare=False)
    _blocks: tuple[BlockChange, ...] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    @property
    def blocks(self) -> tuple[BlockChange, ...]:
        """For a changed entry, its blocks, each same, added, removed or changed (worked out on
        first use: a view asks only for the entries it shows); empty for any other entry."""
        if self._blocks is None:
            if (
                self.kind != "changed"
                or self.sides is None
                or self.original_index is None
                or self.transformed_index is None
            ):
                self._blocks = ()
            else:
                # The message diff builds this module's entries, so it is imported on first use.
                from studio.core.pre_llm.diff_messages import diff_message_blocks

                self._blocks = diff_message_blocks(
                    self.sides, self.original_index, self.transformed_index
                )
        return self._blocks

    @property
    def moved(self) -> bool:
        return self.moved_to is not None or self.moved_from is not None

    @property
    def original(self) -> Any:
        """The original message (``None`` for an added entry)."""
        if self.sides is None or self.original_index is None:
            return None
        return self.sides.original.messages[self.original_index]

    @property
    def transformed(self) -> Any:
        """The transformed message (``None`` for a removed entry)."""
        if self.sides is None or self.transformed_index is None:
            return None
        return self.sides.transformed.messages[self.transformed_index]

    @property
    def original_label(self) -> str | None:
        if self.sides is None or self.original_index is None:
            return None
        return self.sides.original.label(self.original_index)

    @property
    def transformed_label(self) -> str | None:
        if self.sides is None or self.transformed_index is None:
            return None
        return self.sides.transformed.label(self.transformed_index)

    @property
    def label(self) -> str:
        """``user · text``, ``assistant · text, tool_use fs_read``: the transformed message's, or
        the original's for a removed entry."""
        return self.transformed_label or self.original_label or f"{self.role} · ?"


@dataclass(frozen=True, slots=True)
class ToolEntry:
    """A tool matched by name; ``keys`` lists what differs for a changed one (``description``,
    ``input_schema``, any other key). ``moved`` marks a kept tool whose place among the kept tools
    changed. An added tool is one the hook presents but the runtime will not enable."""

    kind: Kind
    name: str
    original_index: int | None
    transformed_index: int | None
    keys: tuple[str, ...] = ()
    moved: bool = False


@dataclass(frozen=True, slots=True)
class OptionEntry:
    """One key of ``options``; ``old`` is ``None`` when added and ``new`` is ``None`` when removed
    (the kind tells which)."""

    kind: Kind
    key: str
    old: Any = None
    new: Any = None

    @property
    def text(self) -> str:
        """``temperature 0.7 → 0.2``, ``maxTokens added (4096)``, ``reasoning changed``."""
        if self.kind == "changed":
            old, new = short_json(self.old), short_json(self.new)
            if old is not None and new is not None:
                return f"{self.key} {old} {ARROW} {new}"
            return f"{self.key} changed"
        if self.kind in ("added", "removed"):
            value = short_json(self.new if self.kind == "added" else self.old)
            return f"{self.key} {self.kind}" + (f" ({value})" if value is not None else "")
        return f"{self.key} {short_json(self.new) or 'unchanged'}"


@dataclass(frozen=True, slots=True)
class RequestDiff:
    system: SystemDiff
    messages: tuple[MessageEntry, ...]
    tools: tuple[ToolEntry, ...]
    options: tuple[OptionEntry, ...]
    problems: tuple[str, ...] = ()
    not_objects: bool = False
    """Either side is not a JSON object at all; ``summary`` then names only that."""

    @property
    def summary(self) -> str:
        return summary(self)

    @property
    def identical(self) -> bool:
        if self.problems or self.system.kind != "same":
            return False
        entries: tuple[MessageEntry | ToolEntry | OptionEntry, ...]
        entries = (*self.messages, *self.tools, *self.options)
        return all(e.kind == "same" for e in entries)


# ---------------------------------------------------------------------------------------------
# Showing values


def json_number(value: int | float) -> str:
    """A number as JSON.stringify writes it: ``1.0`` is ``1``, ``1e21`` is ``1e+21``."""
    try:
        if isinstance(value, int) and not isinstance(value, bool):
            if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
                return str(int(value))
            value = float(value)
        number = float(value)
        if math.isnan(number):
            return "NaN"
        if math.isinf(number):
            return "Infinity" if number > 0 else "-Infinity"
        return rfc8785.dumps(number).decode()
    except (OverflowError, ValueError, TypeError, rfc8785.CanonicalizationError):
        return "Infinity" if value > 0 else "-Infinity"


def short_json(value: Any, limit: int = _SHOWN_STRING) -> str | None:
    """A scalar as JSON writes it, or ``None`` for an object, an array, a long string or a
    non-JSON value (runs no code of the value's own)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if type(value) is int or type(value) is float:
        return json_number(value)
    if type(value) is str and len(value) <= limit:
        return json.dumps(value, ensure_ascii=False)
    return None


def _safe_text(value: Any) -> str:
    """A value's text for a line diff when it should have been a string."""
    if isinstance(value, str):
        return str.__str__(value)
    shown = short_json(value, limit=200)
    return shown if shown is not None else f"({type_name(value)})"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


# ---------------------------------------------------------------------------------------------
# Text


TOKEN = re.compile(r"\s+|\w+|[^\w\s]")

TEXT_DIFF_MOST = 200_000
"""Two texts are diffed word by word (:func:`diff_text`) up to this many characters together;
longer ones (a hook's 20 MB message) are shown changed as a whole: the window asks for the diff
on its own thread, and 20 MB took 1.6 s."""


def diff_text(original: str, transformed: str) -> tuple[Segment, ...]:
    """An inline diff: whole lines first, then words within the changed lines.

    Joining the ``equal`` and ``delete`` segments gives ``original``; ``equal`` and ``insert``
    give ``transformed``.
    """
    if original == transformed:
        return (Segment("equal", original),) if original else ()
    lines_a = original.splitlines(keepends=True)
    lines_b = transformed.splitlines(keepends=True)
    if len(lines_a) <= 1 and len(lines_b) <= 1:
        return _merge(_diff_words(original, transformed))
    out: list[Segment] = []
    for tag, i1, i2, j1, j2 in opcodes(lines_a, lines_b):
        a, b = "".join(lines_a[i1:i2]), "".join(lines_b[j1:j2])
        if tag == "equal":
            out.append(Segment("equal", a))
        elif tag == "replace":
            out.extend(_diff_words(a, b))
        else:
            out.extend(_changed(a, b))
    return _merge(out)


def _changed(a: str, b: str) -> list[Segment]:
    out = []
    if a:
        out.append(Segment("delete", a))
    if b:
        out.append(Segment("insert", b))
    return out


def _common_prefix(a: str, b: str) -> int:
    """The length of the common start, by halving (each comparison runs at C speed)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        mid = (low + high + 1) // 2
        if a[low:mid] == b[low:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def _common_suffix(a: str, b: str, limit: int) -> int:
    low, high = 0, min(len(a), len(b), limit)
    while low < high:
        mid = (low + high + 1) // 2
        if a[len(a) - mid : len(a) - low] == b[len(b) - mid : len(b) - low]:
            low = mid
        else:
            high = mid - 1
    return low


def _word_char(text: str, at: int) -> bool:
    return 0 <= at < len(text) and (text[at].isalnum() or text[at] == "_")


def _diff_words(a: str, b: str) -> list[Segment]:
    # The common start and end, cut back to whole words, are equal text; words in between.
    head = _common_prefix(a, b)
    while head and _word_char(a, head - 1) and (_word_char(a, head) or _word_char(b, head)):
        head -= 1
    tail = _common_suffix(a, b, min(len(a), len(b)) - head)
    while tail and (
        _word_char(a, len(a) - tail)
        and (_word_char(a, len(a) - tail - 1) or _word_char(b, len(b) - tail - 1))
    ):
        tail -= 1
    mid_a, mid_b = a[head : len(a) - tail], b[head : len(b) - tail]
    out = [Segment("equal", a[:head])] if head else []
    tokens_a, tokens_b = TOKEN.findall(mid_a), TOKEN.findall(mid_b)
    if len(tokens_a) > _WORD_DIFF_TOKENS or len(tokens_b) > _WORD_DIFF_TOKENS:
        out.extend(_changed(mid_a, mid_b))
    elif tokens_a and tokens_b:
        run: list[Segment] = []
        for tag, i1, i2, j1, j2 in opcodes(tokens_a, tokens_b):
            x, y = "".join(tokens_a[i1:i2]), "".join(tokens_b[j1:j2])
            if tag == "equal":
                run.append(Segment("equal", x))
            else:
                run.extend(_changed(x, y))
        out.extend(_absorb_gaps(run))
    else:
        out.extend(_changed(mid_a, mid_b))
    if tail:
        out.append(Segment("equal", a[len(a) - tail :]))
    return out


def _absorb_gaps(segments: list[Segment]) -> list[Segment]:
    """Fold an equal stretch of only spaces or one character between two changes into the
    change, so that ``a b c`` against ``x y z`` reads as one replacement, not six."""
    out: list[Segment] = []
    for k, seg in enumerate(segments):
        if (
            seg.op == "equal"
            and 0 < k < len(segments) - 1
            and (not seg.text.strip() or len(seg.text) == 1)
        ):
            out.append(Segment("delete", seg.text))
            out.append(Segment("insert", seg.text))
        else:
            out.append(seg)
    return out


def _merge(segments: Iterable[Segment]) -> tuple[Segment, ...]:
    """Joins neighbours: each run of changes becomes one delete followed by one insert."""
    out: list[Segment] = []
    deleted: list[str] = []
    inserted: list[str] = []
    equal: list[str] = []

    def flush_change() -> None:
        if deleted:
            out.append(Segment("delete", "".join(deleted)))
            deleted.clear()
        if inserted:
            out.append(Segment("insert", "".join(inserted)))
            inserted.clear()

    for seg in segments:
        if not seg.text:
            continue
        if seg.op == "equal":
            flush_change()
            equal.append(seg.text)
        else:
            if equal:
                out.append(Segment("equal", "".join(equal)))
                equal.clear()
            (deleted if seg.op == "delete" else inserted).append(seg.text)
    flush_change()
    if equal:
        out.append(Segment("equal", "".join(equal)))
    return tuple(out)


def diff_lines(original: str, transformed: str) -> tuple[LineRow, ...]:
    """Rows of a side-by-side line diff; a replaced run pairs its lines in order."""
    lines_a = original.splitlines()
    lines_b = transformed.splitlines()
    rows: list[LineRow] = []
    for tag, i1, i2, j1, j2 in opcodes(lines_a, lines_b):
        if tag == "equal":
            for k in range(i2 - i1):
                text = lines_a[i1 + k]
                rows.append(LineRow("same", i1 + k, j1 + k, text, text))
            continue
        paired = min(i2 - i1, j2 - j1) if tag == "replace" else 0
        for k in range(paired):
            a, b = lines_a[i1 + k], lines_b[j1 + k]
            rows.append(LineRow("changed", i1 + k, j1 + k, a, b, _merge(_diff_words(a, b))))
        for i in range(i1 + paired, i2):
            rows.append(LineRow("removed", i, None, lines_a[i], ""))
        for j in range(j1 + paired, j2):
            rows.append(LineRow("added", None, j, "", lines_b[j]))
    return tuple(rows)


# ---------------------------------------------------------------------------------------------
# The request


def _not(what: str, value: Any, expected: str) -> str:
    shown = type_name(value)
    if shown.endswith("which is not JSON"):
        return f"{what} is {shown}"
    return f"{what} is {shown}, not {expected}"


def _part(request: dict[Any, Any], key: str, side: str, want: type, problems: list[str]) -> Any:
    if key not in request:
        return want()
    value = request[key]
    if type(value) is not want:
        article = "an array" if want is list else "an object"
        problems.append(_not(f"the {side} {key}", value, article))
        return want()
    return value


def _request(value: Any, side: str, problems: list[str]) -> dict[Any, Any]:
    if type(value) is not dict:
        problems.append(_not(f"the {side} request", value, "an object"))
        return {}
    extra = [key_text(key) for key in value if key not in REQUEST_KEYS]
    if extra:
        words = "an unexpected key" if len(extra) == 1 else "unexpected keys"
        problems.append(f"the {side} request has {words}: {', '.join(extra)}")
    return value


def _system_text(request: dict[Any, Any], side: str, problems: list[str]) -> str:
    if "system" not in request:
        return ""
    value = request["system"]
    if type(value) is not str:
        problems.append(_not(f"the {side} system", value, "a string"))
    return _safe_text(value)


def diff_request(original: Any, transformed: Any) -> RequestDiff:
    """The diff of an original pre-LLM request against the transformed one.

    Never raises: odd values are described in ``problems``; should anything unforeseen still go
    wrong, the diff is empty and its one problem says so."""
    try:
        return _diff_request(original, transformed)
    except Exception as exc:  # pragma: no cover - a last line of defence for the view
        empty = SystemDiff("same", "", "", ())
        return RequestDiff(empty, (), (), (), (f"the diff failed ({type(exc).__name__})",), True)


def _diff_request(original: Any, transformed: Any) -> RequestDiff:
    # The builders of the entries import this module's entry types, so they come on first use.
    from studio.core.pre_llm.diff_messages import diff_messages
    from studio.core.pre_llm.diff_tools_options import diff_options, diff_tools

    problems: list[str] = []
    request_a = _request(original, "original", problems)
    request_b = _request(transformed, "transformed", problems)
    not_objects = type(original) is not dict or type(transformed) is not dict

    system_a = _system_text(request_a, "original", problems)
    system_b = _system_text(request_b, "transformed", problems)
    same_system = ("system" in request_a) == ("system" in request_b) and json_equal(
        request_a.get("system"), request_b.get("system")
    )
    system = SystemDiff(
        "same" if same_system else "changed",
        system_a,
        system_b,
        diff_lines(system_a, system_b),
    )
    messages = diff_messages(
        _part(request_a, "messages", "original", list, problems),
        _part(request_b, "messages", "transformed", list, problems),
    )
    tools = diff_tools(
        _part(request_a, "tools", "original", list, problems),
        _part(request_b, "tools", "transformed", list, problems),
    )
    options = diff_options(
        _part(request_a, "options", "original", dict, problems),
        _part(request_b, "options", "transformed", dict, problems),
    )
    return RequestDiff(system, messages, tools, options, tuple(problems), not_objects)


# ---------------------------------------------------------------------------------------------
# Views of a diff


def only_changes(diff: RequestDiff) -> RequestDiff:
    """The diff without its unchanged messages, tools and options (a changed message keeps all
    its blocks, for context; a same system stays, with its kind saying so)."""
    return replace(
        diff,
        messages=tuple(e for e in diff.messages if e.kind != "same"),
        tools=tuple(e for e in diff.tools if e.kind != "same" or e.moved),
        options=tuple(e for e in diff.options if e.kind != "same"),
    )


def _count(entries: Iterable[Any], kind: str) -> int:
    return sum(1 for e in entries if e.kind == kind)


def summary(diff: RequestDiff) -> str:
    """One line in plain words: ``system changed, 2 messages removed, 1 message added,
    tools −3, temperature 0.7 → 0.2``; ``no changes`` when identical."""
    if diff.not_objects:
        return ", ".join(diff.problems)
    parts = list(diff.problems)
    if diff.system.kind == "changed":
        parts.append("system changed")
    removed = sum(1 for e in diff.messages if e.kind == "removed" and e.moved_to is None)
    added = sum(1 for e in diff.messages if e.kind == "added" and e.moved_from is None)
    changed = _count(diff.messages, "changed")
    moved = sum(1 for e in diff.messages if e.moved_to is not None)
    for count, word in ((removed, "removed"), (added, "added"), (changed, "changed")):
        if count:
            parts.append(f"{_plural(count, 'message')} {word}")
    if moved:
        parts.append(f"{_plural(moved, 'message')} moved")
    tools_added, tools_removed = _count(diff.tools, "added"), _count(diff.tools, "removed")
    if tools_added or tools_removed:
        counts = [f"+{tools_added}"] if tools_added else []
        counts += [f"{MINUS}{tools_removed}"] if tools_removed else []
        parts.append("tools " + " ".join(counts))
    tools_changed = _count(diff.tools, "changed")
    if tools_changed:
        parts.append(f"{_plural(tools_changed, 'tool')} changed")
    if any(e.moved for e in diff.tools):
        parts.append("tools reordered")
    parts.extend(e.text for e in diff.options if e.kind != "same")
    return ", ".join(parts) if parts else "no changes"
