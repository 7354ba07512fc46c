"""What an import drops or changes, where in the original body, and why: the loss report."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from studio.core.findings import PathPart, dotted, pointer

Change = Literal["dropped", "changed", "not representable"]


@dataclass(frozen=True)
class Loss:
    """One thing the sample does not keep as the body had it. ``path`` is in the original
    body (``messages[3].content[1]``)."""

    path: tuple[PathPart, ...]
    change: Change
    message: str

    @property
    def where(self) -> str:
        return dotted(self.path) or "(the body)"

    def line(self) -> str:
        return f"{self.where}: {self.change}: {self.message}"

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.where,
            "pointer": pointer(self.path),
            "change": self.change,
            "message": self.message,
        }


class LossReport:
    """The losses of one import, in the order the body was read."""

    def __init__(self) -> None:
        self.losses: list[Loss] = []

    def drop(self, path: tuple[PathPart, ...], message: str) -> None:
        self.losses.append(Loss(path, "dropped", message))

    def change(self, path: tuple[PathPart, ...], message: str) -> None:
        self.losses.append(Loss(path, "changed", message))

    def unrepresentable(self, path: tuple[PathPart, ...], message: str) -> None:
        self.losses.append(Loss(path, "not representable", message))
