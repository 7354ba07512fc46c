"""A captured body can hold anything: whatever value sits anywhere in it, an import either
succeeds (a sample, its losses and findings) or fails with ImportFailed, and a sample that passes
the request checks always has a provider body and a cache check."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from studio.core.provider.cache_check import cache_check
from studio.core.provider.formats import FORMATS
from studio.core.provider.importer import ImportFailed, import_body
from studio.core.provider.preview import PROVIDERS, provider_body
from tests.support.json_strategies import json_values
from tests.support.provider_bodies import anthropic_body, chat_body, responses_body

BODIES = {
    "anthropic": anthropic_body(),
    "openai-chat": chat_body(),
    "openai-responses": responses_body(),
}


def paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    found = [prefix]
    if isinstance(value, dict):
        for key, sub in value.items():
            found += paths(sub, (*prefix, key))
    elif isinstance(value, list):
        for k, sub in enumerate(value):
            found += paths(sub, (*prefix, k))
    return found


def replaced(body: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    out = copy.deepcopy(body)
    holder = out
    for part in path[:-1]:
        holder = holder[part]
    holder[path[-1]] = value
    return out


@st.composite
def hostile(draw: st.DrawFn) -> tuple[str, Any]:
    name = draw(st.sampled_from(sorted(BODIES)))
    body = BODIES[name]
    where = draw(st.sampled_from(paths(body)))
    return name, replaced(body, where, draw(json_values))


@given(hostile(), st.sampled_from([None, *FORMATS]), st.booleans())
def test_any_value_anywhere_imports_or_fails_cleanly(case, format, dynamic):
    _, body = case
    try:
        imported = import_body(body, format, dynamic_instructions=dynamic)
    except ImportFailed as exc:
        assert str(exc)
        return
    json.dumps(imported.to_json(), allow_nan=False)
    if imported.valid:
        request = imported.sample["request"]
        for provider in PROVIDERS:
            json.dumps(provider_body(request, provider).body, allow_nan=False)
            assert cache_check(request, request, provider).kind == "unchanged"
