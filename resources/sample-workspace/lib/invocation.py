"""Invocation preparation: decides each child's baseline once, before the child runs."""


def prepare_invocation(ctx):
    kind = ctx.composition["kind"]
    if kind == "pipeline":
        # The review stage writes with the review model and its rubric; other stages inherit.
        if ctx.step["name"] == "review":
            return {
                "model": "review-model",
                "use": {"add": [{"id": "review-rubric", "kind": "context"}]},
            }
        return None
    if kind == "parallel":
        # Each branch works with its own tool only; lookupOrder is the invocation's own tool.
        return {
            "activeTools": ["lookupOrder"]
            if ctx.branch["name"] == "billing"
            else ["searchKnowledge"]
        }
    if kind == "consensus":
        # Each candidate answers with another model, as the routing policy lists them.
        policy = ctx.resources.read("working-state:routing-policy") or {}
        models = policy.get("candidateModels") or []
        index = ctx.candidate["index"]
        if index >= len(models):
            raise ValueError(f"the routing policy names no model for candidate {index}")
        return {"model": models[index]}
    # A swarm hop from triage: triage has already decided about refunds, so the next agent
    # does without the refund desk.
    if kind == "swarm" and ctx.hop.get("fromAgent") == "triage":
        return {"use": {"remove": [{"id": "refund-desk"}]}}
    return None


def refund_step(ctx):
    """A step hook for the child: once an order has been looked up, offer the refund tool."""
    looked_up = any(c["name"] == "lookupOrder" and "result" in c for c in ctx.toolHistory)
    return {"activeTools": ["lookupOrder", "issueRefund"]} if looked_up else None
