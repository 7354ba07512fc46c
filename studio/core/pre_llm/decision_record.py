"""The content-free decision record of a pre-LLM run: what changed, never what it says."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Any

from studio.core.identity_cache import IdentityCache
from studio.core.json.pieces import DEPTH, iter_json, sha256_sorted_json, sorted_json
from studio.core.sealed_request import new_sealed_request_id

_recent_hashes: IdentityCache[str | None] = IdentityCache(16)


def _one_call_hash(request: Any) -> str:
    text = json.dumps(
        request, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _differs(a: object, b: object) -> bool:
    """``a != b``, one list item at a time: comparing megabytes in one step would hold the
    interpreter lock as long."""
    if a is b:  # a member the hook sent back unchanged, shared with the request
        return False
    if isinstance(a, list) and isinstance(b, list):
        return len(a) != len(b) or any(x != y for x, y in zip(a, b, strict=True))
    return a != b


def request_hash(request: Any, in_pieces: bool = False) -> str | None:
    """SHA-256 of the request as compact JSON with sorted keys (None if it is not JSON).

    The same request object (a sample read once and run many times) is hashed once."""
    return _recent_hashes.get(request, lambda: _hash_or_none(request, in_pieces))


def _hash_or_none(request: Any, in_pieces: bool) -> str | None:
    try:
        return sha256_sorted_json(request) if in_pieces else _one_call_hash(request)
    except (TypeError, ValueError, RecursionError):
        return None


_Digest = Any  # hashlib's sha256 object
_prefixes: IdentityCache[list[_Digest] | None] = IdentityCache(4)


def _members_text(members: list[tuple[str, Any]], in_pieces: bool) -> Iterator[str]:
    """The sorted-keys JSON text of an object's members (given sorted), each one's text with
    the comma before it."""
    for i, (key, value) in enumerate(members):
        yield ("," if i else "") + json.dumps(key, ensure_ascii=False) + ":"
        if in_pieces:
            yield from iter_json(value, sort_keys=True, depth=DEPTH - 1)  # a member's items
        else:
            yield sorted_json(value)


def _prefix_digests(request: dict[str, Any], in_pieces: bool) -> list[_Digest] | None:
    """The SHA-256 state after ``{`` and each of the request's first k members (sorted), for
    every k: a returned request that shares its first members with it hashes only the rest."""
    try:
        digest = hashlib.sha256(b"{")
        states = [digest.copy()]
        for key in sorted(request):
            for piece in _members_text([(key, request[key])], in_pieces):
                digest.update(piece.encode("utf-8", "surrogatepass"))
            states.append(digest.copy())
            digest.update(b",")
        return states
    except (TypeError, ValueError, RecursionError):
        return None


def _hash_sharing(original: Any, sent: Any, in_pieces: bool) -> str | None:
    """:func:`_hash_or_none` of ``sent``, taking the digest of the members it holds as the
    very values ``original`` holds, in the same place among the sorted keys, from ``original``'s
    (hashed once): a hook that changed only the system prompt costs a hash of the prompt."""
    if not (type(original) is dict and type(sent) is dict):
        return _hash_or_none(sent, in_pieces)
    if not all(type(k) is str for k in sent) or not all(type(k) is str for k in original):
        return _hash_or_none(sent, in_pieces)
    before = sorted(original)
    after = sorted(sent)
    same = 0
    while same < min(len(before), len(after)):
        key = after[same]
        if key != before[same] or sent[key] is not original[key]:
            break
        same += 1
    if same == 0:
        return _hash_or_none(sent, in_pieces)
    states = _prefixes.get(original, lambda: _prefix_digests(original, in_pieces), in_pieces)
    if states is None:
        return _hash_or_none(sent, in_pieces)
    digest = states[same].copy()
    rest = [(k, sent[k]) for k in after[same:]]
    try:
        if rest:
            digest.update(b",")
            for piece in _members_text(rest, in_pieces):
                digest.update(piece.encode("utf-8", "surrogatepass"))
    except (TypeError, ValueError, RecursionError):
        return None
    digest.update(b"}")
    return str(digest.hexdigest())


def _tool_names(request: Any) -> list[str]:
    tools = request.get("tools") if isinstance(request, dict) else None
    if not isinstance(tools, list):
        return []
    return [t["name"] for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)]


def _length(request: Any, key: str) -> int:
    value = request.get(key) if isinstance(request, dict) else None
    return len(value) if isinstance(value, list) else 0


def _changed_option_keys(before: Any, after: Any) -> list[str]:
    old = before.get("options") if isinstance(before, dict) else None
    new = after.get("options") if isinstance(after, dict) else None
    old = old if isinstance(old, dict) else {}
    new = new if isinstance(new, dict) else {}
    return sorted(
        k for k in set(old) | set(new) if k not in old or k not in new or old[k] != new[k]
    )


def pre_llm_decision_record(
    original: Any,
    returned: Any | None,
    *,
    loop: str,
    applied: bool,
    in_pieces: bool = False,
) -> dict[str, Any]:
    """What the hook decided, as counts, names and hashes. ``returned`` is None when the hook
    did not run or failed; then nothing is sealed. ``returned`` may be ``original`` itself
    (the hook sent back the very text it got)."""
    before_tools = _tool_names(original)
    record: dict[str, Any] = {
        "contract": "pre_llm",
        "loop": loop,
        "applied": applied,
        "requestHashBefore": request_hash(original, in_pieces),
        "requestHashAfter": None,
        "changed": None,
        "messages": {"before": _length(original, "messages"), "after": None},
        "tools": {"before": len(before_tools), "after": None, "added": [], "removed": []},
        "optionsChanged": [],
        "sealedRequestId": None,
    }
    sent = returned if applied else original
    if sent is None:
        return record
    after_tools = _tool_names(sent)
    # Always from the bytes the studio received: nothing a worker says about them is taken.
    # A returned request is new each run: hashed without the cache, which would keep it alive.
    same = sent is original
    record["requestHashAfter"] = (
        record["requestHashBefore"] if same else _hash_sharing(original, sent, in_pieces)
    )
    record["changed"] = {
        key: not same
        and _differs(
            original.get(key) if isinstance(original, dict) else None,
            sent.get(key) if isinstance(sent, dict) else None,
        )
        for key in ("system", "messages", "tools", "options")
    }
    record["messages"]["after"] = _length(sent, "messages")
    before_set, after_set = set(before_tools), set(after_tools)
    record["tools"].update(
        after=len(after_tools),
        added=[n for n in after_tools if n not in before_set],
        removed=[n for n in before_tools if n not in after_set],
    )
    record["optionsChanged"] = _changed_option_keys(original, sent)
    record["sealedRequestId"] = new_sealed_request_id()
    return record
