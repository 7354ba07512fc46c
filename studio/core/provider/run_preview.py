"""The provider request of a pre-LLM run: the body the provider would receive after the hook,
and the prompt-cache check against the request the hook was given."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from studio.core.findings import errors
from studio.core.pre_llm.request import validate_request
from studio.core.provider.cache_check import CacheCheck, cache_check
from studio.core.provider.preview import PROVIDERS, ProviderBody, provider_body
from studio.core.run_outcome import RunOutcome


@dataclass(frozen=True)
class RunPreview:
    provider: str
    body: ProviderBody | None
    cache: CacheCheck | None
    reason: str = ""
    """Why there is no body (the hook failed, the payload was cleared)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "body": self.body.body if self.body else None,
            "notes": self.body.notes if self.body else [],
            "cache": self.cache.to_json() if self.cache else None,
            "reason": self.reason or None,
        }

    def text(self) -> str:
        lines = [f"provider request: {PROVIDERS[self.provider][0]}"]
        if self.body is None:
            lines.append(f"  {self.reason}")
            return "\n".join(lines) + "\n"
        if self.cache is not None:
            lines.append(f"  prompt cache: {self.cache.text}")
        lines += [f"  note: {note}" for note in self.body.notes]
        lines.append(json.dumps(self.body.body, indent=2, ensure_ascii=False))
        return "\n".join(lines) + "\n"


def _request(value: Any) -> dict[str, Any] | None:
    if isinstance(value, dict) and isinstance(value.get("request"), dict):
        value = value["request"]
    if isinstance(value, dict) and not errors(validate_request(value)):
        return value
    return None


def run_preview(outcome: RunOutcome, provider: str) -> RunPreview:
    """What ``provider`` receives for a pre-LLM run, and what the hook did to its cache."""
    if outcome.status == "turn_error":
        return RunPreview(provider, None, None, "nothing is sent: the hook failed")
    sent = _request(outcome.result)
    if sent is None:
        return RunPreview(provider, None, None, "this run keeps no request (payload cleared)")
    given = _request(outcome.input)
    check = cache_check(given, sent, provider) if given is not None else None
    return RunPreview(provider, provider_body(sent, provider), check)
