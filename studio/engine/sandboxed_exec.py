"""Start a program inside the sandbox of a workspace (the Node host of its TypeScript and
JavaScript hooks): the workspace's namespaces, then a PID namespace of the program's own, then
``exec``. Where the kernel refuses the sandbox, the program starts without it.

Run as ``python -I -m studio.engine.sandboxed_exec FD PLAN PROGRAM [ARG...]``: FD receives one
JSON line, ``{"active": bool, "reason": str}``, before the program starts.
"""

from __future__ import annotations

import json
import os
import sys

from studio.engine import sandbox


def _say(fd: int, state: dict[str, object]) -> None:
    try:
        os.write(fd, json.dumps(state).encode() + b"\n")
    finally:
        os.close(fd)


def main(argv: list[str]) -> int:
    fd, plan, program = int(argv[1]), sandbox.SandboxPlan.from_json(argv[2]), argv[3:]
    try:
        state = sandbox.enter_workspace(plan)
        if state.active:
            sandbox.enter_call(plan.kept, [fd])
    except OSError as exc:
        # Half built: the program must not run in it; the engine starts it again without one.
        _say(fd, {"active": False, "broken": True, "reason": str(exc)})
        return 3
    _say(fd, state.to_json())
    if state.active:
        # Tells the program it is alone in its PID namespace (see host.mjs).
        os.environ["HOOK_STUDIO_SANDBOXED"] = "1"
    os.execv(program[0], program)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
