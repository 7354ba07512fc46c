"""Large pre-LLM requests through the engine, against parsing and writing the same bytes.

    .venv/bin/python benchmarks/large_request.py [--runs 15] [--sizes 1,3,10]
        [--sandbox on|off|both] [--hook echo|edit|both] [--settle-ms 150] [--json]

Builds a temporary workspace with one sample per size (megabytes of 10**6 bytes, the tool-loop
request of ``tool_loop_request.py`` grown to the size) and runs each sample through the engine's
``Runner`` as ``hook-studio bench`` does: a fresh worker per run, the result read back, checked
and given its decision record (no record store, as there). The anchor is ``json.loads`` plus
``json.dumps`` of the sample's own bytes, timed in the same process; the heap is collected
before each timed step, so that neither pays for the other's garbage. It prints the medians,
their ratio (the goal is at most 2) and milliseconds per megabyte for each size (the goal: the
same at every size).

Anchors and runs alternate, an anchor first and last, and each run is compared with the mean of
the two anchors timed just before and just after it: the ratio printed is the median of those
per-run ratios, so that a minute in which a shared machine is slower counts against both
sides of the ratio alike, instead of against whichever median it fell in. A smaller sample,
whose run is short and therefore noisier, gets more runs (``--runs`` at 10 MB and above, up to
five times as many below), so that its ratio is as steady as the larger ones'. Each timed step
(run or anchor) starts after ``--settle-ms`` of idle time: a run's worker processes end, and the
spare made to replace it readies its heap, after the run has returned, off its path; on a
machine of two processors, with runs back to back, that work fell into whichever step came
next. Now each step starts on the same quiet machine, as a run the user starts does.
``--settle-ms 0`` times the steps back to back, as this benchmark did before.

``--hook echo`` is the trivial hook of the goal: it returns the request it gets. ``--hook edit``
changes the system prompt, so the studio checks and hashes the whole returned request anew.
``--sandbox both`` (the default) runs everything with the sandbox on (the default of
hookstudio.json) and with ``"sandbox": {"enabled": false}``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tool_loop_request import tool_loop_request

from studio.core.workspace.folder import Workspace
from studio.engine.runner import Runner

MB = 10**6
GOAL_RATIO = 2.0
HOOKS = {
    "echo": "def main(payload):\n    return payload['request']\n",
    "edit": (
        "def main(payload):\n"
        "    request = payload['request']\n"
        "    request['system'] += ' Be brief.'\n"
        "    return request\n"
    ),
}


def request_of_rounds(rounds: int) -> dict[str, Any]:
    return tool_loop_request(
        rounds=rounds,
        question="lorem ipsum " * 100,
        text="checking " * 40,
        query="x" * 80,
        result="r" * 300,
        tools=50,
        description="d" * 100,
        options={"maxTokens": 100},
    )


def sample_bytes(rounds: int) -> bytes:
    document = {"loop": "main", "request": request_of_rounds(rounds)}
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode()


def sample_of_size(megabytes: float) -> bytes:
    """A sample of about ``megabytes`` MB: the rounds grown in proportion to a measured one."""
    probe = 100
    per_round = (len(sample_bytes(2 * probe)) - len(sample_bytes(probe))) / probe
    fixed = len(sample_bytes(probe)) - probe * per_round
    return sample_bytes(max(1, round((megabytes * MB - fixed) / per_round)))


def build_workspace(root: Path, samples: dict[str, bytes], sandbox: bool) -> Workspace:
    (root / "lib").mkdir(parents=True)
    (root / "samples").mkdir()
    settings = {"version": 1, "sandbox": {"enabled": sandbox}}
    (root / "hookstudio.json").write_text(json.dumps(settings))
    for name, text in HOOKS.items():
        (root / "lib" / f"{name}.py").write_text(text)
    agent = {"pre_llm_hook": {"source": "lib/echo.py"}, "limits": {"execution_timeout_ms": 60000}}
    (root / "agent.json").write_text(json.dumps(agent))
    for name, data in samples.items():
        (root / "samples" / f"{name}.json").write_bytes(data)
    return Workspace.open(root)


def anchor_ms(data: bytes) -> float:
    started = time.perf_counter()
    json.dumps(json.loads(data))
    return (time.perf_counter() - started) * 1000


def runs_for(size: int, runs: int) -> int:
    """``runs`` for a sample of 10 MB or more; more for a smaller one, whose run is shorter and
    more at the mercy of a moment's load, up to five times as many."""
    return runs * max(1, min(MOST_RUNS_FACTOR, round(10 * MB / size)))


MOST_RUNS_FACTOR = 5
SETTLE_MS = 150.0
"""Long enough for the spare that replaces a run's worker to be made and readied (the engine
does that off the run's path), so that it does not fall into the next timed step."""


