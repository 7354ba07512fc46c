"""Where a transformed request stops sharing the original's prompt prefix, in the order the
provider reads it (tools, system, then messages), so a hook author sees what the hook costs in
prompt caching.

Both requests go through the same provider body first, so what is compared is what would be
sent; two values are the same only when they serialize to the same JSON text, key order
included, as a prefix cache compares bytes."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from studio.core.provider.preview import ANTHROPIC, CHAT, OPENROUTER, provider_body

UNCHANGED = "unchanged"
TOOLS = "tools"
SYSTEM = "system"
THINKING = "thinking"
MESSAGE = "message"
APPENDED = "appended"
REMOVED = "removed"


@dataclass(frozen=True)
class CacheCheck:
    kind: str
    kept_messages: int
    """How many of the provider's messages (after tools and system) are still a shared prefix."""
    text: str
    where: str | None = None
    """The body path where the two first differ."""

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "kept_messages": self.kept_messages,
            "where": self.where,
            "text": self.text,
        }


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, ensure_ascii=False) == json.dumps(b, ensure_ascii=False)


def _parts(body: dict[str, Any], provider: str) -> tuple[Any, Any, list[Any], str, int]:
    """(tools, system, messages, the messages' key, where the messages start in it)."""
    tools = body.get("tools")
    if provider == ANTHROPIC:
        return tools, body.get("system"), body["messages"], "messages", 0
    key = "messages" if provider in (CHAT, OPENROUTER) else "input"
    items = body[key]
    start = 0
    while start < len(items) and items[start].get("role") in ("system", "developer"):
        start += 1
    system = [body.get("instructions"), items[:start]]
    return tools, system, items[start:], key, start


def cache_check(original: dict[str, Any], transformed: dict[str, Any], provider: str) -> CacheCheck:
    """The first point where ``transformed`` stops sharing a prefix with ``original`` (both
    requests that pass the validator), as ``provider`` would be sent them."""
    before = provider_body(original, provider).body
    after = provider_body(transformed, provider).body
    tools_a, system_a, old, key, start = _parts(before, provider)
    tools_b, system_b, new, _, _ = _parts(after, provider)
    if not _same(tools_a, tools_b):
        return CacheCheck(TOOLS, 0, "tools changed: the whole prompt cache is lost", "tools")
    if not _same(system_a, system_b):
        rest = " (only the tools before it stay cached)" if tools_a else ""
        where = "system" if provider == ANTHROPIC else key
        return CacheCheck(SYSTEM, 0, f"system changed: the whole prompt cache is lost{rest}", where)
    if provider == ANTHROPIC and not _same(before.get("thinking"), after.get("thinking")):
        return CacheCheck(
            THINKING,
            0,
            "thinking settings changed: tools and system stay cached, the messages' cache is lost",
            "thinking",
        )
    shared = 0
    while shared < min(len(old), len(new)) and _same(old[shared], new[shared]):
        shared += 1
    kept = (
        f"cache prefix kept through message {shared}"
        if shared
        else "only the tools and the system stay cached"
    )
    if shared == len(old) == len(new):
        return CacheCheck(
            UNCHANGED, shared, f"nothing changed: the whole prompt stays cached ({shared} messages)"
        )
    where = f"{key}[{start + shared}]"
    if shared == len(old):
        added = len(new) - shared
        return CacheCheck(
            APPENDED,
            shared,
            f"messages only appended ({added} after the original's): {kept}",
            where,
        )
    if shared == len(new):
        return CacheCheck(
            REMOVED,
            shared,
            f"messages removed from the end: {kept}",
            f"{key}[{start + shared - 1}]",
        )
    return CacheCheck(MESSAGE, shared, f"message {shared + 1} changed: {kept}", where)
