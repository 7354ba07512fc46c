"""Spares load the hooks of the latest calls ahead of the next ones: an edit of any file the load
read is picked up by the very next call, nothing a module did while loading reaches another
call, and hooks called in turn (as a chain calls its hooks) each find a spare that loaded them."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from studio.core.workspace.folder import Workspace
from studio.engine.fork_server import SPARES
from tests.support.runners import LiveRunner
from tests.support.workspaces import write_json

# The hook says which version of its files it loaded, how many calls its module has seen, and
# whether it was loaded ahead of its call (its stdout was then not yet the call's pipe).
HOOK = """\
import os
MARK = "h1"
from lib.helper import VERSION
with open("lib/data.txt") as data:
    DATA = data.read().strip()
AHEAD = os.readlink("/proc/self/fd/1").startswith("/memfd:")
CALLS = []
print("loading", VERSION)

def main(payload):
    CALLS.append(1)
    return {**payload["request"], "system": f"{MARK}-{VERSION}-{DATA} {len(CALLS)} {AHEAD}"}
"""

# Most runs must have found a spare that loaded the hook ahead within this many.
ENOUGH_RUNS = 60


def write_keeping_time(path: Path, text: str) -> None:
    """Write ``text`` and give the file back its modification time: only the content says it
    changed (as when an edit falls in the same tick of a coarse clock)."""
    before = path.stat()
    path.write_text(text)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


@pytest.fixture(params=[False, True], ids=["no-sandbox", "sandbox"])
def prepared(request: Any, workspace: Workspace) -> Any:
    lib = workspace.root / "lib"
    (lib / "prepared.py").write_text(HOOK)
    (lib / "helper.py").write_text('VERSION = "v1"\n')
    (lib / "data.txt").write_text("d1\n")
    settings = json.loads((workspace.root / "hookstudio.json").read_text())
    write_json(
        workspace.root / "hookstudio.json", {**settings, "sandbox": {"enabled": request.param}}
    )
    live = LiveRunner(Workspace.open(workspace.root))
    yield live
    live.close()


def system_of(live: LiveRunner) -> tuple[str, str, str, str]:
    """The versions the call saw (hook-helper-data), its module's count of calls, whether it
    was loaded ahead, and its stdout."""
    outcome = live.run(hook="lib/prepared.py:main")
    assert outcome.status == "ok", outcome.turn_error
    versions, calls, ahead = outcome.result["system"].split()
    return versions, calls, ahead, outcome.stdout


def until_loaded_ahead(live: LiveRunner, versions: str) -> None:
    """Run until a call finds the hook loaded ahead; every run sees ``versions``, a module of
    its own, and what that module printed while it loaded."""
    helper = versions.split("-")[1]
    for _ in range(ENOUGH_RUNS):
        seen = system_of(live)
        assert seen == (versions, "1", seen[2], f"loading {helper}\n")
        if seen[2] == "True":
            return
    pytest.fail(f"no call found the hook loaded ahead in {ENOUGH_RUNS} runs")


def test_a_hook_loaded_ahead_is_its_own_module_per_call_and_prints_for_each(prepared):
    until_loaded_ahead(prepared, "h1-v1-d1")
    for _ in range(3):
        assert system_of(prepared)[:2] == ("h1-v1-d1", "1")


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        ("lib/prepared.py", HOOK.replace('MARK = "h1"', 'MARK = "h2"'), "h2-v1-d1"),
        ("lib/helper.py", 'VERSION = "v2"\n', "h1-v2-d1"),
        ("lib/data.txt", "d2\n", "h1-v1-d2"),
    ],
    ids=["hook", "imported-module", "file-read-while-loading"],
)
def test_an_edit_of_any_file_the_load_read_is_picked_up_by_the_next_call(
    prepared, path, text, expected
):
    until_loaded_ahead(prepared, "h1-v1-d1")
    # Same size and modification time, other bytes: only the content says it changed.
    write_keeping_time(prepared.runner.workspace.root / path, text)
    assert system_of(prepared)[:2] == (expected, "1")
    until_loaded_ahead(prepared, expected)


def test_a_hook_that_stops_loading_is_reported_by_its_call_and_fixed_by_an_edit(prepared):
    until_loaded_ahead(prepared, "h1-v1-d1")
    hook = prepared.runner.workspace.root / "lib" / "prepared.py"
    hook.write_text(HOOK.replace("CALLS = []", "CALLS = [] +"))
    for _ in range(3):
        outcome = prepared.run(hook="lib/prepared.py:main")
        assert outcome.status == "turn_error"
        assert outcome.turn_error.kind == "load_failed"
        assert "syntax error" in outcome.turn_error.message
    hook.write_text(HOOK)
    until_loaded_ahead(prepared, "h1-v1-d1")


def test_hooks_called_in_turn_each_find_a_spare_that_loaded_them(prepared):
    # As a chain calls its hooks: three of them, one after another, again and again. Spares
    # load each of the latest hooks ahead, not only the last one called.
    lib = prepared.runner.workspace.root / "lib"
    names = ["first", "second", "third"]
    for name in names:
        (lib / f"{name}.py").write_text(HOOK.replace('MARK = "h1"', f'MARK = "{name}"'))
    rounds = []
    for _ in range(ENOUGH_RUNS):
        found = []
        for name in names:
            outcome = prepared.run(hook=f"lib/{name}.py:main")
            assert outcome.status == "ok", outcome.turn_error
            mark, calls, ahead = outcome.result["system"].split()
            assert (mark, calls) == (f"{name}-v1-d1", "1")
            found.append(ahead == "True")
        rounds.append(found)
        if all(found):
            break
        prepared.hold_spares(SPARES)  # the spares made after the round are ready
    assert all(rounds[-1]), rounds
