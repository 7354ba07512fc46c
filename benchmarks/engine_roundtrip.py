"""Round trip of a trivial pre-LLM hook through a fresh worker, against the fork floor.

    .venv/bin/python benchmarks/engine_roundtrip.py [--n 300] [--rounds 3] [--sandbox on|off|both]
                                                    [--large] [--json]

Builds a temporary workspace with a hook that returns the request it gets and measures with the
same code as ``hook-studio bench``, every run recorded in the workspace's records as the studio
does: a small request one run at a time and two at a time (``--large`` adds a 1 MB request).
Each round also measures the fork floor (``fork_floor.py``: a warm parent forking a child that
answers the same small request on a pipe), one and two at a time, so every figure comes with its
ratio to the floor measured beside it. With ``--sandbox both`` (the default) each case runs
without the sandbox and with it. Figures are medians over the rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tool_loop_request import tool_loop_request

from studio.core.records.store import RecordStore
from studio.core.workspace.folder import Workspace
from studio.engine.bench import bench, percentile
from studio.engine.runner import Runner

FLOOR = Path(__file__).with_name("fork_floor.py")


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


def build_workspace(root: Path, sandbox: bool = True, large: bool = True) -> Workspace:
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
    if large:
        big = json.dumps({"request": one_megabyte_request()})
        (root / "samples" / "one-mb.json").write_text(big)
    return Workspace.open(root)


def fork_floor(n: int, concurrency: int) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-I", str(FLOOR), "--n", str(n), "--concurrency", str(concurrency)],
        check=True,
        capture_output=True,
        text=True,
    )
    measured = json.loads(done.stdout)
    times = measured["times_ms"]
    return {
        "n": n,
        "concurrency": concurrency,
        "p50_ms": round(percentile(times, 0.5), 3),
        "p90_ms": round(percentile(times, 0.9), 3),
        "runs_per_s": round(n / measured["wall_s"], 1),
    }


async def studio_case(
    workspace: Workspace, sample: str, n: int, concurrency: int
) -> tuple[dict[str, Any], bool]:
    store = RecordStore.open(workspace.root)
    runner = Runner(workspace, store=store)
    try:
        figures = await bench(runner, sample, n=n, concurrency=concurrency, baseline_runs=2)
        fallback = bool(runner.sandbox_notices())
    finally:
        await runner.close()
        store.close()
    return figures, fallback


def one_round(workspaces: dict[str, Workspace], n: int, large: bool) -> dict[str, dict[str, Any]]:
    figures: dict[str, dict[str, Any]] = {
        "floor": fork_floor(n, 1),
        "floor_x2": fork_floor(n * 2, 2),
    }
    cases = [("small", "small", n, 1), ("small_x2", "small", n * 2, 2)]
    if large:
        cases.append(("1mb", "one-mb", max(n // 5, 20), 1))
    for mode, workspace in workspaces.items():
        for name, sample, count, concurrency in cases:
            row, fallback = asyncio.run(studio_case(workspace, sample, count, concurrency))
            row["sandbox"] = "fallback" if fallback else mode
            figures[f"{name}_{mode}"] = row
    return figures


def summary(rounds: list[dict[str, dict[str, Any]]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for case in rounds[0]:
        rows = [r[case] for r in rounds]
        out[case] = {
            "n": rows[0]["n"],
            "concurrency": rows[0]["concurrency"],
            **{
                key: round(statistics.median(r[key] for r in rows), 3)
                for key in ("p50_ms", "p90_ms", "runs_per_s")
            },
            "failures": sum(r.get("failures", 0) for r in rows),
            **({"sandbox": rows[0]["sandbox"]} if "sandbox" in rows[0] else {}),
        }
    ratios: dict[str, float] = {}
    for mode in ("off", "on"):
        if f"small_{mode}" not in out:
            continue
        # Each round's ratio against the floor of that round, then the median of those.
        ratios[f"p50_vs_floor_{mode}"] = round(
            statistics.median(r[f"small_{mode}"]["p50_ms"] / r["floor"]["p50_ms"] for r in rounds),
            3,
        )
        ratios[f"rate_x2_vs_floor_x2_{mode}"] = round(
            statistics.median(
                r[f"small_x2_{mode}"]["runs_per_s"] / r["floor_x2"]["runs_per_s"] for r in rounds
            ),
            3,
        )
    out["ratios"] = ratios
    return out


LABELS = {
    "small": "trivial hook, one at a time",
    "small_x2": "trivial hook, two at a time",
    "1mb": "1 MB request, one at a time",
}


def cases_for_table(result: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per case and sandbox mode, each with the fork floor at its own concurrency."""
    rows = []
    for case, row in result.items():
        name = case.rpartition("_")[0]
        if name not in LABELS:
            continue
        floor = result["floor_x2" if row["concurrency"] == 2 else "floor"]
        rows.append(
            {
                "case": LABELS[name],
                **row,
                "fork_floor_p50_ms": floor["p50_ms"],
                "fork_floor_runs_per_s": floor["runs_per_s"],
            }
        )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sandbox", choices=("on", "off", "both"), default="both")
    parser.add_argument("--large", action="store_true", help="add a 1 MB request")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    modes = ["off", "on"] if args.sandbox == "both" else [args.sandbox]
    with tempfile.TemporaryDirectory() as tmp:
        workspaces = {
            mode: build_workspace(Path(tmp) / mode, mode == "on", args.large) for mode in modes
        }
        rounds = [one_round(workspaces, args.n, args.large) for _ in range(args.rounds)]
    result = summary(rounds)
    if args.json:
        print(json.dumps({**result, "cases": cases_for_table(result)}))
        return 0
    print(f"Python {sys.version.split()[0]}; median of {args.rounds} rounds of n={args.n}")
    floor, floor_x2 = result["floor"], result["floor_x2"]
    for case, row in result.items():
        if case == "ratios":
            continue
        anchor = floor_x2 if row["concurrency"] == 2 else floor
        label = case + (f" (sandbox {row['sandbox']})" if "sandbox" in row else "")
        print(
            f"{label:<28} n={row['n']:<5} p50 {row['p50_ms']:7.2f} ms  p90 {row['p90_ms']:7.2f}"
            f"  {row['runs_per_s']:7.1f} runs/s  p50/floor {row['p50_ms'] / anchor['p50_ms']:5.2f}"
            f"  rate/floor {row['runs_per_s'] / anchor['runs_per_s']:5.2f}"
            f"  failures {row.get('failures', 0)}"
        )
    for name, value in result["ratios"].items():
        print(f"{name:<28} {value:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
