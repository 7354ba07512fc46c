"""The structured view of a step-preparation sample: the baseline (contributors, tools, model),
the step with its messages, and the resources the hook may read."""

from __future__ import annotations

from functools import partial
from typing import Any

from studio.core.json.outline import Entry, at, list_entry, message_entries, plural, short


def _contributor_entries(contributors: Any, where: str) -> list[Entry]:
    if not isinstance(contributors, list):
        return []
    out = []
    for i, item in enumerate(contributors):
        here = at(where, i)
        if isinstance(item, str):
            out.append(Entry(item, "context", here))
            continue
        if not isinstance(item, dict):
            out.append(Entry(short(item, 40), "", here))
            continue
        bits = [str(item.get("kind", "context"))]
        if item.get("protected"):
            bits.append("protected")
        tools = item.get("tools")
        if isinstance(tools, list) and tools:
            bits.append("tools " + ", ".join(map(str, tools[:5])))
        children = item.get("children")
        out.append(
            Entry(
                str(item.get("id")),
                " · ".join(bits),
                here,
                partial(_contributor_entries, children, at(here, "children"))
                if isinstance(children, list) and children
                else None,
            )
        )
    return out


def _names(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(map(str, value[:12])) + (", …" if len(value) > 12 else "") or "none"
    return short(value)


def _baseline_entry(document: dict[str, Any]) -> Entry:
    baseline = document.get("baseline")
    if not isinstance(baseline, dict):
        return Entry("Baseline", short(baseline) if "baseline" in document else "missing")
    contributors = baseline.get("contributors")

    def baseline_entries() -> list[Entry]:
        rows = [
            list_entry(
                "Contributors",
                contributors,
                "/baseline/contributors",
                "contributor",
                lambda: _contributor_entries(contributors, "/baseline/contributors"),
            ),
            Entry("Tools", _names(baseline.get("tools")), "/baseline/tools"),
            Entry("Active tools", _names(baseline.get("activeTools")), "/baseline/activeTools"),
            Entry("Model", short(baseline.get("model")), "/baseline/model"),
        ]
        if "inputBudget" in baseline:
            rows.append(
                Entry("Input budget", short(baseline["inputBudget"]), "/baseline/inputBudget")
            )
        return rows

    count = len(contributors) if isinstance(contributors, list) else 0
    return Entry(
        "Baseline",
        f"{plural(count, 'contributor')}, tools {_names(baseline.get('tools'))}",
        "/baseline",
        baseline_entries,
    )


def _step_entry(document: dict[str, Any]) -> Entry:
    step = document.get("step")
    if not isinstance(step, dict):
        return Entry("Step", short(step) if "step" in document else "missing")
    messages = step.get("messages", [])

    def step_entries() -> list[Entry]:
        rows = [
            Entry("Index", short(step.get("index")), "/step/index"),
            Entry("Reason", short(step.get("reason")), "/step/reason"),
            Entry("Input", short(step.get("input", {})), "/step/input"),
            list_entry(
                "Messages",
                messages,
                "/step/messages",
                "message",
                lambda: message_entries(messages, "/step/messages"),
            ),
        ]
        rows.append(Entry("Stats", "given" if "stats" in step else "derived from the index"))
        return rows

    return Entry(
        "Step",
        f"index {step.get('index')} · {step.get('reason')} · "
        f"{plural(len(messages) if isinstance(messages, list) else 0, 'message')}",
        "/step",
        step_entries,
    )


def _resource_entries(resources: list[Any]) -> list[Entry]:
    rows = []
    for i, item in enumerate(resources):
        here = at("/resources", i)
        if isinstance(item, dict):
            detail = f"fails: {item['failure']}" if "failure" in item else short(item.get("value"))
            rows.append(Entry(str(item.get("identity")), detail, here))
        else:
            rows.append(Entry(short(item, 40), "", here))
    return rows


def step_outline(document: dict[str, Any]) -> list[Entry]:
    out = []
    if "description" in document:
        out.append(Entry("Description", short(document["description"]), "/description"))
    out.append(_baseline_entry(document))
    out.append(_step_entry(document))
    resources = document.get("resources", [])
    if isinstance(resources, list):
        out.append(
            Entry(
                "Resources",
                plural(len(resources), "resource"),
                "/resources",
                (lambda: _resource_entries(resources)) if resources else None,
            )
        )
    return out
