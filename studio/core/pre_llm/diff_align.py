"""How the request diff matches two sides: equal values, aligned sequences, paired runs.

Sequences are aligned over equality classes (small ints, each standing for equal values), with
``difflib.SequenceMatcher`` or, where repeated elements would make it quadratic, Myers' algorithm.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from difflib import SequenceMatcher
from typing import Any, Literal

from studio.core.json.values import type_name

PAIRING_CELLS = 400
"""A replaced run of at most this many (original x transformed) items is paired by likeness."""
_POPULAR_WORK = 1_000_000
"""Above this much matching work from repeated elements, SequenceMatcher is not used first."""
_MYERS_WORK = 400_000
"""Myers' algorithm gives up after this many steps (about 40 ms)."""


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


def block_fingerprint(block: Any) -> int:
    if type(block) is not dict:
        return _string_hash(block)
    for key in _MAIN_KEYS:
        main = block.get(key)
        if type(main) is str:
            return hash((len(block), key, len(main), main[:16]))
    return len(block)


def message_fingerprint(message: Any) -> int:
    """Cheap, and alike for equal messages: sizes and the start of the most telling string."""
    if type(message) is not dict:
        return _string_hash(message)
    content = message.get("content")
    if type(content) is str:
        return hash((len(message), len(content), content[:16]))
    if type(content) is list and content:
        block = content[-1]
        if type(block) is dict:
            for key in _MAIN_KEYS:
                main = block.get(key)
                if type(main) is str:
                    return hash((len(message), len(content), len(block), len(main), main[:16]))
        return hash((len(message), len(content), len(block) if type(block) is dict else -1))
    return hash((len(message), type(content).__name__))


class EqualityClasses:
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


OpcodeTag = Literal["replace", "delete", "insert", "equal"]
Opcode = tuple[OpcodeTag, int, int, int, int]


def opcodes(a: Sequence[Hashable], b: Sequence[Hashable]) -> list[Opcode]:
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
        middle: list[Opcode] | None = None
        if _repetitive(mid_a, mid_b):
            # SequenceMatcher would take quadratic time, or with autojunk give a poor match;
            # few edits are still found fast and exactly by Myers' algorithm.
            middle = myers(mid_a, mid_b)
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


def myers(a: Sequence[Hashable], b: Sequence[Hashable]) -> list[Opcode] | None:
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
        tag: OpcodeTag = (
            "replace" if i > start_i and j > start_j else ("delete" if i > start_i else "insert")
        )
        ops.append((tag, start_i, i, start_j, j))
    return ops


# ---------------------------------------------------------------------------------------------
# Pairing runs and ordering keyed entries


Step = tuple[int | None, int | None]
"""One step of an alignment of two runs: (original position, transformed position)."""


def pair_runs(
    groups_a: Sequence[str],
    groups_b: Sequence[str],
    likeness: Callable[[int, int], float] | None = None,
) -> list[Step]:
    """Aligns two runs: items of the same group may pair; as many pairs as possible and, when a
    ``likeness`` is given and the run is small, among those the most alike."""
    n, m = len(groups_a), len(groups_b)
    if likeness is None or n * m > PAIRING_CELLS:
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


def display_order(keys_a: Sequence[Hashable], keys_b: Sequence[Hashable]) -> list[Step]:
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


# ---------------------------------------------------------------------------------------------
# Equality as JSON sees it


def json_equal(a: Any, b: Any) -> bool:
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


def key_text(key: Any) -> str:
    return str.__str__(key) if isinstance(key, str) else f"({type_name(key)})"


def differing_keys(a: Any, b: Any, skip: tuple[str, ...] = ()) -> tuple[str, ...]:
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
        if in_a != in_b or not json_equal(a[key], b[key]):
            keys.append(key)
    return tuple(key_text(key) for key in keys)
