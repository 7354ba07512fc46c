"""An invocation-preparation sample (spec/crux.md §9), parsed with every finding.

The document::

    {"contract": "invocation",
     "description": "...",                                          (optional)
     "baseline": {...},              the agent's baseline (studio.core.step.baseline)
     "target": {"id": "support-responder"},                         (operation is "language")
     "composition": {"id": "triage", "kind": "pipeline",
                     "step": {"name": "draft", "index": 1}},        the child's position:
                         pipeline  step {name, index}      parallel  branch {name, index}
                         consensus candidate {index}       swarm     hop {index, path,
                                                                         fromAgent?, reason?}
     "invocation": {"tools": ["lookupOrder"]},                      (optional) its own tools
     "context": <any JSON>,                   pipeline and parallel (optional, default {})
     "input": <any JSON>,                     consensus and swarm (optional, default {})
     "stats": {"at": "...", "cursor": 0, "run": Scope, "root": Scope},   (optional)
     "resources": [...],                      as a step sample declares them (optional)
     "prepareStep": "lib/step.ts:prepareStep",                      (optional)
     "steps": [{"index": 0, "reason": "initial", ...}, ...]}        (optional)

``steps`` are the child's provider calls, each written as a step sample's ``step``; with them a
run is layered: the invocation hook's accepted amendment becomes the child baseline, and the
step hook (``prepareStep``, or the studio's ``step.source``) prepares each step on top of it.
Step ``i`` must have index ``i``.

Without ``stats`` the invocation is the run's first boundary: cursor 0, no model call started,
token coverage ``none`` (so no token fields) and no ``at``.
"""

from __future__ import annotations

import copy
from typing import Any, Final, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from studio.core.findings import Finding, PathPart, errors
from studio.core.json.values import type_name
from studio.core.step.baseline import Contributor, StepBaseline
from studio.core.step.sample import StepSample, parse_sample_head, parse_step_sample
from studio.core.step.sample_findings import (
    SAMPLE_RULE as STEP_SAMPLE_RULE,
)
from studio.core.step.sample_findings import (
    Path,
    json_findings,
    key_part,
    key_text,
    must_be,
    sample_finding,
)
from studio.core.step.sample_resources import (
    DeclaredResource,
    declared_resource,
    parse_resources,
)
from studio.core.step.sample_stats import (
    ModelCallStats,
    ScopeStats,
    UsageStats,
    parse_count,
    parse_scope,
)

CONTRACT: Final = "invocation"
SAMPLE_RULE: Final = "invocation-sample"

CompositionKind = Literal["pipeline", "parallel", "consensus", "swarm"]
COMPOSITION_KINDS: Final[tuple[str, ...]] = get_args(CompositionKind)
# The key of the child's position, and whether the child gets the composition's context or its
# input, for each kind (spec/crux.md §9).
POSITION_KEYS: Final[dict[str, str]] = {
    "pipeline": "step",
    "parallel": "branch",
    "consensus": "candidate",
    "swarm": "hop",
}
PAYLOAD_KEYS: Final[dict[str, str]] = {
    "pipeline": "context",
    "parallel": "context",
    "consensus": "input",
    "swarm": "input",
}

SAMPLE_KEYS: Final = (
    "contract",
    "description",
    "baseline",
    "target",
    "composition",
    "invocation",
    "context",
    "input",
    "stats",
    "resources",
    "prepareStep",
    "steps",
    "expect",
)
_STATS_KEYS: Final = ("at", "cursor", "run", "root")
_HOP_KEYS: Final = ("index", "path", "fromAgent", "reason")


class InvocationStats(BaseModel):
    """``{at, cursor, run, root}``: committed activity before the child; no attempt, no step."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    cursor: int
    run: ScopeStats
    root: ScopeStats
    at: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {} if self.at is None else {"at": self.at}
        out.update({"cursor": self.cursor, "run": self.run.to_json(), "root": self.root.to_json()})
        return out


class InvocationSample(BaseModel):
    """Everything an invocation-preparation run needs, and the child's steps when layered."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    baseline: StepBaseline
    target_id: str
    composition_id: str
    kind: CompositionKind
    position: dict[str, Any]
    payload: Any = Field(default_factory=dict)
    invocation_tools: tuple[str, ...] = ()
    stats: InvocationStats
    resources: tuple[DeclaredResource, ...] = ()
    step_hook: str | None = None
    steps: tuple[StepSample, ...] = ()
    description: str | None = None
    warnings: tuple[Finding, ...] = ()

    def merged_baseline(self) -> StepBaseline:
        """The baseline the invocation's amendment is judged against: the agent's, with the
        invocation's own tools declared beside the agent's."""
        return self.baseline.model_copy(
            update={"tools": (*self.baseline.tools, *self.invocation_tools)}
        )

    def resource(self, identity: str) -> DeclaredResource | None:
        """The declared resource with ``identity``; ``None`` when reading it is ``undeclared``."""
        return declared_resource(self.resources, identity)


