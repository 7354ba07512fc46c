"""Every way a hook can misbehave ends in the right turn error, with no process left behind and
the engine still serving the next run."""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from studio.engine.fork_server import SPARES
from studio.engine.worker_host import _ACKNOWLEDGE_S
from tests.support.hostile_hooks import STARTED
from tests.support.processes import live_descendants, named, wait_for
from tests.support.runners import LiveRunner
from tests.support.workspaces import REQUEST, SHORT_TIMEOUT_MS, write_json

HOSTILE = Path(__file__).parents[1] / "support" / "hostile_hooks.py"


@pytest.fixture
def hostile(workspace, runner) -> LiveRunner:
    shutil.copy(HOSTILE, workspace.root / "lib" / "hostile.py")
    return runner


# The hooks that never end on their own are run under the shortest deadline a hook may have; every
# other run keeps the workspace's generous one, so that a busy machine cannot time it out.
NEVER_END = {"infinite_loop", "sleep_past_timeout", "children_then_hang"}


def hostile_run(runner: LiveRunner, function: str):
    source = f"lib/hostile.py:{function}"
    if function in NEVER_END:
        return runner.run(hook_config={"source": source, "timeout_ms": SHORT_TIMEOUT_MS})
    return runner.run(hook=source)


def run_hostile(runner: LiveRunner, function: str):
    outcome = hostile_run(runner, function)
    # The engine still serves the next run, on the same fork server.
    follow_up = runner.run()
    assert follow_up.status == "ok", follow_up.turn_error
    return outcome


def error_of(outcome):
    assert outcome.status == "turn_error", outcome
    assert outcome.result is None
    return outcome.turn_error


def assert_all_dead(pids: list[int]) -> None:
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        assert state == "Z", f"process {pid} is still running (state {state})"


@pytest.mark.parametrize(
    ("function", "kind", "reason"),
    [
        ("infinite_loop", "timeout", "timeout"),
        ("sleep_past_timeout", "timeout", "timeout"),
        ("print_100_mb", "output_limit", "callback"),
        ("garbage_on_result_channel", "channel_corrupted", "callback"),
        ("exit_zero", "worker_crashed", "callback"),
        ("hard_exit_one", "worker_crashed", "callback"),
        ("segfault", "worker_crashed", "callback"),
        ("allocate_4_gb", "memory_limit", "callback"),
        ("return_nan", "invalid_result", "callback"),
        ("return_set", "invalid_result", "callback"),
        ("return_json_string", "invalid_result", "callback"),
        ("return_none", "invalid_result", "callback"),
        ("deep_recursion", "exception", "callback"),
        ("no_such_function", "function_missing", "callback"),
    ],
)
def test_each_hostile_hook_fails_closed_with_its_kind(hostile, function, kind, reason):
    error = error_of(run_hostile(hostile, function))
    assert (error.kind, error.reason) == (kind, reason)
    assert error.label == "Turn error"
    assert error.hook is not None and error.hook.function == function
    assert error.message


def test_timeouts_end_within_the_limit_plus_two_seconds(hostile):
    # The fork server's start is the first run's, not the timed one's.
    assert hostile.run().status == "ok"
    started = time.perf_counter()
    error = error_of(hostile_run(hostile, "infinite_loop"))
    assert error.kind == "timeout"
    took = time.perf_counter() - started
    # Never before the deadline; after it, the kill and the reaping are all that is left, which
    # take milliseconds on an idle machine and seconds on a busy one. The bound is ten times the
    # deadline: a hook whose deadline was not enforced would loop until the test's own timeout.
    assert SHORT_TIMEOUT_MS / 1000 <= took < 10 * SHORT_TIMEOUT_MS / 1000
    assert error.exit is not None and error.exit.signal == "SIGKILL"


def test_printed_output_is_kept_up_to_the_limit_and_marked(hostile):
    outcome = hostile.run(hook="lib/hostile.py:print_100_mb")
    assert outcome.stdout_truncated
    assert len(outcome.stdout.encode()) == 1 << 20
    assert error_of(outcome).details["stream"] == "stdout"


def test_exit_codes_and_signals_are_reported(hostile):
    assert error_of(run_hostile(hostile, "segfault")).exit.signal == "SIGSEGV"
    hard = run_hostile(hostile, "hard_exit_one")
    assert error_of(hard).exit.code == 1
    assert hard.stdout == "about to leave\n"
    assert "sys.exit(0)" in error_of(run_hostile(hostile, "exit_zero")).message


def test_invalid_results_name_the_offending_path(hostile):
    assert error_of(run_hostile(hostile, "return_nan")).path == "/options/temperature"
    assert error_of(run_hostile(hostile, "return_set")).path == "/tools"
    assert "no JSON request" in error_of(run_hostile(hostile, "return_none")).message


def test_deep_recursion_points_at_the_users_frame(hostile):
    error = error_of(run_hostile(hostile, "deep_recursion"))
    assert "RecursionError" in error.message
    assert error.traceback and error.traceback[-1].file == "lib/hostile.py"
    assert error.traceback[-1].function == "down"