def quartiles(values: list[float]) -> tuple[float, float]:
    """The first and third quartiles (a single value is both)."""
    if len(values) < 2:
        return values[0], values[0]
    low, _, high = statistics.quantiles(values, n=4)
    return low, high


async def timed_run(runner: Runner, name: str, source: str, settle_s: float) -> float:
    await asyncio.sleep(settle_s)
    gc.collect()
    started = time.perf_counter()
    outcome = await runner.run(name, hook=source)
    elapsed = (time.perf_counter() - started) * 1000
    if outcome.status != "ok":
        raise SystemExit(f"{name}: the run ended {outcome.status}: {outcome.turn_error}")
    return elapsed


def timed_anchor(data: bytes, settle_s: float) -> float:
    time.sleep(settle_s)
    gc.collect()
    return anchor_ms(data)


async def measure_mode(
    workspace: Workspace, samples: dict[str, bytes], runs: int, hooks: list[str], settle_s: float
) -> tuple[list[dict[str, Any]], list[str]]:
    runner = Runner(workspace)
    rows = []
    try:
        await runner.warm_up()
        for hook in hooks:
            source = f"lib/{hook}.py"
            for name, data in samples.items():
                for _ in range(2):
                    await runner.run(name, hook=source)
                    anchor_ms(data)
                count = runs_for(len(data), runs)
                anchors = [timed_anchor(data, settle_s)]
                trips: list[float] = []
                for _ in range(count):
                    trips.append(await timed_run(runner, name, source, settle_s))
                    anchors.append(timed_anchor(data, settle_s))
                ratios = [
                    trip / ((before + after) / 2)
                    for trip, before, after in zip(trips, anchors, anchors[1:], strict=False)
                ]
                rows.append(
                    {
                        "hook": hook,
                        "sample": name,
                        "bytes": len(data),
                        "runs": count,
                        "round_trip_ms": round(statistics.median(trips), 2),
                        "anchor_ms": round(statistics.median(anchors), 2),
                        "ratio": round(statistics.median(ratios), 3),
                        "ratio_quartiles": [round(q, 3) for q in quartiles(ratios)],
                    }
                )
        notices = runner.sandbox_notices()
    finally:
        await runner.close()
    return rows, notices


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--sizes", default="1,3,10", help="sample sizes in MB, comma-separated")
    parser.add_argument("--sandbox", choices=("on", "off", "both"), default="both")
    parser.add_argument("--hook", choices=("echo", "edit", "both"), default="both")
    parser.add_argument(
        "--settle-ms",
        type=float,
        default=SETTLE_MS,
        help="idle time before each timed step (0: back to back)",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    sizes = [float(s) for s in args.sizes.split(",")]
    samples = {f"{size:g}mb": sample_of_size(size) for size in sizes}
    modes = ["on", "off"] if args.sandbox == "both" else [args.sandbox]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for mode in modes:
            workspace = build_workspace(Path(tmp) / mode, samples, mode == "on")
            hooks = ["echo", "edit"] if args.hook == "both" else [args.hook]
            measured, notices = asyncio.run(
                measure_mode(workspace, samples, args.runs, hooks, args.settle_ms / 1000)
            )
            sandbox = "fallback" if mode == "on" and notices else mode
            for row in measured:
                mb = row["bytes"] / MB
                row.update(
                    sandbox=sandbox,
                    round_trip_ms_per_mb=round(row["round_trip_ms"] / mb, 2),
                    anchor_ms_per_mb=round(row["anchor_ms"] / mb, 2),
                )
                rows.append(row)
    if args.json:
        print(json.dumps({"goal_ratio": GOAL_RATIO, "cases": rows}))
        return 0
    print(
        f"Python {sys.version.split()[0]}; medians of {args.runs} runs (more below 10 MB); "
        "anchor = json.loads + json.dumps of the sample's bytes, timed before and after each run; "
        f"ratio = median of the runs' ratios; goal: ratio <= {GOAL_RATIO:g}, ms/MB flat"
    )
    for row in rows:
        verdict = "ok" if row["ratio"] <= GOAL_RATIO else "over"
        print(
            f"{row['hook']} {row['sample']:>6} {row['bytes']:>11,} B  sandbox {row['sandbox']:<8}"
            f" round trip {row['round_trip_ms']:8.2f} ms ({row['round_trip_ms_per_mb']:6.2f} ms/MB)"
            f"  anchor {row['anchor_ms']:7.2f} ms ({row['anchor_ms_per_mb']:5.2f} ms/MB)"
            f"  ratio {row['ratio']:5.2f} x {verdict}"
            f" (quartiles {row['ratio_quartiles'][0]:.2f}-{row['ratio_quartiles'][1]:.2f},"
            f" {row['runs']} runs)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
