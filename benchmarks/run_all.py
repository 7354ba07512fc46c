"""Every benchmark of the speed goals in one go, and one table of what each measured against its
anchor, its target and whether the target is met.

    .venv/bin/python benchmarks/run_all.py [--repeat 50] [--only NAMES] [--json]

Each benchmark runs in a fresh process with ``--json``; each figure is a median of its own
repeated runs, and each ratio compares figures measured in the same process, on the same
machine, at the same time (the machine's speed varies, so figures from different runs are never
divided). Then ``repeat.py`` runs every benchmark ``--repeat`` times in a row in its smallest
form: a race shows as a run that stops early, whatever the sizes. The table is Markdown, so
that it can go into the README as printed; a header says which machine measured it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
MB = 10**6


@dataclass
class Row:
    goal: str
    measured: str
    anchor: str
    ratio: float | None
    target: str
    met: bool | None

    def cells(self) -> list[str]:
        ratio = "" if self.ratio is None else f"{self.ratio:.2f}"
        met = {True: "met", False: "not met", None: "n/a"}[self.met]
        return [self.goal, self.measured, self.anchor, ratio, self.target, met]


def time_row(goal: str, value_ms: float, limit_ms: float, *, strict: bool = False) -> Row:
    """A goal stated as a time, not a ratio: its share of the limit stands as the ratio."""
    return Row(
        goal,
        ms(value_ms),
        "",
        value_ms / limit_ms,
        f"{'<' if strict else '<='} {limit_ms:g} ms",
        value_ms < limit_ms if strict else value_ms <= limit_ms,
    )


def at_most(ratio: float | None, limit: float) -> bool | None:
    return None if ratio is None else ratio <= limit


def run_json(script: str, args: Iterable[str]) -> dict[str, Any]:
    """The JSON a benchmark prints last, run in a fresh process; a benchmark that stops early
    stops this run too, with its own words."""
    command = [sys.executable, str(HERE / script), *args, "--json"]
    env = dict(os.environ)
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    started = time.perf_counter()
    print(f"running {script} {' '.join(args)}", file=sys.stderr, flush=True)
    child = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    print(f"  {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    if child.returncode != 0:
        raise SystemExit(f"{script} stopped (exit {child.returncode}):\n{child.stderr[-3000:]}")
    figures: dict[str, Any] = json.loads(child.stdout.strip().splitlines()[-1])
    return figures


def ms(value: float) -> str:
    if value < 1:
        return f"{value:.3f} ms"
    return f"{value:.1f} ms" if value < 100 else f"{value:.0f} ms"


# ---- the benchmarks --------------------------------------------------------------------------


def _floor(case: dict[str, Any]) -> tuple[str, float | None, float | None]:
    """The anchor of a trivial round trip: the fork floor where the benchmark measures it,
    otherwise the start of a fresh interpreter."""
    for key, label in (("fork_floor_p50_ms", "fork floor"), ("floor_p50_ms", "floor")):
        if key in case:
            rate = case.get(key.replace("p50_ms", "runs_per_s"))
            return label, float(case[key]), None if rate is None else float(rate)
    return "python -I start", float(case["python_start_p50_ms"]), None


def engine_rows(n: int) -> list[Row]:
    figures = run_json("engine_roundtrip.py", ["--sandbox", "on", "--n", str(n)])
    cases = {c["case"]: c for c in figures["cases"]}
    # Where the benchmark gives them, its own ratios: each round against the floor measured in
    # that round, then their median.
    ratios = figures.get("ratios", {})
    rows = []
    one = cases["trivial hook, one at a time"]
    label, floor, _ = _floor(one)
    ratio = ratios.get("p50_vs_floor_on", one["p50_ms"] / floor if floor else None)
    rows.append(
        Row(
            "1 trivial hook p50, sandbox on",
            ms(one["p50_ms"]),
            f"{label} {ms(floor or 0)}",
            ratio,
            "<= 1.5x",
            at_most(ratio, 1.5) if label.endswith("floor") else None,
        )
    )
    two = cases["trivial hook, two at a time"]
    label, _, rate = _floor(two)
    throughput = ratios.get("rate_x2_vs_floor_x2_on", two["runs_per_s"] / rate if rate else None)
    rows.append(
        Row(
            "1 throughput at concurrency 2",
            f"{two['runs_per_s']:.0f} runs/s",
            f"{label} {rate:.0f} runs/s" if rate else "not measured",
            throughput,
            ">= 0.4x",
            None if throughput is None else throughput >= 0.4,
        )
    )
    return rows


def large_request_rows(runs: int) -> list[Row]:
    figures = run_json(
        "large_request.py", ["--sandbox", "on", "--sizes", "1,10", "--runs", str(runs)]
    )
    rows = []
    per_mb: dict[str, dict[str, float]] = {}
    for case in figures["cases"]:
        size = f"{case['bytes'] / MB:.0f} MB"
        per_mb.setdefault(case["hook"], {})[size] = case["ratio"]
        rows.append(
            Row(
                f"2 {size} request, {case['hook']} hook",
                ms(case["round_trip_ms"]),
                f"json.loads+dumps {ms(case['anchor_ms'])}",
                case["ratio"],
                "<= 2x",
                at_most(case["ratio"], 2.0),
            )
        )
    for hook, ratios in per_mb.items():
        if "1 MB" in ratios and "10 MB" in ratios:
            growth = ratios["10 MB"] / ratios["1 MB"]
            rows.append(
                Row(
                    f"2 linear in size, {hook} hook",
                    f"ratio at 10 MB {ratios['10 MB']:.2f}",
                    f"ratio at 1 MB {ratios['1 MB']:.2f}",
                    growth,
                    "<= 1.25x",
                    at_most(growth, 1.25),
                )
            )
    return rows


def records_rows(records: int, runs: int) -> list[Row]:
    figures = run_json("records_view.py", ["--records", str(records), "--runs", str(runs)])
    n = f"{records:,}"
    return [
        time_row(f"3 records view first rows painted, {n} runs", figures["first_paint_ms"], 300),
        time_row("3 longest GUI block per filter keystroke", figures["keystroke_block_ms"], 50),
        Row(
            "3 store list against raw SQL",
            ms(figures["list_ms"]),
            f"raw SQL {ms(figures['sql_ms'])}",
            figures["list_vs_sql"],
            "<= 1.3x",
            at_most(figures["list_vs_sql"], 1.3),
        ),
        Row(
            "3 memory per record (stated)",
            f"{figures['bytes_per_record']:.0f} B",
            "",
            None,
            "stated",
            None,
        ),
    ]


def gui_rows(runs: int) -> list[Row]:
    figures = run_json("gui_responsiveness.py", ["--runs", str(runs)])
    stall = figures["gui_longest_stall_ms_median"]
    return [
        Row(
            "4 window painted",
            ms(figures["studio_window_painted_ms_median"]),
            f"bare PySide6 window {ms(figures['bare_window_painted_ms_median'])}",
            figures["paint_ratio"],
            "<= 2x",
            at_most(figures["paint_ratio"], 2.0),
        ),
        time_row(
            f"4 longest GUI stall, {figures['sample_bytes'] / MB:.1f} MB run",
            stall,
            50,
            strict=True,
        ),
    ]


def node_rows(n: int, rounds: int) -> list[Row]:
    figures = run_json("node_roundtrip.py", ["--n", str(n), "--rounds", str(rounds)])
    small = figures["ts_small"]
    floor = figures.get("node_floor") or figures.get("floor_small")
    if floor:
        ratio = figures.get("ratios", {}).get(
            "ts_p50_vs_node_floor_p50", small["p50_ms"] / floor["p50_ms"]
        )
        rows = [
            Row(
                "6 TypeScript trivial hook p50",
                ms(small["p50_ms"]),
                f"warm Node, fresh Worker per call {ms(floor['p50_ms'])}",
                ratio,
                "<= 1.5x",
                at_most(ratio, 1.5),
            )
        ]
        pipe = figures.get("node_pipe")
        if pipe:
            # For information: a pipe with no per-call isolation is no floor for an isolated call.
            rows.append(
                Row(
                    "6 TypeScript trivial hook p50 (information)",
                    ms(small["p50_ms"]),
                    f"warm Node, bare pipe {ms(pipe['p50_ms'])}",
                    figures.get("ratios", {}).get(
                        "ts_p50_vs_bare_pipe_p50", small["p50_ms"] / pipe["p50_ms"]
                    ),
                    "none: no per-call isolation",
                    None,
                )
            )
        return rows
    model = figures["model_small"]
    return [
        Row(
            "6 TypeScript trivial hook p50",
            ms(small["p50_ms"]),
            f"reference model (Worker per call) {ms(model['p50_ms'])}",
            small["p50_ms"] / model["p50_ms"],
            "<= 1.5x of the Node floor (not measured)",
            None,
        )
    ]


# The smallest form of each benchmark, for the runs in a row: the protocol is the same at any size.
REPEATED = {
    "engine_roundtrip.py": ["--sandbox", "on", "--n", "20"],
    "node_roundtrip.py": ["--n", "10", "--rounds", "1"],
    "large_request.py": [
        "--sandbox",
        "on",
        "--sizes",
        "1",
        "--runs",
        "1",
        "--hook",
        "both",
        "--settle-ms",
        "0",
    ],
    "records_view.py": ["--records", "2000", "--runs", "1"],
    "gui_responsiveness.py": ["--runs", "1"],
    "open_sample.py": ["--runs", "1"],
}


def repeat_rows(times: int) -> list[Row]:
    rows = []
    for script, args in REPEATED.items():
        started = time.perf_counter()
        print(f"running {script} {times} times in a row", file=sys.stderr, flush=True)
        child = subprocess.run(
            [
                sys.executable,
                str(HERE / "repeat.py"),
                "--times",
                str(times),
                "--json",
                str(HERE / script),
                *args,
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        print(f"  {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
        counts = json.loads(child.stdout.strip().splitlines()[-1])
        rows.append(
            Row(
                f"5 {script} {times}x in a row",
                f"{counts['ended']} of {counts['times']} ended normally",
                "",
                None,
                "none stops early",
                counts["stopped"] == 0,
            )
        )
    return rows


# ---- the table -------------------------------------------------------------------------------


def machine() -> str:
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"{os.cpu_count()} CPUs ({model}), Python {platform.python_version()}, "
        f"{platform.system()} {platform.release()}, load average {load}"
    )


def table(rows: list[Row]) -> str:
    head = ["goal", "measured (median)", "anchor (same run)", "ratio", "target", "met"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(row.cells()) + " |" for row in rows]
    return "\n".join(lines)


SECTIONS: dict[str, Callable[[argparse.Namespace], list[Row]]] = {
    "engine": lambda a: engine_rows(a.n),
    "large": lambda a: large_request_rows(a.runs),
    "records": lambda a: records_rows(a.records, max(1, a.runs // 3)),
    "gui": lambda a: gui_rows(a.runs),
    "node": lambda a: node_rows(max(a.n // 3, 20), 3),
    "repeat": lambda a: repeat_rows(a.repeat),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--n", type=int, default=200, help="trivial round trips a round (default 200)"
    )
    parser.add_argument("--runs", type=int, default=9, help="runs of the larger cases")
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=50, help="runs in a row (0: none)")
    parser.add_argument("--only", default=",".join(SECTIONS), help="comma-separated sections")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    chosen = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = [s for s in chosen if s not in SECTIONS]
    if unknown:
        parser.error(f"unknown sections {unknown}; known: {', '.join(SECTIONS)}")
    if args.repeat <= 0 and "repeat" in chosen:
        chosen.remove("repeat")
    started = time.perf_counter()
    header = machine()
    rows: list[Row] = []
    for section in chosen:
        rows += SECTIONS[section](args)
    minutes = (time.perf_counter() - started) / 60
    if args.json:
        print(json.dumps({"machine": header, "rows": [asdict(r) for r in rows]}))
        return 0
    print(f"Measured on {header}; {minutes:.0f} minutes.\n")
    print(table(rows))
    verdicts = [r.met for r in rows]
    print(
        f"\n{verdicts.count(True)} met, {verdicts.count(False)} not met, "
        f"{verdicts.count(None)} without a target to meet"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
