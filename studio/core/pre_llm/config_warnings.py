"""The warnings ``hook-studio check-config`` gives a hook, for the editor's Findings.

While the draft is what the agent config holds, they are exactly the warnings of the file on
disk. Once it is edited, they are those of the config Save would write (keys the studio does
not edit are kept, so their warnings stay; a ``scope: null`` is written as ``"all"``, so its
warning goes). A draft with errors cannot be saved; the keys it would keep are still judged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from studio.core.findings import Finding, warnings
from studio.core.pre_llm.config import (
    HOOK_KEY,
    KNOWN_HOOK_KEYS,
    SourceHome,
    check_agent_config,
    validate_hook_config,
)
from studio.core.pre_llm.targets import DraftInvalid, HookDraft, draft_from_config, draft_to_config


def loaded_draft(document: Mapping[str, Any]) -> HookDraft:
    """The draft an agent config opens as: its hook, or a new hook's draft when it has none."""
    value = document.get(HOOK_KEY)
    return draft_from_config(value) if isinstance(value, dict) else HookDraft()


def config_warnings(
    draft: HookDraft, document: Any = None, home: SourceHome = "folder"
) -> list[Finding]:
    """The check-config warnings of the hook being edited; ``document`` is the agent config on
    disk (None when unknown), ``home`` where its sources live."""
    if isinstance(document, dict) and draft == loaded_draft(document):
        return warnings(check_agent_config(document, home).findings)
    try:
        config: dict[str, Any] = draft_to_config(draft)
    except DraftInvalid:
        config = {k: v for k, v in draft.original.items() if k not in KNOWN_HOOK_KEYS}
    return warnings(validate_hook_config(config, home=home))
