"""The Provider request tab: the body a provider receives after the hook, and the cache check."""

from __future__ import annotations

import copy
import json

import pytest
from PySide6.QtCore import Qt, QTimer

from studio.core.run_outcome import RunOutcome
from studio.core.turn_error import turn_error
from studio.ui.engine_bridge import EngineBridge
from studio.ui.result_diff_view import DiffCache
from studio.ui.result_provider_view import PIECE_CHARS, ProviderView, pieces
from studio.ui.run_view import TAB_PROVIDER, RunView

WAIT_MS = 20_000
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
def bridge():
    engine = EngineBridge()
    yield engine
    engine.shutdown()


@pytest.fixture
def view(qtbot, bridge):
    view = ProviderView(bridge)
    qtbot.addWidget(view)
    view.show()
    return view


def shown(qtbot, view, action, *args, **kwargs):
    """Do ``action`` and wait for the build it starts (off the GUI thread) to be on show."""
    with qtbot.waitSignal(view.preview_shown, timeout=WAIT_MS):
        action(*args, **kwargs)


def test_shows_the_body_and_the_cache_check(qtbot, view):
    changed = copy.deepcopy(REQUEST)
    changed["messages"][2]["content"] = "Thanks!"
    view.set_provider("anthropic")
    with qtbot.waitSignal(view.preview_shown, timeout=WAIT_MS):
        view.show_outcome(outcome(changed))
        assert view.cache.text() == "Building…"
        assert view.building and view.text.toPlainText() == ""
    assert not view.building
    assert view.cache.text() == (
        "Prompt cache: message 3 changed: cache prefix kept through message 2"
    )
    body = json.loads(view.text.toPlainText())
    assert body["system"] == [{"type": "text", "text": "You are a support agent."}]
    assert body["messages"][2]["content"] == [{"type": "text", "text": "Thanks!"}]


def test_another_provider_shows_its_own_body(qtbot, view):
    shown(qtbot, view, view.show_outcome, outcome())
    with (
        qtbot.waitSignal(view.preview_shown, timeout=WAIT_MS),
        qtbot.waitSignal(view.provider_changed) as changed,
    ):
        view.set_provider("openai")
    assert changed.args == ["openai"]
    body = json.loads(view.text.toPlainText())
    assert body["input"][0] == {"role": "system", "content": "You are a support agent."}
    assert (
        view.cache.text()
        == "Prompt cache: nothing changed: the whole prompt stays cached (3 messages)"
    )


def test_a_failed_run_sends_nothing(qtbot, view):
    error = turn_error("exception", "boom")
    failed = RunOutcome(contract="pre_llm", status="turn_error", input=REQUEST, turn_error=error)
    shown(qtbot, view, view.show_outcome, failed)
    assert view.cache.text() == "Nothing to show: nothing is sent: the hook failed."
    assert view.text.toPlainText() == ""


def test_a_cleared_payload_says_so(qtbot, view):
    shown(qtbot, view, view.show_outcome, outcome(), payload_cleared=True)
    assert "Payload cleared" in view.cache.text()
    assert view.text.toPlainText() == ""


def test_the_body_is_built_only_when_the_tab_is_on_show(qtbot, bridge):
    view = ProviderView(bridge)
    qtbot.addWidget(view)
    view.show_outcome(outcome())
    assert view.preview is None and not view.building
    shown(qtbot, view, view.show)
    assert view.preview is not None and view.preview.cache.kind == "unchanged"


def test_the_run_view_has_the_tab_for_pre_llm_runs_only(qtbot, bridge):
    run = RunView(DiffCache(bridge), bridge)
    qtbot.addWidget(run)
    run.show()
    run.show_outcome(outcome())
    assert run.tabs.isTabVisible(TAB_PROVIDER)
    assert run.tabs.tabText(TAB_PROVIDER) == "Provider request"
    shown(qtbot, run.provider, run.tabs.setCurrentIndex, TAB_PROVIDER)
    assert run.provider.cache.text().startswith("Prompt cache: nothing changed")
    run.show_outcome(RunOutcome(contract="chain", status="ok", result={}))
    assert not run.tabs.isTabVisible(TAB_PROVIDER)
    run.clear("No run yet.")
    assert not run.tabs.isTabVisible(TAB_PROVIDER)


