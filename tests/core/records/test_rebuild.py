"""A run stored in a real record store and read back rebuilds the outcome that was stored, for
every contract; once its payload is cleared, it rebuilds everything but what the run carried."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from studio.core.records.rebuild import rebuild_outcome
from studio.core.records.store import RecordStore, run_record
from studio.core.run_outcome import ChainStep, RunOutcome
from studio.core.turn_error import KIND_TITLES, ExitStatus, Frame, HookRef, turn_error

CARRIED = "what the run carried"
REQUEST = {
    "system": "Be brief.",
    "messages": [{"role": "user", "content": f"{CARRIED}: refund twice?"}],
    "tools": [{"name": "fs_read"}, {"name": "shell"}],
    "options": {"temperature": 0.7},
}


def pre_llm_hook(function: str = "transform") -> HookRef:
    return HookRef(source="lib/policy.py", function=function, contract="pre_llm")


def pre_llm_ok() -> RunOutcome:
    return RunOutcome(
        contract="pre_llm",
        status="ok",
        started_at=1_780_000_000.5,
        sample="support-ticket",
        loop="main",
        hook=pre_llm_hook(),
        duration_ms=12.25,
        input=REQUEST,
        result={**REQUEST, "tools": [{"name": "fs_read"}]},
        decision_record={
            "applied": True,
            "tools": {"before": 2, "after": 1, "removed": ["shell"], "added": []},
            "sealedRequestId": "req-1",
        },
        stdout=f"{CARRIED}\n",
        stderr="careful\n",
        stdout_truncated=True,
        warnings=[{"path": "/tools/0", "message": "presented, not enabled"}],
    )


def pre_llm_rejected() -> RunOutcome:
    hook = pre_llm_hook("bad_temperature")
    return RunOutcome(
        contract="pre_llm",
        status="turn_error",
        sample="support-ticket",
        loop="researcher",
        hook=hook,
        input=REQUEST,
        rejected={**REQUEST, "options": {"temperature": 7}},
        decision_record={"applied": True, "sealedRequestId": None},
        turn_error=turn_error(
            "invalid_result",
            f"/options/temperature: 7 is above 2 ({CARRIED})",
            path="/options/temperature",
            hook=hook,
            loop="researcher",
            duration_ms=3.5,
            exit=ExitStatus(code=0),
            traceback=[Frame(file="lib/policy.py", line=9, function="bad", code=CARRIED)],
            stderr_tail=CARRIED,
            details={"findings": [{"path": "/options/temperature", "message": CARRIED}]},
        ),
    )


def pre_llm_not_applied() -> RunOutcome:
    return RunOutcome(
        contract="pre_llm",
        status="not_applied",
        sample="support-ticket",
        loop="reviewer",
        hook=pre_llm_hook(),
        input=REQUEST,
        result=REQUEST,
        decision_record={"applied": False},
    )


def step_ok() -> RunOutcome:
    return RunOutcome(
        contract="step",
        status="ok",
        sample="step-escalated",
        loop="main",
        hook=HookRef(source="lib/prepare.py", function="prepare_step", contract="step"),
        input={"stepIndex": 2, "messages": [CARRIED]},
        result={"model": "review-model", "activeTools": ["escalateTicket"]},
        decision_record={
            "operation": "prepareStep",
            "stepIndex": 2,
            "amendment": {"modelChanged": True, "activeTools": 1},
            "sealedRequestId": "req-2",
        },
        effective={"model": "review-model", "addedContributors": ["review-checklist"]},
    )


def chain_stopped() -> RunOutcome:
    failing = HookRef(
        source="lib/chain_hooks.py",
        function="misspelt_suffix",
        contract="chain",
        chain="pre",
        position=1,
    )
    return RunOutcome(
        contract="chain",
        status="turn_error",
        sample="chain-refund",
        loop="main",
        input={"systemPrompt": CARRIED, "messages": []},
        decision_record={"status": "turn_error", "modelCalls": 0},
        turn_error=turn_error(
            "invalid_result", f"unknown key ({CARRIED})", path="/systemPromptSufix", hook=failing
        ),
        chain=[
            ChainStep(chain="pre", position=0, hook="historyTrimmerHook", builtin=True),
            ChainStep(
                chain="pre",
                position=1,
                hook="lib/chain_hooks.py:misspelt_suffix",
                builtin=False,
                returned={"systemPromptSufix": CARRIED},
                stopped="turn_error",
                duration_ms=2.0,
                stdout=CARRIED,
            ),
        ],
    )


RUNS = {
    "pre-LLM ok": pre_llm_ok,
    "pre-LLM rejected": pre_llm_rejected,
    "pre-LLM not applied": pre_llm_not_applied,
    "step ok": step_ok,
    "chain stopped": chain_stopped,
}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[RecordStore]:
    with RecordStore.open(tmp_path) as opened:
        yield opened


@pytest.mark.parametrize("make", RUNS.values(), ids=RUNS.keys())
def test_a_stored_run_rebuilds_the_outcome_that_was_stored(
    store: RecordStore, make: Callable[[], RunOutcome]
) -> None:
    run = make()
    store.add(run)
    stored = store.get(run.run_id)
    assert stored is not None
    assert rebuild_outcome(stored.record, stored.payload) == run


@pytest.mark.parametrize("make", RUNS.values(), ids=RUNS.keys())
def test_a_cleared_run_rebuilds_all_but_what_it_carried(
    store: RecordStore, make: Callable[[], RunOutcome]
) -> None:
    run = make()
    store.add(run)
    store.clear_payloads([run.run_id])
    stored = store.get(run.run_id)
    assert stored is not None and stored.payload is None

    rebuilt = rebuild_outcome(stored.record, stored.payload)

    assert run_record(rebuilt) == run_record(run) == stored.record
    assert CARRIED not in rebuilt.model_dump_json()
    assert (rebuilt.input, rebuilt.result, rebuilt.rejected) == (None, None, None)
    assert (rebuilt.stdout, rebuilt.stderr) == ("", "")
    assert rebuilt.stdout_truncated == run.stdout_truncated
    assert [step.returned for step in rebuilt.chain] == [None] * len(run.chain)
    if run.turn_error is not None:
        error = rebuilt.turn_error
        assert error is not None
        assert error.message == KIND_TITLES[run.turn_error.kind]
        assert (error.stderr_tail, error.details) == ("", {})
        assert [f.code for f in error.traceback] == [None] * len(run.turn_error.traceback)
        assert (error.path, error.hook, error.exit) == (
            run.turn_error.path,
            run.turn_error.hook,
            run.turn_error.exit,
        )


def test_a_record_this_version_cannot_read_is_a_value_error(store: RecordStore) -> None:
    run = pre_llm_ok()
    store.add(run)
    stored = store.get(run.run_id)
    assert stored is not None
    with pytest.raises(ValueError):
        rebuild_outcome({**stored.record, "status": "half-done"}, stored.payload)
