"""The large members a hook sent back exactly as they went, found in its result by their bytes.

A hook that changes the system prompt of a 10 MB request returns a frame that is almost all the
request's messages, byte for byte. Decoding those bytes only to compare the text with the
messages' own would cost a pass over the whole frame and a copy of it; instead each large
member is looked for as its key followed by its exact bytes, and the frame is decoded around
the members so found, each replaced by :data:`PLACEHOLDER`.

The reader then takes a placeholder as that member where it stands for a member of the object
it reads, and fails anywhere else: no JSON text holds the character outside a string, and a
string must escape it. So a text that reads at all reads as the whole frame would, and one that
does not (a member's bytes found in the wrong place) is read whole by the caller.

:func:`read_sharing` reads a result that way: a Python worker's result frame (the request is its
``value``) and a TypeScript hook's returned text (the request itself) alike.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from studio.core.identity_cache import IdentityCache
from studio.core.json.locate import parse_json_sharing
from studio.engine.collector import collector_paused

PLACEHOLDER = "\x00"
LARGE_MEMBER = 16 << 10
"""A member whose JSON text is this long is looked for by its bytes; smaller ones are compared
as text, which costs no more."""
_PROBE = 64

# By the identity of the member's text, which the request's cached members hold while it lives.
_encoded: IdentityCache[bytes] = IdentityCache(16)

Members = Mapping[str, tuple[str, Any]]


def _bytes_of(text: str) -> bytes:
    """``text`` as the worker writes it: UTF-8, a lone surrogate as its own three bytes."""
    return _encoded.get(text, lambda: text.encode("utf-8", "surrogatepass"))


def cut_out_members(data: bytes, start: int, members: Members) -> tuple[str, Members] | None:
    """The text of ``data`` from ``start``, decoded as the worker wrote it, with each large
    member of ``members`` whose exact bytes follow its key replaced by :data:`PLACEHOLDER`;
    and ``members`` with those members' text replaced by it. None when no member was found
    (then there is nothing to gain over decoding it all)."""
    cuts: list[tuple[int, int, str]] = []
    for key, (text, _) in members.items():
        if len(text) < LARGE_MEMBER:
            continue
        body = _bytes_of(text)
        head = (json.dumps(key, ensure_ascii=False) + ":").encode("utf-8", "surrogatepass")
        at = data.find(head + body[:_PROBE], start)
        if at >= 0 and data.startswith(body, at + len(head)):
            cuts.append((at + len(head), at + len(head) + len(body), key))
    if not cuts:
        return None
    cuts.sort()
    view = memoryview(data)
    pieces: list[str] = []
    shared = dict(members)
    at = start
    # Every cut begins after ':' and ends after the member's last character, both ASCII, so
    # the pieces decode as the whole would.
    for begin, end, key in cuts:
        if begin < at:  # one member's bytes inside another's: read it all as it comes
            return None
        pieces += [str(view[at:begin], "utf-8", "surrogatepass"), PLACEHOLDER]
        shared[key] = (PLACEHOLDER, members[key][1])
        at = end
    pieces.append(str(view[at:], "utf-8", "surrogatepass"))
    return "".join(pieces), shared


def read_sharing(
    data: bytes,
    start: int,
    path: Sequence[str],
    members: Members,
    *,
    depth: int,
    cut: bool = True,
) -> tuple[Any, frozenset[str]] | None:
    """The JSON value of ``data`` from ``start``, written by a worker in UTF-8, where the object
    at ``path`` takes each member of ``members`` that came back as the same text as that very
    value, and the keys so taken (as :func:`~studio.core.json.locate.parse_json_sharing`).
    When ``cut``, the large members are first looked for by their bytes, and only the text
    around them is decoded; a text in which they are not found, or which does not read with
    them cut out, is decoded and read whole. Objects are read as pieces to ``depth`` levels.
    None when the text is not UTF-8, not JSON, or has no object on ``path``: the caller reads
    it its own way, so that its errors stay the same.

    The cycle collector is paused throughout: the read makes a great many containers, none of
    them garbage."""
    with collector_paused():
        read = None
        if cut:
            try:
                found = cut_out_members(data, start, members)
            except UnicodeDecodeError:
                found = None
            if found is not None:
                read = parse_json_sharing(found[0], path, found[1], depth=depth)
        if read is None:
            try:
                # As json.loads reads bytes: a lone surrogate the worker wrote stays one.
                text = str(memoryview(data)[start:], "utf-8", "surrogatepass")
            except UnicodeDecodeError:
                return None
            read = parse_json_sharing(text, path, members, depth=depth)
    return read
