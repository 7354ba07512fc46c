"""Validation findings: every problem a validator sees, with a JSON path and a plain message."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

PathPart = str | int
Severity = Literal["error", "warning"]


def pointer(parts: Iterable[PathPart]) -> str:
    """RFC 6901 JSON Pointer: ``("messages", 2, "content")`` -> ``/messages/2/content``."""
    out = []
    for part in parts:
        out.append("/" + str(part).replace("~", "~0").replace("/", "~1"))
    return "".join(out)


def dotted(parts: Iterable[PathPart], root: str = "") -> str:
    """The path as a reader writes it: ``request.messages[2].content[0]``."""
    text = root
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        elif part.isidentifier():
            text += f".{part}" if text else part
        else:
            text += f"[{_quote(part)}]"
    return text


def _quote(key: str) -> str:
    return '"' + key.replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem: where it is (as a path), what is wrong (in words), and which rule says so."""

    path: tuple[PathPart, ...]
    message: str
    rule: str
    severity: Severity = "error"

    @property
    def pointer(self) -> str:
        return pointer(self.path)

    def to_json(self) -> dict[str, str]:
        return {"path": self.pointer, "message": self.message, "rule": self.rule}

    def under(self, prefix: tuple[PathPart, ...]) -> Finding:
        """The same finding about a value that sits at ``prefix`` in a larger document."""
        return Finding((*prefix, *self.path), self.message, self.rule, self.severity)


def errors(findings: Sequence[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity == "error"]


def warnings(findings: Sequence[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity == "warning"]


def first_error(findings: Sequence[Finding]) -> Finding | None:
    """The finding that fails the call: validators list findings in the contract's own order."""
    for finding in findings:
        if finding.severity == "error":
            return finding
    return None
