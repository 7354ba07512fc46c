"""Invocation-preparation runs through real workers: the bundled TypeScript hooks, their Python
twins, and layered runs whose step decisions are linked and stored (spec/crux.md §9)."""

from __future__ import annotations

import pytest

from studio.core.records.store import RecordStore
from tests.support.runners import LiveRunner

PYTHON_HOOK = "lib/invocation.py:prepare_invocation"


def write_hook(live: LiveRunner, name: str, text: str) -> str:
    (live.runner.workspace.root / "lib" / name).write_text(text)
    return f"lib/{name}"


@pytest.mark.parametrize("hook", [None, PYTHON_HOOK], ids=["typescript", "python"])
class TestBundledSamples:
    def test_the_pipeline_review_stage_is_layered_and_linked(self, bundled, hook):
        outcome = bundled.run("invocation-pipeline-review", hook=hook)
        assert outcome.status == "ok", outcome.turn_error
        child = outcome.result["childBaseline"]
        assert [c["id"] for c in child["contributors"]] == [
            "support-persona",
            "support-memory",
            "safety-policy",
            "review-rubric",
        ]
        assert child["model"] == "review-model"
        steps = outcome.result["steps"]
        assert [(s["index"], s["reason"]) for s in steps] == [(0, "initial"), (1, "tool-result")]
        first, second = (s["decision_record"] for s in steps)
        assert steps[0]["previousRequestId"] is None
        assert steps[1]["previousRequestId"] == first["sealedRequestId"]
        assert first["sealedRequestId"] != second["sealedRequestId"]
        # each step starts from the child baseline the invocation produced
        assert steps[0]["effective"]["model"] == "review-model"
        assert "review-rubric" in steps[1]["effective"]["contributors"]
        # what is journaled: the step decisions only, linked as the reference links them
        assert outcome.decision_record == {
            "steps": [
                {"previousRequestId": None, "inspection": first},
                {"previousRequestId": first["sealedRequestId"], "inspection": second},
            ]
        }

    def test_the_parallel_branch_uses_the_invocations_own_tool(self, bundled, hook):
        outcome = bundled.run("invocation-parallel-billing", hook=hook)
        assert outcome.status == "ok", outcome.turn_error
        assert outcome.result["amendment"] == {"activeTools": ["lookupOrder"]}
        assert outcome.effective["activeTools"] == ["lookupOrder"]
        assert outcome.decision_record == {}

    def test_the_failing_consensus_candidate_is_never_dispatched(self, bundled, hook):
        outcome = bundled.run("invocation-consensus-failing", hook=hook)
        assert outcome.status == "turn_error"
        error = outcome.turn_error
        assert error.reason == "callback"
        assert error.details["error"]["name"] == "PreparationError"
        assert error.message.startswith("Request preparation failed: callback.")
        assert outcome.result is None
        assert outcome.decision_record == {}

    def test_the_swarm_hop_removes_what_the_child_step_then_activates(self, bundled, hook):
        outcome = bundled.run("invocation-swarm-refund", hook=hook)
        assert outcome.status == "turn_error"
        assert outcome.result["amendment"] == {"use": {"remove": [{"id": "refund-desk"}]}}
        child = outcome.result["childBaseline"]
        assert [c["id"] for c in child["contributors"]] == ["support-persona"]
        first, second = outcome.result["steps"]
        assert first["decision_record"] is not None and first["turn_error"] is None
        assert second["decision_record"] is None
        assert second["previousRequestId"] == first["decision_record"]["sealedRequestId"]
        error = outcome.turn_error
        assert error.kind == "invalid_composition"
        assert error.details["rule"] == "V9"
        assert error.details["step"] == 1
        assert error.hook is not None and error.hook.contract == "step"
        # the first step's decision is still journaled
        assert len(outcome.decision_record["steps"]) == 1