# ---------------------------------------------------------------------------------------------
# What the hook sees


def invocation_context(sample: InvocationSample) -> dict[str, Any]:
    """The JSON part of the frozen context (everything but ``resources`` and ``signal``)."""
    return {
        "operation": "language",
        "target": {"id": sample.target_id, "operation": "language"},
        "composition": {"id": sample.composition_id, "kind": sample.kind},
        "stats": sample.stats.to_json(),
        POSITION_KEYS[sample.kind]: copy.deepcopy(sample.position),
        PAYLOAD_KEYS[sample.kind]: copy.deepcopy(sample.payload),
    }


def invocation_worker_payload(sample: InvocationSample) -> dict[str, Any]:
    """What the engine sends the worker: the context and the declared resources, as for a step
    hook (``studio.engine.hook_api``)."""
    return {
        "context": invocation_context(sample),
        "resources": [declared.to_json() for declared in sample.resources],
    }


def first_boundary_stats() -> InvocationStats:
    scope = ScopeStats(usage=UsageStats(tokens="none", cost="none"), model_calls=ModelCallStats())
    return InvocationStats(cursor=0, run=scope, root=scope)


# ---------------------------------------------------------------------------------------------
# Parsing


def parse_invocation_sample(value: Any) -> InvocationSample | list[Finding]:
    """The sample, or every finding (errors, then warnings) that stops it being one.

    Paths start at the sample's root. Never raises on any Python value.
    """
    if not isinstance(value, dict):
        return [_finding((), f"an invocation sample must be an object, got {type_name(value)}")]
    findings: list[Finding] = []
    description, baseline = parse_sample_head(
        value,
        SAMPLE_KEYS,
        CONTRACT,
        findings,
        name="invocation sample",
        sample="an invocation-preparation sample",
    )

    target_id = _target(value, findings)
    composition = _composition(value, findings)
    tools = parse_invocation_tools(value.get("invocation"), baseline, findings)
    payload = _payload(value, composition[1], findings)
    stats = _stats(value["stats"], findings) if "stats" in value else first_boundary_stats()
    resources = parse_resources(value.get("resources", []), findings)
    step_hook = value.get("prepareStep")
    if "prepareStep" in value and not (isinstance(step_hook, str) and step_hook.strip()):
        findings.append(must_be(("prepareStep",), "a hook source (path[:function])", step_hook))
    steps = _steps(value, findings)

    comp_id, kind, position = composition
    findings = [_own_rule(f) for f in findings]
    failed = errors(findings)
    if failed or None in (baseline, target_id, comp_id, kind, position, stats):
        return failed + [f for f in findings if f.severity == "warning"]
    assert baseline is not None and target_id is not None and stats is not None
    assert comp_id is not None and kind is not None and position is not None
    return InvocationSample(
        baseline=baseline,
        target_id=target_id,
        composition_id=comp_id,
        kind=kind,  # type: ignore[arg-type]
        position=position,
        payload=payload,
        invocation_tools=tuple(tools),
        stats=stats,
        resources=tuple(resources),
        step_hook=step_hook.strip() if isinstance(step_hook, str) else None,
        steps=tuple(steps),
        description=description,
        warnings=tuple(findings),
    )


def _target(value: dict[str, Any], findings: list[Finding]) -> str | None:
    if "target" not in value:
        findings.append(_finding(("target",), "the sample field 'target' is required"))
        return None
    target = value["target"]
    if not isinstance(target, dict):
        findings.append(must_be(("target",), "an object with the child agent's id", target))
        return None
    for key in target:
        if key not in ("id", "operation"):
            findings.append(
                _finding(("target", key_part(key)), f"unknown target field {key_text(key)}")
            )
    if "operation" in target and target["operation"] != "language":
        findings.append(must_be(("target", "operation"), '"language"', target["operation"]))
    target_id = target.get("id")
    if not (isinstance(target_id, str) and target_id):
        findings.append(must_be(("target", "id"), "a non-empty string", target_id))
        return None
    return target_id


