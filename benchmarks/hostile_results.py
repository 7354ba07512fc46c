"""How the window holds up when a hook returns what no request should hold: the GUI thread's
longest stall from a run's start until its diff is on screen, then while each result tab is
opened, for one hostile result after another.

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/hostile_results.py [--runs N] [--json]

Each case is a Python pre-LLM hook on the bundled workspace's support-ticket sample, run in the
studio's own window (the window `hook-studio` shows), each case in a fresh process; the figure
is the longest gap between ticks of a 10 ms timer on the GUI thread, the median over the runs.
The engine's own work on such a result (reading, hashing, recording tens of megabytes) runs on
its thread and shows here only where it holds Python's interpreter.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ROOT = Path(__file__).resolve().parents[1]

HOOKS = """
def many_tools(payload):
    request = payload["request"]
    request["tools"] = [
        {"name": f"t{i}", "description": "d" * 50, "input_schema": {"type": "object"}}
        for i in range(100_000)
    ]
    return request

def huge_string(payload):
    request = payload["request"]
    request["system"] = "x" * 50_000_000
    return request

def one_long_message(payload):
    request = payload["request"]
    request["messages"][0]["content"] = "word " * 4_000_000
    return request

def many_messages(payload):
    request = payload["request"]
    request["messages"] = [{"role": "user", "content": f"m{i}"} for i in range(300_000)]
    return request

def deep_schema(payload):
    request = payload["request"]
    value = {}
    for _ in range(900):
        value = {"a": value}
    request["tools"][0]["input_schema"] = {"type": "object", "properties": {"x": value}}
    return request

def long_printed_lines(payload):
    for _ in range(50):
        print("y" * 1_000_000)
    return payload["request"]

def many_printed_lines(payload):
    line = "z" * 99
    for _ in range(400_000):
        print(line)
    return payload["request"]
"""
CASES = {
    "many_tools": "100,000 tools (100,000 warnings)",
    "huge_string": "a 50 MB system prompt without a space",
    "one_long_message": "a 20 MB message",
    "many_messages": "300,000 messages",
    "deep_schema": "a tool schema 900 levels deep",
    "long_printed_lines": "50 printed lines of 1 MB (past the output limit)",
    "many_printed_lines": "40 MB printed in short lines (the output limit raised to 64 MB)",
}
RAISED_OUTPUT_KB = {"many_printed_lines": 64 << 10}


def _workspace(folder: Path, case: str) -> Path:
    workspace = folder / "ws"
    shutil.copytree(
        ROOT / "resources" / "sample-workspace",
        workspace,
        ignore=shutil.ignore_patterns(".hookstudio"),
    )
    (workspace / "lib" / "hostile.py").write_text(HOOKS)
    agent = json.loads((workspace / "agent.json").read_text())
    agent["pre_llm_hook"]["source"] = f"lib/hostile.py:{case}"
    agent["pre_llm_hook"]["timeout_ms"] = 120_000
    agent["limits"]["execution_timeout_ms"] = 120_000
    (workspace / "agent.json").write_text(json.dumps(agent, indent=2))
    if case in RAISED_OUTPUT_KB:
        settings = json.loads((workspace / "hookstudio.json").read_text())
        settings["limits"]["output_kb"] = RAISED_OUTPUT_KB[case]
        (workspace / "hookstudio.json").write_text(json.dumps(settings, indent=2))
    return workspace


def stall_of_one_run(workspace: Path) -> dict[str, Any]:
    """In this process: the window on ``workspace``, one run of its hook, then each result tab
    opened; the longest gap of the GUI thread's timer, and what the run ended as."""
    from gui_responsiveness import run_until, ticking, window_with_sample

    app, window = window_with_sample(workspace, "support-ticket")
    finished: list[Any] = []
    window.run_finished.connect(finished.append)
    gaps, timer = ticking()
    window.run_selected()
    run_until(lambda: bool(finished) and window.results.diff_ready, seconds=300)
    tabs = window.results.run.tabs
    for index in range(tabs.count()):
        if tabs.isTabVisible(index):
            tabs.setCurrentIndex(index)
            app.processEvents()
    timer.stop()
    outcome = finished[0]
    window.undo_stack.setClean()
    window.close()
    app.processEvents()
    return {
        "status": outcome.status,
        "turn_error": outcome.turn_error.kind if outcome.turn_error else None,
        "stall_ms": max(gaps.gaps, default=0),
    }


def measure(cases: list[str], runs: int) -> dict[str, Any]:
    from gui_responsiveness import json_of_child

    figures: dict[str, Any] = {}
    for case in cases:
        rows = []
        for _ in range(runs):
            with tempfile.TemporaryDirectory() as tmp:
                workspace = _workspace(Path(tmp), case)
                arguments = [__file__, "--one", str(workspace)]
                rows.append(json_of_child(arguments, f"the window of {case}"))
        figures[case] = {
            "result": CASES[case],
            "status": rows[0]["turn_error"] or rows[0]["status"],
            "stall_ms_median": statistics.median(row["stall_ms"] for row in rows),
            "stall_ms_max": max(row["stall_ms"] for row in rows),
        }
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs of each case (default 3)")
    parser.add_argument("--case", action="append", choices=sorted(CASES), help="only these")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--one", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one is not None:
        print(json.dumps(stall_of_one_run(args.one)))
        return 0
    figures = measure(args.case or list(CASES), max(1, args.runs))
    if args.json:
        print(json.dumps(figures))
        return 0
    python = sys.version.split()[0]
    print(f"longest GUI stall, median of {max(1, args.runs)} runs (Python {python})")
    for row in figures.values():
        print(
            f"{row['result']:<50} {row['status']:<14} {row['stall_ms_median']:>6} ms"
            f"  (max {row['stall_ms_max']} ms)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
