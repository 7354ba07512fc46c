"""A stored run's sample: kept in its payload, so that the run can be made again on what it was
given, and its input opened as a sample of its own.

The payload keeps the sample document without the part that is the run's input (the pre-LLM
request, the chain context: the very object the payload keeps as ``input``), and puts it back
when read. A run recorded before samples were kept, or one whose payload was cleared, gives what
can still be known, or says why nothing can.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from studio.core.records.store import StoredRecord

SAMPLE_KEY = "sample"
"""Where a payload keeps the run's sample document."""
_INPUT_KEYS = ("request", "context")  # the member of a sample that a run's input is
_WHOLE = ""


def sample_payload(run_input: Any, document: dict[str, Any] | None) -> dict[str, Any] | None:
    """What a payload keeps of ``document``, the sample a run with ``run_input`` was made on:
    the document less its member that *is* the input (no second copy of a large request)."""
    if document is None:
        return None
    if document is run_input:
        return {"input_key": _WHOLE, "document": None}
    for key in _INPUT_KEYS:
        if key in document and document[key] is run_input:
            return {"input_key": key, "document": {k: v for k, v in document.items() if k != key}}
    return {"input_key": None, "document": document}


def _kept_document(payload: dict[str, Any]) -> dict[str, Any] | None:
    kept = payload.get(SAMPLE_KEY)
    if not isinstance(kept, dict):
        return None
    key = kept.get("input_key")
    run_input = payload.get("input")
    if key == _WHOLE:
        return run_input if isinstance(run_input, dict) else None
    document = kept.get("document")
    if not isinstance(document, dict):
        return None
    if isinstance(key, str):
        return {key: run_input, **document}
    return document


@dataclass(frozen=True)
class RecordSample:
    """The sample a stored run can be made again on, or why there is none.

    ``exact``: the very document the run was made on; otherwise rebuilt from its input, and
    ``note`` says what is missing."""

    contract: str
    sample: str | None
    loop: str | None
    document: dict[str, Any] | None = None
    exact: bool = False
    note: str | None = None
    problem: str | None = None


def record_sample(record: StoredRecord) -> RecordSample:
    """The sample ``record`` was made on, as far as its payload still tells."""
    summary = record.summary
    contract, sample, loop = summary.contract, summary.sample, summary.loop

    def found(document: dict[str, Any], exact: bool, note: str | None = None) -> RecordSample:
        return RecordSample(contract, sample, loop, document, exact, note)

    def missing(problem: str) -> RecordSample:
        return RecordSample(contract, sample, loop, problem=problem)

    payload = record.payload
    if payload is None:
        return missing("the payload of this run was cleared: the input it was given is gone")
    kept = _kept_document(payload)
    if kept is not None:
        return found(_ordered(kept), True)
    run_input = payload.get("input")
    if not isinstance(run_input, dict):
        return missing("this run keeps no input (its sample could not be read)")
    if run_input.get("contract", "pre_llm") == contract and _is_whole_sample(run_input, contract):
        return found(run_input, True)  # a run stopped before its sample was parsed keeps it all
    if contract == "pre_llm":
        document: dict[str, Any] = {"loop": loop} if loop else {}
        document["request"] = run_input
        return found(
            document,
            False,
            "this run was recorded before the studio kept whole samples: the new sample has "
            "the request and the loop, not the rest of the sample (adf replies, expectations)",
        )
    if contract == "chain":
        return missing(
            "this run was recorded before the studio kept whole samples: it keeps the chain's "
            "context, not the model responses its sample scripted"
        )
    if contract == "step":
        return missing(
            "this run was recorded before the studio kept whole samples: it keeps the step's "
            "context, not the baseline and resources its sample gave"
        )
    return missing(
        "this run was recorded before the studio kept whole samples: it keeps what the hook "
        "was given, not the rest of its sample"
    )


def _is_whole_sample(value: dict[str, Any], contract: str) -> bool:
    if contract == "pre_llm":
        return "request" in value and "messages" not in value
    if contract == "chain":
        return "context" in value
    if contract == "step":
        return "baseline" in value or "step" in value
    return value.get("contract") == contract


def _ordered(document: dict[str, Any]) -> dict[str, Any]:
    """The document with its usual first keys first (contract, description)."""
    first: dict[str, Any] = {k: document[k] for k in ("contract", "description") if k in document}
    return {**first, **{k: v for k, v in document.items() if k not in first}}
