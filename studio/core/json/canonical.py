"""Canonical JSON (RFC 8785) and the SHA-256 value hash that step-preparation records carry."""

from __future__ import annotations

import hashlib
from typing import Any

import rfc8785

from studio.core.json.values import MAX_SAFE_INTEGER


class NotCanonicalizable(ValueError):
    """The value has no canonical JSON form (NaN, Infinity, a non-JSON type, a non-string key)."""


def _as_javascript_numbers(value: Any) -> Any:
    # A JavaScript runtime holds every number as a double, so an integer beyond 2**53 has already
    # been rounded by the time it is hashed there; round it the same way here.
    if isinstance(value, bool) or value is None or isinstance(value, str | float):
        return value
    if isinstance(value, int):
        return value if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER else float(value)
    if isinstance(value, dict):
        return {k: _as_javascript_numbers(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_as_javascript_numbers(v) for v in value]
    return value


def canonical_json(value: Any) -> bytes:
    """RFC 8785: keys sorted by UTF-16 code units, no spaces, numbers as JavaScript writes them."""
    try:
        return rfc8785.dumps(_as_javascript_numbers(value))
    except (rfc8785.CanonicalizationError, TypeError, ValueError, OverflowError) as exc:
        raise NotCanonicalizable(str(exc)) from exc


def value_hash(value: Any) -> str:
    """Lowercase hex SHA-256 of the canonical JSON of ``value``."""
    return hashlib.sha256(canonical_json(value)).hexdigest()
