"""The typed, frozen views of the model hook shapes, with the seed's camelCase keys as field
names; every extra key a message, tool or profile carries is kept, and ``to_json()`` writes the
wire form back. Built from a value with no error by the ``parse_*`` functions of ``shapes``."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from studio.core.chain.shape_keys import DEFAULT_MAX_RETRIES, PostEscape, PreEscape, Role


class View(BaseModel):
    model_config = ConfigDict(
        defer_build=True,
        frozen=True,
        extra="allow",
        protected_namespaces=(),
    )

    def to_json(self) -> dict[str, Any]:
        """The wire form: the keys that were given, extra keys included."""
        return self.model_dump(mode="python", exclude_unset=True)


class ClosedView(View):
    model_config = ConfigDict(defer_build=True, extra="forbid")


class ContentPart(View):
    """One part of a message's content: ``{"type": "text", "text": ...}`` or another kind."""

    type: str
    text: str | None = None


class ToolCall(View):
    """A tool call on an assistant message: a name, an optional id and any JSON arguments."""

    name: str
    id: str | None = None
    arguments: Any = None


class Message(View):
    """A pleach message (studio rule ``message-shape``).

    ``role`` is user, assistant, system or tool; ``content`` is a string or a list of content
    parts, and may be None only on an assistant message with tool calls. An assistant message
    carries its tool calls in ``toolCalls``; a tool message names the call it answers in
    ``toolCallId``, which pairs it with the tool call of that ``id``. Other keys are kept.
    """

    role: Role
    content: str | list[ContentPart] | None = None
    toolCalls: list[ToolCall] | None = None
    toolCallId: str | None = None

    def text(self) -> str:
        """The message's text: the content string, or its text parts joined in order."""
        if isinstance(self.content, str):
            return self.content
        if self.content is None:
            return ""
        return "".join(part.text or "" for part in self.content if part.type == "text")

    def tool_call_names(self) -> list[str]:
        """The names of the tools an assistant message calls, in order (none for other roles)."""
        if self.role != "assistant" or not self.toolCalls:
            return []
        return [call.name for call in self.toolCalls]


class ToolDefinition(View):
    """A tool the model may call: a non-empty name; its other keys (schema, text) are kept."""

    name: str


class ModelProfile(View):
    """The resolved model's limits, per-million-token costs and capability flags."""

    maxInputTokens: int
    maxOutputTokens: int
    costPerMillionInputTokens: float
    costPerMillionOutputTokens: float
    supportsParallelToolCalls: bool
    supportsVision: bool
    supportsCaching: bool


class Interrupt(ClosedView):
    """Pause the turn: why, and any JSON value for whoever resumes it."""

    reason: str
    value: Any = None


class Retry(ClosedView):
    """Re-run the model call with feedback; ``maxRetries`` caps the turn's retries."""

    feedback: str
    maxRetries: int = DEFAULT_MAX_RETRIES


class PreModelHookContext(View):
    """What a pre-model hook receives."""

    messages: list[Message]
    model: str
    modelProfile: ModelProfile | None
    tools: list[ToolDefinition]
    systemPrompt: str
    state: dict[str, Any]


class PreModelHookResult(ClosedView):
    """What a pre-model hook returns; every field None means "left as it is"."""

    messages: list[Message] | None = None
    model: str | None = None
    systemPromptSuffix: str | None = None
    tools: list[ToolDefinition] | None = None
    shortCircuit: Message | None = None
    interrupt: Interrupt | None = None

    @property
    def escape(self) -> PreEscape | None:
        """The escape the chain takes: shortCircuit over interrupt (the first escape wins)."""
        if self.shortCircuit is not None:
            return "shortCircuit"
        if self.interrupt is not None:
            return "interrupt"
        return None


class ModelRequest(View):
    """The request that produced a response, as a post-model hook sees it."""

    messages: list[Message]
    model: str
    tools: list[ToolDefinition]
    state: dict[str, Any]


class PostModelHookContext(View):
    """What a post-model hook receives."""

    response: Message
    request: ModelRequest
    state: dict[str, Any]


class PostModelHookResult(ClosedView):
    """What a post-model hook returns; every field None means "left as it is"."""

    response: Message | None = None
    retry: Retry | None = None
    interrupt: Interrupt | None = None

    @property
    def escape(self) -> PostEscape | None:
        """The escape the chain takes: retry over interrupt (the first escape wins)."""
        if self.retry is not None:
            return "retry"
        if self.interrupt is not None:
            return "interrupt"
        return None
