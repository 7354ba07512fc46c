"""How long the request diff takes on two 5 MB requests of 5000 messages, 10 of them changed.

The original is the request of ``validate_request.py`` (tool_use/tool_result pairs, 200 tools,
prose), its text size tuned to about 5 MB. The transformed one is a separate copy (parsed again
from JSON, so no object is shared) in which a hook has edited six messages (a tool result, a text
block, a thinking block added to an assistant turn, a tool_use input, the first user message and
a closing answer), removed two and inserted two; it has also changed the system prompt, removed
three tools and changed two options. Over several runs, ``diff_request`` is timed with the
garbage collector off (as ``timeit`` does) and the median is printed; the target is well under
100 ms. Labels and the blocks of changed messages are worked out on first use; the time a view
pays to read all of them is printed separately.

    .venv/bin/python benchmarks/request_diff.py [--runs N] [--json]
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from validate_request import build_request  # noqa: E402

from studio.core.pre_llm.diff import RequestDiff, diff_request  # noqa: E402

TARGET_BYTES = 5_000_000
CHANGED_MESSAGES = 10


def build_original() -> dict[str, Any]:
    """The benchmark request, its text size tuned to land near ``TARGET_BYTES``."""
    small, large = 200, 600
    at_small = len(json.dumps(build_request(text_size=small), ensure_ascii=False).encode())
    at_large = len(json.dumps(build_request(text_size=large), ensure_ascii=False).encode())
    slope = (at_large - at_small) / (large - small)
    size = round(small + (TARGET_BYTES - at_small) / slope)
    return build_request(text_size=size)


def transform(original: dict[str, Any]) -> dict[str, Any]:
    """What a hook returns: an independent copy with ten message changes, and more."""
    request = json.loads(json.dumps(original, ensure_ascii=False))
    messages = request["messages"]
    # Six edits, spread over the history.
    messages[0]["content"] = messages[0]["content"].replace(" the ", " THE ", 3)
    messages[1001]["content"][0]["text"] += " (summarised by the hook)"
    messages[2002]["content"][0]["content"] = "[redacted by the hook]"
    messages[3001]["content"].insert(0, {"type": "thinking", "thinking": "Plan the next step."})
    messages[4001]["content"][1]["input"]["limit"] = 99
    messages[-1]["content"] = messages[-1]["content"][:200] + " Edited ending."
    # Two removals and two insertions (the insertions first, at higher indices).
    messages.insert(4500, {"role": "user", "content": "A reminder injected by the hook."})
    messages.insert(2500, {"role": "user", "content": "Another injected reminder."})
    del messages[3600]
    del messages[1500]
    request["system"] += "\nAnswer in English."
    del request["tools"][10:13]
    request["options"]["temperature"] = 0.2
    del request["options"]["topP"]
    return request


def _timed(original: Any, transformed: Any) -> tuple[float, RequestDiff]:
    gc.disable()
    try:
        start = time.perf_counter()
        result = diff_request(original, transformed)
        return time.perf_counter() - start, result
    finally:
        gc.enable()


def _read_everything(diff: RequestDiff) -> float:
    """What a view that reads every row pays on top: each label, each changed message's blocks."""
    gc.disable()
    try:
        start = time.perf_counter()
        for entry in diff.messages:
            _ = entry.original_label, entry.transformed_label
            _ = entry.blocks
        return time.perf_counter() - start
    finally:
        gc.enable()


def measure(runs: int) -> dict[str, Any]:
    original = build_original()
    transformed = transform(original)
    size_a = len(json.dumps(original, ensure_ascii=False).encode())
    size_b = len(json.dumps(transformed, ensure_ascii=False).encode())
    times: list[float] = []
    reading: list[float] = []
    diff: RequestDiff | None = None
    for _ in range(runs):
        diff = None
        gc.collect()
        seconds, diff = _timed(original, transformed)
        times.append(seconds)
        reading.append(_read_everything(diff))
    assert diff is not None
    changed = [e for e in diff.messages if e.kind != "same"]
    if len(changed) != CHANGED_MESSAGES:
        raise SystemExit(f"expected {CHANGED_MESSAGES} changed messages, got {len(changed)}")
    return {
        "original_bytes": size_a,
        "transformed_bytes": size_b,
        "messages": len(original["messages"]),
        "changed_entries": len(changed),
        "summary": diff.summary,
        "runs": runs,
        "median_ms": round(statistics.median(times) * 1000, 3),
        "min_ms": round(min(times) * 1000, 3),
        "max_ms": round(max(times) * 1000, 3),
        "read_all_median_ms": round(statistics.median(reading) * 1000, 3),
        "python": sys.version.split()[0],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="timed runs (default 15)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    result = measure(max(1, args.runs))
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        print(
            f"requests: {result['original_bytes']:,} and {result['transformed_bytes']:,} bytes, "
            f"{result['messages']} messages, {result['changed_entries']} changed entries; "
            f"{result['runs']} runs (Python {result['python']})"
        )
        print(f"summary: {result['summary']}")
        print(
            f"diff_request  median {result['median_ms']:8.3f} ms  "
            f"(min {result['min_ms']:.3f}, max {result['max_ms']:.3f}; target well under 100 ms)"
        )
        print(f"reading all labels and blocks  median {result['read_all_median_ms']:.3f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
