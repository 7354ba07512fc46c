"""What the compare view diffs between two runs: their inputs, or their results, in the request
diff's terms; or, in plain words, why it cannot (a payload cleared, no result, a result that is
not a request)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from studio.core.run_outcome import RunOutcome
from studio.ui.contract_views import AMENDMENT, TIMELINE, contract_title, result_view
from studio.ui.result_diff_sides import DiffSides, chain_sides

Part = Literal["input", "result"]
PART_WORDS = {"input": "inputs", "result": "results"}


@dataclass(frozen=True)
class ComparedRun:
    label: str
    outcome: RunOutcome
    payload_cleared: bool = False


@dataclass(frozen=True)
class PairSides:
    """The sides to diff, or why there are none."""

    sides: DiffSides | None = None
    problem: str | None = None


def _runs_phrase(labels: list[str]) -> str:
    return f"run {labels[0]}" if len(labels) == 1 else "runs " + " and ".join(labels)


def _value(run: ComparedRun, part: Part) -> tuple[Any, str | None]:
    """The run's side of the diff, or the reason it has none."""
    outcome = run.outcome
    view = result_view(outcome)
    if part == "input":
        if outcome.input is None:
            return None, f"Run {run.label} has no input to compare (its sample could not be read)."
        if view == TIMELINE:
            return chain_sides(outcome.input, None).original, None
        return outcome.input, None
    if outcome.status == "turn_error" or outcome.result is None:
        return None, f"Run {run.label} ended in a turn error: it has no result to compare."
    if view == AMENDMENT:
        return None, (
            f"{contract_title(outcome.contract)} results are amendments, not requests: open "
            "each run (Show this run) to see its amendment; their effective changes are "
            "compared under Run records."
        )
    if view == TIMELINE:
        final = outcome.result.get("request") if isinstance(outcome.result, dict) else None
        if final is None:
            return None, f"Run {run.label} has no final request to compare."
        return chain_sides(None, final).transformed, None
    return outcome.result, None


def pair_sides(first: ComparedRun, second: ComparedRun, part: Part) -> PairSides:
    """The ``part`` of two runs as the two sides of a request diff."""
    words = PART_WORDS[part]
    cleared = [run.label for run in (first, second) if run.payload_cleared]
    if cleared:
        whose = "their" if len(cleared) == 2 else "its"
        return PairSides(
            problem=f"The payload of {_runs_phrase(cleared)} was cleared: {whose} {part} is "
            f"gone, so the {words} cannot be compared. The run records (decision fields) are "
            "still compared under Run records."
        )
    values = []
    for run in (first, second):
        value, problem = _value(run, part)
        if problem is not None:
            return PairSides(problem=problem)
        values.append(value)
    noun = part.capitalize()
    headers = (f"{noun} of {first.label}", f"{noun} of {second.label}")
    chains = all(result_view(run.outcome) == TIMELINE for run in (first, second))
    if chains:
        return PairSides(
            DiffSides(values[0], values[1], "System prompt", "Model", headers, "system prompt")
        )
    return PairSides(DiffSides(values[0], values[1], headers=headers))
