"""The four shipped model hooks of spec/pleach.md §4, as pure functions over JSON contexts.

Each hook takes the context a hook of its kind receives (a plain ``dict`` of the wire form: a
pre-model context ``{messages, model, modelProfile, tools, systemPrompt, state}`` or a post-model
context ``{response, request: {messages, model, tools, state}, state}``) and returns a result dict
of the contract, or ``None`` when it changes nothing. They never mutate their input and never
raise on a context that passes the model_hooks validators.

Messages have the shape model_hooks fixed (studio rule ``message-shape``): an assistant message
carries its tool calls in ``toolCalls`` (objects with a ``name`` and an optional ``id``), a tool
message names the call it answers in ``toolCallId``.

Where the spec leaves a choice open, the studio's rule is listed in :data:`BUILTIN_STUDIO_RULES`,
written to be added to :data:`studio.core.chain.shapes.STUDIO_RULES`; ``token-estimate`` and
``trim-pairs`` already have an entry there, which these texts state more precisely.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, Literal

from studio.core.chain.shape_keys import STUDIO_TOKEN_ESTIMATE, STUDIO_TRIM_PAIRS
from studio.core.chain.shapes import StudioRule

HookKind = Literal["pre", "post"]
BuiltinHook = Callable[[Mapping[str, Any]], dict[str, Any] | None]

# historyTrimmerHook
TRIM_TARGET_PERCENT: Final = 85
KEEP_LAST_MESSAGES: Final = 6
TOKENS_PER_MESSAGE: Final = 3
CHARACTERS_PER_TOKEN: Final = 4

# lazyModelDefaultsHook
MAX_TOOLS_PARALLEL: Final = 128
MAX_TOOLS_SERIAL: Final = 32

# repetitionDetectorHook
REPETITION_WINDOW: Final = 5
REPETITION_THRESHOLD: Final = 3
REPETITION_MAX_RETRIES: Final = 1

STUDIO_TRIM_BUDGET: Final = "pleach.studio.trim-budget"
STUDIO_TOOL_CAP_NO_PROFILE: Final = "pleach.studio.tool-cap-no-profile"
STUDIO_UNKNOWN_TOOL_RETRY: Final = "pleach.studio.unknown-tool-retry"
STUDIO_REPETITION_WINDOW: Final = "pleach.studio.repetition-window"

BUILTIN_STUDIO_RULES: Final[tuple[StudioRule, ...]] = (
    StudioRule(
        STUDIO_TOKEN_ESTIMATE,
        "spec §4",
        "historyTrimmerHook estimates ceil(characters / 4) tokens per message plus 3 per message, "
        "and the request's count is the sum over its messages (the system prompt and the tool "
        "definitions are not counted: the trimmer cannot drop them). A message's characters are "
        "counted as JavaScript counts string length (UTF-16 code units): its string content, or "
        "the text of its text parts plus the compact JSON of every other part, plus, for each "
        "tool call, the tool name and the compact JSON of its arguments.",
    ),
    StudioRule(
        STUDIO_TRIM_BUDGET,
        "spec §4",
        "historyTrimmerHook trims only when the estimate is over modelProfile.maxInputTokens, "
        "and then drops the oldest droppable messages until the estimate is at most 85% of "
        "maxInputTokens. The last six messages and every system message are never dropped; when "
        "they alone are over the target, every other message is dropped and the rest is sent "
        "as it is. Without a model profile, or when nothing can be dropped, it changes nothing.",
    ),
    StudioRule(
        STUDIO_TRIM_PAIRS,
        "spec §4",
        "historyTrimmerHook never leaves a tool result without its tool call or the reverse: an "
        "assistant message whose toolCalls hold an id and every tool message whose toolCallId "
        "is that id are kept or dropped together, and a tool message without a toolCallId goes "
        "with the nearest earlier assistant message that carries toolCalls. A group that holds "
        "a message that is always kept is kept whole; groups are dropped oldest first, by their "
        "earliest message.",
    ),
    StudioRule(
        STUDIO_TOOL_CAP_NO_PROFILE,
        "spec §4",
        "lazyModelDefaultsHook keeps the first 128 tools when modelProfile."
        "supportsParallelToolCalls is true and the first 32 otherwise, including when there is "
        "no model profile (support for parallel tool calls is then not known).",
    ),
    StudioRule(
        STUDIO_UNKNOWN_TOOL_RETRY,
        "spec §4",
        "toolCallValidatorHook checks the tool names the response (an assistant message) calls "
        "against the names in request.tools; when any is unknown it returns a retry whose "
        "feedback names every unknown tool once, in call order, and lists the available tools. "
        "It sets no maxRetries, so the default of 1 applies.",
    ),
    StudioRule(
        STUDIO_REPETITION_WINDOW,
        "spec §4",
        "repetitionDetectorHook counts the response as the newest of the last five assistant "
        "messages (the response plus the last four assistant messages of request.messages), "
        "and counts every tool call, parallel calls in one message included. It asks for a "
        "retry (maxRetries 1) only for a tool the response itself calls that is called three or "
        "more times in that window: a response that stops calling the repeated tool is the "
        "loop ending, not repeating.",
    ),
)


# --------------------------------------------------------------------------------------------
# Message helpers


def js_length(text: str) -> int:
    """The length of a string as JavaScript counts it (UTF-16 code units)."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def message_characters(message: Mapping[str, Any]) -> int:
    """The characters of one message that the token estimate counts (studio rule
    ``token-estimate``)."""
    count = 0
    content = message.get("content")
    if isinstance(content, str):
        count += js_length(content)
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, Mapping) and part.get("type") == "text":
                text = part.get("text")
                count += js_length(text) if isinstance(text, str) else 0
            else:
                count += js_length(_compact(part))
    calls = message.get("toolCalls")
    if isinstance(calls, list):
        for call in calls:
            if not isinstance(call, Mapping):
                continue
            name = call.get("name")
            if isinstance(name, str):
                count += js_length(name)
            if call.get("arguments") is not None:
                count += js_length(_compact(call["arguments"]))
    return count


