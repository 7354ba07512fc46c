"""How long ``RecordStore.add`` takes for a run that carries about 1 MB.

Builds a pre-LLM request of about 1 MB (1000 messages of 1000 characters of prose) and stores,
back to back in a fresh store in a temporary folder, runs whose payload is that request as the
input only (about 1 MB) and as both the input and the result (about 2 MB). Each add is timed
alone (building the ``RunOutcome`` is not timed); the median, p90, p99 and max are printed. The
tail is SQLite's WAL checkpoint, which copies the log into the database and syncs it about every
16 MB; with ``--gap-ms`` (a pause between adds, as real runs take time) the disk keeps up.

    .venv/bin/python benchmarks/record_store_add.py [--runs N] [--gap-ms MS] [--json]

As ``timeit`` does, the garbage collector is off while a call is timed.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from studio.core.records.store import RecordStore
from studio.core.run_outcome import RunOutcome
from studio.core.turn_error import HookRef

WORDS = [
    "the",
    "hook",
    "reads",
    "the",
    "request",
    "and",
    "trims",
    "what",
    "the",
    "model",
    "does",
    "not",
    "need",
    "to",
    "see",
]


def big_request(size: int = 1_000_000) -> dict[str, Any]:
    text = " ".join(WORDS[i % len(WORDS)] for i in range(size // 4))[:size]
    messages = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": text[i : i + 1000]}
        for i in range(0, len(text), 1000)
    ]
    return {"system": "Be brief.", "messages": messages, "tools": [], "options": {}}


def measure(runs: int, *, with_result: bool, gap_ms: float = 0.0) -> dict[str, float]:
    request = big_request()
    hook = HookRef(source="lib/policy.py", function="transform", contract="pre_llm")
    times = []
    with tempfile.TemporaryDirectory() as folder, RecordStore.open(Path(folder)) as store:
        for _ in range(runs):
            outcome = RunOutcome(
                contract="pre_llm",
                status="ok",
                sample="big",
                loop="main",
                hook=hook,
                input=request,
                result=request if with_result else None,
                decision_record={
                    "changed": ["messages"],
                    "message_count": len(request["messages"]),
                },
            )
            gc.disable()
            started = time.perf_counter()
            store.add(outcome)
            times.append((time.perf_counter() - started) * 1000)
            gc.enable()
            if gap_ms:
                time.sleep(gap_ms / 1000)
        payload = len(store._db.execute("SELECT payload FROM payloads LIMIT 1").fetchone()[0])
    times.sort()
    return {
        "payload_bytes": payload,
        "runs": runs,
        "median_ms": round(statistics.median(times), 3),
        "p90_ms": round(times[int(0.9 * (runs - 1))], 3),
        "p99_ms": round(times[int(0.99 * (runs - 1))], 3),
        "max_ms": round(times[-1], 3),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument(
        "--gap-ms", type=float, default=0.0, help="pause between adds, as runs take time (0)"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = {
        "input_1mb": measure(args.runs, with_result=False, gap_ms=args.gap_ms),
        "input_and_result_1mb_each": measure(args.runs, with_result=True, gap_ms=args.gap_ms),
    }
    if args.json:
        print(json.dumps(results))
    else:
        for name, r in results.items():
            print(
                f"{name}: payload {r['payload_bytes'] / 1e6:.2f} MB, {r['runs']} adds: "
                f"median {r['median_ms']:.2f} ms, p90 {r['p90_ms']:.2f}, "
                f"p99 {r['p99_ms']:.2f}, max {r['max_ms']:.2f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
