"""How the window shows a run of each contract, found through the registry.

A contract names its ``result_view``: ``request`` (a request diffed against its input),
``amendment`` (an amendment beside its effective change) or ``timeline`` (a chain of hooks).
The views ask here, never for a contract by name, so a contract added to the registry shows
with the view it names, and a run of a contract (or a view) this window does not know shows
with the generic tabs: its decision record, result and input as JSON.
"""

from __future__ import annotations

from dataclasses import dataclass

from studio.core.contract import Contract, Layer
from studio.core.registry import CONTRACTS
from studio.core.run_outcome import RunOutcome
from studio.ui.result_diff_sides import DiffSides, chain_sides

REQUEST, AMENDMENT, TIMELINE, LAYERS = "request", "amendment", "timeline", "layers"


@dataclass(frozen=True)
class ResultWords:
    """What the Result tab calls a run's result (when it succeeded) and its input."""

    result: str
    given: str
    unrecorded: str = "No decision record: the run ended before the hook was called."
    """What the Decision record tab says for a run without one."""


_WORDS = {
    REQUEST: ResultWords("The transformed request", "The original request"),
    AMENDMENT: ResultWords(
        "The amendment the hook returned", "The step context (what the hook was given)"
    ),
    TIMELINE: ResultWords(
        "The chain run: final request, response, timeline and model calls",
        "The request context before the chain",
    ),
    LAYERS: ResultWords(
        "The decisions, layer by layer, and what each produced",
        "The context of the first layer (what its hook was given)",
        "No decision record: only the decisions of sealed requests are journaled, and this run "
        "sealed none. The Layers tab shows each decision.",
    ),
}
_GENERIC_WORDS = ResultWords("What the hook returned", "What the hook was given")


def contract_of(name: str) -> Contract | None:
    return CONTRACTS.get(name)


def contract_label(name: str) -> str:
    """What users call the contract (``pre-LLM hook``); its name when it is not registered."""
    contract = contract_of(name)
    return contract.label if contract is not None else name


def contract_title(name: str) -> str:
    contract = contract_of(name)
    return contract.title if contract is not None else name


def result_view(outcome: RunOutcome) -> str | None:
    """The view the run's contract names, when this window has it; None: the generic tabs."""
    contract = contract_of(outcome.contract)
    view = contract.result_view if contract is not None else None
    return view if view in _WORDS else None


def result_words(outcome: RunOutcome) -> ResultWords:
    view = result_view(outcome)
    return _WORDS[view] if view is not None else _GENERIC_WORDS


def diff_sides(outcome: RunOutcome) -> DiffSides | None:
    """What the Diff tab compares for a run that has a request to diff, else None."""
    view = result_view(outcome)
    if view == REQUEST:
        return DiffSides(outcome.input, outcome.result)
    if view == TIMELINE and isinstance(outcome.result, dict):
        final = outcome.result.get("request")
        return chain_sides(outcome.input, final) if final is not None else None
    return None


def hook_text(outcome: RunOutcome) -> str | None:
    """The hook that ran (``lib/policy.py:transform``), what ran when it was not one hook
    (``chain of 4 hooks``), and the hook that failed; None when no hook is known."""
    if outcome.hook is not None:
        return f"{outcome.hook.source}:{outcome.hook.function}"
    contract = contract_of(outcome.contract)
    subject = contract.subject(outcome) if contract is not None else None
    failed = outcome.turn_error.hook if outcome.turn_error is not None else None
    if failed is None:
        return subject
    where = f" at {failed.chain}[{failed.position}]" if failed.chain is not None else ""
    text = f"{failed.source}:{failed.function}{where}"
    return f"{subject}, {text}" if subject else text


def layers(outcome: RunOutcome) -> list[Layer]:
    """The decisions of a run of a contract with the ``layers`` view; [] for any other."""
    contract = contract_of(outcome.contract)
    if contract is None or result_view(outcome) != LAYERS:
        return []
    return contract.layers(outcome)
