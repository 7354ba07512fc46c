"""The studio's own view of what an accepted amendment changed (spec/crux.md §6, last paragraph).

The decision record counts what the hook *asked for*; this is what really happened to
the request: the contributors added and removed, the final tools, active tools, model and budget.

The tools are listed as the reference resolves them: contributors' tools first, then the
baseline's declared tools, then the amendment's. Numbers are the doubles JavaScript holds
(``9007199254740993`` shows as ``9007199254740992``; one too large for a double as ``null``, as
``JSON.stringify`` writes Infinity).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from studio.core.step.amendment import AmendmentPlan, plan_amendment
from studio.core.step.baseline import StepBaseline
from studio.core.step.value_hash import as_double


class EffectiveStep(BaseModel):
    """The request a provider call would be sealed with after the amendment."""

    model_config = ConfigDict(defer_build=True, frozen=True, populate_by_name=True)

    contributors: tuple[str, ...]
    added_contributors: tuple[str, ...] = Field(alias="addedContributors")
    removed_contributors: tuple[str, ...] = Field(alias="removedContributors")
    tools: tuple[str, ...]
    active_tools: tuple[Any, ...] | None = Field(alias="activeTools")
    model: Any
    input_budget: dict[str, Any] | None = Field(alias="inputBudget")

    def to_json(self) -> dict[str, Any]:
        return {
            "contributors": list(self.contributors),
            "addedContributors": list(self.added_contributors),
            "removedContributors": list(self.removed_contributors),
            "tools": list(self.tools),
            "activeTools": None if self.active_tools is None else list(self.active_tools),
            "model": self.model,
            "inputBudget": None if self.input_budget is None else dict(self.input_budget),
        }


def effective_step(baseline: StepBaseline, amendment: Any) -> EffectiveStep | None:
    """The effective request for ``amendment`` (raw or snapshotted); ``None`` if it fails.

    Removing a contributor that is not in the graph changes nothing; adding one that is already
    there changes nothing either. An amendment's input budget replaces the baseline's whole,
    with every key it has.
    """
    return effective_from_plan(plan_amendment(baseline, amendment))


def effective_from_plan(plan: AmendmentPlan) -> EffectiveStep | None:
    if not plan.valid:
        return None
    return EffectiveStep(
        contributors=tuple(c.id for c in (*plan.kept, *plan.added)),
        added_contributors=tuple(c.id for c in plan.added),
        removed_contributors=tuple(c.id for c in plan.removed),
        tools=tuple(plan.tools),
        active_tools=None if plan.active_tools is None else tuple(plan.active_tools),
        model=_as_javascript_holds(plan.model),
        input_budget=_as_javascript_holds(plan.input_budget),
    )


def _as_javascript_holds(value: Any) -> Any:
    """``value`` with each number as the double JavaScript holds for it (see the module)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return as_double(value)
    if isinstance(value, dict):
        return {key: _as_javascript_holds(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_as_javascript_holds(item) for item in value]
    return value
