"""The environment a hook runs with: an allow-list, never the studio's own secrets."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

ALLOWED_NAMES = ("PATH", "HOME", "LANG", "TZ", "TMPDIR")
ALLOWED_PREFIXES = ("LC_",)


def worker_environment(
    declared: Mapping[str, str] | None = None,
    passed_through: Iterable[str] = (),
    source: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The allow-listed variables of ``source`` (the studio's environment), the names the
    workspace passes through by name, and the workspace's own declared values."""
    source = os.environ if source is None else source
    env = {
        name: value
        for name, value in source.items()
        if name in ALLOWED_NAMES or name.startswith(ALLOWED_PREFIXES)
    }
    for name in passed_through:
        if name in source:
            env[name] = source[name]
    env.update(declared or {})
    env.setdefault("PATH", os.defpath)
    return env
