"""A sample's text checked as the runner would judge the sample: a JSON syntax error at its
line and column, or every finding of the sample's contract placed in the text; and the outline
of a sample for the structured view.

The contract comes from the registry. The registry imports the contract packages, which import
this package's ``folder`` module, so it is imported inside the functions that need it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import partial
from typing import Any

from studio.core.findings import Finding
from studio.core.json.locate import (
    JsonTextError,
    line_columns,
    locate,
    locate_all,
    parse_json_in_pieces,
)
from studio.core.json.outline import Entry, json_entries, list_entry, short

RULE = "workspace.sample"
MAX_PROBLEMS = 500
"""At most this many findings are placed in the text; the rest are only counted."""


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a sample's text, with where it is (1-based lines and columns)."""

    severity: str
    message: str
    pointer: str | None  # None for a JSON syntax error
    line: int
    column: int
    end_line: int
    end_column: int
    exact: bool = True
    rule: str = ""


@dataclass(frozen=True)
class SampleCheck:
    contract: str | None
    document: Any  # the parsed value; None when the text is not JSON
    valid_json: bool
    problems: tuple[Problem, ...]
    total: int  # how many problems there are (more than listed when over MAX_PROBLEMS)

    @property
    def errors(self) -> int:
        return sum(1 for p in self.problems if p.severity == "error")


def contract_findings(document: Any) -> tuple[str | None, list[Finding]]:
    """The sample's contract and every finding of it, as the runner would see the sample."""
    from studio.core.registry import CONTRACTS, DEFAULT_CONTRACT, contract_names_phrase

    if not isinstance(document, dict):
        return None, [Finding((), "a sample must be a JSON object", RULE)]
    name = document.get("contract", DEFAULT_CONTRACT)
    contract = CONTRACTS.get(name) if isinstance(name, str) else None
    if contract is None:
        shown = json.dumps(name)[:40] if isinstance(name, str) else type(name).__name__
        return None, [
            Finding(("contract",), f"contract must be {contract_names_phrase()}, got {shown}", RULE)
        ]
    from studio.core.expectations.model import parse_expectations

    return name, contract.sample_findings(document) + parse_expectations(document)[1]


def check_sample_text(text: str, keep_document: bool = True) -> SampleCheck:
    """Parse and check a sample's text; every problem comes with its place in the text.

    Without ``keep_document`` the parsed value is dropped here: a large document that nobody
    looks at should not live on in the GUI's heap (where every full garbage collection walks it).
    """
    try:
        document = parse_json_in_pieces(text)
    except JsonTextError as exc:
        message = exc.message
        before = text[: exc.offset].rstrip()
        if message.startswith("Expecting ',' delimiter") and "\n" in text[len(before) : exc.offset]:
            # The parser stops at the next line; the comma is missing at the end of the one before.
            message += f": is a ',' missing at the end of line {before.count(chr(10)) + 1}?"
        problem = Problem(
            "error", message, None, exc.line, exc.column, exc.line, exc.column + 1, rule="json"
        )
        return SampleCheck(None, None, False, (problem,), 1)
    contract, findings = contract_findings(document)
    shown = findings[:MAX_PROBLEMS]
    places = locate_all(text, [f.path for f in shown])
    positions = line_columns(text, [p.start for p in places] + [p.end for p in places])
    problems = []
    for k, (finding, place) in enumerate(zip(shown, places, strict=True)):
        (line, column), (end_line, end_column) = positions[k], positions[len(shown) + k]
        problems.append(
            Problem(
                finding.severity,
                finding.message,
                finding.pointer,
                line,
                column,
                end_line,
                end_column,
                place.exact,
                finding.rule,
            )
        )
    kept = document if keep_document else None
    del document
    return SampleCheck(contract, kept, True, tuple(problems), len(findings))


def locate_pointer(text: str, where: str) -> tuple[int, int, int, int, bool]:
    """Where the value at a JSON pointer is: ``(line, col, end_line, end_col, exact)``."""
    place = locate(text, where)
    (line, column), (end_line, end_column) = line_columns(text, [place.start, place.end])
    return line, column, end_line, end_column, place.exact


def sample_outline(contract: str | None, document: Any) -> list[Entry]:
    """The top rows of the structured view of a sample; deeper rows come when opened. A sample
    of no known contract is shown as a JSON tree."""
    if not isinstance(document, dict):
        return [Entry("(not an object)", short(document), "")]
    from studio.core.registry import CONTRACTS

    known = CONTRACTS.get(contract) if contract is not None else None
    if known is None:
        return json_entries(document, "")
    return known.outline(document) + _expect_entries(document)


def _expect_entries(document: dict[str, Any]) -> list[Entry]:
    """The sample's expectations, after the contract's own rows (every contract's sample may
    hold them)."""
    from studio.core.expectations.model import EXPECT_KEY

    if EXPECT_KEY not in document:
        return []
    where = "/" + EXPECT_KEY
    return [
        list_entry(
            "Expect",
            document[EXPECT_KEY],
            where,
            "expectation",
            partial(json_entries, document[EXPECT_KEY], where),
        )
    ]
