"""A sample the hook cannot be run on is the sample's problem, never the hook's.

Before a run, the sample is checked by its contract's sample rules; one with an error ends the
run before any hook starts (``sample_invalid``), and a contract that finds the sample short
while it runs (a chain out of scripted responses) ends it the same way. Such a run is shown as a
*sample problem*: the sample file and the JSON path in it, and whether the hook was started at
all, in the window and in ``hook-studio run`` alike.
"""

from __future__ import annotations

from typing import Final

from studio.core.run_outcome import RunOutcome
from studio.core.turn_error import SAMPLE_PROBLEM_KIND, TurnError

SAMPLE_PROBLEM: Final = "Sample problem"
NOT_RUN: Final = "the hook was not run"


def sample_file_label(name: str) -> str:
    """How messages name a sample's file."""
    return f"samples/{name}.json"


def is_sample_problem(error: TurnError | None) -> bool:
    return error is not None and error.kind == SAMPLE_PROBLEM_KIND


def hook_started(outcome: RunOutcome) -> bool:
    """Whether any hook ran before the run ended (a chain may find its sample short midway)."""
    return outcome.hook is not None or bool(outcome.chain)


def naming_the_sample(outcome: RunOutcome) -> RunOutcome:
    """``outcome`` with a sample problem's message starting with the sample file and the JSON
    path, however the contract worded it."""
    error = outcome.turn_error
    if not is_sample_problem(error) or outcome.sample is None:
        return outcome
    assert error is not None
    label = sample_file_label(outcome.sample)
    if error.message.startswith(label):
        return outcome
    where = f" {error.path or '/'}" if error.path is not None else ""
    named = error.model_copy(update={"message": f"{label}{where}: {error.message}"})
    return outcome.model_copy(update={"turn_error": named})


def sample_problem_line(outcome: RunOutcome) -> str:
    """The one line that says what is wrong with the sample and that the hook is not to blame."""
    error = outcome.turn_error
    assert error is not None
    if hook_started(outcome):
        return f"{SAMPLE_PROBLEM}: {error.message}"
    return f"{SAMPLE_PROBLEM} ({NOT_RUN}): {error.message}"
