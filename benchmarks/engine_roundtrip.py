"""Round trip of a trivial pre-LLM hook through a fresh worker, against a fresh interpreter.

    .venv/bin/python benchmarks/engine_roundtrip.py [--n 500] [--sandbox on|off|both] [--json]

Builds a temporary workspace with a hook that returns the request it gets, then measures with
the same code as ``hook-studio bench``: a small request one run at a time, two at a time, and a
1 MB request. Each figure comes with the median start of ``python -I -c pass`` measured in the
same run, since the machine's speed varies. With ``--sandbox both`` (the default) each case runs
without the sandbox and then with it, and the sandbox's cost is the ratio of the two medians.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path

from tool_loop_request import tool_loop_request

from studio.core.workspace.folder import Workspace
from studio.engine.bench import bench
from studio.engine.runner import Runner


def one_megabyte_request() -> dict:
    return tool_loop_request(
        rounds=400,
        question="lorem ipsum " * 100,
        text="checking " * 40,
        query="x" * 80,
        result="r" * 300,
        tools=50,
        description="d" * 100,
        options={"maxTokens": 100},
    )


def build_workspace(root: Path, sandbox: bool = True) -> Workspace:
    (root / "lib").mkdir(parents=True)
    settings = {"version": 1, "sandbox": {"enabled": sandbox}}
    (root / "hookstudio.json").write_text(json.dumps(settings))
    (root / "samples").mkdir()
    (root / "lib" / "echo.py").write_text("def main(payload):\n    return payload['request']\n")
    # As in ADF, a hooked call needs the agent's execution limit: there is no default.
    agent = {"pre_llm_hook": {"source": "lib/echo.py"}, "limits": {"execution_timeout_ms": 60000}}
    (root / "agent.json").write_text(json.dumps(agent))
    small = {
        "system": "You are terse.",
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"name": "search", "description": "Search", "input_schema": {"type": "object"}}],
        "options": {"temperature": 0.2},
    }
    (root / "samples" / "small.json").write_text(json.dumps({"request": small}))
    big = json.dumps({"request": one_megabyte_request()})
    (root / "samples" / "one-mb.json").write_text(big)
    return Workspace.open(root)


async def measure(workspaces: dict[str, Workspace], n: int) -> list[dict]:
    rows = []
    for label, sample, count, concurrency in (
        ("trivial hook, one at a time", "small", n, 1),
        ("trivial hook, two at a time", "small", n * 2, 2),
        ("1 MB request, one at a time", "one-mb", max(n // 5, 20), 1),
    ):
        for sandbox, workspace in workspaces.items():
            runner = Runner(workspace)
            try:
                figures = await bench(runner, sample, n=count, concurrency=concurrency)
                notices = runner.sandbox_notices()
            finally:
                await runner.close()
            if notices:
                sandbox = "fallback"
            rows.append({"case": label, "sandbox": sandbox, **figures})
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=500)
    parser.add_argument("--sandbox", choices=("on", "off", "both"), default="both")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    modes = ["off", "on"] if args.sandbox == "both" else [args.sandbox]
    with tempfile.TemporaryDirectory() as tmp:
        workspaces = {mode: build_workspace(Path(tmp) / mode, mode == "on") for mode in modes}
        size = (workspaces[modes[0]].root / "samples" / "one-mb.json").stat().st_size
        rows = asyncio.run(measure(workspaces, args.n))
    if args.json:
        print(json.dumps({"one_mb_sample_bytes": size, "cases": rows}))
        return 0
    print(f"Python {sys.version.split()[0]}; 1 MB sample: {size:,} bytes")
    off = {row["case"]: row for row in rows if row["sandbox"] == "off"}
    for row in rows:
        cost = ""
        if row["sandbox"] != "off" and row["case"] in off:
            cost = f"  sandbox/none p50 {row['p50_ms'] / off[row['case']]['p50_ms']:.2f} x"
        print(
            f"{row['case']:<30} sandbox {row['sandbox']:<8} n={row['n']:<5}"
            f" p50 {row['p50_ms']:7.2f} ms"
            f"  p90 {row['p90_ms']:7.2f}"
            f"  p99 {row['p99_ms']:7.2f}  max {row['max_ms']:7.2f}  {row['runs_per_s']:7.1f} runs/s"
            f"  failures {row['failures']}  python -I start p50 {row['python_start_p50_ms']:.1f} ms"
            f"  (p50 = {row['p50_vs_python_start']:.3f} x){cost}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
