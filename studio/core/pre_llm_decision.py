"""The content-free decision record of a pre-LLM run: what changed, never what it says."""

from __future__ import annotations

import uuid
from typing import Any

from studio.core.canonical_json import NotCanonicalizable, value_hash


def _hash(value: Any) -> str | None:
    try:
        return value_hash(value)
    except NotCanonicalizable:
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


def new_sealed_request_id() -> str:
    return "request_" + uuid.uuid4().hex


def pre_llm_decision(
    original: Any, returned: Any | None, *, loop: str, applied: bool
) -> dict[str, Any]:
    """What the hook decided, as counts, names and hashes. ``returned`` is None when the hook
    did not run or failed; then nothing is sealed."""
    before_tools = _tool_names(original)
    record: dict[str, Any] = {
        "contract": "pre_llm",
        "loop": loop,
        "applied": applied,
        "requestHashBefore": _hash(original),
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
    record["requestHashAfter"] = _hash(sent)
    record["changed"] = {
        key: (original.get(key) if isinstance(original, dict) else None)
        != (sent.get(key) if isinstance(sent, dict) else None)
        for key in ("system", "messages", "tools", "options")
    }
    record["messages"]["after"] = _length(sent, "messages")
    record["tools"].update(
        after=len(after_tools),
        added=[n for n in after_tools if n not in set(before_tools)],
        removed=[n for n in before_tools if n not in set(after_tools)],
    )
    record["optionsChanged"] = _changed_option_keys(original, sent)
    record["sealedRequestId"] = new_sealed_request_id()
    return record
