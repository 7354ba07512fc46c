"""Reading what a worker left: its returned value, or the turn error that says why there is none."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from studio.core.contract import HookReply
from studio.core.findings import pointer
from studio.core.json.deep import deep_json
from studio.core.json.locate import parse_json_in_pieces
from studio.core.turn_error import ExitStatus, Frame, HookRef, turn_error
from studio.engine.collector import collector_paused
from studio.engine.shared_members import read_sharing
from studio.engine.worker_envelope import envelope_problem
from studio.engine.worker_host import WorkerResult
from studio.engine.worker_protocol import CorruptFrame, payload_start

STDERR_TAIL_CHARS = 4000
SMALL_ENVELOPE = 256 << 10


def text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def size_text(limit: int) -> str:
    if limit >= 1 << 20 and limit % (1 << 20) == 0:
        return f"{limit >> 20} MiB"
    if limit >= 1 << 10 and limit % (1 << 10) == 0:
        return f"{limit >> 10} KiB"
    return f"{limit} bytes"


def read_worker(
    result: WorkerResult,
    *,
    hook: HookRef,
    loop: str | None,
    timeout_ms: float,
    output_limit: int,
    result_limit: int,
    in_pieces: bool = False,
    echo: bytes | memoryview | None = None,
    echo_members: Mapping[str, tuple[str, Any]] | None = None,
) -> HookReply:
    reading = HookReply(
        stdout=text(result.stdout),
        stderr=text(result.stderr),
        stdout_truncated=result.stdout_truncated,
        stderr_truncated=result.stderr_truncated,
        duration_ms=result.duration_ms,
    )
    exit_status = (
        ExitStatus(code=result.exit_code, signal=result.exit_signal)
        if result.exit_code is not None or result.exit_signal is not None
        else None
    )
    common: dict[str, Any] = {
        "hook": hook,
        "loop": loop,
        "duration_ms": round(result.duration_ms, 3),
        "exit": exit_status,
        "stderr_tail": reading.stderr[-STDERR_TAIL_CHARS:],
    }
    fn = f"`{hook.function}`"

    if result.ended_by == "timeout":
        reading.error = turn_error(
            "timeout", f"{fn} did not return within {timeout_ms:g} ms and was stopped", **common
        )
        return reading
    if result.ended_by == "cancelled":
        reading.error = turn_error("cancelled", f"the run of {fn} was cancelled", **common)
        return reading
    if result.ended_by == "output_limit":
        stream = result.over_limit or "output"
        limit = result_limit if stream == "result" else output_limit
        reading.error = turn_error(
            "output_limit",
            f"{fn} wrote more than {size_text(limit)} to its {stream}; the worker was stopped",
            details={"stream": stream, "limit_bytes": limit},
            **common,
        )
        return reading
    if result.start_error is not None:
        reading.error = turn_error(
            "engine_failed",
            f"the studio could not start a worker for {fn}: {result.start_error}",
            **common,
        )
        return reading
    if result.server_lost:
        reading.error = turn_error(
            "worker_crashed", f"the worker running {fn} was lost with its fork server", **common
        )
        return reading

    data = result.result
    try:
        start = payload_start(data)
    except CorruptFrame as exc:
        reading.error = turn_error(
            "channel_corrupted",
            f"the result channel of {fn} held {exc}: something other than the studio wrote to it",
            **common,
        )
        return reading
    if start is None:
        reading.error = turn_error("worker_crashed", _ended_early(fn, result), **common)
        return reading
    try:
        envelope = _echoed_envelope(data, start, echo)
        if envelope is not None:
            reading.echoed = True
        elif echo_members and (shared := _shared_envelope(data, start, echo_members, in_pieces)):
            envelope = shared
        elif in_pieces and len(data) - start > SMALL_ENVELOPE:
            envelope = parse_json_in_pieces(str(memoryview(data)[start:], "utf-8"), depth=5)
        else:
            with deep_json(), collector_paused():
                envelope = json.loads(_loaded_text(data, start))
    except ValueError:
        reading.error = turn_error(
            "channel_corrupted", f"the result frame of {fn} is not readable", **common
        )
        return reading
    problem = envelope_problem(envelope)
    if problem is not None:
        reading.error = turn_error(
            "channel_corrupted",
            f"the result frame of {fn} holds {problem}: it is not one the studio's worker writes",
            **common,
        )
        return reading
    reading.extra = envelope.get("extra") or {}
    if envelope["status"] == "ok":
        reading.value = None if reading.echoed else envelope.get("value")
        return reading
    details = envelope.get("details") or {}
    frames = [Frame(**f) for f in details.pop("frames", []) or []]
    path = details.pop("path", None)
    reading.error = turn_error(
        envelope.get("kind", "exception"),
        envelope.get("message", "the hook failed"),
        traceback=frames,
        path=pointer(path) if isinstance(path, list) else None,
        details={k: v for k, v in details.items() if v},
        **common,
    )
    return reading


_VALUE_MEMBER = b',"value":'


def _loaded_text(data: bytes, start: int) -> str:
    """The payload from ``start`` decoded as ``json.loads`` decodes bytes, without copying them
    out of the frame first."""
    encoding = json.detect_encoding(data[start : start + 4])
    return str(memoryview(data)[start:], encoding, "surrogatepass")


def _echoed_envelope(
    data: bytes, start: int, echo: bytes | memoryview | None
) -> dict[str, Any] | None:
    """The envelope of an ok frame (its payload from ``start``) whose value is exactly the text
    ``echo``, with that value unread (None); None for any other frame.

    Only the head before the value is parsed. If it reads as an object, with ``}`` after it,
    then ``,"value":`` plus the JSON text ``echo`` plus ``}`` after it read as that object with
    one more member, ``value``, whose value is ``echo``'s (a repeated key takes the last)."""
    if echo is None:
        return None
    cut = len(data) - 1 - len(echo) - len(_VALUE_MEMBER)
    if not (
        cut > start + 1
        # Plain UTF-8 from the start, so that the head and the echo are read the same way.
        and data.startswith(b'{"', start)
        and data.endswith(b"}")
        and data.startswith(_VALUE_MEMBER, cut)
        and data.startswith(echo, cut + len(_VALUE_MEMBER))
    ):
        return None
    with deep_json():
        head = json.loads(data[start:cut] + b"}")
    if not isinstance(head, dict) or head.get("status") != "ok":
        return None
    return {**head, "value": None}


def _shared_envelope(
    data: bytes, start: int, members: Mapping[str, tuple[str, Any]], in_pieces: bool
) -> dict[str, Any] | None:
    """The envelope (the payload from ``start``), its value an object that holds the members of
    ``members`` whose text came back unchanged as those very values, unread; None when the
    frame is not one the studio's worker writes (the caller reads it as any other)."""
    if not data.startswith(b'{"', start):
        return None
    read = read_sharing(data, start, ("value",), members, depth=5 if in_pieces else 0)
    envelope = read[0] if read is not None else None
    return envelope if isinstance(envelope, dict) else None


def _ended_early(fn: str, result: WorkerResult) -> str:
    if result.exit_signal:
        what = {
            "SIGSEGV": "crashed with a segmentation fault (SIGSEGV)",
            "SIGKILL": "was killed (SIGKILL)",
            "SIGABRT": "aborted (SIGABRT)",
            "SIGBUS": "crashed with a bus error (SIGBUS)",
        }.get(result.exit_signal, f"was ended by {result.exit_signal}")
        return f"the worker running {fn} {what} before returning a result"
    return f"the worker running {fn} exited with code {result.exit_code} before returning a result"
