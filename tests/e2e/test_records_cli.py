"""``hook-studio records`` as a user runs it: a real process over a store filled through the API."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from studio.core.records.store import MIGRATIONS, RecordStore, store_path
from studio.core.run_outcome import RunOutcome
from studio.core.turn_error import HookRef, turn_error

HOOK = HookRef(source="lib/policy.py", function="transform", contract="pre_llm")
# 2023-11-14T22:13:20 UTC
T0 = 1_700_000_000.0


def run(*args: str, tz: str = "UTC") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "studio", "records", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "TZ": tz},
    )


def outcomes() -> list[RunOutcome]:
    return [
        RunOutcome(
            contract="pre_llm",
            status="ok",
            started_at=T0,
            sample="basic",
            loop="main",
            hook=HOOK,
            duration_ms=3.25,
            input={"messages": [{"role": "user", "content": "hi"}]},
            result={"messages": [{"role": "user", "content": "hi!"}]},
            stdout="printed\n",
        ),
        RunOutcome(
            contract="pre_llm",
            status="turn_error",
            started_at=T0 + 61,
            sample="slow_sample",
            loop="researcher",
            hook=HOOK,
            duration_ms=1500.0,
            turn_error=turn_error("timeout", "`transform` did not return within 1500 ms"),
        ),
        RunOutcome(
            contract="step",
            status="not_applied",
            started_at=T0 + 3600,
            sample="step",
            duration_ms=0.5,
        ),
    ]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    return folder


@pytest.fixture
def filled(workspace: Path) -> tuple[Path, list[RunOutcome]]:
    runs = outcomes()
    with RecordStore.open(workspace) as store:
        for outcome in runs:
            store.add(outcome)
    return workspace, runs


def assert_usage_error(done: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stdout == ""
    assert done.stderr.startswith("hook-studio: ")
    assert "Traceback" not in done.stderr
    for needle in needles:
        assert needle in done.stderr


class TestTable:
    def test_newest_first_aligned(self, filled):
        workspace, _ = filled
        done = run(str(workspace))
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        assert len(lines) == 4
        assert lines[0].split() == [
            "time",
            "contract",
            "hook",
            "loop",
            "sample",
            "status",
            "duration",
            "ms",
        ]
        assert lines[1].split() == [
            "2023-11-14T23:13:20",
            "step",
            "-",
            "-",
            "step",
            "not_applied",
            "0.5",
        ]
        assert lines[2].split() == [
            "2023-11-14T22:14:21",
            "pre_llm",
            "lib/policy.py:transform",
            "researcher",
            "slow_sample",
            "turn_error/timeout",
            "1500.0",
        ]
        assert lines[3].split() == [
            "2023-11-14T22:13:20",
            "pre_llm",
            "lib/policy.py:transform",
            "main",
            "basic",
            "ok",
            "3.2",
        ]
        assert len({len(line) for line in lines}) == 1  # the duration is right-aligned
        assert lines[2].index("researcher") == lines[3].index("main") == lines[0].index("loop")

    def test_local_time(self, filled):
        workspace, _ = filled
        done = run(str(workspace), "--limit", "1", tz="JST-9")
        assert done.stdout.splitlines()[1].startswith("2023-11-15T08:13:20 ")

    def test_limit(self, filled):
        workspace, _ = filled
        done = run(str(workspace), "--limit", "2")
        assert done.returncode == 0
        lines = done.stdout.splitlines()
        assert len(lines) == 3
        assert "not_applied" in lines[1]

    def test_no_store_yet_says_so_and_creates_nothing(self, workspace):
        done = run(str(workspace))
        assert (done.returncode, done.stdout, done.stderr) == (0, "no records\n", "")
        assert list(workspace.iterdir()) == []

    def test_an_empty_store(self, workspace):
        RecordStore.open(workspace).close()
        done = run(str(workspace))
        assert (done.returncode, done.stdout) == (0, "no records\n")


class TestJsonl:
    def test_one_object_per_line_newest_first(self, filled):
        workspace, runs = filled
        with RecordStore.open(workspace) as store:
            store.clear_payloads([runs[1].run_id])
        done = run(str(workspace), "--jsonl")
        assert done.returncode == 0, done.stderr
        lines = [json.loads(line) for line in done.stdout.splitlines()]
        assert [line["run_id"] for line in lines] == [r.run_id for r in reversed(runs)]
        assert lines[1]["payload"] is None
        assert lines[1]["turn_error"]["kind"] == "timeout"
        assert "message" not in lines[1]["turn_error"]
        assert lines[2]["payload"]["result"] == runs[0].result
        assert lines[2]["payload"]["stdout"] == "printed\n"
        assert lines[2]["hook"] == {
            "source": "lib/policy.py",
            "function": "transform",
            "contract": "pre_llm",
            "position": None,
            "chain": None,
        }

    def test_limit(self, filled):
        workspace, runs = filled
        done = run(str(workspace), "--jsonl", "--limit", "1")
        assert [json.loads(x)["run_id"] for x in done.stdout.splitlines()] == [runs[2].run_id]

    def test_an_empty_store_prints_nothing(self, workspace):
        done = run(str(workspace), "--jsonl")
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
        RecordStore.open(workspace).close()
        done = run(str(workspace), "--jsonl")
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


class TestProblems:
    def test_not_a_folder(self, tmp_path):
        assert_usage_error(run(str(tmp_path / "missing")), "missing: no such workspace folder")
        file = tmp_path / "file.txt"
        file.write_text("x")
        assert_usage_error(run(str(file), "--jsonl"), "file.txt: is not a SQLite database")

    def test_a_store_that_is_not_a_database(self, workspace):
        path = store_path(workspace)
        path.parent.mkdir()
        path.write_text("not a database\n" * 100)
        before = path.read_bytes()
        assert_usage_error(run(str(workspace)), str(path), "not a SQLite database")
        assert_usage_error(run(str(workspace), "--jsonl"), str(path))
        assert path.read_bytes() == before
        assert sorted(p.name for p in path.parent.iterdir()) == ["records.sqlite3"]

    def test_a_store_from_a_newer_studio(self, workspace):
        def v2(db):
            db.execute("CREATE TABLE later (x)")

        store_path(workspace).parent.mkdir()
        with RecordStore(store_path(workspace), migrations=(*MIGRATIONS, v2)) as store:
            store.add(outcomes()[0])
        before = store_path(workspace).read_bytes()
        assert_usage_error(run(str(workspace)), f"schema version {len(MIGRATIONS) + 1}")
        assert store_path(workspace).read_bytes() == before

    def test_a_bad_limit(self, filled):
        workspace, _ = filled
        assert_usage_error(run(str(workspace), "--limit", "0"), "--limit 0")
        done = run(str(workspace), "--limit", "many")
        assert done.returncode == 2
        assert "Traceback" not in done.stderr

    def test_listed_in_the_help(self):
        done = subprocess.run(
            [sys.executable, "-m", "studio", "records", "--help"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0
        assert "--jsonl" in done.stdout
        assert "--limit" in done.stdout
