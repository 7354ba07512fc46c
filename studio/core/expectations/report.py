"""The results of ``hook-studio test``: a summary a person reads, and the same as JSON."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from studio.core.expectations.evaluate import CaseResult
from studio.core.json.outline import plural

WORDS = {"pass": "pass", "fail": "FAIL", "error": "ERROR"}


class SampleCases(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def cases(self) -> tuple[CaseResult, ...]: ...


@dataclass(frozen=True)
class Totals:
    samples: int
    cases: int
    passed: int
    failed: int
    errors: int

    @property
    def ok(self) -> bool:
        return self.failed == 0 and self.errors == 0


def totals(reports: Sequence[SampleCases]) -> Totals:
    cases = [c for r in reports for c in r.cases]
    return Totals(
        samples=len(reports),
        cases=len(cases),
        passed=sum(c.verdict == "pass" for c in cases),
        failed=sum(c.verdict == "fail" for c in cases),
        errors=sum(c.verdict == "error" for c in cases),
    )


def summary_lines(reports: Sequence[SampleCases]) -> list[str]:
    """Per sample, one line per target: pass, FAIL with the first failing assertion (expected
    against actual), or ERROR with what kept it from being judged; then the totals."""
    lines: list[str] = []
    width = max((len(c.target) for r in reports for c in r.cases), default=4)
    for report in reports:
        lines.append(report.name)
        for case in report.cases:
            line = f"  {WORDS[case.verdict]:<5}  {case.target:<{width}}"
            if case.verdict != "pass":
                line += f"  {case.headline()}"
            lines.append(line.rstrip())
    t = totals(reports)
    lines.append(
        f"{plural(t.samples, 'sample')}, {plural(t.cases, 'case')}: {t.passed} passed, "
        f"{t.failed} failed, {plural(t.errors, 'error')}"
    )
    return lines


def report_json(reports: Sequence[SampleCases]) -> dict[str, Any]:
    t = totals(reports)
    return {
        "passed": t.ok,
        "totals": {
            "samples": t.samples,
            "cases": t.cases,
            "passed": t.passed,
            "failed": t.failed,
            "errors": t.errors,
        },
        "samples": [{"sample": r.name, "cases": [c.to_json() for c in r.cases]} for r in reports],
    }
