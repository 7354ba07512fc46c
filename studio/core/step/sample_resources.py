"""The declared resources of a step-preparation sample: the only resources a hook can read, each
with its value or the way reading it fails."""

from __future__ import annotations

import copy
import re
from typing import Any, Final, Literal, get_args

from pydantic import BaseModel, ConfigDict

from studio.core.findings import Finding
from studio.core.json.canonical import NotCanonicalizable
from studio.core.step.decision_record import resource_read
from studio.core.step.sample_findings import (
    Path,
    json_findings,
    key_part,
    key_text,
    must_be,
    sample_finding,
)

ResourceFailure = Literal["unresolved", "storage-unavailable", "unauthorized"]
RESOURCE_FAILURES: Final[tuple[str, ...]] = get_args(ResourceFailure)

# The identities the reference gives its readable resources.
IDENTITY_PATTERN: Final = re.compile(r"^(?:working-state:.+|blackboard:.+|memory:[^:]+:.+)$", re.S)


class DeclaredResource(BaseModel):
    """A resource of the declared graph: its value, or the way reading it fails."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    identity: str
    value: Any = None
    failure: ResourceFailure | None = None

    @property
    def readable(self) -> bool:
        return self.failure is None

    def to_json(self) -> dict[str, Any]:
        if self.failure is not None:
            return {"identity": self.identity, "failure": self.failure}
        return {"identity": self.identity, "value": copy.deepcopy(self.value)}


def declared_resource(
    resources: tuple[DeclaredResource, ...], identity: str
) -> DeclaredResource | None:
    """The declared resource with ``identity``; ``None`` when reading it is ``undeclared``."""
    for declared in resources:
        if declared.identity == identity:
            return declared
    return None


def parse_resources(value: Any, findings: list[Finding]) -> list[DeclaredResource]:
    if not isinstance(value, list):
        findings.append(must_be(("resources",), "an array of declared resources", value))
        return []
    out: list[DeclaredResource] = []
    seen: dict[str, int] = {}
    for i, entry in enumerate(value):
        at: Path = ("resources", i)
        if not isinstance(entry, dict):
            findings.append(
                must_be(at, "an object with an identity and a value or a failure", entry)
            )
            continue
        start = len(findings)
        for key in entry:
            if key not in ("identity", "value", "failure"):
                findings.append(
                    sample_finding(
                        (*at, key_part(key)),
                        f"unknown resource field {key_text(key)}: a declared resource has an "
                        "identity and either a value or a failure",
                    )
                )
        identity = entry.get("identity")
        if not isinstance(identity, str) or not IDENTITY_PATTERN.match(identity):
            findings.append(
                must_be(
                    (*at, "identity"),
                    "a resource identity (working-state:<id>, blackboard:<id> or "
                    "memory:<memoryId>:<blockId>)",
                    identity,
                )
            )
        elif identity in seen:
            findings.append(
                sample_finding(
                    (*at, "identity"),
                    f"{identity!r} is already declared at resources[{seen[identity]}]: each "
                    "resource is declared once",
                )
            )
        else:
            seen[identity] = i
        has_value, has_failure = "value" in entry, "failure" in entry
        if has_value == has_failure:
            findings.append(
                sample_finding(
                    at,
                    f"resources[{i}] must have either a value (null included) or a failure, "
                    f"not {'both' if has_value else 'neither'}",
                )
            )
        elif has_failure and entry["failure"] not in RESOURCE_FAILURES:
            hint = (
                ' ("undeclared" is what reading a resource missing from this list gives)'
                if entry["failure"] == "undeclared"
                else ""
            )
            findings.append(
                must_be(
                    (*at, "failure"),
                    f"one of {', '.join(RESOURCE_FAILURES)}{hint}",
                    entry["failure"],
                )
            )
        elif has_value and isinstance(identity, str):
            before = len(findings)
            json_findings((*at, "value"), entry["value"], findings)
            if len(findings) == before:
                try:
                    resource_read(identity, entry["value"])
                except (NotCanonicalizable, RecursionError) as exc:
                    findings.append(
                        sample_finding(
                            (*at, "value"), f"resources[{i}].value has no canonical JSON: {exc}"
                        )
                    )
        if len(findings) == start:
            assert isinstance(identity, str)  # anything else is a finding above
            out.append(
                DeclaredResource(
                    identity=identity,
                    value=entry.get("value"),
                    failure=entry.get("failure"),
                )
            )
    return out
