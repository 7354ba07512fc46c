"""Round-trip timing of a hook: fresh worker, input out, result back and validated."""

from __future__ import annotations

import asyncio
import math
import statistics
import subprocess
import sys
import time
from typing import Any

from studio.engine.runner import Runner


def percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


def python_start_ms(runs: int) -> list[float]:
    """How long a fresh ``python -I -c pass`` takes: what a worker costs without a fork server."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-I", "-c", "pass"], check=True)
        times.append((time.perf_counter() - started) * 1000)
    return times


async def bench(
    runner: Runner,
    sample: str,
    *,
    n: int,
    concurrency: int,
    loop: str | None = None,
    hook: str | None = None,
    warmup: int = 10,
    baseline_runs: int = 20,
) -> dict[str, Any]:
    await runner.warm_up()
    for _ in range(warmup):
        await runner.run(sample, loop=loop, hook=hook)
    baseline = await asyncio.to_thread(python_start_ms, baseline_runs // 2)

    times: list[float] = []
    failures = 0
    remaining = iter(range(n))

    async def lane() -> None:
        nonlocal failures
        for _ in remaining:
            started = time.perf_counter()
            outcome = await runner.run(sample, loop=loop, hook=hook)
            times.append((time.perf_counter() - started) * 1000)
            failures += outcome.status == "turn_error"

    wall = time.perf_counter()
    await asyncio.gather(*(lane() for _ in range(concurrency)))
    wall = time.perf_counter() - wall
    baseline += await asyncio.to_thread(python_start_ms, baseline_runs - baseline_runs // 2)

    p50 = percentile(times, 0.50)
    start_p50 = statistics.median(baseline)
    return {
        "n": n,
        "concurrency": concurrency,
        "p50_ms": round(p50, 3),
        "p90_ms": round(percentile(times, 0.90), 3),
        "p99_ms": round(percentile(times, 0.99), 3),
        "max_ms": round(max(times), 3),
        "runs_per_s": round(n / wall, 1),
        "failures": failures,
        "python_start_p50_ms": round(start_p50, 3),
        "p50_vs_python_start": round(p50 / start_p50, 4),
    }
