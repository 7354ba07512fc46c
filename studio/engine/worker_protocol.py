"""What passes between the engine, the fork server and a worker: specs, events and result frames.

The result travels on a channel of its own, framed so that anything else written to it (a hook
scribbling on the descriptor) is detected instead of being taken for a result.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from studio.core.workspace.folder import LimitsSettings

FRAME_MAGIC = b"HSR1"
_LENGTH = struct.Struct(">Q")
HEADER_SIZE = len(FRAME_MAGIC) + _LENGTH.size
MAX_DATAGRAM = 60_000

DEFAULT_MEMORY_BYTES = 1 << 30
DEFAULT_OUTPUT_BYTES = 1 << 20
DEFAULT_RESULT_BYTES = 256 << 20


@dataclass(frozen=True)
class WorkerLimits:
    memory_bytes: int = DEFAULT_MEMORY_BYTES
    output_bytes: int = DEFAULT_OUTPUT_BYTES
    result_bytes: int = DEFAULT_RESULT_BYTES

    @classmethod
    def of(cls, settings: LimitsSettings) -> WorkerLimits:
        return cls(
            memory_bytes=settings.memory_mb << 20,
            output_bytes=settings.output_kb << 10,
            result_bytes=settings.result_mb << 20,
        )


@dataclass(frozen=True)
class WorkerSpec:
    """One invocation: which function of which file, with which host API and limits."""

    source_path: str
    function: str
    workspace: str
    source: str = ""
    memory_bytes: int = DEFAULT_MEMORY_BYTES
    options: dict[str, Any] = field(default_factory=dict)
    api: str | None = None
    """The host API the hook sees besides its argument (``adf``, ``step``), if any."""

    def to_json(self) -> dict[str, Any]:
        # Field by field: dataclasses.asdict deep-copies every value, on every call's path.
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> WorkerSpec:
        return cls(**value)


def encode_message(message: dict[str, Any]) -> bytes:
    data = json.dumps(message, separators=(",", ":")).encode()
    if len(data) > MAX_DATAGRAM:
        raise ValueError(f"control message of {len(data)} bytes is too large")
    return data


def decode_message(data: bytes) -> dict[str, Any]:
    message = json.loads(data)
    if not isinstance(message, dict):
        raise ValueError("a control message must be a JSON object")
    return message


def frame_header(length: int) -> bytes:
    """What goes before a payload of ``length`` bytes on the result channel."""
    return FRAME_MAGIC + _LENGTH.pack(length)


def frame(payload: bytes) -> bytes:
    return frame_header(len(payload)) + payload


class CorruptFrame(ValueError):
    """The result channel held bytes that are not one well-formed frame."""


def announced_length(head: bytes) -> int | None:
    """The payload length a frame's header announces, or None when ``head`` is no header."""
    if len(head) < HEADER_SIZE or not head.startswith(FRAME_MAGIC):
        return None
    length: int
    (length,) = _LENGTH.unpack_from(head, len(FRAME_MAGIC))
    return length


def payload_start(data: bytes) -> int | None:
    """Where the payload of a result channel's content starts (it runs to the end); None when
    nothing was written. An index rather than a copy: a large result is read where it lies."""
    if not data:
        return None
    if len(data) < HEADER_SIZE or not data.startswith(FRAME_MAGIC):
        raise CorruptFrame(f"{len(data)} bytes that do not start with a result frame")
    (length,) = _LENGTH.unpack_from(data, len(FRAME_MAGIC))
    if len(data) != HEADER_SIZE + length:
        raise CorruptFrame(
            f"a frame announcing {length} bytes but carrying {len(data) - HEADER_SIZE}"
        )
    return HEADER_SIZE
