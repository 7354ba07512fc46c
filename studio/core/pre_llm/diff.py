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
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from difflib import SequenceMatcher
from functools import partial
from typing import Any, Literal

import rfc8785

from studio.core.json.values import MAX_SAFE_INTEGER, type_name

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
_PAIRING_CELLS = 400
"""A replaced run of at most this many (original x transformed) messages is paired by likeness."""
_LIKENESS_CHARS = 2000
_POPULAR_WORK = 1_000_000
"""Above this much matching work from repeated elements, SequenceMatcher is not used first."""
_MYERS_WORK = 400_000
"""Myers' algorithm gives up after this many steps (about 40 ms)."""
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
    sides: _Sides | None = field(default=None, repr=False, compare=False)
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
                self._blocks = _diff_message_blocks(
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
        return (
            not self.problems
            and self.system.kind == "same"
            and all(e.kind == "same" for e in (*self.messages, *self.tools, *self.options))
        )


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
# Equality classes: SequenceMatcher over small ints, each standing for equal values


def _equal(a: Any, b: Any) -> bool:
    if a is b:
        return True
    try:
        return bool(a == b)
    except Exception:  # a cycle, or a value whose own comparison fails
        return False


def _string_hash(value: Any) -> int:
    """Equal values hash alike: a string by its length and ends (hashing all of a long text
    would cost more than the whole diff), anything else by its type only."""
    if type(value) is str:
        return hash(value) if len(value) <= 64 else hash((len(value), value[:24], value[-24:]))
    return hash(type(value).__name__)


_MAIN_KEYS = ("id", "tool_use_id", "text", "thinking", "content")


def _block_fingerprint(block: Any) -> int:
    if type(block) is not dict:
        return _string_hash(block)
    for key in _MAIN_KEYS:
        main = block.get(key)
        if type(main) is str:
            return hash((len(block), key, len(main), main[:16]))
    return len(block)


def _message_fingerprint(message: Any) -> int:
    """Cheap, and alike for equal messages: sizes and the start of the most telling string."""
    if type(message) is not dict:
        return _string_hash(message)
    content = message.get("content")
    kind = type(content)
    if kind is str:
        return hash((len(message), len(content), content[:16]))
    if kind is list and content:
        block = content[-1]
        if type(block) is dict:
            for key in _MAIN_KEYS:
                main = block.get(key)
                if type(main) is str:
                    return hash((len(message), len(content), len(block), len(main), main[:16]))
        return hash((len(message), len(content), len(block) if type(block) is dict else -1))
    return hash((len(message), kind.__name__))


class _Classes:
    """Numbers equal values alike, across both sides of a diff: values are bucketed by a cheap
    fingerprint that equal values share, then compared with Python equality."""

    def __init__(self, fingerprint: Callable[[Any], int]) -> None:
        self._fingerprint = fingerprint
        self._buckets: dict[int, list[tuple[Any, int]]] = {}
        self._count = 0

    def ids(self, values: Sequence[Any]) -> list[int]:
        buckets = self._buckets
        fingerprint = self._fingerprint
        out = []
        for value in values:
            try:
                key = fingerprint(value)
            except Exception:  # an oddity that cannot be fingerprinted: a class of its own
                key = id(value)
            bucket = buckets.get(key)
            if bucket is None:
                buckets[key] = [(value, self._count)]
                out.append(self._count)
                self._count += 1
                continue
            for other, number in bucket:
                if _equal(value, other):
                    out.append(number)
                    break
            else:
                bucket.append((value, self._count))
                out.append(self._count)
                self._count += 1
        return out


Opcode = tuple[str, int, int, int, int]


def _opcodes(a: Sequence[Hashable], b: Sequence[Hashable]) -> list[Opcode]:
    """SequenceMatcher opcodes, with the common head and tail trimmed first (fast and exact)."""
    n, m = len(a), len(b)
    head = 0
    while head < n and head < m and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < n - head and tail < m - head and a[n - 1 - tail] == b[m - 1 - tail]:
        tail += 1
    mid_a, mid_b = a[head : n - tail], b[head : m - tail]
    ops: list[Opcode] = []
    if head:
        ops.append(("equal", 0, head, 0, head))
    if mid_a and mid_b:
        middle = None
        if _repetitive(mid_a, mid_b):
            # SequenceMatcher would take quadratic time, or with autojunk give a poor match;
            # few edits are still found fast and exactly by Myers' algorithm.
            middle = _myers(mid_a, mid_b)
        if middle is None:
            matcher = SequenceMatcher(None, mid_a, mid_b, autojunk=middle is not None)
            middle = matcher.get_opcodes()
        for tag, i1, i2, j1, j2 in middle:
            ops.append((tag, i1 + head, i2 + head, j1 + head, j2 + head))
    elif mid_a:
        ops.append(("delete", head, n - tail, head, head))
    elif mid_b:
        ops.append(("insert", head, head, head, m - tail))
    if tail:
        ops.append(("equal", n - tail, n, m - tail, m))
    return ops


def _repetitive(a: Sequence[Hashable], b: Sequence[Hashable]) -> bool:
    """Whether repeated elements would make SequenceMatcher's exact match quadratic."""
    if len(a) < 200 or len(b) < 200:
        return False
    counts: dict[Hashable, int] = {}
    for x in b:
        counts[x] = counts.get(x, 0) + 1
    work = 0
    for x in a:
        work += counts.get(x, 0)
    return work > _POPULAR_WORK


def _myers(a: Sequence[Hashable], b: Sequence[Hashable]) -> list[Opcode] | None:
    """The opcodes of a shortest edit script (Myers 1986), or ``None`` past ``_MYERS_WORK``."""
    n, m = len(a), len(b)
    offset = n + m + 1
    v = [0] * (2 * offset + 1)
    trace: list[list[int]] = []
    work = 0
    for d in range(n + m + 1):
        trace.append(v[offset - d - 1 : offset + d + 2])
        for k in range(-d, d + 1, 2):
            if k == -d or (k != d and v[offset + k - 1] < v[offset + k + 1]):
                x = v[offset + k + 1]
            else:
                x = v[offset + k - 1] + 1
            y = x - k
            start = x
            while x < n and y < m and a[x] == b[y]:
                x += 1
                y += 1
            work += x - start + 1
            v[offset + k] = x
            if x >= n and y >= m:
                return _myers_opcodes(trace, d, n, m)
        if work > _MYERS_WORK:
            return None
    return None  # pragma: no cover - the loop always ends at d <= n + m


def _myers_opcodes(trace: list[list[int]], end: int, n: int, m: int) -> list[Opcode]:
    """Walks back from (n, m). ``trace[d][k + d + 1]`` is the furthest x on diagonal k after
    d - 1 edits; each edit came from diagonal k + 1 (an insertion) or k - 1 (a deletion), and
    was followed by a run of equal elements."""
    steps: list[str] = []  # backwards, one per element: equal, delete or insert
    x, y = n, m
    for d in range(end, 0, -1):
        v = trace[d]
        k = x - y
        from_above = k == -d or (k != d and v[k - 1 + d + 1] < v[k + 1 + d + 1])
        prev_k = k + 1 if from_above else k - 1
        prev_x = v[prev_k + d + 1]
        prev_y = prev_x - prev_k
        while x > prev_x and y > prev_y:
            x -= 1
            y -= 1
            steps.append("equal")
        steps.append("insert" if x == prev_x else "delete")
        x, y = prev_x, prev_y
    steps.extend("equal" for _ in range(x))
    steps.reverse()
    return _steps_to_opcodes(steps, n, m)


def _steps_to_opcodes(steps: list[str], n: int, m: int) -> list[Opcode]:
    ops: list[Opcode] = []
    i = j = pos = 0
    while pos < len(steps):
        start_i, start_j = i, j
        if steps[pos] == "equal":
            while pos < len(steps) and steps[pos] == "equal":
                i, j, pos = i + 1, j + 1, pos + 1
            ops.append(("equal", start_i, i, start_j, j))
            continue
        while pos < len(steps) and steps[pos] != "equal":
            if steps[pos] == "delete":
                i += 1
            else:
                j += 1
            pos += 1
        tag = "replace" if i > start_i and j > start_j else ("delete" if i > start_i else "insert")
        ops.append((tag, start_i, i, start_j, j))
    return ops


# ---------------------------------------------------------------------------------------------
# Text


_TOKEN = re.compile(r"\s+|\w+|[^\w\s]")


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
    for tag, i1, i2, j1, j2 in _opcodes(lines_a, lines_b):
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
    tokens_a, tokens_b = _TOKEN.findall(mid_a), _TOKEN.findall(mid_b)
    if len(tokens_a) > _WORD_DIFF_TOKENS or len(tokens_b) > _WORD_DIFF_TOKENS:
        out.extend(_changed(mid_a, mid_b))
    elif tokens_a and tokens_b:
        run: list[Segment] = []
        for tag, i1, i2, j1, j2 in _opcodes(tokens_a, tokens_b):
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
    for tag, i1, i2, j1, j2 in _opcodes(lines_a, lines_b):
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
# Labels


def _role(message: Any) -> str:
    if type(message) is dict:
        role = message.get("role")
        if type(role) is str:
            return role
    return "?"


def _blocks(content: Any) -> list[Any]:
    """The content as blocks: a string is one text block; anything else not a list is one
    opaque block."""
    if type(content) is str:
        return [{"type": "text", "text": content}]
    if type(content) is list:
        return content
    return [content]


def _block_type(block: Any) -> str:
    if type(block) is dict:
        kind = block.get("type")
        return kind if type(kind) is str else "?"
    return "?"


def _tool_uses(message: Any) -> Iterable[tuple[str, str]]:
    if type(message) is not dict:
        return
    content = message.get("content")
    if type(content) is not list:
        return
    for block in content:
        if type(block) is dict and block.get("type") == "tool_use":
            use_id, name = block.get("id"), block.get("name")
            if type(use_id) is str and type(name) is str:
                yield use_id, name


class _Side:
    """One side's messages, with what labels need from them, found on demand."""

    __slots__ = ("_labels", "_names", "messages")

    def __init__(self, messages: Sequence[Any]) -> None:
        self.messages = messages
        self._names: dict[str, str] | None = None
        self._labels: dict[int, str] = {}

    def tool_name(self, use_id: Any) -> str | None:
        """The name of the tool_use with this id (the first one, if ids repeat)."""
        if type(use_id) is not str:
            return None
        if self._names is None:
            names: dict[str, str] = {}
            for message in self.messages:
                for found, name in _tool_uses(message):
                    names.setdefault(found, name)
            self._names = names
        return self._names.get(use_id)

    def block_label(self, block: Any) -> str:
        if type(block) is not dict:
            return f"not a block ({type_name(block)})"
        kind = _block_type(block)
        if kind == "tool_use":
            name = block.get("name")
            return f"tool_use {name}" if type(name) is str and name else "tool_use"
        if kind == "tool_result":
            name = self.tool_name(block.get("tool_use_id"))
            label = f"tool_result {name}" if name else "tool_result"
            return label + (" (error)" if block.get("is_error") is True else "")
        return kind

    def label(self, at: int) -> str:
        label = self._labels.get(at)
        if label is None:
            message = self.messages[at]
            label = self._labels[at] = f"{_role(message)} · {self._content_label(message)}"
        return label

    def _content_label(self, message: Any) -> str:
        if type(message) is not dict:
            return f"not an object ({type_name(message)})"
        if "content" not in message:
            return "no content"
        content = message["content"]
        if type(content) is str:
            return "text"
        if type(content) is not list:
            return f"content is {type_name(content)}"
        if not content:
            return "empty"
        labels = [self.block_label(block) for block in content[:3]]
        if len(content) > 3:
            labels[2:] = [f"+{len(content) - 2} more"]
        return ", ".join(labels)


@dataclass(frozen=True, slots=True)
class _Sides:
    original: _Side
    transformed: _Side


# ---------------------------------------------------------------------------------------------
# Messages


def _texts(message: Any) -> str:
    """The words of a message, for likeness only."""
    if type(message) is not dict:
        return ""
    parts: list[str] = []
    size = 0
    for block in _blocks(message.get("content")):
        if type(block) is not dict:
            continue
        for key in ("text", "thinking", "content", "name", "id", "tool_use_id"):
            value = block.get(key)
            if type(value) is str:
                parts.append(value[:_LIKENESS_CHARS])
                size += len(parts[-1])
        if size >= _LIKENESS_CHARS:
            break
    return " ".join(parts)[:_LIKENESS_CHARS]


def _words(message: Any) -> set[str]:
    return set(_TOKEN.findall(_texts(message)))


def _pair_likeness(
    words_a: Sequence[set[str]], words_b: Sequence[set[str]], a: int, b: int
) -> float:
    """How alike two messages are, 0 to 1, by the words they share."""
    x, y = words_a[a], words_b[b]
    if not x and not y:
        return 1.0
    return len(x & y) / len(x | y)


Step = tuple[int | None, int | None]
"""One step of an alignment of two runs: (original position, transformed position)."""


def _pair_runs(
    groups_a: Sequence[str],
    groups_b: Sequence[str],
    likeness: Callable[[int, int], float] | None = None,
) -> list[Step]:
    """Aligns two runs: items of the same group may pair; as many pairs as possible and, when a
    ``likeness`` is given and the run is small, among those the most alike."""
    n, m = len(groups_a), len(groups_b)
    if likeness is None or n * m > _PAIRING_CELLS:
        return _pair_greedy(groups_a, groups_b)
    # Dynamic programming from the end: best[i][j] = (pairs, likeness) for a[i:], b[j:].
    best = [[(0, 0.0)] * (m + 1) for _ in range(n + 1)]
    take: list[list[bool]] = [[False] * m for _ in range(n)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            cand = max(best[i + 1][j], best[i][j + 1])
            if groups_a[i] == groups_b[j]:
                pairs, like = best[i + 1][j + 1]
                paired = (pairs + 1, like + likeness(i, j))
                if paired >= cand:
                    cand = paired
                    take[i][j] = True
            best[i][j] = cand
    steps: list[Step] = []
    i = j = 0
    while i < n and j < m:
        if take[i][j]:
            steps.append((i, j))
            i += 1
            j += 1
        elif best[i][j] == best[i + 1][j]:
            steps.append((i, None))
            i += 1
        else:
            steps.append((None, j))
            j += 1
    steps.extend((k, None) for k in range(i, n))
    steps.extend((None, k) for k in range(j, m))
    return steps


def _pair_greedy(groups_a: Sequence[str], groups_b: Sequence[str]) -> list[Step]:
    steps: list[Step] = []
    i = j = 0
    n, m = len(groups_a), len(groups_b)
    while i < n and j < m:
        if groups_a[i] == groups_b[j]:
            steps.append((i, j))
            i += 1
            j += 1
        elif i + 1 < n and groups_a[i + 1] == groups_b[j]:
            steps.append((i, None))
            i += 1
        else:
            steps.append((None, j))
            j += 1
    steps.extend((k, None) for k in range(i, n))
    steps.extend((None, k) for k in range(j, m))
    return steps


def _diff_messages(original: Sequence[Any], transformed: Sequence[Any]) -> tuple[MessageEntry, ...]:
    classes = _Classes(_message_fingerprint)
    ids_a = classes.ids(original)
    ids_b = classes.ids(transformed)
    ops = _opcodes(ids_a, ids_b)

    # Moves: an unmatched original message equal to an unmatched transformed one.
    unmatched_b: dict[int, list[int]] = {}
    for tag, _i1, _i2, j1, j2 in ops:
        if tag != "equal":
            for j in range(j1, j2):
                unmatched_b.setdefault(ids_b[j], []).append(j)
    moved_to: dict[int, int] = {}
    if unmatched_b:
        for tag, i1, i2, _j1, _j2 in ops:
            if tag != "equal":
                for i in range(i1, i2):
                    waiting = unmatched_b.get(ids_a[i])
                    if waiting:
                        moved_to[i] = waiting.pop(0)
    moved_from = {j: i for i, j in moved_to.items()}

    sides = _Sides(_Side(original), _Side(transformed))
    entries: list[MessageEntry] = []
    append = entries.append

    def removed(i: int) -> MessageEntry:
        return MessageEntry(
            "removed", i, None, _role(original[i]), moved_to=moved_to.get(i), sides=sides
        )

    def added(j: int) -> MessageEntry:
        return MessageEntry(
            "added", None, j, _role(transformed[j]), moved_from=moved_from.get(j), sides=sides
        )

    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            for k in range(i2 - i1):
                j = j1 + k
                append(MessageEntry("same", i1 + k, j, _role(transformed[j]), sides=sides))
        elif tag == "delete":
            entries.extend(removed(i) for i in range(i1, i2))
        elif tag == "insert":
            entries.extend(added(j) for j in range(j1, j2))
        else:
            # Moved messages keep their places; the rest are paired by role, most alike first.
            left = [i for i in range(i1, i2) if i not in moved_to]
            right = [j for j in range(j1, j2) if j not in moved_from]
            small = len(left) * len(right) <= _PAIRING_CELLS
            words_a = [_words(original[i]) for i in left] if small else []
            words_b = [_words(transformed[j]) for j in right] if small else []
            steps = _pair_runs(
                [_role(original[i]) for i in left],
                [_role(transformed[j]) for j in right],
                partial(_pair_likeness, words_a, words_b) if small else None,
            )
            next_i, next_j = i1, j1
            for a, b in steps:
                i = left[a] if a is not None else None
                j = right[b] if b is not None else None
                while i is not None and next_i < i:
                    append(removed(next_i))
                    next_i += 1
                while j is not None and next_j < j:
                    append(added(next_j))
                    next_j += 1
                if i is not None and j is not None:
                    append(_changed_message(i, j, sides))
                elif i is not None:
                    append(removed(i))
                elif j is not None:
                    append(added(j))
                next_i = next_i + 1 if i is not None else next_i
                next_j = next_j + 1 if j is not None else next_j
            entries.extend(removed(i) for i in range(next_i, i2))
            entries.extend(added(j) for j in range(next_j, j2))
    return tuple(entries)


def _diff_message_blocks(sides: _Sides, i: int, j: int) -> tuple[BlockChange, ...]:
    content_a = sides.original.messages[i].get("content")
    content_b = sides.transformed.messages[j].get("content")
    return _diff_blocks(content_a, content_b, sides)


def _changed_message(i: int, j: int, sides: _Sides) -> MessageEntry:
    message_a = sides.original.messages[i]
    message_b = sides.transformed.messages[j]
    fields = _differing_keys(message_a, message_b, skip=("content",))
    notes: list[str] = []
    form_a, form_b = _content_form(message_a), _content_form(message_b)
    if form_a != form_b:
        notes.append(f"content was {form_a}, now {form_b}")
    return MessageEntry(
        "changed",
        i,
        j,
        _role(message_b),
        fields=fields,
        notes=tuple(notes),
        sides=sides,
    )


def _content_form(message: dict[Any, Any]) -> str:
    if "content" not in message:
        return "missing"
    content = message["content"]
    if type(content) is str:
        return "a string"
    if type(content) is list:
        return "blocks"
    return type_name(content)


def _key_text(key: Any) -> str:
    return str.__str__(key) if isinstance(key, str) else f"({type_name(key)})"


def _differing_keys(a: Any, b: Any, skip: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The keys whose values differ, in b's order then a's; both are dicts."""
    keys: list[Any] = []
    seen: set[Any] = set()
    for key in (*b, *a):
        try:
            if key in seen or key in skip:
                continue
            seen.add(key)
        except TypeError:
            continue
        in_a, in_b = key in a, key in b
        if in_a != in_b or not _json_equal(a[key], b[key]):
            keys.append(key)
    return tuple(_key_text(key) for key in keys)


def _diff_blocks(content_a: Any, content_b: Any, sides: _Sides) -> tuple[BlockChange, ...]:
    blocks_a, blocks_b = _blocks(content_a), _blocks(content_b)
    classes = _Classes(_block_fingerprint)
    ops = _opcodes(classes.ids(blocks_a), classes.ids(blocks_b))
    out: list[BlockChange] = []

    def one(kind: Kind, i: int | None, j: int | None) -> BlockChange:
        if j is not None:
            block, label = blocks_b[j], sides.transformed.block_label(blocks_b[j])
        else:
            assert i is not None
            block, label = blocks_a[i], sides.original.block_label(blocks_a[i])
        return BlockChange(kind, i, j, _block_type(block), label)

    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            out.extend(one("same", i1 + k, j1 + k) for k in range(i2 - i1))
        elif tag == "delete":
            out.extend(one("removed", i, None) for i in range(i1, i2))
        elif tag == "insert":
            out.extend(one("added", None, j) for j in range(j1, j2))
        else:
            steps = _pair_runs(
                [_block_type(x) for x in blocks_a[i1:i2]],
                [_block_type(y) for y in blocks_b[j1:j2]],
            )
            for a, b in steps:
                if a is not None and b is not None:
                    label = sides.transformed.block_label(blocks_b[j1 + b])
                    out.append(_changed_block(i1 + a, j1 + b, blocks_a, blocks_b, label))
                elif a is not None:
                    out.append(one("removed", i1 + a, None))
                elif b is not None:
                    out.append(one("added", None, j1 + b))
    return tuple(out)


def _changed_block(
    i: int, j: int, blocks_a: Sequence[Any], blocks_b: Sequence[Any], label: str
) -> BlockChange:
    a, b = blocks_a[i], blocks_b[j]
    kind = _block_type(b)
    if type(a) is not dict or type(b) is not dict:
        return BlockChange("changed", i, j, kind, label)
    fields = _differing_keys(a, b)
    text_field = TEXT_FIELDS.get(kind)
    if text_field is not None and text_field in fields and type(a.get(text_field)) is str:
        text_b = b.get(text_field)
        if type(text_b) is str:
            segments = diff_text(a[text_field], text_b)
            return BlockChange("changed", i, j, kind, label, fields, text_field, segments)
    return BlockChange("changed", i, j, kind, label, fields)


# ---------------------------------------------------------------------------------------------
# Tools and options


def _display_order(keys_a: Sequence[Hashable], keys_b: Sequence[Hashable]) -> list[Step]:
    """The transformed order, with each key only in the original placed after the nearest key
    before it (in the original) that is still there."""
    where_b = {key: j for j, key in enumerate(keys_b)}
    where_a = {key: i for i, key in enumerate(keys_a)}
    after: dict[int, list[int]] = {}
    anchor = -1
    for i, key in enumerate(keys_a):
        if key in where_b:
            anchor = where_b[key]
        else:
            after.setdefault(anchor, []).append(i)
    steps: list[Step] = [(i, None) for i in after.get(-1, ())]
    for j, key in enumerate(keys_b):
        steps.append((where_a.get(key), j))
        steps.extend((i, None) for i in after.get(j, ()))
    return steps


def _tool_keys(tools: Sequence[Any]) -> tuple[list[tuple[str, int]], list[str]]:
    """A key per tool, (name, occurrence), so that duplicate names still line up; and names."""
    keys: list[tuple[str, int]] = []
    names: list[str] = []
    seen: dict[str, int] = {}
    for tool in tools:
        name = tool.get("name") if type(tool) is dict else None
        shown = str.__str__(name) if isinstance(name, str) else "(unnamed)"
        marker = shown if isinstance(name, str) else "\0"
        seen[marker] = seen.get(marker, 0) + 1
        keys.append((marker, seen[marker]))
        names.append(shown)
    return keys, names


def _diff_tools(original: Sequence[Any], transformed: Sequence[Any]) -> tuple[ToolEntry, ...]:
    keys_a, names_a = _tool_keys(original)
    keys_b, names_b = _tool_keys(transformed)
    steps = _display_order(keys_a, keys_b)
    kept = [(i, j) for i, j in steps if i is not None and j is not None]
    in_place: set[int] = set()
    order = [i for i, _ in kept]
    ascending = sorted(order)
    for tag, i1, i2, _j1, _j2 in _opcodes(ascending, order):
        if tag == "equal":
            in_place.update(ascending[i1:i2])
    entries: list[ToolEntry] = []
    for i, j in steps:
        if i is not None and j is not None:
            a, b = original[i], transformed[j]
            if _json_equal(a, b):
                entries.append(ToolEntry("same", names_b[j], i, j, moved=i not in in_place))
            else:
                keys = _differing_keys(a, b) if type(a) is dict and type(b) is dict else ()
                entries.append(
                    ToolEntry("changed", names_b[j], i, j, keys, moved=i not in in_place)
                )
        elif i is not None:
            entries.append(ToolEntry("removed", names_a[i], i, None))
        elif j is not None:
            entries.append(ToolEntry("added", names_b[j], None, j))
    return tuple(entries)


def _diff_options(original: dict[Any, Any], transformed: dict[Any, Any]) -> tuple[OptionEntry, ...]:
    keys_a, keys_b = list(original), list(transformed)
    entries: list[OptionEntry] = []
    for i, j in _display_order(keys_a, keys_b):
        if j is not None:
            key = keys_b[j]
            new = transformed[key]
            if i is None:
                entries.append(OptionEntry("added", _key_text(key), None, new))
            else:
                old = original[key]
                kind: Kind = "same" if _json_equal(old, new) else "changed"
                entries.append(OptionEntry(kind, _key_text(key), old, new))
        elif i is not None:
            key = keys_a[i]
            entries.append(OptionEntry("removed", _key_text(key), original[key], None))
    return tuple(entries)


def _json_equal(a: Any, b: Any) -> bool:
    """Equality as JSON sees it: ``true`` is not ``1`` (``1`` and ``1.0`` are the same number).
    Too deep to compare counts as different."""
    try:
        return _strict_equal(a, b)
    except RecursionError:
        return False


def _strict_equal(a: Any, b: Any) -> bool:
    if a is b:
        return True
    if (type(a) is bool) != (type(b) is bool):
        return False
    if type(a) is dict and type(b) is dict:
        return a.keys() == b.keys() and all(_strict_equal(a[k], b[k]) for k in a)
    if type(a) is list and type(b) is list:
        return len(a) == len(b) and all(_strict_equal(x, y) for x, y in zip(a, b, strict=True))
    return _equal(a, b)


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
    extra = [_key_text(key) for key in value if key not in REQUEST_KEYS]
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
    problems: list[str] = []
    request_a = _request(original, "original", problems)
    request_b = _request(transformed, "transformed", problems)
    not_objects = type(original) is not dict or type(transformed) is not dict

    system_a = _system_text(request_a, "original", problems)
    system_b = _system_text(request_b, "transformed", problems)
    same_system = ("system" in request_a) == ("system" in request_b) and _json_equal(
        request_a.get("system"), request_b.get("system")
    )
    system = SystemDiff(
        "same" if same_system else "changed",
        system_a,
        system_b,
        diff_lines(system_a, system_b),
    )
    messages = _diff_messages(
        _part(request_a, "messages", "original", list, problems),
        _part(request_b, "messages", "transformed", list, problems),
    )
    tools = _diff_tools(
        _part(request_a, "tools", "original", list, problems),
        _part(request_b, "tools", "transformed", list, problems),
    )
    options = _diff_options(
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