def _composition(
    value: dict[str, Any], findings: list[Finding]
) -> tuple[str | None, str | None, dict[str, Any] | None]:
    at: Path = ("composition",)
    if "composition" not in value:
        findings.append(_finding(at, "the sample field 'composition' is required"))
        return None, None, None
    comp = value["composition"]
    if not isinstance(comp, dict):
        findings.append(must_be(at, "an object with id, kind and the child's position", comp))
        return None, None, None
    comp_id = comp.get("id")
    if not (isinstance(comp_id, str) and comp_id):
        findings.append(must_be((*at, "id"), "a non-empty string", comp_id))
        comp_id = None
    kind = comp.get("kind")
    if kind not in COMPOSITION_KINDS:
        findings.append(must_be((*at, "kind"), f"one of {', '.join(COMPOSITION_KINDS)}", kind))
        for key in comp:
            if key not in ("id", "kind", *POSITION_KEYS.values()):
                findings.append(
                    _finding((*at, key_part(key)), f"unknown composition field {key_text(key)}")
                )
        return comp_id, None, None
    wanted = POSITION_KEYS[kind]
    for key in comp:
        if key not in ("id", "kind", wanted):
            findings.append(
                _finding(
                    (*at, key_part(key)),
                    f"a {kind} child's position is composition.{wanted}, "
                    f"not composition.{key_text(key).strip(chr(39))}",
                )
            )
    if wanted not in comp:
        findings.append(
            _finding((*at, wanted), f"composition.{wanted} is required for a {kind} child")
        )
        return comp_id, kind, None
    return comp_id, kind, _position(kind, comp[wanted], (*at, wanted), findings)


def _position(kind: str, value: Any, at: Path, findings: list[Finding]) -> dict[str, Any] | None:
    if not isinstance(value, dict):
        findings.append(must_be(at, "an object", value))
        return None
    start = len(findings)
    allowed = {"pipeline": ("name", "index"), "parallel": ("name", "index")}.get(
        kind, ("index",) if kind == "consensus" else _HOP_KEYS
    )
    for key in value:
        if key not in allowed:
            findings.append(
                _finding((*at, key_part(key)), f"unknown {at[-1]} field {key_text(key)}")
            )
    index = parse_count(value, "index", at, findings)
    if "index" not in value:
        findings.append(_finding((*at, "index"), f"composition.{at[-1]}.index is required"))
    if "name" in allowed:
        name = value.get("name")
        if not (isinstance(name, str) and name):
            findings.append(must_be((*at, "name"), "a non-empty string", name))
    if kind == "swarm":
        path = value.get("path")
        if not (isinstance(path, list) and all(isinstance(p, str) and p for p in path)):
            findings.append(must_be((*at, "path"), "an array of agent ids", path))
        for key in ("fromAgent", "reason"):
            if key in value and not isinstance(value[key], str):
                findings.append(must_be((*at, key), "a string", value[key]))
    if len(findings) > start or index is None:
        return None
    return {key: copy.deepcopy(value[key]) for key in allowed if key in value}


def parse_invocation_tools(
    value: Any, baseline: StepBaseline | None, findings: list[Finding]
) -> list[str]:
    if value is None:
        return []
    at: Path = ("invocation",)
    if not isinstance(value, dict):
        findings.append(must_be(at, "an object with the invocation's tools", value))
        return []
    for key in value:
        if key != "tools":
            findings.append(
                _finding((*at, key_part(key)), f"unknown invocation field {key_text(key)}")
            )
    raw = value.get("tools", [])
    if not isinstance(raw, list):
        findings.append(must_be((*at, "tools"), "an array of tool names", raw))
        return []
    taken = set(baseline.graph_tools()) if baseline is not None else set()
    names: list[str] = []
    for i, name in enumerate(raw):
        if not (isinstance(name, str) and name):
            findings.append(must_be((*at, "tools", i), "a non-empty tool name", name))
        elif name in taken or name in names:
            findings.append(
                _finding(
                    (*at, "tools", i),
                    f"invocation tool {name!r} is already a tool of the agent or of this "
                    "invocation: a tool name may have only one owner",
                )
            )
        else:
            names.append(name)
    return names


