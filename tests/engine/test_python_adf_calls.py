"""A Python pre-LLM hook's ``adf.sys_lambda`` calls are listed in the run's outcome as a
TypeScript hook's calls are: the method, its arguments, the gate, the reply or the error code."""

from __future__ import annotations

from tests.support.runners import LiveRunner
from tests.support.workspaces import make_workspace

RAG = "def enrich(args):\n    return {'topic': args['q'].upper()}\n"
HOOK = (
    "def transform(p):\n"
    "    got = adf.sys_lambda(source='lib/rag.py:enrich', args={'q': 'refund'})\n"
    "    return {**p['request'], 'system': got['topic']}\n"
    "def broken(p):\n"
    "    adf.sys_lambda(source='lib/rag.py:missing', args={})\n"
)


def live(tmp_path, allowed: bool) -> LiveRunner:
    workspace = make_workspace(tmp_path / "ws", sys_lambda=allowed)
    (workspace.root / "lib" / "rag.py").write_text(RAG)
    (workspace.root / "lib" / "hook.py").write_text(HOOK)
    return LiveRunner(workspace)


def test_a_python_hooks_nested_calls_are_listed(tmp_path):
    runner = live(tmp_path, allowed=True)
    try:
        ok = runner.run(hook="lib/hook.py:transform")
        failed = runner.run(hook="lib/hook.py:broken")
    finally:
        runner.close()
    assert ok.status == "ok", ok.turn_error
    (call,) = ok.calls
    assert (call.method, call.gate, call.answered_by, call.reply, call.error) == (
        "sys_lambda",
        "allowed",
        "lib/rag.py:enrich",
        {"topic": "REFUND"},
        None,
    )
    assert call.args == {"source": "lib/rag.py:enrich", "args": {"q": "refund"}}
    assert call.duration_ms > 0

    assert failed.status == "turn_error"
    (call,) = failed.calls
    assert call.error is not None and call.error.code == "FN_ERROR"
    assert "missing" in call.error.message


def test_the_switched_off_gate_is_named(tmp_path):
    runner = live(tmp_path, allowed=False)
    try:
        outcome = runner.run(hook="lib/hook.py:transform")
    finally:
        runner.close()
    (call,) = outcome.calls
    assert call.gate == "code_execution.sys_lambda"
    assert call.error is not None and call.error.code == "DISABLED"
