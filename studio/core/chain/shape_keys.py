"""The names of the model hook shapes (spec/pleach.md §1–§4): roles, escapes, the keys of each
shape and the ids of the rules its findings cite, shared by the checks, the views and the chain."""

from __future__ import annotations

from typing import Literal

from studio.core.findings import PathPart

Path = tuple[PathPart, ...]
Role = Literal["user", "assistant", "system", "tool"]
PreEscape = Literal["shortCircuit", "interrupt"]
PostEscape = Literal["retry", "interrupt"]
Escape = Literal["shortCircuit", "interrupt", "retry"]

ROLES: tuple[Role, ...] = ("user", "assistant", "system", "tool")
DEFAULT_MAX_RETRIES = 1
SUFFIX_SEPARATOR = "\n\n"
MAX_DEPTH = 200
"""Deepest nesting of arrays and objects in a context or result (studio rule ``json-only``)."""

PRE_CONTEXT_KEYS = ("messages", "model", "modelProfile", "tools", "systemPrompt", "state")
PRE_RESULT_KEYS = (
    "messages",
    "model",
    "systemPromptSuffix",
    "tools",
    "shortCircuit",
    "interrupt",
)
POST_CONTEXT_KEYS = ("response", "request", "state")
REQUEST_KEYS = ("messages", "model", "tools", "state")
POST_RESULT_KEYS = ("response", "retry", "interrupt")
INTERRUPT_KEYS = ("reason", "value")
RETRY_KEYS = ("feedback", "maxRetries")
MESSAGE_KEYS = ("role", "content", "toolCalls", "toolCallId")
PROFILE_TOKEN_KEYS = ("maxInputTokens", "maxOutputTokens")
PROFILE_COST_KEYS = ("costPerMillionInputTokens", "costPerMillionOutputTokens")
PROFILE_FLAG_KEYS = ("supportsParallelToolCalls", "supportsVision", "supportsCaching")
PROFILE_KEYS = PROFILE_TOKEN_KEYS + PROFILE_COST_KEYS + PROFILE_FLAG_KEYS

# Rule ids of the findings that come straight from the seed's interfaces.
RULE_PRE_CONTEXT = "pleach.pre-context"
RULE_POST_CONTEXT = "pleach.post-context"
RULE_PRE_RESULT = "pleach.pre-result"
RULE_POST_RESULT = "pleach.post-result"
RULE_PROFILE = "pleach.model-profile"
RULE_TOOLS = "pleach.tools"
RULE_INTERRUPT = "pleach.interrupt"
RULE_RETRY = "pleach.retry"
RULE_STATE = "pleach.state"
RULE_UNCHECKABLE = "pleach.uncheckable"

# Ids of the rules the studio fixes where the seed is silent (their text: ``shapes.STUDIO_RULES``).
STUDIO_SUFFIX_SEPARATOR = "pleach.studio.suffix-separator"
STUDIO_RETRY_BUDGET = "pleach.studio.retry-budget"
STUDIO_FAIL_CLOSED = "pleach.studio.fail-closed"
STUDIO_TRIM_PAIRS = "pleach.studio.trim-pairs"
STUDIO_TOKEN_ESTIMATE = "pleach.studio.token-estimate"
STUDIO_MESSAGE_SHAPE = "pleach.studio.message-shape"
STUDIO_TOOL_NAMES = "pleach.studio.tool-names"
STUDIO_PROFILE_SHAPE = "pleach.studio.profile-shape"
STUDIO_MODEL_NAME = "pleach.studio.model-name"
STUDIO_RESULT_NULL = "pleach.studio.result-null"
STUDIO_RESULT_UNKNOWN_KEY = "pleach.studio.result-unknown-key"
STUDIO_SINGLE_ESCAPE = "pleach.studio.single-escape"
STUDIO_INTERRUPT_SHAPE = "pleach.studio.interrupt-shape"
STUDIO_RETRY_SHAPE = "pleach.studio.retry-shape"
STUDIO_ESCAPE_ROLE = "pleach.studio.escape-role"
STUDIO_CONTEXT_EXTRA_KEY = "pleach.studio.context-extra-key"
STUDIO_JSON_ONLY = "pleach.studio.json-only"
