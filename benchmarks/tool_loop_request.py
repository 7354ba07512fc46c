"""The request the engine and GUI benchmarks send: rounds of a user question, an assistant
text and tool_use, and the user's tool_result, with a list of tools.

Imported by the benchmark scripts, which run with this folder first on ``sys.path``.
"""

from __future__ import annotations

from typing import Any


def tool_loop_request(
    *,
    rounds: int,
    question: str,
    text: str,
    query: str,
    result: str,
    tools: int,
    description: str,
    options: dict[str, Any],
) -> dict[str, Any]:
    """A request of ``rounds`` question / tool_use / tool_result triples and ``tools`` tools."""
    messages = []
    for i in range(rounds):
        messages.append({"role": "user", "content": f"question {i} " + question})
        messages.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": text},
                    {"type": "tool_use", "id": f"c{i}", "name": "search", "input": {"q": query}},
                ],
            }
        )
        messages.append(
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": f"c{i}", "content": result}],
            }
        )
    tool_list = [
        {"name": f"tool_{i}", "description": description, "input_schema": {"type": "object"}}
        for i in range(tools)
    ]
    return {"system": "s", "messages": messages, "tools": tool_list, "options": options}
