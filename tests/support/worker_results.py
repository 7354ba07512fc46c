"""Reading a result frame as the engine reads one a worker wrote, for tests of that reading."""

from __future__ import annotations

from typing import Any

from studio.core.turn_error import HookRef
from studio.engine.worker_host import WorkerResult
from studio.engine.worker_outcome import read_worker
from studio.engine.worker_protocol import frame

HOOK = HookRef(source="lib/h.py", function="main", contract="pre_llm")


def read_frame(payload: bytes, **how: Any) -> Any:
    """The reply to a worker that framed ``payload`` and exited 0; ``how`` is passed on
    (``echo``, ``echo_members``, ``in_pieces``)."""
    return read_worker(
        WorkerResult(result=frame(payload), exit_code=0),
        hook=HOOK,
        loop="main",
        timeout_ms=1000,
        output_limit=1 << 20,
        result_limit=1 << 20,
        **how,
    )
