"""``hook-studio test``: every sample with expectations run on every target it names, through
the same runner as ``hook-studio run``, each run judged against its expectations."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from studio.core.expectations.evaluate import CaseResult, judge
from studio.core.expectations.targets import SampleTests, run_loop
from studio.core.registry import CONTRACTS
from studio.core.workspace.folder import Workspace
from studio.engine.runner import Runner

SAMPLE_CASE = "(sample)"
"""The case that stands for a sample that could not be tested at all."""
AT_ONCE = 4
"""Runs in flight together: each is a worker process of its own."""


@dataclass(frozen=True)
class SampleReport:
    tests: SampleTests
    cases: tuple[CaseResult, ...]

    @property
    def name(self) -> str:
        return self.tests.name


async def run_hook_tests(
    runner: Runner,
    plans: list[SampleTests],
    on_case: Callable[[CaseResult], None] | None = None,
) -> list[SampleReport]:
    """Each plan's cases, in the plan's order; a sample that cannot be tested gets one error
    case that names its problem, and nothing of it runs."""
    limit = asyncio.Semaphore(AT_ONCE)

    async def case(plan: SampleTests, target: str) -> CaseResult:
        contract = CONTRACTS.get(plan.contract or "")
        per_loop = contract is not None and contract.runs_per_loop
        async with limit:
            outcome = await runner.run(plan.name, loop=run_loop(target, per_loop))
        result = judge(outcome, plan.expectations, target, contract)
        if on_case is not None:
            on_case(result)
        return result

    reports = []
    for plan in plans:
        if not plan.runnable:
            problem = plan.problem_text() or "no expectation names a target of this sample"
            cases: tuple[CaseResult, ...] = (
                CaseResult(plan.name, SAMPLE_CASE, "error", problem=problem),
            )
            if on_case is not None:
                on_case(cases[0])
            reports.append(SampleReport(plan, cases))
            continue
        reports.append(SampleReport(plan, ()))
    runnable = [i for i, r in enumerate(reports) if r.tests.runnable]
    results = await asyncio.gather(
        *(
            asyncio.gather(*(case(reports[i].tests, t) for t in reports[i].tests.targets))
            for i in runnable
        )
    )
    for i, cases_of in zip(runnable, results, strict=True):
        reports[i] = SampleReport(reports[i].tests, tuple(cases_of))
    return reports


async def test_workspace(
    workspace: Workspace,
    plans: list[SampleTests],
    store: Any = None,
    on_case: Callable[[CaseResult], None] | None = None,
) -> list[SampleReport]:
    """The plans run on a runner of their own, recording each run in ``store`` when given."""
    runner = Runner(workspace, store=store)
    try:
        return await run_hook_tests(runner, plans, on_case)
    finally:
        await runner.close()
