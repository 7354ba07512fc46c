"""Where a value is in JSON text: a JSON pointer (or a finding's path) to offsets in the text.

Validators name a problem by its path in the parsed value (``/request/messages/2/content``); an
editor needs the place in the text. :func:`locate_all` scans the text once for any number of
paths, descending only into the containers on the way to one of them and skipping everything else
with a regular expression, so finding a hundred paths in a 5 MB document costs about one pass over
it. Offsets are Python string indices (code points); :func:`line_columns` turns them into 1-based
lines and columns.

A path that is not in the text (a required key that is missing, an index past the end) gives the
deepest ancestor that is there, marked ``exact=False``: that is where the user has to add it. As
Python's ``json`` module reads them, the last of duplicate keys is the one that counts, so that is
the one located. Malformed text never raises: the scan stops where the text stops making sense
and answers with what it reached.

:func:`parse_json` is strict JSON (no ``NaN`` or ``Infinity``) that reports a syntax error with its
offset, line and column, including for those constants, which Python's parser accepts silently.
:func:`parse_json_in_pieces` gives the same value, but parses the top levels of the document
itself and hands only their members to the C parser, so no single call holds the interpreter for
long: a thread that parses a 5 MB document leaves the other threads (the GUI) room to run.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from studio.core.json.deep import MAX_DEPTH, deep_json
from studio.core.json.files import syntax_problem

PathPart = str | int


class _MatchesEverywhere(Protocol):
    """A compiled pattern that can match the empty string, so ``match`` never gives ``None``."""

    def match(self, string: str, pos: int = 0) -> re.Match[str]: ...


def _matches_everywhere(pattern: str, flags: int = 0) -> _MatchesEverywhere:
    compiled = re.compile(pattern, flags)
    assert compiled.fullmatch("") is not None, pattern
    return cast(_MatchesEverywhere, compiled)


_WS = _matches_everywhere(r"[ \t\n\r]*")
_INDEX = re.compile(r"0|[1-9][0-9]*")
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_SCALAR = _matches_everywhere(r'[^\s,:\[\]{}"]*')
# Everything up to the next bracket: runs of other characters and whole strings (which may hold
# brackets). Stops early at a string that never ends.
_FLAT = _matches_everywhere(r'(?:[^"\[\]{}]+|"[^"\\]*(?:\\.[^"\\]*)*")*', re.S)
# A bare NaN / Infinity / -Infinity outside strings (strings are matched first and skipped).
_CONSTANT = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|(-?Infinity|NaN)', re.S)


@dataclass(frozen=True, slots=True)
class JsonLocation:
    """The value a path leads to, as offsets ``[start, end)`` into the text.

    ``key_start``/``key_end`` span the member's key (with its quotes) when the value is an
    object member, else ``-1``. ``exact`` is false when the path is not in the text: the span is
    then the deepest ancestor that is, and ``depth`` says how many parts of the path were found.
    """

    start: int
    end: int
    key_start: int = -1
    key_end: int = -1
    exact: bool = True
    depth: int = 0


class JsonTextError(ValueError):
    """Text that is not strict JSON; ``offset`` is a string index, ``line``/``column`` 1-based."""

    def __init__(self, message: str, offset: int, line: int, column: int) -> None:
        super().__init__(f"{message} at line {line}, column {column}")
        self.message = message
        self.offset = offset
        self.line = line
        self.column = column


# ---------------------------------------------------------------------------------------------
# Pointers


def parse_pointer(pointer: str) -> tuple[str, ...]:
    """RFC 6901: ``"/a~1b/0"`` -> ``("a/b", "0")``; ``""`` is the whole document.

    A pointer that does not start with ``/`` is read as if it did, so ``"messages/0"`` works too.
    """
    if not pointer:
        return ()
    body = pointer[1:] if pointer.startswith("/") else pointer
    return tuple(part.replace("~1", "/").replace("~0", "~") for part in body.split("/"))


# ---------------------------------------------------------------------------------------------
# Locating


@dataclass(slots=True)
class _Node:
    children: dict[str, _Node] = field(default_factory=dict)
    found: tuple[int, int, int, int] | None = None


def locate(text: str, path: str | Sequence[PathPart]) -> JsonLocation:
    """Where the value at ``path`` (a JSON pointer or a sequence of keys and indices) is."""
    return locate_all(text, [path])[0]


def locate_all(text: str, paths: Iterable[str | Sequence[PathPart]]) -> list[JsonLocation]:
    """:func:`locate` for many paths at once, in one scan of the text; results in input order."""
    root = _Node()
    routes: list[list[_Node]] = []
    for path in paths:
        parts = parse_pointer(path) if isinstance(path, str) else tuple(str(p) for p in path)
        node = root
        route = [root]
        for part in parts:
            node = node.children.setdefault(part, _Node())
            route.append(node)
        routes.append(route)
    start = _WS.match(text, 0).end()
    if start < len(text):
        end = _Scanner(text).visit(start, root)
        root.found = (start, end, -1, -1)
    else:
        root.found = (start, start, -1, -1)
    results = []
    for route in routes:
        depth = max(i for i, node in enumerate(route) if node.found is not None)
        found = route[depth].found
        assert found is not None
        s, e, ks, ke = found
        results.append(JsonLocation(s, e, ks, ke, depth == len(route) - 1, depth))
    return results


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.n = len(text)

    def skip(self, pos: int) -> int:
        """The end of the value that starts at ``pos`` (best effort on malformed text)."""
        text, n = self.text, self.n
        if pos >= n:
            return n
        c = text[pos]
        if c == '"':
            m = _STRING.match(text, pos)
            return m.end() if m else n
        if c != "{" and c != "[":
            return max(_SCALAR.match(text, pos).end(), pos + 1)
        return self.close(pos + 1)

    def close(self, i: int) -> int:
        """The end of the container whose first inside character is at ``i``."""
        text, n = self.text, self.n
        depth = 1
        i = _FLAT.match(text, i).end()
        while i < n:
            c = text[i]
            if c == "{" or c == "[":
                depth += 1
            elif c == "}" or c == "]":
                depth -= 1
                if depth == 0:
                    return i + 1
            else:  # a string that never ends
                return n
            i = _FLAT.match(text, i + 1).end()
        return n

    def visit(self, pos: int, node: _Node) -> int:
        """Record where ``node``'s children are inside the value at ``pos``; its end."""
        if not node.children:
            return self.skip(pos)
        c = self.text[pos]
        if c == "{":
            return self._object(pos, node)
        if c == "[":
            return self._array(pos, node)
        return self.skip(pos)

    def _member(self, pos: int, node: _Node, key: tuple[int, int]) -> int:
        end = self.visit(pos, node)
        node.found = (pos, end, *key)
        return end

    def _object(self, pos: int, node: _Node) -> int:
        text, n = self.text, self.n
        i = _WS.match(text, pos + 1).end()
        if i < n and text[i] == "}":
            return i + 1
        while i < n:
            m = _STRING.match(text, i)
            if m is None:
                return self.close(i)
            raw = m.group()
            key = raw[1:-1]
            if "\\" in key:
                with contextlib.suppress(ValueError):
                    key = json.loads(raw)
            i = _WS.match(text, m.end()).end()
            if i >= n or text[i] != ":":
                return n
            i = _WS.match(text, i + 1).end()
            if i >= n:
                return n
            child = node.children.get(key)
            end = self._member(i, child, m.span()) if child is not None else self.skip(i)
            i = _WS.match(text, end).end()
            if i < n and text[i] == ",":
                i = _WS.match(text, i + 1).end()
                continue
            if i < n and text[i] == "}":
                return i + 1
            return n if i >= n else i
        return n

    def _array(self, pos: int, node: _Node) -> int:
        text, n = self.text, self.n
        i = _WS.match(text, pos + 1).end()
        if i < n and text[i] == "]":
            return i + 1
        wanted = {int(k): c for k, c in node.children.items() if _INDEX.fullmatch(k) is not None}
        last = max(wanted, default=-1)
        index = 0
        while i < n:
            child = wanted.get(index)
            end = self._member(i, child, (-1, -1)) if child is not None else self.skip(i)
            i = _WS.match(text, end).end()
            if i < n and text[i] == ",":
                i = _WS.match(text, i + 1).end()
                index += 1
                if index > last:
                    # Nothing more to find in here: skip the rest in one go.
                    return self.close(i)
                continue
            if i < n and text[i] == "]":
                return i + 1
            return n if i >= n else i
        return n


