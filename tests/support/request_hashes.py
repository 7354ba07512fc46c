"""What a run's decision record must say of a request, computed the plain way: the SHA-256 of
its JSON with sorted keys, in one call over the whole value."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from studio.core.run_outcome import RunOutcome


def sorted_json_hash(value: object) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def assert_only_the_system_changed(
    outcome: RunOutcome, request: dict[str, Any], expected: dict[str, Any]
) -> None:
    """The run ended ok with ``expected`` (the keys in its order), and its decision record
    hashes both requests as a whole read would and says only the system prompt changed."""
    assert outcome.status == "ok", outcome.turn_error
    assert outcome.result == expected
    assert list(outcome.result) == list(expected)
    decision = outcome.decision_record
    assert decision["requestHashBefore"] == sorted_json_hash(request)
    assert decision["requestHashAfter"] == sorted_json_hash(expected)
    assert decision["changed"] == {
        "system": True,
        "messages": False,
        "tools": False,
        "options": False,
    }
