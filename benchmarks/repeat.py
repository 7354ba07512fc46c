"""Run one benchmark many times in a row, each in a fresh process, and count how many ended
normally: a race shows as a run that stops early ("timed out", a non-zero exit).

    .venv/bin/python benchmarks/repeat.py [--times N] [--json] benchmarks/open_sample.py [ARGS...]

Every run is given its whole time: none is cut short by a deadline here, so that a run that stops
early is the benchmark's own doing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--times", type=int, default=50, help="runs in a row (default 50)")
    parser.add_argument("--json", action="store_true", help="print the counts as JSON")
    parser.add_argument("benchmark", help="the benchmark script")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="passed to the benchmark")
    options = parser.parse_args(argv)
    env = dict(os.environ)
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    failures: list[tuple[int, int, str]] = []
    started = time.perf_counter()
    for number in range(1, options.times + 1):
        child = subprocess.run(
            [sys.executable, options.benchmark, *options.args],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        if child.returncode != 0:
            last = (child.stderr.strip() or child.stdout.strip()).splitlines()[-1:] or [""]
            failures.append((number, child.returncode, last[0]))
            print(f"run {number}: exit {child.returncode}: {last[0]}", file=sys.stderr, flush=True)
    elapsed = time.perf_counter() - started
    ended = options.times - len(failures)
    if options.json:
        stops = [{"run": n, "exit": code, "last_line": line} for n, code, line in failures]
        counts = {"times": options.times, "ended": ended, "stopped": len(failures)}
        print(json.dumps({**counts, "seconds": round(elapsed, 1), "stops": stops}))
        return 1 if failures else 0
    print(
        f"{options.benchmark}: {ended} of {options.times} runs ended normally, "
        f"{len(failures)} stopped early ({elapsed:.0f} s)"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
