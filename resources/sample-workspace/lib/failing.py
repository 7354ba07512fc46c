"""Hooks that fail, one per kind of failure met most often. Each is a small, realistic mistake.

Run one against its sample and read the turn error, e.g. from the repository root::

    hook-studio run resources/sample-workspace --sample support-ticket \
        --hook lib/failing.py:typo_key

The README next to this folder lists each hook with its sample and the turn error kind it ends in.
"""

import time

# ---- pre-LLM hooks (sample support-ticket) ----------------------------------------------------


def typo_key(payload):
    """exception: the request has "messages", not "message"."""
    request = payload["request"]
    last = request["message"][-1]
    return {**request, "system": request["system"] + f"\n\nLast turn by {last['role']}."}


def tool_result_from_assistant(payload):
    """invalid_result: a tool result is the user's turn, never the assistant's."""
    request = payload["request"]
    note = {
        "role": "assistant",
        "content": [
            {"type": "tool_result", "tool_use_id": "call_1", "content": "log already checked"}
        ],
    }
    return {**request, "messages": [*request["messages"], note]}


def returns_whole_payload(payload):
    """invalid_result at /request: returns {request, loop} instead of the request itself."""
    payload["request"]["system"] += "\n\nAnswer in the customer's language."
    return payload


def slow_lookup(payload):
    """timeout: an 8 s call, past the 5000 ms timeout_ms of agent.json."""
    time.sleep(8)
    return payload["request"]


# ---- step preparation (sample step-escalated) -------------------------------------------------


def activate_unknown_tool(ctx):
    """invalid_composition (V9): "escalateTicket" is no tool of the resolved graph."""
    return {"activeTools": ["searchKnowledge", "escalateTicket"]}


def read_undeclared_resource(ctx):
    """resource_read (undeclared): the sample declares working-state:support-control only."""
    queue = ctx.resources.read("working-state:escalation-queue")
    if queue and queue.get("priority") == "high":
        return {"model": "review-model"}
    return None


# ---- model hook chain (sample chain-refund) ---------------------------------------------------


def misspelt_suffix(ctx):
    """invalid_result: the result key is systemPromptSuffix."""
    return {"systemPromptSufix": "Quote the refund policy before promising anything."}
