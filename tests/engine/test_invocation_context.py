"""A Python invocation hook is handed the context of its own boundary: the messages of that
context call it the invocation context, while a step hook's keep calling theirs the step
context (spec/crux.md §9)."""

from __future__ import annotations

import pytest

from studio.engine.hook_api import StepContext, step_context_for_worker


def test_an_invocation_context_names_itself_in_every_message():
    ctx = step_context_for_worker(
        {"context": {"operation": "language", "composition": {"kind": "pipeline"}}},
        "invocation",
    )
    with pytest.raises(AttributeError, match=r"^the invocation context has no field 'index'"):
        _ = ctx.index
    with pytest.raises(AttributeError, match=r"^the invocation context is read-only"):
        ctx.model = "other"  # type: ignore[misc]
    with pytest.raises(AttributeError, match=r"^the invocation context is read-only"):
        del ctx.operation
    assert repr(ctx) == "InvocationContext(operation='language')"


def test_a_step_context_is_still_the_step_context():
    ctx = StepContext({"operation": "language", "index": 0})
    with pytest.raises(AttributeError, match=r"^the step context has no field 'branch'"):
        _ = ctx.branch
    assert repr(ctx) == "StepContext(operation='language', index=0)"


def test_a_context_of_no_known_boundary_is_refused():
    with pytest.raises(ValueError, match="step, invocation"):
        StepContext({}, kind="chain")


def test_a_python_invocation_hook_reading_a_missing_field_is_told_of_the_invocation_context(
    bundled,
):
    (bundled.runner.workspace.root / "lib" / "wrong_field.py").write_text(
        "def prepare_invocation(ctx):\n    return {'model': ctx.reason}\n"
    )
    outcome = bundled.run(
        "invocation-parallel-billing", hook="lib/wrong_field.py:prepare_invocation"
    )
    assert outcome.status == "turn_error"
    assert outcome.turn_error.reason == "callback"
    assert "the invocation context has no field 'reason'" in outcome.turn_error.message
    assert "step context" not in outcome.turn_error.message


def test_in_a_layered_run_the_step_hook_is_still_told_of_the_step_context(bundled):
    # The pipeline sample names no step hook: the studio's step.source prepares its steps.
    (bundled.runner.workspace.root / "lib" / "step_wrong.py").write_text(
        "def main(ctx):\n    return {'model': ctx.composition}\n"
    )
    settings = bundled.runner.workspace.root / "hookstudio.json"
    text = settings.read_text()
    assert '"lib/prepare.ts:prepareStep"' in text
    settings.write_text(text.replace('"lib/prepare.ts:prepareStep"', '"lib/step_wrong.py"'))
    outcome = bundled.run("invocation-pipeline-review", hook="lib/invocation.py:prepare_invocation")
    assert outcome.status == "turn_error"
    assert "the step context has no field 'composition'" in outcome.turn_error.message