# ---------------------------------------------------------------------------------------------
# Lines and columns


def line_columns(text: str, offsets: Iterable[int]) -> list[tuple[int, int]]:
    """1-based ``(line, column)`` of each offset (columns count code points), in one pass."""
    wanted = list(offsets)
    order = sorted(range(len(wanted)), key=wanted.__getitem__)
    out: list[tuple[int, int]] = [(1, 1)] * len(wanted)
    line, line_start, at = 1, 0, 0
    for k in order:
        offset = max(0, min(wanted[k], len(text)))
        line += text.count("\n", at, offset)
        newline = text.rfind("\n", line_start, offset)
        if newline >= 0:
            line_start = newline + 1
        at = offset
        out[k] = (line, offset - line_start + 1)
    return out


def line_column(text: str, offset: int) -> tuple[int, int]:
    return line_columns(text, [offset])[0]


# ---------------------------------------------------------------------------------------------
# Parsing


def _refuse_constant(name: str) -> Any:
    raise ValueError(name)


def parse_json(text: str) -> Any:
    """Strict JSON; a syntax error (or NaN / Infinity) raises :class:`JsonTextError`."""
    try:
        with deep_json():
            return json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise JsonTextError(syntax_problem(exc), exc.pos, exc.lineno, exc.colno) from None
    except RecursionError:
        raise JsonTextError(f"nested deeper than {MAX_DEPTH:,} levels", 0, 1, 1) from None
    except ValueError as exc:
        name = str(exc)
        offset = 0
        for m in _CONSTANT.finditer(text):
            if m.group(1) is not None:
                offset = m.start(1)
                name = m.group(1)
                break
        line, column = line_column(text, offset)
        raise JsonTextError(f"{name} is not a JSON value", offset, line, column) from None


