"""The outcome of a trivial run, to store."""

from __future__ import annotations

from studio.core.run_outcome import RunOutcome


def trivial_run(started_at: float) -> RunOutcome:
    request = {"system": "s", "messages": [{"role": "user", "content": "hi"}]}
    return RunOutcome(
        contract="pre_llm",
        status="ok",
        started_at=started_at,
        sample="basic",
        loop="main",
        input=request,
        result=request,
    )
