"""The fork floor: what a hook round trip cannot go below on this machine, measured alone.

    python -I benchmarks/fork_floor.py --n 300 --concurrency 1

A warm parent (the same interpreter, with the modules the studio's fork server keeps loaded)
forks one child per request; the child reads a small JSON request from a pipe, parses it,
answers with JSON on another pipe and exits. A request's time runs from the fork to its whole
answer read; the child is reaped after that. With ``--concurrency 2`` two children are in flight
at once. Prints one JSON object: every request's time in milliseconds and the wall time.
"""

from __future__ import annotations

import argparse
import asyncio  # noqa: F401  (loaded as in the fork server, so the fork copies as much)
import gc
import json
import os
import selectors
import sys
import time

REQUEST = json.dumps(
    {
        "request": {
            "system": "You are terse.",
            "messages": [{"role": "user", "content": "hi"}],
            "tools": [
                {"name": "search", "description": "Search", "input_schema": {"type": "object"}}
            ],
            "options": {"temperature": 0.2},
        }
    }
).encode()


def _child(request_r: int, answer_w: int) -> None:
    chunks = []
    while chunk := os.read(request_r, 1 << 16):
        chunks.append(chunk)
    payload = json.loads(b"".join(chunks))
    os.write(answer_w, json.dumps(payload["request"]).encode())
    os.close(answer_w)
    os._exit(0)


def measure(n: int, concurrency: int) -> dict[str, object]:
    selector = selectors.DefaultSelector()
    times: list[float] = []
    started = 0

    def start() -> None:
        nonlocal started
        started += 1
        request_r, request_w = os.pipe()
        answer_r, answer_w = os.pipe()
        began = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            os.close(request_w)
            os.close(answer_r)
            _child(request_r, answer_w)
        os.close(request_r)
        os.close(answer_w)
        os.write(request_w, REQUEST)
        os.close(request_w)
        selector.register(answer_r, selectors.EVENT_READ, (pid, began, []))

    wall = time.perf_counter()
    for _ in range(min(concurrency, n)):
        start()
    while selector.get_map():
        for key, _ in selector.select():
            pid, began, chunks = key.data
            chunk = os.read(key.fd, 1 << 16)
            if chunk:
                chunks.append(chunk)
                continue
            times.append((time.perf_counter() - began) * 1000)
            json.loads(b"".join(chunks))
            selector.unregister(key.fd)
            os.close(key.fd)
            os.waitpid(pid, 0)
            if started < n:
                start()
    wall = time.perf_counter() - wall
    return {"times_ms": times, "wall_s": wall}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--concurrency", type=int, default=1)
    args = parser.parse_args()
    gc.collect()
    gc.freeze()
    # Warm: the first forks pay for pages the later ones share.
    measure(10, args.concurrency)
    print(json.dumps(measure(args.n, args.concurrency)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