def _payload(value: dict[str, Any], kind: str | None, findings: list[Finding]) -> Any:
    wanted = PAYLOAD_KEYS.get(kind or "")
    for key in ("context", "input"):
        if key in value and wanted is not None and key != wanted:
            findings.append(
                _finding(
                    (key,),
                    f"a {kind} child gets the composition's {wanted}, not {key}: write "
                    f"'{wanted}' instead",
                )
            )
    if wanted is None or wanted not in value:
        return {}
    json_findings((wanted,), value[wanted], findings)
    return value[wanted]


def _stats(value: Any, findings: list[Finding]) -> InvocationStats | None:
    at: Path = ("stats",)
    if not isinstance(value, dict):
        findings.append(must_be(at, "an object with at, cursor, run and root", value))
        return None
    start = len(findings)
    for key in value:
        if key not in _STATS_KEYS:
            findings.append(
                _finding(
                    (*at, key_part(key)),
                    f"unknown stats field {key_text(key)} (an invocation has no attempt and "
                    "no step index)"
                    if key in ("attempt", "stepIndex")
                    else f"unknown stats field {key_text(key)}",
                )
            )
    for key in ("cursor", "run", "root"):
        if key not in value:
            findings.append(_finding((*at, key), f"stats.{key} is required"))
    moment = value.get("at")
    if "at" in value and not isinstance(moment, str):
        findings.append(must_be((*at, "at"), "a timestamp string", moment))
    cursor = parse_count(value, "cursor", at, findings)
    run = parse_scope(value["run"], (*at, "run"), findings) if "run" in value else None
    root = parse_scope(value["root"], (*at, "root"), findings) if "root" in value else None
    if errors(findings[start:]) or cursor is None or run is None or root is None:
        return None
    return InvocationStats(
        cursor=cursor, run=run, root=root, at=moment if isinstance(moment, str) else None
    )


def _steps(value: dict[str, Any], findings: list[Finding]) -> list[StepSample]:
    """The child's steps, each parsed as a step sample would be (the baseline is the agent's
    until the invocation hook has produced the child's)."""
    raw = value.get("steps")
    if raw is None:
        return []
    if not isinstance(raw, list):
        findings.append(must_be(("steps",), "an array of steps", raw))
        return []
    baseline = value.get("baseline")
    parsed_steps: list[StepSample] = []
    for i, step in enumerate(raw):
        document = {"contract": "step", "baseline": baseline, "step": step}
        parsed = parse_step_sample(document)
        if isinstance(parsed, list):
            findings.extend(
                Finding(("steps", i, *f.path[1:]), f.message, f.rule, f.severity)
                for f in parsed
                if f.path[:1] == ("step",)
            )
            continue
        if parsed.index != i:
            findings.append(
                _finding(
                    ("steps", i, "index"),
                    f"steps[{i}].index must be {i}: the child's steps are listed in order, "
                    f"got {parsed.index}",
                )
            )
            continue
        parsed_steps.append(parsed)
    return parsed_steps


def child_step(sample: InvocationSample, step: StepSample, child: StepBaseline) -> StepSample:
    """A step of the child on top of the child baseline, reading the sample's resources."""
    return step.model_copy(update={"baseline": child, "resources": sample.resources})


def child_baseline(
    contributors: list[Contributor],
    tools: list[str],
    active_tools: list[Any] | None,
    model: Any,
    budget: dict[str, Any] | None,
) -> StepBaseline:
    """The child baseline an accepted invocation amendment produced: ``tools`` are the graph's
    tools in resolution order; those a contributor owns stay with it."""
    owned = {name for c in contributors for name, _ in c.owned_tools()}
    limits = {k: budget[k] for k in ("optimizeAt", "max") if budget and k in budget}
    return StepBaseline.model_validate(
        {
            "contributors": tuple(contributors),
            "tools": tuple(name for name in tools if name not in owned),
            "activeTools": None if active_tools is None else tuple(active_tools),
            "model": model,
            "inputBudget": limits if budget is not None else None,
        }
    )


def _finding(path: tuple[PathPart, ...], message: str) -> Finding:
    return Finding(path=path, message=message, rule=SAMPLE_RULE)


def _own_rule(finding: Finding) -> Finding:
    if finding.rule != STEP_SAMPLE_RULE:
        return finding
    return Finding(finding.path, finding.message, SAMPLE_RULE, finding.severity)


__all__ = [
    "COMPOSITION_KINDS",
    "InvocationSample",
    "InvocationStats",
    "child_baseline",
    "child_step",
    "invocation_context",
    "invocation_worker_payload",
    "parse_invocation_sample",
    "sample_finding",
]
