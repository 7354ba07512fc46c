"""The content-free decision record of a pre-LLM run: what changed, never what it says."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from studio.core.identity_cache import IdentityCache
from studio.core.json.pieces import sha256_sorted_json
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
        record["requestHashBefore"] if same else _hash_or_none(sent, in_pieces)
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