def estimate_message_tokens(message: Mapping[str, Any]) -> int:
    """ceil(characters / 4) + 3 (studio rule ``token-estimate``)."""
    return math.ceil(message_characters(message) / CHARACTERS_PER_TOKEN) + TOKENS_PER_MESSAGE


def estimate_tokens(messages: Sequence[Mapping[str, Any]]) -> int:
    """The estimated token count of a message list: the sum of its messages' estimates."""
    return sum(estimate_message_tokens(m) for m in messages)


def tool_call_names(message: Any) -> list[str]:
    """The tool names an assistant message calls, in order; none for any other message."""
    if not isinstance(message, Mapping) or message.get("role") != "assistant":
        return []
    calls = message.get("toolCalls")
    if not isinstance(calls, list):
        return []
    return [
        call["name"]
        for call in calls
        if isinstance(call, Mapping) and isinstance(call.get("name"), str)
    ]


def _tool_call_ids(message: Mapping[str, Any]) -> list[str]:
    if message.get("role") != "assistant" or not isinstance(message.get("toolCalls"), list):
        return []
    return [
        call["id"]
        for call in message["toolCalls"]
        if isinstance(call, Mapping) and isinstance(call.get("id"), str) and call["id"]
    ]


def _carries_tool_calls(message: Mapping[str, Any]) -> bool:
    calls = message.get("toolCalls")
    return message.get("role") == "assistant" and isinstance(calls, list) and len(calls) > 0


