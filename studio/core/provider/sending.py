"""What ADF does to a request after the hook and before any provider format
(spec/provider-requests.md §2): time prefixes, text-only user messages collapsed, tool results as
tool messages, thinking and empty assistant messages dropped, dynamicInstructions last.

The messages come out in a neutral form that each wire format then encodes:
``{"role": "user" | "assistant", "content": str | [blocks]}`` with the request's own blocks, and
``{"role": "tool", "content": [{"id", "name", "output", "is_error"}]}``.
"""

from __future__ import annotations

from typing import Any

from studio.core.provider.stamps import stamp


def prepared_messages(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The request's messages as ADF hands them to the provider library."""
    names: dict[str, str] = {}
    out: list[dict[str, Any]] = []
    for message in request.get("messages", []):
        content = message.get("content")
        if message.get("role") == "assistant":
            prepared = _assistant(message, content, names)
            if prepared is not None:
                out.append(prepared)
            continue
        if isinstance(content, str):
            out.append({"role": "user", "content": stamp(message, True) + content})
            continue
        blocks = list(content or [])
        results = [b for b in blocks if b.get("type") == "tool_result"]
        rest = [b for b in blocks if b.get("type") != "tool_result"]
        if results:
            out.append(
                {
                    "role": "tool",
                    "content": [
                        {
                            "id": b.get("tool_use_id"),
                            "name": names.get(b.get("tool_use_id", ""), ""),
                            "output": b.get("content", ""),
                            "is_error": b.get("is_error") is True,
                        }
                        for b in results
                    ],
                }
            )
            if not rest:
                continue
        out.append(_user(message, rest))
    dynamic = request.get("options", {}).get("dynamicInstructions")
    if isinstance(dynamic, str):
        out.append({"role": "user", "content": dynamic})
    return out


def _user(message: dict[str, Any], blocks: list[dict[str, Any]]) -> dict[str, Any]:
    if blocks and all(b.get("type") == "text" for b in blocks):
        text = "\n".join(str(b.get("text", "")) for b in blocks)
        return {"role": "user", "content": stamp(message, True) + text}
    return {"role": "user", "content": blocks}


def _assistant(message: dict[str, Any], content: Any, names: dict[str, str]) -> Any:
    if isinstance(content, str):
        if not content:
            return None
        return {"role": "assistant", "content": stamp(message, False) + content}
    kept = []
    for block in content or []:
        if block.get("type") == "tool_use":
            names[block.get("id", "")] = block.get("name", "")
        if block.get("type") == "thinking" and "reasoning_details" not in block:
            continue
        kept.append(block)
    return {"role": "assistant", "content": kept} if kept else None


def output_tokens(options: dict[str, Any]) -> int | None:
    value = options.get("maxTokens")
    return value if isinstance(value, int) and not isinstance(value, bool) else None
