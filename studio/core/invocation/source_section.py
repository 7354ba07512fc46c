"""The ``invocation`` section as the hook-section editor presents it: the source of the hook
that prepares each child's invocation (spec/crux.md §9)."""

from __future__ import annotations

from typing import Final

from studio.core.hook_source_section import HookSourceSection
from studio.core.invocation.contract import MODULE_DEFAULT_EXPORT, invocation_source_ref
from studio.core.invocation.decision import INVOCATION_TIMEOUT_MS
from studio.core.step.settings import MODULE_EXTENSIONS

INVOCATION_HOOK: Final = HookSourceSection(
    key="invocation",
    title="Invocation-preparation hook",
    noun="invocation hook",
    rule=(
        f"{INVOCATION_TIMEOUT_MS // 1000} s, fixed by the invocation contract; "
        "a failure means the child is never dispatched"
    ),
    rule_tip=(
        "The invocation contract has no deadline setting and no caller deadline: preparation "
        f"fails with reason timeout after {INVOCATION_TIMEOUT_MS // 1000} seconds"
    ),
    function_tip=(
        f"The function to call ({MODULE_DEFAULT_EXPORT} in TypeScript or JavaScript, main in "
        "Python, when none is named)"
    ),
    absent_note=(
        "No invocation hook: runs of invocation samples need one (or --hook on the command line)"
    ),
    source_ref=invocation_source_ref,
    module_extensions=MODULE_EXTENSIONS,
)