def tool_pair_groups(messages: Sequence[Mapping[str, Any]]) -> list[list[int]]:
    """The indices of ``messages`` grouped so that a tool call and its results stay together
    (studio rule ``trim-pairs``); every index is in exactly one group, groups are sorted by
    their first index and each group's indices ascend."""
    parent = list(range(len(messages)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def union(a: int, b: int) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    callers: dict[str, list[int]] = {}
    for i, message in enumerate(messages):
        for call_id in _tool_call_ids(message):
            callers.setdefault(call_id, []).append(i)
    last_caller: int | None = None
    for i, message in enumerate(messages):
        if _carries_tool_calls(message):
            last_caller = i
        if message.get("role") != "tool":
            continue
        answered_id = message.get("toolCallId")
        if isinstance(answered_id, str) and answered_id:
            for caller in callers.get(answered_id, []):
                union(caller, i)
        elif last_caller is not None:
            union(last_caller, i)
    groups: dict[int, list[int]] = {}
    for i in range(len(messages)):
        groups.setdefault(find(i), []).append(i)
    return sorted(groups.values(), key=lambda group: group[0])


# --------------------------------------------------------------------------------------------
# Pre-model hooks


def _profile(context: Mapping[str, Any]) -> Mapping[str, Any] | None:
    profile = context.get("modelProfile")
    return profile if isinstance(profile, Mapping) else None


def trim_target(max_input_tokens: int) -> int:
    """The largest estimate that is at most 85% of ``max_input_tokens``."""
    return max_input_tokens * TRIM_TARGET_PERCENT // 100


def historyTrimmerHook(context: Mapping[str, Any]) -> dict[str, Any] | None:
    """Drop the oldest messages when the estimate is over budget (spec §4; studio rules
    ``token-estimate``, ``trim-budget``, ``trim-pairs``)."""
    profile = _profile(context)
    messages = context.get("messages")
    if profile is None or not isinstance(messages, list):
        return None
    limit = profile.get("maxInputTokens")
    if not isinstance(limit, int) or isinstance(limit, bool):
        return None
    estimates = [estimate_message_tokens(m) for m in messages]
    total = sum(estimates)
    if total <= limit:
        return None
    target = trim_target(limit)
    first_kept_tail = max(0, len(messages) - KEEP_LAST_MESSAGES)
    protected = {
        i for i, m in enumerate(messages) if i >= first_kept_tail or m.get("role") == "system"
    }
    dropped: set[int] = set()
    for group in tool_pair_groups(messages):
        if total <= target:
            break
        if protected.intersection(group):
            continue
        dropped.update(group)
        total -= sum(estimates[i] for i in group)
    if not dropped:
        return None
    return {"messages": [m for i, m in enumerate(messages) if i not in dropped]}


def tool_cap(profile: Mapping[str, Any] | None) -> int:
    """128 with parallel tool calls, else 32 (studio rule ``tool-cap-no-profile``)."""
    if profile is not None and profile.get("supportsParallelToolCalls") is True:
        return MAX_TOOLS_PARALLEL
    return MAX_TOOLS_SERIAL


def lazyModelDefaultsHook(context: Mapping[str, Any]) -> dict[str, Any] | None:
    """Cap the tool list to what the model supports by slicing it, first tools kept."""
    tools = context.get("tools")
    if not isinstance(tools, list):
        return None
    cap = tool_cap(_profile(context))
    if len(tools) <= cap:
        return None
    return {"tools": list(tools[:cap])}


# --------------------------------------------------------------------------------------------
# Post-model hooks


def _request(context: Mapping[str, Any]) -> Mapping[str, Any]:
    request = context.get("request")
    return request if isinstance(request, Mapping) else {}


def _quoted(names: Sequence[str]) -> str:
    return ", ".join(json.dumps(name, ensure_ascii=False) for name in names)


def unknown_tool_feedback(unknown: Sequence[str], available: Sequence[str]) -> str:
    """The feedback toolCallValidatorHook sends with its retry."""
    noun = "tool" if len(unknown) == 1 else "tools"
    verb = "does" if len(unknown) == 1 else "do"
    text = f"You called the {noun} {_quoted(unknown)}, which {verb} not exist."
    if available:
        return f"{text} Call only the available tools: {_quoted(available)}."
    return f"{text} No tools are available: answer without calling a tool."


def toolCallValidatorHook(context: Mapping[str, Any]) -> dict[str, Any] | None:
    """Ask for a retry when the response calls a tool that is not in ``request.tools``
    (studio rule ``unknown-tool-retry``)."""
    called = tool_call_names(context.get("response"))
    if not called:
        return None
    tools = _request(context).get("tools")
    available = [
        tool["name"]
        for tool in (tools if isinstance(tools, list) else [])
        if isinstance(tool, Mapping) and isinstance(tool.get("name"), str)
    ]
    known = set(available)
    unknown = list(dict.fromkeys(name for name in called if name not in known))
    if not unknown:
        return None
    return {"retry": {"feedback": unknown_tool_feedback(unknown, available)}}


def repetition_window(context: Mapping[str, Any]) -> list[Any]:
    """The last five assistant messages, the response being the newest (studio rule
    ``repetition-window``): the last four of ``request.messages`` plus the response."""
    messages = _request(context).get("messages")
    history = [
        m
        for m in (messages if isinstance(messages, list) else [])
        if isinstance(m, Mapping) and m.get("role") == "assistant"
    ]
    return [*history[-(REPETITION_WINDOW - 1) :], context.get("response")]


def repetition_feedback(repeated: Sequence[tuple[str, int]]) -> str:
    """The feedback repetitionDetectorHook sends with its retry."""
    parts = [f"{json.dumps(name, ensure_ascii=False)} {count} times" for name, count in repeated]
    return (
        f"You have called {' and '.join(parts)} in your last {REPETITION_WINDOW} messages. "
        "Stop repeating the same call: use the results you already have, or take a different "
        "approach."
    )


def repetitionDetectorHook(context: Mapping[str, Any]) -> dict[str, Any] | None:
    """Ask for one retry when a tool the response calls is called three or more times across
    the last five assistant messages (studio rule ``repetition-window``)."""
    called = tool_call_names(context.get("response"))
    if not called:
        return None
    counts: dict[str, int] = {}
    for message in repetition_window(context):
        for name in tool_call_names(message):
            counts[name] = counts.get(name, 0) + 1
    repeated = [
        (name, counts[name])
        for name in dict.fromkeys(called)
        if counts.get(name, 0) >= REPETITION_THRESHOLD
    ]
    if not repeated:
        return None
    return {
        "retry": {
            "feedback": repetition_feedback(repeated),
            "maxRetries": REPETITION_MAX_RETRIES,
        }
    }


# --------------------------------------------------------------------------------------------
# Registry


BUILTIN_HOOKS: Final[dict[str, tuple[HookKind, BuiltinHook]]] = {
    "historyTrimmerHook": ("pre", historyTrimmerHook),
    "lazyModelDefaultsHook": ("pre", lazyModelDefaultsHook),
    "toolCallValidatorHook": ("post", toolCallValidatorHook),
    "repetitionDetectorHook": ("post", repetitionDetectorHook),
}
"""Every shipped hook by name: its kind and its function."""

DEFAULT_POST_HOOKS: Final[tuple[str, ...]] = ("toolCallValidatorHook", "repetitionDetectorHook")
"""The post-model validators registered by default, in the order they run."""