def long_request(chars: int) -> dict:
    """A conversation of about ``chars`` characters of JSON."""
    messages = []
    while len(messages) * 260 < chars:
        role = "user" if len(messages) % 2 == 0 else "assistant"
        text = f"message {len(messages)}: " + "word " * 48
        messages.append({"role": role, "content": [{"type": "text", "text": text}]})
    return {**REQUEST, "messages": messages}


class Ticks:
    """A timer of the GUI thread counting its turns: it fires only while the loop turns."""

    def __init__(self, parent) -> None:
        self.count = 0
        self.timer = QTimer(parent)
        self.timer.setInterval(0)
        self.timer.timeout.connect(self._on_timeout)
        self.timer.start()

    def _on_timeout(self) -> None:
        self.count += 1


def test_a_newer_outcome_shown_while_building_wins(qtbot, view):
    big = long_request(2_000_000)
    shown_count = []
    view.preview_shown.connect(lambda: shown_count.append(view.cache.text()))
    view.show_outcome(RunOutcome(contract="pre_llm", status="ok", input=big, result=big))
    older = view.build_job
    assert older is not None
    changed = copy.deepcopy(REQUEST)
    changed["system"] = "You are terse."
    shown(qtbot, view, view.show_outcome, outcome(changed))
    body = json.loads(view.text.toPlainText())
    assert body["system"] == [{"type": "text", "text": "You are terse."}]
    # The older build ends after the newer one is on show, and is dropped.
    qtbot.waitUntil(lambda: older.done, timeout=WAIT_MS)
    assert json.loads(view.text.toPlainText()) == body
    assert len(shown_count) == 1 and shown_count[0].startswith("Prompt cache: system changed")


def test_a_provider_picked_while_building_wins(qtbot, view):
    view.set_provider("anthropic")
    view.show_outcome(outcome())
    older = view.build_job
    shown(qtbot, view, view.set_provider, "openai")
    qtbot.waitUntil(lambda: older.done, timeout=WAIT_MS)
    assert "input" in json.loads(view.text.toPlainText())


def test_a_large_body_is_built_and_shown_while_the_window_stays_responsive(qtbot, view):
    big = long_request(2_000_000)
    sent = copy.deepcopy(big)
    sent["messages"][-1]["content"][0]["text"] += "!"
    ticks = Ticks(view)
    with qtbot.waitSignal(view.preview_shown, timeout=WAIT_MS):
        view.show_outcome(RunOutcome(contract="pre_llm", status="ok", input=big, result=sent))
        before = ticks.count
    assert ticks.count > before  # the event loop turned while the body was built
    assert view.cache.text().startswith("Prompt cache: message")
    shown_text = view.text.toPlainText()
    assert len(shown_text) <= PIECE_CHARS
    assert view.show_all.isVisible() and view.elided.isVisible()
    assert view.elided.text().startswith(f"Showing the first {len(shown_text):,} of ")

    with qtbot.waitSignal(view.body_filled, timeout=WAIT_MS):
        qtbot.mouseClick(view.show_all, Qt.MouseButton.LeftButton)
        before = ticks.count
        assert view.filling
    # A piece per turn: the timer fired between the pieces.
    pieces_added = -(-(len(view.text.toPlainText()) - len(shown_text)) // PIECE_CHARS)
    assert ticks.count - before >= pieces_added - 1 > 0
    assert not view.show_all.isVisible() and not view.elided.isVisible()
    body = json.loads(view.text.toPlainText())
    assert body["messages"][-1]["content"][0]["text"].endswith("!")
    assert len(body["messages"]) == len(sent["messages"])


def test_pieces_cut_at_line_ends_and_join_back():
    text = "\n".join(f"line {i}" for i in range(1000))
    cut = pieces(text, 100)
    assert "\n".join(cut) == text
    assert all(len(piece) <= 100 for piece in cut)
    assert all(not piece.startswith("\n") for piece in cut[1:])
    assert pieces("one long line", 4) == ["one long line"]
