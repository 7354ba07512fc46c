"""Step preparation: escalate to the review model when the support state says so."""


def prepare_step(ctx):
    control = ctx.resources.read("working-state:support-control") or {}
    if control.get("escalated") or ctx.reason == "validation-retry":
        return {
            "model": "review-model",
            "use": {"add": [{"id": "review-checklist", "kind": "context"}]},
            "inputBudget": {"max": 24000},
        }
    if len(ctx.toolHistory) >= 3:
        return {"activeTools": ["searchKnowledge"]}
    return None
