"""Processor time and page faults per trivial hook call, by process, against the fork floor's.

    .venv/bin/python benchmarks/call_cpu.py [--n 400] [--concurrency 2] [--sandbox on|off|both]

Runs the trivial hook of ``engine_roundtrip.py`` ``--n`` times, ``--concurrency`` at a time, as
the studio does (records written), and reads from ``/proc`` how much processor time and how
many page faults each process took per call: the studio's own process, its fork server, the
process that makes the call sandboxes (sandbox on only) and the spares (every process of every
call, their ends included: the fork server reaps them). The fork floor (``fork_floor.py``) is
measured the same way in the same run. At two calls at a time on two processors, the rate of
runs cannot pass two seconds of processor time divided by the time a call takes in all.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from engine_roundtrip import FLOOR, build_workspace

from studio.core.records.store import RecordStore
from studio.engine import process_control
from studio.engine.runner import Runner

TICK_MS = 1000 / os.sysconf("SC_CLK_TCK")


def _stat(pid: int | None) -> tuple[float, float, int, int]:
    """Processor ms of ``pid`` and of its reaped children, and their page faults."""
    if pid is None:
        return 0.0, 0.0, 0, 0
    with open(f"/proc/{pid}/stat", "rb") as f:
        fields = f.read().rsplit(b")", 1)[1].split()
    own = (int(fields[11]) + int(fields[12])) * TICK_MS
    reaped = (int(fields[13]) + int(fields[14])) * TICK_MS
    return own, reaped, int(fields[7]), int(fields[8])


def _maker(server: int) -> int | None:
    """The fork server's child that is in its PID namespace: the sandbox maker, if any."""
    for child in process_control.children_of(server):
        try:
            with open(f"/proc/{child}/status") as f:
                line = next(line for line in f if line.startswith("NSpid:"))
        except (OSError, StopIteration):
            continue
        if len(line.split()) == 2:
            return child
    return None


async def studio_calls(root: Path, sandbox: bool, n: int, concurrency: int) -> dict[str, Any]:
    workspace = build_workspace(root, sandbox, large=False)
    store = RecordStore.open(workspace.root)
    runner = Runner(workspace, store=store)
    try:
        for _ in range(20):
            assert (await runner.run("small")).status == "ok"
        await asyncio.sleep(0.5)
        host = next(iter(runner._runtimes.values()))._host  # the Python runtime's
        server = host._process.pid
        maker = _maker(server) if sandbox else None
        before = [_stat(server), _stat(maker), resource.getrusage(resource.RUSAGE_SELF)]
        remaining = iter(range(n))
        started = time.perf_counter()

        async def lane() -> None:
            for _ in remaining:
                assert (await runner.run("small")).status == "ok"

        await asyncio.gather(*(lane() for _ in range(concurrency)))
        wall = time.perf_counter() - started
        await asyncio.sleep(0.5)  # the last calls' processes end, their spares are made
        after = [_stat(server), _stat(maker), resource.getrusage(resource.RUSAGE_SELF)]
    finally:
        await runner.close()
        store.close()
    (s0, m0, r0), (s1, m1, r1) = before, after
    studio = (r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime) * 1000
    row = {
        "runs_per_s": n / wall,
        "studio_ms": studio / n,
        "fork_server_ms": (s1[0] - s0[0]) / n,
        "sandbox_maker_ms": (m1[0] - m0[0]) / n,
        "spares_ms": (s1[1] - s0[1]) / n,
        "studio_faults": (r1.ru_minflt - r0.ru_minflt) / n,
        "fork_server_faults": (s1[2] - s0[2]) / n,
        "sandbox_maker_faults": (m1[2] - m0[2]) / n,
        "spares_faults": (s1[3] - s0[3]) / n,
    }
    row["total_ms"] = sum(row[k] for k in row if k.endswith("_ms"))
    return row


def floor_calls(n: int, concurrency: int) -> dict[str, Any]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [sys.executable, "-I", str(FLOOR), "--n", str(n), "--concurrency", str(concurrency)],
        check=True,
        capture_output=True,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # fork_floor.py makes ten warm-up requests first.
    requests = n + 10
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return {
        "total_ms": cpu * 1000 / requests,
        "faults": (after.ru_minflt - before.ru_minflt) / requests,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--sandbox", choices=("on", "off", "both"), default="both")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    modes = ["off", "on"] if args.sandbox == "both" else [args.sandbox]
    result: dict[str, Any] = {"floor": floor_calls(args.n, args.concurrency)}
    with tempfile.TemporaryDirectory() as tmp:
        for mode in modes:
            result[f"sandbox_{mode}"] = asyncio.run(
                studio_calls(Path(tmp) / mode, mode == "on", args.n, args.concurrency)
            )
    if args.json:
        print(json.dumps(result))
        return 0
    floor = result["floor"]
    print(f"{args.n} calls, {args.concurrency} at a time; ms of processor time (page faults)")
    print(f"fork floor: {floor['total_ms']:.2f} ms ({floor['faults']:.0f}) per request in all")
    for mode in modes:
        row = result[f"sandbox_{mode}"]
        parts = "  ".join(
            f"{name} {row[name + '_ms']:.2f} ({row[name + '_faults']:.0f})"
            for name in ("studio", "fork_server", "sandbox_maker", "spares")
        )
        print(
            f"sandbox {mode}: {row['total_ms']:.2f} ms per call in all, "
            f"{row['total_ms'] / floor['total_ms']:.1f}x the floor's; {parts}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