class TestRawValues:
    def test_a_typescript_array_is_refused_not_snapshotted(self, bundled):
        hook = write_hook(bundled, "arrays.ts", "export const prepareInvocation = () => [];\n")
        outcome = bundled.run("invocation-parallel-billing", hook=hook)
        assert outcome.status == "turn_error"
        assert outcome.turn_error.details["rule"] == "V1"
        error = outcome.turn_error.details["error"]
        assert error["message"] == "Preparation callbacks must return an amendment object."

    def test_a_python_array_is_refused(self, bundled):
        hook = write_hook(bundled, "arrays.py", "def main(ctx):\n    return []\n")
        outcome = bundled.run("invocation-parallel-billing", hook=hook)
        assert outcome.turn_error.details["rule"] == "V1"

    def test_the_step_path_still_snapshots_an_array(self, bundled):
        hook = write_hook(bundled, "step_arrays.ts", "export const prepareStep = () => [];\n")
        outcome = bundled.run("step-escalated", hook=hook)
        assert outcome.status == "ok", outcome.turn_error
        assert outcome.result == {}

    def test_the_typescript_context_is_frozen_with_live_resources(self, bundled):
        hook = write_hook(
            bundled,
            "looks.ts",
            "export async function prepareInvocation(ctx) {\n"
            "  const keys = Object.keys(ctx).sort().join(',');\n"
            "  const frozen = Object.isFrozen(ctx) && Object.isFrozen(ctx.composition);\n"
            "  const policy = await ctx.resources.read('working-state:routing-policy');\n"
            "  return { model: `${keys}|${frozen}|${policy.candidateModels.length}` };\n"
            "}\n",
        )
        outcome = bundled.run("invocation-consensus-failing", hook=hook)
        assert outcome.status == "ok", outcome.turn_error
        keys = "candidate,composition,input,operation,resources,signal,stats,target"
        assert outcome.result["childBaseline"]["model"] == f"{keys}|true|2"
        assert [r["identity"] for r in outcome.result["reads"]] == ["working-state:routing-policy"]

    def test_a_python_hook_reads_the_context_and_resources(self, bundled):
        hook = write_hook(
            bundled,
            "looks.py",
            "def main(ctx):\n"
            "    policy = ctx.resources.read('working-state:routing-policy')\n"
            "    keys = ','.join(sorted(ctx.keys()))\n"
            "    return {'model': keys + '|' + str(len(policy['candidateModels']))}\n",
        )
        outcome = bundled.run("invocation-consensus-failing", hook=hook)
        keys = "candidate,composition,input,operation,resources,stats,target"
        assert outcome.result["childBaseline"]["model"] == f"{keys}|2"


def test_a_layered_run_is_stored_with_its_step_decisions_only(bundled):
    store = RecordStore.open(bundled.runner.workspace.root)
    bundled.runner.store = store
    try:
        outcome = bundled.run("invocation-pipeline-review")
        store.flush()
        stored = store.get(outcome.run_id)
        assert stored is not None
        record = stored.to_json()
        inspection = record["inspection"]
        assert [s["inspection"]["stepIndex"] for s in inspection["steps"]] == [0, 1]
        # the invocation's own amendment is shown from the payload, never journaled
        assert "amendment" not in inspection
        again = stored.outcome()
        assert again.result["childBaseline"]["model"] == "review-model"
    finally:
        store.close()


class TestCeiling:
    """§9: the invocation path has no caller deadline, only its 30-second ceiling, and a hook
    that passes it fails with reason ``timeout`` (the child is never dispatched)."""

    @pytest.mark.parametrize(
        ("name", "text"),
        [
            ("hangs.py", "import time\n\ndef main(ctx):\n    time.sleep(600)\n"),
            ("hangs.ts", "export function prepareInvocation() { for (;;) {} }\n"),
        ],
        ids=["python", "typescript"],
    )
    def test_a_hook_past_the_ceiling_fails_with_reason_timeout(self, bundled, name, text):
        outcome = bundled.run("invocation-parallel-billing", hook=write_hook(bundled, name, text))
        assert outcome.status == "turn_error"
        error = outcome.turn_error
        assert error.reason == "timeout"
        assert error.details["error"] == {
            "name": "PreparationError",
            "reason": "timeout",
            "message": "Request preparation failed: timeout.",
        }
        assert error.duration_ms >= 30_000
        assert outcome.result is None and outcome.decision_record == {}
