"""`hook-studio run` given what a careless or hostile user gives it: environment entries no
process can be started with, a record store that cannot be written, Ctrl+C while a hook runs.
Each ends with a clear report, no traceback, and no process of the run left behind."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.processes import live_descendants, named, wait_for
from tests.support.workspaces import copy_bundled_workspace

STUDIO = (sys.executable, "-m", "studio")
PYTHON_HOOK = "lib/policy.py:transform"
NODE_HOOK = "lib/policy.ts:transform"


def studio(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*STUDIO, *args], capture_output=True, text=True, timeout=120)


def running_in(folder: Path) -> list[int]:
    """The processes whose working folder is ``folder``: the run's fork server, workers and
    Node host all work there."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cwd = os.readlink(f"/proc/{entry}/cwd")
            except OSError:
                continue
            if Path(cwd) == folder:
                found.append(int(entry))
    return found


def running(pid: int) -> bool:
    """Whether ``pid`` is a live process; a zombie has ended."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.fixture
def workspace(tmp_path) -> Path:
    return copy_bundled_workspace(tmp_path / "ws")


def set_settings(workspace: Path, **entries: object) -> None:
    path = workspace / "hookstudio.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **entries}))


@pytest.mark.parametrize("hook", [PYTHON_HOOK, NODE_HOOK])
@pytest.mark.parametrize(
    ("entries", "path", "message"),
    [
        ({"env": {"A=B": "x"}}, "/env/A=B", "an environment variable name cannot contain '='"),
        ({"env": {"": "x"}}, "/env/", "an environment variable name cannot be empty"),
        (
            {"env": {"REGION": "e\0u"}},
            "/env/REGION",
            "an environment variable value cannot contain a NUL character",
        ),
        (
            {"pass_env": ["LANG", "X=Y"]},
            "/pass_env/1",
            "an environment variable name cannot contain '='",
        ),
    ],
)
def test_an_environment_entry_no_process_takes_is_a_config_error(
    workspace, hook, entries, path, message
):
    set_settings(workspace, **entries)
    done = studio("run", str(workspace), "--sample", "support-ticket", "--hook", hook, "--json")
    assert done.returncode == 3, done.stderr
    assert done.stderr == ""
    error = json.loads(done.stdout)["turn_error"]
    assert error["kind"] == "config_invalid"
    assert error["path"] == path
    assert error["message"] == f"hookstudio.json: {path}: {message}"
    assert error["details"] == {"file": "hookstudio.json"}

    text = studio("run", str(workspace), "--sample", "support-ticket", "--hook", hook)
    assert text.returncode == 3
    assert "Traceback" not in text.stdout + text.stderr
    assert "config_invalid" in text.stdout and f"hookstudio.json: {path}: {message}" in text.stdout
    assert running_in(workspace) == []


def not_a_file(workspace: Path) -> str:
    (workspace / ".hookstudio" / "records.sqlite3").mkdir(parents=True)
    return f"{workspace / '.hookstudio' / 'records.sqlite3'}: is not a file"


def full_disk(workspace: Path) -> str:
    assert studio("run", str(workspace), "--sample", "support-ticket").returncode == 0
    store = workspace / ".hookstudio" / "records.sqlite3"
    with sqlite3.connect(store) as db:
        # SQLite's own message when a write finds no room, raised by SQLite on each insert.
        db.execute(
            "CREATE TRIGGER full BEFORE INSERT ON decisions "
            "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END"
        )
    db.close()
    return f"{store}: cannot write the records (database or disk is full)"


@pytest.mark.parametrize("break_store", [not_a_file, full_disk])
@pytest.mark.parametrize(("hook", "exit_code"), [(NODE_HOOK, 0), ("lib/failing.py:typo_key", 3)])
def test_a_run_the_records_cannot_keep_says_so_in_every_report(
    workspace, break_store, hook, exit_code
):
    problem = break_store(workspace)
    warning = {"path": "", "message": f"this run was not recorded: {problem}"}
    args = ("run", str(workspace), "--sample", "support-ticket", "--hook", hook)

    done = studio(*args, "--json")
    assert done.returncode == exit_code, done.stderr
    assert json.loads(done.stdout)["warnings"] == [warning]

    text = studio(*args)
    assert text.returncode == exit_code
    assert f"  warning : {warning['message']}\n" in text.stdout
    assert "Traceback" not in text.stderr


SPIN_PY = """\
import ctypes


def main(payload):
    # Named, so that the test sees from outside the sandbox that the hook has begun.
    ctypes.CDLL(None).prctl(15, ctypes.c_char_p(b"hook-started"), 0, 0, 0)
    while True:
        pass
"""

SPIN_TS = """\
export function main(payload: unknown): unknown {
  for (;;) {}
  return payload;
}
"""


def node_host(cli: int) -> int | None:
    for pid in live_descendants(cli):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
        except OSError:
            continue
        if Path(os.fsdecode(command)).name == "node":
            return pid
    return None


@pytest.mark.parametrize("runtime", ["python", "node"])
def test_ctrl_c_while_a_hook_runs_cancels_cleanly(workspace, runtime):
    (workspace / "lib" / "spin.py").write_text(SPIN_PY)
    (workspace / "lib" / "spin.ts").write_text(SPIN_TS)
    hook = "lib/spin.py:main" if runtime == "python" else "lib/spin.ts:main"
    cli = subprocess.Popen(
        [*STUDIO, "run", str(workspace), "--sample", "support-ticket", "--hook", hook, "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        if runtime == "python":
            wait_for(lambda: named(live_descendants(cli.pid), "hook-started"))
            (worker,) = named(live_descendants(cli.pid), "hook-started")
        else:
            wait_for(lambda: node_host(cli.pid))
            worker = node_host(cli.pid) or 0
        started = live_descendants(cli.pid)
        assert worker in started
        cli.send_signal(signal.SIGINT)
        out, err = cli.communicate(timeout=60)
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.communicate()
    assert (cli.returncode, out, err) == (130, "", "hook-studio: cancelled\n")
    assert [pid for pid in started if running(pid)] == []
    assert running_in(workspace) == []
