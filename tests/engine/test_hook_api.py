"""spec/crux.md §2, §4 and §5: the objects a step hook sees in its worker."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from types import SimpleNamespace
from typing import Any

import pytest

from studio.core.json.canonical import value_hash
from studio.core.step.decision import decide_step
from studio.core.step.sample import StepSample, parse_step_sample, step_worker_payload
from studio.engine.hook_api import (
    PreparationError,
    ResourceReadError,
    Resources,
    StepContext,
    SysLambdaError,
    error_details,
    handle_identity,
    step_context_for_worker,
)
from tests.support.step_samples import baseline_json

DECLARED = [
    {"identity": "working-state:control", "value": {"escalated": False, "tags": ["a"]}},
    {"identity": "blackboard:plan", "value": [1, 2, 3]},
    {"identity": "memory:support:prefs", "value": None},
    {"identity": "working-state:missing", "failure": "unresolved"},
    {"identity": "blackboard:down", "failure": "storage-unavailable"},
    {"identity": "blackboard:secret", "failure": "unauthorized"},
]


def run_sample(index: int = 0, reason: str = "initial") -> StepSample:
    value = {
        "contract": "step",
        "baseline": baseline_json(),
        "step": {"index": index, "reason": reason},
        "resources": DECLARED,
    }
    sample = parse_step_sample(value)
    assert isinstance(sample, StepSample), sample
    return sample


def resources() -> Resources:
    return Resources(json.loads(json.dumps(DECLARED)))


def context(**fields: Any) -> StepContext:
    data = {
        "operation": "language",
        "input": {"ticketId": "t1"},
        "index": 1,
        "reason": "tool-result",
        "messages": [{"role": "user", "content": "hi"}],
        "toolHistory": [{"callId": "c1", "name": "search"}],
        "stats": {"cursor": 1},
    }
    data.update(fields)
    return StepContext(data, resources())


# ---- pinning and recording -------------------------------------------------------------------


def test_a_read_returns_the_declared_value():
    assert resources().read("working-state:control") == {"escalated": False, "tags": ["a"]}


def test_a_resource_with_no_value_reads_as_none():
    r = resources()
    assert r.read("memory:support:prefs") is None
    assert r.reads() == ["memory:support:prefs"]


def test_the_first_read_pins_the_value_and_later_reads_return_the_same_value():
    r = resources()
    first = r.read("working-state:control")
    second = r.read("working-state:control")
    assert first == second
    assert first is not second


def test_changing_a_returned_value_does_not_change_the_pinned_one():
    r = resources()
    first = r.read("working-state:control")
    first["escalated"] = True
    first["tags"].append("mutated")
    assert r.read("working-state:control") == {"escalated": False, "tags": ["a"]}


def test_changing_the_declared_entries_after_construction_changes_nothing():
    declared = json.loads(json.dumps(DECLARED))
    r = Resources(declared)
    declared[1]["value"].append(4)
    assert r.read("blackboard:plan") == [1, 2, 3]


def test_reads_are_recorded_once_in_completion_order():
    r = resources()
    r.read("blackboard:plan")
    r.read("working-state:control")
    r.read("blackboard:plan")
    r.read("memory:support:prefs")
    r.read("working-state:control")
    assert r.reads() == ["blackboard:plan", "working-state:control", "memory:support:prefs"]


def test_reads_returns_a_copy():
    r = resources()
    r.read("blackboard:plan")
    r.reads().clear()
    assert r.reads() == ["blackboard:plan"]


# ---- failures --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("identity", "reason"),
    [
        ("working-state:missing", "unresolved"),
        ("blackboard:down", "storage-unavailable"),
        ("blackboard:secret", "unauthorized"),
        ("working-state:never-declared", "undeclared"),
    ],
)
def test_a_failed_read_raises_its_reason_every_time_and_is_not_recorded(identity, reason):
    r = resources()
    for _ in range(2):
        with pytest.raises(ResourceReadError) as caught:
            r.read(identity)
        assert caught.value.reason == reason
        assert caught.value.identity == identity
        assert str(caught.value) == f"Preparation resource read failed: {reason}."
    assert r.reads() == []


@pytest.mark.parametrize("handle", [None, 42, object(), {"name": "x"}, SimpleNamespace(id=7)])
def test_a_handle_that_names_no_identity_is_undeclared(handle):
    with pytest.raises(ResourceReadError) as caught:
        resources().read(handle)
    assert caught.value.reason == "undeclared"
    assert caught.value.identity is None


def test_a_hook_can_catch_a_read_error_and_fall_back():
    def hook(ctx: StepContext) -> Any:
        try:
            ctx.resources.read("blackboard:down")
        except ResourceReadError as error:
            if error.reason == "storage-unavailable":
                return {"model": "safe-default"}
            raise
        return None

    ctx = context()
    assert hook(ctx) == {"model": "safe-default"}
    assert ctx.resources.reads() == []


def test_a_bad_reason_is_refused():
    with pytest.raises(ValueError):
        ResourceReadError("gone")
    with pytest.raises(ValueError):
        PreparationError("crashed")


@pytest.mark.parametrize(
    "entries",
    [
        [{"value": 1}],
        [{"identity": "working-state:a"}],
        [{"identity": "working-state:a", "failure": "undeclared"}],
        [{"identity": "working-state:a", "value": float("nan")}],
        [{"identity": "working-state:a", "value": {1, 2}}],
    ],
)
def test_resources_refuse_malformed_declarations(entries):
    with pytest.raises(ValueError):
        Resources(entries)


# ---- handles ---------------------------------------------------------------------------------


class Handle:
    def __init__(self, identity: str) -> None:
        self.identity = identity


@pytest.mark.parametrize(
    "handle",
    [
        "blackboard:plan",
        Handle("blackboard:plan"),
        SimpleNamespace(id="blackboard:plan"),
        {"identity": "blackboard:plan"},
        {"id": "blackboard:plan"},
    ],
)
def test_every_handle_form_reads_the_same_resource_and_is_recorded_once(handle):
    r = resources()
    assert r.read(handle) == [1, 2, 3]
    assert r.read("blackboard:plan") == [1, 2, 3]
    assert r.reads() == ["blackboard:plan"]
    assert handle in r


def test_identity_wins_over_id():
    assert handle_identity(SimpleNamespace(identity="blackboard:a", id="blackboard:b")) == (
        "blackboard:a"
    )


def test_a_handle_whose_attribute_lookup_fails_names_nothing():
    class Hostile:
        @property
        def identity(self) -> str:
            raise RuntimeError("no")

    assert handle_identity(Hostile()) is None


# ---- sync and async hooks --------------------------------------------------------------------


def test_a_sync_hook_reads_directly():
    def main(ctx: StepContext) -> Any:
        control = ctx.resources.read("working-state:control")
        return {"model": "review"} if control["escalated"] else None

    ctx = context()
    assert main(ctx) is None
    assert ctx.resources.reads() == ["working-state:control"]


def test_an_async_hook_awaits_aread():
    async def main(ctx: StepContext) -> Any:
        plan = await ctx.resources.aread("blackboard:plan")
        again = ctx.resources.read("blackboard:plan")
        return {"activeTools": [str(n) for n in plan]} if plan == again else None

    ctx = context()
    assert asyncio.run(main(ctx)) == {"activeTools": ["1", "2", "3"]}
    assert ctx.resources.reads() == ["blackboard:plan"]


def test_concurrent_async_reads_are_recorded_in_completion_order():
    async def main(ctx: StepContext) -> list[Any]:
        return await asyncio.gather(
            ctx.resources.aread("memory:support:prefs"),
            ctx.resources.aread("blackboard:plan"),
            ctx.resources.aread("memory:support:prefs"),
        )

    ctx = context()
    assert asyncio.run(main(ctx)) == [None, [1, 2, 3], None]
    assert ctx.resources.reads() == ["memory:support:prefs", "blackboard:plan"]


def test_an_async_read_failure_raises_when_awaited():
    async def main(ctx: StepContext) -> Any:
        return await ctx.resources.aread("blackboard:secret")

    with pytest.raises(ResourceReadError) as caught:
        asyncio.run(main(context()))
    assert caught.value.reason == "unauthorized"


def test_read_is_never_an_awaitable():
    async def main(ctx: StepContext) -> Any:
        return await ctx.resources.read("blackboard:plan")  # type: ignore[misc]

    with pytest.raises(TypeError):
        asyncio.run(main(context()))


# ---- the context -----------------------------------------------------------------------------


def test_attribute_and_item_access_give_the_same_values():
    ctx = context()
    for key in ("operation", "input", "index", "reason", "messages", "toolHistory", "stats"):
        assert getattr(ctx, key) == ctx[key]
    assert ctx.reason == "tool-result"
    assert ctx.tool_history == ctx["toolHistory"] == ctx["tool_history"]
    assert ctx["resources"] is ctx.resources
    assert "reason" in ctx and "resources" in ctx and "nope" not in ctx
    assert list(ctx) == [
        "operation",
        "input",
        "index",
        "reason",
        "messages",
        "toolHistory",
        "stats",
        "resources",
    ]
    assert ctx.get("nope", 5) == 5


def test_an_unknown_field_is_an_attribute_error_naming_the_fields():
    ctx = context()
    with pytest.raises(AttributeError, match="previousReceipt"):
        _ = ctx.previousReceipt
    with pytest.raises(KeyError):
        _ = ctx["previousReceipt"]


def test_the_context_is_read_only():
    ctx = context()
    with pytest.raises(AttributeError):
        ctx.reason = "initial"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del ctx.reason
    with pytest.raises(TypeError):
        ctx["reason"] = "initial"  # type: ignore[index]


def test_to_dict_is_a_json_copy_without_resources():
    ctx = context()
    data = ctx.to_dict()
    assert "resources" not in data
    data["input"]["ticketId"] = "changed"
    assert ctx.input == {"ticketId": "t1"}
    assert repr(ctx) == "StepContext(operation='language', index=1, reason='tool-result')"


def test_the_worker_argument_is_built_from_the_core_payload():
    value = {
        "contract": "step",
        "baseline": baseline_json(),
        "step": {"index": 0, "reason": "initial", "input": {"q": 1}},
        "resources": DECLARED,
    }
    sample = parse_step_sample(value)
    assert isinstance(sample, StepSample)
    payload = json.loads(json.dumps(step_worker_payload(sample)))
    ctx = step_context_for_worker(payload)
    assert ctx.index == 0 and ctx.reason == "initial" and ctx.input == {"q": 1}
    assert ctx.toolHistory == []
    assert ctx.stats["run"]["usage"] == {"coverage": {"tokens": "none", "cost": "none"}}
    assert ctx.resources.declared() == [d["identity"] for d in DECLARED]
    assert ctx.resources.read("blackboard:plan") == [1, 2, 3]


def test_a_payload_without_a_context_is_refused():
    with pytest.raises(ValueError):
        step_context_for_worker({"resources": []})


def test_a_payload_without_resources_declares_none():
    ctx = step_context_for_worker({"context": {"index": 0}})
    with pytest.raises(ResourceReadError) as caught:
        ctx.resources.read("blackboard:plan")
    assert caught.value.reason == "undeclared"


def test_the_whole_path_from_sample_to_record_through_the_hook_api():
    s = run_sample(1, "tool-result")
    ctx = step_context_for_worker(json.loads(json.dumps(step_worker_payload(s))))

    def hook(ctx: Any) -> Any:
        control = ctx.resources.read("working-state:control")
        ctx.resources.read("memory:support:prefs")
        ctx.resources.read("working-state:control")
        return {"model": "review"} if control["tags"] == ["a"] else None

    decision = decide_step(s, hook(ctx), ctx.resources.reads())
    record = decision.decision_record.to_json()
    assert record["amendment"]["modelChanged"] is True
    assert [r["identity"] for r in record["resources"]] == [
        "working-state:control",
        "memory:support:prefs",
    ]
    assert record["resources"][0]["valueHash"] == value_hash(DECLARED[0]["value"])
    assert json.loads(json.dumps(decision.to_json())) == decision.to_json()


# ---- errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize("reason", ["callback", "timeout", "aborted"])
def test_a_preparation_error_has_the_content_free_message(reason):
    error = PreparationError(reason)
    assert error.reason == reason
    assert str(error) == f"Request preparation failed: {reason}."


def test_error_details_describe_the_contract_errors_only():
    assert error_details(ResourceReadError("unresolved", "blackboard:x")) == {
        "error": "ResourceReadError",
        "reason": "unresolved",
        "identity": "blackboard:x",
    }
    assert error_details(PreparationError("timeout")) == {
        "error": "PreparationError",
        "reason": "timeout",
    }
    assert error_details(ValueError("x")) is None
    assert issubclass(SysLambdaError, Exception)


def test_the_module_imports_nothing_heavy():
    probe = (
        "import sys, json\n"
        "import studio.engine.hook_api\n"
        "heavy = ('pydantic', 'rfc8785', 'studio.core', 'asyncio', 'PySide6')\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in heavy or "
        "m.startswith('studio.core'))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert json.loads(out.stdout) == []
