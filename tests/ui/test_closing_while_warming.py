"""The window's runtimes warm up once it is on screen; closing the window, or opening another
workspace, while they are still starting ends every process they started, whatever stage each
start has reached."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from studio.core.app_settings import AppSettings
from studio.engine.runner import Runner
from studio.ui.main_window import MainWindow
from tests.support.processes import anywhere_naming, live_descendants, running_with, wait_for
from tests.support.workspaces import copy_bundled_workspace

WAIT_MS = 20_000
ME = os.getpid()

# Points of a warm-up, in the order it reaches them: its task exists; the Python fork server
# process is started; it has forked a first spare worker, then all three (each spare is one
# process, or three in the sandbox); the Node host runs. Each is the earliest moment a
# close can see it, polled from the GUI thread.
Stage = Callable[[Runner, set[int]], bool]
STAGES: dict[str, Stage] = {
    "its task exists": lambda runner, new: runner._warming is not None,
    "the fork server started": lambda runner, new: bool(running_with(new, "fork_server")),
    "a spare forked": lambda runner, new: len(new) >= 2,
    "the spares forked": lambda runner, new: len(new) >= 4,
    "the Node host runs": lambda runner, new: bool(running_with(new, "host.mjs")),
}


def new_processes(before: set[int]) -> set[int]:
    return live_descendants(ME) - before


@pytest.fixture
def before() -> Iterator[set[int]]:
    """The processes alive before the test; any it leaves are killed after it (the check that
    none is left is the test's own), so that a failure cannot hold up the tests after it."""
    alive = live_descendants(ME)
    yield alive
    for pid in new_processes(alive):
        os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not new_processes(alive))


def shown_window(qtbot, tmp_path: Path, workspace: Path) -> MainWindow:
    win = MainWindow(AppSettings(), tmp_path / "settings.json")
    qtbot.addWidget(win)
    win.show()
    assert win.open_workspace(workspace)
    return win


def wait_for_stage(qtbot, win: MainWindow, stage: str, before: set[int]) -> None:
    runner = win.bridge.runner
    assert runner is not None
    qtbot.waitUntil(lambda: STAGES[stage](runner, new_processes(before)), timeout=WAIT_MS)


@pytest.mark.parametrize("stage", list(STAGES))
def test_closing_the_window_while_the_runtimes_start_ends_every_process(
    qtbot, sample_workspace, tmp_path, before, stage
):
    # A few rounds: when the close lands within a start differs from one to the next.
    for _ in range(3):
        win = shown_window(qtbot, tmp_path, sample_workspace)
        wait_for_stage(qtbot, win, stage, before)
        assert win.close()
        assert new_processes(before) == set(), f"left running after a close when {stage}"


def test_a_window_closed_before_its_first_paint_starts_no_runtime(
    qtbot, sample_workspace, tmp_path, before
):
    win = MainWindow(AppSettings(), tmp_path / "settings.json")
    qtbot.addWidget(win)
    win.show()
    assert win.open_workspace(sample_workspace)
    assert win.close()  # before the loop ran: nothing is painted yet
    win._now_on_screen()  # the moment it would be on screen, had it stayed open
    assert not win._on_screen
    assert win.bridge.runner is None or win.bridge.runner._warming is None
    assert new_processes(before) == set()


@pytest.mark.parametrize("stage", list(STAGES))
def test_opening_another_workspace_while_the_runtimes_start_ends_the_first_ones_processes(
    qtbot, sample_workspace, tmp_path, before, stage
):
    workspaces = [sample_workspace, copy_bundled_workspace(tmp_path / "other")]
    win = shown_window(qtbot, tmp_path, workspaces[0])
    for turn in range(1, 4):
        wait_for_stage(qtbot, win, stage, before)
        first = new_processes(before)
        assert win.open_workspace(workspaces[turn % 2])
        # The first workspace's runner ends off the GUI thread; the new one warms up meanwhile.
        qtbot.waitUntil(lambda old=first: not old & live_descendants(ME), timeout=WAIT_MS)
    assert win.close()
    # Anything the replaced runners started after the moments above is gone too.
    assert new_processes(before) == set()


@pytest.mark.parametrize("program", ["fork_server", "node"])
def test_a_runtime_whose_start_never_ends_is_ended_by_the_close(
    qtbot, sample_workspace, tmp_path, before, program
):
    """A start that does not end (its process stopped, as on a machine too busy to start it):
    the close does not wait for it, and ends it."""
    # The Node host is started through a launcher in the sandbox, else as itself.
    marks = {"fork_server": ("fork_server",), "node": ("sandboxed_exec", "host.mjs")}[program]
    stopped: set[int] = set()

    def stop_its_start() -> bool:
        # Once the program runs (not while it is still the studio's fork before its exec).
        for pid in {p for mark in marks for p in running_with(new_processes(before), mark)}:
            # A process seen a moment ago may have ended since (the fork server makes some that
            # live a moment).
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGSTOP)
                stopped.add(pid)
        return bool(stopped)

    win = shown_window(qtbot, tmp_path, sample_workspace)
    qtbot.waitUntil(stop_its_start, timeout=WAIT_MS)
    assert win.close()
    assert new_processes(before) == set(), f"left running: {stopped & new_processes(before)}"
    # A process stopped before it could take its death signal, orphaned when its parent was
    # ended, is no descendant of this test any more; its command line still names the workspace.
    workspace = str(sample_workspace.resolve())
    try:
        # Each was sent SIGKILL; it takes a moment to go.
        wait_for(lambda: not anywhere_naming(workspace), timeout=10)
    except AssertionError:
        left = anywhere_naming(workspace)
        for pid in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        raise AssertionError(f"left running outside this test's processes: {left}") from None
