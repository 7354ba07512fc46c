"""A chain sample: the pre-model context the first pre hook receives and the model's scripted
responses, in call order (spec/pleach.md §5). :func:`parse_chain_sample` returns the typed
sample, or every finding with its JSON path when there is an error."""

from __future__ import annotations

from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field

from studio.core.chain.config import (
    parse_findings,
    shown,
    suggestion,
)
from studio.core.chain.shapes import (
    validate_post_result,
    validate_pre_context,
)
from studio.core.findings import (
    Finding,
    PathPart,
    dotted,
    errors,
    warnings,
)
from studio.core.json.values import type_name

SAMPLE_KEYS: Final = ("contract", "context", "responses", "name", "description", "expect")
CHAIN_CONTRACT: Final = "chain"
STUDIO_SCRIPTED_RESPONSES: Final = "pleach.studio.scripted-responses"
RULE_CHAIN_SAMPLE: Final = "pleach.chain-sample"


class ChainSample(BaseModel):
    """A chain sample: the pre-model context and the scripted model responses, in call order."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    context: dict[str, Any]
    responses: tuple[dict[str, Any], ...] = ()
    name: str | None = None
    description: str | None = None
    warnings: tuple[Finding, ...] = Field(default=(), exclude=True)


def _rebased(finding: Finding, strip: int, prefix: tuple[PathPart, ...]) -> Finding:
    """The finding with its first ``strip`` path parts replaced by ``prefix``; a message that
    starts by naming the old path names the new one."""
    old = finding.path
    new = (*prefix, *old[strip:])
    message = finding.message
    for k in range(len(old), 0, -1):
        name = dotted(old[:k])
        if name and message.startswith(name):
            message = dotted((*prefix, *old[strip:k])) + message[len(name) :]
            break
    return Finding(new, message, finding.rule, finding.severity)


def validate_chain_sample(value: Any, *, base: tuple[PathPart, ...] = ()) -> list[Finding]:
    """Every finding on a chain sample, errors first; paths start with ``base``."""
    return parse_findings(parse_chain_sample(value, base=base))


def parse_chain_sample(
    value: Any, *, base: tuple[PathPart, ...] = ()
) -> ChainSample | list[Finding]:
    """The typed chain sample (its warnings in ``warnings``), or every finding (errors first,
    then warnings) when there is an error. The context is checked as a pre-model hook context
    and each response as a message that stands in for the model's answer."""
    found: list[Finding] = []
    root = dotted(base) or "the chain sample"
    if not isinstance(value, dict):
        return [
            Finding(
                base,
                f"{root} must be an object {{contract, context, responses}}, "
                f"got {type_name(value)}",
                RULE_CHAIN_SAMPLE,
            )
        ]
    for key in value:
        if key not in SAMPLE_KEYS:
            found.append(
                Finding(
                    (*base, str(key)),
                    f"{root} has key {shown(key)}{suggestion(str(key), SAMPLE_KEYS)} that a chain "
                    "sample does not define; it is ignored",
                    RULE_CHAIN_SAMPLE,
                    "warning",
                )
            )
    contract = value.get("contract")
    if contract != CHAIN_CONTRACT:
        at = (*base, "contract")
        got = "nothing" if "contract" not in value else shown(contract)
        found.append(Finding(at, f'{dotted(at)} must be "chain", got {got}', RULE_CHAIN_SAMPLE))
    for key in ("name", "description"):
        if value.get(key) is not None and not isinstance(value[key], str):
            at = (*base, key)
            found.append(
                Finding(
                    at,
                    f"{dotted(at)} must be a string, got {type_name(value[key])}",
                    RULE_CHAIN_SAMPLE,
                )
            )
    if "context" not in value:
        at = (*base, "context")
        found.append(
            Finding(
                at,
                f"{dotted(at)} is required (the pre-model hook context: messages, model, "
                "modelProfile, tools, systemPrompt, state)",
                RULE_CHAIN_SAMPLE,
            )
        )
    else:
        context_at = (*base, "context")
        for finding in validate_pre_context(value["context"]):
            found.append(_rebased(finding, 0, context_at))
    responses = value.get("responses")
    responses_at = (*base, "responses")
    if "responses" not in value:
        found.append(
            Finding(
                responses_at,
                f"{dotted(responses_at)} is required (the scripted model responses, one per "
                "model call)",
                RULE_CHAIN_SAMPLE,
            )
        )
    elif not isinstance(responses, list):
        found.append(
            Finding(
                responses_at,
                f"{dotted(responses_at)} must be an array of messages, got {type_name(responses)}",
                RULE_CHAIN_SAMPLE,
            )
        )
    else:
        if not responses:
            found.append(
                Finding(
                    responses_at,
                    f"{dotted(responses_at)} is empty; a run that calls the model fails with "
                    "sample_invalid",
                    STUDIO_SCRIPTED_RESPONSES,
                    "warning",
                )
            )
        for i, response in enumerate(responses):
            if not isinstance(response, dict):
                found.append(
                    Finding(
                        (*responses_at, i),
                        f"{dotted((*responses_at, i))} must be a message object, "
                        f"got {type_name(response)}",
                        STUDIO_SCRIPTED_RESPONSES,
                    )
                )
                continue
            for finding in validate_post_result({"response": response}):
                found.append(_rebased(finding, 1, (*responses_at, i)))
    ordered = errors(found) + warnings(found)
    if errors(found):
        return ordered
    assert isinstance(responses, list)  # anything else is an error above
    return ChainSample(
        context=value["context"],
        responses=tuple(responses),
        name=value.get("name"),
        description=value.get("description"),
        warnings=tuple(ordered),
    )


# --------------------------------------------------------------------------------------------
# Running
