"""The invocation sample's schema and its parser agree on what a sample may hold."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from studio.core.invocation.sample import parse_invocation_sample
from studio.core.schemas import all_schemas
from tests.core.invocation.test_invocation_sample import sample, stats_json

SCHEMA = jsonschema.Draft202012Validator(all_schemas()["invocation_sample"])


def with_change(kind: str, change: Any) -> dict[str, Any]:
    document = sample(kind)
    change(document)
    return document


CASES = [
    ("each kind as written", [sample(k) for k in ("pipeline", "parallel", "consensus", "swarm")]),
    ("stats", [sample(stats=stats_json())]),
    ("steps", [sample(steps=[{"index": 0, "reason": "initial"}], prepareStep="lib/s.py")]),
]
REFUSED = [
    with_change("consensus", lambda d: d.update(context={})),
    with_change("pipeline", lambda d: d.update(input={})),
    with_change("swarm", lambda d: d["composition"]["hop"].pop("path")),
    with_change("parallel", lambda d: d["composition"].update(step={"name": "x", "index": 0})),
    with_change("pipeline", lambda d: d.update(stats={**stats_json(), "stepIndex": 0})),
    with_change("pipeline", lambda d: d.update(target={})),
    with_change("pipeline", lambda d: d.pop("composition")),
]


@pytest.mark.parametrize(("name", "documents"), CASES, ids=[c[0] for c in CASES])
def test_accepted_by_both(name, documents):
    for document in documents:
        assert SCHEMA.is_valid(document), name
        assert not isinstance(parse_invocation_sample(document), list)


@pytest.mark.parametrize("document", REFUSED)
def test_refused_by_both(document):
    assert not SCHEMA.is_valid(document)
    assert isinstance(parse_invocation_sample(document), list)
