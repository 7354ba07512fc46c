"""Model hook chain: a policy suffix before the call, and a check on the answer after it."""


def policy_suffix(ctx):
    return {"systemPromptSuffix": "Refunds above 500 EUR need a second approver."}


def route_small_talk(ctx):
    last = ctx["messages"][-1]
    if isinstance(last.get("content"), str) and last["content"].strip().lower() in {"hi", "hello"}:
        greeting = {"role": "assistant", "content": "Hello! How can I help with your order?"}
        return {"shortCircuit": greeting}
    return None


def no_refund_promises(ctx):
    text = ctx["response"].get("content") or ""
    if isinstance(text, str) and "guarantee" in text.lower():
        return {"retry": {"feedback": "Do not guarantee refunds; say what you will check instead."}}
    return None
