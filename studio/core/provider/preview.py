"""The body a provider receives for a request once the hook has run: ADF's own steps
(:mod:`.sending`) and then the provider's wire format (:mod:`.bodies`).

The body has no ``model``: that comes from the agent's config, not from the request."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from studio.core.provider.bodies import anthropic_body, chat_body, responses_body, subscription_body
from studio.core.provider.sending import prepared_messages

Encoder = Callable[[dict[str, Any], list[dict[str, Any]], list[str]], dict[str, Any]]

ANTHROPIC = "anthropic"
OPENAI = "openai"
SUBSCRIPTION = "chatgpt-subscription"
OPENROUTER = "openrouter"
CHAT = "chat-completions"

PROVIDERS: dict[str, tuple[str, Encoder]] = {
    ANTHROPIC: ("Anthropic Messages (POST /v1/messages)", anthropic_body),
    OPENAI: ("OpenAI Responses (POST /v1/responses)", responses_body),
    SUBSCRIPTION: ("ChatGPT subscription (Responses, patched)", subscription_body),
    OPENROUTER: (
        "OpenRouter (Chat Completions with reasoning)",
        partial(chat_body, openrouter=True),
    ),
    CHAT: ("Chat Completions (a custom base URL: POST {base}/chat/completions)", chat_body),
}


@dataclass(frozen=True)
class ProviderBody:
    provider: str
    body: dict[str, Any]
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"provider": self.provider, "body": self.body, "notes": self.notes}


def provider_body(request: dict[str, Any], provider: str) -> ProviderBody:
    """What ``provider`` receives for ``request`` (a request that passes the validator)."""
    if provider not in PROVIDERS:
        raise ValueError(f"no provider named {provider!r} (one of {', '.join(PROVIDERS)})")
    notes: list[str] = []
    encode = PROVIDERS[provider][1]
    body = encode(request, prepared_messages(request), notes)
    return ProviderBody(provider, body, list(dict.fromkeys(notes)))