@pytest.mark.parametrize("then", ["children_then_return", "children_then_hang"])
def test_children_and_a_daemonised_grandchild_are_all_ended(hostile, workspace, then):
    outcome = run_hostile(hostile, then)
    if then == "children_then_hang":
        assert error_of(outcome).kind == "timeout"
    else:
        assert outcome.status == "ok"
        assert outcome.result["system"] == "started 51"
    # Fifty children and a daemon ran `sleep 60`; none outlives the run.
    wait_for(lambda: not named(live_descendants(os.getpid()), "sleep"))


def test_a_syntax_error_is_a_load_failure_at_its_line(workspace, runner):
    (workspace.root / "lib" / "broken.py").write_text("def transform(payload):\n    return (\n")
    error = error_of(runner.run(hook="lib/broken.py:transform"))
    assert error.kind == "load_failed"
    assert "syntax error" in error.message
    assert error.traceback[0].file == "lib/broken.py"


def test_an_import_error_is_a_load_failure(workspace, runner):
    (workspace.root / "lib" / "needs.py").write_text("import not_a_module_anywhere\n")
    error = error_of(runner.run(hook="lib/needs.py:transform"))
    assert error.kind == "load_failed"
    assert "not_a_module_anywhere" in error.message


def test_a_missing_source_file(runner):
    error = error_of(runner.run(hook="lib/absent.py"))
    assert (error.kind, error.message) == (
        "source_missing",
        "the hook source 'lib/absent.py' does not exist",
    )


def test_a_source_that_is_a_named_pipe_is_not_a_file_and_nothing_waits_on_it(workspace, runner):
    os.mkfifo(workspace.root / "lib" / "pipe.py")
    error = error_of(runner.run(hook="lib/pipe.py"))
    assert (error.kind, error.message) == (
        "source_missing",
        "the hook source 'lib/pipe.py' is a named pipe, not a file",
    )


def test_a_source_through_dot_dot_is_refused_before_anything_runs(workspace, runner, tmp_path):
    (tmp_path / "outside.py").write_text("def main(p):\n    open('ran', 'w')\n")
    error = error_of(runner.run(hook="../outside.py"))
    assert error.kind == "source_outside_workspace"
    assert not (workspace.root / "ran").exists()


def test_a_source_through_a_symlink_is_refused(workspace, runner, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "evil.py").write_text("def main(p):\n    open('ran', 'w')\n")
    os.symlink(outside, workspace.root / "linked")
    error = error_of(runner.run(hook="linked/evil.py"))
    assert error.kind == "source_outside_workspace"
    assert not (workspace.root / "ran").exists()


def test_a_secret_of_the_studios_environment_never_reaches_a_hook(workspace, monkeypatch):
    monkeypatch.setenv("HOOKSTUDIO_TEST_SECRET", "s3cret")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "also-secret")
    shutil.copy(HOSTILE, workspace.root / "lib" / "hostile.py")
    live = LiveRunner(workspace)
    try:
        outcome = live.run(hook="lib/hostile.py:read_secret")
    finally:
        live.close()
    assert outcome.status == "ok", outcome.turn_error
    seen = json.loads(outcome.result["system"])
    assert seen["secret"] == "absent"
    allowed = {"PATH", "HOME", "LANG", "TZ", "TMPDIR", "WORKSPACE_VAR"}
    assert all(n in allowed or n.startswith("LC_") for n in seen["names"]), seen["names"]
    assert "WORKSPACE_VAR" in seen["names"]


def test_cancel_in_the_middle_of_a_run_is_immediate(hostile, workspace):
    # The workspace's deadline (30 s) is far beyond the cancel, so that on a loaded machine the
    # hook is never stopped by its timeout before the test has seen it start.
    handle = None

    async def go():
        nonlocal handle
        handle = hostile.runner.start("basic", hook="lib/hostile.py:start_then_hang")
        while not named(live_descendants(os.getpid()), STARTED.decode()):
            await asyncio.sleep(0.01)
        started = time.perf_counter()
        handle.cancel()
        outcome = await handle.outcome()
        return outcome, time.perf_counter() - started

    import asyncio

    outcome, took = hostile.call(go())
    error = error_of(outcome)
    assert (error.kind, error.reason) == ("cancelled", "aborted")
    # Milliseconds on an idle machine, seconds on a busy one; a cancel that waited for the hook
    # would take the 30 s it sleeps (and its deadline), three times this bound.
    assert took < 10.0
    assert hostile.run().status == "ok"


@pytest.fixture
def unsandboxed(workspace) -> Iterator[LiveRunner]:
    """Hooks run without the sandbox (turned off, as where the kernel refuses it), so that they
    can reach the fork server and its spares."""
    shutil.copy(HOSTILE, workspace.root / "lib" / "hostile.py")
    settings = json.loads((workspace.root / "hookstudio.json").read_text())
    write_json(workspace.root / "hookstudio.json", {**settings, "sandbox": {"enabled": False}})
    live = LiveRunner(workspace)
    yield live
    live.close()


def test_a_hook_that_kills_the_fork_server_fails_and_the_next_run_still_works(unsandboxed):
    error = error_of(unsandboxed.run(hook="lib/hostile.py:kill_the_fork_server"))
    assert error.kind == "worker_crashed"
    assert unsandboxed.run().status == "ok"


