"""The engine bridge hands out jobs: each answers through its own signals, on the GUI thread,
and never before whoever asked could listen."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from studio.core.run_outcome import RunOutcome
from studio.core.turn_error import TurnError
from studio.core.workspace.folder import Workspace
from studio.ui.engine_bridge import STUDIO_TRACEBACK, EngineBridge, Job, RunJob

WAIT_S = 10


@pytest.fixture
def bridge() -> Iterator[EngineBridge]:
    engine = EngineBridge()
    yield engine
    engine.shutdown()


def heard(job: Job | RunJob) -> list[tuple[str, Any]]:
    """Everything ``job`` says, in order."""
    said: list[tuple[str, Any]] = []
    job.started.connect(lambda: said.append(("started", None)))
    job.finished.connect(lambda value: said.append(("finished", value)))
    job.failed.connect(lambda error: said.append(("failed", error)))
    return said


def test_a_job_starts_then_finishes_with_the_value(qtbot: QtBot, bridge: EngineBridge) -> None:
    job = bridge.submit(sum, [1, 2, 3])
    said = heard(job)
    with qtbot.waitSignal(job.finished) as finished:
        pass
    assert finished.args == [6]
    assert said == [("started", None), ("finished", 6)]
    assert job.done and job.value == 6 and job.error is None


def test_a_job_that_raises_fails_with_the_exception(qtbot: QtBot, bridge: EngineBridge) -> None:
    def broken() -> None:
        raise OSError(13, "Permission denied")

    job = bridge.submit(broken)
    with qtbot.waitSignal(job.failed) as failed:
        pass
    (error,) = failed.args
    assert isinstance(error, OSError) and error.strerror == "Permission denied"
    assert job.error is error and job.done


def test_work_done_before_anyone_listens_still_reaches_them(
    qtbot: QtBot, bridge: EngineBridge
) -> None:
    job = bridge.submit(len, "instant")
    assert job._future is not None
    job._future.result(timeout=10)  # the worker has answered; the GUI thread has not looked yet
    said = heard(job)  # a caller connecting only now...
    assert said == [] and not job.done
    qtbot.waitUntil(lambda: job.done)
    assert said == [("started", None), ("finished", 7)]  # ...hears everything, in order


def test_an_answer_known_at_once_is_never_given_inside_the_call(
    qtbot: QtBot, bridge: EngineBridge
) -> None:
    bridge.shutdown()  # every submission now fails at once, on the calling thread
    job = bridge.submit(len, "x")
    assert not job.done  # not from inside submit: the caller could not have connected yet
    said = heard(job)
    qtbot.waitUntil(lambda: job.done)
    assert [kind for kind, _ in said] == ["failed"]
    assert isinstance(said[0][1], RuntimeError) and "shut down" in str(said[0][1])


def test_a_job_answered_before_submit_returns_is_still_heard(
    qtbot: QtBot, bridge: EngineBridge, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The worst timing: the engine has finished the work before submit even attaches its
    # callback, so the callback runs at once, on the GUI thread, inside submit.
    def finished_at_once(coro: Coroutine[Any, Any, Any]) -> Future[Any]:
        future: Future[Any] = Future()
        future.set_result(asyncio.run(coro))
        return future

    monkeypatch.setattr(bridge, "_schedule", finished_at_once)
    job = bridge.submit(len, "ready")
    assert not job.done  # nothing was said before the caller held the job
    said = heard(job)
    with qtbot.waitSignal(job.finished, timeout=10_000) as finished:
        pass
    assert finished.args == [5]
    assert said == [("started", None), ("finished", 5)]


def test_a_cancelled_job_says_nothing_more(qtbot: QtBot, bridge: EngineBridge) -> None:
    release = threading.Event()
    job = bridge.submit(release.wait, 10)
    said = heard(job)
    qtbot.waitUntil(lambda: bool(said))  # started: the worker is waiting
    job.cancel()
    release.set()
    later = bridge.submit(len, "after")
    with qtbot.waitSignal(later.finished):
        pass
    qtbot.waitUntil(lambda: job.done)
    assert said == [("started", None)]
    assert job.cancelled and job.value is None


def test_a_run_the_engine_cannot_carry_out_fails_with_a_turn_error(
    qtbot: QtBot, bridge: EngineBridge, sample_workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bridge.open_workspace(Workspace.open(sample_workspace), None)
    assert bridge.runner is not None

    def broken_start(*_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError("the fork server went away")

    monkeypatch.setattr(bridge.runner, "start", broken_start)
    job = bridge.start_run("support-ticket")
    assert bridge.running == [job]
    with qtbot.waitSignal(job.failed) as failed:
        pass
    (error,) = failed.args
    assert isinstance(error, TurnError)
    assert error.kind == "engine_failed"
    assert error.message == "RuntimeError: the fork server went away"
    assert "broken_start" in error.details[STUDIO_TRACEBACK]
    assert bridge.running == [] and job.outcome is None


def test_a_run_starts_then_finishes_with_its_outcome(
    qtbot: QtBot, bridge: EngineBridge, sample_workspace: Path
) -> None:
    bridge.open_workspace(Workspace.open(sample_workspace), None)
    job = bridge.start_run("support-ticket", "main")
    said = heard(job)
    with qtbot.waitSignal(job.finished, timeout=30_000) as finished:
        pass
    (outcome,) = finished.args
    assert isinstance(outcome, RunOutcome) and outcome.status == "ok"
    assert [kind for kind, _ in said] == ["started", "finished"]
    assert job.handle is not None and job.outcome is outcome


def test_held_work_starts_when_released_in_the_order_it_came(
    qtbot: QtBot, bridge: EngineBridge
) -> None:
    ran: list[str] = []
    bridge.hold_work()
    first = bridge.submit(ran.append, "first")
    second = bridge.submit(ran.append, "second")
    said = heard(second)
    # Once the engine's loop has taken up what came after them, work not held would have begun.
    bridge._schedule(asyncio.sleep(0)).result(WAIT_S)
    QApplication.processEvents()
    assert ran == [] and not first.done and said == []
    bridge.release_work()
    qtbot.waitUntil(lambda: first.done and second.done)
    assert ran == ["first", "second"]
    assert said == [("started", None), ("finished", None)]
    after = bridge.submit(sum, [2, 3])  # released: no longer held
    with qtbot.waitSignal(after.finished) as finished:
        pass
    assert finished.args == [5]


def test_held_work_cancelled_before_it_starts_never_runs(
    qtbot: QtBot, bridge: EngineBridge
) -> None:
    ran: list[str] = []
    bridge.hold_work()
    job = bridge.submit(ran.append, "never")
    said = heard(job)
    job.cancel()
    bridge.release_work()
    other = bridge.submit(ran.append, "other")
    qtbot.waitUntil(lambda: other.done)
    qtbot.waitUntil(lambda: job.done)  # settled quietly, so the bridge lets it go
    assert ran == ["other"] and said == []
