"""A stored run keeps the sample it was made on (without a second copy of its input), and a run
can be made again on that document rather than on the sample file as it is now: real runs of
the bundled workspace, in a real record store."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from studio.core.records.record_sample import record_sample
from studio.core.records.store import RecordStore
from studio.core.run_outcome import RunOutcome
from studio.core.workspace.folder import Workspace
from tests.support.runners import LiveRunner
from tests.support.workspaces import copy_bundled_workspace


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return copy_bundled_workspace(tmp_path / "workspace")


@pytest.fixture
def live(workspace: Path) -> Iterator[tuple[LiveRunner, RecordStore]]:
    with RecordStore.open(workspace) as store:
        runner = LiveRunner(Workspace.open(workspace))
        runner.runner.store = store
        try:
            yield runner, store
        finally:
            runner.close()


def run_recorded(runner: LiveRunner, name: str, **options: Any) -> RunOutcome:
    """Run ``name`` and wait until its record is written (which goes on after the outcome)."""

    async def run() -> RunOutcome:
        handle = runner.runner.start(name, **options)
        outcome = await handle.outcome()
        await handle.recorded()
        return outcome

    return runner.call(run())


def sample_file(workspace: Path, name: str) -> dict:
    return json.loads((workspace / "samples" / f"{name}.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    "name", ["support-ticket", "step-escalated", "chain-refund", "invocation-pipeline-review"]
)
def test_each_contract_keeps_the_very_sample_it_ran_on(
    workspace: Path, live: tuple[LiveRunner, RecordStore], name: str
) -> None:
    runner, store = live
    outcome = run_recorded(runner, name)
    stored = store.get(outcome.run_id)
    assert stored is not None
    found = record_sample(stored)
    assert found.problem is None and found.exact
    assert found.document == sample_file(workspace, name)
    assert found.sample == name


def test_the_request_is_stored_once(live: tuple[LiveRunner, RecordStore], workspace: Path) -> None:
    runner, store = live
    outcome = run_recorded(runner, "support-ticket")
    with store._reading() as db:
        (payload,) = db.execute(
            "SELECT p.payload FROM payloads p JOIN decisions d ON d.seq = p.seq WHERE d.run_id = ?",
            (outcome.run_id,),
        ).fetchone()
    request = sample_file(workspace, "support-ticket")["request"]
    kept_sample = json.dumps(json.loads(payload)["sample"])
    assert json.dumps(request["system"]) not in kept_sample  # the input stands for it
    assert '"adf"' in kept_sample or '"expect"' in kept_sample  # the rest of the sample is kept


def test_a_run_made_again_on_the_stored_document_ignores_the_file_as_it_is_now(
    live: tuple[LiveRunner, RecordStore], workspace: Path
) -> None:
    runner, store = live
    first = run_recorded(runner, "support-ticket", loop="main")
    stored = store.get(first.run_id)
    assert stored is not None
    document = record_sample(stored).document
    assert document is not None
    changed = sample_file(workspace, "support-ticket")
    changed["request"]["messages"][0]["content"] = "A different question altogether"
    (workspace / "samples" / "support-ticket.json").write_text(json.dumps(changed))

    again = run_recorded(runner, "support-ticket", loop="main", document=document)
    assert again.status == first.status
    assert again.sample == "support-ticket"
    assert again.input == first.input  # what the stored run was given, not the file
    assert again.result == first.result
    from_file = run_recorded(runner, "support-ticket", loop="main")
    assert from_file.input["messages"][0]["content"] == "A different question altogether"


def test_a_cleared_payload_leaves_no_sample_and_says_why(
    live: tuple[LiveRunner, RecordStore],
) -> None:
    runner, store = live
    outcome = run_recorded(runner, "support-ticket")
    store.clear_payloads([outcome.run_id])
    stored = store.get(outcome.run_id)
    assert stored is not None
    found = record_sample(stored)
    assert found.document is None
    assert found.problem == "the payload of this run was cleared: the input it was given is gone"


def test_a_run_recorded_without_its_sample_gives_what_it_can(
    live: tuple[LiveRunner, RecordStore], workspace: Path
) -> None:
    runner, store = live
    runner.runner.store = None
    pre_llm = run_recorded(runner, "support-ticket", loop="reviewer")
    chain = run_recorded(runner, "chain-refund")
    step = run_recorded(runner, "step-escalated")
    for outcome in (pre_llm, chain, step):
        store.add(outcome)  # as runs were stored before samples were kept
    rebuilt = record_sample(store.get(pre_llm.run_id))
    assert not rebuilt.exact and rebuilt.note
    assert rebuilt.document == {
        "loop": "reviewer",
        "request": sample_file(workspace, "support-ticket")["request"],
    }
    for outcome in (chain, step):
        found = record_sample(store.get(outcome.run_id))
        assert found.document is None
        assert found.problem and "before the studio kept whole samples" in found.problem
