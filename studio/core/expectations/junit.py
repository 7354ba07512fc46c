"""JUnit XML for CI servers: a ``testsuite`` per sample, a ``testcase`` per target, a
``failure`` for a failed assertion (the first one as its message, every failed one in its text)
and an ``error`` for a case that could not be judged."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence

from studio.core.expectations.report import SampleCases, totals
from studio.core.workspace.atomic_write import write_atomically

SUITES_NAME = "hook-studio test"
# What XML 1.0 cannot hold (most control characters, lone surrogates) may be in a hook's message.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml_text(text: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def junit_xml(reports: Sequence[SampleCases]) -> bytes:
    t = totals(reports)
    root = ET.Element(
        "testsuites",
        name=SUITES_NAME,
        tests=str(t.cases),
        failures=str(t.failed),
        errors=str(t.errors),
        time=_seconds(sum(c.duration_ms for r in reports for c in r.cases)),
    )
    for report in reports:
        cases = report.cases
        suite = ET.SubElement(
            root,
            "testsuite",
            name=_xml_text(report.name),
            tests=str(len(cases)),
            failures=str(sum(c.verdict == "fail" for c in cases)),
            errors=str(sum(c.verdict == "error" for c in cases)),
            time=_seconds(sum(c.duration_ms for c in cases)),
        )
        for case in cases:
            element = ET.SubElement(
                suite,
                "testcase",
                classname=_xml_text(f"samples.{report.name}"),
                name=_xml_text(case.target),
                time=_seconds(case.duration_ms),
            )
            if case.verdict == "fail":
                failed = [c for c in case.checks if not c.passed]
                failure = ET.SubElement(
                    element, "failure", message=_xml_text(case.headline()), type="expectation"
                )
                failure.text = _xml_text("\n".join(f"{c.at}: {c.message()}" for c in failed))
            elif case.verdict == "error":
                error = ET.SubElement(
                    element, "error", message=_xml_text(case.headline()), type="not_judged"
                )
                error.text = _xml_text(case.headline())
    ET.indent(root)
    text: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return text + b"\n"


def write_junit(path: str, reports: Sequence[SampleCases]) -> None:
    write_atomically(path, junit_xml(reports))


def _seconds(ms: float) -> str:
    return f"{ms / 1000:.3f}"