@pytest.mark.parametrize("hook", ["stop_the_fork_server", "stop_the_spares"])
def test_a_stopped_fork_server_or_spare_is_replaced_and_never_blamed_on_the_next_hook(
    unsandboxed, hook
):
    assert unsandboxed.run(hook=f"lib/hostile.py:{hook}").status == "ok"
    # The next runs get a working server and ready workers: none is given to a stopped process
    # (it would wait out the 30 s deadline) or waits for the acknowledgement a stopped server
    # never sends (the engine gives up on it after _ACKNOWLEDGE_S, 3 s). A run is milliseconds
    # on an idle machine, so the bound is that wait.
    for _ in range(2 * SPARES + 1):
        follow_up = unsandboxed.run()
        assert follow_up.status == "ok", follow_up.turn_error
        assert follow_up.duration_ms < _ACKNOWLEDGE_S * 1000


def test_a_sandboxed_hook_cannot_stop_or_kill_the_fork_server(hostile):
    for hook in ("kill_the_fork_server", "stop_the_fork_server"):
        outcome = hostile.run(hook=f"lib/hostile.py:{hook}")
        # Its parent is the namespace's first process, which ignores it.
        assert outcome.status in ("ok", "turn_error")
        assert hostile.run().status == "ok"


def test_two_hundred_runs_leak_no_descriptor_and_no_process(runner):
    runner.run()
    # The first run's worker may still be ending, beside the spare already made to replace it.
    wait_for(lambda: len(live_descendants(os.getpid())) <= 1 + 3 * SPARES)
    fds_before = runner.own_descriptors()
    threads_before = threading.active_count()
    for _ in range(200):
        assert runner.run().status == "ok"
    assert len(runner.held_spares()) <= SPARES
    # A run's channel is closed off its result's path, so either count may hold one still
    # closing; a leak would grow with the runs.
    wait_for(lambda: runner.own_descriptors() <= fds_before)
    # Only the fork server and its spares are left (in the sandbox a spare is three processes:
    # its helper, its namespace's first process and itself); the last worker's exit is not
    # waited for by its run, and a replacement spare may be starting, so this is waited for.
    wait_for(lambda: len(live_descendants(os.getpid())) <= 1 + 3 * SPARES)
    assert threading.active_count() == threads_before


def test_an_async_hook(hostile):
    outcome = hostile.run(hook="lib/hostile.py:async_ok")
    assert outcome.status == "ok"
    assert outcome.result == REQUEST


def test_a_fork_server_that_cannot_start_is_one_turn_error_and_one_record(workspace, tmp_path):
    from studio.core.records.store import RecordStore

    store = RecordStore.open(workspace.root)
    live = LiveRunner(workspace)
    live.runner.store = store
    try:
        live.call(live.runner.warm_up())
        (runtime,) = [r for r in live.runner._runtimes.values() if r.name == "python"]
        # Starting the interpreter fails as it would when the system has no process left.
        live.call(runtime.close())
        runtime._host.python = str(tmp_path / "no-such-python")
        outcome = live.run()
    finally:
        live.close()
    error = error_of(outcome)
    assert (error.kind, error.reason) == ("engine_failed", "callback")
    assert "could not start a worker for `transform`" in error.message
    assert "no-such-python" in error.message
    assert [r.status for r in store.list()] == ["turn_error"]


def test_a_forged_hash_is_not_taken_the_studio_hashes_what_it_received(hostile):
    from studio.core.pre_llm.decision_record import request_hash

    outcome = hostile.run(hook="lib/hostile.py:forge_a_hash")
    assert outcome.status == "ok"
    after = outcome.decision_record["requestHashAfter"]
    assert after == request_hash(outcome.result) and after != "0" * 64


@pytest.mark.parametrize(
    ("hook", "what"),
    [
        ("forge_a_timeout", "the failure kind 'timeout'"),
        ("forge_a_call", "a call whose depth is not a whole number"),
        ("forge_a_frame", "a traceback frame whose line is not a whole number"),
    ],
)
def test_a_forged_envelope_is_a_corrupted_channel_never_a_fact(hostile, hook, what):
    error = error_of(run_hostile(hostile, hook))
    assert error.kind == "channel_corrupted"
    assert what in error.message


def test_a_records_database_deleted_during_a_run_is_started_anew_and_said(unsandboxed, workspace):
    from studio.core.records.store import RecordStore

    store = RecordStore.open(workspace.root)
    unsandboxed.runner.store = store
    assert unsandboxed.run().status == "ok"
    store.flush()  # the first run is in the database the hook deletes
    outcome = unsandboxed.run(hook="lib/hostile.py:delete_the_records")
    assert outcome.status == "ok"
    (warning,) = [w["message"] for w in outcome.warnings]
    assert "was deleted or replaced while the studio had it open" in warning
    # The hook's own run is in the new database, and so is the next one.
    assert unsandboxed.run().warnings == []
    assert [r.hook_source for r in store.list()] == ["lib/policy.py", "lib/hostile.py"]
    store.close()
