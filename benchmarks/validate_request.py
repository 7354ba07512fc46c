"""How long validating a returned pre-LLM request takes, next to parsing it.

Builds a returned request of about 10 MB (5000 messages with tool_use/tool_result pairs, 200 tools,
text that reads like prose), serialises it, then over many runs times ``json.loads`` of the bytes
and ``validate_request`` of what was parsed, one after the other in each run. It prints both
medians and their ratio (validate / loads); the target is a ratio of at most 1.0.

    .venv/bin/python benchmarks/validate_request.py [--runs N] [--json]

As ``timeit`` does, the garbage collector is off while a call is timed.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from studio.core.pre_llm.request import validate_request

MESSAGES = 5000
TOOLS = 200
TARGET_BYTES = 10_000_000

_VOCABULARY = (
    "the of and to in is that for it as with was on be by this are or from at an which have "
    "not but had has were they their one all would there been if more when will can about "
    "file request model tool result output error value config loop stream context token "
    "message system user assistant policy retrieval index query search read write update "
    "function return parse check path line number string object array field schema option "
    "résumé naïve café – “quoted” — 東京 données Zürich"
)
_WORDS = tuple(_VOCABULARY.split())


def _prose(rng: random.Random, size: int) -> str:
    words: list[str] = []
    length = 0
    while length < size:
        sentence = rng.choices(_WORDS, k=rng.randint(6, 18))
        sentence[0] = sentence[0].capitalize()
        text = " ".join(sentence) + rng.choice((". ", ". ", "? ", ".\n", ".\n\n", '; "ok". '))
        words.append(text)
        length += len(text)
    return "".join(words)


def _tools(rng: random.Random) -> list[dict[str, Any]]:
    tools = []
    for k in range(TOOLS):
        properties = {
            f"arg_{p}": {
                "type": rng.choice(("string", "integer", "boolean", "number")),
                "description": _prose(rng, 60),
            }
            for p in range(rng.randint(2, 6))
        }
        properties["options"] = {
            "type": "object",
            "properties": {"recursive": {"type": "boolean"}, "depth": {"type": "integer"}},
        }
        tools.append(
            {
                "name": f"tool_{k:03d}",
                "description": _prose(rng, 200),
                "input_schema": {
                    "type": "object",
                    "properties": properties,
                    "required": sorted(properties)[:2],
                    "additionalProperties": False,
                },
            }
        )
    return tools


def build_request(seed: int = 7, text_size: int = 900) -> dict[str, Any]:
    """Message 0 is a user question; then pairs of an assistant turn with two tool_use blocks and
    a user turn with their two tool_result blocks; then a closing assistant answer."""
    rng = random.Random(seed)
    messages: list[dict[str, Any]] = [{"role": "user", "content": _prose(rng, text_size)}]
    n = 0
    while len(messages) < MESSAGES - 1:
        ids = [f"toolu_{n:06d}", f"toolu_{n + 1:06d}"]
        n += 2
        uses: list[dict[str, Any]] = [{"type": "text", "text": _prose(rng, text_size // 3)}]
        for use_id in ids:
            uses.append(
                {
                    "type": "tool_use",
                    "id": use_id,
                    "name": f"tool_{rng.randrange(TOOLS):03d}",
                    "input": {
                        "path": f"docs/notes/{use_id}.md",
                        "query": _prose(rng, 40),
                        "limit": rng.randint(1, 50),
                        "options": {"recursive": rng.random() < 0.5, "depth": 2},
                    },
                }
            )
        messages.append({"role": "assistant", "content": uses})
        results: list[dict[str, Any]] = [
            {
                "type": "tool_result",
                "tool_use_id": use_id,
                "content": _prose(rng, text_size // 2),
                "is_error": False,
            }
            for use_id in ids
        ]
        if rng.random() < 0.3:
            results.append({"type": "text", "text": _prose(rng, text_size // 4)})
        messages.append({"role": "user", "content": results})
    if len(messages) < MESSAGES:
        messages.append({"role": "assistant", "content": _prose(rng, text_size)})
    return {
        "system": _prose(rng, 4000),
        "messages": messages,
        "tools": _tools(rng),
        "options": {
            "maxTokens": 4096,
            "temperature": 0.7,
            "topP": 0.95,
            "dynamicInstructions": _prose(rng, 300),
            "reasoning": {"effort": "medium"},
            "providerParams": {"metadata": {"user": "bench"}},
        },
    }


def build_payload() -> bytes:
    """The serialised request, its text size tuned to land near ``TARGET_BYTES``."""
    # The size grows linearly with the text size: two samples give the line.
    small, large = 300, 900
    at_small = len(json.dumps(build_request(text_size=small), ensure_ascii=False).encode())
    at_large = len(json.dumps(build_request(text_size=large), ensure_ascii=False).encode())
    slope = (at_large - at_small) / (large - small)
    size = round(small + (TARGET_BYTES - at_small) / slope)
    return json.dumps(build_request(text_size=size), ensure_ascii=False).encode()


def _timed(fn: Any, *args: Any) -> tuple[float, Any]:
    gc.disable()
    try:
        start = time.perf_counter()
        result = fn(*args)
        return time.perf_counter() - start, result
    finally:
        gc.enable()


def measure(runs: int) -> dict[str, Any]:
    payload = build_payload()
    parsed = json.loads(payload)
    findings = validate_request(parsed)
    if findings:
        raise SystemExit(f"the benchmark request should be valid: {findings[0].message}")
    loads_times: list[float] = []
    validate_times: list[float] = []
    for _ in range(runs):
        parsed = None
        gc.collect()
        seconds, parsed = _timed(json.loads, payload)
        loads_times.append(seconds)
        seconds, _ = _timed(validate_request, parsed)
        validate_times.append(seconds)
    loads = statistics.median(loads_times)
    validate = statistics.median(validate_times)
    return {
        "bytes": len(payload),
        "messages": len(parsed["messages"]),
        "tools": len(parsed["tools"]),
        "runs": runs,
        "loads_median_ms": round(loads * 1000, 3),
        "validate_median_ms": round(validate * 1000, 3),
        "ratio": round(validate / loads, 4),
        "python": sys.version.split()[0],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21, help="timed runs (default 21, at least 15)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    result = measure(max(1, args.runs))
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(
            f"request: {result['bytes']:,} bytes, {result['messages']} messages, "
            f"{result['tools']} tools; {result['runs']} runs (Python {result['python']})"
        )
        print(f"json.loads        median {result['loads_median_ms']:9.3f} ms")
        print(f"validate_request  median {result['validate_median_ms']:9.3f} ms")
        print(f"ratio validate/loads     {result['ratio']:9.4f}  (target <= 1.0)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
