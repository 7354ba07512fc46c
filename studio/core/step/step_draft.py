"""The ``step`` section as the hook-section editor presents it: the source of the hook that
prepares steps.

The section configures the source only: the preparation's time limit is the contract's (a fixed
30-second ceiling, or the sample's ``deadline_ms`` when shorter; spec/crux.md §4), not a setting.
"""

from __future__ import annotations

from typing import Final

from studio.core.hook_source_section import HookSourceSection
from studio.core.step.decision import PREPARATION_TIMEOUT_MS
from studio.core.step.settings import MODULE_EXTENSIONS, step_source_ref

STEP_HOOK: Final = HookSourceSection(
    key="step",
    title="Step-preparation hook",
    noun="step hook",
    rule=(
        f"{PREPARATION_TIMEOUT_MS // 1000} s, fixed by the step contract; "
        "a sample's deadline_ms makes it shorter"
    ),
    rule_tip=(
        "The step contract has no deadline setting: preparation fails with reason timeout "
        f"after {PREPARATION_TIMEOUT_MS // 1000} seconds, or after the caller's deadline when "
        "that is shorter"
    ),
    function_tip=(
        "The function to call (prepareStep in TypeScript or JavaScript, main in Python, "
        "when none is named)"
    ),
    absent_note="No step hook: runs of step samples need one (or --hook on the command line)",
    source_ref=step_source_ref,
    module_extensions=MODULE_EXTENSIONS,
)
