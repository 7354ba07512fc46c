"""The Provider request tab: the body a provider receives after the hook, and the cache check."""

from __future__ import annotations

import copy
import json

import pytest

from studio.core.run_outcome import RunOutcome
from studio.core.turn_error import turn_error
from studio.ui.engine_bridge import EngineBridge
from studio.ui.result_diff_view import DiffCache
from studio.ui.result_provider_view import ProviderView
from studio.ui.run_view import TAB_PROVIDER, RunView

REQUEST = {
    "system": "You are a support agent.",
    "messages": [
        {"role": "user", "content": "Why twice?"},
        {"role": "assistant", "content": "Let me look."},
        {"role": "user", "content": "Thanks."},
    ],
    "tools": [{"name": "fs_read", "description": "Read", "input_schema": {"type": "object"}}],
    "options": {"maxTokens": 100},
}


def outcome(result=None, **extra):
    sent = copy.deepcopy(REQUEST) if result is None else result
    return RunOutcome(contract="pre_llm", status="ok", input=REQUEST, result=sent, **extra)


@pytest.fixture
def view(qtbot):
    view = ProviderView()
    qtbot.addWidget(view)
    view.show()
    return view


def test_shows_the_body_and_the_cache_check(view):
    changed = copy.deepcopy(REQUEST)
    changed["messages"][2]["content"] = "Thanks!"
    view.set_provider("anthropic")
    view.show_outcome(outcome(changed))
    assert view.cache.text() == (
        "Prompt cache: message 3 changed: cache prefix kept through message 2"
    )
    body = json.loads(view.text.toPlainText())
    assert body["system"] == [{"type": "text", "text": "You are a support agent."}]
    assert body["messages"][2]["content"] == [{"type": "text", "text": "Thanks!"}]


def test_another_provider_shows_its_own_body(qtbot, view):
    view.show_outcome(outcome())
    with qtbot.waitSignal(view.provider_changed) as changed:
        view.set_provider("openai")
    assert changed.args == ["openai"]
    body = json.loads(view.text.toPlainText())
    assert body["input"][0] == {"role": "system", "content": "You are a support agent."}
    assert (
        view.cache.text()
        == "Prompt cache: nothing changed: the whole prompt stays cached (3 messages)"
    )


def test_a_failed_run_sends_nothing(view):
    error = turn_error("exception", "boom")
    view.show_outcome(
        RunOutcome(contract="pre_llm", status="turn_error", input=REQUEST, turn_error=error)
    )
    assert view.cache.text() == "Nothing to show: nothing is sent: the hook failed."
    assert view.text.toPlainText() == ""


def test_a_cleared_payload_says_so(view):
    view.show_outcome(outcome(), payload_cleared=True)
    assert "Payload cleared" in view.cache.text()
    assert view.text.toPlainText() == ""


def test_the_body_is_built_only_when_the_tab_is_on_show(qtbot):
    view = ProviderView()
    qtbot.addWidget(view)
    view.show_outcome(outcome())
    assert view.preview is None
    view.show()
    assert view.preview is not None and view.preview.cache.kind == "unchanged"


@pytest.fixture
def bridge():
    engine = EngineBridge()
    yield engine
    engine.shutdown()


def test_the_run_view_has_the_tab_for_pre_llm_runs_only(qtbot, bridge):
    run = RunView(DiffCache(bridge))
    qtbot.addWidget(run)
    run.show()
    run.show_outcome(outcome())
    assert run.tabs.isTabVisible(TAB_PROVIDER)
    assert run.tabs.tabText(TAB_PROVIDER) == "Provider request"
    run.tabs.setCurrentIndex(TAB_PROVIDER)
    assert run.provider.cache.text().startswith("Prompt cache: nothing changed")
    run.show_outcome(RunOutcome(contract="chain", status="ok", result={}))
    assert not run.tabs.isTabVisible(TAB_PROVIDER)
    run.clear("No run yet.")
    assert not run.tabs.isTabVisible(TAB_PROVIDER)
