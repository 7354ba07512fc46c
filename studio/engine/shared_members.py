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
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from studio.core.identity_cache import IdentityCache

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