_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)


def parse_json_in_pieces(text: str, depth: int = 3) -> Any:
    """:func:`parse_json`, walking the containers of the first ``depth`` levels in Python and
    parsing each of their members with one call of the C parser.

    The value is the same as :func:`parse_json`'s (duplicate keys: the last wins). Any problem
    sends the text to :func:`parse_json`, which raises the exact error.
    """
    try:
        value, end = _piece(text, _WS.match(text, 0).end(), depth)
        if _WS.match(text, end).end() == len(text):
            return value
    except (ValueError, IndexError, RecursionError):
        pass
    return parse_json(text)


def _piece(text: str, pos: int, depth: int) -> tuple[Any, int]:
    c = text[pos]
    if depth <= 0 or (c != "{" and c != "["):
        return _DECODER.raw_decode(text, pos)
    if c == "{":
        return _object_piece(text, pos, depth - 1)
    i = _WS.match(text, pos + 1).end()
    items: list[Any] = []
    if text[i] == "]":
        return items, i + 1
    while True:
        item, i = _piece(text, i, depth - 1)
        items.append(item)
        i = _WS.match(text, i).end()
        if text[i] == ",":
            i = _WS.match(text, i + 1).end()
        elif text[i] == "]":
            return items, i + 1
        else:
            raise ValueError("',' or ']' expected")


