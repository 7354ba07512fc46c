"""How many documents a second ``hook-studio check-* --batch`` checks, start-up included.

For each check command it generates a batch of JSON Lines (10,000 by default): valid documents,
invalid ones (each with a rule it breaks) and a few lines that are not JSON, shuffled. Each run
pipes the whole batch into one ``hook-studio <command> --batch`` process and times it until the
process has answered every line and ended; the answers are counted and their ``line`` numbers
checked, so a run that skips or reorders lines fails the benchmark. It prints the median time of
the runs and the documents a second it means; the target is well under a minute for 10,000.

    .venv/bin/python benchmarks/batch_checks.py [--documents N] [--runs N] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

TARGET_SECONDS = 60.0
NOT_JSON_SHARE = 0.02


def _config(rng: random.Random, n: int) -> dict[str, Any]:
    hook: dict[str, Any] = {"source": f"hooks/policy_{n}.py:transform"}
    shape = rng.randrange(4)
    if shape == 1:
        hook.update(scope="loops", loops=[f"loop-{k}" for k in range(rng.randint(1, 5))])
    elif shape == 2:
        hook.update(scope="main", timeout_ms=rng.randint(100, 60_000))
    elif shape == 3:
        hook.update(scope="all", include_main=rng.random() < 0.5)
    return {"model": "kept", "pre_llm_hook": hook, "limits": {"execution_timeout_ms": 30_000}}


def _bad_config(rng: random.Random, n: int) -> dict[str, Any]:
    document = _config(rng, n)
    hook = document["pre_llm_hook"]
    breakage = rng.randrange(4)
    if breakage == 0:
        hook["source"] = ""
    elif breakage == 1:
        hook["scope"] = "everywhere"
    elif breakage == 2:
        hook["timeout_ms"] = -5
    else:
        hook.update(scope="loops", loops=["Not A Loop Name"])
    return document


def _request(rng: random.Random, n: int) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": f"question {n}"}]
    for k in range(rng.randint(0, 4)):
        use_id = f"toolu_{n}_{k}"
        messages.append(
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": use_id, "name": "fs_read", "input": {}}],
            }
        )
        messages.append(
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": use_id, "content": "ok"}],
            }
        )
    return {
        "system": "Be brief.",
        "messages": messages,
        "tools": [{"name": "fs_read", "description": "Read", "input_schema": {"type": "object"}}],
        "options": {"temperature": round(rng.random(), 2)},
    }


def _bad_request(rng: random.Random, n: int) -> dict[str, Any]:
    document = _request(rng, n)
    breakage = rng.randrange(4)
    if breakage == 0:
        document["messages"] = []
    elif breakage == 1:
        document["system"] = None
    elif breakage == 2:
        document["messages"][0]["role"] = "tool"
    else:
        document["tools"][0]["name"] = ""
    return document


def _amendment_document(rng: random.Random, n: int) -> dict[str, Any]:
    tools = [f"tool_{k}" for k in range(rng.randint(1, 6))]
    amendment: dict[str, Any] = {"activeTools": rng.sample(tools, rng.randint(0, len(tools)))}
    if rng.random() < 0.5:
        amendment["model"] = f"model-{n % 7}"
    return {
        "baseline": {
            "contributors": ["persona", {"id": "search", "kind": "tool", "tools": ["web"]}],
            "tools": tools,
            "model": "standard-model",
        },
        "amendment": amendment,
        "step": {"index": n % 50, "reason": "initial" if n % 50 == 0 else "tool-result"},
    }


def _bad_amendment_document(rng: random.Random, n: int) -> dict[str, Any]:
    document = _amendment_document(rng, n)
    breakage = rng.randrange(3)
    if breakage == 0:
        document["amendment"] = ["not", "an", "object"]
    elif breakage == 1:
        document["amendment"] = {"activeTools": ["no_such_tool"]}
    else:
        document["amendment"] = {"use": {"remove": [{"id": "no-such-contributor"}]}}
    return document


Maker = Callable[[random.Random, int], dict[str, Any]]
COMMANDS: dict[str, tuple[Maker, Maker]] = {
    "check-config": (_config, _bad_config),
    "check-request": (_request, _bad_request),
    "check-amendment": (_amendment_document, _bad_amendment_document),
}


def build_batch(command: str, documents: int, seed: int = 11) -> bytes:
    """``documents`` lines: about half valid, the rest invalid, a few not JSON at all."""
    rng = random.Random(seed)
    valid, invalid = COMMANDS[command]
    lines = []
    for n in range(documents):
        roll = rng.random()
        if roll < NOT_JSON_SHARE:
            lines.append(rng.choice(("", "{", "not json", '{"a": NaN}')))
        else:
            maker = valid if roll < 0.5 else invalid
            lines.append(json.dumps(maker(rng, n), separators=(",", ":")))
    return ("\n".join(lines) + "\n").encode()


def _program() -> list[str]:
    script = Path(sys.executable).with_name("hook-studio")
    if script.exists():
        return [str(script)]
    found = shutil.which("hook-studio")
    return [found] if found else [sys.executable, "-m", "studio"]


def time_batch(command: str, batch: Path, documents: int) -> float:
    with batch.open("rb") as stdin:
        start = time.perf_counter()
        done = subprocess.run(
            [*_program(), command, "--batch"], stdin=stdin, capture_output=True, check=False
        )
        seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"{command} --batch exited {done.returncode}: {done.stderr.decode()}")
    numbers = [json.loads(line)["line"] for line in done.stdout.splitlines()]
    if numbers != list(range(1, documents + 1)):
        raise SystemExit(f"{command} --batch answered {len(numbers)} lines, not 1..{documents}")
    return seconds


def measure(documents: int, runs: int) -> dict[str, Any]:
    figures: dict[str, Any] = {"documents": documents, "runs": runs, "commands": {}}
    with tempfile.TemporaryDirectory() as folder:
        for command in COMMANDS:
            batch = Path(folder) / f"{command}.jsonl"
            batch.write_bytes(build_batch(command, documents))
            times = [time_batch(command, batch, documents) for _ in range(runs)]
            median = statistics.median(times)
            figures["commands"][command] = {
                "median_s": round(median, 3),
                "documents_per_s": round(documents / median),
                "bytes": batch.stat().st_size,
            }
    figures["python"] = sys.version.split()[0]
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=10_000, help="lines per batch")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per command (default 5)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    figures = measure(max(1, args.documents), max(1, args.runs))
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    print(
        f"{figures['documents']:,} documents per batch, median of {figures['runs']} runs "
        f"(Python {figures['python']}); target: under {TARGET_SECONDS:.0f} s"
    )
    for command, row in figures["commands"].items():
        print(
            f"{command:<16} {row['median_s']:8.3f} s  {row['documents_per_s']:>8,} documents/s"
            f"  ({row['bytes']:,} bytes)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
