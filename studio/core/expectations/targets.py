"""Where a sample is tested: the targets of a workspace (Main, each declared loop, a future loop)
and the plan of one sample's tests (which targets run, or the problems that stop it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from studio.core.expectations.model import EXPECT_KEY, RULE, Expectation, parse_expectations
from studio.core.findings import Finding, errors
from studio.core.pre_llm.config import MAIN
from studio.core.workspace.folder import Workspace, WorkspaceFileError

FUTURE_LOOP: Final = "future-loop"
"""The loop name a run on "a loop declared later" uses: declared nowhere, so a hook that targets
only named loops does not apply to it."""


def workspace_targets(declared: Sequence[str]) -> list[str]:
    """Main, each declared loop, and a future loop, in that order."""
    return [MAIN, *declared, *([] if FUTURE_LOOP in declared else [FUTURE_LOOP])]


def run_loop(target: str, per_loop: bool) -> str | None:
    """The loop a run of ``target`` names: none for a contract that runs once per sample."""
    return target if per_loop else None


@dataclass(frozen=True)
class SampleTests:
    """One sample's tests: its expectations, the targets they run on, and the problems that
    keep the sample from being tested (errors) or that it should know of (warnings)."""

    name: str
    contract: str | None = None
    expectations: tuple[Expectation, ...] = ()
    targets: tuple[str, ...] = ()
    problems: tuple[Finding, ...] = field(default=())

    @property
    def runnable(self) -> bool:
        return not errors(self.problems) and bool(self.targets)

    def problem_text(self) -> str:
        """The sample's first error, as a report names it."""
        found = errors(self.problems)
        if not found:
            return ""
        first = found[0]
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        return f"samples/{self.name}.json {first.pointer or '/'}: {first.message}{more}"


def declared_loops(workspace: Workspace) -> list[str]:
    """The loops ``hookstudio.json`` declares; raises ``WorkspaceFileError`` when it is
    malformed (nothing can be tested then)."""
    return list(workspace.settings().loops)


def plan_sample(workspace: Workspace, name: str, declared: Sequence[str]) -> SampleTests:
    """What testing ``samples/NAME.json`` means: a sample that cannot be read, is invalid, or
    holds malformed expectations is not run, and says why."""
    from studio.core.registry import CONTRACTS
    from studio.core.workspace.sample_check import contract_findings

    try:
        sample = workspace.sample(name)
    except WorkspaceFileError as exc:
        return SampleTests(name, problems=tuple(exc.findings))
    contract_name, found = contract_findings(sample.document)
    expectations, _ = parse_expectations(sample.document)
    contract = CONTRACTS.get(contract_name or "")
    per_loop = contract is not None and contract.runs_per_loop
    allowed = workspace_targets(declared) if per_loop else [MAIN]
    problems = list(found)
    named: set[str] = set()
    for expectation in expectations:
        for i, target in enumerate(expectation.targets or allowed):
            if target in allowed:
                named.add(target)
                continue
            why = (
                f"'{target}' is not a target of this workspace ({', '.join(allowed)})"
                if per_loop
                else f"a {contract.label if contract else 'sample'} sample runs once, not per "
                "loop: its only target is main"
            )
            problems.append(Finding((EXPECT_KEY, expectation.index, "targets", i), why, RULE))
    targets = tuple(t for t in allowed if t in named)
    return SampleTests(name, contract_name, tuple(expectations), targets, tuple(problems))


def plan_tests(workspace: Workspace) -> list[SampleTests]:
    """The tests of every sample that has expectations, by sample name. Raises
    ``WorkspaceFileError`` when ``hookstudio.json`` cannot be read."""
    from studio.core.json.files import JsonFileError, read_json_file

    declared = declared_loops(workspace)
    plans = []
    for sample_file in workspace.samples():
        try:
            document = read_json_file(sample_file.path)
        except JsonFileError:
            document = {EXPECT_KEY: None}  # unreadable: reported, never skipped unseen
        if isinstance(document, dict) and EXPECT_KEY in document:
            plans.append(plan_sample(workspace, sample_file.name, declared))
    return plans