MemberReader = Callable[[dict[str, Any], str, int], int]
"""Reads the member ``key``, whose value starts at the index given, into the members; returns
the index where the value ends."""


def _object_piece(
    text: str, pos: int, depth: int, read_member: MemberReader | None = None
) -> tuple[dict[str, Any], int]:
    """The object whose ``{`` is at ``pos``, each member's value read by ``read_member`` or, by
    default, as :func:`_piece` reads it to ``depth`` levels; and the index after its ``}``."""
    members: dict[str, Any] = {}
    i = _WS.match(text, pos + 1).end()
    if text[i] == "}":
        return members, i + 1
    while True:
        if text[i] != '"':
            raise ValueError("a key must be a string")
        key, i = _DECODER.raw_decode(text, i)
        i = _WS.match(text, i).end()
        if text[i] != ":":
            raise ValueError("':' expected")
        i = _WS.match(text, i + 1).end()
        # The plain read is inlined: it runs once per member of every large request.
        if read_member is None:
            members[key], i = _piece(text, i, depth)
        else:
            i = read_member(members, key, i)
        i = _WS.match(text, i).end()
        if text[i] == ",":
            i = _WS.match(text, i + 1).end()
        elif text[i] == "}":
            return members, i + 1
        else:
            raise ValueError("',' or '}' expected")


Shared = Mapping[str, tuple[str, Any]]
"""Members of a known JSON object: key -> (the member's value as JSON text, that value)."""


def parse_json_sharing(
    text: str, path: Sequence[str], shared: Shared, depth: int = 0
) -> tuple[Any, frozenset[str]] | None:
    """The value of ``text``, where the object at ``path`` (keys from the root) takes each
    member whose text is exactly the JSON text in ``shared`` as ``shared``'s value itself,
    unread; and the keys so taken. None when the text is anything else (not an object on the
    way, or not JSON at all): the caller reads it as it would have.

    The same text is the same JSON value (types, numbers, key order), so a member taken is
    equal to the one that would have been read. Members not taken, and those off the path, are
    read as :func:`parse_json_in_pieces` reads them to ``depth`` levels (one C call each at 0).
    """
    try:
        with deep_json():
            taken: set[str] = set()
            value, end = _shared_piece(text, _WS.match(text, 0).end(), path, shared, depth, taken)
            if _WS.match(text, end).end() == len(text):
                return value, frozenset(taken)
    except (ValueError, IndexError, RecursionError):
        pass
    return None


def _shared_piece(
    text: str, pos: int, path: Sequence[str], shared: Shared, depth: int, taken: set[str]
) -> tuple[Any, int]:
    if text[pos] != "{":
        if path:
            raise ValueError("an object expected on the way")
        return _piece(text, pos, depth)
    inner = max(depth - 1, 0)

    def member(members: dict[str, Any], key: str, at: int) -> int:
        if not path:
            return _shared_member(text, at, key, shared, inner, members, taken)
        if key == path[0]:
            taken.clear()  # a repeated key: the last one counts
            members[key], end = _shared_piece(text, at, path[1:], shared, inner, taken)
        else:
            members[key], end = _piece(text, at, inner)
        return end

    return _object_piece(text, pos, inner, member)


def _shared_member(
    text: str,
    i: int,
    key: str,
    shared: Shared,
    depth: int,
    members: dict[str, Any],
    taken: set[str],
) -> int:
    """Read the member ``key`` whose value starts at ``i`` into ``members``; where it ends."""
    known = shared.get(key)
    if known is not None and text.startswith(known[0], i):
        after = i + len(known[0])
        # Only a whole value: "1" is also the start of "12".
        if text[_WS.match(text, after).end()] in ",}":
            members[key] = known[1]
            taken.add(key)
            return after
    taken.discard(key)  # a repeated key: the last one counts
    members[key], end = _piece(text, i, depth)
    return end
