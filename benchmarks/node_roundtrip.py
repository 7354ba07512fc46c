"""Round trip of a trivial TypeScript pre-LLM hook, against the reference runtime's model and
against the same hook in Python, all measured in one run.

    .venv/bin/python benchmarks/node_roundtrip.py [--n 300] [--rounds 3] [--json]

Builds a temporary workspace with a hook that returns the request it gets, in TypeScript and
in Python, and measures through the studio's runner (the code of ``hook-studio bench``): a
small request one run at a time, two at a time, and a 1 MB request. The reference model
(``node_reference_model.mjs``: a fresh Worker and vm context created for each call) runs the
same hook on the same Node. The Node floor (``node_floor.mjs isolated``: a warm Node process
answering the small request on a pipe from a fresh Worker made for each request, the reference's
unit of isolation, as the fork floor forks a child per request) is the anchor of the trivial round
trip. The bare pipe (``node_floor.mjs bare``: the warm process answers itself, with no per-call
isolation) is printed for information. Each figure is the median over ``--rounds`` rounds, since
the machine is shared and its speed varies.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from engine_roundtrip import one_megabyte_request

from studio.core.workspace.folder import Workspace
from studio.engine.bench import bench, percentile
from studio.engine.node_binary import find_node
from studio.engine.runner import Runner

MODEL = Path(__file__).with_name("node_reference_model.mjs")
FLOOR = Path(__file__).with_name("node_floor.mjs")
TS_HOOK = "export function main(payload: { request: object }) {\n  return payload.request;\n}\n"
PY_HOOK = "def main(payload):\n    return payload['request']\n"


def build_workspace(root: Path) -> Workspace:
    (root / "lib").mkdir(parents=True)
    (root / "samples").mkdir()
    (root / "lib" / "echo.ts").write_text(TS_HOOK)
    (root / "lib" / "echo.py").write_text(PY_HOOK)
    # As in ADF, a hooked call needs the agent's execution limit: there is no default.
    agent = {"pre_llm_hook": {"source": "lib/echo.ts"}, "limits": {"execution_timeout_ms": 60000}}
    (root / "agent.json").write_text(json.dumps(agent))
    small = {
        "system": "You are terse.",
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"name": "search", "description": "Search", "input_schema": {"type": "object"}}],
        "options": {"temperature": 0.2},
    }
    (root / "samples" / "small.json").write_text(json.dumps({"request": small}))
    (root / "samples" / "one-mb.json").write_text(json.dumps({"request": one_megabyte_request()}))
    return Workspace.open(root)


async def studio_round(workspace: Workspace, n: int) -> dict[str, dict[str, Any]]:
    cases = {
        "ts_small": ("lib/echo.ts", "small", n, 1),
        "ts_small_x2": ("lib/echo.ts", "small", n * 2, 2),
        "ts_1mb": ("lib/echo.ts", "one-mb", max(n // 5, 20), 1),
        "py_small": ("lib/echo.py", "small", n, 1),
        "py_1mb": ("lib/echo.py", "one-mb", max(n // 5, 20), 1),
    }
    figures = {}
    for name, (hook, sample, count, concurrency) in cases.items():
        runner = Runner(workspace)
        try:
            figures[name] = await bench(
                runner, sample, n=count, concurrency=concurrency, hook=hook, baseline_runs=2
            )
        finally:
            await runner.close()
    return figures


def node_floor(workspace: Workspace, n: int, mode: str = "isolated") -> dict[str, Any]:
    """A warm Node process answering the small request on a pipe, one at a time: from a fresh
    Worker per request (``isolated``, the floor of a TypeScript hook's round trip) or by itself
    (``bare``)."""
    request = (workspace.root / "samples" / "small.json").read_text().replace("\n", "") + "\n"
    node = subprocess.Popen(
        [find_node().path, "--no-warnings", str(FLOOR), mode],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert node.stdin is not None and node.stdout is not None
    times = []
    try:
        for i in range(n + 20):
            started = time.perf_counter()
            node.stdin.write(request)
            node.stdin.flush()
            json.loads(node.stdout.readline())
            if i >= 20:  # the first ones warm Node's JIT
                times.append((time.perf_counter() - started) * 1000)
    finally:
        node.stdin.close()
        node.wait()
    return {
        "n": n,
        "concurrency": 1,
        "p50_ms": round(percentile(times, 0.5), 3),
        "p90_ms": round(percentile(times, 0.9), 3),
        "runs_per_s": round(n / (sum(times) / 1000), 1),
    }


def model_round(workspace: Workspace, n: int, concurrency: int) -> dict[str, Any]:
    root = workspace.root
    done = subprocess.run(
        [
            find_node().path,
            "--no-warnings",
            str(MODEL),
            str(root / "lib" / "echo.ts"),
            str(root / "samples" / "small.json"),
            str(n),
            str(concurrency),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    measured = json.loads(done.stdout)
    times = measured["times"]
    return {
        "n": n,
        "concurrency": concurrency,
        "p50_ms": round(percentile(times, 0.5), 3),
        "p90_ms": round(percentile(times, 0.9), 3),
        "runs_per_s": round(n / (measured["wall_ms"] / 1000), 1),
    }


def median_of(rounds: list[dict[str, Any]], key: str) -> float:
    return round(statistics.median(r[key] for r in rounds), 3)


def summary(rounds: list[dict[str, dict[str, Any]]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for case in rounds[0]:
        rows = [r[case] for r in rounds]
        out[case] = {
            "n": rows[0]["n"],
            "concurrency": rows[0]["concurrency"],
            "p50_ms": median_of(rows, "p50_ms"),
            "p90_ms": median_of(rows, "p90_ms"),
            "runs_per_s": median_of(rows, "runs_per_s"),
            "failures": sum(r.get("failures", 0) for r in rows),
        }
    out["ratios"] = {
        "ts_p50_vs_node_floor_p50": round(
            statistics.median(r["ts_small"]["p50_ms"] / r["node_floor"]["p50_ms"] for r in rounds),
            3,
        ),
        "ts_p50_vs_bare_pipe_p50": round(
            statistics.median(r["ts_small"]["p50_ms"] / r["node_pipe"]["p50_ms"] for r in rounds),
            3,
        ),
        "ts_p50_vs_reference_model_p50": round(
            out["ts_small"]["p50_ms"] / out["model_small"]["p50_ms"], 3
        ),
        "ts_1mb_vs_python_1mb": round(out["ts_1mb"]["p50_ms"] / out["py_1mb"]["p50_ms"], 3),
        "ts_vs_python_small": round(out["ts_small"]["p50_ms"] / out["py_small"]["p50_ms"], 3),
    }
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rounds = []
    with tempfile.TemporaryDirectory() as tmp:
        workspace = build_workspace(Path(tmp) / "ws")
        for _ in range(args.rounds):
            figures = {
                "node_floor": node_floor(workspace, args.n),
                "node_pipe": node_floor(workspace, args.n, "bare"),
            }
            figures.update(asyncio.run(studio_round(workspace, args.n)))
            figures["model_small"] = model_round(workspace, args.n, 1)
            figures["model_small_x2"] = model_round(workspace, args.n * 2, 2)
            rounds.append(figures)
    result = summary(rounds)
    if args.json:
        print(json.dumps(result))
        return 0
    node = find_node()
    python = sys.version.split()[0]
    print(f"Node {node.version_text}; Python {python}; median of {args.rounds} rounds")
    labels = {
        "ts_small": "TS trivial hook, one at a time",
        "ts_small_x2": "TS trivial hook, two at a time",
        "ts_1mb": "TS 1 MB request",
        "py_small": "Python trivial hook",
        "py_1mb": "Python 1 MB request",
        "node_floor": "warm Node, fresh Worker (floor)",
        "node_pipe": "warm Node, bare pipe",
        "model_small": "reference model, one at a time",
        "model_small_x2": "reference model, two at a time",
    }
    for case, label in labels.items():
        row = result[case]
        print(
            f"{label:<32} n={row['n']:<5} p50 {row['p50_ms']:8.2f} ms  p90 {row['p90_ms']:8.2f}"
            f"  {row['runs_per_s']:7.1f} runs/s  failures {row.get('failures', 0)}"
        )
    ratios = result["ratios"]
    print(f"TS p50 / Node floor p50:      {ratios['ts_p50_vs_node_floor_p50']:.3f}")
    print(
        f"TS p50 / bare pipe p50:       {ratios['ts_p50_vs_bare_pipe_p50']:.3f}"
        "  (information: the bare pipe isolates nothing per call)"
    )
    print(f"TS p50 / reference model p50: {ratios['ts_p50_vs_reference_model_p50']:.3f}")
    print(f"TS 1 MB / Python 1 MB:        {ratios['ts_1mb_vs_python_1mb']:.3f}")
    print(f"TS p50 / Python p50:          {ratios['ts_vs_python_small']:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
